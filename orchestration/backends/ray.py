"""The ``ray`` backend: every FMU instance a Ray actor, anywhere on a Ray cluster.

Why Ray: it already does what a distributed master needs besides the coupling itself -- placing
processes on the nodes of a cluster by resources (an FMU that needs Windows or a licence goes to a
node started with ``--resources='{"windows": 1}'``), shipping data through its object store,
starting and stopping the processes and reporting a process or node that died. Cost: about 1 ms
per ordinary actor call (anchors_cosim.md §5), so it pays off for FMUs that are heavy or must run
elsewhere; light FMUs on one machine are faster in-process or with the ``process`` backend.

* **Hot path.** By default (``transport="direct"``) every call after loading goes over a TCP
  connection of its own from the master to the actor (ray_direct.py): the actor listens on its
  node's address, the master connects with a random token, and they speak the process backend's
  binary frames (a macro step: two keys, t, h and the raw float64 inputs; the outputs back), with
  blocking waits at both ends -- about 0.2 ms per macro step for 5 actors instead of ~3 ms for
  ordinary actor calls (docs/distributed.md). If the connection cannot be made (a firewall), the
  slave falls back to ordinary actor calls with a warning naming the reason. The other transports,
  chosen with ``transport=`` or ``MARINE_COSIM_RAY_TRANSPORT``: ``calls`` -- a macro step as one
  packed byte string in an ordinary actor call; ``compiled`` (or ``MARINE_COSIM_RAY_COMPILED=1``)
  -- that byte string through a Ray Compiled Graph per actor (ray_cgraph.py: shared-memory
  channels, but its actors busy-wait between steps; kept as an option, slower than direct).
  With ``calls``/``compiled``, loading, initialisation, FMU states and checkpoints are ordinary
  actor calls.

* **No shared file system.** The master reads each FMU file once, puts the bytes into the object
  store and the actor writes them into a temporary folder on its own node (so a node that never
  saw the master's disk can run the FMU).
* **Placement.** Per component actor options -- ``num_cpus``, ``num_gpus``, ``resources``
  (e.g. ``{"windows": 1}``), ``memory`` -- from the system file or the command line
  (backends.py).
* **Groups.** Components with the same ``group`` share one actor (and one direct connection):
  their steps go in one frame (or call) per macro step -- one round trip instead of one per FMU --
  and run one after another inside it. For
  light FMUs that only need to be on some node (the per-call cost dominates); heavy FMUs that
  should step in parallel get an actor each.
* **Faults.** Direct: an actor process that dies closes its connection, so the waiting master
  sees it at once; at each heartbeat without an answer the master asks Ray's control store
  whether the actor lives (a node that vanished). Calls/compiled: the next call raises Ray's
  ``RayActorError``. Either way the master raises a :class:`SlaveError` naming the FMU instance,
  the call and how the actor died. A call that gets no answer within ``call_timeout`` (if given)
  kills the actor and does the same.
* **Loopback.** A local Ray instance (no address) binds to a loopback address, so a local run
  opens nothing to the network. Ray resolves "127.0.0.1" to the host's outside address, so
  another address of the loopback range is used on Linux (``MARINE_COSIM_RAY_NODE_IP`` overrides).

Ray is imported only when this backend is used: the in-process path never loads it.
"""
from __future__ import annotations

import ipaddress
import os
import sys
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from orchestration.backends import ray_cgraph
from orchestration.backends import BackendError
from orchestration.backends.process import _Reply
from orchestration.backends.remote import RemoteSlave, SlaveHost
from orchestration.master.slaves import SlaveError

INSTALL_HINT = "pip install 'marine-cosim[distributed]'"
TRANSPORTS = ("direct", "calls", "compiled")
TRANSPORT_ENV = "MARINE_COSIM_RAY_TRANSPORT"


