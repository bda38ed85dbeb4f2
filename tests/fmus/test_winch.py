"""Winch: the component (components/winch.py) and the Winch FMU with the Cable FMU under our master.

SMS API 4.2.1-4.2.4 (sms_api_digest.md section 4.2): a 30 m line, 3 elements of 10 m, EA 8e5 N,
d 0.005 m, 7700 kg/m3 (0.1512 kg/m), in air, the winch at the top node 0 (our end A), the payload
at node N (our free end B with a point mass and an external force).  The report gives figures only
for 4.2.1, 4.2.2 and 4.2.4; 4.2.3 compares the free node's velocity with the setpoint (period 5.0,
amplitude 1.0; the report's own 4.9648 and 1.0985).  SMS z is up; here NED (z down).
LARS-like winch (anchors_marine.md section 3g): 50 t, gear ratio 173, drum 4.36 m, drum inertia
1.6e5 kg m2, efficiency 0.925 -- our WinchParams defaults, with a 600 kW motor.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from components.winch import EFFICIENCY_BAND, Winch, WinchParams
from orchestration import simulate
from orchestration.master.manipulators.signals import TimeSignals
from orchestration.system.model import Component, System
from tests.support.fmu_runner import FmuUnderTest

G = 9.81
W50 = 50e3 * G


# ----------------------------------------------------------------------------------- component
def steady(w: Winch, seconds: float, dt: float = 0.01) -> None:
    for _ in range(int(round(seconds / dt))):
        w.step(dt)


def test_lars_lifts_50_t_within_its_power_limit():
    """0.5 m/s hoist: 265 kW (< 600 kW), the motor torque is the static one, m g r / (n eta).
    Asked for 1.5 m/s the motor saturates at its power limit and the load rises at P eta / (m g)."""
    w = Winch(WinchParams())
    w.tension = W50
    w.speed_setpoint = -0.5
    steady(w, 15.0)
    assert w.speed == pytest.approx(-0.5, rel=1e-6)
    assert w.motor_torque == pytest.approx(W50 * 2.18 / (173 * 0.925), rel=1e-6)
    assert w.motor_power == pytest.approx(W50 * 0.5 / 0.925, rel=1e-6) and w.motor_power < 6e5
    assert not w.saturated
    w.speed_setpoint = -1.5
    steady(w, 30.0)
    assert w.saturated
    assert abs(w.motor_power) == pytest.approx(6e5, rel=1e-6)
    assert w.speed == pytest.approx(-6e5 * 0.925 / W50, rel=1e-3)


def test_lowering_regenerates_through_the_efficiency():
    w = Winch(WinchParams())
    w.tension = W50
    w.speed_setpoint = 0.5
    steady(w, 15.0)
    assert w.speed == pytest.approx(0.5, rel=1e-6)
    assert w.motor_power == pytest.approx(-0.925 * W50 * 0.5, rel=1e-6)


def test_lowering_beyond_the_power_limit_is_braked_by_the_torque_limit():
    """50 t lowered at 1.5 m/s regenerates eta m g v = 681 kW, more than the 600 kW motor can deliver:
    the power limit binds on the power delivered only, so the drive still tracks (torque 11.9 of
    20 kN m). With the limit on the braking torque too the load ran away past the setpoint."""
    w = Winch(WinchParams())
    w.tension = W50
    w.speed_setpoint = 1.5
    steady(w, 30.0)
    assert not w.saturated
    assert w.speed == pytest.approx(1.5, rel=1e-6)
    assert w.motor_power == pytest.approx(-0.925 * W50 * 1.5, rel=1e-6) and w.motor_power < -6e5
    assert w.motor_torque == pytest.approx(W50 * 2.18 * 0.925 / 173, rel=1e-6)


@pytest.mark.parametrize("tension", [W50, 0.0])
def test_standstill_torque_does_not_flip_on_rounding(tension):
    """At standstill the gear's efficiency passes from motoring (eta) to regenerating (1 / eta)
    continuously within 1 cm/s of pay-out speed: the holding torque for a drum speed of -0.0, 0.0 or
    +-1e-17 rad/s is the same to rounding (it jumped by 1 / eta^2 = 17 % on the sign), and the law is
    the hard switch's beyond the band."""
    p = WinchParams()
    w = Winch(p)
    w.tension = tension
    r, n, eta = p.drum_radius, p.gear_ratio, p.efficiency

    def torque(omega, a_want=-0.05):              # also a pay-in acceleration: need != 0 at no tension
        w.omega = omega
        return w._drive_torque(tension, r, a_want)[0]

    need = tension * r - w.J * -0.05 / r
    held = [torque(om) for om in (0.0, -0.0, 1e-17, -1e-17, 1e-300, -1e-300)]
    assert np.allclose(held, need / n, rtol=1e-12, atol=0.0), held
    band = EFFICIENCY_BAND / r
    assert torque(band) == need * eta / n                 # paying out: the load drives the motor
    assert torque(-band) == need / (n * eta)             # hauling in: the motor drives the load
    # continuous and monotonic through the band
    grid = np.linspace(-1.2 * band, 1.2 * band, 241)
    t = np.array([torque(om) for om in grid])
    assert np.all(np.diff(t) <= 0.0) and np.max(np.abs(np.diff(t))) < 2e-3 * abs(need) / n
    # the drum sees the gear torque the drive asked for, whatever the efficiency's direction
    for om in (0.0, 0.3 * band, -0.3 * band, 2 * band, -2 * band):
        assert w._gear_torque(torque(om), om) == pytest.approx(need, rel=1e-14)


