"""Crane-tip motion compensation by feedback linearisation (computed torque in task space).

Source: G.O. Tysse, O. Egeland, *Dynamic Interaction of a Heavy Crane and a Ship in Wave Motion*
(SFI Offshore Mechatronics), Sec. 7, eqs. (107)-(116) (ship_crane_digest.md §3.3). The crane tip is
held still in the earth frame {n} while the ship moves:

    e = p - p_d,    p_d fixed in {n}                                   (107)-(108)
    M(q) qdd + h(q, qd, ship motion, loads) = tau                       (99), joint rows
    p'' = a_0 + J qdd                                                   (the tip's acceleration)
    qdd_c chosen so that p'' = p_d'' - K_d e' - K_p e                   (116)
    =>  e'' + K_d e' + K_p e = 0.

* M is the crane's joint-space mass matrix (composite rigid bodies, RBDA Table 6.2), h the joint
  forces at qdd = 0 for the measured ship motion, velocities, gravity and measured loads (they hold
  the ship's acceleration nu', the [S4] d-tilde term), J the tip's geometric Jacobian in {n} and
  a_0 the tip's acceleration at qdd = 0. Everything is computed in earth axes from what a real
  controller measures: the ship's motion-reference outputs at the crane base (pose, velocity,
  acceleration) and the joint encoders; the loads at attachment points from load cells.
* Joints are of three kinds. **Actuated** (3 for a 3-D tip position: slew, boom, jib): their
  torques are the output. **Free**: passive or force-controlled joints whose generalised force is
  measured (the hook's swing joints: 0; a hoist spring: its force). [S4] needs the payload's
  acceleration qdd_p here (digest §3.3 note); we eliminate it with the free joints' own rows instead,
  qdd_f = M_ff^-1 (tau_f - h_f - M_fc qdd_c), the collocated partial feedback linearisation of an
  underactuated chain (Spong 1994): exact for the model, and nothing has to be differentiated.
  **Locked**: joints held by their own servos (a knuckle boom's telescope and tool), taken as rigid
  (qdd = 0) in the model.
* Then  p'' = a_0 + J_f g_f + (J_c - J_f N) qdd_c  with  N = M_ff^-1 M_fc,  g_f = M_ff^-1 (tau_f - h_f),
  solved for qdd_c (3x3), and  tau_c = (M_cc - M_cf N) qdd_c + M_cf g_f + h_c.
* Hold mode (no compensation): the same computed torque in joint space,
  qdd_c = -K_d qd_c - K_p (q_c - q_hold): the crane stays rigid on the ship (its tip moves with it).
* The target p_d is latched where the tip is when compensation starts. With a positive
  ``target_time_constant`` T it follows, through a first-order low-pass, where the tip would be at
  the hold pose on the present ship: only wave-frequency motion is compensated and a slow drift or
  yaw of the vessel does not walk the crane out of its workspace (p_d' = (p_hold - p_d) / T).

Gains K_p = omega^2, K_d = 2 zeta omega (the same on each axis). The controller is sampled: the
torques are held over a communication step h, so omega h should stay well below 1.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from components.articulated_body import ArticulatedBody
from components.crane import BaseMotion
from components.mechanism import Mechanism
from components.rotations import quat_normalize, quat_to_matrix

ACTUATED, FREE, LOCKED = "actuated", "free", "locked"


class CompensationError(ValueError):
    """The controller cannot compute a command (singular tip Jacobian, bad measurement)."""


@dataclass
class Command:
    """One evaluation of the controller (earth axes, NED)."""

    torque: np.ndarray          # actuated joints' torques (N m or N)
    tip_position: np.ndarray    # measured (forward kinematics) tip position
    tip_velocity: np.ndarray
    target: np.ndarray          # p_d
    desired_acceleration: np.ndarray     # p_d'' - K_d e' - K_p e (compensation) or the hold law's tip acceleration
    qdd: np.ndarray             # the actuated joints' accelerations the torques ask for


class TipCompensator:
    """The computed-torque controller of the module docstring for one mechanism.

    ``roles``: one of "actuated", "free", "locked" per joint (exactly three actuated, in any order).
    ``tip``: (link, point in its distal DH frame) of the tip to hold still."""

    def __init__(self, mechanism: Mechanism, roles: list[str], tip: tuple[int, np.ndarray], omega: float = 2.0,
                 zeta: float = 1.0, gravity: float = 9.81):
        if len(roles) != len(mechanism.links):
            raise ValueError(f"{len(roles)} joint roles for {len(mechanism.links)} joints")
        bad = [r for r in roles if r not in (ACTUATED, FREE, LOCKED)]
        if bad:
            raise ValueError(f"unknown joint role(s) {bad} (use {ACTUATED}, {FREE} or {LOCKED})")
        self.c = np.array([i for i, r in enumerate(roles) if r == ACTUATED])
        self.f = np.array([i for i, r in enumerate(roles) if r == FREE], dtype=int)
        if len(self.c) != 3:
            raise ValueError(f"{len(self.c)} actuated joints: a 3-D tip position needs exactly 3")
        if not (math.isfinite(omega) and omega > 0 and math.isfinite(zeta) and zeta > 0):
            raise ValueError(f"omega {omega!r} and zeta {zeta!r} must be positive and finite")
        self.body = ArticulatedBody(mechanism)
        self.n = self.body.n
        self.tip_link = int(tip[0])
        self.tip_point = np.asarray(tip[1], float)
        self._tip_r = self.body.point_in_joint_frame(self.tip_link, self.tip_point)
        self.kp = omega * omega
        self.kd = 2.0 * zeta * omega
        self.gravity = np.array([0.0, 0.0, gravity])
        self._rev = np.array([l.joint == "revolute" for l in mechanism.links])

    # ------------------------------------------------------------------ kinematics

    def tip_position(self, base: BaseMotion, q: np.ndarray) -> np.ndarray:
        """The tip in {n} by forward kinematics from the base pose and the joint positions."""
        R = base_rotation(base)
        T = self.body.joint_frames(q, R, base.position)[self.tip_link]
        return T[:3, :3].dot(self._tip_r) + T[:3, 3]

    def jacobian(self, frames: list[np.ndarray], p: np.ndarray) -> np.ndarray:
        """Geometric Jacobian of the tip in {n} (3 x n): z_i x (p - o_i) for a revolute joint,
        z_i for a prismatic one (z_i, o_i the joint axis and a point on it); 0 beyond the tip link."""
        J = np.zeros((3, self.n))
        for i in range(min(self.tip_link + 1, self.n)):
            z, o = frames[i][:3, 2], frames[i][:3, 3]
            J[:, i] = np.cross(z, p - o) if self._rev[i] else z
        return J

    # ------------------------------------------------------------------ the law

    def command(self, base: BaseMotion, q: np.ndarray, qd: np.ndarray, free_forces: np.ndarray,
                loads=(), target: np.ndarray | None = None, target_rate: np.ndarray | None = None,
                hold: np.ndarray | None = None) -> Command:
        """Torques of the actuated joints.

        base: the crane base's measured motion (the ship hardpoint, NED); q, qd: all joints;
        free_forces: the measured generalised forces of the free joints (in their order);
        loads: (link, point in F_link, force NED, moment NED) measured at attachments;
        target: p_d (NED) to compensate towards, with its rate target_rate; or, with target None,
        ``hold``: the actuated joints' positions to hold (no compensation)."""
        q = np.asarray(q, float)
        qd = np.asarray(qd, float)
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(qd))):
            raise CompensationError(f"joint measurements not finite: q = {q.tolist()}, qd = {qd.tolist()}")
        R = base_rotation(base)
        body = self.body
        M = body.mass_matrix(q)
        # ABA at tau = 0: qdd0 = -M^-1 h, so h = -M qdd0; the tip's acceleration there gives a_0
        res = body.forward_dynamics(q, qd, np.zeros(self.n), R, base.position, base.velocity,
                                    base.angular_velocity, base.acceleration, base.angular_acceleration,
                                    gravity=self.gravity, link_wrenches=list(loads))
        qdd0 = res.qdd
        h = -M.dot(qdd0)
        p, v, a_tau0 = res.point_kinematics(self.tip_link, self.tip_point)
        J = self.jacobian(res.joint_frames, p)
        a0 = a_tau0 - J.dot(qdd0)
        c, f = self.c, self.f
        Mcc, hc = M[np.ix_(c, c)], h[c]
        if len(f):
            Mff, Mfc, Mcf = M[np.ix_(f, f)], M[np.ix_(f, c)], M[np.ix_(c, f)]
            gf = np.linalg.solve(Mff, np.asarray(free_forces, float) - h[f])
            N = np.linalg.solve(Mff, Mfc)
            Jf = J[:, f]
            Jeff = J[:, c] - Jf.dot(N)
            a_free = a0 + Jf.dot(gf)
            Meff = Mcc - Mcf.dot(N)
            tau_free = Mcf.dot(gf)
        else:
            Jeff, a_free, Meff, tau_free = J[:, c], a0, Mcc, 0.0
        if target is not None:
            rate = np.zeros(3) if target_rate is None else np.asarray(target_rate, float)
            e = p - np.asarray(target, float)
            a_des = -self.kd * (v - rate) - self.kp * e
            cond = np.linalg.cond(Jeff)
            if not cond < 1e8:
                raise CompensationError(f"the tip Jacobian is singular (condition number {cond:.3g}): the crane "
                                        "is stretched out or folded; compensation cannot move the tip there")
            qdd_c = np.linalg.solve(Jeff, a_des - a_free)
            tgt = np.asarray(target, float)
        else:
            if hold is None:
                raise ValueError("give a target (compensation) or the joint positions to hold")
            qdd_c = -self.kd * qd[c] - self.kp * (q[c] - np.asarray(hold, float))
            a_des = a_free + Jeff.dot(qdd_c)
            tgt = p
        tau = Meff.dot(qdd_c) + tau_free + hc
        return Command(tau, p, v, tgt, a_des, qdd_c)


def base_rotation(base: BaseMotion) -> np.ndarray:
    """Rotation matrix (base frame -> NED) of the base's quaternion (w, x, y, z), normalised."""
    return quat_to_matrix(quat_normalize(np.asarray(base.quaternion, float)))
