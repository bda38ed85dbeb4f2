"""Radiation (fluid-memory) forces of a ship: frequency-domain identification of the
Cummins retardation functions and their state-space realisation. Pure numpy/scipy.

Units SI; DOF order surge, sway, heave, roll, pitch, yaw (N, N m; m/s, rad/s); all
matrices about the coordinate origin of the input data.

Equations
---------
Cummins-Ogilvie equation (Cummins 1962; Ogilvie 1964; digest §1.3, [S2 (2-10)]):

    (M_RB + A_inf) nu_dot + B_inf nu + mu + G eta = tau,
    mu(t) = int_0^t K(t - t') nu(t') dt',   K(t) = (2/pi) int_0^inf (B(w) - B_inf) cos(w t) dw.

SIGN: mu is the fluid-memory term on the LEFT-hand side. The memory force acting on the
body is -mu (radiation force tau_R = -A_inf nu_dot - B_inf nu - mu, [S4 (73)-(75)]).

Ogilvie (1964) relations (digest §1.3):

    A(w) = A_inf - (1/w) int_0^inf K(t) sin(w t) dt,   B(w) = B_inf + int_0^inf K(t) cos(w t) dt
    =>  K(jw) = B(w) - B_inf + jw (A(w) - A_inf).                                     (O)

State-space form (digest §1.5, [S2 (2-22), (2-28)], [S4 (76)-(77)]):

    chi_dot = Ar chi + Br nu,   mu = Cr chi,   chi(0) = 0   (no feed-through, D = 0),

Ar = blkdiag(A_11, ..., A_ij, ...), one block per fitted entry; block (i, j) is driven
by nu_j (its Br rows sit in column j) and feeds mu_i (its Cr columns sit in row i).
Each block is a real modal realisation (1x1 blocks p, 2x2 blocks [[Re p, Im p],
[-Im p, Re p]]) with |b| = |c| per block (scaled for numerical accuracy).
B_inf is returned as ZEROS: K is fitted to B(w) itself, so the fit captures all the
potential damping (as [S2] does; potential damping vanishes at infinite frequency).

Identification (Perez & Fossen 2008, MIC 29(1) 1-19; Perez & Fossen 2009, MIC 30(1)
1-15; MSS FDI toolbox FDIRadMod.m / vessel2ss.m)
------------------------------------------------------------------------------------
Each fitted entry is approximated as [S2 (2-26)]

    H_ij(jw) := B_ij(w) + jw A_ij(w)  ~  jw A_inf,ij + K_ij(jw),
    K_ij(s) = P(s)/Q(s) = sum_k r_k/(s - p_k),   deg Q = n, deg P = n - 1,

with the Perez-Fossen constraints:
1. K(0) = 0 (P(0) = 0): -sum_k r_k/p_k = 0, a linear constraint on the residues imposed
   exactly (by elimination) in every least-squares step;
2. relative degree 1: the partial-fraction form is strictly proper, D = 0;
3. stability: unstable poles are reflected into the left half plane (FDIRadMod's
   IsStable); in the Gauss-Newton stage poles are parametrised as -exp(a) (real) or
   wn (-zeta +- j sqrt(1 - zeta^2)) with zeta >= 0.05 and 0.1 w_min <= |p| <= 2 w_max;
4. passivity, see below.

A_inf: estimated jointly with K (FDIRadMod with A_inf unknown, which fits
A_c(jw) = A(w) + B(w)/(jw) = A_inf + K(jw)/(jw)); A_inf,ij is the coefficient of the s
term above. If ``A_inf`` is given (3-D codes), jw A_inf moves to the data side.

Algorithm (deterministic): vector fitting (Gustavsen & Semlyen 1999, IEEE TPWRD 14(3)),
i.e. the Sanathanan-Koerner-type linearised iteration sigma(s) H(s) ~ s A_inf +
sum r_k/(s - p_k) with sigma = 1 + sum d_k/(s - p_k) and new poles = zeros of sigma,
from fixed log-spaced starting poles; then Gauss-Newton on the poles (bounded trust
region, residues and A_inf eliminated by linear least squares: variable projection,
Golub & Pereyra 1973, exact Jacobian). Perez & Fossen's "method 2/3" (iterative Levy /
Gauss-Newton on P, Q coefficients) solve the same problem in the monomial basis.

Weighting (``weighting="normalised"``, default): the cost is the sum of the squared
normalised errors e_A = (A_fit - A)/s_A and e_B = (B_fit - B)/s_B over the data, i.e.
weights 1/s_B on Re H and 1/(w s_A) on Im H, with

    s_X(i, j) = max( rms_w X_ij , 0.1 sqrt(rms_w X_ii rms_w X_jj) )

(own RMS, or 10 % of the diagonal scale for small couplings). This is the acceptance
metric itself. ``weighting="perez-fossen"`` weights the residual of A_c(jw) uniformly
(FDIRadMod), i.e. 1/(w s_A) on both parts.

Order (``order="auto"``): the smallest n in [2, max_order] whose normalised RMS errors of
A and B are both <= tol (default 3 %), else the best one (FDIRadMod raises the order
until R^2 >= 0.99). If the MIMO passivity enforcement then degrades an entry beyond
max(tol, its own error), the order of the entry whose increase helps most is raised
(greedy, repeated).

Passivity (``enforce_passivity=True``): K(s) is symmetric (symmetric data, entries
mirrored), so the Hermitian part of K(jw) is Re K(jw) = B_fit(w) - B_inf. Enforced:
(a) Re K_ii(jw) >= 0 per diagonal entry, and (b) lambda_min(D^-1/2 Re K(jw) D^-1/2) >= 0
per group of coupled DOFs (D = diag(max_w B_ii)), on a grid 0..10 rad/s plus w_min/100 ..
100 w_max (log) plus fine local grids at lightly damped poles, and for the w -> 0 and
w -> inf coefficient matrices (Re K ~ w^2 sum Re(r/p^3) and ~ -sum Re(r p)/w^2). Method:
residue perturbation with the poles fixed (Gustavsen & Semlyen 2001, IEEE TPWRS 16(1)):
the residues (and A_inf) are re-solved as least squares with linear inequality
constraints (exact, Lawson & Hanson LSI -> NNLS), the MIMO constraint linearised as
v^T Re K(jw) v >= 1e-4 tr(Re K(jw))/n_dof with v the eigenvectors of negative
eigenvalues, iterated, then verified on a 10x finer grid (lambda_min >= -1e-9; else a
RuntimeWarning). For non-symmetric data (forward speed) only (a).

Wild points (``exclude="auto"``): FDIRadMod lets the user delete wild points by hand
(EditAB.m). Here the lowest and the highest frequency are screened: a point is dropped
if, over the fitted entries, the median of (leave-one-out prediction error at the point
/ RMS error at the other points) of an order-4 fit exceeds 10 and the median
leave-one-out error itself exceeds 5 % (normalised as below). For the MSS VERES files
supply.mat and s175.mat this drops w = 0.105 rad/s, where A(w) in sway, roll and yaw is
about half of A(0.21 rad/s) although B ~ 0 there; by the Ogilvie (Kramers-Kronig)
relations A can only change by O(w^2 int B/w^4) where B vanishes, so no causal model
passes through that point and the others.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
from scipy import linalg, optimize

N_DOF = 6
_WILDPOINT_FACTOR = 10.0
_WILDPOINT_ERROR = 0.05
_SMALL_ENTRY = 0.1  # coupling entries are normalised by at least 10 % of the diagonal scale


# --------------------------------------------------------------------------------------
# Result types
# --------------------------------------------------------------------------------------
@dataclass
class EntryFit:
    """One retardation transfer function K_ij(s) = P(s)/Q(s) (force i due to velocity j).

    deg P = deg Q - 1 (relative degree 1), P(0) = 0 (to rounding), Q monic and Hurwitz.
    ``poles``/``residues`` give the same function as K_ij(s) = sum r_k/(s - p_k) (complex,
    conjugate pairs included). ``err_A``/``err_B`` are the normalised RMS reconstruction
    errors over the fitted frequencies (see module docstring).
    """

    i: int
    j: int
    num: np.ndarray  # P coefficients, highest power first, length order
    den: np.ndarray  # Q coefficients, highest power first, length order + 1, den[0] = 1
    order: int
    poles: np.ndarray = field(default_factory=lambda: np.zeros(0, complex))
    residues: np.ndarray = field(default_factory=lambda: np.zeros(0, complex))
    err_A: float = float("nan")
    err_B: float = float("nan")


@dataclass
class RadiationModel:
    """Identified radiation model, about the coordinate origin of the input data.

    Cummins-Ogilvie form: (M_RB + A_inf) nu_dot + B_inf nu + mu + G eta = tau, with
    chi_dot = Ar chi + Br nu and mu = Cr chi. mu is the fluid-memory term on the
    left-hand side; the fluid-memory force on the body is -mu. B_inf = 0 (the fit
    captures all potential damping).
    """

    A_inf: np.ndarray  # (6, 6) [kg, kg m, kg m2]
    B_inf: np.ndarray  # (6, 6) zeros
    Ar: np.ndarray  # (n, n)
    Br: np.ndarray  # (n, 6)
    Cr: np.ndarray  # (6, n)
    entries: list[EntryFit]
    omega_fit: np.ndarray  # (Nw,) frequencies used by the fit [rad/s]
    omega_excluded: np.ndarray = field(default_factory=lambda: np.zeros(0))  # wild points

    @property
    def state_dim(self) -> int:
        """Number of radiation states n (sum of the entry orders)."""
        return int(self.Ar.shape[0])

    def _modal(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lam, V = np.linalg.eig(self.Ar)
        return lam, self.Cr @ V, np.linalg.solve(V, self.Br)

    def K(self, omega: np.ndarray) -> np.ndarray:
        """Fitted K(jw) = Cr (jw I - Ar)^-1 Br, complex (6, 6, Nw)."""
        w = np.atleast_1d(np.asarray(omega, float))
        if self.state_dim == 0:
            return np.zeros((N_DOF, N_DOF, w.size), complex)
        lam, CV, VB = self._modal()
        G = 1.0 / (1j * w[None, :] - lam[:, None])
        return np.einsum("ik,kw,kj->ijw", CV, G, VB)

    def added_mass(self, omega: np.ndarray) -> np.ndarray:
        """A(w) = A_inf + Im K(jw)/w (Ogilvie (O)), (6, 6, Nw); w > 0."""
        w = np.atleast_1d(np.asarray(omega, float))
        return self.A_inf[:, :, None] + self.K(w).imag / w

    def damping(self, omega: np.ndarray) -> np.ndarray:
        """B(w) = B_inf + Re K(jw) (Ogilvie (O)), (6, 6, Nw)."""
        w = np.atleast_1d(np.asarray(omega, float))
        return self.B_inf[:, :, None] + self.K(w).real

    def impulse_response(self, t: np.ndarray) -> np.ndarray:
        """Retardation function K(t) = Cr exp(Ar t) Br, (6, 6, Nt), t >= 0 [s]."""
        t = np.atleast_1d(np.asarray(t, float))
        if self.state_dim == 0:
            return np.zeros((N_DOF, N_DOF, t.size))
        lam, CV, VB = self._modal()
        return np.einsum("ik,kt,kj->ijt", CV, np.exp(lam[:, None] * t[None, :]), VB).real

    def derivative(self, chi: np.ndarray, nu: np.ndarray) -> np.ndarray:
        """chi_dot = Ar chi + Br nu (nu: body velocity at the data origin, (6,))."""
        return self.Ar @ chi + self.Br @ nu

    def memory_force(self, chi: np.ndarray) -> np.ndarray:
        """mu = Cr chi, the left-hand-side memory term (force on the body is -mu)."""
        return self.Cr @ chi


# --------------------------------------------------------------------------------------
# Partial-fraction basis and realisation (poles stored as a "half" list: real poles and
# the upper member of each conjugate pair)
# --------------------------------------------------------------------------------------
def _basis(s: np.ndarray, ph: Sequence[complex]) -> np.ndarray:
    """Real-parameter basis: K(s) = Phi(s) x; a pair p gets the two columns
    1/(s-p) + 1/(s-p*) and j/(s-p) - j/(s-p*) (residue r = x_a + j x_b at p)."""
    cols = []
    for p in ph:
        if p.imag == 0.0:
            cols.append(1.0 / (s - p.real))
        else:
            a, b = 1.0 / (s - p), 1.0 / (s - np.conj(p))
            cols += [a + b, 1j * (a - b)]
    return np.stack(cols, axis=1)


def _nstates(ph: Sequence[complex]) -> int:
    return sum(1 if p.imag == 0.0 else 2 for p in ph)


def _blocks(ph: Sequence[complex]) -> tuple[np.ndarray, np.ndarray]:
    """(Ap, bp) with c (sI - Ap)^-1 bp = Phi(s) c for any real parameter vector c."""
    n = _nstates(ph)
    Ap, bp, k = np.zeros((n, n)), np.zeros(n), 0
    for p in ph:
        if p.imag == 0.0:
            Ap[k, k], bp[k] = p.real, 1.0
            k += 1
        else:
            Ap[k:k + 2, k:k + 2] = [[p.real, p.imag], [-p.imag, p.real]]
            bp[k] = 2.0
            k += 2
    return Ap, bp


def _complex_residues(ph: Sequence[complex], x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    poles, res, k = [], [], 0
    for p in ph:
        if p.imag == 0.0:
            poles.append(complex(p.real, 0.0))
            res.append(complex(x[k], 0.0))
            k += 1
        else:
            r = complex(x[k], x[k + 1])
            poles += [p, np.conj(p)]
            res += [r, np.conj(r)]
            k += 2
    return np.array(poles, complex), np.array(res, complex)


def _tf(poles: np.ndarray, res: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P/Q coefficients (highest power first) of sum r_k/(s - p_k)."""
    den = np.real(np.poly(poles))
    num = np.zeros(len(poles), complex)
    for k in range(len(poles)):
        num = num + res[k] * np.poly(np.delete(poles, k))
    return np.real(num), den


