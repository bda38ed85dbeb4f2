"""The ship swaps of docs/ship_swap.md in code: three ships of other interface families, built with
tool chains other than this project's, replace Ship.fmu in a system file -- edited as a user edits
it, the other components untouched -- with port adapters (orchestration.system.adapters) doing
every conversion:

* ``osp_vessel``: OsvSeakeeper.fmu (tests/models/c_fmu/third_party_ship.c, plain-C FMI 2.0), OSP-IS
  vessel ports: motion of a point of attack (NED displacement, velocity, acceleration) and of the
  CG (angles in deg in a z-up vessel frame, body rates), one force and moment (kN, kN.m, NED) at the
  point of attack; a ``rigid_body`` adapter;
* ``six_dof``: Vessel6Dof.fmu (tests/models/fmi3/vessel_6dof.py, pythonfmu3 FMI 3.0), Simulink style:
  a generalised force at its origin (the CG) in body axes x forward, y port, z up, in kN; its pose in
  ENU with zyx Euler angles in deg; body velocities and their derivatives. It heads 150 deg here, so
  the whole lift is turned by 150 deg about the vertical (the payload's start with it); a
  ``rigid_body`` adapter;
* ``manoeuvring``: ManoeuvringShip1.fmu (tests/models/c_fmu/manoeuvring_ship_fmi1.c, plain-C FMI
  1.0), a 3-DOF manoeuvring model (surge, sway, yaw about its CG) with Ship.fmu kept for heave, roll
  and pitch; a ``manoeuvring_seakeeping`` adapter.

:func:`swap_ssd` writes a variant from an original ``.ssd``; ``python -m tests.models.ship_swap``
regenerates the committed variants (tests/runs/test_ship_swap.py checks they are current).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
LIFT = ROOT / "scenarios" / "offshore_lift" / "offshore_lift.ssd"
SMALL = ROOT / "tests" / "data" / "systems" / "ship_crane.ssd"
OSV_MD = Path(__file__).resolve().parent / "c_fmu" / "third_party_ship.xml"
#: Ship.fmu's default hardpoint locations (body frame relative to CO)
SHIP_HARDPOINTS = {1: (-30.0, 0.0, -8.0), 2: (25.0, 0.0, -8.0), 3: (-38.0, 0.0, -8.0), 4: (0.0, 7.0, -8.0)}
#: the 6-DOF ship's heading in the swapped lift (deg, NED): a large yaw, not a multiple of 90
SIX_DOF_HEADING = 150.0
MOTION = (("position", 3), ("quaternion", 4), ("velocity", 3), ("angular_velocity", 3), ("acceleration", 3),
          ("angular_acceleration", 3))
#: the variants: name -> (file suffix, the new ship's FMU, the command that builds it)
VARIANTS = {
    "osp_vessel": ("third_party_ship", "OsvSeakeeper.fmu", "python -m tests.models.c_fmu.build build/fmus ship"),
    "six_dof": ("6dof_ship", "Vessel6Dof.fmu", "python -m tests.models.fmi3.build build/fmus vessel"),
    "manoeuvring": ("manoeuvring_ship", "ManoeuvringShip1.fmu",
                    "python -m tests.models.c_fmu.build_fmi1 build/fmus ship"),
}


def variant_path(original: Path, variant: str) -> Path:
    return original.with_name(f"{original.stem}_{VARIANTS[variant][0]}.ssd")


# ---------------------------------------------------------------------- the hull and our ship's set-up

def osv_hull(path: Path = OSV_MD) -> dict[str, float]:
    """OsvSeakeeper's constants (CG relative to AP/CL/BL, Lpp, draught) from its modelDescription, as a
    user reads them with ``marine-cosim info OsvSeakeeper.fmu``."""
    from lxml import etree

    values = {}
    for sv in etree.parse(str(path)).getroot().iter("ScalarVariable"):
        if sv.get("variability") == "constant":
            values[sv.get("name")] = float(sv.find("Real").get("start"))
    return {k: values[k] for k in ("cg_x_rel_ap", "cg_y_rel_cl", "cg_z_rel_bl", "lpp", "draught")}


def cg_rel_co(hull: dict) -> np.ndarray:
    """The CG in our body frame relative to CO (amidships, centreline, waterline). The same hull for
    all three ships (tests/models/c_fmu/third_party_ship_data.py)."""
    return np.array([hull["cg_x_rel_ap"] - hull["lpp"] / 2.0, -hull["cg_y_rel_cl"],
                     hull["draught"] - hull["cg_z_rel_bl"]])


@dataclass
class ShipSetup:
    """What the original system asks of Ship.fmu: where the crane sits, the constant loads elsewhere
    on the hull, the initial state and the sea."""

    params: dict[str, Any]
    crane_point: np.ndarray
    constant: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)  # (location, F, M)
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    euler: np.ndarray = field(default_factory=lambda: np.zeros(3))

    @classmethod
    def read(cls, params: dict[str, Any], crane_hardpoint: int = 1) -> "ShipSetup":
        loc = lambda k: np.array([float(params.get(f"hardpoint{k}.location[{i}]", SHIP_HARDPOINTS[k][i]))
                                  for i in range(3)])
        constant = []
        for k in SHIP_HARDPOINTS:
            if k == crane_hardpoint:
                continue
            f = np.array([float(params.get(f"hardpoint{k}.force[{i}]", 0.0)) for i in range(3)])
            m = np.array([float(params.get(f"hardpoint{k}.moment[{i}]", 0.0)) for i in range(3)])
            if np.any(f) or np.any(m):
                constant.append((loc(k), f, m))
        return cls(dict(params), loc(crane_hardpoint), constant,
                   np.array([float(params.get(f"initial.position[{i}]", 0.0)) for i in range(3)]),
                   np.array([float(params.get(f"initial.euler[{i}]", 0.0)) for i in range(3)]))

    def attitude(self, heading: float = 0.0) -> np.ndarray:
        from orchestration.master.adapters.frames import euler_to_matrix

        return euler_to_matrix(np.array([self.euler[0], self.euler[1], self.euler[2] + heading]))


def osv_sea(params: dict) -> dict[str, float]:
    """Our Ship's sea as OsvSeakeeper's regular wave: calm stays calm, a regular wave keeps its height
    and period, an irregular sea becomes a regular wave of height Hs and period Tp (the vendor's FMU has
    nothing better); direction: rad the waves travel towards -> deg they come from."""
    spectrum = int(params.get("sea.spectrum", 1))
    if spectrum == 0:
        return {"wave.height": 0.0}
    height = 2.0 * float(params.get("sea.amplitude", 1.0)) if spectrum == 3 else float(params.get("sea.hs", 2.5))
    towards = float(params.get("sea.direction", 0.0))
    return {"wave.height": height, "wave.period": float(params.get("sea.period", 8.0)),
            "wave.direction": round((math.degrees(towards) + 180.0) % 360.0, 9)}


def _vec(name: str, values) -> dict[str, float]:
    return {f"{name}[{i}]": float(v) for i, v in enumerate(values)}


def _points(levers: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> dict[str, Any]:
    """rigid_body points: point 1 the crane, then one per constant load (its force and moment as
    start values)."""
    out: dict[str, Any] = {"points": len(levers)}
    for k, (lever, force, moment) in enumerate(levers, 1):
        out.update(_vec(f"point{k}.lever", lever))
        if k > 1:
            out.update({**_vec(f"point{k}.force", force), **_vec(f"point{k}.moment", moment)})
    return out


# ---------------------------------------------------------------------- a replacement

@dataclass
class Replacement:
    """What a swap puts in place of the ship's component and connections."""

    components: list[tuple[str, str, dict[str, Any], str]]         # (name, FMU source or adapter kind, start, note)
    connections: list[tuple[str, str]]                              # "comp.var" -> "comp.var", identity
    keep: set[str] = field(default_factory=set)                     # original ship connections kept (labels)
    start: dict[str, dict[str, Any]] = field(default_factory=dict)  # start values on other components
    comment: str = ""


