"""What the system layer reads of an FMU: its variables (name, causality, type, unit, variability),
unit definitions, FMI version and whether it has a co-simulation interface, from modelDescription.xml
(FMPy's reader, cached by path, size and modification time), and the rules of the FMI types: which
family a type belongs to, which connections between types are exact, how start values are read.

FMI 2.0 has the types Real, Integer, Enumeration, Boolean and String; FMI 3.0 sized ones (Float32,
Float64, Int8 ... UInt64), Boolean, String, Binary, Enumeration and Clock. The families: Real
(Real, Float32, Float64), Integer (Integer and the sized integers), Enumeration, Boolean, String,
Binary, Clock.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from orchestration.system.units import BASE_UNITS, Unit


@dataclass(frozen=True)
class Variable:
    name: str
    causality: str
    type: str            # the family: Real, Integer, Enumeration, Boolean, String, Binary, Clock
    unit: str | None
    variability: str | None = None
    kind: str = ""       # the FMI type as declared (Real, Float32, Int16, ...)
    array: bool = False  # a whole FMI 3.0 array variable (its elements are variables of their own)
    element_of: str | None = None    # the array an element ``name[i]`` belongs to (orchestration.system.arrays)
    shape: tuple[int, ...] | str | None = None   # a whole array's shape, or why it cannot be resolved


@dataclass(frozen=True)
class ModelInfo:
    """What the system-file code needs from an FMU's modelDescription.xml."""

    path: Path
    model_name: str
    variables: dict[str, Variable]
    units: dict[str, Unit]
    runnable: bool                  # a CoSimulation interface, or an FMI 2.0/3.0 ModelExchange one (interface())
    fmi_version: str = "2.0"
    co_simulation: bool = True      # it has a CoSimulation interface (else the master integrates it)


#: FMI type -> family
FAMILY = {"Real": "Real", "Float32": "Real", "Float64": "Real",
          "Integer": "Integer", "Int8": "Integer", "UInt8": "Integer", "Int16": "Integer", "UInt16": "Integer",
          "Int32": "Integer", "UInt32": "Integer", "Int64": "Integer", "UInt64": "Integer",
          "Enumeration": "Enumeration", "Boolean": "Boolean", "String": "String", "Binary": "Binary",
          "Clock": "Clock"}
#: families whose values travel between FMUs as float64 (exact: integers up to 2**53, booleans as 0/1)
NUMERIC = ("Real", "Integer", "Enumeration", "Boolean")
#: the value range of each sized integer
INTEGER_RANGE = {"Int8": (-2 ** 7, 2 ** 7 - 1), "UInt8": (0, 2 ** 8 - 1), "Int16": (-2 ** 15, 2 ** 15 - 1),
                 "UInt16": (0, 2 ** 16 - 1), "Int32": (-2 ** 31, 2 ** 31 - 1), "UInt32": (0, 2 ** 32 - 1),
                 "Integer": (-2 ** 31, 2 ** 31 - 1), "Int64": (-2 ** 63, 2 ** 63 - 1), "UInt64": (0, 2 ** 64 - 1)}


def family(kind: str) -> str:
    """The family of an FMI type (``Float32`` -> ``Real``); an unknown type is its own family."""
    return FAMILY.get(kind, kind)


def connection_problem(source_kind: str, target_kind: str, identity: bool = True) -> str | None:
    """Why an output of FMI type ``source_kind`` cannot drive an input of ``target_kind`` exactly,
    or None. Allowed: the same family (sized integers and floats widen or must fit: a narrower target
    is refused), Integer, Enumeration and Boolean into Real (exact below 2**53), Boolean into Integer
    (0/1) and Integer <-> Enumeration. A linear transformation (factor, offset) needs a Real target.
    Anything else (Real into Integer, String or Binary into anything else, Clocks) is refused: SSP
    carries no conversion for it and a silent one would lose information."""
    src, dst = family(source_kind), family(target_kind)
    if src == "Clock" or dst == "Clock":
        return "Clock variables are not supported (co-simulation without clocks)"
    if not identity and dst != "Real":
        return f"a linear transformation (factor, offset) needs a Real target, not {target_kind}"
    if src == dst:
        if src == "Integer" and source_kind in INTEGER_RANGE and target_kind in INTEGER_RANGE:
            lo, hi = INTEGER_RANGE[source_kind]
            lo_t, hi_t = INTEGER_RANGE[target_kind]
            if lo < lo_t or hi > hi_t:
                return (f"{source_kind} values can fall outside {target_kind}'s range [{lo_t}, {hi_t}]: "
                        "connect types of the same width")
        if src == "Real" and source_kind == "Float64" and target_kind == "Float32":
            return "a Float64 output into a Float32 input would round every value: connect Float64 to Float64"
        return None
    if dst == "Real" and src in ("Integer", "Enumeration", "Boolean"):
        return None
    if (src, dst) in (("Boolean", "Integer"), ("Integer", "Enumeration"), ("Enumeration", "Integer")):
        return None
    return f"a {source_kind} output cannot drive a {target_kind} input exactly (no conversion between them)"


