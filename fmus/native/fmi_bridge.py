"""The Python end of the FMU binary (fmi2_loader.c): FMI 2.0 calls, encoded as bytes, to the slave.

The loader encodes each FMI call as one request (an opcode and its arguments, little-endian,
fixed-size numbers) and this module answers it with one reply: the status, the messages the slave
logged during the call, then the call's results. The same bytes travel two ways:

* in-process (the default build): the loader calls :meth:`Instance.call` in the host's Python,
  or in an interpreter it started from the build machine's libpython;
* out-of-process (``build_fmus.py --portable``): the loader starts the FMU's own Python runtime
  as a child process and :func:`serve` answers the requests that arrive on a socket.

Fewer calls into Python (fmi2_loader.c says when): a setReal's reply says whether a setReal of the
same references may be kept back by the loader (u32 1, the minima, the maxima; else u32 0), and the
loader then sends such calls in front of the next request (WITH_SETS: their number, then each as
u32 n, the references, the values); a doStep's request ends with the references of the getReal
that came first after the last doStep (u32 n, the references; n = 0: none), and its reply with
their values as that getReal would read them now (u32 n, the values; 0 if the read gave a
message: it is then held here and answered at that getReal, or its messages go with the next call).

The status of a call is the worst of what the slave method returned and what it logged at
warning, error or fatal: a slave reports bad input by logging it (fmus/_base.py), and the host
must then see fmi2Error. A Python exception that escapes the slave becomes fmi2Error with its
traceback in the log, never a crash of the host.
"""
from __future__ import annotations

import importlib
import os
import struct
import sys
import traceback
from array import array

# opcodes: must match enum Op in fmi2_loader.c
(INSTANTIATE, FREE, SETUP, ENTER_INIT, EXIT_INIT, TERMINATE, RESET, GET_REAL, GET_INTEGER, GET_BOOLEAN,
 GET_STRING, SET_REAL, SET_INTEGER, SET_BOOLEAN, SET_STRING, DO_STEP, GET_STATE, SET_STATE, FREE_STATE,
 SERIALIZE_STATE, DESERIALIZE_STATE, WITH_SETS) = range(22)
OK, WARNING, DISCARD, ERROR, FATAL = 0, 1, 2, 3, 4

_U32 = struct.Struct("<I")
_SETUP = struct.Struct("<iddid")
_STEP = struct.Struct("<ddi")
_STATUS = struct.Struct("<iI")
_OK_NO_LOGS = _STATUS.pack(OK, 0)       # the head of most replies
_NO_WORD = _U32.pack(0)                 # a setReal's list may not wait; a doStep read nothing ahead
_MAX_VRS = 256                          # value-reference lists remembered per instance


def _text(data: bytes, at: int) -> tuple[str, int]:
    (n,) = _U32.unpack_from(data, at)
    return data[at + 4: at + 4 + n].decode("utf-8", "replace"), at + 4 + n


def _pack_text(text: str) -> bytes:
    raw = text.encode("utf-8", "replace")
    return _U32.pack(len(raw)) + raw