def _connect_port(out: list, source: str, target: str) -> None:
    for w, n in MOTION:
        out += [(f"{source}.{w}[{i}]", f"{target}.{w}[{i}]") for i in range(n)]


def _crane_loads(out: list, crane: str, point: str) -> None:
    out += [(f"{crane}.base.{w}[{i}]", f"{point}.{w}[{i}]") for w in ("force", "moment") for i in range(3)]


def osp_vessel(setup: ShipSetup, ship: str, crane: str, source: str, probe_targets: list[str]) -> Replacement:
    """OsvSeakeeper with its point of attack at the crane's hardpoint: a rigid_body adapter whose
    reference point is the point of attack (point 1 there, a lever of zero), its world origin the
    vendor's (its CG in calm water without loads), its attitude the CG's angles (deg, z-up vessel
    frame), the constant loads as further points."""
    hull = osv_hull()
    r_g = cg_rel_co(hull)
    h = setup.crane_point
    poa = "additionalNedForce.pointOfAttackRel2APAndBL"
    from orchestration.master.adapters.frames import Conventions, matrix_to_euler

    # the vendor's initial heave (CG, up), roll and pitch (deg, bow down) from our CO depth and angles
    R0 = setup.attitude()
    cg_down = setup.position[2] + (R0 @ r_g)[2] - r_g[2]
    angles = np.degrees(matrix_to_euler(Conventions("NED", "FLU", "NWU").Ca.T @ R0 @ np.diag([1.0, -1.0, -1.0])))
    ship_start = {**osv_sea(setup.params), f"{poa}.xpos": float(hull["lpp"] / 2.0 + h[0]),
                  f"{poa}.ypos": float(-h[1]), f"{poa}.zpos": float(hull["draught"] - h[2]),
                  "initial.heave": float(-cg_down), "initial.roll": float(angles[0]),
                  "initial.pitch": float(angles[1])}
    # its earth origin: its CG in calm water without loads, vertically; horizontally where our start puts
    # the CG (its station keeping holds the CG there, ours CO: the same place at the start)
    origin = np.array([(R0 @ r_g)[0] + setup.position[0], (R0 @ r_g)[1] + setup.position[1], r_g[2]])
    adapter = {"world": "NED", "attitude_world": "NWU", "body": "FLU", "attitude": "euler", "angle_unit": "deg",
               "angular_velocity_axes": "body", "angular_acceleration_axes": "body", "force_unit": "kN",
               "moment_unit": "kN.m", **_vec("origin", origin),
               **_points([(np.zeros(3), None, None)] + [(loc - h, f, m) for loc, f, m in setup.constant])}
    c: list[tuple[str, str]] = []
    src = {"position": ("pointOfAttackMotion.nedDisplacement", ("north", "east", "down")),
           "euler": ("cgShipMotion.angularDisplacement", ("roll", "pitch", "yaw")),
           "velocity": ("pointOfAttackMotion.nedVelocity", ("north", "east", "down")),
           "angular_velocity": ("cgShipMotion.angularVelocity", ("roll", "pitch", "yaw")),
           "acceleration": ("pointOfAttackMotion.nedAcceleration", ("north", "east", "down")),
           "angular_acceleration": ("cgShipMotion.angularAcceleration", ("roll", "pitch", "yaw"))}
    for w, (prefix, leaves) in src.items():
        c += [(f"{ship}.{prefix}.{leaf}", f"hull.reference.{w}[{i}]") for i, leaf in enumerate(leaves)]
    _connect_port(c, "hull.point1", f"{crane}.base")
    _crane_loads(c, crane, "hull.point1")
    c += [(f"hull.reference.{w}[{i}]", f"{ship}.additionalNedForce.{w}.{leaf}") for w in ("force", "moment")
          for i, leaf in enumerate(("north", "east", "down"))]
    return Replacement(
        [(ship, source, ship_start, "OsvSeakeeper (OSP-IS vessel ports): its point of attack at the crane's "
                                    "hardpoint, our initial state and sea in its conventions"),
         ("hull", "rigid_body", adapter, "its point of attack's motion and the CG's angles (deg, z-up vessel "
                                         "frame) -> the crane base; the crane's load and the constant loads -> "
                                         "its force and moment (kN, kN.m, NED) at the point of attack")],
        c, start={t.split(".", 1)[0]: {t.split(".", 1)[1]: 0.0} for t in probe_targets},
        comment="the third-party ship (OsvSeakeeper.fmu, OSP-IS vessel ports) in place of Ship.fmu: docs/ship_swap.md")


