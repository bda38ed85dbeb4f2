"""Tests of components/catenary.py: the static elastic catenary with seabed contact and friction.

References
----------
* wire_rope_mooring_digest.md section 2.9: Table 3-3 of Lee (2020), data from Kim et al.; the
  digest's [derived] reference values, read as the 1,000 m chord inclined at the slope angle.
* anchors_marine.md section 3a: MoorDyn's 50 m chain benchmark (test ``quasi_static_chain.cpp``,
  deck ``tests/Mooring/WD0050_Chain.txt`` of FloatingArrayDesign/MoorDyn): chain D = 0.252 m,
  390 kg/m, EA = 1.674e9 N, rho = 1025 kg/m^3, anchor 400 m from the fairlead and 50 m below it,
  L = 410 m; quasi-static references 991.6 kN (fairlead) and 826.2 kN (anchor); MoorPy
  1002.0 / 835.9 kN.  The same test's 200 m and 600 m chains (decks WD0200/WD0600_Chain.txt:
  700 m / 200 m / 760 m and 1500 m / 600 m / 1700 m) have references 2065.4 / 1402.2 kN and
  5232.6 / 3244.2 kN.
"""
from __future__ import annotations

import math
import os

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import brentq

from components.catenary import (CatenaryResult, _solve_bracketed, _solve_newton,
                                  node_positions_3d, solve_catenary)

G = 9.81
RHO = 1025.0
CHAIN_D, CHAIN_M, CHAIN_EA = 0.252, 390.0, 1.674e9
# weight in water per unstretched length: (m' - rho pi d^2/4) g = 3324.39 N/m (MoorDyn's "ww_l")
CHAIN_W = (CHAIN_M - RHO * math.pi / 4.0 * CHAIN_D**2) * G


def _ode_end(r: CatenaryResult) -> tuple[float, float]:
    """Fairlead position by quadrature of the elastic-catenary ODE of a fully suspended line.

    dx/ds = H/T + H/EA, dz/ds = V/T + V/EA, V(s) = V_A + w s, T = sqrt(H^2 + V^2)
    (Irvine, Cable Structures, 1981, eqs. 2.4-2.5): independent of the closed forms.
    """
    H, VA, w, EA = r.H, r.V_anchor, r.weight_per_length, r.EA
    T = lambda s: math.hypot(H, VA + w * s)
    opts = dict(epsabs=1e-11, epsrel=1e-13, limit=200)
    x = quad(lambda s: H / T(s), 0.0, r.length, **opts)[0] + H * r.length / EA
    z = quad(lambda s: (VA + w * s) / T(s), 0.0, r.length, **opts)[0] \
        + (VA * r.length + 0.5 * w * r.length**2) / EA
    return x, z


# --------------------------------------------------------------------- Table 3-3 (digest 2.9)
# inextensible: theta, T_H, T_A (lower end), T_B (upper end) [kN], max sag below the chord [m]
TABLE_33_INEXT = [
    (0, 2541.7, 2740.9, 2740.9, 99.64),
    (15, 2373.1, 2399.6, 2917.2, 103.01),
    (30, 1912.7, 1918.7, 2918.7, 114.35),
    (45, 1283.5, 1340.0, 2754.2, 138.39),
]
# elastic, theta = 0: EA/W, T_H [kN], mid-span sag [m], T_max [kN]
TABLE_33_ELASTIC = [
    (1, 515.8, 444.53, 1148.4), (2, 703.5, 334.39, 1244.0), (5, 1001.3, 241.82, 1433.6),
    (10, 1259.0, 195.39, 1624.1), (50, 1886.0, 133.08, 2147.0), (100, 2112.8, 119.25, 2348.7),
    (300, 2356.5, 107.26, 2570.2),
]
KIM_L, KIM_W, KIM_CHORD = 1026.0, 2000.0, 1000.0
KIM_WTOT = KIM_W * KIM_L                                     # W = 2,052,000 N
KN, M = 0.05 + 1e-9, 0.005 + 1e-9                            # half a unit of the printed digit
TABLE_33 = "wire_rope_mooring_digest.md 2.9, Table 3-3 (Kim et al.)"


