"""Check a system against its FMUs before running it.

Every problem names where it comes from (system file and element, as recorded by the reader in
``origin``), the component and the variable. Errors stop a run; warnings (unconnected inputs, loops
through FMUs that do not declare their dependencies) are reported and the run goes on.

Checks (docs/cosimulation.md, "Validation"; docs/ship_swap.md shows the messages):

* FMU files, FMI version, co-simulation interface; start values of unknown variables, outputs and
  constants (with close matches for misspelt names); every other file the system refers to (String
  start values that name files, orchestration.system.file_values; the scenario) exists;
* connections: unknown components and variables (close matches), causality (an output drives an
  input), types;
* FMI 3.0 arrays (orchestration.system.arrays): an element out of range or written ``name[i,j]``,
  a start value for a whole array (its elements take them), a start value for a structural
  parameter that sizes an array (the master keeps the modelDescription's sizes), a whole array
  connected to a scalar or to an array of another shape;
* units: a connection between different units of the same quantity must carry the conversion
  (``target = factor * source + offset``): a missing conversion, one the wrong way round or one
  applied twice is an error naming the expected factor, any other factor a warning; different
  quantities (N into m) are an error unless a factor is given (then a warning: a gain);
* vectors mapped incompletely: an input vector (``x[0..2]``, or ``.north/.east/.down``,
  ``.x/.y/.z``, ``.surge/.sway/.heave``, ``.roll/.pitch/.yaw``, ...) with two or more elements
  connected and others neither connected nor given a start value;
* one-way attachments: a component that carries another at a point (a complete position vector
  connected into it) while none of the carried component's force or moment outputs comes back
  into its force inputs (e.g. a crane on a ship whose force inputs were not mapped); start values
  on the force inputs mark such a coupling as intended. A force that comes back without the
  moment about the same point is a warning (the moment may be zero by design: a swivel);
* mechanical ports connected in part (a warning): some motion input vectors of a port (position,
  attitude, velocities, accelerations) connected and others neither connected nor given start
  values, e.g. a crane base with a position but no velocity or acceleration;
* port adapters (orchestration.system.adapters): their kind and the parameters that shape their
  interface; then every check above, on their interface as on an FMU's;
* an input connected twice; unconnected inputs (a warning); algebraic loops through
  direct-feedthrough outputs (a warning, with the cycle);
* ports without a power bond: two components that exchange a force or moment one way and a
  velocity or angular velocity the other way, on connections not marked with a power bond (a
  warning: ECCO cannot see that coupling).
"""
from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from fmpy import read_model_description

from orchestration.errors import SystemFileError, did_you_mean
from orchestration.system.file_values import FileValue
from orchestration.system.adapters import AdapterError
from orchestration.system.arrays import (ArrayElement, array_connection_problem, array_shape, element_problem,
                                         element_variables, unresolved_dimension)
from orchestration.system.fmu_info import (NUMERIC, INTEGER_RANGE, component_description, connection_problem, family,
                                           interface, no_co_simulation)
from orchestration.system.graphs import strongly_connected_components
from orchestration.system.model import Connection, System



class _Expanded:
    """An FMPy ModelDescription whose modelVariables also list the elements of its arrays
    (orchestration.system.arrays), so that every check sees them as variables."""

    def __init__(self, md):
        self._md = md
        self.modelVariables = element_variables(md)

    def __getattr__(self, name: str):
        return getattr(self._md, name)


@dataclass
class Problem:
    severity: str        # "error" | "warning"
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.severity}: {self.where}: {self.message}" if self.where else f"{self.severity}: {self.message}"