def six_dof(setup: ShipSetup, ship: str, crane: str, source: str, probe_targets: list[str],
            heading: float = SIX_DOF_HEADING) -> Replacement:
    """Vessel6Dof (generalised force at its CG, ENU, FLU, deg, kN), heading ``heading`` deg: a
    rigid_body adapter whose reference point is its CG, its world origin the CG's calm-water position
    at that heading."""
    from orchestration.master.adapters.frames import WORLD_AXES, euler_to_matrix, matrix_to_euler

    r_g = cg_rel_co(osv_hull())
    psi = math.radians(heading)
    R0 = setup.attitude(psi)
    Rz = euler_to_matrix(np.array([0.0, 0.0, psi]))
    origin = Rz @ r_g                                    # the CG at rest, level, at this heading
    cg = np.array([0.0, 0.0, setup.position[2]]) + R0 @ r_g
    C_enu, D_flu = WORLD_AXES["ENU"], np.diag([1.0, -1.0, -1.0])
    pos = C_enu.T @ (cg - origin)
    angles = np.degrees(matrix_to_euler(C_enu.T @ R0 @ D_flu))
    ship_start = {"initial.x": float(pos[0]), "initial.y": float(pos[1]), "initial.z": float(pos[2]),
                  "initial.phi": float(angles[0]), "initial.theta": float(angles[1]),
                  "initial.psi": float(angles[2])}
    adapter = {"world": "ENU", "body": "FLU", "attitude": "euler", "angle_unit": "deg", "velocity_axes": "body",
               "angular_velocity_axes": "body", "acceleration_axes": "body_derivative",
               "angular_acceleration_axes": "body", "load_axes": "body", "force_unit": "kN", "moment_unit": "kN.m",
               **_vec("origin", origin),
               **_points([(setup.crane_point - r_g, None, None)] + [(loc - r_g, f, m) for loc, f, m in setup.constant])}
    c: list[tuple[str, str]] = []
    for w, names in (("position", ("eta_x", "eta_y", "eta_z")), ("euler", ("eta_phi", "eta_theta", "eta_psi")),
                     ("velocity", ("nu_u", "nu_v", "nu_w")), ("angular_velocity", ("nu_p", "nu_q", "nu_r")),
                     ("acceleration", ("nu_dot_u", "nu_dot_v", "nu_dot_w")),
                     ("angular_acceleration", ("nu_dot_p", "nu_dot_q", "nu_dot_r"))):
        c += [(f"{ship}.{n}", f"hull.reference.{w}[{i}]") for i, n in enumerate(names)]
    _connect_port(c, "hull.point1", f"{crane}.base")
    _crane_loads(c, crane, "hull.point1")
    c += [(f"hull.reference.force[{i}]", f"{ship}.tau_{n}") for i, n in enumerate("XYZ")]
    c += [(f"hull.reference.moment[{i}]", f"{ship}.tau_{n}") for i, n in enumerate("KMN")]
    start = {t.split(".", 1)[0]: {t.split(".", 1)[1]: 0.0} for t in probe_targets}
    return Replacement(
        [(ship, source, ship_start, f"Vessel6Dof (generalised force at its CG, ENU, z up, deg, kN): heading "
                                    f"{heading:g} deg, our initial heave, roll and pitch in its conventions"),
         ("hull", "rigid_body", adapter, "its CG's pose (ENU, zyx Euler angles in deg), body velocities and their "
                                         "derivatives (FLU) -> the crane base; the crane's load and the constant "
                                         "loads -> its generalised force (FLU, kN, kN.m)")],
        c, start=start, comment=f"the 6-DOF ship (Vessel6Dof.fmu, FMI 3.0, z up) in place of Ship.fmu, heading "
                                f"{heading:g} deg (the lift turned with it): docs/ship_swap.md")