@pytest.mark.parametrize("theta, TH, TA, TB, sag", TABLE_33_INEXT)
def test_table_3_3_inextensible(theta, TH, TA, TB, sag, validation):
    b, h = KIM_CHORD * math.cos(math.radians(theta)), KIM_CHORD * math.sin(math.radians(theta))
    r = solve_catenary(b, h, KIM_L, KIM_W, math.inf, seabed=False)
    s, x, z = r.profile(100001)
    for what, ref, ours, tol, unit in (("T_H", TH, r.H / 1e3, KN, "kN"), ("T_A", TA, r.tension_anchor / 1e3, KN, "kN"),
                                       ("T_B", TB, r.tension_fairlead / 1e3, KN, "kN"),
                                       ("max sag", sag, np.max(x * h / b - z), M, "m")):
        validation.record(case=f"Table 3-3 inextensible, theta {theta} deg: {what}", reference=ref, ours=ours,
                          tolerance=tol, tol_kind="abs", unit=unit, source=TABLE_33)
    assert abs(r.H / 1e3 - TH) <= KN
    assert abs(r.tension_anchor / 1e3 - TA) <= KN
    assert abs(r.tension_fairlead / 1e3 - TB) <= KN
    assert abs(np.max(x * h / b - z) - sag) <= M            # vertical distance below the chord


@pytest.mark.parametrize("k, TH, sag_mid, Tmax", TABLE_33_ELASTIC)
def test_table_3_3_elastic(k, TH, sag_mid, Tmax, validation):
    r = solve_catenary(KIM_CHORD, 0.0, KIM_L, KIM_W, k * KIM_WTOT, seabed=False)
    s, x, z = r.profile(200001)
    for what, ref, ours, tol, unit in (("T_H", TH, r.H / 1e3, KN, "kN"),
                                       ("mid-span sag", sag_mid, -np.interp(0.5 * KIM_CHORD, x, z), M, "m"),
                                       ("T_max", Tmax, max(r.tension_fairlead, r.tension_anchor) / 1e3, KN, "kN")):
        validation.record(case=f"Table 3-3 elastic, EA/W {k}: {what}", reference=ref, ours=ours, tolerance=tol,
                          tol_kind="abs", unit=unit, source=TABLE_33)
    assert abs(r.H / 1e3 - TH) <= KN
    assert abs(-np.interp(0.5 * KIM_CHORD, x, z) - sag_mid) <= M
    assert abs(max(r.tension_fairlead, r.tension_anchor) / 1e3 - Tmax) <= KN
    assert r.tension_fairlead == pytest.approx(r.tension_anchor, rel=1e-12)   # symmetric


# --------------------------------------------------------------------- 50 m chain (anchors 3a)
def test_chain_50m_vs_moorpy(validation):
    """Same model as MoorPy's catenary (no friction): 1002.0 / 835.9 kN, to the printed digit."""
    r = solve_catenary(400.0, 50.0, 410.0, CHAIN_W, CHAIN_EA)
    for what, ref, ours in (("fairlead", 1002.0, r.tension_fairlead / 1e3), ("anchor", 835.9, r.tension_anchor / 1e3)):
        validation.record(case=f"50 m chain, {what} tension vs MoorPy's catenary", reference=ref, ours=ours,
                          tolerance=0.05 + 1e-9, tol_kind="abs", unit="kN", source="anchors_marine.md 3a (MoorPy)")
    assert abs(r.tension_fairlead / 1e3 - 1002.0) <= 0.05 + 1e-9
    assert abs(r.tension_anchor / 1e3 - 835.9) <= 0.05 + 1e-9
    assert 0.0 < r.grounded_length < 410.0 and r.V_anchor == 0.0


