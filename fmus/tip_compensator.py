"""TipCompensator FMU: crane-tip motion compensation by feedback linearisation
(components.tip_compensation; Tysse & Egeland, ship_crane_digest.md §3.3), a controller for the
Crane FMU.

It measures what a real crane controller measures -- the ship's motion-reference outputs at the crane
base (connect the Ship's ``hardpoint1.*`` to ``base.*``, as for the Crane), the joint encoders (the
Crane's ``joint<k>.position`` and ``joint<k>.rate``), the generalised forces of free joints (the
Crane's ``joint<k>.torque``: a hoist's load cell) and the load on an attachment (the wire force on the
jib tip) -- and commands the actuated joints' torques (``joint<k>.command`` to the Crane's
``joint<k>.setpoint``, those joints in ``torque`` control mode). ``mode`` 1 holds the tip still in
the earth frame, 0 holds the joints where they are (the crane rigid on the ship).
``measurement_delay`` > 0 computes each command from the measurements that many communication
points old. Every variable is in docs/interfaces.md.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from components.crane import BaseMotion
from components.mechanism import PRESET_DIR, load_mechanism, validate_mechanism
from components.tip_compensation import ACTUATED, FREE, LOCKED, TipCompensator as Law
from fmus._base import Fmi2Slave

FMU_RESOURCES = ("components/data/cranes/knuckle_boom.json", "components/data/cranes/tysse_egeland.json")
N_JOINTS = 7
BASE = ("base.position", "base.quaternion", "base.velocity", "base.angular_velocity", "base.acceleration",
        "base.angular_acceleration")
_POS = tuple(f"joint{k}.position" for k in range(1, N_JOINTS + 1))
_RATE = tuple(f"joint{k}.rate" for k in range(1, N_JOINTS + 1))
_FORCE = tuple(f"joint{k}.force" for k in range(1, N_JOINTS + 1))
_COMMAND = tuple(f"joint{k}.command" for k in range(1, N_JOINTS + 1))
#: scale of the joint commands for a master's error control (FMI nominal): a crane's joint torques
#: are of order 1e6 N.m (knuckle_boom preset), so the default nominal 1 would ask for N.m accuracy
TORQUE_NOMINAL = 1e6
MEASURED = BASE + _POS + _RATE + _FORCE + ("load.force", "mode")


def _joint_list(text: str, name: str) -> list[int]:
    """'1,2,3' -> [0, 1, 2] (joint numbers from 1); ValueError with the parameter's name otherwise."""
    if not text.strip():
        return []
    try:
        out = [int(x) - 1 for x in text.replace(" ", "").split(",")]
    except ValueError:
        raise ValueError(f"{name} must list joint numbers separated by commas, e.g. '1,2,3'") from None
    return out