def manoeuvring(setup: ShipSetup, ship: str, crane: str, source: str, probe_targets: list[str],
                seakeeping_hardpoint: int = 2) -> Replacement:
    """ManoeuvringShip1 (3-DOF about its CG) for surge, sway and yaw, Ship.fmu kept for heave, roll and
    pitch with its hardpoint ``seakeeping_hardpoint`` at the CG: a manoeuvring_seakeeping adapter."""
    r_g = cg_rel_co(osv_hull())
    R0 = setup.attitude()
    cg = setup.position + R0 @ r_g
    hp = f"hardpoint{seakeeping_hardpoint}"
    keep_ship = {**_vec(f"{hp}.location", r_g)}
    adapter = {"world": "NED", "body": "FRD", **_points([(setup.crane_point - r_g, None, None)])}
    c: list[tuple[str, str]] = []
    for w, names in (("position", ("x", "y")), ("velocity", ("u", "v")), ("acceleration", ("u_dot", "v_dot"))):
        c += [(f"manoeuvring.{n}", f"hull.manoeuvring.{w}[{i}]") for i, n in enumerate(names)]
    c += [("manoeuvring.psi", "hull.manoeuvring.yaw"), ("manoeuvring.r", "hull.manoeuvring.yaw_rate"),
          ("manoeuvring.r_dot", "hull.manoeuvring.yaw_acceleration")]
    _connect_port(c, f"{ship}.{hp}", "hull.seakeeping")
    _connect_port(c, "hull.point1", f"{crane}.base")
    _crane_loads(c, crane, "hull.point1")
    c += [("hull.manoeuvring.force[0]", "manoeuvring.tau_X"), ("hull.manoeuvring.force[1]", "manoeuvring.tau_Y"),
          ("hull.manoeuvring.moment", "manoeuvring.tau_N")]
    c += [(f"hull.seakeeping.{w}[{i}]", f"{ship}.{hp}.{w}[{i}]") for w in ("force", "moment") for i in range(3)]
    return Replacement(
        [(ship, "", keep_ship, f"Ship.fmu stays for heave, roll and pitch; its {hp} at the CG, the reference "
                               "point of the manoeuvring model"),
         ("manoeuvring", source, {"x0": float(cg[0]), "y0": float(cg[1]), "psi0": float(setup.euler[2])},
          "ManoeuvringShip1 (3-DOF, FMI 1.0): surge, sway and yaw about the CG"),
         ("hull", "manoeuvring_seakeeping", adapter, "x, y, yaw from the manoeuvring model, z, roll, pitch from "
                                                     "Ship.fmu -> the crane base; the crane's load split into "
                                                     "their generalised forces")],
        c, keep={"wave_probe"},
        comment="the 3-DOF manoeuvring ship (ManoeuvringShip1.fmu, FMI 1.0) with Ship.fmu for heave, roll and "
                "pitch, in place of Ship.fmu alone: docs/ship_swap.md")


