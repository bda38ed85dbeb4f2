"""Crane-tip motion compensation (components/tip_compensation.py, fmus/tip_compensator.py) on the two
systems the brief names, built for the tests, benchmarks/bench_tip_compensation.py and the scenario
files of scenarios/crane_tip_compensation/ (docs/tip_compensation.md):

* ``heavy``: the B4 ship + heavy crane (tests/models/b4: the Tysse-Egeland crane, 250 t on a 3 m hoist,
  the MSS supply vessel), in the paper's sea (JONSWAP Hs 4 m, wp 1.3 rad/s, beam) or the milder one;
* ``lift``: the offshore lift's vessel, crane, wire and 10 t payload (orchestration/reference_scenarios.py,
  JONSWAP Hs 2.5 m, Tp 8 s), the payload hanging in air 5 m above the water, the winch holding.

In both the slew, boom and jib are switched to torque control and driven by the TipCompensator FMU,
which reads the ship's hardpoint-1 motion (the crane base), the joint encoders and the hoist's or the
wire's force. ``mode`` 0 holds the joints (the crane rigid on the ship: the uncompensated tip), 1 holds
the tip still in the earth frame.
"""
from __future__ import annotations

import copy
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from orchestration.system.model import Component, System

ROOT = Path(__file__).resolve().parents[2]
ACTUATED = (1, 2, 3)
MOTION = ("position", "velocity", "angular_velocity", "acceleration", "angular_acceleration")
LIFT_CRANE_FILE = "scenarios/crane_tip_compensation/knuckle_boom_torque.json"


def torque_controlled(mechanism: dict, joints=ACTUATED) -> dict:
    """The mechanism with ``joints`` (numbers from 1) in torque control, limits kept."""
    d = copy.deepcopy(mechanism)
    for k in joints:
        c = d["links"][k - 1].get("control") or {}
        d["links"][k - 1]["control"] = {**c, "mode": "torque", "kp": 0.0, "ki": 0.0, "kd": 0.0}
    return d


def _connect_vec(s: System, src: str, dst: str, n: int = 3) -> None:
    for i in range(n):
        s.connect(f"{src}[{i}]", f"{dst}[{i}]")


def add_controller(s: System, fmu_dir: Path, mechanism: str, n_joints: int, values: dict,
                   free: tuple[int, ...] = (), load: tuple[str, int] | None = None) -> None:
    """The TipCompensator component and its connections: the ship's hardpoint 1 to its base inputs,
    the crane's joint encoders (and free joints' forces) to it, its commands to the crane's setpoints."""
    s.add_component(Component("compensator", Path(fmu_dir) / "TipCompensator.fmu",
                              {"mechanism": mechanism, "actuated_joints": ",".join(map(str, ACTUATED)),
                               "free_joints": ",".join(map(str, free)), "mode": 1, **values}))
    for var in MOTION:
        _connect_vec(s, f"ship.hardpoint1.{var}", f"compensator.base.{var}")
    _connect_vec(s, "ship.hardpoint1.quaternion", "compensator.base.quaternion", 4)
    for k in range(1, n_joints + 1):
        s.connect(f"crane.joint{k}.position", f"compensator.joint{k}.position")
        s.connect(f"crane.joint{k}.rate", f"compensator.joint{k}.rate")
    for k in free:
        s.connect(f"crane.joint{k}.torque", f"compensator.joint{k}.force")
    for k in ACTUATED:
        s.connect(f"compensator.joint{k}.command", f"crane.joint{k}.setpoint")
    if load is not None:
        _connect_vec(s, load[0], "compensator.load.force")


# ---------------------------------------------------------------------- B4: ship + heavy crane

