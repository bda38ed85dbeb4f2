"""What every marine-cosim FMU adds to pythonfmu's slave.

pythonfmu gives the FMI plumbing; this base class adds what our FMUs promise on top of it
(see docs/fmu_runtime.md):

* variables declared once with unit, frame, bounds and direct-feedthrough dependencies, and a
  modelDescription.xml that passes ``fmpy.validation.validate_fmu`` (UnitDefinitions, units,
  DefaultExperiment, Outputs with dependencies, InitialUnknowns, which pythonfmu omits);
* a deterministic GUID (a hash of the bundled sources), so rebuilding the same sources gives the
  same modelDescription apart from ``generationDateAndTime``;
* get/set/serialise of the *complete* internal state (all variable values, the component's own
  state through :meth:`get_model_state`, time and status), deep-copied, pickle-free;
* bad input is reported, never propagated: a non-finite input, a parameter out of range, or a
  non-finite output is logged with the variable's name and value at status error. The FMU's
  native loader turns that log into an ``fmi2Error`` return status (pythonfmu itself cannot).

Vectors follow one naming scheme in every FMU: ``<name>[0]``, ``<name>[1]``, ``<name>[2]``
(zero-based indices, components along the axes of the frame the description names).
"""
from __future__ import annotations

import copy
import datetime
import hashlib
import math
import traceback
import uuid
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence
from xml.etree.ElementTree import Element, SubElement

import numpy as np
from pythonfmu import Fmi2Slave as _PythonFmuSlave
from pythonfmu.enums import Fmi2Causality, Fmi2Status, Fmi2Variability
from pythonfmu.variables import Boolean, Integer, Real, String
from pythonfmu._version import __version__ as PYTHONFMU_VERSION

from components.data_files import file_problem  # noqa: F401  (the adapters' import)
from fmus import _state_codec

# Exponents of the SI base units (kg, m, s, A, K, mol, cd, rad) of every unit our FMUs use.
UNITS: dict[str, dict[str, int]] = {
    "1": {},
    "s": {"s": 1},
    "m": {"m": 1},
    "m2": {"m": 2},
    "m3": {"m": 3},
    "kg": {"kg": 1},
    "kg.m": {"kg": 1, "m": 1},
    "kg.m2": {"kg": 1, "m": 2},
    "kg/m": {"kg": 1, "m": -1},
    "kg/m3": {"kg": 1, "m": -3},
    "m/s": {"m": 1, "s": -1},
    "m/s2": {"m": 1, "s": -2},
    "rad": {"rad": 1},
    "rad/s": {"rad": 1, "s": -1},
    "rad/s2": {"rad": 1, "s": -2},
    "N": {"kg": 1, "m": 1, "s": -2},
    "N.m": {"kg": 1, "m": 2, "s": -2},
    "N.m/rad": {"kg": 1, "m": 2, "s": -2, "rad": -1},
    "N/m": {"kg": 1, "s": -2},
    "N.s": {"kg": 1, "m": 1, "s": -1},
    "N.s/m": {"kg": 1, "s": -1},
    "N.s2/m2": {"kg": 1, "m": -1},
    "N.m.s/rad": {"kg": 1, "m": 2, "s": -1, "rad": -1},
    "N.m.s2/rad2": {"kg": 1, "m": 2, "rad": -2},
    "W": {"kg": 1, "m": 2, "s": -3},
    "J": {"kg": 1, "m": 2, "s": -2},
    "Pa": {"kg": 1, "m": -1, "s": -2},
    "N.m2": {"kg": 1, "m": 3, "s": -2},
    "N.m2.s": {"kg": 1, "m": 3, "s": -1},
    "rad/m": {"rad": 1, "m": -1},
    "m/s/N": {"s": 1, "kg": -1},
    "m/s2/N": {"kg": -1},
    "m/N": {"s": 2, "kg": -1},
    "Pa.s": {"kg": 1, "m": -1, "s": -1},
    "1/s": {"s": -1},
    "1/kg": {"kg": -1},
    "1/(kg.m2)": {"kg": -1, "m": -2},
}

AXES = {
    "NED": ("north", "east", "down"),
    "body": ("x forward", "y starboard", "z down"),
}

# The largest magnitude a Real parameter of each unit may take where the adapter declares no range
# of its own: a ceiling well beyond anything physical offshore (the largest ships displace ~1e9 kg,
# the longest lines ~1e4 m; 1e6 m stands for "no seabed"), low enough that products of a few parameters stay far from
# overflow.  Declared as min/max in modelDescription.xml and enforced at set, like any bound.
PARAMETER_CEILINGS: dict[str, float] = {
    "1": 1e6, "s": 1e6, "m": 1e7, "m2": 1e8, "m3": 1e9, "kg": 1e10, "kg.m": 1e13, "kg.m2": 1e15,
    "kg/m": 1e5, "kg/m3": 1e5, "m/s": 1e3, "m/s2": 1e4, "rad": 1e3, "rad/s": 1e3, "rad/s2": 1e4,
    "N": 1e10, "N.m": 1e12, "N.m/rad": 1e14, "N/m": 1e12, "N.s": 1e12, "N.s/m": 1e12, "N.s2/m2": 1e10,
    "N.m.s/rad": 1e14, "N.m.s2/rad2": 1e16, "W": 1e10, "J": 1e12, "Pa": 1e13, "N.m2": 1e15,
    "N.m2.s": 1e15, "rad/m": 1e3, "m/s/N": 1e3, "m/s2/N": 1e3, "m/N": 1e3, "Pa.s": 1e12, "1/s": 1e6,
    "1/kg": 1e3, "1/(kg.m2)": 1e3,
}
MAX_GRAVITY = 100.0           # m/s2: ten Earths; any gravity parameter is checked against it
MAX_TIME = 1e9                # s: |start time| and |time| of a step (~32 years; h = 1e-6 s still resolves)
MAX_SUBSTEPS_PER_STEP = 10_000  # internal sub-steps one doStep may take (a bound on one call's work)
STATE_VERSION = 2             # of the FMU state dict (get/set/serialize FMU state)

# FMI 2.0 states of an instance (the standard's section 4.2.4, simplified to what we enforce)
_INSTANTIATED, _INITIALIZATION, _STEPPING, _TERMINATED = "instantiated", "initialization mode", \
    "step mode", "terminated"
_SETTABLE = frozenset({_INSTANTIATED, _INITIALIZATION, _STEPPING})

_SKIP_IN_GUID = {"slavemodule.txt", "python_env.txt"}
_MAX_PLANS = 256          # distinct value-reference lists remembered per instance and direction
# operations of a compiled getReal
_WHOLE, _SLICE, _ELEMENT, _SCALAR, _FEEDTHROUGH, _LAZY, _GETTER = range(7)
INVALID_STATE = "__invalid_state__"

# np.errstate(all="ignore") costs ~3 us to enter and leave (it builds numpy's error-state object
# anew each time), and the hot path enters it at every doStep and every lazy read. The object it
# would build depends only on the error state in force, so it is built once per such state and set
# through numpy's context variable directly; numpy without that variable (< 2) uses np.errstate.
try:
    from numpy._core.umath import _extobj_contextvar, _make_extobj
    _make_extobj(all="ignore")     # private to numpy: checked once, np.errstate if it changed
except Exception:   # pragma: no cover - numpy < 2, or a numpy whose private names differ
    _extobj_contextvar = _make_extobj = None
_IGNORING: list = [None, None]   # [the error state in force, the same with all="ignore"]