@pytest.mark.parametrize("setpoints", [(1.0, -1.0, 0.3), (-2.0, 0.5, 0.0)])
def test_acceleration_limits_are_never_exceeded(setpoints):
    """Steps of the speed setpoint: |dv/dt| <= 0.1 m/s2 at every sub-step, and the setpoint is reached."""
    p = WinchParams(accel_limit=0.1, decel_limit=0.1)
    w = Winch(p, substep=1e-3)
    w.tension = 2e5
    v_prev, worst = w.speed, 0.0
    for sp in setpoints:
        w.speed_setpoint = sp
        for _ in range(int(35 / 1e-3)):
            w._substep(1e-3)
            worst = max(worst, abs(w.speed - v_prev) / 1e-3)
            v_prev = w.speed
        assert w.speed == pytest.approx(max(-2.0, min(2.0, sp)), abs=1e-9)
    assert worst <= 0.1 * (1 + 1e-9)


def test_brake_holds_and_slips_beyond_its_torque():
    w = Winch(WinchParams(brake_torque=3.0e6))
    w.tension = W50
    w.brake = True
    steady(w, 5.0)
    assert w.omega == 0.0 and w.paid_out == 0.0 and w.braking
    w.tension = 2 * 3.0e6 / 2.18                                     # twice what the brake holds
    steady(w, 1.0)
    assert w.speed > 0.0


def test_layer_dependent_radius():
    p = WinchParams(rope_diameter=0.05, drum_width=2.0, spooled_length=2000.0)
    w = Winch(p)
    r_full = w.radius
    assert r_full == pytest.approx(math.sqrt(2.18**2 + 0.05**2 * 2000.0 / (math.pi * 2.0)))
    w.tension, w.speed_setpoint = W50, 1.0
    steady(w, 60.0)
    assert w.radius < r_full and w.paid_out > 40.0


# ----------------------------------------------------------------------------------- FMU bad input
@pytest.fixture
def winch_fmu(fmu_dir):
    fmu = FmuUnderTest(fmu_dir / "Winch.fmu")
    yield fmu
    fmu.close()


def test_bad_inputs(winch_fmu):
    """A setpoint beyond limits.speed is clamped (and logged); a NaN or negative tension is an error."""
    from fmpy.fmi1 import FMICallException

    winch_fmu.initialize({"speed_setpoint": 5.0, "line.tension": 1e5})
    winch_fmu.slave.doStep(0.0, 30.0)
    assert winch_fmu.get(["payout.speed"])[0] == pytest.approx(2.0)
    with pytest.raises(FMICallException):
        winch_fmu.set({"line.tension": -10.0})
    with pytest.raises(FMICallException):
        winch_fmu.set({"line.tension": float("nan")})