def test_chain_50m_vs_quasi_static_reference(validation):
    """991.6 / 826.2 kN from the MoorDyn test: we are +1.05 % / +1.17 % (MoorPy identical).

    No frictionless catenary with the deck's inputs gets within 1 %: the 50 m line is nearly taut
    (+0.06 m of length lowers both tensions by 1 %) and the reference's own T_F - T_A = 165.4 kN
    implies w = 3308 N/m against 3324.4 N/m from the deck.  The deeper 200 m / 600 m chains
    of the same test, far less sensitive, agree to 0.3 % (next test).  Tolerance here: 1.5 %.
    """
    r = solve_catenary(400.0, 50.0, 410.0, CHAIN_W, CHAIN_EA)
    e_f = r.tension_fairlead / 991.6e3 - 1.0
    e_a = r.tension_anchor / 826.2e3 - 1.0
    for what, ref, ours in (("fairlead", 991.6, r.tension_fairlead / 1e3), ("anchor", 826.2, r.tension_anchor / 1e3)):
        validation.record(case=f"50 m chain, {what} tension vs MoorDyn's quasi-static reference", reference=ref,
                          ours=ours, tolerance=0.015, unit="kN", source="anchors_marine.md 3a (MoorDyn test)",
                          note="nearly taut line; MoorPy gives the same +1.1 %")
    assert abs(e_f) < 0.015 and abs(e_a) < 0.015, (e_f, e_a)


@pytest.mark.parametrize("X, Z, L, ref_f, ref_a", [
    (700.0, 200.0, 760.0, 2065.4, 1402.2),
    (1500.0, 600.0, 1700.0, 5232.6, 3244.2),
])
def test_chain_deep_vs_quasi_static_reference(X, Z, L, ref_f, ref_a, validation):
    r = solve_catenary(X, Z, L, CHAIN_W, CHAIN_EA)
    for what, ref, ours in (("fairlead", ref_f, r.tension_fairlead / 1e3), ("anchor", ref_a, r.tension_anchor / 1e3)):
        validation.record(case=f"{Z:.0f} m chain, {what} tension vs MoorDyn's quasi-static reference", reference=ref,
                          ours=ours, tolerance=0.005, unit="kN", source="anchors_marine.md 3a (MoorDyn test)")
    assert r.tension_fairlead / 1e3 == pytest.approx(ref_f, rel=0.005)
    assert r.tension_anchor / 1e3 == pytest.approx(ref_a, rel=0.005)
    assert r.grounded_length > 0.0


# --------------------------------------------------------------------- inextensible limit
def test_inextensible_limit_suspended_symmetric():
    """EA -> large vs the classic catenary: L = 2a sinh(b/2a), H = w a, T_end = w a cosh(b/2a)."""
    b, L, w = 300.0, 340.0, 800.0
    a = brentq(lambda a: 2 * a * math.sinh(b / (2 * a)) - L, 1.0, 1e6, xtol=1e-14, rtol=1e-15)
    for EA in (1e16, math.inf):
        r = solve_catenary(b, 0.0, L, w, EA, seabed=False)
        assert r.H == pytest.approx(w * a, rel=1e-9)
        assert r.tension_fairlead == pytest.approx(w * a * math.cosh(b / (2 * a)), rel=1e-9)
        assert r.V_fairlead == pytest.approx(0.5 * w * L, rel=1e-9)
        s, x, z = r.profile(40001)
        assert -z.min() == pytest.approx(a * (math.cosh(b / (2 * a)) - 1.0), rel=1e-6)
    # the elastic solution converges to it: H(EA) -> w a from below, error ~ 1/EA
    e = [w * a - solve_catenary(b, 0.0, L, w, EA, seabed=False).H for EA in (1e8, 1e9)]
    assert e[0] > e[1] > 0.0 and e[0] / e[1] == pytest.approx(10.0, rel=0.05)


