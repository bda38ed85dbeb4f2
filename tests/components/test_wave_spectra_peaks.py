"""Wave-spectrum numbers of ship_crane_digest.md sections 1.7, 1.8 and 7.5 (B1) not covered by
tests/components/test_waves.py's records, through components/waves.py:

* Pierson-Moskowitz (ITTC, mean period T1), H = 7 m, T1 = 10 s (the thesis' waverealization.m
  sea): peak at wp = 4.840 / T1 = 0.484 rad/s, Tp = 12.98 s;
* ITTC JONSWAP, H = 4 m, T1 = 6.5 s: peak at wp = 1 / (0.191 T1) = 0.805 rad/s;
* the JONSWAP eq. (60) constant 0.2053 against 5/16 (1 - 0.287 ln gamma) = 0.20542 at gamma 3.3;
* the PM form is Bretschneider's 173 H^2 / (T1^4 w^5) exp(-691 / (T1^4 w^4)) (0.11 (2 pi)^4 = 171.4);
* a realisation on a uniform grid of 0.05 rad/s repeats after 2 pi / 0.05 = 125.66 s.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import optimize

from components.waves import _jonswap_constant, jonswap_ittc, make_sea, pierson_moskowitz

VALIDATION_COMPONENT = "ship"
S17 = "ship_crane_digest.md 1.7"


def peak(spectrum, lo: float, hi: float) -> float:
    res = optimize.minimize_scalar(lambda w: -float(spectrum(np.array([w]))[0]), bounds=(lo, hi), method="bounded",
                                   options=dict(xatol=1e-10))
    return float(res.x)


def test_pm_h7_t1_10_peak(validation):
    wp = peak(lambda w: pierson_moskowitz(w, 7.0, 10.0), 0.2, 1.0)
    # to the printed digit (half a unit of the last)
    validation.record(case="PM (ITTC), H 7 m, T1 10 s: peak frequency", reference=0.484, ours=wp,
                      tolerance=5e-4 + 1e-12, tol_kind="abs", unit="rad/s", source=S17 + " [derived]")
    validation.record(case="PM (ITTC), H 7 m, T1 10 s: peak period", reference=12.98, ours=2 * math.pi / wp,
                      tolerance=5e-3 + 1e-12, tol_kind="abs", unit="s", source=S17 + " [derived]")
    assert abs(wp - 0.484) <= 5e-4 + 1e-12
    assert abs(2 * math.pi / wp - 12.98) <= 5e-3 + 1e-12


def test_jonswap_ittc_peak(validation):
    wp = peak(lambda w: jonswap_ittc(w, 4.0, 6.5), 0.4, 1.5)
    ref = 1.0 / (0.191 * 6.5)              # 0.80548, printed "0.805"
    # the maximum of S is the enhancement's centre moved by the base shape, whose own maximum is at
    # (4 944 / 5)^(1/4) / T1 = 0.8065 rad/s: within 1e-4 rad/s of 1 / (0.191 T1)
    validation.record(case="B1 JONSWAP (ITTC), H 4 m, T1 6.5 s: peak frequency vs 1 / (0.191 T1)", reference=ref,
                      ours=wp, tolerance=2e-4, tol_kind="abs", unit="rad/s", source="ship_crane_digest.md 7.5 B1")
    assert abs(wp - ref) <= 2e-4


def test_jonswap_constant_vs_goda_approximation(validation):
    ours = _jonswap_constant(3.3)
    # Goda's 5/16 (1 - 0.287 ln gamma) is an approximation of the exact normalisation (Goda 1988:
    # within about 1 % over 1 <= gamma <= 7)
    validation.record(case="JONSWAP normalisation constant at gamma 3.3 vs 5/16 (1 - 0.287 ln gamma)",
                      reference=0.20542, ours=ours, tolerance=5e-3, unit="-", source=S17 + " [derived]",
                      note="eq. (60) prints 0.2053")
    assert abs(ours / 0.20542 - 1.0) < 5e-3


def test_pm_is_bretschneider(validation):
    w = np.linspace(0.2, 3.0, 2801)
    pm = pierson_moskowitz(w, 4.0, 6.5)
    b = 173.0 * 4.0**2 / (6.5**4 * w**5) * np.exp(-691.0 / (6.5**4 * w**4))
    # Bretschneider's rounded 173 / 691 against 0.11 (2 pi)^4 = 171.4 and 0.44 (2 pi)^4 = 685.8:
    # 1 % apart at the peak, more in the tails; compared where S > 5 % of its peak
    band = pm > 0.05 * pm.max()
    err = float(np.max(np.abs(pm[band] - b[band])) / pm.max())
    validation.record(case="PM (ITTC), H 4 m, T1 6.5 s vs Bretschneider 173 / 691 (S > 5 % of the peak)",
                      reference="Bretschneider", ours=f"worst {err:.4f} of the peak", error=err, tolerance=0.02,
                      unit="-", source=S17 + " [derived]")
    assert err < 0.02


def test_uniform_grid_repeat_period(validation):
    sea = make_sea("pm", 4.0, 6.5, n_frequencies=39, omega_min=0.1, omega_max=2.0, seed=3)
    t = np.linspace(0.0, 200.0, 2001)
    lags = np.linspace(100.0, 150.0, 50001)
    # the lag at which the record repeats: the smallest mismatch over 100-150 s
    x = sea.elevation(t)
    mismatch = [float(np.max(np.abs(sea.elevation(t + lag) - x))) for lag in lags[::100]]
    coarse = float(lags[::100][int(np.argmin(mismatch))])
    fine = optimize.minimize_scalar(lambda lag: float(np.max(np.abs(sea.elevation(t + lag) - x))),
                                    bounds=(coarse - 0.2, coarse + 0.2), method="bounded",
                                    options=dict(xatol=1e-9)).x
    validation.record(case="uniform 0.05 rad/s grid (0.1-2 rad/s): repeat period of the elevation",
                      reference=125.66, ours=float(fine), tolerance=5e-3 + 1e-12, tol_kind="abs", unit="s",
                      source="ship_crane_digest.md 1.8, 7.5 B1 (2 pi / 0.05)")
    assert abs(fine - 125.66) <= 5e-3 + 1e-12
