"""Benchmark B4: the co-simulation -- the Ship FMU and the Crane FMU (tysse_egeland.json with its hook,
hoist and payload, tests/models/b4/model.py) under our master -- built from a tests/models/b4/model.py scenario, run,
and compared with the monolithic reference (tests/models/b4/monolithic.py).

Ship-crane couplings (``coupling``):

* ``mass-aware`` (default, docs/mass_aware.md): the crane's articulated inertia and bias wrench go to
  the ship's hardpoint 1 (``base.inertia_*``, ``base.bias_*``), the hardpoint's motion to the crane base;
* ``explicit``: the crane's base force and moment instead of the inertia and bias;
* ``one-way``: the ship's motion drives the crane, nothing goes back to the ship (the ship does not feel
  the crane at all, so it floats at its own equilibrium: level, CO on the waterline).

The slew, boom and jib rate setpoints are the scenario's functions of time, forced on the crane's
``joint<k>.setpoint`` inputs (StepSignals); the hoist's setpoint (its unstretched length) is a
start value.

``hoist="cable"`` is the split variant: the bare three-link crane, and the hoist wire as a Cable FMU
(2 elements, its free end carrying the payload as a point mass): the crane tip's position and velocity
drive the wire's upper end (``end_a``), the wire's force on it goes back to the crane tip
(``attachment1.force``).
"""
from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from orchestration.master.algorithms.fixed import FixedStepAlgorithm
from orchestration.master.execution import Execution
from orchestration.master.manipulators import Manipulator
from orchestration.master.observers.results import MemoryObserver
from orchestration.system.model import Component, System
from tests.models.b4 import model as b4

MOTION = ("position", "velocity", "angular_velocity", "acceleration", "angular_acceleration")
SYM = ("0,0", "1,1", "2,2", "0,1", "0,2", "1,2")
FULL = ("0,0", "0,1", "0,2", "1,0", "1,1", "1,2", "2,0", "2,1", "2,2")
RECORD = {
    "heave": ["ship.position[2]"],
    "roll": ["ship.euler[0]"],
    "pitch": ["ship.euler[1]"],
    "tip": [f"crane.attachment1.position[{i}]" for i in range(3)],
    "tension": ["crane.joint6.torque"],          # minus the tension
    "payload": [f"crane.attachment2.position[{i}]" for i in range(3)],
    "position": [f"ship.position[{i}]" for i in range(3)],
    "q": [f"crane.joint{k}.position" for k in range(1, 7)],
}
RECORD_CABLE = {**RECORD, "tension": ["cable.end_a.tension"],
                "payload": [f"cable.tip.position[{i}]" for i in range(3)],
                "q": [f"crane.joint{k}.position" for k in (1, 2, 3)]}
MIDPOINT_ORDER = 2
SIGNALS = ("heave", "roll", "pitch", "tip", "tension")


class StepSignals(Manipulator):
    """Force inputs to g(t, h), a value for the whole macro step [t, t + h] (g(t, 0) at initialisation), and
    make the outputs of direct-feedthrough slaves reflect it before the algorithm reads them.

    The second part works around the master: ``Execution.step`` lets manipulators change inputs, and then
    the algorithm reads the other slaves' inputs from outputs computed with the *previous* values (the
    feedthrough refresh ran before the manipulators). The crane's base bias wrench depends directly on
    its joint setpoints, so without it the ship would take over each step the crane's reaction to the
    previous step's setpoint. The refresh re-feeds the manipulated slaves, then the other feedthrough
    slaves in the master's refresh order (here the crane, then the ship: the ship's acceleration depends
    on the crane's new bias, and the crane's base acceleration input for the step is read from it)."""

    def __init__(self, signals: dict[tuple[str, str], Callable[[float, float], float]], refresh: bool = True,
                 sample: Callable | None = None):
        self.signals = dict(signals)
        self.refresh = refresh
        # it feeds the slaves itself (with the sampled values); the master must not feed them again
        self.refreshes_feedthrough = bool(refresh)
        self.sample = sample      # (execution, t, h, {(comp, var): value}) -> values to evaluate the outputs with

    def variables(self):
        return list(self.signals)

    def before_step(self, execution: Execution, t: float, h: float) -> None:
        values = {key: float(g(t, h)) for key, g in self.signals.items()}
        touched = [execution.index[component] for component, _ in values]
        if self.refresh and h > 0.0 and hasattr(execution.algorithm, "_refresh_order"):
            for (component, variable), value in (self.sample(execution, t, h, values) if self.sample
                                                 else values).items():
                execution.override(component, variable, value)
            everyone = range(len(execution.slaves))
            first = list(dict.fromkeys(touched))
            for i in first + [j for j in execution.algorithm._refresh_order if j not in first]:
                if execution.feedthrough[i]:
                    execution.feed(i, t, execution.compute_inputs(i, t, 0.0, 0, updated=everyone))
        for (component, variable), value in values.items():
            execution.override(component, variable, value)


