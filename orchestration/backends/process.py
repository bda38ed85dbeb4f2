"""The ``process`` backend: FMU instances in local OS worker processes.

Why: a pythonfmu FMU runs Python code, and in one process all FMUs share one GIL, so they step one
after another however many cores there are. Worker processes let them step in parallel; a crash
inside an FMU (a segfault in native code) kills its worker, not the master. By default every FMU
instance has a worker of its own; ``workers=N`` (:class:`ProcessPool`) hosts the FMUs in N workers
instead, round-robin, which costs fewer processes, system calls and context switches per macro
step (docs/distributed.md: what each configuration costs).

Transport: a socket pair per worker (the ends of a ``multiprocessing`` pipe), read and written with
``os.readv``/``os.write`` into buffers that are allocated once. Everything travels in *frames*: a
header (body length, item count), then items, each a fixed 32-byte header (operation, FMU slot,
two value-reference keys, payload length, t, h) and a payload padded to 8 bytes. The macro step
(operation ``X``) carries the input values as raw float64, which the worker hands to
``fmi2SetReal`` in place (ctypes, no copies); ``fmi2GetReal`` writes the outputs straight into the
answer frame; the master copies them out with one numpy slice. Only the rare requests (set-up,
states, values by name) are pickled. Steps for a worker that hosts several FMUs wait in its frame
until somebody needs an answer, then all go as one frame (one write, one wake-up, one read).

The same protocol runs over the TCP connection from the master to a Ray actor (ray_direct.py):
``_serve`` and ``_Worker`` work over any connected socket, and a *peer* object (:class:`ProcessPeer`
here, ``ray_direct.ActorPeer`` there) says whether the far end lives, how it ended and stops it.

The worker is started with ``spawn`` (no fork of a master that may already hold FMUs, threads or
a Ray connection).

Faults: a worker that dies closes its end of the socket, so a waiting master sees it at once; a
read that waits gives up after a heartbeat (SO_RCVTIMEO) to check that the process is alive, and
an optional ``call_timeout`` stops a worker that hangs. Either way a :class:`SlaveError` names the FMU
instance, the call and how the worker ended (exit code or signal). Each worker unzips its FMUs in a
temporary folder of its own that the master makes and removes once the worker has ended, so that
a worker killed (SIGKILL, the OOM killer) leaves nothing behind.
"""
from __future__ import annotations

import ctypes
import itertools
import multiprocessing
import os
import pickle
import shutil
import socket
import signal
import struct
import tempfile
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

from orchestration.backends.remote import RemoteSlave, SlaveHost
from orchestration.master.slaves import _SHIFT, SlaveError, TerminateRequest

# a frame: body length (bytes after this header), item count
_FRAME = struct.Struct("<II")
# a request item: operation, FMU slot, in key, out key, payload bytes, t, h (32 bytes: keeps the
# float64 payloads 8-byte aligned)
_ITEM = struct.Struct("<BxHIIIdd")
# an answer item: kind (Y values, O pickled, E error text, T the FMU ends the run: its name and
# the time it reached, pickled), payload bytes
_ANSWER = struct.Struct("<BxxxI")       # 8 bytes: the values that follow stay aligned
# a frame holding one macro step: the frame header and the item header in one go
_STEP = struct.Struct("<II" + _ITEM.format[1:])
_OP_EXCHANGE, _OP_PICKLED = ord("X"), ord("P")
_VALUES, _PICKLED, _ERROR, _TERMINATE = ord("Y"), ord("O"), ord("E"), ord("T")
_HEAD = _FRAME.size
_FIRST_VALUE = (_HEAD + _ANSWER.size) >> 3     # float64 index of a lone answer's first value


def _padded(n: int) -> int:
    return (n + 7) & ~7


# ------------------------------------------------------------------------------- worker side

_FMI2_ARRAY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)
_FMI2_STEP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_double, ctypes.c_double, ctypes.c_int)