def _realise(ph: Sequence[complex], x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Ar, br, cr) of K(s) = cr (sI - Ar)^-1 br in real modal form (1x1 blocks p, 2x2
    blocks [[s, w], [-w, s]]), each block scaled so that |br_block| = |cr_block|."""
    Ap, bp = _blocks(ph)
    c = np.array(x, float).copy()
    b = bp.copy()
    k = 0
    for p in ph:
        m = 1 if p.imag == 0.0 else 2
        nb, nc = np.linalg.norm(b[k:k + m]), np.linalg.norm(c[k:k + m])
        if nc > 0.0:
            t = np.sqrt(nb / nc)  # states scaled by 1/t: b -> b/t, c -> c t
            b[k:k + m] /= t
            c[k:k + m] *= t
        k += m
    return Ap, b, c


# --------------------------------------------------------------------------------------
# Linear least squares with the K(0) = 0 constraint
# --------------------------------------------------------------------------------------
def _eliminator(g: np.ndarray, nvar: int) -> np.ndarray:
    """T (nvar x nvar-1) with x = T z satisfying g . x[:len(g)] = 0."""
    m = int(np.argmax(np.abs(g)))
    T = np.zeros((nvar, nvar - 1))
    cols = [k for k in range(nvar) if k != m]
    for col, k in enumerate(cols):
        T[k, col] = 1.0
        if k < len(g):
            T[m, col] = -g[k] / g[m]
    return T


def _lstsq(M: np.ndarray, y: np.ndarray) -> np.ndarray:
    sc = np.linalg.norm(M, axis=0)
    sc[sc == 0.0] = 1.0
    return np.linalg.lstsq(M / sc, y, rcond=None)[0] / sc


def _stack(Z: np.ndarray, wr: np.ndarray, wi: np.ndarray) -> np.ndarray:
    if Z.ndim == 1:
        return np.concatenate([Z.real * wr, Z.imag * wi])
    return np.vstack([Z.real * wr[:, None], Z.imag * wi[:, None]])


@dataclass
class _Problem:
    """Data of one entry: H = B + jw A (or B + jw (A - A_inf) if A_inf is given)."""

    w: np.ndarray
    a: np.ndarray
    b: np.ndarray
    sA: float
    sB: float
    wr: np.ndarray
    wi: np.ndarray
    ainf: float | None
    diagonal: bool

    @property
    def y(self) -> np.ndarray:
        if self.ainf is None:
            return self.b + 1j * self.w * self.a
        return self.b + 1j * self.w * (self.a - self.ainf)

    def design(self, ph: Sequence[complex]) -> tuple[np.ndarray, np.ndarray]:
        """Weighted real design matrix M (columns: residues [, A_inf]) and K(0) row g."""
        s = 1j * self.w
        Phi = _basis(s, ph)
        cols = Phi if self.ainf is not None else np.hstack([Phi, s[:, None]])
        g = _basis(np.zeros(1, complex), ph)[0].real
        return _stack(cols, self.wr, self.wi), g

    def solve(self, ph: Sequence[complex]) -> tuple[np.ndarray, float]:
        M, g = self.design(ph)
        T = _eliminator(g, M.shape[1])
        x = T @ _lstsq(M @ T, _stack(self.y, self.wr, self.wi))
        n = _nstates(ph)
        e = float(x[n]) if self.ainf is None else float(self.ainf)
        return x[:n], e

    def residual(self, ph: Sequence[complex], x: np.ndarray, e: float) -> np.ndarray:
        K = _basis(1j * self.w, ph) @ x
        return np.concatenate([(K.real - self.b) / self.sB, (e + K.imag / self.w - self.a) / self.sA])

    def errors(self, ph: Sequence[complex], x: np.ndarray, e: float) -> tuple[float, float]:
        r = self.residual(ph, x, e)
        N = self.w.size
        return float(np.sqrt(np.mean(r[N:] ** 2))), float(np.sqrt(np.mean(r[:N] ** 2)))


# --------------------------------------------------------------------------------------
# Pole identification: vector fitting + Gauss-Newton (variable projection)
# --------------------------------------------------------------------------------------
def _start_poles(n: int, w0: float, w1: float) -> list[complex]:
    """Deterministic starting poles: n//2 pairs -0.3 beta +- j beta, beta log-spaced over
    the data band, plus one real pole -sqrt(w0 w1) if n is odd."""
    npair = n // 2
    beta = np.geomspace(w0, w1, npair) if npair > 1 else np.array([np.sqrt(w0 * w1)] * npair)
    ph = [complex(-0.3 * bb, bb) for bb in beta]
    if n % 2:
        ph.append(complex(-np.sqrt(w0 * w1), 0.0))
    return ph


def _clean_poles(z: np.ndarray) -> list[complex]:
    """Reflect unstable poles (Re p -> -|Re p|), keep real poles and Im > 0 pair members."""
    z = np.where(z.real > 0.0, -z.real + 1j * z.imag, z)
    z = np.where(z.real == 0.0, -1e-6 * np.abs(z) + 1j * z.imag, z)
    ph = [complex(p.real, 0.0) for p in z if p.imag == 0.0]
    ph += [complex(p) for p in z if p.imag > 0.0]
    return sorted(ph, key=lambda p: (abs(p), p.imag))


def _vector_fit(pb: _Problem, n: int, iters: int = 20) -> list[complex]:
    ph = _start_poles(n, pb.w[0], pb.w[-1])
    y = pb.y
    yr = _stack(y, pb.wr, pb.wi)
    for _ in range(iters):
        M, g = pb.design(ph)
        Phi = _basis(1j * pb.w, ph)
        Md = _stack(-y[:, None] * Phi, pb.wr, pb.wi)
        Mall = np.hstack([M, Md])
        T = _eliminator(g, Mall.shape[1])
        xall = T @ _lstsq(Mall @ T, yr)
        d = xall[M.shape[1]:]
        Ap, bp = _blocks(ph)
        new = _clean_poles(np.linalg.eigvals(Ap - np.outer(bp, d)))
        converged = len(new) == len(ph) and np.allclose(new, ph, rtol=1e-10, atol=0.0)
        ph = new
        if converged:
            break
    return ph


GN_MAX_NFEV = 20
_ZETA_MIN = 0.05  # smallest relative damping of a fitted pole pair
_W_LO, _W_HI = 0.1, 2.0  # pole magnitudes are kept within [0.1 w_min, 2 w_max]


def _to_theta(ph: Sequence[complex]) -> np.ndarray:
    """Pair p = wn (-zeta + j sqrt(1 - zeta^2)) -> (log wn, zeta); real p -> log(-p)."""
    th = []
    for p in ph:
        if p.imag != 0.0:
            th += [np.log(abs(p)), -p.real / abs(p)]
        else:
            th.append(np.log(-p.real))
    return np.array(th)


def _from_theta(th: np.ndarray, kinds: Sequence[bool]) -> list[complex]:
    ph, k = [], 0
    for is_pair in kinds:
        if is_pair:
            wn, z = np.exp(th[k]), th[k + 1]
            ph.append(complex(-wn * z, wn * np.sqrt(max(1.0 - z * z, 0.0))))
            k += 2
        else:
            ph.append(complex(-np.exp(th[k]), 0.0))
            k += 1
    return ph


def _dbasis(s: np.ndarray, ph: Sequence[complex]) -> list[tuple[int, np.ndarray]]:
    """d Phi / d theta for each pole parameter (theta as in ``_to_theta``): a list of
    (first column, derivative of that pole's 1 or 2 columns)."""
    out, col = [], 0
    for p in ph:
        if p.imag == 0.0:  # theta = log(-p): dp/dtheta = p
            out.append((col, (p.real / (s - p.real) ** 2)[:, None]))
            col += 1
        else:
            wn, z = abs(p), -p.real / abs(p)
            for dp in (p, wn * complex(-1.0, -z / np.sqrt(max(1.0 - z * z, 1e-12)))):
                u, v = dp / (s - p) ** 2, np.conj(dp) / (s - np.conj(p)) ** 2
                out.append((col, np.stack([u + v, 1j * (u - v)], axis=1)))
            col += 2
    return out


def _gauss_newton(pb: _Problem, ph: list[complex]) -> list[complex]:
    """Gauss-Newton (trust-region reflective, bounded) on the poles, with the residues
    and A_inf eliminated by the K(0) = 0 constrained linear least squares (variable
    projection, Golub & Pereyra 1973, with their exact Jacobian). M~ = M T is the design
    matrix with the constraint eliminated. Bounds: zeta in [_ZETA_MIN, 0.999],
    |p| in [_W_LO w_min, _W_HI w_max]."""
    kinds = [p.imag != 0.0 for p in ph]
    lo_w, hi_w = np.log(_W_LO * pb.w[0]), np.log(_W_HI * pb.w[-1])
    lo, hi = [], []
    for is_pair in kinds:
        lo += [lo_w, _ZETA_MIN] if is_pair else [lo_w]
        hi += [hi_w, 0.999] if is_pair else [hi_w]
    lo, hi = np.array(lo), np.array(hi)
    th0 = np.clip(_to_theta(ph), lo + 1e-9, hi - 1e-9)
    s = 1j * pb.w
    y = _stack(pb.y, pb.wr, pb.wi)
    cache: dict[bytes, tuple] = {}

    def evaluate(th: np.ndarray) -> tuple:
        key = th.tobytes()
        if key not in cache:
            q = _from_theta(th, kinds)
            M, g = pb.design(q)
            T = _eliminator(g, M.shape[1])
            MT = M @ T
            sc = np.linalg.norm(MT, axis=0)
            sc[sc == 0.0] = 1.0
            Q, Rq = np.linalg.qr(MT / sc)
            z = linalg.solve_triangular(Rq, Q.T @ y) / sc
            cache.clear()
            cache[key] = (q, M, g, T, Q, Rq, sc, z, MT @ z - y)
        return cache[key]

    def fun(th: np.ndarray) -> np.ndarray:
        return evaluate(th)[-1]

    def jac(th: np.ndarray) -> np.ndarray:
        """Golub-Pereyra: dr = P_perp dM~ z - (M~^+)^T dM~^T r, M~ = M T."""
        q, M, g, T, Q, Rq, sc, z, r = evaluate(th)
        x = T @ z
        m = int(np.argmax(np.abs(g)))
        others = [k for k in range(M.shape[1]) if k != m]
        dPhi, dg = _dbasis(s, q), _dbasis(np.zeros(1, complex), q)
        J = np.empty((y.size, th.size))
        for k, ((c0, dP), (_, dG)) in enumerate(zip(dPhi, dg)):
            nc = dP.shape[1]
            dM = _stack(dP, pb.wr, pb.wi)  # derivative of columns c0 .. c0+nc of M
            dgk = np.zeros(M.shape[1])
            dgk[c0:c0 + nc] = dG.real[0]
            # x_m = -(g_-m . x_-m)/g_m  =>  dT[m, :] (row m of dT, columns = others)
            dTm = np.array([-(dgk[c] * g[m] - (g[c] if c < g.size else 0.0) * dgk[m]) / g[m] ** 2
                            if c < g.size else 0.0 for c in others])
            v = dM @ x[c0:c0 + nc] + M[:, m] * (dTm @ z)
            v = v - Q @ (Q.T @ v)
            u = T[c0:c0 + nc].T @ (dM.T @ r) + dTm * (M[:, m] @ r)
            J[:, k] = v - Q @ linalg.solve_triangular(Rq, u / sc, trans="T")
        return J

    sol = optimize.least_squares(fun, th0, jac=jac, bounds=(lo, hi), method="trf",
                                 x_scale=1.0, xtol=1e-8, ftol=1e-8,
                                 max_nfev=GN_MAX_NFEV * (th0.size + 1))
    return _from_theta(sol.x, kinds)


# --------------------------------------------------------------------------------------
# Passivity (residue perturbation with the poles fixed)
# --------------------------------------------------------------------------------------
NLIN, NLOG = 201, 400
_PASSIVITY_TOL = 1e-9  # accepted lambda_min of D^-1/2 Re K D^-1/2 (D from the data)
_PASSIVITY_MARGIN = 1e-4  # constrained: lambda_min >= 1e-4 mean(diag) at that frequency


def passivity_grid(omega: np.ndarray) -> np.ndarray:
    """Frequencies [rad/s] on which passivity is enforced: 0..10 rad/s (NLIN points) and a
    log grid w_min/100 .. 100 w_max (NLOG points); the asymptotes are imposed separately."""
    w = np.asarray(omega, float)
    return np.unique(np.concatenate([np.linspace(0.0, 10.0, NLIN)[1:],
                                     np.geomspace(w.min() / 100.0, 100.0 * w.max(), NLOG)]))


def _local_grid(ph: Sequence[complex], npts: int = 121) -> np.ndarray:
    """Extra grid points around lightly damped poles (|Re p| < |p|/2): npts points over
    Im p +- 6 |Re p| (sharp features between grid points would escape the check)."""
    out = [np.zeros(0)]
    for p in ph:
        if p.imag != 0.0 and -p.real < 0.5 * abs(p):
            out.append(np.linspace(max(p.imag + 6.0 * p.real, 1e-6), p.imag - 6.0 * p.real, npts))
    return np.concatenate(out)


def _re_rows(ph: Sequence[complex], wg: np.ndarray) -> np.ndarray:
    """Rows R with [Re K(j wg); lim Re K/w^2 (w->0); lim w^2 Re K (w->inf)] = R x.
    Near 0: Re K(jw) = w^2 sum Re(r/p^3) + O(w^4) (K(0) = 0); near inf: Re K(jw) =
    -sum Re(r p)/w^2 + O(w^-4) (complex r, p over all poles)."""
    R = _basis(1j * wg, ph).real
    low, high = [], []
    for p in ph:
        if p.imag == 0.0:
            low.append(1.0 / p.real ** 3)
            high.append(-p.real)
        else:  # residue r = xa + j xb at p and r* at p*: 2 Re(r f(p))
            f3 = 1.0 / p ** 3
            low += [2.0 * f3.real, -2.0 * f3.imag]
            high += [-2.0 * p.real, 2.0 * p.imag]
    return np.vstack([R, low, high])


def _lsi(E: np.ndarray, f: np.ndarray, G: np.ndarray, h: np.ndarray | None = None) -> np.ndarray:
    """min ||E x - f|| subject to G x >= h (default 0): exact, via the Lawson & Hanson
    (1974, Solving Least Squares Problems, ch. 23) reduction LSI -> LDP -> NNLS."""
    h = np.zeros(G.shape[0]) if h is None else h
    sc = np.linalg.norm(E, axis=0)
    sc[sc == 0.0] = 1.0
    U, S, Vt = np.linalg.svd(E / sc, full_matrices=False)
    k = S > S[0] * 1e-13
    U, S, Vt = U[:, k], S[k], Vt[k]
    x0 = Vt.T @ ((U.T @ f) / S)  # unconstrained optimum (scaled variables)
    W = (G / sc) @ Vt.T / S
    hh = h - (G / sc) @ x0
    rn = np.maximum(np.linalg.norm(W, axis=1), 1e-300)
    W, hh = W / rn[:, None], hh / rn
    if hh.max() <= 0.0:
        return x0 / sc
    # LDP: min ||z|| s.t. W z >= hh  <=>  NNLS  min ||[W^T; hh^T] u - e_{n+1}||, u >= 0
    Ep = np.vstack([W.T, hh[None, :]])
    fp = np.zeros(Ep.shape[0])
    fp[-1] = 1.0
    u = optimize.nnls(Ep, fp, maxiter=50 * Ep.shape[1])[0]
    r = Ep @ u - fp
    if abs(r[-1]) < 1e-14:
        raise RuntimeError("passivity constraints are infeasible")
    z = -r[:-1] / r[-1]
    return (x0 + Vt.T @ (z / S)) / sc


def _enforce_siso(pb: _Problem, ph: list[complex], x: np.ndarray, e: float,
                  wg: np.ndarray) -> tuple[np.ndarray, float]:
    """Re K_ii(jw) >= 0 on wg and at both asymptotes: residues (and A_inf) re-solved
    with the poles fixed, min weighted LS error subject to the linear constraints."""
    R = _re_rows(ph, np.unique(np.concatenate([wg, _local_grid(ph)])))
    n = _nstates(ph)
    if (R[:-2] @ x).min() >= -_PASSIVITY_TOL * pb.sB and (R[-2:] @ x).min() >= 0.0:
        return x, e
    M, g = pb.design(ph)
    T = _eliminator(g, M.shape[1])
    G = np.hstack([R, np.zeros((R.shape[0], M.shape[1] - n))]) @ T
    z = _lsi(M @ T, _stack(pb.y, pb.wr, pb.wi), G)
    xall = T @ z
    return xall[:n], (float(xall[n]) if pb.ainf is None else e)


def _min_eig(results: dict, d: np.ndarray, wv: np.ndarray) -> np.ndarray:
    """lambda_min(D^-1/2 Re K(jw) D^-1/2) at wv for the entries in ``results``."""
    dofs = sorted({q for kk in results for q in kk})
    loc = {q: k for k, q in enumerate(dofs)}
    ReK = np.zeros((wv.size, len(dofs), len(dofs)))
    for kk, (pb, r) in results.items():
        v = (_basis(1j * wv, r.ph).real @ r.x) / (d[kk[0]] * d[kk[1]])
        ReK[:, loc[kk[0]], loc[kk[1]]] = v
        ReK[:, loc[kk[1]], loc[kk[0]]] = v
    return np.linalg.eigvalsh(ReK)[:, 0]


def _enforce_mimo(results: dict, d: np.ndarray, wg: np.ndarray, w_data: np.ndarray) -> dict:
    """Passivity of a group of coupled entries: ``_enforce_group`` on wg, then a check
    on a 10x finer verification grid; violating frequencies found there are added to wg
    and the enforcement repeated (at most 4 times)."""
    wv = np.concatenate([np.linspace(0.0, 10.0, 4001)[1:],
                         np.geomspace(w_data.min() / 100.0, 100.0 * w_data.max(), 10 * NLOG)])
    wv = np.unique(np.concatenate([wv] + [_local_grid(r.ph, 1001) for (_, r) in results.values()]))
    for _ in range(4):
        results = _enforce_group(results, d, wg)
        lam = _min_eig(results, d, wv)
        bad = lam < -_PASSIVITY_TOL
        if not bad.any():
            return results
        wg = np.unique(np.concatenate([wg, wv[bad]]))
    warnings.warn(f"radiation fit: passivity not fully enforced for {sorted(results)} "
                  f"(min scaled eigenvalue {lam.min():.3g})", RuntimeWarning, stacklevel=3)
    return results


def _enforce_group(results: dict, d: np.ndarray, wg: np.ndarray, max_iter: int = 30) -> dict:
    """Joint residue perturbation (poles fixed) of all fitted entries i <= j so that
    lambda_min(D^-1/2 Re K(jw) D^-1/2) >= 0 on wg (plus the local grids around lightly
    damped poles) and for both asymptotic coefficient matrices, D = diag(d^2). The
    constraint lambda_min >= 0 is linearised as v^T Re K(jw) v >= 0 with v the
    eigenvector(s) of the negative eigenvalues; rows are accumulated until no violation
    is left (this also keeps Re K_ii >= 0). Returns the updated copy of ``results``."""
    results = dict(results)
    keys = list(results)
    dofs = sorted({q for kk in keys for q in kk})
    loc = {q: k for k, q in enumerate(dofs)}
    nd = len(dofs)
    wg = np.unique(np.concatenate([wg] + [_local_grid(results[kk][1].ph) for kk in keys]))
    rows = {kk: _re_rows(results[kk][1].ph, wg) / (d[kk[0]] * d[kk[1]]) for kk in keys}
    nf = wg.size + 2

    def matrices(xs):
        ReK = np.zeros((nf, nd, nd))
        for kk in keys:
            v = rows[kk] @ xs[kk]
            ReK[:, loc[kk[0]], loc[kk[1]]] = v
            ReK[:, loc[kk[1]], loc[kk[0]]] = v
        return ReK

    def violations(ReK):
        lam, vec = np.linalg.eigh(ReK)
        ref = np.ones(nf)
        diag = np.abs(np.diagonal(ReK, axis1=1, axis2=2)).max(axis=1)
        ref[-2:] = np.maximum(diag[-2:], 1e-300)  # asymptotic matrices: relative tolerance
        return lam, vec, lam < -_PASSIVITY_TOL * ref[:, None]

    xs = {kk: results[kk][1].x for kk in keys}
    lam, vec, bad = violations(matrices(xs))
    if not bad.any():
        return results
    Ms, ys, Ts = [], [], []
    for kk in keys:
        pb, r = results[kk]
        M, g = pb.design(r.ph)
        Ms.append(M)
        ys.append(_stack(pb.y, pb.wr, pb.wi))
        Ts.append(_eliminator(g, M.shape[1]))
    Eb = linalg.block_diag(*[M @ T for M, T in zip(Ms, Ts)])
    yb = np.concatenate(ys)
    # x_e = S_e z (the residue part of entry e as a function of all variables z)
    S, c0 = {}, 0
    for kk, T in zip(keys, Ts):
        nx = _nstates(results[kk][1].ph)
        Se = np.zeros((nx, Eb.shape[1]))
        Se[:, c0:c0 + T.shape[1]] = T[:nx]
        S[kk] = Se
        c0 += T.shape[1]
    cons: list[np.ndarray] = []
    marg: list[np.ndarray] = []
    ReK = matrices(xs)
    for _ in range(max_iter):
        fidx, eidx = np.nonzero(bad)
        order_ = np.argsort(lam[fidx, eidx])[:60]
        new, h = [], []
        for f_i, e_i in zip(fidx[order_], eidx[order_]):
            v = vec[f_i, :, e_i]
            row = sum((1.0 if kk[0] == kk[1] else 2.0) * v[loc[kk[0]]] * v[loc[kk[1]]]
                      * (rows[kk][f_i] @ S[kk]) for kk in keys)
            new.append(row)
            # small relative margin so that the constraint is not met with equality
            # (which would leave tiny violations between grid points)
            h.append(_PASSIVITY_MARGIN * max(np.trace(ReK[f_i]) / nd, 0.0))
        cons.append(np.array(new))
        marg.append(np.array(h))
        try:
            z = _lsi(Eb, yb, np.vstack(cons), np.concatenate(marg))
        except RuntimeError:  # margins infeasible: plain lambda_min >= 0
            z = _lsi(Eb, yb, np.vstack(cons))
        xs = {kk: S[kk] @ z for kk in keys}
        ReK = matrices(xs)
        lam, vec, bad = violations(ReK)
        if not bad.any():
            break
    c0 = 0
    for kk, T in zip(keys, Ts):
        pb, r = results[kk]
        seg = T @ z[c0:c0 + T.shape[1]]
        c0 += T.shape[1]
        nx = _nstates(r.ph)
        e = float(seg[nx]) if pb.ainf is None else r.e
        eA, eB = pb.errors(r.ph, seg[:nx], e)
        results[kk] = (pb, _EntryResult(r.ph, seg[:nx], e, eA, eB))
    return results


# --------------------------------------------------------------------------------------
# One entry
# --------------------------------------------------------------------------------------
@dataclass
class _EntryResult:
    ph: list[complex]
    x: np.ndarray
    e: float
    err_A: float
    err_B: float


def _fit_entry(pb: _Problem, n: int, passive: bool, wg: np.ndarray) -> _EntryResult:
    """Order-n fit of one entry: vector fitting, Gauss-Newton, SISO passivity."""
    ph = _gauss_newton(pb, _vector_fit(pb, n))
    x, e = pb.solve(ph)
    if passive and pb.diagonal:
        x, e = _enforce_siso(pb, ph, x, e, wg)
    eA, eB = pb.errors(ph, x, e)
    return _EntryResult(ph, x, e, eA, eB)


# --------------------------------------------------------------------------------------
# Data handling
# --------------------------------------------------------------------------------------
def _rms(v: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.asarray(v, float) ** 2)))


