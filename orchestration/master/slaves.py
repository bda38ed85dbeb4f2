"""Execution side: one FMU instance behind the small interface the master algorithms use.

libcosim splits a co-simulation into algorithm, execution, observers and manipulators; this is
the execution's slave. Backends implement the same interface, so algorithms never touch FMPy
directly: :class:`InProcessSlave` here, ``ProcessSlave`` (process_backend.py, one OS process per
FMU) and ``RaySlave`` (ray_backend.py, one Ray actor per FMU). The hot path is one batched call per
macro step, :meth:`Slave.exchange`: set inputs, doStep, get outputs. Remote backends also offer
:meth:`Slave.exchange_async`, so the execution can send every slave its step first and collect the
outputs afterwards (the slaves step in parallel); in-process it computes at once.
"""
from __future__ import annotations

import ctypes
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from fmpy import extract, read_model_description
from fmpy.fmi1 import FMICallException
from fmpy.model_description import ModelDescription

from orchestration.errors import SlaveError  # noqa: F401  (re-exported)




@dataclass
class VariableInfo:
    name: str
    value_reference: int
    type: str
    causality: str
    variability: str | None
    unit: str | None
    start: Any


class Done:
    """The handle of an exchange that is already computed (the in-process case)."""

    __slots__ = ("value",)

    def __init__(self, value: np.ndarray):
        self.value = value

    def result(self) -> np.ndarray:
        return self.value


class Slave:
    """Interface every backend implements for one FMU instance."""

    name: str
    model_description: ModelDescription
    variables: dict[str, VariableInfo]
    #: True when :meth:`exchange_async` really runs in the background (remote backends): the
    #: execution then dispatches all slaves' steps before collecting any result
    asynchronous: bool = False

    def instantiate(self) -> None: ...
    def setup(self, start_time: float, stop_time: float | None) -> None: ...
    def enter_initialization(self) -> None: ...
    def exit_initialization(self) -> None: ...
    def set_values(self, values: dict[str, Any]) -> None: ...
    def get_reals(self, vrs: np.ndarray) -> np.ndarray: ...
    def set_reals(self, vrs: np.ndarray, values: np.ndarray) -> None: ...
    def do_step(self, t: float, h: float) -> None: ...

    def exchange(self, in_vrs: np.ndarray, in_values: np.ndarray, t: float, h: float,
                 out_vrs: np.ndarray) -> np.ndarray:
        """Set inputs, step from t to t + h, return outputs: one call per macro step."""
        if len(in_vrs):
            self.set_reals(in_vrs, in_values)
        self.do_step(t, h)
        return self.get_reals(out_vrs)

    def exchange_async(self, in_vrs: np.ndarray, in_values: np.ndarray, t: float, h: float,
                       out_vrs: np.ndarray) -> Any:
        """Start :meth:`exchange`; the returned handle's ``result()`` gives the outputs (and raises
        the step's SlaveError). In-process the step is computed here and now."""
        return Done(self.exchange(in_vrs, in_values, t, h, out_vrs))

    def set_and_get(self, in_vrs: np.ndarray, in_values: np.ndarray, out_vrs: np.ndarray) -> np.ndarray:
        """Set inputs and read outputs without stepping (direct feedthrough): one call remotely."""
        self.set_reals(in_vrs, in_values)
        return self.get_reals(out_vrs)

    def checkpoint_state(self) -> bytes:
        """The FMU's complete state as bytes (get, serialize, free), for checkpoints on disk."""
        state = self.get_state()
        try:
            return self.serialize_state(state)
        finally:
            self.free_state(state)

    def restore_checkpoint_state(self, blob: bytes) -> None:
        """Put the FMU back into a state from :meth:`checkpoint_state`."""
        state = self.deserialize_state(blob)
        try:
            self.set_state(state)
        finally:
            self.free_state(state)

    @property
    def can_get_and_set_state(self) -> bool:
        md = self.model_description
        return bool(md.fmiVersion == "2.0" and md.coSimulation is not None and md.coSimulation.canGetAndSetFMUstate)

    def get_state(self) -> Any: ...
    def set_state(self, state: Any) -> None: ...
    def free_state(self, state: Any) -> None: ...
    def serialize_state(self, state: Any) -> bytes: ...
    def deserialize_state(self, blob: bytes) -> Any: ...
    def terminate(self) -> None: ...
    def free(self) -> None: ...


