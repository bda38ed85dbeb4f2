"""Port adapters: components of a system that the master evaluates itself, between FMUs, to join
mechanical ports of different conventions (docs/cosimulation.md, "Port adapters"; docs/ship_swap.md).

What OSP's ``LinearTransformation`` and ``VectorSum`` functions are for signals, adapters are for
rigid-body ports: they move a motion from one point of a body to another, a wrench (force and
moment about a point) back to where another model takes it, and convert frames (NED, ENU, z up;
body x forward, y starboard or port), attitudes (Euler angles of any sequence, in rad or deg, or a
quaternion) and units exactly, at any angle. The power F.v + M.w a port carries is the same on both
sides of an adapter pair.

An adapter is an ordinary component of the system model (``Component.adapter`` names its kind,
``Component.source`` is None) with start values and connections like an FMU's: in SSP an
``ssd:Component type="application/x-marine-cosim-adapter" source="<kind>"``, in OSP a ``Simulator``
with ``source="marine-cosim-adapter:<kind>"``. This module holds the kinds' interfaces -- their
parameters and ports (name, causality, type, unit, frame in the description, the outputs'
direct-feedthrough dependencies) -- as an FMPy ``ModelDescription``, so that validation, recording,
start values and the file readers see an adapter as they see an FMU. The master evaluates them
(orchestration.master.adapters). Some parameters shape the interface (``attitude``, the units,
``loads``): the interface is built from a component's start values.

Kinds (each parameter and port is listed by ``marine-cosim info adapter:<kind>``):

* ``rigid_motion``: the motion of a point of a body (position, quaternion, velocity, angular
  velocity, acceleration, angular acceleration; ours) from the motion of the body's reference point
  in another model's conventions: p_A = p + R r, v_A = v + w x R r,
  a_A = a + dw x R r + w x (w x R r) (rigid-body kinematics, e.g. Fossen 2011 eq. 2.98 ff.);
* ``wrench``: the dual: wrenches (force, moment about their point; ours) at points A_k of the body,
  summed and moved to its reference point, F = sum F_k, M = sum (M_k + R r_k x F_k), out in the other
  model's conventions. A ``rigid_motion`` and a ``wrench`` with the same conventions and levers
  keep the power: F.v + M.w = sum (F_k.v_k + M_k.w);
* ``manoeuvring_seakeeping``: one hull from two models, a 3-DOF manoeuvring model for surge, sway
  and yaw and a seakeeping model for heave, roll and pitch: the pose eta = (x, y, z, phi, theta,
  psi) takes x, y, psi from the one and z, phi, theta from the other; a wrench on the hull becomes
  the generalised forces Q = J(eta)^T W, of which the manoeuvring model gets those of x, y, psi
  and the seakeeping model a wrench whose generalised forces in its own coordinates are those of
  z, phi, theta. The power splits exactly: W.V = P_manoeuvring + P_seakeeping.
"""
from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from fmpy.model_description import BaseUnit, CoSimulation, ModelDescription, ScalarVariable, Unit, Unknown

ADAPTER_TYPE = "application/x-marine-cosim-adapter"
#: the OSP Simulator source of an adapter: "marine-cosim-adapter:<kind>"
OSP_SCHEME = "marine-cosim-adapter"

WORLDS = ("NED", "ENU", "NWU")
BODIES = ("FRD", "FLU")
ANGLE_UNITS = {"rad": 1.0, "deg": math.pi / 180.0}
FORCE_UNITS = {"N": 1.0, "kN": 1e3, "MN": 1e6}
MOMENT_UNITS = {"N.m": 1.0, "kN.m": 1e3, "MN.m": 1e6}
MAX_LOADS = 16

# units the interfaces use: name -> (kg, m, s, rad exponents, factor)
_UNITS = {"1": (0, 0, 0, 0, 1.0), "m": (0, 1, 0, 0, 1.0), "m/s": (0, 1, -1, 0, 1.0), "m/s2": (0, 1, -2, 0, 1.0),
          "rad": (0, 0, 0, 1, 1.0), "rad/s": (0, 0, -1, 1, 1.0), "rad/s2": (0, 0, -2, 1, 1.0),
          "deg": (0, 0, 0, 1, math.pi / 180.0), "deg/s": (0, 0, -1, 1, math.pi / 180.0),
          "deg/s2": (0, 0, -2, 1, math.pi / 180.0), "N": (1, 1, -2, 0, 1.0), "kN": (1, 1, -2, 0, 1e3),
          "MN": (1, 1, -2, 0, 1e6), "N.m": (1, 2, -2, 0, 1.0), "kN.m": (1, 2, -2, 0, 1e3),
          "MN.m": (1, 2, -2, 0, 1e6)}


