"""Benchmark B2 (ship_crane_digest.md 7.5): a rigid dummy mass on the ship, swept through the mass
ratios 0.2, 0.5, 1.5 and 4, explicit coupling against the mass-aware interface against a
monolithic reference (docs/mass_aware.md has the table and the reasoning).

    python benchmarks/bench_b2.py [--fmus DIR] [--stop T] [--step H]

* **Rigid mass**: the Crane FMU with tests/data/cranes/b2_rigid_mass.json, a point-like mass
  (isotropic inertia, radius of gyration 1 m) 10 m above hardpoint 1 (body [-30, 0, -8]) on the
  axis of a passive vertical revolute joint: rigidly attached in all six DOF but its own spin about
  that axis. Mass and inertia are scaled so that the mass ratio rho(M_s^-1 M_a) (digest 7.3,
  M_s = M_RB + A_inf of the MSS supply vessel) is exactly 0.2, 0.5, 1.5, 4 (about 196 t to
  3900 t; the dominant mode is roll/sway). Gravity is off in the mass (a dummy *inertia*: 3900 t
  of weight would sink the 6362 t vessel by 2.7 m, outside linear hydrostatics); one extra case
  with its weight checks the bias path.
* **Explicit**: crane base.force/moment -> ship hardpoint1.force/moment, ship hardpoint1 motion ->
  crane base (as tests/test_crane.py::test_crane_on_the_ship_in_co_simulation).
* **Mass-aware**: crane base.inertia_*/bias_* -> ship hardpoint1.inertia_*/bias_*, no force link.
* **Monolithic**: the Ship FMU alone with hardpoint 1 moved to the mass's CG and the point mass as
  constant inertia inputs (start values): the ship integrates (M_RB + A_inf + X^T I X) nu', which
  tests/components/test_ship.py shows equal to M_RB + the point mass to 1e-7.
* Same seeded JONSWAP sea (Hs 3 m, Tp 8 s, oblique) in all runs; 0.05 s macro steps.

Divergence is measured as the growth factor per macro step of the coupling error (the crane's
base force against the mass-aware run's) while it blows up, after a single initial sweep
(``Execution.initialize(tolerance=inf)``, so that the stepping itself is what diverges);
``Execution.initialize`` with its defaults is also tried and reported (it fails from a mass ratio of
about 0.4 on: the loop contracts only sqrt(rho) per sweep). Stable explicit runs start from a
converged initial sweep (``max_sweeps=1000``) and are compared with the monolithic reference.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from orchestration.master.algorithms.fixed import FixedStepAlgorithm  # noqa: E402
from orchestration.master.coupling_check import (Scheme, check_added_mass, growth_factor,  # noqa: E402
                                                 mass_ratio, stability_limit)
from orchestration.master.execution import Execution, ExecutionError  # noqa: E402
from orchestration.master.observers.results import MemoryObserver  # noqa: E402
from orchestration.system.model import Component, System  # noqa: E402
from tests.models.supply_vessel import vessel_inertia  # noqa: E402

TEMPLATE = ROOT / "tests" / "data" / "cranes" / "b2_rigid_mass.json"
RATIOS = (0.2, 0.5, 1.5, 4.0)
HARDPOINT = (-30.0, 0.0, -8.0)
SEA = {"sea.spectrum": 1, "sea.hs": 3.0, "sea.period": 8.0, "sea.direction": 2.4, "sea.seed": 7,
       "sea.n_frequencies": 40}
STEP = 0.05
G = 9.81
MOTION = ("position", "velocity", "angular_velocity", "acceleration", "angular_acceleration")
RECORD = ["ship.position[2]", "ship.euler[0]", "ship.euler[1]"]
CRANE_FORCE = [f"crane.base.{w}[{i}]" for w in ("force", "moment") for i in range(3)]


# ---------------------------------------------------------------------- the rigid mass

def template() -> dict:
    return json.loads(TEMPLATE.read_text())


def point_inertia(mass: float, own: float, r: np.ndarray) -> np.ndarray:
    """6x6 spatial inertia [linear; angular] about a point, of a mass at r from it with isotropic
    own inertia ``own`` about its CG; ``own`` about the vertical is left out (the passive joint)."""
    S = np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])
    I = np.zeros((6, 6))
    I[0:3, 0:3] = mass * np.eye(3)
    I[0:3, 3:6] = -mass * S
    I[3:6, 0:3] = mass * S
    I[3:6, 3:6] = np.diag([own, own, 0.0]) - mass * S @ S
    return I


def unit_ratio() -> tuple[float, float, np.ndarray]:
    """(mass ratio per kg of the template's mass, the own inertia per kg, the CG above the hardpoint
    in NED at level)."""
    link = template()["links"][0]
    m, own, cg = float(link["mass"]), float(link["inertia"][0]), np.array(link["cg"], float)
    Ms = vessel_inertia(4)
    ratio, _, _ = mass_ratio(Ms, HARDPOINT, point_inertia(1.0, own / m, cg))
    return ratio, own / m, cg


def mass_for(ratio: float) -> float:
    per_kg, _, _ = unit_ratio()
    return ratio / per_kg


def write_mechanism(mass: float, folder: Path) -> Path:
    """The template with its mass (and own inertia, same radius of gyration) scaled to ``mass``."""
    d = template()
    link = d["links"][0]
    k2 = float(link["inertia"][0]) / float(link["mass"])
    link["mass"] = mass
    link["inertia"] = [mass * k2] * 3
    path = Path(folder) / f"b2_rigid_mass_{mass / 1e3:.0f}t.json"
    path.write_text(json.dumps(d, indent=1))
    return path


# ---------------------------------------------------------------------- the three systems

def _ship(fmus: Path, sea: dict, **extra) -> Component:
    return Component("ship", Path(fmus) / "Ship.fmu", {**sea, **{f"hardpoint1.location[{i}]": HARDPOINT[i]
                                                                 for i in range(3)}, **extra})


def _with_crane(fmus: Path, mechanism: Path, sea: dict, gravity: float, name: str) -> System:
    s = System(name)
    s.add_component(_ship(fmus, sea))
    s.add_component(Component("crane", Path(fmus) / "Crane.fmu",
                              {"mechanism": str(mechanism), "gravity": gravity, "max_substep": 0.01}))
    for var in MOTION:
        for i in range(3):
            s.connect(f"ship.hardpoint1.{var}[{i}]", f"crane.base.{var}[{i}]")
    for i in range(4):
        s.connect(f"ship.hardpoint1.quaternion[{i}]", f"crane.base.quaternion[{i}]")
    return s


def explicit_system(fmus: Path, mechanism: Path, sea: dict = SEA, gravity: float = 0.0) -> System:
    """Force/acceleration exchange: the crane's reaction goes to hardpoint1.force/moment."""
    s = _with_crane(fmus, mechanism, sea, gravity, "b2_explicit")
    for i in range(3):
        s.connect(f"crane.base.force[{i}]", f"ship.hardpoint1.force[{i}]")
        s.connect(f"crane.base.moment[{i}]", f"ship.hardpoint1.moment[{i}]")
    return s


