"""Benchmark B3: the 2-DOF Ampelmann roll model of the digest (§5.2, §7.5) and an exact discrete reference
of its co-simulation.

Model (digest §5.2, eq. (3-8) with x_R = 0), x1 = platform roll, x2 = boat roll, in rad:

    m1 x1'' = -(k_P + k_S) x1 + k_S x2 - (c_D + c_S) x1' + c_S x2'                 = -T
    m2 x2'' =  (k_P + k_S) x1 - (k_S + k_H) x2 + (c_D + c_S) x1' - (c_S + c_H) x2'  =  T - k_H x2 - c_H x2'

with T = (k_P + k_S) x1 - k_S x2 + (c_D + c_S) x1' - c_S x2' the torque the platform puts on the boat
(control reaction k_P x1 + c_D x1' plus serial spring/damper). Monolithic state x_s = [x1', x2', x1, x2]
and A_s = [[C, K], [I, 0]] with C = -M^-1 D, K = -M^-1 K_phys (M = diag(m1, m2); D, K_phys the
non-symmetric damping and stiffness matrices of :func:`mass_damping_stiffness`), as printed in (3-29)-(3-31).

Co-simulation (digest §7.5): FMU-P integrates s1 = [x1, x1'] with input u1 = [x2, x2'] (boat angle and
rate); FMU-B integrates s2 = [x2, x2'] with an input torque. Two splits (see :func:`subsystems`):

* ``"torque"``, as the digest's text describes it: FMU-P outputs T above (direct feedthrough of u1), the
  boat holds T over the macro step;
* ``"state"``: the boat keeps the serial element's own-state terms -k_S x2 - c_S x2' and receives only
  (k_P + k_S) x1 + (c_D + c_S) x1' (no feedthrough): the block split of A_s. Erratum found here: the
  digest's [derived] co-simulation table is this split (it matches to every printed digit), not the torque
  split its text describes; the torque split differs a lot for linear extrapolation and for
  Gauss-Seidel on T3-4.

Sub-solvers are exact (matrix exponential); the inputs over a macro step [t_n, t_n + h] are

* ``"zoh"``: held at their value at t_n;
* ``"linear"``: u(t) = u_n + (u_n - u_{n-1}) (t - t_n) / h (extrapolated from the last two macro points;
  no slope at the first step): the digest's table;
* ``"linear-mid"`` / ``"quadratic-mid"``: the polynomial through the last 2 / 3 macro points evaluated at
  the step's midpoint and held constant (what orchestration.master.execution does, FMI 2 inputs being constant
  over a doStep).

``feedthrough="fresh"`` evaluates the platform's torque with the boat values of the same time point;
``"delayed"`` uses the torque as read right after the platform's previous doStep (only Jacobi differs).

Schemes: ``"jacobi"`` (both step with inputs from t_n, the feedthrough output evaluated with the boat
values of t_n), ``"gs-pb"`` (platform first; the boat then takes the platform output computed from the new
platform state and the old boat values, as a master reading it after the platform's step does),
``"gs-bp"`` (boat first, the platform then takes the new boat angle and rate). The two Gauss-Seidel
orders have the same macro-step eigenvalues. The macro-step map is linear, z_{n+1} = Phi z_n, and Re lambda
of the co-simulation is log|mu| / h for the eigenvalue mu of Phi whose log(mu)/h is nearest the physical
(unstable) mode.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import expm

DEG = math.pi / 180.0


@dataclass(frozen=True)
class RollParameters:
    """One parameter set of the thesis' physical fit (Tables 3-2 to 3-4); initial values in rad, rad/s."""

    name: str
    m1: float      # platform roll inertia, kg m2 (fixed at 20 in the thesis)
    m2: float      # boat roll inertia, kg m2
    k_P: float     # control stiffness to the inertial reference, N m/rad
    k_S: float     # serial stiffness platform-boat, N m/rad
    k_H: float     # hydrostatic roll stiffness of the boat, N m/rad
    c_D: float     # control (derivative) damping, N m s/rad
    c_S: float     # serial damping platform-boat, N m s/rad
    c_H: float     # hydrodynamic roll damping of the boat, N m s/rad
    platform_angle0: float
    platform_rate0: float
    boat_angle0: float
    boat_rate0: float

    @property
    def x0(self) -> np.ndarray:
        """Monolithic initial state [x1', x2', x1, x2]."""
        return np.array([self.platform_rate0, self.boat_rate0, self.platform_angle0, self.boat_angle0])


