"""The floating crane's barge motion (components/wave_motion.py; Lee 2020 §4.3.2, digest §2.16, §3).

The thesis' maximum heave and pitch are inputs here (it gives no RAOs): the synthesis must reach
exactly them over the run, keep z, z', z'' (and theta's) consistent, start from rest, and carry
its energy at the JONSWAP peak period of the case.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from components.wave_motion import THESIS_CASES, BargeMotion


@pytest.mark.parametrize("case", [1, 2])
def test_maxima_are_the_thesis_values(case):
    hs, tp, zmax, thmax = THESIS_CASES[case]
    m = BargeMotion.thesis_case(case, 60.0)
    t = np.arange(0.0, 60.0, 0.01)
    x = np.array([m(tt) for tt in t])
    assert np.abs(x[:, 0]).max() == pytest.approx(zmax, rel=1e-12)            # 0.38 / 0.88 m
    assert math.degrees(np.abs(x[:, 3]).max()) == pytest.approx(thmax, rel=1e-12)  # 0.61 / 0.41 deg
    assert np.allclose(m(0.0), 0.0)                                            # from rest
    # derivatives consistent (central differences, 1e-4 of the peak)
    for i in (0, 3):
        num_d = np.gradient(x[:, i], t)
        num_dd = np.gradient(x[:, i + 1], t)
        assert np.abs(num_d[1:-1] - x[1:-1, i + 1]).max() < 1e-3 * np.abs(x[:, i + 1]).max()
        assert np.abs(num_dd[1:-1] - x[1:-1, i + 2]).max() < 1e-3 * np.abs(x[:, i + 2]).max()
    # the spectral peak of the heave is near the case's Tp
    z = x[:, 0] - x[:, 0].mean()
    f = np.fft.rfftfreq(len(z), 0.01)
    peak = f[np.argmax(np.abs(np.fft.rfft(z))[1:]) + 1]
    assert tp == pytest.approx(1.0 / peak, rel=0.25)