def mass_aware_system(fmus: Path, mechanism: Path, sea: dict = SEA, gravity: float = 0.0) -> System:
    """The crane's articulated inertia and bias go to the ship; no force connection."""
    s = _with_crane(fmus, mechanism, sea, gravity, "b2_mass_aware")
    connect_mass_aware(s, "crane", "base", "ship", "hardpoint1")
    return s


def connect_mass_aware(s: System, crane: str, base: str, ship: str, hardpoint: str) -> None:
    """The 27 connections of the mass-aware interface (docs/mass_aware.md)."""
    for block, keys in (("linear", ("0,0", "1,1", "2,2", "0,1", "0,2", "1,2")),
                        ("coupling", ("0,0", "0,1", "0,2", "1,0", "1,1", "1,2", "2,0", "2,1", "2,2")),
                        ("angular", ("0,0", "1,1", "2,2", "0,1", "0,2", "1,2"))):
        for k in keys:
            s.connect(f"{crane}.{base}.inertia_{block}[{k}]", f"{ship}.{hardpoint}.inertia_{block}[{k}]")
    for w in ("force", "moment"):
        for i in range(3):
            s.connect(f"{crane}.{base}.bias_{w}[{i}]", f"{ship}.{hardpoint}.bias_{w}[{i}]")


def monolithic_system(fmus: Path, mass: float, sea: dict = SEA, gravity: float = 0.0) -> System:
    """The Ship FMU alone carrying the same mass: hardpoint 1 at the mass's CG, the point mass as
    constant articulated inertia (I_A = diag(m, m, m, I, I, 0), NED at the CG) and its weight as the
    bias (p_A = -m g e_z)."""
    _, own_per_kg, cg = unit_ratio()
    location = np.array(HARDPOINT) + cg
    own = own_per_kg * mass
    values = {f"hardpoint1.location[{i}]": float(location[i]) for i in range(3)}
    values.update({"hardpoint1.inertia_linear[0,0]": mass, "hardpoint1.inertia_linear[1,1]": mass,
                   "hardpoint1.inertia_linear[2,2]": mass, "hardpoint1.inertia_angular[0,0]": own,
                   "hardpoint1.inertia_angular[1,1]": own, "hardpoint1.bias_force[2]": -mass * gravity})
    s = System("b2_monolithic")
    s.add_component(Component("ship", Path(fmus) / "Ship.fmu", {**sea, **values}))
    return s


# ---------------------------------------------------------------------- running

