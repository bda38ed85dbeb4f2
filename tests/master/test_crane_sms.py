"""SMS API boom-crane validation cases 4.4.1-4.4.6 (DRDC Atlantic CR 2010-256, Sec. 4.4; digest
/work/shared/reference/sms_api_digest.md Sec. 5 "4.4 BoomCrane class" and Sec. 7 errata) through
ArticulatedBody and a fixed-step RK4 loop written here.

The report works in a z-up earth frame, so these tests pass gravity (0, 0, -9.81) and the
report's base pose. Each test states the report's expected and simulated values, ours and the
tolerance; run with ``-s`` to see the table lines. The crane controller is another module's job,
so the tests carry their own small helpers: a held-rate helper (solves for the joint torque that
gives zero joint acceleration; the ABA is affine in tau) and a PID with the integral as an ODE
state (SMS eq. 67, position mode).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy.optimize import least_squares

from components.articulated_body import ArticulatedBody
from components.mechanism import preset
from components.spatial import rx

G_ZUP = np.array([0.0, 0.0, -9.81])
BASE_ROLL90 = rx(math.pi / 2)          # report base pose [0, 0, 0, pi/2, 0, 0]


def rk4(f, y0: np.ndarray, dt: float, steps: int, record=None) -> np.ndarray:
    """Classic RK4 for y' = f(y); record(y, step) is called after each step."""
    y = np.asarray(y0, dtype=float)
    for s in range(steps):
        k1 = f(y)
        k2 = f(y + 0.5 * dt * k1)
        k3 = f(y + 0.5 * dt * k2)
        k4 = f(y + dt * k3)
        y = y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        if record is not None:
            record(y, s + 1)
    return y


def free_dynamics(ab: ArticulatedBody, base_R=None, gravity=G_ZUP):
    n = ab.n
    tau = np.zeros(n)

    def f(y):
        q, qd = y[:n], y[n:]
        return np.concatenate((qd, ab.forward_dynamics(q, qd, tau, base_R=base_R, gravity=gravity).qdd))
    return f


def held_rate_torque(ab: ArticulatedBody, q, qd, tau, j: int, **kw) -> tuple[float, np.ndarray]:
    """Torque on joint j that makes qdd_j = 0 (the joint 'held' at its rate), and the resulting qdd.
    qdd is affine in tau: qdd(tau_j) = qdd(0) + tau_j * (qdd(1) - qdd(0))."""
    t0 = np.array(tau, dtype=float)
    t0[j] = 0.0
    r0 = ab.forward_dynamics(q, qd, t0, **kw).qdd
    t0[j] = 1.0
    r1 = ab.forward_dynamics(q, qd, t0, **kw).qdd
    tj = -r0[j] / (r1[j] - r0[j])
    return tj, r0 + tj * (r1 - r0)