def test_inextensible_limit_touchdown():
    """Touchdown, EA -> inf: Ls = sqrt(h^2 + 2 a h), x_s = a acosh(1 + h/a), X = L - Ls + x_s."""
    X, h, L, w = 400.0, 50.0, 410.0, CHAIN_W

    def span(a):
        return L - math.sqrt(h * h + 2 * a * h) + a * math.acosh(1 + h / a) - X
    a = brentq(span, 1.0, 1e7, xtol=1e-13, rtol=1e-15)
    r = solve_catenary(X, h, L, w, math.inf)
    assert r.H == pytest.approx(w * a, rel=1e-9)
    assert r.tension_fairlead == pytest.approx(w * a + w * h, rel=1e-9)     # T_F = H + w h
    assert r.grounded_length == pytest.approx(L - math.sqrt(h * h + 2 * a * h), rel=1e-9)
    assert solve_catenary(X, h, L, w, 1e17).H == pytest.approx(w * a, rel=1e-6)


# --------------------------------------------------------------------- taut line, force balance
@pytest.mark.parametrize("X, Z, L, EA, seabed", [
    (95.0, 30.0, 100.0, 5e8, True),          # taut mooring leg, anchor lifts (V_A > 0)
    (99.0, 30.0, 100.0, 5e7, True),          # chord longer than L: stretched
    (800.0, -150.0, 900.0, 1e9, False),      # fairlead below the anchor, free-hanging
])
def test_taut_force_balance_and_profile_end(X, Z, L, EA, seabed):
    w = 1500.0
    r = solve_catenary(X, Z, L, w, EA, seabed=seabed)
    assert r.grounded_length == 0.0
    assert r.V_fairlead - r.V_anchor == pytest.approx(w * L, rel=1e-12)
    assert r.tension_anchor == pytest.approx(math.hypot(r.H, r.V_anchor), rel=1e-12)
    if seabed:
        assert r.V_anchor > 0.0
    s, x, z = r.profile(101)
    assert abs(x[-1] - X) < 1e-9 and abs(z[-1] - Z) < 1e-9
    assert x[0] == 0.0 and z[0] == 0.0
    xe, ze = _ode_end(r)                                     # independent quadrature
    assert abs(xe - X) < 1e-8 and abs(ze - Z) < 1e-8


def test_touchdown_profile_and_slope_continuity():
    r = solve_catenary(400.0, 50.0, 410.0, CHAIN_W, CHAIN_EA)
    s, x, z = r.profile(4101)
    assert abs(x[-1] - 400.0) < 1e-9 and abs(z[-1] - 50.0) < 1e-9
    ground = s <= r.grounded_length
    assert np.all(z[ground] == 0.0) and np.all(z[~ground] > 0.0)
    assert np.all(np.diff(x) > 0.0) and np.all(np.diff(z) >= 0.0)
    # fairlead angle: tan = V_F / H; V_F = w * suspended length
    assert r.V_fairlead == pytest.approx(CHAIN_W * (410.0 - r.grounded_length), rel=1e-12)
    slope = (z[-1] - z[-2]) / (x[-1] - x[-2])
    assert slope == pytest.approx(r.V_fairlead / r.H, rel=2e-3)


# --------------------------------------------------------------------- seabed friction
@pytest.mark.parametrize("cb", [0.05, 0.3, 1.0])
def test_friction_reduces_anchor_tension(cb):
    X, Z, L, w, EA = 400.0, 50.0, 410.0, CHAIN_W, 2e8
    r0 = solve_catenary(X, Z, L, w, EA, 0.0)
    r = solve_catenary(X, Z, L, w, EA, cb)
    expected = max(r.H - cb * w * r.grounded_length, 0.0)
    assert r.H_anchor == pytest.approx(expected, rel=1e-12, abs=1e-9)
    assert r.tension_anchor == pytest.approx(expected, rel=1e-12, abs=1e-9)
    assert r.tension_anchor < r0.tension_anchor
    # friction only unloads the grounded part, so it stretches less: the line is tauter
    assert r.H > r0.H
    # grounded stretch: x(s) - s = (1/EA) int_0^s T ds', T(s) = max(H - cb w (L_B - s), 0)
    s, x, z = r.profile(2001)
    LB = r.grounded_length
    T = lambda u: max(r.H - cb * w * (LB - u), 0.0)
    kink = [max(LB - r.H / (cb * w), 0.0)]
    for k in np.flatnonzero(s <= LB)[::50]:
        stretch = quad(T, 0.0, s[k], points=kink if 0 < kink[0] < s[k] else None)[0] / EA
        assert abs(x[k] - s[k] - stretch) < 1e-9
        assert z[k] == 0.0
    if expected == 0.0:                                      # fully shielded anchor
        assert r.H < cb * w * r.grounded_length