@dataclass(frozen=True)
class Parameter:
    name: str
    type: str                      # Real, Integer, String
    default: Any
    description: str
    unit: str | None = None
    choices: tuple | None = None
    structural: bool = False       # shapes the interface (names, units, number of ports)


@dataclass(frozen=True)
class Port:
    """One scalar input or output."""

    name: str
    causality: str
    unit: str
    description: str
    depends: tuple[str, ...] = ()  # outputs: the inputs they depend on directly


@dataclass(frozen=True)
class Kind:
    name: str
    summary: str
    parameters: Callable[[Mapping[str, Any]], list[Parameter]]
    ports: Callable[[Mapping[str, Any]], list[Port]]


class AdapterError(ValueError):
    """A kind or parameter value that makes no adapter (the caller names the file and element)."""


# ---------------------------------------------------------------------- shared pieces

def _vector(name: str, n: int = 3) -> list[str]:
    return [f"{name}[{i}]" for i in range(n)]


def _real_vector(name: str, description: str, unit: str = "m") -> list[Parameter]:
    return [Parameter(v, "Real", 0.0, description, unit) for v in _vector(name)]


def _angle_units(p: Mapping[str, Any]) -> tuple[str, str, str]:
    u = p.get("angle_unit", "rad")
    return u, f"{u}/s", f"{u}/s2"


def _conventions() -> list[Parameter]:
    """The frame conventions of the other model's motion and attitude."""
    return [
        Parameter("world", "String", "NED", "Its world axes for position, velocity and acceleration: NED (x north, "
                  "y east, z down), ENU (x east, y north, z up) or NWU (x north, y west, z up)", choices=WORLDS),
        Parameter("attitude_world", "String", "", "The world axes its attitude rotates into, if not those of "
                  "world (e.g. OSP vessels: displacements NED, angles in a z-up frame)", choices=("",) + WORLDS),
        Parameter("body", "String", "FRD", "Its body axes: FRD (x forward, y starboard, z down) or FLU (x forward, "
                  "y port, z up)", choices=BODIES),
        Parameter("attitude", "String", "quaternion", "Its attitude as Euler angles (reference.euler[0..2]) or a "
                  "quaternion (reference.quaternion[0..3]), rotating its body axes into its world axes",
                  choices=("euler", "quaternion"), structural=True),
        Parameter("euler_sequence", "String", "zyx", "Intrinsic sequence of the Euler angles, e.g. zyx: R = "
                  "Rz(yaw) Ry(pitch) Rx(roll); the angles are given per body axis (about x, y, z)"),
        Parameter("quaternion_order", "String", "wxyz", "Order of its quaternion's elements",
                  choices=("wxyz", "xyzw")),
        Parameter("angle_unit", "String", "rad", "Unit of its angles (and rates: /s, /s2)",
                  choices=tuple(ANGLE_UNITS), structural=True),
    ]


def _attitude_ports(p: Mapping[str, Any], prefix: str = "reference") -> list[Port]:
    angle, _, _ = _angle_units(p)
    if p.get("attitude", "quaternion") == "euler":
        return [Port(f"{prefix}.euler[{i}]", "input", angle, f"Its Euler angle about its body {a} axis "
                     f"({role}), in the sequence euler_sequence") for i, (a, role) in
                enumerate(zip("xyz", ("roll", "pitch", "yaw")))]
    order = p.get("quaternion_order", "wxyz")
    return [Port(f"{prefix}.quaternion[{i}]", "input", "1", f"Its attitude quaternion, element {order[i]} "
                 "(its body axes into its world axes)") for i in range(4)]


