"""Irregular sea: wave spectra, a seeded realisation, and first-order wave excitation from force RAOs.

References: [S4] Tysse & Egeland, "Dynamic Interaction of a Heavy Crane and a Ship in Wave
Motion" (NTNU); [S2] de Zeeuw, "Ship Motion Compensation Platform for High Payloads", MSc
thesis TU Delft 2012 -- both as summarised in /work/shared/reference/ship_crane_digest.md
sections 1.7-1.9; MSS = Fossen's Marine Systems Simulator, github.com/cybergalactic/MSS (MIT).

Frames and units (SI throughout)
--------------------------------
* World frame NED: x north, y east, z down.  Body frame: x forward, y starboard, z down
  (MSS "FSD" axes).  The wave elevation zeta is positive UP (the free surface is at
  z_ned = -zeta).
* A wave component travels TOWARDS the NED direction chi, measured from north towards
  east [rad]: its wave-number vector is k (cos chi, sin chi).  It comes FROM chi + pi.
* g = 9.81 m/s^2 (the value in the MSS vessel files, vessel.main.g).

Spectra (digest ship_crane_digest.md section 1.7)
-------------------------------------------------
* Variance m0 = int_0^inf S(w) dw and Hs = 4 sqrt(m0) ([S4] section 4.1).
* JONSWAP [S4 eqs. 57-60], Hasselmann et al. (1973):
      S(w) = A Hs^2 wp^4 / w^5 exp(-5/4 (wp/w)^4) gamma^Y,
      Y = exp(-(w - wp)^2 / (2 sigma^2 wp^2)),  sigma = 0.07 (w <= wp), 0.09 (w > wp).
  A = 0.2053 in [S4] eq. (60) (exact only for gamma = 3.3); `jonswap(normalise=True)`
  computes A(gamma) = 1 / (16 int_0^inf x^-5 exp(-5/4 x^-4) gamma^Y(x) dx) once per gamma,
  so that 4 sqrt(m0) = Hs for every gamma.  The alpha form is
      S(w) = alpha g^2 / w^5 exp(-5/4 (wp/w)^4) gamma^Y        (`jonswap_alpha`).
* Pierson-Moskowitz, ITTC two-parameter form with mean period T1 [S2 eq. 4-70]:
      S(w) = H^2 T1 0.11/(2 pi) (w T1/2 pi)^-5 exp(-0.44 (w T1/2 pi)^-4);  int S = H^2/16.
* ITTC JONSWAP with mean period T1 [S2 footnote 15] (`jonswap_ittc`).

Realisation (digest section 1.8, [S4] eqs. 61-70)
------------------------------------------------
    zeta(t, x) = sum_i Z_i cos(w_i t + eps_i - k_i (x_N cos chi_i + x_E sin chi_i)),
    Z_ij = sqrt(2 S(w_i) dw w_j),  k_i = w_i^2 / g  (deep water),
where w_j are discrete direction weights that sum to 1 (i.e. D(chi_j) dchi, [S4] eq. 70;
[S2] eq. 4-72 omits dchi, which inflates the variance by 4/pi for its 45 deg sectors --
NOT reproduced here).  A point downstream (distance d along chi) lags by k d.

Wave excitation and its phase convention (MSS)
----------------------------------------------
The convention is that of MSS (Fossen, github.com/cybergalactic/MSS,
LIBRARY/environment/waveForceRAO.m at commit 52220ce):

* line 21: "beta_wave - Wave direction, 0 following sea, pi head sea";
  line 96: ``beta_relative = beta_wave - psi``.  So the RAO heading is the RELATIVE
  PROPAGATION direction  beta = chi - psi  (wrapped to [0, 2 pi)):
  beta = 0 following sea (waves travel along +x body), 180 deg head sea (waves come
  from ahead), 90 deg beam sea travelling towards starboard (coming FROM PORT),
  270 deg travelling towards port.
* line 109: ``waveElevation = sum(Amp .* cos(Omega_e*t + randomPhases))`` and
  lines 144-145: ``tau = sum(abs(RAO) .* Amp .* cos(Omega_e*t + angle(RAO) + randomPhases))``:
      zeta_ref(t) = Z cos(w t + eps)   (elevation at the RAO reference point)
      tau_k(t)    = |F_k(w, beta)| Z cos(w t + eps + angle F_k(w, beta))     (plus signs),
  which is also [S4] eq. (71).  (The [S2] form cos(kx - wt + gamma) flips the meaning
  of the RAO phase and must NOT be used with these data.)
* lines 62-63, 81-84, 132-134: the complex RAO Re/Im parts are interpolated linearly
  in frequency and in relative heading; the same is done here, but with proper
  wrap-around 350 deg -> 360 deg (MSS extrapolates instead) and frequencies clamped to the
  table range (MSS extrapolates linearly).
* HYDRO/utils/readdata/read_veres_TF.m (commit 108ceda) lines 176-178 and 188: VERES
  headings are relative to the bow and are reversed (beta_MSS = 180 deg - beta_VERES),
  surge/heave/roll/yaw phases get +pi (axes x fwd, y stbd, z down); lines 194-201 mirror
  180-360 deg (sway/roll/yaw phase -pi).  HYDRO/veres2vessel.m: "VERES force and motion
  RAOs already use the CG reference", i.e. moments are about the CG and the phase is
  relative to the wave elevation at the CG.
* Checked against supply.mat (tests/components/test_waves.py): at w = 0.105 rad/s the heave force
  phase is pi for every heading (force along +z = down is -rho g Awp zeta, |F3| = 1.3626e7
  vs C33 = 1.391e7 N/m); surge at beta = 0 and sway at beta = 90 deg lead zeta by +pi/2
  (force ~ (m + A) times the fluid acceleration in the travel direction) -- both hold only
  with the plus-sign convention above and beta = 90 deg travelling to starboard.

Here the position enters the phase: the ship's RAO reference point (CG for MSS data) at
(north, east) sees  theta_i = w_i t + eps_i - k_i (north cos chi_i + east sin chi_i),  so
tau_k = Re sum_i F_k(w_i, chi_i - psi) Z_i e^{i theta_i}.  A moving ship therefore gets the
encounter frequency w - k U cos(beta) automatically (MSS waveForceRAO.m line 102 applies
it explicitly); the RAO itself is the zero-speed one (velocity index 0).  The force is in
body axes of the ship with heading psi (roll and pitch ignored: first order), applied at
the RAO reference point.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import integrate, special

GRAVITY = 9.81  # [m/s^2], as vessel.main.g in the MSS vessel files
TWO_PI = 2.0 * math.pi

__all__ = [
    "GRAVITY", "spectral_moment", "significant_height", "jonswap", "jonswap_alpha",
    "jonswap_ittc", "pierson_moskowitz", "spreading_density", "spreading_weights",
    "Sea", "ForceRAO", "make_sea",
]


# --------------------------------------------------------------------------- spectra

def spectral_moment(omega: ArrayLike, S: ArrayLike, n: int = 0) -> float:
    """Spectral moment m_n = int w^n S(w) dw [m^2 (rad/s)^n], trapezoidal rule on the given grid."""
    w = np.asarray(omega, dtype=float)
    return float(integrate.trapezoid(w**n * np.asarray(S, dtype=float), w))


def significant_height(omega: ArrayLike, S: ArrayLike) -> float:
    """Hs = 4 sqrt(m0) [m] ([S4] section 4.1)."""
    return 4.0 * math.sqrt(spectral_moment(omega, S, 0))


def _peak_enhancement(w: np.ndarray, wp: float, gamma: float) -> np.ndarray:
    """gamma^Y, Y = exp(-(w - wp)^2 / (2 sigma^2 wp^2)), sigma = 0.07 / 0.09 ([S4] eq. 59)."""
    sigma = np.where(w <= wp, 0.07, 0.09)
    return gamma ** np.exp(-((w - wp) ** 2) / (2.0 * sigma**2 * wp**2))


def _pm_shape(w: np.ndarray, wp: float) -> np.ndarray:
    """w^-5 exp(-5/4 (wp/w)^4), zero for w <= 0."""
    out = np.zeros_like(w)
    pos = w > 0.0
    wpos = w[pos]
    out[pos] = wpos**-5 * np.exp(-1.25 * (wp / wpos) ** 4)
    return out


@functools.lru_cache(maxsize=64)
def _jonswap_constant(gamma: float) -> float:
    """A(gamma) = 1 / (16 I),  I = int_0^inf x^-5 exp(-5/4 x^-4) gamma^Y(x) dx  (x = w/wp).

    I(1) = 1/5 exactly (A = 5/16, Pierson-Moskowitz); A(3.3) = 0.2049 vs 0.2053 in [S4] eq. (60).
    """
    def f(x: float) -> float:
        sigma = 0.07 if x <= 1.0 else 0.09
        return x**-5 * math.exp(-1.25 * x**-4) * gamma ** math.exp(-((x - 1.0) ** 2) / (2 * sigma**2))

    parts = [(0.05, 0.7), (0.7, 1.0), (1.0, 1.4), (1.4, 4.0)]
    total = sum(integrate.quad(f, a, b, epsabs=0.0, epsrel=1e-13, limit=200)[0] for a, b in parts)
    total += integrate.quad(f, 4.0, np.inf, epsabs=0.0, epsrel=1e-13, limit=200)[0]
    return 1.0 / (16.0 * total)


def jonswap(omega: ArrayLike, hs: float, tp: float, gamma: float = 3.3,
            normalise: bool = True) -> np.ndarray:
    """JONSWAP spectrum S(w) [m^2 s/rad] from Hs [m] and peak period Tp [s] (wp = 2 pi / Tp).

    S(w) = A Hs^2 wp^4 w^-5 exp(-5/4 (wp/w)^4) gamma^Y  ([S4] eq. 60).
    normalise=True: A = A(gamma) from a one-off numerical integral, so 4 sqrt(m0) = Hs for
    any gamma.  normalise=False: A = 0.2053 as printed in [S4] eq. (60) (exact only near
    gamma = 3.3; Hs = 4, wp = 1.3 integrates back to 4.004 m).
    """
    w = np.asarray(omega, dtype=float)
    wp = TWO_PI / tp
    a = _jonswap_constant(float(gamma)) if normalise else 0.2053
    return a * hs**2 * wp**4 * _pm_shape(w, wp) * _peak_enhancement(w, wp, gamma)


def jonswap_alpha(omega: ArrayLike, wp: float, alpha: float = 0.0081, gamma: float = 3.3,
                  g: float = GRAVITY) -> np.ndarray:
    """JONSWAP in the Phillips-constant form  S(w) = alpha g^2 w^-5 exp(-5/4 (wp/w)^4) gamma^Y.

    [S4] eq. (57), Hasselmann et al. (1973); alpha = 0.0081, gamma = 3.3 by default.
    Its Hs is fixed by wp (wp = 1.3 rad/s gives Hs = 1.154 m).
    """
    w = np.asarray(omega, dtype=float)
    return alpha * g**2 * _pm_shape(w, wp) * _peak_enhancement(w, wp, gamma)


def pierson_moskowitz(omega: ArrayLike, h13: float, t1: float) -> np.ndarray:
    """Pierson-Moskowitz, ITTC two-parameter form with the MEAN period T1 [s] ([S2] eq. 4-70).

    S(w) / (H13^2 T1) = 0.11/(2 pi) (w T1 / 2 pi)^-5 exp(-0.44 (w T1 / 2 pi)^-4).
    int S dw = H13^2 / 16 exactly; peak wp = 0.352^(1/4) 2 pi / T1 = 4.840 / T1 (Tp = 1.298 T1).
    """
    w = np.asarray(omega, dtype=float)
    out = np.zeros_like(w)
    pos = w > 0.0
    x = w[pos] * t1 / TWO_PI
    out[pos] = h13**2 * t1 * (0.11 / TWO_PI) * x**-5 * np.exp(-0.44 * x**-4)
    return out


def jonswap_ittc(omega: ArrayLike, h13: float, t1: float) -> np.ndarray:
    """ITTC JONSWAP (limited fetch) with mean period T1 ([S2] footnote 15).

    S(w) = 155 H^2 / (T1^4 w^5) exp(-944 / (T1^4 w^4)) 3.3^exp(-((0.191 w T1 - 1)/(sqrt(2) sigma))^2),
    sigma = 0.07 for w <= 5.24/T1, else 0.09.  H = 4, T1 = 6.5 gives Hs = 4.002 m.
    """
    w = np.asarray(omega, dtype=float)
    out = np.zeros_like(w)
    pos = w > 0.0
    wp = w[pos]
    sigma = np.where(wp <= 5.24 / t1, 0.07, 0.09)
    y = np.exp(-(((0.191 * wp * t1 - 1.0) / (math.sqrt(2.0) * sigma)) ** 2))
    out[pos] = 155.0 * h13**2 / (t1**4 * wp**5) * np.exp(-944.0 / (t1**4 * wp**4)) * 3.3**y
    return out


# --------------------------------------------------------------------------- spreading

SPREADING_FORMS = ("cos2s", "cos2s-half-plane")


def _wrap_pi(a: ArrayLike) -> np.ndarray:
    """Wrap angles to [-pi, pi)."""
    return (np.asarray(a, dtype=float) + math.pi) % TWO_PI - math.pi


def spreading_density(theta: ArrayLike, s: float, form: str = "cos2s") -> np.ndarray:
    """Continuous directional spreading D(theta) [1/rad], theta = chi - chi0; int D dtheta = 1.

    form "cos2s" (Longuet-Higgins / Mitsuyasu, full circle):
        D = Gamma(s+1) / (2 sqrt(pi) Gamma(s+1/2)) cos^(2s)(theta/2),  -pi < theta <= pi.
    form "cos2s-half-plane" (ITTC; the digest's (2/pi) cos^2 is s = 1):
        D = Gamma(s+1) / (sqrt(pi) Gamma(s+1/2)) cos^(2s)(theta),  |theta| < pi/2, else 0.
    """
    th = _wrap_pi(theta)
    c = special.gamma(s + 1.0) / (math.sqrt(math.pi) * special.gamma(s + 0.5))
    if form == "cos2s":
        return 0.5 * c * np.cos(0.5 * th) ** (2.0 * s)
    if form == "cos2s-half-plane":
        return np.where(np.abs(th) < 0.5 * math.pi, c * np.abs(np.cos(th)) ** (2.0 * s), 0.0)
    raise ValueError(f"unknown spreading form {form!r}; use one of {SPREADING_FORMS}")


def spreading_weights(directions: ArrayLike, mean_direction: float, s: float | None,
                      form: str = "cos2s") -> np.ndarray:
    """Discrete direction weights w_j ~ D(chi_j - chi0) dchi, normalised so sum(w_j) == 1.

    D is `spreading_density` (default cos-2s: cos^(2s)((chi - chi0)/2)).  Normalising the
    discrete sum (not just the continuous integral) keeps the realisation variance equal
    to m0 for any direction grid -- unlike [S2] eq. (4-72), whose missing dchi gives
    sum = 4/pi = 1.273 for 45 deg sectors.
    s = 0 or None means long-crested: weight 1 on the direction closest to chi0, 0 elsewhere.
    """
    d = np.atleast_1d(np.asarray(directions, dtype=float))
    if s is None or s == 0:
        w = np.zeros_like(d)
        w[int(np.argmin(np.abs(_wrap_pi(d - mean_direction))))] = 1.0
        return w
    dens = spreading_density(d - mean_direction, s, form)
    total = dens.sum()
    if not total > 0.0:
        raise ValueError("no direction has a positive spreading weight")
    return dens / total


# --------------------------------------------------------------------------- force RAO

def _field(obj: Any, name: str) -> Any:
    """Attribute of a scipy mat_struct (or key of a dict)."""
    return obj[name] if isinstance(obj, dict) else getattr(obj, name)


@dataclass(eq=False)
class ForceRAO:
    """First-order wave force RAO per unit wave amplitude, body axes (x fwd, y stbd, z down).

    amplitude[k, i, j] = |F_k(omega_i, heading_j)| [N/m for k = 0..2, N m/m for k = 3..5]
    phase[k, i, j]     = angle F_k [rad]  (any unwrapping; only exp(i phase) is used)
    heading            = relative wave propagation direction beta = chi - psi [rad] as in
                         the source data (MSS: 0 following, pi head, pi/2 towards starboard).
    Convention (MSS, see module docstring): with zeta_ref = Z cos(w t + eps) at the
    reference point, tau_k = |F_k| Z cos(w t + eps + angle F_k).
    Interpolation: the complex RAO is linear in omega (clamped outside the table) and
    linear in beta with wrap-around (as MSS waveForceRAO.m, lines 81-84 and 132-134).
    Treat an instance as immutable: the complex table and the per-sea excitation plans are
    built from the arrays once.
    """

    omega: np.ndarray
    heading: np.ndarray
    amplitude: np.ndarray
    phase: np.ndarray
    convention: str = ("MSS: zeta_ref = Z cos(wt + eps), tau_k = |F_k| Z cos(wt + eps + angle F_k); "
                       "beta = chi - psi, 0 = following, pi = head, pi/2 = travelling to starboard; "
                       "FSD body axes, reference point CG")

    def __post_init__(self) -> None:
        self.omega = np.asarray(self.omega, dtype=float).ravel()
        self.heading = np.asarray(self.heading, dtype=float).ravel()
        self.amplitude = np.asarray(self.amplitude, dtype=float)
        self.phase = np.asarray(self.phase, dtype=float)
        nw, nb = self.omega.size, self.heading.size
        if self.amplitude.shape != (6, nw, nb) or self.phase.shape != (6, nw, nb):
            raise ValueError(f"amplitude and phase must be (6, {nw}, {nb})")
        if np.any(np.diff(self.omega) <= 0):
            raise ValueError("RAO frequencies must be strictly increasing")
        # complex table sorted by heading in [0, 2 pi), closed with the first heading + 2 pi
        h = self.heading % TWO_PI
        order = np.argsort(h)
        h = h[order]
        if np.any(np.diff(h) <= 0):
            raise ValueError("RAO headings must be distinct modulo 2 pi")
        c = (self.amplitude * np.exp(1j * self.phase))[:, :, order]
        self._hext = np.concatenate([h, [h[0] + TWO_PI]])
        self._cext = np.concatenate([c, c[:, :, :1]], axis=2)  # (6, Nw, Nb+1)
        steps = np.diff(self._hext)
        self._dh = float(steps.mean()) if np.allclose(steps, steps.mean(), rtol=1e-9, atol=1e-12) else None

    @classmethod
    def from_mss(cls, vessel_struct: Any, velocity_index: int = 0, kind: str = "force") -> "ForceRAO":
        """Build from an MSS vessel struct (scipy.io.loadmat(..., squeeze_me=True,
        struct_as_record=False)['vessel']).  kind = "force" (forceRAO, N/m) or "motion"
        (motionRAO, m/m and rad/m, same phase convention).  Headings stored in degrees
        (newer MSS files, cf. waveForceRAO.m line 43 deg2rad) are converted to radians.
        """
        rao = _field(vessel_struct, "forceRAO" if kind == "force" else "motionRAO")
        amp_list, ph_list = _field(rao, "amp"), _field(rao, "phase")
        amps, phs = [], []
        for k in range(6):
            a, p = np.asarray(amp_list[k], dtype=float), np.asarray(ph_list[k], dtype=float)
            if a.ndim == 3:
                a, p = a[:, :, velocity_index], p[:, :, velocity_index]
            elif velocity_index != 0:
                raise ValueError("the RAO table has a single velocity")
            amps.append(a)
            phs.append(p)
        heading = np.asarray(_field(vessel_struct, "headings"), dtype=float).ravel()
        if heading.max() > TWO_PI + 1e-6:
            heading = np.radians(heading)
        try:
            ref = str(_field(vessel_struct, "hydrodynamic_reference"))
        except (AttributeError, KeyError):
            ref = "CG"
        conv = ("MSS " + kind + "RAO: zeta_ref = Z cos(wt + eps), tau_k = |F_k| Z cos(wt + eps + angle F_k); "
                "beta = chi - psi, 0 = following, pi = head, pi/2 = travelling to starboard; "
                f"FSD body axes, reference point {ref}")
        return cls(np.asarray(_field(rao, "w"), dtype=float), heading, np.stack(amps), np.stack(phs), conv)

    def table(self, omega: ArrayLike) -> np.ndarray:
        """Complex RAO at the given frequencies for every table heading, closed in heading:
        (6, N, Nb+1) with the last column = first heading + 2 pi.  Linear in omega, clamped."""
        w = np.clip(np.asarray(omega, dtype=float).ravel(), self.omega[0], self.omega[-1])
        i = np.clip(np.searchsorted(self.omega, w, side="right") - 1, 0, self.omega.size - 2)
        f = ((w - self.omega[i]) / (self.omega[i + 1] - self.omega[i]))[None, :, None]
        return (1.0 - f) * self._cext[:, i, :] + f * self._cext[:, i + 1, :]

    def complex_rao(self, omega: ArrayLike, beta: ArrayLike) -> np.ndarray:
        """F_k(omega_n, beta_n) for paired arrays (N,) -> (6, N) complex (bilinear, wrapped)."""
        tab = self.table(omega)
        b = np.broadcast_to(np.asarray(beta, dtype=float).ravel(), (tab.shape[1],))
        j, f = self._heading_index(b)
        n = np.arange(tab.shape[1])
        return (1.0 - f) * tab[:, n, j] + f * tab[:, n, j + 1]

    def _heading_index(self, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Bracketing table index j and fraction f in [0, 1] for beta (wrapped to [h0, h0 + 2 pi))."""
        h = self._hext
        if self._dh is not None:  # uniform grid (e.g. 0:10:350 deg)
            u = ((beta - h[0]) / self._dh) % (h.size - 1)
            j = np.minimum(u.astype(np.intp), h.size - 2)
            return j, u - j
        b = (beta - h[0]) % TWO_PI + h[0]
        j = np.clip(np.searchsorted(h, b, side="right") - 1, 0, h.size - 2)
        return j, (b - h[j]) / (h[j + 1] - h[j])

    def prepare(self, sea: "Sea", heading: float) -> np.ndarray:
        """Complex force amplitudes a_k,i = F_k(w_i, chi_i - psi) Z_i e^{i eps_i}, (6, N), for
        heading psi, so that tau_k = Re sum_i a_k,i exp(i (w_i t - k_i.x)).  Cached per sea."""
        if sea.omega.size == 0:
            return np.zeros((6, 0), dtype=complex)
        return sea._plan(self).amplitudes(heading)


class _ExcitationPlan:
    """Per (sea, RAO) precomputation for `Sea.excitation`.

    Components are grouped by direction (a make_sea grid has M directions x n frequencies;
    otherwise every component is its own group).  For every group g and table heading j it
    stores the real blocks  B[g, j] = [Re a, -Im a]  (a = F(w, beta_j) Z e^{i eps}) and the
    differences B[g, j+1] - B[g, j], so that a heading change costs one gather + one blend
    over M groups and one call costs  tau = [cos theta, sin theta] @ P  (2N x 6).
    """

    __slots__ = ("rao", "order", "dirs", "arange_m", "m", "n", "table", "w3", "heading", "p",
                 "u0", "inv_dh", "nb")

    def __init__(self, rao: ForceRAO, sea: "Sea") -> None:
        n_tot = sea.omega.size
        uniq, inv = np.unique(sea.direction, return_inverse=True)
        counts = np.bincount(inv) if n_tot else np.zeros(0, int)
        if n_tot and np.all(counts == counts[0]):
            order = np.argsort(inv, kind="stable")
            m, n = uniq.size, int(counts[0])
            dirs = uniq
        else:
            order = np.arange(n_tot)
            m, n = n_tot, 1
            dirs = sea.direction.copy()
        tab = rao.table(sea.omega[order]) * sea._zc[order][None, :, None]      # (6, N, Nb1)
        tab = tab.reshape(6, m, n, -1)
        blocks = np.stack([tab.real, -tab.imag])                                # (2, 6, M, n, Nb1)
        blocks = blocks.transpose(2, 4, 0, 3, 1).reshape(m, tab.shape[3], 12 * n)  # (M, Nb1, 2*n*6)
        table = np.stack([blocks[:, :-1], blocks[:, 1:] - blocks[:, :-1]], axis=2)  # (M, Nb, 2, 12n)
        # one spare entry (= entry 0, i.e. heading h0 + 2 pi) so that a round-off index j = Nb is valid
        self.table = np.ascontiguousarray(np.concatenate([table, table[:, :1]], axis=1))
        self.rao, self.order, self.dirs, self.m, self.n = rao, order, dirs, m, n
        self.arange_m = np.arange(m)
        self.w3 = np.ascontiguousarray(sea._w3[order])
        self.heading: float | None = None
        self.p = np.zeros((2 * n_tot, 6))
        # uniform heading grid: table position u = (chi - psi - h0) / dh  mod Nb
        self.nb = rao._hext.size - 1
        if rao._dh is not None:
            self.inv_dh = 1.0 / rao._dh
            self.u0 = (dirs - rao._hext[0]) * self.inv_dh
        else:
            self.inv_dh, self.u0 = None, None

    def set_heading(self, heading: float) -> None:
        if self.inv_dh is None:
            j, f = self.rao._heading_index(self.dirs - heading)
        elif self.m == 1:  # long-crested: plain float arithmetic
            u = (float(self.u0[0]) - heading * self.inv_dh) % self.nb
            j0 = int(u)
            x = self.table[0, j0]
            self.p = (x[0] + (u - j0) * x[1]).reshape(-1, 6)
            self.heading = heading
            return
        else:
            u = (self.u0 - heading * self.inv_dh) % self.nb
            j = u.astype(np.intp)
            f = u - j
        x = self.table[self.arange_m, j]                                      # (M, 2, 12n)
        self.p = (x[:, 0] + x[:, 1] * f[:, None]).reshape(-1, 6)
        self.heading = heading

    def cos_sin(self, theta: np.ndarray) -> np.ndarray:
        """[cos, sin] of grouped phases (..., N) laid out as the rows of p: (..., 2N)."""
        th = theta.reshape(theta.shape[:-1] + (self.m, self.n))
        cs = np.concatenate((np.cos(th), np.sin(th)), axis=-1)
        return cs.reshape(theta.shape[:-1] + (2 * self.m * self.n,))

    def amplitudes(self, heading: float) -> np.ndarray:
        """Complex amplitudes (6, N) in the sea's component order."""
        if self.heading != heading:
            self.set_heading(heading)
        q = self.p.reshape(self.m, 2, self.n, 6)
        a = (q[:, 0] - 1j * q[:, 1]).reshape(-1, 6)
        out = np.empty((6, a.shape[0]), dtype=complex)
        out[:, self.order] = a.T
        return out


@dataclass(frozen=True, eq=False)
class Sea:
    """A seeded, frozen first-order sea realisation: N long-crested components.

    omega [rad/s], direction chi [rad] (NED propagation direction, the way the waves travel
    TO, from north towards east), amplitude Z [m], phase eps [rad], k = omega^2/g [rad/m].
    No time state: every quantity is a function of (t, position).
        zeta(t, N, E) = sum_i Z_i cos(theta_i),  theta_i = w_i t + eps_i - k_i (N cos chi_i + E sin chi_i)
    """

    omega: np.ndarray
    direction: np.ndarray
    amplitude: np.ndarray
    phase: np.ndarray
    k: np.ndarray | None = None
    g: float = GRAVITY
    info: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        arrs = [np.array(np.atleast_1d(getattr(self, n)), dtype=float).ravel()
                for n in ("omega", "direction", "amplitude", "phase")]
        n = arrs[0].size
        if any(a.size != n for a in arrs):
            raise ValueError("omega, direction, amplitude and phase must have the same length")
        for name, a in zip(("omega", "direction", "amplitude", "phase"), arrs):
            a.flags.writeable = False
            object.__setattr__(self, name, a)
        k = arrs[0] ** 2 / self.g if self.k is None else np.array(self.k, dtype=float).ravel()
        k.flags.writeable = False
        object.__setattr__(self, "k", k)
        kx, ky = k * np.cos(arrs[1]), k * np.sin(arrs[1])
        object.__setattr__(self, "_kx", kx)      # k cos chi, k sin chi: in every phase theta
        object.__setattr__(self, "_ky", ky)
        # theta - eps = W3 @ [t, north, east]
        object.__setattr__(self, "_w3", np.ascontiguousarray(np.stack([arrs[0], -kx, -ky], axis=1)))
        object.__setattr__(self, "_zc", arrs[2] * np.exp(1j * arrs[3]))  # Z e^{i eps}
        object.__setattr__(self, "_plans", {})

    # ---------------------------------------------------------------- statistics
    @property
    def variance(self) -> float:
        """Variance of the realisation, sum Z_i^2 / 2 [m^2] (= time average of zeta^2 for distinct w)."""
        return float(0.5 * np.sum(self.amplitude**2))

    @property
    def n_components(self) -> int:
        return int(self.omega.size)

    # ---------------------------------------------------------------- kinematics
    def _theta(self, t: np.ndarray, north: np.ndarray, east: np.ndarray) -> np.ndarray:
        """theta[..., i] for broadcast (t, north, east) arrays."""
        return (t[..., None] * self.omega + self.phase
                - north[..., None] * self._kx
                - east[..., None] * self._ky)

    def elevation(self, t: ArrayLike, north: ArrayLike = 0.0, east: ArrayLike = 0.0) -> float | np.ndarray:
        """Surface elevation zeta [m], positive UP, at NED (north, east); t, north, east broadcast.

        zeta = sum_i Z_i cos(w_i t + eps_i - k_i (N cos chi_i + E sin chi_i))  ([S4] eq. 61/68).
        """
        if (type(north) is np.ndarray and type(east) is np.ndarray and north.ndim == 1
                and north.shape == east.shape and north.dtype == east.dtype == np.float64
                and np.ndim(t) == 0 and north.size * self.omega.size <= 2**20):
            # a few points at one time (a ship's outputs, every step): the same operations as
            # below on the same numbers, without the broadcasting and chunking
            theta = float(t) * self.omega + self.phase - north[:, None] * self._kx - east[:, None] * self._ky
            return np.cos(theta) @ self.amplitude
        t_, n_, e_ = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (t, north, east)))
        shape = t_.shape
        tf, nf, ef = t_.ravel(), n_.ravel(), e_.ravel()
        out = np.empty(tf.size)
        chunk = max(1, 2**20 // max(1, self.omega.size))
        for s in range(0, tf.size, chunk):
            sl = slice(s, s + chunk)
            out[sl] = np.cos(self._theta(tf[sl], nf[sl], ef[sl])) @ self.amplitude
        return float(out[0]) if shape == () else out.reshape(shape)

    def particle_velocity(self, t: ArrayLike, north: ArrayLike, east: ArrayLike,
                          depth: ArrayLike) -> np.ndarray:
        """First-order deep-water particle velocity [m/s], NED, at depth d = z_ned >= 0 below
        the MEAN surface; zero above it (d < 0).  Airy theory (e.g. Faltinsen 1990, table 2.1):
            v_N, v_E = sum w Z e^{-k d} cos(theta) (cos chi, sin chi),
            v_D      = sum w Z e^{-k d} sin(theta)      (so dzeta/dt = -v_D at d = 0).
        Returns (3,) for scalar inputs, (..., 3) for broadcast arrays.
        """
        return self._kinematics(t, north, east, depth, order=1)

    def particle_acceleration(self, t: ArrayLike, north: ArrayLike, east: ArrayLike,
                              depth: ArrayLike) -> np.ndarray:
        """First-order particle acceleration [m/s^2], NED (time derivative of `particle_velocity`):
            a_N, a_E = -sum w^2 Z e^{-k d} sin(theta) (cos chi, sin chi),  a_D = sum w^2 Z e^{-k d} cos(theta).
        """
        return self._kinematics(t, north, east, depth, order=2)

    def _kinematics(self, t, north, east, depth, order: int) -> np.ndarray:
        t_, n_, e_, d_ = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (t, north, east, depth)))
        th = self._theta(t_, n_, e_)
        decay = np.exp(-np.maximum(d_, 0.0)[..., None] * self.k) * self.amplitude * self.omega**order
        c, s = np.cos(th), np.sin(th)
        if order == 1:
            horiz, vert = c, s
        else:
            horiz, vert = -s, c
        h = np.sum(decay * horiz * np.cos(self.direction), axis=-1)
        e = np.sum(decay * horiz * np.sin(self.direction), axis=-1)
        v = np.sum(decay * vert, axis=-1)
        out = np.stack([h, e, v], axis=-1)
        return np.where((d_ >= 0.0)[..., None], out, 0.0)

    # ---------------------------------------------------------------- excitation
    def _plan(self, rao: ForceRAO) -> _ExcitationPlan:
        plan = self._plans.get(id(rao))
        if plan is None or plan.rao is not rao:
            plan = _ExcitationPlan(rao, self)
            self._plans[id(rao)] = plan
        return plan

    def excitation_plan(self, rao: ForceRAO, heading: float, heading_tol: float = 0.0) -> _ExcitationPlan | None:
        """The (sea, rao) excitation plan interpolated at the heading as `excitation` uses it
        (rounded to a multiple of heading_tol if that is > 0), or None for a calm sea."""
        plan = self._plans.get(id(rao))
        if plan is None or plan.rao is not rao:
            if self.omega.size == 0:
                return None
            plan = self._plan(rao)
        if heading_tol > 0.0:
            # the nearest multiple of heading_tol: the excitation depends on the heading alone,
            # not on which headings were asked before (a restored FMU state repeats its run)
            heading = round(heading / heading_tol) * heading_tol
        if plan.heading != heading:
            plan.set_heading(heading)
        return plan

    def excitation(self, t: float, north: float, east: float, heading: float, rao: ForceRAO,
                   heading_tol: float = 0.0) -> np.ndarray:
        """First-order wave excitation (6,) in body axes [N, N, N, N m, N m, N m] on a ship
        whose RAO reference point is at NED (north, east) with heading psi [rad]:

            tau_k = sum_i |F_k(w_i, beta_i)| Z_i cos(theta_i + angle F_k(w_i, beta_i)),
            beta_i = chi_i - psi,  theta_i = w_i t + eps_i - k_i (N cos chi_i + E sin chi_i)

        ([S4] eq. 71; MSS waveForceRAO.m lines 96 and 144-145).  The RAO x amplitude table
        is built once per (sea, rao); with heading_tol > 0 the heading is rounded to a multiple
        of it, so the interpolation is redone only when that changes (0: at any change).  t may be
        an array (M,) -> (M, 6).
        """
        plan = self.excitation_plan(rao, heading, heading_tol)
        if plan is None:  # calm sea
            return np.zeros(np.shape(t) + (6,))
        if np.ndim(t) == 0:
            return plan.cos_sin(plan.w3 @ np.array((t, north, east), dtype=float)) @ plan.p
        th = np.multiply.outer(np.asarray(t, dtype=float), plan.w3[:, 0]) + (plan.w3[:, 1] * north
                                                                           + plan.w3[:, 2] * east)
        return plan.cos_sin(th) @ plan.p