def test_friction_no_effect_when_inextensible_or_suspended():
    r0 = solve_catenary(400.0, 50.0, 410.0, CHAIN_W, math.inf, 0.0)
    r1 = solve_catenary(400.0, 50.0, 410.0, CHAIN_W, math.inf, 0.7)
    assert r1.H == pytest.approx(r0.H, rel=1e-10)
    assert r1.tension_anchor == pytest.approx(r0.H - 0.7 * CHAIN_W * r0.grounded_length, rel=1e-9)
    t0 = solve_catenary(95.0, 30.0, 100.0, 1500.0, 5e8, 0.0)
    t1 = solve_catenary(95.0, 30.0, 100.0, 1500.0, 5e8, 0.7)
    assert t1.H == t0.H and t1.tension_anchor == t0.tension_anchor


# --------------------------------------------------------------------- special regimes
def test_line_fully_on_seabed():
    # taut along the seabed: H = EA (X/L - 1) without friction
    r = solve_catenary(401.0, 0.0, 400.0, CHAIN_W, CHAIN_EA)
    assert r.V_fairlead == 0.0 and r.grounded_length == 400.0
    assert r.H == pytest.approx(CHAIN_EA * (401.0 / 400.0 - 1.0), rel=1e-9)
    # slack on the seabed: no tension, the excess length lies compressed along the seabed
    r = solve_catenary(380.0, 0.0, 400.0, CHAIN_W, CHAIN_EA, 0.5)
    assert r.H == 0.0 and r.tension_fairlead == 0.0 and r.grounded_length == 400.0
    s, x, z = r.profile(11)
    assert x[-1] == 380.0 and np.all(z == 0.0) and np.all(np.diff(x) > 0)


def test_slack_and_vertical_lines():
    # fairlead right above the anchor: H = 0, suspended part hangs with V_F = w Ls,
    # Ls + w Ls^2 / (2 EA) = Z (stretched hanging length)
    w, EA, Z = 1000.0, 1e7, 50.0
    Ls = (-1.0 + math.sqrt(1.0 + 2.0 * w * Z / EA)) * EA / w
    for X in (0.0, 10.0):                                    # 10 m: grounded part slack
        r = solve_catenary(X, Z, 100.0, w, EA)
        assert r.H == 0.0 and r.V_fairlead == pytest.approx(w * Ls, rel=1e-12)
        assert r.grounded_length == pytest.approx(100.0 - Ls, rel=1e-12)
        s, x, z = r.profile(201)
        assert abs(x[-1] - X) < 1e-12 and abs(z[-1] - Z) < 1e-9
    # taut vertical line: V_F - V_A = w L and Z = L + (V_F L - w L^2/2)/EA
    r = solve_catenary(0.0, 50.0, 49.5, w, EA)
    assert r.H == 0.0 and r.grounded_length == 0.0 and r.V_anchor > 0.0
    assert r.V_fairlead - r.V_anchor == pytest.approx(w * 49.5, rel=1e-12)
    assert 49.5 + (r.V_fairlead * 49.5 - 0.5 * w * 49.5**2) / EA == pytest.approx(50.0, rel=1e-13)
    # a line just long enough when stretched by its own weight touches down: V_A = 0
    r = solve_catenary(0.0, 50.0, 49.9, w, EA)
    assert r.V_anchor == 0.0 and 0.0 < r.grounded_length < 0.1


