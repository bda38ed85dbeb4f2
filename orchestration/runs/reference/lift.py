"""The offshore lift: a knuckle-boom crane on the MSS supply vessel lowers a 10 t structure through the
splash zone to 50 m on a heave-compensated winch (docs/scenarios.md). The sea, the payload, the wire
and the crane shared with the deck landing, the statics that start the lift in equilibrium, the
system builder and its events. ``scenarios/offshore_lift/*.ssd`` is generated from here
(``python scenarios/write_systems.py``); the numbers' reasons are in the comments.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from orchestration.runs.reference.paths import DEFAULT_FMU_DIR, ROOT

G = 9.81
RHO = 1025.0


#: JONSWAP Hs 2.5 m, Tp 8 s (issue 11), long-crested, travelling towards 165 deg: the ship heads
#: north, so the waves come from 15 deg off the port bow and the crane works over the starboard
#: (lee) side, as a lift would be planned.  60 components (the Ship FMU's default), seed 11.
SEA = {"sea.spectrum": 1, "sea.hs": 2.5, "sea.period": 8.0, "sea.gamma": 3.3,
       "sea.direction": round(math.radians(165.0), 6), "sea.seed": 11, "sea.n_frequencies": 60}
CALM = {"sea.spectrum": 0}

#: A 10 t subsea structure (4 x 3 x 2 m frame, 4 m3 displaced; the hook_release payload), lifted by
#: a single point 1 m above its reference origin (the box centre; 1.2 m above its CG):
#: 98.1 kN in air, 57.9 kN in water.
PAYLOAD_MASS = 10000.0
PAYLOAD_VOLUME = 4.0
PAYLOAD_SIZE = (4.0, 3.0, 2.0)
PAYLOAD = {"mass": PAYLOAD_MASS, "inertia[0,0]": 10833.0, "inertia[1,1]": 16667.0, "inertia[2,2]": 20833.0,
           "cg.location[2]": 0.2, "gravity": G, "hydro.volume": PAYLOAD_VOLUME, "hydro.water_density": RHO,
           "hydro.added_mass[0]": 6000.0, "hydro.added_mass[1]": 6500.0, "hydro.added_mass[2]": 8000.0,
           "hydro.added_inertia[0]": 3000.0, "hydro.added_inertia[1]": 5000.0, "hydro.added_inertia[2]": 6000.0,
           "hydro.drag_quadratic[0]": 1500.0, "hydro.drag_quadratic[1]": 2000.0, "hydro.drag_quadratic[2]": 6000.0,
           "hydro.drag_quadratic_rotation[0]": 5000.0, "hydro.drag_quadratic_rotation[1]": 8000.0,
           "hydro.drag_quadratic_rotation[2]": 8000.0, "hydro.drag_linear_rotation[0]": 20000.0,
           "hydro.drag_linear_rotation[1]": 20000.0, "hydro.drag_linear_rotation[2]": 20000.0,
           "hydro.splash_height": 2.0, "attachment1.location[2]": -1.0}
LIFT_POINT = 1.0          # m, the lifting point above the payload's reference origin
WEIGHT_AIR = PAYLOAD_MASS * G
WEIGHT_WATER = (PAYLOAD_MASS - RHO * PAYLOAD_VOLUME) * G

#: Steel wire rope, 40 mm 6x36 IWRC: 6.7 kg/m, metallic area 0.58 pi d^2/4 = 7.3e-4 m2 at an
#: effective rope modulus of 1.0e11 Pa -> EA 7.5e7 N (MBL about 1 MN: a safety factor of 10 on the
#: 10 t lift).  Elements of 3 m (the winch element splits above 4.8 m, merges below 1.2 m).  Axial
#: damping 10 % of critical per element (-0.1): the Cable FMU gives a node created by a winch split
#: the chord's interpolated velocity, which its element's damper reads as a stretch rate (a tension
#: spike of c_e frac u / l0 at every split: 16 kN at 1 m/s with the default -1, measured).  The
#: wire sees calm water (its own wave loads on a 40 mm wire are negligible beside the payload's;
#: docs/scenarios.md measures it) and no seabed (500 m).
WIRE = {"diameter": 0.040, "mass_per_length": 6.7, "EA": 7.5e7, "damping": -0.1, "EI": 0.0,
        "drag_normal": 1.2, "drag_tangential": 0.05, "added_mass_normal": 1.0, "water_density": RHO,
        "gravity": G, "seabed.depth": 500.0, "winch.end": 2, "winch.mode": 1}
WIRE_ELEMENT = 3.0
WIRE_WEIGHT_WATER = (WIRE["mass_per_length"] - RHO * math.pi * WIRE["diameter"] ** 2 / 4) * G   # N/m


CRANE_HARDPOINT = (-30.0, 0.0, -8.0)      # Ship FMU hardpoint 1 (the mass-aware one), body frame
BALLAST_HARDPOINT = (-30.0, -8.0, 0.0)    # hardpoint 4: the anti-heeling tanks on the port side
HOIST = "attachment2"                      # knuckle_boom's jib_tip: the main hoist sheave
#: The lift crane: the bundled knuckle_boom (scenarios/offshore_lift/knuckle_boom_lift.json, written
#: by write_systems) with three controller changes.  The slew joint holds its position (PID; the
#: preset's slew is rate-controlled without an integral, and the ship's motions and the slung load
#: slewed it by 74 deg in 160 s, measured); the tool's rotator rate loop and the gripper are softened
#: (they carry nothing in a hook lift; their closed-loop poles at -130 and -94 1/s forced RK4 sub-steps
#: below 0.021 s, now the fastest is -66 1/s and 0.025 s is stable).
CRANE_FILE = "scenarios/offshore_lift/knuckle_boom_lift.json"      # relative to the repository root
CRANE_CHANGES = {0: {"mode": "position", "kp": 6.0e7, "ki": 1.2e7, "kd": 6.0e7},
                 5: {"kp": 1.0e4},
                 6: {"kp": 2.0e5, "kd": 1.0e4}}
#: knuckle_boom joint positions (deg, m): slewed to starboard, main boom 65 deg, jib 55 deg below
#: the horizontal, telescope 2 m out, tool vertical.  Jib tip 20.8 m to starboard of the ship's
#: centreline (11 m outboard of the side), 21.5 m above the waterline.
LIFT_POSE = (-90.0, 65.0, -120.0, 2.0, 55.0, 0.0, 0.0)
#: For the landing the boom reaches further (jib tip 24.3 m to starboard, over the barge deck).
LANDING_POSE = (-90.0, 60.0, -110.0, 3.0, 50.0, 0.0, 0.0)

#: Numerical settings of the lift and the landing (the benchmark's levers; docs/scenarios.md has
#: the accuracy study).  Macro step 0.025 s: the bounce of the payload on a short wire in air
#: (EA/L = 5.8e6 N/m on 10 t, 24 rad/s) needs omega h < ~1 with the explicit coupling; 0.05 s
#: diverges.  Crane, payload and cable one sub-step per macro step (the lift crane's fastest
#: closed-loop pole is -66 1/s: RK4 is stable to 0.042 s); winch 5 ms.
NUMERICS = {"step": 0.025, "crane_substep": 0.025, "payload_substep": 0.025, "cable_substep": 0.025,
            "winch_substep": 0.005, "ship_substep": 0.05, "wire_waves": False, "element": WIRE_ELEMENT}


def _vec(name: str, values: Sequence[float]) -> dict[str, float]:
    return {f"{name}[{i}]": float(v) for i, v in enumerate(values)}


def _connect_vec(s, source: str, target: str, n: int = 3, bond: str | None = None) -> None:
    for i in range(n):
        s.connect(f"{source}[{i}]", f"{target}[{i}]", power_bond=bond)


def declare_unconnected_inputs(s) -> None:
    """Give every input of the system that no connection drives, and that has no start value yet,
    its FMU's own start value explicitly: in these scenarios such inputs are unused on purpose (the
    ship's spare hardpoints and current, the crane's unused attachments and joints, the wire's
    tangents and twist, the winch's other set-points, which the events file may override), and the
    system file then says so, so that validation has nothing to warn about (docs/scenarios.md)."""
    from fmpy import read_model_description

    connected = {c.target for c in s.connections}
    for component in s.components.values():
        md = read_model_description(str(component.source))
        for v in md.modelVariables:
            if v.causality != "input" or (component.name, v.name) in connected or v.name in component.parameters:
                continue
            start = v.start if v.start is not None else "0"
            if v.type == "Real":
                component.parameters[v.name] = float(start)
            elif v.type in ("Integer", "Enumeration"):
                component.parameters[v.name] = int(start)
            elif v.type == "Boolean":
                component.parameters[v.name] = str(start).lower() in ("true", "1")
            else:
                component.parameters[v.name] = str(start)


def lift_crane_data() -> dict:
    """The lift crane's mechanism file contents (docs/crane_format.md): the preset + CRANE_CHANGES."""
    from components.mechanism import PRESET_DIR

    data = json.loads((PRESET_DIR / "knuckle_boom.json").read_text())
    data["name"] = "knuckle_boom_lift"
    data["description"] = ("The knuckle_boom preset set up for hook lifts (marine-cosim reference scenarios, "
                           "orchestration/runs/reference/lift.py): slew joint position-controlled (PID), the "
                           "tool's rotator and gripper loops softened. " + data["description"])
    for k, change in CRANE_CHANGES.items():
        data["links"][k]["control"].update(change)
    return data