def variable_table(md: ModelDescription) -> dict[str, VariableInfo]:
    return {v.name: VariableInfo(v.name, v.valueReference, v.type, v.causality, v.variability,
                                 v.unit or (v.declaredType.unit if v.declaredType is not None else None), v.start)
            for v in md.modelVariables}


class InProcessSlave(Slave):
    """An FMU instance in this process through FMPy (FMI 2.0 and 1.0 co-simulation).

    FMI 2.0 calls go straight to the ctypes functions with preallocated buffers (FMPy's
    convenience methods build new ctypes arrays on every call, which costs more than the step of
    a small FMU)."""

    def __init__(self, name: str, fmu: Path, workdir: Path | None = None, logging: bool = False):
        self.name = name
        self.fmu = Path(fmu)
        self.model_description = read_model_description(str(fmu))
        md = self.model_description
        if md.coSimulation is None:
            raise SlaveError(f"{name}: {self.fmu.name} is not a co-simulation FMU")
        self.variables = variable_table(md)
        self.fmi_version = md.fmiVersion
        self._own_dir = workdir is None
        self.unzipdir = extract(str(fmu), unzipdir=str(workdir) if workdir else tempfile.mkdtemp(prefix="mc_fmu_"))
        self.messages: list[tuple[int, str]] = []
        self._fmu = None
        self._logging = logging

    # -- FMPy objects ---------------------------------------------------------------------------

    def _log(self, component, instance, status, category, message) -> None:
        text = message.decode(errors="replace") if isinstance(message, bytes) else str(message)
        self.messages.append((int(status), text))
        del self.messages[:-200]    # a chatty FMU must not grow memory without bound

    def instantiate(self) -> None:
        md = self.model_description
        if self.fmi_version == "2.0":
            from fmpy import calloc, free
            from fmpy.fmi2 import (FMU2Slave, fmi2CallbackAllocateMemoryTYPE, fmi2CallbackFreeMemoryTYPE,
                                   fmi2CallbackFunctions, fmi2CallbackLoggerTYPE)

            self._fmu = FMU2Slave(guid=md.guid, unzipDirectory=self.unzipdir,
                                  modelIdentifier=md.coSimulation.modelIdentifier, instanceName=self.name)
            self._callbacks = fmi2CallbackFunctions()
            self._callbacks.logger = fmi2CallbackLoggerTYPE(self._log)
            self._callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
            self._callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
            self._call("instantiate", self._fmu.instantiate, callbacks=self._callbacks, loggingOn=self._logging)
            raw = self._fmu._functions
            self._get_real = raw["fmi2GetReal"]
            self._set_real = raw["fmi2SetReal"]
            self._do_step = raw["fmi2DoStep"]
            self._component = self._fmu.component
        elif self.fmi_version == "1.0":
            from fmpy import calloc, free
            from fmpy.fmi1 import (FMU1Slave, fmi1CallbackAllocateMemoryTYPE, fmi1CallbackFreeMemoryTYPE,
                                   fmi1CallbackFunctions, fmi1CallbackLoggerTYPE)

            self._fmu = FMU1Slave(guid=md.guid, unzipDirectory=self.unzipdir,
                                  modelIdentifier=md.coSimulation.modelIdentifier, instanceName=self.name)
            self._callbacks = fmi1CallbackFunctions()
            self._callbacks.logger = fmi1CallbackLoggerTYPE(self._log)
            self._callbacks.allocateMemory = fmi1CallbackAllocateMemoryTYPE(calloc)
            self._callbacks.freeMemory = fmi1CallbackFreeMemoryTYPE(free)
            self._call("instantiate", self._fmu.instantiate, functions=self._callbacks, loggingOn=self._logging)
            if not self._fmu.component:
                raise SlaveError(self._explain("fmiInstantiateSlave", "returned NULL"))
            # FMPy 0.3.32 declares fmiInitializeSlave/fmiDoStep as returning a string, so a failed
            # status would be read as an address (a crash); call them with an integer status.
            prefix = md.coSimulation.modelIdentifier + "_"
            self._fmi1_initialize = getattr(self._fmu.dll, prefix + "fmiInitializeSlave")
            self._fmi1_initialize.argtypes = [ctypes.c_void_p, ctypes.c_double, ctypes.c_char, ctypes.c_double]
            self._fmi1_initialize.restype = ctypes.c_int
            self._fmi1_do_step = getattr(self._fmu.dll, prefix + "fmiDoStep")
            self._fmi1_do_step.argtypes = [ctypes.c_void_p, ctypes.c_double, ctypes.c_double, ctypes.c_char]
            self._fmi1_do_step.restype = ctypes.c_int
            self._get_real = None
        else:
            raise SlaveError(f"{self.name}: FMI {self.fmi_version} is not supported (FMI 1.0 and 2.0 CS are)")
        self._buffers: dict[int, tuple[Any, Any]] = {}

    def _call(self, what: str, function, *args, **kwargs):
        try:
            return function(*args, **kwargs)
        except FMICallException as exc:
            raise SlaveError(self._explain(what, str(exc))) from None
        except Exception as exc:  # FMPy raises plain Exception for a failed instantiate
            raise SlaveError(self._explain(what, str(exc))) from None

    def _explain(self, what: str, detail: str) -> str:
        log = "; ".join(m for s, m in self.messages[-5:] if s >= 2) or "no message from the FMU"
        return f"{self.name} ({self.fmu.name}): {what} failed: {detail} -- FMU log: {log}"

    def _check(self, status: int, what: str) -> None:
        if status > 1:   # worse than fmi2Warning
            labels = ["ok", "warning", "discard", "error", "fatal", "pending"]
            raise SlaveError(self._explain(what, f"status {status} ({labels[status] if status < 6 else '?'})"))

    # -- life cycle -----------------------------------------------------------------------------

    def setup(self, start_time: float, stop_time: float | None) -> None:
        if self.fmi_version == "2.0":
            self._call("setupExperiment", self._fmu.setupExperiment, startTime=start_time, stopTime=stop_time)
        self._start_time = start_time
        self._stop_time = stop_time

    def enter_initialization(self) -> None:
        if self.fmi_version == "2.0":
            self._call("enterInitializationMode", self._fmu.enterInitializationMode)

    def exit_initialization(self) -> None:
        if self.fmi_version == "2.0":
            self._call("exitInitializationMode", self._fmu.exitInitializationMode)
        else:
            defined = self._stop_time is not None
            status = self._fmi1_initialize(self._fmu.component, self._start_time, b"\x01" if defined else b"\x00",
                                           self._stop_time if defined else 0.0)
            self._check(status, "fmiInitializeSlave")

    def set_values(self, values: dict[str, Any]) -> None:
        """Start values or manipulated values by name, any FMI type."""
        by_type: dict[str, tuple[list[int], list[Any]]] = {}
        for name, value in values.items():
            info = self.variables[name]
            vrs, vals = by_type.setdefault(info.type, ([], []))
            vrs.append(info.value_reference)
            vals.append(value)
        setters = {"Real": self._fmu.setReal, "Integer": self._fmu.setInteger, "Boolean": self._fmu.setBoolean,
                   "String": self._fmu.setString, "Enumeration": self._fmu.setInteger}
        for kind, (vrs, vals) in by_type.items():
            if kind == "String":
                # FMPy's setString encodes str itself (both FMI versions)
                vals = [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in vals]
            elif kind in ("Integer", "Enumeration"):
                vals = [int(v) for v in vals]
            elif kind == "Boolean":
                vals = [bool(v) for v in vals]
            else:
                vals = [float(v) for v in vals]
            self._call(f"set {', '.join(n for n in values if self.variables[n].type == kind)}", setters[kind], vrs,
                       vals)

    def get_values(self, names: Sequence[str]) -> dict[str, Any]:
        getters = {"Real": self._fmu.getReal, "Integer": self._fmu.getInteger, "Boolean": self._fmu.getBoolean,
                   "String": self._fmu.getString, "Enumeration": self._fmu.getInteger}
        out = {}
        for name in names:
            info = self.variables[name]
            out[name] = self._call(f"get {name}", getters[info.type], [info.value_reference])[0]
        return out

    # -- hot path -------------------------------------------------------------------------------

    def _buffer(self, vrs: np.ndarray):
        """(value references as a ctypes array, a value buffer, vrs, the buffer as a ctypes double
        pointer): made once per vrs array (the execution keeps its arrays), so a call converts
        nothing (``data_as`` alone costs microseconds)."""
        key = id(vrs)
        cached = self._buffers.get(key)
        if cached is None or cached[2] is not vrs:
            vr_array = (ctypes.c_uint * len(vrs))(*[int(v) for v in vrs])
            values = np.zeros(len(vrs))
            cached = (vr_array, values, vrs, values.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
            self._buffers[key] = cached
        return cached

    def get_reals(self, vrs: np.ndarray) -> np.ndarray:
        n = len(vrs)
        if n == 0:
            return np.zeros(0)
        if self._get_real is None:
            return np.array(self._call("getReal", self._fmu.getReal, [int(v) for v in vrs]))
        vr_array, values, _, pointer = self._buffer(vrs)
        status = self._get_real(self._component, vr_array, n, pointer)
        if status > 1:
            self._check(status, "getReal")
        return values.copy()

    def set_reals(self, vrs: np.ndarray, values: np.ndarray) -> None:
        n = len(vrs)
        if n == 0:
            return
        if self._get_real is None:
            self._call("setReal", self._fmu.setReal, [int(v) for v in vrs], [float(v) for v in values])
            return
        vr_array, buffer, _, pointer = self._buffer(vrs)
        buffer[:] = values    # the preallocated buffer: no new array or pointer per call
        status = self._set_real(self._component, vr_array, n, pointer)
        if status > 1:
            self._check(status, "setReal")

    def do_step(self, t: float, h: float) -> None:
        if self._get_real is None:
            status = self._fmi1_do_step(self._fmu.component, t, h, b"\x01")
            self._check(status, f"fmiDoStep(t = {t:.6g} s, h = {h:.6g} s)")
            return
        status = self._do_step(self._component, t, h, 1)
        if status > 1:
            self._check(status, f"doStep(t = {t:.6g} s, h = {h:.6g} s)")

    # -- state ----------------------------------------------------------------------------------

    @property
    def can_get_and_set_state(self) -> bool:
        return bool(self.fmi_version == "2.0" and self.model_description.coSimulation.canGetAndSetFMUstate)

    def get_state(self):
        return self._call("getFMUstate", self._fmu.getFMUstate)

    def set_state(self, state) -> None:
        self._call("setFMUstate", self._fmu.setFMUstate, state)

    def free_state(self, state) -> None:
        self._call("freeFMUstate", self._fmu.freeFMUstate, state)

    def serialize_state(self, state) -> bytes:
        return bytes(self._call("serializeFMUstate", self._fmu.serializeFMUstate, state))

    def deserialize_state(self, blob: bytes):
        return self._call("deSerializeFMUstate", self._fmu.deSerializeFMUstate, blob)

    # -- end ------------------------------------------------------------------------------------

    def terminate(self) -> None:
        if self._fmu is not None:
            try:
                self._fmu.terminate()
            except Exception:
                pass

    def free(self) -> None:
        if self._fmu is not None:
            try:
                self._fmu.freeInstance()
            except Exception:
                pass
            self._fmu = None
        if self._own_dir:
            shutil.rmtree(self.unzipdir, ignore_errors=True)