# ---------------------------------------------------------------------- the system

def ship_values(scenario: b4.Scenario, coupling: str = "mass-aware", hoist: str = "crane") -> dict:
    init = b4.initial_state(scenario) if hoist == "crane" else b4.cable_initial_state(scenario)
    level = coupling == "one-way"
    extra = {}
    if hoist == "crane" and not level and scenario.hardpoint_forces(0.0) is not None:
        for k, point in enumerate(b4.COMPENSATION_POINTS):
            extra.update({f"hardpoint{k + 2}.location[{i}]": float(point[i]) for i in range(3)})
    return {**scenario.sea, **extra,
            **{f"hardpoint1.location[{i}]": float(b4.HARDPOINT[i]) for i in range(3)},
            "initial.position[2]": 0.0 if level else float(init.z),
            "initial.euler[0]": 0.0 if level else float(init.roll),
            "initial.euler[1]": 0.0 if level else float(init.pitch)}


def crane_values(scenario: b4.Scenario, mechanism: Path, q0, max_substep: float = 0.01) -> dict:
    values = {"mechanism": str(mechanism), "gravity": b4.G, "max_substep": max_substep, "use_initial": True}
    values.update({f"joint{k + 1}.initial_position": float(q) for k, q in enumerate(q0)})
    return values


def cable_values(scenario: b4.Scenario, max_substep: float = 0.0, theta: float = 0.6) -> dict:
    init = b4.cable_initial_state(scenario)
    w = b4.wire()
    values = {"length": w.length, "n_segments": w.segments, "EA": w.EA, "damping": w.damping,
              "mass_per_length": w.mass_per_length, "diameter": 0.05, "water_density": 0.0, "gravity": b4.G,
              "seabed.depth": 1e4, "end_b.free": True, "end_b.mass": scenario.payload,
              "solver.theta": theta, "max_substep": max_substep}
    values.update({f"end_b.position[{i}]": float(init.payload_position[i]) for i in range(3)})
    return values


