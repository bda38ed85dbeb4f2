"""The ``ray`` backend's data plane: a TCP connection of its own from the master to each Ray actor,
speaking the process backend's wire protocol (process_backend.py).

Why: an ordinary Ray actor call costs the master about 0.4 ms of CPU and a round trip through
Ray's task machinery (~1 ms per call with 5 actors on 2 cores); a compiled graph is cheaper but its
readers busy-wait. Here Ray does what it is good at -- placing the actor by resources on any node,
shipping the FMU file through the object store, reporting an actor that died -- and the calls
themselves go over a socket: one small binary frame per FMU per macro step (raw float64 inputs in,
outputs out), answered by a thread in the actor that calls the FMI functions in place (the process
backend's ``_serve``), with blocking waits at both ends (no polling, no busy-waiting).

Set-up: the actor (its FMUs loaded by ordinary Ray calls) opens a listening socket on the address
Ray reports for its node (``ray.util.get_node_ip_address()``, ephemeral port) and returns (host,
port) through an ordinary Ray call; the master connects and sends a random 32-byte token first,
which it gave the actor through that same call: the actor drops a connection without it and
accepts only one. An actor group shares one connection (the protocol hosts several FMUs per
worker). Every call after loading -- initialisation, steps, set_and_get, FMU states, checkpoints,
free -- goes over the connection, so their order is the order they were sent in.

Faults: the master's reads block with a heartbeat (SO_RCVTIMEO); an actor whose process dies
closes the connection at once, and at each heartbeat without an answer the master asks Ray's
control store whether the actor is still alive (a node that vanished without closing the
connection is found that way). Either way the error names the FMU and says how the actor died (Ray's
death cause). A call timeout kills the actor through Ray.

When the connection cannot be made (a firewall between master and node, an address that does
not route), RaySlave falls back to ordinary Ray calls with a warning naming the reason.
"""
from __future__ import annotations

import hmac
import ipaddress
import secrets
import socket
import sys
import threading
import time
from typing import Any, Callable

from orchestration.backends.process import WirePool, _Hosted, _serve, _Worker

TOKEN_BYTES = 32


# ------------------------------------------------------------------------------- actor side

class DirectServer:
    """In the actor: listens once, accepts the master's connection (with the token) and serves the
    hosted FMUs on it in a background thread."""

    def __init__(self, slots: list[_Hosted]):
        self.slots = slots
        self.thread: threading.Thread | None = None

    def listen(self, token: bytes, host: str, accept_timeout: float = 120.0) -> tuple[str, int]:
        if self.thread is not None:
            raise RuntimeError("this actor has a direct connection already")
        family = socket.AF_INET6 if ipaddress.ip_address(host).version == 6 else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.bind((host, 0))
        listener.listen(4)
        listener.settimeout(0.5)
        port = listener.getsockname()[1]
        self.thread = threading.Thread(target=self._run, args=(listener, bytes(token), accept_timeout),
                                       name="marine-cosim-direct", daemon=True)
        self.thread.start()
        return host, port

    def _run(self, listener: socket.socket, token: bytes, accept_timeout: float) -> None:   # pragma: no cover
        deadline = time.monotonic() + accept_timeout
        conn = None
        try:
            while conn is None and time.monotonic() < deadline:
                try:
                    candidate, _ = listener.accept()
                except (socket.timeout, BlockingIOError):
                    continue
                try:
                    candidate.settimeout(5.0)
                    got = b""
                    while len(got) < len(token):
                        chunk = candidate.recv(len(token) - len(got))
                        if not chunk:
                            break
                        got += chunk
                    if hmac.compare_digest(got, token):
                        conn = candidate
                        continue
                except OSError:
                    pass
                candidate.close()                  # not the master: drop it, wait for the master
        finally:
            listener.close()
        if conn is None:
            return
        try:
            conn.settimeout(None)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            _serve(conn.fileno(), self.slots)
        except OSError:
            pass
        finally:
            conn.close()

    def finish(self, timeout: float = 10.0) -> None:
        if self.thread is not None:
            self.thread.join(timeout)


# ------------------------------------------------------------------------------- master side

def actor_state(actor: Any) -> tuple[str, str] | None:
    """(state, death cause) of an actor from Ray's control store (GCS); None if Ray cannot say."""
    try:
        from ray._private import state

        info = state.actors(actor_id=actor._actor_id.hex())
    except Exception:
        return None
    if not info:
        return None
    return str(info.get("State", "")), _death_cause(info.get("DeathCause"))


def _death_cause(cause: Any) -> str:
    """A one-line reading of Ray's ActorDeathCause."""
    if cause is None:
        return ""
    try:
        which = cause.WhichOneof("context")
    except Exception:
        which = None
    if which:
        context = getattr(cause, which)
        text = getattr(context, "error_message", "") or str(context)
    else:
        text = str(cause)
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


class ActorPeer:
    """The far end of a direct connection that is a Ray actor (process_backend.ProcessPeer's
    counterpart): alive and how it died per Ray's control store, stopped by ray.kill."""

    noun = "actor"

    def __init__(self, actor: Any, label: Callable[[list[str]], str]):
        self.actor, self.label = actor, label

    def describe(self, names: list[str]) -> str:
        return self.label(names)

    def alive(self) -> bool:
        found = actor_state(self.actor)
        return found is None or found[0] != "DEAD"

    def ended(self) -> str:
        # the connection closed: Ray's control store learns of the death a moment later
        deadline = time.monotonic() + 5.0
        while True:
            found = actor_state(self.actor)
            if found is not None and found[0] == "DEAD":
                return f"died ({found[1]})" if found[1] else "died"
            if time.monotonic() > deadline:
                return "closed its connection" if found is None else f"closed its connection (Ray: {found[0]})"
            time.sleep(0.05)

    def kill(self) -> None:
        try:
            sys.modules["ray"].kill(self.actor, no_restart=True)
        except Exception:
            pass

    def close(self) -> None:
        """After the ``close`` request: let the actor's serving thread end and clean up."""
        try:
            sys.modules["ray"].get(self.actor.finish.remote(), timeout=10.0)
        except Exception:
            pass


class DirectUnavailable(Exception):
    """The direct connection could not be made (the reason says why); the actor itself lives."""


def connect(actor: Any, pool: WirePool, label: Callable[[list[str]], str], timeout: float = 60.0) -> _Worker:
    """Open the direct connection to ``actor``: it listens (an ordinary Ray call carrying the token),
    the master connects and authenticates. Raises DirectUnavailable if the socket cannot be opened
    or connected; Ray's errors (the actor died) as they are."""
    ray = sys.modules["ray"]
    token = secrets.token_bytes(TOKEN_BYTES)
    try:
        host, port = ray.get(actor.listen.remote(token), timeout=timeout)
    except ray.exceptions.RayTaskError as exc:
        raise DirectUnavailable(f"the actor cannot listen: {getattr(exc, 'cause', None) or exc}") from None
    try:
        sock = socket.create_connection((host, port), timeout=min(timeout, 10.0))
    except OSError as exc:
        raise DirectUnavailable(f"cannot connect to {host}:{port}: {exc}") from None
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(token)
        sock.settimeout(None)
    except OSError as exc:
        sock.close()
        raise DirectUnavailable(f"cannot use the connection to {host}:{port}: {exc}") from None
    worker = _Worker(pool, sock, ActorPeer(actor, label))
    worker.address = (host, port)
    pool.workers.append(worker)
    return worker
