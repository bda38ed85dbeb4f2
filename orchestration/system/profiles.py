"""Interface profiles: which family of ship interface an FMU has, and the port adapter
(orchestration.system.adapters) that joins it to ours, as a block to paste into an ``.ssd``
(``marine-cosim info SHIP.fmu`` prints it; docs/ship_swap.md).

Families recognised from the variables' names, causalities and units:

* ``osp_vessel``: OSP-IS vessel ports (the OSP demo vessels, OsvSeakeeper): a force and a moment in
  earth axes (``*.force.north/east/down``, ``*.moment.*``) at a point of attack, the motion of that
  point (``*.nedDisplacement``, ``*.nedVelocity``, ``*.nedAcceleration``) and the attitude as angles
  (``*.angularDisplacement.roll/pitch/yaw``) with body rates;
* ``generalised_force_6dof``: a generalised force at the model's origin (three forces and three
  moments in body axes: tau_X ... tau_N, surge ... yaw) and the origin's pose as a position and
  Euler angles, with velocities (Simulink style, MSS, the OSP demo cases' VesselModel.fmu);
* ``manoeuvring_3dof``: surge and sway forces and a yaw moment in, a horizontal position and a
  heading out (3-DOF manoeuvring models): no heave, roll or pitch, so a seakeeping model has to
  give those (the ``manoeuvring_seakeeping`` adapter).

The frame conventions are read from names and descriptions (NED/ENU, "z up", "port", degrees,
kN) where the FMU says them; what could not be read is a guess, and the block says so. Nothing here
replaces reading the FMU's documentation: ``marine-cosim validate`` then checks units and
completeness, and a run against a reference checks the rest.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

#: unit name -> quantity (the common names; an FMU's own unit names that are not here are unknown)
QUANTITY = {**{u: "length" for u in ("m", "mm", "cm", "km", "ft")},
            **{u: "angle" for u in ("rad", "deg", "degree", "degrees")},
            **{u: "velocity" for u in ("m/s", "kn", "knot", "knots", "km/h")},
            **{u: "angular_velocity" for u in ("rad/s", "deg/s", "rpm")},
            **{u: "acceleration" for u in ("m/s2", "m/s^2")},
            **{u: "angular_acceleration" for u in ("rad/s2", "deg/s2", "rad/s^2", "deg/s^2")},
            **{u: "force" for u in ("N", "kN", "MN")},
            **{u: "moment" for u in ("N.m", "Nm", "kN.m", "kNm", "MN.m", "MNm")}}
FORCE_UNIT = {"N": "N", "kN": "kN", "MN": "MN"}
MOMENT_UNIT = {"N.m": "N.m", "Nm": "N.m", "kN.m": "kN.m", "kNm": "kN.m", "MN.m": "MN.m", "MNm": "MN.m"}
#: the axis a name's last word gives, for translations and for rotations
LINEAR_AXES = ({"x", "north", "surge", "u", "fx"}, {"y", "east", "sway", "v", "fy"},
               {"z", "down", "heave", "w", "up", "fz"})
ANGULAR_AXES = ({"roll", "phi", "p", "k", "mx", "x", "north"}, {"pitch", "theta", "q", "m", "my", "y", "east"},
                {"yaw", "psi", "r", "n", "heading", "mz", "z", "down"})
ROLES = {"length": "position", "angle": "euler", "velocity": "velocity", "angular_velocity": "angular_velocity",
         "acceleration": "acceleration", "angular_acceleration": "angular_acceleration"}


def _unit(v) -> str | None:
    return v.unit or (getattr(v.declaredType, "unit", None) if v.declaredType is not None else None)


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[._\[\]]+", name) if w]


def _axis_word(name: str, angular: bool) -> tuple[int, int] | None:
    """(axis, index of the word that gives it) of a variable name, or None."""
    words = [w.lower() for w in _words(name)]
    k = len(words) - 1
    while k > 0 and words[k] in ("dot", "d", "derivative", "rate"):
        k -= 1                              # u_dot, r_dot: the axis is the word before
    for i, names in enumerate(ANGULAR_AXES if angular else LINEAR_AXES):
        if k >= 0 and words[k] in names:
            return i, k
    return None


def _axis(name: str, angular: bool) -> int | None:
    found = _axis_word(name, angular)
    return found[0] if found else None


def _prefix(name: str, angular: bool) -> str:
    """The name without its axis word: what the three axes of one vector share (nu_dot_u -> nu.dot,
    u_dot -> dot, additionalNedForce.force.north -> additionalNedForce.force)."""
    words = _words(name)
    found = _axis_word(name, angular)
    return ".".join(w for i, w in enumerate(words) if not found or i != found[1])


@dataclass
class Profile:
    family: str
    title: str
    kind: str                                   # the adapter kind
    parameters: dict = field(default_factory=dict)
    into_adapter: list[tuple[str, str]] = field(default_factory=list)    # (FMU output, adapter input)
    from_adapter: list[tuple[str, str]] = field(default_factory=list)    # (adapter output, FMU input)
    read: list[str] = field(default_factory=list)       # conventions read from the FMU
    guessed: list[str] = field(default_factory=list)    # conventions that are guesses
    todo: list[str] = field(default_factory=list)       # what the user still has to do

    def block(self, ship: str = "ship", adapter: str = "hull") -> str:
        """The ``ssd:Component`` of the adapter and the ``ssd:Connection`` elements between the FMU and
        it, to paste into an ``.ssd`` (the namespaces ssd, ssc, ssv declared there)."""
        lines = [f"<!-- {self.title}: the {self.kind} adapter (docs/ship_swap.md) -->"]
        for text in self.guessed:
            lines.append(f"<!-- CHECK (a guess): {text} -->")
        lines.append(f'<ssd:Component name="{adapter}" type="application/x-marine-cosim-adapter" '
                     f'source="{self.kind}">')
        lines.append("  <ssd:ParameterBindings><ssd:ParameterBinding><ssd:ParameterValues>")
        lines.append(f'    <ssv:ParameterSet version="1.0" name="{adapter}.parameters"><ssv:Parameters>')
        for name, value in self.parameters.items():
            kind = "String" if isinstance(value, str) else "Integer" if isinstance(value, int) else "Real"
            lines.append(f'      <ssv:Parameter name="{name}"><ssv:{kind} value="{value}"/></ssv:Parameter>')
        lines.append("    </ssv:Parameters></ssv:ParameterSet>")
        lines.append("  </ssd:ParameterValues></ssd:ParameterBinding></ssd:ParameterBindings>")
        lines.append("</ssd:Component>")
        for out, inp in self.into_adapter:
            lines.append(f'<ssd:Connection startElement="{ship}" startConnector="{out}" endElement="{adapter}" '
                         f'endConnector="{inp}"/>')
        for out, inp in self.from_adapter:
            lines.append(f'<ssd:Connection startElement="{adapter}" startConnector="{out}" endElement="{ship}" '
                         f'endConnector="{inp}"/>')
        for text in self.todo:
            lines.append(f"<!-- TODO: {text} -->")
        return "\n".join(lines)


def _candidates(md) -> dict[tuple[str, str], dict[str, dict[int, object]]]:
    """(causality, quantity) -> prefix -> axis -> variable."""
    found: dict[tuple[str, str], dict[str, dict[int, object]]] = {}
    for v in md.modelVariables:
        if v.causality not in ("input", "output"):
            continue
        quantity = QUANTITY.get(_unit(v) or "")
        if quantity is None:
            continue
        angular = quantity.startswith("angle") or quantity.startswith("angular") or quantity == "moment"
        axis = _axis(v.name, angular)
        if axis is None:
            continue
        found.setdefault((v.causality, quantity), {}).setdefault(_prefix(v.name, angular), {}).setdefault(axis, v)
    return found


def _complete(groups: dict[str, dict[int, object]], axes=(0, 1, 2), prefer: str = "") -> list | None:
    """The variables of the first prefix with all ``axes`` (a prefix containing ``prefer`` first)."""
    ordered = sorted(groups.items(), key=lambda kv: (prefer.lower() not in kv[0].lower() if prefer else False))
    for _, members in ordered:
        if all(a in members for a in axes):
            return [members[a] for a in axes]
    return None


def _text(variables) -> str:
    return " ".join(f"{v.name} {v.description or ''}" for v in variables).lower()


def _body(variables) -> tuple[str, str]:
    text = _text(variables)
    if re.search(r"\bport\b|z up|\bflu\b|bow down|to port", text):
        return "FLU", "its descriptions say y to port / z up"
    return "FRD", ""


def _world(variables) -> tuple[str, str]:
    text = _text(variables)
    first = f"{variables[0].name} {variables[0].description or ''}".lower() if variables else ""
    if re.search(r"\bned\b", text) or ".north" in text:
        return "NED", "NED in its names or descriptions"
    if re.search(r"\benu\b", text) or re.search(r"\beast\b", first) and re.search(r"\bup\b", text):
        return "ENU", "ENU (x east, y north, z up) in its descriptions"
    if re.search(r"z up|\bup\b|\bnwu\b", text):
        return "NWU", "z up in its descriptions (x north, y west assumed)"
    if re.search(r"\bnorth\b", first):
        return "NED", "x north in its descriptions"
    return "", ""


def _axes_of(variables) -> str:
    """world if the names or descriptions say earth axes (NED, north, earth, world), else body."""
    text = _text(variables)
    return "world" if re.search(r"\bned\b|\.north|\bearth\b|\bworld\b|ned[a-z]*\.", text) else "body"


def recognise(md) -> Profile | None:
    """The interface family of an FMU's ModelDescription and its adapter, or None."""
    c = _candidates(md)
    forces = _complete(c.get(("input", "force"), {}))
    moments = _complete(c.get(("input", "moment"), {}))
    if forces and moments:
        ned = all(_axis(v.name, False) is not None and _words(v.name)[-1].lower() in ("north", "east", "down")
                  for v in forces)
        return _osp_vessel(md, c, forces, moments) if ned else _six_dof(md, c, forces, moments)
    planar = _complete(c.get(("input", "force"), {}), (0, 1))
    yaw = _complete(c.get(("input", "moment"), {}), (2,))
    if planar and yaw:
        return _manoeuvring(md, c, planar, yaw[0])
    return None