class _Hosted:
    """One FMU instance in a worker: its :class:`SlaveHost` plus, per pair of value-reference keys,
    the macro step's ctypes entry points and arguments (:meth:`stepper`), declared with plain
    addresses so the step passes buffer addresses (ints) without building ctypes objects."""

    __slots__ = ("host", "failure", "steps", "vr")

    def __init__(self, host: SlaveHost | None, failure: str | None):
        self.host, self.failure = host, failure
        self.steps: dict[tuple[int, int], tuple | None] = {}
        self.vr: dict[int, tuple[int, int, Any]] = {}      # key -> (address, count, keep-alive array)

    def reset(self) -> None:
        """Forget the entry points (instantiate and free change the component)."""
        self.steps.clear()

    def stepper(self, in_key: int, out_key: int) -> tuple | None:
        """(component, fmi2SetReal, input references, count, fmi2DoStep, fmi2GetReal, output
        references, count, slave) of a macro step with these keys once the FMU is instantiated;
        None: use the generic path (FMI 1.0 and 3.0, model exchange, not instantiated yet, or references of other
        types than Real: fmi2GetReal/fmi2SetReal refuse an Integer, Boolean or Enumeration, and
        InProcessSlave gets and sets those per type). Decided once per pair of keys (``steps``)."""
        slave = self.host.slave
        if slave.fmi_version != "2.0" or slave._fmu is None or not slave._fmu.component or slave.model_exchange:
            return None     # a model-exchange FMU is stepped by its slave's integrator
        if any(np.any(self.host.vrs[key] >> _SHIFT) for key in (in_key, out_key)):
            self.steps[(in_key, out_key)] = None
            return None
        dll = slave._fmu.dll
        in_address, n_in, _ = self.references(in_key)
        out_address, n_out, _ = self.references(out_key)
        found = self.steps[(in_key, out_key)] = (
            slave._fmu.component, _FMI2_ARRAY(("fmi2SetReal", dll)), in_address, n_in,
            _FMI2_STEP(("fmi2DoStep", dll)), _FMI2_ARRAY(("fmi2GetReal", dll)), out_address, n_out, slave)
        return found

    def references(self, key: int) -> tuple[int, int, Any]:
        found = self.vr.get(key)
        if found is None:
            vrs = self.host.vrs[key]
            array = (ctypes.c_uint * max(1, len(vrs)))(*[int(v) for v in vrs])
            found = self.vr[key] = (ctypes.addressof(array), len(vrs), array)
        return found


class _Buffer:
    """A growable byte buffer with a fixed address (a ctypes array): FMI functions read and write
    it in place, os.readv/os.write and struct use its memoryview."""

    __slots__ = ("array", "address", "view", "size")

    def __init__(self, size: int):
        self.size = 0
        self.grow(size)

    def grow(self, size: int, keep: int = 0) -> None:
        if size <= self.size:
            return
        size = max(size, 2 * self.size)
        array = ctypes.create_string_buffer(size)
        if keep:
            ctypes.memmove(array, self.array, keep)
        self.array, self.address, self.size = array, ctypes.addressof(array), size
        self.view = memoryview(array).cast("B")


def _worker_main(conn, workdir: str | None = None) -> None:   # pragma: no cover (child process)
    """Serve frames of requests for the FMU instances of this worker until the master closes the
    socket or says ``close``.  ``workdir``: the worker's temporary folder (its FMUs are unzipped
    there), made and removed by the master, so that nothing is left behind if the worker is killed;
    removed here too when the socket closes, so that nothing is left behind if the master is killed
    (SIGKILL: no master left to remove it, the worker sees EOF and ends)."""
    if workdir is not None:
        tempfile.tempdir = workdir
    # Ctrl+C in a terminal goes to the whole process group: the master decides what to do
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # SCHED_BATCH: a worker woken by its request does not preempt the master, which can then send
    # the step to every worker first (they run on the other cores, or when the master waits)
    if hasattr(os, "SCHED_BATCH"):
        try:
            os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
        except OSError:
            pass
    fd = conn.fileno()
    os.set_blocking(fd, True)
    try:
        _serve(fd)
    except OSError:
        pass
    finally:
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)