BUILDERS = {"osp_vessel": osp_vessel, "six_dof": six_dof, "manoeuvring": manoeuvring}


# ---------------------------------------------------------------------- the edit of an .ssd file

#: the adapter's ports that carry a load with the velocity it works on, and the bond each makes (power
#: bonds: ECCO, docs/algorithms.md): the crane's load on the hull's crane point, and the hull's load on
#: the new ship at the adapter's reference (a 6-DOF ship) or at its manoeuvring and seakeeping ports
_BONDED_PORTS = {"point1": "crane_base", "reference": "ship_base", "seakeeping": "seakeeping",
                 "manoeuvring": "manoeuvring"}
_BONDED = re.compile(r"^hull\.(\w+)\.(force|moment|velocity|angular_velocity|yaw_rate)(\[\d\])?$")


def swap_bond(source: str, target: str) -> str | None:
    """The power bond of a swap's connection ``source`` -> ``target``: a force or moment at one of the
    adapter's bonded ports, or the velocity it works on, whichever way it goes (the manoeuvring port
    is bonded in the plane: surge and sway velocity and yaw rate, with the two forces and the yaw
    moment)."""
    for end in (source, target):
        m = _BONDED.match(end)
        if m:
            return _BONDED_PORTS.get(m.group(1))
    return None


def _fmt(x: float) -> str:
    return repr(float(x))


