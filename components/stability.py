"""Stability limits of the explicit integrators the components use internally.

An explicit Runge-Kutta step of length h maps a linear mode y' = lambda y to R(h lambda) y, with
R the method's stability polynomial; it is stable while |R(h lambda)| <= 1 [HW96, section IV.2]:

* RK4 (classic):  R(z) = 1 + z + z^2/2 + z^3/6 + z^4/24  (real axis to -2.785, imaginary to 2.828)
* RK2 (Heun, midpoint): R(z) = 1 + z + z^2/2             (real axis to -2)
* explicit Euler: R(z) = 1 + z                            (the disc |1 + z| <= 1)

A component linearises its dynamics at initialisation (gains, stiffnesses, masses), and
:func:`step_limit` gives the longest sub-step for which every mode is stable; the component then
takes its sub-steps no longer than that (times a safety factor), or, if even that is out of reach,
fails with the parameter that sets it.  Modes that grow by themselves (Re lambda > 0, a physically
unstable system) and modes at rest (lambda = 0) set no limit: no step makes them decay.

[HW96] E. Hairer & G. Wanner, "Solving Ordinary Differential Equations II: Stiff and
       Differential-Algebraic Problems", 2nd ed., Springer 1996.
"""
from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["STABILITY_POLYNOMIALS", "step_limit", "jacobian_eigenvalues", "MIN_SUBSTEP"]

# coefficients of R(z), lowest order first
STABILITY_POLYNOMIALS = {
    "euler": (1.0, 1.0),
    "rk2": (1.0, 1.0, 0.5),
    "rk4": (1.0, 1.0, 0.5, 1.0 / 6.0, 1.0 / 24.0),
}
# a component fails rather than take sub-steps shorter than this (10 000 sub-steps per 10 ms)
MIN_SUBSTEP = 1e-6


def _amplification(coefficients, z: np.ndarray) -> np.ndarray:
    out = np.zeros_like(z)
    for c in reversed(coefficients):
        out = out * z + c
    return np.abs(out)


def step_limit(eigenvalues, method: str = "rk4") -> float:
    """Longest step h with |R(h lambda)| <= 1 for every eigenvalue (inf if none limits it).

    Along each ray h lambda (h > 0) the stable set starts at 0; its end is found by a scan and
    bisection on |R| (all rays at once), to 1e-6 relative.  Remembered per set of eigenvalues: a
    component asks again with the same modes whenever a state is restored (error control restores
    every FMU twice per step), and the scan costs about a millisecond."""
    return _step_limit(tuple(np.asarray(eigenvalues, dtype=complex).ravel().tolist()), method)


@functools.lru_cache(maxsize=1024)
def _step_limit(eigenvalues: tuple[complex, ...], method: str) -> float:
    coefficients = STABILITY_POLYNOMIALS[method]
    lam = np.array(eigenvalues, dtype=complex)
    size = np.abs(lam)
    lam = lam[(size > 0.0) & (lam.real <= 1e-9 * size)]
    if lam.size == 0:
        return math.inf
    # every method here is unstable beyond |z| = 3 in the left half plane: scan up to there
    s = np.linspace(0.0, 3.0, 301)[1:, None] / np.abs(lam)[None, :]          # (300, rays)
    bad = _amplification(coefficients, s * lam[None, :]) > 1.0 + 1e-12
    limited = bad.any(axis=0)
    if not limited.any():
        return math.inf
    lam, s, bad = lam[limited], s[:, limited], bad[:, limited]
    k = np.argmax(bad, axis=0)
    cols = np.arange(lam.size)
    lo = np.where(k > 0, s[np.maximum(k - 1, 0), cols], 0.0)
    hi = s[k, cols]
    while np.any(hi - lo > 1e-6 * hi):
        mid = 0.5 * (lo + hi)
        over = _amplification(coefficients, mid * lam) > 1.0 + 1e-12
        hi, lo = np.where(over, mid, hi), np.where(over, lo, mid)
    return float(np.min(lo))


def jacobian_eigenvalues(f, y: np.ndarray, rel: float = 1e-6) -> np.ndarray:
    """Eigenvalues of the Jacobian df/dy at y, by central differences (step rel (1 + |y_i|)):
    the modes of a component's dynamics linearised about a state."""
    y = np.array(y, dtype=float)
    J = np.empty((y.size, y.size))
    for i in range(y.size):
        d = rel * (1.0 + abs(y[i]))
        up, down = y.copy(), y.copy()
        up[i] += d
        down[i] -= d
        J[:, i] = (np.asarray(f(up), dtype=float) - np.asarray(f(down), dtype=float)) / (2.0 * d)
    return np.linalg.eigvals(J)