@dataclass
class ValidationReport:
    problems: list[Problem] = field(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def __str__(self) -> str:
        if not self.problems:
            return "no problems"
        return "\n".join(str(p) for p in self.problems)




def _bound(variable, attribute: str) -> float | None:
    """A variable's min or max (its own, else its declared type's), or None."""
    text = getattr(variable, attribute, None)
    if text is None and getattr(variable, "declaredType", None) is not None:
        text = getattr(variable.declaredType, attribute, None)
    try:
        return None if text is None else float(text)
    except (TypeError, ValueError):
        return None


def start_value_problem(kind: str, value, variable=None) -> str | None:
    """Why ``value`` cannot be the start value of a variable of FMI type ``kind`` (and, given the
    FMPy ``variable``, within its min and max), or None."""
    fam = family(kind)
    # not finite is the plainer fault: say it before any range, which inf would also leave
    if fam == "Real" and isinstance(value, float) and not math.isfinite(value):
        return f"{value!r} is not a finite number"
    if fam in ("Real", "Integer", "Enumeration") and variable is not None and \
            isinstance(value, (int, float)) and not isinstance(value, bool):
        lo, hi = _bound(variable, "min"), _bound(variable, "max")
        if lo is not None and value < lo or hi is not None and value > hi:
            return (f"{value!r} is outside the variable's range [{'-inf' if lo is None else f'{lo:g}'}, "
                    f"{'inf' if hi is None else f'{hi:g}'}] (its modelDescription)")
    if fam == "Real":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"{value!r} is not a number ({kind})"
        if not math.isfinite(value):
            return f"{value!r} is not a finite number"
        return None
    if fam in ("Integer", "Enumeration"):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
            return f"{value!r} is not a whole number ({kind})"
        lo, hi = INTEGER_RANGE.get(kind, INTEGER_RANGE["Integer"])
        if not lo <= int(value) <= hi:
            return f"{int(value)} is outside {kind}'s range [{lo}, {hi}]"
        return None
    if fam == "Boolean":
        return None if isinstance(value, (bool, int)) and value in (0, 1, True, False) else \
            f"{value!r} is not a Boolean (true/false)"
    if fam == "String":
        return None if isinstance(value, str) else f"{value!r} is not a String"
    return None


def _loc(system: System, origin: str) -> str:
    return origin or (Path(system.source_file).name if system.source_file else system.name)


#: more macro steps than this in one run is a mistake in the time grid, not a long simulation
MAX_STEPS = 1e8


def time_grid_problem(system: System, stop: float | None = None, step: float | None = None) -> str | None:
    """Why the run's time grid (start, ``stop`` or the file's stop time, ``step`` or the file's base
    step) cannot give results, or None: non-finite or non-positive values, a stop before the start,
    a step longer than the run (nothing would be computed), or more than MAX_STEPS steps."""
    start = system.start_time
    stop = system.stop_time if stop is None else stop
    step = system.base_step if step is None else step
    if not math.isfinite(start):
        return f"the start time {start!r} is not a finite number"
    if stop is not None:
        if not math.isfinite(stop):
            return f"the stop time {stop!r} is not a finite number"
        if stop <= start:
            return f"the stop time {stop:g} s is not after the start time {start:g} s"
    if step is not None:
        if not (math.isfinite(step) and step > 0):
            return f"the base step {step!r} is not a positive finite number"
        if stop is not None:
            n = (stop - start) / step
            if n < 1.0 - 1e-9:
                return (f"the base step {step:g} s is longer than the run ({stop - start:g} s): nothing would be "
                        "computed after the start")
            if n > MAX_STEPS:
                return (f"a base step of {step:g} s over {stop - start:g} s is {n:.3g} macro steps (more than "
                        f"{MAX_STEPS:.0e}): a mistake in the step or the stop time?")
    return None


def validate_system(system: System, stop: float | None = None, step: float | None = None) -> ValidationReport:
    """Every check ``marine-cosim run`` makes before it starts, as a report (``stop``/``step``: the
    run's, when they are not the file's)."""
    report = ValidationReport()
    add = lambda severity, where, message: report.problems.append(Problem(severity, where, message))
    if not system.components:
        add("error", _loc(system, ""), "the system has no component: nothing to run")
    grid = time_grid_problem(system, stop, step)
    if grid:
        add("error", _loc(system, ""), grid)
    missing = [what for what, value in (("stop time", system.stop_time if stop is None else stop),
                                        ("base step", system.base_step if step is None else step)) if value is None]
    if missing:
        add("warning", _loc(system, ""), f"the file sets no {' and no '.join(missing)}: give --stop and --step "
                                         "to run it")
    descriptions = {}
    for component in system.components.values():
        where = _loc(system, component.origin) + f" (component {component.name})"
        if component.adapter:
            try:
                md = component_description(component)
            except AdapterError as exc:
                add("error", where, f"{component.adapter} adapter: {exc}")
                continue
        else:
            source = Path(component.source)
            if not source.exists():
                add("error", where, f"FMU file not found: {source}")
                continue
            try:
                md = read_model_description(str(source))
            except Exception as exc:
                add("error", where, f"cannot read {source.name}: {unresolved_dimension(source) or exc}")
                continue
            if interface(md) is None:
                add("error", where, no_co_simulation(source))
                continue
            if md.fmiVersion not in ("1.0", "2.0", "3.0"):
                add("error", where, f"{source.name} is FMI {md.fmiVersion}; FMI 1.0, 2.0 and 3.0 co-simulation are "
                                    "supported")
                continue
        md = _Expanded(md)
        descriptions[component.name] = md
        variables = {v.name: v for v in md.modelVariables}
        sizing: dict[str, list[str]] = {}
        for v in md.modelVariables:
            for d in getattr(v, "dimensions", None) or ():
                if d.start is None and getattr(d, "variable", None) is not None:
                    names = sizing.setdefault(d.variable.name, [])
                    names += [] if v.name in names else [v.name]
        for name, value in component.parameters.items():
            if name not in variables:
                add("error", where, element_problem(md, name) or
                    f"start value for unknown variable {name!r}{did_you_mean(name, variables)}")
                continue
            v = variables[name]
            if getattr(v, "dimensions", None):
                add("error", where, f"{name!r} is an array variable: give start values to its elements "
                                    f"({name}[0], ..., 0-based, row-major), not to the whole array")
                continue
            if name in sizing:
                add("error", where, f"{name!r} is a structural parameter that sizes the arrays "
                                    f"{', '.join(sizing[name])}: the "
                                    "master keeps the sizes of the modelDescription's start values (it does not "
                                    "enter configuration mode), so it cannot be given a start value")
                continue
            if v.causality in ("output", "calculatedParameter", "independent") or v.variability == "constant":
                add("error", where, f"{name!r} is a {v.variability} {v.causality} and cannot be given a start value")
                continue
            problem = start_value_problem(v.type, value, v)
            if problem:
                add("error", where, f"start value of {name!r}: {problem}")
            if isinstance(value, FileValue) and not value.path.is_file():
                add("error", where, f"{name!r} = {value.written!r} names no file (looked for {value.path}: a "
                                    "relative path is taken from the system file's folder)")
        if component.step_multiple < 1 or int(component.step_multiple) != component.step_multiple:
            add("error", where, f"step multiple must be a positive integer, got {component.step_multiple!r}")

    if system.scenario is not None and not Path(system.scenario).is_file():
        add("error", _loc(system, ""), f"scenario file not found: {system.scenario}")

    connected_inputs: dict[tuple[str, str], Connection] = {}
    for c in system.connections:
        where = _loc(system, c.origin) + f" (connection {c.label()})"
        if not (math.isfinite(c.factor) and math.isfinite(c.offset)):
            add("error", where, f"the linear transformation (factor {c.factor!r}, offset {c.offset!r}) is not finite")
        ends = []
        for role, (comp, var) in (("source", c.source), ("target", c.target)):
            if comp not in system.components:
                add("error", where, f"unknown {role} component {comp!r}{did_you_mean(comp, system.components)}")
                ends.append(None)
                continue
            md = descriptions.get(comp)
            if md is None:
                ends.append(None)    # already reported
                continue
            variables = {v.name: v for v in md.modelVariables}
            if var not in variables:
                problem = element_problem(md, var)
                add("error", where, f"{comp} ({system.components[comp].display_source}): {problem}" if problem else
                    f"{comp} ({system.components[comp].display_source}) has no variable "
                    f"{var!r}{did_you_mean(var, variables)}")
                ends.append(None)
                continue
            ends.append(variables[var])
        src, dst = ends
        if src is not None and src.causality not in ("output", "calculatedParameter"):
            hint = _other_end_hint(c.source, descriptions, ("output", "calculatedParameter"), "outputs",
                                   (c.target[0], dst) if dst is not None else None)
            add("error", where, f"source {'.'.join(c.source)} is a {src.causality}, not an output: a connection "
                                f"starts at an output{hint}")
        if dst is not None and dst.causality != "input":
            hint = _other_end_hint(c.target, descriptions, ("input",), "inputs",
                                   (c.source[0], src) if src is not None else None)
            both = " (it connects two outputs)" if src is not None and src.causality == "output" and \
                dst.causality == "output" else ""
            add("error", where, f"target {'.'.join(c.target)} is a {dst.causality}, not an input{both}: a connection "
                                f"ends at an input{hint}")
        if any(end is not None and getattr(end, "dimensions", None) for end in (src, dst)):
            # readers and System.connect turn a whole-array connection into its elements' connections
            try:
                shapes = [array_shape(descriptions[e[0]], end) if end is not None and
                          getattr(end, "dimensions", None) else None for end, e in ((src, c.source), (dst, c.target))]
            except SystemFileError as exc:
                add("error", where, str(exc))
                continue
            if src is not None and dst is not None:
                problem = array_connection_problem(".".join(c.source), shapes[0], ".".join(c.target), shapes[1])
                add("error", where, problem or "a connection of whole arrays that was not expanded into its "
                                               "elements' (orchestration.system.arrays.expand_array_connections)")
            continue
        if src is not None and dst is not None:
            problem = connection_problem(src.type, dst.type, c.is_identity)
            if problem:
                add("error", where, f"type mismatch: {src.type} {'.'.join(c.source)} -> {dst.type} "
                                    f"{'.'.join(c.target)}: {problem}")
            elif family(src.type) in NUMERIC and family(dst.type) in NUMERIC:
                _check_units(c, src, dst, descriptions, where, add)
        if c.target in connected_inputs:
            first = connected_inputs[c.target]
            add("error", where, f"input {'.'.join(c.target)} is connected twice (also from "
                                f"{'.'.join(first.source)})")
        else:
            connected_inputs[c.target] = c

    _check_vectors(system, descriptions, connected_inputs, add)
    _check_ports(system, descriptions, connected_inputs, add)
    _check_attachments(system, descriptions, add)

    for name, md in descriptions.items():
        component = system.components[name]
        loose = [v.name for v in md.modelVariables
                 if v.causality == "input" and (name, v.name) not in connected_inputs
                 and v.name not in component.parameters and not getattr(v, "dimensions", None)]
        if loose:
            add("warning", _loc(system, component.origin) + f" (component {name})",
                f"{len(loose)} input(s) not connected, keeping their start values: {_compact(loose)}")

    _check_loops(system, descriptions, report)
    _check_power_bonds(system, descriptions, add)
    return report


def _check_power_bonds(system: System, descriptions: dict, add) -> None:
    """Warn about a force/moment going one way and a velocity/angular velocity the other way between
    two components on connections without a power bond (module docstring)."""
    loads: dict[tuple[str, str], list[Connection]] = {}
    rates: dict[tuple[str, str], list[Connection]] = {}
    for c in system.connections:
        md = descriptions.get(c.source[0])
        if md is None or c.target[0] not in descriptions:
            continue
        variable = next((v for v in md.modelVariables if v.name == c.source[1]), None)
        unit = _variable_unit(descriptions, c.source[0], variable) if variable is not None else None
        if unit is None:
            continue
        pair = (c.source[0], c.target[0])
        if unit.exponents in (_FORCE, _MOMENT):
            loads.setdefault(pair, []).append(c)
        elif unit.exponents in (_VELOCITY, _ANGULAR_VELOCITY):
            rates.setdefault(pair, []).append(c)
    for (a, b), forces in loads.items():
        velocities = rates.get((b, a), [])
        loose_forces = [c for c in forces if c.power_bond is None]
        loose_velocities = [c for c in velocities if c.power_bond is None]
        if not velocities or not (loose_forces or loose_velocities):
            continue
        shown_f = loose_forces or forces
        shown_v = loose_velocities or velocities
        add("warning", _loc(system, (loose_forces or loose_velocities)[0].origin) + f" (components {a}, {b})",
            f"{a} and {b} exchange a force or moment ({_compact([f'{a}.{c.source[1]}' for c in shown_f])} -> "
            f"{_compact([f'{b}.{c.target[1]}' for c in shown_f])}) and the velocity it works on "
            f"({_compact([f'{b}.{c.source[1]}' for c in shown_v])} -> "
            f"{_compact([f'{a}.{c.target[1]}' for c in shown_v])}) without a power bond on "
            f"{len(loose_forces) + len(loose_velocities)} of these connections: ECCO cannot see this coupling; "
            "mark them with one (SSP <mc:PowerBond name=.../>, OSP powerBond=...)")


def _compact(names: list[str]) -> str:
    """["a.f[0]", "a.f[1]", "a.f[2]", "b"] -> "a.f[0..2], b" (vector elements folded)."""
    import re

    groups: dict[str, list[str]] = {}
    for n in names:
        m = re.fullmatch(r"(.*)\[(\d+)\]", n)
        key, index = (m.group(1), m.group(2)) if m else (n, None)
        groups.setdefault(key, []).append(index)
    parts = []
    for key, indices in groups.items():
        numbers = sorted(int(i) for i in indices if i is not None)
        if not numbers:
            parts.append(key)
        elif numbers == list(range(numbers[0], numbers[-1] + 1)) and len(numbers) > 1:
            parts.append(f"{key}[{numbers[0]}..{numbers[-1]}]")
        else:
            parts.extend(f"{key}[{i}]" for i in numbers)
    return ", ".join(parts)


def _unit(v) -> str | None:
    return v.unit or (v.declaredType.unit if v.declaredType is not None else None)


# ---------------------------------------------------------------------- units

BASE = ("kg", "m", "s", "A", "K", "mol", "cd", "rad")


@dataclass(frozen=True)
class _Unit:
    name: str
    exponents: tuple[int, ...]        # kg m s A K mol cd rad
    factor: float = 1.0               # value_SI = factor * value + offset
    offset: float = 0.0


def _e(**kw) -> tuple[int, ...]:
    return tuple(int(kw.get(b, 0)) for b in BASE)


_LENGTH, _VELOCITY, _ACCELERATION = _e(m=1), _e(m=1, s=-1), _e(m=1, s=-2)
_ANGLE, _ANGULAR_VELOCITY, _ANGULAR_ACCELERATION = _e(rad=1), _e(rad=1, s=-1), _e(rad=1, s=-2)
_FORCE, _MOMENT = _e(kg=1, m=1, s=-2), _e(kg=1, m=2, s=-2)
MOTION = {_LENGTH, _VELOCITY, _ACCELERATION, _ANGLE, _ANGULAR_VELOCITY, _ANGULAR_ACCELERATION}
LOAD = {_FORCE, _MOMENT}
QUANTITY = {_LENGTH: "a length", _VELOCITY: "a velocity", _ACCELERATION: "an acceleration", _ANGLE: "an angle",
            _ANGULAR_VELOCITY: "an angular velocity", _ANGULAR_ACCELERATION: "an angular acceleration",
            _FORCE: "a force", _MOMENT: "a moment", _e(): "dimensionless", _e(kg=1): "a mass",
            _e(s=1): "a time", _e(kg=1, m=2, s=-3): "a power", _e(kg=1, m=-1, s=-2): "a pressure"}

_DEG = math.pi / 180.0
#: units FMUs commonly use without defining them (their UnitDefinitions win when present)
KNOWN_UNITS = {u.name: u for u in (
    _Unit("1", _e()), _Unit("m", _LENGTH), _Unit("mm", _LENGTH, 1e-3), _Unit("cm", _LENGTH, 1e-2),
    _Unit("km", _LENGTH, 1e3), _Unit("s", _e(s=1)), _Unit("min", _e(s=1), 60.0), _Unit("h", _e(s=1), 3600.0),
    _Unit("kg", _e(kg=1)), _Unit("t", _e(kg=1), 1e3), _Unit("N", _FORCE), _Unit("kN", _FORCE, 1e3),
    _Unit("MN", _FORCE, 1e6), _Unit("N.m", _MOMENT), _Unit("Nm", _MOMENT), _Unit("kN.m", _MOMENT, 1e3),
    _Unit("kNm", _MOMENT, 1e3), _Unit("MN.m", _MOMENT, 1e6), _Unit("rad", _ANGLE), _Unit("deg", _ANGLE, _DEG),
    _Unit("rad/s", _ANGULAR_VELOCITY), _Unit("deg/s", _ANGULAR_VELOCITY, _DEG),
    _Unit("rpm", _ANGULAR_VELOCITY, 2 * math.pi / 60), _Unit("rad/s2", _ANGULAR_ACCELERATION),
    _Unit("deg/s2", _ANGULAR_ACCELERATION, _DEG), _Unit("m/s", _VELOCITY), _Unit("km/h", _VELOCITY, 1 / 3.6),
    _Unit("kn", _VELOCITY, 1852.0 / 3600.0), _Unit("knot", _VELOCITY, 1852.0 / 3600.0),
    _Unit("m/s2", _ACCELERATION), _Unit("W", _e(kg=1, m=2, s=-3)), _Unit("kW", _e(kg=1, m=2, s=-3), 1e3),
    _Unit("MW", _e(kg=1, m=2, s=-3), 1e6), _Unit("Pa", _e(kg=1, m=-1, s=-2)),
    _Unit("kPa", _e(kg=1, m=-1, s=-2), 1e3), _Unit("bar", _e(kg=1, m=-1, s=-2), 1e5),
    _Unit("K", _e(K=1)), _Unit("degC", _e(K=1), 1.0, 273.15))}


def _unit_info(md, name: str | None) -> _Unit | None:
    """A unit of an FMU: its UnitDefinitions, else the common units above; None if unknown."""
    if not name:
        return None
    for u in (md.unitDefinitions or []) if md is not None else []:
        if u.name == name:
            b = u.baseUnit
            if b is None:
                break
            return _Unit(name, tuple(int(getattr(b, k, 0) or 0) for k in BASE),
                         float(b.factor if b.factor is not None else 1.0),
                         float(b.offset if b.offset is not None else 0.0))
    return KNOWN_UNITS.get(name)


def _quantity(u: _Unit | None) -> str:
    if u is None:
        return "of unknown dimension"
    return QUANTITY.get(u.exponents) or " ".join(f"{b}^{e}" for b, e in zip(BASE, u.exponents) if e)


def _variable_unit(descriptions: dict, comp: str, var) -> _Unit | None:
    return _unit_info(descriptions.get(comp), _unit(var))


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-300)