def transport_default() -> str:
    """The hot path RaySlaves use when not told: ``MARINE_COSIM_RAY_TRANSPORT`` (direct, calls or
    compiled), else compiled if ``MARINE_COSIM_RAY_COMPILED`` says so, else direct."""
    configured = os.environ.get(TRANSPORT_ENV, "").strip().lower()
    if configured:
        if configured not in TRANSPORTS:
            raise BackendError(f"{TRANSPORT_ENV}={configured!r}: use one of {', '.join(TRANSPORTS)}")
        return configured
    return "compiled" if ray_cgraph.compiled_default() else "direct"
ACTOR_OPTIONS = ("num_cpus", "num_gpus", "resources", "memory", "accelerator_type", "label_selector")


def require_ray():
    """Import Ray or say how to install it."""
    try:
        import ray
    except ImportError:
        raise BackendError(f"the ray backend and Ray sweeps need Ray, which is not installed: {INSTALL_HINT}") from None
    return ray


def local_node_ip() -> str | None:
    """The loopback address a local Ray instance binds to (None: let Ray choose)."""
    configured = os.environ.get("MARINE_COSIM_RAY_NODE_IP")
    if configured:
        return configured
    # Ray turns 127.0.0.1 into the machine's outside address on Linux; any other 127.x address it
    # takes as it is (macOS and Windows already stay on 127.0.0.1)
    return "127.0.0.2" if sys.platform.startswith("linux") else None


def _loopback_host(address: str) -> str | None:
    host = address.rsplit(":", 1)[0].strip("[]")
    try:
        return host if ipaddress.ip_address(host).is_loopback else None
    except ValueError:
        return None


_connect_lock = threading.Lock()


def connect(address: str | None = None, num_cpus: int | None = None) -> Any:
    """Connect this process to Ray: to the cluster at ``address`` ("host:port", or "auto" for the
    cluster ``ray start`` runs on this machine), else start a local instance on loopback. Does
    nothing when already connected. Returns the ray module."""
    ray = require_ray()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")     # never report to the outside
    with _connect_lock:
        if ray.is_initialized():
            return ray
        kwargs: dict[str, Any] = {"logging_level": "ERROR", "log_to_driver": False,
                                  "ignore_reinit_error": True}
        if address in (None, "", "local"):
            node_ip = local_node_ip()
            if node_ip:
                kwargs["_node_ip_address"] = node_ip
            kwargs["include_dashboard"] = False
            if num_cpus is not None:
                kwargs["num_cpus"] = num_cpus
        else:
            kwargs["address"] = address
            host = _loopback_host(address)
            if host and host != "127.0.0.1":
                kwargs["_node_ip_address"] = host     # a cluster started on a loopback address
        try:
            ray.init(**kwargs)
        except ConnectionError as exc:
            raise BackendError(f"cannot connect to the Ray cluster at {address}: {exc}") from None
        except (ValueError, RuntimeError) as exc:   # an address Ray cannot parse, a cluster it cannot join
            where = f"the Ray cluster at {address}" if address not in (None, "", "local") else "a local Ray"
            raise BackendError(f"cannot start or join {where}: {exc}") from None
        return ray


_actor_class = None


