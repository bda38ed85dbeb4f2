"""Bending and torsion of a slender line on a chain of nodes: cubic-spline curvature and a uniform twist.

Sources
-------
[BU03] B. Buckham, PhD thesis, University of Victoria 2003, and the SMS API final report,
       digested in /work/shared/reference/sms_api_digest.md section 2.1: the cubic-spline
       lumped-mass cable (curvature from a spline through the nodes, bending shear
       K_kG = EI/L [0 I 0 -I; 0 -I 0 I], clamped and pinned end conditions, quasi-static torsion
       with a twist rate tau uniform along the line because torsional inertia is neglected).
[BE08] M. Bergou et al., "Discrete elastic rods", ACM TOG 27(3) 2008: the parallel-transport
       (Bishop) frame, which replaces Buckham's Frenet frame so that inflection points need no
       special treatment, and time-parallel transport of the end reference frames.

Bending [BU03]
--------------
Nodes r_0..r_N, element e = (e, e+1) of unstretched length l_e.  The curvatures k_i = r''(s_i)
(not states) solve the spline continuity equations  S k = D r + b  with, for interior nodes,

    (l_{i-1}/6) k_{i-1} + ((l_{i-1} + l_i)/3) k_i + (l_i/6) k_{i+1}
                                     = (r_{i+1} - r_i)/l_i - (r_i - r_{i-1})/l_{i-1},

and at an end either k = 0 (pinned, swivel or free end: no bending moment) or the clamped
condition (l_0/3) k_0 + (l_0/6) k_1 = (r_1 - r_0)/l_0 - t_A (mirrored at node N, t_B the
prescribed end tangent).  S is the Gram matrix of the piecewise-linear k(s), so the bending energy
of the spline is exactly  U = EI/2 int |r''|^2 ds = EI/2 sum_xyz k^T S k  and its gradient is
dU/dr = EI D^T k.  The node forces  F = -EI D^T k  are Buckham's K_kG summed over elements
(node e receives EI (k_e - k_{e+1})/l_e from element e): the lumped bending force is conservative.
With fixed element lengths F = -EI K r + f_ends, K = D^T S^-1 D a constant symmetric matrix,
which the implicit integrator of components.line uses as the exact bending Jacobian.

End moment exerted by the line on a clamped end body: M_A = EI t_A x k_0, M_B = -EI t_B x k_N
(the internal moment m = EI r' x r'' + GJ tau r' is the moment of the s+ part on the s- part).

Torsion [BU03, BE08]
--------------------
Torsional inertia neglected => GJ tau' = 0, tau uniform:  tau = Theta / L, Theta the total twist
of the cross-section (material) frame relative to the parallel-transport frame between the ends.
Each end carries a reference vector m (perpendicular to its end tangent, carried along by
time-parallel transport as the end tangent turns) and a twist input phi (rotation of the end
fitting about the line axis).  With d_e any per-element reference vector (the projection of a
world axis) and beta_e the angle from the spatially transported d_{e-1} to d_e about t_e,

    Theta = alpha_B + sum_e beta_e - alpha_A,    alpha_end = angle(d_end -> Rot(t, phi) m)

(independent of the world axis chosen), unwrapped to the 2 pi branch nearest the previous value
(the twist history Buckham stores outside the ODE state).  The twist couples into bending
through the internal force  n = GJ tau r' x r''  [BU03 K_tauG]: element e pushes its first node
with +n_e and its second with -n_e, n_e = GJ tau t_e x (k_e + k_{e+1})/2.  A swivel at either end
releases the twist (tau = 0).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.linalg import solve_banded

__all__ = ["SplineBending", "Twist", "rotate_about", "transport", "transport3", "rotate3", "cross"]

_AXES = np.eye(3)
_AXES.flags.writeable = False
_add, _multiply = np.add.reduce, np.multiply


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b of 3-vectors (row-wise on (..., 3) arrays): np.cross's operations in its order
    (a1 b2 - a2 b1, a2 b0 - a0 b2, a0 b1 - a1 b0), so the same bits, without its axis handling,
    which costs ten times the product on the few vectors of a line's twist."""
    if a.ndim == 1 and b.ndim == 1:      # one pair: in Python floats (IEEE doubles, the same bits)
        a0, a1, a2 = a.tolist()
        b0, b1, b2 = b.tolist()
        return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    c = np.empty(a.shape if a.shape == b.shape else np.broadcast_shapes(a.shape, b.shape))
    _multiply(a1, b2, out=c[..., 0])
    c[..., 0] -= a2 * b1
    _multiply(a2, b0, out=c[..., 1])
    c[..., 1] -= a0 * b2
    _multiply(a0, b1, out=c[..., 2])
    c[..., 2] -= a1 * b0
    return c


