"""Tests of components/waves.py: digest benchmark B1 (ship_crane_digest.md section 7.5) and the
MSS phase/heading convention.  Every check states its tolerance; timing lives in
`python -m components.waves` (a benchmark), not here."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.io
from scipy import integrate, optimize

from components.waves import (
    ForceRAO, Sea, jonswap, jonswap_alpha, jonswap_ittc, make_sea, pierson_moskowitz,
    significant_height, spectral_moment, spreading_density, spreading_weights,
)

from tests.conftest import VESSELS

SUPPLY = VESSELS / "supply.mat"
B1 = "ship_crane_digest.md 7.5 B1"
needs_supply = pytest.mark.skipif(not SUPPLY.exists(), reason="MSS supply.mat not available")


def quad_inf(f, a: float = 0.0) -> float:
    return integrate.quad(f, a, np.inf, limit=500, epsabs=0.0, epsrel=1e-12)[0]


@pytest.fixture(scope="module")
def supply():
    return scipy.io.loadmat(SUPPLY, squeeze_me=True, struct_as_record=False)["vessel"]


@pytest.fixture(scope="module")
def rao(supply) -> ForceRAO:
    return ForceRAO.from_mss(supply)


# ----------------------------------------------------------------------------- spectra (B1)

def test_pm_ittc_b1_targets(validation):
    """PM (ITTC, mean period), H = 4 m, T1 = 6.5 s: int S = 1.000 m^2, wp = 0.7446 rad/s,
    Tp = 8.44 s, Smax = 1.924 m^2 s, 97.6 % of the variance in 0.1-2 rad/s."""
    S = lambda w: float(pierson_moskowitz(np.array([w]), 4.0, 6.5)[0])
    validation.record(case="B1 PM (ITTC), H 4 m, T1 6.5 s: variance m0", reference=1.000, ours=quad_inf(S),
                      tolerance=1e-3, tol_kind="abs", unit="m^2", source=B1)
    assert quad_inf(S) == pytest.approx(1.000, abs=1e-3)
    w = np.linspace(0.01, 20.0, 200001)                       # a wide grid, trapezoid rule
    assert spectral_moment(w, pierson_moskowitz(w, 4.0, 6.5)) == pytest.approx(1.000, abs=1e-3)
    assert significant_height(w, pierson_moskowitz(w, 4.0, 6.5)) == pytest.approx(4.0, abs=2e-3)
    res = optimize.minimize_scalar(lambda x: -S(x), bounds=(0.3, 1.5), method="bounded",
                                   options=dict(xatol=1e-10))
    for what, ref, ours, tol, unit in (("peak frequency", 0.7446, res.x, 1e-4, "rad/s"),
                                       ("peak period", 8.44, 2 * math.pi / res.x, 5e-3, "s"),
                                       ("spectral peak", 1.924, -res.fun, 1e-3, "m^2 s"),
                                       ("variance in 0.1-2 rad/s", 0.976, integrate.quad(S, 0.1, 2.0)[0], 1e-3, "m^2")):
        validation.record(case=f"B1 PM (ITTC), H 4 m, T1 6.5 s: {what}", reference=ref, ours=ours, tolerance=tol,
                          tol_kind="abs", unit=unit, source=B1)
    assert res.x == pytest.approx(0.7446, abs=1e-4)
    assert 2 * math.pi / res.x == pytest.approx(8.44, abs=5e-3)
    assert -res.fun == pytest.approx(1.924, abs=1e-3)
    assert integrate.quad(S, 0.1, 2.0)[0] == pytest.approx(0.976, abs=1e-3)


def test_jonswap_eq60_and_alpha_forms(validation):
    """[S4] eq. (60) (0.2053 Hs^2), Hs = 4, wp = 1.3, gamma = 3.3 -> Hs = 4.004 m (1e-3);
    the alpha = 0.0081 form at wp = 1.3 -> Hs = 1.154 m (1e-3)."""
    tp = 2 * math.pi / 1.3
    m0 = quad_inf(lambda w: float(jonswap(np.array([w]), 4.0, tp, 3.3, normalise=False)[0]))
    m0a = quad_inf(lambda w: float(jonswap_alpha(np.array([w]), 1.3)[0]))
    validation.record(case="B1 JONSWAP eq. (60), Hs 4 m, wp 1.3 rad/s, gamma 3.3: 4 sqrt(m0)", reference=4.004,
                      ours=4 * math.sqrt(m0), tolerance=1e-3, tol_kind="abs", unit="m", source=B1)
    validation.record(case="B1 JONSWAP alpha = 0.0081 form, wp 1.3 rad/s: 4 sqrt(m0)", reference=1.154,
                      ours=4 * math.sqrt(m0a), tolerance=1e-3, tol_kind="abs", unit="m", source=B1)
    assert 4 * math.sqrt(m0) == pytest.approx(4.004, abs=1e-3)
    assert 4 * math.sqrt(m0a) == pytest.approx(1.154, abs=1e-3)
    # the peak of both forms is at wp (the shape is the same)
    w = np.linspace(1.0, 1.6, 60001)
    assert w[np.argmax(jonswap_alpha(w, 1.3))] == pytest.approx(1.3, abs=2e-5)


@pytest.mark.parametrize("gamma", [1.0, 3.3, 7.0])
def test_jonswap_normalised_gives_hs_exactly(gamma, validation):
    """normalise=True: 4 sqrt(m0) == Hs to 1e-9 (relative) for gamma 1, 3.3, 7."""
    m0 = quad_inf(lambda w: float(jonswap(np.array([w]), 4.0, 8.0, gamma)[0]))
    validation.record(case=f"JONSWAP normalised, Hs 4 m, Tp 8 s, gamma {gamma}: 4 sqrt(m0)", reference=4.0,
                      ours=4 * math.sqrt(m0), tolerance=1e-9, unit="m", source="definition of Hs = 4 sqrt(m0)")
    assert 4 * math.sqrt(m0) == pytest.approx(4.0, rel=1e-9)


def test_jonswap_eq60_is_only_exact_near_gamma_3p3():
    """The 0.2053 form is off by > 15 % in Hs at gamma = 7 and > 10 % at gamma = 1."""
    for gamma, off in ((7.0, 0.15), (1.0, 0.10)):
        m0 = quad_inf(lambda w: float(jonswap(np.array([w]), 4.0, 8.0, gamma, normalise=False)[0]))
        assert abs(4 * math.sqrt(m0) / 4.0 - 1.0) > off


def test_jonswap_ittc_b1(validation):
    """ITTC JONSWAP, H = 4 m, T1 = 6.5 s: Hs = 4.002 m (1e-3)."""
    m0 = quad_inf(lambda w: float(jonswap_ittc(np.array([w]), 4.0, 6.5)[0]))
    validation.record(case="B1 JONSWAP (ITTC), H 4 m, T1 6.5 s: 4 sqrt(m0)", reference=4.002, ours=4 * math.sqrt(m0),
                      tolerance=1e-3, tol_kind="abs", unit="m", source=B1)
    assert 4 * math.sqrt(m0) == pytest.approx(4.002, abs=1e-3)


# ----------------------------------------------------------------------------- spreading

@pytest.mark.parametrize("form", ["cos2s", "cos2s-half-plane"])
@pytest.mark.parametrize("s", [1.0, 2.0, 5.0, 15.0])
def test_spreading_density_integrates_to_one(form, s):
    """Continuous D integrates to 1 over the circle (1e-9)."""
    val = integrate.quad(lambda th: float(spreading_density(th, s, form)), -math.pi, math.pi,
                         points=[-math.pi / 2, 0.0, math.pi / 2], limit=200, epsabs=0, epsrel=1e-12)[0]
    assert val == pytest.approx(1.0, abs=1e-9)


def test_spreading_weights_sum_to_one_and_no_4_over_pi():
    """Discrete weights sum to 1 (1e-14) on any grid.  [S2]'s (2/pi) cos^2 without dchi at
    0/45/90 deg around 45 deg sums to 4/pi = 1.273 -- must not be reproduced."""
    mean = math.radians(45.0)
    dirs = np.radians([0.0, 45.0, 90.0])
    s2_sum = np.sum(2 / math.pi * np.cos(dirs - mean) ** 2)       # the flawed [S2] variant
    assert s2_sum == pytest.approx(4 / math.pi, rel=1e-12)
    w = spreading_weights(dirs, mean, 1.0, form="cos2s-half-plane")
    assert w.sum() == pytest.approx(1.0, abs=1e-14)
    assert w == pytest.approx(np.array([0.25, 0.5, 0.25]), abs=1e-14)   # cos^2: 0.5, 1, 0.5
    rng = np.random.default_rng(4)
    for _ in range(5):
        d = np.sort(rng.uniform(-math.pi, math.pi, 11))
        for form in ("cos2s", "cos2s-half-plane"):
            assert spreading_weights(d, 0.3, 3.0, form).sum() == pytest.approx(1.0, abs=1e-14)


def test_spreading_s0_is_long_crested():
    d = np.radians(np.arange(0, 360, 30.0))
    for s in (0, 0.0, None):
        w = spreading_weights(d, math.radians(62.0), s)
        assert w.sum() == 1.0 and w.max() == 1.0 and np.argmax(w) == 2     # 60 deg is closest


@pytest.mark.parametrize("form", ["cos2s", "cos2s-half-plane"])
def test_short_crested_realisation_variance_equals_sum_S_dw(form):
    """Z_ij = sqrt(2 S dw w_j): sum Z^2/2 = sum_i S(w_i) dw (1e-12 relative) -- no 4/pi factor."""
    sea = make_sea("jonswap", 3.0, 9.0, spreading_s=2.0, n_directions=7, spreading_form=form, seed=2)
    w = np.unique(sea.omega)
    dw = sea.info["dw"]
    assert sea.variance == pytest.approx(np.sum(jonswap(w, 3.0, 9.0)) * dw, rel=1e-12)
    assert sea.n_components == 7 * 100 and np.unique(sea.direction).size == 7


# ----------------------------------------------------------------------------- realisation

def test_uniform_grid_repeats_after_2pi_over_dw_random_grid_does_not():
    """0.1:0.05:3 rad/s repeats after 2 pi/0.05 = 125.66 s to 1e-9 m; random-in-bin
    frequencies differ by > 0.1 m somewhere after the same delay."""
    period = 2 * math.pi / 0.05
    assert period == pytest.approx(125.66, abs=5e-3)
    t = np.linspace(0.0, 300.0, 3001)
    uni = make_sea("pm", 4.0, 6.5, n_frequencies=59, omega_min=0.1, omega_max=3.0, seed=5)
    assert uni.info["dw"] == pytest.approx(0.05, abs=1e-15)
    assert np.max(np.abs(uni.elevation(t + period) - uni.elevation(t))) < 1e-9
    # the uniform grid does not repeat earlier (half period): not a trivial pass
    assert np.max(np.abs(uni.elevation(t + period / 2) - uni.elevation(t))) > 0.1
    rnd = make_sea("pm", 4.0, 6.5, n_frequencies=59, omega_min=0.1, omega_max=3.0, seed=5,
                   random_frequencies=True)
    assert np.max(np.abs(rnd.elevation(t + period) - rnd.elevation(t))) > 0.1


def test_realisation_variance_matches_m0():
    """JONSWAP Hs = 4 m, Tp = 9 s (m0 = 1 m^2, 0.2 % of it above 3 rad/s).
    Random frequencies: time variance of a 3 h record equals sum Z^2/2 within 1 % and
    m0 within 4 % (sum S(w_i) dw at jittered w_i is a Monte-Carlo-like quadrature:
    0.973-1.026 over seeds 11-15).  Uniform grid: sum Z^2/2 = m0 within 1 %."""
    m0 = quad_inf(lambda w: float(jonswap(np.array([w]), 4.0, 9.0)[0]))
    assert m0 == pytest.approx(1.0, rel=1e-9)
    sea = make_sea("jonswap", 4.0, 9.0, seed=11, random_frequencies=True)
    t = np.arange(0.0, 3 * 3600.0, 0.5)
    var = float(np.var(sea.elevation(t)))
    assert var == pytest.approx(sea.variance, rel=0.01)
    assert var == pytest.approx(m0, rel=0.04)
    uni = make_sea("jonswap", 4.0, 9.0, seed=11)
    assert uni.variance == pytest.approx(m0, rel=0.01)
    assert float(np.var(uni.elevation(t))) == pytest.approx(m0, rel=0.04)


def test_uniform_grid_variance_over_one_period_is_exact():
    """Over one repeat period the sinusoids are orthogonal: mean zeta^2 = sum Z^2/2 (1e-9)."""
    sea = make_sea("pm", 4.0, 6.5, n_frequencies=59, omega_min=0.1, omega_max=3.0, seed=9)
    period = 2 * math.pi / 0.05
    t = np.arange(2048) * (period / 2048)              # 2048 > 2 * 60 samples per highest harmonic
    assert np.mean(sea.elevation(t) ** 2) == pytest.approx(sea.variance, rel=1e-9)


def test_same_seed_identical_different_seed_different():
    kw = dict(spreading_s=3.0, n_directions=5, random_frequencies=True)
    a = make_sea("jonswap", 2.5, 8.0, seed=42, **kw)
    b = make_sea("jonswap", 2.5, 8.0, seed=42, **kw)
    c = make_sea("jonswap", 2.5, 8.0, seed=43, **kw)
    for name in ("omega", "direction", "amplitude", "phase", "k"):
        assert np.array_equal(getattr(a, name), getattr(b, name))
    assert a.elevation(12.3, 4.0, -7.0) == b.elevation(12.3, 4.0, -7.0)
    assert not np.array_equal(a.phase, c.phase)
    assert not np.array_equal(a.omega, c.omega)
    assert abs(a.elevation(12.3) - c.elevation(12.3)) > 1e-6


def test_sea_is_frozen():
    sea = make_sea("jonswap", 2.0, 8.0, seed=1)
    with pytest.raises(Exception):
        sea.omega = np.zeros(3)
    with pytest.raises(ValueError):
        sea.phase[0] = 1.0


def test_none_sea_is_calm(rao):
    sea = make_sea("none")
    assert sea.n_components == 0
    assert sea.elevation(3.0, 1.0, 2.0) == 0.0
    assert np.array_equal(sea.excitation(3.0, 1.0, 2.0, 0.4, rao), np.zeros(6))
    assert np.array_equal(sea.particle_velocity(3.0, 1.0, 2.0, 5.0), np.zeros(3))


# ----------------------------------------------------------------------------- regular wave, conventions

def test_regular_wave_phase_at_origin_and_downstream_lag():
    """zeta(t, 0) = a cos(w t + eps) (1e-12 m); a point at distance d along the travel
    direction chi lags by k d; a point across it does not."""
    a, T, chi = 1.5, 8.0, math.radians(30.0)
    sea = make_sea("regular", period=T, regular_amplitude=a, mean_direction=chi, seed=7)
    w = 2 * math.pi / T
    k = w**2 / 9.81
    eps = float(sea.phase[0])
    assert eps != 0.0
    assert make_sea("regular", period=T, regular_amplitude=a).phase[0] == 0.0
    t = np.linspace(0.0, 40.0, 401)
    assert np.max(np.abs(sea.elevation(t) - a * np.cos(w * t + eps))) < 1e-12
    d = 37.0
    n, e = d * math.cos(chi), d * math.sin(chi)
    assert np.max(np.abs(sea.elevation(t, n, e) - a * np.cos(w * t + eps - k * d))) < 1e-12
    # the crest arrives later downstream by d / c, c = w / k
    assert np.max(np.abs(sea.elevation(t + d * k / w, n, e) - sea.elevation(t))) < 1e-12
    # across the travel direction: no lag
    n2, e2 = -d * math.sin(chi), d * math.cos(chi)
    assert np.max(np.abs(sea.elevation(t, n2, e2) - sea.elevation(t))) < 1e-12
    # vectorised over points
    pts = sea.elevation(2.0, np.array([0.0, n, n2]), np.array([0.0, e, e2]))
    assert pts.shape == (3,) and pts[0] == pytest.approx(a * math.cos(w * 2.0 + eps), abs=1e-12)


@needs_supply
@pytest.mark.parametrize("j_w, j_beta, psi_deg", [(5, 0, 0.0), (12, 9, 40.0), (20, 18, -100.0),
                                                   (27, 31, 200.0)])
def test_regular_wave_excitation_pins_mss_convention(rao, j_w, j_beta, psi_deg):
    """Frequency and relative heading exactly on the data grid:
    tau_k = |F_k| a cos(w t + eps + angle F_k) for all six DOF (1e-9 of |F_k| a)."""
    w = float(rao.omega[j_w])
    beta = float(rao.heading[j_beta])
    psi = math.radians(psi_deg)
    a = 0.8
    sea = make_sea("regular", period=2 * math.pi / w, regular_amplitude=a,
                   mean_direction=beta + psi, seed=3)
    eps = float(sea.phase[0])
    for t in (0.0, 1.3, 7.9):
        tau = sea.excitation(t, 0.0, 0.0, psi, rao)
        ref = rao.amplitude[:, j_w, j_beta] * a * np.cos(w * t + eps + rao.phase[:, j_w, j_beta])
        # 1e-9 of |F_k| a, plus 1e-12 of the DOF's largest table entry (a heading that is
        # on the grid up to round-off mixes in ~1e-16 of the neighbouring heading)
        tol = 1e-9 * rao.amplitude[:, j_w, j_beta] * a + 1e-12 * rao.amplitude.max(axis=(1, 2)) * a
        assert np.all(np.abs(tau - ref) <= tol)


@needs_supply
def test_long_wave_heave_is_hydrostatic(supply, rao):
    """Lowest frequency (0.105 rad/s), head and beam seas: |F3| ~ rho g Awp = C33 (10 %),
    and under the crest the heave force (z down) is -C33 a (phase pi)."""
    c33 = float(supply.C[2, 2, 0])
    w0 = float(rao.omega[0])
    for beta_deg in (180.0, 90.0):
        j = int(np.argmin(np.abs(rao.heading - math.radians(beta_deg))))
        assert rao.amplitude[2, 0, j] == pytest.approx(c33, rel=0.10)
        sea = make_sea("regular", period=2 * math.pi / w0, regular_amplitude=1.0,
                       mean_direction=math.radians(beta_deg))
        tau = sea.excitation(0.0, 0.0, 0.0, 0.0, rao)          # crest at the ship
        assert sea.elevation(0.0) == pytest.approx(1.0)
        assert tau[2] == pytest.approx(-c33, rel=0.10)


@needs_supply
def test_heading_convention_following_and_beam_from_port(supply, rao):
    """In long waves the horizontal force is ~ (rho nabla + A) times the fluid acceleration
    in the travel direction, i.e. it leads zeta by pi/2.  At w t = -pi/2 (a quarter period
    before the crest) the fluid accelerates along the travel direction, so:
      * beta = 0 (following, travelling along +x): surge > 0;
      * ship heading east (psi = 90 deg), waves travelling south (chi = 180 deg) -> beta = 90 deg,
        travelling to starboard (from port): sway > 0; waves travelling north: sway < 0.
    Magnitudes: rho nabla w^2 within 15 % for surge."""
    w0 = float(rao.omega[0])
    t = -0.5 * math.pi / w0
    rho_nabla = 1025.0 * float(supply.main.nabla)
    fol = make_sea("regular", period=2 * math.pi / w0, regular_amplitude=1.0, mean_direction=0.0)
    tau = fol.excitation(t, 0.0, 0.0, 0.0, rao)
    assert tau[0] > 0 and tau[0] == pytest.approx(rho_nabla * w0**2, rel=0.15)
    head = make_sea("regular", period=2 * math.pi / w0, regular_amplitude=1.0, mean_direction=math.pi)
    assert head.excitation(t, 0.0, 0.0, 0.0, rao)[0] < 0
    south = make_sea("regular", period=2 * math.pi / w0, regular_amplitude=1.0, mean_direction=math.pi)
    north = make_sea("regular", period=2 * math.pi / w0, regular_amplitude=1.0, mean_direction=0.0)
    psi = 0.5 * math.pi
    ts, tn = south.excitation(t, 0.0, 0.0, psi, rao), north.excitation(t, 0.0, 0.0, psi, rao)
    assert ts[1] > 0.5 * rao.amplitude[1, 0, 9] and tn[1] < -0.5 * rao.amplitude[1, 0, 27]
    assert abs(ts[0]) < 1e-3 * abs(ts[1])                      # pure beam sea: no surge


@needs_supply
def test_excitation_uses_position_phase(rao):
    """A ship displaced by d along the travel direction sees the force delayed by k d / w."""
    w = float(rao.omega[10])
    chi = math.radians(200.0)
    sea = make_sea("regular", period=2 * math.pi / w, regular_amplitude=1.0, mean_direction=chi, seed=1)
    d = 25.0
    k = w**2 / 9.81
    for t in (0.0, 3.0):
        ahead = sea.excitation(t + k * d / w, d * math.cos(chi), d * math.sin(chi), 0.3, rao)
        assert np.allclose(ahead, sea.excitation(t, 0.0, 0.0, 0.3, rao), rtol=1e-9, atol=1e-6)


def _complex_response(sea: Sea, psi: float, rao: ForceRAO) -> np.ndarray:
    """C with tau(t) = Re(C e^{i w t}) for a single-component sea at the origin."""
    w = float(sea.omega[0])
    return sea.excitation(0.0, 0.0, 0.0, psi, rao) + 1j * sea.excitation(-0.5 * math.pi / w, 0.0, 0.0, psi, rao)


@needs_supply
def test_excitation_between_headings_is_interpolated_smoothly(rao):
    """Midway between two table headings the complex force is the mean of the two
    (linear Re/Im interpolation as MSS; 1e-9), 355 deg wraps to (350 + 0)/2, and a sweep
    of 3601 headings round the circle never jumps more than the grid slope allows."""
    jw = 14
    w = float(rao.omega[jw])
    c_tab = rao.amplitude[:, jw, :] * np.exp(1j * rao.phase[:, jw, :])      # (6, 36)
    dh = math.radians(10.0)

    def sea_at(beta):
        return make_sea("regular", period=2 * math.pi / w, regular_amplitude=1.0, mean_direction=beta)

    for j0, j1, beta in ((4, 5, math.radians(45.0)), (35, 0, math.radians(355.0))):
        c = _complex_response(sea_at(beta), 0.0, rao)
        ref = 0.5 * (c_tab[:, j0] + c_tab[:, j1])
        assert np.max(np.abs(c - ref) / np.abs(c_tab[:, [j0, j1]]).max(axis=1).clip(1e-30)) < 1e-9
    # smoothness: sweep the ship heading with a fixed wave
    sea = sea_at(0.0)
    psis = np.linspace(0.0, 2 * math.pi, 3601)
    cs = np.array([_complex_response(sea, p, rao) for p in psis])              # (3601, 6)
    slope = np.abs(np.diff(np.concatenate([c_tab, c_tab[:, :1]], axis=1), axis=1)).max(axis=1) / dh
    step = psis[1] - psis[0]
    assert np.all(np.abs(np.diff(cs, axis=0)) <= slope * step * (1 + 1e-9) + 1e-6)
    assert np.allclose(cs[0], cs[-1], rtol=1e-12, atol=1e-6)                   # wrap-around


@needs_supply
def test_prepare_and_vectorised_time_agree_with_direct_sum(rao):
    """Short-crested sea, arbitrary heading and position: excitation == Re sum F Z e^{i theta}
    with F from ForceRAO.complex_rao (1e-9 relative); t-array form == scalar form."""
    sea = make_sea("jonswap", 4.0, 9.0, n_frequencies=50, spreading_s=5.0, n_directions=10, seed=3,
                   random_frequencies=True)
    psi, t, n, e = 0.7, 12.3, 10.0, -20.0
    amp = rao.complex_rao(sea.omega, sea.direction - psi) * sea.amplitude * np.exp(1j * sea.phase)
    theta = sea.omega * t - sea.k * (n * np.cos(sea.direction) + e * np.sin(sea.direction))
    ref = (amp * np.exp(1j * theta)).sum(axis=1).real
    tau = sea.excitation(t, n, e, psi, rao)
    assert np.max(np.abs(tau - ref)) < 1e-9 * np.max(np.abs(ref))
    assert np.max(np.abs(rao.prepare(sea, psi) - amp)) < 1e-9 * np.max(np.abs(amp))
    series = sea.excitation(np.array([t, t + 1.0]), n, e, psi, rao)
    assert series.shape == (2, 6) and np.max(np.abs(series[0] - tau)) < 1e-9 * np.max(np.abs(ref))
    # heading tolerance: reuse within tol, exact otherwise
    tau_tol = sea.excitation(t, n, e, psi + 1e-5, rao, heading_tol=1e-4)
    assert np.array_equal(tau_tol, sea.excitation(t, n, e, psi, rao, heading_tol=1e-4))


@needs_supply
def test_from_mss_shapes_and_headings(supply, rao):
    assert rao.amplitude.shape == (6, 36, 36) and rao.phase.shape == (6, 36, 36)
    assert rao.heading[0] == 0.0 and rao.heading[-1] == pytest.approx(math.radians(350.0))
    assert rao.omega[0] == pytest.approx(0.1047, abs=1e-4)
    assert "MSS" in rao.convention
    # the same table in degrees (newer MSS files) gives the same RAO
    class V:  # minimal stand-in with degree headings
        forceRAO = supply.forceRAO
        headings = np.degrees(supply.headings)
    assert np.array_equal(ForceRAO.from_mss(V()).heading, rao.heading) or \
        np.allclose(ForceRAO.from_mss(V()).heading, rao.heading, atol=1e-12)


# ----------------------------------------------------------------------------- kinematics

def test_particle_velocity_deep_water():
    """At depth 0 the vertical velocity (down) is -dzeta/dt (1e-6 m/s by central difference);
    the amplitude decays as e^{-k d} (1e-12); horizontal velocity is along chi; zero above."""
    a, T, chi = 1.0, 7.0, math.radians(120.0)
    sea = make_sea("regular", period=T, regular_amplitude=a, mean_direction=chi, seed=2)
    w, k = 2 * math.pi / T, (2 * math.pi / T) ** 2 / 9.81
    t, h = 3.3, 1e-5
    v0 = sea.particle_velocity(t, 0.0, 0.0, 0.0)
    dzdt = (sea.elevation(t + h) - sea.elevation(t - h)) / (2 * h)
    assert v0.shape == (3,) and v0[2] == pytest.approx(-dzdt, abs=1e-6)
    horiz = v0[:2]
    assert abs(horiz[0] * math.sin(chi) - horiz[1] * math.cos(chi)) < 1e-12
    d = 12.0
    vd = sea.particle_velocity(t, 0.0, 0.0, d)
    assert np.allclose(vd, v0 * math.exp(-k * d), atol=1e-12)
    speeds = np.linalg.norm(sea.particle_velocity(np.linspace(0, T, 200), 0.0, 0.0, 0.0), axis=-1)
    assert np.allclose(speeds, w * a, rtol=1e-12)           # circular orbits at the surface
    assert np.array_equal(sea.particle_velocity(t, 0.0, 0.0, -0.5), np.zeros(3))
    acc = sea.particle_acceleration(t, 0.0, 0.0, 2.0)
    num = (sea.particle_velocity(t + h, 0.0, 0.0, 2.0) - sea.particle_velocity(t - h, 0.0, 0.0, 2.0)) / (2 * h)
    assert np.allclose(acc, num, atol=1e-6)


@needs_supply
def test_general_sea_and_nonuniform_rao_headings(rao):
    """Fallback paths: a hand-made Sea (unequal components per direction) and an RAO with a
    non-uniform heading grid give the direct sum (1e-9 relative); beta just below 0 wraps."""
    rng = np.random.default_rng(8)
    n = 37
    sea = Sea(omega=rng.uniform(0.2, 2.0, n), direction=rng.choice([0.1, 1.0, 2.5, 4.0], n),
              amplitude=rng.uniform(0.0, 0.5, n), phase=rng.uniform(0.0, 2 * math.pi, n))
    keep = np.r_[0:10, 12:20, 21:36]                                  # drop 100, 110, 200 deg
    sparse = ForceRAO(rao.omega, rao.heading[keep], rao.amplitude[:, :, keep], rao.phase[:, :, keep])
    assert sparse._dh is None and rao._dh is not None
    for r in (rao, sparse):
        psi, t, x, y = -2.2, 5.0, 3.0, 4.0
        amp = r.complex_rao(sea.omega, sea.direction - psi) * sea.amplitude * np.exp(1j * sea.phase)
        theta = sea.omega * t - sea.k * (x * np.cos(sea.direction) + y * np.sin(sea.direction))
        ref = (amp * np.exp(1j * theta)).sum(axis=1).real
        assert np.max(np.abs(sea.excitation(t, x, y, psi, r) - ref)) < 1e-9 * np.max(np.abs(ref))
    # complex_rao at a table heading of the sparse RAO reproduces the data
    j = 12                                                           # 120 deg
    c = sparse.complex_rao(rao.omega[5:6], rao.heading[j])[:, 0]
    assert np.allclose(c, rao.amplitude[:, 5, j] * np.exp(1j * rao.phase[:, 5, j]), rtol=1e-12)
    # round-off just below beta = 0 (u == Nb after the modulo) stays on the table
    reg = make_sea("regular", period=7.0, regular_amplitude=1.0, mean_direction=0.0)
    assert np.allclose(reg.excitation(1.0, 0.0, 0.0, 1e-17, rao), reg.excitation(1.0, 0.0, 0.0, 0.0, rao),
                       rtol=1e-9, atol=1e-6)


@needs_supply
def test_excitation_with_a_heading_tolerance_depends_on_the_heading_alone(rao):
    """With heading_tol the RAO is interpolated at the heading rounded to a multiple of it, so the
    excitation at a heading does not depend on which headings were asked before (a restored FMU
    state, a rollback, repeats its run bit for bit); and it stays within the RAOs' change over
    tol/2 of the exact interpolation."""
    sea = make_sea("jonswap", hs=3.0, period=8.0, mean_direction=1.0, seed=2, spreading_s=4.0, n_directions=5)
    tol, psi = 1e-4, 0.30004
    fresh = sea.excitation(2.0, 1.0, 2.0, psi, rao, heading_tol=tol)
    for before in ((-1.0, 0.29997), (-1.0, 0.30011), (0.3001,), (-1.0,)):   # other histories of headings
        for heading in before:
            sea.excitation(1.0, 1.0, 2.0, heading, rao, heading_tol=tol)
        assert np.array_equal(sea.excitation(2.0, 1.0, 2.0, psi, rao, heading_tol=tol), fresh)
    exact = sea.excitation(2.0, 1.0, 2.0, psi, rao)
    assert np.allclose(fresh, exact, rtol=1e-3, atol=1e-6 * np.abs(exact).max())
