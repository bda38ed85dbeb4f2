"""FMI 3.0 array variables, addressed element by element.

An FMI 3.0 variable with ``<Dimension>`` children is an array (FMI 3.0, "FMI Description Schema",
the ``Dimension`` element of array variables): each dimension has a fixed size (``start``) or the
size held by a structural parameter (``valueReference``). Its values are got and set all together,
serialized in row-major order (FMI 3.0, "Getting and Setting Variable Values": the last index
varies fastest, ``nValues`` counts every element of every variable asked for). Its start attribute
lists the values in that order.

A system file addresses one element as ``name[i]``, or ``name[i][j]`` for a two-dimensional array
(one bracket per dimension, 0-based, as our own FMUs' vector scalars ``name[0..2]``); ``name[i,j]``
(the Modelica form) is refused with the form to write. Every element is a variable of its own in
the tables the system layer and the master keep (:func:`element_variables`), with the array's
causality, type and unit and its own start value. A connection between two whole arrays of the same
shape stands for the connections of their elements (:func:`expand_array_connections`).

The shape of an array whose size is a structural parameter is the parameter's start value in the
modelDescription: the master does not enter configuration mode, so structural parameters keep their
start values (a system file that sets one that sizes an array is refused by the validation).
"""
from __future__ import annotations

import math
import os
import re
from typing import Any

from fmpy.model_description import ModelDescription, ModelVariable

from orchestration.errors import SystemFileError
from orchestration.system.model import Connection, System

#: arrays with more elements than this are connected and recorded only whole, not by element
MAX_ELEMENTS = 4096

_ELEMENT = re.compile(r"^(?P<base>.+?)(?P<index>(?:\[\s*\d+\s*\])+)$")
_COMMA = re.compile(r"^(?P<base>.+?)\[\s*\d+\s*(?:,\s*\d+\s*)+\]$")


class ArrayElement(ModelVariable):
    """One element of an FMI 3.0 array variable, as a scalar variable of its own: the array's
    attributes, its own name, index and start value (ModelVariable has slots: this subclass carries
    the extra attributes)."""

    def __init__(self, array: ModelVariable, index: tuple[int, ...], flat: int, size: int, start: Any):
        for slot in ModelVariable.__slots__:
            if slot != "__weakref__" and hasattr(array, slot):
                object.__setattr__(self, slot, getattr(array, slot))
        self.name = element_name(array.name, index)
        self.dimensions, self.dimensionValueReferences, self.shape = [], [], None
        self.start = start
        self.array = array
        self.index = index
        self.flat = flat
        self.size = size


def element_name(name: str, index: tuple[int, ...]) -> str:
    """``y``, (1,) -> ``y[1]``; ``A``, (0, 2) -> ``A[0][2]``."""
    return name + "".join(f"[{i}]" for i in index)


def split_element(name: str) -> tuple[str, tuple[int, ...]] | None:
    """``A[0][2]`` -> ("A", (0, 2)); None for a name without a trailing index."""
    m = _ELEMENT.match(name)
    if m is None:
        return None
    return m["base"], tuple(int(i) for i in re.findall(r"\d+", m["index"]))


def array_shape(md: ModelDescription, variable: ModelVariable) -> tuple[int, ...]:
    """The shape of an array variable of the FMPy ModelDescription ``md``: each ``<Dimension>``'s
    ``start``, or the start value of the structural parameter its ``valueReference`` names. Raises
    SystemFileError when a size cannot be resolved (no such parameter, no start value, not a whole
    number >= 0)."""
    shape = []
    for k, d in enumerate(variable.dimensions, 1):
        parameter = None
        if d.start is None:
            parameter = getattr(d, "variable", None)
            if parameter is None:
                parameter = next((v for v in md.modelVariables if v.valueReference == d.valueReference
                                  and not getattr(v, "dimensions", None) and v.type.startswith(("Int", "UInt"))), None)
        shape.append(_dimension_size(variable.name, k, d.start, d.valueReference,
                                     parameter and (parameter.name, parameter.start)))
    return tuple(shape)


def _dimension_size(array: str, k: int, start: str | None, reference, parameter: tuple[str, str | None] | None) -> int:
    """The size of dimension ``k`` of ``array``: its ``start``, else the start value of the structural
    ``parameter`` (name, start) that its value reference names; SystemFileError saying why not."""
    if start is not None:
        text, what = start, f"its dimension {k} (start={start!r})"
    elif parameter is None:
        raise SystemFileError(f"array {array}: its dimension {k} refers to value reference {reference}, which is no "
                              "integer variable of the FMU: its size cannot be resolved")
    else:
        text, what = parameter[1], f"its dimension {k} (structural parameter {parameter[0]})"
    try:
        size = int(str(text).strip())
    except (TypeError, ValueError):
        value = "no start value" if text is None else f"the start value {text!r}, not a whole number"
        raise SystemFileError(f"array {array}: {what} has {value}: its size cannot be resolved") from None
    if size < 0:
        raise SystemFileError(f"array {array}: {what} is {size}: a size cannot be negative")
    return size


