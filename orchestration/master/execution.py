"""The execution: slaves, the compiled connection plan, current values, time, observers and
manipulators (libcosim's split). Algorithms (algorithms.py) drive it step by step.

Values live in flat numpy arrays per slave: ``outputs[i]`` holds the values of ``out_vrs[i]``
(every output that is connected or observed), ``inputs[i]`` those of ``in_vrs[i]`` (every
connected or manipulated input). A connection group from slave j to slave i is applied as one
vectorised ``u_i[dst] = factor * y_j[src] + offset``.

Parallel stepping on remote backends: :meth:`Execution.advance` of a slave whose backend is
asynchronous (``Slave.asynchronous``: process and Ray workers) only *sends* the step and returns;
the outputs are collected when something needs them -- the inputs of a slave fed by it, the
direct-feedthrough refresh at the end of every coupling step, a save/restore, the observers. So a
Jacobi step (and every independent slave of a Gauss-Seidel step) runs on all workers at once,
while the algorithms stay as they are. The per-slave lists ``outputs``, ``history`` and
``slave_time`` then collect a pending step of the slave that is read, so no algorithm can see a
stale value. In-process slaves step at once, exactly as before.
"""
from __future__ import annotations

import math
import time as wallclock
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from orchestration.errors import DISCARD_STATUS, StepDiscarded
from orchestration.errors import ExecutionError  # noqa: F401  (re-exported)
from orchestration.master.algorithms.fixed import Algorithm, FixedStepAlgorithm
from orchestration.master.algorithms.step_control import landing_step
from orchestration.master.manipulators import Manipulator
from orchestration.master.observers import Observer
from orchestration.master.slaves import InProcessSlave, Slave, SlaveError, TerminateRequest
from orchestration.system.arrays import element_variables
from orchestration.system.model import System




@dataclass
class _LinkGroup:
    source: int
    src_pos: np.ndarray
    dst_pos: np.ndarray
    factor: np.ndarray
    offset: np.ndarray
    identity: bool
    #: the targets' declared (min, max), None when none is declared: extrapolated values are clamped
    bounds: tuple[np.ndarray, np.ndarray] | None = None
    #: which of the group's values are held rather than extrapolated (None: none): an Integer,
    #: Enumeration or Boolean signal is piecewise constant, so a polynomial through its past values
    #: is no estimate of it, and an integer input cannot take the fraction it gives
    held: np.ndarray | None = None

    def __post_init__(self) -> None:
        # src_pos and dst_pos as slices where they are runs of consecutive positions (a vector
        # connected element by element): compute_inputs reads and writes them every step, and a
        # slice costs a fraction of an index array on a few values (the same values)
        self.src_at, self.dst_at = _as_slice(self.src_pos), _as_slice(self.dst_pos)


def _as_slice(positions: np.ndarray) -> slice | np.ndarray:
    """``positions`` as the slice that selects the same elements if they are consecutive and
    ascending, else as they are."""
    if len(positions) and np.array_equal(positions, np.arange(positions[0], positions[0] + len(positions))):
        return slice(int(positions[0]), int(positions[0]) + len(positions))
    return positions


class _SyncedList(list):
    """A per-slave list (outputs, history, slave_time) that first collects the pending remote step
    of the slave whose entry is read (module docstring). Only used when some slave is remote."""

    def __init__(self, items, execution: "Execution"):
        super().__init__(items)
        self._execution = execution
        self._pending = execution._pending          # the same dict, for a cheap check

    def __getitem__(self, k):
        pending = self._pending
        if pending:
            if type(k) is int and k >= 0:
                if k in pending:
                    self._execution.sync((k,))
            else:                                   # slices, negative or numpy indices: everything
                self._execution.sync()
        return list.__getitem__(self, k)

    def __iter__(self):
        if self._execution._pending:
            self._execution.sync()
        return list.__iter__(self)


def _extrapolate(history: list[tuple[float, np.ndarray]], order: int, tau: float) -> np.ndarray:
    """Polynomial through the last ``order + 1`` points of ``history`` evaluated at ``tau``."""
    k = min(order, len(history) - 1)
    if k == 0:
        return history[-1][1]
    (t1, y1), (t0, y0) = history[-1], history[-2]
    if k == 1:
        return y0 + (y1 - y0) * ((tau - t0) / (t1 - t0))
    tm, ym = history[-3]
    # Lagrange form through (tm, ym), (t0, y0), (t1, y1)
    l_m = (tau - t0) * (tau - t1) / ((tm - t0) * (tm - t1))
    l_0 = (tau - tm) * (tau - t1) / ((t0 - tm) * (t0 - t1))
    l_1 = (tau - tm) * (tau - t0) / ((t1 - tm) * (t1 - t0))
    return l_m * ym + l_0 * y0 + l_1 * y1


