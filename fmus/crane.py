"""Crane FMU: a serial crane (components.crane, articulated-body dynamics) on a moving base.

Ports: ``base`` takes the ship hardpoint's motion (position, quaternion, velocity, angular
velocity, acceleration, angular acceleration; NED) and gives the force and moment the crane exerts
on the ship there, plus its articulated inertia and bias wrench for strong coupling (names match
the Ship FMU's ``hardpoint1.*`` inputs). ``attachment<k>`` (k = 1..3; 1 is the tip) take a force in
NED and give position, velocity and acceleration in NED. ``joint<k>`` (k = 1..7) take a setpoint
(position or rate, by the joint's control mode) and give position, rate, torque and power; joints
beyond the mechanism's count stay at zero. Every variable is in docs/interfaces.md.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from components.crane import BaseMotion, Crane as CraneModel
from components.mechanism import PRESET_DIR, load_mechanism, validate_mechanism
from components.stability import MIN_SUBSTEP
from fmus._base import Fmi2Slave

FMU_RESOURCES = ("components/data/cranes/knuckle_boom.json", "components/data/cranes/sms_revolute.json",
                 "components/data/cranes/sms_prismatic.json", "components/data/cranes/sms_double_pendulum.json",
                 "components/data/cranes/sms_centripetal.json", "components/data/cranes/sms_palfinger.json",
                 "components/data/cranes/tysse_egeland.json")
N_JOINTS = 7
N_ATTACHMENTS = 3
SYM = ("0,0", "1,1", "2,2", "0,1", "0,2", "1,2")
FULL = ("0,0", "0,1", "0,2", "1,0", "1,1", "1,2", "2,0", "2,1", "2,2")
BASE_INPUTS = ("base.position", "base.quaternion", "base.velocity", "base.angular_velocity", "base.acceleration",
               "base.angular_acceleration")
# output names and the entries of the row-major 6x6 I_A they take, formed once
_SYM_LINEAR = np.array([0, 7, 14, 1, 2, 8])
_COUPLING = np.array([3, 4, 5, 9, 10, 11, 15, 16, 17])
_SYM_ANGULAR = np.array([21, 28, 35, 22, 23, 29])
_POS = tuple(f"attachment{k}.position" for k in range(1, N_ATTACHMENTS + 1))
_VEL = tuple(f"attachment{k}.velocity" for k in range(1, N_ATTACHMENTS + 1))
_ACC = tuple(f"attachment{k}.acceleration" for k in range(1, N_ATTACHMENTS + 1))
_SETPOINT = tuple(f"joint{k}.setpoint" for k in range(1, N_JOINTS + 1))
_FORCE = tuple(f"attachment{k}.force" for k in range(1, N_ATTACHMENTS + 1))
_ZERO3 = np.zeros(3)
_POINT = 13           # numbers per point of an evaluation's points (Crane.bind_points)
# the base inputs and the BaseMotion fields they set, in BaseMotion's order
_BASE_FIELDS = tuple(zip(BASE_INPUTS, ("position", "quaternion", "velocity", "angular_velocity", "acceleration",
                                       "angular_acceleration")))
SAFETY = 0.8          # sub-steps at most this fraction of the RK4 stability limit
_JOINT = tuple((f"joint{k}.position", f"joint{k}.rate", f"joint{k}.torque", f"joint{k}.power")
               for k in range(1, N_JOINTS + 1))
LOAD_INPUTS = (*(f"attachment{k}.force" for k in range(1, N_ATTACHMENTS + 1)),
               *(f"joint{k}.setpoint" for k in range(1, N_JOINTS + 1)))


class Crane(Fmi2Slave):

    description = ("Serial crane from Denavit-Hartenberg parameters on a moving base: articulated-body algorithm, "
                   "PID joint control with torque and power limits, penalty end stops, base reaction and "
                   "articulated inertia for the ship")
    default_stop_time = 30.0
    default_step_size = 0.01
    # the step moves the base on with its velocity and acceleration
    carried_inputs = frozenset(("base.position", "base.quaternion", "base.velocity", "base.angular_velocity"))
    # formed on first read after a step or an input change (fmus/_base.py): a master that reads
    # the inertia, bias and attachment motion only does not pay for pass 3 of the numpy ABA. The
    # attachments' position and velocity are formed with the other outputs: the compiled
    # evaluation forms them in its call (Crane.bind_points), where a lazy read cost more than they
    # do; the numpy reference forms them with point_motion
    lazy_outputs = {**{f"attachment{k}.acceleration": "update_accelerations" for k in range(1, N_ATTACHMENTS + 1)},
                    "base.force": "update_accelerations", "base.moment": "update_accelerations"}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.crane = None
        P, I, O = "parameter", "input", "output"
        self.string("mechanism", P, "knuckle_boom", "Mechanism: a preset name (knuckle_boom, sms_revolute, "
                                                    "sms_prismatic, sms_double_pendulum, sms_centripetal, "
                                                    "sms_palfinger, tysse_egeland) or a JSON/YAML file "
                                                    "(docs/crane_format.md)")
        self.real("gravity", P, 9.81, "m/s2", "Acceleration of gravity (along NED down)", minimum=0.0)
        self.real("max_substep", P, 0.002, "s", "Largest internal RK4 sub-step (shorter ones are taken where the "
                                                 "joint gains or end stops need them for stability)",
                  minimum=MIN_SUBSTEP)
        for k in range(1, N_JOINTS + 1):
            self.real(f"joint{k}.initial_position", P, 0.0, "1",
                      f"Initial position of joint {k} (rad or m by joint type); used when joint{k}.use_initial "
                      "is true, else the mechanism file's")
        self.boolean("use_initial", P, False, "Use the joint<k>.initial_position parameters instead of the "
                                              "mechanism file's initial positions")
        # inputs: base motion from a ship hardpoint
        self.real("base.position", I, [0.0] * 3, "m", "Position of the crane base (ship hardpoint)", frame="NED",
                  size=3)
        self.real("base.quaternion", I, [1.0, 0.0, 0.0, 0.0], "1", "Orientation of the base (w, x, y, z), base "
                  "frame to NED", size=4)
        self.real("base.velocity", I, [0.0] * 3, "m/s", "Velocity of the base", frame="NED", size=3)
        self.real("base.angular_velocity", I, [0.0] * 3, "rad/s", "Angular velocity of the base", frame="NED",
                  size=3)
        self.real("base.acceleration", I, [0.0] * 3, "m/s2", "Acceleration of the base", frame="NED", size=3)
        self.real("base.angular_acceleration", I, [0.0] * 3, "rad/s2", "Angular acceleration of the base",
                  frame="NED", size=3)
        for k in range(1, N_ATTACHMENTS + 1):
            self.real(f"attachment{k}.force", I, [0.0] * 3, "N",
                      f"Force on attachment point {k}" + (" (the tip)" if k == 1 else ""), frame="NED", size=3)
        for k in range(1, N_JOINTS + 1):
            self.real(f"joint{k}.setpoint", I, 0.0, "1", f"Setpoint of joint {k}: position (rad or m) in position "
                                                       "control, rate (rad/s or m/s) in velocity control; 0 at "
                                                       "initialisation holds a position-controlled joint where it is")
        # outputs
        deps = BASE_INPUTS + LOAD_INPUTS
        self.real("base.force", O, None, "N", "Force the crane exerts on the ship at the base", frame="NED", size=3,
                  depends_on=deps)
        self.real("base.moment", O, None, "N.m", "Moment the crane exerts on the ship about the base", frame="NED",
                  size=3, depends_on=deps)
        # NED axes: the articulated inertia turns with the base
        self.real("base.inertia_linear", O, None, "kg", "Articulated inertia at the base, force/linear-acceleration "
                  "block (symmetric; 0,0 1,1 2,2 0,1 0,2 1,2), NED axes", size=6, labels=SYM,
                  depends_on=("base.quaternion",))
        self.real("base.inertia_coupling", O, None, "kg.m", "Articulated inertia, force/angular-acceleration block "
                  "(row-major), NED axes", size=9, labels=FULL, depends_on=("base.quaternion",))
        self.real("base.inertia_angular", O, None, "kg.m2", "Articulated inertia, moment/angular-acceleration block "
                  "(symmetric), NED axes", size=6, labels=SYM, depends_on=("base.quaternion",))
        bias_deps = LOAD_INPUTS + ("base.quaternion", "base.velocity", "base.angular_velocity")
        self.real("base.bias_force", O, None, "N", "Bias force: what the base must apply at zero base acceleration",
                  frame="NED", size=3, depends_on=bias_deps)
        self.real("base.bias_moment", O, None, "N.m", "Bias moment about the base", frame="NED", size=3,
                  depends_on=bias_deps)
        for k in range(1, N_JOINTS + 1):
            self.real(f"joint{k}.position", O, None, "1", f"Position of joint {k} (rad or m)")
            self.real(f"joint{k}.rate", O, None, "1", f"Rate of joint {k} (rad/s or m/s)")
            self.real(f"joint{k}.torque", O, None, "1", f"Actuator torque or force of joint {k} (N.m or N), end "
                      "stops excluded", depends_on=(f"joint{k}.setpoint",))
            self.real(f"joint{k}.power", O, None, "W", f"Actuator power of joint {k}: torque x rate "
                      "(> 0 the drive delivers power, limited by its power_max; < 0 it brakes)",
                      depends_on=(f"joint{k}.setpoint",))
        for k in range(1, N_ATTACHMENTS + 1):
            # the base pose and velocity carry the attachments at once (the joints are states)
            self.real(f"attachment{k}.position", O, None, "m", f"Position of attachment point {k}", frame="NED",
                      size=3, depends_on=("base.position", "base.quaternion"))
            self.real(f"attachment{k}.velocity", O, None, "m/s", f"Velocity of attachment point {k}", frame="NED",
                      size=3, depends_on=("base.quaternion", "base.velocity", "base.angular_velocity"))
            self.real(f"attachment{k}.acceleration", O, None, "m/s2", f"Acceleration of attachment point {k}",
                      frame="NED", size=3, depends_on=deps)

    # ------------------------------------------------------------------ build

    def _mechanism_path(self) -> Path:
        name = self.v["mechanism"]
        path = Path(name)
        if path.suffix.lower() in (".json", ".yaml", ".yml"):
            if not path.is_absolute() and self.resources and (Path(self.resources) / name).exists():
                path = Path(self.resources) / name
            return path
        # this instance's own copy: the components package in sys.modules may come from another
        # instance's unpacked FMU, deleted when that instance was freed
        own = Path(self.resources) / "components" / "data" / "cranes" / f"{name}.json" if self.resources else None
        return own if own is not None and own.is_file() else PRESET_DIR / f"{name}.json"

    def check_parameters(self):
        problems = []
        try:
            path = self._mechanism_path()
            self._mechanism = load_mechanism(path)
        except Exception as exc:
            return [("mechanism", self.v["mechanism"], f"cannot be loaded: {exc}")]
        problems += [(f"mechanism:{f}", value, reason) for f, value, reason in validate_mechanism(self._mechanism)]
        if len(self._mechanism.links) > N_JOINTS:
            problems.append(("mechanism", self.v["mechanism"], f"has {len(self._mechanism.links)} joints; this FMU "
                                                               f"exposes {N_JOINTS}"))
        if not problems:
            problems += self._stability_problems()
        return problems

    def _initial_mechanism(self):
        mech = self._mechanism
        if self.v["use_initial"]:
            for i, link in enumerate(mech.links):
                link.initial_position = float(self.v[f"joint{i + 1}.initial_position"])
        return mech

    def _stability_problems(self) -> list:
        """The joint gains and end stops against the shortest sub-step we take (MIN_SUBSTEP): the
        parameter that sets the limit, named as in the mechanism file."""
        key = (self.v["mechanism"], self.v["gravity"], bool(self.v["use_initial"]),
               tuple(float(self.v[f"joint{k}.initial_position"]) for k in range(1, N_JOINTS + 1)))
        if getattr(self, "_stability_key", None) == key:
            return self._stability_found          # the same crane checked already (initialisation mode)
        crane = CraneModel(self._initial_mechanism(), gravity=self.v["gravity"])
        self._limits = crane.limit_substeps(SAFETY)
        problems = []
        H = crane.body.mass_matrix(crane.q)
        for (limit, joint), stops in zip(self._limits, (False, True)):
            if joint is None or SAFETY * limit >= MIN_SUBSTEP:
                continue
            link, m = self._mechanism.links[joint], H[joint, joint]
            if stops:
                stiff, damp, where = link.limits.stiffness, link.limits.damping, "limits"
                names = ("stiffness", "damping")
            else:
                c = link.control
                stiff, damp, where = c.kp, (c.kd if c.mode == "position" else c.kp), "control"
                names = ("kp", "kd" if c.mode == "position" else "kp")
            # a damping rate above the natural frequency sets the limit, else the stiffness
            name, value = (names[1], damp) if damp / m > math.sqrt(stiff / m) else (names[0], stiff)
            problems.append((f"mechanism:links[{joint}].{where}.{name}", value,
                             f"with joint {joint + 1}'s inertia {m:.4g} needs RK4 sub-steps below {limit:.3g} s "
                             f"(stability), shorter than {MIN_SUBSTEP:g} s: lower it"))
        self._stability_key, self._stability_found = key, problems
        return problems

    def initialize_model(self) -> None:
        self.crane = CraneModel(self._initial_mechanism(), gravity=self.v["gravity"])
        self.crane.time = self.time
        (free, joint), (stops, stop_joint) = self.crane.limit_substeps(SAFETY)
        if joint is not None:          # (the crane keeps its sub-steps within the limits itself)
            self.stable_substep(self.v["max_substep"], free, SAFETY, f"joint {joint + 1}'s controller (RK4)")
        if SAFETY * stops < min(self.v["max_substep"], SAFETY * free) and not self._in_init:
            self.log(f"joint {stop_joint + 1}'s end stop needs sub-steps of {SAFETY * stops:.3g} s: taken in steps "
                     "where a joint reaches a stop")
        self._prepare_attachments()
        self._fresh = True                  # the next inputs applied are all of them
        # A setpoint still at its declared start (0) means "hold": a position-controlled joint keeps
        # its initial position instead of swinging to 0 (set the setpoint to command anything else).
        for i in range(self.crane.n):
            key = f"joint{i + 1}.setpoint"
            if self.v[key] == 0.0 and self.crane.mode[i] == "position":
                self.v[key] = float(self.crane.setpoint[i])
        self._apply_inputs()

    def _prepare_attachments(self) -> None:
        """(link, point in J_link coordinates) of the attachments with an output."""
        body = self.crane.body
        self._attachments = [(att.link, body.point_in_joint_frame(att.link, att.point))
                             for att in self._mechanism.attachments[:N_ATTACHMENTS]]
        self._attachment_motion = [None] * N_ATTACHMENTS
        # the compiled evaluation forms their motion in its call (Crane.bind_points) and writes the
        # outputs update_outputs would into this instance's arrays (bound again with the new arrays
        # of a restored state: set_model_state comes here)
        v = self.v
        self._outputs_bound = self.crane.bind_points(self._attachments) and self.crane.bind_outputs(
            [v["base.inertia_linear"], v["base.inertia_coupling"], v["base.inertia_angular"], v["base.bias_force"],
             v["base.bias_moment"], *(v[names[k]] for k in range(len(self._attachments)) for names in (_POS, _VEL))])
        self._load_points = [(att.link, np.asarray(att.point, float))
                             for att in self._mechanism.attachments[:N_ATTACHMENTS]]
        # (result, crane) the outputs, each attachment's motion and the accelerations were last
        # formed from
        self._shown = self._accelerations_shown = None
        self._motion_shown = [None] * N_ATTACHMENTS
        self._applied = None        # (input_version, base, setpoints, loads) last given to the crane
        self._setpoint_names = _SETPOINT[:self.crane.n]
        self._joints_shown = None   # (q, qd, z, setpoint bits) the joint outputs were last formed from
        n = self.crane.n
        # _joint_outputs' names, in the order of its values: positions, rates, torques, powers
        self._joint_names = [names[x] for x in range(4) for names in _JOINT[:n]]
        for names in _JOINT[n:]:
            for name in names:
                self.v[name] = 0.0
        for k in range(len(self._attachments), N_ATTACHMENTS):     # attachments the mechanism lacks
            self.v[_POS[k]][:] = self.v[_VEL[k]][:] = 0.0

    # ------------------------------------------------------------------ stepping and outputs

    def _apply_inputs(self) -> None:
        # the master sets every input before each call; nothing to do when none was set since
        c = self.crane
        if self._applied is not None and self._applied[0] == self.input_version:
            # nothing set since these inputs were applied: after a step the crane's base is where
            # it moved to over the step (Crane.step), the end-of-step state the outputs describe
            return
        v = self.v
        # the base inputs set since the last step; the others keep the base where the step moved
        # it (all of them at initialisation)
        changed, now = (BASE_INPUTS if self._fresh else self.changed_inputs), c.base
        # copies of the inputs set, the moved base's own arrays for the others (one comprehension:
        # a closure and a generator per field cost more than the copies)
        motion = [v[name].copy() if name in changed else getattr(now, field) for name, field in _BASE_FIELDS]
        q = motion[1].tolist()
        if not q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] > 1e-12:
            # an all-zero quaternion is a source that has no output yet (initialisation): level
            motion[1] = np.array([1.0, 0.0, 0.0, 0.0])
        base = BaseMotion(*motion)
        self._fresh = False
        setpoints = [v[name] for name in self._setpoint_names]      # set_inputs makes the array
        loads = []
        for name, (link, point) in zip(_FORCE, self._load_points):
            force = v[name]
            if any(force.tolist()):     # np.any's test (NaN counts), without its ~2 us of wrapping
                loads.append((link, point, force.copy(), _ZERO3))
        self._applied = (self.input_version, base, setpoints, loads)
        c.set_inputs(base, setpoints, loads)

    def step_model(self, t: float, h: float) -> None:
        self._apply_inputs()
        self.crane.step(h, self.v["max_substep"])

    def update_outputs(self) -> None:
        v, c = self.v, self.crane
        # the base inputs refer to the step's end now that the master has set them
        self._apply_inputs()
        result, act = c.evaluate()
        last = self._shown
        if last is not None and last[0] is result and last[1] is c:
            return                                          # no input changed since these outputs
        self._shown = (result, c)
        written = result.outputs_written and self._outputs_bound    # by the kernel's call (bind_outputs)
        if not written:
            IA, bias = result.inertia_and_bias()              # I_A row-major (36), p_A
            v["base.inertia_linear"][:] = IA[_SYM_LINEAR]
            v["base.inertia_coupling"][:] = IA[_COUPLING]
            v["base.inertia_angular"][:] = IA[_SYM_ANGULAR]
            v["base.bias_force"][:] = bias[0:3]
            v["base.bias_moment"][:] = bias[3:6]
        # the same state (only the base acceleration or the loads changed, Crane.evaluate redid
        # passes 2-3): the joint outputs and the attachments' position and velocity stand
        if not (last is not None and last[1] is c and last[0]._pass1 is result._pass1):
            if not written:       # (update_accelerations takes the attachments' v_P when it needs it)
                for k in range(len(self._attachments)):
                    self._attachment_motion_of(k, result)
            # the actuator torques depend on the state and the setpoints, not on the base: after a
            # feedthrough refresh that moved only the base (the master's second setReal of a macro
            # step) they are those shown. A step or a restored state makes new arrays of q, qd and
            # z; the setpoints are compared by their bits (-0.0 is not 0.0 to the torque's sign).
            key = (c.q, c.qd, c.z, c.setpoint.tobytes())
            shown = self._joints_shown
            if not (shown is not None and shown[0] is key[0] and shown[1] is key[1] and shown[2] is key[2]
                    and shown[3] == key[3]):
                self._joints_shown = key
                self._joint_outputs(act)

    def _attachment_motion_of(self, k: int, result) -> None:
        """Position and velocity of attachment k + 1 (of those the mechanism has) from an
        evaluation's result, and its v_P for the acceleration (update_accelerations)."""
        v, c = self.v, self.crane
        last = self._motion_shown[k]
        # the same state, base pose and velocity (only the base acceleration or the loads changed,
        # Crane.evaluate redid passes 2-3): position and velocity stand
        if last is not None and last[1] is c and last[0]._pass1 is result._pass1:
            return
        self._motion_shown[k] = (result, c)
        points = result.points
        if points is not None:               # formed in the evaluation's kernel call (bind_points)
            at = _POINT * k
            v[_POS[k]][:], v[_VEL[k]][:] = points[at + 4:at + 7], points[at + 7:at + 10]
            self._attachment_motion[k] = points[at + 10:at + 13]
            return
        link, r = self._attachments[k]
        pos, vel, self._attachment_motion[k] = result.point_motion(link, r)
        v[_POS[k]][:], v[_VEL[k]][:] = pos, vel

    def update_accelerations(self) -> None:
        """The base force and moment and the attachments' accelerations (lazy outputs: formed when
        first read; the accelerations need pass 3 of the ABA, which nothing else here needs)."""
        v, c = self.v, self.crane
        self._apply_inputs()
        result, _ = c.evaluate()
        last = self._accelerations_shown
        if last is not None and last[0] is result and last[1] is c:
            return
        self._accelerations_shown = (result, c)
        for k in range(len(self._attachments)):
            self._attachment_motion_of(k, result)           # v_P of the attachments
        W = result.base_wrench
        v["base.force"][:] = W[0:3]
        v["base.moment"][:] = W[3:6]
        motion = self._attachment_motion
        for k in range(N_ATTACHMENTS):
            if k < len(self._attachments):
                link, r = self._attachments[k]
                v[_ACC[k]][:] = result.point_acceleration(link, r, motion[k])
            else:
                v[_ACC[k]][:] = 0.0

    def _joint_outputs(self, act: np.ndarray) -> None:
        """Position, rate, actuator torque and power (torque x rate) of the mechanism's joints, in
        one dict update (the joints beyond its count keep the zeros _prepare_attachments gave)."""
        c = self.crane
        self.v.update(zip(self._joint_names, np.concatenate((c.q, c.qd, act, act * c.qd)).tolist()))

    def get_model_state(self) -> dict:
        return {} if self.crane is None else {"crane": self.crane.get_state()}

    def set_model_state(self, state: dict) -> None:
        if "crane" in state:
            if not hasattr(self, "_mechanism"):
                self.check_parameters()
            if self.crane is None or not self.same_parameters:
                self.crane = CraneModel(self._mechanism, gravity=self.v["gravity"])
            self.crane.set_state(state["crane"])
            self._prepare_attachments()
            self._fresh = False
        else:
            self.crane = None