# --------------------------------------------------------------------------- realisation

def make_sea(spectrum: str, hs: float | None = None, period: float | None = None, gamma: float = 3.3,
             mean_direction: float = 0.0, spreading_s: float | None = 0.0, n_frequencies: int = 100,
             n_directions: int | None = None, omega_min: float = 0.1, omega_max: float = 3.0,
             seed: int | None = None, random_frequencies: bool = False,
             regular_amplitude: float | None = None, spreading_form: str = "cos2s",
             g: float = GRAVITY) -> Sea:
    """Seeded sea realisation ([S4] eqs. 61-70).

    spectrum: "jonswap" (period = Tp, `jonswap(normalise=True)`), "pm" (period = T1, ITTC
    `pierson_moskowitz`), "regular" (one component of amplitude `regular_amplitude` [m] and
    period `period` [s] towards mean_direction; hs ignored), "none" (no components).

    Frequencies: n_frequencies points omega_i = linspace(omega_min, omega_max), dw = spacing;
    each point stands for the bin [w_i - dw/2, w_i + dw/2].  With random_frequencies=False the
    record repeats after 2 pi / dw if omega_min is a multiple of dw (e.g. 0.1:0.05:3 -> 125.66 s);
    random_frequencies=True draws each w_i uniformly inside its bin (no periodicity).
    Directions: one (mean_direction) if spreading_s is 0/None; otherwise n_directions (default
    15) midpoints spread evenly over the support of `spreading_density(form)` around the mean
    (full circle for "cos2s", +-90 deg for "cos2s-half-plane"), weights from `spreading_weights`.
    Amplitudes Z_ij = sqrt(2 S(w_i) dw w_j) with sum_j w_j = 1; component order i-major.
    Random numbers: rng = np.random.default_rng(seed); first eps_ij ~ U[0, 2 pi) (shape
    (n_frequencies, n_directions)), then the frequency jitter.  seed=None means seed 0 for
    irregular seas and phase 0 for "regular" (an int seed gives a random regular phase).
    Same arguments -> bit-identical Sea.
    """
    spectrum = spectrum.lower()
    info = dict(spectrum=spectrum, hs=hs, period=period, gamma=gamma, mean_direction=mean_direction,
                spreading_s=spreading_s, seed=seed, random_frequencies=random_frequencies)
    if spectrum == "none":
        e = np.zeros(0)
        return Sea(e, e, e, e, g=g, info=info)
    if spectrum == "regular":
        if regular_amplitude is None or period is None:
            raise ValueError("a regular sea needs regular_amplitude and period")
        eps = 0.0 if seed is None else float(np.random.default_rng(seed).uniform(0.0, TWO_PI))
        return Sea(np.array([TWO_PI / period]), np.array([float(mean_direction)]),
                   np.array([float(regular_amplitude)]), np.array([eps]), g=g, info=info)
    if spectrum not in ("jonswap", "pm"):
        raise ValueError(f"unknown spectrum {spectrum!r}")
    if hs is None or period is None:
        raise ValueError("an irregular sea needs hs and period")
    rng = np.random.default_rng(0 if seed is None else seed)

    long_crested = spreading_s is None or spreading_s == 0
    m = 1 if long_crested else (15 if n_directions is None else int(n_directions))
    if long_crested:
        chi = np.array([float(mean_direction)])
        wdir = np.ones(1)
    else:
        half = math.pi if spreading_form == "cos2s" else 0.5 * math.pi
        chi = mean_direction - half + (np.arange(m) + 0.5) * (2.0 * half / m)
        wdir = spreading_weights(chi, mean_direction, spreading_s, spreading_form)

    if n_frequencies < 2:
        raise ValueError("n_frequencies must be >= 2")
    w = np.linspace(omega_min, omega_max, n_frequencies)
    dw = (omega_max - omega_min) / (n_frequencies - 1)
    eps = rng.uniform(0.0, TWO_PI, size=(n_frequencies, m))
    if random_frequencies:
        w = w + dw * (rng.uniform(size=n_frequencies) - 0.5)
    if np.any(w <= 0.0):
        raise ValueError("all frequencies must be positive (raise omega_min)")
    if spectrum == "jonswap":
        s = jonswap(w, hs, period, gamma, normalise=True)
    else:
        s = pierson_moskowitz(w, hs, period)
    amp = np.sqrt(2.0 * s[:, None] * dw * wdir[None, :])
    info.update(dw=dw, n_directions=m, spreading_form=spreading_form)
    return Sea(np.repeat(w, m), np.tile(chi, n_frequencies), amp.ravel(), eps.ravel(), g=g, info=info)