def _table(name, rate_p, rate_b, angle_p, angle_b, m2, k_P, k_S, k_H, c_D, c_S, c_H) -> RollParameters:
    # the tables give the initial state in deg and deg/s
    return RollParameters(name, 20.0, m2, k_P, k_S, k_H, c_D, c_S, c_H,
                          angle_p * DEG, rate_p * DEG, angle_b * DEG, rate_b * DEG)


#: Table 3-2: full data (weakly growing, Re lambda = +0.0123)
T3_2 = _table("T3-2", 19.41, 7.86, -1.87, -2.00, 131.12, 497.30, 0.00, 3473.04, 0.00, 2.13, 33.80)
#: Table 3-3: first 15 s, build-up (growing, Re lambda = +0.0502)
T3_3 = _table("T3-3", 23.25, -1.64, -0.37, -3.09, 72.97, 755.63, 0.00, 2068.72, 3.37, 63.00, 35.39)
#: Table 3-4: last 15 s (barely decaying, Re lambda = -0.00204). Use the table's k_S = 22.19, not the
#: printed A_s(1,4) = 0.00 of eq. (3-31) (digest §6, erratum 8).
T3_4 = _table("T3-4", 26.92, 33.91, 1.68, -2.43, 79.03, 798.18, 22.19, 2198.47, 1.53, 71.19, 45.36)
TABLES = {p.name: p for p in (T3_2, T3_3, T3_4)}


def mass_damping_stiffness(p: RollParameters):
    """M, D, K of M x'' + D x' + K x = 0 (x = [x1, x2]); D and K are not symmetric (circulatory)."""
    M = np.diag([p.m1, p.m2])
    D = np.array([[p.c_S + p.c_D, -p.c_S], [-(p.c_S + p.c_D), p.c_S + p.c_H]])
    K = np.array([[p.k_S + p.k_P, -p.k_S], [-(p.k_S + p.k_P), p.k_S + p.k_H]])
    return M, D, K


def state_matrix(p: RollParameters) -> np.ndarray:
    """A_s of x_s' = A_s x_s with x_s = [x1', x2', x1, x2] (thesis eq. (3-4))."""
    M, D, K = mass_damping_stiffness(p)
    Minv = np.linalg.inv(M)
    return np.block([[-Minv @ D, -Minv @ K], [np.eye(2), np.zeros((2, 2))]])


def eigenvalues(p: RollParameters) -> np.ndarray:
    """Eigenvalues of A_s sorted by descending real part."""
    lam = np.linalg.eigvals(state_matrix(p))
    return lam[np.argsort(-lam.real, kind="stable")]


def physical_mode(p: RollParameters) -> complex:
    """The least damped (unstable) mode, with positive imaginary part."""
    lam = eigenvalues(p)
    lam = lam[lam.imag > 0]
    return complex(lam[np.argmax(lam.real)])


def monolithic(p: RollParameters, t: np.ndarray) -> np.ndarray:
    """Exact monolithic solution e^{A_s t} x0, rows [x1', x2', x1, x2] per time."""
    A = state_matrix(p)
    return np.array([expm(A * ti) @ p.x0 for ti in np.atleast_1d(t)])


# ---------------------------------------------------------------- sub-systems (the two FMUs)

def platform_matrices(p: RollParameters):
    """s1' = A1 s1 + B1 u, s1 = [x1, x1'], u = [x2, x2']; torque on the boat T = C1 s1 + D1 u."""
    A1 = np.array([[0.0, 1.0], [-(p.k_P + p.k_S) / p.m1, -(p.c_D + p.c_S) / p.m1]])
    B1 = np.array([[0.0, 0.0], [p.k_S / p.m1, p.c_S / p.m1]])
    C1 = np.array([[p.k_P + p.k_S, p.c_D + p.c_S]])
    D1 = np.array([[-p.k_S, -p.c_S]])
    return A1, B1, C1, D1


