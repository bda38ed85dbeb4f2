"""The compiled ship derivative and RK4 sub-step (ship.c) behind components.ship.Ship.

The ship's constants are packed once, its held loads when they change (and the articulated
inertia, bias, current and station-keeping reference at every call, as the reference reads them
then); the wave excitation of each stage is the caller's (components/waves.py), as in Ship.step.
"""
from __future__ import annotations

import math

import numpy as np

from components import kernels

HEAD = 184           # P_CR in ship.c: doubles of the parameter array before C_r
N_LOADS = 65
MAX_RAD = 512        # MC_SHIP_MAX_RAD


class CompiledShip:
    """The kernel bound to one Ship (one per thread, like the ship)."""

    def __init__(self, ship, lib) -> None:
        p = ship.p
        n = self.n_rad = ship.n_rad
        if n > MAX_RAD:
            raise ValueError(f"the compiled ship takes up to {MAX_RAD} fluid-memory states, not {n}")
        P = np.zeros(HEAD + 6 * n + n * n + 6 * n)
        G = np.asarray(p.G, float)
        r1 = ship._r1 if ship._r1 is not None else (0.0, 0.0, 0.0)
        ks, cs = ship._station if ship._station else ((0.0,) * 3, (0.0,) * 3)
        P[:HEAD] = (n, p.lowpass_time, p.roll_quadratic, ship._B_inf is not None, ship._viscous is not None,
                    bool(ship._station), ship._r1 is not None, *np.asarray(p.MRB, float).ravel(),
                    *ship.M0.ravel(), *ship._Minv.ravel(),
                    *(np.zeros(36) if ship._B_inf is None else ship._B_inf.ravel()),
                    *(ship._viscous or (0.0,) * 6), *ks, *cs, *r1, *G[:, 2:5].ravel())
        P[HEAD:HEAD + 6 * n] = np.asarray(p.Cr, float).ravel()
        P[HEAD + 6 * n:HEAD + 6 * n + n * n] = np.asarray(p.Ar, float).ravel()
        P[HEAD + 6 * n + n * n:] = np.asarray(p.Br, float).ravel()
        self._P = P
        self._L = np.zeros(N_LOADS)
        self._varying = self._L[17:65]                # current, I_A, p_A, reference: read at every call
        m = self.m = 16 + n
        self._y = np.zeros(m)
        self._waves = np.zeros(18)
        self._k1 = np.zeros(m)
        self._out = np.zeros(m + 12)
        self._waves_address, self._k1_address = kernels.address(self._waves), kernels.address(self._k1)
        # P, L, y, waves (or 0), k1 (or 0), out, h (a double's bits), then for mode 2 the body points,
        # their kinematics and their number (bound by _bind_points), for mode 3 an excitation plan's
        # w3, p, n, groups, [N, E, t + h/2, t + h] and a scratch (bound by _bind_plan), then the table
        # of output addresses and the point of the last six (bind_outputs, set per mode 2 call)
        self._ctx = np.zeros(18, dtype=np.int64)
        self._ctx[[0, 1, 2, 5]] = (kernels.address(P), kernels.address(self._L), kernels.address(self._y),
                                   kernels.address(self._out))
        self._at = np.zeros(4)
        self._ctx[14] = kernels.address(self._at)
        self._plan = None           # (plan, its w3, its p) bound in ctx
        self._scratch = None
        self._outputs = None        # (arrays, their addresses) of bind_outputs
        self._h = self._ctx.view(np.float64)[6:7]
        self._ctx_address = kernels.address(self._ctx)
        self._fn = lib.mc_ship
        self._summed = None
        self._lib = lib
        self._points_fn = None            # mc_ship_points, declared on first use
        self._points_in = np.zeros(24)
        self._points_in_address = kernels.address(self._points_in)
        self._points_buffers = None

    def points(self, y: np.ndarray, R: np.ndarray, nu_dot: np.ndarray, rs: np.ndarray) -> tuple:
        """Positions, velocities and accelerations (NED, (K, 3) each) of the body points rs (K, 3)
        at the state y with rotation R and nu', and omega, omega' in NED (Ship.points_kinematics,
        see ship.c's mc_ship_points): views of one new array."""
        if self._points_fn is None:
            self._points_fn = self._lib.mc_ship_points
        _, r, r_address, out, out_address = self._bind_points(rs)
        np.concatenate((y[0:3], y[7:13], R.ravel(), nu_dot), out=self._points_in)
        K = len(r)
        self._points_fn(self._points_in_address, r_address, K, out_address)
        return self._split_points(out, K)

    def _bind_points(self, rs: np.ndarray) -> tuple:
        """The buffers of the body points rs (K, 3) and of their kinematics, made once per rs (their
        addresses in ctx for mode 2): (rs, contiguous copy, its address, out, out's address)."""
        kept = self._points_buffers
        if kept is None or kept[0] is not rs:
            r = np.ascontiguousarray(rs, dtype=float)
            out = np.zeros(9 * len(r) + 6)
            kept = self._points_buffers = (rs, r, kernels.address(r), out, kernels.address(out))
            self._ctx[7], self._ctx[8], self._ctx[9] = kept[2], kept[4], len(r)
        if kept[1] is not rs:
            kept[1][:] = rs     # a contiguous copy of rs: its values now (it may be written between calls)
        return kept

    @staticmethod
    def _split_points(out: np.ndarray, K: int) -> tuple:
        """points()' results from a copy of mc_ship_points' out: views of one new array."""
        o = out.copy()
        pva = o[:9 * K].reshape(3, K, 3)
        return pva[0], pva[1], pva[2], o[9 * K:9 * K + 3], o[9 * K + 3:]

    OUTPUT_SIZES = (3, 3, 3, 3, 3, 4, 3, 3, 4, 3, 3, 3, 3)

    def bind_outputs(self, arrays, row: int) -> bool:
        """Have derivative_and_points(..., write_outputs=True) also write the outputs of the state
        into these 13 arrays (ship.c's scatter_outputs): CO's position, velocity, acceleration, omega
        and omega' (NED), the quaternion, the Euler angles, then point ``row``'s position, quaternion,
        velocity, omega, acceleration and omega'. Each a contiguous, writeable float64 array of 3 (4
        for the quaternions), kept until others are bound; None unbinds. Returns whether bound."""
        self._outputs = None
        if arrays is None or len(arrays) != len(self.OUTPUT_SIZES) or not all(
                type(a) is np.ndarray and a.dtype == np.float64 and a.flags.c_contiguous and a.flags.writeable
                and a.size == size for a, size in zip(arrays, self.OUTPUT_SIZES)):
            return False
        table = np.array([kernels.address(a) for a in arrays], dtype=np.int64)
        self._outputs = (tuple(arrays), table, kernels.address(table), int(row))
        return True

    def derivative_and_points(self, ship, y: np.ndarray, wave, rs: np.ndarray, write_outputs: bool = False) -> tuple:
        """derivative(ship, y, wave), then points(y, R, nu', rs) with its R and nu', in one call
        (ship.c's mc_ship mode 2: the same operations): (dy, R, Euler angles, points' results); with
        write_outputs, also the outputs into the arrays bound (bind_outputs; rs's first point CO)."""
        bound = self._outputs
        if write_outputs and bound is not None and bound[3] < len(rs):
            self._ctx[16], self._ctx[17] = bound[2], bound[3]
        else:
            self._ctx[16] = 0
        self._state(ship, y, wave)
        _, r, _, out, _ = self._bind_points(rs)
        self._call(2)
        m = self.m
        dy = self._out.copy()
        return dy[:m], dy[m:m + 9].reshape(3, 3), tuple(dy[m + 9:m + 12].tolist()), self._split_points(out, len(r))

    def _bind_plan(self, plan) -> None:
        """The excitation plan's arrays in ctx (mode 3): again when the plan or its p (a new array
        at each heading) is another."""
        kept = self._plan
        if kept is not None and kept[0] is plan and kept[2] is plan.p:
            return
        n = plan.m * plan.n
        if self._scratch is None or self._scratch.size != 2 * n:
            self._scratch = np.zeros(2 * n)
            self._ctx[15] = kernels.address(self._scratch)
        if plan.p.dtype != np.float64 or not plan.p.flags.c_contiguous or plan.p.shape != (2 * n, 6):
            raise ValueError("the excitation plan's p is not a contiguous (2n, 6) float64 array")
        self._ctx[10], self._ctx[11], self._ctx[12], self._ctx[13] = (kernels.address(plan.w3),
                                                                      kernels.address(plan.p), n, plan.m)
        self._plan = (plan, plan.w3, plan.p)

    def substep_in_waves(self, ship, h: float, y: np.ndarray, plan, north: float, east: float, times: tuple,
                         first, k1) -> tuple:
        """substep() with the excitations at t + h/2 and t + h computed from the plan in the same call
        (ship.c's mc_ship mode 3: Sea.excitation's phases, cosines, sines and sums, see
        CompiledWaves.sums_exact), the one at t given (``first``); ``times`` (t + h/2, t + h).
        Returns (the new state, the three stage excitations (3, 6))."""
        self._bind_plan(plan)
        self._loads(ship)
        self._y[:] = y
        self._ctx[3] = self._waves_address
        self._waves[:6] = first
        self._at[0], self._at[1], self._at[2], self._at[3] = north, east, times[0], times[1]
        self._step_start(k1, h)
        self._call(3)
        return self._y.copy(), self._waves.reshape(3, 6).copy()

    def _loads(self, ship) -> None:
        if ship._hp_force_sum is not self._summed:    # Ship._aggregate_hardpoint_loads made new sums
            L = self._L
            L[0] = 1.0 if ship._hp_loaded else 0.0
            L[2:5], L[5:8] = ship._hp_force_sum, ship._hp_moment_sum
            L[8:17] = np.asarray(ship._hp_arm, float).ravel()
            self._summed = ship._hp_force_sum
        self._L[1] = 1.0 if ship._articulated else 0.0
        np.concatenate((ship.current, ship.IA.ravel(), ship.pA, ship.reference[:2], (ship.reference_heading,)),
                       out=self._varying)

    def _state(self, ship, y: np.ndarray, wave) -> None:
        """The held loads, the state y and the excitation ``wave`` (or None) into the call's arrays."""
        self._loads(ship)
        self._y[:] = y
        if wave is None:
            self._ctx[3] = 0
        else:
            self._ctx[3] = self._waves_address
            self._waves[:6] = wave

    def _step_start(self, k1, h: float) -> None:
        """The derivative at the sub-step's start (or None: the kernel forms it) and the step h."""
        if k1 is None:
            self._ctx[4] = 0
        else:
            self._ctx[4] = self._k1_address
            self._k1[:] = k1
        self._h[0] = h

    def _call(self, mode: int) -> None:
        status = self._fn(self._ctx_address, mode)
        if status == -1:
            raise np.linalg.LinAlgError("singular mass matrix (compiled ship)")
        if status:
            raise ValueError("the excitation plan's groups do not divide its components (compiled ship)")

    def derivative(self, ship, y: np.ndarray, wave) -> tuple:
        """(dy, R, (phi, theta, psi)) at y under the held loads and the excitation ``wave`` (or None)."""
        self._state(ship, y, wave)
        self._call(1)
        m = self.m
        out = self._out.copy()
        return out[:m], out[m:m + 9].reshape(3, 3), tuple(out[m + 9:m + 12].tolist())

    def substep(self, ship, h: float, y: np.ndarray, waves, k1) -> np.ndarray:
        """One RK4 sub-step of h from y with the stage excitations ``waves`` ((3, 6) at t, t + h/2,
        t + h, or None) and k1 (the derivative at y, or None); the new state."""
        self._loads(ship)
        self._y[:] = y
        if waves is None:
            self._ctx[3] = 0
        else:
            self._ctx[3] = self._waves_address
            np.concatenate(waves, out=self._waves)
        self._step_start(k1, h)
        self._call(0)
        return self._y.copy()