def swap_ssd(original: Path, out: Path, variant: str, fmu_dir: str = "../../build/fmus", ship: str = "ship",
             crane: str = "crane") -> Path:
    """Write ``out``: the .ssd ``original`` with its Ship.fmu ``ship`` (carrying ``crane`` at hardpoint
    1) replaced as ``variant`` says (module docstring), edited as a user edits it: the ship's
    ``ssd:Component`` and ``ssd:Connection`` elements are replaced (the Ship.fmu component kept and
    changed for ``manoeuvring``), new components and connections come in their place, start values
    the new set-up needs go on the others (the payload's surface where no wave probe is left, its
    start where the lift turns); every other element stays as it is."""
    from lxml import etree

    from orchestration.system.adapters import ADAPTER_TYPE, KINDS
    from orchestration.system.fmu_info import component_info
    from orchestration.system.model import Component
    from orchestration.system.ssp import MC_ANNOTATION_TYPE, MC_NS, SSC_NS, SSD_NS, SSV_NS, q  # noqa: F401

    tree = etree.parse(str(original), etree.XMLParser(remove_blank_text=True))
    root = tree.getroot()
    system_el = root.find(q(SSD_NS, "System"))
    elements_el = system_el.find(q(SSD_NS, "Elements"))
    connections_el = system_el.find(q(SSD_NS, "Connections"))
    components = {c.get("name"): c for c in elements_el if c.tag == q(SSD_NS, "Component")}
    old = components[ship]

    def parameters(comp_el) -> dict[str, Any]:
        found = {}
        for p in comp_el.iter(q(SSV_NS, "Parameter")):
            typed = next(iter(p), None)
            if typed is not None and typed.get("value") is not None:
                kind = etree.QName(typed).localname
                text = typed.get("value")
                found[p.get("name")] = float(text) if kind == "Real" else int(text) if kind == "Integer" else text
        return found

    def set_parameters(comp_el, values: dict[str, Any], comment: str | None = None) -> None:
        params = comp_el.find(".//" + q(SSV_NS, "Parameters"))
        if params is None:
            binding = etree.SubElement(etree.SubElement(comp_el, q(SSD_NS, "ParameterBindings")),
                                       q(SSD_NS, "ParameterBinding"))
            pset = etree.SubElement(etree.SubElement(binding, q(SSD_NS, "ParameterValues")), q(SSV_NS, "ParameterSet"),
                                    {"version": "1.0", "name": f"{comp_el.get('name')}.parameters"})
            params = etree.SubElement(pset, q(SSV_NS, "Parameters"))
        if comment:
            params.append(etree.Comment(f" {comment} "))
        for name, value in values.items():
            for p in params.findall(q(SSV_NS, "Parameter")):
                if p.get("name") == name:
                    params.remove(p)
            p = etree.SubElement(params, q(SSV_NS, "Parameter"), {"name": name})
            kind = "Integer" if isinstance(value, int) and not isinstance(value, bool) else \
                "String" if isinstance(value, str) else "Real"
            etree.SubElement(p, q(SSV_NS, kind), {"value": _fmt(value) if kind == "Real" else str(value)})

    ship_params = parameters(old)
    setup = ShipSetup.read(ship_params)
    connections = list(connections_el)
    probe_targets = [f"{c.get('endElement')}.{c.get('endConnector')}" for c in connections
                     if c.get("startElement") == ship and c.get("startConnector") == "wave_probe.elevation"]
    source = f"{fmu_dir}/{VARIANTS[variant][1]}"
    rep = BUILDERS[variant](setup, ship, crane, source, probe_targets)

    # ---- components: the ship's element replaced by the new ones, in data-flow order
    position = list(elements_el).index(old)
    elements_el.remove(old)
    new_components = {}
    for name, what, start, note in rep.components:
        if what == "":                          # Ship.fmu stays, changed
            el = old
            set_parameters(el, start, note)
            new_components[name] = Component(name, Path("Ship.fmu"), {})
        elif what in KINDS:
            el = etree.Element(q(SSD_NS, "Component"), {"name": name, "type": ADAPTER_TYPE, "source": what})
            new_components[name] = Component(name, None, dict(start), adapter=what)
            el.append(etree.Comment(f" port adapter: {note} "))
            set_parameters(el, start)
        else:
            el = etree.Element(q(SSD_NS, "Component"), {"name": name, "type": old.get("type"), "source": what,
                                                        "implementation": "CoSimulation"})
            new_components[name] = Component(name, ROOT / "build" / "fmus" / Path(what).name, {})
            el.append(etree.Comment(f" {note} "))
            set_parameters(el, start)
        elements_el.insert(position, el)
        position += 1
    # connectors of the adapters' connected ports, with their units (for the reader of the file)
    for name, what, start, _ in rep.components:
        if what not in KINDS:
            continue
        info = component_info(new_components[name])
        el = next(c for c in elements_el if c.get("name") == name)
        connectors = etree.Element(q(SSD_NS, "Connectors"))
        used = [v for v in info.variables.values() if v.causality in ("input", "output")
                and any(f"{name}.{v.name}" in pair for pair in rep.connections)]
        for v in used:
            c_el = etree.SubElement(connectors, q(SSD_NS, "Connector"), {"name": v.name, "kind": v.causality})
            etree.SubElement(c_el, q(SSC_NS, "Real"), {"unit": v.unit} if v.unit else {})
        el.insert(1, connectors)
    for comp, values in rep.start.items():
        set_parameters(components[comp], values, "the new ship has no wave probe: the mean free surface")
    if variant == "six_dof":          # the lift turns with the ship: the payload starts under the hook
        from orchestration.master.adapters.frames import euler_to_matrix

        Rz = euler_to_matrix(np.array([0.0, 0.0, math.radians(SIX_DOF_HEADING)]))
        payload = parameters(components["payload"])
        start = np.array([float(payload.get(f"initial.position[{i}]", 0.0)) for i in range(3)])
        set_parameters(components["payload"], _vec("initial.position", Rz @ start),
                       f"turned by {SIX_DOF_HEADING:g} deg about the vertical with the ship")

    # ---- connections: the ship's go (but those kept), the new ones come in their place
    ends = lambda c: {c.get("startElement"), c.get("endElement")}
    first = next((i for i, c in enumerate(connections) if ship in ends(c)), len(connections))
    for c in connections:
        if ship in ends(c) and not any(k in (c.get("startConnector") or "") + (c.get("endConnector") or "")
                                       for k in rep.keep):
            connections_el.remove(c)
    position = min(first, len(connections_el))
    connections_el.insert(position, etree.Comment(f" {rep.comment} "))
    position += 1
    for src, dst in rep.connections:
        (se, sc), (ee, ec) = src.split(".", 1), dst.split(".", 1)
        connection = etree.Element(q(SSD_NS, "Connection"), {
            "startElement": se, "startConnector": sc, "endElement": ee, "endConnector": ec})
        bond = swap_bond(src, dst)
        if bond:
            annotations = etree.SubElement(connection, q(SSD_NS, "Annotations"))
            annotation = etree.SubElement(annotations, q(SSC_NS, "Annotation"), {"type": MC_ANNOTATION_TYPE})
            etree.SubElement(annotation, q(MC_NS, "PowerBond"), {"name": bond})
        connections_el.insert(position, connection)
        position += 1
    suffix = VARIANTS[variant][0]
    root.set("name", f"{root.get('name', '')}_{suffix}")
    system_el.set("name", f"{system_el.get('name', '')}_{suffix}")
    etree.indent(tree, space="  ")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tree.write(str(out), xml_declaration=True, encoding="UTF-8", pretty_print=True)
    return out


#: the committed variants: (original, variant, FMU folder relative to the file)
COMMITTED = [(LIFT, "osp_vessel", "../../build/fmus"), (LIFT, "six_dof", "../../build/fmus"),
             (LIFT, "manoeuvring", "../../build/fmus"), (SMALL, "osp_vessel", "../../../build/fmus")]


def main(argv: list[str] | None = None) -> int:
    """python -m tests.models.ship_swap: regenerate the committed variants."""
    for original, variant, fmus in COMMITTED:
        print(swap_ssd(original, variant_path(original, variant), variant, fmus))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
