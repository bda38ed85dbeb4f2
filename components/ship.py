"""6-DOF ship seakeeping: Cummins equation with fluid-memory states, linear hydrostatics, force-RAO
wave loads, station keeping and hardpoints, with nonlinear quaternion kinematics.

Equations (ship_crane_digest §1.3-1.10; Fossen 2011 ch. 5-6; Perez & Fossen 2008), body frame at
the vessel's coordinate origin CO (amidships, centreline, waterline for the MSS vessels), x forward,
y starboard, z down, nu = [v; omega] the body-frame velocity of CO::

    p' = R(q) v,   q' = 1/2 q (x) [0, omega]
    (M_RB + A_inf + X^T I_A X) nu' + C_RB(nu) nu + B_inf nu + C_r chi
        = tau_wave + tau_hs + tau_visc + tau_sk + sum_k X_k^T W_k - X^T (I_A c + p_A)
    chi' = A_r chi + B_r nu                               (fluid memory: mu = C_r chi)

* C_RB(nu) nu = [omega x p; omega x h + v x p] with [p; h] = M_RB nu (Kirchhoff form, any origin);
  the added-mass Coriolis terms are left out, as in linear seakeeping at zero speed.
* tau_hs = -G xi about the ship-alone equilibrium (CO at z = 0, level): xi = [0, 0, z, phi, theta, 0]
  with phi, theta from the quaternion, applied in body axes like the first-order wave excitation
  (linear seakeeping, [S4]). Rotating only the hydrostatic force into the body frame ([S2]) is not
  consistent with an unrotated excitation: their products with the roll angle leave a spurious mean
  sway force (~10 m of offset in beam seas, measured). Valid to about 20 deg of roll and pitch.
  The ship's own weight and buoyancy cancel at equilibrium: attached systems send their FULL weight
  through the hardpoints (digest §7.1, "gravity bookkeeping").
* Attached loads: the hardpoint wrenches W_k and the bias wrench p_A (the weight of an attached
  mechanism and the loads on it) enter in the seakeeping axes {h}, NED turned by the heading only:
  tau = Qb X^T Rb^T w with Q = R_psi^T R, the body's roll-pitch tilt. The buoyancy that carries them
  is part of tau_hs, along body z, so a weight taken in body axes (R^T) would leave W sin(phi) across
  a heeled ship and a yaw moment x W sin(phi): 100 t at 5 m off the centreline (2.1 deg of heel)
  pushed the free-floating supply vessel 114 m sideways in 400 s, and at a crane-like point turned it
  115 deg (measured; tests/components/test_ship.py). The lever arm is still the tilted one, so a raised weight
  still takes stability away (roll moment -z W sin(phi)). The attached inertia I_A stays the ship's
  own (body axes): a rigidly attached mass moves the ship exactly as the same mass in M_RB would.
* tau_wave: first-order excitation from the force RAOs (components.waves), evaluated in the
  seakeeping frame {h} (digest §1.1): at the ship's *mean* north, east and heading, here a first-order
  low-pass of the position and heading with time constant T_lf (states eta_lf). Evaluating it at the
  instantaneous position would turn the wave-frequency motion into a spurious mean drift force (k x
  modulates the excitation phase); the RAOs refer to {h}, used as body axes (small roll and pitch).
* tau_visc = -B_v nu_r - b_q |p| p e_roll: linear viscous damping on the velocity relative to the
  current (surge, sway, yaw) and roll, plus quadratic roll damping.
* tau_sk: optional station keeping (a DP-like spring-damper in surge, sway and yaw about the initial
  north, east and heading), because first-order seakeeping has no restoring there.
* W_k = [F_k; M_k + r_k x F_k]: force and moment applied at hardpoint k (given in NED), turned into
  the seakeeping axes (above).
* Articulated inertia (strong coupling, digest §7.4): an attached mechanism at hardpoint 1 needs the
  wrench I_A a + p_A (NED axes at the hardpoint, [force; moment] = I_A [a; alpha] + p_A) to follow the
  hardpoint acceleration a = X nu' + c; its reaction is folded into the mass matrix.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import lapack

from components.rotations import cross, quat_normalize, quat_to_euler_zyx, quat_to_matrix, skew


_dgesv = lapack.dgesv


def same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """a and b hold the same values bit for bit (np.array_equal costs ~10x more on small arrays;
    a -0.0 against 0.0 counts as a change, which only costs a recomputation)."""
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def seakeeping_tilt(R: np.ndarray) -> list[list[float]]:
    """Q = R_psi^T R: body axes -> the seakeeping axes {h} (NED turned by the heading psi only), i.e.
    the roll-pitch tilt of the body (module docstring: attached loads)."""
    psi = math.atan2(R[1, 0], R[0, 0])
    c, s = math.cos(psi), math.sin(psi)
    return [[c * R[0, j] + s * R[1, j] for j in range(3)], [c * R[1, j] - s * R[0, j] for j in range(3)],
            [R[2, 0], R[2, 1], R[2, 2]]]


def transfer_matrix(r: np.ndarray) -> np.ndarray:
    """X(r): body twist at CO -> twist at point r, [v_r; omega] = X [v; omega] (velocity part
    v + omega x r); X^T maps a wrench at r to CO."""
    X = np.eye(6)
    X[0:3, 3:6] = -skew(r)
    return X


def _rigid_point_motion(y: np.ndarray, R: np.ndarray, rs: np.ndarray):
    """What of the body points' kinematics does not depend on the loads (Fossen 2011 eq. 2.40-2.42):
    omega x v, omega x (omega x r_k) (body), positions p + R r_k and velocities R (v + omega x r_k)
    (NED), omega in NED; rs (K, 3) body points, y the state, R its rotation."""
    v, w = y[7:10], y[10:13]
    Sw = skew(w)
    w_x_r = rs @ Sw.T                       # rows: omega x r_k
    vel_b = v + w_x_r
    c_wv, wwr = cross(w, v), w_x_r @ Sw.T
    return c_wv, wwr, y[0:3] + rs @ R.T, vel_b @ R.T, R @ w


def _rigid_point_accelerations(rs: np.ndarray, c_wv: np.ndarray, wwr: np.ndarray, R: np.ndarray, nu_dot: np.ndarray):
    """The body points' accelerations R (v' + omega x v + omega' x r_k + omega x (omega x r_k)) and
    omega' (NED), from _rigid_point_motion's terms and nu' = [v'; omega']."""
    vd, wd = nu_dot[0:3], nu_dot[3:6]
    acc_b = vd + c_wv + rs @ skew(wd).T + wwr
    return acc_b @ R.T, R @ wd