_SUMS_EXACT: dict = {}     # CompiledWaves.sums_exact: (library function, groups, n per group) -> bool


class CompiledWaves:
    """ship.c's mc_ship_waves bound to one sea (and the excitation plans of its RAOs): the phases
    and cosines of Sea.elevation at a ship's points, the phases, cosines and sines of Sea.excitation
    at a sub-step's stage times; the sums over the components stay numpy's (components/waves.py).
    Its buffers and their addresses are made once per number of points or times (an address costs
    microseconds to ask numpy for)."""

    def __init__(self, sea, lib) -> None:
        self._fn = lib.mc_ship_waves
        self.sea = sea
        self.n = sea.omega.size
        self._coef = np.concatenate((sea.omega, sea.phase, sea._kx, sea._ky))
        self._calls: dict = {}

    def _call(self, mode: int, K: int, coef: np.ndarray, groups: int = 1) -> tuple:
        """(at, out, ctx, ctx address, coef, fresh) for a call of ``mode`` on K points or times with
        ``coef``; fresh (mode 0): which rows hold the cosines of their point at the time at[2 K]."""
        key = (mode, K, id(coef))
        call = self._calls.get(key)
        if call is None or call[4] is not coef:
            n = self.n
            at = np.zeros(2 * K + 1 if mode == 0 else 2 + K)
            if mode == 0:
                at[2 * K] = math.nan        # no rows computed yet
            out = np.zeros(K * n if mode == 0 else 2 * K * n)
            ctx = np.array([kernels.address(coef), kernels.address(at), kernels.address(out), K, n, groups, K],
                           dtype=np.int64)
            call = self._calls[key] = (at, out.reshape(K, -1), ctx, kernels.address(ctx), coef, [False] * K)
        return call

    def elevation(self, t: float, points: np.ndarray, rows=None) -> np.ndarray:
        """Sea.elevation(t, points[:, 0], points[:, 1]) for K points (K, 2): the same bits where
        numpy's cos is the C library's (see ship.c). rows: the indices of the points whose elevations
        are wanted, ascending (None: all); the other entries may then be stale. Each entry is numpy's
        product of its own row of cosines with the amplitudes whatever the other rows hold (a BLAS
        forms each entry of a matrix-vector product alone; the matrix keeps its shape, and so the
        kernel that forms each entry)."""
        K = len(points)
        at, out, ctx, address, _, fresh = self._call(0, K, self._coef)
        new = points.ravel().tolist()
        # rows of the same point at the same time are kept (a feedthrough refresh moves only the
        # wave probe, the last point): the phases and cosines are functions of the point and time
        # alone, and the comparison is of values (cos is even: a zero's sign cannot change one)
        held = at.tolist()
        if held[2 * K] != t:
            at[2 * K] = t
            fresh[:] = [False] * K
        todo = [k for k in (range(K) if rows is None else rows)
                if not (fresh[k] and held[2 * k:2 * k + 2] == new[2 * k:2 * k + 2])]
        if todo:
            first, end = todo[0], todo[-1] + 1
            if end - first == len(todo):        # consecutive rows: one call
                at[2 * first:2 * end] = new[2 * first:2 * end]
                ctx[5], ctx[6] = first, end
                self._fn(address, 0)
            else:
                for k in todo:
                    at[2 * k:2 * k + 2] = new[2 * k:2 * k + 2]
                    ctx[5], ctx[6] = k, k + 1
                    self._fn(address, 0)
            for k in todo:
                fresh[k] = True
        # the sum as Sea.elevation makes it: the same matrix-vector product on the same numbers
        return out @ self.sea.amplitude

    def sums_exact(self, plan) -> bool:
        """Whether ship.c's excitation sums (mc_ship mode 3) give numpy's ``cos_sin @ plan.p`` bits
        here for this plan's shape: numpy's product is the BLAS's, whose order of summation ship.c
        follows for OpenBLAS's Haswell-family dgemm; another BLAS or kernel may sum otherwise, and
        then Ship.step lets numpy sum. Checked once per process, library and shape, on the plan's
        own p at random times and positions."""
        key = (id(self._fn), plan.m, plan.n)
        exact = _SUMS_EXACT.get(key)
        if exact is None:
            exact = _SUMS_EXACT[key] = self._check_sums(plan)
        return exact

    def _check_sums(self, plan) -> bool:
        n = plan.m * plan.n
        p = np.ascontiguousarray(plan.p, dtype=float)
        at = np.zeros(2 + 3)
        out = np.zeros(3 * 2 * n + 3 * 6)
        ctx = np.array([kernels.address(plan.w3), kernels.address(at), kernels.address(out), 3, n, plan.m,
                        kernels.address(p)], dtype=np.int64)
        rng = np.random.default_rng(26)
        for _ in range(16):
            at[:2] = rng.uniform(-500.0, 500.0, 2)
            at[2:] = rng.uniform(0.0, 3600.0) + np.array([0.0, 0.0125, 0.025])
            if self._fn(kernels.address(ctx), 2):
                return False
            cs = out[:3 * 2 * n].reshape(3, 2 * n)
            if (cs @ p).tobytes() != out[3 * 2 * n:].tobytes():
                return False
        return True

    def excitation(self, plan, times, north: float, east: float) -> np.ndarray:
        """plan.cos_sin(theta) @ plan.p at the times (K,) for a plan already at its heading: Sea.excitation
        with an array of times (K, 6)."""
        w3 = plan.w3          # contiguous float64 (n, 3), made once per plan
        at, out, _, address, _, _ = self._call(1, len(times), w3, plan.m)
        at[0], at[1] = north, east
        at[2:] = times
        if self._fn(address, 1):
            raise ValueError("the excitation plan's groups do not divide its components")
        return out @ plan.p