def _motion(c, prefer: str = "") -> dict[str, list]:
    out = {}
    for quantity, role in ROLES.items():
        v = _complete(c.get(("output", quantity), {}), prefer=prefer)
        if v:
            out[role] = v
    return out


def _common(profile: Profile, motion: dict[str, list], forces, moments) -> None:
    p = profile.parameters
    angle = _unit(motion["euler"][0]) if "euler" in motion else "rad"
    p["attitude"] = "euler"
    p["angle_unit"] = "deg" if angle in ("deg", "degree", "degrees") else "rad"
    profile.read.append(f"angles in {p['angle_unit']} ({motion['euler'][0].name})" if "euler" in motion else "")
    p["force_unit"] = FORCE_UNIT.get(_unit(forces[0]) or "N", "N")
    p["moment_unit"] = MOMENT_UNIT.get(_unit(moments[0]) or "N.m", "N.m")
    profile.read.append(f"force in {p['force_unit']}, moment in {p['moment_unit']}")
    for role, variables in motion.items():
        profile.into_adapter += [(v.name, f"reference.{role}[{i}]") for i, v in enumerate(variables)]
    profile.from_adapter += [(f"reference.force[{i}]", v.name) for i, v in enumerate(forces)]
    profile.from_adapter += [(f"reference.moment[{i}]", v.name) for i, v in enumerate(moments)]
    missing = [r for r in ROLES.values() if r not in motion]
    if missing:
        profile.todo.append(f"no {', '.join(missing)} found among its outputs: leave those adapter inputs at zero "
                            "only if the body cannot move that way")
    profile.todo.append("connect hull.point1.{position, quaternion, velocity, angular_velocity, acceleration, "
                        "angular_acceleration} -> crane.base.* and crane.base.{force, moment} -> hull.point1.*; "
                        "set point1.lever to where the crane sits relative to its reference point (our body axes: "
                        "x forward, y starboard, z down)")
    profile.read = [r for r in profile.read if r]


