"""The compiled articulated-body algorithm (aba.c) behind components.articulated_body.ArticulatedBody.

``CompiledAba.forward_dynamics`` and ``reevaluate`` take the arguments of the ArticulatedBody
methods of the same names and return a ``CompiledAbaResult``, which answers like the numpy
reference's AbaResult (same attributes, same frames and signs; numbers equal to rounding). The
kernel does all three passes and the base outputs at once (about a microsecond for 7 joints), so
nothing is deferred as in the reference; its results live in one float64 array per call.
"""
from __future__ import annotations

import numpy as np

from components import kernels
from components.articulated_body import AbaResult, GRAVITY_NED, _cross
from components.spatial import mcI

LINK = 51            # MC_ABA_LINK: doubles per link in the model array
HEAD = 29            # MC_ABA_IN_HEAD: doubles of the input array before q
MAX_LINKS = 64       # MC_ABA_MAX_LINKS
WRENCH = 10          # doubles per link wrench: link, r (3, J_link), force (3, world), moment (3, world)

_Z3 = np.zeros(3)
_I3 = np.eye(3)
_G_NED = np.asarray(GRAVITY_NED, dtype=float)


def offsets(n: int) -> dict[str, int]:
    """Where aba.c puts each result in its work array (the O_* macros there)."""
    p1 = 44 * n + 1
    mb = p1 + 14 * n
    return {"qdd": 0, "V": n, "c": 7 * n, "pv": 13 * n, "T": 19 * n, "X": 31 * n, "ke": 43 * n, "tau": 43 * n + 1,
            "pass1": p1, "U": p1, "D": p1 + 6 * n, "u": p1 + 7 * n, "A": p1 + 8 * n, "MB": mb, "pB": mb + 36,
            "IAw": mb + 42, "bias": mb + 78, "wrench": mb + 84, "size": mb + 90}