def test_newton_and_bracketed_solvers_agree():
    cases = [(400.0, 50.0, 410.0, CHAIN_W, 1 / CHAIN_EA, 0.0, True),
             (400.0, 50.0, 410.0, CHAIN_W, 1 / 2e8, 0.5, True),
             (95.0, 30.0, 100.0, 1500.0, 1 / 5e8, 0.0, True),
             (966.0, 259.0, 1026.0, 2000.0, 1 / 2.052e6, 0.0, False)]
    for XF, ZF, L, w, inv_EA, cb, seabed in cases:
        tol = 1e-12 * L
        n = _solve_newton(XF, ZF, L, w, inv_EA, cb, seabed, tol)
        b = _solve_bracketed(XF, ZF, L, w, inv_EA, cb, seabed)
        assert n is not None
        assert n[0] == pytest.approx(b[0], rel=1e-9) and n[1] == pytest.approx(b[1], rel=1e-9)


def test_random_inputs_never_nan_and_close():
    rng = np.random.default_rng(12345)
    count = 0
    while count < 400:
        L = 10 ** rng.uniform(0, 4)
        seabed = bool(rng.integers(2))
        ang = rng.uniform(0.0 if seabed else -math.pi / 2, math.pi / 2)
        chord = L * rng.uniform(0.05, 1.02)
        X, Z = chord * math.cos(ang), chord * math.sin(ang)
        w, EA = 10 ** rng.uniform(0, 4), 10 ** rng.uniform(5, 12)
        cb = float(rng.choice([0.0, rng.uniform(0.0, 1.5)]))
        r = solve_catenary(X, Z, L, w, EA, cb, seabed)
        s, x, z = r.profile(21)
        vals = [r.H, r.V_fairlead, r.V_anchor, r.tension_fairlead, r.tension_anchor,
                r.grounded_length, r.H_anchor]
        assert np.all(np.isfinite(vals)) and np.all(np.isfinite(x)) and np.all(np.isfinite(z))
        assert r.H >= 0.0 and 0.0 <= r.grounded_length <= L and r.H_anchor <= r.H
        assert abs(x[-1] - X) < 1e-10 * L + 1e-12 and abs(z[-1] - Z) < 1e-10 * L + 1e-12
        count += 1


# --------------------------------------------------------------------- bad input
GOOD = dict(horizontal_span=400.0, vertical_span=50.0, length=410.0,
            weight_per_length=CHAIN_W, EA=CHAIN_EA, seabed_friction=0.0)


@pytest.mark.parametrize("name, value", [
    ("horizontal_span", float("nan")), ("horizontal_span", -1.0), ("horizontal_span", math.inf),
    ("vertical_span", float("nan")), ("length", float("nan")), ("length", 0.0),
    ("length", -5.0), ("weight_per_length", float("nan")), ("weight_per_length", 0.0),
    ("weight_per_length", -10.0), ("EA", float("nan")), ("EA", 0.0), ("EA", -1e9),
    ("seabed_friction", float("nan")), ("seabed_friction", -0.1), ("length", "abc"),
])
def test_bad_input_names_parameter(name, value):
    with pytest.raises(ValueError, match=name):
        solve_catenary(**{**GOOD, name: value})


def test_impossible_geometry():
    with pytest.raises(ValueError, match="length"):          # inextensible, shorter than chord
        solve_catenary(400.0, 50.0, 400.0, CHAIN_W, math.inf)
    with pytest.raises(ValueError, match="vertical_span"):   # fairlead below the seabed
        solve_catenary(400.0, -5.0, 410.0, CHAIN_W, CHAIN_EA, seabed=True)
    # a finite-EA line shorter than the chord is legal: it is stretched
    r = solve_catenary(400.0, 50.0, 400.0, CHAIN_W, CHAIN_EA)
    assert r.H > 1e6 and r.grounded_length == 0.0


