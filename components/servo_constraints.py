"""Inverse dynamics of an underactuated crane-load system under servo constraints (Lee 2020,
§2.5.4(1), eqs. 107-109; digest §1.7; after Blajer & Kolodziejczyk and Seifried, and Yang's
minimal extension [55] for the index reduction).

The load (6 DOF) hangs on n ropes from a crane with n_p = 6 drive coordinates p (a rig of
components/crane_rigs.py); the planned pose gamma(t) is imposed as servo constraints and the
drive inputs u are the unknowns (eq. 107):

    M_p p''  = f_p + B u - G_p^T lambda
    M_b t'   = f_b - G_s^T lambda
    Phi_i    = (c_i^T c_i - p_ci^2) / 2 = 0,  c_i = (r_B + R_B d_i) - S_i(p, t)      (eqs. 88, 101)
    x        = gamma(t)

The ropes are inextensible here (the thesis' inverse model; the plant stretches them).  With the
dummy derivatives x = gamma, x' = gamma', x'' = gamma'' (eq. 108) the load's velocity and
acceleration are known, and backward Euler (eq. 109) gives, with X = [p, v, u, lambda]_{n+1}:

    f1 = p_{n+1} - p_n - dt v_{n+1}
    f2 = M_p (v_{n+1} - v_n) - dt (f_p + B u_{n+1} - G_p^T lambda_{n+1})
    f3 = M_b gamma''_{n+1} - f_b + G_s^T lambda_{n+1}
    f4 = Phi(p_{n+1}, gamma_{n+1})

The system is block triangular, and it is solved in that order rather than all at once by the
thesis' Gauss-Newton (same solution): f3 and f4 do not contain u or v, so they fix the shape drives
(girder, trolleys, booms) and the tensions; f4 then gives each rope length p_ci = |c_i|; f1 gives
v and f2 gives u.  f3 + f4 reduce to six equations in six unknowns, the rope wrench on the load
equal to the one the planned motion needs,

    sum_i T_i n_i = m (gamma_r'' - g e_z) - f_ext,
    sum_i (R d_i) x T_i n_i = I w' + w x I w - m_ext,      n_i = (S_i - A_i) / |S_i - A_i|

(T_i = lambda_i p_ci, the tension; moments about the CG, world frame, I = R I_b R^T), unknowns the
shape drives and the n tensions; it is square when there are as many of them as the load's DOFs
(the thesis' condition "exactly 6 inputs for the 6-DOF block").  It is solved by Newton's method
with a finite-difference Jacobian kept from step to step (the chord method; refreshed when the
iteration slows).  The generalised rope force on the drives, Q = -G_p^T lambda, is T_i (A_i - S_i) /
|A_i - S_i| . dS_i/dp on a shape drive and +T_i on rope i's winch (the tension pays the rope out).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from components.rotations import cross

__all__ = ["rope_wrench", "drive_rope_forces", "InverseDynamics", "InverseStep", "GRAVITY"]

GRAVITY = 9.81


def rope_wrench(S: np.ndarray, A: np.ndarray, r: np.ndarray, T: np.ndarray) -> np.ndarray:
    """[force; moment about r] (6,) on the load of ropes with tensions T (n,) from S_i (n, 3) to
    the lugs A_i (n, 3): F_i = T_i (S_i - A_i) / |S_i - A_i|, [sum F_i; sum (A_i - r) x F_i]."""
    # in floats: four ropes are too few for numpy's calls to pay (the inverse dynamics' Newton
    # residual asks for this thousands of times a simulated minute)
    fx = fy = fz = mx = my = mz = 0.0
    rx, ry, rz = r.tolist()
    for (sx, sy, sz), (ax, ay, az), tension in zip(S.tolist(), A.tolist(), T.tolist()):
        dx, dy, dz = sx - ax, sy - ay, sz - az
        k = tension / math.sqrt(dx * dx + dy * dy + dz * dz)
        Fx, Fy, Fz = k * dx, k * dy, k * dz
        ax, ay, az = ax - rx, ay - ry, az - rz
        fx, fy, fz = fx + Fx, fy + Fy, fz + Fz
        mx, my, mz = mx + (ay * Fz - az * Fy), my + (az * Fx - ax * Fz), mz + (ax * Fy - ay * Fx)
    return np.array((fx, fy, fz, mx, my, mz))


def drive_rope_forces(rig: Any, S: np.ndarray, dS: np.ndarray, A: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Q = -G_p^T lambda (n_p,): the rope forces on the drives (module docstring),
    Q_j = sum_i T_i n_i . dS_i/dp_j (+ T_i on rope i's own drive), n_i = (A_i - S_i) / |A_i - S_i|."""
    d = A - S
    n = d / np.sqrt(np.einsum("ij,ij->i", d, d))[:, None]
    Q = np.einsum("i,ik,ikj->j", T, n, dS)
    Q[rig.rope_drive] += T
    return Q