# ----------------------------------------------------------------------------------- co-simulation
SMS_CABLE = {"length": 30.0, "n_segments": 3, "EA": 8e5, "diameter": 0.005,
             "mass_per_length": 7700 * math.pi * 0.005**2 / 4, "water_density": 0.0, "damping": -1.0,
             "seabed.depth": 1e4, "end_a.position[2]": 0.0, "end_b.position[2]": 30.0, "end_b.free": True,
             "winch.end": 1, "winch.mode": 1, "drag_normal": 0.0, "drag_tangential": 0.0}


def winch_system(fmu_dir, cable: dict, winch: dict) -> System:
    s = System("winch_cable")
    s.add_component(Component("cable", fmu_dir / "Cable.fmu", cable))
    s.add_component(Component("winch", fmu_dir / "Winch.fmu", {"initial_line_length": cable["length"], **winch}))
    s.connect("winch.payout.line_length", "cable.winch.length")
    s.connect("cable.winch.tension", "winch.line.tension")
    return s


def run(system: System, signals: dict, variables: list[str], stop: float, h: float = 0.01) -> dict:
    """Gauss-Seidel, winch first (its pay-out reaches the cable in the same step)."""
    r = simulate(system, stop, h, method="gauss-seidel", order=["winch", "cable"], variables=variables,
                 manipulators=[TimeSignals(signals)])
    return {**r.columns, "time": r.time}


# gains tuned on 4.2.1 (kp 1e-3..5e-3, ki 1e-3..5e-2 tried; 2e-3 / 2e-2 holds the tension best)
TENSION_WINCH = {"mode": 1, "tension_control.kp": 2e-3, "tension_control.ki": 2e-2,
                 "limits.acceleration": 5.0, "limits.deceleration": 5.0, "drum.radius": 0.3,
                 "drum.inertia": 5.0, "gear.ratio": 10.0, "motor.max_torque": 500.0, "motor.max_power": 2e4}


def test_sms_4_2_1_constant_tension_with_an_oscillating_load(fmu_dir, validation):
    """Setpoint 2006.1 N, 200 kg payload with 250 sin(2 pi t / 5) N, 10 s: after 3 s of start-up the
    line force on the winch (the Cable's winch.tension: 2006.49 N at rest, payload and the whole
    line) stays within +-3 % of the setpoint (report: figure only, "maintained"); the pay-out speed
    swings with the load."""
    cable = {**SMS_CABLE, "end_b.mass": 200.0}
    s = winch_system(fmu_dir, cable, {**TENSION_WINCH, "tension_setpoint": 2006.1})
    r = run(s, {("cable", "end_b.external_force[2]"): lambda t: -250.0 * math.sin(2 * math.pi * t / 5.0)},
            ["cable.winch.tension", "winch.payout.speed", "cable.tip.position[2]"], 10.0)
    late = r["time"] > 3.0
    T = r["cable.winch.tension"][late]
    err = np.max(np.abs(T - 2006.1)) / 2006.1
    print(f"\n4.2.1: tension after 3 s {T.min():.1f}..{T.max():.1f} N (max error {err:.2%}); "
          f"pay-out speed {r['winch.payout.speed'][late].min():+.3f}..{r['winch.payout.speed'][late].max():+.3f} m/s")
    validation.record(case="SMS 4.2.1 constant tension 2006.1 N under an oscillating load: worst tension after 3 s",
                      reference=2006.1, ours=T[np.argmax(np.abs(T - 2006.1))], tolerance=0.03, unit="N",
                      source="sms_api_digest.md 4.2.1 (report: figure only)")
    assert err < 0.03
    assert np.ptp(r["winch.payout.speed"][late]) > 0.2