# --------------------------------------------------------------------- 3-D node positions
@pytest.mark.parametrize("anchor, fairlead, L, EA, cb", [
    ((400.0, 0.0, 50.0), (0.0, 0.0, 0.0), 410.0, CHAIN_EA, 0.5),          # touchdown
    ((120.0, -35.0, 210.0), (-150.0, 230.0, 12.0), 420.0, 4e8, 0.0),      # oblique, touchdown
    ((10.0, 20.0, 130.0), (80.0, -30.0, 40.0), 100.0, 5e8, 0.0),          # taut
])
def test_node_positions_3d(anchor, fairlead, L, EA, cb):
    a, f = np.array(anchor), np.array(fairlead)
    X, Z = float(np.hypot(*(f - a)[:2])), float(a[2] - f[2])
    r = solve_catenary(X, Z, L, CHAIN_W, EA, cb)
    n = 42
    P = node_positions_3d(a, f, r, n)
    assert P.shape == (n, 3)
    assert np.array_equal(P[0], a) and np.array_equal(P[-1], f)
    d = np.hypot(*(P[:, :2] - a[:2]).T)                      # horizontal distance from the anchor
    assert np.all(np.diff(d) > 0.0)
    assert np.all(np.diff(P[:, 2]) <= 1e-12)                 # depth never increases (z down)
    u = (f - a)[:2] / X                                      # nodes lie in the vertical plane
    assert np.max(np.abs((P[:, 0] - a[0]) * u[1] - (P[:, 1] - a[1]) * u[0])) < 1e-9
    assert np.all(P[:, 2] <= a[2] + 1e-12)                   # nothing below the seabed
    # even unstretched spacing: each segment chord <= its stretched arc, and barely shorter
    seg = np.linalg.norm(np.diff(P, axis=0), axis=1)
    ds = L / (n - 1)
    assert np.all(seg <= ds * (1.0 + r.tension_fairlead / EA) + 1e-9)
    assert np.all(seg >= ds * (1.0 - 1e-3))
    if r.grounded_length > 0.0:                              # grounded nodes on the seabed
        s = np.linspace(0.0, L, n)
        assert np.max(np.abs(P[s <= r.grounded_length, 2] - a[2])) < 1e-9


def test_node_positions_3d_rejects_mismatched_result():
    r = solve_catenary(400.0, 50.0, 410.0, CHAIN_W, CHAIN_EA)
    with pytest.raises(ValueError, match="spans"):
        node_positions_3d([0.0, 0.0, 50.0], [300.0, 0.0, 0.0], r, 10)


# --------------------------------------------------------------------- MoorDyn side by side
MOORDYN_DECK = """--------------------- MoorDyn Input File ------------------------------------
50 m chain (anchors_marine.md 3a; MoorDyn tests/Mooring/WD0050_Chain.txt)
----------------------- LINE TYPES ------------------------------------------
TypeName   Diam    Mass/m     EA         BA/-zeta    EI         Cd     Ca     CdAx    CaAx
(name)     (m)     (kg/m)     (N)        (N-s/-)     (N-m^2)    (-)    (-)    (-)     (-)
chain      0.252   390        1.674e9    -1.0        0          1.37   1.0    0.64    0.0
---------------------- POINT PROPERTIES --------------------------------
ID    Type      X       Y       Z       Mass   Volume  CdA    Ca
(#)   (-)       (m)     (m)     (m)     (kg)   (m^3)   (m^2)  (-)
1     Fixed     400     0.0     -50.0   0      0       0      0
2     Vessel    0.0     0.0     0.0     0      0       0      0
---------------------- LINES ----------------------------------------
ID   LineType   AttachA  AttachB  UnstrLen  NumSegs  LineOutputs
(#)   (name)     (#)      (#)       (m)       (-)     (-)
1     chain      1        2         410       41      -
---------------------- OPTIONS -----------------------------------------
0             writeLog             Write a log file
0.001         dtM                  time step to use in mooring integration (s)
1.0e5         kBot                 bottom stiffness (Pa/m)
1.0e4         cBot                 bottom damping (Pa-s/m)
9.81          g                    gravity (m/s^2)
1025.0        WtrDnsty             water density (kg/m^3)
50            WtrDpth              water depth (m)
1.0           dtIC                 time interval for analyzing convergence during IC gen (s)
200.0         TmaxIC               max time for ic gen (s)
4.0           CdScaleIC            factor by which to scale drag coefficients during dynamic relaxation (-)
1.0e-3        threshIC             threshold for IC convergence (-)
0.5           FrictionCoefficient  general bottom friction coefficient (-)
------------------------- need this line --------------------------------------
"""