def heavy_system(fmu_dir: Path, sea: str = "paper", controller: dict | None = None,
                 workdir: Path | None = None) -> System:
    """The B4 co-simulation (tests/models/b4/cosim.py, mass-aware) with the compensator: the 250 t
    crane from its static equilibrium in ``sea`` ('paper': Hs 4 m, wp 1.3 rad/s; 'mild': Hs 2.5 m,
    wp 0.7 rad/s; beam seas)."""
    from tests.models.b4 import cosim, model as b4

    scenario = b4.SCENARIOS["e" if sea == "paper" else "e_mild"]
    s = cosim.system(fmu_dir, scenario, workdir=workdir)
    folder = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="tipcomp_"))
    path = folder / "b4_crane_250t_torque.json"
    path.write_text(json.dumps(torque_controlled(b4.mechanism(scenario.payload, servo="position")), indent=1))
    crane = s.components["crane"]
    crane.parameters["mechanism"] = str(path)
    for k in ACTUATED:
        crane.parameters.pop(f"joint{k}.setpoint", None)
    add_controller(s, fmu_dir, str(path), 6, {"tip_attachment": 1, "omega": 3.0, **(controller or {})},
                   free=(4, 5, 6))
    return s


# ---------------------------------------------------------------------- the offshore lift's vessel

def lift_mechanism() -> dict:
    """The offshore lift's knuckle boom (scenarios/offshore_lift/knuckle_boom_lift.json) with the slew,
    main boom and knuckle jib in torque control; its torque and power limits stay."""
    return torque_controlled(json.loads((ROOT / "scenarios/offshore_lift/knuckle_boom_lift.json").read_text()))


def write_lift_mechanism(path: Path | None = None) -> Path:
    path = Path(path) if path else ROOT / LIFT_CRANE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(lift_mechanism(), indent=2) + "\n")
    return path


def lift_system(fmu_dir: Path, controller: dict | None = None, mechanism: Path | str | None = None,
                stop: float = 120.0) -> System:
    """The offshore lift (orchestration.runs.reference.offshore_lift_system: vessel in JONSWAP
    Hs 2.5 m, knuckle boom, winch, wire, 10 t payload 5 m above the water) with the slew, main boom and
    jib driven by the compensator; the wire force on the jib tip is its load-cell input."""
    from orchestration.runs.reference import offshore_lift_system

    s = offshore_lift_system(fmu_dir, stop=stop)
    s.name = "crane_tip_compensation"
    path = str(mechanism) if mechanism is not None else str(ROOT / LIFT_CRANE_FILE)
    if mechanism is None and not (ROOT / LIFT_CRANE_FILE).is_file():
        write_lift_mechanism()
    crane = s.components["crane"]
    crane.parameters["mechanism"] = path
    for k in ACTUATED:
        crane.parameters.pop(f"joint{k}.setpoint", None)
    # the winch holds the wire (no heave compensation: the crane tip does it)
    s.components["winch"].parameters["mode"] = 0
    s.connections = [c for c in s.connections if c.target != ("winch", "hardpoint.velocity_down")]
    add_controller(s, fmu_dir, path, 7, {"tip_attachment": 2, "load_attachment": 2, "omega": 3.0,
                                         **(controller or {})},
                   load=("cable.end_b.force", 2))
    return s


# ---------------------------------------------------------------------- metrics

@dataclass
class TipMotion:
    """How much the tip moves in the earth frame over a window: the RMS of its 3-D distance from its
    mean position (sqrt of the summed variances), per-axis standard deviations, the largest distance
    from the mean, and the RMS of its wave-frequency part (high-passed at ``cutoff`` rad/s, zero-phase
    2nd-order Butterworth: what a target that follows the vessel's slow motion still lets through)."""

    rms: float
    std: np.ndarray
    peak: float
    wave_rms: float = float("nan")

    @classmethod
    def of(cls, positions: np.ndarray, dt: float | None = None, cutoff: float = 0.2) -> "TipMotion":
        d = positions - positions.mean(axis=0)
        wave = float("nan")
        if dt is not None and len(d) > 30:
            from scipy.signal import butter, filtfilt

            b, a = butter(2, cutoff / (np.pi / dt), btype="high")
            hp = filtfilt(b, a, d, axis=0)
            wave = float(np.sqrt((hp ** 2).sum(axis=1).mean()))
        return cls(float(np.sqrt((d ** 2).sum(axis=1).mean())), d.std(axis=0),
                   float(np.linalg.norm(d, axis=1).max()), wave)


# ---------------------------------------------------------------------- the scenario files

SCENARIO_DIR = ROOT / "scenarios" / "crane_tip_compensation"
EVENTS = {"end": 120.0, "on": 40.0}


