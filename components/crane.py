"""A serial crane on a moving base: articulated-body dynamics (components.articulated_body) with
joint actuation, penalty end stops and loads at attachment points.

Per joint (sms_api_digest §2.4, eqs. 67-72, errata applied):

* position control:  tau = kp (q_t - q) + ki z - kd qd,        z' = q_t - q
* velocity control:  tau = kp (qd_t - qd) + ki z,             z' = qd_t - qd
  (the report's D term on the joint acceleration is an algebraic loop; it is left out)
* passive:           tau = 0
* limits: |tau| <= torque_max and |tau qd| <= power_max (|tau| <= P / max(|qd|, 1e-3)); the
  integrator stops while the actuator saturates (anti-windup); the integral is an ODE state, not a
  sum over accepted steps (robust under rollback)
* end stops (penalty): q < lower: tau += -K (q - lower) - D qd;  q > upper: tau += -K (q - upper) - D qd
  (the report prints the upper stop with the non-restoring sign, erratum 4)

The base moves as prescribed by the ship hardpoint: its pose, velocity and acceleration at the start
of a step, extrapolated with constant acceleration over the step (the acceleration is the input
held over the step, like every co-simulation input). State: q, qd, z; RK4 with sub-steps.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from components.articulated_body import ArticulatedBody
from components.mechanism import Mechanism
from components.rotations import quat_multiply, quat_normalize, quat_to_matrix

MODES = ("passive", "position", "velocity")


@dataclass
class BaseMotion:
    """Base (ship hardpoint) kinematics in NED at the start of a step."""

    position: np.ndarray
    quaternion: np.ndarray          # base frame -> NED
    velocity: np.ndarray
    angular_velocity: np.ndarray
    acceleration: np.ndarray
    angular_acceleration: np.ndarray

    def at(self, s: float):
        """Pose, velocity and acceleration s seconds later, at constant acceleration."""
        w = self.angular_velocity + self.angular_acceleration * s
        rot = 0.5 * s * (self.angular_velocity + w)          # mean rotation vector over [0, s], NED
        angle = float(np.linalg.norm(rot))
        if angle > 0.0:
            dq = np.concatenate([[math.cos(0.5 * angle)], math.sin(0.5 * angle) * rot / angle])
            q = quat_normalize(quat_multiply(dq, self.quaternion))    # NED-frame rotation applied on the left
        else:
            q = self.quaternion
        p = self.position + self.velocity * s + 0.5 * self.acceleration * s * s
        v = self.velocity + self.acceleration * s
        return quat_to_matrix(q), p, v, w, self.acceleration, self.angular_acceleration


def still_base(position=(0.0, 0.0, 0.0)) -> BaseMotion:
    z = np.zeros(3)
    return BaseMotion(np.asarray(position, float), np.array([1.0, 0.0, 0.0, 0.0]), z, z.copy(), z.copy(), z.copy())


class Crane:
    """State x = [q (n), qd (n), z (n)] of a mechanism, with its setpoints and loads."""

    def __init__(self, mechanism: Mechanism, gravity: float = 9.81):
        self.mechanism = mechanism
        self.body = ArticulatedBody(mechanism)
        self.n = len(mechanism.links)
        self.gravity = np.array([0.0, 0.0, gravity])
        links = mechanism.links
        self.q = np.array([l.initial_position for l in links], float)
        self.qd = np.array([l.initial_rate for l in links], float)
        self.z = np.zeros(self.n)
        self.setpoint = self.q.copy()
        self.mode = [(l.control.mode if l.control else "passive") for l in links]
        for i, m in enumerate(self.mode):
            if m not in MODES:
                raise ValueError(f"joint {i + 1}: unknown control mode {m!r} (one of {MODES})")
            if m == "velocity":
                self.setpoint[i] = self.qd[i]
        self.base = still_base()
        self.loads: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []
        self.time = 0.0
        self._last = None

    # ------------------------------------------------------------------ inputs

    def set_inputs(self, base: BaseMotion, setpoints: np.ndarray, loads) -> None:
        """Base motion at the step start, joint setpoints (position or rate by mode), and external
        loads: (link index, point in the link frame, force NED, moment NED)."""
        self.base = base
        self.setpoint = np.asarray(setpoints, float).copy()
        self.loads = list(loads)
        self._last = None

    # ------------------------------------------------------------------ actuation

    def actuator_torques(self, q: np.ndarray, qd: np.ndarray, z: np.ndarray):
        """(actuator torque, saturated flags) per joint, end stops not included."""
        tau = np.zeros(self.n)
        saturated = np.zeros(self.n, bool)
        for i, link in enumerate(self.mechanism.links):
            c = link.control
            mode = self.mode[i]
            if c is None or mode == "passive":
                continue
            if mode == "position":
                raw = c.kp * (self.setpoint[i] - q[i]) + c.ki * z[i] - c.kd * qd[i]
            else:
                raw = c.kp * (self.setpoint[i] - qd[i]) + c.ki * z[i]
            limit = math.inf
            if c.torque_max is not None and c.torque_max > 0:
                limit = c.torque_max
            if c.power_max is not None and c.power_max > 0:
                limit = min(limit, c.power_max / max(abs(qd[i]), 1e-3))
            tau[i] = max(-limit, min(limit, raw))
            saturated[i] = tau[i] != raw
        return tau, saturated

    def end_stop_torques(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        tau = np.zeros(self.n)
        for i, link in enumerate(self.mechanism.links):
            lim = link.limits
            if lim is None:
                continue
            if q[i] < lim.lower:
                tau[i] = -lim.stiffness * (q[i] - lim.lower) - lim.damping * qd[i]
            elif q[i] > lim.upper:
                tau[i] = -lim.stiffness * (q[i] - lim.upper) - lim.damping * qd[i]
        return tau

    # ------------------------------------------------------------------ dynamics

    def _evaluate(self, s: float, q: np.ndarray, qd: np.ndarray, z: np.ndarray):
        R, p, v, w, a, alpha = self.base.at(s)
        act, saturated = self.actuator_torques(q, qd, z)
        tau = act + self.end_stop_torques(q, qd)
        result = self.body.forward_dynamics(q, qd, tau, R, p, v, w, a, alpha, gravity=self.gravity,
                                            link_wrenches=self.loads)
        z_dot = np.zeros(self.n)
        for i, mode in enumerate(self.mode):
            if mode == "position" and not saturated[i]:
                z_dot[i] = self.setpoint[i] - q[i]
            elif mode == "velocity" and not saturated[i]:
                z_dot[i] = self.setpoint[i] - qd[i]
        return result, act, z_dot

    def step(self, dt: float, max_substep: float) -> None:
        """RK4 on (q, qd, z) in ceil(dt / max_substep) sub-steps, inputs held over the step."""
        n = max(1, math.ceil(dt / max_substep - 1e-9))
        h = dt / n
        q, qd, z = self.q, self.qd, self.z
        s = 0.0
        for _ in range(n):
            r1, _, z1 = self._evaluate(s, q, qd, z)
            k1 = (qd, r1.qdd, z1)
            r2, _, z2 = self._evaluate(s + h / 2, q + h / 2 * k1[0], qd + h / 2 * k1[1], z + h / 2 * k1[2])
            k2 = (qd + h / 2 * k1[1], r2.qdd, z2)
            r3, _, z3 = self._evaluate(s + h / 2, q + h / 2 * k2[0], qd + h / 2 * k2[1], z + h / 2 * k2[2])
            k3 = (qd + h / 2 * k2[1], r3.qdd, z3)
            r4, _, z4 = self._evaluate(s + h, q + h * k3[0], qd + h * k3[1], z + h * k3[2])
            k4 = (qd + h * k3[1], r4.qdd, z4)
            q = q + h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
            qd = qd + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
            z = z + h / 6 * (k1[2] + 2 * k2[2] + 2 * k3[2] + k4[2])
            s += h
        self.q, self.qd, self.z = q, qd, z
        # the base moved over the step: the outputs refer to its end-of-step state
        R, p, v, w, a, alpha = self.base.at(dt)
        self.base = BaseMotion(p, _matrix_to_quat(R), v, w, a, alpha)
        self.time += dt
        self._last = None

    def evaluate(self):
        """(ABA result, actuator torques) at the current state, base and loads (cached)."""
        if self._last is None:
            result, act, _ = self._evaluate(0.0, self.q, self.qd, self.z)
            self._last = (result, act)
        return self._last

    def get_state(self) -> dict:
        return {"q": self.q.copy(), "qd": self.qd.copy(), "z": self.z.copy(), "time": self.time,
                "setpoint": self.setpoint.copy(), "mode": list(self.mode),
                "base": [self.base.position.copy(), self.base.quaternion.copy(), self.base.velocity.copy(),
                         self.base.angular_velocity.copy(), self.base.acceleration.copy(),
                         self.base.angular_acceleration.copy()]}

    def set_state(self, s: dict) -> None:
        self.q, self.qd, self.z = (np.array(s[k], float) for k in ("q", "qd", "z"))
        self.time = float(s["time"])
        self.setpoint = np.array(s["setpoint"], float)
        self.mode = list(s["mode"])
        self.base = BaseMotion(*(np.array(x, float) for x in s["base"]))
        self._last = None


def _matrix_to_quat(R: np.ndarray) -> np.ndarray:
    """Rotation matrix -> unit quaternion (w, x, y, z), Shepperd's method."""
    t = np.trace(R)
    if t > 0:
        s = math.sqrt(t + 1.0) * 2
        q = [0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s]
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = math.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2]) * 2
        q = [(R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s]
    elif R[1, 1] > R[2, 2]:
        s = math.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2]) * 2
        q = [(R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s]
    else:
        s = math.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1]) * 2
        q = [(R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s]
    return quat_normalize(np.array(q))