def _check(kind: str, params: list[Parameter], values: Mapping[str, Any]) -> None:
    known = {p.name: p for p in params}
    for name, value in values.items():
        p = known.get(name)
        if p is None:
            continue                     # unknown names are reported by validation with close matches
        if p.choices is not None and value not in p.choices:
            raise AdapterError(f"{name} = {value!r} is not one of {', '.join(repr(c) for c in p.choices)}")
    sequence = values.get("euler_sequence")
    if sequence is not None and (len(sequence) != 3 or set(sequence) != {"x", "y", "z"}):
        raise AdapterError(f"euler_sequence = {sequence!r} is not a sequence of the three axes x, y, z (e.g. 'zyx')")


# ---------------------------------------------------------------------- rigid_motion

def _rigid_motion_parameters(values: Mapping[str, Any]) -> list[Parameter]:
    return _conventions() + [
        Parameter("velocity_axes", "String", "world", "Axes of its velocity: world or body",
                  choices=("world", "body")),
        Parameter("angular_velocity_axes", "String", "world", "Axes of its angular velocity: world or body",
                  choices=("world", "body")),
        Parameter("acceleration_axes", "String", "world", "Its acceleration: world or body (the acceleration in "
                  "body axes) or body_derivative (the time derivative of the body-axis velocity, nu' of "
                  "Fossen's models: a = R (nu' + w x v))", choices=("world", "body", "body_derivative")),
        Parameter("angular_acceleration_axes", "String", "world", "Axes of its angular acceleration: world or body",
                  choices=("world", "body")),
        *_real_vector("origin", "Its world origin in ours (NED)"),
        *_real_vector("lever", "The point relative to its reference point, our body axes (x forward, y starboard, "
                               "z down)"),
    ]


_MOTION = ("position", "velocity", "angular_velocity", "acceleration", "angular_acceleration")


def _rigid_motion_ports(p: Mapping[str, Any]) -> list[Port]:
    angle, rate, acc = _angle_units(p)
    attitude = _attitude_ports(p)
    att = tuple(a.name for a in attitude)
    ref = {w: tuple(_vector(f"reference.{w}")) for w in _MOTION}
    ports = [Port(n, "input", "m", "Position of its reference point, its world axes") for n in ref["position"]]
    ports += attitude
    ports += [Port(n, "input", "m/s", "Velocity of its reference point (velocity_axes)") for n in ref["velocity"]]
    ports += [Port(n, "input", rate, "Its angular velocity (angular_velocity_axes)") for n in ref["angular_velocity"]]
    ports += [Port(n, "input", "m/s2", "Acceleration of its reference point (acceleration_axes)")
              for n in ref["acceleration"]]
    ports += [Port(n, "input", acc, "Its angular acceleration (angular_acceleration_axes)")
              for n in ref["angular_acceleration"]]
    # conservative: what an output may depend on under any axes setting (the dependencies are part of
    # the interface, which only the structural parameters shape)
    deps_w = ref["angular_velocity"] + att
    deps_v = ref["velocity"] + deps_w
    deps_dw = ref["angular_acceleration"] + att
    deps_a = ref["acceleration"] + deps_dw + deps_v
    out = {"position": ("m", "Position of the point", ref["position"] + att),
           "velocity": ("m/s", "Velocity of the point", deps_v),
           "angular_velocity": ("rad/s", "Angular velocity", deps_w),
           "acceleration": ("m/s2", "Acceleration of the point", deps_a),
           "angular_acceleration": ("rad/s2", "Angular acceleration", deps_dw)}
    for w in ("position",):
        unit, text, deps = out[w]
        ports += [Port(n, "output", unit, f"{text}, NED", tuple(dict.fromkeys(deps))) for n in _vector(f"point.{w}")]
    ports += [Port(f"point.quaternion[{i}]", "output", "1", "Attitude quaternion (w, x, y, z), body (x forward, "
                   "y starboard, z down) to NED", att) for i in range(4)]
    for w in _MOTION[1:]:
        unit, text, deps = out[w]
        ports += [Port(n, "output", unit, f"{text}, NED", tuple(dict.fromkeys(deps))) for n in _vector(f"point.{w}")]
    return ports


# ---------------------------------------------------------------------- wrench