def scenario_events() -> dict:
    return {"description": "Crane-tip compensation (issue 24) on the offshore lift's vessel in JONSWAP Hs 2.5 m, Tp 8 "
                           "s: "
                           "the 10 t payload hangs 5 m above the water from the knuckle boom, whose slew, main boom "
                           "and jib are driven in torque by the TipCompensator FMU. 0-40 s: the joints held (the "
                           "crane rigid on the ship, the tip moving with it); from 40 s: the tip held still in the "
                           "earth frame. Run from the repository root: marine-cosim run "
                           "scenarios/crane_tip_compensation/crane_tip_compensation.ssd --scenario "
                           "scenarios/crane_tip_compensation/events.yaml",
            "end": EVENTS["end"],
            "events": [{"time": 0.0, "model": "compensator", "variable": "mode", "action": "override", "value": 0},
                       {"time": EVENTS["on"], "model": "compensator", "variable": "mode", "action": "override",
                        "value": 1}]}


HEAVY_CRANE_FILE = "scenarios/crane_tip_compensation/crane_250t_torque.json"
HEAVY_EVENTS = {"end": 40.0, "on": 10.0}


def heavy_scenario_events() -> dict:
    return {"description": "Crane-tip compensation (issue 24) on the B4 ship + heavy crane "
                           "(docs/b4_ship_heavy_crane.md): "
                           "250 t on the Tysse-Egeland crane, the paper's JONSWAP Hs 4 m, wp 1.3 rad/s, beam sea; "
                           "joints held 0-10 s, tip held still in the earth frame from 10 s. Run from the repository "
                           "root: marine-cosim run scenarios/crane_tip_compensation/ship_heavy_crane_compensated.ssd "
                           "--scenario scenarios/crane_tip_compensation/events_heavy.yaml",
            "end": HEAVY_EVENTS["end"],
            "events": [{"time": 0.0, "model": "compensator", "variable": "mode", "action": "override", "value": 0},
                       {"time": HEAVY_EVENTS["on"], "model": "compensator", "variable": "mode", "action": "override",
                        "value": 1}]}


def write_scenario(fmu_dir: Path = ROOT / "build" / "fmus") -> list[Path]:
    """scenarios/crane_tip_compensation/: the system files (FMU sources relative to them, in build/fmus),
    the torque-controlled cranes (mechanism paths relative to the repository root, where the CLI runs)
    and the events: the offshore lift and the B4 ship + heavy crane."""
    import yaml

    from orchestration.runs.reference.lift import declare_unconnected_inputs
    from orchestration.system.ssp import write_ssp

    mech = write_lift_mechanism()
    # absolute here: the writer names the file relative to the .ssd (marked <mc:File/>)
    s = lift_system(fmu_dir, mechanism=str(ROOT / LIFT_CRANE_FILE), stop=EVENTS["end"])
    s.components["compensator"].parameters["mechanism"] = str(ROOT / LIFT_CRANE_FILE)
    declare_unconnected_inputs(s)          # unused on purpose: their start values, no validation warning
    path = write_ssp(s, SCENARIO_DIR / "crane_tip_compensation.ssd")
    events = SCENARIO_DIR / "events.yaml"
    events.write_text(yaml.safe_dump(scenario_events(), sort_keys=False, width=100))
    with tempfile.TemporaryDirectory() as tmp:
        h = heavy_system(fmu_dir, workdir=Path(tmp))
        heavy_mech = ROOT / HEAVY_CRANE_FILE
        heavy_mech.write_text(Path(h.components["crane"].parameters["mechanism"]).read_text())
        for name in ("crane", "compensator"):
            h.components[name].parameters["mechanism"] = str(heavy_mech)
        h.name, h.stop_time, h.base_step = "ship_heavy_crane_compensated", HEAVY_EVENTS["end"], 0.01
        declare_unconnected_inputs(h)
        heavy = write_ssp(h, SCENARIO_DIR / "ship_heavy_crane_compensated.ssd")
    heavy_events = SCENARIO_DIR / "events_heavy.yaml"
    heavy_events.write_text(yaml.safe_dump(heavy_scenario_events(), sort_keys=False, width=100))
    return [mech, path, events, heavy_mech, heavy, heavy_events]


if __name__ == "__main__":
    for p in write_scenario():
        print(p)