class SplineBending:
    """Spline curvature operators for element lengths ``l`` and the end conditions (module docstring)."""

    def __init__(self, l: np.ndarray, clamped_a: bool = False, clamped_b: bool = False) -> None:
        l = np.asarray(l, dtype=float)
        n = l.size + 1
        self.n, self.clamped_a, self.clamped_b = n, bool(clamped_a), bool(clamped_b)
        S = np.zeros((3, n))                      # banded (1, 1): rows super, diag, sub
        lo, di, up = np.zeros(n), np.zeros(n), np.zeros(n)
        S[1, 1:-1] = (l[:-1] + l[1:]) / 3.0
        S[0, 2:] = l[1:] / 6.0                    # S[i, i+1] for interior i
        S[2, :-2] = l[:-1] / 6.0                  # S[i, i-1] for interior i
        lo[1:-1], di[1:-1], up[1:-1] = 1.0 / l[:-1], -(1.0 / l[:-1] + 1.0 / l[1:]), 1.0 / l[1:]
        if self.clamped_a:
            S[1, 0], S[0, 1] = l[0] / 3.0, l[0] / 6.0
            di[0], up[0] = -1.0 / l[0], 1.0 / l[0]
        else:
            S[1, 0], S[0, 1] = 1.0, 0.0
            S[2, 0] = 0.0                        # row 1's S[1, 0] stays: k_0 = 0 makes it inert
        if self.clamped_b:
            S[1, -1], S[2, -2] = l[-1] / 3.0, l[-1] / 6.0
            lo[-1], di[-1] = 1.0 / l[-1], -1.0 / l[-1]
        else:
            S[1, -1], S[2, -2] = 1.0, 0.0
        self._S = S
        self._lo, self._di, self._up = lo, di, up
        Dm = np.diag(di) + np.diag(lo[1:], -1) + np.diag(up[:-1], 1)
        self.B = solve_banded((1, 1), S, Dm)                     # k = B r + k_ends
        e0, eN = np.zeros(n), np.zeros(n)
        e0[0], eN[-1] = 1.0, 1.0
        self._s0 = solve_banded((1, 1), S, e0) if self.clamped_a else None
        self._sN = solve_banded((1, 1), S, eN) if self.clamped_b else None
        K = Dm.T @ self.B
        self.K = 0.5 * (K + K.T)                                 # dU/dr = EI (K r - f_ends)
        self._Sfull = np.diag(S[1]) + np.diag(S[0, 1:], 1) + np.diag(S[2, :-1], -1)

    def curvature(self, r: np.ndarray, t_a: np.ndarray | None = None,
                  t_b: np.ndarray | None = None) -> np.ndarray:
        """Node curvatures k = r'' (n, 3) [1/m] from node positions (n, 3) and clamped end tangents."""
        k = self.B @ r
        if self._s0 is not None:
            k -= np.outer(self._s0, t_a)
        if self._sN is not None:
            k += np.outer(self._sN, t_b)
        return k

    def force(self, k: np.ndarray) -> np.ndarray:
        """-D^T k (n, 3): bending node forces per unit EI [N / (N m^2)]."""
        out = self._di[:, None] * k
        out[1:] += self._up[:-1, None] * k[:-1]
        out[:-1] += self._lo[1:, None] * k[1:]
        return -out

    def energy(self, k: np.ndarray) -> float:
        """int |r''|^2 ds / 2 = k^T S k / 2 summed over x, y, z (bending energy per unit EI)."""
        return 0.5 * float(np.einsum("ia,ij,ja->", k, self._Sfull, k))


def rotate_about(v: np.ndarray, axis: np.ndarray, angle: float) -> np.ndarray:
    """Rodrigues rotation of v about the unit ``axis`` by ``angle`` [rad]:
    v cos a + (k x v) sin a + k (k . v)(1 - cos a)."""
    if v.ndim == 1 and axis.ndim == 1:
        return np.array(rotate3(v.tolist(), axis.tolist(), angle))
    c, s = math.cos(angle), math.sin(angle)
    return v * c + cross(axis, v) * s + axis * float(axis @ v) * (1.0 - c)


def rotate3(v: list, axis: list, angle: float) -> list:
    """``rotate_about`` of one vector in Python floats (lists of 3): the array expression's
    operations in its order, k . v summed from 0.0 left to right as numpy's dot of two 3-vectors
    sums it, so the same bits (IEEE doubles either way) without a dozen numpy calls on 3 numbers."""
    c, s = math.cos(angle), math.sin(angle)
    v0, v1, v2 = v
    a0, a1, a2 = axis
    kv, ck = ((0.0 + a0 * v0) + a1 * v1) + a2 * v2, 1.0 - c
    return [v0 * c + (a1 * v2 - a2 * v1) * s + a0 * kv * ck,
            v1 * c + (a2 * v0 - a0 * v2) * s + a1 * kv * ck,
            v2 * c + (a0 * v1 - a1 * v0) * s + a2 * kv * ck]