@dataclass
class InverseStep:
    """One step of the inverse dynamics: the drive coordinates, velocities, inputs u, tensions T,
    the rope forces on the drives Q and the suspension points S."""
    p: np.ndarray
    v: np.ndarray
    u: np.ndarray
    T: np.ndarray
    Q: np.ndarray
    S: np.ndarray


class InverseDynamics:
    """The servo-constraint inverse dynamics of a rig (module docstring), stepped along a plan.

    ``start(t0, pose)`` solves the statics at the start pose (the load at rest); ``step(t, pose,
    acceleration)`` advances by one dt.  The drive state (p_n, v_n) is the model's own: this is the
    open-loop feedforward of the thesis."""

    def __init__(self, rig: Any, dt: float, tol: float = 1e-9, max_iter: int = 30,
                 axial_stiffness: float | None = None) -> None:
        self.rig, self.dt, self.tol, self.max_iter = rig, float(dt), tol, max_iter
        # None: inextensible ropes (the thesis' inverse model); EA [N]: f4 with the static stretch,
        # |c_i| = p_ci (1 + T_i / EA), needed when the step starts from measured drive lengths
        self.EA = axial_stiffness
        self.p = np.zeros(rig.n_drives)
        self.v = np.zeros(rig.n_drives)
        self._J: np.ndarray | None = None
        self.newton_iterations = 0

    # the wrench the load needs: [m (a - g e_z); I w' + w x I w] minus external loads
    def required_wrench(self, R: np.ndarray, a: np.ndarray, w: np.ndarray, wd: np.ndarray,
                        external: np.ndarray | None = None) -> np.ndarray:
        rig = self.rig
        I = R @ rig.inertia @ R.T
        W = np.concatenate((rig.mass * (np.asarray(a, float) - np.array([0.0, 0.0, GRAVITY])),
                            I @ wd + cross(w, I @ w)))
        return W if external is None else W - external

    def _residual(self, z: np.ndarray, p: np.ndarray, t: float, r: np.ndarray, A: np.ndarray,
                  W: np.ndarray) -> np.ndarray:
        k = self.rig.shape_drives
        q = p.copy()
        q[k] = z[:len(k)]
        S, _ = self.rig.suspension(q, t)
        scale = self.rig.mass * GRAVITY
        res = rope_wrench(S, A, r, z[len(k):] * scale) - W
        res[3:] /= max(float(np.linalg.norm(self.rig.size)), 1.0)      # moments as forces
        return res / scale

    def solve_wrench(self, t: float, r: np.ndarray, R: np.ndarray, W: np.ndarray,
                     p_guess: np.ndarray, T_guess: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """f3 + f4: the shape drives and tensions with which the ropes give the load the wrench W
        at pose (r, R).  Returns (p with the shape drives set, T)."""
        rig = self.rig
        k = rig.shape_drives
        A = r + (R @ rig.lugs.T).T
        mg = rig.mass * GRAVITY
        z = np.concatenate((p_guess[k], np.asarray(T_guess, float) / mg))     # tensions in weights
        f = self._residual(z, p_guess, t, r, A, W)
        fresh = False
        for it in range(self.max_iter):
            if float(np.abs(f).max()) < self.tol:
                return self._compose(p_guess, z), z[len(k):] * mg
            if self._J is None:
                self._J = self._jacobian(z, p_guess, t, r, A, W, f)
                fresh = True
            # the Gauss-Newton step (least squares: also where the Jacobian is rank deficient)
            z_new = z - np.linalg.lstsq(self._J, f, rcond=1e-12)[0]
            f_new = self._residual(z_new, p_guess, t, r, A, W)
            self.newton_iterations += 1
            if float(np.abs(f_new).max()) > 0.5 * float(np.abs(f).max()) and not fresh:
                self._J = None                       # the chord slowed down: a fresh Jacobian
                continue
            z, f = z_new, f_new
            fresh = False
        if float(np.abs(f).max()) < 1e3 * self.tol:
            return self._compose(p_guess, z), z[len(k):] * mg
        raise RuntimeError(f"inverse dynamics: no solution at t = {t:.3f} s (residual {np.abs(f).max():.2e})")

    def _compose(self, p: np.ndarray, z: np.ndarray) -> np.ndarray:
        q = p.copy()
        q[self.rig.shape_drives] = z[:len(self.rig.shape_drives)]
        return q

    def _jacobian(self, z, p, t, r, A, W, f0) -> np.ndarray:
        J = np.empty((6, len(z)))
        for j in range(len(z)):
            h = 1e-6 * max(1.0, abs(z[j]))
            zp = z.copy()
            zp[j] += h
            J[:, j] = (self._residual(zp, p, t, r, A, W) - f0) / h
        return J

    def lengths(self, p: np.ndarray, t: float, r: np.ndarray, R: np.ndarray,
                T: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """f4 for the winches: p_ci = |c_i|, or |c_i| / (1 + T_i / EA) with a rope stiffness."""
        S, dS = self.rig.suspension(p, t)
        A = r + (R @ self.rig.lugs.T).T
        q = p.copy()
        q[self.rig.rope_drive] = np.linalg.norm(A - S, axis=1)
        if self.EA is not None and T is not None:
            q[self.rig.rope_drive] /= 1.0 + np.asarray(T) / self.EA
        return q, A

    def start(self, t0: float, pose: dict, T_guess: np.ndarray | None = None,
              p_guess: np.ndarray | None = None, extra_acceleration: np.ndarray | None = None) -> InverseStep:
        """The statics at the start pose: p_0, v_0 = 0, and the holding inputs (with the load asked
        for extra_acceleration (6,), the feedback's first demand, if given)."""
        r, R = pose["position"], pose["attitude"]
        W = self.required_wrench(R, np.zeros(3), np.zeros(3), np.zeros(3))
        if extra_acceleration is not None:
            W = W + self._extra_wrench(R, extra_acceleration)
        n = len(self.rig.rope_drive)
        T0 = np.full(n, self.rig.mass * GRAVITY / n) if T_guess is None else T_guess
        p0 = self.p if p_guess is None else np.asarray(p_guess, float)
        p, T = self.solve_wrench(t0, r, R, W, p0, T0)
        p, A = self.lengths(p, t0, r, R, T)
        self.p, self.v, self.T, self.t = p, np.zeros_like(p), T, t0
        return self._inputs(p, self.v, np.zeros_like(p), T, A, t0)

    def _extra_wrench(self, R: np.ndarray, da: np.ndarray) -> np.ndarray:
        da = np.asarray(da, float)
        return np.concatenate((self.rig.mass * da[:3], R @ self.rig.inertia @ R.T @ da[3:]))

    def _inputs(self, p, v, acc, T, A, t) -> InverseStep:
        """f2 solved for u: B u = M_p p'' - f_p - Q."""
        rig = self.rig
        S, dS = rig.suspension(p, t)
        Q = drive_rope_forces(rig, S, dS, A, T)
        u = (rig.mass_matrix * acc - rig.drive_forces(p, v, t) - Q) / rig.input_gain
        return InverseStep(p, v, u, T, Q, S)

    def step(self, t: float, pose: dict, extra_acceleration: np.ndarray | None = None,
             drive_state: tuple[np.ndarray, np.ndarray] | None = None,
             external: np.ndarray | None = None) -> InverseStep:
        """Advance from t - dt to t on the planned pose at t (eq. 109).

        extra_acceleration (6,): added to gamma'' in f3 (eq. 111, the hybrid feedback);
        drive_state (p_n, v_n): the measured drive coordinates and velocities to start the step
        from (default: the model's own, the open-loop feedforward)."""
        r, R = pose["position"], pose["attitude"]
        W = self.required_wrench(R, pose["acceleration"], pose["angular_velocity"],
                                 pose["angular_acceleration"], external)
        if extra_acceleration is not None:
            W = W + self._extra_wrench(R, extra_acceleration)
        p_n, v_n = (self.p, self.v) if drive_state is None else (np.asarray(drive_state[0], float),
                                                                 np.asarray(drive_state[1], float))
        # the previous solution (the model's shape drives) extrapolated: the chord iteration starts close
        guess_p = self.p + self.v * self.dt
        guess_T = 2.0 * self.T - getattr(self, "_T_prev", self.T)
        self._T_prev = self.T
        p, T = self.solve_wrench(t, r, R, W, guess_p, guess_T)          # f3, f4 (shape drives)
        p, A = self.lengths(p, t, r, R, T)                              # f4 (winches)
        v = (p - p_n) / self.dt                                         # f1
        acc = (v - v_n) / self.dt
        out = self._inputs(p, v, acc, T, A, t)                          # f2
        self.p, self.v, self.T, self.t = p, v, T, t
        return out