def system(fmus: Path, scenario: b4.Scenario, coupling: str = "mass-aware", hoist: str = "crane",
           workdir: Path | None = None, crane_substep: float = 0.01, cable_substep: float = 0.0,
           cable_theta: float = 0.6) -> System:
    """The co-simulation system of a scenario. ``workdir``: where the crane's mechanism file (with the
    scenario's payload) is written (default: a new temporary folder)."""
    fmus = Path(fmus)
    s = System(f"b4_{coupling}_{hoist}")
    s.add_component(Component("ship", fmus / "Ship.fmu", ship_values(scenario, coupling, hoist)))
    folder = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="b4_"))
    if hoist == "crane":
        mech = b4.write_mechanism(scenario.payload, folder)
        values = crane_values(scenario, mech, b4.initial_state(scenario, level=coupling == "one-way").q, crane_substep)
        values[f"joint{b4.WIRE_JOINT + 1}.setpoint"] = b4.WIRE_LENGTH
    elif hoist == "cable":
        values = crane_values(scenario, b4.write_mechanism(None, folder), b4.cable_initial_state(scenario).q,
                              crane_substep)
    else:
        raise ValueError(f"unknown hoist {hoist!r}")
    s.add_component(Component("crane", fmus / "Crane.fmu", values))
    bonded = coupling != "one-way"         # the crane's wrench on the ship with the velocities it works on
    for var in MOTION:
        for i in range(3):
            s.connect(f"ship.hardpoint1.{var}[{i}]", f"crane.base.{var}[{i}]",
                      power_bond="crane_base" if bonded and var in ("velocity", "angular_velocity") else None)
    for i in range(4):
        s.connect(f"ship.hardpoint1.quaternion[{i}]", f"crane.base.quaternion[{i}]")
    if coupling == "mass-aware":
        for block, keys in (("linear", SYM), ("coupling", FULL), ("angular", SYM)):
            for k in keys:
                s.connect(f"crane.base.inertia_{block}[{k}]", f"ship.hardpoint1.inertia_{block}[{k}]")
        for w in ("force", "moment"):
            for i in range(3):
                s.connect(f"crane.base.bias_{w}[{i}]", f"ship.hardpoint1.bias_{w}[{i}]", power_bond="crane_base")
    elif coupling == "explicit":
        for w in ("force", "moment"):
            for i in range(3):
                s.connect(f"crane.base.{w}[{i}]", f"ship.hardpoint1.{w}[{i}]", power_bond="crane_base")
    elif coupling != "one-way":
        raise ValueError(f"unknown coupling {coupling!r}")
    if hoist == "cable":
        s.add_component(Component("cable", fmus / "Cable.fmu", cable_values(scenario, cable_substep, cable_theta)))
        for i in range(3):
            s.connect(f"crane.attachment1.position[{i}]", f"cable.end_a.position[{i}]")
            s.connect(f"crane.attachment1.velocity[{i}]", f"cable.end_a.velocity[{i}]", power_bond="crane_tip")
            s.connect(f"cable.end_a.force[{i}]", f"crane.attachment1.force[{i}]", power_bond="crane_tip")
    return s


def setpoint_signals(scenario: b4.Scenario, refresh="midpoint", hoist: str = "crane",
                     coupling: str = "mass-aware") -> StepSignals:
    """The slew, boom and jib rate setpoints, each step's exact average rate (RateReference.step), and the
    compensation forces on the ship's hardpoints 2 and 3 (their midpoint values). refresh: False, True, or
    'midpoint' (outputs for the ship evaluated with the servo torque of the step's midpoint)."""
    ref = b4.cable_reference_rates(scenario) if hoist == "cable" else scenario.reference(level=coupling == "one-way")
    c = b4.crane()
    T = c.kd / c.kp                   # the rate servos' integral time kp_v / ki

    history: dict = {}

    def midpoint_integral(execution, t, h, values):
        """Evaluate the crane's outputs with the rate setpoint that makes its servo torque what it will be at
        the step's midpoint, tau = kp_v (qd_t - qd) + ki z: the joint rate at t + h/2 extrapolated from the
        last communication points (the master's midpoint weights), the integral grown by (qd_t - qd) h/2."""
        out = {}
        for k in range(b4.CRANE_JOINTS):
            key = ("crane", f"joint{k + 1}.setpoint")
            rate = execution.value("crane", f"joint{k + 1}.rate")
            past = [r for tt, r in history.get(k, []) if tt < t][::-1]          # newest first
            order = min(len(past), MIDPOINT_ORDER)
            weights = ((1.0,), (1.5, -0.5), (1.875, -1.25, 0.375))[order]
            rate_mid = weights[0] * rate + sum(w * r for w, r in zip(weights[1:], past))
            history[k] = (history.get(k, []) + [(t, rate)])[-3:]
            out[key] = values[key] + (values[key] - rate) * 0.5 * h / T[k] - (rate_mid - rate)
        return out

    signals = {("crane", f"joint{k + 1}.setpoint"): (lambda t, h, k=k: ref.step(t, h)[k])
               for k in range(b4.CRANE_JOINTS)}
    if hoist == "crane" and coupling != "one-way" and scenario.hardpoint_forces(0.0) is not None:
        for j in range(len(b4.COMPENSATION_POINTS)):
            for i in range(3):
                signals[("ship", f"hardpoint{j + 2}.force[{i}]")] = (
                    lambda t, h, j=j, i=i: float(scenario.hardpoint_forces(t + 0.5 * h)[1][j][i]))
    sample = None
    if refresh == "midpoint":
        def sample(execution, t, h, values):
            return {**values, **midpoint_integral(execution, t, h, values)}
    return StepSignals(signals, refresh=bool(refresh), sample=sample)


