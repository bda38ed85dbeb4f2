"""The hot path of the ``ray`` backend: one macro step of an FMU (or of an actor group) as a
packed byte string, sent through a Ray Compiled Graph when enabled, else as one ordinary actor
call.

Why bytes: Ray serialises every argument of an actor call on its own (msgpack + pickle for each
numpy array); one ``bytes`` argument and one ``bytes`` answer cost the master about 40 % less CPU
per call than six arguments with a numpy array (measured, 5 actors). The values are the IEEE
doubles themselves, so results stay bit-identical with in-process.

Why Compiled Graphs (``ray.dag``, ``experimental_compile``): a compiled graph replaces the task
submission of an actor call by a write into a shared-memory channel that a loop in the actor
reads; Ray quotes < 50 us instead of ~1 ms per call. Their limits, and what this module does
about each (Ray 2.60, docs "Compiled Graph troubleshooting" and "Execution and failure
semantics"):

* **Busy waiting.** A reader of a channel polls it (``PlasmaObjectHeader::ReadAcquire`` spins
  with ``sched_yield``; Ray's own TODO asks for a futex), so every actor of a graph keeps up to a
  core busy while it waits for its next step -- for as long as the slave lives, also between
  steps -- and so does the master while it waits for the answers. Measured on 2 shared cores
  with 5 light FMUs it is still 2-4x faster per macro step than ordinary calls, but a node whose
  cores are all needed by heavy FMUs loses some of them to the waiting. So graphs are opt-in:
  ``compiled=True`` on the slave or ``MARINE_COSIM_RAY_COMPILED=1`` in the environment.
* **Kill races.** ``ray.kill`` only asks the cluster to end an actor; a step sent right after it
  can still complete through a graph (it takes ~0.2 ms, an ordinary call ~1 ms), so the step
  that fails is the next one. A crash has no such race: the step in flight fails.
* **One graph per actor at a time, only the compiling process may execute it.** One graph per
  actor: a single FMU's ``step``, or a group actor's ``step_many``; the master compiles it on the
  first step and keeps it until the slave is freed (teardown before the actor ends).
* **Ordinary calls beside a graph** run on the actor's main thread while the graph runs on a
  background thread: the actor serialises both with a lock, and the master collects a step in
  flight before it sends anything else (state save/restore for rollback, checkpoints...), so
  the order of operations is the same as without graphs.
* **Zero-copy results.** A numpy array read from a graph would point into the channel's buffer
  and block the next step while alive; answers are ``bytes`` (copied out) instead.
* **Errors.** An FMU error is returned as a message (the graph stays usable); an actor that dies
  makes the read raise ``ActorDiedError`` (the graph shuts itself down), a read without answer
  within the call timeout raises ``RayChannelTimeoutError``; both are turned into a SlaveError
  naming the FMU by the caller. Reads without a call timeout wait without limit (``timeout=-1``;
  Ray's own default, ``RAY_CGRAPH_get_timeout``, is 10 s, far too short for a heavy FMU step).
* **Compile failures** (a Ray without ``ray.dag``, a cluster where the channel cannot be set up)
  fall back to ordinary calls, with a warning.
"""
from __future__ import annotations

import logging
import os
import struct
import warnings
from typing import Any

import numpy as np

#: in_key, out_key, t, h, mode (0: set inputs + doStep + get outputs, 1: set inputs + get outputs)
HEAD = struct.Struct("<qqddq")
EXCHANGE, SET_AND_GET = 0, 1
ENV = "MARINE_COSIM_RAY_COMPILED"


def compiled_default() -> bool:
    """Whether RaySlaves use compiled graphs when not told: only if ``MARINE_COSIM_RAY_COMPILED``
    says 1 / true / yes / on."""
    return os.environ.get(ENV, "0").strip().lower() in ("1", "true", "yes", "on")


def pack(in_key: int, u: np.ndarray, t: float, h: float, out_key: int, mode: int = EXCHANGE) -> bytes:
    """One step's request: header and the input values as float64 bytes."""
    return HEAD.pack(in_key, out_key, t, h, mode) + np.ascontiguousarray(u, dtype=np.float64).tobytes()


def unpack(blob: bytes) -> tuple[int, np.ndarray, float, float, int, int]:
    """The request :func:`pack` made: (in_key, u, t, h, out_key, mode)."""
    in_key, out_key, t, h, mode = HEAD.unpack_from(blob)
    u = np.frombuffer(blob, dtype=np.float64, offset=HEAD.size).copy()     # writable, owned
    return in_key, u, t, h, out_key, mode


def outputs(answer: bytes) -> np.ndarray:
    """Output values from an answer's bytes (an owned, writable array)."""
    return np.frombuffer(answer, dtype=np.float64).copy()


class CompiledStep:
    """A compiled graph ``method(*bound, request) -> answer`` on one actor, executed once per
    step. ``execute`` sends, ``get`` waits; errors are Ray's (the caller names the FMU)."""

    def __init__(self, method: Any, *bound: Any):
        from ray.dag import InputNode

        with InputNode() as request:
            node = method.bind(*bound, request)
        self.graph = node.experimental_compile()
        self._ref = None

    def execute(self, request: Any) -> Any:
        self._ref = self.graph.execute(request)
        return self._ref

    @staticmethod
    def get(ref: Any, timeout: float | None) -> Any:
        return ref.get(timeout=-1 if timeout is None else timeout)

    def teardown(self) -> None:
        """End the graph's loop in the actor (it must end before the actor can take another graph or
        be reused); quiet when the actor is gone already (Ray logs that as an error)."""
        graph, self.graph = self.graph, None
        if graph is None:
            return
        log = logging.getLogger("ray.dag.compiled_dag_node")
        level = log.level
        log.setLevel(logging.CRITICAL)
        try:
            graph.teardown()
        except Exception:
            pass
        finally:
            log.setLevel(level)


def try_compile(method: Any, *bound: Any, what: str) -> CompiledStep | None:
    """A :class:`CompiledStep`, or None (with a warning) when Ray cannot compile it here."""
    try:
        return CompiledStep(method, *bound)
    except Exception as exc:
        warnings.warn(f"{what}: no Ray compiled graph ({type(exc).__name__}: {exc}); ordinary actor calls instead",
                      RuntimeWarning, stacklevel=3)
        return None