def _check_units(c: Connection, src, dst, descriptions: dict, where: str, add) -> None:
    """Units of a connection: the conversion must be in ``factor``/``offset`` (module docstring)."""
    su_name, du_name = _unit(src), _unit(dst)
    if not su_name or not du_name or su_name == du_name:
        return
    a, b = ".".join(c.source), ".".join(c.target)
    su, du = _variable_unit(descriptions, c.source[0], src), _variable_unit(descriptions, c.target[0], dst)
    head = f"source unit {su_name}, target unit {du_name}, factor {c.factor!r}"
    if su is None or du is None or su.exponents != du.exponents:
        if su is not None and du is not None and \
                tuple(x for i, x in enumerate(su.exponents) if BASE[i] != "rad") == \
                tuple(x for i, x in enumerate(du.exponents) if BASE[i] != "rad") and not c.is_identity:
            return     # an angle into a dimensionless input (e.g. a small-angle quaternion) with a factor
        what = (f"{a} is {_quantity(su)} ({su_name!r}), {b} is {_quantity(du)} ({du_name!r})"
                if su is not None and du is not None else f"{a} is in {su_name!r}, {b} in {du_name!r}")
        if c.is_identity and not c.converts_units:
            add("error", where, f"unit mismatch without conversion: {what}: different quantities (check that "
                                "the right variables are connected; a deliberate gain needs a factor)")
        elif not c.converts_units and su is not None and du is not None:
            add("warning", where, f"connects different quantities: {what}, with factor {c.factor!r}: taken as a "
                                  "gain (mark it as intended with a unit-conversion annotation to silence this)")
        return
    expected = su.factor / du.factor
    expected_offset = (su.offset - du.offset) / du.factor
    if _close(abs(c.factor), expected) and (expected_offset == 0.0 or (c.factor > 0 and _close(c.offset,
                                                                                             expected_offset))):
        return      # with a sign flip, an offset of its own (e.g. a lever arm) or both
    text = (f"{head}, expected factor {expected!r} ({su_name} -> {du_name}; {-expected!r} to flip the sign)"
            + (f" and offset {expected_offset!r}" if expected_offset else ""))
    if _close(abs(c.factor), 1.0):
        add("error", where, f"{text}: the unit conversion is missing")
    elif _close(abs(c.factor), 1.0 / expected):
        add("error", where, f"{text}: the conversion is the wrong way round ({du_name} -> {su_name})")
    elif _close(abs(c.factor), expected * expected):
        add("error", where, f"{text}: the conversion is applied twice (the connector units already convert; "
                            "leave it out of the linear transformation)")
    elif _close(abs(c.factor), expected):
        add("error", where, f"{text}: the offset {c.offset!r} is not the units' offset")
    else:
        add("warning", where, f"{text}: a gain of {c.factor / expected:.6g} on top of the unit conversion, "
                              "intended?")