def boat_matrices(p: RollParameters):
    """s2' = A2 s2 + B2 T, s2 = [x2, x2']; outputs s2 (no feedthrough)."""
    A2 = np.array([[0.0, 1.0], [-p.k_H / p.m2, -p.c_H / p.m2]])
    B2 = np.array([[0.0], [1.0 / p.m2]])
    return A2, B2


def exact_step(A: np.ndarray, B: np.ndarray, h: float):
    """(Phi, G0, G1) of s(t+h) = Phi s(t) + G0 u0 + G1 du for the input u0 + du * tau / h, tau in [0, h]:
    exact, from the exponential of the augmented matrix [[A, B, 0], [0, 0, I/h], [0, 0, 0]]."""
    n, m = B.shape
    aug = np.zeros((n + 2 * m, n + 2 * m))
    aug[:n, :n] = A
    aug[:n, n:n + m] = B
    aug[n:n + m, n + m:] = np.eye(m) / h
    E = expm(aug * h)
    return E[:n, :n], E[:n, n:n + m], E[:n, n + m:]


SPLITS = ("torque", "state")
SCHEMES = ("jacobi", "gs-pb", "gs-bp")
EXTRAPOLATIONS = ("zoh", "linear", "linear-mid", "quadratic-mid")
FEEDTHROUGH = ("fresh", "delayed")


def subsystems(p: RollParameters, split: str = "torque"):
    """The two sub-systems of a split as (A1, B1, A2, B2, out1, out2):

    platform s1' = A1 s1 + B1 u1, boat s2' = A2 s2 + B2 u2 with s1 = [x1, x1'], s2 = [x2, x2'], and the
    inputs as linear functions of the states: u1 = s2 (boat angle and rate) and u2 = out1 @ [s1, s2],
    u1 = out2 @ [s1, s2].

    * ``"torque"`` (the split of digest §7.5's text, and of the FMUs as connected by default): the boat's
      input is the torque T = (k_P + k_S) x1 - k_S x2 + (c_D + c_S) x1' - c_S x2' (direct feedthrough of
      the boat angle and rate into the platform output), so the boat holds the serial torque's x2 terms
      frozen over a macro step.
    * ``"state"``: the angles and rates are exchanged and each side keeps its own half of the coupling
      terms: the boat integrates (k_P + k_S) x1 + (c_D + c_S) x1' (held) - (k_S + k_H) x2 - (c_S + c_H) x2'.
      This is the block split of A_s, and it is the split that reproduces the digest's [derived] table
      to the printed digits (the table does NOT follow the torque split its text describes).
    """
    A1, B1, C1, D1 = platform_matrices(p)
    if split == "torque":
        A2, B2 = boat_matrices(p)
        out1 = np.hstack([C1, D1])                       # u2 = T
    elif split == "state":
        A2 = np.array([[0.0, 1.0], [-(p.k_S + p.k_H) / p.m2, -(p.c_S + p.c_H) / p.m2]])
        B2 = np.array([[0.0], [1.0 / p.m2]])
        out1 = np.hstack([C1, np.zeros((1, 2))])          # u2 = (k_P + k_S) x1 + (c_D + c_S) x1'
    else:
        raise ValueError(f"split {split!r}: one of {SPLITS}")
    out2 = np.hstack([np.zeros((2, 2)), np.eye(2)])      # u1 = [x2, x2']
    return A1, B1, A2, B2, out1, out2


def _extrapolated(kind: str, y: np.ndarray, y1: np.ndarray, y2: np.ndarray, P, G, H) -> np.ndarray:
    """Forced part of one exact step for the input built from the history y (t_n), y1 (t_{n-1}),
    y2 (t_{n-2}): G u_held for held inputs, G u_n + H (u_n - u_{n-1}) for the ramp."""
    if kind == "zoh":
        return G @ y
    if kind == "linear":
        return G @ y + H @ (y - y1)
    if kind == "linear-mid":
        return G @ (y + 0.5 * (y - y1))
    # quadratic through t_{n-2}, t_{n-1}, t_n evaluated at t_n + h/2 (Lagrange weights 3/8, -5/4, 15/8)
    return G @ (0.375 * y2 - 1.25 * y1 + 1.875 * y)