def _loads(values: Mapping[str, Any]) -> int:
    n = values.get("loads", 1)
    if isinstance(n, bool) or not isinstance(n, (int, float)) or n != int(n) or not 1 <= int(n) <= MAX_LOADS:
        raise AdapterError(f"loads = {n!r} must be a whole number from 1 to {MAX_LOADS}")
    return int(n)


def _wrench_parameters(values: Mapping[str, Any]) -> list[Parameter]:
    params = _conventions() + [
        Parameter("axes", "String", "world", "Axes of the force and moment it takes: world or body",
                  choices=("world", "body")),
        Parameter("force_unit", "String", "N", "Unit of the force it takes", choices=tuple(FORCE_UNITS),
                  structural=True),
        Parameter("moment_unit", "String", "N.m", "Unit of the moment it takes", choices=tuple(MOMENT_UNITS),
                  structural=True),
        Parameter("loads", "Integer", 1, f"Number of wrenches summed (1..{MAX_LOADS}): inputs load1 ... loadN",
                  structural=True),
    ]
    for k in range(1, _loads(values) + 1):
        params += _real_vector(f"load{k}.lever", f"Where load {k} acts, relative to its reference point, our body "
                                                 "axes (x forward, y starboard, z down)")
    return params


def _wrench_ports(p: Mapping[str, Any]) -> list[Port]:
    attitude = _attitude_ports(p)
    att = tuple(a.name for a in attitude)
    ports = list(attitude)
    forces: tuple[str, ...] = ()
    everything: tuple[str, ...] = ()
    for k in range(1, _loads(p) + 1):
        ports += [Port(n, "input", "N", f"Force of load {k}, NED") for n in _vector(f"load{k}.force")]
        ports += [Port(n, "input", "N.m", f"Moment of load {k} about its point, NED")
                  for n in _vector(f"load{k}.moment")]
        forces += tuple(_vector(f"load{k}.force"))
        everything += tuple(_vector(f"load{k}.force")) + tuple(_vector(f"load{k}.moment"))
    fu, mu = p.get("force_unit", "N"), p.get("moment_unit", "N.m")
    ports += [Port(n, "output", fu, "Sum of the forces (axes)", forces + att)
              for n in _vector("reference.force")]
    ports += [Port(n, "output", mu, "Sum of the moments about its reference point (axes)", everything + att)
              for n in _vector("reference.moment")]
    return ports


# ---------------------------------------------------------------------- manoeuvring_seakeeping

def _manoeuvring_parameters(values: Mapping[str, Any]) -> list[Parameter]:
    return [
        Parameter("world", "String", "NED", "The manoeuvring model's horizontal axes: NED (x north, y east), ENU "
                  "(x east, y north; yaw counter-clockwise from east) or NWU (x north, y west; yaw counter-clockwise)",
                  choices=WORLDS),
        Parameter("body", "String", "FRD", "The manoeuvring model's body axes: FRD (y starboard, yaw rate positive "
                  "bow to starboard) or FLU (y port, yaw rate positive bow to port)", choices=BODIES),
        Parameter("angle_unit", "String", "rad", "Unit of its yaw (and rates: /s, /s2)", choices=tuple(ANGLE_UNITS),
                  structural=True),
        Parameter("velocity_axes", "String", "body", "Axes of its velocity: body (u, v) or world",
                  choices=("world", "body")),
        Parameter("acceleration_axes", "String", "body_derivative", "Its acceleration: world, body, or "
                  "body_derivative (u', v': a = R (u' - r v, v' + r u))", choices=("world", "body", "body_derivative")),
        Parameter("force_unit", "String", "N", "Unit of the force it takes", choices=tuple(FORCE_UNITS),
                  structural=True),
        Parameter("moment_unit", "String", "N.m", "Unit of the yaw moment it takes", choices=tuple(MOMENT_UNITS),
                  structural=True),
        Parameter("load_axes", "String", "body", "Axes of the force it takes: body (X, Y) or world",
                  choices=("world", "body")),
        Parameter("origin[0]", "Real", 0.0, "Its world origin in ours, north", "m"),
        Parameter("origin[1]", "Real", 0.0, "Its world origin in ours, east", "m"),
        *_real_vector("lever", "The point relative to the reference point (the point both models move), our body "
                               "axes (x forward, y starboard, z down)"),
    ]


