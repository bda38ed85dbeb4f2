"""The ``process`` backend: every FMU instance in its own local OS process.

Why: a pythonfmu FMU runs Python code, and in one process all FMUs share one GIL, so they step one
after another however many cores there are. One worker process per FMU lets them step in
parallel; a crash inside an FMU (a segfault in native code) kills its worker, not the master.

Transport: a ``multiprocessing`` pipe per worker (≈50 µs round trip on the project's 2-core
machine, anchors_cosim.md §5). The macro step goes as raw bytes -- a header with two
value-reference keys, t and h, then the input values as float64 -- and comes back as the output
values, so no pickling on the hot path; every other request is pickled. The worker is started
with ``spawn`` (no fork of a master that may already hold FMUs, threads or a Ray connection).

Faults: a worker that dies closes its end of the pipe, so a waiting master sees it at once; the
master also polls with a heartbeat and checks that the process is alive, and an optional
``call_timeout`` stops a worker that hangs. Either way a :class:`SlaveError` names the FMU
instance, the call and how the worker ended (exit code or signal).
"""
from __future__ import annotations

import multiprocessing
import os
import pickle
import select
import signal
import struct
import time
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

from orchestration.remote import RemoteSlave, SlaveHost
from orchestration.slaves import SlaveError

_EXCHANGE = struct.Struct("<BIIdd")      # b"X", in key, out key, t, h; then the input values
_OP_EXCHANGE = ord("X")
_LENGTH = struct.Struct("<I")            # every message: its length, then its bytes


class _Channel:
    """Length-prefixed messages over one end of a socket pair, straight through os.read/os.write
    (fewer system calls and less Python than multiprocessing.Connection: this is the hot path)."""

    __slots__ = ("fd", "buffer")

    def __init__(self, fd: int):
        self.fd = fd
        self.buffer = bytearray()

    def send(self, payload: bytes) -> None:
        data = memoryview(_LENGTH.pack(len(payload)) + payload)
        while data:
            try:
                data = data[os.write(self.fd, data):]
            except BlockingIOError:               # a large message (an FMU state) fills the socket
                select.select([], [self.fd], [], 1.0)

    def take(self) -> bytes | None:
        """A complete message from what has been read, else None."""
        buffer = self.buffer
        if len(buffer) >= 4:
            n = _LENGTH.unpack_from(buffer)[0]
            if len(buffer) >= 4 + n:
                message = bytes(buffer[4:4 + n])
                del buffer[:4 + n]
                return message
        return None

    def fill(self) -> bool:
        """Read what is there (BlockingIOError on a non-blocking end with nothing); False at EOF."""
        chunk = os.read(self.fd, 1 << 20)
        if not chunk:
            return False
        self.buffer += chunk
        return True

    def receive(self) -> bytes | None:
        """The next message, waiting for it (blocking end); None at EOF."""
        while True:
            message = self.take()
            if message is not None:
                return message
            if not self.fill():
                return None


def _worker_main(conn, name: str, fmu: str, logging: bool) -> None:   # pragma: no cover (child process)
    """Serve requests for one FMU instance until the master closes the pipe or says ``close``."""
    # Ctrl+C in a terminal goes to the whole process group: the master decides what to do
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # SCHED_BATCH: a worker woken by its request does not preempt the master, which can then send
    # the step to every worker first (they run on the other cores, or when the master waits)
    if hasattr(os, "SCHED_BATCH"):
        try:
            os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
        except OSError:
            pass
    failure = None
    host = None
    try:
        host = SlaveHost(name, fmu, logging=logging)
    except SlaveError as exc:
        failure = str(exc)
    except BaseException as exc:
        failure = f"{name}: cannot load {fmu} in the worker process: {type(exc).__name__}: {exc}"
    channel = _Channel(conn.fileno())
    os.set_blocking(channel.fd, True)
    receive, send, unpack = channel.receive, channel.send, _EXCHANGE.unpack_from
    exchange = host.exchange if host is not None else None
    while True:
        try:
            msg = receive()
        except OSError:
            return
        if msg is None:
            return
        method = "exchange"
        try:
            if msg[0] == _OP_EXCHANGE:
                if failure:
                    raise SlaveError(failure)
                _, in_key, out_key, t, h = unpack(msg)
                send(b"Y" + exchange(in_key, np.frombuffer(msg, dtype=np.float64, offset=_EXCHANGE.size), t, h,
                                     out_key).tobytes())
                continue
            method, args = pickle.loads(memoryview(msg)[1:])
            if method == "close":
                send(b"O" + pickle.dumps(None))
                return
            if method == "pid":
                send(b"O" + pickle.dumps(os.getpid()))
                continue
            if failure:
                raise SlaveError(failure)
            send(b"O" + pickle.dumps(host.call(method, args), protocol=5))
        except SlaveError as exc:
            send(b"E" + str(exc).encode("utf-8", "replace"))
        except OSError:
            return
        except Exception as exc:
            send(b"E" + f"{name}: {method} failed in the worker: {type(exc).__name__}: {exc}".encode("utf-8", "replace"))


