"""The axial wave speed of Lee's mooring lines (wire_rope_mooring_digest.md section 5, "internal
stiffness" [derived]): sqrt(EA / m') = 549 m/s for 203.9 kg/m at EA 61 560 kN and 1003 m/s at
205 200 kN, through the lumped-mass line (components/line.py).

A straight line held at both ends with a small pretension (0.1 % strain), without gravity or water,
vibrating in its first axial mode: in the line's own (unstretched) arc length the axial wave travels
at c = sqrt(EA / m'), the period of the fixed-fixed mode is 2 L / c; the lumped line of n segments
has omega_1 = 2 c / l sin(pi / (2 n)) (l = L / n), 1.6e-4 longer at n = 50.  The measured period gives
our wave speed, 2 L / T.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from components.line import Line, LineParams

VALIDATION_COMPONENT = "cable"
L, MASS, N = 111.0, 203.9, 50
SOURCE = "wire_rope_mooring_digest.md 5 [derived] (sqrt(EA / m'))"


def upward_crossings(t: np.ndarray, x: np.ndarray) -> np.ndarray:
    k = np.flatnonzero((x[:-1] < 0.0) & (x[1:] >= 0.0))
    return t[k] - x[k] * (t[k + 1] - t[k]) / (x[k + 1] - x[k])


@pytest.mark.parametrize("EA, printed", [(61.56e6, 549.0), (205.2e6, 1003.0)])
def test_axial_wave_speed(EA, printed, validation):
    p = LineParams(length=L, diameter=0.1, mass_per_length=MASS, EA=EA, damping=0.0, rho_water=0.0, g=0.0,
                   kBot=0.0, cBot=0.0)
    Ls = L * 1.001
    line = Line(p, np.zeros(3), np.array([Ls, 0.0, 0.0]), N, math.inf, scheme="rk4")
    c = math.sqrt(EA / MASS)
    period_ref = 2.0 * L / c
    s = np.linspace(0.0, 1.0, N + 1)
    line.v[:, 0] = 1e-3 * np.sin(math.pi * s)                 # 1e-3 m/s: a strain change of 2e-6
    h, u = period_ref / 400.0, []
    for _ in range(1300):
        line.set_ends(np.zeros(3), np.zeros(3), [Ls, 0.0, 0.0], np.zeros(3))
        line.step(h)
        u.append(line.v[N // 2, 0])
    t = np.arange(1, len(u) + 1) * h
    period = float(np.mean(np.diff(upward_crossings(t, np.array(u)))))
    speed = 2.0 * L / period
    lumped = 2.0 * math.pi / (2.0 * c / (L / N) * math.sin(math.pi / (2 * N)))
    # the printed speed to the m/s; the lumped line's dispersion (1.6e-4 of 1000 m/s) is within it
    validation.record(case=f"Lee's 203.9 kg/m line, EA {EA / 1e3:,.0f} kN: axial wave speed 2 L / T of the first "
                           "axial mode", reference=printed, ours=speed, tolerance=0.5 + 0.2e-3 * printed,
                      tol_kind="abs", unit="m/s", source=SOURCE)
    # the same discretisation analytically: the time integration and the crossings are what is left
    validation.record(case=f"Lee's line, EA {EA / 1e3:,.0f} kN, 50 segments: first axial period vs the lumped "
                           "line's 2 c / l sin(pi / 2n)", reference=lumped, ours=period, tolerance=1e-6, unit="s",
                      source="lumped-mass bar (analytic)")
    assert abs(speed - printed) <= 0.5 + 0.2e-3 * printed
    assert period == pytest.approx(lumped, rel=1e-6)
