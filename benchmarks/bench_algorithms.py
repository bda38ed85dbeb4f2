"""Master algorithms benchmarked: error against macro steps on a transient (quarter car over a bump),
our ECCO beside libcosim's, and B3 with every algorithm (docs/algorithms_benchmark.md).

    python benchmarks/bench_algorithms.py [--parts transient,signal,transient-position,signal-position,libcosim,b3]
                                          [--quick] [--out FILE] [--report-only]

Parts
-----
* ``transient``: the quarter car of tests/models/quarter_car (chassis and wheel FMUs joined by a
  force/velocity power bond) drives over a 5 cm (1 - cos) bump made inside the wheel FMU, 2 s.
  Reference: the monolithic ODE (DOP853, rtol 1e-12).  Error: the largest deviation of the chassis and
  of the wheel height from the reference over the run's communication points, each divided by the
  reference's largest |height|; the larger of the two is "the error".  Runs (FAMILIES): fixed step
  (Jacobi, Gauss-Seidel) at 7 steps; at ladders of tolerances ECCO (both methods, rtol = atol = tol,
  atol in J, libcosim's quarter-truck PI settings), ECCO with atol = 1e-3 rtol, error control (both
  methods, rtol = atol = tol) and, Jacobi only, our ECCO with ``conventions: libcosim`` (which takes
  libcosim's steps).
* ``signal``: the same with the bump fed to ``wheel.road`` by orchestration.master.manipulators.signals.TimeSignals
  (evaluated at the start of each macro step and held over it, the master's input semantics).
* ``transient-position``, ``signal-position``: both again with the wheel height connected to the
  chassis as well (outside the bond): the chassis then resets the wheel height it integrates from the
  bond's velocity at every step, which removes the drift that variable steps give that integral.
* ``libcosim``: libcosim's ECCO (libcosimpy, in a subprocess) on the same FMUs, the system written
  by orchestration.system.osp.write_osp with ``<Algorithm>ecco</Algorithm>`` and an explicit
  ``EccoConfiguration`` equal to ours, the same tolerance ladder; compared with our ECCO (Jacobi, as
  libcosim) at equal numbers of macro steps (log-log interpolation of our error curve).
* ``b3``: tests/models/b3 (two-inertia roll, 30 s) with fixed Jacobi/Gauss-Seidel, ECCO, error control and
  iterative coupling: the error of Re lambda against the monolithic value and the macro steps.

Results: a JSON file (default benchmarks/data/algorithms_benchmark.json), markdown tables on
stdout, and the plot docs/img/algorithms_error_vs_steps.png (matplotlib, Agg).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from orchestration.master.algorithms import make_algorithm  # noqa: E402
from orchestration.master.algorithms.fixed import Algorithm, FixedStepAlgorithm  # noqa: E402
from orchestration.master.algorithms.ecco import EccoAlgorithm  # noqa: E402
from orchestration.master.algorithms.error_control import ErrorControlAlgorithm  # noqa: E402
from orchestration.master.execution import Execution  # noqa: E402
from orchestration.master.observers.results import MemoryObserver  # noqa: E402
from orchestration.master.algorithms.iterative import IterativeAlgorithm  # noqa: E402
from orchestration.system.osp import write_osp  # noqa: E402
from orchestration.master.manipulators.signals import TimeSignals  # noqa: E402
from orchestration.master.slaves import InProcessSlave  # noqa: E402
from orchestration.master.algorithms.step_control import PIController  # noqa: E402
from orchestration.system.model import System  # noqa: E402
from tests.models.quarter_car.build import build_quarter_car_fmus  # noqa: E402
from tests.models.quarter_car.model import QuarterCar, monolithic, quarter_car_system  # noqa: E402

STOP = 2.0
H0 = 1.0e-4                        # first step of every adaptive run (ECCO's StepSize)
#: libcosim's quarter-truck EccoConfiguration (anchors_cosim.md section 3), ours and libcosim's alike
PI = dict(safety=0.99, min_step=1.0e-5, max_step=1.0e-2, min_change=0.2, max_change=1.5, kp=0.2, ki=0.15)
FIXED_STEPS = (1e-2, 5e-3, 2e-3, 1e-3, 5e-4, 2e-4, 1e-4)
ECCO_TOLS = (1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5)
EC_TOLS = (1e-1, 3e-2, 1e-2, 3e-3, 1e-3)
METHODS = ("jacobi", "gauss-seidel")
VARIABLES = ["chassis.position", "wheel.position"]
#: result key -> (bump inside the wheel FMU?, wheel position connected to the chassis?, title)
VARIANTS = {
    "transient": (True, False, "bump in the wheel FMU, bond only"),
    "signal": (False, False, "bump through TimeSignals, bond only"),
    "transient-position": (True, True, "bump in the wheel FMU, bond + wheel position"),
    "signal-position": (False, True, "bump through TimeSignals, bond + wheel position"),
}
DEFAULT_OUT = ROOT / "benchmarks" / "data" / "algorithms_benchmark.json"
PLOT = ROOT / "docs" / "img" / "algorithms_error_vs_steps.png"


# ============================================================================ running our master

class CountingSlave(InProcessSlave):
    """Counts doStep calls (rollback algorithms step more often than they communicate)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.do_steps = 0

    def do_step(self, t: float, h: float) -> None:
        self.do_steps += 1
        super().do_step(t, h)


