"""The ship swap of docs/ship_swap.md in code: how the third-party ship FMU (tests/c_fmu,
OsvSeakeeper.fmu, OSP vessel-style names, kN, degrees, a z-up vessel frame) replaces Ship.fmu
under a crane, connection by connection.

* :func:`port_mapping` is the table of docs/ship_swap.md: every crane-base input and ship input
  with the third-party variable, the factor and offset the master applies (unit conversion
  included), and the part a user writes into an SSP file as ``ssc:LinearTransformation`` when the
  connector units convert (SSP) -- see :class:`Link`;
* :func:`swap_ship` turns a System with Ship.fmu carrying a crane into the same System with the
  third-party ship (everything else untouched);
* :func:`swap_ssd` does the same to an ``.ssd`` file *as a user would edit it*: the ship's
  ``ssd:Component`` and its ``ssd:Connection`` elements are replaced, every other element is kept
  as it is.

Only the system changes: no FMU, no code of the master.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from fmpy import read_model_description

from orchestration.system import Component, Connection, System

DEG = math.pi / 180.0
AXES = ("north", "east", "down")
ROLL_PITCH_YAW = ("roll", "pitch", "yaw")
#: vessel frame (x fwd, y port, z up) -> our NED body frame: roll keeps its sign, pitch and yaw flip
ANGLE_SIGN = (1.0, -1.0, -1.0)
POA = "additionalNedForce.pointOfAttackRel2APAndBL"


def hull_from_fmu(fmu: Path) -> dict[str, float]:
    """The third-party ship's constants (CG relative to AP/CL/BL, Lpp, draught), as a user reads
    them with ``marine-cosim info OsvSeakeeper.fmu``."""
    md = read_model_description(str(fmu))
    values = {v.name: float(v.start) for v in md.modelVariables if v.variability == "constant"}
    return {k: values[k] for k in ("cg_x_rel_ap", "cg_y_rel_cl", "cg_z_rel_bl", "lpp", "draught")}


def cg_rel_co(hull: dict) -> np.ndarray:
    """The third-party CG in our body frame relative to CO (amidships, centreline, waterline)."""
    return np.array([hull["cg_x_rel_ap"] - hull["lpp"] / 2.0, -hull["cg_y_rel_cl"],
                     hull["draught"] - hull["cg_z_rel_bl"]])


@dataclass
class Link:
    """One connection of the swap: ``target = factor * source + offset`` as the master applies it.

    ``ssp_factor`` is what goes into the ``ssc:LinearTransformation`` of an SSP connection whose
    connector units convert automatically (``factor = ssp_factor * unit conversion``);
    ``suppress`` marks a connection SSP cannot convert by units (an angle into a dimensionless
    quaternion element), which carries the whole factor with ``suppressUnitConversion``."""

    source: str
    target: str
    factor: float = 1.0
    offset: float = 0.0
    ssp_factor: float = 1.0
    suppress: bool = False
    note: str = ""


@dataclass
class Swap:
    links: list[Link] = field(default_factory=list)
    ship_start: dict[str, float] = field(default_factory=dict)     # third-party ship start values
    other_start: dict[str, dict[str, float]] = field(default_factory=dict)   # component -> start values


def port_mapping(hull: dict, hardpoint=(-30.0, 0.0, -8.0), ship: str = "ship", crane: str = "crane",
                 base: str = "base") -> Swap:
    """Connections between the third-party ship and a crane base at ``hardpoint`` (body frame
    relative to CO, our conventions) and the ship's point of attack there."""
    r_g = cg_rel_co(hull)
    sw = Swap()
    add = sw.links.append
    # motion of the point of attack (the hardpoint) into the crane base: NED on both sides; the
    # vendor's earth frame has its origin at its CG in calm-water equilibrium, ours at CO there
    for i, ax in enumerate(AXES):
        add(Link(f"{ship}.pointOfAttackMotion.nedDisplacement.{ax}", f"{crane}.{base}.position[{i}]",
                 offset=float(r_g[i]), note="origin CG -> CO: + CG position relative to CO"))
    for i, ax in enumerate(AXES):
        add(Link(f"{ship}.pointOfAttackMotion.nedVelocity.{ax}", f"{crane}.{base}.velocity[{i}]"))
    for i, ax in enumerate(AXES):
        add(Link(f"{ship}.pointOfAttackMotion.nedAcceleration.{ax}", f"{crane}.{base}.acceleration[{i}]"))
    # rotations: vessel frame (x fwd, y port, z up) -> NED; body rates = NED rates at small angles
    for i, ax in enumerate(ROLL_PITCH_YAW):
        add(Link(f"{ship}.cgShipMotion.angularVelocity.{ax}", f"{crane}.{base}.angular_velocity[{i}]",
                 factor=ANGLE_SIGN[i] * DEG, ssp_factor=ANGLE_SIGN[i],
                 note="deg/s -> rad/s" + ("" if i == 0 else ", z-up -> z-down: sign") + "; body = NED at small angles"))
    for i, ax in enumerate(ROLL_PITCH_YAW):
        add(Link(f"{ship}.cgShipMotion.angularAcceleration.{ax}", f"{crane}.{base}.angular_acceleration[{i}]",
                 factor=ANGLE_SIGN[i] * DEG, ssp_factor=ANGLE_SIGN[i], note="as the angular velocity"))
    # small-angle quaternion (w, x, y, z) = (1, roll/2, pitch/2, yaw/2): the w element keeps its start 1
    for i, ax in enumerate(ROLL_PITCH_YAW):
        f = ANGLE_SIGN[i] * DEG / 2.0
        add(Link(f"{ship}.cgShipMotion.angularDisplacement.{ax}", f"{crane}.{base}.quaternion[{i + 1}]",
                 factor=f, ssp_factor=f, suppress=True, note="small-angle quaternion: sin(a/2) ~ a/2"))
    sw.other_start.setdefault(crane, {})[f"{base}.quaternion[0]"] = 1.0
    # loads of the crane on the ship: N -> kN, N.m -> kN.m, NED on both sides, moment about the same point
    for i, ax in enumerate(AXES):
        add(Link(f"{crane}.{base}.force[{i}]", f"{ship}.additionalNedForce.force.{ax}", factor=1e-3, note="N -> kN"))
    for i, ax in enumerate(AXES):
        add(Link(f"{crane}.{base}.moment[{i}]", f"{ship}.additionalNedForce.moment.{ax}", factor=1e-3,
                 note="N.m -> kN.m"))
    # the point of attack: AP/CL/BL, y to port, z up
    h = np.asarray(hardpoint, float)
    sw.ship_start.update({f"{POA}.xpos": float(hull["lpp"] / 2.0 + h[0]), f"{POA}.ypos": float(-h[1]),
                          f"{POA}.zpos": float(hull["draught"] - h[2])})
    return sw