def parse_start(kind: str, text) -> object:
    """A start value as its type: float, int, bool, str or bytes (FMPy gives the XML text)."""
    if text is None:
        return None
    fam = family(kind)
    if fam == "Real":
        return float(text)
    if fam in ("Integer", "Enumeration"):
        return int(text) if not isinstance(text, float) else int(round(text))
    if fam == "Boolean":
        if isinstance(text, str):
            return text.strip().lower() in ("true", "1")
        return bool(text)
    if fam == "Binary":
        return bytes.fromhex(text) if isinstance(text, str) else bytes(text)
    return str(text)


@functools.lru_cache(maxsize=64)
def _model_info(path: str, mtime_ns: int, size: int) -> ModelInfo:
    from fmpy import read_model_description

    try:
        md = read_model_description(path, validate=False)
    except Exception as exc:
        from orchestration.errors import SystemFileError
        from orchestration.system.arrays import unresolved_dimension

        problem = unresolved_dimension(path)
        if problem:
            raise SystemFileError(problem) from exc
        raise
    return info_from_description(md, Path(path))


def info_from_description(md, path: Path) -> ModelInfo:
    """The ModelInfo of an FMPy ModelDescription (an FMU's, or an adapter's interface)."""
    units = {}
    for u in md.unitDefinitions or []:
        b = u.baseUnit
        if b is None:
            units[u.name] = Unit(u.name)
        else:
            units[u.name] = Unit(u.name, tuple(int(getattr(b, k) or 0) for k in BASE_UNITS),
                                 float(b.factor if b.factor is not None else 1.0),
                                 float(b.offset if b.offset is not None else 0.0))
    from orchestration.errors import SystemFileError
    from orchestration.system.arrays import ArrayElement, array_shape, element_variables

    variables = {}
    for v in element_variables(md):
        unit = v.unit or (getattr(v.declaredType, "unit", None) if v.declaredType is not None else None)
        shape = None
        if getattr(v, "dimensions", None):
            try:
                shape = array_shape(md, v)
            except SystemFileError as exc:
                shape = str(exc)
        variables[v.name] = Variable(v.name, v.causality or "local", family(v.type), unit or None, v.variability,
                                     v.type, bool(getattr(v, "dimensions", None)),
                                     v.array.name if isinstance(v, ArrayElement) else None, shape)
    return ModelInfo(Path(path), md.modelName, variables, units, interface(md) is not None, md.fmiVersion,
                     md.coSimulation is not None)


def component_description(component):
    """The FMPy ModelDescription of a component: its FMU's, or its adapter's interface for its start
    values (orchestration.system.adapters; raises AdapterError for a bad kind or structural value)."""
    if component.adapter:
        from orchestration.system.adapters import adapter_description

        return adapter_description(component.adapter, component.parameters)
    from fmpy import read_model_description

    return read_model_description(str(component.source))


def component_info(component) -> ModelInfo:
    """:func:`model_info` of a component's FMU, or the ModelInfo of its adapter's interface."""
    if component.adapter:
        from orchestration.system.adapters import adapter_description

        return info_from_description(adapter_description(component.adapter, component.parameters),
                                     Path(f"{component.adapter} adapter"))
    return model_info(Path(component.source))


def model_info(path: Path) -> ModelInfo:
    """Variables, causalities, types and units of an FMU (cached by path, size and mtime)."""
    st = os.stat(path)
    return _model_info(str(path), st.st_mtime_ns, st.st_size)


def is_output(causality: str) -> bool:
    return causality in ("output", "calculatedParameter")


def interface(md) -> str | None:
    """How the master runs an FMU: "CoSimulation" where it has that interface, else "ModelExchange"
    for an FMI 2.0 or 3.0 model-exchange FMU (the master integrates its states:
    orchestration.master.model_exchange), else None."""
    if getattr(md, "coSimulation", None) is not None:
        return "CoSimulation"
    if getattr(md, "modelExchange", None) is not None and md.fmiVersion in ("2.0", "3.0"):
        return "ModelExchange"
    return None


def no_co_simulation(path: Path) -> str:
    """Why an FMU the master cannot run cannot be a component, naming what it has (FMI 1.0
    ModelExchange, FMI 3.0 ScheduledExecution, as the Reference FMU Clocks)."""
    from fmpy import read_model_description

    try:
        md = read_model_description(str(path))
        has = [name for name, attr in (("ModelExchange", "modelExchange"), ("ScheduledExecution", "scheduledExecution"))
               if getattr(md, attr, None) is not None]
        version = f"FMI {md.fmiVersion} "
    except Exception:          # FMPy raises many kinds for a broken FMU
        has, version = [], ""
    what = f" (it has {version}{' and '.join(has)} only)" if has else ""
    return (f"{Path(path).name} has no CoSimulation interface{what}: the master runs FMI 1.0, 2.0 and 3.0 "
            "co-simulation FMUs and FMI 2.0 and 3.0 model-exchange FMUs")

