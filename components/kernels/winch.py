"""The compiled winch (winch.c) behind components.winch.Winch: all sub-steps of Winch.step in one
call, and Winch.present_drive, with the same bits as the Python.

The winch's constants go into one array when the kernel is bound; each call packs the inputs and
state into a second array, in the layouts winch.c documents, and reads the state back. The arrays
are ctypes arrays, not numpy's: a slice of Python floats goes in and comes out of one in half the
time, and at a few microseconds a step that is what the call costs.
"""
from __future__ import annotations

import ctypes
import math

N_PARAMS = 22            # kernels.h MC_WINCH_PARAMS
N_STATE = 24             # kernels.h MC_WINCH_STATE


class CompiledWinch:
    """The kernel bound to one Winch (its parameters and substep-independent constants)."""

    def __init__(self, lib, winch) -> None:
        p = winch.p
        # the radius's constants as Winch.radius forms them (Python's ** and *: the same numbers);
        # J and the efficiency band as Winch.__init__ formed them
        self._P = (ctypes.c_double * N_PARAMS)(
            p.drum_radius, 1.0 if winch._flat else 0.0, p.drum_radius**2, p.rope_diameter**2,
            math.pi * p.drum_width, p.spooled_length, winch.J, winch._band, p.gear_ratio, p.efficiency,
            p.max_torque, p.max_power, p.viscous, p.brake_torque, p.accel_limit, p.decel_limit, p.max_speed,
            p.kp, p.ki, p.kd, p.derivative_filter, p.speed_time_constant)
        self._S = (ctypes.c_double * N_STATE)()
        P, S = ctypes.addressof(self._P), ctypes.addressof(self._S)
        step, drive = lib.mc_winch_step, lib.mc_winch_present_drive
        self._step = lambda: step(P, S)
        self._drive = lambda: drive(P, S)

    def step(self, w, dt: float) -> bool:
        """Winch.step(dt) on w's inputs and state, in place; False (nothing done) where the count
        of sub-steps is no C int (dt / substep NaN, infinite or beyond 2^31): the Python's then."""
        S = self._S
        S[0:18] = (dt, w.substep, w.mode, w.brake, w.speed_setpoint, w.tension_setpoint, w.tension,
                   w.hardpoint_velocity, w.t, w.omega, w.paid_out, w.v_lim, w.integral, w.dfilt, w.v_ref,
                   w.motor_torque, w.saturated, w.braking)
        if self._step() < 0:
            return False
        w.t, w.omega, w.paid_out, w.v_lim, w.integral, w.dfilt, w.v_ref, w.motor_torque, saturated, braking = \
            S[8:18]
        w.saturated, w.braking = saturated != 0.0, braking != 0.0
        return True

    def present_drive(self, w) -> tuple[float, float, bool]:
        """Winch.present_drive() of w: (motor torque, reference speed, saturated)."""
        S = self._S
        S[2:15] = (w.mode, w.brake, w.speed_setpoint, w.tension_setpoint, w.tension, w.hardpoint_velocity, w.t,
                   w.omega, w.paid_out, w.v_lim, w.integral, w.dfilt, w.v_ref)
        self._drive()
        torque, reference, saturated = S[18:21]
        return torque, reference, saturated != 0.0