def _knuckle_boom():
    from components.mechanism import load_mechanism

    path = ROOT / CRANE_FILE
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(lift_crane_data(), indent=2) + "\n")
    return load_mechanism(path)


def _pose_radians(pose: Sequence[float]) -> list[float]:
    return [math.radians(q) if link.joint == "revolute" else float(q) for q, link in zip(pose, _knuckle_boom().links)]


def crane_static(pose: Sequence[float], base_position, base_quaternion, hook_load: float):
    """Knuckle-boom statics at ``pose`` (joint positions, rad/m) on a base at rest: (jib-tip position
    NED, the crane's wrench on the ship [F; M] NED about the base, joint torques), ``hook_load`` N
    hanging from the jib tip."""
    from components.articulated_body import ArticulatedBody
    from components.rotations import quat_to_matrix

    mech = _knuckle_boom()
    q = np.asarray(pose, float)
    body = ArticulatedBody(mech)
    R = quat_to_matrix(np.asarray(base_quaternion, float))
    p = np.asarray(base_position, float)
    att = mech.attachments[int(HOIST[-1]) - 1]
    zero = np.zeros(len(q))
    loads = [(att.link, np.asarray(att.point, float), np.array([0.0, 0.0, hook_load]), np.zeros(3))]
    rnea = body.inverse_dynamics(q, zero, zero, base_R=R, base_p=p, gravity=(0.0, 0.0, G), link_wrenches=loads)
    tip = body.forward_dynamics(q, zero, rnea.tau, R, p, np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3),
                                gravity=np.array([0.0, 0.0, G]), link_wrenches=loads).point_kinematics(
        att.link, np.asarray(att.point, float))[0]
    return np.asarray(tip, float), np.asarray(rnea.base_wrench, float), np.asarray(rnea.tau, float)