def _osp_vessel(md, c, forces, moments) -> Profile:
    profile = Profile("osp_vessel", "OSP-IS vessel ports (force and moment in earth axes at a point of attack)",
                      "rigid_body")
    motion = _motion(c, prefer="pointofattack")
    body, why = _body(motion.get("euler", []) + motion.get("angular_velocity", []))
    p = profile.parameters
    p["world"] = "NED"
    profile.read.append("displacements, velocities and loads in NED (its names)")
    p["body"] = body
    if body == "FLU":
        p["attitude_world"] = "NWU"
        profile.read.append(f"vessel frame x forward, y port, z up ({why}): angles relative to a z-up earth frame")
    else:
        profile.guessed.append("its vessel frame is taken as x forward, y starboard, z down (FRD): nothing says "
                               "otherwise")
    for role, key in (("velocity", "velocity_axes"), ("angular_velocity", "angular_velocity_axes"),
                      ("acceleration", "acceleration_axes"), ("angular_acceleration", "angular_acceleration_axes")):
        if role in motion:
            p[key] = _axes_of(motion[role])
    p["load_axes"] = "world"
    _common(profile, motion, forces, moments)
    poa = [v.name for v in md.modelVariables if v.causality == "input" and QUANTITY.get(_unit(v) or "") == "length"]
    if poa:
        profile.todo.append(f"it takes the point where its force acts ({', '.join(poa)}): put it at the crane's "
                            "hardpoint and point1.lever at zero, or keep it at its reference point and give "
                            "point1.lever; set origin[0..2] to its earth origin in our NED frame")
    return profile


