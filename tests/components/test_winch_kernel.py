"""The compiled winch (components/kernels/winch.c) against its reference, the Python of
components/winch.py: the same bits.

Two winches, one compiled (compiled=True) and one Python (compiled=False), take the same random
inputs and step sizes over thousands of coupling steps in every mode (0 velocity, 1 tension PID,
2 heave compensation, 3 brake), the brake toggled, tensions that drive the motor into its torque
and power limits, setpoints that reverse the drum through the efficiency band at standstill, slack
line, and drums with a layer-dependent radius; after every step their states and present_drive's
answers are compared as bit patterns.  The runs are checked to have reached each of those cases,
and the comparison to see a kernel one ulp off.  Also: the kernel is what runs when asked for,
``compiled=True`` says why it cannot be had, and what C cannot count goes to the Python.
"""
from __future__ import annotations

import math
import random
import struct

import pytest

from components import kernels
from components.winch import EFFICIENCY_BAND, Winch, WinchParams

pytestmark = pytest.mark.gcc          # the kernels are compiled once per source hash (user cache)

PARAMS = {
    "lars": WinchParams(),
    # a weak motor (torque and power limits hit), viscous drum, derivative gain, layers on the drum
    "weak-layers": WinchParams(viscous=2e4, kd=1e-5, rope_diameter=0.05, drum_width=1.5, spooled_length=800.0,
                               max_power=2e5, max_torque=8e3),
    # no brake torque and no derivative filter; fast acceleration limits
    "no-brake": WinchParams(brake_torque=0.0, derivative_filter=0.0, accel_limit=0.5, decel_limit=0.3),
    # a small drum emptying its layers (the radius reaches drum_radius: max(spooled, 0))
    "emptying": WinchParams(drum_radius=0.4, drum_inertia=2e3, motor_inertia=0.5, gear_ratio=40.0, efficiency=0.8,
                            max_torque=5e3, max_power=1e5, rope_diameter=0.03, drum_width=0.6,
                            spooled_length=3.0, brake_torque=1e5, kd=2e-4, derivative_filter=0.01),
}


def _bits(winch: Winch) -> tuple:
    """The state and the present drive as integers of their bits (NaNs of the same bits equal)."""
    values = (*winch.get_state().values(), *winch.present_drive(), winch.radius)
    return tuple(struct.unpack("<q", struct.pack("<d", float(x)))[0] for x in values)


def _pair(params: WinchParams, substep: float) -> tuple[Winch, Winch]:
    return Winch(params, substep=substep, compiled=True), Winch(params, substep=substep, compiled=False)


def _random_inputs(rng: random.Random, k: int, params: WinchParams, inputs: dict) -> dict:
    if k % 40 == 0 or rng.random() < 0.02:      # new operator inputs now and then, every mode
        vmax = params.max_speed
        inputs.update(mode=rng.choice((0, 0, 1, 2, 2, 3)), brake=rng.random() < 0.15,
                      speed_setpoint=rng.choice((0.0, -0.0, rng.uniform(-vmax, vmax), rng.choice((-vmax, vmax)))),
                      tension_setpoint=rng.uniform(0.0, 6e5))
    # tension: slack (negative: clamped), a steady load with a wave, or a jerk beyond the motor's torque
    inputs["tension"] = rng.choice((rng.uniform(-1e3, 8e5), 5e5 + 1e4 * math.sin(0.05 * k), rng.uniform(1e6, 3e6),
                                    0.0))
    inputs["hardpoint_velocity"] = 0.8 * math.cos(0.03 * k) if rng.random() < 0.9 else rng.uniform(-2.0, 2.0)
    return inputs


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_the_compiled_winch_gives_the_python_bits(name):
    params = PARAMS[name]
    rng = random.Random(sum(map(ord, name)))
    compiled, python = _pair(params, substep=rng.choice((0.005, 0.001, 0.0023)))
    band = EFFICIENCY_BAND / params.drum_radius
    seen = set()
    inputs: dict = {}
    previous = 0.0
    for k in range(4000):
        _random_inputs(rng, k, params, inputs)
        dt = rng.choice((0.025, 0.025, 0.01, 0.0037, rng.uniform(1e-5, 0.05)))
        for w in (compiled, python):
            for key, value in inputs.items():
                setattr(w, key, value)
            w.step(dt)
        assert _bits(compiled) == _bits(python), f"step {k}"
        w = python
        seen.add(("mode", w.mode))
        seen |= {c for c, hit in (("saturated", w.saturated), ("braking", w.braking),
                                  ("reversed", w.omega * previous < 0.0), ("paying out", w.omega > band),
                                  ("hauling", w.omega < -band)) if hit}
        previous = w.omega
        if params.rope_diameter > 0.0:
            seen.add("empty drum" if w.paid_out > params.spooled_length else "layers")
    wanted = {("mode", m) for m in range(4)} | {"saturated", "reversed", "paying out", "hauling"}
    if params.brake_torque > 0.0:
        wanted.add("braking")
    if params.rope_diameter > 0.0:
        wanted.add("layers")
    if name == "emptying":
        wanted.add("empty drum")
    assert wanted <= seen, wanted - seen


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_the_compiled_winch_reverses_through_the_efficiency_band_with_the_python_bits(name):
    """Setpoints that reverse the drum: the gear's efficiency exponent ramps through standstill (pow)."""
    params = PARAMS[name]
    band = EFFICIENCY_BAND / params.drum_radius
    for omega in (0.0, -0.0, 0.3 * band, -0.7 * band, band, -band, 2 * band):
        compiled, python = _pair(params, substep=0.001)
        crossed = 0
        for k in range(200):
            for w in (compiled, python):
                w.omega = omega if k == 0 else w.omega
                w.tension, w.mode = 4e5, 0
                w.speed_setpoint = 0.02 * math.sin(0.1 * k)
                w.step(0.005)
            crossed += abs(python.omega) < band
            assert _bits(compiled) == _bits(python), (omega, k)
        assert crossed > 0