def sagged_pose(pose: Sequence[float], tau: np.ndarray) -> np.ndarray:
    """Joint positions where the proportional term alone holds the static torques ``tau``: the crane
    starts there, its setpoints at ``pose``, so it starts in equilibrium (its PID integrators start
    at zero: started at ``pose`` it would first sag by tau / kp, 10 cm at the jib tip, and jerk the
    wire) and the integrators then take it to ``pose`` (time constant kp / ki, 40 s on the main boom).
    Joints at 0 are left alone: the Crane FMU reads a setpoint of 0 as "hold where you start"."""
    q = np.array(pose, float)
    for i, link in enumerate(_knuckle_boom().links):
        c = link.control
        if c is not None and c.mode == "position" and c.kp > 0 and pose[i] != 0.0:
            q[i] -= tau[i] / c.kp
    return q


def ship_equilibrium(loads: Sequence[tuple[Sequence[float], Sequence[float]]]) -> tuple[float, float, float]:
    """Heave, roll and pitch of the Ship FMU's static equilibrium (bundled supply vessel) under
    hardpoint wrenches ``loads`` = [(location body, [F; M] NED about it)], small angles: G xi = sum
    X^T W with the Ship's linear hydrostatics about the ship-alone equilibrium (docs/ship.md)."""
    from components.ship import transfer_matrix
    from components.vessel_data import default_vessel_path, load_vessel

    vessel = load_vessel(default_vessel_path())
    W = np.zeros(6)
    for r, wrench in loads:
        W += transfer_matrix(np.asarray(r, float)).T @ np.asarray(wrench, float)
    idx = [2, 3, 4]
    return tuple(float(x) for x in np.linalg.solve(vessel.restoring[np.ix_(idx, idx)], W[idx]))