_POINTS_EXACT: dict = {}


def _points_kernel_reproduces_numpy(compiled, n_points: int) -> bool:
    """Whether ship.c's mc_ship_points gives _rigid_point_motion's and _rigid_point_accelerations'
    bits here. It forms their (K, 3) @ (3, 3).T products as OpenBLAS's Haswell-family dgemm does (fused
    multiply-adds in order); another BLAS or kernel rounds them otherwise, and then the numpy code runs,
    so that the points' kinematics are the same bits with or without the kernels. Checked once per
    process, library and number of points (numpy's product of one row is another BLAS routine), on
    random states, rotations and accelerations with a point at CO (zeros)."""
    key = (id(compiled._lib), n_points)
    if key not in _POINTS_EXACT:
        rng = np.random.default_rng(26)
        rs = np.vstack([np.zeros(3), rng.normal(size=(max(n_points, 2) - 1, 3)) * 30.0])[:n_points]
        exact = True
        for n in range(48):
            y = np.zeros(13)
            y[0:3] = rng.normal(size=3) * 100.0
            y[3:7] = quat_normalize(rng.normal(size=4))
            if n % 4:       # else at rest: zero velocities (signed zeros)
                y[7:13] = rng.normal(size=6) * (1.0, 1.0, 0.5, 0.1, 0.1, 0.1)
            R = quat_to_matrix(y[3:7])
            nu_dot = rng.normal(size=6) * (0.5, 0.5, 0.5, 0.05, 0.05, 0.05) if n % 3 else np.zeros(6)
            c_wv, wwr, pos, vel, w_ned = _rigid_point_motion(y, R, rs)
            acc, wd_ned = _rigid_point_accelerations(rs, c_wv, wwr, R, nu_dot)
            got = compiled.points(y, R, nu_dot, rs)
            exact = exact and all(a.tobytes() == b.tobytes() for a, b in zip((pos, vel, acc, w_ned, wd_ned), got))
        _POINTS_EXACT[key] = exact
    return _POINTS_EXACT[key]


@dataclass
class ShipParameters:
    """Everything the ship model needs besides the sea (see module docstring)."""

    MRB: np.ndarray                     # (6,6) rigid-body mass about CO [kg, kg m, kg m2]
    A_inf: np.ndarray                   # (6,6) infinite-frequency added mass about CO
    B_inf: np.ndarray                   # (6,6) infinite-frequency damping not in the fluid memory
    Ar: np.ndarray                      # (n,n) fluid-memory state matrix
    Br: np.ndarray                      # (n,6)
    Cr: np.ndarray                      # (6,n)
    G: np.ndarray                       # (6,6) hydrostatic restoring about CO
    cg: np.ndarray                      # (3,) CG in body frame rel. CO
    hardpoints: np.ndarray              # (N,3) body frame rel. CO
    viscous: np.ndarray = field(default_factory=lambda: np.zeros(6))  # linear viscous damping diagonal
    roll_quadratic: float = 0.0         # quadratic roll damping [N m s2/rad2]
    station_stiffness: np.ndarray = field(default_factory=lambda: np.zeros(3))   # surge, sway, yaw
    station_damping: np.ndarray = field(default_factory=lambda: np.zeros(3))
    lowpass_time: float = 30.0          # T_lf of the seakeeping frame's mean position and heading [s]