def initial_state(hull: dict, position_down: float, roll: float, pitch: float) -> dict[str, float]:
    """Our Ship's initial CO depth and roll/pitch (rad) as the third-party ship's initial.heave (CG,
    up), initial.roll and initial.pitch (deg, bow down)."""
    from components.rotations import quat_from_euler_zyx, quat_to_matrix

    r_g = cg_rel_co(hull)
    R = quat_to_matrix(quat_from_euler_zyx(roll, pitch, 0.0))
    cg_down = position_down + (R @ r_g)[2] - r_g[2]
    return {"initial.heave": float(-cg_down), "initial.roll": float(roll / DEG), "initial.pitch": float(-pitch / DEG)}


def sea_state(ship_params: dict) -> dict[str, float]:
    """Our Ship's sea as the third-party ship's regular wave: calm stays calm, a regular wave keeps
    its height and period, an irregular sea becomes a regular wave of height Hs and period Tp (the
    vendor's FMU has nothing better); direction: rad the waves travel towards -> deg they come from."""
    spectrum = int(ship_params.get("sea.spectrum", 1))
    if spectrum == 0:
        return {"wave.height": 0.0}
    height = 2.0 * float(ship_params.get("sea.amplitude", 1.0)) if spectrum == 3 else float(ship_params.get("sea.hs", 2.5))
    towards = float(ship_params.get("sea.direction", 0.0))
    return {"wave.height": height, "wave.period": float(ship_params.get("sea.period", 8.0)),
            "wave.direction": round((math.degrees(towards) + 180.0) % 360.0, 9)}


def _is_ship_end(c: Connection, ship: str) -> bool:
    return c.source[0] == ship or c.target[0] == ship


