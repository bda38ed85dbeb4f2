"""The ship swap of docs/ship_swap.md in code: how the third-party ship FMU (tests/models/c_fmu,
OsvSeakeeper.fmu, OSP vessel-style names, kN, degrees, a z-up vessel frame) replaces Ship.fmu
under a crane, connection by connection.

* :func:`port_mapping` is the table of docs/ship_swap.md: every crane-base input and ship input
  with the third-party variable and the factor and offset the master applies (unit conversion
  included) -- see :class:`Link`;
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

from orchestration.system.model import Component, Connection, System

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

    ``ssp_factor`` is what would go into the ``ssc:LinearTransformation`` of an SSP connection whose
    connector units convert automatically (``factor = ssp_factor * unit conversion``: our reader
    and SSP-conformant tools; libcosim ignores connector units); ``suppress`` marks a connection SSP
    cannot convert by units (an angle into a dimensionless quaternion element)."""

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
                 base: str = "base", constant_force=(0.0, 0.0, 0.0), constant_moment=(0.0, 0.0, 0.0)) -> Swap:
    """Connections between the third-party ship and a crane base at ``hardpoint`` (body frame
    relative to CO, our conventions) and the ship's point of attack there. ``constant_force`` and
    ``constant_moment`` (N, N.m, NED, about the hardpoint) are constant loads elsewhere on the hull
    moved to the point of attack (see :func:`constant_loads`): the vendor's ship takes one force
    at one point, so they ride as offsets on the crane's force and moment connections."""
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
        add(Link(f"{crane}.{base}.force[{i}]", f"{ship}.additionalNedForce.force.{ax}", factor=1e-3,
                 offset=1e-3 * float(constant_force[i]),
                 note="N -> kN" + (" (+ constant loads)" if constant_force[i] else "")))
    for i, ax in enumerate(AXES):
        add(Link(f"{crane}.{base}.moment[{i}]", f"{ship}.additionalNedForce.moment.{ax}", factor=1e-3,
                 offset=1e-3 * float(constant_moment[i]),
                 note="N.m -> kN.m" + (" (+ constant loads)" if constant_moment[i] else "")))
    # the point of attack: AP/CL/BL, y to port, z up
    h = np.asarray(hardpoint, float)
    sw.ship_start.update({f"{POA}.xpos": float(hull["lpp"] / 2.0 + h[0]), f"{POA}.ypos": float(-h[1]),
                          f"{POA}.zpos": float(hull["draught"] - h[2])})
    return sw


#: Ship.fmu's default hardpoint locations (body frame relative to CO)
SHIP_HARDPOINTS = {1: (-30.0, 0.0, -8.0), 2: (25.0, 0.0, -8.0), 3: (-38.0, 0.0, -8.0), 4: (0.0, 7.0, -8.0)}


def constant_loads(ship_params: dict, hardpoint_index: int = 1, connected: set[str] = frozenset()):
    """Constant hardpoint loads of our Ship (start values on hardpoint k's force/moment, e.g. the
    offshore lift's anti-heeling ballast at hardpoint 4) as one force and one moment about hardpoint
    ``hardpoint_index`` (N, N.m, NED; levers at level trim: the wrench is statically equivalent).
    Raises ValueError for a connected hardpoint other than ``hardpoint_index``: the vendor's ship
    takes one load."""
    def loc(k):
        return np.array([float(ship_params.get(f"hardpoint{k}.location[{i}]",
                                               SHIP_HARDPOINTS[k][i])) for i in range(3)])

    base = loc(hardpoint_index)
    force, moment = np.zeros(3), np.zeros(3)
    for k in SHIP_HARDPOINTS:
        if k == hardpoint_index:
            continue
        names = [f"hardpoint{k}.{w}[{i}]" for w in ("force", "moment") for i in range(3)]
        if any(n in connected for n in names):
            raise ValueError(f"hardpoint {k} is connected: the third-party ship takes one load, at one point")
        f = np.array([float(ship_params.get(f"hardpoint{k}.force[{i}]", 0.0)) for i in range(3)])
        m = np.array([float(ship_params.get(f"hardpoint{k}.moment[{i}]", 0.0)) for i in range(3)])
        force += f
        moment += m + np.cross(loc(k) - base, f)
    return force, moment


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
    height = 2.0 * float(ship_params.get("sea.amplitude",
                                         1.0)) if spectrum == 3 else float(ship_params.get("sea.hs", 2.5))
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
    connected = {c.target[1] for c in system.connections if c.target[0] == ship}
    force, moment = constant_loads(params, hardpoint_index, connected)
    sw = port_mapping(hull, hp, ship, crane, base, force, moment)
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


# ---------------------------------------------------------------------- the edit of an .ssd file

SHIP_MD = Path(__file__).resolve().parent / "c_fmu" / "third_party_ship.xml"


