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
        # P, L, y, waves (or 0), k1 (or 0), out, h (a double's bits)
        self._ctx = np.array([kernels.address(P), kernels.address(self._L), kernels.address(self._y), 0, 0,
                              kernels.address(self._out), 0], dtype=np.int64)
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
        kept = self._points_buffers
        if kept is None or kept[0] is not rs:
            r = np.ascontiguousarray(rs, dtype=float)
            out = np.zeros(9 * len(r) + 6)
            kept = self._points_buffers = (rs, r, kernels.address(r), out, kernels.address(out))
        _, r, r_address, out, out_address = kept
        if r is not rs:
            r[:] = rs       # a contiguous copy of rs: its values now (it may be written between calls)
        np.concatenate((y[0:3], y[7:13], R.ravel(), nu_dot), out=self._points_in)
        K = len(r)
        self._points_fn(self._points_in_address, r_address, K, out_address)
        o = out.copy()
        pva = o[:9 * K].reshape(3, K, 3)
        return pva[0], pva[1], pva[2], o[9 * K:9 * K + 3], o[9 * K + 3:]

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

    def _call(self, mode: int) -> None:
        if self._fn(self._ctx_address, mode):
            raise np.linalg.LinAlgError("singular mass matrix (compiled ship)")

    def derivative(self, ship, y: np.ndarray, wave) -> tuple:
        """(dy, R, (phi, theta, psi)) at y under the held loads and the excitation ``wave`` (or None)."""
        self._loads(ship)
        self._y[:] = y
        if wave is None:
            self._ctx[3] = 0
        else:
            self._ctx[3] = self._waves_address
            self._waves[:6] = wave
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
        if k1 is None:
            self._ctx[4] = 0
        else:
            self._ctx[4] = self._k1_address
            self._k1[:] = k1
        self._h[0] = h
        self._call(0)
        return self._y.copy()


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
        """(at, out, ctx, ctx address) for a call of ``mode`` on K points or times with ``coef``."""
        key = (mode, K, id(coef))
        call = self._calls.get(key)
        if call is None or call[4] is not coef:
            n = self.n
            at = np.zeros(2 * K + 1 if mode == 0 else 2 + K)
            if mode == 0:
                at[2 * K] = math.nan        # no rows computed yet
            out = np.zeros(K * n if mode == 0 else 2 * K * n)
            ctx = np.array([kernels.address(coef), kernels.address(at), kernels.address(out), K, n, groups],
                           dtype=np.int64)
            call = self._calls[key] = (at, out.reshape(K, -1), ctx, kernels.address(ctx), coef)
        return call

    def elevation(self, t: float, points: np.ndarray) -> np.ndarray:
        """Sea.elevation(t, points[:, 0], points[:, 1]) for K points (K, 2): the same bits where
        numpy's cos is the C library's (see ship.c)."""
        K = len(points)
        at, out, ctx, address, _ = self._call(0, K, self._coef)
        new = points.ravel().tolist()
        # rows of the same point at the same time are kept (a feedthrough refresh moves only the
        # wave probe, the last point): the phases and cosines are functions of the point and time
        # alone, and the comparison is of values (cos is even: a zero's sign cannot change one)
        held = at.tolist()
        first = 0
        if held[2 * K] == t:
            while first < K and held[2 * first:2 * first + 2] == new[2 * first:2 * first + 2]:
                first += 1
        else:
            at[2 * K] = t
        if first < K:
            at[2 * first:2 * K] = new[2 * first:]
            ctx[5] = first
            self._fn(address, 0)
        # the sum as Sea.elevation makes it: the same matrix-vector product on the same numbers
        return out @ self.sea.amplitude

    def excitation(self, plan, times, north: float, east: float) -> np.ndarray:
        """plan.cos_sin(theta) @ plan.p at the times (K,) for a plan already at its heading: Sea.excitation
        with an array of times (K, 6)."""
        w3 = plan.w3          # contiguous float64 (n, 3), made once per plan
        at, out, _, address, _ = self._call(1, len(times), w3, plan.m)
        at[0], at[1] = north, east
        at[2:] = times
        if self._fn(address, 1):
            raise ValueError("the excitation plan's groups do not divide its components")
        return out @ plan.p