@dataclass
class Run:
    time: np.ndarray
    data: dict[str, np.ndarray]
    status: str = "ok"                   # ok | diverged | init failed
    detail: str = ""
    init_sweeps: int | None = None
    force_norm: np.ndarray = field(default_factory=lambda: np.zeros(0))
    wall: float = 0.0


def run(system: System, stop: float, step: float = STEP, method: str = "gauss-seidel", extrapolation: int = 0,
        single_sweep_init: bool = False, blowup: float = 1e3, algorithm=None, max_sweeps: int = 50) -> Run:
    """Run ``system`` and record heave/roll/pitch (and the crane force when there is a crane).
    ``single_sweep_init``: one propagation sweep at initialisation (the default 50 sweeps to 1e-10
    fail for a loop that contracts slowly or not at all; ``max_sweeps`` raises that limit). A run
    stops as 'diverged' when the crane force grows ``blowup`` times beyond its initial value (at
    least 10 kN), or an FMU refuses a value."""
    names = RECORD + (CRANE_FORCE if "crane" in system.components else [])
    selected = [tuple(n.split(".", 1)) for n in names]
    memory = MemoryObserver(selected)
    algorithm = algorithm or FixedStepAlgorithm(method=method, extrapolation=extrapolation)
    started = time.perf_counter()
    ex = Execution(system, algorithm, observers=[memory], observed=selected)
    status, detail, sweeps = "ok", "", None
    try:
        try:
            sweeps = ex.initialize(tolerance=math.inf) if single_sweep_init else ex.initialize(max_sweeps)
        except ExecutionError as exc:
            return Run(np.zeros(0), {}, "init failed", str(exc), wall=time.perf_counter() - started)
        n = int(round(stop / step))
        has_crane = "crane" in system.components
        reference = max(float(np.linalg.norm(memory.rows[0][len(RECORD):len(RECORD) + 3])), 1e4) if has_crane else 0.0
        for k in range(n):
            try:
                ex.step(step)
            except (ExecutionError, RuntimeError) as exc:     # an FMU refusing a value; no convergence
                status = "no convergence" if type(exc).__name__ == "ConvergenceError" else "diverged"
                detail = f"t = {ex.time:.3g} s: {str(exc)[:160]}"
                break
            if has_crane:
                f = np.linalg.norm(memory.rows[-1][len(RECORD):len(RECORD) + 3])
                if not np.isfinite(f) or f > blowup * reference:
                    status, detail = "diverged", f"crane force x{blowup:g} at t = {ex.time:.3g} s"
                    break
    finally:
        ex.free()
    rows = np.array(memory.rows)
    data = {name: rows[:, j] for j, name in enumerate(names)}
    force = np.linalg.norm(rows[:, len(RECORD):len(RECORD) + 3], axis=1) if "crane" in system.components \
        else np.zeros(0)
    return Run(np.array(memory.time), data, status, detail, sweeps, force, time.perf_counter() - started)


def measured_growth(r: Run, reference: Run, window: float = 1e4) -> float:
    """Growth factor per macro step of the coupling error: e_n = |F_n - F_ref,n|, the crane's base
    force against the mass-aware run's (the consistent reaction), median of e_n+1 / e_n from the
    second step while e stays below ``window`` x e_0 (later the ABA's velocity-squared terms of a
    runaway make it grow faster than linearly)."""
    n = min(len(r.time), len(reference.time))
    f = np.array([r.data[k][:n] for k in CRANE_FORCE[:3]]).T
    g = np.array([reference.data[k][:n] for k in CRANE_FORCE[:3]]).T
    e = np.linalg.norm(f - g, axis=1)
    e = e[np.isfinite(e)]
    if len(e) < 3 or not e[0] > 0.0:
        return math.nan
    ratios = [e[k + 1] / e[k] for k in range(1, len(e) - 1) if e[k + 1] <= window * e[0] and e[k] > 0.0]
    return float(np.median(ratios)) if ratios else math.nan


def relative_error(run_: Run, reference: Run) -> dict[str, float]:
    """max |x - x_ref| / max |x_ref| per recorded ship DOF (heave, roll, pitch)."""
    n = min(len(run_.time), len(reference.time))
    return {name: float(np.max(np.abs(run_.data[name][:n] - reference.data[name][:n])) /
                        max(float(np.max(np.abs(reference.data[name][:n]))), 1e-12)) for name in RECORD}


# ---------------------------------------------------------------------- the table