def _hardpoint_pose(ship_z: float, roll: float, pitch: float, location: Sequence[float], north=0.0, east=0.0):
    from components.rotations import quat_from_euler_zyx, quat_to_matrix

    q = quat_from_euler_zyx(roll, pitch, 0.0)
    return np.array([north, east, ship_z]) + quat_to_matrix(q) @ np.asarray(location, float), q


def _down(force: float) -> np.ndarray:
    return np.array([0.0, 0.0, force, 0.0, 0.0, 0.0])


@dataclass
class LiftGeometry:
    """Where a lift starts: the crane vessel at its static equilibrium under the crane, the hanging
    payload and the anti-heeling ballast; the crane sagged to its proportional equilibrium; the
    payload hanging still below the jib tip."""

    ship_z: float
    ship_roll: float
    ship_pitch: float
    ballast: float              # N, down, at BALLAST_HARDPOINT: cancels the heel at the start
    setpoints: np.ndarray       # joint setpoints (the design pose, rad/m)
    joints: np.ndarray          # initial joint positions (sagged_pose)
    tip: np.ndarray
    wire_length: float          # unstretched
    payload_position: np.ndarray
    hook_load: float            # N at the jib tip (payload + wire)


def lift_geometry(attach_z: float, pose: Sequence[float] = LIFT_POSE) -> LiftGeometry:
    """Static start of a lift with the payload's lifting point at NED z ``attach_z`` below the jib
    tip: wire length from its stretch under the payload and its own weight (in water below the
    mean surface when the payload is submerged, attach_z > 0), the crane sagged under its load,
    the ship's heave and trim under crane + load, the heel trimmed to zero by ballast on the port
    side.  ``pose`` in deg (revolute) and m (prismatic)."""
    submerged = attach_z > 0.0                         # the lifting point is the top of the box
    weight = WEIGHT_WATER if submerged else WEIGHT_AIR
    w_air, w_water = WIRE["mass_per_length"] * G, WIRE_WEIGHT_WATER
    setpoints = np.array(_pose_radians(pose))
    q = setpoints.copy()
    z = roll = pitch = ballast = 0.0
    L = 0.0
    for _ in range(100):
        base_p, base_q = _hardpoint_pose(z, roll, pitch, CRANE_HARDPOINT)
        tip, _, _ = crane_static(q, base_p, base_q, weight + w_air * L)
        span = attach_z - tip[2]
        wet = max(attach_z, 0.0)                       # wire below the mean surface (vertical)
        w_mean = (w_water * wet + w_air * (span - wet)) / span
        L = span
        for _ in range(30):    # span = L + (weight L + w L^2 / 2) / EA
            L = span - (weight * L + w_mean * L * L / 2) / WIRE["EA"]
        load = weight + w_mean * L
        _, wrench, tau = crane_static(q, base_p, base_q, load)
        q = sagged_pose(setpoints, tau)
        crane = (CRANE_HARDPOINT, wrench)
        roll0 = ship_equilibrium([crane])[1]
        roll1 = ship_equilibrium([crane, (BALLAST_HARDPOINT, _down(1e6))])[1]
        ballast = -roll0 / (roll1 - roll0) * 1e6
        new = ship_equilibrium([crane, (BALLAST_HARDPOINT, _down(ballast))])
        done = max(abs(a - b) for a, b in zip(new, (z, roll, pitch))) < 1e-12
        z, roll, pitch = new
        if done:
            break
    base_p, base_q = _hardpoint_pose(z, roll, pitch, CRANE_HARDPOINT)
    tip, _, _ = crane_static(q, base_p, base_q, load)
    payload = np.array([tip[0], tip[1], attach_z + LIFT_POINT])
    return LiftGeometry(z, roll, pitch, ballast, setpoints, q, tip, float(L), payload, float(load))