def unresolved_dimension(fmu: str | os.PathLike) -> str | None:
    """Why a Dimension of an array in the modelDescription.xml of the FMU file ``fmu`` has no size
    (it names no integer variable, or one without a whole-number start value), or None. FMPy's
    reader stops at such a file with a bare ``int()`` error: this says which array and parameter."""
    import zipfile

    from lxml import etree

    try:
        with zipfile.ZipFile(fmu) as archive:
            root = etree.fromstring(archive.read("modelDescription.xml"))
    except Exception:          # not our question: the caller reports the file as unreadable
        return None
    variables = root.find("ModelVariables")
    by_vr = {v.get("valueReference"): v for v in (variables if variables is not None else ())
             if isinstance(v.tag, str)}
    for v in by_vr.values():
        for k, d in enumerate(v.findall("Dimension"), 1):
            parameter = by_vr.get(d.get("valueReference")) if d.get("start") is None else None
            if parameter is not None and not parameter.tag.startswith(("Int", "UInt")):
                parameter = None
            try:
                _dimension_size(v.get("name"), k, d.get("start"), d.get("valueReference"),
                                parameter is not None and (parameter.get("name"), parameter.get("start")) or None)
            except SystemFileError as exc:
                return str(exc)
    return None


def array_starts(variable: ModelVariable, size: int) -> list[str] | None:
    """The start attribute of an array split into its ``size`` values (row-major), None without one.
    A single value stands for every element (as FMPy writes a scalar start)."""
    if variable.start is None:
        return None
    values = str(variable.start).split()
    if len(values) == 1 and size != 1:
        values = values * size
    if len(values) != size:
        raise SystemFileError(f"array {variable.name} has {len(values)} start values for {size} elements")
    return values


def _indices(shape: tuple[int, ...]):
    index = [0] * len(shape)
    for _ in range(math.prod(shape)):
        yield tuple(index)
        for d in reversed(range(len(shape))):    # row-major: the last index varies fastest
            index[d] += 1
            if index[d] < shape[d]:
                break
            index[d] = 0


def element_variables(md: ModelDescription) -> list[ModelVariable]:
    """The variables of ``md`` with, after each numeric array variable (of at most MAX_ELEMENTS
    elements whose shape resolves), one :class:`ArrayElement` per element in row-major order; a
    scalar of the FMU with the same name as an element keeps the name."""
    taken = {v.name for v in md.modelVariables}
    out = []
    for v in md.modelVariables:
        out.append(v)
        if not getattr(v, "dimensions", None) or v.type in ("String", "Binary", "Clock"):
            continue
        try:
            shape = array_shape(md, v)
            size = math.prod(shape)
            starts = array_starts(v, size) if size <= MAX_ELEMENTS else None
        except SystemFileError:
            continue        # not addressable by element: element_problem says why
        if size > MAX_ELEMENTS:
            continue
        for flat, index in enumerate(_indices(shape)):
            element = ArrayElement(v, index, flat, size, starts[flat] if starts else None)
            if element.name not in taken:
                out.append(element)
    return out


def shape_text(shape: tuple[int, ...]) -> str:
    return "x".join(str(n) for n in shape) if shape else "scalar"


def element_problem(md: ModelDescription, name: str) -> str | None:
    """Why ``name``, which the FMU has no variable of, is not an element of one of its arrays (for
    the messages of the system readers and the validation), or None when it does not look like one."""
    arrays = {v.name: v for v in md.modelVariables if getattr(v, "dimensions", None)}

    def shape_of(base: str) -> tuple[int, ...] | str:
        try:
            return array_shape(md, arrays[base])
        except SystemFileError as exc:
            return str(exc)

    return _index_problem(name, {n: v.type for n, v in arrays.items()}, shape_of)


def info_element_problem(variables: dict, name: str) -> str | None:
    """:func:`element_problem` from a ModelInfo's variables (orchestration.system.fmu_info)."""
    arrays = {n: v for n, v in variables.items() if v.array}
    return _index_problem(name, {n: v.kind for n, v in arrays.items()}, lambda base: arrays[base].shape)


