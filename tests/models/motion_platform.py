"""The motion-compensation platform on a barge (de Zeeuw's thesis §4-6; ship_crane_digest.md §2.4, §3.1-3.2,
§4.2, benchmark B5): the Ship FMU carrying a box barge (components/box_barge.py), the MotionPlatform FMU on its
hardpoint 1 (mass-aware coupling) and the PlatformController FMU (quasi-static PID or NMPC), built for the
tests, benchmarks/bench_nmpc.py and scenarios/motion_platform/ (docs/motion_platform.md says why each
number).

The barge (the thesis' is not given): 100 x 30 m, draught 4 m without the platform (12 300 t), depth 8 m
(the deck 4 m above the waterline: the thesis' start pose has the deck origin at D = -4 m), KG 5.95 m,
chosen so that with the 1000 t tower on the platform the net linear righting moment at 30 deg of heel is
the thesis' 550 MN m (C44 = 1786 MN m/rad for the barge alone, less m g h = 736 MN m/rad of the tower
standing 75 m above the waterline).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from orchestration.system.model import Component, System

ROOT = Path(__file__).resolve().parents[2]
BARGE_FILE = "scenarios/motion_platform/barge.nc"
BARGE = {"length": 100.0, "beam": 30.0, "draught": 4.0, "kg": 5.95}
DECK = (0.0, 0.0, -4.0)                       # the deck origin (platform base) relative to CO
PLATFORM_MASS = 1.0e6                         # the thesis' "about 1000 metric tonnes"
X0 = (-8.0, 0.0, 0.0)                         # thesis X0: the platform 8 m above the deck origin
STEP = 0.02                                   # the NMPC's 50 Hz
# thesis §4-6: PM, H1/3 = 4 m, T1 = 6.5 s, mean direction north (wave.Mu = 0), 40 periods x 8 directions
# (cos^2 spreading), the same seed for both controllers
SEA = {"sea.spectrum": 2, "sea.hs": 4.0, "sea.period": 6.5, "sea.direction": 0.0, "sea.spreading": 1.0,
       "sea.n_frequencies": 40, "sea.n_directions": 9, "sea.seed": 5, "sea.random_frequencies": True}
CALM = {"sea.spectrum": 0}
MOTION = ("position", "velocity", "angular_velocity", "acceleration", "angular_acceleration")
SYM = ("0,0", "1,1", "2,2", "0,1", "0,2", "1,2")
FULL = ("0,0", "0,1", "0,2", "1,0", "1,1", "1,2", "2,0", "2,1", "2,2")


def write_barge(path: Path | None = None) -> Path:
    from components.box_barge import box_barge
    from components.vessel_data import write_netcdf

    path = Path(path) if path else ROOT / BARGE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    write_netcdf(box_barge(**BARGE, name="motion_platform barge (components/box_barge.py)"), path)
    return path


def barge_path() -> Path:
    path = ROOT / BARGE_FILE
    return path if path.is_file() else write_barge(path)


def static_sinkage(platform_mass: float = PLATFORM_MASS, g: float = 9.81) -> float:
    """The barge's heave (NED down of CO) under the platform's weight: m g / C33 (rho = 1025)."""
    return platform_mass * g / (1025.0 * g * BARGE["length"] * BARGE["beam"])


def system(fmu_dir: Path, method: int = 1, sea: dict | None = None, platform_mass: float = PLATFORM_MASS,
           controller: dict | None = None, platform: dict | None = None, barge: Path | str | None = None,
           name: str = "motion_platform") -> System:
    """Ship (barge) + Platform + PlatformController; ``method`` 0 PID, 1 NMPC."""
    fmu_dir = Path(fmu_dir)
    vessel = str(barge or barge_path())
    shared = {"platform.mass": platform_mass, **{f"initial.x[{i}]": X0[i] for i in range(3)}, **(platform or {})}
    s = System(name, start_time=0.0, stop_time=60.0, base_step=STEP, algorithm="fixed",
               algorithm_options={"method": "gauss-seidel"})
    s.add_component(Component("ship", fmu_dir / "Ship.fmu", {
        "vessel_file": vessel, **(SEA if sea is None else sea),
        **{f"hardpoint1.location[{i}]": DECK[i] for i in range(3)},
        "initial.position[2]": static_sinkage(platform_mass), "max_substep": STEP,
        # the platform's load comes through the mass-aware inputs; the force input's start value says that
        # the controller reading the ship's motion (a sensor) is meant to send no load back
        "hardpoint1.force[2]": 0.0}))
    s.add_component(Component("platform", fmu_dir / "MotionPlatform.fmu", {**shared, "max_substep": STEP}))
    s.add_component(Component("controller", fmu_dir / "PlatformController.fmu", {
        **shared, "method": method, "vessel_file": vessel, **{f"deck.location[{i}]": DECK[i] for i in range(3)},
        **(controller or {})}))
    for var in MOTION:
        for i in range(3):
            s.connect(f"ship.hardpoint1.{var}[{i}]", f"platform.base.{var}[{i}]",
                      power_bond="platform_base" if var in ("velocity", "angular_velocity") else None)
    for i in range(4):
        s.connect(f"ship.hardpoint1.quaternion[{i}]", f"platform.base.quaternion[{i}]")
    for block, keys in (("linear", SYM), ("coupling", FULL), ("angular", SYM)):
        for k in keys:
            s.connect(f"platform.base.inertia_{block}[{k}]", f"ship.hardpoint1.inertia_{block}[{k}]")
    for w in ("force", "moment"):
        for i in range(3):
            s.connect(f"platform.base.bias_{w}[{i}]", f"ship.hardpoint1.bias_{w}[{i}]", power_bond="platform_base")
    for src, dst in (("position", "position"), ("euler", "euler"), ("velocity_body", "velocity_body"),
                     ("angular_velocity_body", "angular_velocity_body")):
        for i in range(3):
            s.connect(f"ship.{src}[{i}]", f"controller.ship.{dst}[{i}]")
    for k in (1, 2, 3):
        s.connect(f"platform.leg{k}.length", f"controller.leg{k}.length")
        # the leg forces with the rates they work on (power bonds: ECCO, docs/algorithms.md)
        s.connect(f"platform.leg{k}.rate", f"controller.leg{k}.rate", power_bond="legs")
        s.connect(f"controller.leg{k}.force_command", f"platform.leg{k}.force_command", power_bond="legs")
    return s


RECORD = (["ship.position[2]", "ship.euler[0]", "ship.euler[1]"]
          + [f"platform.platform.euler[{i}]" for i in range(2)] + ["platform.platform.position[2]"]
          + [f"platform.x[{i}]" for i in range(3)] + [f"platform.leg{k}.force" for k in (1, 2, 3)]
          + [f"platform.leg{k}.power" for k in (1, 2, 3)] + ["platform.legs.total_power"]
          + [f"platform.leg{k}.length" for k in (1, 2, 3)]
          + ["controller.nmpc.alpha", "controller.nmpc.iterations", "controller.nmpc.cost"])


def tower_tilt(results) -> np.ndarray:
    """The tower's tilt from the vertical (rad): the angle whose cosine is cos(roll) cos(pitch)."""
    return np.arccos(np.clip(np.cos(results["platform.platform.euler[0]"]) *
                             np.cos(results["platform.platform.euler[1]"]), -1.0, 1.0))