# --------------------------------------------------------------------------- benchmark

def _benchmark(vessel_path: str = "/work/shared/data/vessels/supply.mat", calls: int = 5000,
               runs: int = 7) -> None:
    """Print the cost of one Sea.excitation call, best of `runs` loops of `calls` calls
    (a benchmark, not a test: `python -m components.waves`)."""
    import scipy.io

    vessel = scipy.io.loadmat(vessel_path, squeeze_me=True, struct_as_record=False)["vessel"]
    rao = ForceRAO.from_mss(vessel)
    cases = [("100 x 1", dict(n_frequencies=100)),
             ("200 x 1", dict(n_frequencies=200)),
             ("50 x 10", dict(n_frequencies=50, spreading_s=5.0, n_directions=10))]
    for label, kw in cases:
        sea = make_sea("jonswap", 4.0, 9.0, seed=1, random_frequencies=True, **kw)
        t0 = time.perf_counter()
        sea.excitation(0.0, 0.0, 0.0, 0.3, rao)
        build = (time.perf_counter() - t0) * 1e3
        for name, dpsi in (("same heading", 0.0), ("new heading every call", 1e-6)):
            best = math.inf
            for _ in range(runs):
                psi = 0.3
                t0 = time.perf_counter()
                for n in range(calls):
                    psi += dpsi
                    sea.excitation(0.05 * n, 1.0, 2.0, psi, rao)
                best = min(best, time.perf_counter() - t0)
            print(f"{label} ({sea.n_components:3d} components) {name:23s}: "
                  f"{best / calls * 1e6:5.1f} us/call   (first call incl. table build {build:.1f} ms)")


if __name__ == "__main__":
    _benchmark()