def test_sms_4_2_2_varying_tension_setpoint(fmu_dir, validation):
    """Setpoint 2006.1 + 250 sin(2 pi t / 5) N: tracked within 3 % of 2006.1 N after 3 s (measured
    2.2 %, a phase lag of the PID).  Run for 15 s, not the report's 20 s: under tension control the
    load has no restoring force, and the setpoint's phase at the start gives it a mean upward
    velocity of 250 / (200 omega) = 1 m/s, so the winch hauls in the 30 m line until it runs out
    (here at 17 s, where the cable holds its shortest length and warns)."""
    cable = {**SMS_CABLE, "end_b.mass": 200.0}
    s = winch_system(fmu_dir, cable, TENSION_WINCH)
    setpoint = lambda t: 2006.1 + 250.0 * math.sin(2 * math.pi * t / 5.0)
    r = run(s, {("winch", "tension_setpoint"): setpoint}, ["cable.winch.tension", "cable.line_length"], 15.0)
    late = r["time"] > 3.0
    # the tension at time t answers the setpoint held over the step that ended at t
    target = np.array([setpoint(t - 0.01) for t in r["time"][late]])
    err = np.max(np.abs(r["cable.winch.tension"][late] - target)) / 2006.1
    print(f"\n4.2.2: max tracking error after 3 s {err:.2%} of 2006.1 N; line length at 15 s "
          f"{r['cable.line_length'][-1]:.2f} m")
    validation.record(case="SMS 4.2.2 varying tension setpoint: worst tracking error after 3 s (of 2006.1 N)",
                      reference="setpoint", ours=f"{100 * err:.2f} %", error=err, tolerance=0.03,
                      source="sms_api_digest.md 4.2.2 (report: figure only)")
    assert err < 0.03


@pytest.mark.slow
def test_sms_4_2_3_velocity_setpoint_at_the_free_node(fmu_dir, validation):
    """v_set = sin(2 pi t / 5) m/s for 20 s (no acceleration limit in this case): the free node's
    velocity has period 5.0 s within 1 % and amplitude 1.0 within 5 % (report: 4.9648, 1.0985)."""
    cable = {**SMS_CABLE, "end_b.mass": 200.0}
    s = winch_system(fmu_dir, cable, {"mode": 0, "limits.acceleration": 10.0, "limits.deceleration": 10.0,
                                       "drum.radius": 0.3, "drum.inertia": 5.0, "gear.ratio": 10.0,
                                       "motor.max_torque": 500.0, "motor.max_power": 2e4})
    r = run(s, {("winch", "speed_setpoint"): lambda t: math.sin(2 * math.pi * t / 5.0)},
            ["cable.tip.velocity[2]", "winch.payout.speed"], 20.0)
    t, v = r["time"], r["cable.tip.velocity[2]"]
    late = t > 5.0
    i = np.nonzero((v[:-1] < 0) & (v[1:] >= 0) & late[:-1])[0]
    tc = t[i] - v[i] * (t[i + 1] - t[i]) / (v[i + 1] - v[i])
    period = float(np.mean(np.diff(tc)))
    amplitude = 0.5 * float(np.ptp(v[late]))
    print(f"\n4.2.3: free-node velocity period {period:.4f} s, amplitude {amplitude:.4f} m/s")
    validation.record(case="SMS 4.2.3 velocity setpoint: free-node velocity period", reference=5.0, ours=period,
                      tolerance=0.01, unit="s", source="sms_api_digest.md 4.2.3, report 4.9648 s")
    validation.record(case="SMS 4.2.3 velocity setpoint: free-node velocity amplitude", reference=1.0, ours=amplitude,
                      tolerance=0.05, unit="m/s", source="sms_api_digest.md 4.2.3, report 1.0985 m/s")
    assert period == pytest.approx(5.0, rel=0.01)
    assert amplitude == pytest.approx(1.0, rel=0.05)