def entry_scales(A: np.ndarray, B: np.ndarray, i: int, j: int) -> tuple[float, float]:
    """Normalisation (s_A, s_B) of entry (i, j): max(rms X_ij, 0.1 sqrt(rms X_ii rms X_jj))."""
    sA = max(_rms(A[i, j]), _SMALL_ENTRY * np.sqrt(_rms(A[i, i]) * _rms(A[j, j])))
    sB = max(_rms(B[i, j]), _SMALL_ENTRY * np.sqrt(_rms(B[i, i]) * _rms(B[j, j])))
    return sA, sB


def significant_entries(B: np.ndarray, rel_tol: float = 1e-2) -> list[tuple[int, int]]:
    """Entries (i <= j) with max|B_ij| > rel_tol sqrt(max|B_ii| max|B_jj|) (and B_ii, B_jj
    not zero). For a port-starboard symmetric ship these are the diagonal and the
    heave-pitch and sway-roll-yaw couplings."""
    Bmax = np.abs(B).max(axis=-1)
    out = []
    for i in range(N_DOF):
        for j in range(i, N_DOF):
            ref = np.sqrt(Bmax[i, i] * Bmax[j, j])
            if ref > 0.0 and Bmax[i, j] > rel_tol * ref:
                out.append((i, j))
    return out