def _lift_components(s, fmu_dir: Path, geo: LiftGeometry, sea: dict, pose: Sequence[float],
                     numerics: dict | None = None, barge: dict | None = None) -> None:
    """Winch, cable, ship, [barge,] crane, payload -- this declaration order is the Gauss-Seidel
    order (the connection graph is one feedback group) -- and their connections.

    The cable steps right after the winch and before the crane and the payload.  FMI inputs are the
    values at the start of a step (FMI 2.0 section 4.2.4, fmi2DoStep), and the Cable FMU carries its
    end positions forward over the step with the end velocities.  Stepped after the crane, it was
    handed the jib tip's end-of-step position and ran v h ahead of the tip: through the stiff end
    element (EA / l = 2.6e7 N/m) a force error EA / l v h, first order in the step, which step doubling
    measures correctly and no step can remove (error control crawled at its minimum step).  After
    the winch, it gets the winch's end-of-step line length, which its pay-out in length mode turns
    into the pay-out over this very step."""
    from orchestration.system.model import Component

    num = {**NUMERICS, **(numerics or {})}
    n_seg = max(2, round(geo.wire_length / num["element"]))
    s.add_component(Component("winch", fmu_dir / "Winch.fmu", {
        "initial_line_length": geo.wire_length, "mode": 2, "max_substep": num["winch_substep"]}))
    s.add_component(Component("cable", fmu_dir / "Cable.fmu", {
        **WIRE, **(sea if num["wire_waves"] else CALM), "length": geo.wire_length, "n_segments": n_seg,
        "max_substep": num["cable_substep"]}))
    s.add_component(Component("ship", fmu_dir / "Ship.fmu", {
        **sea, **_vec("hardpoint1.location", CRANE_HARDPOINT), **_vec("hardpoint4.location", BALLAST_HARDPOINT),
        "hardpoint4.force[2]": geo.ballast, "initial.position[2]": geo.ship_z, "initial.euler[0]": geo.ship_roll,
        "initial.euler[1]": geo.ship_pitch, "max_substep": num["ship_substep"]}))
    if barge is not None:
        s.add_component(Component("barge", fmu_dir / "Ship.fmu", barge))
    crane = {"mechanism": str(ROOT / CRANE_FILE), "gravity": G, "max_substep": num["crane_substep"],
             "use_initial": True}
    for k, (q0, qs, link) in enumerate(zip(geo.joints, geo.setpoints, _knuckle_boom().links), start=1):
        crane[f"joint{k}.initial_position"] = float(q0)
        if link.control is not None and link.control.mode == "position" and qs != 0.0:
            crane[f"joint{k}.setpoint"] = float(qs)
    s.add_component(Component("crane", fmu_dir / "Crane.fmu", crane))
    s.add_component(Component("payload", fmu_dir / "Payload.fmu", {
        **PAYLOAD, **_vec("initial.position", geo.payload_position), "max_substep": num["payload_substep"]}))
    # ship hardpoint 1 carries the crane (mass-aware): motion to the crane base, its articulated
    # inertia and bias wrench back (docs/mass_aware.md); no force/moment connection.  Power bonds
    # (ECCO, docs/algorithms.md) pair each force/moment with the velocity it works on: here the bias
    # wrench with the base's velocities (the inertia part of the base wrench acts inside the ship)
    for var in ("position", "velocity", "angular_velocity", "acceleration", "angular_acceleration"):
        bond = "crane_base" if var in ("velocity", "angular_velocity") else None
        _connect_vec(s, f"ship.hardpoint1.{var}", f"crane.base.{var}", bond=bond)
    _connect_vec(s, "ship.hardpoint1.quaternion", "crane.base.quaternion", 4)
    for block, keys in (("linear", ("0,0", "1,1", "2,2", "0,1", "0,2", "1,2")),
                        ("coupling", ("0,0", "0,1", "0,2", "1,0", "1,1", "1,2", "2,0", "2,1", "2,2")),
                        ("angular", ("0,0", "1,1", "2,2", "0,1", "0,2", "1,2"))):
        for k in keys:
            s.connect(f"crane.base.inertia_{block}[{k}]", f"ship.hardpoint1.inertia_{block}[{k}]")
    _connect_vec(s, "crane.base.bias_force", "ship.hardpoint1.bias_force", bond="crane_base")
    _connect_vec(s, "crane.base.bias_moment", "ship.hardpoint1.bias_moment", bond="crane_base")
    # the wire: end B on the jib-tip sheave (the winch end), end A on the payload's lifting point
    _connect_vec(s, f"crane.{HOIST}.position", "cable.end_b.position")
    _connect_vec(s, f"crane.{HOIST}.velocity", "cable.end_b.velocity", bond="crane_tip")
    _connect_vec(s, "cable.end_b.force", f"crane.{HOIST}.force", bond="crane_tip")
    _connect_vec(s, "payload.attachment1.position", "cable.end_a.position")
    _connect_vec(s, "payload.attachment1.velocity", "cable.end_a.velocity", bond="hook")
    _connect_vec(s, "cable.end_a.force", "payload.attachment1.force", bond="hook")
    # the winch pays the wire out by length (winch.mode 1), reads the load cell and compensates the
    # jib tip's heave; its pay-out speed goes to the wire too, unused in length mode, so that the
    # tension and the speed it works on form the winch's power bond
    s.connect("winch.payout.line_length", "cable.winch.length")
    s.connect("winch.payout.speed", "cable.winch.speed", power_bond="winch")
    s.connect("cable.winch.tension", "winch.line.tension", power_bond="winch")
    s.connect(f"crane.{HOIST}.velocity[2]", "winch.hardpoint.velocity_down")
    # the free surface at the payload (splash zone) from the ship's wave probe
    _connect_vec(s, "payload.position", "ship.wave_probe.position", 2)
    s.connect("ship.wave_probe.elevation", "payload.water.elevation")


