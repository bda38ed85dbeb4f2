"""Execution side: one FMU instance behind the small interface the master algorithms use.

libcosim splits a co-simulation into algorithm, execution, observers and manipulators; this is
the execution's slave. Backends implement the same interface, so algorithms never touch FMPy
directly: :class:`InProcessSlave` here, ``ProcessSlave`` (process_backend.py, one OS process per
FMU) and ``RaySlave`` (ray_backend.py, one Ray actor per FMU). The hot path is one batched call per
macro step, :meth:`Slave.exchange`: set inputs, doStep, get outputs. Remote backends also offer
:meth:`Slave.exchange_async`, so the execution can send every slave its step first and collect the
outputs afterwards (the slaves step in parallel); in-process it computes at once.

Values of every numeric FMI type travel through these calls as float64 (exact for Booleans,
Enumerations and integers up to 2**53): a value-reference array carries each variable's type in
its upper bits (:func:`typed_reference`), because FMI value references are unique per type only.
An array of Real (FMI 3.0: Float64) references alone is the fast path, one FMI call each way;
other types are got and set per type and converted. Strings and Binaries go by name
(:meth:`Slave.get_values`, :meth:`Slave.set_values`).

An element ``name[i]`` of an FMI 3.0 array variable (orchestration.system.arrays) is a variable of
its own whose typed reference also carries its row-major element index. FMI 3.0 gets and sets an
array only whole ("Getting and Setting Variable Values": ``nValues`` counts every element): a call
gets each array it touches once and picks the elements; a set changes the elements in the values
the slave holds for the array (its start values from the modelDescription, then whatever was set)
and sets the whole array.

An FMU that asks to end the simulation (FMI 2.0: doStep returns fmi2Discard and
fmi2GetBooleanStatus(fmi2Terminated) is true; FMI 3.0: doStep's terminateSimulation) raises
:class:`TerminateRequest`, which is not an error: the execution ends the run there.
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
from orchestration.master.model_exchange import EventTermination, ModelExchangeStepper
from orchestration.system.arrays import ArrayElement, element_variables
from orchestration.system.fmu_info import NUMERIC, family, interface, no_co_simulation, parse_start

#: the type code in the upper bits of a typed value reference (0: Real / Float64, the fast path)
TYPE_CODES = {"Real": 0, "Float64": 0, "Integer": 1, "Int32": 1, "Enumeration": 2, "Boolean": 3, "Float32": 4,
              "Int8": 5, "UInt8": 6, "Int16": 7, "UInt16": 8, "UInt32": 9, "Int64": 10, "UInt64": 11}
_SHIFT = 32
#: the element index + 1 of an array element's typed reference sits above the type code (0: a scalar)
_ELEMENT_SHIFT = 40
_CODE_MASK = (1 << (_ELEMENT_SHIFT - _SHIFT)) - 1


def release_embedded_python(library: Any) -> bool:
    """Let a pythonfmu3 binary drop its embedded-interpreter state now, while it is still loaded.

    pythonfmu3 0.3.x (``pythonfmu-export/src/pythonfmu/PySlaveInstance.cpp``) keeps a static
    ``std::shared_ptr<PyState>`` and resets it in ``finalizePythonInterpreter``, which it also runs
    from an ``__attribute__((destructor))`` at library unload. At process exit the C++ static
    destructor frees the state first, then the unload hook reads the freed reference count and,
    depending on what that memory holds by then, decrements it and frees the block again: glibc
    aborts ("corrupted double-linked list") about one run in 10-28 (valgrind: invalid reads inside
    finalizePythonInterpreter of a block freed by the exit handlers).
    Calling the exported ``finalizePythonInterpreter`` once before exit leaves both exit paths an
    empty pointer. Returns whether the library exports it (other binaries are left alone).
    """
    try:
        finalize = library.finalizePythonInterpreter
    except AttributeError:
        return False
    finalize.restype = None
    finalize.argtypes = []
    finalize()
    return True


def typed_reference(kind: str, value_reference: int, element: int = -1) -> int:
    """The value reference with its FMI type in the upper bits (numeric types only) and, for an
    element of an array variable, its row-major index above them."""
    return ((element + 1) << _ELEMENT_SHIFT) | (TYPE_CODES[kind] << _SHIFT) | int(value_reference)


class TerminateRequest(Exception):
    """An FMU asked to end the simulation (not an error): where and when."""

    def __init__(self, name: str, time: float):
        super().__init__(f"{name} asked to end the simulation at t = {time:g} s")
        self.name, self.time = name, time




@dataclass
class VariableInfo:
    name: str
    value_reference: int
    type: str                 # the family: Real, Integer, Enumeration, Boolean, String, Binary, Clock
    causality: str
    variability: str | None
    unit: str | None
    start: Any                # parsed by type
    kind: str = ""            # the FMI type as declared (Real, Float32, Int16, ...)
    element: int = -1         # an element of an array variable: its row-major index (-1: not one)
    array: bool = False       # a whole array variable (read and written through its elements)

    @property
    def numeric(self) -> bool:
        return self.type in NUMERIC and not self.array

    @property
    def reference(self) -> int:
        """The typed value reference (numeric types only)."""
        return typed_reference(self.kind, self.value_reference, self.element)


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
        cs = md.coSimulation or md.modelExchange     # a model-exchange FMU's, where it has no CoSimulation
        return bool(md.fmiVersion in ("2.0", "3.0") and cs is not None and
                    (getattr(cs, "canGetAndSetFMUstate", False) or getattr(cs, "canGetAndSetFMUState", False)))

    def get_state(self) -> Any: ...
    def set_state(self, state: Any) -> None: ...
    def free_state(self, state: Any) -> None: ...
    def serialize_state(self, state: Any) -> bytes: ...
    def deserialize_state(self, blob: bytes) -> Any: ...
    def terminate(self) -> None: ...
    def free(self) -> None: ...


def variable_table(md: ModelDescription) -> dict[str, VariableInfo]:
    """Every variable of ``md`` by name, and every element ``name[i]`` of its numeric arrays
    (orchestration.system.arrays)."""
    table = {}
    for v in element_variables(md):
        try:
            start = parse_start(v.type, v.start)
        except (TypeError, ValueError):
            start = v.start
        table[v.name] = VariableInfo(v.name, v.valueReference, family(v.type), v.causality, v.variability,
                                     v.unit or (v.declaredType.unit if v.declaredType is not None else None), start,
                                     v.type, v.flat if isinstance(v, ArrayElement) else -1,
                                     bool(getattr(v, "dimensions", None)))
    return table


def array_layout(md: ModelDescription) -> dict[tuple[str, int], np.ndarray]:
    """(FMI type, value reference) -> the start values of each numeric array variable of ``md`` whose
    elements are addressable (zeros where it declares none): what a slave holds for it until set."""
    held = {}
    for v in element_variables(md):
        if isinstance(v, ArrayElement):
            values = held.setdefault((v.type, v.valueReference), np.zeros(v.size))
            try:
                start = parse_start(v.type, v.start)
            except (TypeError, ValueError):
                start = None
            if start is not None:
                values[v.flat] = float(start)
    return held


def _me_sizes(md: ModelDescription) -> tuple[int, int]:
    """(continuous states, event indicators) of a model-exchange FMU's modelDescription."""
    nx = len(md.derivatives) if md.derivatives is not None else 0
    nz = int(md.numberOfEventIndicators or 0)
    return nx, nz