def _serve(fd: int, slots: list[_Hosted] | None = None) -> None:   # pragma: no cover (child process)
    """Answer frames on the connected socket ``fd`` until it closes or the master says ``close``.
    ``slots``: FMU instances loaded already (a Ray actor loads them through Ray calls and appends
    them here; the list may grow while this serves); else they come by ``load`` requests."""
    slots = [] if slots is None else slots
    inbox, outbox = _Buffer(1 << 16), _Buffer(1 << 16)
    have = 0
    readv, write = os.readv, os.write
    unpack_frame = _FRAME.unpack_from
    while True:
        while have < _HEAD:
            n = readv(fd, [inbox.view[have:]])
            if not n:
                return
            have += n
        body, count = unpack_frame(inbox.view, 0)
        end = _HEAD + body
        if end > inbox.size:
            inbox.grow(end, keep=have)
        while have < end:
            n = readv(fd, [inbox.view[have:]])
            if not n:
                return
            have += n
        out, closing = _answer_frame(inbox, count, slots, outbox)
        sent = 0
        while sent < out:
            sent += write(fd, outbox.view[sent:out])
        if closing:
            return
        have -= end
        if have:                                   # the start of the next frame came with this one
            inbox.view[:have] = bytes(inbox.view[end:end + have])


def _answer_frame(inbox: _Buffer, count: int, slots: list[_Hosted], outbox: _Buffer) -> tuple[int, bool]:
    """Carry out the ``count`` requests of the frame in ``inbox`` and write the answer frame into
    ``outbox``; returns its length and whether the master said ``close``."""
    unpack_item, pack_answer = _ITEM.unpack_from, _ANSWER.pack_into
    at, out, closing = _HEAD, _HEAD, False
    base = inbox.address
    for _ in range(count):
        op, slot, in_key, out_key, nbytes, t, h = unpack_item(inbox.view, at)
        data = at + _ITEM.size
        at = data + _padded(nbytes)
        hosted = slots[slot] if slot < len(slots) else None
        method = "exchange"
        try:
            if op == _OP_EXCHANGE:
                if hosted.failure:
                    raise SlaveError(hosted.failure)
                step = hosted.steps.get((in_key, out_key), False)
                if step is False:
                    step = hosted.stepper(in_key, out_key)
                if step is not None:
                    component, set_real, in_address, n_in, do_step, get_real, out_address, n_out, slave = step
                    size = n_out << 3
                    if out + 8 + size > outbox.size:
                        outbox.grow(out + 8 + size, keep=out)
                    if nbytes:
                        status = set_real(component, in_address, n_in, base + data)
                        if status > 1:
                            slave._check(status, "setReal")
                    status = do_step(component, t, h, 1)
                    if status > 1:
                        if status == 2 and slave._terminated_fmi2():    # as InProcessSlave.do_step
                            raise TerminateRequest(slave.name, slave._last_successful_time(t))
                        slave._check(status, f"doStep(t = {t:.6g} s, h = {h:.6g} s)")
                    if n_out:
                        status = get_real(component, out_address, n_out, outbox.address + out + 8)
                        if status > 1:
                            slave._check(status, "getReal")
                else:                              # FMI 1.0 (or not instantiated): the generic path
                    u = np.frombuffer(inbox.view, dtype=np.float64, count=nbytes // 8, offset=data).copy()
                    y = np.ascontiguousarray(hosted.host.exchange(in_key, u, t, h, out_key), dtype=np.float64)
                    size = y.nbytes
                    outbox.grow(out + 8 + size, keep=out)
                    outbox.view[out + 8:out + 8 + size] = y.view(np.uint8)
                pack_answer(outbox.view, out, _VALUES, size)
                out += 8 + size
                continue
            method, args = pickle.loads(inbox.view[data:data + nbytes])
            if method == "load":
                value = None
                slots.append(_load(*args))
            elif method == "close":
                value, closing = None, True
            elif method == "pid":
                value = os.getpid()
            elif hosted is None:
                raise SlaveError(f"the worker has no FMU instance in slot {slot}")
            elif hosted.failure:
                raise SlaveError(hosted.failure)
            else:
                if method in ("instantiate", "free", "terminate"):
                    hosted.reset()
                value = hosted.host.call(method, args)
            blob = pickle.dumps(value, protocol=5)
            kind = _PICKLED
        except SlaveError as exc:
            blob, kind = str(exc).encode("utf-8", "replace"), _ERROR
        except TerminateRequest as request:        # not a failure: the run ends there (_Reply.result)
            blob, kind = pickle.dumps((request.name, request.time), protocol=5), _TERMINATE
        except Exception as exc:
            name = hosted.host.slave.name if hosted is not None and hosted.host is not None else f"slot {slot}"
            blob, kind = (f"{name}: {method} failed in the worker: {type(exc).__name__}: {exc}"
                          .encode("utf-8", "replace"), _ERROR)
        size = len(blob)
        outbox.grow(out + 8 + _padded(size), keep=out)
        pack_answer(outbox.view, out, kind, size)
        outbox.view[out + 8:out + 8 + size] = blob
        out += 8 + _padded(size)
    _FRAME.pack_into(outbox.view, 0, out - _HEAD, count)
    return out, closing


def _load(name: str, fmu: str, logging: bool) -> _Hosted:   # pragma: no cover (child process)
    """Load one FMU instance; a failure is kept and answered to every request for it."""
    try:
        return _Hosted(SlaveHost(name, fmu, logging=logging), None)
    except SlaveError as exc:
        return _Hosted(None, str(exc))
    except BaseException as exc:
        return _Hosted(None, f"{name}: cannot load {fmu} in the worker process: {type(exc).__name__}: {exc}")


# ------------------------------------------------------------------------------- master side

class _Reply:
    """The answer to one request, read from the worker's socket when somebody needs it."""

    __slots__ = ("slave", "method", "t", "h", "done", "value", "error")

    def __init__(self, slave: "ProcessSlave", method: str | None, t: float = 0.0, h: float = 0.0):
        self.slave, self.method, self.t, self.h = slave, method, t, h
        self.done, self.value, self.error = False, None, None

    @property
    def what(self) -> str:
        return self.method or f"doStep(t = {self.t:.6g} s, h = {self.h:.6g} s)"

    def result(self) -> Any:
        if not self.done:
            worker = self.slave._worker
            if worker.pool.unsent:
                worker.pool.flush()
            worker.wait_for(self)
        if self.error is not None:
            if isinstance(self.error, TerminateRequest):    # the FMU asked to end the simulation
                raise TerminateRequest(self.error.name, self.error.time)
            raise SlaveError(self.error)
        return self.value

    @staticmethod
    def collect(replies: list["_Reply"]) -> None:
        """Read the answers of many steps (Execution.sync) in one tight loop. The usual case -- a
        step alone in its worker's frame, whose answer arrives whole -- costs one system call and
        a few lines; anything else (several FMUs per worker, a partial read, an error, a dead or
        slow worker) goes the general way, :meth:`_Worker.wait_for`, with the bytes read so far."""
        unpack_frame, unpack_answer = _FRAME.unpack_from, _ANSWER.unpack_from
        for reply in replies:
            if reply.done:
                continue
            worker = reply.slave._worker
            if worker.pool.unsent:
                worker.pool.flush()
            with worker.lock:
                first = worker.outstanding[0] if worker.outstanding else None
                if first is not None and first[0] is reply and len(first) == 1 and not worker.have:
                    try:
                        n = os.readv(worker.fd, [worker.in_view])
                    except OSError:                # a heartbeat went by, or the worker is gone:
                        n = 0                      # the general way finds out which
                    if n:
                        worker.have = n
                        if n >= _HEAD + _ANSWER.size and n == _HEAD + unpack_frame(worker.in_bytes, 0)[0]:
                            kind, size = unpack_answer(worker.in_bytes, _HEAD)
                            if kind == _VALUES:
                                reply.value = worker.in_f64[_FIRST_VALUE:_FIRST_VALUE + (size >> 3)].copy()
                                reply.done = True
                                worker.outstanding.popleft()
                                worker.have = 0
                                continue
                worker.wait_for(reply)


class ProcessPeer:
    """The far end of a :class:`_Worker` that is a local worker process: how the master checks
    that it lives, learns how it ended and stops it. (ray_direct.ActorPeer: the same for a Ray
    actor.)"""

    noun = "worker"

    def __init__(self, process, workdir: str | None = None):
        self.process = process
        self.workdir = workdir

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def describe(self, names: list[str]) -> str:
        hosting = "" if len(names) < 2 else f", hosting {', '.join(names)}"
        return f"worker process (pid {self.pid}{hosting})"

    def alive(self) -> bool:
        return self.process.is_alive()

    def ended(self) -> str:
        self.process.join(timeout=2.0)
        code = self.process.exitcode
        if code is None:
            return "stopped answering"
        self.remove_workdir()
        if code < 0:
            try:
                return f"was killed by signal {signal.Signals(-code).name}"
            except ValueError:
                return f"was killed by signal {-code}"
        return f"exited with code {code}"

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=2.0)
        self.remove_workdir()

    def close(self) -> None:
        """After the ``close`` request and the socket's close: let it end (else stop it)."""
        self.process.join(timeout=2.0)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(timeout=2.0)
        self.kill()

    def remove_workdir(self) -> None:
        """The worker's temporary folder (its unzipped FMUs), once the worker has ended: a worker
        that was killed could not remove its own."""
        if self.workdir is not None and not self.process.is_alive():
            shutil.rmtree(self.workdir, ignore_errors=True)


