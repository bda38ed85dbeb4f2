"""Port adapters: components of a system that the master evaluates itself, between FMUs, to join
mechanical ports of different conventions (docs/cosimulation.md, "Port adapters"; docs/ship_swap.md).

What OSP's ``LinearTransformation`` and ``VectorSum`` functions are for signals, adapters are for
rigid-body ports: they move a motion from one point of a body to another, a wrench (force and
moment about a point) back to where another model takes it, and convert frames (NED, ENU, z up;
body x forward, y starboard or port), attitudes (Euler angles of any sequence, in rad or deg, or a
quaternion) and units exactly, at any angle. The power F.v + M.w a port carries is the same on both
sides of an adapter.

An adapter is an ordinary component of the system model (``Component.adapter`` names its kind,
``Component.source`` is None) with start values and connections like an FMU's: in SSP an
``ssd:Component type="application/x-marine-cosim-adapter" source="<kind>"``, in OSP a ``Simulator``
with ``source="marine-cosim-adapter:<kind>"``. This module holds the kinds' interfaces -- their
parameters and ports (name, causality, type, unit, frame in the description, the outputs'
direct-feedthrough dependencies) -- as an FMPy ``ModelDescription``, so that validation, recording,
start values and the file readers see an adapter as they see an FMU. The master evaluates them
(orchestration.master.adapters). Some parameters shape the interface (``attitude``, the units,
``points``): the interface is built from a component's start values.

Kinds (each parameter and port is listed by ``marine-cosim info adapter:<kind>``):

* ``rigid_body``: a body's port as another model gives it -- the motion of its reference point in
  its conventions in, the resultant wrench out in its conventions -- and points 1..N on the body in
  ours, each with its motion out (position, quaternion, velocity, angular velocity, acceleration,
  angular acceleration: NED) and its load in (force, moment about the point: NED). Rigid-body
  kinematics p_k = p + R r_k, v_k = v + w x R r_k, a_k = a + dw x R r_k + w x (w x R r_k), and its
  dual F = sum F_k, M = sum (M_k + R r_k x F_k) (e.g. Fossen 2011, eq. 2.98 ff.), so the power is the
  same on both sides: F.v + M.w = sum (F_k.v_k + M_k.w);
* ``manoeuvring_seakeeping``: one hull from two models, a 3-DOF manoeuvring model for surge, sway
  and yaw and a seakeeping model for heave, roll and pitch: the pose eta = (x, y, z, phi, theta,
  psi) of the reference point takes x, y, psi from the one and z, phi, theta from the other; the
  points' wrenches become the generalised forces Q = J(eta)^T W, of which the manoeuvring model gets
  those of x, y, psi and the seakeeping model a wrench whose generalised forces in its own
  coordinates are those of z, phi, theta. The power splits exactly: sum W_k.V_k = P_manoeuvring +
  P_seakeeping.

* ``sum``: OSP's ``Sum`` and ``VectorSum`` functions (libcosim's ``vector_sum`` function): ``inputs``
  inputs of ``dimension`` elements, out[j] = sum over i of in[i][j] (scalars in[i] and out for
  dimension 1). The OSP reader makes one of each such function.

Motion and load of a port pass through one adapter (not a motion adapter and a load adapter), so
the adapter keeps the port's power by itself, and a power bond (two components, one each side)
joins a model's port to the adapter's.
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
MAX_POINTS = 16

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


# ---------------------------------------------------------------------- points on the body (ours)

def _points(values: Mapping[str, Any]) -> int:
    n = values.get("points", 1)
    if isinstance(n, bool) or not isinstance(n, (int, float)) or n != int(n) or not 1 <= int(n) <= MAX_POINTS:
        raise AdapterError(f"points = {n!r} must be a whole number from 1 to {MAX_POINTS}")
    return int(n)


def _point_parameters(values: Mapping[str, Any], reference: str) -> list[Parameter]:
    params = [Parameter("points", "Integer", 1, f"Number of points on the body (1..{MAX_POINTS}): ports point1 ... "
                        "pointN", structural=True)]
    for k in range(1, _points(values) + 1):
        params += _real_vector(f"point{k}.lever", f"Point {k} relative to {reference}, our body axes (x forward, "
                                                  "y starboard, z down)")
    return params


_MOTION = ("position", "velocity", "angular_velocity", "acceleration", "angular_acceleration")


def _point_ports(p: Mapping[str, Any], motion: tuple[str, ...], attitude: tuple[str, ...],
                 rates: tuple[str, ...]) -> list[Port]:
    """Each point's motion out (ours, NED) and load in (ours, NED, moment about the point).
    ``motion``: every input the motion depends on; ``attitude``, ``rates``: those its position and
    attitude, and its angular velocity depend on."""
    ports = []
    for k in range(1, _points(p) + 1):
        pk = f"point{k}"
        ports += [Port(n, "output", "m", f"Position of point {k}, NED", attitude) for n in _vector(f"{pk}.position")]
        ports += [Port(n, "output", "1", "Attitude quaternion (w, x, y, z), body (x forward, y starboard, z down) "
                       "to NED", attitude) for n in _vector(f"{pk}.quaternion", 4)]
        ports += [Port(n, "output", "m/s", f"Velocity of point {k}, NED", motion) for n in _vector(f"{pk}.velocity")]
        ports += [Port(n, "output", "rad/s", "Angular velocity, NED", rates)
                  for n in _vector(f"{pk}.angular_velocity")]
        ports += [Port(n, "output", "m/s2", f"Acceleration of point {k}, NED", motion)
                  for n in _vector(f"{pk}.acceleration")]
        ports += [Port(n, "output", "rad/s2", "Angular acceleration, NED", motion)
                  for n in _vector(f"{pk}.angular_acceleration")]
        ports += [Port(n, "input", "N", f"Force on the body at point {k}, NED") for n in _vector(f"{pk}.force")]
        ports += [Port(n, "input", "N.m", f"Moment on the body about point {k}, NED") for n in _vector(f"{pk}.moment")]
    return ports


def _point_loads(p: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(n for k in range(1, _points(p) + 1) for w in ("force", "moment") for n in _vector(f"point{k}.{w}"))


# ---------------------------------------------------------------------- rigid_body

def _rigid_body_parameters(values: Mapping[str, Any]) -> list[Parameter]:
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
        Parameter("load_axes", "String", "world", "Axes of the force and moment it takes: world or body",
                  choices=("world", "body")),
        Parameter("force_unit", "String", "N", "Unit of the force it takes", choices=tuple(FORCE_UNITS),
                  structural=True),
        Parameter("moment_unit", "String", "N.m", "Unit of the moment it takes", choices=tuple(MOMENT_UNITS),
                  structural=True),
        *_real_vector("origin", "Its world origin in ours (NED)"),
        *_point_parameters(values, "its reference point"),
    ]


def _rigid_body_ports(p: Mapping[str, Any]) -> list[Port]:
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
    fu, mu = p.get("force_unit", "N"), p.get("moment_unit", "N.m")
    loads = _point_loads(p)
    ports += [Port(n, "output", fu, "Sum of the forces on the body (load_axes)", loads + att)
              for n in _vector("reference.force")]
    ports += [Port(n, "output", mu, "Sum of the moments about its reference point (load_axes)", loads + att)
              for n in _vector("reference.moment")]
    # conservative dependencies: what an output may depend on under any axes setting (they are part of
    # the interface, which only the structural parameters shape)
    motion = tuple(n for w in _MOTION for n in ref[w]) + att
    return ports + _point_ports(p, motion, ref["position"] + att, ref["angular_velocity"] + att)


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
        Parameter("load_axes", "String", "body", "Axes of the force it takes: body (X, Y) or world",
                  choices=("world", "body")),
        Parameter("force_unit", "String", "N", "Unit of the force it takes", choices=tuple(FORCE_UNITS),
                  structural=True),
        Parameter("moment_unit", "String", "N.m", "Unit of the yaw moment it takes", choices=tuple(MOMENT_UNITS),
                  structural=True),
        Parameter("origin[0]", "Real", 0.0, "Its world origin in ours, north", "m"),
        Parameter("origin[1]", "Real", 0.0, "Its world origin in ours, east", "m"),
        *_point_parameters(values, "the reference point (the point both models move)"),
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
    motion = tuple(x.name for x in m_in + s_in)
    loads = _point_loads(p) + tuple(_vector(s + "quaternion", 4)) + (m + "yaw",)
    outputs = ([Port(n, "output", fu, "Force for the manoeuvring model (load_axes): the generalised forces of "
                     "x and y", loads) for n in _vector(m + "force", 2)]
               + [Port(m + "moment", "output", mu, "Yaw moment for the manoeuvring model: the generalised force of "
                       "psi", loads)]
               + [Port(n, "output", "N", "Force for the seakeeping model at the reference point, NED", loads)
                  for n in _vector(s + "force")]
               + [Port(n, "output", "N.m", "Moment for the seakeeping model about the reference point, NED", loads)
                  for n in _vector(s + "moment")])
    return m_in + s_in + outputs + _point_ports(p, motion, motion, motion)


# ---------------------------------------------------------------------- sum (OSP's Sum and VectorSum)

MAX_SUM_INPUTS = 64
MAX_SUM_DIMENSION = 64


def _whole(values: Mapping[str, Any], name: str, default: int, top: int) -> int:
    n = values.get(name, default)
    if isinstance(n, bool) or not isinstance(n, (int, float)) or n != int(n) or not 1 <= int(n) <= top:
        raise AdapterError(f"{name} = {n!r} must be a whole number from 1 to {top}")
    return int(n)


def _sum_parameters(values: Mapping[str, Any]) -> list[Parameter]:
    n = _whole(values, "inputs", 2, MAX_SUM_INPUTS)
    d = _whole(values, "dimension", 1, MAX_SUM_DIMENSION)
    return [Parameter("inputs", "Integer", n, f"Number of inputs summed (1..{MAX_SUM_INPUTS}): in[0] ...",
                      structural=True),
            Parameter("dimension", "Integer", d, f"Size of each input and of the output (1..{MAX_SUM_DIMENSION}): "
                                                 "1 for scalars in[i] and out, else in[i][j] and out[j]",
                      structural=True)]


def _sum_ports(p: Mapping[str, Any]) -> list[Port]:
    n, d = _whole(p, "inputs", 2, MAX_SUM_INPUTS), _whole(p, "dimension", 1, MAX_SUM_DIMENSION)
    names = [[f"in[{i}]"] if d == 1 else [f"in[{i}][{j}]" for j in range(d)] for i in range(n)]
    inputs = [Port(name, "input", "", f"Input {i} (any unit; all the same)")
              for i, group in enumerate(names) for name in group]
    outputs = [Port("out" if d == 1 else f"out[{j}]", "output", "", "The sum of the inputs (their unit)",
                    tuple(group[j] for group in names)) for j in range(d)]
    return inputs + outputs


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("rigid_body", "a rigid body's port in another model's conventions (its reference point's motion in, the "
                       "resultant wrench out) and points on the body in ours (their motion out, loads in)",
         _rigid_body_parameters, _rigid_body_ports),
    Kind("manoeuvring_seakeeping", "one hull from a 3-DOF manoeuvring model (surge, sway, yaw) and a seakeeping "
                                   "model (heave, roll, pitch), loads split by generalised forces; points on the "
                                   "hull in ours", _manoeuvring_parameters, _manoeuvring_ports),
    Kind("sum", "the sum of its inputs, scalars or vectors of one size (OSP's Sum and VectorSum functions: "
                "out = in[0] + in[1] + ..., out[j] = in[0][j] + in[1][j] + ...)", _sum_parameters, _sum_ports),
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
    if kind_name == "manoeuvring_seakeeping":
        world, body = values.get("world", "NED"), values.get("body", "FRD")
        if (world == "NED") != (body == "FRD"):
            raise AdapterError(f"world = {world!r} with body = {body!r}: a 3-DOF model's heading and yaw rate turn "
                               "about one vertical, so NED goes with FRD (z down) and ENU or NWU with FLU (z up)")
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
                                variability="continuous", description=port.description, unit=port.unit or None,
                                start="1.0" if port.name.endswith("quaternion[0]") else "0.0")
        else:
            sv = ScalarVariable(name=port.name, valueReference=next(counter), type="Real", causality="output",
                                variability="continuous", initial="calculated", description=port.description,
                                unit=port.unit or None)
        md.modelVariables.append(sv)
        by_name[port.name] = sv
        if port.unit:
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
