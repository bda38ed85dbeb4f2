"""The winch's sub-step written for speed (constants formed once, the motor limit and gear torque
written out, min/max as conditionals) gives the same bits as the code it replaced.

``_Before`` keeps the sub-step as it was (commit 6790aaa: the radius property, the efficiency band and
1 - exp(-h / tau_c) formed in every sub-step, the builtins min and max); both winches run the
same random inputs through every mode, the brake, a layer-dependent drum, slack line and the
efficiency band at standstill, and their states and drive outputs are compared as bit patterns.
``_Before`` runs its Python (compiled=False); the winch it is compared with runs the Python and, where
the kernels can be had, the compiled kernel (components/kernels/winch.c)."""
from __future__ import annotations

import math
import random
import struct

import pytest

from components.winch import EFFICIENCY_BAND, Winch, WinchParams


class _Before(Winch):
    """The sub-step and its helpers before the speed work (the reference)."""

    def _operator_reference(self, h: float) -> float:
        p = self.p
        if self.mode == 1:
            e = self.tension - self.tension_setpoint
            tf = max(p.derivative_filter, h)
            deriv = (e - self.dfilt) / tf
            self.dfilt += h * deriv
            self.integral += h * e
            target = p.kp * e + p.ki * self.integral + p.kd * deriv
        else:
            target = self.speed_setpoint
        target = min(max(target, -p.max_speed), p.max_speed)
        if target > self.v_lim:
            step = (p.accel_limit if self.v_lim >= 0.0 else p.decel_limit) * h
            self.v_lim = min(self.v_lim + step, target)
        elif target < self.v_lim:
            step = (p.decel_limit if self.v_lim > 0.0 else p.accel_limit) * h
            self.v_lim = max(self.v_lim - step, target)
        return self.v_lim

    def _efficiency_factor(self, tau_m: float, omega: float) -> float:
        p = self.p
        band = EFFICIENCY_BAND / p.drum_radius
        if omega >= band or omega <= -band:
            return p.efficiency if tau_m * omega < 0.0 else 1.0 / p.efficiency
        s = omega / band if tau_m < 0.0 else -omega / band
        return p.efficiency ** s

    def _drive_torque(self, T: float, r: float, a_want: float) -> tuple[float, bool]:
        p = self.p
        need = T * r - p.viscous * self.omega - self.J * a_want / r
        band = EFFICIENCY_BAND / p.drum_radius
        if self.omega >= band or self.omega <= -band:
            tau_m = need / (p.gear_ratio * p.efficiency)
            if not tau_m * self.omega < 0.0:
                tau_m = need * p.efficiency / p.gear_ratio
        else:
            tau_m = need / (p.gear_ratio * self._efficiency_factor(need, self.omega))
        lim = self._motor_limit(tau_m, self.omega)
        return min(max(tau_m, -lim), lim), abs(tau_m) > lim

    def _substep(self, h: float) -> None:
        p, J = self.p, self.J
        r = self.radius
        T = max(self.tension, 0.0)
        brake = self.brake or self.mode == 3
        v_prev_ref = self.v_ref
        if brake:
            self.v_lim = r * self.omega
            self.dfilt = self.tension - self.tension_setpoint
        if self.mode == 3:
            v_ref, tau_m = 0.0, 0.0
        else:
            v_ref = self._operator_reference(h) if not brake else self.v_lim
            if self.mode == 2:
                v_ref -= self.hardpoint_velocity
            a_ref = (v_ref - v_prev_ref) / h
            a_want = a_ref + (v_prev_ref - r * self.omega) * (1.0 - math.exp(-h / p.speed_time_constant)) / h
            tau_m, self.saturated = self._drive_torque(T, r, a_want)
            if brake:
                tau_m = 0.0
        self.v_ref = v_ref
        drive = T * r - self._gear_torque(tau_m, self.omega) - p.viscous * self.omega
        self.braking = False
        if brake and p.brake_torque > 0.0:
            stop = drive + J * self.omega / h
            self.braking = True
            if abs(stop) <= p.brake_torque:
                omega_new = 0.0
            else:
                omega_new = self.omega + h * (drive - math.copysign(p.brake_torque, stop)) / J
        else:
            omega_new = self.omega + h * drive / J
        self.motor_torque = tau_m
        self.paid_out += 0.5 * h * r * (self.omega + omega_new)
        self.omega = omega_new
        self.t += h


def _bits(winch: Winch) -> tuple:
    state = winch.get_state()
    drive = winch.present_drive()
    return tuple(struct.pack("<d", float(x)) for x in (*state.values(), *drive))


@pytest.mark.parametrize("params", [
    WinchParams(),
    WinchParams(viscous=2e4, kd=1e-5, rope_diameter=0.05, drum_width=1.5, spooled_length=800.0,
                max_power=2e5, max_torque=8e3),
    WinchParams(brake_torque=0.0, derivative_filter=0.0, accel_limit=0.5, decel_limit=0.3),
], ids=["lars", "layers-viscous-weak-motor", "no-brake"])
@pytest.mark.parametrize("compiled", [False, None], ids=["python", "kernel-if-built"])
def test_the_substep_written_for_speed_gives_the_same_bits(params, compiled):
    rng = random.Random(7)
    fast, ref = Winch(params, substep=0.005, compiled=compiled), _Before(params, substep=0.005, compiled=False)
    for k in range(3000):
        if k % 40 == 0:                                  # new inputs now and then, every mode
            inputs = {"mode": rng.choice((0, 0, 1, 2, 2, 3)), "brake": rng.random() < 0.1,
                      "speed_setpoint": rng.choice((0.0, -0.0, rng.uniform(-2.5, 2.5))),
                      "tension_setpoint": rng.uniform(0.0, 6e5)}
        inputs["tension"] = rng.choice((rng.uniform(-1e3, 8e5), 5e5 + 1e4 * math.sin(0.05 * k)))
        inputs["hardpoint_velocity"] = 0.8 * math.cos(0.03 * k) if rng.random() < 0.9 else 0.0
        dt = rng.choice((0.025, 0.025, 0.01, 0.0037))
        for w in (fast, ref):
            for name, value in inputs.items():
                setattr(w, name, value)
            w.step(dt)
        assert _bits(fast) == _bits(ref), f"step {k}"
    assert fast.saturated == ref.saturated and fast.braking == ref.braking


def test_standstill_within_the_efficiency_band_gives_the_same_bits():
    """Drum speeds inside the band (the continuous efficiency ramp), hauling and paying out."""
    params = WinchParams()
    band = EFFICIENCY_BAND / params.drum_radius
    for omega in (0.0, -0.0, 0.3 * band, -0.7 * band, band, -band, 2 * band):
        fast, ref = Winch(params, substep=0.001), _Before(params, substep=0.001, compiled=False)
        for w in (fast, ref):
            w.omega, w.tension, w.speed_setpoint = omega, 4e5, 0.0
            w.step(0.005)
        assert _bits(fast) == _bits(ref), omega