def _other_end_hint(end: tuple[str, str], descriptions: dict, causalities: tuple[str, ...], what: str,
                    other=None) -> str:
    """' (close inputs of ship: 'a', 'b')' for a connection end of the wrong causality; variables of
    the other end's quantity first (a force output suggests force inputs)."""
    md = descriptions.get(end[0])
    if md is None:
        return ""
    candidates = [v for v in md.modelVariables if v.causality in causalities]
    if other is not None:
        comp, var = other
        want = _variable_unit(descriptions, comp, var)
        if want is not None:
            same = [v for v in candidates if (_unit_info(md, _unit(v)) or _Unit("", ())).exponents == want.exponents]
            candidates = same or candidates
    close = difflib.get_close_matches(end[1], [v.name for v in candidates], n=3, cutoff=0.3)
    return f" (close {what} of {end[0]}: {', '.join(repr(n) for n in close)})" if close else ""


# ---------------------------------------------------------------------- vectors and attachments

AXES = (("north", "east", "down"), ("east", "north", "up"), ("x", "y", "z"), ("surge", "sway", "heave"),
        ("roll", "pitch", "yaw"), ("xpos", "ypos", "zpos"), ("u", "v", "w"), ("p", "q", "r"))
_AXIS_LEAF = re.compile(r"^(?P<key>.+)\.(?P<leaf>" + "|".join(sorted({a for t in AXES for a in t}, key=len,
                                                                       reverse=True)) + r")$")
