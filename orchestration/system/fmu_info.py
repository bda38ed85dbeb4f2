"""What the system layer reads of an FMU: its variables (name, causality, type, unit, variability),
unit definitions and whether it has a co-simulation interface, from modelDescription.xml (FMPy's
reader, cached by path, size and modification time).
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
    type: str            # Real, Integer, Boolean, String, Enumeration
    unit: str | None
    variability: str | None = None


@dataclass(frozen=True)
class ModelInfo:
    """What the system-file code needs from an FMU's modelDescription.xml."""

    path: Path
    model_name: str
    variables: dict[str, Variable]
    units: dict[str, Unit]
    co_simulation: bool


_TYPE_MAP = {"Float32": "Real", "Float64": "Real", "Int8": "Integer", "UInt8": "Integer", "Int16": "Integer",
             "UInt16": "Integer", "Int32": "Integer", "UInt32": "Integer", "Int64": "Integer", "UInt64": "Integer"}


@functools.lru_cache(maxsize=64)
def _model_info(path: str, mtime_ns: int, size: int) -> ModelInfo:
    from fmpy import read_model_description

    md = read_model_description(path, validate=False)
    units = {}
    for u in md.unitDefinitions or []:
        b = u.baseUnit
        if b is None:
            units[u.name] = Unit(u.name)
        else:
            units[u.name] = Unit(u.name, tuple(int(getattr(b, k) or 0) for k in BASE_UNITS),
                                 float(b.factor if b.factor is not None else 1.0),
                                 float(b.offset if b.offset is not None else 0.0))
    variables = {}
    for v in md.modelVariables:
        unit = v.unit or (getattr(v.declaredType, "unit", None) if v.declaredType is not None else None)
        variables[v.name] = Variable(v.name, v.causality or "local", _TYPE_MAP.get(v.type, v.type), unit or None,
                                     v.variability)
    return ModelInfo(Path(path), md.modelName, variables, units, md.coSimulation is not None)


def model_info(path: Path) -> ModelInfo:
    """Variables, causalities, types and units of an FMU (cached by path, size and mtime)."""
    st = os.stat(path)
    return _model_info(str(path), st.st_mtime_ns, st.st_size)


def is_output(causality: str) -> bool:
    return causality in ("output", "calculatedParameter")
