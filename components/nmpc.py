"""Nonlinear model-predictive control of the heave-roll-pitch platform on its ship (W.A. de Zeeuw, thesis
§2-1 and §4-5, funMPC.m; ship_crane_digest.md §3.2).

**Prediction model** (thesis 4-62 without waves and radiation, "for execution speed"): the ship as a
rigid body with its instantaneous inertia M_s = M_RB + A_inf about CO, the rigid-body Coriolis term and
linear hydrostatics, and the platform on its 3-DOF joint to the deck (components/platform.py), by Kane's
method in the ship's body axes with generalised speeds u = [nu (6); x' (3)]:

    v_g = A_v u,  omega_p = A_w u            (platform CG velocity and angular velocity, body axes)
    A_v = [1, -S(r_g), e_z, E_1 x rho, E_2 x rho],  A_w = [0, 1, 0, E_1, E_2]
    M(x) = blkdiag(M_s, 0) + m A_v^T A_v + A_w^T I_g A_w
    M u' = [tau_hs - C_RB(nu) nu; J^T f] + A_v^T (m g R^T e_z - m (A_v' u + omega x v_g))
           - A_w^T (I_g (A_w' u + omega x omega_p) + omega_p x I_g omega_p)

with r_g the platform CG (deck hardpoint + [0, 0, z] + R_BP rho_P), E = [e_x, R_X(phi) e_y] the roll and
pitch axes, I_g the platform's inertia about its CG in body axes, tau_hs = -G [0, 0, z, phi, theta, 0]
(body axes, the ship component's convention) and J = d ell / d x. Pose: p' = R(Theta) v,
Theta' = T(Theta) omega (zyx Euler angles). It is undamped: the plant's radiation damping is not in it.
Integrated by classical RK4 at dt = 0.5 s over N = 5 steps (2.5 s; thesis 4-75: forward Euler at this
step was unstable).

**Decision variables**: the leg-force increments Delta f_i (MN), u_i = u_{-1} + sum_{j<=i} Delta f_j
(GPC style), held over prediction step i. **Cost** (funl of funMPC.m; the text's 4-77 prints other
weights, digest erratum 9):

    J = sum_i HRP_err,i^T P HRP_err,i + lambda_dU Delta f_i^T Q Delta f_i + 0.1 sum |violation of u_i| (N)

with P = 10 diag(100, 5e4, 5e4) on the platform's inertial heave (m), roll and pitch (rad) at the end of
each step, Q = 1 (MN^-2), lambda_dU = 1, and the soft linear penalty on leg forces outside
[f_min, f_max]. All terms are written as squared residuals (the penalty as sqrt(0.1 |v|)) for the solver.

**Solver**: damped Gauss-Newton (Kelley's gaussn as the thesis modified it): forward-difference
Jacobian with h = 1e-2 MN (3N + 1 = 16 cost evaluations, here one batched evaluation, each trajectory
simulated from the step where its forces leave the nominal ones), step
-(J^T J + lambda_GN 1)^-1 J^T r with lambda_GN = 0.2, Armijo backtracking (halving up to 4 times), at
most 10 iterations; it stops when ||J^T r|| <= 0.1 or when the next Gauss-Newton step would lower the
cost by less than 0.1 (its predicted decrease -2 g.d, J = r.r; early termination in the sense of Wang &
Boyd, which the thesis cites: it saves the batch that would only confirm convergence); the best
iterate is returned. **Hot start**: the previous solution shifted by one step with a zero appended.
``single_iteration`` (not the thesis') takes one Gauss-Newton step per sample unverified: the real-time
iteration of Diehl et al. (2005), which the hot start makes a continuation of the previous samples' solves.

**Suboptimality estimate** (thesis 2-5 to 2-7, Grune & Pannek; as coded):
alpha = 1 - l_N / l_1, with l_i the stage cost of prediction step i of the returned solution.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from components.platform import PlatformInertia, SarrusGeometry, leg_jacobian, rotation

THESIS_P = 10.0 * np.array([100.0, 5e4, 5e4])        # funl: P = 10 diag([100 5e4 5e4])
E3 = np.array([0.0, 0.0, 1.0])


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b for (B, 3) arrays (np.cross costs several times more on small arrays)."""
    a0, a1, a2 = a[:, 0], a[:, 1], a[:, 2]
    b0, b1, b2 = b[:, 0], b[:, 1], b[:, 2]
    out = np.empty((max(len(a), len(b)), 3))
    out[:, 0] = a1 * b2 - a2 * b1
    out[:, 1] = a2 * b0 - a0 * b2
    out[:, 2] = a0 * b1 - a1 * b0
    return out