class Ship:
    """State y = [p (3, CO in NED), q (4), nu (6), eta_lf (3: mean north, east, heading), chi (n)]
    and the loads held over a step."""

    def __init__(self, params: ShipParameters, sea=None, rao=None, position=(0.0, 0.0, 0.0),
                 quaternion=(1.0, 0.0, 0.0, 0.0), nu=(0.0,) * 6, time: float = 0.0, compiled: bool | None = None):
        """compiled: None runs the derivative and the RK4 sub-steps compiled (components/kernels/ship.c)
        if they can be had, True requires that, False runs the numpy code of this module, which is the
        reference (results equal to rounding)."""
        self.p = params
        self.sea = sea
        self.rao = rao
        self.n_rad = params.Ar.shape[0]
        self.time = float(time)
        q0 = quat_normalize(np.asarray(quaternion, float))
        heading0 = quat_to_euler_zyx(q0)[2]
        self.y = np.concatenate([np.asarray(position, float), q0, np.asarray(nu, float),
                                 [position[0], position[1], heading0], np.zeros(self.n_rad)])
        self.reference = np.array(self.y[0:3])          # station-keeping set point (north, east)
        self.reference_heading = heading0
        self.M0 = params.MRB + params.A_inf
        self.X = [transfer_matrix(r) for r in params.hardpoints]
        self._r1 = tuple(np.asarray(params.hardpoints[0], float).tolist()) if len(params.hardpoints) else None
        n = len(params.hardpoints)
        self.hp_force = np.zeros((n, 3))
        self.hp_moment = np.zeros((n, 3))
        self.current = np.zeros(3)
        self.IA = np.zeros((6, 6))
        self.pA = np.zeros(6)
        self._articulated = False
        self._Minv = np.linalg.inv(self.M0)
        self._cache: tuple | None = None
        self._dy_now: np.ndarray | None = None
        # what depends only on (time, state, hardpoint loads, current) at the current state, kept
        # while only the articulated inertia and bias change (see _now_terms)
        self._now: tuple | None = None
        self._M_now: np.ndarray | None = None     # M0 + J^T I_A J at the current state
        self._kinematics_now: tuple | None = None  # see points_kinematics
        self._stage_waves: dict | None = None
        self._MRB = np.array(params.MRB, float)
        self._G = np.array(params.G, float).tolist()
        self._Cr = np.array(params.Cr, float)
        self._B_inf = None if not np.any(params.B_inf) else np.array(params.B_inf, float)
        self._viscous = None if not np.any(params.viscous) else np.array(params.viscous, float).tolist()
        self._station = None if not (np.any(params.station_stiffness) or np.any(params.station_damping)) else (
            np.array(params.station_stiffness, float).tolist(), np.array(params.station_damping, float).tolist())
        self._aggregate_hardpoint_loads()
        self._compiled = None
        if compiled is not False:
            from components import kernels
            from components.kernels.ship import MAX_RAD, CompiledShip

            lib = kernels.library()
            if (lib is None or self.n_rad > MAX_RAD) and compiled:
                raise RuntimeError(f"no compiled ship kernel: {kernels.status()}" if lib is None
                                   else f"the compiled ship takes up to {MAX_RAD} fluid-memory states")
            if lib is not None and self.n_rad <= MAX_RAD:
                self._compiled = CompiledShip(self, lib)
        # the points' kinematics compiled where that gives numpy's bits (_points_kernel_reproduces_numpy)
        self._points_kernel = self._compiled is not None
        self._outputs_points = None         # bind_outputs
        self.outputs_written = False        # whether the last points_kinematics wrote the bound outputs
        # the sea's phases and their cosines and sines compiled too (the step's stage excitations,
        # the outputs' elevations); None: Sea.excitation and Sea.elevation, the reference
        self._sea_kernel = None
        if self._compiled is not None and sea is not None and sea.omega.size:
            from components.kernels.ship import CompiledWaves

            self._sea_kernel = CompiledWaves(sea, lib)

    # ------------------------------------------------------------------ loads

    def set_loads(self, forces: np.ndarray, moments: np.ndarray, current=(0.0, 0.0, 0.0),
                  articulated_inertia: np.ndarray | None = None, bias_wrench: np.ndarray | None = None) -> None:
        """Hardpoint forces/moments on the ship (N,3) in NED, current velocity NED, and the
        optional articulated inertia and bias wrench at hardpoint 1 (NED axes).

        Loads equal to the ones held keep what was computed with them: the forces of the current
        state when only the articulated inertia or bias changes (a master refreshing a
        feedthrough loop sets exactly that), the accelerations too when nothing changes."""
        forces = np.asarray(forces, float).reshape(-1, 3)
        moments = np.asarray(moments, float).reshape(-1, 3)
        current = np.asarray(current, float)
        changed = False
        if not (same_values(forces, self.hp_force) and same_values(moments, self.hp_moment)
                and same_values(current, self.current)):
            self.hp_force, self.hp_moment, self.current = forces, moments, current
            self._aggregate_hardpoint_loads()
            self._now = None
            changed = True
        IA = None if articulated_inertia is None else np.asarray(articulated_inertia, float)
        pA = np.zeros(6) if bias_wrench is None else np.asarray(bias_wrench, float)
        # any() of the values: np.any's test (NaN counts), without its ~2 us of wrapping per call
        if IA is not None and (any(IA.ravel().tolist()) or any(pA.tolist())):
            self.set_articulated(IA, pA)
        elif self._articulated:
            self._articulated = False
            changed = True
        if changed:
            self._cache = None

    def set_articulated(self, articulated_inertia: np.ndarray, bias_wrench: np.ndarray) -> None:
        """The articulated inertia I_A (6, 6) and bias wrench p_A (6,) at hardpoint 1 (NED axes, float
        arrays, not all zeros: set_loads' test), the other loads held: what set_loads does with them.
        The wrench I_A a + p_A that the attached mechanism needs to follow the hardpoint acceleration
        a enters the equation of motion (module docstring; Featherstone 2008, sec. 7.2). Values equal
        to the ones held keep what was computed with them (the mass matrix too if only p_A changed)."""
        if self._articulated and same_values(articulated_inertia, self.IA):
            if same_values(bias_wrench, self.pA):
                return
        else:
            self._M_now = None
        self.IA, self.pA = articulated_inertia, bias_wrench
        self._articulated = True
        self._cache = None

    def _aggregate_hardpoint_loads(self) -> None:
        """Sums held over a step: total NED force and moment, and Q = sum f_k r_k^T for the moments
        of the forces about CO (see _forces)."""
        self._hp_force_sum = self.hp_force.sum(axis=0).tolist() if len(self.hp_force) else [0.0] * 3
        self._hp_moment_sum = self.hp_moment.sum(axis=0).tolist() if len(self.hp_moment) else [0.0] * 3
        self._hp_arm = (self.hp_force.T @ np.asarray(self.p.hardpoints, float).reshape(-1, 3)).tolist() \
            if len(self.hp_force) else [[0.0] * 3] * 3
        # no hardpoint force or moment (e.g. an attached crane sending its weight through the bias
        # wrench instead): _forces skips adding their zeros
        self._hp_loaded = bool(self.hp_force.any() or self.hp_moment.any())

    # ------------------------------------------------------------------ dynamics

    def _wave(self, t: float, y: np.ndarray) -> np.ndarray:
        if self.sea is None or self.rao is None:
            return np.zeros(6)
        return self.sea.excitation(t, y[13], y[14], y[15], self.rao)

    def _forces(self, t: float, y: np.ndarray):
        """Body-frame generalised force at CO (everything except the articulated-inertia terms),
        the rotation matrix and the Euler angles.

        Written with few numpy calls on purpose: this runs 4 times per RK4 sub-step, and numpy's
        per-call overhead on 3-vectors dominates otherwise (see benchmarks/bench_ship.py)."""
        P = self.p
        qw, qx, qy, qz = y[3:7].tolist()
        k = 2.0 / (qw * qw + qx * qx + qy * qy + qz * qz)
        r00, r01, r02 = 1.0 - k * (qy * qy + qz * qz), k * (qx * qy - qw * qz), k * (qx * qz + qw * qy)
        r10, r11, r12 = k * (qx * qy + qw * qz), 1.0 - k * (qx * qx + qz * qz), k * (qy * qz - qw * qx)
        r20, r21, r22 = k * (qx * qz - qw * qy), k * (qy * qz + qw * qx), 1.0 - k * (qx * qx + qy * qy)
        R = np.array([[r00, r01, r02], [r10, r11, r12], [r20, r21, r22]])
        phi = math.atan2(r21, r22)
        theta = -math.asin(max(-1.0, min(1.0, r20)))
        psi = math.atan2(r10, r00)
        nu = y[7:13]
        u, v, w, p, q, r = nu.tolist()
        px, py, pz, hx, hy, hz = (self._MRB @ nu).tolist()
        # rigid-body Coriolis-centripetal, Kirchhoff form: -[w x p; w x h + v x p]
        f = [-(q * pz - r * py), -(r * px - p * pz), -(p * py - q * px),
             -(q * hz - r * hy) - (v * pz - w * py), -(r * hx - p * hz) - (w * px - u * pz),
             -(p * hy - q * hx) - (u * py - v * px)]
        # hydrostatics about the ship-alone equilibrium, in body axes (see the module docstring)
        G = self._G
        z = y[2]
        g = [-(G[i][2] * z + G[i][3] * phi + G[i][4] * theta) for i in range(6)]
        fx, fy, fz = g[0], g[1], g[2]
        f[0] += fx
        f[1] += fy
        f[2] += fz
        cx, cy, cz = self.current.tolist()
        f[3] += g[3]
        f[4] += g[4]
        f[5] += g[5]
        if self._hp_loaded:
            # hardpoint forces (their sum), NED -> body
            F = self._hp_force_sum
            b = [r00 * F[0] + r10 * F[1] + r20 * F[2], r01 * F[0] + r11 * F[1] + r21 * F[2],
                 r02 * F[0] + r12 * F[1] + r22 * F[2]]
            # hardpoint moments: sum R^T m_k + sum r_k x (R^T f_k); with A = sum f_k r_k^T,
            # sum r_k x (R^T f_k) = vee(R^T A - (R^T A)^T)
            Mh = self._hp_moment_sum
            A = self._hp_arm
            a = [[r00 * A[0][j] + r10 * A[1][j] + r20 * A[2][j] for j in range(3)],
                 [r01 * A[0][j] + r11 * A[1][j] + r21 * A[2][j] for j in range(3)],
                 [r02 * A[0][j] + r12 * A[1][j] + r22 * A[2][j] for j in range(3)]]
            b += [r00 * Mh[0] + r10 * Mh[1] + r20 * Mh[2] + a[2][1] - a[1][2],
                  r01 * Mh[0] + r11 * Mh[1] + r21 * Mh[2] + a[0][2] - a[2][0],
                  r02 * Mh[0] + r12 * Mh[1] + r22 * Mh[2] + a[1][0] - a[0][1]]
            # ... then body -> the seakeeping axes, like the buoyancy that carries them (module
            # docstring: attached loads)
            T = seakeeping_tilt(R)
            for i in range(3):
                f[i] += T[i][0] * b[0] + T[i][1] * b[1] + T[i][2] * b[2]
                f[3 + i] += T[i][0] * b[3] + T[i][1] * b[4] + T[i][2] * b[5]
        # linear viscous damping on the velocity relative to the current, quadratic roll damping
        b = self._viscous
        if b is not None:
            ur = u - (r00 * cx + r10 * cy + r20 * cz)
            vr = v - (r01 * cx + r11 * cy + r21 * cz)
            wr = w - (r02 * cx + r12 * cy + r22 * cz)
            for i, x in enumerate((ur, vr, wr, p, q, r)):
                f[i] -= b[i] * x
        f[3] -= P.roll_quadratic * abs(p) * p
        # station keeping in the horizontal plane, body axes
        if self._station:
            dn, de = y[0] - self.reference[0], y[1] - self.reference[1]
            dx, dy = r00 * dn + r10 * de, r01 * dn + r11 * de
            dpsi = math.remainder(psi - self.reference_heading, 2 * math.pi)
            ks, cs = self._station
            f[0] -= ks[0] * dx + cs[0] * u
            f[1] -= ks[1] * dy + cs[1] * v
            f[5] -= ks[2] * dpsi + cs[2] * r
        tau = np.array(f)
        if self._B_inf is not None:
            tau -= self._B_inf @ nu
        if self.n_rad:
            tau -= self._Cr @ y[16:]
        if self.sea is not None and self.rao is not None:
            wave = self._stage_waves.get(t) if self._stage_waves else None
            if wave is None:
                wave = self.sea.excitation(t, y[13], y[14], y[15], self.rao, heading_tol=1e-4)
            self._last_wave = (t, wave)
            tau += wave
        return tau, R, (phi, theta, psi)

    def _geometry(self, y: np.ndarray, R: np.ndarray):
        """J (body nu' -> NED [a; alpha] at hardpoint 1) and the velocity-dependent part of that
        acceleration in NED, Rb c (see the module docstring: a = J nu' + Rb c)."""
        u, v, w, p, q, r = y[7:13].tolist()
        rx, ry, rz = self._r1
        # omega x v + omega x (omega x r), written out (the same operations as rotations.cross)
        ax, ay, az = q * rz - r * ry, r * rx - p * rz, p * ry - q * rx
        c_body = np.array([(q * w - r * v) + (q * az - r * ay), (r * u - p * w) + (r * ax - p * az),
                           (p * v - q * u) + (p * ay - q * ax), 0.0, 0.0, 0.0])
        Rb = np.zeros((6, 6))
        Rb[0:3, 0:3] = Rb[3:6, 3:6] = R
        Qb = np.zeros((6, 6))
        Qb[0:3, 0:3] = Qb[3:6, 3:6] = seakeeping_tilt(R)
        J = Rb @ self.X[0]
        return J, Rb @ c_body, Qb @ J.T

    def _solve(self, tau: np.ndarray, J: np.ndarray, a_c: np.ndarray, L: np.ndarray, M: np.ndarray | None = None):
        """nu' from (M0 + J^T I_A J) nu' = tau - J^T I_A Rb c - L p_A, L = Qb J^T: the attached
        mechanism's inertia is the ship's own (body axes), its bias wrench -- its weight and the
        loads on it -- enters in the seakeeping axes (module docstring); returns (nu', M)."""
        if M is None:
            M = self.M0 + J.T @ self.IA @ J
        tau = tau - J.T @ (self.IA @ a_c) - L @ self.pA
        # LAPACK dgesv directly: the LU solve np.linalg.solve makes, without its ~5 us of checks
        # and wrapping on a 6x6 system (same routine, same result)
        _, _, nu_dot, info = _dgesv(M, tau)
        if info != 0:
            raise np.linalg.LinAlgError(f"singular mass matrix (dgesv info {info})")
        return nu_dot, M

    def _accelerations(self, t: float, y: np.ndarray):
        tau, R, euler = self._forces(t, y)
        if self._articulated:
            J, a_c, L = self._geometry(y, R)
            nu_dot = self._solve(tau, J, a_c, L)[0]
        else:
            nu_dot = self._Minv @ tau
        return nu_dot, R, euler

    def _kinematic_rates(self, y: np.ndarray, R: np.ndarray, psi: float) -> np.ndarray:
        """dy except nu' (left uninitialised): what depends on the state alone."""
        north, east, _, qw, qx, qy, qz, _, _, _, wx, wy, wz, n_lf, e_lf, psi_lf = y[0:16].tolist()
        dy = np.empty_like(y)
        dy[0:3] = R @ y[7:10]
        T = self.p.lowpass_time
        # q' = 1/2 q (x) [0, omega] (0.5 x is exact: the same numbers as 0.5 * array), then the
        # seakeeping frame: low-pass of north, east and (unwrapped) heading
        dy[3:7] = [0.5 * (-qx * wx - qy * wy - qz * wz), 0.5 * (qw * wx + qy * wz - qz * wy),
                   0.5 * (qw * wy - qx * wz + qz * wx), 0.5 * (qw * wz + qx * wy - qy * wx)]
        dy[13:16] = [(north - n_lf) / T, (east - e_lf) / T, math.remainder(psi - psi_lf, 2 * math.pi) / T]
        if self.n_rad:
            dy[16:] = self.p.Ar @ y[16:] + self.p.Br @ y[7:13]
        return dy

    def _now_terms(self):
        """Forces, rotation, Euler angles, excitation, hardpoint-1 geometry and kinematic rates of
        the current (time, state) under the held hardpoint loads: computed once, then reused by
        the outputs, a feedthrough refresh with a new articulated inertia or bias, and the first
        RK4 stage of the next step (same operations on the same numbers: bit-identical)."""
        now = self._now
        if now is None or now[0] != self.time or now[1] is not self.y:
            t, y = self.time, self.y
            tau, R, euler = self._forces(t, y)
            wave = getattr(self, "_last_wave", None)
            J, a_c, L = self._geometry(y, R)
            now = self._now = (t, y, tau, R, euler, wave, J, a_c, L, self._kinematic_rates(y, R, euler[2]))
            self._M_now = None
        elif now[5] is not None:
            self._last_wave = now[5]
        return now

    def derivative(self, t: float, y: np.ndarray) -> np.ndarray:
        if self._compiled is not None:
            return self._compiled_derivative(t, y)
        if t == self.time and y is self.y:
            _, _, tau, R, euler, _, J, a_c, L, rates = self._now_terms()
            if self._articulated:
                nu_dot, self._M_now = self._solve(tau, J, a_c, L, self._M_now)
            else:
                nu_dot = self._Minv @ tau
            dy = rates.copy()
        else:
            nu_dot, R, euler = self._accelerations(t, y)
            dy = self._kinematic_rates(y, R, euler[2])
        self._last_accelerations = (nu_dot, R, euler)
        dy[7:13] = nu_dot
        return dy

    def _compiled_derivative(self, t: float, y: np.ndarray) -> np.ndarray:
        """derivative() by the compiled kernel: the same excitation (the stage's, else the scalar
        call of _forces), the same side effects (_last_wave, _last_accelerations)."""
        dy, R, euler = self._compiled.derivative(self, y, self._compiled_wave(t, y))
        self._last_accelerations = (dy[7:13], R, euler)
        return dy

    def _compiled_wave(self, t: float, y: np.ndarray) -> np.ndarray | None:
        """The excitation _forces would add at (t, y): the stage's, else the scalar call; kept as
        _last_wave (None: no sea)."""
        if self.sea is None or self.rao is None:
            return None
        wave = self._stage_waves.get(t) if self._stage_waves else None
        if wave is None:
            wave = self.sea.excitation(t, y[13], y[14], y[15], self.rao, heading_tol=1e-4)
        self._last_wave = (t, wave)
        return wave

    def _compiled_substep(self, t: float, h: float, y: np.ndarray) -> np.ndarray:
        """One RK4 sub-step by the compiled kernel (the loop body of step), its first stage taken
        from the outputs' derivative when that was made at this state with this stage's excitation."""
        waves = None
        if self.sea is not None and self.rao is not None:
            waves = [self._stage_waves[t], self._stage_waves[t + 0.5 * h], self._stage_waves[t + h]]
        k1 = None
        if self._dy_now is not None and y is self.y and self._cache is not None:
            last = getattr(self, "_last_wave", None)
            if waves is None or (last is not None and last[0] == t and same_values(last[1], waves[0])):
                k1 = self._dy_now
        return self._compiled.substep(self, h, y, waves, k1)

    def _compiled_stage_substep(self, t: float, h: float, y: np.ndarray) -> np.ndarray | None:
        """step's sub-step from t when the excitation at t is kept from the sub-step before (the
        usual case): the excitations at t + h/2 and t + h and the RK4 sub-step in one compiled call
        (ship.c's mc_ship mode 3), with the same stage excitations, first stage and side effects as
        the loop body of step. None where that call does not apply (no kept excitation, a calm sea,
        the stage times not distinct, or the kernel's sums not numpy's bits here): step goes on."""
        first = self._stage_waves.get(t)
        t_half, t_end = t + 0.5 * h, t + h
        if first is None or not (t < t_half < t_end):
            return None
        plan = self.sea.excitation_plan(self.rao, y[15], heading_tol=1e-4)
        if plan is None or not self._sea_kernel.sums_exact(plan):
            return None
        k1 = None
        if self._dy_now is not None and y is self.y and self._cache is not None:
            last = getattr(self, "_last_wave", None)
            if last is not None and last[0] == t and same_values(last[1], first):
                k1 = self._dy_now
        y, waves = self._compiled.substep_in_waves(self, h, y, plan, y[13], y[14], (t_half, t_end), first, k1)
        # what step's loop body keeps: the stage excitations by time, the one at t the kept one
        self._stage_waves = {t_half: waves[1], t_end: waves[2], t: first}
        return y

    def step(self, dt: float, max_substep: float) -> None:
        """Classic RK4 in ceil(dt / max_substep) equal sub-steps, loads held (zero-order hold)."""
        n = max(1, math.ceil(dt / max_substep - 1e-9))
        h = dt / n
        y, t = self.y, self.time
        for _ in range(n):
            if self.sea is not None and self.rao is not None:
                if self._sea_kernel is not None and self._stage_waves:
                    stepped = self._compiled_stage_substep(t, h, y)
                    if stepped is not None:
                        y = stepped
                        t += h
                        continue
                # The excitation at the three RK4 stage times in one vectorised call, in the
                # seakeeping frame at the sub-step's start: it moves millimetres within a sub-step.
                times = np.array([t, t + 0.5 * h, t + h])
                if self._sea_kernel is not None:
                    # Sea.excitation's work, its phases and trigonometry compiled (the same bits)
                    plan = self.sea.excitation_plan(self.rao, y[15], heading_tol=1e-4)
                    waves = np.zeros((3, 6)) if plan is None else self._sea_kernel.excitation(
                        plan, times, y[13], y[14])
                else:
                    waves = self.sea.excitation(times, y[13], y[14], y[15], self.rao, heading_tol=1e-4)
                kept = self._stage_waves.get(t) if self._stage_waves else None
                self._stage_waves = dict(zip(times.tolist(), waves))
                if kept is not None:
                    # the end value of the previous sub-step: the outputs (and a reused first
                    # stage) used it, so the step must too, whether or not they were evaluated
                    self._stage_waves[t] = kept
                elif self._now is not None and self._now[5] is not None:
                    # what was kept at t used the scalar excitation call, the stages use the
                    # vectorised one (they differ by rounding): the first stage is recomputed
                    self._now = self._cache = None
            if self._compiled is not None:              # the same sub-step in C
                y = self._compiled_substep(t, h, y)
                t += h
                continue
            k1 = self._dy_now if (self._dy_now is not None and y is self.y and self._cache is not None) \
                else self.derivative(t, y)
            k2 = self.derivative(t + 0.5 * h, y + 0.5 * h * k1)
            k3 = self.derivative(t + 0.5 * h, y + 0.5 * h * k2)
            k4 = self.derivative(t + h, y + h * k3)
            y = y + (h / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4)
            y[3:7] = quat_normalize(y[3:7])
            t += h
        # keep the excitation at the end time: the outputs need it next
        end = self._stage_waves.get(t) if self._stage_waves else None
        self._stage_waves = {self.time + dt: end} if end is not None else None
        self.y, self.time = y, self.time + dt
        self._cache = None
        self._now = None

    # ------------------------------------------------------------------ outputs

    def _current(self):
        """Accelerations at the current state and loads; the full derivative is kept too, as the
        first RK4 stage of the next step when the loads have not changed (first same as last)."""
        if self._cache is None:
            self._dy_now = self.derivative(self.time, self.y)
            self._cache = self._last_accelerations
        return self._cache

    @property
    def position(self) -> np.ndarray:
        return self.y[0:3].copy()

    @property
    def quaternion(self) -> np.ndarray:
        return self.y[3:7].copy()

    @property
    def euler(self) -> tuple[float, float, float]:
        return self._current()[2]

    @property
    def nu(self) -> np.ndarray:
        return self.y[7:13].copy()

    @property
    def nu_dot(self) -> np.ndarray:
        return self._current()[0].copy()

    def point_kinematics(self, r: np.ndarray):
        """Position, velocity, acceleration (NED) of body point r, and omega, omega_dot (NED)."""
        nu_dot, R, _ = self._current()
        v, w = self.y[7:10], self.y[10:13]
        vd, wd = nu_dot[0:3], nu_dot[3:6]
        pos = self.y[0:3] + R @ r
        vel = R @ (v + cross(w, r))
        acc = R @ (vd + cross(w, v) + cross(wd, r) + cross(w, cross(w, r)))
        return pos, vel, acc, R @ w, R @ wd

    def points_kinematics(self, points: np.ndarray):
        """point_kinematics for several body points (N,3) at once: positions, velocities and
        accelerations (N,3) in NED, and omega, omega_dot (3,) in NED.

        Where the compiled kernel gives numpy's bits (_points_kernel_reproduces_numpy) it computes
        them all at each call (views of one new array). Else what does not depend on the loads is
        kept for the same state and the same ``points`` object (a feedthrough refresh changes only
        the accelerations); the positions, velocities and omega returned are then shared,
        read-only arrays."""
        y = self.y
        kept = self._kinematics_now
        if self._points_kernel:
            if kept is not None and kept[2] is points:
                rs = kept[3]
            else:
                rs = np.asarray(points, float).reshape(-1, 3)
                # the time and state are the numpy code's below, which keeps more
                kept = self._kinematics_now = (None, None, points, rs)
            if _points_kernel_reproduces_numpy(self._compiled, len(rs)):
                if self._cache is None:
                    # _current's derivative and the points' kinematics in one compiled call, which
                    # also writes the outputs bound to these points (bind_outputs)
                    write = points is self._outputs_points
                    dy, R, euler, kinematics = self._compiled.derivative_and_points(
                        self, y, self._compiled_wave(self.time, y), rs, write)
                    self._dy_now = dy
                    self._cache = self._last_accelerations = (dy[7:13], R, euler)
                    self.outputs_written = write
                    return kinematics
                nu_dot, R, _ = self._cache
                self.outputs_written = False
                return self._compiled.points(y, R, nu_dot, rs)
        self.outputs_written = False
        nu_dot, R, _ = self._current()
        if kept is not None and kept[0] == self.time and kept[1] is y and kept[2] is points:
            rs, c_wv, wwr, pos, vel, w_ned = kept[3:]
        else:
            rs = np.asarray(points, float).reshape(-1, 3)
            c_wv, wwr, pos, vel, w_ned = _rigid_point_motion(y, R, rs)
            for a in (pos, vel, w_ned):
                a.flags.writeable = False
            self._kinematics_now = (self.time, y, points, rs, c_wv, wwr, pos, vel, w_ned)
        acc, wd_ned = _rigid_point_accelerations(rs, c_wv, wwr, R, nu_dot)
        return pos, vel, acc, w_ned, wd_ned

    def bind_outputs(self, points: np.ndarray, arrays, row: int) -> bool:
        """Have points_kinematics(points), where it takes the derivative and the points' kinematics
        in one compiled call, also write the outputs of that state into ``arrays`` (13: CO's position,
        velocity, acceleration, omega and omega' (NED), the quaternion, the Euler angles, then point
        ``row``'s position, quaternion, velocity, omega, acceleration and omega'; points[0] is CO) and
        set outputs_written (else it is False and nothing is written). Kept until bound again (an
        FMU's restored state brings new arrays); None unbinds. Returns whether the kernel can."""
        ok = self._compiled is not None and self._points_kernel and arrays is not None and \
            self._compiled.bind_outputs(arrays, row)
        if not ok and self._compiled is not None:
            self._compiled.bind_outputs(None, 0)
        self._outputs_points = points if ok else None
        return ok

    # wave_elevations takes ``rows`` (fmus/ship.py asks only for the elevations that are read)
    wave_elevation_rows = True

    def wave_elevations(self, points: np.ndarray, rows=None) -> np.ndarray:
        """Wave elevations (K,) at the current time at K points (K, 2: north, east): Sea.elevation
        of their columns in one call, zeta = sum_i Z_i cos(w_i t + eps_i - k_i (N cos chi_i + E sin
        chi_i)) ([S4] eq. 61), its phases and cosines compiled where the ship's kernels are (the same
        bits, see components/kernels/ship.c). rows: the indices of the points whose elevations are
        wanted, ascending (None: all); the kernel then computes only those, and the other entries may
        be stale. Each entry is the same bits whichever rows are asked (CompiledWaves.elevation)."""
        if self.sea is None:
            return np.zeros(len(points))
        if self._sea_kernel is not None:
            return self._sea_kernel.elevation(self.time, points, rows)
        return np.atleast_1d(self.sea.elevation(self.time, points[:, 0], points[:, 1]))

    def wave_elevation(self, north: float, east: float) -> float:
        return 0.0 if self.sea is None else float(self.sea.elevation(self.time, north, east))

    def wave_excitation(self) -> np.ndarray:
        self._current()
        last = getattr(self, "_last_wave", None)
        if last is not None and last[0] == self.time:
            return last[1]
        return self._wave(self.time, self.y)

    # ------------------------------------------------------------------ state

    def get_state(self) -> dict:
        kept = self._stage_waves.get(self.time) if self._stage_waves else None
        return {"y": self.y.copy(), "time": self.time, "reference": self.reference.copy(),
                "wave_now": None if kept is None else np.array(kept),
                "reference_heading": self.reference_heading, "hp_force": self.hp_force.copy(),
                "hp_moment": self.hp_moment.copy(), "current": self.current.copy(), "IA": self.IA.copy(),
                "pA": self.pA.copy(), "articulated": self._articulated}

    def set_state(self, s: dict) -> None:
        self.y = np.array(s["y"], float)
        self.time = float(s["time"])
        self.reference = np.array(s["reference"], float)
        self.reference_heading = float(s["reference_heading"])
        self.hp_force = np.array(s["hp_force"], float)
        self.hp_moment = np.array(s["hp_moment"], float)
        self.current = np.array(s["current"], float)
        self.IA = np.array(s["IA"], float)
        self.pA = np.array(s["pA"], float)
        self._articulated = bool(s["articulated"])
        self._aggregate_hardpoint_loads()
        self._cache = None
        self._dy_now = None
        self._now = None
        wave = s.get("wave_now")
        self._stage_waves = None if wave is None else {self.time: np.array(wave, float)}

    def state_is_finite(self) -> bool:
        return bool(np.all(np.isfinite(self.y)))