def spawn_worker(pool: "WirePool", label: str) -> "_Worker":
    """A new worker process (``spawn``) and the master's end of its socket."""
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe(duplex=True)
    workdir = tempfile.mkdtemp(prefix="mc_worker_")
    process = ctx.Process(target=_worker_main, args=(child, workdir), name=f"marine-cosim:{label}", daemon=True)
    try:
        process.start()
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    child.close()             # the worker's end lives only in the worker: its death closes the socket
    return _Worker(pool, parent, ProcessPeer(process, workdir))


class _Worker:
    """The master's end of one connected socket to a worker (a worker process, or a Ray actor's
    direct connection: ray_direct.py) and the FMU instances (slots) it hosts.

    Requests are written into a frame that is sent by :meth:`flush`; answers come back as one
    frame per frame sent, in order (``outstanding`` pairs them). A lock makes it safe for the
    execution's start-up threads to use FMUs that share a worker. ``conn``: what owns the socket's
    file descriptor (closed at the end); ``peer``: the far end's liveness (ProcessPeer)."""

    def __init__(self, pool: "WirePool", conn: Any, peer: Any):
        self.pool = pool
        self.peer = peer
        self.slaves: list[ProcessSlave] = []
        self.live = 0
        self.dead: str | None = None               # how the worker ended, once it has
        self.lock = threading.RLock()
        self.outstanding: deque[list[_Reply]] = deque()
        self.batch: list[_Reply] = []               # requests in the frame not yet sent
        self.out_bytes = bytearray(1 << 16)
        self.out_f64 = np.frombuffer(self.out_bytes, dtype=np.float64)
        self.out_view = memoryview(self.out_bytes)
        self.used = _HEAD
        self.in_bytes = bytearray(1 << 16)
        self.in_f64 = np.frombuffer(self.in_bytes, dtype=np.float64)
        self.in_view = memoryview(self.in_bytes)
        self.have = 0
        self.conn = conn          # owns the file descriptor
        self.fd = conn.fileno()
        # blocking reads and writes that give up after a heartbeat (SO_RCVTIMEO/SO_SNDTIMEO): an
        # answer that is there costs one system call, and a waiting master still checks now and
        # then that the worker lives
        with socket.socket(fileno=os.dup(self.fd)) as sock:
            heartbeat = pool.heartbeat_ms * 1000
            timeval = struct.pack("ll", heartbeat // 1_000_000, heartbeat % 1_000_000)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, timeval)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeval)
        os.set_blocking(self.fd, True)

    @property
    def pid(self) -> int | None:
        return getattr(self.peer, "pid", None)

    def describe(self) -> str:
        return self.peer.describe([s.name for s in self.slaves])

    def alive(self) -> bool:
        return self.dead is None and self.peer.alive()

    # writing ----------------------------------------------------------------------------------

    def _room(self, n: int) -> None:
        need = self.used + n
        if need > len(self.out_bytes):
            grown = bytearray(max(need, 2 * len(self.out_bytes)))
            grown[:self.used] = self.out_bytes[:self.used]
            self.out_view.release()
            self.out_bytes, self.out_f64, self.out_view = grown, np.frombuffer(grown, dtype=np.float64),
            memoryview(grown)

    def add_exchange(self, slot: int, in_key: int, out_key: int, t: float, h: float, u: np.ndarray,
                     reply: _Reply) -> None:
        n = len(u)
        with self.lock:
            if self.live <= 1 and not self.batch and self.dead is None:
                # alone in its worker: the step goes at once, a frame of its own
                size = _STEP.size + 8 * n
                self._room(size - _HEAD)
                _STEP.pack_into(self.out_bytes, 0, size - _HEAD, 1, _OP_EXCHANGE, slot, in_key, out_key, 8 * n, t, h)
                self.out_f64[_STEP.size >> 3:(_STEP.size >> 3) + n] = u
                batch = [reply]
                self.outstanding.append(batch)
                try:
                    sent = os.write(self.fd, self.out_view[:size])
                except OSError:
                    sent = 0
                if sent != size:                   # rare: the general way (waits, errors)
                    self._write(size, batch, sent)
                return
            self._room(_ITEM.size + 8 * n)
            at = self.used
            _ITEM.pack_into(self.out_bytes, at, _OP_EXCHANGE, slot, in_key, out_key, 8 * n, t, h)
            start = (at + _ITEM.size) >> 3
            self.out_f64[start:start + n] = u
            self.used = at + _ITEM.size + 8 * n
            self.batch.append(reply)
            if self.live <= 1:
                self.flush()
            elif len(self.batch) == 1:
                self.pool.unsent.append(self)

    def add_request(self, slot: int, method: str, args: tuple, reply: _Reply) -> None:
        blob = pickle.dumps((method, args), protocol=5)
        n = len(blob)
        with self.lock:
            self._room(_ITEM.size + _padded(n))
            at = self.used
            _ITEM.pack_into(self.out_bytes, at, _OP_PICKLED, slot, 0, 0, n, 0.0, 0.0)
            self.out_bytes[at + _ITEM.size:at + _ITEM.size + n] = blob
            self.used = at + _ITEM.size + _padded(n)
            self.batch.append(reply)
            self.flush()

    def flush(self) -> None:
        """Send the waiting frame (if any)."""
        with self.lock:
            batch = self.batch
            if not batch:
                return
            used = self.used
            _FRAME.pack_into(self.out_bytes, 0, used - _HEAD, len(batch))
            self.batch, self.used = [], _HEAD
            if self.dead:
                self._fail(batch)
                return
            self.outstanding.append(batch)
            self._write(used, batch)

    def _write(self, size: int, batch: list[_Reply], sent: int = 0) -> None:
        view = self.out_view
        try:
            while sent < size:
                try:
                    sent += os.write(self.fd, view[sent:size])
                except BlockingIOError:            # a large message (an FMU state) fills the socket
                    if not self.peer.alive():
                        raise BrokenPipeError from None
        except OSError:
            self.died(batch[0])

    # reading ----------------------------------------------------------------------------------

    def wait_for(self, reply: _Reply) -> None:
        with self.lock:
            if reply in self.batch:
                self.flush()
            while not reply.done:
                if not self.outstanding:           # an answer lost with a dead worker
                    reply.done, reply.error = True, reply.slave._dead or "no answer from the worker"
                    return
                self._read_frame(self.outstanding[0], reply)

    def _fill(self, waiting: _Reply) -> None:
        """Read what the worker has sent, waiting for it if need be (heartbeat, call timeout)."""
        started = timeout = None
        while True:
            try:
                n = os.readv(self.fd, [self.in_view[self.have:]])
            except BlockingIOError:                # a heartbeat without an answer
                n = None
            except OSError:
                n = 0
            if n == 0:
                self.died(waiting)
                return
            if n is not None:
                self.have += n
                return
            # a heartbeat went by without an answer: does the worker live, is it hung?
            if started is None:          # the first heartbeat has gone by already
                started, timeout = time.monotonic() - self.pool.heartbeat_ms / 1000, waiting.slave._timeout()
            if not self.peer.alive():
                self.died(waiting)
                return
            if timeout is not None and time.monotonic() - started > timeout:
                self.kill()
                self.dead = (f"no answer from its {self.describe()} to {waiting.what} within {timeout:g} s; "
                             f"the {self.peer.noun} was stopped")
                self._fail_all()
                return

    def _read_frame(self, batch: list[_Reply], waiting: _Reply) -> None:
        while self.have < _HEAD:
            self._fill(waiting)
            if self.dead:
                return
        body, count = _FRAME.unpack_from(self.in_bytes, 0)
        end = _HEAD + body
        if end > len(self.in_bytes):
            grown = bytearray(max(end, 2 * len(self.in_bytes)))
            grown[:self.have] = self.in_bytes[:self.have]
            self.in_view.release()
            self.in_bytes, self.in_f64, self.in_view = grown, np.frombuffer(grown, dtype=np.float64), memoryview(grown)
        while self.have < end:
            self._fill(waiting)
            if self.dead:
                return
        self.outstanding.popleft()
        data, at = self.in_bytes, _HEAD
        for reply in batch:
            kind, size = _ANSWER.unpack_from(data, at)
            at += _ANSWER.size
            if kind == _VALUES:
                start = at >> 3
                reply.value = self.in_f64[start:start + (size >> 3)].copy()
            elif kind == _PICKLED:
                reply.value = pickle.loads(self.in_view[at:at + size])
            elif kind == _TERMINATE:
                reply.error = TerminateRequest(*pickle.loads(self.in_view[at:at + size]))   # result() raises it
            else:
                reply.error = bytes(self.in_view[at:at + size]).decode("utf-8", "replace")
            reply.done = True
            at += _padded(size)
        self.have -= end
        if self.have:
            data[:self.have] = data[end:end + self.have]

    # the end ----------------------------------------------------------------------------------

    def died(self, waiting: _Reply | None) -> None:
        """The worker is gone: say how, and fail everything it still owed."""
        if self.dead is None:
            how = self.peer.ended()
            what = waiting.what if waiting is not None else "a request"
            self.dead = f"its {self.describe()} {how} during {what}; the FMU " \
                        f"instance{'s are' if len(self.slaves) > 1 else ' is'} lost"
        self._fail_all()

    def _fail(self, replies: list[_Reply]) -> None:
        for reply in replies:
            if not reply.done:
                reply.done, reply.error = True, reply.slave.mark_dead(self.dead)

    def _fail_all(self) -> None:
        for slave in self.slaves:
            slave.mark_dead(self.dead)
        for batch in self.outstanding:
            self._fail(batch)
        self.outstanding.clear()
        self._fail(self.batch)
        self.batch, self.used = [], _HEAD
        self.have = 0

    def kill(self) -> None:
        self.peer.kill()

    def drain(self) -> None:
        """Collect answers still on their way (a failed run can leave some) so requests and
        answers stay paired."""
        with self.lock:
            self.flush()
            while self.outstanding and not self.dead:
                batch = self.outstanding[0]
                self.wait_for(batch[-1])

    def release(self) -> None:
        """One hosted FMU is done; the last one ends the worker (killed if it does not end)."""
        with self.lock:
            self.live -= 1
            if self.live > 0:
                return
            if self.dead is None:
                try:
                    reply = _Reply(self.slaves[0], "close")
                    self.add_request(0, "close", (), reply)
                    self.wait_for(reply)
                except SlaveError:
                    pass
            try:
                self.conn.close()
            except OSError:
                pass
            self.peer.close()
            self.dead = self.dead or f"the {self.peer.noun} was closed"
            if self in self.pool.workers:
                self.pool.workers.remove(self)


class WirePool:
    """The connections (:class:`_Worker`) of one execution: the heartbeat of their reads, and the
    frames waiting to be sent (steps of FMUs that share a worker wait until somebody needs an
    answer, then every waiting frame goes)."""

    def __init__(self, heartbeat: float = 0.5):
        self.heartbeat_ms = max(1, int(1000 * heartbeat))
        self.workers: list[_Worker] = []
        self.unsent: list[_Worker] = []

    def flush(self) -> None:
        """Send every worker's waiting frame."""
        unsent = self.unsent
        while unsent:
            unsent.pop().flush()


class ProcessPool(WirePool):
    """The worker processes of one execution. ``workers=None``: one per FMU instance (the
    default); ``workers=N``: N processes, FMU instances assigned round-robin in creation order."""

    def __init__(self, workers: int | None = None, call_timeout: float | None = None, heartbeat: float = 0.5,
                 logging: bool = False):
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        super().__init__(heartbeat)
        self.size, self.call_timeout, self.logging = workers, call_timeout, logging
        self._count = itertools.count()

    def worker(self, name: str) -> _Worker:
        k = next(self._count)
        if self.size is None or len(self.workers) < self.size:
            worker = spawn_worker(self, name if self.size is None else f"worker{len(self.workers)}")
            self.workers.append(worker)
            return worker
        return self.workers[k % self.size]

    def slave(self, name: str, fmu: Path | str) -> "ProcessSlave":
        return ProcessSlave(name, fmu, logging=self.logging, call_timeout=self.call_timeout, pool=self)


class ProcessSlave(RemoteSlave):
    """An FMU instance in a worker process (module docstring).

    ``call_timeout`` (s, default none): a request after initialisation that takes longer stops
    the run naming the FMU (a hung worker); ``heartbeat`` (s): how often a waiting master checks
    that the worker process still lives; ``pool``: the :class:`ProcessPool` whose workers host it
    (default: a worker of its own)."""

    where = "worker process"

    def __init__(self, name: str, fmu: Path | str, logging: bool = False, call_timeout: float | None = None,
                 heartbeat: float = 0.5, pool: ProcessPool | None = None):
        super().__init__(name, fmu)
        self.call_timeout = call_timeout
        self._dead: str | None = None
        self._released = False
        self._step_vrs: tuple = (None, None)
        self._step_keys = (0, 0)
        pool = pool or ProcessPool(None, call_timeout, heartbeat, logging)
        self._worker = worker = pool.worker(name)
        with worker.lock:
            self._slot = len(worker.slaves)
            worker.slaves.append(self)
            worker.live += 1
            # loading goes on in the worker while the master creates the other slaves; a failure
            # is kept there and answers every later request of this FMU
            worker.add_request(self._slot, "load", (name, str(self.fmu), logging), _Reply(self, "load"))

    @property
    def pid(self) -> int | None:
        """The worker's process id (for tests and diagnostics)."""
        return self._worker.pid

    def mark_dead(self, how: str) -> str:
        if self._dead is None:
            self._dead = f"{self.name} ({self.fmu.name}): {how}"
        return self._dead

    # transport --------------------------------------------------------------------------------

    def _submit(self, method: str, *args: Any) -> _Reply:
        if self._dead:
            raise SlaveError(self._dead)
        reply = _Reply(self, method)
        self._worker.add_request(self._slot, method, args, reply)
        return reply

    def exchange_async(self, in_vrs: np.ndarray, in_values: np.ndarray, t: float, h: float, out_vrs: np.ndarray):
        # the hot path: two keys, t, h and the raw input values into the worker's frame
        if self._dead:
            raise SlaveError(self._dead)
        if in_vrs is self._step_vrs[0] and out_vrs is self._step_vrs[1]:
            in_key, out_key = self._step_keys      # the execution passes the same arrays every step
        else:
            self._step_keys = in_key, out_key = self._key(in_vrs), self._key(out_vrs)
            self._step_vrs = (in_vrs, out_vrs)     # held: their ids stay theirs
        reply = _Reply(self, None, t, h)
        self._worker.add_exchange(self._slot, in_key, out_key, t, h, in_values, reply)
        return reply

    # end --------------------------------------------------------------------------------------

    def terminate(self) -> None:
        if self._dead is None and self._worker.alive():
            try:
                self._worker.drain()
                self._call("terminate")
            except SlaveError:
                pass

    def free(self) -> None:
        """Free the FMU in the worker; the last FMU of a worker ends it."""
        worker = self._worker
        if self._dead is None and worker.alive():
            try:
                worker.drain()
                self._call("free")
            except SlaveError:
                pass
        if not self._released:
            self._released = True
            worker.release()
        self._dead = self._dead or f"{self.name}: the worker process was closed"

    def _drain(self) -> None:
        self._worker.drain()