def _manoeuvring_ports(p: Mapping[str, Any]) -> list[Port]:
    angle, rate, acc = _angle_units(p)
    fu, mu = p.get("force_unit", "N"), p.get("moment_unit", "N.m")
    m = "manoeuvring."
    m_in = ([Port(n, "input", "m", "Its horizontal position (world)") for n in _vector(m + "position", 2)]
            + [Port(m + "yaw", "input", angle, "Its heading")]
            + [Port(n, "input", "m/s", "Its horizontal velocity (velocity_axes)") for n in _vector(m + "velocity", 2)]
            + [Port(m + "yaw_rate", "input", rate, "Its yaw rate")]
            + [Port(n, "input", "m/s2", "Its horizontal acceleration (acceleration_axes)")
               for n in _vector(m + "acceleration", 2)]
            + [Port(m + "yaw_acceleration", "input", acc, "Its yaw acceleration")])
    s = "seakeeping."
    s_in = ([Port(n, "input", "m", "Position of the reference point in the seakeeping model, NED")
             for n in _vector(s + "position")]
            + [Port(n, "input", "1", "Attitude quaternion (w, x, y, z) in the seakeeping model, body to NED")
               for n in _vector(s + "quaternion", 4)]
            + [Port(n, "input", "m/s", "Velocity of the reference point in the seakeeping model, NED")
               for n in _vector(s + "velocity")]
            + [Port(n, "input", "rad/s", "Angular velocity in the seakeeping model, NED")
               for n in _vector(s + "angular_velocity")]
            + [Port(n, "input", "m/s2", "Acceleration of the reference point in the seakeeping model, NED")
               for n in _vector(s + "acceleration")]
            + [Port(n, "input", "rad/s2", "Angular acceleration in the seakeeping model, NED")
               for n in _vector(s + "angular_acceleration")])
    loads = ([Port(n, "input", "N", "Force on the hull at the point, NED") for n in _vector("point.force")]
             + [Port(n, "input", "N.m", "Moment on the hull about the point, NED") for n in _vector("point.moment")])
    inputs = tuple(x.name for x in m_in + s_in + loads)
    motion = tuple(x.name for x in m_in + s_in)
    outputs = ([Port(n, "output", "m", "Position of the point, NED", motion) for n in _vector("point.position")]
               + [Port(n, "output", "1", "Attitude quaternion (w, x, y, z), body to NED", motion)
                  for n in _vector("point.quaternion", 4)]
               + [Port(n, "output", "m/s", "Velocity of the point, NED", motion) for n in _vector("point.velocity")]
               + [Port(n, "output", "rad/s", "Angular velocity, NED", motion)
                  for n in _vector("point.angular_velocity")]
               + [Port(n, "output", "m/s2", "Acceleration of the point, NED", motion)
                  for n in _vector("point.acceleration")]
               + [Port(n, "output", "rad/s2", "Angular acceleration, NED", motion)
                  for n in _vector("point.angular_acceleration")]
               + [Port(n, "output", fu, "Force for the manoeuvring model (load_axes): the generalised forces of "
                       "x and y", inputs) for n in _vector(m + "force", 2)]
               + [Port(m + "moment", "output", mu, "Yaw moment for the manoeuvring model: the generalised force of "
                       "psi", inputs)]
               + [Port(n, "output", "N", "Force for the seakeeping model at the reference point, NED", inputs)
                  for n in _vector(s + "force")]
               + [Port(n, "output", "N.m", "Moment for the seakeeping model about the reference point, NED", inputs)
                  for n in _vector(s + "moment")])
    return m_in + s_in + loads + outputs


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("rigid_motion", "the motion of a point of a body from its reference point's motion in another model's "
                         "conventions (ours out: NED, body FRD, quaternion)", _rigid_motion_parameters,
         _rigid_motion_ports),
    Kind("wrench", "wrenches at points of a body (ours) summed and moved to its reference point, out in another "
                   "model's conventions", _wrench_parameters, _wrench_ports),
    Kind("manoeuvring_seakeeping", "one hull from a 3-DOF manoeuvring model (surge, sway, yaw) and a seakeeping "
                                   "model (heave, roll, pitch), loads split by generalised forces",
         _manoeuvring_parameters, _manoeuvring_ports),
)}