def _fmu_actor():
    """The actor class, defined on first use (so importing this module does not import Ray)."""
    global _actor_class
    if _actor_class is None:
        ray = require_ray()

        class FmuActor:
            """Hosts one FMU instance -- or several, for an actor group (module docstring) -- as
            remote.SlaveHost objects by instance name, on whichever node Ray placed it."""

            def __init__(self):
                from orchestration.backends.ray_direct import DirectServer

                self.hosts: dict[str, SlaveHost] = {}
                self.paths: dict[str, Path] = {}
                # a compiled graph's steps run on a background thread, ordinary calls on the main
                # one (ray_cgraph): never both on an FMU at once
                self.lock = threading.Lock()
                # the direct connection (ray_direct): its FMUs by slot, served on a background thread
                self.slots: list = []
                self.server = DirectServer(self.slots)

            def add(self, name: str, fmu_name: str, fmu_bytes: bytes, logging: bool) -> int:
                """Load an FMU instance; returns its slot on the direct connection."""
                from orchestration.backends.process import _Hosted

                folder = Path(tempfile.mkdtemp(prefix="mc_ray_fmu_"))
                path = folder / fmu_name
                path.write_bytes(fmu_bytes)
                self.paths[name] = path
                self.hosts[name] = SlaveHost(name, path, logging=logging)
                self.slots.append(_Hosted(self.hosts[name], None))
                return len(self.slots) - 1

            def listen(self, token: bytes) -> tuple:
                """Open the direct connection's listening socket on this node's address (ray_direct)."""
                return self.server.listen(token, ray.util.get_node_ip_address())

            def finish(self) -> None:
                """The direct connection is closed: wait for its thread, remove the FMU files."""
                import shutil

                self.server.finish()
                for path in self.paths.values():
                    shutil.rmtree(path.parent, ignore_errors=True)

            def step(self, name: str, request: bytes) -> bytes | str:
                """One packed step (ray_cgraph.pack): the outputs' bytes, or the FMU's error message."""
                in_key, u, t, h, out_key, mode = ray_cgraph.unpack(request)
                host = self.hosts[name]
                with self.lock:
                    try:
                        if mode == ray_cgraph.EXCHANGE:
                            y = host.exchange(in_key, u, t, h, out_key)
                        else:
                            y = host.op_set_and_get(in_key, u, out_key)
                    except SlaveError as exc:
                        return str(exc)
                return np.ascontiguousarray(y, dtype=np.float64).tobytes()

            def step_many(self, requests: list) -> list:
                """Several hosted FMUs' steps in one call: (name, request) -> answer of :meth:`step` each."""
                return [self.step(name, request) for name, request in requests]

            def call(self, name: str, method: str, args: tuple) -> Any:
                with self.lock:
                    if method == "free":
                        try:
                            return self.hosts[name].call("free", ())
                        finally:
                            import shutil

                            shutil.rmtree(self.paths[name].parent, ignore_errors=True)
                            self.hosts.pop(name, None)
                    return self.hosts[name].call(method, args)

            def where(self, name: str) -> dict:
                import socket

                return {"node_id": ray.get_runtime_context().get_node_id(),
                        "node_ip": ray.util.get_node_ip_address(), "hostname": socket.gethostname(),
                        "pid": os.getpid(), "fmu": str(self.paths[name]), "hosts": sorted(self.hosts)}

        _actor_class = ray.remote(max_restarts=0, max_task_retries=0)(FmuActor)
    return _actor_class