def declared_range(slave: Slave, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The ``min`` and ``max`` of each named variable from the slave's modelDescription (its declared
    type's where the variable has none; -inf / +inf where neither declares one)."""
    md = getattr(slave, "model_description", None)
    # an element of an FMI 3.0 array has its array's min and max (element_variables copies them)
    table = {v.name: v for v in element_variables(md)} if md is not None else {}
    lo, hi = np.full(len(names), -np.inf), np.full(len(names), np.inf)
    for k, name in enumerate(names):
        v = table.get(name)
        if v is None:
            continue
        for bound, out in (("min", lo), ("max", hi)):
            raw = getattr(v, bound, None)
            if raw is None:
                raw = getattr(getattr(v, "declaredType", None), bound, None)
            try:
                value = float(raw) if raw is not None else None
            except (TypeError, ValueError):
                value = None
            if value is not None and not math.isnan(value):
                out[k] = value
    return lo, hi


def step_error(exc: Exception) -> ExecutionError:
    """The ExecutionError of a failed step: StepDiscarded where the FMU discarded it (its status is in
    the message, which every backend passes on as text)."""
    kind = StepDiscarded if DISCARD_STATUS in str(exc) else ExecutionError
    return kind(str(exc))


class Execution:
    """Runs a :class:`System` with an :class:`Algorithm`."""

    def __init__(self, system: System, algorithm: Algorithm | None = None,
                 slave_factory: Callable[[str, Path], Slave] | None = None,
                 observers: Sequence[Observer] = (), manipulators: Sequence[Manipulator] = (),
                 observed: Iterable[tuple[str, str]] = (), stop_time: float | None = None):
        self.system = system
        #: the end of the run: told to the FMUs (fmi2SetupExperiment) and never stepped past
        self.stop_time = system.stop_time if stop_time is None else float(stop_time)
        #: the run's base step: the communication points are start + k * base_step
        self.base_step: float | None = None
        self.algorithm = algorithm or FixedStepAlgorithm()
        self.observers = list(observers)
        self.manipulators = list(manipulators)
        factory = slave_factory or (lambda name, path: InProcessSlave(name, path))
        self._pending: dict[int, tuple[Any, float]] = {}
        self.slaves: list[Slave] = []
        try:
            for component in system.components.values():
                if component.adapter:         # evaluated here, whatever the backend
                    from orchestration.master.adapters import AdapterSlave

                    self.slaves.append(AdapterSlave(component.name, component.adapter, component.parameters))
                else:
                    self.slaves.append(factory(component.name, component.source))
        except Exception:
            self.free()
            raise
        self.index = {s.name: i for i, s in enumerate(self.slaves)}
        # remote slaves step in the background: their pending steps, collected by sync()
        self._async = [bool(getattr(s, "asynchronous", False)) for s in self.slaves]
        self.step_multiple = [max(1, int(c.step_multiple)) for c in system.components.values()]
        self.time = system.start_time
        self.steps_taken = 0
        self._refeed_order: list[int] | None = None
        self._touched: set[int] = set()      # slaves whose inputs a manipulator changed this step
        self.terminated: dict | None = None  # {component, time} when an FMU ended the run
        self._compile(list(observed))

    # ------------------------------------------------------------------ plan

    def _compile(self, observed: list[tuple[str, str]]) -> None:
        n = len(self.slaves)
        out_names: list[list[str]] = [[] for _ in range(n)]
        in_names: list[list[str]] = [[] for _ in range(n)]

        def slot(names: list[str], var: str) -> int:
            if var not in names:
                names.append(var)
            return names.index(var)

        raw_links: dict[tuple[int, int], list[tuple[int, int, float, float]]] = {}
        # String and Binary values do not fit the float64 arrays: they go by name (text links)
        self.text_links: list[list[tuple[int, str, str]]] = [[] for _ in range(n)]
        for c in self.system.connections:
            j, i = self.index[c.source[0]], self.index[c.target[0]]
            if not self.slaves[j].variables[c.source[1]].numeric:
                self.text_links[i].append((j, c.source[1], c.target[1]))
                continue
            src = slot(out_names[j], c.source[1])
            dst = slot(in_names[i], c.target[1])
            held = (self.slaves[j].variables[c.source[1]].type != "Real"
                    or self.slaves[i].variables[c.target[1]].type != "Real")
            raw_links.setdefault((i, j), []).append((src, dst, c.factor, c.offset, held))
        for m in self.manipulators:
            for comp, var in m.variables():
                i = self.index[comp]
                info = self.slaves[i].variables[var]
                # numeric inputs of every type live in the arrays (their values converted at the FMU);
                # String inputs and tunable parameters are set by name (override)
                if info.causality == "input" and info.numeric:
                    slot(in_names[i], var)
        for comp, var in observed:
            i = self.index[comp]
            info = self.slaves[i].variables[var]
            if info.numeric and info.causality in ("output", "local", "calculatedParameter"):
                slot(out_names[i], var)
        self.out_names, self.in_names = out_names, in_names
        vr = lambda s, names: np.array([s.variables[v].reference for v in names], dtype=np.int64)
        self.out_vrs = [vr(s, out_names[i]) for i, s in enumerate(self.slaves)]
        self.in_vrs = [vr(s, in_names[i]) for i, s in enumerate(self.slaves)]
        # each input's declared range: extrapolated values are kept inside it (compute_inputs)
        self.input_range = [declared_range(s, in_names[i]) for i, s in enumerate(self.slaves)]
        # the String/Binary outputs other slaves read, by slave: read after every step
        self.text_outputs: list[list[str]] = [[] for _ in range(n)]
        for links in self.text_links:
            for j, src, _ in links:
                if src not in self.text_outputs[j]:
                    self.text_outputs[j].append(src)
        self.text_values: list[dict[str, Any]] = [{} for _ in range(n)]
        self._text_fed: list[dict[str, Any]] = [{} for _ in range(n)]
        self.links: list[list[_LinkGroup]] = [[] for _ in range(n)]
        for (i, j), items in raw_links.items():
            src, dst, factor, offset, held = (np.array(x) for x in zip(*items))
            identity = bool(np.all(factor == 1.0) and np.all(offset == 0.0))
            dst = dst.astype(np.int64)
            lo, hi = self.input_range[i][0][dst], self.input_range[i][1][dst]
            bounds = (lo, hi) if np.isfinite(lo).any() or np.isfinite(hi).any() else None
            self.links[i].append(_LinkGroup(j, src.astype(np.int64), dst, factor.astype(float),
                                            offset.astype(float), identity, bounds,
                                            held.astype(bool) if held.any() else None))
        self.outputs = [np.zeros(len(v)) for v in self.out_vrs]
        self.inputs = [np.zeros(len(v)) for v in self.in_vrs]
        # what an input is when no connection, override or bias acts on it: its start value
        self.base_inputs = [np.zeros(len(v)) for v in self.in_vrs]
        self.history: list[list[tuple[float, np.ndarray]]] = [[] for _ in range(n)]
        self.slave_time = [self.time] * n
        self.feedthrough = [self._has_feedthrough(i) for i in range(n)]
        self.overrides: list[dict[int, float]] = [{} for _ in range(n)]
        self.biases: list[dict[int, float]] = [{} for _ in range(n)]
        if any(self._async):
            self.outputs = _SyncedList(self.outputs, self)
            self.history = _SyncedList(self.history, self)
            self.slave_time = _SyncedList(self.slave_time, self)

    def _has_feedthrough(self, i: int) -> bool:
        """Does a connected or observed output of slave i depend directly on one of its connected
        inputs? Undeclared dependencies count as yes (FMI 1.0, or FMI 2.0 without them)."""
        if not len(self.in_vrs[i]) or not len(self.out_vrs[i]):
            return False
        md = self.slaves[i].model_description
        declared = {u.variable.name: u.dependencies for u in (md.outputs or [])}
        inputs = set(self.in_names[i])
        for name in self.out_names[i]:
            deps = declared.get(name)
            if deps is None or any(d.name in inputs for d in deps):
                return True
        return False

    def refresh_feedthrough(self, t: float, order: Sequence[int]) -> None:
        """Make direct-feedthrough outputs consistent at the communication point t: give each such
        slave its inputs from the outputs at t and read its outputs again, in ``order`` (sources
        first). Without this, a feedthrough output read right after its slave's doStep still
        reflects the inputs held over the step, i.e. it lags one macro step."""
        if self._pending:
            self.sync()
        everyone = range(len(self.slaves))
        for i in order:
            if not self.feedthrough[i] or abs(self.slave_time[i] - t) > 1e-12 * max(1.0, abs(t)):
                continue
            self.feed(i, t, self.compute_inputs(i, t, 0.0, 0, updated=everyone))

    def feed(self, i: int, t: float, u: np.ndarray) -> None:
        """Set slave i's inputs to u at its present time t (no step) and read its outputs again."""
        if self._pending:
            self.sync()
        try:
            y = self.slaves[i].set_and_get(self.in_vrs[i], u, self.out_vrs[i])
        except SlaveError as exc:
            raise ExecutionError(str(exc)) from None
        self.inputs[i] = u
        self.outputs[i] = y
        self.history[i][-1] = (t, y)

    def slave_edges(self) -> set[tuple[int, int]]:
        """(source slave, target slave) pairs that have at least one connection."""
        return {(g.source, i) for i, groups in enumerate(self.links) for g in groups}

    # ------------------------------------------------------------------ values

    def compute_inputs(self, i: int, t: float, h: float, extrapolation: int, updated: Iterable[int]) -> np.ndarray:
        """Inputs of slave i for its step [t, t + h] from the current outputs of its sources.

        Extrapolated values are clamped to the input's declared min/max: a polynomial through a
        quantity that touches its bound (a slack wire's tension, 0) overshoots it, and the FMU would
        refuse the value; held values (the source's own outputs) are passed as they are."""
        u = self.base_inputs[i].copy()
        for g in self.links[i]:
            if g.source in updated or extrapolation == 0:
                y = self.outputs[g.source]
                extrapolated = False
            else:
                y = _extrapolate(self.history[g.source], extrapolation, t + 0.5 * h)
                extrapolated = True
            values = y[g.src_at]
            values = values if g.identity else g.factor * values + g.offset
            if extrapolated and g.held is not None:
                now = self.outputs[g.source][g.src_at]
                values = np.where(g.held, now if g.identity else g.factor * now + g.offset, values)
            if extrapolated and g.bounds is not None:
                values = np.clip(values, g.bounds[0], g.bounds[1])
            u[g.dst_at] = values
        for pos, value in self.overrides[i].items():
            u[pos] = value
        for pos, value in self.biases[i].items():
            u[pos] += value
        return u

    def advance(self, i: int, u: np.ndarray, t: float, h: float) -> None:
        """Step slave i from t to t + h with inputs u (one batched call) and record its outputs.
        A remote slave's step is only sent here and collected later (module docstring)."""
        if self._async[i]:
            if i in self._pending:
                self.sync((i,))
            try:
                handle = self.slaves[i].exchange_async(self.in_vrs[i], u, t, h, self.out_vrs[i])
            except SlaveError as exc:
                raise step_error(exc) from None
            self.inputs[i] = u
            self._pending[i] = (handle, t + h)
            return
        if self.text_links[i]:
            self._feed_text(i)
        try:
            y = self.slaves[i].exchange(self.in_vrs[i], u, t, h, self.out_vrs[i])
        except TerminateRequest as request:
            # the FMU ends the simulation: its outputs where it stopped are the run's last values
            self.inputs[i] = u
            self._record(i, request.time, self.slaves[i].get_reals(self.out_vrs[i]))
            raise
        except SlaveError as exc:
            raise step_error(exc) from None
        self.inputs[i] = u
        self._record(i, t + h, y)

    def _feed_text(self, i: int) -> bool:
        """Set slave i's String/Binary inputs from their sources' last values (by name); True if one
        differs from what it was last given."""
        values = {dst: self.text_values[j][src] for j, src, dst in self.text_links[i] if src in self.text_values[j]}
        changed = any(self._text_fed[i].get(k) != v for k, v in values.items())
        if values:
            try:
                self.slaves[i].set_values(values)
            except SlaveError as exc:
                raise ExecutionError(str(exc)) from None
            self._text_fed[i].update(values)
        return changed

    def sync(self, indices: Iterable[int] | None = None) -> None:
        """Collect the pending remote steps of ``indices`` (default: all) and record their outputs.
        A failed step raises ExecutionError naming the FMU instance, and an FMU's request to end the
        run its TerminateRequest (with its outputs where it stopped recorded), after every other
        pending step has been collected (so no worker is left half-way through an answer)."""
        pending = self._pending
        if not pending:
            return
        if indices is None:
            items = [(i, handle, t_end) for i, (handle, t_end) in pending.items()]
            pending.clear()
        else:
            items = [(i, *pending.pop(i)) for i in indices if i in pending]
            if not items:
                return
        if len(items) > 1 and any(hasattr(handle, "collect") for _, handle, _ in items):
            kinds: dict[type, list] = {}
            for _, handle, _ in items:
                kinds.setdefault(type(handle), []).append(handle)
            for kind, handles in kinds.items():
                collect = getattr(kind, "collect", None)
                if collect is not None and len(handles) > 1:
                    collect(handles)                        # e.g. one ray.get for all actors
        error = request = None
        for i, handle, t_end in items:
            try:
                y = handle.result()
            except SlaveError as exc:
                error = error or exc
                continue
            except TerminateRequest as exc:     # raised once every other answer is in, as errors are
                request = request or (i, exc)
                continue
            self._record(i, t_end, y)
        if error is not None:
            self.abandon()
            raise step_error(error) from None
        if request is not None:
            # as advance() does in-process: the ending FMU's outputs where it stopped are its last row
            i, exc = request
            try:
                self._record(i, exc.time, self.slaves[i].get_reals(self.out_vrs[i]))
            except SlaveError as failed:
                raise ExecutionError(str(failed)) from None
            raise exc

    def abandon(self) -> None:
        """Forget pending steps after a failure (their answers are drained when the slaves end)."""
        for handle, _ in self._pending.values():
            try:
                handle.result()
            except Exception:
                pass
        self._pending.clear()

    def _for_each_slave(self, action: Callable[[Slave], Any]) -> None:
        """``action`` on every slave: one after another in-process, concurrently for remote slaves
        (their start-up calls -- loading an FMU, instantiate -- take long each)."""
        if not any(self._async) or len(self.slaves) == 1:
            for slave in self.slaves:
                action(slave)
            return
        with ThreadPoolExecutor(max_workers=min(16, len(self.slaves))) as pool:
            for future in [pool.submit(action, s) for s in self.slaves]:
                future.result()

    def _record(self, i: int, t: float, y: np.ndarray) -> None:
        if self.text_outputs[i]:
            try:
                self.text_values[i] = self.slaves[i].get_values(self.text_outputs[i])
            except SlaveError as exc:
                raise ExecutionError(str(exc)) from None
        self.outputs[i] = y
        self.slave_time[i] = t
        history = self.history[i]
        history.append((t, y))
        if len(history) > 3:
            del history[0]

    # ------------------------------------------------------------------ rollback

    def save(self) -> dict:
        """Snapshot for rollback: every slave's FMU state and the master's values at this time.
        Free it with :meth:`discard` when it is no longer needed."""
        if self._pending:
            self.sync()
        states = []
        try:
            for s in self.slaves:
                states.append(s.get_state())
        except SlaveError as exc:
            self.discard({"states": states})
            raise ExecutionError(str(exc)) from None
        return {"states": states, "time": self.time, "steps_taken": self.steps_taken,
                "outputs": [y.copy() for y in self.outputs], "inputs": [u.copy() for u in self.inputs],
                "history": [list(h) for h in self.history], "slave_time": list(self.slave_time)}

    def restore(self, snapshot: dict) -> None:
        """Go back to a :meth:`save` snapshot (the snapshot stays valid for further restores)."""
        if self._pending:
            self.sync()
        try:
            for s, state in zip(self.slaves, snapshot["states"]):
                s.set_state(state)
        except SlaveError as exc:
            raise ExecutionError(str(exc)) from None
        self.time, self.steps_taken = snapshot["time"], snapshot["steps_taken"]
        # in place: observers hold on to these lists (Gather)
        self.outputs[:] = [y.copy() for y in snapshot["outputs"]]
        self.inputs[:] = [u.copy() for u in snapshot["inputs"]]
        self.history[:] = [list(h) for h in snapshot["history"]]
        self.slave_time[:] = list(snapshot["slave_time"])

    def discard(self, snapshot: dict) -> None:
        if self._pending:
            try:
                self.sync()
            except ExecutionError:
                pass
        for s, state in zip(self.slaves, snapshot.get("states", ())):
            try:
                s.free_state(state)
            except Exception:      # freeing is best effort: a failed free must not mask a result
                pass

    def value(self, component: str, variable: str) -> float:
        """Current value of a connected/observed output or a connected/manipulated input."""
        if self._pending:
            self.sync()
        i = self.index[component]
        if variable in self.out_names[i]:
            return float(self.outputs[i][self.out_names[i].index(variable)])
        if variable in self.in_names[i]:
            return float(self.inputs[i][self.in_names[i].index(variable)])
        return self.slaves[i].get_values([variable])[variable]

    def override(self, component: str, variable: str, value: float | None) -> None:
        """Force an input (None: release it). Other variables (tunable parameters) are set directly."""
        if self._pending:
            self.sync()
        i = self.index[component]
        if variable in self.in_names[i]:
            pos = self.in_names[i].index(variable)
            if value is None:
                self.overrides[i].pop(pos, None)
            else:
                self.overrides[i][pos] = float(value)
                self.inputs[i][pos] = float(value)
            self._touched.add(i)
        elif value is not None:
            self.slaves[i].set_values({variable: value})
        elif self.slaves[i].variables[variable].causality == "input":
            # releasing a non-Real input (not in the Real input vector): back to its start value
            info = self.slaves[i].variables[variable]
            start = component_start(self.system, component, variable, info.start)
            if isinstance(start, str) and info.type == "Boolean":   # a modelDescription start is text
                start = start.strip().lower() in ("true", "1")
            if start is not None:
                self.slaves[i].set_values({variable: start})

    def bias(self, component: str, variable: str, value: float | None) -> None:
        i = self.index[component]
        if variable not in self.in_names[i]:
            raise ExecutionError(f"bias needs an input: {component}.{variable} is a "
                                 f"{self.slaves[i].variables[variable].causality}")
        if variable not in self.in_names[i] or self.slaves[i].variables[variable].type != "Real":
            raise ExecutionError(f"bias needs a Real input: {component}.{variable} is a "
                                 f"{self.slaves[i].variables[variable].type}")
        pos = self.in_names[i].index(variable)
        if value is None:
            self.biases[i].pop(pos, None)
        else:
            self.biases[i][pos] = float(value)
        self._touched.add(i)

    # ------------------------------------------------------------------ life cycle

    def initialize(self, max_sweeps: int = 200, tolerance: float = 1e-10) -> int:
        """Instantiate, set start values and propagate initial outputs through the connections
        until the inputs settle (at most ``max_sweeps``; a loop through feedthrough outputs contracts
        by about sqrt(mass ratio) per sweep, so a ship carrying half its mass needs ~65); returns the
        sweeps needed."""
        system = self.system

        def start(slave: Slave) -> None:
            slave.instantiate()
            slave.setup(system.start_time, self.stop_time)
            slave.enter_initialization()
            if system.components[slave.name].parameters:
                slave.set_values(system.components[slave.name].parameters)

        self._for_each_slave(start)
        # unconnected inputs keep their start (or set) values
        for i, slave in enumerate(self.slaves):
            for pos, name in enumerate(self.in_names[i]):
                info = slave.variables[name]
                start = component_start(system, slave.name, name, info.start)
                self.inputs[i][pos] = self.base_inputs[i][pos] = float(start) if start is not None else 0.0
        # events at the start time belong to the initial state, not to the first step
        for m in self.manipulators:
            m.before_step(self, self.time, 0.0)
        self._init_read_error = None
        sweeps = self._propagate(max_sweeps, tolerance, in_init=True)
        try:
            self._for_each_slave(lambda slave: slave.exit_initialization())
        except SlaveError as exc:
            # the cause may be what went wrong first, reading outputs in initialisation mode: say both
            earlier = f" (reading outputs in initialization mode had failed first: {self._init_read_error})" \
                if self._init_read_error else ""
            raise ExecutionError(f"{exc}{earlier}") from None
        sweeps += self._propagate(max_sweeps, tolerance, in_init=False)
        self._touched.clear()          # the propagation above already fed the start-time events
        for i in range(len(self.slaves)):
            self.history[i] = [(self.time, self.outputs[i].copy())]
        self.algorithm.setup(self)
        self._started = wallclock.perf_counter()
        for observer in self.observers:
            observer.on_start(self)
        return sweeps

    def _propagate(self, max_sweeps: int, tolerance: float, in_init: bool) -> int:
        for sweep in range(1, max_sweeps + 1):
            try:
                for i, slave in enumerate(self.slaves):
                    self.outputs[i] = slave.get_reals(self.out_vrs[i])
                    if self.text_outputs[i]:
                        self.text_values[i] = slave.get_values(self.text_outputs[i])
            except SlaveError as exc:
                if in_init:   # some FMUs compute outputs only after initialisation: try again after it
                    self._init_read_error = str(exc)
                    return 0
                raise
            change = 0.0
            for i, slave in enumerate(self.slaves):
                if self.text_links[i] and self._feed_text(i):
                    change = max(change, 1.0)          # a String changed: sweep again
                u = self.compute_inputs(i, self.time, 0.0, 0, updated=())
                if len(u):
                    # a non-finite input (an output that overflowed, through a connection) is the FMU's
                    # to refuse with its name; numpy's "invalid value" warning would only precede that
                    with np.errstate(invalid="ignore", over="ignore"):
                        change = max(change, float(np.max(np.abs(u - self.inputs[i]) / (1.0 + np.abs(u)))))
                    slave.set_reals(self.in_vrs[i], u)
                    self.inputs[i] = u
            if change <= tolerance:
                return sweep
        raise ExecutionError(f"initial values did not settle in {max_sweeps} sweeps through the connections "
                             "(an algebraic loop without a fixed point?)")

    def step(self, h: float, until: float | None = None) -> float:
        """One macro step of base size h; ``until`` ends it exactly there instead (the last step of
        a run: h = until - t, so t + h is ``until`` to the bit and no FMU is asked past it)."""
        t = self.time
        if until is None:
            self.base_step = h
        else:
            h = until - t
        self.before_step(t, h)
        taken = self.algorithm.step(t, h)
        if self._pending:
            self.sync()
        self.steps_taken += 1
        if until is not None and taken == h:
            self.time = until
        else:
            # a multiple of the base step, re-anchored so long runs do not accumulate round-off
            self.time = self.system.start_time + self.steps_taken * h if taken == h else t + taken
        for observer in self.observers:
            observer.on_step(self)
        return taken

    def before_step(self, t: float, h: float) -> None:
        """Manipulators act before a (possibly repeated) coupling step; adaptive algorithms call it."""
        if not self.manipulators:
            return
        for m in self.manipulators:
            before = set(self._touched)
            m.before_step(self, t, h)
            if getattr(m, "refreshes_feedthrough", False):
                self._touched = before       # it fed the slaves itself, with values of its choosing
        if self._touched:
            self._refeed_manipulated(t)

    def _refeed_manipulated(self, t: float) -> None:
        """Manipulators act after the previous step's feedthrough refresh, so a direct-feedthrough
        slave whose input they changed would show the others outputs of the old input during this
        step. Feed the touched slaves again, then, sources first, every other feedthrough slave whose
        inputs changed as a consequence. A manipulator that feeds slaves itself says so with a true
        ``refreshes_feedthrough`` attribute and is left alone."""
        touched, self._touched = self._touched, set()
        if self._pending:
            self.sync()
        if self._refeed_order is None:
            from orchestration.master.algorithms.fixed import gauss_seidel_order

            self._refeed_order = gauss_seidel_order(len(self.slaves), self.slave_edges(),
                                                    [s.name for s in self.slaves])
        everyone = range(len(self.slaves))
        fed = False
        for i in self._refeed_order:
            if not self.feedthrough[i] or abs(self.slave_time[i] - t) > 1e-12 * max(1.0, abs(t)):
                continue
            u = self.compute_inputs(i, t, 0.0, 0, updated=everyone)
            if i in touched or (fed and not np.array_equal(u, self.inputs[i])):
                self.feed(i, t, u)
                fed = True

    def _after_step(self, t: float, taken: float, end: float | None = None) -> None:
        if self._pending:
            self.sync()
        self.steps_taken += 1
        self.time = t + taken if end is None else end
        for observer in self.observers:
            observer.on_step(self)

    def run(self, stop_time: float, step: float, progress: Callable[[float, float], None] | None = None) -> None:
        """Step until ``stop_time`` with base step ``step``; observers are told how it ended."""
        if not (step > 0.0):
            raise ExecutionError(f"step size must be positive, got {step}")
        self.stop_time = float(stop_time)
        self.base_step = step
        error: BaseException | None = None
        try:
            if getattr(self.algorithm, "adaptive", False):
                # the algorithm proposes each step; the last one ends exactly on stop_time
                self.algorithm.start(step)
                eps = 1e-9 * max(1.0, abs(stop_time))
                evenly = self.algorithm.land_evenly
                while self.time < stop_time - eps:
                    t = self.time
                    event = self._next_event(t)
                    if event is not None and not t + eps < event < stop_time - eps:
                        event = None
                    # the event acts at its own time, the last step ends exactly on stop_time
                    target = stop_time if event is None else event
                    h, reached = landing_step(self.algorithm.next_step, target - t, eps, evenly,
                                              self.algorithm.step_floor)
                    last = reached and event is None
                    taken = self.algorithm.step(t, h)
                    self._after_step(t, taken, stop_time if last and taken == h else None)
                    if progress:
                        progress(self.time, stop_time)
            else:
                n = steps_to(self.time, stop_time, step)
                for k in range(n):
                    self.step(step, until=stop_time if k == n - 1 else None)
                    if progress:
                        progress(self.time, stop_time)
        except TerminateRequest as request:
            # an FMU asked to end the simulation (FMI 2.0 fmi2Terminated, FMI 3.0 terminateSimulation):
            # the run ends there, cleanly, with a last row at the time the FMU reached
            self.abandon()
            self.terminated = {"component": request.name, "time": request.time}
            self.steps_taken += 1
            self.time = request.time
            for observer in self.observers:
                observer.on_step(self)
            if progress:
                progress(stop_time, stop_time)
        except BaseException as exc:
            error = exc
            self.abandon()
            raise
        finally:
            for observer in self.observers:
                try:
                    observer.on_finish(self, error)
                except Exception:
                    if error is None:
                        raise

    def _next_event(self, t: float) -> float | None:
        times = [m.next_time(t) for m in self.manipulators if hasattr(m, "next_time")]
        times = [x for x in times if x is not None]
        return min(times) if times else None

    def wall_time(self) -> float:
        return wallclock.perf_counter() - self._started

    def free(self) -> None:
        self._pending.clear()
        for slave in self.slaves:
            try:
                slave.terminate()
            finally:
                slave.free()

    # ------------------------------------------------------------------ checkpoints

    def master_state(self) -> dict:
        """The master's side of the co-simulation state at a communication point, picklable: time,
        held values, extrapolation history, overrides and biases (checkpoint.py adds the FMU
        states, the algorithm's and the manipulators' own state)."""
        if self._pending:
            self.sync()
        return {"time": self.time, "steps_taken": self.steps_taken,
                "out_names": [list(n) for n in self.out_names], "in_names": [list(n) for n in self.in_names],
                "outputs": [np.array(y, dtype=float) for y in self.outputs],
                "inputs": [np.array(u, dtype=float) for u in self.inputs],
                "base_inputs": [np.array(u, dtype=float) for u in self.base_inputs],
                "history": [[(float(t), np.array(y, dtype=float)) for t, y in h] for h in self.history],
                "slave_time": [float(t) for t in self.slave_time],
                "overrides": [dict(o) for o in self.overrides], "biases": [dict(b) for b in self.biases]}

    def load_master_state(self, state: dict) -> None:
        """Put a :meth:`master_state` back (in place: observers hold on to these lists)."""
        if state["out_names"] != self.out_names or state["in_names"] != self.in_names:
            raise ExecutionError("the checkpoint was written for other recorded or connected variables than "
                                 "this run has (same system file, --variables and scenario needed)")
        self.time, self.steps_taken = state["time"], state["steps_taken"]
        self.outputs[:] = [y.copy() for y in state["outputs"]]
        self.inputs[:] = [u.copy() for u in state["inputs"]]
        self.base_inputs[:] = [u.copy() for u in state["base_inputs"]]
        self.history[:] = [list(h) for h in state["history"]]
        self.slave_time[:] = list(state["slave_time"])
        self.overrides[:] = [dict(o) for o in state["overrides"]]
        self.biases[:] = [dict(b) for b in state["biases"]]


def steps_to(start: float, stop: float, step: float) -> int:
    """Macro steps of size ``step`` from ``start`` to ``stop``: (stop - start) / step when that is a
    whole number (to 1e-9 relative), else one more, the last one shortened (as FMPy does)."""
    ratio = (stop - start) / step
    whole = round(ratio)
    if abs(ratio - whole) <= 1e-9 * max(1.0, ratio):
        return int(whole)
    return int(math.ceil(ratio))


def component_start(system: System, component: str, variable: str, default: Any) -> Any:
    return system.components[component].parameters.get(variable, default)