@dataclass
class Trajectory:
    time: np.ndarray
    values: dict[str, np.ndarray]
    steps: int                     # macro steps (communication intervals recorded)
    do_steps: int                  # doStep calls of one FMU (the largest over the FMUs)
    wall: float
    rejected: int = 0


def run_ours(system: System, algorithm: Algorithm, step: float, stop: float = STOP,
             manipulators: Sequence = (), variables: Sequence[str] = VARIABLES) -> Trajectory:
    """Our master with a doStep-counting slave factory (what orchestration.master.execution.simulate does)."""
    selected = [tuple(v.split(".", 1)) for v in variables]
    memory = MemoryObserver(selected)
    slaves: list[CountingSlave] = []

    def factory(name, path):
        slaves.append(CountingSlave(name, path))
        return slaves[-1]

    ex = Execution(system, algorithm, slave_factory=factory, observers=[memory], manipulators=list(manipulators),
                   observed=selected)
    t0 = time.perf_counter()
    try:
        ex.initialize()
        ex.run(stop, step)
    finally:
        ex.free()
    wall = time.perf_counter() - t0
    data = np.array(memory.rows)
    return Trajectory(np.array(memory.time), {v: data[:, k] for k, v in enumerate(variables)},
                      len(memory.time) - 1, max(s.do_steps for s in slaves), wall,
                      getattr(algorithm, "rejected", 0))


# ============================================================================ quarter car

@dataclass
class Point:
    """One run of the transient benchmark."""

    family: str                    # fixed | ecco | error-control | libcosim-ecco
    method: str                    # jacobi | gauss-seidel
    setting: float                 # the step (fixed) or tol (adaptive)
    steps: int
    do_steps: int
    error_chassis: float
    error_wheel: float
    rejected: int = 0
    wall: float = 0.0
    min_step: float = math.nan
    max_step: float = math.nan

    @property
    def error(self) -> float:
        return max(self.error_chassis, self.error_wheel)


class Reference:
    def __init__(self, car: QuarterCar, stop: float = STOP):
        self.solution = monolithic(car, stop + 0.05)         # libcosim's last step may end past stop
        grid = np.linspace(0.0, stop, 20001)
        x = self.solution(grid)
        self.scale_chassis = float(np.max(np.abs(x[0])))
        self.scale_wheel = float(np.max(np.abs(x[2])))

    def errors(self, t: np.ndarray, chassis: np.ndarray, wheel: np.ndarray) -> tuple[float, float]:
        x = self.solution(t)
        return (float(np.max(np.abs(chassis - x[0]))) / self.scale_chassis,
                float(np.max(np.abs(wheel - x[2]))) / self.scale_wheel)


def point(family: str, method: str, setting: float, traj: Trajectory, ref: Reference) -> Point:
    ec, ew = ref.errors(traj.time, traj.values["chassis.position"], traj.values["wheel.position"])
    h = np.diff(traj.time)
    return Point(family, method, setting, traj.steps, traj.do_steps, ec, ew, traj.rejected, traj.wall,
                 float(h.min()), float(h.max()))