_INDEXED = re.compile(r"^(?P<key>.+)\[(?P<leaf>\d+)\]$")


def vectors(md) -> dict[str, list]:
    """Vectors of an FMU's inputs and outputs: ``key -> [variables]`` for ``key[0..n-1]`` (n >= 2) and
    for ``key.<axis>`` with the axes of one of the triads in AXES (OSP vessel style names such as
    ``additionalNedForce.force.north``); one causality per vector."""
    groups: dict[tuple[str, str], dict[str, object]] = {}
    for v in md.modelVariables:
        if v.causality not in ("input", "output"):
            continue
        m = _INDEXED.match(v.name) or _AXIS_LEAF.match(v.name)
        if m:
            groups.setdefault((m["key"], v.causality), {})[m["leaf"]] = v
    result = {}
    for (key, _), members in groups.items():
        leaves = set(members)
        if all(k.isdigit() for k in leaves):
            if len(leaves) >= 2 and sorted(int(k) for k in leaves) == list(range(len(leaves))):
                result[key] = [members[str(i)] for i in range(len(leaves))]
        else:
            triad = next((t for t in AXES if set(t) == leaves), None)
            if triad:
                result[key] = [members[a] for a in triad]
    return result


def _elements(variables: list) -> str:
    return ", ".join(v.name.rsplit(".", 1)[-1] if _AXIS_LEAF.match(v.name) else v.name[v.name.rindex("["):]
                     for v in variables)