class Instance:
    """One FMU instance: the slave object and its saved FMU states."""

    def __init__(self, module: str, class_name: str, instance_name: str, resources: str, visible: bool):
        self._new = lambda: getattr(importlib.import_module(module), class_name)(
            instance_name=instance_name, resources=resources, visible=visible)
        self._logs: list = []
        self._vr_lists: dict[bytes, tuple] = {}     # encoded value references -> their tuple
        self._set_words: dict[tuple, bytes] = {}    # a setReal's references -> whether (and how) it may wait
        # a read ahead at the end of a doStep that gave messages: (its encoded references, the
        # messages, the values), answered at the getReal of those references if it comes next
        self._held: tuple | None = None
        self.slave = None
        self.states: dict[int, object] = {}
        self._next_state = 1
        self.slave = self._new()

    # --------------------------------------------------------------------------- one call

    def call(self, request: bytes) -> bytes:
        """Answer one encoded FMI call (see the module docstring)."""
        (op,) = _U32.unpack_from(request, 0)
        try:
            # the calls of every step first, without the dispatch's chain of tests
            slave = self.slave
            if self._held is not None:
                held, self._held = self._held, None
                slave.log_queue.extend(held[1])
                if op == GET_REAL and request.startswith(held[0], 4):
                    return self._reply(OK, array("d", held[2]).tobytes())
            if op == WITH_SETS:
                request = self._kept_back_sets(request)
                (op,) = _U32.unpack_from(request, 0)
            if op == GET_REAL:
                status, payload = OK, array("d", slave.get_real(self._vr_list(request, 4))).tobytes()
            elif op == SET_REAL:
                vrs = self._vr_list(request, 4)
                at = 8 + 4 * len(vrs)
                slave.set_real(vrs, array("d", request[at: at + 8 * len(vrs)]).tolist())
                status, payload = OK, self._set_word(vrs)
            elif op == DO_STEP:
                t, h, _ = _STEP.unpack_from(request, 4)
                status, payload = (OK if slave.do_step(t, h) is not False else DISCARD), _NO_WORD
                if status == OK and len(request) > 28 and not slave.log_queue:
                    payload = self._read_ahead(request, 24)
            else:
                status, payload = self._dispatch(op, request, 4)
        except Exception as exc:   # the slave guards its own methods; this is a last resort
            self.slave.log_queue.append(_Log(ERROR, "logStatusError",
                                             f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=6)}"))
            status, payload = ERROR, _failed_payload(op, request)
        slave = self.slave
        if status == OK and slave is not None and not slave.log_queue:
            return _OK_NO_LOGS + payload
        return self._reply(status, payload)

    def _kept_back_sets(self, request: bytes) -> bytes:
        """Give the slave the setReal calls the loader kept back, in order; the request they preceded."""
        (count,) = _U32.unpack_from(request, 4)
        at, set_real = 8, self.slave.take_real
        for _ in range(count):
            vrs = self._vr_list(request, at)
            at += 4 + 4 * len(vrs)
            set_real(vrs, array("d", request[at: at + 8 * len(vrs)]).tolist())
            at += 8 * len(vrs)
        return request[at:]

    def _set_word(self, vrs: tuple) -> bytes:
        """Whether a setReal of ``vrs`` with finite values within the bounds that follow is sure to be
        taken without a word, so that the loader may keep such calls back (see the module docstring)."""
        bounds = getattr(self.slave, "set_bounds", None)
        if bounds is None or not self.slave.may_keep_back_sets():
            return _NO_WORD
        word = self._set_words.get(vrs)
        if word is None:
            found = bounds(vrs)
            word = _NO_WORD if found is None else _U32.pack(1) + array("d", found[0] + found[1]).tobytes()
            if len(self._set_words) >= _MAX_VRS:
                self._set_words.clear()
            self._set_words[vrs] = word
        return word

    def _read_ahead(self, request: bytes, at: int) -> bytes:
        """The values of the references encoded at ``at`` read at the end of a doStep (see the module
        docstring): u32 n and the values, or u32 0 with the read held for the call that comes next."""
        read_ahead = getattr(self.slave, "read_ahead", None)
        if read_ahead is None:
            return _NO_WORD
        vrs = self._vr_list(request, at)
        values, clean = read_ahead(vrs)
        if clean:
            return _U32.pack(len(vrs)) + array("d", values).tobytes()
        queue = self.slave.log_queue
        self._held = (request[at: at + 4 + 4 * len(vrs)], list(queue), values)
        queue.clear()
        return _NO_WORD

    def _vr_list(self, data: bytes, at: int) -> tuple:
        """The value references encoded at ``at`` (a count, then u32 each), decoded once per list."""
        (n,) = _U32.unpack_from(data, at)
        key = data[at: at + 4 + 4 * n]
        vrs = self._vr_lists.get(key)
        if vrs is None:
            vrs = tuple(array("I", key[4:]).tolist())
            if len(self._vr_lists) >= _MAX_VRS:
                self._vr_lists.clear()
            self._vr_lists[key] = vrs
        return vrs

    def _reply(self, status: int, payload: bytes) -> bytes:
        queue = self.slave.log_queue if self.slave is not None else []
        logs = []
        for message in queue:
            level = int(message.status)
            if level in (WARNING, ERROR, FATAL) and level > status:
                status = level
            logs.append(struct.pack("<i", level) + _pack_text(message.category or "")
                        + _pack_text(str(message.msg)))
        queue.clear()
        return _STATUS.pack(status, len(logs)) + b"".join(logs) + payload

    def _dispatch(self, op: int, data: bytes, at: int) -> tuple[int, bytes]:
        slave = self.slave   # getReal, setReal and doStep: call() answers them
        if op == GET_INTEGER:
            return OK, array("i", [int(v) for v in slave.get_integer(_vrs(data, at))]).tobytes()
        if op == GET_BOOLEAN:
            return OK, array("i", [1 if v else 0 for v in slave.get_boolean(_vrs(data, at))]).tobytes()
        if op == GET_STRING:
            return OK, b"".join(_pack_text(str(v)) for v in slave.get_string(_vrs(data, at)))
        if op in (SET_INTEGER, SET_BOOLEAN):
            vrs = _vrs(data, at)
            values = array("i", data[at + 4 + 4 * len(vrs): at + 4 + 8 * len(vrs)]).tolist()
            if op == SET_INTEGER:
                slave.set_integer(vrs, values)
            else:
                slave.set_boolean(vrs, [bool(v) for v in values])
            return OK, b""
        if op == SET_STRING:
            vrs = _vrs(data, at)
            at += 4 + 4 * len(vrs)
            values = []
            for _ in vrs:
                text, at = _text(data, at)
                values.append(text)
            slave.set_string(vrs, values)
            return OK, b""
        if op == SETUP:
            tol_defined, tolerance, start, stop_defined, stop = _SETUP.unpack_from(data, at)
            slave.setup_experiment(start, stop if stop_defined else None, tolerance if tol_defined else None)
            return OK, b""
        if op == ENTER_INIT:
            slave.enter_initialization_mode()
            return OK, b""
        if op == EXIT_INIT:
            slave.exit_initialization_mode()
            return OK, b""
        if op == TERMINATE:
            slave.terminate()
            return OK, b""
        if op == RESET:
            # the saved FMU states stay: the host holds them until fmi2FreeFMUstate (FMI 2.0), and
            # may restore one after the reset (a checkpoint of the run before it)
            self.slave = self._new()
            return OK, b""
        if op == GET_STATE:
            key = self._next_state
            self._next_state += 1
            self.states[key] = slave._get_fmu_state()
            return OK, _U32.pack(key)
        if op == SET_STATE:
            (key,) = _U32.unpack_from(data, at)
            if key not in self.states:
                slave.log_queue.append(_Log(ERROR, "logStatusError", f"unknown FMU state {key}"))
                return ERROR, b""
            slave._set_fmu_state(self.states[key])
            return OK, b""
        if op == FREE_STATE:
            self.states.pop(_U32.unpack_from(data, at)[0], None)
            return OK, b""
        if op == SERIALIZE_STATE:
            (key,) = _U32.unpack_from(data, at)
            if key not in self.states:
                slave.log_queue.append(_Log(ERROR, "logStatusError", f"unknown FMU state {key}"))
                return ERROR, _U32.pack(0)
            raw = type(slave)._fmu_state_to_bytes(self.states[key])
            return OK, _U32.pack(len(raw)) + raw
        if op == DESERIALIZE_STATE:
            (n,) = _U32.unpack_from(data, at)
            key = self._next_state
            self._next_state += 1
            self.states[key] = type(slave)._fmu_state_from_bytes(bytes(data[at + 4: at + 4 + n]))
            return OK, _U32.pack(key)
        slave.log_queue.append(_Log(ERROR, "logStatusError", f"FMI call {op} is not supported"))
        return ERROR, b""

    def free(self) -> None:
        self.states.clear()
        self.slave = None