def _six_dof(md, c, forces, moments) -> Profile:
    profile = Profile("generalised_force_6dof", "6-DOF generalised force at the origin, Euler pose (Simulink style)",
                      "rigid_body")
    motion = _motion(c)
    p = profile.parameters
    world, why = _world(motion.get("position", []))
    body, why_body = _body(forces + moments + motion.get("euler", []))
    if not world:
        world = "NED" if body == "FRD" else "NWU"
        profile.guessed.append(f"its world frame is taken as {world}: the position's descriptions do not say")
    else:
        profile.read.append(f"world {world} ({why})")
    p["world"], p["body"] = world, body
    if body == "FLU":
        profile.read.append(f"body axes x forward, y port, z up ({why_body})")
    else:
        profile.guessed.append("its body axes are taken as x forward, y starboard, z down (FRD)")
    for role, key in (("velocity", "velocity_axes"), ("angular_velocity", "angular_velocity_axes"),
                      ("angular_acceleration", "angular_acceleration_axes")):
        if role in motion:
            p[key] = _axes_of(motion[role])
    if "acceleration" in motion:
        derivative = any("dot" in v.name.lower() or "deriv" in (v.description or "").lower()
                         for v in motion["acceleration"])
        p["acceleration_axes"] = "body_derivative" if derivative else _axes_of(motion["acceleration"])
        if derivative:
            profile.read.append("accelerations are nu' (time derivatives of the body velocities)")
    p["load_axes"] = "body"
    profile.read.append("the generalised force in body axes at its origin")
    _common(profile, motion, forces, moments)
    profile.todo.append("set origin[0..2] to its world origin in our NED frame")
    return profile


def _manoeuvring(md, c, planar, yaw) -> Profile:
    profile = Profile("manoeuvring_3dof", "3-DOF manoeuvring model (surge, sway, yaw): no heave, roll or pitch",
                      "manoeuvring_seakeeping")
    p = profile.parameters
    position = _complete(c.get(("output", "length"), {}), (0, 1))
    heading = _complete(c.get(("output", "angle"), {}), (2,))
    velocity = _complete(c.get(("output", "velocity"), {}), (0, 1))
    rate = _complete(c.get(("output", "angular_velocity"), {}), (2,))
    acceleration = _complete(c.get(("output", "acceleration"), {}), (0, 1))
    yaw_acc = _complete(c.get(("output", "angular_acceleration"), {}), (2,))
    world, why = _world(position or [])
    body, _ = _body(planar + [yaw] + (position or []))
    if not world:
        world = "NED" if body == "FRD" else "NWU"
        profile.guessed.append(f"its horizontal axes are taken as {world}")
    p["world"], p["body"] = world, body
    if heading:
        p["angle_unit"] = "deg" if _unit(heading[0]) in ("deg", "degree", "degrees") else "rad"
    if velocity:
        p["velocity_axes"] = _axes_of(velocity)
    if acceleration:
        derivative = any("dot" in v.name.lower() for v in acceleration)
        p["acceleration_axes"] = "body_derivative" if derivative else _axes_of(acceleration)
    p["load_axes"] = _axes_of(planar)
    p["force_unit"] = FORCE_UNIT.get(_unit(planar[0]) or "N", "N")
    p["moment_unit"] = MOMENT_UNIT.get(_unit(yaw) or "N.m", "N.m")
    m = "manoeuvring."
    for role, variables in (("position", position), ("velocity", velocity), ("acceleration", acceleration)):
        if variables:
            profile.into_adapter += [(v.name, f"{m}{role}[{i}]") for i, v in enumerate(variables)]
    for role, variables in (("yaw", heading), ("yaw_rate", rate), ("yaw_acceleration", yaw_acc)):
        if variables:
            profile.into_adapter.append((variables[0].name, m + role))
    profile.from_adapter += [(f"{m}force[{i}]", v.name) for i, v in enumerate(planar)]
    profile.from_adapter.append((f"{m}moment", yaw.name))
    profile.read.append(f"world {world}, body {body}, force in {p['force_unit']}, yaw moment in {p['moment_unit']}")
    profile.todo.append("a seakeeping model gives heave, roll and pitch: e.g. Ship.fmu with a hardpoint at this "
                        "model's reference point: connect ship.hardpointK.{position, quaternion, velocity, "
                        "angular_velocity, acceleration, angular_acceleration} -> hull.seakeeping.* and "
                        "hull.seakeeping.{force, moment} -> ship.hardpointK.{force, moment}")
    profile.todo.append("connect hull.point1.* -> crane.base.* and crane.base.{force, moment} -> hull.point1.*; set "
                        "point1.lever (our body axes from the reference point) and origin[0..1]")
    return profile