def _check_vectors(system: System, descriptions: dict, connected: dict, add) -> None:
    """An input vector with two or more elements connected and others left at their start values."""
    for name, md in descriptions.items():
        component = system.components[name]
        for key, members in vectors(md).items():
            if members[0].causality != "input" or len(members) < 3:
                continue
            wired = [v for v in members if (name, v.name) in connected]
            loose = [v for v in members if (name, v.name) not in connected and v.name not in component.parameters]
            if len(wired) >= 2 and loose:
                starts = ", ".join(f"{v.name.rsplit('.', 1)[-1] if _AXIS_LEAF.match(v.name) else v.name}="
                                   f"{v.start if v.start is not None else 0}" for v in loose)
                add("error", _loc(system, component.origin) + f" (component {name})",
                    f"vector {name}.{key} is mapped incompletely: {_elements(wired)} connected, {_elements(loose)} not "
                    f"(keeping the start value: {starts}); connect the rest, or give it a start value in the system "
                    "file if that is intended")


def _check_ports(system: System, descriptions: dict, connected: dict, add) -> None:
    """A mechanical port whose motion is connected in part: of its motion input vectors (position,
    attitude, velocity, angular velocity, accelerations: vectors of two or more elements with those
    units or named ``quaternion``, grouped by the name before the last dot, e.g. ``base``), some
    connected and others neither connected nor given start values -- a crane base that gets the
    ship's position but no velocity or acceleration moves with the ship without feeling its motion."""
    for name, md in descriptions.items():
        component = system.components[name]
        members: dict[str, dict[str, list]] = {}
        for key, variables in vectors(md).items():
            if variables[0].causality != "input" or "." not in key:
                continue
            dims = (_unit_info(md, _unit(variables[0])) or _Unit("", ())).exponents
            prefix, _, leaf = key.rpartition(".")
            if dims in MOTION or leaf == "quaternion":
                members.setdefault(prefix, {})[leaf] = variables
        for prefix, group in members.items():
            if len(group) < 2:
                continue
            wired = [leaf for leaf, vs in group.items() if any((name, v.name) in connected for v in vs)]
            loose = [leaf for leaf, vs in group.items()
                     if not any((name, v.name) in connected or v.name in component.parameters for v in vs)]
            if wired and loose:
                count = sum(len(group[leaf]) for leaf in loose)
                add("warning", _loc(system, component.origin) + f" (component {name})",
                    f"port {name}.{prefix} is connected only in part: {', '.join(wired)} connected, "
                    f"{', '.join(loose)} not ({count} input(s) keep their start values): it follows a motion "
                    "without the rates or accelerations that go with it; connect them, or give them start values "
                    "in the system file if that is intended")