def swap_ship(system: System, fmu: Path, ship: str = "ship", crane: str = "crane", base: str = "base",
              hardpoint_index: int = 1) -> System:
    """``system`` with its Ship.fmu ``ship`` (carrying ``crane`` at hardpoint ``hardpoint_index``)
    replaced by the third-party ship ``fmu``; returns a new System."""
    old = system.components[ship]
    params = old.parameters
    hull = hull_from_fmu(fmu)
    hp = tuple(float(params.get(f"hardpoint{hardpoint_index}.location[{i}]", d))
               for i, d in enumerate((-30.0, 0.0, -8.0)))
    sw = port_mapping(hull, hp, ship, crane, base)
    start = {**sea_state(params), **sw.ship_start,
             **initial_state(hull, float(params.get("initial.position[2]", 0.0)),
                             float(params.get("initial.euler[0]", 0.0)), float(params.get("initial.euler[1]", 0.0)))}
    new = System(system.name + "_third_party_ship", start_time=system.start_time, stop_time=system.stop_time,
                 base_step=system.base_step, algorithm=system.algorithm,
                 algorithm_options=dict(system.algorithm_options), source_file=None)
    for name, comp in system.components.items():
        if name == ship:
            new.add_component(Component(ship, Path(fmu), dict(start), origin=comp.origin))
        else:
            c = copy.deepcopy(comp)
            c.parameters.update(sw.other_start.get(name, {}))
            new.add_component(c)
    for c in system.connections:
        if _is_ship_end(c, ship):
            # the wave probe has no counterpart: what it fed keeps the mean free surface (0)
            if c.source == (ship, "wave_probe.elevation"):
                new.components[c.target[0]].parameters[c.target[1]] = 0.0
            continue
        new.connections.append(copy.deepcopy(c))
    for link in sw.links:
        new.connect(link.source, link.target, factor=link.factor, offset=link.offset,
                    converts_units=not math.isclose(abs(link.factor), 1.0) and not link.suppress)
    return new


# ---------------------------------------------------------------------- the small reference system

#: knuckle_boom slewed to starboard, main boom 65 deg, jib 55 deg below the horizontal, telescope 2 m
#: out, tool vertical (the offshore lift's pose): the jib tip 20.75 m to starboard, 22 m up
CRANE_POSE = (-90.0, 65.0, -120.0, 2.0, 55.0, 0.0, 0.0)
HARDPOINT = (-30.0, 0.0, -8.0)
HOOK_LOAD = 10000.0 * 9.81            # a 10 t payload in air on the main hoist (attachment2), N


def crane_parameters(pose=CRANE_POSE, hook_load: float = HOOK_LOAD) -> dict:
    from components.mechanism import PRESET_DIR, load_mechanism

    mech = load_mechanism(PRESET_DIR / "knuckle_boom.json")
    q = [math.radians(v) if link.joint == "revolute" else float(v) for v, link in zip(pose, mech.links)]
    return {"mechanism": "knuckle_boom", "gravity": 9.81, "max_substep": 0.025, "use_initial": True,
            **{f"joint{k + 1}.initial_position": v for k, v in enumerate(q)}, "attachment2.force[2]": hook_load}


def ship_crane_system(fmu_dir: Path, sea: dict | None = None, hook_load: float = HOOK_LOAD) -> System:
    """Ship.fmu carrying the knuckle-boom crane at hardpoint 1 with a 10 t hook load, explicit
    coupling (motion of the hardpoint into the crane base, the base force and moment back), the
    ship level at its unloaded calm-water equilibrium: the load acts from t = 0."""
    s = System("ship_crane", start_time=0.0, stop_time=10.0, base_step=0.05, algorithm="fixed",
               algorithm_options={"method": "gauss-seidel"})
    s.add_component(Component("ship", Path(fmu_dir) / "Ship.fmu", {
        **({"sea.spectrum": 0} if sea is None else sea),
        **{f"hardpoint1.location[{i}]": v for i, v in enumerate(HARDPOINT)}}))
    s.add_component(Component("crane", Path(fmu_dir) / "Crane.fmu", crane_parameters(hook_load=hook_load)))
    for var in ("position", "velocity", "angular_velocity", "acceleration", "angular_acceleration"):
        for i in range(3):
            s.connect(f"ship.hardpoint1.{var}[{i}]", f"crane.base.{var}[{i}]")
    for i in range(4):
        s.connect(f"ship.hardpoint1.quaternion[{i}]", f"crane.base.quaternion[{i}]")
    for i in range(3):
        s.connect(f"crane.base.force[{i}]", f"ship.hardpoint1.force[{i}]")
        s.connect(f"crane.base.moment[{i}]", f"ship.hardpoint1.moment[{i}]")
    return s