_ME_MAGIC = b"MCME2"


def _me_header(kept: tuple) -> bytes:
    """The model-exchange stepper's part of a serialized state (ModelExchangeStepper.snapshot):
    float64 values, before the FMU's bytes."""
    time, x, z, next_event, last_step, atol, stiff = kept
    head = np.concatenate(([time, next_event, -1.0 if last_step is None else last_step, float(stiff)], x, z, atol))
    return _ME_MAGIC + head.astype("<f8").tobytes()


def _me_split(blob: bytes, nx: int, nz: int, name: str) -> tuple[tuple, bytes]:
    size = 8 * (4 + 2 * nx + nz)
    if not blob.startswith(_ME_MAGIC) or len(blob) < len(_ME_MAGIC) + size:
        raise SlaveError(f"{name}: the saved state is not one of this model-exchange FMU (taken by another version?)")
    head = np.frombuffer(blob[len(_ME_MAGIC):len(_ME_MAGIC) + size], dtype="<f8").astype(float)
    last = float(head[2])
    kept = (float(head[0]), head[4:4 + nx].copy(), head[4 + nx:4 + nx + nz].copy(), float(head[1]),
            None if last < 0.0 else last, head[4 + nx + nz:].copy(), bool(head[3]))
    return kept, blob[len(_ME_MAGIC) + size:]