@pytest.mark.slow
def test_sms_4_2_4_constant_velocity_with_acceleration_limits(fmu_dir, validation):
    """1 m/s pay-out with +-0.1 m/s2 limits, 1 kg payload pulled by 40 - 30 sin(2 pi t/5) N (down):
    the pay-out acceleration never exceeds 0.1 m/s2; the free node follows the pay-out speed;
    the tension at the winch grows with the hanging length."""
    cable = {**SMS_CABLE, "end_b.mass": 1.0}
    s = winch_system(fmu_dir, cable, {"mode": 0, "speed_setpoint": 1.0, "limits.acceleration": 0.1,
                                       "limits.deceleration": 0.1, "drum.radius": 0.3, "drum.inertia": 5.0,
                                       "gear.ratio": 10.0, "motor.max_torque": 500.0, "motor.max_power": 2e4})
    r = run(s, {("cable", "end_b.external_force[2]"): lambda t: 40.0 - 30.0 * math.sin(2 * math.pi * t / 5.0)},
            ["winch.payout.speed", "cable.tip.velocity[2]", "cable.winch.tension"], 30.0)
    v, t = r["winch.payout.speed"], r["time"]
    acc = np.diff(v) / np.diff(t)
    print(f"\n4.2.4: largest pay-out acceleration {np.max(np.abs(acc)):.6f} m/s2; speed at 30 s {v[-1]:.4f}")
    late = t > 15.0
    a_max = float(np.max(np.abs(acc)))
    validation.record(case="SMS 4.2.4 largest pay-out acceleration within the 0.1 m/s^2 limit (excess)", reference=0.1,
                      ours=a_max, error=max(0.0, a_max - 0.1), tolerance=1e-7, tol_kind="abs", unit="m/s^2",
                      source="sms_api_digest.md 4.2.4")
    validation.record(case="SMS 4.2.4 pay-out speed at 30 s", reference=1.0, ours=v[-1], tolerance=1e-9, tol_kind="abs",
                      unit="m/s", source="sms_api_digest.md 4.2.4")
    validation.record(case="SMS 4.2.4 free-node velocity after 15 s", reference=1.0,
                      ours=np.mean(r["cable.tip.velocity[2]"][late]), tolerance=0.02, unit="m/s",
                      source="sms_api_digest.md 4.2.4")
    assert np.max(np.abs(acc)) <= 0.1 * (1 + 1e-6)
    assert v[-1] == pytest.approx(1.0, abs=1e-9)
    assert np.mean(r["cable.tip.velocity[2]"][late]) == pytest.approx(1.0, rel=0.02)
    T = r["cable.winch.tension"]
    assert np.mean(T[t > 25.0]) > np.mean(T[(t > 10.0) & (t < 15.0)])


@pytest.mark.slow
def test_lars_lifts_50_t_on_200_m_of_wire_in_co_simulation(fmu_dir):
    """The LARS-like winch hoists 50 t hanging on 200 m of steel wire (EA 1e9 N, 20 kg/m) at 0.5 m/s:
    the load follows, the motor stays inside its 600 kW, and the power matches (m g + line) v / eta."""
    cable = {"length": 200.0, "n_segments": 20, "EA": 1e9, "diameter": 0.06, "mass_per_length": 20.0,
             "water_density": 0.0, "damping": -1.0, "seabed.depth": 1e4, "end_a.position[2]": 0.0,
             "end_b.position[2]": 200.0, "end_b.free": True, "end_b.mass": 5e4, "winch.end": 1,
             "winch.mode": 1, "drag_normal": 0.0, "drag_tangential": 0.0}
    s = winch_system(fmu_dir, cable, {"mode": 0, "speed_setpoint": -0.5})
    r = run(s, {}, ["cable.tip.velocity[2]", "winch.motor.power", "winch.motor.saturated", "cable.winch.tension",
                    "cable.line_length"], 30.0)
    late = r["time"] > 15.0
    power = r["winch.motor.power"]
    print(f"\nLARS lift: load speed {np.mean(r['cable.tip.velocity[2]'][late]):+.4f} m/s, peak motor power "
          f"{np.max(power) / 1e3:.0f} kW, line {r['cable.line_length'][-1]:.2f} m")
    assert np.mean(r["cable.tip.velocity[2]"][late]) == pytest.approx(-0.5, rel=0.01)
    assert np.max(power) < 6e5 and not np.any(r["winch.motor.saturated"])
    expected = np.mean(r["cable.winch.tension"][late]) * 0.5 / 0.925
    assert np.mean(power[late]) == pytest.approx(expected, rel=0.01)


