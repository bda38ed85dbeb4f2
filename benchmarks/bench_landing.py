"""Deck landing (issue 9, item 5c): error against macro steps for fixed step, ECCO and error control
on the Payload + Contact FMUs of tests/models/deck_landing (a 10 t box lowered at 1 m/s onto rubber
pads on a fixed deck; touchdown, two bounces, rest; 1 s).

    python benchmarks/bench_landing.py [--quick] [--out FILE] [--report-only]

Reference: the monolithic 1-DOF ODE with the Contact FMU's own force law (DOP853 between the kinks,
tests/models/deck_landing/model.py).  Error of a run: at its communication points, the largest
|z - z_ref| over the motion range (drop + peak penetration) and the largest |v - v_ref| over the
impact speed; the larger of the two.  Every algorithm with inputs held (extrapolation 0) and with
linear extrapolation (1).  Error control counts accepted steps; doSteps per FMU are counted too.

Results: benchmarks/data/landing_benchmark.json, docs/img/landing_error_vs_steps.png, markdown tables
on stdout (docs/algorithms_benchmark.md quotes them).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import build_fmus  # noqa: E402
from benchmarks.bench_algorithms import run_ours, steps_for_error  # noqa: E402
from orchestration.master.algorithms.fixed import FixedStepAlgorithm  # noqa: E402
from orchestration.master.algorithms.ecco import EccoAlgorithm  # noqa: E402
from orchestration.master.algorithms.error_control import ErrorControlAlgorithm  # noqa: E402
from orchestration.master.algorithms.step_control import PIController  # noqa: E402
from tests.models.deck_landing.model import DeckLanding, Reference, deck_landing_system  # noqa: E402

STOP = 1.0
H0 = 1.0e-3
MIN_STEP, MAX_STEP = 1.0e-5, 2.0e-2
FIXED_STEPS = (5e-3, 2e-3, 1e-3, 5e-4, 2.5e-4)
TOLS = (1e-1, 3e-2, 1e-2, 3e-3)
VARIABLES = ["payload.position[2]", "payload.velocity[2]"]
DEFAULT_OUT = ROOT / "benchmarks" / "data" / "landing_benchmark.json"
PLOT = ROOT / "docs" / "img" / "landing_error_vs_steps.png"


@dataclass
class Point:
    family: str                    # fixed | ecco | error-control
    extrapolation: int
    setting: float                 # step (fixed) or tolerance
    steps: int
    do_steps: int
    error_position: float
    error_velocity: float
    rejected: int = 0
    wall: float = 0.0
    min_step: float = math.nan
    max_step: float = math.nan

    @property
    def error(self) -> float:
        return max(self.error_position, self.error_velocity)

    @property
    def method(self) -> str:       # steps_for_error's curves carry a method
        return "jacobi"


def algorithm(family: str, setting: float, extrapolation: int):
    if family == "fixed":
        return FixedStepAlgorithm("jacobi", extrapolation=extrapolation)
    if family == "ecco":
        # atol in J: the bond carries ~1e5 W over ~1 ms steps in contact
        # the paper's energy level, as measured for docs/algorithms_benchmark.md section 0
        return EccoAlgorithm(rtol=setting, atol=setting, extrapolation=extrapolation, energy_reference="bond",
                             controller=PIController(min_step=MIN_STEP, max_step=MAX_STEP))
    return ErrorControlAlgorithm(rtol=setting, atol=1e-3 * setting, min_step=MIN_STEP, max_step=MAX_STEP,
                                 extrapolation=extrapolation, hold_check=True)


def run_point(fmu_dir: Path, ref: Reference, family: str, setting: float, extrapolation: int,
              case: DeckLanding = DeckLanding()) -> Point:
    traj = run_ours(deck_landing_system(fmu_dir, case), algorithm(family, setting, extrapolation),
                    setting if family == "fixed" else H0, stop=STOP, variables=VARIABLES)
    z_ref, v_ref = ref(traj.time)
    scale = case.drop + ref.peak_penetration
    h = np.diff(traj.time)
    return Point(family, extrapolation, setting, traj.steps, traj.do_steps,
                 float(np.max(np.abs(traj.values[VARIABLES[0]] - z_ref))) / scale,
                 float(np.max(np.abs(traj.values[VARIABLES[1]] - v_ref))) / ref.impact_speed,
                 traj.rejected, traj.wall, float(h.min()), float(h.max()))


def ladder(fmu_dir: Path, quick: bool = False, log=print) -> list[Point]:
    ref = Reference(DeckLanding(), STOP + 0.05)
    thin = (lambda seq: seq[::2]) if quick else (lambda seq: seq)
    points = []
    for extrapolation in (0, 1):
        for family, settings in (("fixed", FIXED_STEPS), ("ecco", TOLS), ("error-control", TOLS)):
            for setting in thin(settings):
                p = run_point(fmu_dir, ref, family, setting, extrapolation)
                points.append(p)
                log(f"  {family} extrapolation {extrapolation} {setting:g}: {p.steps} steps, {p.do_steps} doSteps, "
                    f"error {p.error:.3e} (position {p.error_position:.2e}, velocity {p.error_velocity:.2e}), "
                    f"{p.wall:.1f} s")
    return points


def savings(points: list[Point]) -> str:
    """Best fixed-step error (over both extrapolations) and the steps each adaptive curve needs for it."""
    fixed = [p for p in points if p.family == "fixed"]
    best = min(fixed, key=lambda p: p.error)
    out = [f"Best fixed-step error: {best.error:.3e} (h = {best.setting:g} s, extrapolation {best.extrapolation}, "
           f"{best.steps} steps)", "", "| algorithm | extrapolation | macro steps for that error | fewer than fixed | "
           "doSteps per FMU for that error | fewer doSteps |", "|---|---|---|---|---|---|"]
    for family in ("fixed", "ecco", "error-control"):
        for extrapolation in (0, 1):
            curve = sorted((p for p in points if p.family == family and p.extrapolation == extrapolation),
                           key=lambda p: p.steps)
            if not curve:
                continue
            n = steps_for_error(curve, best.error)
            work = math.nan if math.isnan(n) else float(np.exp(np.interp(
                math.log(n), np.log([p.steps for p in curve]), np.log([p.do_steps for p in curve]))))
            out.append(f"| {family} | {extrapolation} | {'not reached' if math.isnan(n) else f'{n:.0f}'} | "
                       f"{'–' if math.isnan(n) else f'{best.steps / n:.1f}x'} | "
                       f"{'–' if math.isnan(work) else f'{work:.0f}'} | "
                       f"{'–' if math.isnan(work) else f'{best.steps / work:.1f}x'} |")
    return "\n".join(out)


def table(points: list[Point]) -> str:
    out = ["| algorithm | extrapolation | step / tol | macro steps | doSteps | rejected | position error | "
           "velocity error | error | smallest / largest step (s) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for p in points:
        out.append(f"| {p.family} | {p.extrapolation} | {p.setting:g} | {p.steps} | {p.do_steps} | {p.rejected} | "
                   f"{p.error_position:.2e} | {p.error_velocity:.2e} | **{p.error:.2e}** | "
                   f"{p.min_step:.1e} / {p.max_step:.1e} |")
    return "\n".join(out)


def plot(points: list[Point], path: Path = PLOT) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 5.0))
    colors = {"fixed": "k", "ecco": "tab:blue", "error-control": "tab:green"}
    for family in ("fixed", "ecco", "error-control"):
        for extrapolation, line in ((0, "-"), (1, "--")):
            curve = sorted((p for p in points if p.family == family and p.extrapolation == extrapolation),
                           key=lambda p: p.steps)
            if curve:
                label = f"{family}, {'inputs held' if extrapolation == 0 else 'linear extrapolation'}"
                ax.loglog([p.steps for p in curve], [p.error for p in curve], color=colors[family],
                          linestyle=line, marker="o" if extrapolation == 0 else "s", label=label)
                if family == "error-control":
                    ax.loglog([p.do_steps for p in curve], [p.error for p in curve], color=colors[family],
                              linestyle=":", marker=".", alpha=0.5, label=f"{label} (against doSteps)")
    ax.set_xlabel("macro steps (1 s)")
    ax.set_ylabel("max(position error / range, velocity error / impact speed)")
    ax.set_title("deck landing: 10 t box onto rubber pads (Payload + Contact FMUs)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="every other point of each ladder")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--fmus", type=Path, default=ROOT / "build" / "fmus")
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args(argv)
    if args.report_only:
        points = [Point(**p) for p in json.loads(args.out.read_text())]
    else:
        build_fmus.build_all(args.fmus, ["Payload", "Contact"])
        points = ladder(args.fmus, args.quick, log=lambda s: print(s, flush=True))
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps([asdict(p) for p in points], indent=1))
    print(f"plot: {plot(points)}\n")
    print(table(points))
    print()
    print(savings(points))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