def _ignore_fp() -> Any:
    """Enter np.errstate(all="ignore"); the token to give :func:`_restore_fp`."""
    if _extobj_contextvar is None:   # pragma: no cover - numpy < 2
        state = np.errstate(all="ignore")
        state.__enter__()
        return state
    current = _extobj_contextvar.get()
    if _IGNORING[0] is not current:   # the cache holds ``current``, so its identity is not reused
        _IGNORING[:] = [current, _make_extobj(all="ignore")]
    return _extobj_contextvar.set(_IGNORING[1])


def _restore_fp(token: Any) -> None:
    """Leave the error state :func:`_ignore_fp` entered."""
    if _extobj_contextvar is None:   # pragma: no cover - numpy < 2
        token.__exit__(None, None, None)
    else:
        _extobj_contextvar.reset(token)


def _guarded(fallback: Callable[..., Any]):
    """Never let an exception reach pythonfmu: its C++ side answers one by freeing the Python
    instance and then keeps using it (a crash later). Log at status error instead (the native
    loader turns that into fmi2Error) and return ``fallback(*args)``."""
    def wrap(method):
        def guarded(self, *args):
            try:
                return method(self, *args)
            except Exception as exc:
                self.error(f"{method.__name__} failed: {type(exc).__name__}: {exc}")
                return fallback(*args)
        guarded.__name__ = method.__name__
        guarded.__doc__ = method.__doc__
        return guarded
    return wrap


@dataclass
class VariableInfo:
    """Metadata of one scalar FMI variable beyond what pythonfmu keeps."""

    name: str
    kind: str                      # "Real", "Integer", "Boolean", "String"
    causality: str                 # "parameter", "input", "output"
    description: str
    unit: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    depends_on: tuple[str, ...] = ()   # inputs this output depends on directly (feedthrough)
    variability: str | None = None
    group: str = ""                # the vector or scalar this element belongs to
    index: int | None = None       # position in the group's array, None for a scalar
    value_reference: int = -1
    nominal: float | None = None   # FMI's nominal (Real only): the scale error control uses



_IMMUTABLE = (float, int, bool, str, bytes, type(None), np.generic)
_STATE_VERDICTS = 8      # states whose check is remembered (a master restores one or two at a time)


def copy_state(x: Any) -> Any:
    """A deep copy of an FMU state: dicts, lists and tuples rebuilt, arrays copied, immutable values
    shared, anything else through copy.deepcopy.  The states of the adapters are such trees of
    arrays and numbers; copy.deepcopy walks them with a memo per object and cost 60 % of error
    control's run time on the offshore lift (a save and two restores per step).  No array in a
    state is referenced twice, so the memo's aliasing is not needed."""
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, _IMMUTABLE):
        return x
    if isinstance(x, dict):
        return {k: copy_state(v) for k, v in x.items()}
    if isinstance(x, list):
        return [copy_state(v) for v in x]
    if isinstance(x, tuple):
        return tuple(copy_state(v) for v in x)
    return copy.deepcopy(x)