def _problem(w, A, B, i, j, ainf, weighting, scales_from) -> _Problem:
    sA, sB = entry_scales(*scales_from, i, j)
    if weighting == "normalised":
        wr, wi = np.full(w.size, 1.0 / sB), 1.0 / (w * sA)
    elif weighting == "perez-fossen":
        wr = wi = 1.0 / (w * sA)
    else:
        raise ValueError(f"unknown weighting {weighting!r}")
    return _Problem(w, A[i, j], B[i, j], sA, sB, wr, wi, ainf, i == j)


def _screen(w, A, B, pairs, weighting) -> list[int]:
    """Indices (into w) of wild end points: for the lowest and the highest frequency,
    fit every entry at order 4 without the point (vector fitting only) and compare the
    normalised error at the point, r_k, with the RMS error at the other points; the point
    is dropped if median(r_k / rms_others) > 10 and median(r_k) > 0.05."""
    drop = []
    for k in (0, w.size - 1):
        keep = np.ones(w.size, bool)
        keep[drop] = False
        keep[k] = False
        ratios, errs = [], []
        for (i, j) in pairs:
            sub = (A[..., keep], B[..., keep])
            pb = _problem(w[keep], *sub, i, j, None, weighting, sub)
            ph = _vector_fit(pb, 4)
            x, e = pb.solve(ph)
            full = _problem(w, A, B, i, j, None, weighting, sub)
            r = full.residual(ph, x, e).reshape(2, -1)
            r = np.hypot(r[0], r[1])
            ratios.append(r[k] / max(np.sqrt(np.mean(r[keep] ** 2)), 1e-300))
            errs.append(r[k])
        if np.median(ratios) > _WILDPOINT_FACTOR and np.median(errs) > _WILDPOINT_ERROR:
            drop.append(k)
    return drop