#: the energy level of "our" ECCO in these comparisons: the paper's (Sadjina et al. 2017), the energy
#: through the bond in the step, as measured for sections 1-3 of docs/algorithms_benchmark.md (the
#: master's default, the bond's peak power, is for the shipped scenarios: section 6)
PAPER = "bond"


def ecco_options(tol: float) -> dict[str, float]:
    """Our ECCO settings as OSP EccoConfiguration options (orchestration.system.osp names)."""
    return {"safety_factor": PI["safety"], "step_size": H0, "minimum_step_size": PI["min_step"],
            "maximum_step_size": PI["max_step"], "minimum_change_rate": PI["min_change"],
            "maximum_change_rate": PI["max_change"], "proportional_gain": PI["kp"], "integral_gain": PI["ki"],
            "relative_tolerance": tol, "absolute_tolerance": tol}


#: the adaptive ladders: family -> (tolerances, factory(tol, method), methods)
def ecco(tol: float, method: str) -> EccoAlgorithm:
    """Our ECCO from the very options written to libcosim's EccoConfiguration (algorithm_factory)."""
    return make_algorithm("ecco", {**ecco_options(tol), "method": method, "energy_reference": PAPER})


def ecco_extrapolated(tol: float, method: str) -> EccoAlgorithm:
    """Our ECCO with libcosim's options plus linear input extrapolation (``"extrapolation": 1``),
    which libcosim's ECCO does not have."""
    return make_algorithm("ecco", {**ecco_options(tol), "method": method, "extrapolation": 1,
                                   "energy_reference": PAPER})


def ecco_small_atol(tol: float, method: str) -> EccoAlgorithm:
    return EccoAlgorithm(rtol=tol, atol=1e-3 * tol, method=method, controller=PIController(**PI),
                         energy_reference=PAPER)


def ecco_libcosim_convention(tol: float, method: str) -> EccoAlgorithm:
    """Our ECCO with libcosim's conventions (``conventions: libcosim``, ecco.py), from the options written
    to libcosim's EccoConfiguration: it takes libcosim's steps (tests/master/test_algorithms_benchmark.py)."""
    return make_algorithm("ecco", {**ecco_options(tol), "method": method, "conventions": "libcosim"})


def error_control(tol: float, method: str) -> ErrorControlAlgorithm:
    return ErrorControlAlgorithm(rtol=tol, atol=tol, min_step=PI["min_step"], max_step=PI["max_step"],
                                 method=method)


FAMILIES = {
    "ecco": (ECCO_TOLS, ecco, METHODS),
    "ecco-small-atol": ((1e-1, 3e-2, 1e-2, 3e-3, 1e-3), ecco_small_atol, METHODS),
    "error-control": (EC_TOLS, error_control, METHODS),
    "ecco-libcosim-convention": (ECCO_TOLS, ecco_libcosim_convention, ("jacobi",)),
}
#: run by the ``extrapolated`` part only (added to each variant's points)
EXTRAPOLATED = {"ecco-extrapolated": (ECCO_TOLS, ecco_extrapolated, ("jacobi",))}
SIGNAL_FAMILIES = FAMILIES


def transient(fmus: dict[str, Path], variant: str = "transient", quick: bool = False,
              log: Callable[[str], None] = print, families: dict | None = None) -> list[Point]:
    """Error against macro steps of every algorithm on the quarter car in one of VARIANTS."""
    car = QuarterCar()
    ref = Reference(car)
    builtin, position, _ = VARIANTS[variant]
    road = variant

    def system() -> System:
        return quarter_car_system(fmus, car, builtin_bump=builtin, wheel_position=position)

    def manipulators():
        return [] if builtin else [TimeSignals({("wheel", "road"): car.road})]

    points = []
    thin = (lambda seq: seq[::2]) if quick else (lambda seq: seq)
    for method in (METHODS if families is None else ()):
        for h in thin(FIXED_STEPS):
            p = point("fixed", method, h, run_ours(system(), FixedStepAlgorithm(method), h,
                                                   manipulators=manipulators()), ref)
            points.append(p)
            log(f"  {road} fixed {method} h={h:g}: {p.steps} steps, error {p.error:.3e} ({p.wall:.1f} s)")
    for family, (tols, make, methods) in (families or (FAMILIES if builtin else SIGNAL_FAMILIES)).items():
        for method in methods:
            for tol in thin(tols):
                p = point(family, method, tol, run_ours(system(), make(tol, method), H0,
                                                        manipulators=manipulators()), ref)
                points.append(p)
                log(f"  {road} {family} {method} tol={tol:g}: {p.steps} steps ({p.do_steps} doSteps, "
                    f"{p.rejected} rejected), error {p.error:.3e} ({p.wall:.1f} s)")
    return points