class Fmi2Slave(_PythonFmuSlave):
    """Base of every marine-cosim adapter (named like pythonfmu's class on purpose: pythonfmu's
    native loader finds the model class by the literal text ``class X(Fmi2Slave):``)."""

    description = ""
    author = "marine-cosim developers"
    license = "MIT"
    version = "0.1.0"
    default_stop_time = 10.0
    default_step_size = 0.01
    # output group -> method computing it on first read after a step (for outputs that cost more
    # than most masters want to pay every step); update_outputs leaves these groups alone
    lazy_outputs: dict[str, str] = {}
    # input groups a step carries on (a position moved on with its velocity over the step): set
    # after the step, even to the value they had, they are in force again and the feedthrough
    # outputs are formed anew (a Gauss-Seidel master gives an FMU its sources' end-of-step values
    # at the step's start, and the same values again when it refreshes the feedthrough)
    carried_inputs: frozenset[str] = frozenset()
    # the internal sub-steps one doStep may take (a bound on one call's work; an adapter whose
    # sub-step costs microseconds may allow more)
    max_substeps_per_step: int = MAX_SUBSTEPS_PER_STEP
    # the number of rows of the model state's arrays changes as the model runs (a line paying out
    # grows elements): a restored state is compared with the model's by columns only
    state_rows_vary: bool = False

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.v: dict[str, Any] = {}               # every variable's value, vectors as numpy arrays
        self.info: dict[str, VariableInfo] = {}   # by scalar name, in value-reference order
        self.time = 0.0
        self.initialized = False
        self.failure: str | None = None           # set once the instance cannot go on (FMI's error state)
        self.phase = _INSTANTIATED                # where in the FMI life cycle the instance is
        self._inputs_changed = False
        self._in_init = False                     # between enterInitializationMode and exit
        self._init_dirty = True                   # something was set since outputs were last built
        self._stale: set[str] = set()             # lazy output methods to run before the next read
        self._lazy_methods = frozenset(type(self).lazy_outputs.values())   # every one (stale after a step)
        self._lazy_groups: dict[str, tuple] = {}  # lazy output method -> its output groups (checked)
        self.input_version = 0                    # counts input changes (adapters skip re-applying)
        # input groups set since the last step (or the end of initialisation), whatever the
        # value: an adapter whose step carried an input on (a position moved on with its
        # velocity, see carried_inputs) keeps that end-of-step value for the inputs not set since
        self.changed_inputs: set[str] = set()
        self._substep_warned: set[str] = set()    # causes stable_substep has warned about
        self._real_by_vr: dict[int, VariableInfo] = {}   # Real variables by value reference
        self._get_plans: dict[tuple, tuple] = {}  # value references of a getReal -> what to read
        self._set_plans: dict[tuple, tuple] = {}  # value references of a setReal -> where to write
        # id of a state restored lately -> (the state, what _state_problem found in it): masters
        # restore the same state many times (an iterative master at every iteration of a step,
        # error control twice), and it cannot change between restores (_checked_state_problem)
        self._state_verdicts: dict[int, tuple[Any, str | None]] = {}
        # pythonfmu's __init__ blanks these; the class attributes are the truth
        for attr in ("author", "license", "version", "description"):
            setattr(self, attr, getattr(type(self), attr, None))

    # ------------------------------------------------------------------ declaring variables

    def real(self, name: str, causality: str, start: float | Sequence[float] | None, unit: str,
             description: str, *, frame: str | None = None, size: int | None = None,
             minimum: float | None = None, maximum: float | None = None,
             depends_on: Iterable[str] = (), variability: str | None = None,
             labels: Sequence[str] | None = None, nominal: float | None = None) -> None:
        """Declare a Real scalar (size None) or vector ``name[0..size-1]``.

        ``frame`` ("NED" or "body") is appended to every element's description together with the
        axis; ``depends_on`` lists input groups an output depends on within the same step (direct
        feedthrough); ``labels`` replaces the indices in the names (e.g. "0,1" for a tensor);
        ``nominal`` is written as the FMI ``nominal`` attribute of every element (FMI 2.0 section
        2.2.7: the scale a master's error control uses; 1 when absent)."""
        if unit not in UNITS:
            raise ValueError(f"unit {unit!r} of {name} is not in fmus._base.UNITS")
        if nominal is not None and not (np.isfinite(nominal) and nominal > 0.0):
            raise ValueError(f"nominal {nominal!r} of {name} must be finite and > 0 (FMI 2.0 section 2.2.7)")
        if causality == "parameter":
            # every parameter has a range: the adapter's, else a ceiling by unit (PARAMETER_CEILINGS)
            ceiling = MAX_GRAVITY if name.split(".")[-1] == "gravity" else PARAMETER_CEILINGS[unit]
            maximum = ceiling if maximum is None else maximum
            minimum = -ceiling if minimum is None else minimum
            if start is not None and not all(minimum <= x <= maximum for x in np.ravel(start)):
                raise ValueError(f"start value {start!r} of {name} is outside [{minimum}, {maximum}]")
        deps = tuple(depends_on)
        if size is None:
            self.v[name] = float(start) if start is not None else 0.0
            self._register(Real, name, name, None, causality, description, unit, minimum, maximum,
                           deps, variability, nominal=nominal)
            return
        values = np.zeros(size) if start is None else np.array(start, dtype=float).reshape(size).copy()
        self.v[name] = values
        axes = AXES.get(frame) if frame else None
        for i in range(size):
            where = f" [{frame}, {axes[i]}]" if axes and size <= 3 else (f" [{frame}]" if frame else "")
            label = labels[i] if labels else str(i)
            self._register(Real, f"{name}[{label}]", name, i, causality, description + where, unit,
                           minimum, maximum, deps, variability, nominal=nominal)

    def integer(self, name: str, causality: str, start: int, description: str, *,
                minimum: int | None = None, maximum: int | None = None, depends_on: Iterable[str] = ()) -> None:
        self.v[name] = int(start)
        self._register(Integer, name, name, None, causality, description, None, minimum, maximum,
                       tuple(depends_on), None)

    def boolean(self, name: str, causality: str, start: bool, description: str, *,
                depends_on: Iterable[str] = ()) -> None:
        self.v[name] = bool(start)
        self._register(Boolean, name, name, None, causality, description, None, None, None, tuple(depends_on), None)

    def string(self, name: str, causality: str, start: str, description: str) -> None:
        self.v[name] = str(start)
        self._register(String, name, name, None, causality, description, None, None, None, (), None)

    def _register(self, cls, scalar: str, group: str, index: int | None, causality: str,
                  description: str, unit: str | None, minimum, maximum, depends_on, variability, *,
                  nominal: float | None = None) -> None:
        if variability is None:
            variability = {"parameter": "fixed"}.get(causality, "continuous" if cls is Real else "discrete")
        info = VariableInfo(scalar, cls.__name__, causality, description, unit, minimum, maximum,
                            depends_on, variability, group, index, nominal=nominal)

        lazy = type(self).lazy_outputs.get(group)
        if lazy:
            def getter():
                # an expensive output nobody may read: computed on the first read after a step
                if lazy in self._stale and self.initialized and not self.failure:
                    self._stale.discard(lazy)
                    self._compute_lazy(lazy)
                value = self.v[group]
                return value[index] if index is not None else value
        elif depends_on:
            def getter():
                # direct feedthrough: inputs set since the last step change this output now
                if self._inputs_changed and self.initialized and not self.failure:
                    self._inputs_changed = False
                    self.update_outputs()
                value = self.v[group]
                return value[index] if index is not None else value
        else:
            def getter():
                value = self.v[group]
                return value[index] if index is not None else value

        def setter(value):
            self._set_checked(info, index, value)

        var = cls(scalar, causality=Fmi2Causality[causality], variability=Fmi2Variability[variability],
                  description=description, getter=getter,
                  setter=None if causality == "output" else setter)
        self.register_variable(var, nested=False)
        info.value_reference = var.value_reference
        self.info[scalar] = info
        if cls is Real:
            self._real_by_vr[var.value_reference] = info

    # ------------------------------------------------------------------ checked set

    def _set_checked(self, info: VariableInfo, index: int | None, value) -> None:
        if info.kind == "Real":
            value = float(value)
            if not math.isfinite(value):
                self.error(f"{info.causality} '{info.name}' = {value!r} is not finite; the value is rejected "
                           f"and '{info.name}' keeps {self._get_scalar(info, index)!r}")
                return
            if (info.minimum is not None and value < info.minimum) or (
                    info.maximum is not None and value > info.maximum):
                self.error(f"{info.causality} '{info.name}' = {value!r} is outside its range "
                           f"[{info.minimum}, {info.maximum}] ({info.unit}); the value is rejected")
                return
        if info.kind == "Integer" and ((info.minimum is not None and int(value) < info.minimum) or (
                info.maximum is not None and int(value) > info.maximum)):
            self.error(f"{info.causality} '{info.name}' = {value!r} is outside its range "
                       f"[{info.minimum}, {info.maximum}]; the value is rejected")
            return
        if info.causality == "parameter" and info.variability == "fixed" and self.initialized:
            self.error(f"parameter '{info.name}' is fixed and cannot be set after initialisation")
            return
        if info.causality == "input" and info.group not in self.changed_inputs:
            self.changed_inputs.add(info.group)
            if info.group in self.carried_inputs:
                self._input_changed()       # a value the step carried on is in force again
        if info.kind == "Real" and _same_float(self._get_scalar(info, index), value):
            return   # bit for bit what it is: nothing to recompute (a master re-setting its inputs)
        if index is None:
            self.v[info.group] = value
        else:
            self.v[info.group][index] = value
        self._init_dirty = True
        if info.causality == "input":
            self._input_changed()

    def _input_changed(self) -> None:
        """An input took a new value: feedthrough and lazy outputs are out of date."""
        self._inputs_changed = True
        self.input_version += 1
        self._stale = set(self._lazy_methods)

    def _get_scalar(self, info: VariableInfo, index: int | None):
        value = self.v[info.group]
        return float(value[index]) if index is not None else value

    def error(self, message: str) -> None:
        """Log at status error: the native loader makes the current FMI call return fmi2Error."""
        self.log(message, Fmi2Status.error)

    def warning(self, message: str) -> None:
        self.log(message, Fmi2Status.warning)

    # ------------------------------------------------------------------ what adapters implement

    def check_parameters(self) -> list[tuple[str, Any, str]]:
        """Cross-parameter checks at the end of initialisation: (name, value, reason) per problem."""
        return []

    def initialize_model(self) -> None:
        """Build the component from the parameters (called once, at exit_initialization_mode)."""

    def step_model(self, t: float, h: float) -> None:
        """Advance the component from t to t + h with the current inputs."""
        raise NotImplementedError

    def update_outputs(self) -> None:
        """Write the output variables from the component's current state and inputs."""

    def get_model_state(self) -> dict:
        """The component's complete internal state (copies), for get/set/serialize FMU state."""
        return {}

    def set_model_state(self, state: dict) -> None:
        pass

    # ------------------------------------------------------------------ FMI life cycle

    def _refused(self, call: str, allowed: frozenset | tuple = _SETTABLE) -> bool:
        """Report and refuse ``call`` if the instance is in the error state or if the FMI life
        cycle does not allow it now.  The one gate of every FMI call (cheap: two lookups)."""
        if self.failure is not None:
            self.error(f"{call} refused: instance '{self.instance_name}' is in the error state after: "
                       f"{self.failure} (restore a saved FMU state, or reset the instance)")
            return True
        if self.phase not in allowed:
            self.error(f"{call} is not allowed in {self.phase} (FMI 2.0 life cycle)")
            return True
        return False

    @_guarded(lambda *a: None)
    def setup_experiment(self, start_time: float, stop_time=None, tolerance=None):
        if self._refused("fmi2SetupExperiment", (_INSTANTIATED,)):
            return
        start = float(start_time)
        problem = None
        if not (math.isfinite(start) and abs(start) <= MAX_TIME):
            problem = f"start time {start!r} s must be finite and at most {MAX_TIME:g} s in magnitude"
        elif stop_time is not None and not (math.isfinite(stop_time) and stop_time >= start):
            problem = f"stop time {stop_time!r} s must be finite and not before the start time {start!r} s"
        elif tolerance is not None and not (math.isfinite(tolerance) and tolerance >= 0.0):
            problem = f"tolerance {tolerance!r} must be finite and not negative"
        if problem:
            self.failure = problem
            self.error(f"fmi2SetupExperiment: {problem}")
            return
        self.time = start

    @_guarded(lambda *a: None)
    def enter_initialization_mode(self):
        if self._refused("fmi2EnterInitializationMode", (_INSTANTIATED,)):
            return
        self.phase = _INITIALIZATION
        self._in_init = True
        self._init_dirty = True

    def _outputs_in_initialization(self) -> None:
        """FMI 2.0 lets a master read outputs in initialisation mode (to propagate them before the
        first step): build the model from the present parameters and inputs and compute them.
        exitInitializationMode builds it again from the final values.  Invalid parameters leave the
        outputs alone; exitInitializationMode reports them."""
        if not (self._in_init and self._init_dirty) or self.failure:
            return
        self._init_dirty = False
        try:
            if self.check_parameters():
                return
            with np.errstate(all="ignore"):
                self.initialize_model()
                self.update_outputs()
                for method in self._lazy_methods:
                    getattr(self, method)()
        except Exception as exc:  # reported again, with the final values, at exitInitializationMode
            self.warning(f"outputs cannot be computed yet in initialisation mode: {exc}")

    @_guarded(lambda *a: None)
    def terminate(self):
        # allowed in the error state too (FMI 2.0): the master ends a failed run this way
        if self.phase == _TERMINATED:
            self.error("fmi2Terminate: the instance is already terminated")
        self.phase = _TERMINATED

    # getReal/setReal are the hot path of a co-simulation (a master calls them every macro step
    # with the same value references). pythonfmu loops over the references calling one Python
    # closure per scalar; here each distinct list of references is compiled once into a plan that
    # reads or writes whole vector slices. The closures stay: getInteger etc., pythonfmu's own
    # uses, and the error path of setReal (which reports and rejects value by value).

    @_guarded(lambda vrs: [math.nan] * len(vrs))
    def get_real(self, vrs):
        if self.failure is not None:
            # the values are those of the failure (for diagnosis), the status says they are not valid
            self._refused("fmi2GetReal")
        elif self._in_init:
            self._outputs_in_initialization()
        key = tuple(vrs)
        plan = self._get_plans.get(key)
        if plan is None:
            plan = self._get_plans[key] = self._compile_get(key)
        v = self.v
        out: list[float] = []
        for op, group, where in plan:
            if op == _WHOLE:
                out.extend(v[group].tolist())
            elif op == _SLICE:
                out.extend(v[group][where].tolist())
            elif op == _ELEMENT:
                out.append(float(v[group][where]))
            elif op == _SCALAR:
                out.append(float(v[group]))
            elif op == _FEEDTHROUGH:
                # direct feedthrough: inputs set since the last step change these outputs now
                if self._inputs_changed and self.initialized and not self.failure:
                    self._inputs_changed = False
                    self.update_outputs()
            elif op == _LAZY:
                # an expensive output nobody may read: computed on the first read after a step
                if group in self._stale and self.initialized and not self.failure:
                    self._stale.discard(group)
                    self._compute_lazy(group)
            else:   # a Real registered without self.real(): its own getter
                out.append(float(group()))
        if len(out) != len(key):   # pythonfmu's C++ would read past the list's end
            raise ValueError(f"{len(out)} values for {len(key)} value references (a vector changed size?)")
        # the last line against a silent NaN, wherever a value comes from (initialisation mode,
        # feedthrough, lazy outputs): a sum of floats is finite only if every term is
        if not math.isfinite(sum(out)):
            self._report_non_finite(key, out)
        return out

    def _report_non_finite(self, vrs: tuple, values: list) -> None:
        bad = [(self.vars[vr].name, x) for vr, x in zip(vrs, values) if not math.isfinite(x)]
        if not bad:
            return   # the sum overflowed; every value is finite
        names = ", ".join(f"'{n}' = {x!r}" for n, x in bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
        if self.failure is not None:
            return   # already reported as the error state
        if self.initialized:
            # a model state that gives a non-finite output cannot go on
            self.failure = f"output {names} is not finite at t = {self.time} s"
            self.error(f"{self.failure}; the model state is no longer valid (check inputs and step size)")
        else:
            # initialisation mode: the parameters may still change; exitInitializationMode checks again
            self.error(f"fmi2GetReal in {self.phase}: {names} is not finite with the present parameters "
                       "and inputs")

    def _compile_get(self, vrs: tuple) -> tuple:
        """The reads of one getReal, in order: contiguous elements of a vector become one slice,
        and each output's feedthrough or lazy computation runs where pythonfmu's per-variable
        getter would first have run it (so the values returned are the same)."""
        if len(self._get_plans) > _MAX_PLANS:
            self._get_plans.clear()
        lazy = type(self).lazy_outputs
        plan: list[list] = []
        triggered: set = set()
        for vr in vrs:
            var = self.vars[vr]
            if not isinstance(var, Real):
                raise TypeError(f"Variable with valueReference={vr} is not of type Real!")
            info = self._real_by_vr.get(vr)
            if info is None:
                plan.append([_GETTER, var.getter, None])
                continue
            method = lazy.get(info.group)
            trigger = (_LAZY, method) if method else (_FEEDTHROUGH, None) if info.depends_on else None
            if trigger and trigger not in triggered:
                triggered.add(trigger)
                plan.append([trigger[0], trigger[1], None])
            if info.index is None:
                plan.append([_SCALAR, info.group, None])
                continue
            last = plan[-1] if plan else None
            if last and last[0] in (_ELEMENT, _SLICE) and last[1] == info.group and \
                    (last[2] + 1 if last[0] == _ELEMENT else last[2].stop) == info.index:
                start = last[2] if last[0] == _ELEMENT else last[2].start
                last[0], last[2] = _SLICE, slice(start, info.index + 1)
            else:
                plan.append([_ELEMENT, info.group, info.index])
        for op in plan:
            if op[0] == _SLICE and op[2].start == 0 and op[2].stop == len(self.v[op[1]]):
                op[0] = _WHOLE
        return tuple(tuple(op) for op in plan)

    @_guarded(lambda *a: None)
    def set_real(self, vrs, values):
        if self.failure is not None or self.phase is _TERMINATED:
            self._refused("fmi2SetReal")
            return
        key = tuple(vrs)
        plan = self._set_plans.get(key)
        if plan is None:
            plan = self._set_plans[key] = self._compile_set(key)
        segments, bounded, fixed, inputs = plan
        # fast path when every value is acceptable: finite (a sum of floats is finite only if
        # every term is), inside its range, and no fixed parameter after initialisation
        try:
            acceptable = len(values) == len(key) and math.isfinite(sum(values)) and \
                not (fixed and self.initialized) and \
                (not bounded or all(lo <= values[k] <= hi for k, lo, hi in bounded))
        except (TypeError, ValueError, OverflowError):   # not numbers: the loop reports them
            acceptable = False
        if not acceptable:
            # pythonfmu's loop: _set_checked rejects and reports value by value, keeps the rest
            super().set_real(vrs, values)
            return
        self._apply_set(segments, inputs, values)

    @_guarded(lambda *a: None)
    def take_real(self, vrs: tuple, values: list) -> None:
        """set_real of values the native loader kept back (fmus/native/fmi2_loader.c): a list
        :meth:`set_bounds` allowed, with values it found finite and within those bounds, while
        :meth:`may_keep_back_sets` held (it still does: no Python ran since). The same effect
        without checking them again."""
        plan = self._set_plans.get(vrs)
        if plan is None or not self.may_keep_back_sets() or len(values) != len(vrs):
            self.set_real(vrs, values)
            return
        self._apply_set(plan[0], plan[3], values)

    def _apply_set(self, segments: tuple, inputs: frozenset, values) -> None:
        """Write accepted values where :meth:`_compile_set` says; note the inputs set (``inputs``:
        the input groups among them) and changed."""
        v = self.v
        changed = inputs_changed = False
        if inputs and not inputs <= self.changed_inputs:
            # noted once per step (changed_inputs is emptied by a step): one subset test, not a
            # lookup per segment at every set
            fresh = inputs.difference(self.changed_inputs)
            self.changed_inputs.update(fresh)
            # a value the step carried on is in force again, even if set to what it was
            carried = self.carried_inputs
            inputs_changed = any(group in carried for group in fresh)
        for group, where, start, stop, is_input, whole in segments:
            if where is None:
                new = float(values[start])
                if _same_float(v[group], new):
                    continue
                v[group] = new
            else:
                new = values[start:stop]
                array = v[group]
                # the whole vector read without a slice (most inputs are set whole): a slice costs
                # as much as the comparison; == does not tell 0.0 from -0.0, _same_floats does
                held = array.tolist() if whole else array[where].tolist()
                if held == new and (0.0 not in held or _same_floats(held, new)):
                    continue
                array[where] = new
            changed = True
            inputs_changed = inputs_changed or is_input
        if changed:
            self._init_dirty = True
        if inputs_changed:
            self._input_changed()

    def may_keep_back_sets(self) -> bool:
        """Whether a setReal that :meth:`set_bounds` allows may be held back by the native loader now
        and given later, before the next call that enters Python: the instance is stepping and not in
        the error state, so such a call is taken without a word (fmus/native/fmi2_loader.c)."""
        return self.failure is None and self.phase is _STEPPING and self.initialized

    def set_bounds(self, vrs: tuple) -> tuple[list[float], list[float]] | None:
        """(minima, maxima) of ``vrs`` if every one is a Real input of this FMU (set_real takes a finite
        value within them without a word while :meth:`may_keep_back_sets`), else None."""
        lo, hi = [], []
        for vr in vrs:
            info = self._real_by_vr.get(vr)
            var = self.vars.get(vr)
            if info is None or info.causality != "input" or var is None or var.setter is None:
                return None
            lo.append(-math.inf if info.minimum is None else float(info.minimum))
            hi.append(math.inf if info.maximum is None else float(info.maximum))
        return lo, hi

    def read_ahead(self, vrs: tuple) -> tuple[list[float], bool]:
        """get_real(vrs) at the end of a doStep, for the native loader to answer the getReal of ``vrs``
        that follows without entering Python: the values, and whether the read gave no message and
        left the instance as healthy as it was (fmus/native/fmi2_loader.c; else the bridge holds the
        messages for the call that comes next)."""
        queue, failure = self.log_queue, self.failure
        logged = len(queue)
        values = self.get_real(vrs)
        return values, len(queue) == logged and self.failure is failure

    def _compile_set(self, vrs: tuple) -> tuple:
        """Where the values of one setReal go: (group, slice or None, first, last + 1, is input,
        whether the slice is the whole vector) per run of contiguous elements; (position, min, max)
        of every bounded variable; whether a fixed parameter is among them; the input groups set."""
        if len(self._set_plans) > _MAX_PLANS:
            self._set_plans.clear()
        segments: list[list] = []
        bounded = []
        fixed = False
        for k, vr in enumerate(vrs):
            var = self.vars[vr]
            if not isinstance(var, Real):
                raise TypeError(f"Variable with valueReference={vr} is not of type Real!")
            info = self._real_by_vr.get(vr)
            if info is None or var.setter is None:
                # not ours or not settable: pythonfmu's loop (and its error) for the whole call
                return ((), ((k, math.inf, -math.inf),), True, frozenset())
            if info.minimum is not None or info.maximum is not None:
                bounded.append((k, -math.inf if info.minimum is None else info.minimum,
                                math.inf if info.maximum is None else info.maximum))
            fixed = fixed or (info.causality == "parameter" and info.variability == "fixed")
            is_input = info.causality == "input"
            last = segments[-1] if segments else None
            if info.index is not None and last and last[0] == info.group and last[1] is not None and \
                    last[1].stop == info.index and last[3] == k and last[4] == is_input:
                last[1], last[3] = slice(last[1].start, info.index + 1), k + 1
            else:
                where = None if info.index is None else slice(info.index, info.index + 1)
                segments.append([info.group, where, k, k + 1, is_input])
        return tuple((*s, s[1] is not None and s[1].start == 0 and s[1].stop == len(self.v[s[0]]))
                     for s in segments), tuple(bounded), fixed, frozenset(s[0] for s in segments if s[4])

    @_guarded(lambda vrs: [0] * len(vrs))
    def get_integer(self, vrs):
        if self.failure is not None:
            self._refused("fmi2GetInteger")
        self._outputs_in_initialization()
        return super().get_integer(vrs)

    @_guarded(lambda vrs: [False] * len(vrs))
    def get_boolean(self, vrs):
        if self.failure is not None:
            self._refused("fmi2GetBoolean")
        self._outputs_in_initialization()
        return super().get_boolean(vrs)

    @_guarded(lambda vrs: [""] * len(vrs))
    def get_string(self, vrs):
        if self.failure is not None:
            self._refused("fmi2GetString")
        self._outputs_in_initialization()
        return super().get_string(vrs)

    @_guarded(lambda *a: None)
    def set_integer(self, vrs, values):
        if not self._refused("fmi2SetInteger"):
            super().set_integer(vrs, values)

    @_guarded(lambda *a: None)
    def set_boolean(self, vrs, values):
        if not self._refused("fmi2SetBoolean"):
            super().set_boolean(vrs, values)

    @_guarded(lambda *a: None)
    def set_string(self, vrs, values):
        if not self._refused("fmi2SetString"):
            super().set_string(vrs, values)

    @_guarded(lambda *a: None)
    def exit_initialization_mode(self):
        if self._refused("fmi2ExitInitializationMode", (_INITIALIZATION,)):
            return
        self.phase = _STEPPING
        self._in_init = False
        if self.initialized:
            return   # a state past initialisation was restored in initialisation mode: the run goes on from it
        problems = self.check_parameters()
        for name, value, reason in problems:
            self.error(f"parameter '{name}' = {value!r}: {reason}")
        if problems:
            self.failure = f"invalid parameters: {', '.join(p[0] for p in problems)}"
            return
        try:
            self.initialize_model()
            self.initialized = True
            self.changed_inputs.clear()
            self.update_outputs()
            self._stale = set(self._lazy_methods)
        except Exception as exc:  # a bug or an unforeseen bad combination: report, don't crash the host
            self._fail(f"initialisation failed: {exc}")
            return
        self._check_outputs("initialisation")

    def do_step(self, current_time: float, step_size: float) -> bool:
        # the usual step, let through by one test that each check of _step_refused passes too (a
        # NaN or an infinity fails every comparison here); anything else goes through those checks
        if not (self.failure is None and self.phase is _STEPPING and self.initialized
                and 0.0 < step_size < math.inf and abs(current_time) <= MAX_TIME
                and current_time + step_size > current_time
                and abs(current_time - self.time) <= 1e-9 * max(1.0, abs(self.time)) + 1e-6 * step_size) \
                and self._step_refused(current_time, step_size):
            return True
        substep, cap = self.internal_substep(), self.max_substeps_per_step
        if substep and step_size > substep * cap:
            # a bound on the work of one call (it would otherwise run for minutes or hours)
            self.error(f"a doStep of {step_size:g} s would take {step_size / substep:.3g} internal sub-steps of "
                       f"{substep:g} s, more than the {cap} one doStep may take: use communication steps of at "
                       f"most {substep * cap:g} s (the step is refused; the state is unchanged)")
            return True
        try:
            # overflow is caught below by the output check, with the variable's name
            ignoring = _ignore_fp()
            try:
                self.step_model(current_time, step_size)
                self.time = current_time + step_size
                self.changed_inputs.clear()
                self.update_outputs()
            finally:
                _restore_fp(ignoring)
            self._inputs_changed = False
            self._stale = set(self._lazy_methods)
        except Exception as exc:
            self._fail(f"step at t = {current_time} s failed: {exc}")
            return True
        self._check_outputs("t = {t} s")
        return True

    def _step_refused(self, current_time: float, step_size: float) -> bool:
        """Report and refuse a doStep that the state of the instance or its times do not allow."""
        if self.failure:
            self.error(f"{self.instance_name} cannot step: {self.failure}")
            return True
        if self.phase is _TERMINATED:
            self.error("fmi2DoStep is not allowed in terminated (FMI 2.0 life cycle)")
            return True
        if not self.initialized:
            self.error(f"{self.instance_name}: doStep called before initialisation ended")
            return True
        if not (math.isfinite(step_size) and step_size > 0.0):
            self.error(f"communication step size {step_size!r} must be positive and finite")
            return True
        if not (math.isfinite(current_time) and abs(current_time) <= MAX_TIME
                and current_time + step_size > current_time):
            self.error(f"doStep at t = {current_time!r} s with h = {step_size!r} s: the time must be finite, at most "
                       f"{MAX_TIME:g} s in magnitude, and advance by the step")
            return True
        if abs(current_time - self.time) > 1e-9 * max(1.0, abs(self.time)) + 1e-6 * step_size:
            # FMI 2.0 (4.2.2): a step goes from tc_i to tc_i + h_i, the next from there; a master that
            # wants another time restores a state first. The models' time-dependent inputs (waves,
            # schedules) take the master's time while their state is at the instance's: a step from
            # elsewhere would join two times silently (the Reference FMUs refuse it too). The margin
            # allows the rounding of masters that form t as start + k h
            self.error(f"doStep at t = {current_time!r} s, but the instance is at t = {self.time!r} s (where its last "
                       "step ended, or the time of the state restored): FMI 2.0 steps on from there; restore a "
                       "state (fmi2SetFMUstate) to step from another time (the step is refused; the state is "
                       "unchanged)")
            return True
        return False

    def internal_substep(self) -> float | None:
        """The shortest internal sub-step the model takes in a doStep (for the bound on one call's
        work, MAX_SUBSTEPS_PER_STEP); None: no sub-steps.  The default: what
        :meth:`stable_substep` last chose, else the parameter ``max_substep``; adapters whose
        sub-steps come otherwise say so."""
        chosen = self.__dict__.get("_chosen_substep")
        if chosen:
            return chosen
        requested = self.v.get("max_substep")
        return requested if isinstance(requested, float) and requested > 0.0 else None

    def stable_substep(self, requested: float, limit: float, safety: float, cause: str) -> float:
        """The internal sub-step to take: ``requested`` (max_substep), or ``safety`` times the
        integrator's stability ``limit`` (components/stability.py) where that is shorter, said
        once in a warning that names the ``cause``."""
        chosen = self._chosen_substep = min(requested, safety * limit)
        if safety * limit >= requested:
            return chosen
        if not self._in_init and cause not in self._substep_warned:
            self._substep_warned.add(cause)
            self.warning(f"max_substep = {requested:g} s is longer than {cause} allows (stable to {limit:.3g} s): "
                         f"sub-steps of {safety * limit:.3g} s are taken")
        return safety * limit

    def _fail(self, message: str) -> None:
        self.failure = message
        self.error(message + "\n" + traceback.format_exc(limit=4))

    def _compute_lazy(self, method: str) -> None:
        """Form the lazy outputs of ``method`` and check them like the eager ones at doStep: a
        non-finite value makes the read fail with its name, never a silent NaN."""
        ignoring = _ignore_fp()
        try:
            getattr(self, method)()
        finally:
            _restore_fp(ignoring)
        groups = self._lazy_groups.get(method)
        if groups is None:
            names = [g for g, m in type(self).lazy_outputs.items() if m == method and g in self.v]
            groups = self._lazy_groups[method] = self._split_groups(names)
        self._check_groups(groups, "t = {t} s (computed on read)")

    def _split_groups(self, groups: list[str]) -> tuple[list[str], list[str], Callable, Callable]:
        """The vector groups and the scalar groups of ``groups``, and for each kind a function of
        ``self.v`` giving their values (one C call instead of a lookup per group)."""
        vectors = [g for g in groups if isinstance(self.v[g], np.ndarray)]
        scalars = [g for g in groups if not isinstance(self.v[g], np.ndarray)]
        return vectors, scalars, _values_of(vectors), _values_of(scalars)

    def _check_outputs(self, when: str) -> None:
        """Refuse to report a non-finite output: one vectorised check, then find the culprit."""
        groups = self.__dict__.get("_output_groups")
        if groups is None:
            names = list(dict.fromkeys(i.group for i in self.info.values()
                                       if i.causality == "output" and i.kind == "Real"
                                       and i.group not in type(self).lazy_outputs))
            groups = self._output_groups = self._split_groups(names)
        self._check_groups(groups, when)

    def _check_groups(self, split: tuple, when: str) -> None:
        """Fail on the first non-finite value of the groups :meth:`_split_groups` gave. ``when`` says
        where, ``{t}`` standing for the time (formatted only for the message: a float's repr costs
        a microsecond on every step)."""
        vectors, scalars, vector_values, scalar_values = split
        v = self.v
        # a sum of floats is finite only if every term is (one that overflows with finite terms
        # only goes through the search below, which finds nothing)
        total = sum(scalar_values(v)) + sum(chain.from_iterable(map(_tolist, vector_values(v))))
        if math.isfinite(total):
            return
        when = when.format(t=self.time)
        for group in vectors + scalars:
            value = self.v[group]
            if isinstance(value, np.ndarray):
                if np.all(np.isfinite(value)):
                    continue
                index = int(np.flatnonzero(~np.isfinite(value))[0])
                name, bad = f"{group}[{index}]", float(value[index])
            elif math.isfinite(value):
                continue
            else:
                name, bad = group, value
            self.failure = f"output '{name}' became {bad!r} at {when}"
            self.error(f"{self.failure}; the model state is no longer valid (check inputs and step size)")
            return

    # ------------------------------------------------------------------ FMU state

    @_guarded(lambda *a: {INVALID_STATE: "the state could not be taken (see the log)"})
    def _get_fmu_state(self) -> dict:
        if self.failure is not None:
            self._refused("fmi2GetFMUstate")   # taken all the same (it carries the failure, for diagnosis)
        return self._snapshot()

    def _snapshot(self) -> dict:
        return copy_state({"version": STATE_VERSION, "values": self.v, "time": self.time,
                           "initialized": self.initialized, "failure": self.failure,
                           "model": self.get_model_state()})

    @_guarded(lambda *a: None)
    def _set_fmu_state(self, state: dict) -> None:
        # the one way out of the error state (FMI 2.0): allowed whatever the instance's state
        problem = state[INVALID_STATE] if isinstance(state, dict) and INVALID_STATE in state else \
            self._checked_state_problem(state)
        if problem is None:
            backup = self._snapshot()
            phase = (self.phase, self._in_init, self._init_dirty)
            try:
                self._restore(copy_state(state))   # the same saved state may be restored more than once
                problem = self._restored_problem(state, backup)
            except Exception as exc:
                problem = f"{type(exc).__name__}: {exc}"
            if problem is not None:
                try:
                    self._restore(backup)   # never half-restored: the instance is as it was, in the error state
                    self.phase, self._in_init, self._init_dirty = phase
                except Exception as exc:
                    problem += f" (and the instance could not be put back as it was: {exc})"
        if problem is not None:
            self.failure = f"fmi2SetFMUstate failed: {problem}"
            self.error(f"{self.failure}; the instance is in the error state until a valid state is restored")

    def _checked_state_problem(self, state) -> str | None:
        """:meth:`_state_problem`, found once per state object: what it checks depends on the state
        and on this instance's variables (their names, types and shapes, fixed when it is
        instantiated), and a state is never changed after it is made (taken by fmi2GetFMUstate or
        read by fmi2DeSerializeFMUstate: it is restored through a copy), so a state restored again
        has the same verdict. The memo holds the states it names (an id cannot be reused while the
        state lives) and only the last few."""
        kept = self._state_verdicts.get(id(state))
        if kept is not None and kept[0] is state:
            return kept[1]
        problem = self._state_problem(state)
        if len(self._state_verdicts) >= _STATE_VERDICTS:
            del self._state_verdicts[next(iter(self._state_verdicts))]     # the oldest
        self._state_verdicts[id(state)] = (state, problem)
        return problem

    def _restore(self, state: dict) -> None:
        # the model is rebuilt from the parameters only where they differ from those it was built
        # with (a state may come from another instance, or from before a tunable parameter changed):
        # error control restores every FMU twice per step, and a rebuild (the crane's articulated
        # body, the ship's sea) cost more than the step itself
        params = self._parameter_groups()
        self.same_parameters = bool(self.initialized and state["initialized"]) and all(
            _same_value(self.v[g], state["values"][g]) for g in params)
        for group, value in state["values"].items():
            self.v[group] = np.array(value, dtype=float) if isinstance(self.v.get(group), np.ndarray) else value
        self.time = float(state["time"])
        self.initialized = bool(state["initialized"])
        self.failure = state["failure"]
        self.set_model_state(state["model"])
        self._stale = set(self._lazy_methods)
        self.changed_inputs.clear()
        if self.phase is not _TERMINATED:
            self._phase_of_state()

    def _phase_of_state(self) -> None:
        """Bring the FMI life cycle in line with a state just restored (an FMU state does not
        carry the phase): a state past initialisation restored before initialisation ended went on
        in initialisation mode, where the outputs read and fmi2ExitInitializationMode rebuilt the
        model from the parameters, so the restored state was silently dropped (the run started
        again from t = 0 at fmi2OK); and one taken in initialisation mode restored in step mode
        left an instance that neither fmi2ExitInitializationMode nor fmi2DoStep would take."""
        if self.initialized:
            if self.phase is _INSTANTIATED:
                self.phase = _STEPPING        # never initialised again over the restored state
            self._in_init = False             # in initialisation mode: fmi2ExitInitializationMode just leaves it
        elif self.phase is _STEPPING:
            self.phase = _INITIALIZATION      # the parameters may be set again, then initialisation ends
            self._in_init = self._init_dirty = True

    def _state_problem(self, state) -> str | None:
        """What makes ``state`` unfit to restore into this instance, checked as a whole before
        anything is overwritten: its version, the variables (every one present, of its type and
        shape, finite), the time, and every number of the model's own state finite."""
        if not isinstance(state, dict) or set(state) != {"version", "values", "time", "initialized", "failure",
                                                           "model"}:
            keys = sorted(state) if isinstance(state, dict) else type(state).__name__
            return f"not an FMU state of this model (keys {keys})"
        if state["version"] != STATE_VERSION:
            return f"state version {state['version']!r}, this FMU reads version {STATE_VERSION}"
        values = state["values"]
        if not isinstance(values, dict) or set(values) != set(self.v):
            return "the state's variables are not this model's variables"
        for group, mine in self.v.items():
            value = values[group]
            if isinstance(mine, np.ndarray):
                if not isinstance(value, np.ndarray) or value.shape != mine.shape or value.dtype.kind != "f":
                    return f"variable '{group}' has shape {np.shape(value)}, expected {mine.shape}"
                if not np.isfinite(value).all():
                    return f"variable '{group}' holds a non-finite value"
            elif _kind(value) != _kind(mine):
                return f"variable '{group}' is a {type(value).__name__}, expected a {type(mine).__name__}"
            elif _kind(value) == "float" and not math.isfinite(value):
                return f"variable '{group}' = {value!r} is not finite"
        time = state["time"]
        if not (isinstance(time, float) and math.isfinite(time) and abs(time) <= MAX_TIME):
            return f"time {time!r} is not a finite time"
        if not isinstance(state["initialized"], bool) or not (state["failure"] is None or
                                                              isinstance(state["failure"], str)):
            return "malformed status"
        if not isinstance(state["model"], dict):
            return "malformed model state"
        where = _first_nan(state["model"], "model")
        if where:
            return f"{where} is NaN"
        return self.model_state_problem(state["model"]) if state["model"] else None

    def model_state_problem(self, model: dict) -> str | None:
        """What is inconsistent in a model state given to restore (adapters whose arrays change
        their number of rows check that they agree with each other); None: nothing."""
        return None

    def _parameter_groups(self) -> frozenset[str]:
        groups = getattr(self, "_param_groups", None)
        if groups is None:
            groups = self._param_groups = frozenset(i.group for i in self.info.values() if i.causality == "parameter")
        return groups

    def _restored_problem(self, state: dict, before: dict) -> str | None:
        """The model's own state given must have the structure (keys, list lengths, array shapes)
        of the model's: of the state held before the restore where that was built from the same
        parameters, else of the state held after it (a component that cannot take an array of
        another shape has raised already; one that took it as it came is caught by the former)."""
        params = self._parameter_groups()
        same = before["initialized"] and before["model"] and state["model"] and all(
            _same_value(before["values"][g], state["values"][g]) for g in params)
        return _structure_difference(state["model"], before["model"] if same else self.get_model_state(), "model",
                                     type(self).state_rows_vary)

    # pythonfmu calls these two on the class, so they cannot log: a failure travels inside the
    # state value and is reported by the setFMUstate that tries to use it.
    @classmethod
    def _fmu_state_to_bytes(cls, state: dict) -> bytes:
        try:
            return _state_codec.to_bytes(state, cls.__name__)
        except Exception as exc:
            return _state_codec.to_bytes({INVALID_STATE: f"serialisation failed: {exc}"}, cls.__name__)

    @classmethod
    def _fmu_state_from_bytes(cls, state: bytes) -> dict:
        try:
            return _state_codec.from_bytes(state, cls.__name__)
        except Exception as exc:
            return {INVALID_STATE: f"deserialisation failed: {exc}"}

    # ------------------------------------------------------------------ modelDescription.xml

    def _source_guid(self) -> str:
        """GUID from the bundled sources, so identical sources give an identical GUID."""
        digest = hashlib.sha256(self.__class__.__name__.encode())
        root = Path(self.resources) if self.resources else None
        if root and root.is_dir():
            for path in sorted(p for p in root.rglob("*") if p.is_file()):
                rel = path.relative_to(root).as_posix()
                if "__pycache__" in rel or rel in _SKIP_IN_GUID:
                    continue
                digest.update(rel.encode())
                digest.update(path.read_bytes())
        return "{" + str(uuid.UUID(bytes=digest.digest()[:16], version=5)) + "}"

    def to_xml(self, model_options: dict | None = None) -> Element:
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        root = Element("fmiModelDescription", {
            "fmiVersion": "2.0",
            "modelName": self.modelName,
            "guid": self._source_guid(),
            "description": self.description or "",
            "author": self.author,
            "version": self.version,
            "license": self.license,
            "generationTool": f"marine-cosim build_fmus.py (pythonfmu {PYTHONFMU_VERSION})",
            "generationDateAndTime": now,
            "variableNamingConvention": "structured",
            "numberOfEventIndicators": "0",
        })
        SubElement(root, "CoSimulation", {
            "modelIdentifier": self.modelName,
            "needsExecutionTool": "true",   # a Python with numpy/scipy, see docs/fmu_runtime.md
            "canHandleVariableCommunicationStepSize": "true",
            "canInterpolateInputs": "false",
            "canBeInstantiatedOnlyOncePerProcess": "false",
            "canNotUseMemoryManagementFunctions": "true",
            "canGetAndSetFMUstate": "true",
            "canSerializeFMUstate": "true",
            "providesDirectionalDerivative": "false",
        })
        used_units = sorted({i.unit for i in self.info.values() if i.unit})
        units = SubElement(root, "UnitDefinitions")
        for name in used_units:
            unit = SubElement(units, "Unit", {"name": name})
            SubElement(unit, "BaseUnit", {k: str(e) for k, e in UNITS[name].items()})
        categories = SubElement(root, "LogCategories")
        for category, text in self.log_categories.items():
            SubElement(categories, "Category", {"name": category, "description": text})
        SubElement(root, "DefaultExperiment", {"startTime": "0", "stopTime": repr(float(self.default_stop_time)),
                                               "stepSize": repr(float(self.default_step_size))})
        variables = SubElement(root, "ModelVariables")
        index_of: dict[str, int] = {}
        inputs_of_group: dict[str, list[int]] = {}
        for index, info in enumerate(self.info.values(), start=1):
            index_of[info.name] = index
            if info.causality == "input":
                inputs_of_group.setdefault(info.group, []).append(index)
            attrib = {"name": info.name, "valueReference": str(info.value_reference),
                      "description": info.description, "causality": info.causality,
                      "variability": info.variability}
            if info.causality == "parameter":
                attrib["initial"] = "exact"
            elif info.causality == "output":
                attrib["initial"] = "calculated"
            sv = SubElement(variables, "ScalarVariable", attrib)
            type_attrib = {}
            if info.unit:
                type_attrib["unit"] = info.unit
            number = (lambda x: str(int(x))) if info.kind == "Integer" else _xml_number
            if info.minimum is not None:
                type_attrib["min"] = number(info.minimum)
            if info.maximum is not None:
                type_attrib["max"] = number(info.maximum)
            if info.nominal is not None:
                type_attrib["nominal"] = _xml_number(info.nominal)
            if info.causality != "output":
                type_attrib["start"] = _xml_value(self._get_scalar(info, info.index))
            SubElement(sv, info.kind, type_attrib)
        structure = SubElement(root, "ModelStructure")
        outputs = [i for i in self.info.values() if i.causality == "output"]
        if outputs:
            node = SubElement(structure, "Outputs")
            for info in outputs:
                deps = sorted(ix for group in info.depends_on for ix in inputs_of_group[group])
                attrib = {"index": str(index_of[info.name]), "dependencies": " ".join(map(str, deps))}
                if deps:
                    attrib["dependenciesKind"] = " ".join("dependent" for _ in deps)
                SubElement(node, "Unknown", attrib)
            # pythonfmu leaves this out; FMI 2.0 requires every calculated output here. No
            # dependencies attribute: conservatively "depends on all knowns" at initialisation.
            node = SubElement(structure, "InitialUnknowns")
            for info in outputs:
                SubElement(node, "Unknown", {"index": str(index_of[info.name])})
        return root


_tolist = np.ndarray.tolist


def _values_of(keys: list[str]) -> Callable[[dict], tuple]:
    """A function of a dict giving the tuple of its values at ``keys`` (itemgetter's C loop; it
    gives a bare value for one key, and takes none)."""
    if not keys:
        return lambda d: ()
    if len(keys) == 1:
        key = keys[0]
        return lambda d: (d[key],)
    return itemgetter(*keys)


def _same_value(a: Any, b: Any) -> bool:
    return np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b


def _kind(value: Any) -> str:
    """The FMI type a Python value stands for (numpy scalars as their Python counterparts)."""
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, np.integer)):
        return "int"
    if isinstance(value, (float, np.floating)):
        return "float"
    return type(value).__name__


