"""The compiled detection and loads of the rope contact (rope_contact.c) behind
components.rope_contact.RopeContact.

``segment_depths`` and ``body_depths`` are components.rope_contact.segment_depths (the latter with
the segments first taken into the body frame, as RopeContact._body_depths does); ``loads`` is the
arithmetic of RopeContact._loads (tensions with damping, node forces, body wrenches).  Same
equations in the same order as the numpy reference; tests/components/test_rope_contact_kernel.py
compares the two.

The arrays cross into C through buffers kept from call to call, whose addresses are taken once
(asking numpy for an array's address costs more than these kernels' arithmetic): inputs are
copied in, results copied out into fresh arrays.
"""
from __future__ import annotations

import ctypes

import numpy as np

_declared: set[int] = set()


def _declare(lib) -> None:
    ptr, integer = ctypes.c_void_p, ctypes.c_int
    lib.mc_rope_segment_depths.argtypes = [integer, ptr, ptr, integer, ptr, ptr]
    lib.mc_rope_segment_depths.restype = None
    lib.mc_rope_body_depths.argtypes = [integer, ptr, ptr, ptr, integer, ptr, ptr]
    lib.mc_rope_body_depths.restype = None
    lib.mc_rope_loads.argtypes = [integer, ptr, ptr, ptr, ptr, ptr, integer, ptr, integer, ptr, ptr, ptr, ptr,
                                  ptr, ptr]
    lib.mc_rope_loads.restype = integer


def compiled(lib) -> "CompiledRopeContact":
    """A kernel bound to ``lib`` (components.kernels.library()) with buffers of its own (one per
    RopeContact); AttributeError if the library predates rope_contact.c."""
    if id(lib) not in _declared:
        _declare(lib)
        _declared.add(id(lib))
    return CompiledRopeContact(lib)


class _Buffer:
    """A C-contiguous array grown on demand, and its address."""

    __slots__ = ("array", "address")

    def __init__(self, dtype=np.float64) -> None:
        self.array = np.zeros(16, dtype=dtype)
        self.address = self.array.ctypes.data

    def take(self, n: int) -> np.ndarray:
        """The whole buffer, at least ``n`` long (its first n elements are the caller's)."""
        if len(self.array) < n:
            self.array = np.zeros(max(n, 2 * len(self.array)), dtype=self.array.dtype)
            self.address = self.array.ctypes.data
        return self.array


class CompiledRopeContact:
    """rope_contact.c's functions with their buffers (one per RopeContact, like its caches)."""

    def __init__(self, lib) -> None:
        self._depths = lib.mc_rope_segment_depths
        self._body = lib.mc_rope_body_depths
        self._loads = lib.mc_rope_loads
        self._a, self._b, self._out = _Buffer(), _Buffer(), _Buffer()
        self._pose = _Buffer()
        self._faces: dict[int, tuple[np.ndarray, np.ndarray, int]] = {}     # id(H) -> (H, C copy, address)
        self._sig, self._ropes, self._bodies, self._endv = _Buffer(), _Buffer(), _Buffer(), _Buffer()
        self._counts, self._body_of = _Buffer(np.int32), _Buffer(np.int32)
        self._T, self._node_f, self._force, self._moment, self._work = (_Buffer() for _ in range(5))

    def _halfspaces(self, H: np.ndarray) -> tuple[int, int]:
        """(faces, address) of a body's half-spaces (a mesh's array, kept while it lives)."""
        hit = self._faces.get(id(H))
        if hit is None or hit[0] is not H:
            copy = np.ascontiguousarray(H, dtype=np.float64).copy()
            if len(self._faces) > 64:
                self._faces.clear()
            hit = self._faces[id(H)] = (H, copy, copy.ctypes.data)
        return len(H), hit[2]

    def _points(self, buffer: _Buffer, x: np.ndarray) -> None:
        buffer.take(x.size)[:x.size] = x.reshape(-1)

    def segment_depths(self, p0: np.ndarray, p1: np.ndarray, H: np.ndarray) -> np.ndarray:
        """rope_contact.segment_depths(p0, p1, H): p0, p1 (m, 3) in the body frame, H (faces, 4)."""
        m = len(p0)
        self._points(self._a, np.asarray(p0, dtype=np.float64))
        self._points(self._b, np.asarray(p1, dtype=np.float64))
        out = self._out.take(m)
        faces, h = self._halfspaces(H)
        self._depths(m, self._a.address, self._b.address, faces, h, self._out.address)
        return out[:m].copy()

    def body_depths(self, X0: np.ndarray, X1: np.ndarray, p: np.ndarray, R: np.ndarray, H: np.ndarray
                    ) -> np.ndarray:
        """segment_depths((X0 - p) @ R, (X1 - p) @ R, H): segments X0[i]-X1[i] NED of a body at
        (p, R: body frame -> NED)."""
        m = len(X0)
        self._points(self._a, X0)
        self._points(self._b, X1)
        pose = self._pose.array
        pose[:3] = p
        pose[3:12] = R.reshape(-1)
        out = self._out.take(m)
        faces, h = self._halfspaces(H)
        self._body(m, self._a.address, self._b.address, self._pose.address, faces, h, self._out.address)
        return out[:m].copy()

    def loads(self, counts: list[int], X: np.ndarray, sig: list[float], ropes: list[float], body_of: list[int],
              origins: list[np.ndarray], field: list | None, end_v: list[tuple[int, int, np.ndarray]]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(T, node forces, body forces, body moments) of RopeContact._loads, fresh arrays.  counts:
        segments per rope; X (nodes, 3) NED and sig (nodes) rope after rope; ropes: (EA, c, L0) per
        rope, flat; body_of: the body of each node (-1: a world-point end); origins: each body's
        origin; field: (v, skew(w)^T, p) per body, or None; end_v: (rope, end, velocity) of the
        world-point ends whose velocity is given."""
        nr, n, nb = len(counts), len(X), len(origins)
        n_seg = n - nr
        self._counts.take(nr)[:nr] = counts
        self._points(self._a, X)
        self._sig.take(n)[:n] = sig
        self._ropes.take(3 * nr)[:3 * nr] = ropes
        self._body_of.take(n)[:n] = body_of
        bodies = self._bodies.take(15 * nb)
        for b, p in enumerate(origins):
            bodies[15 * b:15 * b + 3] = p
        if field is not None:
            for b, (v, WT, _) in enumerate(field):
                bodies[15 * b + 3:15 * b + 6] = v
                bodies[15 * b + 6:15 * b + 15] = WT.reshape(-1)
        endv = self._endv.take(8 * nr)
        endv[:8 * nr] = 0.0
        for r, k, v in end_v:
            endv[8 * r + 4 * k] = 1.0
            endv[8 * r + 4 * k + 1:8 * r + 4 * k + 4] = v
        T, node_f = self._T.take(n_seg), self._node_f.take(3 * n)
        force, moment = self._force.take(3 * nb), self._moment.take(3 * nb)
        self._work.take(3 * n + nr)
        self._loads(nr, self._counts.address, self._a.address, self._sig.address, self._ropes.address,
                    self._body_of.address, nb, self._bodies.address, int(field is not None), self._endv.address,
                    self._T.address, self._node_f.address, self._force.address, self._moment.address,
                    self._work.address)
        return (T[:n_seg].copy(), node_f[:3 * n].reshape(n, 3).copy(), force[:3 * nb].reshape(nb, 3).copy(),
                moment[:3 * nb].reshape(nb, 3).copy())