# ============================================================================ libcosim

#: run in a subprocess (libcosim loads our FMUs through their native loader; kept out of this process)
LIBCOSIM_RUNNER = r'''
import json, math, sys
try:
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    from libcosimpy.CosimManipulator import CosimManipulator
    from libcosimpy.CosimObserver import CosimObserver
except Exception as exc:
    sys.stderr.write(f"LIBCOSIMPY-UNAVAILABLE: {type(exc).__name__}: {exc}\n")
    sys.exit(3)
path, stop, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
spec = json.loads(sys.argv[4])
log_output_level(CosimLogLevel.WARNING)
execution = CosimExecution.from_osp_config_file(path)
observer = CosimObserver.create_last_value()
if not execution.add_observer(observer):
    raise SystemExit("add_observer failed")
slaves = {info.name.decode(): info.index for info in execution.slave_infos()}
refs = {name: {v.name.decode(): v.reference for v in execution.slave_variables(i)} for name, i in slaves.items()}
road = spec.get("road")
if road:
    manipulator = CosimManipulator.create_override()
    if not execution.add_manipulator(manipulator):
        raise SystemExit("add_manipulator failed")

def road_height(t):
    H, t0, T = road["height"], road["start"], road["duration"]
    if not t0 <= t <= t0 + T:
        return 0.0
    w = 2.0 * math.pi / T          # the same operations as QuarterCar.bump, to the last bit
    return 0.5 * H * (1.0 - math.cos(w * (t - t0)))

result = {"time": [], "values": {key: [] for key in spec["variables"]}}
t = 0.0
while t < stop - 1e-9:
    if road:   # held over the step from its start, as orchestration.master.manipulators.signals.TimeSignals
        manipulator.slave_real_values(slaves["wheel"], [refs["wheel"]["road"]], [road_height(t)])
    if not execution.step(1):
        raise SystemExit(f"libcosim step failed at t = {t}")
    t = execution.status().current_time / 1e9   # as libcosim converts its time points
    result["time"].append(t)
    for key in spec["variables"]:
        s, v = key.split(".", 1)
        result["values"][key].append(observer.last_real_values(slaves[s], [refs[s][v]])[0])
json.dump(result, open(out, "w"))
'''


class LibcosimUnavailable(RuntimeError):
    pass


def write_ecco_osp(system: System, folder: Path, tol: float, stop: float = STOP) -> Path:
    """The system as OspSystemStructure.xml with <Algorithm>ecco</Algorithm>, the power bond and our
    ECCO parameters (orchestration.system.osp.write_osp writes all three)."""
    system.base_step, system.stop_time = H0, stop
    system.algorithm, system.algorithm_options = "ecco", ecco_options(tol)
    return write_osp(system, folder)


