"""The heave-roll-pitch platform's two controllers side by side (docs/motion_platform.md): the quasi-static
PID and the NMPC in the thesis' sea, and after a 1 deg tower disturbance in calm water with platforms of
1000, 1750 and 2000 t (the PID's roll grows from 1750 t; at 2000 t a linkage over-stretches).

    python benchmarks/bench_motion_platform.py [--seconds 30] [--fmus DIR]

Writes benchmarks/data/motion_platform.json and docs/img/motion_platform_{sea,disturbance}.png.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from orchestration.master.algorithms.fixed import FixedStepAlgorithm  # noqa: E402
from orchestration.master.execution import ExecutionError  # noqa: E402
from orchestration import simulate  # noqa: E402
from tests.models import motion_platform as mp  # noqa: E402

NAMES = ("quasi-static PID", "NMPC")


def run(fmu_dir: Path, method: int, seconds: float, sea=None, mass=mp.PLATFORM_MASS, tilt_deg=0.0):
    s = mp.system(fmu_dir, method=method, sea=sea, platform_mass=mass)
    s.components["ship"].parameters["initial.euler[0]"] = np.radians(tilt_deg)
    try:
        return simulate(s, seconds, mp.STEP, variables=mp.RECORD,
                        algorithm=FixedStepAlgorithm(method="gauss-seidel")), None
    except ExecutionError as exc:
        return None, str(exc).splitlines()[0]


def summary(r) -> dict:
    tilt = np.degrees(mp.tower_tilt(r))
    f = np.column_stack([r[f"platform.leg{k}.force"] for k in (1, 2, 3)])
    return {"tilt_rms_deg": float(np.sqrt((tilt ** 2).mean())), "tilt_max_deg": float(tilt.max()),
            "heave_std_m": float(r["platform.platform.position[2]"].std()),
            "roll_std_deg": float(np.degrees(r["ship.euler[0]"].std())),
            "roll_max_deg": float(np.degrees(np.abs(r["ship.euler[0]"])).max()),
            "force_min_MN": float(f.min() / 1e6), "force_max_MN": float(f.max() / 1e6),
            "power_mean_MW": mp.mean_power(r) / 1e6, "power_0_5s_MW": mp.mean_power(r, (0.0, 5.0)) / 1e6,
            "alpha_positive": float((r["controller.nmpc.alpha"] > 0).mean())}


def plot(runs: dict, title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(4, 1, figsize=(9, 10), sharex=True)
    for label, r in runs.items():
        if r is None:
            continue
        axes[0].plot(r.time, np.degrees(mp.tower_tilt(r)), label=label, lw=0.9)
        axes[1].plot(r.time, np.degrees(r["ship.euler[0]"]), lw=0.9)
        for k, ls in zip((1, 2, 3), ("-", "--", ":")):
            axes[2].plot(r.time, r[f"platform.leg{k}.force"] / 1e6, ls, lw=0.8,
                         color=axes[0].lines[-1].get_color())
        axes[3].plot(r.time, sum(np.abs(r[f"platform.leg{k}.power"]) for k in (1, 2, 3)) / 1e6, lw=0.9)
    for ax, (t, unit) in zip(axes, (("tower tilt from the vertical", "deg"), ("barge roll", "deg"),
                                    ("leg forces (legs 1, 2, 3: solid, dashed, dotted)", "MN"),
                                    ("power, sum of |force x extension rate|", "MW"))):
        ax.set_title(t, fontsize=9, loc="left")
        ax.set_ylabel(unit)
    axes[2].axhline(20, color="k", lw=0.5)
    axes[2].axhline(-5, color="k", lw=0.5)
    axes[3].set_xlabel("time [s]")
    axes[0].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--fmus", type=Path)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "data" / "motion_platform.json")
    args = ap.parse_args(argv)
    fmu_dir = args.fmus
    if fmu_dir is None:
        import build_fmus

        fmu_dir = Path(tempfile.mkdtemp(prefix="bench_platform_")) / "fmus"
        build_fmus.build_all(fmu_dir, ["Ship", "MotionPlatform", "PlatformController"])
    out = {}
    cases = {"sea, 1000 t": dict(), "1 deg tilt, calm, 1000 t": dict(sea=mp.CALM, tilt_deg=1.0),
             "1 deg tilt, calm, 1750 t": dict(sea=mp.CALM, tilt_deg=1.0, mass=1.75e6),
             "1 deg tilt, calm, 2000 t": dict(sea=mp.CALM, tilt_deg=1.0, mass=2e6)}
    plotted = {"sea, 1000 t": "sea", "1 deg tilt, calm, 1750 t": "disturbance"}
    for case, kw in cases.items():
        runs = {}
        for method in (0, 1):
            r, failure = run(fmu_dir, method, args.seconds, **kw)
            runs[NAMES[method]] = r
            out[f"{case}: {NAMES[method]}"] = summary(r) if r is not None else {"failed": failure}
            print(f"{case}, {NAMES[method]}: {out[f'{case}: {NAMES[method]}']}", flush=True)
        if case in plotted:
            plot(runs, f"motion platform on the barge: {case}",
                 ROOT / "docs" / "img" / f"motion_platform_{plotted[case]}.png")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"seconds": args.seconds, "cases": out}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