def transport(u: np.ndarray, t1: np.ndarray, t2: np.ndarray) -> np.ndarray:
    """Parallel transport of u (perpendicular to t1) to the plane perpendicular to t2 [BE08]:
    the rotation about t1 x t2 taking t1 to t2.  Works row-wise on (m, 3) arrays."""
    # np.add.reduce: np.sum's reduction without its wrapper
    c = _add(t1 * t2, axis=-1, keepdims=True)
    ut2 = _add(u * t2, axis=-1, keepdims=True)
    return u - ut2 / np.maximum(1.0 + c, 1e-12) * (t1 + t2)


def transport3(u: list, t1: list, t2: list) -> list:
    """``transport`` of one vector, in Python floats (lists of 3): its operations in its order,
    the sums of three products left to right as np.add.reduce sums a row, so the same bits."""
    f = ((u[0] * t2[0] + u[1] * t2[1]) + u[2] * t2[2]) / max(1.0 + ((t1[0] * t2[0] + t1[1] * t2[1]) + t1[2] * t2[2]),
                                                            1e-12)
    return [u[0] - f * (t1[0] + t2[0]), u[1] - f * (t1[1] + t2[1]), u[2] - f * (t1[2] + t2[2])]


def _signed_angle(a: np.ndarray, b: np.ndarray, axis: np.ndarray) -> np.ndarray:
    """Angle from a to b about ``axis`` (row-wise), in (-pi, pi]."""
    return np.arctan2(_add(cross(a, b) * axis, axis=-1), _add(a * b, axis=-1))


def _perpendicular(t: np.ndarray) -> np.ndarray:
    """A unit vector perpendicular to the unit t (projection of the least aligned world axis)."""
    a = _AXES[int(np.argmin(np.abs(t)))]
    u = a - (a @ t) * t
    return u / math.sqrt(float(u.dot(u)))      # np.linalg.norm's arithmetic


# lines of up to SMALL elements take the twist in Python floats (_twist_floats): below it numpy's
# per-call cost is most of the work; up to 8, numpy sums the beta_e left to right as they do
SMALL = 8


def _twist_floats(t: np.ndarray, ma: np.ndarray, mb: np.ndarray) -> float | None:
    """Twist._twist_arrays in Python floats for a few elements (t: N <= SMALL tangents, (N, 3)):
    each operation of the numpy code in its order, sums of three left to right as np.add.reduce
    and the BLAS dot sum them, math.atan2 for np.arctan2 (the C library's atan2 both), so the same
    bits where numpy's arctan2 is the C library's (no AVX-512 SVML); None where _references falls
    back to sequential transport (tangents in all directions)."""
    T = t.tolist()
    worst = [max(abs(r[k]) for r in T) for k in range(3)]
    best = min(range(3), key=worst.__getitem__)         # np.argmin: the first smallest
    if worst[best] > 0.98:
        return None
    d = []
    for r in T:     # the world axis e_best projected: e - (t . e) t; t @ e sums onto +0.0
        tb = r[best] + 0.0
        d0, d1, d2 = ((1.0 if k == best else 0.0) - tb * r[k] for k in range(3))
        nrm = math.sqrt((d0 * d0 + d1 * d1) + d2 * d2)
        d.append((d0 / nrm, d1 / nrm, d2 / nrm))

    def angle(a, b, x):        # _signed_angle of one row
        c0, c1, c2 = a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]
        return math.atan2((c0 * x[0] + c1 * x[1]) + c2 * x[2], (a[0] * b[0] + a[1] * b[1]) + a[2] * b[2])

    beta = None
    for e in range(len(T) - 1):
        u = transport3(d[e], T[e], T[e + 1])
        b = angle(u, d[e + 1], T[e + 1])
        beta = b if beta is None else beta + b
    alpha_a = angle(d[0], ma.tolist(), T[0])
    alpha_b = angle(d[-1], mb.tolist(), T[-1])
    return alpha_b + (0.0 if beta is None else beta) - alpha_a