def run_libcosim(osp: Path, workdir: Path, stop: float = STOP, road: QuarterCar | None = None,
                 variables: Sequence[str] = VARIABLES) -> Trajectory:
    """Step libcosim one macro step at a time until ``stop`` (its last ECCO step may end past it)."""
    out = workdir / "libcosim_result.json"
    out.unlink(missing_ok=True)
    spec = {"variables": list(variables)}
    if road is not None:
        spec["road"] = {"height": road.bump_height, "start": road.bump_start, "duration": road.bump_duration}
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", LIBCOSIM_RUNNER, str(osp), repr(stop), str(out), json.dumps(spec)],
                          env=env, cwd=workdir, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t0
    if proc.returncode == 3 and "LIBCOSIMPY-UNAVAILABLE" in proc.stderr:
        raise LibcosimUnavailable(proc.stderr.strip())
    if proc.returncode != 0 or not out.is_file():
        raise RuntimeError(f"libcosim run of {osp} failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n"
                           f"{proc.stderr[-3000:]}")
    raw = json.loads(out.read_text())
    t = np.concatenate([[0.0], raw["time"]])
    values = {}
    for v in variables:    # both start at rest at height 0
        values[v] = np.concatenate([[0.0], raw["values"][v]])
    return Trajectory(t, values, len(raw["time"]), len(raw["time"]), wall)


def libcosim_side_by_side(fmus: dict[str, Path], workdir: Path, variant: str = "transient", quick: bool = False,
                          log: Callable[[str], None] = print) -> list[Point]:
    car = QuarterCar()
    ref = Reference(car)
    builtin, position, _ = VARIANTS[variant]
    points = []
    for tol in (ECCO_TOLS[::2] if quick else ECCO_TOLS):
        folder = workdir / f"ecco_{variant}_{tol:g}"
        osp = write_ecco_osp(quarter_car_system(fmus, car, builtin_bump=builtin, wheel_position=position), folder, tol)
        p = point("libcosim-ecco", "jacobi", tol, run_libcosim(osp, folder, road=None if builtin else car), ref)
        points.append(p)
        log(f"  {variant} libcosim ecco tol={tol:g}: {p.steps} steps, error {p.error:.3e} ({p.wall:.1f} s)")
    return points


def interpolate_error(points: Sequence[Point], steps: float) -> float:
    """Error of a curve at ``steps`` macro steps: linear in log-log between the neighbouring runs
    (nan outside the curve's range)."""
    pts = sorted(points, key=lambda p: p.steps)
    n = np.log([p.steps for p in pts])
    e = np.log([p.error for p in pts])
    x = math.log(steps)
    if x < n[0] - 1e-12 or x > n[-1] + 1e-12:
        return math.nan
    return float(np.exp(np.interp(x, n, e)))


def steps_for_error(points: Sequence[Point], error: float) -> float:
    """Macro steps a curve needs for ``error``: the fewest steps after which the (log-log interpolated)
    curve stays at or below it; nan if it never gets there."""
    pts = sorted(points, key=lambda p: p.steps)
    best = math.nan
    for a, b in zip(pts[::-1][1:], pts[::-1][:-1]):        # from the most steps down
        if b.error > error:
            break
        if a.error <= error:
            best = a.steps
            continue
        # crossing between a (too large) and b (small enough)
        f = (math.log(error) - math.log(a.error)) / (math.log(b.error) - math.log(a.error))
        best = math.exp(math.log(a.steps) + f * (math.log(b.steps) - math.log(a.steps)))
        break
    else:
        if pts and pts[-1].error <= error and math.isnan(best):
            best = pts[-1].steps
    return best


# ============================================================================ B3

@dataclass
class B3Row:
    case: str
    algorithm: str
    re_lambda: float
    target: float
    steps: int
    do_steps: int
    rejected: int = 0
    iterations: float = math.nan
    wall: float = 0.0

    @property
    def error(self) -> float:
        return self.re_lambda - self.target


def b3_algorithms() -> dict[str, Callable[[], Algorithm]]:
    return {
        "fixed Jacobi h = 0.01": lambda: FixedStepAlgorithm("jacobi"),
        "fixed Gauss-Seidel h = 0.01": lambda: FixedStepAlgorithm("gauss-seidel"),
        "ecco Jacobi rtol 1e-2 atol 1e-3 J": lambda: EccoAlgorithm(
            rtol=1e-2, atol=1e-3, method="jacobi", controller=PIController(min_step=1e-4, max_step=0.05),
            energy_reference=PAPER),
        "ecco Gauss-Seidel rtol 1e-2 atol 1e-3 J": lambda: EccoAlgorithm(
            rtol=1e-2, atol=1e-3, method="gauss-seidel", controller=PIController(min_step=1e-4, max_step=0.05),
            energy_reference=PAPER),
        "error-control Jacobi rtol 1e-4 atol 1e-8": lambda: ErrorControlAlgorithm(rtol=1e-4, atol=1e-8, max_step=0.05),
        "error-control Gauss-Seidel rtol 1e-4 atol 1e-8": lambda: ErrorControlAlgorithm(
            rtol=1e-4, atol=1e-8, max_step=0.05, method="gauss-seidel"),
        "iterative h = 0.01 (trapezoidal, Aitken)": lambda: IterativeAlgorithm(),
        "iterative h = 0.01, initial relaxation 1.0": lambda: IterativeAlgorithm(relaxation=1.0),
    }


