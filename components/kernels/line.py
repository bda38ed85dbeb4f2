"""The compiled implicit step of the lumped-mass line (line.c) behind components.line.Line.

``Line._implicit_step`` (with the parts of ``_forces`` and ``_jacobian_blocks`` it uses) for a
line without bending, torsion, tension-strain table or compression: the linearly implicit
theta-step, its banded Cholesky solve and the snap test, for one or several sub-steps per call.
A step with a snap (or a matrix that is not positive definite) is left to the reference's Newton
iterations (return codes of line.c).
"""
from __future__ import annotations

import ctypes
import math
import operator

import numpy as np

from components import kernels

# line.c's LP_* layout
(EA, G, WET, D, KBOT, CBOT, MU, FD, KDN, KDT, RHOA, THETA, SEABED, TROUGH, FREE_B, H, NSTEP, UA, UB,
 DLA, DLB) = range(21)
VA, VB, TIP, CUR = 21, 24, 27, 30
PAYOUT, L0, MPL, CANRHOA, CATRHOA, TIPMASS, DAMP, DAMPSQ = range(33, 41)
SIZE = 41
# mc_line_implicit's return codes with the winch in the kernel (payout=True in CompiledLine.run)
PAYOUT_AFTER, PAYOUT_BEFORE = 3, 4


def eligible(line) -> bool:
    """Whether the kernel computes this line's step (the others run the numpy reference)."""
    p = line.p
    return (line.scheme == "implicit" and line._bend is None and line._table is None
            and p.compression <= 0.0 and line.twist is None)