def hull_from_model_description(path: Path = SHIP_MD) -> dict[str, float]:
    """:func:`hull_from_fmu` from the modelDescription.xml itself (no FMU needed)."""
    from lxml import etree

    root = etree.parse(str(path)).getroot()
    values = {}
    for sv in root.iter("ScalarVariable"):
        if sv.get("variability") == "constant":
            values[sv.get("name")] = float(sv.find("Real").get("start"))
    return {k: values[k] for k in ("cg_x_rel_ap", "cg_y_rel_cl", "cg_z_rel_bl", "lpp", "draught")}


def _fmt(x: float) -> str:
    return repr(float(x))


def swap_ssd(original: Path, out: Path, ship_source: str = "../../build/fmus/OsvSeakeeper.fmu",
             ship: str = "ship", crane: str = "crane", base: str = "base", hardpoint_index: int = 1) -> Path:
    """Write ``out``: the .ssd ``original`` with Ship.fmu ``ship`` replaced by the third-party ship,
    edited as a user edits it (docs/ship_swap.md): the ship's ``ssd:Component`` and its
    ``ssd:Connection`` elements are replaced; the crane gets ``base.quaternion[0] = 1`` and connectors
    for the base force and moment, and what the wave probe fed keeps the mean free surface (start
    values); every other element is left as it is.

    Every connection carries its whole transformation in ``ssc:LinearTransformation`` (unit
    conversion, sign, offset) with ``suppressUnitConversion="true"``, marked with
    ``mc:UnitConversion`` where it converts units: libcosim's SSP reader applies LinearTransformations
    but ignores connector units, so a file that leaves the conversion to the units runs 1000 times
    too weak there. The connectors still declare the vendor's units, for the reader of the file."""
    from lxml import etree

    from orchestration.system.ssp import MC_ANNOTATION_TYPE, MC_NS, SSC_NS, SSD_NS, SSV_NS, q

    tree = etree.parse(str(original), etree.XMLParser(remove_blank_text=True))
    root = tree.getroot()
    system_el = root.find(q(SSD_NS, "System"))
    elements_el = system_el.find(q(SSD_NS, "Elements"))
    connections_el = system_el.find(q(SSD_NS, "Connections"))
    components = {c.get("name"): c for c in elements_el if c.tag == q(SSD_NS, "Component")}
    old = components[ship]

    def parameters(comp_el) -> dict[str, float]:
        found = {}
        for p in comp_el.iter(q(SSV_NS, "Parameter")):
            real = p.find(q(SSV_NS, "Real"))
            if real is not None:
                found[p.get("name")] = float(real.get("value"))
            else:
                typed = next(iter(p), None)
                if typed is not None and typed.get("value") is not None:
                    found[p.get("name")] = typed.get("value")
        return found

    def add_parameter(comp_el, name: str, value: float, comment: str | None = None) -> None:
        params = comp_el.find(".//" + q(SSV_NS, "Parameters"))
        if params is None:
            binding = etree.SubElement(etree.SubElement(comp_el, q(SSD_NS, "ParameterBindings")),
                                       q(SSD_NS, "ParameterBinding"))
            pset = etree.SubElement(etree.SubElement(binding, q(SSD_NS, "ParameterValues")), q(SSV_NS, "ParameterSet"),
                                    {"version": "1.0", "name": f"{comp_el.get('name')}.parameters"})
            params = etree.SubElement(pset, q(SSV_NS, "Parameters"))
        for p in params.findall(q(SSV_NS, "Parameter")):
            if p.get("name") == name:
                params.remove(p)
        if comment:
            params.append(etree.Comment(f" {comment} "))
        p = etree.SubElement(params, q(SSV_NS, "Parameter"), {"name": name})
        etree.SubElement(p, q(SSV_NS, "Real"), {"value": _fmt(value)})

    hull = hull_from_model_description()
    ship_params = parameters(old)
    hp = tuple(float(ship_params.get(f"hardpoint{hardpoint_index}.location[{i}]", d))
               for i, d in enumerate(HARDPOINT))
    connected = {c.get("endConnector") for c in connections_el if c.get("endElement") == ship}
    force, moment = constant_loads(ship_params, hardpoint_index, connected)
    sw = port_mapping(hull, hp, ship, crane, base, force, moment)
    start = {**sea_state(ship_params), **sw.ship_start,
             **initial_state(hull, float(ship_params.get("initial.position[2]", 0.0)),
                             float(ship_params.get("initial.euler[0]", 0.0)),
                             float(ship_params.get("initial.euler[1]", 0.0)))}

    # ---- the ship component
    new = etree.Element(q(SSD_NS, "Component"), {"name": ship, "type": old.get("type"), "source": ship_source,
                                                 "implementation": "CoSimulation"})
    connectors = etree.SubElement(new, q(SSD_NS, "Connectors"))
    md_units = {}
    for sv in etree.parse(str(SHIP_MD)).getroot().iter("ScalarVariable"):
        md_units[sv.get("name")] = sv.find("Real").get("unit")
    used = []
    for link in sw.links:
        for end, kind in ((link.source, "output"), (link.target, "input")):
            comp, var = end.split(".", 1)
            if comp == ship and var not in used:
                used.append(var)
                c = etree.SubElement(connectors, q(SSD_NS, "Connector"), {"name": var, "kind": kind})
                etree.SubElement(c, q(SSC_NS, "Real"), {"unit": md_units[var]})
    notes = {
        "wave.height": "our sea as the vendor's regular wave: height Hs (or 2 x amplitude), period Tp",
        "wave.direction": "deg the waves come FROM (ours: rad they travel towards): deg(rad) + 180",
        f"{POA}.xpos": "the crane's hardpoint (-30, 0, -8) m from CO in AP/CL/BL: x + Lpp/2, -y (port), T - z (up)",
        "initial.heave": "our start (CO depth, roll, pitch in rad) as the vendor's CG heave (up), roll, pitch (deg, "
                         "bow down)",
    }
    for name, value in start.items():
        add_parameter(new, name, value, notes.get(name))
    elements_el.replace(old, new)

    # ---- start values the mapping needs on other components
    for comp, values in sw.other_start.items():
        for name, value in values.items():
            add_parameter(components[comp], name, value, "small-angle quaternion from the vendor's angles: w = 1")
    crane_connectors = components[crane].find(q(SSD_NS, "Connectors"))
    if crane_connectors is None:
        crane_connectors = etree.SubElement(components[crane], q(SSD_NS, "Connectors"))
        components[crane].insert(0, crane_connectors)
    declared = {c.get("name") for c in crane_connectors}
    for link in sw.links:
        for end, kind in ((link.source, "output"), (link.target, "input")):
            comp, var = end.split(".", 1)
            if comp == crane and var not in declared:
                declared.add(var)
                etree.SubElement(etree.SubElement(crane_connectors, q(SSD_NS, "Connector"), {"name": var,
                                                                                             "kind": kind}),
                                 q(SSC_NS, "Real"))
    for c in list(connections_el):
        if c.get("startElement") == ship and c.get("startConnector") == "wave_probe.elevation":
            add_parameter(components[c.get("endElement")], c.get("endConnector"), 0.0,
                          "the vendor's ship has no wave probe: the mean free surface")

    # ---- connections: the ship's go, the mapping comes in their place
    first = next((i for i, c in enumerate(connections_el)
                  if ship in (c.get("startElement"), c.get("endElement"))), len(connections_el))
    for c in list(connections_el):
        if ship in (c.get("startElement"), c.get("endElement")):
            connections_el.remove(c)
    position = first
    for link in sw.links:
        (se, sc), (ee, ec) = link.source.split(".", 1), link.target.split(".", 1)
        attrib = {"startElement": se, "startConnector": sc, "endElement": ee, "endConnector": ec}
        converts = not link.suppress and not math.isclose(abs(link.factor), abs(link.ssp_factor))
        if link.suppress or converts:
            attrib["suppressUnitConversion"] = "true"
        c = etree.Element(q(SSD_NS, "Connection"), attrib)
        if not (link.factor == 1.0 and link.offset == 0.0):
            t = {"factor": _fmt(link.factor)} if link.factor != 1.0 else {}
            if link.offset:
                t["offset"] = _fmt(link.offset)
            etree.SubElement(c, q(SSC_NS, "LinearTransformation"), t)
        if converts:
            ann = etree.SubElement(etree.SubElement(c, q(SSD_NS, "Annotations")), q(SSC_NS, "Annotation"),
                                   {"type": MC_ANNOTATION_TYPE})
            etree.SubElement(ann, q(MC_NS, "UnitConversion"))
        connections_el.insert(position, c)
        position += 1
    connections_el.insert(first, etree.Comment(
        " the third-party ship (OsvSeakeeper.fmu) in place of Ship.fmu: docs/ship_swap.md. Each "
        "LinearTransformation holds the whole mapping (target = factor * source + offset): unit conversions "
        "(N -> kN 0.001, deg -> rad 0.0174533), signs (the vendor's vessel frame is z up: pitch and yaw flip), "
        "offsets (its earth origin is the CG, ours CO; constant loads elsewhere on the hull, moved to the point of "
        "attack, ride on the force and moment) and the small-angle quaternion (deg -> rad / 2). The crane load "
        "comes back as base.force/moment: the vendor's ship has no articulated-inertia input "))
    root.set("name", root.get("name", "") + "_third_party_ship")
    system_el.set("name", system_el.get("name", "") + "_third_party_ship")
    etree.indent(tree, space="  ")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tree.write(str(out), xml_declaration=True, encoding="UTF-8", pretty_print=True)
    return out


def main(argv: list[str] | None = None) -> int:
    """python -m tests.models.ship_swap ORIGINAL.ssd OUT.ssd [SHIP_SOURCE]"""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (2, 3):
        print(main.__doc__, file=sys.stderr)
        return 2
    print(swap_ssd(Path(args[0]), Path(args[1]), *args[2:]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