def _first_nan(tree: Any, path: str) -> str | None:
    """The path of the first NaN in a state tree (dicts, lists, arrays, scalars).  Infinities pass:
    models keep them as sentinels ("no limit yet": a crane's stable sub-step before it is
    computed); a state that makes an output infinite is refused when the output is read."""
    if isinstance(tree, np.ndarray):
        if tree.dtype.kind in "fc" and np.isnan(tree).any():
            return f"{path}[{int(np.flatnonzero(np.isnan(tree.ravel()))[0])}]"
        return None
    if isinstance(tree, float):
        return path if math.isnan(tree) else None
    if isinstance(tree, dict):
        items = tree.items()
    elif isinstance(tree, (list, tuple)):
        items = enumerate(tree)
    else:
        return None
    for key, value in items:
        found = _first_nan(value, f"{path}.{key}")
        if found:
            return found
    return None


def _structure_difference(given: Any, held: Any, path: str, rows_vary: bool = False) -> str | None:
    """Where two state trees differ in structure: dict keys, array shapes (by columns only if
    ``rows_vary``), types.  Lists may differ in length (of warnings said, of events); lists of
    the same length are compared element by element.  An optional value (None, or None read back
    as a 0-d object array) matches anything: a compensator's target exists only while it compensates."""
    if any(x is None or (isinstance(x, np.ndarray) and x.dtype == object and x.ndim == 0 and x.item() is None)
           for x in (given, held)):
        return None
    if isinstance(given, np.ndarray) or isinstance(held, np.ndarray):
        a, b = np.shape(given), np.shape(held)
        if (a[1:], len(a)) != (b[1:], len(b)) if rows_vary and a and b else a != b:
            return f"{path} has shape {a}, the model holds {b}"
        return None
    if isinstance(given, dict) and isinstance(held, dict):
        if set(given) != set(held):
            return f"{path} has keys {sorted(given)}, the model holds {sorted(held)}"
        for key in given:
            found = _structure_difference(given[key], held[key], f"{path}.{key}", rows_vary)
            if found:
                return found
        return None
    if isinstance(given, (list, tuple)) and isinstance(held, (list, tuple)):
        if len(given) != len(held):
            return None
        for k, (a, b) in enumerate(zip(given, held)):
            found = _structure_difference(a, b, f"{path}[{k}]", rows_vary)
            if found:
                return found
        return None
    if (isinstance(given, (dict, list, tuple)) or isinstance(held, (dict, list, tuple))) and \
            type(given) is not type(held):
        return f"{path} is a {type(given).__name__}, the model holds a {type(held).__name__}"
    return None


def _same_float(a, b) -> bool:
    """a and b are the same double bit for bit (so 0.0 and -0.0 differ; NaN never equals)."""
    return a == b and (a != 0.0 or math.copysign(1.0, a) == math.copysign(1.0, b))


def _same_floats(a: list, b) -> bool:
    """Element-wise :func:`_same_float` of two equally long sequences."""
    if a != (b if type(b) is list else list(b)):
        return False
    if 0.0 in a:   # == does not tell 0.0 from -0.0
        for x, y in zip(a, b):
            if x == 0.0 and math.copysign(1.0, x) != math.copysign(1.0, y):
                return False
    return True


def _xml_number(x: float) -> str:
    return repr(float(x))


def _xml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    return str(value)
