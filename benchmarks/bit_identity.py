"""Are two versions of the code the same bits? Runs 20 s of the offshore lift and of the deck
landing in-process with every Real input and output recorded (1236 series), from the checkout it
is run in, and saves them or compares them with a saved run. The speed work of issue 26 is checked
this way (docs/performance.md): save with the old code, compare with the new.

    git stash; python benchmarks/bit_identity.py --fmus /tmp/fmus_old --save /tmp/before.npz
    git stash pop; python benchmarks/bit_identity.py --fmus /tmp/fmus_new --compare /tmp/before.npz

Use one FMU folder per version (the FMUs are rebuilt there when their sources change). Exit status
1 when a series differs in any bit (or is missing), with the largest difference of the first ones.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
for where in (ROOT, ROOT / "benchmarks"):
    if str(where) not in sys.path:
        sys.path.insert(0, str(where))

import bench_offshore_lift as lift  # noqa: E402
from orchestration.master.observers.results import default_observed  # noqa: E402
from orchestration.runs import reference as rs  # noqa: E402

SCENARIOS = ("offshore_lift", "deck_landing")


def record(fmu_dir: Path, stop: float) -> dict[str, np.ndarray]:
    """Every recorded series of the two scenarios, keyed "scenario/column"."""
    out: dict[str, np.ndarray] = {}
    for name in SCENARIOS:
        fmus = rs.ensure_fmus(rs.MODELS[name], fmu_dir)
        system, _, _ = rs.load_reference(name, fmus, Path("/tmp") / f"bit_identity_{os.getpid()}_{name}",
                                         log=lambda m: None)
        results, info = lift.run_lift(stop, record=[f"{c}.{v}" for c, v in default_observed(system)],
                                      fmu_dir=fmus, scenario=name)
        lift.print_speed(info, f"{name}: ")
        out.update({f"{name}/{k}": np.asarray(v, float) for k, v in results.items()})
    return out


def differing(new: dict[str, np.ndarray], old) -> list[str]:
    """The saved series that are missing from ``new`` or differ in any bit (NaNs of the same bits equal)."""
    return [k for k in old.files if k not in new or new[k].shape != old[k].shape
            or not np.array_equal(new[k].view(np.int64), old[k].view(np.int64))]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fmus", type=Path, required=True, help="this version's FMU folder")
    p.add_argument("--save", type=Path, help="write the series to this .npz")
    p.add_argument("--compare", type=Path, help="compare with the series of this .npz")
    p.add_argument("--stop", type=float, default=20.0, help="simulated seconds of each scenario")
    args = p.parse_args()
    if not (args.save or args.compare):
        p.error("give --save, --compare or both")
    series = record(args.fmus, args.stop)
    if args.save:
        np.savez(args.save, **series)
        print(f"saved {len(series)} series to {args.save}")
    if not args.compare:
        return 0
    old = np.load(args.compare)
    bad = differing(series, old)
    print(f"compared {len(old.files)} series: {len(bad)} differ")
    for k in bad[:15]:
        if k in series and series[k].shape == old[k].shape:
            print(f"  {k}: largest difference {np.nanmax(np.abs(series[k] - old[k])):.3g} "
                  f"(scale {np.nanmax(np.abs(old[k])):.3g})")
        else:
            print(f"  {k}: missing or of another length")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