class Twist:
    """Uniform twist of a line between two torsionally held ends (module docstring, [BU03, BE08])."""

    def __init__(self, tangents: np.ndarray) -> None:
        """Start torque-free: end references chosen so that Theta = 0 for the given element tangents."""
        t = np.asarray(tangents, dtype=float)
        self.m_a = _perpendicular(t[0])
        self.m_b = self._bishop_end(t, self.m_a)
        self.t_a, self.t_b = t[0].copy(), t[-1].copy()
        self.theta = 0.0
        self.theta = self.total_twist(t, 0.0, 0.0)

    def _bishop_end(self, t: np.ndarray, u0: np.ndarray) -> np.ndarray:
        """u0 (at element 0) transported along the chain to the last element."""
        d = self._references(t)
        beta = _signed_angle(transport(d[:-1], t[:-1], t[1:]), d[1:], t[1:])
        psi = _signed_angle(d[0:1], u0[None, :], t[0:1])[0] - float(_add(beta))
        return rotate_about(d[-1], t[-1], psi)

    @staticmethod
    def _references(t: np.ndarray) -> np.ndarray:
        """Per-element reference vectors: one world axis projected (the axis least aligned with any t)."""
        worst = np.maximum.reduce(np.abs(t), axis=0)        # np.max's reduction
        best = int(np.argmin(worst))
        if worst[best] > 0.98:   # tangents cover all directions: fall back to sequential transport
            d = np.empty_like(t)
            d[0] = _perpendicular(t[0])
            for e in range(1, t.shape[0]):
                d[e] = transport(d[e - 1][None, :], t[e - 1][None, :], t[e][None, :])[0]
                d[e] /= np.linalg.norm(d[e])
            return d
        a = _AXES[best]
        d = a - (t @ a)[:, None] * t
        return d / np.sqrt(_add(d * d, axis=1))[:, None]     # np.linalg.norm's arithmetic

    def total_twist(self, t: np.ndarray, phi_a: float, phi_b: float,
                    m_a: np.ndarray | None = None, m_b: np.ndarray | None = None) -> float:
        """Theta [rad] for element tangents t (N, 3) and end twists phi (module docstring),
        on the 2 pi branch nearest the last accepted value.  ``m_a``/``m_b``: the end fitting's
        material reference itself (a unit vector perpendicular to the end tangent, e.g. a body
        axis of the body the end is fixed to), instead of the carried reference turned by phi."""
        # the end references carried to the present end tangents as accept() will carry them, so
        # that Theta does not depend on when the last step ended
        ma = rotate_about(self._carry(self.m_a, self.t_a, t[0]), t[0], phi_a) if m_a is None else m_a
        mb = rotate_about(self._carry(self.m_b, self.t_b, t[-1]), t[-1], phi_b) if m_b is None else m_b
        th = _twist_floats(t, ma, mb) if t.shape[0] <= SMALL else None
        if th is None:
            th = self._twist_arrays(t, ma, mb)
        return th + 2.0 * math.pi * round((self.theta - th) / (2.0 * math.pi))

    def _twist_arrays(self, t: np.ndarray, ma: np.ndarray, mb: np.ndarray) -> float:
        """alpha_B + sum_e beta_e - alpha_A (module docstring) in numpy, row-wise."""
        d = self._references(t)
        # the beta_e and the two alphas in one row-wise evaluation (each row's value is its own)
        n = t.shape[0]
        a, b, x = np.empty((n + 1, 3)), np.empty((n + 1, 3)), np.empty((n + 1, 3))
        a[:-2], b[:-2], x[:-2] = transport(d[:-1], t[:-1], t[1:]), d[1:], t[1:]
        a[-2], b[-2], x[-2] = d[0], ma, t[0]
        a[-1], b[-1], x[-1] = d[-1], mb, t[-1]
        angles = _signed_angle(a, b, x)
        alpha_a, alpha_b = float(angles[-2]), float(angles[-1])
        return alpha_b + float(_add(angles[:-2])) - alpha_a

    def accept(self, t: np.ndarray, theta: float) -> None:
        """End of a step: remember Theta and carry the end references along the turned end tangents."""
        self.theta = float(theta)
        self.m_a = self._carry(self.m_a, self.t_a, t[0])
        self.m_b = self._carry(self.m_b, self.t_b, t[-1])
        self.t_a, self.t_b = t[0].copy(), t[-1].copy()

    @staticmethod
    def _carry(m: np.ndarray, t_old: np.ndarray, t_new: np.ndarray) -> np.ndarray:
        # time-parallel transport [BE08]: the end fitting does not spin about the line axis
        # when the axis turns; any spin comes through the twist input phi
        u = transport(m[None, :], t_old[None, :], t_new[None, :])[0]
        u -= (u @ t_new) * t_new
        n = math.sqrt(float(u.dot(u)))
        return u / n if n > 1e-9 else _perpendicular(t_new)

    def get_state(self) -> dict:
        return {"m_a": self.m_a.copy(), "m_b": self.m_b.copy(), "t_a": self.t_a.copy(),
                "t_b": self.t_b.copy(), "theta": self.theta}

    def set_state(self, s: dict) -> None:
        for k in ("m_a", "m_b", "t_a", "t_b"):
            setattr(self, k, np.array(s[k], dtype=float))
        self.theta = float(s["theta"])