def _check_attachments(system: System, descriptions: dict, add) -> None:
    """A component carrying another at a point must get its loads back (module docstring)."""
    info = {}
    for name, md in descriptions.items():
        info[name] = {v.name: (v, _unit_info(md, _unit(v))) for v in md.modelVariables}

    def dims(comp: str, var: str):
        entry = info.get(comp, {}).get(var)
        return entry[1].exponents if entry and entry[1] is not None else None

    vecs = {name: vectors(md) for name, md in descriptions.items()}
    vec_of = {name: {v.name: key for key, members in vecs[name].items() for v in members} for name in vecs}
    # complete position vectors carried from A into B
    carried: dict[tuple[str, str], list[Connection]] = {}
    by_vector: dict[tuple[str, str, str, str], list[Connection]] = {}
    for c in system.connections:
        (a, av), (b, bv) = c.source, c.target
        if a == b or a not in descriptions or b not in descriptions:
            continue
        if dims(a, av) == _LENGTH and dims(b, bv) == _LENGTH and av in vec_of[a] and bv in vec_of[b]:
            by_vector.setdefault((a, vec_of[a][av], b, vec_of[b][bv]), []).append(c)
    for (a, akey, b, bkey), cs in by_vector.items():
        size = len(vecs[b][bkey])
        if len(cs) >= 3 and len(cs) == size:
            carried.setdefault((a, b), []).extend(cs)
    for (a, b), motion in carried.items():
        loads_back = [c for c in system.connections if c.source[0] == b and c.target[0] == a
                      and dims(b, c.source[1]) in LOAD and dims(a, c.target[1]) in LOAD]
        a_inputs = [v for v, (var, u) in info[a].items() if var.causality == "input" and u is not None
                    and u.exponents in LOAD]
        b_outputs = [v for v, (var, u) in info[b].items() if var.causality == "output" and u is not None
                     and u.exponents in LOAD]
        if not a_inputs or not b_outputs:
            continue
        explicit = [v for v in a_inputs if v in system.components[a].parameters]
        where = _loc(system, system.components[a].origin) + f" (component {a})"
        fmu_a = system.components[a].display_source
        if not loads_back:
            if explicit:
                continue      # start values on the force inputs: the one-way coupling is intended
            add("error", where,
                f"{a} ({fmu_a}) carries {b} ({_compact([c.target[1] for c in motion])} <- "
                f"{_compact([c.source[1] for c in motion])}), but no load comes back: none of {b}'s force or moment "
                f"outputs ({_compact(b_outputs[:12])}) drives {a}'s force inputs ({_compact(a_inputs[:12])}), "
                f"so {a} never feels {b}. Connect them (with the unit and sign mapping), or give {a}'s force inputs "
                "start values in the system file if the one-way coupling is intended")
            continue
        # a force that comes back without its moment
        connected_in = {c.target for c in system.connections}
        connected_out = {c.source for c in system.connections}
        for c in loads_back:
            if dims(b, c.source[1]) != _FORCE or dims(a, c.target[1]) != _FORCE:
                continue
            a_key, b_key = vec_of[a].get(c.target[1]), vec_of[b].get(c.source[1])
            if a_key is None or b_key is None:
                continue
            a_prefix, b_prefix = a_key.rpartition(".")[0], b_key.rpartition(".")[0]
            a_moments = {k: m for k, m in vecs[a].items() if k.rpartition(".")[0] == a_prefix
                         and m[0].causality == "input" and dims(a, m[0].name) == _MOMENT}
            b_moments = {k: m for k, m in vecs[b].items() if k.rpartition(".")[0] == b_prefix
                         and m[0].causality == "output" and dims(b, m[0].name) == _MOMENT}
            a_used = any((a, v.name) in connected_in or v.name in system.components[a].parameters
                         for m in a_moments.values() for v in m)
            b_used = any((b, v.name) in connected_out for m in b_moments.values() for v in m)
            if a_moments and b_moments and not a_used and not b_used:
                a_moments, b_moments = list(a_moments), list(b_moments)
                # a warning: the moment may be zero by design (a swivelling line end)
                add("warning", where,
                    f"{b}.{b_key} drives {a}.{a_key}, but {b}.{b_moments[0]} (the moment about the same point) "
                    f"drives nothing and {a}.{a_moments[0]} is unconnected: {a} gets the force without its "
                    f"moment (fine if that moment is zero, e.g. a swivel; otherwise connect it, or give "
                    f"{a}.{a_moments[0]} start values to silence this)")
                break


