"""MotionPlatform FMU: de Zeeuw's 3-DOF heave-roll-pitch motion-compensation platform (components.platform):
three Sarrus linkages with hydraulic cylinders carrying a heavy tower on a ship's deck.

Ports: ``base`` takes the deck hardpoint's motion (as the Crane FMU: position, quaternion, velocity,
angular velocity, acceleration, angular acceleration; NED) and gives the platform's articulated inertia
and bias wrench there for the mass-aware coupling with the Ship's hardpoint 1 (or the force and moment
it exerts on the deck for explicit coupling); ``leg<k>.force_command`` (k = 1..3) take the cylinder force
commands (from the PlatformController FMU), limited to [cylinder.force_min, cylinder.force_max]; the
legs' lengths, rates, forces and powers and the platform's pose come out. A pose the linkages cannot
take (over-stretched, folded, knee below the deck, platform on the deck, cylinder beyond its stroke)
is an FMI error with the reason. Every variable is in docs/interfaces.md.
"""
from __future__ import annotations

import numpy as np

from components.crane import BaseMotion
from components.platform import Platform as PlatformModel, euler_from_matrix
from components.stability import MIN_SUBSTEP
from fmus._base import Fmi2Slave
from fmus._platform import check_platform, cylinders, declare_platform, geometry, inertia

SYM = ("0,0", "1,1", "2,2", "0,1", "0,2", "1,2")
FULL = ("0,0", "0,1", "0,2", "1,0", "1,1", "1,2", "2,0", "2,1", "2,2")
_SYM_LINEAR = np.array([0, 7, 14, 1, 2, 8])
_COUPLING = np.array([3, 4, 5, 9, 10, 11, 15, 16, 17])
_SYM_ANGULAR = np.array([21, 28, 35, 22, 23, 29])
LEGS = (1, 2, 3)
COMMANDS = tuple(f"leg{k}.force_command" for k in LEGS)
BASE = ("base.position", "base.quaternion", "base.velocity", "base.angular_velocity", "base.acceleration",
        "base.angular_acceleration")