def _worst(r: "_EntryResult") -> float:
    return max(r.err_A, r.err_B)


def _components(pairs: Sequence[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """Groups of entries coupled through shared DOFs (e.g. surge | heave-pitch |
    sway-roll-yaw for a port-starboard symmetric ship), each sorted."""
    groups: list[tuple[set[int], list[tuple[int, int]]]] = []
    for (i, j) in sorted(pairs):
        hit = [g for g in groups if i in g[0] or j in g[0]]
        dofs, members = {i, j}, [(i, j)]
        for g in hit:
            dofs |= g[0]
            members += g[1]
            groups.remove(g)
        groups.append((dofs, members))
    return sorted((sorted(g[1]) for g in groups), key=lambda m: m[0])


def _prepare(omega, A, B) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    w = np.asarray(omega, float).ravel()
    A = np.asarray(A, float)
    B = np.asarray(B, float)
    if A.shape != (N_DOF, N_DOF, w.size) or B.shape != A.shape:
        raise ValueError(f"A and B must be (6, 6, {w.size}); got {A.shape}, {B.shape}")
    o = np.argsort(w)
    w, A, B = w[o], A[..., o], B[..., o]
    keep = w > 0.0
    return w[keep], A[..., keep], B[..., keep]


# --------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------
def fit_radiation(omega: np.ndarray, A: np.ndarray, B: np.ndarray,
                  order: int | Mapping[tuple[int, int], int] | str = "auto",
                  entries: Sequence[tuple[int, int]] | None = None,
                  A_inf: np.ndarray | None = None,
                  enforce_passivity: bool = True,
                  *, max_order: int = 8, tol: float = 0.03, rel_tol: float = 1e-2,
                  exclude: Sequence[int] | str = "auto",
                  weighting: str = "normalised") -> RadiationModel:
    """Identify the radiation model (A_inf, Ar, Br, Cr) from A(w), B(w) (6, 6, Nw).

    order:   "auto" (smallest order in [2, max_order] with normalised RMS errors of A and
             B <= tol), an int for every entry, or {(i, j): n} (others "auto").
    entries: pairs (i, j) to fit; default ``significant_entries(B, rel_tol)``. For
             symmetric data only i <= j is fitted and mirrored to (j, i).
    A_inf:   (6, 6) if known (3-D codes); None = estimate jointly with K (Perez & Fossen).
    exclude: "auto" (wild-point screening of the end points), or indices into omega.
    Entries that are not fitted get K = 0 and A_inf,ij = A_ij(w_max) (given A_inf wins).
    """
    w_all, A_all, B_all = _prepare(omega, A, B)
    sym = np.allclose(A_all, A_all.transpose(1, 0, 2), rtol=1e-9, atol=1e-12 * np.abs(A_all).max()) and \
        np.allclose(B_all, B_all.transpose(1, 0, 2), rtol=1e-9, atol=1e-12 * np.abs(B_all).max())
    if entries is None:
        pairs = significant_entries(B_all, rel_tol)
    else:
        pairs = sorted({(min(i, j), max(i, j)) if sym else (i, j) for (i, j) in entries})
    if not sym and entries is None:
        pairs = sorted({q for (i, j) in pairs for q in ((i, j), (j, i))})

    if isinstance(exclude, str):
        if exclude != "auto":
            raise ValueError("exclude must be 'auto' or a sequence of indices")
        drop = _screen(w_all, A_all, B_all, pairs, weighting) if pairs else []
    else:
        wanted = np.asarray(omega, float).ravel()[np.asarray(list(exclude), int)]
        drop = sorted(int(k) for k in np.flatnonzero(np.isin(w_all, wanted)))
    keep = np.ones(w_all.size, bool)
    keep[drop] = False
    w, Af, Bf = w_all[keep], A_all[..., keep], B_all[..., keep]
    wg = passivity_grid(w)

    Ainf = np.array(Af[..., -1], float) if A_inf is None else np.array(A_inf, float)
    problems = {(i, j): _problem(w, Af, Bf, i, j, None if A_inf is None else float(Ainf[i, j]),
                                 weighting, (Af, Bf)) for (i, j) in pairs}
    cache: dict[tuple[tuple[int, int], int], _EntryResult] = {}

    def siso(kk: tuple[int, int], n: int) -> _EntryResult:
        if (kk, n) not in cache:
            cache[(kk, n)] = _fit_entry(problems[kk], n, enforce_passivity, wg)
        return cache[(kk, n)]

    def fixed_order(kk: tuple[int, int]) -> int | None:
        if isinstance(order, str):
            if order != "auto":
                raise ValueError("order must be 'auto', an int or a dict")
            return None
        if isinstance(order, Mapping):
            return order.get(kk, order.get(kk[::-1]))
        return int(order)

    orders: dict[tuple[int, int], int] = {}
    for kk in pairs:
        n_fix = fixed_order(kk)
        if n_fix is not None:
            orders[kk] = n_fix
            continue
        best = None
        for n in range(2, max_order + 1):
            r = siso(kk, n)
            if best is None or _worst(r) < _worst(siso(kk, best)):
                best = n
            if _worst(r) <= tol:
                best = n
                break
        orders[kk] = best
    results = {kk: (problems[kk], siso(kk, orders[kk])) for kk in pairs}

    if enforce_passivity and sym:
        d = np.sqrt(np.maximum(np.abs(Bf[range(N_DOF), range(N_DOF)]).max(axis=-1), 1e-300))
        for comp in _components(pairs):
            def enforced(ords):
                res = {kk: (problems[kk], siso(kk, ords[kk])) for kk in comp}
                return _enforce_mimo(res, d, wg, w)

            def excess(res):  # degradation beyond max(tol, SISO error)
                return max(_worst(res[kk][1]) - max(tol, _worst(siso(kk, orders[kk]))) for kk in comp)

            cur = enforced(orders)
            # MIMO-aware order selection: if the joint enforcement degrades an entry
            # beyond tol, raise the order of the entry whose increase helps most
            for _ in range(8):
                if excess(cur) <= 0.0:
                    break
                trials = []
                for kk in comp:
                    if fixed_order(kk) is None and orders[kk] < max_order:
                        ords = dict(orders)
                        ords[kk] += 1
                        trials.append((excess(enforced(ords)), kk, ords))
                if not trials:
                    break
                ex, kk, ords = min(trials, key=lambda t: (t[0], t[1]))
                if ex >= excess(cur):
                    break
                orders = ords
                cur = enforced(orders)
            results.update(cur)

    # assemble
    blocks, fits = [], []
    for (i, j), (pb, r) in results.items():
        if A_inf is None:
            Ainf[i, j] = r.e
            if sym:
                Ainf[j, i] = r.e
        eA, eB = pb.errors(r.ph, r.x, r.e)
        poles, res_c = _complex_residues(r.ph, r.x)
        num, den = _tf(poles, res_c)
        targets = [(i, j)] + ([(j, i)] if sym and i != j else [])
        for (p, q) in targets:
            fits.append(EntryFit(p, q, num, den, len(poles), poles, res_c, eA, eB))
            blocks.append((p, q, *_realise(r.ph, r.x)))
    nst = sum(b[2].shape[0] for b in blocks)
    Ar, Br, Cr = np.zeros((nst, nst)), np.zeros((nst, N_DOF)), np.zeros((N_DOF, nst))
    k = 0
    for (p, q, Ab, bb, cb) in blocks:
        m = Ab.shape[0]
        Ar[k:k + m, k:k + m] = Ab
        Br[k:k + m, q] = bb
        Cr[p, k:k + m] = cb
        k += m
    return RadiationModel(Ainf, np.zeros((N_DOF, N_DOF)), Ar, Br, Cr, fits, w, w_all[drop])


def estimate_added_mass_infinity(omega: np.ndarray, A: np.ndarray, B: np.ndarray,
                                 **fit_kwargs) -> np.ndarray:
    """A_inf (6, 6) estimated jointly with the retardation fit (Perez & Fossen 2009,
    FDIRadMod with A_inf unknown): each significant entry is fitted as
    B(w) + jw A(w) = jw A_inf + K(jw), K strictly proper with K(0) = 0, and A_inf is the
    coefficient of the improper (s) term. Other entries: A_ij(w_max). Symmetric.
    Keyword arguments are passed to ``fit_radiation``."""
    fit_kwargs.pop("A_inf", None)
    return fit_radiation(omega, A, B, A_inf=None, **fit_kwargs).A_inf


def reconstruction_errors(model: RadiationModel, omega: np.ndarray, A: np.ndarray,
                          B: np.ndarray) -> dict[tuple[int, int], tuple[float, float]]:
    """{(i, j): (e_A, e_B)} for the fitted entries: RMS over omega of (A_fit - A) / s_A and
    (B_fit - B) / s_B, s_X = max(rms X_ij, 0.1 sqrt(rms X_ii rms X_jj)) (scales from the
    same A, B)."""
    w, A, B = _prepare(omega, A, B)
    Am, Bm = model.added_mass(w), model.damping(w)
    out = {}
    for ef in model.entries:
        sA, sB = entry_scales(A, B, ef.i, ef.j)
        out[(ef.i, ef.j)] = (_rms(Am[ef.i, ef.j] - A[ef.i, ef.j]) / sA,
                             _rms(Bm[ef.i, ef.j] - B[ef.i, ef.j]) / sB)
    return out


def save_model(model: RadiationModel, path: str | Path) -> None:
    """Store the model in a .npz file (for bundling a precomputed fit with an FMU)."""
    e = model.entries
    np.savez(path, A_inf=model.A_inf, B_inf=model.B_inf, Ar=model.Ar, Br=model.Br, Cr=model.Cr,
             omega_fit=model.omega_fit, omega_excluded=model.omega_excluded,
             ij=np.array([[f.i, f.j, f.order] for f in e], int).reshape(-1, 3),
             err=np.array([[f.err_A, f.err_B] for f in e], float).reshape(-1, 2),
             poles=np.concatenate([f.poles for f in e]) if e else np.zeros(0, complex),
             residues=np.concatenate([f.residues for f in e]) if e else np.zeros(0, complex))


def load_model(path: str | Path) -> RadiationModel:
    """Inverse of ``save_model``."""
    with np.load(path) as z:
        entries, k = [], 0
        for (i, j, n), (eA, eB) in zip(z["ij"], z["err"]):
            p, r = z["poles"][k:k + n], z["residues"][k:k + n]
            num, den = _tf(p, r)
            entries.append(EntryFit(int(i), int(j), num, den, int(n), p, r, float(eA), float(eB)))
            k += n
        return RadiationModel(z["A_inf"], z["B_inf"], z["Ar"], z["Br"], z["Cr"], entries,
                              z["omega_fit"], z["omega_excluded"])
