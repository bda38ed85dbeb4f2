"""Winch FMU: drum, gear, motor and brake (components.winch) with velocity, constant-tension and
active-heave-compensation control.

Connect ``payout.speed`` (or ``payout.line_length``) to the Cable FMU's ``winch.speed`` (or
``winch.length``), and the Cable's ``winch.tension`` to ``line.tension``.  For heave
compensation, connect the vertical velocity of the winch's hardpoint (the Ship's
``hardpointK.velocity[2]`` or the crane tip's) to ``hardpoint.velocity_down``.
"""
from __future__ import annotations

from components.stability import MIN_SUBSTEP
from components.winch import MODES, stability_limit
from components.winch import Winch as WinchModel
from components.winch import WinchParams
from fmus._base import Fmi2Slave

PARAMS = (  # FMU name, WinchParams field, unit, description, minimum
    ("drum.radius", "drum_radius", "m", "Drum radius (empty drum with a layer-dependent radius)", 0.0),
    ("drum.inertia", "drum_inertia", "kg.m2", "Drum inertia", 0.0),
    ("drum.viscous_friction", "viscous", "N.m.s/rad", "Viscous friction on the drum", 0.0),
    ("drum.rope_diameter", "rope_diameter", "m", "Rope diameter for the layer-dependent radius (0: constant "
                                                 "radius)", 0.0),
    ("drum.width", "drum_width", "m", "Drum width between flanges (layer-dependent radius)", 0.0),
    ("drum.spooled_length", "spooled_length", "m", "Line on the drum at the start (layer-dependent radius)", 0.0),
    ("motor.inertia", "motor_inertia", "kg.m2", "Motor rotor inertia (motor shaft)", 0.0),
    ("motor.max_torque", "max_torque", "N.m", "Motor torque limit (motor shaft)", 0.0),
    ("motor.max_power", "max_power", "W", "Motor power limit", 0.0),
    ("gear.ratio", "gear_ratio", "1", "Gear ratio: motor speed / drum speed", 0.0),
    ("gear.efficiency", "efficiency", "1", "Gear efficiency (applied in the direction power flows)", 0.0),
    ("brake.max_torque", "brake_torque", "N.m", "Brake holding torque on the drum", 0.0),
    ("limits.acceleration", "accel_limit", "m/s2", "Pay-out acceleration limit when speeding up", 0.0),
    ("limits.deceleration", "decel_limit", "m/s2", "Pay-out deceleration limit when slowing down", 0.0),
    ("limits.speed", "max_speed", "m/s", "Largest commanded pay-out speed", 0.0),
    ("tension_control.kp", "kp", "m/s/N", "Tension PID proportional gain (pay-out speed per N of excess tension)",
     0.0),
    ("tension_control.ki", "ki", "m/s2/N", "Tension PID integral gain", 0.0),
    ("tension_control.kd", "kd", "m/N", "Tension PID derivative gain", 0.0),
    ("tension_control.derivative_filter", "derivative_filter", "s", "Time constant of the derivative filter", 0.0),
    ("drive.speed_time_constant", "speed_time_constant", "s", "Decay time of the drive's speed error", 0.0),
)


# inputs the drive's torque and reference answer within a step (the rest act through states): the
# torque holds the line tension and the reference's acceleration, which turns at once when a
# setpoint passes the present reference
DRIVE_INPUTS = ("mode", "brake", "line.tension", "hardpoint.velocity_down", "speed_setpoint", "tension_setpoint")


SAFETY = 0.8          # sub-steps at most this fraction of the stability limit