def b2(fmus: Path, stop: float = 30.0, step: float = STEP, explicit_stop: float = 5.0, folder: Path | None = None,
       schemes=(("gauss-seidel", 0), ("jacobi", 0), ("gauss-seidel", 1), ("jacobi", 1)), gravity_case: bool = True,
       iterative: bool = True, log=print) -> list[dict]:
    """The B2 sweep; one row per mass ratio (plus the weighted case)."""
    folder = Path(folder or tempfile.mkdtemp(prefix="b2_"))
    rows = []
    cases = [(ratio, 0.0) for ratio in RATIOS] + ([(0.2, G)] if gravity_case else [])
    for ratio, gravity in cases:
        mass = mass_for(ratio)
        mech = write_mechanism(mass, folder)
        row = {"ratio": ratio, "mass_t": mass / 1e3, "gravity": gravity}
        mono = run(monolithic_system(fmus, mass, gravity=gravity), stop, step)
        aware = run(mass_aware_system(fmus, mech, gravity=gravity), stop, step)
        row["mass_aware_error"] = relative_error(aware, mono)
        row["mass_aware_status"] = aware.status
        row["amplitude"] = {k: float(np.max(np.abs(mono.data[k]))) for k in RECORD}
        row["check"] = {}
        row["explicit"] = {}
        for method, extrapolation in schemes:
            key = f"{method}/{extrapolation}"
            system = explicit_system(fmus, mech, gravity=gravity)
            findings = check_added_mass(system, method=method, extrapolation=extrapolation)
            scheme = Scheme(method=method, extrapolation=extrapolation)
            row["check"][key] = {"warned": any(f.diverges for f in findings),
                                 "kinds": sorted({f.kind for f in findings}),
                                 "ratio": findings[0].mass_ratio if findings else None,
                                 "messages": [str(f) for f in findings]}
            default = run(system, explicit_stop, step, method, extrapolation)
            if ratio < 1.0:     # stable: accuracy from a converged start (more initial sweeps)
                single = run(system, stop, step, method, extrapolation, max_sweeps=1000)
            else:               # one initial sweep, so that the stepping is what diverges
                single = run(system, explicit_stop, step, method, extrapolation, single_sweep_init=True, blowup=1e6)
            entry = {"init": default.status if default.status == "init failed" else f"{default.init_sweeps} sweeps",
                     "status": single.status, "detail": single.detail,
                     "growth": measured_growth(single, aware) if single.status == "diverged" else None,
                     "predicted_growth": growth_factor(ratio, scheme), "limit": stability_limit(scheme)}
            if single.status == "ok":
                entry["error"] = relative_error(single, mono)
            row["explicit"][key] = entry
        if iterative and gravity == 0.0:
            from orchestration.master.algorithms.iterative import IterativeAlgorithm

            it = run(explicit_system(fmus, mech, gravity=gravity), explicit_stop, step, algorithm=IterativeAlgorithm(),
                     single_sweep_init=True)
            row["iterative"] = {"status": it.status, "detail": it.detail,
                                "error": relative_error(it, mono) if it.status == "ok" else None}
        rows.append(row)
        log(format_row(row))
    return rows


def format_row(row: dict) -> str:
    err = row["mass_aware_error"]
    parts = [f"ratio {row['ratio']:4.1f} ({row['mass_t']:7.1f} t{', weight' if row['gravity'] else ''}): "
             f"mass-aware vs monolithic heave {100 * err[RECORD[0]]:.3f} % roll {100 * err[RECORD[1]]:.3f} % "
             f"pitch {100 * err[RECORD[2]]:.3f} %"]
    for key, e in row["explicit"].items():
        text = f"  explicit {key}: init {e['init']}, stepping {e['status']}"
        if e.get("growth") is not None:
            text += f", growth x{e['growth']:.3g}/step (predicted x{e['predicted_growth']:.3g})"
        if e.get("error") is not None:
            text += (f", vs monolithic heave {100 * e['error'][RECORD[0]]:.2f} % roll "
                     f"{100 * e['error'][RECORD[1]]:.2f} % pitch {100 * e['error'][RECORD[2]]:.2f} %")
        kinds = row["check"][key]["kinds"]
        text += f"; check: {', '.join(kinds) if kinds else 'nothing'} (limit {e['limit']:.3g})"
        parts.append(text)
    if "iterative" in row:
        it = row["iterative"]
        parts.append(f"  iterative (Aitken): {it['status']} {it['detail'][:120]}" + (
            f", vs monolithic {', '.join(f'{100 * v:.3f} %' for v in it['error'].values())}" if it["error"] else ""))
    return "\n".join(parts)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--fmus", type=Path, help="folder with Ship.fmu and Crane.fmu (default: build them now)")
    p.add_argument("--stop", type=float, default=30.0)
    p.add_argument("--step", type=float, default=STEP)
    args = p.parse_args(argv)
    fmus = args.fmus
    if fmus is None:
        import build_fmus

        fmus = Path(tempfile.mkdtemp(prefix="b2_fmus_"))
        build_fmus.build_all(fmus, ["Ship", "Crane"])
    started = time.perf_counter()
    b2(fmus, args.stop, args.step)
    print(f"wall time {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