def mean_power(results, window=(0.0, math.inf)) -> float:
    """The thesis' power measure: sum over the legs of |force x extension rate|, averaged over a window."""
    sel = (results.time >= window[0]) & (results.time <= window[1])
    return float(sum(np.abs(results[f"platform.leg{k}.power"][sel]) for k in (1, 2, 3)).mean())


# ---------------------------------------------------------------------- the scenario files

SCENARIO_DIR = ROOT / "scenarios" / "motion_platform"


def scenario_events(method: int) -> dict:
    name = ("quasi-static PID", "NMPC")[method]
    return {"description": f"Motion-compensation platform (issue 24, de Zeeuw's thesis 4-6) with its {name}: the 1000 "
                           f"t "
                           "tower on the heave-roll-pitch platform on a 100 x 30 m box barge in a Pierson-Moskowitz "
                           "sea, H1/3 4 m, T1 6.5 s, short-crested (cos^2), towards north. Run from the repository "
                           f"root: marine-cosim run scenarios/motion_platform/{SYSTEM_FILES[method]} --scenario "
                           f"scenarios/motion_platform/{EVENT_FILES[method]}",
            "end": 60.0, "events": []}


SYSTEM_FILES = ("motion_platform_pid.ssd", "motion_platform_nmpc.ssd")
EVENT_FILES = ("events_pid.yaml", "events_nmpc.yaml")


def write_scenario(fmu_dir: Path = ROOT / "build" / "fmus") -> list[Path]:
    """scenarios/motion_platform/: the barge's vessel file, a system file per controller (FMU sources
    relative to it, in build/fmus; the vessel file relative to the repository root, where the CLI runs)
    and their events."""
    import yaml

    from orchestration.runs.reference.lift import declare_unconnected_inputs
    from orchestration.system.ssp import write_ssp

    written = [write_barge()]
    for method in (0, 1):
        # absolute here: the writer names the file relative to the .ssd (marked <mc:File/>)
        s = system(fmu_dir, method=method, barge=str(ROOT / BARGE_FILE), name=SYSTEM_FILES[method][:-4])
        declare_unconnected_inputs(s)      # unused on purpose: their start values, no validation warning
        written.append(write_ssp(s, SCENARIO_DIR / SYSTEM_FILES[method]))
        events = SCENARIO_DIR / EVENT_FILES[method]
        events.write_text(yaml.safe_dump(scenario_events(method), sort_keys=False, width=100))
        written.append(events)
    return written


if __name__ == "__main__":
    for p in write_scenario():
        print(p)