class _Log:
    """A message in the form pythonfmu's LogMsg has (status, category, msg)."""

    __slots__ = ("status", "category", "msg")

    def __init__(self, status: int, category: str, msg: str):
        self.status, self.category, self.msg = status, category, msg


def _vrs(data: bytes, at: int) -> list[int]:
    (n,) = _U32.unpack_from(data, at)
    return array("I", data[at + 4: at + 4 + 4 * n]).tolist()


def _failed_payload(op: int, data: bytes) -> bytes:
    """A reply payload of the right size for a call that failed (the loader reads it)."""
    if op in (GET_REAL, GET_INTEGER, GET_BOOLEAN, GET_STRING):
        n = len(_vrs(data, 4))
        return {GET_REAL: bytes(8 * n), GET_STRING: _U32.pack(0) * n}.get(op, bytes(4 * n))
    if op in (GET_STATE, DESERIALIZE_STATE, SERIALIZE_STATE):
        return _U32.pack(0)
    return b""


def _find_in(resources: str) -> None:
    """Let this package's modules also be found in ``resources``: a host may have deleted the
    folder the package was first imported from (FMPy's simulate_fmu does when a run ends), and a
    module imported on first use must then come from a copy that still exists. Every copy of a
    package of this name holds the same files (the name is their hash)."""
    package = __package__ or ""
    for name, module in list(sys.modules.items()):
        if name != package and not name.startswith(package + "."):
            continue
        paths = getattr(module, "__path__", None)
        folder = os.path.join(resources, *name.split("."))
        if paths is not None and folder not in paths and os.path.isdir(folder):
            paths.append(folder)