def _describe_ray_error(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"


def _step_value(answer: Any) -> Any:
    """A step's answer (FmuActor.step): outputs, or the FMU's error message as a SlaveError."""
    if isinstance(answer, str):
        return SlaveError(answer)
    return ray_cgraph.outputs(answer)


class _RayReply:
    """The answer of one actor call: an ObjectRef, or a compiled graph's ref (``compiled``);
    ``collect`` gets many at once. ``packed``: a step (FmuActor.step), whose answer is decoded."""

    __slots__ = ("slave", "ref", "method", "t", "h", "compiled", "packed", "done", "value", "error")

    def __init__(self, slave: "RaySlave", ref, method: str | None, t: float = 0.0, h: float = 0.0,
                 compiled: bool = False, packed: bool = False):
        self.slave, self.ref, self.method, self.t, self.h = slave, ref, method, t, h
        self.compiled, self.packed = compiled, packed
        self.done, self.value, self.error = False, None, None

    @property
    def what(self) -> str:
        return self.method or f"doStep(t = {self.t:.6g} s, h = {self.h:.6g} s)"

    def settle(self, answer: Any) -> None:
        if self.packed:
            answer = _step_value(answer)
            if isinstance(answer, SlaveError):
                self.error, answer = str(answer), None
        self.done, self.value = True, answer

    @staticmethod
    def collect(replies: list["_RayReply"]) -> None:
        ray = sys.modules["ray"]
        ordinary = [r for r in replies if not r.done and not r.compiled]
        if len(ordinary) > 1:
            limits = [r.slave._timeout() for r in ordinary]
            timeout = None if None in limits else max(limits)
            try:
                values = ray.get([r.ref for r in ordinary], timeout=timeout)
            except Exception:
                values = None       # one of them failed: _get finds out which, one by one
            for r, v in zip(ordinary, values or ()):
                r.settle(v)
        for r in replies:           # compiled graphs: all in flight already, read one after another
            if not r.done:
                r.slave._get(r)

    def result(self) -> Any:
        if not self.done:
            self.slave._get(self)
        if self.error is not None:
            raise SlaveError(self.error)
        return self.value


class _GroupReply:
    """A step of an FMU that shares its actor with others (an actor group): sent when collected,
    together with the steps of the other members, as one ``step_many`` call (or compiled graph
    execution) per actor."""

    __slots__ = ("slave", "item", "t", "h", "done", "value", "error")

    def __init__(self, slave: "RaySlave", item: tuple, t: float, h: float):
        self.slave, self.item, self.t, self.h = slave, item, t, h
        self.done, self.value, self.error = False, None, None

    @property
    def what(self) -> str:
        return f"doStep(t = {self.t:.6g} s, h = {self.h:.6g} s)"

    @staticmethod
    def collect(replies: list["_GroupReply"]) -> None:
        ray = sys.modules["ray"]
        from ray import exceptions as rx

        by_actor: dict[Any, list[_GroupReply]] = {}
        for r in replies:
            if not r.done:
                by_actor.setdefault(r.slave._group, []).append(r)
        sent = []
        for group, members in by_actor.items():
            for m in members:
                m.slave._deferred = None
            try:
                sent.append((group, members, group.send([m.item for m in members],
                                                        all(m.slave._running for m in members))))
            except Exception as exc:
                sent.append((group, members, exc))
        for group, members, ref in sent:
            limits = [m.slave._timeout() for m in members]
            timeout = None if None in limits else max(limits)
            values = None
            try:
                if isinstance(ref, Exception):
                    raise ref
                values = (ray_cgraph.CompiledStep.get(ref, timeout) if group.graph is not None
                          else ray.get(ref, timeout=timeout))
            except (rx.GetTimeoutError, rx.RayChannelTimeoutError):
                group.fail(f"no answer from its Ray actor (group {group.name!r}) to {members[0].what} within "
                           f"{timeout:g} s; the actor was stopped", kill=True)
            except Exception as exc:
                group.fail(f"its Ray actor (group {group.name!r}, hosting {', '.join(group.members)}) died during "
                           f"{members[0].what} ({_describe_ray_error(exc)}); the FMU instances are lost")
            for m, v in zip(members, values or [None] * len(members)):
                m.done = True
                if values is None:
                    m.error = m.slave._dead
                else:
                    v = _step_value(v)
                    if isinstance(v, SlaveError):
                        m.error = str(v)
                    else:
                        m.value = v

    def result(self) -> Any:
        if not self.done:
            _GroupReply.collect([self])
        if self.error is not None:
            raise SlaveError(self.error)
        return self.value


class _Group:
    """One actor hosting several FMU instances (``"group": NAME`` in their placement)."""

    def __init__(self, name: str, options: dict, compiled: bool = False, pool: Any = None):
        self.name, self.options = name, options
        self.actor = _fmu_actor().options(**options).remote()
        self.members: list[str] = []
        self.slaves: list["RaySlave"] = []
        self.compiled = compiled
        self.graph: ray_cgraph.CompiledStep | None = None
        self.pool = pool
        self.lock = threading.Lock()
        self.worker = None                         # the direct connection, once opened
        self.direct: bool | None = None            # None: not tried yet; False: fell back to calls

    def label(self, names: list[str]) -> str:
        return f"Ray actor (group {self.name!r}, hosting {', '.join(self.members)})"

    def send(self, items: list, running: bool) -> Any:
        """Send the members' steps: by the group's compiled graph once they run (if wanted), else by
        an ordinary call. Returns the ref to get."""
        if self.compiled and running and self.graph is None:
            self.graph = ray_cgraph.try_compile(self.actor.step_many, what=f"Ray actor group {self.name!r}")
            self.compiled = self.graph is not None
        if self.graph is not None:
            return self.graph.execute(items)
        return self.actor.step_many.remote(items)

    def fail(self, why: str, kill: bool = False) -> None:
        for slave in self.slaves:
            slave._dead = slave._dead or f"{slave.name} ({slave.fmu.name}): {why}"
        if kill:
            try:
                sys.modules["ray"].kill(self.actor, no_restart=True)
            except Exception:
                pass

    def teardown(self) -> None:
        if self.graph is not None:
            self.graph.teardown()
            self.graph = None


class RayGroups:
    """The actor groups of one execution: FMU instances with the same ``group`` share an actor."""

    def __init__(self, heartbeat: float = 0.5):
        from orchestration.backends.process import WirePool

        self.groups: dict[str, _Group] = {}
        self.pool = WirePool(heartbeat)           # the direct connections of the execution

    def get(self, name: str, options: dict, compiled: bool = False) -> _Group:
        group = self.groups.get(name)
        if group is None:
            group = self.groups[name] = _Group(name, options, compiled, self.pool)
        elif group.options != options:
            raise BackendError(f"actor group {name!r}: its members ask for different actor options "
                               f"({group.options} and {options}); give them the same")
        return group


class RaySlave(RemoteSlave):
    """An FMU instance in a Ray actor (module docstring). ``actor_options``: Ray actor options
    (``num_cpus``, ``resources``...) and ``group`` (instances of one group share one actor and step
    in one call per macro step); ``call_timeout`` (s): a call after initialisation without answer
    by then stops the run naming the FMU; ``transport``: how calls travel -- ``direct`` (the
    default: a connection of its own to the actor, ray_direct.py), ``calls`` (ordinary actor
    calls) or ``compiled`` (steps through a Ray compiled graph, ray_cgraph); None:
    :func:`transport_default`. ``compiled=True`` is short for ``transport="compiled"``."""

    where = "Ray actor"

    def __init__(self, name: str, fmu: Path | str, actor_options: dict | None = None, logging: bool = False,
                 call_timeout: float | None = None, fmu_ref: Any = None, groups: RayGroups | None = None,
                 compiled: bool | None = None, transport: str | None = None):
        super().__init__(name, fmu)
        ray = require_ray()
        if not ray.is_initialized():
            connect()
        options = dict(actor_options or {})
        group_name = options.pop("group", None)
        unknown = set(options) - set(ACTOR_OPTIONS)
        if unknown:
            raise BackendError(f"{name}: unknown Ray actor option(s) {sorted(unknown)} (use "
                               f"{', '.join(ACTOR_OPTIONS)}, "
                               "group)")
        options.setdefault("num_cpus", 0)     # FMUs are placed by resources; CPUs only if asked for
        self.actor_options = options
        self.call_timeout = call_timeout
        if transport is None:
            transport = "compiled" if compiled else ("calls" if compiled is False else transport_default())
        if transport not in TRANSPORTS:
            raise BackendError(f"{name}: unknown Ray transport {transport!r} (use {', '.join(TRANSPORTS)})")
        self.transport = transport
        self.compiled = transport == "compiled"
        self.direct: bool | None = True if transport == "direct" else False   # None after a fallback: calls
        self._worker = None                        # the direct connection (process_backend._Worker)
        self._slot = 0
        self._released = False
        self._graph: ray_cgraph.CompiledStep | None = None
        self._inflight: _RayReply | None = None       # a compiled step not yet read
        self._dead: str | None = None
        self._deferred: _GroupReply | None = None
        if fmu_ref is None:
            fmu_ref = ray.put(self.fmu.read_bytes())
        groups = groups or RayGroups()
        self._pool = groups.pool
        if group_name is not None:
            self._group = groups.get(str(group_name), options, self.compiled)
            self._group.members.append(name)
            self._group.slaves.append(self)
            self._actor = self._group.actor
        else:
            self._group = None
            self._actor = _fmu_actor().options(**options).remote()
        self._added = self._actor.add.remote(name, self.fmu.name, fmu_ref, logging)
        self._step = self._actor.step.remote
        self._remote_call = self._actor.call.remote

    # direct connection (ray_direct) -----------------------------------------------------------

    def _open(self) -> bool:
        """Open this FMU's direct connection (or join its group's); False: ordinary calls, because
        the transport is not ``direct`` or the connection could not be made (with a warning)."""
        if self._worker is not None:
            return True
        if not self.direct:
            return False
        self._wait_added()
        from orchestration.backends import ray_direct

        group = self._group
        lock = group.lock if group is not None else threading.Lock()
        with lock:
            if group is not None and group.direct is not None:
                worker = group.worker
            else:
                try:
                    worker = ray_direct.connect(self._actor, self._pool,
                                                group.label if group is not None else (lambda names: "Ray actor"))
                except ray_direct.DirectUnavailable as exc:
                    what = f"Ray actor group {group.name!r}" if group is not None else f"{self.name} ({self.fmu.name})"
                    warnings.warn(f"{what}: no direct connection to its Ray actor ({exc}); ordinary actor calls "
                                  "instead", RuntimeWarning, stacklevel=4)
                    worker = None
                except Exception as exc:           # the actor died before it could listen
                    self._lost("set-up of its connection", exc)
                    raise SlaveError(self._dead) from None
                if group is not None:
                    group.worker, group.direct = worker, worker is not None
        if worker is None:
            self.direct = False
            return False
        with worker.lock:
            worker.slaves.append(self)
            worker.live += 1
        self._worker = worker
        return True

    def mark_dead(self, how: str) -> str:
        if self._dead is None:
            self._dead = f"{self.name} ({self.fmu.name}): {how}"
        return self._dead

    # transport --------------------------------------------------------------------------------

    def _settle_pending(self) -> None:
        """Read a compiled step still in flight and send a deferred group step, so a call sent now
        runs after them in the actor, as it would without graphs and groups."""
        if self._inflight is not None:
            reply, self._inflight = self._inflight, None
            if not reply.done:
                self._get(reply)
        if self._deferred is not None:
            _GroupReply.collect([self._deferred])

    def _submit(self, method: str, *args: Any) -> Any:
        if self._dead:
            raise SlaveError(self._dead)
        if self.direct and self._open():
            reply = _Reply(self, method)
            self._worker.add_request(self._slot, method, args, reply)
            return reply
        self._settle_pending()
        return _RayReply(self, self._remote_call(self.name, method, args), method)

    def _send_step(self, request: bytes, t: float, h: float, what: str | None = None) -> _RayReply:
        """A packed step to this FMU's own actor: through its compiled graph (compiled on the first
        step after initialisation), else as an ordinary call."""
        self._settle_pending()
        if self.compiled and self._running and self._graph is None:
            self._graph = ray_cgraph.try_compile(self._actor.step, self.name, what=f"{self.name} ({self.fmu.name})")
            self.compiled = self._graph is not None
        if self._graph is not None:
            try:
                ref = self._graph.execute(request)
            except Exception as exc:        # the graph shut down: its actor died
                self._lost(what or f"doStep(t = {t:.6g} s, h = {h:.6g} s)", exc)
                raise SlaveError(self._dead) from None
            reply = self._inflight = _RayReply(self, ref, what, t, h, compiled=True, packed=True)
            return reply
        return _RayReply(self, self._step(self.name, request), what, t, h, packed=True)

    def exchange_async(self, in_vrs: np.ndarray, in_values: np.ndarray, t: float, h: float, out_vrs: np.ndarray):
        if self._dead:
            raise SlaveError(self._dead)
        if self.direct and self._open():
            # the hot path: two keys, t, h and the raw input values into the connection's frame
            reply = _Reply(self, None, t, h)
            self._worker.add_exchange(self._slot, self._key(in_vrs), self._key(out_vrs), t, h, in_values, reply)
            return reply
        request = ray_cgraph.pack(self._key(in_vrs), in_values, float(t), float(h), self._key(out_vrs))
        if self._group is not None:
            if self._deferred is not None:
                _GroupReply.collect([self._deferred])
            self._deferred = _GroupReply(self, (self.name, request), t, h)
            return self._deferred
        return self._send_step(request, t, h)

    def set_and_get(self, in_vrs: np.ndarray, in_values: np.ndarray, out_vrs: np.ndarray) -> np.ndarray:
        if self._group is not None or self.direct:
            return super().set_and_get(in_vrs, in_values, out_vrs)
        if self._dead:
            raise SlaveError(self._dead)
        request = ray_cgraph.pack(self._key(in_vrs), in_values, 0.0, 0.0, self._key(out_vrs), ray_cgraph.SET_AND_GET)
        reply = self._send_step(request, 0.0, 0.0, "set_and_get")
        value = reply.result()
        if self._inflight is reply:
            self._inflight = None
        return value

    def _lost(self, what: str, exc: BaseException) -> None:
        group = self._group
        if group is not None:              # every FMU of the group goes with it: say so, as collect does
            group.fail(f"its Ray actor (group {group.name!r}, hosting {', '.join(group.members)}) died during "
                       f"{what} ({_describe_ray_error(exc)}); the FMU instances are lost")
        self._dead = self._dead or (f"{self.name} ({self.fmu.name}): its Ray actor died during {what} "
                                    f"({_describe_ray_error(exc)}); the FMU instance is lost")

    def _get(self, reply: _RayReply) -> None:
        ray = sys.modules["ray"]
        from ray import exceptions as rx

        timeout = self._timeout()
        try:
            if reply.compiled:
                answer = ray_cgraph.CompiledStep.get(reply.ref, timeout)
            else:
                answer = ray.get(reply.ref, timeout=timeout)
        except rx.RayTaskError as exc:          # the FMU call failed inside the actor
            cause = getattr(exc, "cause", None)
            reply.error = str(cause) if isinstance(cause, SlaveError) else (
                f"{self.name} ({self.fmu.name}): {reply.what} failed in its Ray actor: {cause or exc}")
        except (rx.GetTimeoutError, rx.RayChannelTimeoutError):
            self._dead = (f"{self.name} ({self.fmu.name}): no answer from its Ray actor to {reply.what} within "
                          f"{timeout:g} s; the actor was stopped")
            self._kill()
            reply.error = self._dead
        except (rx.RayActorError, rx.ObjectLostError, rx.OwnerDiedError, rx.WorkerCrashedError,
                rx.RayChannelError) as exc:
            self._lost(reply.what, exc)
            reply.error = self._dead
        else:
            reply.settle(answer)
            return
        reply.done = True

    def instantiate(self) -> None:
        self._wait_added()
        super().instantiate()

    def _wait_added(self, timeout: float | None = None) -> None:
        """The actor loaded the FMU (it was sent with the actor's first call)."""
        if self._added is None:
            return
        ray = sys.modules["ray"]
        from ray import exceptions as rx

        try:
            slot = ray.get(self._added, timeout=timeout)
        except rx.GetTimeoutError:
            raise SlaveError(f"{self.name}: Ray did not start its actor within {timeout:g} s; no node may have "
                             f"free resources for {self.actor_options} (cluster: {ray.cluster_resources()})") from None
        except rx.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            raise SlaveError(str(cause) if isinstance(cause, SlaveError) else
                             f"{self.name} ({self.fmu.name}): its Ray actor cannot load the FMU: "
                             f"{cause or exc}") from None
        except Exception as exc:
            raise SlaveError(f"{self.name} ({self.fmu.name}): its Ray actor could not start: "
                             f"{_describe_ray_error(exc)}") from None
        self._slot = slot if isinstance(slot, int) else 0
        self._added = None

    def where_is(self, timeout: float = 120.0) -> dict:
        """Node, process and FMU path of the actor (for metadata, tests and diagnostics); waits until
        the actor runs, at most ``timeout`` s (an actor Ray cannot place waits for ever)."""
        self._wait_added(timeout)
        if self.direct:
            self._open()
        where = sys.modules["ray"].get(self._actor.where.remote(self.name), timeout=timeout)
        where["transport"] = "direct" if self._worker is not None else ("compiled" if self.compiled else "calls")
        if self._worker is not None:
            where["direct_address"] = "%s:%d" % self._worker.address
        return where

    @property
    def actor(self):
        return self._actor

    def _kill(self) -> None:
        try:
            sys.modules["ray"].kill(self._actor, no_restart=True)
        except Exception:
            pass

    # end --------------------------------------------------------------------------------------

    def terminate(self) -> None:
        if self._dead is None:
            try:
                if self._worker is not None:
                    self._worker.drain()
                self._call("terminate")
            except SlaveError:
                pass

    def free(self) -> None:
        worker = self._worker
        if worker is not None:
            if self._dead is None and worker.dead is None:
                try:
                    worker.drain()
                    self._call("free")
                except SlaveError:
                    pass
            if not self._released:
                self._released = True
                worker.release()                   # the last FMU on the connection closes it
            self._dead = self._dead or f"{self.name}: the Ray actor was freed"
        if self._dead is None:
            try:
                self._settle_pending()
            except SlaveError:
                pass
        if self._graph is not None:                # the graph's loop ends before the actor does
            self._graph.teardown()
            self._graph = None
        if self._dead is None:
            try:
                self._call("free")
            except SlaveError:
                pass
        if self._group is None:
            self._kill()
        else:
            if self in self._group.slaves:
                self._group.slaves.remove(self)
            if not self._group.slaves:             # the last member ends the shared actor
                self._group.teardown()
                self._kill()
        self._dead = self._dead or f"{self.name}: the Ray actor was freed"


def check_placement(options: dict[str, Any], component: str) -> None:
    """Refuse at once a placement that no node of the cluster can ever satisfy (Ray would wait)."""
    ray = require_ray()
    total = ray.cluster_resources()
    wanted = dict(options.get("resources") or {})
    for key in ("num_cpus", "num_gpus"):
        if options.get(key):
            wanted[{"num_cpus": "CPU", "num_gpus": "GPU"}[key]] = options[key]
    for resource, amount in wanted.items():
        if total.get(resource, 0.0) < float(amount):
            have = ", ".join(f"{k}={v:g}" for k, v in sorted(total.items()) if not k.startswith("node:"))
            raise BackendError(f"{component}: no node of the Ray cluster offers {resource}={amount:g} (the cluster has "
                               f"{have}); start a node with ray start --address=... "
                               f"--resources='{{\"{resource}\": {amount:g}}}'")


class FmuStore:
    """FMU file bytes put into Ray's object store once per file, shared by all instances of it."""

    def __init__(self):
        self._refs: dict[tuple[str, float, int], Any] = {}

    def ref(self, fmu: Path) -> Any:
        ray = require_ray()
        stat = Path(fmu).stat()
        key = (str(Path(fmu).resolve()), stat.st_mtime, stat.st_size)
        if key not in self._refs:
            self._refs[key] = ray.put(Path(fmu).read_bytes())
        return self._refs[key]