def _input_end(kind: str, y, y1, y2):
    """The input value at the end of the step (what a feedthrough output reads after the step)."""
    if kind == "zoh":
        return y
    if kind == "linear":
        return y + (y - y1)
    if kind == "linear-mid":
        return y + 0.5 * (y - y1)
    return 0.375 * y2 - 1.25 * y1 + 1.875 * y


# layout of the co-simulation state z
_S1, _S2, _Y1REC = slice(0, 2), slice(2, 4), slice(4, 5)
_Y1P, _Y1PP, _Y2P, _Y2PP = slice(5, 6), slice(6, 7), slice(7, 9), slice(9, 11)
_NZ = 11


def _cosim_step(z: np.ndarray, mats, scheme: str, extrapolation: str, feedthrough: str) -> np.ndarray:
    """One macro step of a master on z (linear in z). z holds the states, the platform output as last
    recorded by the master, and the outputs of the two previous macro points (for extrapolation)."""
    (P1, G1, H1), (P2, G2, H2), out1 = mats
    s1, s2 = z[_S1], z[_S2]
    y2 = s2                                                # boat outputs: states, no feedthrough
    fresh = out1[:, :2] @ s1 + out1[:, 2:] @ s2            # platform output with the boat values of t_n
    y1 = fresh if feedthrough == "fresh" else z[_Y1REC]
    y1p, y1pp, y2p, y2pp = z[_Y1P], z[_Y1PP], z[_Y2P], z[_Y2PP]
    ex = extrapolation
    if scheme == "jacobi":
        s1n = P1 @ s1 + _extrapolated(ex, y2, y2p, y2pp, P1, G1, H1)
        s2n = P2 @ s2 + _extrapolated(ex, y1, y1p, y1pp, P2, G2, H2)
        y1rec = out1[:, :2] @ s1n + out1[:, 2:] @ _input_end(ex, y2, y2p, y2pp)
    elif scheme == "gs-pb":
        # platform first; the boat takes the platform output read after that step (no extrapolation)
        s1n = P1 @ s1 + _extrapolated(ex, y2, y2p, y2pp, P1, G1, H1)
        y1rec = out1[:, :2] @ s1n + out1[:, 2:] @ _input_end(ex, y2, y2p, y2pp)
        s2n = P2 @ s2 + G2 @ y1rec
    else:
        # boat first with the platform output of t_n (extrapolated); the platform takes the new boat values
        s2n = P2 @ s2 + _extrapolated(ex, y1, y1p, y1pp, P2, G2, H2)
        s1n = P1 @ s1 + G1 @ s2n
        y1rec = out1[:, :2] @ s1n + out1[:, 2:] @ s2n
    return np.concatenate([s1n, s2n, y1rec, y1, y1p, y2, y2p])


def cosim_map(p: RollParameters, h: float, scheme: str = "jacobi", extrapolation: str = "zoh",
              split: str = "torque", feedthrough: str = "fresh") -> np.ndarray:
    """The macro-step map z_{n+1} = Phi z_n of the co-simulation (11 x 11; z[:4] = [x1, x1', x2, x2']).

    ``extrapolation`` of the inputs not yet updated in this macro step: ``"zoh"``; ``"linear"`` (the
    ramp u_n + (u_n - u_{n-1}) (t - t_n)/h, as in the digest's table); ``"linear-mid"`` and
    ``"quadratic-mid"`` (the polynomial through the last 2 or 3 macro points evaluated at the step's
    midpoint and held: what orchestration.master.execution does for FMUs that cannot interpolate inputs).

    ``feedthrough``: ``"fresh"`` evaluates the platform's torque with the boat values of the same time
    point (a master that sets inputs before reading outputs that depend on them); ``"delayed"`` uses the
    torque as read right after the platform's last doStep, i.e. with the boat values it stepped with
    (a master that never re-reads feedthrough outputs). Only Jacobi tells the two apart."""
    if extrapolation not in EXTRAPOLATIONS:
        raise ValueError(f"extrapolation {extrapolation!r}: one of {EXTRAPOLATIONS}")
    if scheme not in SCHEMES:
        raise ValueError(f"scheme {scheme!r}: one of {SCHEMES}")
    if feedthrough not in FEEDTHROUGH:
        raise ValueError(f"feedthrough {feedthrough!r}: one of {FEEDTHROUGH}")
    A1, B1, A2, B2, out1, _ = subsystems(p, split)
    mats = (exact_step(A1, B1, h), exact_step(A2, B2, h), out1)
    return np.column_stack([_cosim_step(e, mats, scheme, extrapolation, feedthrough) for e in np.eye(_NZ)])


