"""Port adapters in the master: :class:`AdapterSlave` puts an adapter (orchestration.system.adapters,
its equations in kinds.py) behind the interface every FMU instance has (orchestration.master.slaves),
so the execution connects, steps, records, saves and restores it like an FMU.

An adapter has no state of its own: its outputs are a function of its inputs at the same instant
(direct feedthrough, declared in its interface, so the execution refreshes them after every step
and a chain ship -> adapter -> crane sees the ship's newest motion). ``do_step`` does nothing; the
outputs are computed when read after an input changed. Its "state" for rollback and checkpoints is
its input values. It always runs in the master's process, whatever the backend.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from orchestration.master.adapters.kinds import make
from orchestration.master.slaves import Slave, SlaveError, variable_table
from orchestration.system.adapters import AdapterError, adapter_description, parameters as adapter_parameters

_MASK = 0xFFFFFFFF


class AdapterSlave(Slave):
    """One adapter instance (module docstring)."""

    asynchronous = False

    def __init__(self, name: str, kind: str, parameters: dict[str, Any] | None = None):
        self.name = name
        self.kind = kind
        self.fmu = Path(f"{kind} adapter")       # what messages name, as for an FMU
        self._start = dict(parameters or {})
        try:
            self.model_description = adapter_description(kind, self._start)
        except AdapterError as exc:
            raise SlaveError(f"{name} ({kind} adapter): {exc}") from None
        self.variables = variable_table(self.model_description)
        self._by_vr = {v.valueReference: v.name for v in self.model_description.modelVariables}
        self._structural = {p.name for p in adapter_parameters(kind, self._start) if p.structural}
        self._values: dict[str, Any] = {name: info.start for name, info in self.variables.items()}
        self._values.update(self._start)
        self._outputs = [v.name for v in self.model_description.modelVariables if v.causality == "output"]
        self._evaluator = None
        self._dirty = True
        self._initialized = False
        self._names: dict[int, tuple[np.ndarray, list[str]]] = {}

    # -- life cycle: nothing to start
    def instantiate(self) -> None: ...
    def setup(self, start_time: float, stop_time: float | None) -> None: ...
    def enter_initialization(self) -> None: ...

    def exit_initialization(self) -> None:
        self._initialized = True
        self._compute()

    def terminate(self) -> None: ...
    def free(self) -> None: ...

    # -- values
    def _fail(self, message: str) -> SlaveError:
        return SlaveError(f"{self.name} ({self.kind} adapter): {message}")

    def set_values(self, values: dict[str, Any]) -> None:
        for name, value in values.items():
            info = self.variables.get(name)
            if info is None:
                raise self._fail(f"no variable {name!r}")
            if info.causality == "output":
                raise self._fail(f"{name} is an output")
            if info.causality == "parameter":
                if name in self._structural and value != self._values.get(name):
                    raise self._fail(f"{name} shapes the adapter's interface and is fixed when it is made "
                                     f"({self._values.get(name)!r}); it cannot become {value!r}")
                if self._initialized and value != self._values.get(name):
                    raise self._fail(f"parameter {name} can only be set before the run starts")
                self._values[name] = value
                self._evaluator = None
            else:
                self._values[name] = float(value)
            self._dirty = True

    def get_values(self, names: Sequence[str]) -> dict[str, Any]:
        if any(self.variables[n].causality == "output" for n in names):
            self._compute()
        return {n: self._values[n] for n in names}

    def _resolve(self, vrs: np.ndarray) -> list[str]:
        cached = self._names.get(id(vrs))
        if cached is None or cached[0] is not vrs:
            cached = (vrs, [self._by_vr[int(r) & _MASK] for r in np.asarray(vrs, dtype=np.int64)])
            self._names[id(vrs)] = cached
        return cached[1]

    def get_reals(self, vrs: np.ndarray) -> np.ndarray:
        names = self._resolve(vrs)
        if self._dirty:
            self._compute()
        values = self._values
        return np.array([float(values[n]) for n in names])

    def set_reals(self, vrs: np.ndarray, values: np.ndarray) -> None:
        names = self._resolve(vrs)
        store = self._values
        for n, x in zip(names, np.asarray(values, dtype=float).tolist()):
            store[n] = x
        self._dirty = True

    def do_step(self, t: float, h: float) -> None:
        if self._dirty:
            self._compute()

    def _compute(self) -> None:
        try:
            if self._evaluator is None:
                params = {n: self._values[n] for n, v in self.variables.items() if v.causality == "parameter"}
                self._evaluator = make(self.kind, params)
            outputs = self._evaluator.evaluate(self._values)
        except AdapterError as exc:
            raise self._fail(str(exc)) from None
        except (ValueError, ZeroDivisionError, np.linalg.LinAlgError) as exc:
            raise self._fail(f"cannot evaluate: {exc}") from None
        bad = [n for n, x in outputs.items() if not np.isfinite(x)]
        if bad:
            raise self._fail(f"{bad[0]} is not finite (inputs: "
                             f"{', '.join(f'{n}={self._values[n]:g}' for n in self._inputs()[:6])}, ...)")
        self._values.update(outputs)
        self._dirty = False

    def _inputs(self) -> list[str]:
        return [n for n, v in self.variables.items() if v.causality == "input"]

    # -- state: the inputs (the outputs follow from them)
    def get_state(self) -> dict[str, Any]:
        return {n: self._values[n] for n in self._inputs()}

    def set_state(self, state: dict[str, Any]) -> None:
        self._values.update(state)
        self._dirty = True

    def free_state(self, state: Any) -> None: ...

    def serialize_state(self, state: dict[str, Any]) -> bytes:
        return json.dumps({"adapter": self.kind, "inputs": state}).encode()

    def deserialize_state(self, blob: bytes) -> dict[str, Any]:
        try:
            data = json.loads(blob)
            tag, kind, state = "marine-cosim adapter state", data["adapter"], data["inputs"]
        except Exception:
            raise self._fail("not a saved adapter state") from None
        if tag != "marine-cosim adapter state" or kind != self.kind or set(state) != set(self._inputs()):
            raise self._fail(f"the saved state is of another adapter ({kind})")
        return state

    @property
    def can_get_and_set_state(self) -> bool:
        return True
