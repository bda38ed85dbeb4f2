"""The floating crane's wave-induced heave and pitch for the trajectory-control study (Lee 2020,
§4.3.2; digest §2.16, §3).

What the thesis gives: the barge moves in **heave and pitch only**, in **JONSWAP** seas from the
stern (direction 0): case 1 (Beaufort 5) Hs 1.65 m, Tp 5.10 s; case 2 (Beaufort 7) Hs 3.60 m,
Tp 6.70 s; and, as results of its (SyMAP) seakeeping, the maximum heave 0.38 / 0.88 m and maximum
pitch 0.61 / 0.41 deg.  What it does not give (digest §3): RAOs, hydrodynamic coefficients, the
wave-force model, gamma, the simulation length.

So this module does not compute the barge's response to the waves.  It synthesises heave and pitch
as the sum of N harmonics whose amplitudes follow the JONSWAP spectral shape of the case
(components/waves.py, eq. 60 of its [S4]; gamma 3.3, CHOICE), with random phases (seeded), and
scales each so that its maximum over the run equals the thesis' maximum:

    z(t)     = k_z  sum_n sqrt(2 S(w_n) dw) cos(w_n t + eps_n)
    theta(t) = k_th sum_n sqrt(2 S(w_n) dw) cos(w_n t + eps_n - pi/2)

(pitch a quarter period after heave, as a long barge's pitch lags its heave in following seas;
CHOICE).  The maximum heave and pitch are therefore inputs here, taken from the thesis, and not
validated; what the control study is tested on is the tracking error and the DAF the crane reaches
with that motion.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from components.waves import jonswap

__all__ = ["BargeMotion", "THESIS_CASES"]

# §4.3.2, Table 4-6 (digest §2.16): Hs [m], Tp [s], max heave [m], max pitch [deg]
THESIS_CASES = {1: (1.65, 5.10, 0.38, 0.61), 2: (3.60, 6.70, 0.88, 0.41)}


@dataclass
class BargeMotion:
    """Heave (NED, + down) and pitch (+ bow up) of the barge (module docstring), callable:
    ``motion(t) -> [z, z', z'', theta, theta', theta'']``."""
    hs: float
    tp: float
    max_heave: float           # [m]
    max_pitch: float           # [rad]
    duration: float            # [s] the window over which the maxima are reached
    n: int = 60
    seed: int = 1
    gamma: float = 3.3
    ramp: float = 5.0          # [s] a smooth start (the crane starts from a static state)
    _w: np.ndarray = field(init=False, repr=False)
    _phase: np.ndarray = field(init=False, repr=False)
    _az: np.ndarray = field(init=False, repr=False)
    _ath: np.ndarray = field(init=False, repr=False)

    @classmethod
    def thesis_case(cls, case: int, duration: float, **kw) -> "BargeMotion":
        hs, tp, zmax, thmax = THESIS_CASES[case]
        return cls(hs, tp, zmax, math.radians(thmax), duration, **kw)

    def __post_init__(self) -> None:
        wp = 2.0 * math.pi / self.tp
        w = np.linspace(0.5 * wp, 3.0 * wp, self.n)
        dw = w[1] - w[0]
        a = np.sqrt(2.0 * jonswap(w, self.hs, self.tp, self.gamma) * dw)
        rng = np.random.default_rng(self.seed)
        self._w = w + rng.uniform(-0.5, 0.5, self.n) * dw     # no exact repetition period
        self._phase = rng.uniform(0.0, 2.0 * math.pi, self.n)
        self._az, self._ath = a, a
        t = np.arange(0.0, self.duration, 0.01)
        z = np.array([self._raw(tt, self._az, 0.0)[0] for tt in t])
        th = np.array([self._raw(tt, self._ath, -0.5 * math.pi)[0] for tt in t])
        self._az = a * self.max_heave / np.abs(z).max()
        self._ath = a * self.max_pitch / np.abs(th).max()

    def _raw(self, t: float, amp: np.ndarray, lag: float) -> tuple[float, float, float]:
        w, arg = self._w, self._w * t + self._phase + lag
        c, s = np.cos(arg), np.sin(arg)
        x, xd, xdd = float(amp @ c), float(-(amp * w) @ s), float(-(amp * w * w) @ c)
        if t >= self.ramp:
            return x, xd, xdd
        # smoothstep ramp r(t) (C2): the product rule keeps x, x', x'' consistent
        u = max(t, 0.0) / self.ramp
        r = u ** 3 * (10.0 - 15.0 * u + 6.0 * u * u)
        rd = 30.0 * u * u * (1.0 - u) ** 2 / self.ramp
        rdd = 60.0 * u * (1.0 - u) * (1.0 - 2.0 * u) / self.ramp ** 2
        return r * x, rd * x + r * xd, rdd * x + 2.0 * rd * xd + r * xdd

    def __call__(self, t: float) -> np.ndarray:
        # the plant and the inverse dynamics ask for the same instants several times
        if t != getattr(self, "_last_t", None):
            self._last = np.array(self._raw(t, self._az, 0.0) + self._raw(t, self._ath, -0.5 * math.pi))
            self._last_t = t
        return self._last
