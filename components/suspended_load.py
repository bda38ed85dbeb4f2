"""The plant of crane trajectory control: a rigid load hung on elastic ropes from moving suspension
points, driven by the crane's drive inputs u (Lee 2020, §2.5.3 eqs. 97 and 105 with stretching
ropes, §3.3: "the control inputs are applied as external forces to the DELE plant"; digest §1.7,
§1.3).

State: the load (components/rigid_body.py: 6 DOF at the CG, quaternion attitude, RK4) and the drive
coordinates p, p' of a rig (components/crane_rigs.py).  Rope i runs straight from S_i(p, t) to the
lug A_i; its tension is a spring-damper on the stretch,

    T_i = max(0, k_i e_i + c_i e_i'),   e_i = |A_i - S_i| - p_ci,   k_i = EA / p_ci,   c_i = tau k_i

(the regularised rope constraint of eq. 39: the thesis' compliance eps = 1 / k, digest §1.3, and
tau, SPOOK's dissipation-rate parameter of eq. 11, is the damping time c / k).  CHOICE: the thesis
gives neither EA nor tau for the crane ropes; EA 2e8 N (the gantry's hook-3 rope, 1.8 MN over
30 m, stretches 0.27 m) and tau 0.05 s.  A rope that would push goes slack (T = 0), which the thesis' rope
(an incompressible spring, "slack not considered") does not do; in the cases here no rope comes
near it.

The drives obey eq. 97/105, ``M_p p'' = f_p + B sat(u) + Q``, Q the rope forces on them (as
components/servo_constraints.py defines it, with the elastic tensions), sat the rig's input limit
(the gantry's trolley forces saturate at 50 kN, digest §2.15).

Time stepping: sub-steps of h; in each, the rope forces are evaluated at the current state and held
over the sub-step (zero-order hold, as in components/rope_bodies.py), the load advances by the
RigidBody's RK4 and the drives by semi-implicit Euler (v += h a; p += h v).  h is set well below
the stiffest rope mode (sqrt(k / m_winch) ~ 25 rad/s here: h 5 ms gives omega h ~ 0.13).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from components.rigid_body import RigidBody, RigidBodyParameters
from components.servo_constraints import drive_rope_forces

__all__ = ["SuspendedLoad", "matrix_to_quaternion"]


def matrix_to_quaternion(R: np.ndarray) -> np.ndarray:
    """[w, x, y, z] of a rotation matrix (Shepperd's method: the largest of the four first)."""
    R = np.asarray(R, float)
    tr = float(np.trace(R))
    k = int(np.argmax([tr, R[0, 0], R[1, 1], R[2, 2]]))
    if k == 0:
        s = 2.0 * np.sqrt(1.0 + tr)
        q = [0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s]
    elif k == 1:
        s = 2.0 * np.sqrt(1.0 + 2.0 * R[0, 0] - tr)
        q = [(R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s]
    elif k == 2:
        s = 2.0 * np.sqrt(1.0 + 2.0 * R[1, 1] - tr)
        q = [(R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s]
    else:
        s = 2.0 * np.sqrt(1.0 + 2.0 * R[2, 2] - tr)
        q = [(R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s]
    q = np.array(q)
    return q / np.linalg.norm(q)


class SuspendedLoad:
    """A load on elastic ropes from a rig's suspension points (module docstring).

    Start it in static equilibrium with ``at_rest``: the given pose and drive coordinates, the rope
    lengths shortened by the static stretch of the given tensions."""

    def __init__(self, rig: Any, position: np.ndarray, attitude: np.ndarray, p: np.ndarray,
                 v: np.ndarray | None = None, axial_stiffness: float = 2e8, damping_time: float = 0.05,
                 substep: float = 0.005, t0: float = 0.0) -> None:
        self.rig = rig
        params = RigidBodyParameters(mass=rig.mass, inertia=rig.inertia, attachments=rig.lugs, gravity=9.81)
        self.body = RigidBody(params, position=position, quaternion=matrix_to_quaternion(attitude))
        self.p = np.asarray(p, float).copy()
        self.v = np.zeros_like(self.p) if v is None else np.asarray(v, float).copy()
        self.EA, self.tau, self.h, self.t = float(axial_stiffness), float(damping_time), float(substep), t0
        self.T = np.zeros(len(rig.rope_drive))
        self.Q = np.zeros_like(self.p)

    @classmethod
    def at_rest(cls, rig: Any, position: np.ndarray, attitude: np.ndarray, p: np.ndarray,
                tensions: np.ndarray, **kw) -> "SuspendedLoad":
        """Rope lengths p_ci = |A_i - S_i| / (1 + T_i / EA): the stretch that carries T_i."""
        plant = cls(rig, position, attitude, p, **kw)
        S, _ = rig.suspension(plant.p, plant.t)
        A = np.asarray(position, float) + (np.asarray(attitude, float) @ rig.lugs.T).T
        plant.p[rig.rope_drive] = np.linalg.norm(A - S, axis=1) / (1.0 + np.asarray(tensions) / plant.EA)
        plant._ropes()
        return plant

    @property
    def position(self) -> np.ndarray:
        return self.body.position

    @property
    def attitude(self) -> np.ndarray:
        return self.body.rotation_matrix

    @property
    def rope_force(self) -> np.ndarray:
        """The ropes' resultant force on the load (NED) [N]."""
        return self._F.sum(axis=0)

    def _ropes(self) -> None:
        """Tensions, the forces on the lugs and on the drives at the current state."""
        rig, p, v, t = self.rig, self.p, self.v, self.t
        S, dS = rig.suspension(p, t)
        S_dot = rig.suspension_velocity(p, v, t)
        body = self.body
        n_r = len(rig.rope_drive)
        A = np.array([body.attachment_position(i) for i in range(n_r)])
        A_dot = np.array([body.attachment_velocity(i) for i in range(n_r)])
        d = A - S
        dist = np.linalg.norm(d, axis=1)
        n = d / dist[:, None]
        l, l_dot = p[rig.rope_drive], v[rig.rope_drive]
        k = self.EA / l
        stretch_rate = np.einsum("ij,ij->i", n, A_dot - S_dot) - l_dot
        self.T = np.maximum(0.0, k * (dist - l) + self.tau * k * stretch_rate)
        self._F = -self.T[:, None] * n                     # on the lugs, toward the crane
        self.Q = drive_rope_forces(rig, S, dS, A, self.T)
        self.S = S

    def step(self, dt: float, u: np.ndarray) -> None:
        """Advance by dt [s] with the drive inputs u held (and saturated at the rig's limits)."""
        rig = self.rig
        Bu = np.clip(rig.input_gain * np.asarray(u, float), -rig.input_limit, rig.input_limit)
        self.applied = Bu
        n = max(1, int(round(dt / self.h)))
        h = dt / n
        M = rig.mass_matrix
        for _ in range(n):
            self._ropes()
            self.body.set_loads(self._F)
            self.body.step(h, h)
            a = (rig.drive_forces(self.p, self.v, self.t) + Bu + self.Q) / M
            self.v = self.v + h * a
            self.p = self.p + h * self.v
            self.t += h
        self._ropes()