class CompiledAba:
    """The kernel bound to one ArticulatedBody: its constants as the kernel's model array, and
    the input and work buffers of the calls (one instance per thread, like the body)."""

    def __init__(self, body, lib) -> None:
        n = self.n = body.n
        if not 1 <= n <= MAX_LINKS:
            raise ValueError(f"the compiled ABA takes 1 to {MAX_LINKS} links, not {n}")
        links = body.mechanism.links
        model = np.zeros((n, LINK))
        for i, (link, Tt) in enumerate(zip(links, body._Ttree)):
            model[i, 0] = 0.0 if body._rev[i] else 1.0
            model[i, 1], model[i, 2] = float(link.theta), float(link.d)
            model[i, 3:39] = mcI(link.mass, np.asarray(link.cg, dtype=float), link.inertia_in_joint_frame()).ravel()
            model[i, 39:48] = Tt[:3, :3].ravel()
            model[i, 48:51] = Tt[:3, 3]
        self._model = model
        self.body = body
        self._o = offsets(n)
        if lib.mc_aba_work_size(n) != self._o["size"]:
            raise RuntimeError("aba.c and components/kernels/aba.py disagree on the work layout")
        self._work = np.zeros(self._o["size"])
        self._p1 = self._o["pass1"]
        self._full, self._passes23 = lib.mc_aba, lib.mc_aba_reevaluate
        self._inputs(4)

    def _inputs(self, wrenches: int) -> None:
        """(Re)allocate the input buffer for up to ``wrenches`` link wrenches."""
        n = self.n
        self._in = np.zeros(HEAD + 3 * n + WRENCH * wrenches)
        self._wrenches_of = None     # (CompiledCraneStep._inputs)
        self._capacity = wrenches
        self._wrenches = 0
        # moving base: R, p, v, w, a, alpha, g, q, qd, tau in one go; fixed base: g, q, qd, tau
        self._moving_in = self._in[2:HEAD + 3 * n]
        self._fixed_in = self._in[26:HEAD + 3 * n]
        self._base_in = self._in[2:29]
        self._ctx = np.array([n, kernels.address(self._model), kernels.address(self._in),
                              kernels.address(self._work)], dtype=np.int64)
        self._ctx_address = kernels.address(self._ctx)

    def _set_wrenches(self, link_wrenches) -> None:
        """The link wrenches into the input buffer (their points in J_link coordinates)."""
        self._wrenches_of = None     # whose wrenches the buffer holds: a caller that keeps track says
        if not link_wrenches:
            if self._wrenches:
                self._in[1] = self._wrenches = 0
            return
        count = len(link_wrenches)
        if count > self._capacity:
            self._inputs(2 * count)
        at = HEAD + 3 * self.n
        buf = self._in
        body = self.body
        cache = body._r_cache
        values = []                  # the block of all wrenches, written with one assignment
        for (i, point, force, moment) in link_wrenches:
            i = int(i)
            point = np.asarray(point, dtype=float)
            key = (i, point.tobytes())
            r = cache.get(key)
            if r is None:                              # the point in J_i (constant for a load point)
                if len(cache) > 64:
                    cache.clear()
                r = cache[key] = body.point_in_joint_frame(i, point).tolist()
            values.append(i)
            values += r
            values += _floats(force)
            values += _floats(moment)
        buf[at:at + WRENCH * count] = values
        buf[1] = self._wrenches = count

    def forward_dynamics(self, q, qd, tau, base_R=None, base_p=None, base_v=None, base_w=None, base_a=None,
                         base_alpha=None, gravity=GRAVITY_NED, link_wrenches=None) -> "CompiledAbaResult":
        q = np.asarray(q, dtype=float)
        g = _G_NED if gravity is GRAVITY_NED else np.asarray(gravity, dtype=float)
        self._set_wrenches(link_wrenches)
        if base_R is None and base_v is None and base_w is None and base_a is None and base_alpha is None:
            self._in[0] = 0.0
            np.concatenate((g, q, qd, tau), out=self._fixed_in)
            base = (_I3, _Z3 if base_p is None else np.asarray(base_p, dtype=float), _Z3, _Z3, _Z3, _Z3, g)
            moving = False
        else:
            self._in[0] = 1.0
            R = _I3 if base_R is None else np.asarray(base_R, dtype=float)
            p = _Z3 if base_p is None else np.asarray(base_p, dtype=float)
            v = _Z3 if base_v is None else np.asarray(base_v, dtype=float)
            w = _Z3 if base_w is None else np.asarray(base_w, dtype=float)
            a = _Z3 if base_a is None else np.asarray(base_a, dtype=float)
            al = _Z3 if base_alpha is None else np.asarray(base_alpha, dtype=float)
            np.concatenate((R.reshape(9), p, v, w, a, al, g, q, qd, tau), out=self._moving_in)
            base = (R, p, v, w, a, al, g)
            moving = True
        if self._full(self._ctx_address):
            raise ValueError(f"the compiled ABA refused {self.n} links")
        return CompiledAbaResult(self, q, self._work.copy(), base, None, moving)

    def reevaluate(self, result: "CompiledAbaResult", base_a=None, base_alpha=None,
                   link_wrenches=None) -> "CompiledAbaResult":
        R, p, v, w, _, _, g = result._base
        self._set_wrenches(link_wrenches)
        # a fresh call with these arguments would take the moving-base path if any is given
        moving = result._moving or base_a is not None or base_alpha is not None
        a = _Z3 if base_a is None else np.asarray(base_a, dtype=float)
        al = _Z3 if base_alpha is None else np.asarray(base_alpha, dtype=float)
        self._in[0] = 1.0 if moving else 0.0
        np.concatenate((R.reshape(9), p, v, w, a, al, g), out=self._base_in)
        p1 = self._p1
        self._work[:p1] = result._work[:p1]
        self._passes23(self._ctx_address)
        return CompiledAbaResult(self, result.q, self._work.copy(), (R, p, v, w, a, al, g), result._pass1, moving)