class CompiledLine:
    """The kernel bound to one Line (one per thread, like the line)."""

    PAYOUT_AFTER = PAYOUT_AFTER     # for Line, which imports this module only when it has a kernel

    def __init__(self, line, lib) -> None:
        p = line.p
        P = self._P = np.zeros(SIZE)
        P[[EA, G, WET, D, KBOT, CBOT, MU, FD, KDN, KDT, RHOA, THETA, SEABED, TROUGH, FREE_B]] = (
            p.EA, p.g, 1.0 if p.rho_water > 0 else 0.0, p.diameter, p.kBot, p.cBot, p.friction,
            p.friction_damping, line._kdn, line._kdt, line._rhoA, line.theta, line.seabed_depth,
            0.0 if line.sea is None else float(np.sum(line.sea.amplitude)), 1.0 if line.free_b else 0.0)
        # the winch's terms as Line._geometry_changed_fast forms them (the products in its order)
        P[[MPL, CANRHOA, CATRHOA, TIPMASS, DAMP, DAMPSQ]] = (
            p.mass_per_length, p.Can * line._rhoA, p.Cat * line._rhoA, line.tip_mass, p.damping,
            math.sqrt(p.EA * p.mass_per_length))
        self._ctx = np.zeros(21, dtype=np.int64)
        self._ctx[1] = kernels.address(P)
        self._n = -1
        self._done = ctypes.c_int(0)
        self._fn = lib.mc_line_implicit
        self._advance = lib.mc_line_advance
        self._end_loads = lib.mc_line_end_loads
        self._out = np.zeros(0)
        self._out_address = 0
        # the state the kernel steps in place (bound once per size: an array's address costs
        # microseconds to look up, more than copying a short line's state in and out)
        self._r = self._v = np.zeros((0, 3))
        # where run(loads=True) writes the loads of the state it ends in (bind_outputs); summary:
        # the end elements' tensions, the largest tension and the slack fraction
        self.summary = np.zeros(4)
        self._ctx[20] = kernels.address(self.summary)
        self._outputs = ()
        self._fluid = True          # ctx[11:14] may hold a fluid's arrays (zeroed for still water)
        self._work_size = lib.mc_line_work_size
        self._ctx_address = kernels.address(self._ctx)
        self._arrays = ()          # the line's arrays whose addresses ctx holds (kept alive here)
        self._done_ref = ctypes.byref(self._done)
        self.T = np.zeros(0)

    def _bind(self, line) -> None:
        """ctx's sizes, work and the line's arrays (their addresses kept while they stay the same)."""
        n = line.r.shape[0]
        ctx = self._ctx
        if n != self._n:
            self._work = np.zeros(self._work_size(n))
            self.T = np.zeros(n - 1)
            self._out = np.zeros(n + 5)
            self._r, self._v = np.zeros((n, 3)), np.zeros((n, 3))
            ctx[0], ctx[14], ctx[15] = n, kernels.address(self._work), kernels.address(self.T)
            ctx[9], ctx[10] = kernels.address(self._r), kernels.address(self._v)
            self._out_address = kernels.address(self._out)
            self._n = n
        arrays = (line.l, line.c_el, line.m_node, line.l_node, line._man_l, line._mat_l, line._rhoA_l)
        held = self._arrays
        if len(held) != 7 or not all(map(operator.is_, arrays, held)):
            # a geometry change made new arrays (a winch changes them in place)
            held = self._arrays = tuple(np.ascontiguousarray(a, dtype=np.float64) for a in arrays)
            ctx[2:9] = [kernels.address(a) for a in held]
            if any(a is not b for a, b in zip(arrays, held)):     # copies: not the line's own arrays
                self._arrays = ()
                self._copies = held

    def bind_outputs(self, force_a: np.ndarray, force_b: np.ndarray, tip_position: np.ndarray,
                     tip_velocity: np.ndarray) -> bool:
        """The caller's arrays (float64, 3 each) run(loads=True) writes the forces on ends A and B
        and end B's position and velocity into; bound once while they stay the same arrays.
        False (nothing bound) if one is not a contiguous float64 array of 3."""
        arrays = (force_a, force_b, tip_position, tip_velocity)
        if len(self._outputs) == 4 and all(map(operator.is_, arrays, self._outputs)):
            return True
        if not all(type(a) is np.ndarray and a.dtype == np.float64 and a.shape == (3,) and a.flags.c_contiguous
                   for a in arrays):
            self._outputs = ()
            self._ctx[16:20] = 0
            return False
        self._outputs = arrays
        self._ctx[16:20] = [kernels.address(a) for a in arrays]
        return True

    def end_loads(self, line) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(force on end A, force on end B, element tensions) at the line's present state, for a
        line in a uniform current (Line.end_loads / Line._end_forces)."""
        self._bind(line)
        ctx, P = self._ctx, self._P
        P[UA] = line.payout["a"] if "a" in line.winch_ends else 0.0
        P[UB] = line.payout["b"] if "b" in line.winch_ends else 0.0
        if line.free_b:
            P[TIP:TIP + 3] = line.tip_force
        P[CUR:CUR + 3] = line.current
        self._r[...] = line.r
        self._v[...] = line.v
        if self._fluid:
            ctx[11] = ctx[12] = ctx[13] = 0
            self._fluid = False
        out = self._out
        self._end_loads(self._ctx_address, self._out_address)
        return out[0:3].copy(), out[3:6].copy(), out[6:].copy()

    def payout_in_place(self, line) -> bool:
        """Whether the kernel can apply the winch's pay-out to the line's own arrays (l, c_el and
        the node arrays, changed in place as Line._geometry_changed_fast changes them)."""
        self._bind(line)
        return len(self._arrays) == 7

    def run(self, line, h: float, n_steps: int, dl: tuple | None, U, Af, zs, loads: bool = False,
            bound: bool = False) -> tuple[int, int]:
        """n_steps implicit steps of h from line.r, line.v (replaced by the new state, new arrays);
        the fluid (U, Af, zs: arrays at the nodes, or None) and the winch terms (dl, the pay-out
        speeds) as Line._implicit_step reads them.  dl None: the kernel pays out as Line.step does
        (the increments, the step, the rest lengths and node arrays of Line._payout, in place;
        payout_in_place must hold), returning PAYOUT_AFTER after a step whose pay-out needs a split,
        merge or length limit (counted as taken; the caller applies it) and PAYOUT_BEFORE before a
        step whose haul-in would eat the winch element.  loads (a uniform current only): when
        every step was taken (return code 0), the loads of the state the steps ended in are
        written to the arrays of bind_outputs and to summary (mc_line_advance).  bound: the line's
        arrays are those payout_in_place has just bound.  Returns (steps taken, return code of
        line.c)."""
        n = line.r.shape[0]
        ctx, P = self._ctx, self._P
        if not bound:
            self._bind(line)
        P[H], P[NSTEP] = h, n_steps
        P[UA] = line.payout["a"] if "a" in line.winch_ends else 0.0
        P[UB] = line.payout["b"] if "b" in line.winch_ends else 0.0
        if dl is None:
            P[PAYOUT], P[L0], P[DLA], P[DLB] = 1.0, line.l0, 0.0, 0.0
        else:
            P[PAYOUT] = 0.0
            P[DLA], P[DLB] = dl
        P[VA:VA + 3], P[VB:VB + 3] = line.va, line.vb
        if line.free_b:
            P[TIP:TIP + 3] = line.tip_force
        P[CUR:CUR + 3] = line.current
        self._r[...] = line.r
        self._v[...] = line.v
        if U is None and Af is None and zs is None:     # still water (a uniform current)
            if self._fluid:
                ctx[11] = ctx[12] = ctx[13] = 0
                self._fluid = False
        else:
            self._fluid = True
            fluid = [None if x is None else np.ascontiguousarray(np.broadcast_to(x, shape), dtype=np.float64)
                     for x, shape in ((U, (n, 3)), (Af, (n, 3)), (zs, (n,)))]
            ctx[11:14] = [0 if x is None else kernels.address(x) for x in fluid]
        rc = (self._advance if loads else self._fn)(self._ctx_address, self._done_ref)
        # new arrays for the new state (the reference makes new ones too; nothing sees them change)
        line.r, line.v = self._r.copy(), self._v.copy()
        return self._done.value, rc
