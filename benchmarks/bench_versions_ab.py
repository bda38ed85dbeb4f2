"""Two builds of the FMUs in one process, stepped in alternating blocks: a speed comparison that the
load of a shared machine disturbs less than runs one after another (both versions see the same
load, block by block).

    python benchmarks/bench_versions_ab.py --old DIR_OLD --new DIR_NEW [--scenario deck_landing]

DIR_OLD holds FMUs built by the old checkout (run ``python -c "from pathlib import Path; from
orchestration.runs import reference as rs; rs.ensure_fmus(rs.MODELS['deck_landing'], Path('DIR_OLD'))"``
in it); they are used as they are. DIR_NEW is (re)built from this checkout. Each FMU's Python is
private to it (resources/_mc_<hash>/), so the two versions of fmus/ and of the bridge live side by
side; ``components`` is this checkout's for both (compare versions that differ in fmus/ only).

The scenario runs without its events file (the payload hangs, the winch holds): a comparison of the
per-step cost, not the benchmark of docs/performance.md. Per version: the best and the median block,
CPU milliseconds (thread time) per simulated second. Not pass/fail.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import components  # noqa: E402,F401  (this checkout's, before any FMU imports one)
import orchestration.runs.reference.catalogue as catalogue  # noqa: E402
from orchestration.master.algorithms import make_algorithm  # noqa: E402
from orchestration.master.execution import Execution  # noqa: E402
from orchestration.runs import reference as rs  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--old", type=Path, required=True, help="FMUs of the old version, used as they are")
    p.add_argument("--new", type=Path, required=True, help="FMUs of this checkout (built if stale)")
    p.add_argument("--scenario", default="offshore_lift")
    p.add_argument("--blocks", type=int, default=20, help="blocks per version")
    p.add_argument("--steps", type=int, default=200, help="macro steps per block")
    args = p.parse_args()
    built = catalogue.ensure_fmus
    runs = {}
    for label, folder in (("old", args.old), ("new", args.new)):
        # load_reference ensures the FMUs from this checkout's sources: not the old ones
        catalogue.ensure_fmus = (lambda models, fmu_dir=None, log=None: Path(fmu_dir)) if label == "old" else built
        fmus = folder if label == "old" else rs.ensure_fmus(rs.MODELS[args.scenario], folder)
        system, _, _ = rs.load_reference(args.scenario, fmus, Path("/tmp") / f"bench_ab_{label}_{args.scenario}",
                                         log=lambda m: None)
        execution = Execution(system, make_algorithm(system.algorithm, dict(system.algorithm_options)))
        execution.initialize()
        runs[label] = (execution, system.base_step, [])
    catalogue.ensure_fmus = built
    try:
        for block in range(args.blocks):
            for label in (("old", "new") if block % 2 == 0 else ("new", "old")):
                execution, h, spent = runs[label]
                t0, sim0 = time.thread_time(), execution.time
                for _ in range(args.steps):
                    execution.step(h)
                spent.append(1e3 * (time.thread_time() - t0) / (execution.time - sim0))
        for label, (execution, _, spent) in runs.items():
            print(f"{label}: best {min(spent):.1f}, median {statistics.median(spent):.1f} CPU ms per simulated "
                  f"second ({1e3 / min(spent):.1f}x, {1e3 / statistics.median(spent):.1f}x real time), "
                  f"{args.blocks} blocks of {args.steps} steps")
    finally:
        for execution, _, _ in runs.values():
            execution.free()
    return 0


if __name__ == "__main__":
    sys.exit(main())