class TipCompensator(Fmi2Slave):

    description = ("Crane-tip motion compensation: computed-torque (feedback-linearisation) control in task space "
                   "from the ship's measured motion, joint encoders and load cells (Tysse & Egeland)")
    default_stop_time = 60.0
    default_step_size = 0.025

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.law = None
        P, I, O = "parameter", "input", "output"
        self.string("mechanism", P, "knuckle_boom", "The crane's mechanism, as given to the Crane FMU: a preset name "
                                                    "or a JSON/YAML file (docs/crane_format.md)")
        self.string("actuated_joints", P, "1,2,3", "The three joints whose torques this controller commands "
                                                   "(joint numbers from 1, comma-separated)")
        self.string("free_joints", P, "", "Joints whose generalised force is measured (joint<k>.force): passive "
                                          "swing joints, a hoist spring; the others are taken as rigid")
        # defaults that initialise on the preset crane: the knuckle boom's jib tip (attachment 2; the
        # knuckle pin, 1, is not moved by joint 3, a singular tip Jacobian) and the joints held (mode
        # 0) until a system switches compensation on
        self.integer("tip_attachment", P, 2, "The attachment (number from 1) whose point is held still",
                     minimum=1, maximum=3)
        self.integer("load_attachment", P, 0, "The attachment (number from 1) that load.force acts on; 0: none",
                     minimum=0, maximum=3)
        self.real("omega", P, 3.0, "rad/s", "Natural frequency of the error dynamics e'' + 2 zeta omega e' + "
                                            "omega^2 e = 0", minimum=0.0)
        self.real("zeta", P, 1.0, "1", "Damping ratio of the error dynamics", minimum=0.0)
        self.real("target_time_constant", P, 0.0, "s", "0: the target stays where the tip was when compensation "
                  "started; > 0: it follows the hold pose's tip through a low-pass of this time constant (only "
                  "wave-frequency motion is compensated)", minimum=0.0)
        self.integer("measurement_delay", P, 0, "Communication steps between a measurement and the command "
                     "computed from it", minimum=0, maximum=10)
        self.real("gravity", P, 9.81, "m/s2", "Acceleration of gravity (along NED down)", minimum=0.0)
        # inputs: the ship's motion reference at the crane base
        self.real("base.position", I, [0.0] * 3, "m", "Measured position of the crane base", frame="NED", size=3)
        self.real("base.quaternion", I, [1.0, 0.0, 0.0, 0.0], "1", "Measured orientation of the base (w, x, y, z), "
                  "base frame to NED", size=4)
        self.real("base.velocity", I, [0.0] * 3, "m/s", "Measured velocity of the base", frame="NED", size=3)
        self.real("base.angular_velocity", I, [0.0] * 3, "rad/s", "Measured angular velocity of the base",
                  frame="NED", size=3)
        self.real("base.acceleration", I, [0.0] * 3, "m/s2", "Measured acceleration of the base", frame="NED",
                  size=3)
        self.real("base.angular_acceleration", I, [0.0] * 3, "rad/s2", "Measured angular acceleration of the base",
                  frame="NED", size=3)
        for k in range(1, N_JOINTS + 1):
            self.real(f"joint{k}.position", I, 0.0, "1", f"Measured position of joint {k} (rad or m)")
            self.real(f"joint{k}.rate", I, 0.0, "1", f"Measured rate of joint {k} (rad/s or m/s)")
            self.real(f"joint{k}.force", I, 0.0, "1", f"Measured generalised force of joint {k} (N.m or N), used "
                                                    "for free joints")
        self.real("load.force", I, [0.0] * 3, "N", "Measured force on the load attachment (e.g. the wire at the jib "
                                                 "tip)", frame="NED", size=3)
        self.integer("mode", I, 0, "0: hold the actuated joints where they are; 1: hold the tip still in the earth "
                                   "frame", minimum=0, maximum=1)
        # outputs
        for k in range(1, N_JOINTS + 1):
            self.real(f"joint{k}.command", O, None, "1", f"Torque (N.m) or force (N) command of joint {k}; 0 for a "
                      "joint that is not actuated", depends_on=MEASURED,
                      nominal=TORQUE_NOMINAL)
        # the tip's kinematics need only the base's pose (and velocities) and the joint encoders; the
        # target is the tip itself in mode 0 and latched from it when mode 1 starts
        pose = ("base.position", "base.quaternion") + _POS
        self.real("tip.position", O, None, "m", "The tip by forward kinematics from the measurements", frame="NED",
                  size=3, depends_on=pose)
        self.real("tip.velocity", O, None, "m/s", "The tip's velocity from the measurements", frame="NED", size=3,
                  depends_on=("base.quaternion", "base.velocity", "base.angular_velocity") + _POS + _RATE)
        self.real("tip.target", O, None, "m", "Where the tip is held (mode 1), the tip itself in mode 0",
                  frame="NED", size=3, depends_on=pose + ("mode",))
        self.real("tip.error", O, None, "m", "tip.position - tip.target", frame="NED", size=3,
                  depends_on=pose + ("mode",))

    # ------------------------------------------------------------------ build

    def _mechanism_path(self) -> Path:
        name = self.v["mechanism"]
        path = Path(name)
        if path.suffix.lower() in (".json", ".yaml", ".yml"):
            if not path.is_absolute() and self.resources and (Path(self.resources) / name).exists():
                path = Path(self.resources) / name
            return path
        own = Path(self.resources) / "components" / "data" / "cranes" / f"{name}.json" if self.resources else None
        return own if own is not None and own.is_file() else PRESET_DIR / f"{name}.json"

    def check_parameters(self):
        v = self.v
        path = self._mechanism_path()
        try:
            self._mechanism = load_mechanism(path)
        except Exception as exc:
            return [("mechanism", v["mechanism"], f"cannot be loaded: {exc}")]
        problems = [(f"mechanism:{f}", value, reason) for f, value, reason in validate_mechanism(self._mechanism)]
        n = len(self._mechanism.links)
        if n > N_JOINTS:
            problems.append(("mechanism", v["mechanism"], f"has {n} joints; this FMU measures {N_JOINTS}"))
        roles = [LOCKED] * n
        for name, role in (("actuated_joints", ACTUATED), ("free_joints", FREE)):
            try:
                joints = _joint_list(v[name], name)
            except ValueError as exc:
                problems.append((name, v[name], str(exc)))
                continue
            for j in joints:
                if not 0 <= j < n:
                    problems.append((name, v[name], f"joint {j + 1} does not exist (1..{n})"))
                elif roles[j] != LOCKED:
                    problems.append((name, v[name], f"joint {j + 1} is named twice"))
                else:
                    roles[j] = role
        if roles.count(ACTUATED) != 3 and not any(p[0] == "actuated_joints" for p in problems):
            problems.append(("actuated_joints", v["actuated_joints"], "name exactly three joints (a 3-D tip position)"))
        n_att = len(self._mechanism.attachments)
        if v["tip_attachment"] > n_att:
            problems.append(("tip_attachment", v["tip_attachment"], f"the mechanism has {n_att} attachments"))
        if v["load_attachment"] > n_att:
            problems.append(("load_attachment", v["load_attachment"], f"the mechanism has {n_att} attachments"))
        for name in ("omega", "zeta"):
            if not v[name] > 0.0:
                problems.append((name, v[name], "must be positive"))
        if not problems:
            # a joint beyond the tip's link does not move the tip: a zero column of the tip Jacobian
            # in every pose (the knuckle boom's attachment 1, the knuckle pin, and its knuckle joint 3)
            link = self._mechanism.attachments[v["tip_attachment"] - 1].link
            beyond = [j + 1 for j, role in enumerate(roles) if role == ACTUATED and j > link]
            if beyond:
                problems.append(("tip_attachment", v["tip_attachment"],
                                 f"is on link {link + 1}, which actuated joint(s) {beyond} do not move: the tip "
                                 "Jacobian is singular in every pose (hold an attachment beyond the actuated "
                                 "joints, e.g. the knuckle boom's jib tip, 2)"))
        self._roles = roles
        return problems

    def initialize_model(self) -> None:
        v, mech = self.v, self._mechanism
        att = mech.attachments[v["tip_attachment"] - 1]
        self.law = Law(mech, self._roles, (att.link, np.asarray(att.point, float)), omega=v["omega"],
                       zeta=v["zeta"], gravity=v["gravity"])
        self.n = len(mech.links)
        self._load = None
        if v["load_attachment"] > 0:
            la = mech.attachments[v["load_attachment"] - 1]
            self._load = (la.link, np.asarray(la.point, float))
        # controller state: the joints to hold, the target, the measurement history
        self.hold = None            # actuated joints' positions held in mode 0
        self.target = None          # p_d, latched when mode 1 starts
        self.mode_was = None
        self.history: list[tuple[float, np.ndarray]] = []    # (time, measurement) of past communication points
        self.latest = None          # (time, measurement) the last outputs were computed from

    # ------------------------------------------------------------------ measurements

    def _measurement(self) -> np.ndarray:
        v = self.v
        parts = [v[name] for name in BASE]
        parts += [np.array([v[name] for name in _POS[:self.n]]), np.array([v[name] for name in _RATE[:self.n]]),
                  np.array([v[name] for name in _FORCE[:self.n]]), v["load.force"]]
        return np.concatenate([np.asarray(p, float).ravel() for p in parts])

    def _unpack(self, m: np.ndarray):
        if not np.dot(m[3:7], m[3:7]) > 1e-12:
            m = m.copy()
            m[3:7] = (1.0, 0.0, 0.0, 0.0)   # no ship output yet (initialisation): level
        base = BaseMotion(m[0:3], m[3:7], m[7:10], m[10:13], m[13:16], m[16:19])
        n = self.n
        q, qd, forces = m[19:19 + n], m[19 + n:19 + 2 * n], m[19 + 2 * n:19 + 3 * n]
        return base, q, qd, forces, m[19 + 3 * n:22 + 3 * n]

    def _sample(self) -> np.ndarray:
        """The measurement the command uses: the present one (kept as this communication point's),
        or the one ``measurement_delay`` communication points back (the oldest one kept while the
        run is younger than that)."""
        now = self._measurement()
        self.latest = (self.time, now)
        delay = int(self.v["measurement_delay"])
        if delay == 0:
            return now
        past = self.history
        return past[-delay][1] if len(past) >= delay else (past[0][1] if past else now)

    # ------------------------------------------------------------------ stepping and outputs

    def step_model(self, t: float, h: float) -> None:
        # the last outputs at t were computed from the measurement at t (the master refreshes the
        # inputs of a feedthrough FMU at each communication point): keep it for the delay line
        if self.latest is not None and abs(self.latest[0] - t) <= 1e-9 * max(1.0, abs(t)):
            self.history = (self.history + [self.latest])[-10:]
        T = self.v["target_time_constant"]
        if T > 0.0 and self.target is not None and self.hold is not None and self.history:
            base, q, *_ = self._unpack(self.history[-1][1])     # slow: the delay does not matter here
            self.target = self.target + (self._hold_tip(base, q) - self.target) * (1.0 - np.exp(-h / T))

    def _hold_tip(self, base: BaseMotion, q: np.ndarray) -> np.ndarray:
        """Where the tip would be with the actuated joints at their hold positions."""
        qh = q.copy()
        qh[self.law.c] = self.hold
        return self.law.tip_position(base, qh)

    def update_outputs(self) -> None:
        v = self.v
        base, q, qd, forces, load = self._unpack(self._sample())
        mode = int(v["mode"])
        if self.hold is None:
            self.hold = q[self.law.c].copy()
        if mode == 1 and self.mode_was != 1:
            self.target = self.law.tip_position(base, q)        # latch where the tip is now
        if mode == 0 and self.mode_was == 1:
            self.hold = q[self.law.c].copy()                     # hold the joints where compensation left them
        self.mode_was = mode
        loads = [] if self._load is None or not load.any() else [(self._load[0], self._load[1], load, np.zeros(3))]
        free = forces[self.law.f]
        if mode == 1:
            T = v["target_time_constant"]
            rate = (self._hold_tip(base, q) - self.target) / T if T > 0.0 else None
            cmd = self.law.command(base, q, qd, free, loads, target=self.target, target_rate=rate)
        else:
            cmd = self.law.command(base, q, qd, free, loads, hold=self.hold)
        for k in range(N_JOINTS):
            v[_COMMAND[k]] = 0.0
        for j, tau in zip(self.law.c, cmd.torque):
            v[_COMMAND[j]] = float(tau)
        v["tip.position"][:] = cmd.tip_position
        v["tip.velocity"][:] = cmd.tip_velocity
        v["tip.target"][:] = cmd.target
        v["tip.error"][:] = cmd.tip_position - cmd.target

    def get_model_state(self) -> dict:
        if self.law is None:
            return {}
        return {"hold": None if self.hold is None else self.hold.copy(),
                "target": None if self.target is None else self.target.copy(), "mode_was": self.mode_was,
                "history": [[t, m.copy()] for t, m in self.history],
                "latest": None if self.latest is None else [self.latest[0], self.latest[1].copy()]}

    def set_model_state(self, state: dict) -> None:
        if not state:
            self.law = None
            return
        if self.law is None:
            if not hasattr(self, "_mechanism"):
                self.check_parameters()
            self.initialize_model()
        self.hold = None if state["hold"] is None else np.array(state["hold"], float)
        self.target = None if state["target"] is None else np.array(state["target"], float)
        self.mode_was = state["mode_was"]
        self.history = [(float(t), np.array(m, float)) for t, m in state["history"]]
        self.latest = None if state["latest"] is None else (float(state["latest"][0]), np.array(state["latest"][1]))