def cosim_initial(p: RollParameters, split: str = "torque") -> np.ndarray:
    """z_0 of :func:`cosim_map`: the initial states, the platform output with the initial boat values
    (a master propagates the outputs through the connections at initialisation), and a constant history
    (no slope at the first step)."""
    s = np.array([p.platform_angle0, p.platform_rate0, p.boat_angle0, p.boat_rate0])
    *_, out1, out2 = subsystems(p, split)
    y1, y2 = out1 @ s, out2 @ s
    return np.concatenate([s, y1, y1, y1, y2, y2])


def cosim_trajectory(p: RollParameters, h: float, n_steps: int, scheme: str = "jacobi",
                     extrapolation: str = "zoh", split: str = "torque", feedthrough: str = "fresh") -> np.ndarray:
    """[x1, x1', x2, x2'] at t = 0, h, ..., n_steps h from the discrete reference map. (With
    ``"quadratic-mid"`` the second step differs from a master that uses a line while it has only two
    points; the other modes are exact from the first step on.)"""
    Phi = cosim_map(p, h, scheme, extrapolation, split, feedthrough)
    z = cosim_initial(p, split)
    out = [z[:4]]
    for _ in range(n_steps):
        z = Phi @ z
        out.append(z[:4])
    return np.array(out)


def cosim_eigenvalue(p: RollParameters, h: float, scheme: str = "jacobi", extrapolation: str = "zoh",
                     split: str = "torque", feedthrough: str = "fresh") -> complex:
    """log(mu)/h of the macro-step eigenvalue mu closest (in that sense) to the physical mode."""
    mu = np.linalg.eigvals(cosim_map(p, h, scheme, extrapolation, split, feedthrough)).astype(complex)
    mu = mu[np.abs(mu) > 1e-12]           # the history slots add eigenvalues at (or near) 0
    lam = np.log(mu) / h
    # the principal branch is right: the mode (5 rad/s) is far below the Nyquist rate pi/h for h <= 0.1 s
    return complex(lam[np.argmin(np.abs(lam - physical_mode(p)))])


def cosim_re_lambda(p: RollParameters, h: float, scheme: str = "jacobi", extrapolation: str = "zoh",
                    split: str = "torque", feedthrough: str = "fresh") -> float:
    """Re lambda of the co-simulation = log|mu| / h."""
    return cosim_eigenvalue(p, h, scheme, extrapolation, split, feedthrough).real


# ---------------------------------------------------------------- Re lambda from a time history

def estimate_mode(t: np.ndarray, y: np.ndarray, t_start: float = 6.0) -> complex:
    """sigma + i omega of the single damped oscillation left in y(t) after t_start (the fast mode,
    Re = -2.4 1/s, has decayed by e^-14 at 6 s): Prony's method of order 2, i.e. the least-squares fit
    of y_{n+1} = a1 y_n + a2 y_{n-1}, which is exact for a sampled A e^{sigma t} cos(omega t + phi);
    the root z of z^2 - a1 z - a2 gives sigma + i omega = log(z) / dt. Needs uniform sampling."""
    t = np.asarray(t, dtype=float)
    y = np.asarray(y, dtype=float)
    keep = t >= t_start - 1e-12
    t, y = t[keep], y[keep]
    dt = np.diff(t)
    if len(t) < 10 or not np.allclose(dt, dt[0], rtol=1e-6, atol=1e-12):
        raise ValueError("estimate_mode needs at least 10 uniformly spaced samples")
    X = np.column_stack([y[1:-1], y[:-2]])
    a1, a2 = np.linalg.lstsq(X, y[2:], rcond=None)[0]
    z = np.roots([1.0, -a1, -a2]).astype(complex)
    lam = np.log(z[np.argmax(z.imag)]) / dt[0]
    return complex(lam)