def _skew(v: np.ndarray) -> np.ndarray:
    """Batched S(v) (..., 3, 3)."""
    z = np.zeros(v.shape[:-1])
    return np.stack([np.stack([z, -v[..., 2], v[..., 1]], -1), np.stack([v[..., 2], z, -v[..., 0]], -1),
                     np.stack([-v[..., 1], v[..., 0], z], -1)], -2)


def euler_matrix(Theta: np.ndarray) -> np.ndarray:
    """R = Rz(psi) Ry(theta) Rx(phi), batched (B, 3) -> (B, 3, 3)."""
    cf, sf = np.cos(Theta[:, 0]), np.sin(Theta[:, 0])
    ct, st = np.cos(Theta[:, 1]), np.sin(Theta[:, 1])
    cp, sp = np.cos(Theta[:, 2]), np.sin(Theta[:, 2])
    R = np.empty((len(Theta), 3, 3))
    R[:, 0, 0], R[:, 0, 1], R[:, 0, 2] = cp * ct, cp * st * sf - sp * cf, cp * st * cf + sp * sf
    R[:, 1, 0], R[:, 1, 1], R[:, 1, 2] = sp * ct, sp * st * sf + cp * cf, sp * st * cf - cp * sf
    R[:, 2, 0], R[:, 2, 1], R[:, 2, 2] = -st, ct * sf, ct * cf
    return R


