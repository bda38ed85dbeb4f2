"""The crane joint drive's power limit binds while the drive delivers power (motoring: torque and rate
of one sign); braking is limited by the torque limit alone (components/crane.py, issue 24). Both the
numpy reference and the compiled kernel (components/kernels/crane.c).

The rig: the sms_revolute link (10 kg, 2 m) on its vertical joint axis (NED z: no gravity torque), a
rotor of inertia J = 3.334 + 10 * 1^2 = 13.334 kg m2, in velocity control with a stiff P gain, a
100 N m torque limit and a 50 W power limit (the power hyperbola P / |qd| meets the torque limit at
0.5 rad/s). Spinning at 5 rad/s and told to stop, it brakes at the torque limit:

    stopping angle  J w0^2 / (2 tau_max) = 1.6668 rad,  time  J w0 / tau_max = 0.6667 s

(the old limit, P / |qd| in braking too, gave J (w0^3 - w1^3) / (3 P) + J w1^2 / (2 tau_max) = 11.12 rad
and 3.37 s, w1 = P / tau_max). Spun up from rest it is held to P / |qd| above 0.5 rad/s as before."""
from __future__ import annotations

import math

import numpy as np
import pytest

from components import kernels
from components.crane import Crane, still_base
from components.mechanism import JointControl, preset

J = 3.334 + 10.0 * 1.0 ** 2
TMAX, PMAX, W0 = 100.0, 50.0, 5.0
IMPLEMENTATIONS = [pytest.param(False, id="numpy"), pytest.param(True, id="compiled", marks=pytest.mark.gcc)]


def rotor(compiled: bool, rate: float = W0, setpoint: float = 0.0) -> Crane:
    m = preset("sms_revolute")
    m.links[0].initial_position = 0.0
    m.links[0].initial_rate = rate
    m.links[0].control = JointControl("velocity", kp=1e3, torque_max=TMAX, power_max=PMAX)
    if compiled and kernels.library() is None:
        pytest.skip(kernels.status())
    crane = Crane(m, compiled=compiled)
    assert (crane._compiled is not None) == compiled
    crane.set_inputs(still_base(), np.array([setpoint]), [])
    return crane


@pytest.mark.parametrize("compiled", IMPLEMENTATIONS)
def test_braking_torque_is_not_capped_by_the_power_limit(compiled):
    """At 5 rad/s told to stop: the whole torque limit brakes (the old law gave P / |qd| = 10 N m)."""
    crane = rotor(compiled)
    _, act = crane.evaluate()
    assert act[0] == -TMAX
    assert act[0] * crane.qd[0] < -PMAX * 9            # absorbs 500 W through a 50 W drive


@pytest.mark.parametrize("compiled", IMPLEMENTATIONS)
def test_a_spinning_rotor_stops_at_the_torque_limit(compiled):
    crane = rotor(compiled)
    dt, t, angle0 = 0.005, 0.0, crane.q[0]
    stopped = None
    worst_power = 0.0
    while t < 5.0:
        crane.step(dt, 0.001)
        t += dt
        _, act = crane.evaluate()
        worst_power = max(worst_power, act[0] * crane.qd[0])
        if stopped is None and abs(crane.qd[0]) < 1e-3:
            stopped = t
    angle = crane.q[0] - angle0
    print(f"stopping angle {angle:.4f} rad (torque-limited {J * W0 ** 2 / (2 * TMAX):.4f}), "
          f"time {stopped:.3f} s ({J * W0 / TMAX:.4f})")
    # saturated down to tau_max / kp = 0.1 rad/s, then the P gain's exponential decay (J / kp = 13 ms)
    # to the 1e-3 rad/s taken as stopped
    assert angle == pytest.approx(J * W0 ** 2 / (2 * TMAX), abs=0.01)
    tau = J / 1e3
    assert stopped == pytest.approx(J * (W0 - 0.1) / TMAX + tau * math.log(0.1 / 1e-3), abs=0.01)
    assert worst_power <= PMAX * (1 + 1e-12)           # it never motors beyond its power limit
    assert abs(crane.qd[0]) < 1e-6


@pytest.mark.parametrize("compiled", IMPLEMENTATIONS)
def test_spin_up_is_still_power_limited(compiled):
    """From rest to 5 rad/s: torque-limited to 0.5 rad/s, then J w w' = P, so
    t(w) = J w1 / tau_max + J (w^2 - w1^2) / (2 P)."""
    crane = rotor(compiled, rate=0.0, setpoint=W0)
    w1 = PMAX / TMAX
    t_end = J * w1 / TMAX + J * (3.0 ** 2 - w1 ** 2) / (2 * PMAX)     # the time it reaches 3 rad/s
    dt, t = 0.005, 0.0
    worst_power = 0.0
    while t < t_end - 1e-9:
        crane.step(dt, 0.001)
        t += dt
        _, act = crane.evaluate()
        worst_power = max(worst_power, act[0] * crane.qd[0])
    assert crane.qd[0] == pytest.approx(3.0, rel=2e-3)
    assert worst_power == pytest.approx(PMAX, rel=1e-12)


@pytest.mark.parametrize("compiled", IMPLEMENTATIONS)
def test_the_limit_is_continuous_across_zero_rate(compiled):
    """The motoring/braking switch at qd = 0: the torque for a rate of +-1e-300 and -0.0 is the same
    (the two limits meet there), so rounding near standstill moves the torque by rounding only."""
    m = preset("sms_revolute")
    m.links[0].control = JointControl("position", kp=1e6, torque_max=TMAX, power_max=PMAX)
    if compiled and kernels.library() is None:
        pytest.skip(kernels.status())
    crane = Crane(m, compiled=compiled)
    crane.set_inputs(still_base(), np.array([crane.q[0] + 1.0]), [])      # asks for 1e6 N m
    torques = []
    for rate in (1e-300, -1e-300, 0.0, -0.0, 1e-12, -1e-12):
        crane.qd = np.array([rate])
        crane._last = None
        torques.append(crane.evaluate()[1][0])
    assert torques == [TMAX] * len(torques), torques
    # and a motoring rate above the knee is power-limited
    crane.qd, crane._last = np.array([2.0]), None
    assert crane.evaluate()[1][0] == pytest.approx(PMAX / 2.0, rel=1e-15)
    assert math.isfinite(crane.evaluate()[1][0])