def peak_decay_rate(t: np.ndarray, y: np.ndarray, t_start: float = 6.0) -> float:
    """Cross-check of :func:`estimate_mode`: slope of log(peak amplitude) against peak time, the peaks of
    |y| refined by a parabola through the three samples around each local maximum."""
    t = np.asarray(t, dtype=float)
    a = np.abs(np.asarray(y, dtype=float))
    times, logs = [], []
    for i in range(1, len(a) - 1):
        if t[i] < t_start or not (a[i] > a[i - 1] and a[i] >= a[i + 1]):
            continue
        ym, y0, yp = np.log(a[i - 1]), np.log(a[i]), np.log(a[i + 1])
        den = ym - 2.0 * y0 + yp
        shift = 0.5 * (ym - yp) / den if den != 0.0 else 0.0
        times.append(t[i] + shift * (t[i + 1] - t[i]))
        logs.append(y0 - 0.25 * (ym - yp) * shift)
    if len(times) < 4:
        raise ValueError("too few peaks")
    return float(np.polyfit(times, logs, 1)[0])


#: the digest's [derived] table (§7.5): (scheme, extrapolation, case) -> Re lambda at h = 0.01, 0.02, 0.05, 0.1
DIGEST_STEPS = (0.01, 0.02, 0.05, 0.1)
DIGEST_TABLE = {
    ("jacobi", "zoh", "T3-3"): (0.0361, 0.0213, -0.0266, -0.117),
    ("jacobi", "zoh", "T3-4"): (-0.0164, -0.0315, -0.081, -0.174),
    ("jacobi", "linear", "T3-3"): (0.0512, 0.0541, 0.0723, 0.118),
    ("jacobi", "linear", "T3-4"): (-0.0010, 0.0021, 0.0213, 0.070),
    ("gauss-seidel", "zoh", "T3-3"): (0.0501, 0.0496, 0.0468, 0.0367),
    ("gauss-seidel", "zoh", "T3-4"): (-0.0022, -0.0026, -0.0056, -0.0162),
}
#: the digest's monolithic targets, each with the number of decimals it is given to
MONOLITHIC_TARGETS = {"T3-3": (0.0502, 4), "T3-4": (-0.00204, 5), "T3-2": (0.0123, 4)}




# ---------------------------------------------------------------- FMU start values (tests/models/b3/*_fmu.py)

def platform_parameters(p: RollParameters) -> dict[str, float]:
    """Start values of B3Platform for a parameter set."""
    return {"inertia": p.m1, "control.stiffness": p.k_P, "control.damping": p.c_D, "serial.stiffness": p.k_S,
            "serial.damping": p.c_S, "initial.angle": p.platform_angle0, "initial.rate": p.platform_rate0}


def boat_parameters(p: RollParameters, split: str = "torque") -> dict[str, float]:
    """Start values of B3Boat for a parameter set and split (``"state"``: the boat carries k_S, c_S)."""
    if split not in SPLITS:
        raise ValueError(f"split {split!r}: one of {SPLITS}")
    state = split == "state"
    return {"inertia": p.m2, "hydrostatic.stiffness": p.k_H, "hydrodynamic.damping": p.c_H,
            "coupling.stiffness": p.k_S if state else 0.0, "coupling.damping": p.c_S if state else 0.0,
            "initial.angle": p.boat_angle0, "initial.rate": p.boat_rate0}


#: the platform output the boat's torque input is connected to, per split
TORQUE_OUTPUT = {"torque": "torque", "state": "coupling_torque"}