# ---------------------------------------------------------------------- running

@dataclass
class CosimResult:
    time: np.ndarray
    data: dict[str, np.ndarray]
    wall: float
    coupling: str
    step: float
    init_sweeps: int = 0
    extra: dict = field(default_factory=dict)

    def __getitem__(self, key):
        return self.data[key]


def run(fmus: Path, scenario: b4.Scenario, coupling: str = "mass-aware", step: float = b4.STEP,
        stop: float | None = None, algorithm=None, hoist: str = "crane", refresh="midpoint",
        **options) -> CosimResult:
    """Run a scenario under the master (default: FixedStepAlgorithm(), Jacobi with inputs held, as
    ``marine-cosim run``) and return the B4 signals on the communication points."""
    s = system(fmus, scenario, coupling, hoist, **options)
    record = RECORD if hoist == "crane" else RECORD_CABLE
    names = [n for group in record.values() for n in group]
    names += [f"crane.joint{k}.rate" for k in (1, 2, 3) if f"crane.joint{k}.rate" not in names]
    selected = [tuple(n.split(".", 1)) for n in names]
    memory = MemoryObserver(selected)
    algorithm = algorithm or FixedStepAlgorithm()
    started = time.perf_counter()
    ex = Execution(s, algorithm, observers=[memory],
                   manipulators=[setpoint_signals(scenario, refresh, hoist, coupling)], observed=selected)
    try:
        sweeps = ex.initialize()
        ex.run(scenario.stop if stop is None else stop, step)
    finally:
        ex.free()
    rows = np.array(memory.rows)
    col = {n: rows[:, j] for j, n in enumerate(names)}
    data = {}
    for key, group in record.items():
        arr = np.column_stack([col[n] for n in group])
        data[key] = arr[:, 0] if arr.shape[1] == 1 else arr
    if hoist == "crane":
        data["tension"] = -data["tension"]
    return CosimResult(np.array(memory.time), data, time.perf_counter() - started, coupling, step, sweeps)


# ---------------------------------------------------------------------- comparison

def rms_error(x: np.ndarray, ref: np.ndarray, norm: str = "range") -> float:
    """The B4 metric: RMS over time of the difference (for a vector signal, of its Euclidean norm), over the
    reference signal's range, max - min (for a vector signal, the largest range of its components).
    norm="std": over the RMS of the reference's variation about its own time mean instead (stricter by
    2.8 for a sine)."""
    x, ref = np.asarray(x, float), np.asarray(ref, float)
    d = x - ref
    if d.ndim == 2:
        d = np.linalg.norm(d, axis=1)
    if norm == "range":
        scale = float(np.max(np.ptp(ref, axis=0)))
    else:
        var = ref - ref.mean(axis=0)
        var = np.linalg.norm(var, axis=1) if var.ndim == 2 else var
        scale = float(np.sqrt(np.mean(var * var)))
    return float(np.sqrt(np.mean(d * d)) / max(scale, 1e-300))


def errors(cosim: CosimResult, mono, signals=SIGNALS, norm: str = "range") -> dict[str, float]:
    """The B4 metric (rms_error) of each signal on the common time points."""
    n = min(len(cosim.time), len(mono.time))
    assert np.allclose(cosim.time[:n], mono.time[:n], atol=1e-9)
    return {k: rms_error(cosim[k][:n], mono[k][:n], norm) for k in signals}
