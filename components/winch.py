"""Winch: drum, gear and motor dynamics with velocity, constant-tension and active-heave-compensation
control, acceleration limits and a brake.  Pure Python, no FMI; the sub-steps also run compiled
(components/kernels/winch.c, the same bits), this code being the reference.

Sources
-------
[SMS]  SMS API final report, winch (sms_api_digest.md section 2.2): velocity and tension modes,
       acceleration/deceleration limits v_w(t_k) = v_w(t_{k-1}) + a dt clamped at the setpoint,
       tension PID  v_set = Kp e + Ki int e + Kd de/dt,  e = T_meas - T_set  (too much tension
       pays out).  The SMS winch has no drum or motor; ours adds them.
[LARS] OSP demo case "lars" winch (anchors_marine.md section 3g): 50 t load, gear ratio 173, drum
       4.36 m, drum inertia 1.6e5 kg m2, gear efficiency 0.925.
[W15]  Woodacre, Bauer & Irani, "A review of vertical motion heave compensation systems", Ocean
       Engineering 104 (2015) 140-154: active heave compensation pays out the measured vertical
       velocity of the suspension point.

Conventions
-----------
SI units.  Pay-out positive: the drum turns at omega > 0 when line leaves it, the pay-out speed is
v = r omega.  Line tension T >= 0 pulls line off the drum.  Motor torque tau_m > 0 hoists.  The
hardpoint's vertical velocity w is NED (positive DOWN).

Drum dynamics
-------------
    J omega' = T r - tau_g - c omega - tau_b,     J = J_drum + n^2 J_motor
    tau_g = n tau_m eta^s,   s = -sign(tau_m) sat(omega / omega_s),   omega_s = v_s / r0
      s = +1: the motor drives the load (tau_m omega < 0, power to the line): tau_g = n tau_m eta
      s = -1: the load drives the motor (lowering, regenerating):            tau_g = n tau_m / eta

The gear's loss is a friction torque opposing the motion, a Coulomb law in the drum speed; it is
regularised as Coulomb friction is in explicit simulation (the linear regularisation of Pennestri,
Rossi, Salvini & Valentini, "Review and comparison of dry friction force models", Nonlinear
Dynamics 83, 2016, 1785-1801): within |v| < v_s = 1 cm/s of pay-out speed the exponent s goes
linearly from one sign to the other, through an ideal gear at standstill.  The
hard switch at omega = 0 made the motor torque at standstill jump by 1/eta^2 (17 %) on the sign of
a drum speed of rounding size (-0.0 against 0.0, or 1e-17 rad/s): two runs equal to rounding
reported 1356 and 1160 N m.  Outside the band the law is the hard switch's, bit for bit.  The drum
itself does not see the choice while the drive tracks (the drive inverts the same law).

r = r0 (or, with ``layer_growth`` > 0, r = sqrt(r0^2 + d^2 L_spooled / (pi w_drum)) -- the
mean radius of rope of diameter d wound on a drum of width w_drum).  Motor limits:
|tau_m| <= tau_max always, and -tau_m omega_m <= P_max (omega_m = n omega) while the motor
delivers power (motoring, tau_m omega < 0).  Regenerating (lowering a load, braking) it absorbs
power and is limited by tau_max alone, as the Crane's joint drives (components/crane.py; the
four-quadrant drive: Mohan, Electric Drives: an Integrative Approach, 2003): with the power limit
on the braking torque too, a load lowered faster than P_max / (T eta) gets less braking torque the
faster it runs.  The two limits meet at omega = 0.  The brake holds up to tau_brake (Karnopp
stick-slip: zero speed when the needed torque is within the limit).

Drive and control
-----------------
The speed-controlled drive is stiff: each sub-step it computes the motor torque that makes the
drum follow the reference speed v_ref exactly,

    tau_m = (T r - c omega - J (v_ref' + (v_ref,prev - r omega)/tau_c) / r) / (n eta^+-1),

and if that torque is outside the torque or power limit it saturates and the drum follows its
own dynamics (the load then wins or loses speed as physics says).  The reference comes from the mode:

* 0 velocity: v_ref is the setpoint passed through the acceleration limits [SMS] (a_accel > 0 up
  to and |a_decel| down to the setpoint);
* 1 tension: v_set = Kp e + Ki int e + Kd de/dt (e = T - T_set, a filtered derivative), then the
  same acceleration limits;
* 2 heave compensation: v_ref = (velocity-mode reference) - w  -- paying out as the hardpoint rises
  keeps the load still [W15]; the compensation term bypasses the operator's acceleration limits
  (it is bounded by the motor's torque and power only);
* 3 brake: motor torque 0, brake applied (also applied in any mode by the brake input).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from components.stability import step_limit

__all__ = ["WinchParams", "Winch", "MODES", "stability_limit"]

MODES = {0: "velocity", 1: "tension", 2: "heave_compensation", 3: "brake"}
# pay-out speed [m/s] within which the gear's efficiency goes over from motoring to regenerating
# (module docstring): well below any commanded speed, far above the drum speed's rounding.  The
# torque changes by 1/eta^2 (17 %) across the band, so its width sets how steep the drive's torque
# is in the drum speed at standstill: at 1 mm/s a heave-compensating drive starting from rest
# changed its torque by 0.6 % of itself in 0.25 ms of a 0.6 m/s2 heave, more than error control
# at rtol 1e-3 allows at its minimum step; at 1 cm/s it is 10x less steep.
EFFICIENCY_BAND = 1e-2


@dataclass(frozen=True)
class WinchParams:
    """Winch data (SI).  Defaults: the LARS-like winch of anchors_marine.md section 3g."""

    drum_radius: float = 2.18            # r0 [m] (drum diameter 4.36 m)
    drum_inertia: float = 1.6e5          # [kg m^2]
    motor_inertia: float = 2.0           # per motor shaft [kg m^2]
    gear_ratio: float = 173.0            # n = omega_motor / omega_drum
    efficiency: float = 0.925            # gear efficiency eta
    max_torque: float = 2.0e4            # motor torque limit [N m] (motor shaft)
    max_power: float = 6.0e5             # motor power limit [W]
    viscous: float = 0.0                 # drum viscous friction c [N m s]
    brake_torque: float = 3.0e6          # brake holding torque [N m] (drum)
    accel_limit: float = 0.1             # a_accel > 0 [m/s^2]
    decel_limit: float = 0.1             # |a_decel| [m/s^2]
    max_speed: float = 2.0               # |v_set| clamp [m/s]
    kp: float = 1e-4                     # tension PID gains [m/s/N], [m/s/(N s)], [m s/N... s]
    ki: float = 5e-5
    kd: float = 0.0
    derivative_filter: float = 0.05      # time constant of the PID derivative [s]
    speed_time_constant: float = 0.05    # tau_c: drum-speed error decay of the drive [s]
    rope_diameter: float = 0.0           # d, for the layer-dependent radius (0: constant radius)
    drum_width: float = 1.0              # w_drum [m]
    spooled_length: float = 0.0          # line on the drum at the start [m]

    def check(self) -> list[tuple[str, float, str]]:
        bad = []
        for name in ("drum_radius", "drum_inertia", "gear_ratio", "efficiency", "max_torque", "max_power",
                     "accel_limit", "decel_limit", "max_speed", "speed_time_constant", "drum_width"):
            val = getattr(self, name)
            if not (math.isfinite(val) and val > 0.0):
                bad.append((name, val, "must be a positive number"))
        for name in ("motor_inertia", "viscous", "brake_torque", "kp", "ki", "kd", "derivative_filter",
                     "rope_diameter", "spooled_length"):
            val = getattr(self, name)
            if not (math.isfinite(val) and val >= 0.0):
                bad.append((name, val, "must be a non-negative number"))
        if math.isfinite(self.efficiency) and self.efficiency > 1.0:
            bad.append(("efficiency", self.efficiency, "must be at most 1"))
        return bad


def stability_limit(params: WinchParams) -> float:
    """Longest stable sub-step [s]: the drum's speed is integrated by explicit Euler, whose
    viscous-friction mode -c / J is stable for h < 2 J / c (components/stability.py); the drive's
    speed error decays exactly and the derivative filter holds for any step."""
    J = params.drum_inertia + params.gear_ratio ** 2 * params.motor_inertia
    return step_limit([-params.viscous / J], "euler") if params.viscous > 0.0 else math.inf


class Winch:
    """Drum, gear, motor, brake and controller of one winch (module docstring)."""

    def __init__(self, params: WinchParams, substep: float = 1e-3, compiled: bool | None = None) -> None:
        """A winch at rest with no line paid out, sub-steps at most ``substep`` [s] long.

        compiled: None runs the sub-steps and present_drive compiled (components/kernels/winch.c)
        if the kernels can be had, True requires that, False runs the Python of this module, which
        is the reference (the same bits).  Raises ValueError naming a bad parameter.
        """
        bad = params.check()
        if bad:
            name, val, why = bad[0]
            raise ValueError(f"winch parameter {name} = {val!r} {why}")
        self.p = params
        self.substep = float(substep)
        self.J = params.drum_inertia + params.gear_ratio**2 * params.motor_inertia
        # constants of the sub-steps, formed once (the same numbers as formed in place)
        self._band = EFFICIENCY_BAND / params.drum_radius      # drum speed of the efficiency band
        self._flat = params.rope_diameter <= 0.0               # the radius is drum_radius
        self._decay = (None, 0.0)                              # (h, 1 - exp(-h / tau_c))
        # state
        self.t = 0.0
        self.omega = 0.0                  # drum speed [rad/s], > 0 pays out
        self.paid_out = 0.0               # [m] since the start
        self.v_lim = 0.0                  # acceleration-limited operator reference [m/s]
        self.integral = 0.0               # tension PID integral [N s]
        self.dfilt = 0.0                  # filtered tension error (derivative filter state) [N]
        # inputs
        self.mode = 0
        self.speed_setpoint = 0.0
        self.tension_setpoint = 0.0
        self.tension = 0.0
        self.hardpoint_velocity = 0.0     # NED down [m/s]
        self.brake = False
        # last outputs
        self.motor_torque = 0.0
        self.v_ref = 0.0
        self.saturated = False
        self.braking = False
        self._compiled = None
        if compiled is not False:
            from components import kernels
            from components.kernels.winch import CompiledWinch

            lib = kernels.library()
            if lib is None and compiled:
                raise RuntimeError(f"no compiled winch kernel: {kernels.status()}")
            self._compiled = CompiledWinch(lib, self) if lib is not None else None

    # ------------------------------------------------------------------ geometry
    @property
    def radius(self) -> float:
        """Effective drum radius [m] (layer-dependent when rope_diameter > 0)."""
        p = self.p
        if p.rope_diameter <= 0.0:
            return p.drum_radius
        spooled = max(p.spooled_length - self.paid_out, 0.0)
        return math.sqrt(p.drum_radius**2 + p.rope_diameter**2 * spooled / (math.pi * p.drum_width))

    @property
    def speed(self) -> float:
        """Pay-out speed v = r omega [m/s]."""
        return self.radius * self.omega

    @property
    def motor_speed(self) -> float:
        return self.p.gear_ratio * self.omega

    @property
    def motor_power(self) -> float:
        """Mechanical power the motor delivers [W] (> 0 motoring, < 0 regenerating)."""
        return -self.motor_torque * self.motor_speed

    # ------------------------------------------------------------------ control
    def _operator_reference(self, h: float) -> float:
        """Acceleration-limited reference [SMS eqs. 9-10], clamped at its setpoint."""
        p = self.p
        if self.mode == 1:
            e = self.tension - self.tension_setpoint
            # filtered derivative: dfilt' = (de/dt - dfilt) / Tf, as a state on e
            tf = h if h > p.derivative_filter else p.derivative_filter     # max(filter, h)
            deriv = (e - self.dfilt) / tf
            self.dfilt += h * deriv
            self.integral += h * e
            target = p.kp * e + p.ki * self.integral + p.kd * deriv
        else:
            target = self.speed_setpoint
        # min(max(target, -vmax), vmax) and the clamps below as conditionals: the builtins' results
        # (the first argument unless the second is larger, or smaller; NaN passes) at a third of
        # their cost in a sub-step
        vmax = p.max_speed
        if -vmax > target:
            target = -vmax
        if vmax < target:
            target = vmax
        if target > self.v_lim:
            step = (p.accel_limit if self.v_lim >= 0.0 else p.decel_limit) * h
            up = self.v_lim + step
            self.v_lim = target if target < up else up                # min(v_lim + step, target)
        elif target < self.v_lim:
            step = (p.decel_limit if self.v_lim > 0.0 else p.accel_limit) * h
            down = self.v_lim - step
            self.v_lim = target if target > down else down            # max(v_lim - step, target)
        return self.v_lim

    def _efficiency_factor(self, tau_m: float, omega: float) -> float:
        """eta^s of tau_g = n tau_m eta^s (module docstring): eta motoring, 1 / eta regenerating, a
        continuous ramp of the exponent within the standstill band."""
        p = self.p
        band = self._band                                       # EFFICIENCY_BAND / p.drum_radius
        if omega >= band or omega <= -band:
            return p.efficiency if tau_m * omega < 0.0 else 1.0 / p.efficiency
        s = omega / band if tau_m < 0.0 else -omega / band
        return p.efficiency ** s

    def _gear_torque(self, tau_m: float, omega: float) -> float:
        """Torque the gear applies to the drum against pay-out, with the efficiency's direction."""
        p = self.p
        return p.gear_ratio * tau_m * self._efficiency_factor(tau_m, omega)

    def _motor_limit(self, tau_m: float, omega: float) -> float:
        """|tau_m| limit: the power limit while motoring (tau_m omega < 0), else the torque limit;
        the two meet at omega = 0 (module docstring)."""
        p = self.p
        if tau_m * omega < 0.0:
            return min(p.max_torque, p.max_power / abs(p.gear_ratio * omega))
        return p.max_torque

    def _drive_torque(self, T: float, r: float, a_want: float) -> tuple[float, bool]:
        """Motor torque that gives the drum the pay-out acceleration a_want against tension T
        (module docstring), within the motor's limits; and whether it saturates."""
        p = self.p
        omega = self.omega
        need = T * r - p.viscous * omega - self.J * a_want / r        # = tau_g
        band = self._band                                            # EFFICIENCY_BAND / p.drum_radius
        if omega >= band or omega <= -band:                          # the hard switch's expressions
            tau_m = need / (p.gear_ratio * p.efficiency)             # motoring
            if not tau_m * omega < 0.0:
                tau_m = need * p.efficiency / p.gear_ratio            # regenerating
        else:                                                        # sign(tau_m) = sign(need)
            tau_m = need / (p.gear_ratio * self._efficiency_factor(need, omega))
        # the motor's limit (_motor_limit, written out: it runs every sub-step)
        lim = p.max_torque
        if tau_m * omega < 0.0:
            power = p.max_power / abs(p.gear_ratio * omega)
            if power < lim:                                          # min(max_torque, power limit)
                lim = power
        # min(max(tau_m, -lim), lim), as conditionals (the builtins' results, NaN included)
        held = -lim if -lim > tau_m else tau_m
        return (lim if lim < held else held), abs(tau_m) > lim

    def present_drive(self) -> tuple[float, float, bool]:
        """(motor torque, reference speed, saturated) for the present inputs at the present state,
        without stepping: the limit of a sub-step of vanishing length.  The motor torque answers
        the line tension at once (the drive holds the drum's speed); the reference moves at its
        rate limit and follows the hardpoint velocity at once (mode 2); the drive's speed error
        decays with tau_c.  A step in the hardpoint velocity itself is tracked over the next
        sub-step (its acceleration is not part of this)."""
        if self._compiled is not None:              # the same in C (components/kernels/winch.c)
            return self._compiled.present_drive(self)
        p = self.p
        r = self.radius
        T = max(self.tension, 0.0)
        brake = self.brake or self.mode == 3
        if self.mode == 3:
            return 0.0, 0.0, False
        if brake:
            return 0.0, r * self.omega, False
        if self.mode == 1:
            e = self.tension - self.tension_setpoint
            deriv = (e - self.dfilt) / max(p.derivative_filter, 1e-300) if p.kd else 0.0
            target = p.kp * e + p.ki * self.integral + p.kd * deriv
        else:
            target = self.speed_setpoint
        target = min(max(target, -p.max_speed), p.max_speed)
        a_ref = 0.0
        if target > self.v_lim:
            a_ref = p.accel_limit if self.v_lim >= 0.0 else p.decel_limit
        elif target < self.v_lim:
            a_ref = -(p.decel_limit if self.v_lim > 0.0 else p.accel_limit)
        v_ref = self.v_lim - (self.hardpoint_velocity if self.mode == 2 else 0.0)
        a_want = a_ref + (self.v_ref - r * self.omega) / p.speed_time_constant
        tau_m, saturated = self._drive_torque(T, r, a_want)
        return tau_m, v_ref, saturated

    # ------------------------------------------------------------------ stepping
    def step(self, dt: float) -> None:
        """Advance by dt [s] in sub-steps with the inputs held."""
        if self._compiled is not None and self._compiled.step(self, dt):    # the same in C (kernels/winch.c)
            return
        n = max(1, int(math.ceil(dt / self.substep - 1e-9)))
        h = dt / n
        for _ in range(n):
            self._substep(h)

    def _substep(self, h: float) -> None:
        p, J = self.p, self.J
        r = p.drum_radius if self._flat else self.radius
        T = self.tension
        if 0.0 > T:                                         # max(tension, 0.0)
            T = 0.0
        brake = self.brake or self.mode == 3
        v_prev_ref = self.v_ref
        if brake:
            # held by the brake: the reference waits at the drum speed and the PID does not wind up,
            # so a release starts from rest within the acceleration limits
            self.v_lim = r * self.omega
            self.dfilt = self.tension - self.tension_setpoint
        if self.mode == 3:
            v_ref, tau_m = 0.0, 0.0
        else:
            v_ref = self._operator_reference(h) if not brake else self.v_lim
            if self.mode == 2:
                v_ref -= self.hardpoint_velocity
            # torque for exact tracking (module docstring), then the motor's limits
            a_ref = (v_ref - v_prev_ref) / h
            # the speed error left from the previous sub-step decays with tau_c; a drive that
            # tracks exactly keeps it zero, so the pay-out acceleration is a_ref (within the limits)
            # exact decay over the sub-step (stable for any h, unlike 1/tau_c)
            held, decay = self._decay                      # 1 - exp(-h / tau_c), formed once per h
            if held != h:
                decay = 1.0 - math.exp(-h / p.speed_time_constant)
                self._decay = (h, decay)
            a_want = a_ref + (v_prev_ref - r * self.omega) * decay / h
            tau_m, self.saturated = self._drive_torque(T, r, a_want)
            if brake:
                tau_m = 0.0
        self.v_ref = v_ref
        omega = self.omega
        # the gear's torque (_gear_torque; outside the efficiency band written out)
        if omega >= self._band or omega <= -self._band:
            gear = p.gear_ratio * tau_m * (p.efficiency if tau_m * omega < 0.0 else 1.0 / p.efficiency)
        else:
            gear = p.gear_ratio * tau_m * self._efficiency_factor(tau_m, omega)
        drive = T * r - gear - p.viscous * omega
        # brake: Karnopp stick-slip on the drum
        self.braking = False
        if brake and p.brake_torque > 0.0:
            stop = drive + J * self.omega / h                 # brake torque that stops the drum now
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

    # ------------------------------------------------------------------ state
    def get_state(self) -> dict:
        return {k: getattr(self, k) for k in ("t", "omega", "paid_out", "v_lim", "integral", "dfilt", "v_ref",
                                              "motor_torque", "saturated", "braking")}

    def set_state(self, s: dict) -> None:
        for k in ("t", "omega", "paid_out", "v_lim", "integral", "dfilt", "v_ref", "motor_torque"):
            setattr(self, k, float(s[k]))
        self.saturated, self.braking = bool(s["saturated"]), bool(s["braking"])