def b3_table(workdir: Path, log: Callable[[str], None] = print) -> list[B3Row]:
    from tests.models.b3 import model as b3
    from tests.models.b3.build import b3_system, build_b3_fmus

    fmus = build_b3_fmus(workdir / "b3")
    rows = []
    for case in ("T3-3", "T3-4"):
        p = b3.TABLES[case]
        target = b3.physical_mode(p).real
        for name, make in b3_algorithms().items():
            s = b3_system(fmus, case)
            alg = make()
            traj = run_ours(s, alg, 0.01, stop=30.0, variables=["B.angle"])
            t = np.arange(0.0, traj.time[-1], 0.01)
            re = b3.estimate_mode(t, np.interp(t, traj.time, traj.values["B.angle"])).real
            its = float(np.mean(alg.iterations)) if getattr(alg, "iterations", None) else math.nan
            row = B3Row(case, name, re, target, traj.steps, traj.do_steps, traj.rejected, its, traj.wall)
            rows.append(row)
            log(f"  B3 {case} {name}: Re lambda {re:+.5f} (target {target:+.5f}, error {row.error:+.5f}), "
                f"{row.steps} steps, {row.do_steps} doSteps ({row.wall:.1f} s)")
    return rows


# ============================================================================ report

def fmt(x: float, digits: int = 2) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}e}"