@dataclass
class ShipPlatformModel:
    """The prediction model of the module docstring. State s (..., 18) = [p (NED of CO), Theta (roll,
    pitch, yaw), nu (body: v, omega), x (z, phi, theta), x'].

    compiled: None runs the derivative, the RK4 steps, the HRP and NMPC._simulate's rollouts compiled
    (components/kernels/nmpc.c) if the kernels can be had, True requires that, False runs the numpy code
    of this module, which is the reference (results equal to rounding). The kernel takes the constants
    as they are at construction."""

    M_ship: np.ndarray               # M_RB + A_inf about CO (6x6)
    MRB: np.ndarray                  # for the Coriolis term
    G: np.ndarray                    # hydrostatic restoring about CO (6x6)
    hardpoint: np.ndarray            # the deck origin (platform base) in body coordinates
    platform: PlatformInertia
    geometry: SarrusGeometry
    gravity: float = 9.81
    compiled: bool | None = None

    def __post_init__(self):
        self.hardpoint = np.asarray(self.hardpoint, float)
        self.m = self.platform.mass
        self.cgP = np.asarray(self.platform.cg, float)
        self.IcgP = np.asarray(self.platform.inertia, float)
        self._kernel = None
        if self.compiled is not False:
            from components import kernels
            from components.kernels.nmpc import CompiledShipPlatform

            lib = kernels.library()
            if lib is None and self.compiled:
                raise RuntimeError(f"no compiled NMPC kernel: {kernels.status()}")
            self._kernel = CompiledShipPlatform(lib, self) if lib is not None else None

    def derivative(self, s: np.ndarray, f: np.ndarray) -> np.ndarray:
        """s' for states s (B, 18) and leg forces f (B, 3) in N."""
        if self._kernel is not None:
            return self._kernel.derivative(s, f)
        B = s.shape[0]
        Th, v, w, x, xd = s[:, 3:6], s[:, 6:9], s[:, 9:12], s[:, 12:15], s[:, 15:18]
        R = euler_matrix(Th)
        Rp = rotation(x[:, 1], x[:, 2])
        rho = Rp @ self.cgP                                          # (B, 3)
        rg = rho + self.hardpoint
        rg[:, 2] += x[:, 0]
        cphi, sphi = np.cos(x[:, 1]), np.sin(x[:, 1])
        E2 = np.zeros((B, 3))
        E2[:, 1], E2[:, 2] = cphi, sphi
        Av = np.zeros((B, 3, 9))
        Av[:, 0, 0] = Av[:, 1, 1] = Av[:, 2, 2] = Av[:, 2, 6] = 1.0
        Av[:, 0, 4], Av[:, 0, 5] = rg[:, 2], -rg[:, 1]               # -S(r_g)
        Av[:, 1, 3], Av[:, 1, 5] = -rg[:, 2], rg[:, 0]
        Av[:, 2, 3], Av[:, 2, 4] = rg[:, 1], -rg[:, 0]
        Av[:, 1, 7], Av[:, 2, 7] = -rho[:, 2], rho[:, 1]             # e_x x rho
        Av[:, :, 8] = _cross(E2, rho)
        Aw = np.zeros((B, 3, 9))
        Aw[:, 0, 3] = Aw[:, 1, 4] = Aw[:, 2, 5] = Aw[:, 0, 7] = 1.0
        Aw[:, :, 8] = E2
        w_rel = E2 * xd[:, 2:3]
        w_rel[:, 0] += xd[:, 1]
        v_rel = _cross(w_rel, rho)
        v_rel[:, 2] += xd[:, 0]
        v_g = v + _cross(w, rg) + v_rel
        w_p = w + w_rel
        Edot = np.zeros((B, 3))
        Edot[:, 1], Edot[:, 2] = -sphi * xd[:, 1] * xd[:, 2], cphi * xd[:, 1] * xd[:, 2]
        a_bias = _cross(w, v_rel) + _cross(Edot, rho) + _cross(w_rel, _cross(w_rel, rho)) + _cross(w, v_g)
        Ig = Rp @ self.IcgP @ Rp.transpose(0, 2, 1)
        AvT, AwT = Av.transpose(0, 2, 1), Aw.transpose(0, 2, 1)
        M = self.m * (AvT @ Av) + AwT @ Ig @ Aw
        M[:, :6, :6] += self.M_ship
        # ship: hydrostatics and rigid-body Coriolis
        tau = np.zeros((B, 9))
        G = self.G
        tau[:, :6] = -(s[:, 2:3] * G[:, 2] + Th[:, 0:1] * G[:, 3] + Th[:, 1:2] * G[:, 4])
        pm = s[:, 6:12] @ self.MRB.T
        tau[:, :3] -= _cross(w, pm[:, :3])
        tau[:, 3:6] -= _cross(w, pm[:, 3:]) + _cross(v, pm[:, :3])
        # legs: tau_x = J^T f
        tau[:, 6:] += (leg_jacobian(x, self.geometry).transpose(0, 2, 1) @ f[:, :, None])[:, :, 0]
        # platform: gravity (m g R^T e_z, body axes) and velocity terms
        lin = self.m * (self.gravity * R[:, 2, :] - a_bias)
        al_bias = Edot + _cross(w, w_p)
        ang = (Ig @ al_bias[:, :, None])[:, :, 0] + _cross(w_p, (Ig @ w_p[:, :, None])[:, :, 0])
        tau += (AvT @ lin[:, :, None])[:, :, 0] - (AwT @ ang[:, :, None])[:, :, 0]
        ud = np.linalg.solve(M, tau[:, :, None])[:, :, 0]
        # kinematics
        ds = np.empty_like(s)
        ds[:, 0:3] = (R @ v[:, :, None])[:, :, 0]
        cf, sf, ct, tt = np.cos(Th[:, 0]), np.sin(Th[:, 0]), np.cos(Th[:, 1]), np.tan(Th[:, 1])
        ds[:, 3] = w[:, 0] + sf * tt * w[:, 1] + cf * tt * w[:, 2]
        ds[:, 4] = cf * w[:, 1] - sf * w[:, 2]
        ds[:, 5] = (sf * w[:, 1] + cf * w[:, 2]) / ct
        ds[:, 6:12] = ud[:, :6]
        ds[:, 12:15] = xd
        ds[:, 15:18] = ud[:, 6:]
        return ds

    def rk4(self, s: np.ndarray, f: np.ndarray, dt: float) -> np.ndarray:
        """One classical RK4 step of dt (thesis 4-75) for each row of s (B, 18) under forces f (B, 3)."""
        if self._kernel is not None:
            return self._kernel.rk4(s, f, dt)
        k1 = self.derivative(s, f)
        k2 = self.derivative(s + 0.5 * dt * k1, f)
        k3 = self.derivative(s + 0.5 * dt * k2, f)
        k4 = self.derivative(s + dt * k3, f)
        return s + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)

    def hrp(self, s: np.ndarray) -> np.ndarray:
        """platform_hrp of states s (B, 18)."""
        if self._kernel is not None:
            return self._kernel.hrp(s)
        return platform_hrp(s, self.hardpoint)