def test_random_winches_give_the_python_bits():
    """Random parameters, sub-steps and step sizes (the kernel holds no constant of the defaults)."""
    rng = random.Random(26)
    for case in range(12):
        params = WinchParams(
            drum_radius=rng.uniform(0.3, 3.0), drum_inertia=rng.uniform(1e3, 3e5), motor_inertia=rng.uniform(0.0, 5.0),
            gear_ratio=rng.uniform(10.0, 200.0), efficiency=rng.uniform(0.6, 1.0), max_torque=rng.uniform(1e3, 3e4),
            max_power=rng.uniform(5e4, 1e6), viscous=rng.choice((0.0, rng.uniform(0.0, 1e4))),
            brake_torque=rng.choice((0.0, rng.uniform(1e4, 5e6))), accel_limit=rng.uniform(0.02, 1.0),
            decel_limit=rng.uniform(0.02, 1.0), max_speed=rng.uniform(0.2, 3.0), kp=rng.uniform(0.0, 1e-3),
            ki=rng.uniform(0.0, 1e-4), kd=rng.choice((0.0, rng.uniform(0.0, 1e-4))),
            derivative_filter=rng.choice((0.0, rng.uniform(1e-3, 0.2))), speed_time_constant=rng.uniform(0.01, 0.5),
            rope_diameter=rng.choice((0.0, rng.uniform(0.01, 0.08))), drum_width=rng.uniform(0.5, 2.0),
            spooled_length=rng.uniform(0.0, 500.0))
        compiled, python = _pair(params, substep=rng.uniform(2e-4, 0.01))
        inputs: dict = {}
        for k in range(600):
            _random_inputs(rng, k, params, inputs)
            dt = rng.uniform(1e-4, 0.06)
            for w in (compiled, python):
                for key, value in inputs.items():
                    setattr(w, key, value)
                w.step(dt)
            assert _bits(compiled) == _bits(python), (case, k, params)


def test_a_restored_state_continues_with_the_python_bits():
    params = PARAMS["weak-layers"]
    compiled, python = _pair(params, substep=0.005)
    for w in (compiled, python):
        w.mode, w.tension, w.hardpoint_velocity = 2, 5e5, 0.4
        w.step(1.0)
    state = python.get_state()
    for w in (compiled, python):
        w.set_state(state)
        w.mode, w.tension_setpoint = 1, 3e5
        w.step(2.0)
    assert _bits(compiled) == _bits(python)


def test_the_comparison_sees_a_kernel_one_ulp_off():
    """The bit comparison fails for a kernel whose gear efficiency is one ulp off (the test can fail)."""
    params = PARAMS["lars"]
    compiled, python = _pair(params, substep=0.005)
    compiled._compiled._P[9] = math.nextafter(params.efficiency, 1.0)        # WP_ETA
    for w in (compiled, python):
        w.mode, w.tension, w.speed_setpoint = 0, 5e5, 0.5
        w.step(0.5)
    assert _bits(compiled) != _bits(python)


def test_the_kernel_runs_when_asked_for(monkeypatch):
    """compiled=True runs the C: the Python sub-step and drive are not called."""
    winch = Winch(WinchParams(), substep=0.005, compiled=True)
    assert winch._compiled is not None

    def refuse(*args, **kwargs):
        raise AssertionError("the Python ran")

    for method in ("_substep", "_operator_reference", "_drive_torque", "_efficiency_factor"):
        monkeypatch.setattr(Winch, method, refuse)
    winch.mode, winch.tension, winch.hardpoint_velocity = 2, 5e5, 0.3
    winch.step(0.025)
    assert winch.t == pytest.approx(0.025) and winch.omega != 0.0
    torque, reference, saturated = winch.present_drive()
    assert torque != 0.0 and isinstance(saturated, bool)
    assert isinstance(winch.saturated, bool) and isinstance(winch.braking, bool)


def test_what_c_cannot_count_goes_to_the_python():
    """dt / substep NaN or infinite: the Python's error, as without the kernel."""
    for dt, error in ((math.nan, ValueError), (math.inf, OverflowError)):
        for compiled in (True, False):
            winch = Winch(WinchParams(), substep=0.005, compiled=compiled)
            with pytest.raises(error):
                winch.step(dt)
            assert winch.t == 0.0


def test_without_kernels_the_winch_runs_its_python(monkeypatch):
    monkeypatch.setenv("MARINE_COSIM_KERNELS", "0")
    assert Winch(WinchParams())._compiled is None
    with pytest.raises(RuntimeError, match="no compiled winch kernel: numpy reference: disabled"):
        Winch(WinchParams(), compiled=True)
    monkeypatch.delenv("MARINE_COSIM_KERNELS")
    assert kernels.library() is not None
    assert Winch(WinchParams())._compiled is not None