def transient_tables(points: list[Point], title: str) -> str:
    out = [f"### {title}", "", "| algorithm | method | step / tol | macro steps | doSteps per FMU | rejected | "
           "chassis error | wheel error | error | error / fixed-step error at equal steps | "
           "smallest / largest step (s) |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for p in points:
        fixed = [q for q in points if q.family == "fixed" and q.method == p.method]
        ratio = p.error / interpolate_error(fixed, p.steps) if p.family != "fixed" and fixed else math.nan
        out.append(f"| {p.family} | {p.method} | {p.setting:g} | {p.steps} | {p.do_steps} | {p.rejected} | "
                   f"{fmt(p.error_chassis)} | {fmt(p.error_wheel)} | **{fmt(p.error)}** | "
                   f"{'–' if math.isnan(ratio) else f'{ratio:.2f}'} | {p.min_step:.1e} / {p.max_step:.1e} |")
    return "\n".join(out)


def savings_table(points: list[Point], title: str) -> str:
    """For each method: the best fixed-step error and the macro steps each adaptive family needs for it."""
    out = [f"### {title}", "", "| method | best fixed-step error (steps) | algorithm | macro steps for that error | "
           "fewer steps than fixed | doSteps for that error |", "|---|---|---|---|---|---|"]
    for method in METHODS:
        fixed = [p for p in points if p.family == "fixed" and p.method == method]
        if not fixed:
            continue
        best = min(fixed, key=lambda p: p.error)
        for family in ("ecco", "ecco-small-atol", "ecco-extrapolated", "error-control", "libcosim-ecco"):
            curve = [p for p in points if p.family == family and p.method == method]
            if not curve:
                continue
            n = steps_for_error(curve, best.error)
            work = math.nan
            if not math.isnan(n):
                pts = sorted(curve, key=lambda p: p.steps)
                work = float(np.exp(np.interp(math.log(n), np.log([p.steps for p in pts]),
                                              np.log([p.do_steps for p in pts]))))
            ratio = best.steps / n if not math.isnan(n) else math.nan
            out.append(f"| {method} | {best.error:.2e} ({best.steps}) | {family} | "
                       f"{'not reached' if math.isnan(n) else f'{n:.0f}'} | "
                       f"{'–' if math.isnan(ratio) else f'{ratio:.2f}x'} | "
                       f"{'–' if math.isnan(work) else f'{work:.0f}'} |")
    return "\n".join(out)


def libcosim_table(ours: list[Point], theirs: list[Point], title: str) -> str:
    out = [f"### {title}", "", "| tol | libcosim steps | libcosim error | "
           "ours, libcosim's conventions: steps / error | "
           "ours: steps | ours: error | ours: error at libcosim's steps | ours / libcosim at equal steps | "
           "ours, extrapolated: error at libcosim's steps | extrapolated / libcosim |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    curve = [p for p in ours if p.family == "ecco" and p.method == "jacobi"]
    extrapolated = [p for p in ours if p.family == "ecco-extrapolated" and p.method == "jacobi"]
    same_convention = [p for p in ours if p.family == "ecco-libcosim-convention"]
    for q in theirs:
        same = next((p for p in curve if p.setting == q.setting), None)
        twin = next((p for p in same_convention if p.setting == q.setting), None)
        at = interpolate_error(curve, q.steps)
        ext = interpolate_error(extrapolated, q.steps) if extrapolated else math.nan
        out.append(f"| {q.setting:g} | {q.steps} | {q.error:.3e} | "
                   f"{f'{twin.steps} / {twin.error:.3e}' if twin else '–'} | {same.steps if same else '–'} | "
                   f"{fmt(same.error, 3) if same else '–'} | {fmt(at, 3)} | "
                   f"{'–' if math.isnan(at) else f'{at / q.error:.2f}'} | {fmt(ext, 3)} | "
                   f"{'–' if math.isnan(ext) else f'{ext / q.error:.2f}'} |")
    return "\n".join(out)


def b3_markdown(rows: list[B3Row]) -> str:
    out = ["| algorithm | T3-3 Re λ error (1/s) | T3-4 Re λ error (1/s) | macro steps T3-3 / T3-4 | "
           "doSteps per FMU T3-3 / T3-4 |", "|---|---|---|---|---|"]
    names = list(dict.fromkeys(r.algorithm for r in rows))
    for name in names:
        a = next(r for r in rows if r.algorithm == name and r.case == "T3-3")
        b = next(r for r in rows if r.algorithm == name and r.case == "T3-4")
        extra = f" (~{a.iterations:.1f} iterations)" if not math.isnan(a.iterations) else ""
        out.append(f"| {name} | {a.error:+.4f} | {b.error:+.4f} | {a.steps} / {b.steps}{extra} | "
                   f"{a.do_steps} / {b.do_steps} |")
    return "\n".join(out)


def plot(results: dict, path: Path = PLOT) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(k, v[2]) for k, v in VARIANTS.items() if results.get(k)]
    ncols = 2 if len(panels) > 1 else 1
    nrows = (len(panels) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.4 * ncols, 4.9 * nrows), squeeze=False)
    style = {("fixed", "jacobi"): ("k", "o", "-", "fixed Jacobi"),
             ("fixed", "gauss-seidel"): ("k", "s", "--", "fixed Gauss-Seidel"),
             ("ecco", "jacobi"): ("tab:blue", "o", "-", "ECCO Jacobi (ours)"),
             ("ecco", "gauss-seidel"): ("tab:blue", "s", "--", "ECCO Gauss-Seidel (ours)"),
             ("ecco-small-atol", "jacobi"): ("tab:cyan", "o", "-", "ECCO Jacobi, atol = 1e-3 rtol"),
             ("ecco-small-atol", "gauss-seidel"): ("tab:cyan", "s", "--", "ECCO Gauss-Seidel, atol = 1e-3 rtol"),
             ("ecco-extrapolated", "jacobi"): ("tab:purple", "D", "-", "ECCO Jacobi, linear extrapolation"),
             ("error-control", "jacobi"): ("tab:green", "o", "-", "error control Jacobi (accepted steps)"),
             ("error-control", "gauss-seidel"): ("tab:green", "s", "--", "error control Gauss-Seidel (accepted steps)"),
             ("libcosim-ecco", "jacobi"): ("tab:red", "^", ":", "libcosim ECCO")}
    for ax, (key, title) in zip(axes.flat, panels):
        points = [Point(**p) for p in results[key]] + [Point(**p) for p in results.get(f"libcosim_{key}", [])]
        for (family, method), (color, marker, line, label) in style.items():
            curve = sorted((p for p in points if p.family == family and p.method == method), key=lambda p: p.steps)
            if curve:
                ax.loglog([p.steps for p in curve], [p.error for p in curve], color=color, marker=marker,
                          linestyle=line, label=label, markersize=5, mfc="none" if method == "gauss-seidel" else color)
        work = sorted((p for p in points if p.family == "error-control" and p.method == "jacobi"),
                      key=lambda p: p.steps)
        if work:
            ax.loglog([p.do_steps for p in work], [p.error for p in work], color="tab:green", marker=".",
                      linestyle=":", alpha=0.5, label="error control Jacobi against doSteps per FMU")
        ax.set_xlabel("macro steps (2 s)")
        ax.set_ylabel("max position error / max |position|")
        ax.set_title(f"quarter car: {title}", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.07 if nrows > 1 else 0.12, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def report(results: dict) -> str:
    parts = []
    for key, (_, _, title) in VARIANTS.items():
        if results.get(key):
            pts = [Point(**p) for p in results[key]]
            lib = [Point(**p) for p in results.get(f"libcosim_{key}", [])]
            title = f"Quarter car, {title}"
            parts.append(transient_tables(pts + lib, title))
            parts.append(savings_table(pts + lib, f"{title}: macro steps to reach the best fixed-step error"))
            if lib:
                parts.append(libcosim_table(pts, lib, f"{title}: our ECCO (Jacobi) and libcosim's"))
    if results.get("b3"):
        parts.append("### B3\n\n" + b3_markdown([B3Row(**r) for r in results["b3"]]))
    return "\n\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parts", default=",".join([*VARIANTS, "libcosim", "extrapolated", "b3"]),
                    help=f"comma-separated: {', '.join(VARIANTS)}, libcosim (beside each variant run), "
                         "extrapolated (our ECCO with linear extrapolation, added to every variant), b3")
    ap.add_argument("--quick", action="store_true", help="every other point of each ladder")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--plot", type=Path, default=PLOT)
    ap.add_argument("--fmus", type=Path, default=ROOT / "build" / "quarter_car")
    ap.add_argument("--report-only", action="store_true", help="tables and plot from --out, no runs")
    args = ap.parse_args(argv)
    parts = set() if args.report_only else set(args.parts.split(","))
    results: dict = json.loads(args.out.read_text()) if args.out.is_file() else {}
    if args.report_only:
        print(f"plot: {plot(results, args.plot)}\n")
        print(report(results))
        return 0
    fmus = build_quarter_car_fmus(args.fmus)
    with tempfile.TemporaryDirectory(prefix="bench_algorithms_") as tmp:
        work = Path(tmp)
        for key in VARIANTS:
            if key in parts:
                print(f"{key}:", flush=True)
                results[key] = [asdict(p) for p in transient(fmus, key, args.quick,
                                                             log=lambda s: print(s, flush=True))]
                if "libcosim" in parts:
                    print(f"libcosim ({key}):", flush=True)
                    results[f"libcosim_{key}"] = [asdict(p) for p in libcosim_side_by_side(
                        fmus, work, key, args.quick, log=lambda s: print(s, flush=True))]
        if "extrapolated" in parts:
            for key in VARIANTS:
                print(f"extrapolated ECCO ({key}):", flush=True)
                kept = [p for p in results.get(key, []) if p["family"] != "ecco-extrapolated"]
                results[key] = kept + [asdict(p) for p in transient(fmus, key, args.quick, families=EXTRAPOLATED,
                                                                    log=lambda s: print(s, flush=True))]
        if "b3" in parts:
            print("b3:", flush=True)
            results["b3"] = [asdict(r) for r in b3_table(work, log=lambda s: print(s, flush=True))]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1))
    if any(results.get(k) for k in VARIANTS):
        print(f"plot: {plot(results, args.plot)}")
    print()
    print(report(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
