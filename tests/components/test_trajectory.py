"""Motion planning and the stabilised servo constraint of crane trajectory control
(components/trajectory.py; Lee 2020 §2.5.2, §2.5.4, case study §4.3.1, digest §1.7 and §2.15).

* the three-phase profile starts at 0, ends at 1, with continuous c and c' (1e-12) and the
  velocity 1 / (tau - tau0) in between;
* the §4.3.1 transport: (0, 0, 20) -> (25, 10, 10) m with a 90 deg turnover; the planned pose ends
  there, and the Rodrigues axis with the factor 2 (the thesis prints 1 / sin) is a unit vector;
* the §4.3.1 case 1 feedback: a 300 t block starting 1 m off the trajectory is back on it within
  40 s (to 2 cm) while the trolley force stays within the crane's 50 kN; the integral term removes
  a steady push (the wind of case 2), which the same law without it cannot.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from components.trajectory import PlannedMotion, ServoFeedback, SmoothProfile, TrapezoidProfile, axis_angle, rotation


def test_profile_is_continuous_and_reaches_one():
    p = TrapezoidProfile(2.0, 62.0, 10.0)
    assert p(2.0) == (0.0, 0.0, 0.0) and p(62.0)[0] == 1.0 and p(100.0) == (1.0, 0.0, 0.0)
    for t in (12.0, 52.0):                     # the phase joints
        a, b = p(t - 1e-9), p(t + 1e-9)
        assert a[0] == pytest.approx(b[0], abs=1e-9) and a[1] == pytest.approx(b[1], abs=1e-9)
    assert p(30.0)[1] == pytest.approx(1.0 / 50.0)
    ts = np.linspace(2.0, 62.0, 60001)       # c' integrates to c
    c = np.array([p(t)[0] for t in ts])
    cd = np.array([p(t)[1] for t in ts])
    assert np.trapezoid(cd, ts) == pytest.approx(1.0, rel=1e-9)
    assert np.max(np.abs(np.gradient(c, ts) - cd)) < 1e-4
    with pytest.raises(ValueError):
        TrapezoidProfile(0.0, 10.0, 6.0)


def test_the_transport_and_turnover_of_the_gantry_case():
    """§4.3.1: from (0, 0, 20) to (25, 10, 10) with a 90 deg turnover about the block's x axis."""
    R_e = rotation([1.0, 0.0, 0.0], math.pi / 2)
    plan = PlannedMotion(np.array([0.0, 0.0, 20.0]), np.array([25.0, 10.0, 10.0]), np.eye(3), R_e,
                         TrapezoidProfile(0.0, 100.0, 20.0))
    assert plan.angle == pytest.approx(math.pi / 2, abs=1e-12)
    assert np.linalg.norm(plan.axis) == pytest.approx(1.0)             # with the factor 2
    assert np.allclose(plan.axis, [1.0, 0.0, 0.0])
    end = plan.at(100.0)
    assert np.allclose(end["position"], [25.0, 10.0, 10.0]) and np.allclose(end["attitude"], R_e, atol=1e-12)
    mid = plan.at(50.0)
    assert np.allclose(mid["position"], [12.5, 5.0, 15.0])
    _, angle = axis_angle(mid["attitude"])
    assert angle == pytest.approx(math.pi / 4)
    # the printed formula (1 / sin, no 2) would give an axis twice too long
    R = R_e
    printed = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]]) / math.sin(math.pi / 2)
    assert np.linalg.norm(printed) == pytest.approx(2.0)


@pytest.mark.parametrize("seed", range(5))
def test_rodrigues_round_trip(seed):
    rng = np.random.default_rng(seed)
    axis = rng.normal(size=3)
    for angle in (1e-3, 0.7, 2.5, math.pi):
        e, a = axis_angle(rotation(axis, angle))
        assert a == pytest.approx(angle, abs=1e-9)
        assert np.allclose(rotation(e, a), rotation(axis, angle), atol=1e-9)


def _track(feedback, push=0.0, mass=300e3, dt=0.01, t_end=60.0, offset=1.0):
    """The block on a perfect feedforward (its acceleration is the commanded one, plus a push / m),
    tracking a trajectory at rest: x starts ``offset`` off.  Returns (times, error, trolley force)."""
    x, v = offset, 0.0
    out_t, out_s, out_f = [], [], []
    for k in range(int(round(t_end / dt))):
        s, s_d = np.array([x]), np.array([v])
        a_cmd = float(feedback.command(np.zeros(1), s, s_d)[0])
        out_t.append(k * dt)
        out_s.append(x)
        out_f.append(mass * a_cmd)
        feedback.update(s, dt)
        a = a_cmd + push / mass
        v += a * dt
        x += v * dt
    return np.array(out_t), np.array(out_s), np.array(out_f)


def test_hybrid_feedback_brings_the_block_back_within_40_s_under_the_trolley_limit():
    """§4.3.1 case 1: 300 t, 1 m off at the start, "converges within 40 seconds", trolley force
    saturating at 50 kN (digest §2.15).  A triple pole at 0.2 1/s keeps m beta s(0) = 36 kN."""
    fb = ServoFeedback.from_poles((0.2, 0.2, 0.2))
    t, s, f = _track(fb)
    assert np.abs(f).max() <= 50e3
    assert np.abs(s[t >= 40.0]).max() < 0.02
    assert f[0] < 0.0                        # pulls the block back toward the trajectory


def test_the_integral_term_removes_a_steady_push():
    """§4.3.1 case 2's wind, as a steady 20 kN: no offset left with chi, a steady one without."""
    t, s, _ = _track(ServoFeedback.from_poles((0.2, 0.2, 0.2)), push=20e3, offset=0.0, t_end=120.0)
    assert abs(s[-1]) < 0.01
    fb = ServoFeedback(alpha=0.6, beta=0.12, chi=0.0)
    t, s, _ = _track(fb, push=20e3, offset=0.0, t_end=120.0)
    assert s[-1] == pytest.approx(20e3 / 300e3 / 0.12, rel=0.01)      # push / (m beta)


def test_bad_poles_are_refused():
    with pytest.raises(ValueError):
        ServoFeedback.from_poles((0.2, -0.1, 0.3))


def test_smooth_profile_is_c4_with_the_trapezoid_speed():
    """SmoothProfile: 0 -> 1, the cruise speed 1 / (tau - tau0) of the trapezoid, and the 2nd to
    4th derivatives continuous (zero) at the joints; each derivative that of the one before."""
    p = SmoothProfile(0.0, 60.0, 15.0)
    assert p(0.0) == (0.0, 0.0, 0.0) and p(60.0) == (1.0, 0.0, 0.0)
    assert p(30.0)[1] == pytest.approx(1.0 / 45.0) and p(30.0)[0] == pytest.approx(0.5)
    for t in (15.0, 45.0):
        a, b = p.derivatives(t - 1e-9), p.derivatives(t + 1e-9)
        assert np.allclose(a, b, atol=1e-8)
        assert np.allclose(b[2:], 0.0, atol=1e-8)
    ts = np.linspace(0.0, 60.0, 120001)
    d = np.array([p.derivatives(t) for t in ts])
    for k in range(4):
        num = np.gradient(d[:, k], ts)
        assert np.abs(num - d[:, k + 1]).max() < 1e-3 * max(np.abs(d[:, k + 1]).max(), 1e-12)