class MotionPlatform(Fmi2Slave):

    description = ("3-DOF heave-roll-pitch motion-compensation platform (de Zeeuw): Sarrus linkages, hydraulic "
                   "cylinders with force limits, articulated-body dynamics on a moving deck, deck wrench and "
                   "articulated inertia for the ship")
    default_stop_time = 60.0
    default_step_size = 0.02
    # the step moves the deck on with its velocity and acceleration (as the Crane's base)
    carried_inputs = frozenset(("base.position", "base.quaternion", "base.velocity", "base.angular_velocity"))

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.platform = None
        P, I, O = "parameter", "input", "output"
        declare_platform(self)
        self.real("gravity", P, 9.81, "m/s2", "Acceleration of gravity (along NED down)", minimum=0.0)
        self.real("max_substep", P, 0.01, "s", "Largest internal RK4 sub-step", minimum=MIN_SUBSTEP)
        self.real("base.position", I, [0.0] * 3, "m", "Position of the deck origin (ship hardpoint)", frame="NED",
                  size=3)
        self.real("base.quaternion", I, [1.0, 0.0, 0.0, 0.0], "1", "Orientation of the deck (w, x, y, z), deck "
                  "frame to NED", size=4)
        self.real("base.velocity", I, [0.0] * 3, "m/s", "Velocity of the deck origin", frame="NED", size=3)
        self.real("base.angular_velocity", I, [0.0] * 3, "rad/s", "Angular velocity of the deck", frame="NED",
                  size=3)
        self.real("base.acceleration", I, [0.0] * 3, "m/s2", "Acceleration of the deck origin", frame="NED",
                  size=3)
        self.real("base.angular_acceleration", I, [0.0] * 3, "rad/s2", "Angular acceleration of the deck",
                  frame="NED", size=3)
        for k in LEGS:
            self.real(f"leg{k}.force_command", I, 0.0, "N", f"Force command of cylinder {k} (> 0 extends the leg)")
        # direct feedthrough (the joints x are states): the deck's attitude turns the inertia and
        # gravity in NED axes, its velocities give the bias' velocity terms, its accelerations the
        # wrench; where the deck is does not matter to any of them
        turned = ("base.quaternion",)
        bias = COMMANDS + turned + ("base.velocity", "base.angular_velocity")
        wrench = bias + ("base.acceleration", "base.angular_acceleration")
        self.real("base.force", O, None, "N", "Force the platform exerts on the deck", frame="NED", size=3,
                  depends_on=wrench)
        self.real("base.moment", O, None, "N.m", "Moment the platform exerts on the deck about its origin",
                  frame="NED", size=3, depends_on=wrench)
        self.real("base.inertia_linear", O, None, "kg", "Articulated inertia at the deck origin, force/linear-"
                  "acceleration block (symmetric; 0,0 1,1 2,2 0,1 0,2 1,2), NED axes", size=6, labels=SYM,
                  depends_on=turned)
        self.real("base.inertia_coupling", O, None, "kg.m", "Articulated inertia, force/angular-acceleration "
                  "block (row-major), NED axes", size=9, labels=FULL, depends_on=turned)
        self.real("base.inertia_angular", O, None, "kg.m2", "Articulated inertia, moment/angular-acceleration "
                  "block (symmetric), NED axes", size=6, labels=SYM, depends_on=turned)
        self.real("base.bias_force", O, None, "N", "Bias force: what the deck must apply at zero acceleration",
                  frame="NED", size=3, depends_on=bias)
        self.real("base.bias_moment", O, None, "N.m", "Bias moment about the deck origin", frame="NED", size=3,
                  depends_on=bias)
        self.real("x", O, None, "1", "Heave (m, deck z), roll and pitch (rad) of the platform relative to the deck",
                  size=3)
        self.real("x_rate", O, None, "1", "Rates of heave (m/s), roll and pitch (rad/s) relative to the deck",
                  size=3)
        # the deck's pose carries the platform at once (its pose on the deck is a state)
        pose = ("base.position", "base.quaternion")
        self.real("platform.position", O, None, "m", "Position of the platform origin (centre of its base)",
                  frame="NED", size=3, depends_on=pose)
        self.real("platform.euler", O, None, "rad", "Roll, pitch, yaw (zyx) of the platform in the earth frame",
                  size=3, depends_on=turned)
        self.real("platform.top", O, None, "m", "Position of the tower top (100 m above the base, the thesis' "
                  "box)", frame="NED", size=3, depends_on=pose)
        for k in LEGS:
            self.real(f"leg{k}.length", O, None, "m", f"Length of leg (cylinder) {k}")
            self.real(f"leg{k}.rate", O, None, "m/s", f"Extension rate of leg {k}")
            self.real(f"leg{k}.force", O, None, "N", f"Force of cylinder {k} (its command within the force limits)",
                      depends_on=(f"leg{k}.force_command",))
            self.real(f"leg{k}.power", O, None, "W", f"Power of cylinder {k}: force x extension rate",
                      depends_on=(f"leg{k}.force_command",))
        self.real("legs.total_power", O, None, "W", "Sum of the three cylinders' powers", depends_on=COMMANDS)

    def check_parameters(self):
        problems = check_platform(self.v)
        return problems

    def initialize_model(self) -> None:
        v = self.v
        self.platform = PlatformModel(geometry(v), inertia(v), cylinders(v), x0=tuple(v["initial.x"]),
                                      gravity=v["gravity"])
        self._applied = None        # the input_version last given to the platform
        self._fresh = True          # the next inputs applied are all of them
        self._apply_inputs()

    def _apply_inputs(self) -> None:
        """Give the platform the inputs set since they were last applied (as the Crane FMU does):
        after a step the deck is where the step moved it, the end-of-step state the outputs describe;
        a base input set since takes over its part of the deck's motion (all of them at
        initialisation). Taking every base input anew on any set would put the deck back at the
        step's start whenever, say, a force command changed."""
        p, v = self.platform, self.v
        if self._applied == self.input_version:
            return
        changed, now = (None if self._fresh else self.changed_inputs), p.base

        def given(name):
            return changed is None or name in changed

        q = v["base.quaternion"].copy() if given("base.quaternion") else now.quaternion
        if not np.dot(q, q) > 1e-12:
            q = np.array([1.0, 0.0, 0.0, 0.0])       # no ship output yet (initialisation): level
        base = BaseMotion(*(v[name].copy() if given(name) else current for name, current in (
            ("base.position", now.position), ("base.quaternion", q), ("base.velocity", now.velocity),
            ("base.angular_velocity", now.angular_velocity), ("base.acceleration", now.acceleration),
            ("base.angular_acceleration", now.angular_acceleration))))
        base.quaternion = q
        self._fresh = False
        p.set_inputs(base, np.zeros(3), [])
        p.set_command(np.array([v[name] for name in COMMANDS]))
        self._applied = self.input_version

    def step_model(self, t: float, h: float) -> None:
        self._apply_inputs()
        self.platform.step(h, self.v["max_substep"])

    def update_outputs(self) -> None:
        v, p = self.v, self.platform
        self._apply_inputs()
        result, _ = p.evaluate()
        IA = result.articulated_inertia.ravel()
        v["base.inertia_linear"][:] = IA[_SYM_LINEAR]
        v["base.inertia_coupling"][:] = IA[_COUPLING]
        v["base.inertia_angular"][:] = IA[_SYM_ANGULAR]
        v["base.bias_force"][:] = result.bias[:3]
        v["base.bias_moment"][:] = result.bias[3:]
        W = result.base_wrench
        v["base.force"][:], v["base.moment"][:] = W[:3], W[3:]
        v["x"][:], v["x_rate"][:] = p.q, p.qd
        T = result.joint_frames[2]
        Rn = T[:3, :3].dot(np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]))   # J3 -> P axes
        v["platform.position"][:] = T[:3, 3]
        v["platform.euler"][:] = euler_from_matrix(Rn)
        v["platform.top"][:] = T[:3, 3] + Rn[:, 2] * -100.0
        ell, J = p.leg_kinematics(p.q)          # those of the evaluation above (the same pose)
        rate = J.dot(p.qd)
        f, _ = p.cylinders.force(p.command)
        for k in range(3):
            leg = f"leg{k + 1}"
            v[f"{leg}.length"], v[f"{leg}.rate"], v[f"{leg}.force"] = float(ell[k]), float(rate[k]), float(f[k])
            v[f"{leg}.power"] = float(f[k] * rate[k])
        v["legs.total_power"] = float((f * rate).sum())

    def get_model_state(self) -> dict:
        return {} if self.platform is None else {"platform": self.platform.get_state()}

    def set_model_state(self, state: dict) -> None:
        if "platform" in state:
            if self.platform is None:
                self.check_parameters()
                self.initialize_model()
            self.platform.set_state(state["platform"])
            self._applied = None
            self._fresh = False         # the restored deck stands until an input is set
        else:
            self.platform = None