def platform_hrp(s: np.ndarray, hardpoint: np.ndarray) -> np.ndarray:
    """The platform's inertial heave (NED down of its origin), roll and pitch (zyx of R R_BP) for states
    s (B, 18) of ShipPlatformModel; thesis 4-76 (its code adds the ship's and the platform's angles)."""
    R = euler_matrix(s[:, 3:6])
    x = s[:, 12:15]
    c = hardpoint + x[:, 0:1] * E3
    down = s[:, 2] + np.einsum("bj,bj->b", R[:, 2, :], c)
    Rn = R @ rotation(x[:, 1], x[:, 2])
    roll = np.arctan2(Rn[:, 2, 1], Rn[:, 2, 2])
    pitch = -np.arcsin(np.clip(Rn[:, 2, 0], -1.0, 1.0))
    return np.stack([down, roll, pitch], 1)


@dataclass
class MPCSettings:
    """The thesis' values (funMPC.m overrides loaddata.m's N = 20, dt = 0.2, maxitt = 30)."""

    horizon: int = 5
    dt: float = 0.5
    P: np.ndarray = field(default_factory=lambda: THESIS_P.copy())
    Q: float = 1.0                 # on Delta f in MN
    lambda_dU: float = 1.0
    penalty: float = 0.1           # per N of force-limit violation
    lambda_gn: float = 0.2
    tol: float = 0.1
    max_iter: int = 10
    fd_step: float = 1e-2          # MN
    f_min: float = -5.0e6          # N
    f_max: float = 2.0e7
    hot_start: bool = True
    single_iteration: bool = False # real-time iteration (Diehl): one Gauss-Newton step per sample, taken unverified


@dataclass
class Solution:
    forces: np.ndarray             # u_0 to apply (N)
    delta: np.ndarray              # (N, 3) increments (MN)
    cost: float
    iterations: int
    evaluations: int               # trajectories simulated
    alpha: float
    solve_time: float
    predicted_hrp: np.ndarray      # (N, 3)


