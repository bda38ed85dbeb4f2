"""What the out-of-process backends share: the worker side (:class:`SlaveHost`, an
:class:`~orchestration.master.slaves.InProcessSlave` driven by messages) and the master side
(:class:`RemoteSlave`, the :class:`~orchestration.master.slaves.Slave` interface over a transport).

Why this split: a process worker (process_backend.py) and a Ray actor (ray_backend.py) differ
only in how a request travels, so both host the FMU the same way and answer the same requests.

* **Value references travel once.** The master registers each value-reference array with the
  worker under a small integer key (keyed by content, so arrays built anew each call do not pile
  up); a macro step then carries two keys, t, h and the input values only.
* **FMU states stay where the FMU is.** ``get_state`` returns a :class:`RemoteState` with an id;
  the worker keeps the FMU state under that id, so rollback (error control, iterative coupling)
  costs no transfer. ``serialize_state``/``checkpoint_state`` bring bytes back for checkpoints.
* **The model description is read on the master** from the FMU file, so variables and
  capabilities are known without asking the worker.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np
from fmpy import read_model_description

from orchestration.master.slaves import InProcessSlave, Slave, SlaveError, variable_table
from orchestration.system.fmu_info import interface, no_co_simulation


class SlaveHost:
    """Worker side: one FMU instance answering requests by method name."""

    def __init__(self, name: str, fmu: Path | str, logging: bool = False):
        self.slave = InProcessSlave(name, Path(fmu), logging=logging)
        self.vrs: dict[int, np.ndarray] = {}
        self.states: dict[int, Any] = {}
        self._next_state = 1

    # hot path ---------------------------------------------------------------------------------

    def exchange(self, in_key: int, u: np.ndarray, t: float, h: float, out_key: int) -> np.ndarray:
        return self.slave.exchange(self.vrs[in_key], u, t, h, self.vrs[out_key])

    # everything else --------------------------------------------------------------------------

    def call(self, method: str, args: Sequence[Any]) -> Any:
        handler = getattr(self, "op_" + method, None)
        if handler is None:
            raise SlaveError(f"{self.slave.name}: the worker has no operation {method!r}")
        return handler(*args)

    def op_register(self, key: int, vrs: np.ndarray) -> None:
        self.vrs[key] = np.ascontiguousarray(vrs, dtype=np.int64)

    def op_instantiate(self) -> None:
        self.slave.instantiate()

    def op_setup(self, start: float, stop: float | None) -> None:
        self.slave.setup(start, stop)

    def op_enter_initialization(self) -> None:
        self.slave.enter_initialization()

    def op_exit_initialization(self) -> None:
        self.slave.exit_initialization()

    def op_set_values(self, values: dict) -> None:
        self.slave.set_values(values)

    def op_get_values(self, names: list[str]) -> dict:
        return self.slave.get_values(names)

    def op_get_reals(self, key: int) -> np.ndarray:
        return self.slave.get_reals(self.vrs[key])

    def op_set_reals(self, key: int, values: np.ndarray) -> None:
        self.slave.set_reals(self.vrs[key], values)

    def op_set_and_get(self, in_key: int, values: np.ndarray, out_key: int) -> np.ndarray:
        return self.slave.set_and_get(self.vrs[in_key], values, self.vrs[out_key])

    def op_do_step(self, t: float, h: float) -> None:
        self.slave.do_step(t, h)

    def op_exchange(self, in_key: int, u: np.ndarray, t: float, h: float, out_key: int) -> np.ndarray:
        return self.exchange(in_key, u, t, h, out_key)

    def _keep(self, state: Any) -> int:
        sid = self._next_state
        self._next_state += 1
        self.states[sid] = state
        return sid

    def _state(self, sid: int) -> Any:
        try:
            return self.states[sid]
        except KeyError:
            raise SlaveError(f"{self.slave.name}: no saved FMU state {sid} in the worker (freed already?)") from None

    def op_get_state(self) -> int:
        return self._keep(self.slave.get_state())

    def op_set_state(self, sid: int) -> None:
        self.slave.set_state(self._state(sid))

    def op_free_state(self, sid: int) -> None:
        state = self.states.pop(sid, None)
        if state is not None:
            self.slave.free_state(state)

    def op_serialize_state(self, sid: int) -> bytes:
        return self.slave.serialize_state(self._state(sid))

    def op_deserialize_state(self, blob: bytes) -> int:
        return self._keep(self.slave.deserialize_state(blob))

    def op_checkpoint_state(self) -> bytes:
        return self.slave.checkpoint_state()

    def op_restore_checkpoint_state(self, blob: bytes) -> None:
        self.slave.restore_checkpoint_state(blob)

    def op_messages(self) -> list:
        return list(self.slave.messages)

    def op_terminate(self) -> None:
        self.slave.terminate()

    def op_free(self) -> None:
        for sid in list(self.states):
            try:
                self.op_free_state(sid)
            except Exception:
                pass
        self.slave.free()

    def op_ping(self) -> str:
        return "pong"


class RemoteState:
    """A saved FMU state that stays in the worker; only its id travels."""

    __slots__ = ("sid",)

    def __init__(self, sid: int):
        self.sid = sid

    def __repr__(self) -> str:
        return f"RemoteState({self.sid})"


class RemoteSlave(Slave):
    """Master side of an FMU instance hosted elsewhere. Subclasses provide the transport:
    :meth:`_submit` (send a request, return a handle whose ``result()`` waits for the answer) and
    :meth:`_submit_exchange` (the hot path, possibly in a compact encoding)."""

    asynchronous = True
    where = "remote"            # "worker process", "Ray actor": for messages
    call_timeout: float | None = None
    _running = False            # after initialisation: the call timeout applies (start-up may be slow)

    def _timeout(self) -> float | None:
        """The time limit of a call now: ``call_timeout`` once the FMU is initialised (loading and
        initialising an FMU may legitimately take long), else none."""
        return self.call_timeout if self._running else None

    def __init__(self, name: str, fmu: Path | str):
        self.name = name
        self.fmu = Path(fmu)
        try:
            self.model_description = read_model_description(str(self.fmu))
        except Exception as exc:
            raise SlaveError(f"{name}: cannot read {self.fmu}: {exc}") from None
        if interface(self.model_description) is None:
            raise SlaveError(f"{name}: {no_co_simulation(self.fmu)}")
        self.variables = variable_table(self.model_description)
        self.fmi_version = self.model_description.fmiVersion
        self._keys: dict[bytes, int] = {}
        self._by_id: dict[int, tuple[int, np.ndarray]] = {}

    # transport (subclasses) -------------------------------------------------------------------

    def _submit(self, method: str, *args: Any):
        raise NotImplementedError

    def _submit_exchange(self, in_key: int, u: np.ndarray, t: float, h: float, out_key: int):
        return self._submit("exchange", in_key, u, t, h, out_key)

    def _call(self, method: str, *args: Any) -> Any:
        return self._submit(method, *args).result()

    def _key(self, vrs: np.ndarray) -> int:
        """The worker's key of a value-reference array: by identity first (the execution passes the
        same arrays every step), else by content (registered with the worker once)."""
        hit = self._by_id.get(id(vrs))
        if hit is not None and hit[1] is vrs:
            return hit[0]
        content = np.ascontiguousarray(vrs, dtype=np.int64).tobytes()
        key = self._keys.get(content)
        if key is None:
            key = len(self._keys) + 1
            self._call("register", key, np.frombuffer(content, dtype=np.int64))
            self._keys[content] = key
        if len(self._by_id) > 64:
            self._by_id.clear()
        self._by_id[id(vrs)] = (key, vrs)     # holding vrs keeps its id from being reused
        return key

    # Slave interface --------------------------------------------------------------------------

    def instantiate(self) -> None:
        self._call("instantiate")

    def setup(self, start_time: float, stop_time: float | None) -> None:
        self._call("setup", start_time, stop_time)

    def enter_initialization(self) -> None:
        self._call("enter_initialization")

    def exit_initialization(self) -> None:
        self._call("exit_initialization")
        self._running = True

    def set_values(self, values: dict[str, Any]) -> None:
        self._call("set_values", dict(values))

    def get_values(self, names: Sequence[str]) -> dict[str, Any]:
        return self._call("get_values", list(names))

    def get_reals(self, vrs: np.ndarray) -> np.ndarray:
        if len(vrs) == 0:
            return np.zeros(0)
        return self._call("get_reals", self._key(vrs))

    def set_reals(self, vrs: np.ndarray, values: np.ndarray) -> None:
        if len(vrs):
            self._call("set_reals", self._key(vrs), np.ascontiguousarray(values, dtype=float))

    def set_and_get(self, in_vrs: np.ndarray, in_values: np.ndarray, out_vrs: np.ndarray) -> np.ndarray:
        return self._call("set_and_get", self._key(in_vrs), np.ascontiguousarray(in_values, dtype=float),
                          self._key(out_vrs))

    def do_step(self, t: float, h: float) -> None:
        self._call("do_step", t, h)

    def exchange_async(self, in_vrs: np.ndarray, in_values: np.ndarray, t: float, h: float, out_vrs: np.ndarray):
        return self._submit_exchange(self._key(in_vrs), np.ascontiguousarray(in_values, dtype=float), float(t),
                                     float(h), self._key(out_vrs))

    def exchange(self, in_vrs: np.ndarray, in_values: np.ndarray, t: float, h: float,
                 out_vrs: np.ndarray) -> np.ndarray:
        return self.exchange_async(in_vrs, in_values, t, h, out_vrs).result()

    def get_state(self) -> RemoteState:
        return RemoteState(self._call("get_state"))

    def set_state(self, state: RemoteState) -> None:
        self._call("set_state", state.sid)

    def free_state(self, state: RemoteState) -> None:
        self._call("free_state", state.sid)

    def serialize_state(self, state: RemoteState) -> bytes:
        return self._call("serialize_state", state.sid)

    def deserialize_state(self, blob: bytes) -> RemoteState:
        return RemoteState(self._call("deserialize_state", bytes(blob)))

    def checkpoint_state(self) -> bytes:
        return self._call("checkpoint_state")

    def restore_checkpoint_state(self, blob: bytes) -> None:
        self._call("restore_checkpoint_state", bytes(blob))

    @property
    def messages(self) -> list:
        try:
            return self._call("messages")
        except SlaveError:
            return []
