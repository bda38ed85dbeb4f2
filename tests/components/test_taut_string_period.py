"""The taut-string case of anchors_marine.md section 3d (CableDyn's verification table, "analytic
taut string T1 = 2 L sqrt(mu / T): 4e-4"): a line stretched straight between two fixed ends, without
gravity or water, vibrating in its first transverse mode, through components/line.py.

The line of L = 10 m, 1 kg/m, EA = 1e6 N is stretched by 1 % (T = 1e4 N along it); its mass is
spread over the stretched length L_s, so the period of the continuous string is
2 L_s sqrt(mu' / T) with mu' = mu L / L_s.  The lumped string of n segments has
omega_1 = 2 c / l sin(pi / (2 n)) (l = L_s / n, c = sqrt(T / mu')): 1.6e-4 longer at n = 50.
Started on the mode shape with a small transverse velocity (1 mm amplitude: the tension changes by
(pi a / 2 L)^2 EA / T = 1e-6), integrated by RK4 at the line's own sub-step.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from components.line import Line, LineParams

VALIDATION_COMPONENT = "cable"
L, MU, EA, STRAIN, N = 10.0, 1.0, 1e6, 0.01, 50


def upward_crossings(t: np.ndarray, x: np.ndarray) -> np.ndarray:
    k = np.flatnonzero((x[:-1] < 0.0) & (x[1:] >= 0.0))
    return t[k] - x[k] * (t[k + 1] - t[k]) / (x[k + 1] - x[k])


def test_taut_string_first_period(validation):
    p = LineParams(length=L, diameter=0.01, mass_per_length=MU, EA=EA, damping=0.0, rho_water=0.0, g=0.0,
                   kBot=0.0, cBot=0.0)
    Ls = L * (1.0 + STRAIN)
    line = Line(p, np.zeros(3), np.array([Ls, 0.0, 0.0]), N, math.inf, scheme="rk4")
    T = EA * STRAIN
    c = math.sqrt(T / (MU * L / Ls))
    reference = 2.0 * Ls / c                                   # = 2 L_s sqrt(mu' / T)
    s = np.linspace(0.0, 1.0, N + 1)
    line.v[:, 1] = 1e-3 * math.pi / reference * 2.0 * np.sin(math.pi * s)     # 1 mm amplitude
    h, y = 2e-4, []
    for _ in range(int(round(3.2 * reference / h))):
        line.set_ends(np.zeros(3), np.zeros(3), [Ls, 0.0, 0.0], np.zeros(3))
        line.step(h)
        y.append(line.v[N // 2, 1])
    t = np.arange(1, len(y) + 1) * h
    up = upward_crossings(t, np.array(y))
    period = float(np.mean(np.diff(up)))
    # the lumped string's dispersion at n = 50 (1.6e-4) and crossings interpolated from 2e-4 s samples
    validation.record(case="taut string, 10 m at T = 1e4 N, 50 segments: first period vs 2 L sqrt(mu / T)",
                      reference=reference, ours=period, tolerance=5e-4, unit="s",
                      source="anchors_marine.md 3d (analytic taut string; CableDyn 4e-4)")
    lumped = 2.0 * math.pi / (2.0 * c / (Ls / N) * math.sin(math.pi / (2 * N)))
    # the same string discretised as ours: what is left is the time integration and the crossings
    validation.record(case="taut string, 50 segments: first period vs the lumped string's 2 c / l sin(pi / 2n)",
                      reference=lumped, ours=period, tolerance=2e-5, unit="s", source="lumped-mass string (analytic)")
    assert len(up) >= 3
    assert period == pytest.approx(reference, rel=5e-4)
    assert period == pytest.approx(lumped, rel=2e-5)