# ---------------------------------------------------------------------------------- offshore lift
#: The lift: hold 5 s (payload bottom 5 m above the mean water), pay out at 0.5 m/s through the
#: splash zone, switch heave compensation on at 37.8 s (payload top 8.6 m deep) and go on at 1 m/s
#: from 40 s, stop at 50 m (reference origin, the box centre) at 86 s, hold with heave compensation
#: to 131 s, then without it to 175 s (the comparison).  The winch's acceleration limit (0.1 m/s2)
#: shapes the ramps: 1.25 + 0.5 x 30 + 3.75 (40-45 s) + 31 (45-76 s) + 5 (76-86 s) = 56 m of pay-out.
#: Heave compensation goes on and off when the jib tip's heave velocity passes through zero (the
#: compensation's pay-out then starts from zero: switched on at 40 s, with the tip rising at
#: 0.58 m/s, the winch jumped to that pay-out speed, the wire went slack and snatched to 120 kN).
#: The seeded sea makes these times the same in every run.
LIFT_START_BOTTOM = -5.0
LIFT_EVENTS = {"speed_slow": (5.0, 0.5), "ahc_on": 37.825, "speed_fast": (40.0, 1.0), "stop": 76.0,
               "ahc_off": 131.05, "end": 175.0}


def offshore_lift_system(fmu_dir: Path = DEFAULT_FMU_DIR, sea: dict | None = None, numerics: dict | None = None,
                         stop: float = LIFT_EVENTS["end"], payload_bottom: float = LIFT_START_BOTTOM):
    """The lift system; ``payload_bottom`` (NED z of the payload's underside at the start, default
    5 m above the mean surface) > 2 starts it submerged (tests)."""
    from orchestration.system.model import System

    num = {**NUMERICS, **(numerics or {})}
    attach_z = payload_bottom - PAYLOAD_SIZE[2] / 2 - LIFT_POINT
    geo = lift_geometry(attach_z, LIFT_POSE)
    s = System("offshore_lift", start_time=0.0, stop_time=stop, base_step=num["step"], algorithm="fixed",
               algorithm_options={"method": "gauss-seidel"})
    _lift_components(s, Path(fmu_dir), geo, SEA if sea is None else sea, LIFT_POSE, num)
    declare_unconnected_inputs(s)
    return s


def offshore_lift_events() -> dict:
    e = LIFT_EVENTS
    W = "winch"
    return {
        "description": "Offshore lift (issue 11): a 10 t structure lowered from 5 m above the water through the "
                       "splash zone to 50 m depth by the heave-compensated winch; heave compensation on from 37.8 s "
                       "(payload submerged), off again from 131 s for comparison. Run: marine-cosim demo "
                       "offshore_lift.",
        "end": e["end"],
        "events": [
            {"time": 0.0, "model": W, "variable": "hardpoint.velocity_down", "action": "override", "value": 0.0},
            {"time": e["speed_slow"][0], "model": W, "variable": "speed_setpoint", "action": "override",
             "value": e["speed_slow"][1]},
            {"time": e["ahc_on"], "model": W, "variable": "hardpoint.velocity_down", "action": "reset"},
            {"time": e["speed_fast"][0], "model": W, "variable": "speed_setpoint", "action": "override",
             "value": e["speed_fast"][1]},
            {"time": e["stop"], "model": W, "variable": "speed_setpoint", "action": "override", "value": 0.0},
            {"time": e["ahc_off"], "model": W, "variable": "hardpoint.velocity_down", "action": "override",
             "value": 0.0},
        ]}