def _index_problem(name: str, kinds: dict[str, str], shape_of) -> str | None:
    m = _COMMA.match(name)
    if m and m["base"] in kinds:
        index = re.findall(r"\d+", name[len(m["base"]):])
        return (f"{name!r}: an element of {m['base']} is written with one bracket per dimension, "
                f"{element_name(m['base'], tuple(int(i) for i in index))!r} (0-based, row-major)")
    split = split_element(name)
    if split is None or split[0] not in kinds:
        return None
    base, index = split
    if kinds[base] in ("String", "Binary", "Clock"):
        return f"{base} is an array of {kinds[base]}: its elements cannot be addressed (numeric arrays only)"
    shape = shape_of(base)
    if isinstance(shape, str) or shape is None:
        return shape or f"{base}: its shape cannot be resolved"
    if len(index) != len(shape):
        form = element_name(base, tuple("ijk"[d] if d < 3 else "n" for d in range(len(shape))))
        return (f"{base} has {len(shape)} dimension(s) (shape {shape_text(shape)}): an element is written "
                f"{form}, with {len(shape)} index(es), not {name!r}")
    bad = [(d, i) for d, i in enumerate(index) if i >= shape[d]]
    if bad:
        d, i = bad[0]
        last = element_name(base, tuple(n - 1 for n in shape))
        return (f"{name!r} is out of range: {base} has shape {shape_text(shape)} (elements "
                f"{element_name(base, (0,) * len(shape))} .. {last}, 0-based), index {i} >= {shape[d]}")
    if math.prod(shape) > MAX_ELEMENTS:
        return (f"{base} has {math.prod(shape)} elements: arrays of more than {MAX_ELEMENTS} are not addressed "
                "by element")
    return None


def array_connection_problem(source: str, src_shape: tuple[int, ...] | None, target: str,
                             dst_shape: tuple[int, ...] | None) -> str | None:
    """Why a connection between two ends (None shape: a scalar) cannot be made element by element."""
    if src_shape is None and dst_shape is None:
        return None
    if src_shape is None or dst_shape is None:
        array, shape = (source, src_shape) if src_shape is not None else (target, dst_shape)
        scalar = target if src_shape is not None else source
        return (f"{array} is a whole array (shape {shape_text(shape)}) and {scalar} a scalar: connect one element, "
                f"e.g. {element_name(array, (0,) * len(shape))}, or two arrays of the same shape")
    if src_shape != dst_shape:
        return (f"shape mismatch: {source} has shape {shape_text(src_shape)}, {target} has shape "
                f"{shape_text(dst_shape)}: whole arrays are connected element by element and need the same shape "
                "(connect elements one by one otherwise)")
    return None


def _array_variable(component, var: str):
    """(the FMPy variable, its shape) of a whole array ``var`` of a component, or None."""
    from orchestration.system.fmu_info import component_description

    md = component_description(component)
    v = next((x for x in md.modelVariables if x.name == var), None)
    if v is None or not getattr(v, "dimensions", None):
        return None
    return v, array_shape(md, v)


def expand_array_connections(system: System) -> None:
    """Replace each connection between two whole arrays of the same shape by the connections of
    their elements (row-major, the same transformation, origin and power bond). Raises
    SystemFileError, naming the connection's origin, for whole arrays of different shapes, a whole
    array into a scalar (or the other way) and a shape that cannot be resolved."""
    from orchestration.system.fmu_info import component_info

    expanded = []
    for c in system.connections:
        ends = []
        for comp, var in (c.source, c.target):
            component = system.components.get(comp)
            info = None
            if component is not None:
                try:
                    info = component_info(component).variables.get(var)
                except Exception:       # a missing or broken FMU: the validation says so
                    info = None
            ends.append(info is not None and info.array)
        if not any(ends):
            expanded.append(c)
            continue
        where = c.origin or c.label()
        shapes = []
        for comp, var in (c.source, c.target):
            try:
                found = _array_variable(system.components[comp], var)
            except SystemFileError as exc:
                raise SystemFileError(f"{where}: {comp}: {exc}") from None
            shapes.append(found[1] if found else None)
        problem = array_connection_problem(".".join(c.source), shapes[0], ".".join(c.target), shapes[1])
        if problem:
            raise SystemFileError(f"{where}: {problem}")
        for index in _indices(shapes[0]):
            expanded.append(Connection((c.source[0], element_name(c.source[1], index)),
                                       (c.target[0], element_name(c.target[1], index)), c.factor, c.offset,
                                       c.converts_units, c.power_bond, c.origin))
    system.connections[:] = expanded