def instantiate(module: str, class_name: str, instance_name: str, resources: str, visible: int):
    """The in-process loader's entry: a new :class:`Instance`, or an error message (str)."""
    try:
        _find_in(resources)
        return Instance(module, class_name, instance_name, resources, bool(visible))
    except BaseException as exc:  # noqa: BLE001 -- reported to the host, which decides
        return f"cannot instantiate {class_name} from {module}: {type(exc).__name__}: {exc}\n" \
               f"{traceback.format_exc(limit=6)}"


# ------------------------------------------------------------------------------- child process

def _read_exact(fd: int, n: int) -> bytes:
    parts, left = [], n
    while left:
        chunk = os.read(fd, left)
        if not chunk:
            raise EOFError
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def serve(fd: int, out_fd: int | None = None) -> None:
    """Answer framed requests (u32 length, then the request) arriving on ``fd`` -- a socket used
    both ways, or the reading end of a pipe whose replies go to ``out_fd`` -- until the loader frees
    the instance or goes away. The first request is INSTANTIATE with five texts: module, class,
    instance name, resources folder, visible ("0"/"1")."""
    out_fd = fd if out_fd is None else out_fd
    instance = None

    def send(reply: bytes) -> None:
        _write_all(out_fd, _U32.pack(len(reply)) + reply)

    try:
        while True:
            (n,) = _U32.unpack(_read_exact(fd, 4))
            request = _read_exact(fd, n)
            (op,) = _U32.unpack_from(request, 0)
            if op == INSTANTIATE:
                at, texts = 4, []
                for _ in range(5):
                    text, at = _text(request, at)
                    texts.append(text)
                result = instantiate(texts[0], texts[1], texts[2], texts[3], texts[4] == "1")
                if isinstance(result, str):
                    send(_STATUS.pack(ERROR, 1) + struct.pack("<i", ERROR) + _pack_text("logStatusError")
                         + _pack_text(result))
                    return
                instance = result
                send(instance._reply(OK, b""))
            elif op == FREE or instance is None:
                send(_STATUS.pack(OK, 0))
                return
            else:
                send(instance.call(request))
    except (EOFError, OSError):
        return   # the host went away: nothing to answer


def serve_handles(read_handle: int, write_handle: int) -> None:
    """:func:`serve` on two inherited Windows pipe handles (the win64 binary's way)."""
    import msvcrt

    serve(msvcrt.open_osfhandle(read_handle, os.O_RDONLY | os.O_BINARY),
          msvcrt.open_osfhandle(write_handle, os.O_WRONLY | os.O_BINARY))


def main(argv: list[str]) -> int:
    """``python -m <package>.fmi_bridge FD``: serve the loader on inherited socket FD."""
    serve(int(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