class _Reply:
    """The answer to one request, read from the channel when somebody needs it (FIFO per worker)."""

    __slots__ = ("slave", "method", "t", "h", "done", "value", "error")

    def __init__(self, slave: "ProcessSlave", method: str | None, t: float = 0.0, h: float = 0.0):
        self.slave, self.method, self.t, self.h = slave, method, t, h
        self.done, self.value, self.error = False, None, None

    @property
    def what(self) -> str:
        return self.method or f"doStep(t = {self.t:.6g} s, h = {self.h:.6g} s)"

    def result(self) -> Any:
        if not self.done:
            self.slave._wait_for(self)
        if self.error is not None:
            raise SlaveError(self.error)
        return self.value


class ProcessSlave(RemoteSlave):
    """An FMU instance in a worker process of its own (module docstring).

    ``call_timeout`` (s, default none): a request after initialisation that takes longer stops
    the run naming the FMU (a hung worker); ``heartbeat`` (s): how often a waiting master checks
    that the worker process still lives."""

    where = "worker process"

    def __init__(self, name: str, fmu: Path | str, logging: bool = False, call_timeout: float | None = None,
                 heartbeat: float = 0.5):
        super().__init__(name, fmu)
        self.call_timeout = call_timeout
        self._heartbeat_ms = max(1, int(1000 * heartbeat))
        self._dead: str | None = None
        self._outstanding: deque[_Reply] = deque()
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe(duplex=True)
        self._process = ctx.Process(target=_worker_main, args=(child, name, str(self.fmu), logging),
                                    name=f"marine-cosim:{name}", daemon=True)
        self._process.start()
        child.close()             # the worker's end lives only in the worker: its death closes the pipe
        self._conn = parent       # owns the file descriptor
        self._channel = _Channel(parent.fileno())
        os.set_blocking(self._channel.fd, False)
        self._poll = select.poll()
        self._poll.register(self._channel.fd, select.POLLIN | select.POLLHUP | select.POLLERR)

    @property
    def pid(self) -> int | None:
        """The worker's process id (for tests and diagnostics)."""
        return self._process.pid

    # transport --------------------------------------------------------------------------------

    def _send(self, payload: bytes, reply: _Reply) -> _Reply:
        if self._dead:
            raise SlaveError(self._dead)
        try:
            self._channel.send(payload)
        except OSError:
            raise SlaveError(self._death(reply.what)) from None
        self._outstanding.append(reply)
        return reply

    def _submit(self, method: str, *args: Any) -> _Reply:
        return self._send(b"P" + pickle.dumps((method, args), protocol=5), _Reply(self, method))

    def exchange_async(self, in_vrs: np.ndarray, in_values: np.ndarray, t: float, h: float, out_vrs: np.ndarray):
        # the hot path, without the generic layers: two keys, t, h and the raw input values
        return self._send(_EXCHANGE.pack(_OP_EXCHANGE, self._key(in_vrs), self._key(out_vrs), t, h)
                          + np.ascontiguousarray(in_values, dtype=np.float64).tobytes(), _Reply(self, None, t, h))

    def _wait_for(self, reply: _Reply) -> None:
        outstanding = self._outstanding
        while not reply.done:
            first = outstanding[0]
            msg = self._receive(first)
            outstanding.popleft()
            kind = msg[0]
            if kind == 89:        # b"Y": output values
                first.value = np.frombuffer(msg, dtype=np.float64, offset=1).copy()
            elif kind == 79:      # b"O": pickled result
                first.value = pickle.loads(memoryview(msg)[1:])
            else:
                first.error = bytes(msg[1:]).decode("utf-8", "replace")
            first.done = True

    def _receive(self, reply: _Reply) -> bytes:
        if self._dead:
            raise SlaveError(self._dead)
        channel = self._channel
        if not channel.buffer:                     # fast path: the whole answer in one read
            try:
                chunk = os.read(channel.fd, 1 << 20)
            except BlockingIOError:
                chunk = None
            except OSError:
                raise SlaveError(self._death(reply.what)) from None
            if chunk is not None:
                if not chunk:
                    raise SlaveError(self._death(reply.what))
                if len(chunk) >= 4 and _LENGTH.unpack_from(chunk)[0] == len(chunk) - 4:
                    return chunk[4:]
                channel.buffer += chunk
        started = None
        while True:
            message = channel.take()
            if message is not None:
                return message
            try:
                if not channel.fill():
                    raise SlaveError(self._death(reply.what))
                continue
            except BlockingIOError:
                pass
            except OSError:
                raise SlaveError(self._death(reply.what)) from None
            # nothing yet: wait, checking now and then that the worker lives and is not hung
            if started is None:
                started, timeout = time.monotonic(), self._timeout()
            if not self._poll.poll(self._heartbeat_ms):
                if not self._process.is_alive():
                    raise SlaveError(self._death(reply.what))
                if timeout is not None and time.monotonic() - started > timeout:
                    self._kill()
                    self._dead = (f"{self.name} ({self.fmu.name}): no answer from its worker process (pid "
                                  f"{self._process.pid}) to {reply.what} within {timeout:g} s; the worker was "
                                  "stopped")
                    raise SlaveError(self._dead)

    def _death(self, what: str) -> str:
        """The message for a worker that is gone, naming the FMU, the call and how it ended."""
        self._process.join(timeout=2.0)
        code = self._process.exitcode
        if code is None:
            how = "stopped answering"
        elif code < 0:
            try:
                how = f"was killed by signal {signal.Signals(-code).name}"
            except ValueError:
                how = f"was killed by signal {-code}"
        else:
            how = f"exited with code {code}"
        self._dead = (f"{self.name} ({self.fmu.name}): its worker process (pid {self._process.pid}) {how} "
                      f"during {what}; the FMU instance is lost")
        for reply in self._outstanding:
            reply.done, reply.error = True, self._dead
        self._outstanding.clear()
        return self._dead

    def _kill(self) -> None:
        if self._process.is_alive():
            self._process.kill()
            self._process.join(timeout=2.0)

    # end --------------------------------------------------------------------------------------

    def terminate(self) -> None:
        if self._dead is None and self._process.is_alive():
            try:
                self._drain()
                self._call("terminate")
            except SlaveError:
                pass

    def free(self) -> None:
        """Free the FMU in the worker and end the worker (killed if it does not end by itself)."""
        if self._dead is None and self._process.is_alive():
            try:
                self._drain()
                self._call("free")
                self._call("close")
            except SlaveError:
                pass
        try:
            self._conn.close()
        except OSError:
            pass
        self._process.join(timeout=2.0)
        if self._process.is_alive():
            self._process.terminate()
            self._process.join(timeout=2.0)
        self._kill()
        self._dead = self._dead or f"{self.name}: the worker process was closed"

    def _drain(self) -> None:
        """Collect answers still on their way (a failed run can leave some) so requests and
        answers stay paired."""
        while self._outstanding:
            try:
                self._wait_for(self._outstanding[-1])
            except SlaveError:
                break