def motion_rao(omega: np.ndarray, MRB: np.ndarray, A: np.ndarray, B: np.ndarray, G: np.ndarray,
               force: np.ndarray, extra_damping: np.ndarray | None = None,
               extra_stiffness: np.ndarray | None = None) -> np.ndarray:
    """Frequency-domain motion RAO of the linear seakeeping model (digest §1.2, (2-23)):

        [-w^2 (M_RB + A(w)) + j w (B(w) + B_e) + G + K_e] xi(w) = F(w)

    omega (Nw,), A and B (6,6,Nw), force (6,Nw) complex per unit wave amplitude; returns xi (6,Nw)
    complex: the response is Re(xi e^{j w t}) for a wave Re(a e^{j w t}) at CO, i.e. amplitude |xi|
    and phase angle(xi) in the same convention as the force RAO."""
    n = len(omega)
    Be = np.zeros((6, 6)) if extra_damping is None else np.diag(extra_damping) if np.ndim(extra_damping) == 1 \
        else extra_damping
    Ke = np.zeros((6, 6)) if extra_stiffness is None else np.diag(extra_stiffness) if np.ndim(extra_stiffness) == 1 \
        else extra_stiffness
    out = np.zeros((6, n), complex)
    for k, w in enumerate(omega):
        H = -w * w * (MRB + A[:, :, k]) + 1j * w * (B[:, :, k] + Be) + G + Ke
        out[:, k] = np.linalg.solve(H, force[:, k])
    return out