# ---------------------------------------------------------------------- the interface as a ModelDescription

def kind(name: str) -> Kind:
    if name not in KINDS:
        from orchestration.errors import did_you_mean

        raise AdapterError(f"unknown adapter kind {name!r}{did_you_mean(name, KINDS)} (kinds: {', '.join(KINDS)})")
    return KINDS[name]


def parameters(kind_name: str, values: Mapping[str, Any] | None = None) -> list[Parameter]:
    """The parameters of an adapter of ``kind_name`` with start values ``values`` (the structural ones
    decide e.g. how many levers there are). Raises AdapterError for an unknown kind or a value that
    is not one of a parameter's choices."""
    values = dict(values or {})
    params = kind(kind_name).parameters(values)
    _check(kind_name, params, values)
    return params


def _structural_key(kind_name: str, values: Mapping[str, Any]) -> tuple:
    params = kind(kind_name).parameters(values)
    structural = sorted(p.name for p in params if p.structural)
    return tuple((n, values[n]) for n in structural if n in values)


def adapter_description(kind_name: str, values: Mapping[str, Any] | None = None) -> ModelDescription:
    """The interface of an adapter as an FMPy ModelDescription (FMI 2.0 semantics: causality,
    variability, units, output dependencies), for the start values ``values``. Raises AdapterError."""
    values = dict(values or {})
    parameters(kind_name, values)                     # checks the values
    return _description(kind_name, _structural_key(kind_name, values))


@functools.lru_cache(maxsize=128)
def _description(kind_name: str, structural: tuple) -> ModelDescription:
    values = dict(structural)
    k = kind(kind_name)
    md = ModelDescription(fmiVersion="2.0", modelName=f"{kind_name} adapter", description=k.summary,
                          generationTool="marine-cosim port adapter (orchestration.system.adapters)",
                          variableNamingConvention="structured")
    md.guid = f"marine-cosim-adapter:{kind_name}"
    md.coSimulation = CoSimulation(modelIdentifier=f"adapter_{kind_name}", canGetAndSetFMUstate=True,
                                   canSerializeFMUstate=True, canHandleVariableCommunicationStepSize=True)
    counter = itertools.count(1)
    used_units: set[str] = set()
    by_name: dict[str, ScalarVariable] = {}
    for p in k.parameters(values):
        start = values.get(p.name, p.default) if p.structural else p.default
        text = ("true" if start else "false") if isinstance(start, bool) else str(start)
        sv = ScalarVariable(name=p.name, valueReference=next(counter), type=p.type, causality="parameter",
                            variability="fixed", initial="exact", description=p.description, unit=p.unit,
                            start=text)
        md.modelVariables.append(sv)
        by_name[p.name] = sv
        if p.unit:
            used_units.add(p.unit)
    ports = k.ports(values)
    for port in ports:
        if port.causality == "input":
            sv = ScalarVariable(name=port.name, valueReference=next(counter), type="Real", causality="input",
                                variability="continuous", description=port.description, unit=port.unit,
                                start="1.0" if port.name.endswith("quaternion[0]") else "0.0")
        else:
            sv = ScalarVariable(name=port.name, valueReference=next(counter), type="Real", causality="output",
                                variability="continuous", initial="calculated", description=port.description,
                                unit=port.unit)
        md.modelVariables.append(sv)
        by_name[port.name] = sv
        used_units.add(port.unit)
    for index, port in enumerate(ports, 1):
        if port.causality == "output":
            md.outputs.append(Unknown(index=index, variable=by_name[port.name],
                                      dependencies=[by_name[d] for d in port.depends]))
    for name in sorted(used_units):
        kg, m, s, rad, factor = _UNITS[name]
        md.unitDefinitions.append(Unit(name=name, baseUnit=BaseUnit(kg=kg, m=m, s=s, rad=rad, factor=factor)))
    return md


def osp_source(kind_name: str) -> str:
    return f"{OSP_SCHEME}:{kind_name}"


def kind_of_osp_source(source: str) -> str | None:
    """The adapter kind an OSP Simulator source names, or None for an FMU."""
    scheme, sep, rest = source.partition(":")
    return rest if sep and scheme == OSP_SCHEME else None