def crossings(t: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Times of upward zero crossings by linear interpolation."""
    i = np.nonzero((x[:-1] < 0) & (x[1:] >= 0))[0]
    return t[i] - x[i] * (t[i + 1] - t[i]) / (x[i + 1] - x[i])


SMS44 = "sms_api_digest.md 4.4"


def report(case: str, quantity: str, expected, report_sim, ours, reference=None, tol: str = ""):
    ref = f", reference {reference}" if reference is not None else ""
    print(f"\nSMS {case} {quantity}: report expected {expected}, report simulated {report_sim}, "
          f"ours {ours}{ref}; tolerance {tol}")


# ------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_4_4_1_revolute_pendulum_period(validation):
    """Single physical pendulum, amplitude 0.1 deg. Report: expected 2.3153 s (printed from
    I_p = 14.1667, which gives 2.3877 s: erratum 9), simulated 2.3076 s (-0.33 %).
    Corrected reference 2 pi sqrt(13.334 / (10 * 9.81 * 1)) = 2.31646 s (I_p = 3.334 + 10 * 1^2).
    Ours must be within 1e-5 of the corrected reference and closer to the printed 2.3153 s than
    the report's 0.33 %."""
    m = preset("sms_revolute")
    ab = ArticulatedBody(m)
    q0, qd0 = m.initial_state()
    dt, T = 2e-3, 25.0
    steps = int(round(T / dt))
    hist = np.empty(steps + 1)
    hist[0] = q0[0]

    def rec(y, s):
        hist[s] = y[0]
    rk4(free_dynamics(ab, BASE_ROLL90), np.concatenate((q0, qd0)), dt, steps, rec)
    t = np.arange(steps + 1) * dt
    tc = crossings(t, hist + math.pi / 2)                 # hanging equilibrium at q = -90 deg
    period = (tc[-1] - tc[0]) / (len(tc) - 1)
    ref = 2 * math.pi * math.sqrt((3.334 + 10 * 1.0**2) / (10 * 9.81 * 1.0))
    err_ref = period / ref - 1
    err_printed = period / 2.3153 - 1
    report("4.4.1", "period [s]", 2.3153, 2.3076, f"{period:.6f} ({len(tc) - 1} periods; "
           f"{err_printed:+.3%} vs 2.3153, {err_ref:+.1e} vs corrected)", f"{ref:.6f}",
           "1e-5 vs corrected, 0.33 % vs printed")
    validation.record(case="SMS 4.4.1 revolute pendulum period vs corrected reference", reference=ref, ours=period,
                      tolerance=1e-5, unit="s", source=SMS44 + " (erratum 9: I_p = 13.334)")
    validation.record(case="SMS 4.4.1 revolute pendulum period vs printed 2.3153 s (tolerance: the report's own error)",
                      reference=2.3153, ours=period, tolerance=abs(2.3076 / 2.3153 - 1), unit="s",
                      source=SMS44 + ", report simulated 2.3076 s")
    assert abs(err_ref) < 1e-5
    assert abs(err_printed) < abs(2.3076 / 2.3153 - 1)


def test_4_4_2_prismatic_free_fall(validation):
    """Free fall along a vertical prismatic joint for 30 s. Report: expected 0.5 * 9.81 * 30^2 =
    4414.5 m (printed without the sign; z is up, so the fall is -4414.5 m), simulated 4414.5 m.
    RK4 is exact for a constant acceleration: tolerance 1e-9 relative."""
    m = preset("sms_prismatic")
    ab = ArticulatedBody(m)
    q0, qd0 = m.initial_state()
    y = rk4(free_dynamics(ab), np.concatenate((q0, qd0)), 0.01, 3000)
    report("4.4.2", "q(30 s) [m]", 4414.5, 4414.5, f"{y[0]:.9f}", -4414.5, "1e-9 relative")
    validation.record(case="SMS 4.4.2 prismatic free fall, q(30 s)", reference=-0.5 * 9.81 * 30.0**2, ours=y[0],
                      tolerance=1e-9, unit="m", source=SMS44 + " (z up: -4414.5 m)")
    assert y[0] == pytest.approx(-0.5 * 9.81 * 30.0**2, rel=1e-9)


@pytest.mark.slow
def test_4_4_3_double_pendulum_periods(validation):
    """Double pendulum (10 kg spheres on massless 10 m and 7 m rods), 0.1 deg initial offset of
    joint 1. Report (Table 18): expected 3.104088 s and 7.662144 s, which match g = 9.82 (erratum
    10); simulated 3.114829 s (+0.35 %) and 7.550230 s (-1.46 %). Point-mass reference with
    g = 9.81: 3.10566 s and 7.66603 s. Periods measured from 160 s of joint-1 history: PSD
    (Hann window, zero padding) for the peaks, refined by a least-squares two-sinusoid fit.
    Tolerances: within 1e-6 of the linearisation of the same model (sphere inertias included),
    within 2e-4 of the point-mass reference (the sphere inertia 0.018171 kg m^2 shifts them), and
    closer than the report."""
    m = preset("sms_double_pendulum")
    ab = ArticulatedBody(m)
    q0, qd0 = m.initial_state()
    dt, T = 0.01, 160.0
    steps = int(round(T / dt))
    hist = np.empty(steps + 1)
    hist[0] = q0[0]

    def rec(y, s):
        hist[s] = y[0]
    rk4(free_dynamics(ab, BASE_ROLL90), np.concatenate((q0, qd0)), dt, steps, rec)
    t = np.arange(steps + 1) * dt
    x = (hist + math.pi / 2) * 1e3                         # mrad about the hanging equilibrium

    # PSD peaks
    nfft = 1 << 20
    spec = np.abs(np.fft.rfft(x * np.hanning(len(x)), nfft)) ** 2
    freq = np.fft.rfftfreq(nfft, dt)
    peaks = [i for i in range(1, len(spec) - 1) if spec[i] > spec[i - 1] and spec[i] >= spec[i + 1]]
    top = sorted(sorted(peaks, key=lambda i: spec[i])[-2:], key=lambda i: freq[i])
    f_psd = np.array([freq[i] for i in top])

    # least-squares refinement: x = c + sum_k A_k cos(w_k t) + B_k sin(w_k t)
    def resid(p):
        w1, w2, c, a1, b1, a2, b2 = p
        return c + a1 * np.cos(w1 * t) + b1 * np.sin(w1 * t) + a2 * np.cos(w2 * t) + b2 * np.sin(w2 * t) - x
    w0 = 2 * math.pi * f_psd
    sol = least_squares(resid, [w0[0], w0[1], 0.0, x.std(), 0.0, x.std(), 0.0], x_scale="jac", xtol=1e-15, ftol=1e-15)
    periods = np.sort(2 * math.pi / np.abs(sol.x[:2]))     # [short, long]

    # linearisation of the same model: M qdd + K dq = 0 at the hanging equilibrium
    qe = np.array([-math.pi / 2, 0.0])
    M = ab.mass_matrix(qe)
    h = 1e-6
    K = np.column_stack([(ab.inverse_dynamics(qe + h * e, np.zeros(2), np.zeros(2), base_R=BASE_ROLL90,
                                              gravity=G_ZUP).tau
                          - ab.inverse_dynamics(qe - h * e, np.zeros(2), np.zeros(2), base_R=BASE_ROLL90,
                                                gravity=G_ZUP).tau)
                         / (2 * h) for e in np.eye(2)])
    lin = np.sort(2 * math.pi / np.sqrt(np.linalg.eigvals(np.linalg.solve(M, K)).real))
    ref = np.array([3.10566, 7.66603])
    rep_exp, rep_sim = np.array([3.104088, 7.662144]), np.array([3.114829, 7.550230])
    report("4.4.3", "periods [s]", rep_exp.tolist(), rep_sim.tolist(),
           f"{periods.round(6).tolist()} (PSD only {np.sort(1 / f_psd).round(4).tolist()}; errors vs reference "
           f"{(periods / ref - 1).round(6).tolist()}; linearised model {lin.round(6).tolist()})",
           ref.tolist(), "1e-6 vs linearised model, 2e-4 vs point-mass reference")
    validation.record(case="SMS 4.4.3 double pendulum periods vs point-mass reference (g = 9.81)", reference=ref,
                      ours=periods, error=float(np.max(np.abs(periods / ref - 1))), tolerance=2e-4, unit="s",
                      source=SMS44 + " Table 18 (erratum 10: g = 9.82)")
    validation.record(case="SMS 4.4.3 double pendulum periods vs linearisation of the same model", reference=lin,
                      ours=periods, error=float(np.max(np.abs(periods / lin - 1))), tolerance=1e-6, unit="s",
                      source="eigenvalues of M^-1 K at the hanging equilibrium")
    assert np.all(np.abs(periods / lin - 1) < 1e-6)
    assert np.all(np.abs(periods / ref - 1) < 2e-4)
    assert np.all(np.abs(periods / ref - 1) < np.abs(rep_sim / ref - 1))
    # the PSD peaks alone (resolution 1/160 Hz, interpolated by padding)
    assert np.all(np.abs(np.sort(1 / f_psd) / ref - 1) < 2e-3)


@pytest.mark.slow
def test_4_4_4_centripetal_force(validation):
    """Joint 1 (vertical axis) held at 1 rad/s; the force holding prismatic joint 2 at 0 must be
    -m2 w^2 r = -10 N. Report: expected -10 N, simulated -10.000010 N (1e-6). Ours: (a) inverse
    dynamics and the ABA at the state, exact to 1e-12; (b) simulated 3 s like the report, joint 1
    held by the held-rate helper and joint 2 by a PID (position mode, integral as a state); the
    settled PID force within 1e-7 relative."""
    m = preset("sms_centripetal")
    ab = ArticulatedBody(m)
    q0, qd0 = m.initial_state()
    assert qd0[0] == pytest.approx(1.0)
    inv = ab.inverse_dynamics(q0, qd0, np.zeros(2), gravity=G_ZUP)
    assert inv.tau[1] == pytest.approx(-10.0, rel=1e-12) and abs(inv.tau[0]) < 1e-12
    r = ab.forward_dynamics(q0, qd0, [0.0, -10.0], gravity=G_ZUP)
    assert np.abs(r.qdd).max() < 1e-12

    kp, ki, kd = 1e5, 1e6, 2e3               # m = 10 kg: closed-loop poles about -100, -100, -10 1/s

    def f(y):                                # y = [q1, q2, qd1, qd2, integral of (0 - q2)]
        q, qd, integ = y[:2], y[2:4], y[4]
        tau2 = kp * (0.0 - q[1]) + ki * integ - kd * qd[1]
        _, qdd = held_rate_torque(ab, q, qd, [0.0, tau2], 0, gravity=G_ZUP)
        return np.concatenate((qd, qdd, [0.0 - q[1]]))
    y = rk4(f, np.concatenate((q0, qd0, [0.0])), 1e-3, 3000)
    force = kp * (0.0 - y[1]) + ki * y[4] - kd * y[3]
    report("4.4.4", "joint-2 force [N]", -10.0, -10.000010,
           f"{inv.tau[1]:.12f} (inverse dynamics), {force:.10f} (PID after 3 s, rate {y[2]:.12f} rad/s)", -10.0,
           "1e-12 exact, 1e-7 PID")
    validation.record(case="SMS 4.4.4 centripetal force, inverse dynamics", reference=-10.0, ours=inv.tau[1],
                      tolerance=1e-12, unit="N", source=SMS44 + " (-m w^2 r)")
    validation.record(case="SMS 4.4.4 centripetal force, PID-held joint after 3 s", reference=-10.0, ours=force,
                      tolerance=1e-7, unit="N", source=SMS44 + ", report simulated -10.000010 N")
    assert force == pytest.approx(-10.0, rel=1e-7)
    assert y[2] == pytest.approx(1.0, abs=1e-12)


def test_4_4_5_coriolis_acceleration(validation):
    """Joint 1 held at 1 rad/s, joint 2 free, starting at rest at r = 1 m: r = cosh t. When the
    joint-2 rate reaches 0.009901 m/s the Coriolis acceleration of the link-2 CG (tangential, the
    w x r direction) is 2 * 1 * 0.009901 = 0.019802 m/s^2. Report: simulated 0.019465 m/s^2
    (-1.7 %). Ours from point_kinematics at that state; tolerance 1e-8 relative."""
    m = preset("sms_centripetal")
    ab = ArticulatedBody(m)
    q0, qd0 = m.initial_state()
    t_end = math.asinh(0.009901)             # r' = sinh t

    def f(y):
        q, qd = y[:2], y[2:]
        _, qdd = held_rate_torque(ab, q, qd, [0.0, 0.0], 0, gravity=G_ZUP)
        return np.concatenate((qd, qdd))
    steps = 100
    y = rk4(f, np.concatenate((q0, qd0)), t_end / steps, steps)
    q, qd = y[:2], y[2:]
    tau1, _ = held_rate_torque(ab, q, qd, [0.0, 0.0], 0, gravity=G_ZUP)
    r = ab.forward_dynamics(q, qd, [tau1, 0.0], gravity=G_ZUP)
    pos, vel, acc = r.point_kinematics(1, m.attachment("disk").point)
    radial = np.array([pos[0], pos[1], 0.0])
    tangential = np.cross([0.0, 0.0, 1.0], radial / np.linalg.norm(radial))   # joint 1 turns about +z
    a_cor = float(acc @ tangential)
    expected = 2 * qd[0] * qd[1]
    report("4.4.5", "Coriolis acceleration [m/s^2]", 0.019802, 0.019465,
           f"{a_cor:.10f} at qd2 = {qd[1]:.9f} m/s, qdd1 = {r.qdd[0]:.1e}", f"2 qd1 qd2 = {expected:.10f}", "1e-8")
    validation.record(case="SMS 4.4.5 Coriolis acceleration at qd2 = 0.009901 m/s", reference=0.019802, ours=a_cor,
                      tolerance=1e-8, unit="m/s^2", source=SMS44 + ", report simulated 0.019465")
    assert qd[1] == pytest.approx(0.009901, rel=1e-9)
    assert a_cor == pytest.approx(expected, rel=1e-8)
    assert a_cor == pytest.approx(0.019802, rel=1e-8)


def _run_until_joint1_stops(ab: ArticulatedBody, q0, qd0, w_stop: float, dt: float):
    f = free_dynamics(ab, None, G_ZUP)
    y = np.concatenate((q0, qd0))
    t = 0.0
    while y[2] > w_stop:
        y = rk4(f, y, dt, 100)
        t += 100 * dt
        assert t < 2000.0
    return y, t


@pytest.mark.slow
def test_4_4_6_energy_conservation(validation):
    """Joint 1 free, starting at 1 rad/s with joint 2 at r = 1 m; run until joint 1 has (almost)
    stopped; all kinetic energy is then in the radial motion. Report: expected
    sqrt((10 + 3.334) / 10) = 1.1547 m/s (eq. 144), simulated 1.1565 m/s (+0.16 %).

    Eq. 144 counts only link 1's I_zz = 3.334 kg m^2 about the joint axis and treats link 2 as a
    point mass. With link 1's CG as printed ([1, 0, 0], 1 m off the axis) the rotating inertia is
    3.334 + 10 * 1^2 + 0.056 and the limit is sqrt(2 E0 / m2) = 1.5294 m/s, far from both report
    values; the report's simulated 1.1565 m/s fits link 1's CG on the axis (erratum, not in the
    digest). So: (a) the eq.-144 model (link 1's CG on the axis, link 2 a point mass): ours within
    1e-4 of 1.1547 (closer than the report's 0.16 %); (b) as printed: ours within 1e-4 of 1.5294;
    both within 1e-9 of the exact energy balance at the final state."""
    base = preset("sms_centripetal")
    q0, qd0 = base.initial_state()
    results = {}
    for variant in ("eq144", "printed"):
        m = dataclasses.replace(base, links=[dataclasses.replace(l) for l in base.links])
        if variant == "eq144":
            m.links[0].cg = np.zeros(3)
            m.links[1].inertia = np.zeros((3, 3))
        ab = ArticulatedBody(m)
        E0 = ab.kinetic_energy(q0, qd0)
        y, t = _run_until_joint1_stops(ab, q0, qd0, 1e-4, 0.01)
        q, qd = y[:2], y[2:]
        E = ab.kinetic_energy(q, qd) + ab.potential_energy(q, G_ZUP) - ab.potential_energy(q0, G_ZUP)
        limit = math.sqrt(2 * E0 / m.links[1].mass)
        results[variant] = (qd[1], limit, t)
        report(f"4.4.6 ({variant})", "final joint-2 rate [m/s]", 1.1547, 1.1565,
               f"{qd[1]:.6f} after {t:.0f} s (qd1 = {qd[0]:.1e} rad/s, {qd[1] / 1.1547 - 1:+.4%} vs 1.1547, "
               f"energy drift {E / E0 - 1:.1e})", f"sqrt(2 E0 / m2) = {limit:.6f}", "1e-4 vs limit, 1e-9 energy")
        validation.record(case=f"SMS 4.4.6 ({variant}) final joint-2 rate vs sqrt(2 E0 / m2)", reference=limit,
                          ours=qd[1], tolerance=1e-4, unit="m/s", source=SMS44 + " eq. 144")
        if variant == "eq144":
            validation.record(case="SMS 4.4.6 (eq144) final joint-2 rate vs printed 1.1547 (tolerance: the report's "
                                   "error)",
                              reference=1.1547, ours=qd[1], tolerance=abs(1.1565 / 1.1547 - 1), unit="m/s",
                              source=SMS44 + ", report simulated 1.1565 m/s")
        assert abs(E / E0 - 1) < 1e-9
        assert qd[1] == pytest.approx(limit, rel=1e-4)
    assert results["eq144"][1] == pytest.approx(math.sqrt((10 + 3.334) / 10), rel=1e-12)
    assert abs(results["eq144"][0] / 1.1547 - 1) < abs(1.1565 / 1.1547 - 1)
    assert results["printed"][1] == pytest.approx(1.5294, abs=1e-4)