class NMPC:
    """Damped Gauss-Newton NMPC of the module docstring for one model; keeps the hot start."""

    def __init__(self, model: ShipPlatformModel, settings: MPCSettings | None = None):
        self.model = model
        self.s = settings or MPCSettings()
        self.delta = np.zeros((self.s.horizon, 3))
        self.sqrtP = np.sqrt(np.asarray(self.s.P, float))

    def _simulate(self, s0: np.ndarray, u_prev: np.ndarray, deltas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """HRP (B, N, 3) and forces (B, N, 3) in N for increments (B, N, 3) in MN."""
        Bn, N = deltas.shape[0], self.s.horizon
        u = u_prev[None, None, :] + 1e6 * np.cumsum(deltas, axis=1)
        if self.model._kernel is not None:     # the loop below in C, the whole batch in one call
            return self.model._kernel.simulate(s0, u, self.s.dt), u
        s = np.repeat(s0[None, :], Bn, axis=0)
        out = np.empty((Bn, N, 3))
        # a trajectory whose forces so far are those of the first is the first (same start, and the
        # model's arithmetic is row by row): only the rows that differ are simulated. A Jacobian
        # batch's perturbation of step j leaves steps < j alone, so its steps simulate 4, 7, ... 3N + 1
        # rows instead of 3N + 1 each (the model's cost is mostly per call: about 10 % less)
        same = np.ones(Bn, dtype=bool)
        for i in range(N):
            same &= (u[:, i] == u[0, i]).all(axis=1)
            if same.all():
                rows = slice(0, 1)
            elif not same[1:].any():
                rows = slice(None)
            else:
                rows = np.flatnonzero(~same)
                rows = np.concatenate(([0], rows))
            s_new = self.model.rk4(s[rows], u[rows, i], self.s.dt)
            hrp = self.model.hrp(s_new)
            s[rows], out[rows, i] = s_new, hrp
            s[same], out[same, i] = s_new[0], hrp[0]
        return out, u

    def _residuals(self, s0: np.ndarray, u_prev: np.ndarray, setpoint: np.ndarray,
                   deltas: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(B, 9N) residual vectors, the (B, N) stage costs and the (B, N, 3) predicted HRP."""
        hrp, u = self._simulate(s0, u_prev, deltas)
        err = (hrp - setpoint) * self.sqrtP
        d = deltas * math.sqrt(self.s.Q * self.s.lambda_dU)
        viol = np.maximum(self.s.f_min - u, 0.0) + np.maximum(u - self.s.f_max, 0.0)
        c = np.sqrt(self.s.penalty * viol)
        r = np.concatenate([err, d, c], axis=2)
        stage = (r * r).sum(axis=2)
        return r.reshape(len(deltas), -1), stage, hrp

    def solve(self, state: np.ndarray, u_prev: np.ndarray, setpoint) -> Solution:
        """Leg forces for the measured state (18) given the forces applied now (u_prev, N).

        Each iteration simulates one batch: the present iterate and its 3N forward-difference
        perturbations. The Armijo test of a Gauss-Newton step is made on the next batch's nominal
        trajectory; a step that fails it is halved (at most 4 times) from the best iterate."""
        started = time.perf_counter()
        st, N = self.s, self.s.horizon
        n = 3 * N
        s0 = np.asarray(state, float)
        u_prev = np.asarray(u_prev, float)
        setpoint = np.asarray(setpoint, float)
        z = np.concatenate([self.delta[1:], np.zeros((1, 3))]) if st.hot_start else np.zeros((N, 3))
        pert = np.eye(n) * st.fd_step
        best = None                       # (cost, z, stage costs, hrp, grad . step)
        evaluations = iterations = 0
        step = None
        halvings = 0
        while iterations < st.max_iter:
            batch = np.concatenate([z.reshape(1, n), z.reshape(1, n) + pert]).reshape(-1, N, 3)
            rb, stage, hrp = self._residuals(s0, u_prev, setpoint, batch)
            evaluations += n + 1
            r = rb[0]
            cost = float(r @ r)
            if best is not None and cost > best[0] + 1e-4 * 2 * best[4]:
                if halvings == 4:        # Armijo failed: keep the best iterate
                    break
                halvings += 1
                step = 0.5 * step
                z = best[1] + step.reshape(N, 3)
                continue
            halvings = 0
            J = (rb[1:] - r).T / st.fd_step                                 # (9N, 3N)
            grad = J.T @ r
            step = -np.linalg.solve(J.T @ J + st.lambda_gn * np.eye(n), grad)
            best = (cost, z, stage[0], hrp[0], float(grad @ step))
            iterations += 1
            # converged: a small gradient (the thesis' test), or a Gauss-Newton step that would gain
            # less than tol (early termination, Wang & Boyd: saves the batch that only confirms it)
            if np.linalg.norm(grad) <= st.tol or -2.0 * float(grad @ step) <= st.tol:
                break
            z = z + step.reshape(N, 3)
            if st.single_iteration:      # the step is taken without the batch that would check it
                best = (cost, z, stage[0], hrp[0], 0.0)
                break
        cost, z, stage, hrp, _ = best
        self.delta = z
        u = u_prev + 1e6 * z[0]
        alpha = float(1.0 - stage[-1] / stage[0]) if stage[0] > 0 else 1.0
        return Solution(u, z.copy(), cost, iterations, evaluations, alpha, time.perf_counter() - started, hrp)