def test_moordyn_static_side_by_side(tmp_path, validation):
    """MoorDyn's static 50 m chain vs ours.

    MoorDyn's seabed is a spring (kBot = 1e5 Pa/m per unit diameter), so the grounded chain
    sinks delta = w / (kBot d) = 0.132 m: the suspended part spans 50 + delta vertically, and this
    nearly taut line is sensitive to that.  We solve with vertical_span = 50 + delta and compare
    the fairlead tension (1 %), H (0.5 %) and every node position (0.1 m).
    """
    moordyn = pytest.importorskip("moordyn")
    deck = tmp_path / "chain.txt"
    deck.write_text(MOORDYN_DECK)
    cwd = os.getcwd()
    os.chdir(tmp_path)                                       # keep any MoorDyn output here
    try:
        system = moordyn.Create(str(deck))
        assert moordyn.Init(system, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]) == 0
        fh, fv, ah, av = moordyn.GetFASTtens(system, 1)
        line = moordyn.GetLine(system, 1)
        nodes = np.array([moordyn.GetLineNodePos(line, i)
                          for i in range(moordyn.GetLineNumberNodes(line))])
        moordyn.Close(system)
    finally:
        os.chdir(cwd)
    T_md = math.hypot(fh[0], fv[0])
    delta = CHAIN_W / (1.0e5 * CHAIN_D)
    # MoorDyn's static initial-condition solve ignores the seabed friction (its result is
    # identical with FrictionCoefficient 0), so compare with our frictionless solution
    r = solve_catenary(400.0, 50.0 + delta, 410.0, CHAIN_W, CHAIN_EA, 0.0)
    # MoorDyn: z up, origin at the fairlead; ours in NED with the anchor on the sunk seabed
    P = node_positions_3d([400.0, 0.0, 50.0 + delta], [0.0, 0.0, 0.0], r, len(nodes))
    nodes_ned = nodes * np.array([1.0, 1.0, -1.0])
    src = "MoorDyn (python moordyn), anchors_marine.md 3a deck"
    validation.record(case="50 m chain static: fairlead tension, catenary vs MoorDyn", reference=T_md / 1e3,
                      ours=r.tension_fairlead / 1e3, tolerance=0.01, unit="kN", source=src)
    validation.record(case="50 m chain static: horizontal tension, catenary vs MoorDyn", reference=abs(fh[0]) / 1e3,
                      ours=r.H / 1e3, tolerance=0.005, unit="kN", source=src)
    validation.record(case="50 m chain static: node positions, catenary vs MoorDyn", reference="MoorDyn nodes",
                      ours=f"worst {np.max(np.abs(P[1:] - nodes_ned[1:])):.3f} m",
                      error=float(np.max(np.abs(P[1:] - nodes_ned[1:]))), tolerance=0.1, tol_kind="abs", unit="m",
                      source=src)
    assert T_md == pytest.approx(r.tension_fairlead, rel=0.01)
    assert abs(fh[0]) == pytest.approx(r.H, rel=0.005)
    assert np.max(np.abs(P[1:] - nodes_ned[1:])) < 0.1      # node 0 is the anchor, 0.13 m above