def _floats(x) -> list:
    """A force or moment's three numbers as a list (an array's values as floats, the numbers the
    buffer would take from it); anything else as the buffer converts it."""
    if type(x) is np.ndarray:
        return x.astype(float, copy=False).tolist() if x.dtype != float else x.tolist()
    return np.asarray(x, dtype=float).reshape(3).tolist()


class _cached:
    """functools.cached_property without its lock (Python 3.11 takes an RLock on every first read,
    ~2 us here, and a crane's outputs read four of these per result at two results a macro step):
    the value, formed on the first read, goes to the instance's __dict__, which shadows this
    non-data descriptor from then on. A result is one thread's."""

    def __init__(self, method) -> None:
        self.method, self.name = method, method.__name__
        self.__doc__ = method.__doc__

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.method(obj)
        return value


class CompiledAbaResult(AbaResult):
    """AbaResult of the compiled kernel: the same attributes, read from the kernel's work array."""

    def __init__(self, aba: CompiledAba, q: np.ndarray, work: np.ndarray, base: tuple, pass1,
                 moving: bool) -> None:
        self.body = aba.body
        self.q = q
        self._work = work
        self._o = aba._o
        self._base = base
        self._pass1 = work if pass1 is None else pass1   # shared with reevaluate's results: same state and pose
        self._moving = moving
        self.qdd = work[:aba.n]

    def _block(self, name: str, size: int) -> np.ndarray:
        at = self._o[name]
        return self._work[at:at + size]

    @_cached
    def _tau(self) -> np.ndarray:
        return self._block("tau", self.body.n)

    @_cached
    def _V(self) -> np.ndarray:
        return self._block("V", 6 * self.body.n).reshape(-1, 6)

    @_cached
    def articulated_inertia(self) -> np.ndarray:
        return self._block("IAw", 36).reshape(6, 6)

    @_cached
    def bias(self) -> np.ndarray:
        return self._block("bias", 6)

    @_cached
    def base_wrench(self) -> np.ndarray:
        return self._block("wrench", 6)

    @_cached
    def spatial_accelerations(self) -> np.ndarray:
        return self._block("A", 6 * self.body.n).reshape(-1, 6)

    def _spatial_acceleration(self, i: int) -> np.ndarray:
        at = self._o["A"] + 6 * i
        return self._work[at:at + 6]

    @_cached
    def _T(self) -> np.ndarray:
        return self._block("T", 12 * self.body.n).reshape(-1, 12)

    def _frame(self, link: int) -> tuple[np.ndarray, np.ndarray]:
        T = self._T[link]
        return T[:9].reshape(3, 3), T[9:]

    def inertia_and_bias(self) -> tuple[np.ndarray, np.ndarray]:
        work, o = self._work, self._o
        at, bias = o["IAw"], o["bias"]
        return work[at:at + 36], work[bias:bias + 6]

    def _point_motion(self, link, r):
        """AbaResult._point_motion with the frame and velocity read at their offsets in the work
        array (the same contiguous 3x3 and 3-vectors, the same operations: the same bits), not
        through the _T and _V blocks a crane's attachments would form for one row each."""
        work, o = self._work, self._o
        at = o["T"] + 12 * link
        RJ, pJ = work[at:at + 9].reshape(3, 3), work[at + 9:at + 12]
        at = o["V"] + 6 * link
        w, vO = work[at:at + 3].tolist(), work[at + 3:at + 6]
        vP = vO + np.asarray(_cross(w, r.tolist()))
        return pJ + RJ.dot(r), RJ.dot(vP), vP

    @_cached
    def joint_frames(self) -> list[np.ndarray]:
        out = []
        for T in self._T:
            F = np.eye(4)
            F[:3, :3] = T[:9].reshape(3, 3)
            F[:3, 3] = T[9:]
            out.append(F)
        return out

    @_cached
    def kinetic_energy(self) -> float:
        return float(self._work[self._o["ke"]])