def _check_loops(system: System, descriptions: dict, report: ValidationReport) -> None:
    """Algebraic loops: cycles through connections and direct feedthrough inside FMUs."""
    graph: dict[tuple[str, str], set[tuple[str, str]]] = {}
    undeclared: set[str] = set()
    connected_in = {c.target for c in system.connections}
    connected_out = {c.source for c in system.connections}
    for c in system.connections:
        graph.setdefault(c.source, set()).add(c.target)
    for name, md in descriptions.items():
        inputs = [v.name for v in md.modelVariables if v.causality == "input" and (name, v.name) in connected_in]
        outputs_by_name = {u.variable.name: u for u in (md.outputs or [])}
        # an array's dependencies are declared for the whole array: they hold for each element
        elements_of: dict[str, list[str]] = {}
        for v in md.modelVariables:
            if isinstance(v, ArrayElement):
                elements_of.setdefault(v.array.name, []).append(v.name)
        for v in md.modelVariables:
            if v.causality != "output" or (name, v.name) not in connected_out:
                continue
            unknown = outputs_by_name.get(v.array.name if isinstance(v, ArrayElement) else v.name)
            if unknown is None or unknown.dependencies is None:
                deps = inputs      # nothing declared: assume the worst, but only warn about it
                if inputs:
                    undeclared.add(name)
            else:
                deps = [n for d in unknown.dependencies if d.causality == "input"
                        for n in elements_of.get(d.name, [d.name])]
            for d in deps:
                if (name, d) in connected_in:
                    graph.setdefault((name, d), set()).add((name, v.name))
    for cycle in _cycles(graph):
        text = " -> ".join(f"{c}.{v}" for c, v in cycle + [cycle[0]])
        components = {c for c, _ in cycle}
        note = ("; some FMUs on it declare no output dependencies, so this loop may not exist"
                if components & undeclared else
                "; the fixed-step master runs it explicitly (one sweep per step, so a value on the loop lags a "
                "step): for strong coupling break it with the mass-aware interface, a compliant element or an "
                "iterative algorithm")
        # a warning, not an error: explicit masters (ours, libcosim) run such systems, with a delay
        report.problems.append(Problem("warning", _loc(system, ""),
                                       f"algebraic loop through direct feedthrough: {text}{note}"))


def _cycles(graph: dict) -> list[list]:
    """One representative cycle per strongly connected component with a cycle."""
    nodes = sorted(set(graph) | {w for ws in graph.values() for w in ws})
    return [_cycle_in(graph, set(scc)) for scc in strongly_connected_components(nodes, lambda v: graph.get(v, ()))
            if len(scc) > 1 or scc[0] in graph.get(scc[0], ())]


def _cycle_in(graph: dict, scc: set) -> list:
    start = min(scc)
    path, seen = [start], {start}
    node = start
    while True:
        nxt = min(w for w in graph.get(node, ()) if w in scc)
        if nxt == start:
            return path
        if nxt in seen:
            return path[path.index(nxt):]
        path.append(nxt)
        seen.add(nxt)
        node = nxt