def _state_key(state: Any) -> int:
    """An FMU state's address (FMPy gives a ctypes pointer), to find what belongs to it."""
    return int(getattr(state, "value", None) or id(state))


class InProcessSlave(Slave):
    """An FMU instance in this process through FMPy (FMI 1.0, 2.0 and 3.0 co-simulation).

    The Real (FMI 3.0: Float64) hot path goes straight to the ctypes functions with preallocated
    buffers (FMPy's convenience methods build new ctypes arrays on every call, which costs more than
    the step of a small FMU); other numeric types go through FMPy's typed calls (module docstring)."""

    def __init__(self, name: str, fmu: Path, workdir: Path | None = None, logging: bool = False):
        self.name = name
        self.fmu = Path(fmu)
        self.model_description = read_model_description(str(fmu))
        md = self.model_description
        if md.fmiVersion not in ("1.0", "2.0", "3.0"):
            raise SlaveError(f"{name}: {self.fmu.name} is FMI {md.fmiVersion} (FMI 1.0, 2.0 and 3.0 CS are supported)")
        if interface(md) is None:
            raise SlaveError(f"{name}: {no_co_simulation(self.fmu)}")
        # a model-exchange FMU: the master integrates its states (orchestration.master.model_exchange)
        self.model_exchange = md.coSimulation is None
        self._interface = md.modelExchange if self.model_exchange else md.coSimulation
        self._stepper: ModelExchangeStepper | None = None
        self._stepper_at: dict[int, tuple] = {}
        self._me_running = False                     # out of initialisation: discrete inputs need event mode
        self._discrete_refs: set[int] | None = None
        self.variables = variable_table(md)
        # the values held for each array variable (module docstring): reset at every instantiate
        self._array_starts = array_layout(md) if md.fmiVersion == "3.0" else {}
        self._held: dict[tuple[str, int], np.ndarray] = {}
        self._held_at: dict[int, dict[tuple[str, int], np.ndarray]] = {}
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

    def _log3(self, instance_environment, status, category, message) -> None:
        self._log(None, None, status, category, message)

    def instantiate(self) -> None:
        md = self.model_description
        from fmpy import calloc, free

        if self.fmi_version == "2.0":
            from fmpy.fmi2 import (FMU2Slave, fmi2CallbackAllocateMemoryTYPE, fmi2CallbackFreeMemoryTYPE,
                                   fmi2CallbackFunctions, fmi2CallbackLoggerTYPE)

            from fmpy.fmi2 import FMU2Model

            kind = FMU2Model if self.model_exchange else FMU2Slave
            self._fmu = kind(guid=md.guid, unzipDirectory=self.unzipdir,
                             modelIdentifier=self._interface.modelIdentifier, instanceName=self.name)
            self._callbacks = fmi2CallbackFunctions()
            self._callbacks.logger = fmi2CallbackLoggerTYPE(self._log)
            self._callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
            self._callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
            self._call("instantiate", self._fmu.instantiate, callbacks=self._callbacks, loggingOn=self._logging)
            raw = self._fmu._functions
            self._get_real = raw["fmi2GetReal"]
            self._set_real = raw["fmi2SetReal"]
            self._do_step = None if self.model_exchange else raw["fmi2DoStep"]
            self._component = self._fmu.component
        elif self.fmi_version == "3.0":
            from fmpy.fmi3 import FMU3Model, FMU3Slave

            kind = FMU3Model if self.model_exchange else FMU3Slave
            self._fmu = kind(guid=md.guid, unzipDirectory=self.unzipdir,
                             modelIdentifier=self._interface.modelIdentifier, instanceName=self.name)
            self._call("fmi3InstantiateModelExchange" if self.model_exchange else "fmi3InstantiateCoSimulation",
                       self._fmu.instantiate, loggingOn=self._logging, logMessage=self._log3)
            raw = self._fmu._functions
            self._get_real = raw["fmi3GetFloat64"]
            self._set_real = raw["fmi3SetFloat64"]
            self._do_step3 = None if self.model_exchange else raw["fmi3DoStep"]
            self._component = self._fmu.component
            self._step_flags = [ctypes.c_bool(), ctypes.c_bool(), ctypes.c_bool(), ctypes.c_double()]
        else:
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
        self._buffers: dict[int, tuple[Any, ...]] = {}
        self._held = {key: values.copy() for key, values in self._array_starts.items()}
        self._held_at.clear()
        if self.model_exchange:
            nx, nz = _me_sizes(md)
            tolerance = md.defaultExperiment.tolerance if md.defaultExperiment is not None else None
            self._stepper = ModelExchangeStepper(self._fmu, self.fmi_version, nx, nz, tolerance, self.name)
            self._stepper_at.clear()
            self._me_running = False

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
        elif self.fmi_version == "3.0":
            self._call("enterInitializationMode", self._fmu.enterInitializationMode, startTime=self._start_time,
                       stopTime=self._stop_time)

    def exit_initialization(self) -> None:
        if self.fmi_version in ("2.0", "3.0"):
            self._call("exitInitializationMode", self._fmu.exitInitializationMode)
            if self._stepper is not None:
                self._me_call("the event iteration after initialisation", self._stepper.after_initialization,
                              self._start_time)
                self._me_running = True
        else:
            defined = self._stop_time is not None
            status = self._fmi1_initialize(self._fmu.component, self._start_time, b"\x01" if defined else b"\x00",
                                           self._stop_time if defined else 0.0)
            self._check(status, "fmiInitializeSlave")

    def _typed_call(self, kind: str, setter: bool):
        """FMPy's get/set function of an FMI type for this FMU's version."""
        prefix = "set" if setter else "get"
        if self.fmi_version == "3.0":
            name = {"Enumeration": "Int64"}.get(kind, kind)
        else:
            name = {"Enumeration": "Integer"}.get(kind, kind)
        return getattr(self._fmu, prefix + name)

    @staticmethod
    def _convert(kind: str, value: Any) -> Any:
        fam = family(kind)
        if fam == "Real":
            return float(value)
        if fam in ("Integer", "Enumeration"):
            if isinstance(value, float) and value != int(value):
                raise ValueError(f"{value!r} is not a whole number")
            return int(value)
        if fam == "Boolean":
            return bool(value)
        if fam == "String":
            return value.decode("utf-8") if isinstance(value, bytes) else str(value)
        return value

    def _discrete(self, refs) -> bool:
        """Whether a model-exchange FMU in continuous-time mode takes these typed references only in
        event mode (FMI 2.0 and 3.0: a discrete or non-Real input)."""
        if self._stepper is None or not self._me_running:
            return False
        if self._discrete_refs is None:
            self._discrete_refs = {info.reference for info in self.variables.values() if info.numeric and
                                   (info.type != "Real" or info.variability not in (None, "continuous"))}
        return any(int(r) in self._discrete_refs for r in refs)

    def set_values(self, values: dict[str, Any]) -> None:
        """Start values or manipulated values by name, any FMI type; an element of an array sets the
        whole array with the values held for its other elements (module docstring). A model-exchange
        FMU takes discrete ones as an event."""
        if self._stepper is not None and self._me_running and any(
                not self.variables[n].numeric or self._discrete([self.variables[n].reference]) for n in values):
            self._me_call("setting " + ", ".join(values), self._stepper.in_event_mode,
                          lambda: self._set_values(values))
            return
        self._set_values(values)

    def _set_values(self, values: dict[str, Any]) -> None:
        by_kind: dict[str, tuple[list[int], list[Any], list[str]]] = {}
        arrays: dict[tuple[str, int], list[str]] = {}
        for name, value in values.items():
            info = self.variables[name]
            if info.array:
                raise SlaveError(f"{self.name} ({self.fmu.name}): {name} is an array variable: set its elements "
                                 f"({name}[0], ...)")
            try:
                typed = self._convert(info.kind, value)
            except (TypeError, ValueError) as exc:
                raise SlaveError(f"{self.name} ({self.fmu.name}): {name} is a {info.kind}: {exc}") from None
            if info.element >= 0:
                key = (info.kind, info.value_reference)
                self._held[key][info.element] = float(typed)
                arrays.setdefault(key, []).append(name)
                continue
            vrs, vals, names = by_kind.setdefault(info.kind, ([], [], []))
            vals.append(typed)
            vrs.append(info.value_reference)
            names.append(name)
        for kind, (vrs, vals, names) in by_kind.items():
            self._call(f"set {', '.join(names)}", self._typed_call(kind, True), vrs, vals)
        for (kind, vr), names in arrays.items():
            whole = [self._convert(kind, v) for v in self._held[(kind, vr)]]
            self._call(f"set {', '.join(names)} (the whole array)", self._typed_call(kind, True), [vr], whole)

    def get_values(self, names: Sequence[str]) -> dict[str, Any]:
        out = {}
        for name in names:
            info = self.variables[name]
            if info.element >= 0:
                size = len(self._held[(info.kind, info.value_reference)])
                got = self._call(f"get {name}", self._typed_call(info.kind, False), [info.value_reference], size)
                out[name] = got[info.element]
                continue
            value = self._call(f"get {name}", self._typed_call(info.kind, False), [info.value_reference])[0]
            out[name] = value.decode("utf-8") if isinstance(value, bytes) and info.type == "String" else value
        return out

    # -- hot path -------------------------------------------------------------------------------

    def _buffer(self, vrs: np.ndarray):
        """(value references as a ctypes array, a value buffer, vrs, the buffer as a ctypes double
        pointer, per-type groups or None): made once per vrs array (the execution keeps its arrays),
        so a call converts nothing (``data_as`` alone costs microseconds). Groups are (kind,
        positions, value references, reader, arrays) for arrays with other types than Real or with
        elements of array variables; an FMI 2.0 group's reader is (fmi2Get<Type>, its references as
        a ctypes array, a ctypes value buffer) made once, so that a master recording a Boolean does
        not pay FMPy's typed call (new ctypes arrays and a list per call) for every other value of the
        FMU at every step. ``arrays`` is None for scalars, else (the array variables' references,
        the held-value keys, their sizes, each position's index into their values concatenated)."""
        key = id(vrs)
        cached = self._buffers.get(key)
        if cached is None or cached[2] is not vrs:
            refs = np.asarray(vrs, dtype=np.int64)
            codes = (refs >> _SHIFT) & _CODE_MASK
            elements = (refs >> _ELEMENT_SHIFT) - 1
            plain = refs & 0xFFFFFFFF
            vr_array = (ctypes.c_uint * len(vrs))(*[int(v) for v in plain])
            values = np.zeros(len(vrs))
            groups = None
            if np.any(codes != 0) or np.any(elements >= 0):
                kind_of = {code: kind for kind, code in TYPE_CODES.items()}
                kind_of[0] = "Float64" if self.fmi_version == "3.0" else "Real"
                kind_of[1] = "Int32" if self.fmi_version == "3.0" else "Integer"
                groups = []
                for code in np.unique(codes):
                    kind = kind_of[int(code)]
                    at = np.flatnonzero((codes == code) & (elements < 0))
                    if len(at):
                        group_vrs = [int(v) for v in plain[at]]
                        groups.append((kind, at, group_vrs, self._raw_reader(kind, group_vrs), None))
                    at = np.flatnonzero((codes == code) & (elements >= 0))
                    if len(at):
                        groups.append(self._array_group(kind, at, plain[at], elements[at]))
            cached = (vr_array, values, vrs, values.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), groups)
            self._buffers[key] = cached
        return cached

    def _array_group(self, kind: str, at: np.ndarray, plain: np.ndarray, elements: np.ndarray) -> tuple:
        """The group of the array elements at positions ``at`` of one FMI type (see :meth:`_buffer`)."""
        array_vrs = [int(v) for v in dict.fromkeys(int(v) for v in plain)]
        keys, sizes, offsets, offset = [], [], {}, 0
        for vr in array_vrs:
            held = self._held.get((kind, vr))
            if held is None:
                raise SlaveError(f"{self.name} ({self.fmu.name}): value reference {vr} ({kind}) is no array "
                                 "variable whose elements can be addressed")
            keys.append((kind, vr))
            sizes.append(len(held))
            offsets[vr] = offset
            offset += len(held)
        pick = np.array([offsets[int(vr)] + int(e) for vr, e in zip(plain, elements)], dtype=np.int64)
        return kind, at, array_vrs, None, (array_vrs, keys, offset, pick)

    def _raw_reader(self, kind: str, vrs: list[int]):
        """(fmi2Get<Type>, the references as a ctypes array, a ctypes value buffer) of an FMI 2.0
        numeric type, None otherwise (FMPy's typed call is used then)."""
        if self.fmi_version != "2.0":
            return None
        name, ctype = {"Real": ("fmi2GetReal", ctypes.c_double), "Integer": ("fmi2GetInteger", ctypes.c_int),
                       "Enumeration": ("fmi2GetInteger", ctypes.c_int),
                       "Boolean": ("fmi2GetBoolean", ctypes.c_int)}[kind]
        return self._fmu._functions[name], (ctypes.c_uint * len(vrs))(*vrs), (ctype * len(vrs))()

    def get_reals(self, vrs: np.ndarray) -> np.ndarray:
        """The values of ``vrs`` (typed references, module docstring) as float64."""
        n = len(vrs)
        if n == 0:
            return np.zeros(0)
        vr_array, values, _, pointer, groups = self._buffer(vrs)
        if groups is not None or self._get_real is None:
            for kind, at, plain, *raw in (groups or [("Real", np.arange(n), [int(v) for v in vr_array])]):
                if len(raw) > 1 and raw[1] is not None:
                    array_vrs, _, total, pick = raw[1]
                    got = self._call(f"get {kind} arrays", self._typed_call(kind, False), array_vrs, total)
                    values[at] = np.asarray([float(v) for v in got])[pick]
                    continue
                if raw and raw[0] is not None:
                    function, group_vrs, buffer = raw[0]
                    status = function(self._component, group_vrs, len(buffer), buffer)
                    if status > 1:
                        self._check(status, f"get {kind}")
                    values[at] = buffer       # as FMPy's typed call gives them: each value as float
                    continue
                got = self._call(f"get {kind}", self._typed_call(kind, False), plain)
                values[at] = [float(v) for v in got]
            return values.copy()
        if self.fmi_version == "3.0":
            status = self._get_real(self._component, vr_array, n, pointer, n)
        else:
            status = self._get_real(self._component, vr_array, n, pointer)
        if status > 1:
            self._check(status, "getReal")
        return values.copy()

    def set_reals(self, vrs: np.ndarray, values: np.ndarray) -> None:
        """Set ``vrs`` (typed references) from float64 values, converted to each variable's type."""
        n = len(vrs)
        if n == 0:
            return
        if self._stepper is not None and self._discrete(vrs):
            self._me_call("setting discrete inputs", self._stepper.in_event_mode, lambda: self._set_reals(vrs, values))
            return
        self._set_reals(vrs, values)

    def _set_reals(self, vrs: np.ndarray, values: np.ndarray) -> None:
        n = len(vrs)
        vr_array, buffer, _, pointer, groups = self._buffer(vrs)
        if groups is not None or self._get_real is None:
            for kind, at, plain, *rest in (groups or [("Real", np.arange(n), [int(v) for v in vr_array])]):
                try:
                    typed = [self._convert(kind, v) for v in np.asarray(values)[at]]
                except ValueError as exc:
                    raise SlaveError(f"{self.name} ({self.fmu.name}): a {kind} input: {exc}") from None
                if len(rest) > 1 and rest[1] is not None:
                    self._set_arrays(kind, rest[1], typed)
                    continue
                self._call(f"set {kind}", self._typed_call(kind, True), plain, typed)
            return
        buffer[:] = values    # the preallocated buffer: no new array or pointer per call
        if self.fmi_version == "3.0":
            status = self._set_real(self._component, vr_array, n, pointer, n)
        else:
            status = self._set_real(self._component, vr_array, n, pointer)
        if status > 1:
            self._check(status, "setReal")

    def _set_arrays(self, kind: str, layout: tuple, typed: list) -> None:
        """Put ``typed`` (one value per position of an array group) into the held values of their
        arrays and set those arrays whole, in one call (FMI 3.0 sets an array only whole)."""
        array_vrs, keys, _, pick = layout
        held = [self._held[key] for key in keys]
        whole = np.concatenate(held)
        whole[pick] = typed
        start = 0
        for values in held:
            values[:] = whole[start:start + len(values)]
            start += len(values)
        self._call(f"set {kind} arrays", self._typed_call(kind, True), array_vrs,
                   [self._convert(kind, v) for v in whole])

    def _me_call(self, what: str, function, *args) -> None:
        """A call of the model-exchange stepper: the FMU's failed calls as SlaveError, its request to
        terminate as TerminateRequest."""
        try:
            function(*args)
        except EventTermination as request:
            raise TerminateRequest(self.name, request.time) from None
        except SlaveError:
            raise
        except FMICallException as exc:
            raise SlaveError(self._explain(what, str(exc))) from None
        except Exception as exc:     # FMPy raises plain Exception for some failed calls
            raise SlaveError(self._explain(what, f"{type(exc).__name__}: {exc}")) from None

    def do_step(self, t: float, h: float) -> None:
        if self._stepper is not None:
            self._me_call(f"the integration from t = {t:.6g} s over h = {h:.6g} s", self._stepper.step, t, h)
            return
        if self.fmi_version == "2.0":
            status = self._do_step(self._component, t, h, 1)
            if status == 2 and self._terminated_fmi2():
                raise TerminateRequest(self.name, self._last_successful_time(t))
            if status > 1:
                self._check(status, f"doStep(t = {t:.6g} s, h = {h:.6g} s)")
        elif self.fmi_version == "3.0":
            event, terminate, early, last = self._step_flags
            status = self._do_step3(self._component, t, h, True, ctypes.byref(event), ctypes.byref(terminate),
                                    ctypes.byref(early), ctypes.byref(last))
            if status > 1 and not terminate.value:
                self._check(status, f"doStep(t = {t:.6g} s, h = {h:.6g} s)")
            if terminate.value:
                raise TerminateRequest(self.name, float(last.value) if early.value or status > 1 else t + h)
        else:
            status = self._fmi1_do_step(self._fmu.component, t, h, b"\x01")
            self._check(status, f"fmiDoStep(t = {t:.6g} s, h = {h:.6g} s)")

    def _terminated_fmi2(self) -> bool:
        try:
            return bool(self._fmu.getBooleanStatus(3))            # fmi2Terminated
        except Exception:
            return False

    def _last_successful_time(self, t: float) -> float:
        try:
            return float(self._fmu.getRealStatus(2))               # fmi2LastSuccessfulTime
        except Exception:
            return t

    # -- state ----------------------------------------------------------------------------------

    def get_state(self):
        if self.fmi_version == "3.0":
            state = self._call("getFMUState", self._fmu.getFMUState)
            if self._held:      # the held array values belong to the state (a rollback restores them)
                self._held_at[_state_key(state)] = {k: v.copy() for k, v in self._held.items()}
        else:
            state = self._call("getFMUstate", self._fmu.getFMUstate)
        if self._stepper is not None:     # the integrator's time, states and next event go with it
            self._stepper_at[_state_key(state)] = self._stepper.snapshot()
        return state

    def set_state(self, state) -> None:
        if self.fmi_version == "3.0":
            self._call("setFMUState", self._fmu.setFMUState, state)
            held = self._held_at.get(_state_key(state))
            if held is not None:
                for key, values in held.items():
                    self._held[key][:] = values
        else:
            self._call("setFMUstate", self._fmu.setFMUstate, state)
        if self._stepper is not None:
            kept = self._stepper_at.get(_state_key(state))
            if kept is None:
                raise SlaveError(f"{self.name} ({self.fmu.name}): a state this slave did not take")
            self._stepper.restore(kept)

    def free_state(self, state) -> None:
        self._stepper_at.pop(_state_key(state), None)
        if self.fmi_version == "3.0":
            self._held_at.pop(_state_key(state), None)
            self._call("freeFMUState", self._fmu.freeFMUState, state)
        else:
            self._call("freeFMUstate", self._fmu.freeFMUstate, state)

    def serialize_state(self, state) -> bytes:
        if self.fmi_version == "3.0":
            blob = bytes(self._call("serializeFMUState", self._fmu.serializeFMUState, state))
        else:
            blob = bytes(self._call("serializeFMUstate", self._fmu.serializeFMUstate, state))
        if self._stepper is not None:
            blob = _me_header(self._stepper_at[_state_key(state)]) + blob
        return blob

    def deserialize_state(self, blob: bytes):
        kept = None
        if self._stepper is not None:
            kept, blob = _me_split(blob, self._stepper.nx, self._stepper.nz, self.name)
        if self.fmi_version == "3.0":
            state = self._call("deserializeFMUState", self._fmu.deserializeFMUState, blob)
        else:
            state = self._call("deSerializeFMUstate", self._fmu.deSerializeFMUstate, blob)
        if kept is not None:
            self._stepper_at[_state_key(state)] = kept
        return state

    # -- end ------------------------------------------------------------------------------------

    @staticmethod
    def _free_fmi3(fmu: Any) -> None:
        """fmi3FreeInstance, then the pythonfmu3 finalizer, then unload: FMPy's freeInstance unloads
        the library itself, after which the finalizer can no longer be looked up or called
        (release_embedded_python)."""
        try:
            fmu.fmi3FreeInstance(fmu.component)
        except Exception:
            pass
        release_embedded_python(fmu.dll)
        try:
            fmu.freeLibrary()
        except Exception:
            pass

    def terminate(self) -> None:
        if self._fmu is not None:
            try:
                self._fmu.terminate()
            except Exception:
                pass

    def free(self) -> None:
        if self._fmu is not None:
            if self.fmi_version == "3.0":
                self._free_fmi3(self._fmu)
            else:
                try:
                    self._fmu.freeInstance()
                except Exception:
                    pass
            self._fmu = None
        if self._own_dir:
            shutil.rmtree(self.unzipdir, ignore_errors=True)