class Winch(Fmi2Slave):

    description = ("Winch with drum, gear, motor (torque and power limits) and brake; velocity mode with "
                   "acceleration limits, constant tension (PID), active heave compensation")
    default_stop_time = 60.0
    default_step_size = 0.01
    max_substeps_per_step = 1_000_000   # a sub-step costs a few microseconds: 1e6 of them a few seconds

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.winch = None
        self._warned: set[str] = set()
        P, I, O = "parameter", "input", "output"
        defaults = WinchParams()
        for name, field, unit, desc, minimum in PARAMS:
            self.real(name, P, getattr(defaults, field), unit, desc, minimum=minimum)
        self.real("initial_line_length", P, 0.0, "m", "Unstretched line length at the start (payout.line_length "
                                                      "= this + paid-out length)", minimum=0.0)
        self.real("max_substep", P, 1e-3, "s", "Largest internal sub-step (shorter ones are taken where the drum's "
                                               "viscous friction needs them for stability)", minimum=MIN_SUBSTEP)
        # inputs
        self.integer("mode", I, 0, "Control mode: " + ", ".join(f"{k} {v.replace('_', ' ')}" for k, v in
                                                                  MODES.items()), minimum=0, maximum=3)
        self.real("speed_setpoint", I, 0.0, "m/s", "Pay-out speed setpoint (> 0 pays out), modes 0 and 2")
        self.real("tension_setpoint", I, 0.0, "N", "Line tension setpoint, mode 1", minimum=0.0)
        self.boolean("brake", I, False, "Apply the brake (any mode)")
        self.real("line.tension", I, 0.0, "N", "Line tension at the drum (the Cable FMU's winch.tension); a "
                                               "negative value is refused", minimum=0.0)
        self.real("hardpoint.velocity_down", I, 0.0, "m/s", "Vertical velocity of the winch's suspension point "
                                                            "(NED: positive down), mode 2")
        # outputs
        self.real("payout.speed", O, None, "m/s", "Pay-out speed (> 0 pays out)")
        self.real("payout.length", O, None, "m", "Length paid out since the start")
        self.real("payout.line_length", O, None, "m", "Unstretched line length: initial_line_length + paid out")
        self.real("payout.reference_speed", O, None, "m/s", "Speed the drive is asked to follow",
                  depends_on=DRIVE_INPUTS)
        self.real("drum.speed", O, None, "rad/s", "Drum speed (> 0 pays out)")
        self.real("drum.effective_radius", O, None, "m", "Present drum radius")
        self.real("motor.speed", O, None, "rad/s", "Motor speed")
        # the drive holds the drum's speed: its torque answers the line tension at once
        self.real("motor.torque", O, None, "N.m", "Motor torque (> 0 hoists)", depends_on=DRIVE_INPUTS)
        self.real("motor.power", O, None, "W", "Motor mechanical power (> 0 motoring, < 0 regenerating)",
                  depends_on=DRIVE_INPUTS)
        self.boolean("motor.saturated", O, False, "The motor is at its torque or power limit",
                     depends_on=DRIVE_INPUTS)
        self.boolean("brake.engaged", O, False, "The brake is acting", depends_on=("mode", "brake"))

    def _params(self) -> WinchParams:
        return WinchParams(**{field: self.v[name] for name, field, *_ in PARAMS})

    def check_parameters(self):
        problems = [(next(n for n, f, *_ in PARAMS if f == field), value, why)
                    for field, value, why in self._params().check()]
        if not problems and SAFETY * stability_limit(self._params()) < MIN_SUBSTEP:
            problems.append(("drum.viscous_friction", self.v["drum.viscous_friction"],
                             f"on the drum's inertia needs sub-steps below {MIN_SUBSTEP:g} s (stability)"))
        return problems

    def initialize_model(self) -> None:
        params = self._params()
        substep = self.stable_substep(self.v["max_substep"], stability_limit(params), SAFETY,
                                      "drum.viscous_friction on the drum's inertia (explicit Euler)")
        self.winch = WinchModel(params, substep=substep)
        self._apply_inputs()

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.warning(message)

    def _apply_inputs(self) -> None:
        v, w = self.v, self.winch
        w.mode = int(v["mode"])
        vmax = w.p.max_speed
        sp = v["speed_setpoint"]
        if abs(sp) > vmax:
            self._warn_once("speed", f"speed_setpoint {sp!r} m/s is beyond limits.speed {vmax} m/s: clamped")
            sp = max(-vmax, min(vmax, sp))
        w.speed_setpoint = sp
        w.tension_setpoint = v["tension_setpoint"]
        w.tension = v["line.tension"]          # the checked setter refuses negative and non-finite values
        w.hardpoint_velocity = v["hardpoint.velocity_down"]
        w.brake = bool(v["brake"])

    def step_model(self, t: float, h: float) -> None:
        self._apply_inputs()
        self.winch.step(h)
        if self.winch.saturated:
            self._warn_once("sat", f"t = {t + h:.3f} s: the motor reached its torque or power limit (further "
                                   "saturation is shown by motor.saturated)")

    def update_outputs(self) -> None:
        v, w = self.v, self.winch
        # the drive at this instant (not over the last sub-step) for the inputs now
        self._apply_inputs()
        torque, reference, saturated = w.present_drive()
        # the radius and motor speed once (properties: w.speed is radius * omega)
        radius, motor_speed = w.radius, w.motor_speed
        v["payout.speed"] = radius * w.omega
        v["payout.length"] = w.paid_out
        v["payout.line_length"] = v["initial_line_length"] + w.paid_out
        v["payout.reference_speed"] = reference
        v["drum.speed"] = w.omega
        v["drum.effective_radius"] = radius
        v["motor.speed"] = motor_speed
        v["motor.torque"] = torque
        v["motor.power"] = -torque * motor_speed
        v["motor.saturated"] = bool(saturated)
        v["brake.engaged"] = bool((w.brake or w.mode == 3) and w.p.brake_torque > 0.0)

    def get_model_state(self) -> dict:
        return {} if self.winch is None else {"winch": self.winch.get_state(), "warned": sorted(self._warned)}

    def set_model_state(self, state: dict) -> None:
        if "winch" in state:
            if self.winch is None:
                self.initialize_model()
            self.winch.set_state(state["winch"])
            self._warned = set(state["warned"])
        else:
            self.winch = None