@pytest.mark.slow
@pytest.mark.parametrize("compensate", [False, True])
def test_active_heave_compensation_cancels_90_percent(fmu_dir, compensate):
    """The winch's suspension point heaves 2 m / 8 s; a 10 t load hangs on 50 m of steel wire.
    With compensation (mode 2, the hardpoint's vertical velocity as input) the load's vertical
    motion is below 10 % of what it is without, with the LARS-like drive (600 kW, reached at the
    heave peaks)."""
    w = 2 * math.pi / 8.0
    cable = {"length": 50.0, "n_segments": 10, "EA": 1e8, "diameter": 0.04, "mass_per_length": 8.0,
             "water_density": 0.0, "damping": -1.0, "seabed.depth": 1e4, "end_a.position[2]": 0.0,
             "end_b.position[2]": 50.0, "end_b.free": True, "end_b.mass": 1e4, "winch.end": 1,
             "winch.mode": 1, "drag_normal": 0.0, "drag_tangential": 0.0}
    s = winch_system(fmu_dir, cable, {"mode": 2 if compensate else 0})
    signals = {("cable", "end_a.position[2]"): lambda t: -2.0 * math.sin(w * t),
               ("cable", "end_a.velocity[2]"): lambda t: -2.0 * w * math.cos(w * t),
               ("winch", "hardpoint.velocity_down"): lambda t: -2.0 * w * math.cos(w * t)}
    r = run(s, signals, ["cable.tip.position[2]", "winch.motor.power", "winch.motor.saturated"], 48.0)
    late = r["time"] > 16.0
    motion = float(np.std(r["cable.tip.position[2]"][late]))
    peak_power = float(np.max(np.abs(r["winch.motor.power"][late])))
    print(f"\nheave 2 m / 8 s, compensation {'on' if compensate else 'off'}: load motion std {motion:.4f} m "
          f"(hardpoint {2.0 / math.sqrt(2):.4f} m); peak motor power {peak_power / 1e3:.0f} kW")
    if compensate:
        assert motion < 0.10 * 2.0 / math.sqrt(2)                      # >= 90 % less than the ~1.41 m uncompensated
        # the drive at each step's end (the hardpoint's new velocity in its reference) touches the
        # motor's 600 kW at the heave peaks, never beyond
        assert peak_power <= 6e5 * (1 + 1e-12)
    else:
        assert motion == pytest.approx(2.0 / math.sqrt(2), rel=0.1)


def test_brake_release_starts_within_the_acceleration_limit():
    """Review regression: braked for 20 s with a -1 m/s setpoint, then released: the reference starts
    from rest and the pay-out acceleration stays within 0.1 m/s2 (it once jumped to 18 m/s2)."""
    w = Winch(WinchParams(), substep=1e-3)
    w.tension, w.speed_setpoint, w.brake = 2e5, -1.0, True
    steady(w, 20.0)
    assert w.speed == 0.0
    w.brake = False
    v_prev, worst = w.speed, 0.0
    for _ in range(3000):
        w._substep(1e-3)
        worst = max(worst, abs(w.speed - v_prev) / 1e-3)
        v_prev = w.speed
    assert worst <= 0.1 * (1 + 1e-9) and w.speed == pytest.approx(-0.3, abs=1e-6)


@pytest.mark.parametrize("substep", [1e-3, 0.1, 0.2])
def test_drive_is_stable_at_large_substeps(substep):
    """Review regression: the drive's speed error decays exactly, so sub-steps longer than
    2 tau_c (0.1 s) no longer run away (it once reached 42 m/s)."""
    w = Winch(WinchParams(), substep=substep)
    w.tension, w.speed_setpoint = 20e3 * G, 0.5
    steady(w, 20.0, dt=0.2)
    assert w.speed == pytest.approx(0.5, rel=1e-6)
