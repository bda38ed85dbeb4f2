"""The port adapters' equations (their interfaces: orchestration.system.adapters).

Each kind is a class built from the adapter's start values whose :meth:`evaluate` maps the current
inputs (name -> value) to every output (name -> value). Inputs in another model's conventions are
converted exactly (frames.py); the rigid-body kinematics of a point A = p + R r of a body (e.g.
Fossen 2011, "Handbook of Marine Craft Hydrodynamics and Motion Control", chapter 2),

    p_A = p + R r,   v_A = v + w x R r,   a_A = a + dw x R r + w x (w x R r),

and its dual for a wrench, F = F_A, M = M_A + R r x F_A, so that F.v + M.w = F_A.v_A + M_A.w.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from orchestration.master.adapters.frames import (BODY_AXES, WORLD_AXES, Conventions, euler_to_quaternion,
                                                  matrix_to_euler, quat_to_matrix)
from orchestration.system.adapters import ANGLE_UNITS, FORCE_UNITS, MOMENT_UNITS, AdapterError

Values = Mapping[str, float]


def _vec(values: Mapping[str, Any], name: str, n: int = 3) -> np.ndarray:
    return np.array([float(values[f"{name}[{i}]"]) for i in range(n)])


def _put(out: dict[str, float], name: str, v: np.ndarray) -> None:
    for i, x in enumerate(v):
        out[f"{name}[{i}]"] = float(x)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def _parameter(p: Mapping[str, Any], name: str, default: Any) -> Any:
    value = p.get(name, default)
    return default if value == "" else value


class _Attitude:
    """Its attitude inputs (Euler angles or a quaternion) as our quaternion."""

    def __init__(self, p: Mapping[str, Any]):
        self.conventions = Conventions(_parameter(p, "world", "NED"), _parameter(p, "body", "FRD"),
                                       _parameter(p, "attitude_world", None))
        self.euler = _parameter(p, "attitude", "quaternion") == "euler"
        self.sequence = _parameter(p, "euler_sequence", "zyx")
        self.xyzw = _parameter(p, "quaternion_order", "wxyz") == "xyzw"
        self.scale = ANGLE_UNITS[_parameter(p, "angle_unit", "rad")]

    def quaternion(self, u: Values) -> np.ndarray:
        if self.euler:
            q_its = euler_to_quaternion(self.scale * _vec(u, "reference.euler"), self.sequence)
        else:
            q = _vec(u, "reference.quaternion", 4)
            q_its = np.array([q[3], q[0], q[1], q[2]]) if self.xyzw else q
            norm = float(np.linalg.norm(q_its))
            if not (norm > 0.0 and math.isfinite(norm)):
                raise AdapterError(f"its attitude quaternion {q.tolist()} is not a rotation (norm {norm:g})")
            q_its = q_its / norm
        return self.conventions.attitude(q_its)


class _Points:
    """Points 1..N on the body (``point<k>.lever``, our body axes from the reference point): their
    motion from the reference point's, and their loads summed about it."""

    def __init__(self, p: Mapping[str, Any]):
        n = int(p.get("points", 1))
        self.levers = [np.array([float(p.get(f"point{k}.lever[{i}]", 0.0)) for i in range(3)])
                       for k in range(1, n + 1)]

    def motion(self, out: dict[str, float], p, q, R, v, w, a, dw) -> None:
        centripetal = lambda r: _cross(w, _cross(w, r))
        for k, lever in enumerate(self.levers, 1):
            r = R @ lever
            _put(out, f"point{k}.position", p + r)
            _put(out, f"point{k}.quaternion", q)
            _put(out, f"point{k}.velocity", v + _cross(w, r))
            _put(out, f"point{k}.angular_velocity", w)
            _put(out, f"point{k}.acceleration", a + _cross(dw, r) + centripetal(r))
            _put(out, f"point{k}.angular_acceleration", dw)

    def wrench(self, u: Values, R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(F, M about the reference point): NED."""
        F, M = np.zeros(3), np.zeros(3)
        for k, lever in enumerate(self.levers, 1):
            f = _vec(u, f"point{k}.force")
            F += f
            M += _vec(u, f"point{k}.moment") + _cross(R @ lever, f)
        return F, M


class RigidBody:
    """``rigid_body``: its reference point's motion in, the points' motion out; the points' loads in,
    their resultant about the reference point out (module docstring)."""

    def __init__(self, p: Mapping[str, Any]):
        self.attitude = _Attitude(p)
        c = self.attitude.conventions
        self.Cw, self.Cb = c.Cw, c.Cb
        self.scale = self.attitude.scale
        self.velocity_body = _parameter(p, "velocity_axes", "world") == "body"
        self.omega_body = _parameter(p, "angular_velocity_axes", "world") == "body"
        self.acceleration = _parameter(p, "acceleration_axes", "world")
        self.alpha_body = _parameter(p, "angular_acceleration_axes", "world") == "body"
        self.load_body = _parameter(p, "load_axes", "world") == "body"
        self.force_scale = FORCE_UNITS[_parameter(p, "force_unit", "N")]
        self.moment_scale = MOMENT_UNITS[_parameter(p, "moment_unit", "N.m")]
        self.origin = np.array([float(p.get(f"origin[{i}]", 0.0)) for i in range(3)])
        self.points = _Points(p)

    def reference_motion(self, u: Values):
        """(p, q, R, v, w, a, dw) of its reference point in ours (NED, body FRD)."""
        q = self.attitude.quaternion(u)
        R = quat_to_matrix(q)
        p = self.origin + self.Cw @ _vec(u, "reference.position")
        v_its = _vec(u, "reference.velocity")
        v = R @ (self.Cb @ v_its) if self.velocity_body else self.Cw @ v_its
        w_its = self.scale * _vec(u, "reference.angular_velocity")
        w = R @ (self.Cb @ w_its) if self.omega_body else self.Cw @ w_its
        a_its = _vec(u, "reference.acceleration")
        if self.acceleration == "world":
            a = self.Cw @ a_its
        elif self.acceleration == "body":
            a = R @ (self.Cb @ a_its)
        else:   # nu' of its body axes: a = R (nu' + w_b x v_b)
            a = R @ (self.Cb @ a_its + _cross(R.T @ w, R.T @ v))
        dw_its = self.scale * _vec(u, "reference.angular_acceleration")
        dw = R @ (self.Cb @ dw_its) if self.alpha_body else self.Cw @ dw_its
        return p, q, R, v, w, a, dw

    def evaluate(self, u: Values) -> dict[str, float]:
        p, q, R, v, w, a, dw = self.reference_motion(u)
        out: dict[str, float] = {}
        self.points.motion(out, p, q, R, v, w, a, dw)
        F, M = self.points.wrench(u, R)
        if self.load_body:
            F, M = self.Cb.T @ (R.T @ F), self.Cb.T @ (R.T @ M)
        else:
            F, M = self.Cw.T @ F, self.Cw.T @ M
        _put(out, "reference.force", F / self.force_scale)
        _put(out, "reference.moment", M / self.moment_scale)
        return out


def euler_rate_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """E with w_NED = E (roll', pitch', yaw')' for zyx Euler angles: its columns are the axes the
    angles turn about, Rz Ry e_x, Rz e_y and e_z (the inverse of Fossen's T(Theta), in world axes)."""
    cp, sp, ct, st = math.cos(yaw), math.sin(yaw), math.cos(pitch), math.sin(pitch)
    return np.array([[cp * ct, -sp, 0.0], [sp * ct, cp, 0.0], [-st, 0.0, 1.0]])


def euler_rate_matrix_derivative(angles: np.ndarray, rates: np.ndarray) -> np.ndarray:
    """dE/dt for zyx: the columns turn with the frames before them, d(Rz Ry e_x)/dt =
    (yaw' e_z + pitch' Rz e_y) x Rz Ry e_x, d(Rz e_y)/dt = yaw' e_z x Rz e_y, de_z/dt = 0."""
    E = euler_rate_matrix(*angles)
    e_x, e_y, e_z = E[:, 0], E[:, 1], E[:, 2]
    w_zy = rates[2] * e_z + rates[1] * e_y
    return np.column_stack([_cross(w_zy, e_x), _cross(rates[2] * e_z, e_y), np.zeros(3)])


class ManoeuvringSeakeeping:
    """``manoeuvring_seakeeping``: eta = (x, y, z, phi, theta, psi) of the reference point from the
    manoeuvring model (x, y, psi) and the seakeeping model (z, phi, theta); a wrench W on the hull
    as the generalised forces Q = J(eta)^T W = (F, E^T M_O), with E the Euler-rate matrix, so that
    W.V = Q.eta' = [Q_x x' + Q_y y' + Q_psi psi'] + [Q_z z' + Q_phi phi' + Q_theta theta']
    (Lagrange's generalised forces, e.g. Goldstein, Classical Mechanics, sec. 1.4): the first
    bracket is the manoeuvring model's X u + Y v + N r, the second the power of the wrench the
    seakeeping model gets, F_s = (0, 0, Q_z), M_s = E_s^-T (Q_phi, Q_theta, 0) in its own angles."""

    def __init__(self, p: Mapping[str, Any]):
        world, body = _parameter(p, "world", "NED"), _parameter(p, "body", "FRD")
        self.Cw, self.Cb = WORLD_AXES[world], BODY_AXES[body]
        self.scale = ANGLE_UNITS[_parameter(p, "angle_unit", "rad")]
        self.velocity_body = _parameter(p, "velocity_axes", "body") == "body"
        self.acceleration = _parameter(p, "acceleration_axes", "body_derivative")
        self.force_scale = FORCE_UNITS[_parameter(p, "force_unit", "N")]
        self.moment_scale = MOMENT_UNITS[_parameter(p, "moment_unit", "N.m")]
        self.load_body = _parameter(p, "load_axes", "body") == "body"
        self.origin = np.array([float(p.get("origin[0]", 0.0)), float(p.get("origin[1]", 0.0)), 0.0])
        self.points = _Points(p)

    def _planar(self, u: Values):
        """The manoeuvring model's heading (NED), horizontal position, velocity, acceleration
        (NED, z = 0), yaw rate and yaw acceleration (about NED z)."""
        yaw_its = self.scale * float(u["manoeuvring.yaw"])
        Rm = self.Cw @ np.array([[math.cos(yaw_its), -math.sin(yaw_its), 0.0],
                                 [math.sin(yaw_its), math.cos(yaw_its), 0.0], [0.0, 0.0, 1.0]]) @ self.Cb.T
        psi = math.atan2(Rm[1, 0], Rm[0, 0])
        sz = self.Cb[2, 2]     # its yaw rate turns about its body z axis: down (FRD) or up (FLU)
        r = sz * self.scale * float(u["manoeuvring.yaw_rate"])
        dr = sz * self.scale * float(u["manoeuvring.yaw_acceleration"])
        pos = self.origin + self.Cw @ np.append(_vec(u, "manoeuvring.position", 2), 0.0)
        v_its = np.append(_vec(u, "manoeuvring.velocity", 2), 0.0)
        v = Rm @ (self.Cb @ v_its) if self.velocity_body else self.Cw @ v_its
        a_its = np.append(_vec(u, "manoeuvring.acceleration", 2), 0.0)
        if self.acceleration == "world":
            a = self.Cw @ a_its
        elif self.acceleration == "body":
            a = Rm @ (self.Cb @ a_its)
        else:   # (u', v') of its body axes: a = R (u' - r v, v' + r u)
            a = Rm @ (self.Cb @ a_its + _cross(np.array([0.0, 0.0, r]), Rm.T @ v))
        return psi, Rm, pos, v, a, r, dr

    def _seakeeping(self, u: Values):
        """The seakeeping model's zyx angles, their rates and second derivatives, and the
        position, velocity and acceleration of the reference point."""
        R = quat_to_matrix(_vec(u, "seakeeping.quaternion", 4))
        angles = matrix_to_euler(R, "zyx")
        E = euler_rate_matrix(*angles)
        if abs(math.cos(angles[1])) < 1e-6:
            raise AdapterError(f"the seakeeping model's pitch is {math.degrees(angles[1]):.4f} deg: the Euler angles "
                               "are singular there")
        rates = np.linalg.solve(E, _vec(u, "seakeeping.angular_velocity"))
        accelerations = np.linalg.solve(E, _vec(u, "seakeeping.angular_acceleration")
                                        - euler_rate_matrix_derivative(angles, rates) @ rates)
        return (angles, rates, accelerations, E, _vec(u, "seakeeping.position"), _vec(u, "seakeeping.velocity"),
                _vec(u, "seakeeping.acceleration"))

    def motion(self, u: Values):
        """The composed (eta, eta', eta'') and the reference point's (p, q, R, v, w, a, dw, E)."""
        psi, Rm, pos_m, v_m, a_m, r, dr = self._planar(u)
        angles_s, rates_s, acc_s, _, pos_s, v_s, a_s = self._seakeeping(u)
        angles = np.array([angles_s[0], angles_s[1], psi])
        rates = np.array([rates_s[0], rates_s[1], r])
        acc = np.array([acc_s[0], acc_s[1], dr])
        p = np.array([pos_m[0], pos_m[1], pos_s[2]])
        v = np.array([v_m[0], v_m[1], v_s[2]])
        a = np.array([a_m[0], a_m[1], a_s[2]])
        E = euler_rate_matrix(*angles)
        w = E @ rates
        dw = E @ acc + euler_rate_matrix_derivative(angles, rates) @ rates
        q = euler_to_quaternion(angles, "zyx")
        return p, q, quat_to_matrix(q), v, w, a, dw, E, Rm

    def evaluate(self, u: Values) -> dict[str, float]:
        p, q, R, v, w, a, dw, E, Rm = self.motion(u)
        out: dict[str, float] = {}
        self.points.motion(out, p, q, R, v, w, a, dw)
        # the points' wrenches about the reference point -> generalised forces of eta
        F, M = self.points.wrench(u, R)
        Q_angles = E.T @ M
        planar = np.array([F[0], F[1], 0.0])
        force = self.Cb.T @ (Rm.T @ planar) if self.load_body else self.Cw.T @ planar
        _put(out, "manoeuvring.force", force[:2] / self.force_scale)
        out["manoeuvring.moment"] = float(self.Cb[2, 2] * Q_angles[2] / self.moment_scale)
        # the seakeeping model: a wrench with generalised forces (0, 0, Q_z, Q_phi, Q_theta, 0) in its angles
        angles_s, *_ = self._seakeeping(u)
        E_s = euler_rate_matrix(*angles_s)
        _put(out, "seakeeping.force", np.array([0.0, 0.0, F[2]]))
        _put(out, "seakeeping.moment", np.linalg.solve(E_s.T, np.array([Q_angles[0], Q_angles[1], 0.0])))
        return out


class Sum:
    """out[j] = sum over i of in[i][j] (OSP's Sum and VectorSum), summed in input order as libcosim's
    vector_sum function does."""

    def __init__(self, p: Mapping[str, Any]):
        n, d = int(p.get("inputs", 2)), int(p.get("dimension", 1))
        self.inputs = [[f"in[{i}]"] if d == 1 else [f"in[{i}][{j}]" for j in range(d)] for i in range(n)]
        self.outputs = ["out"] if d == 1 else [f"out[{j}]" for j in range(d)]

    def evaluate(self, u: Values) -> dict[str, float]:
        out = {}
        for j, name in enumerate(self.outputs):
            total = 0.0
            for group in self.inputs:
                total += float(u[group[j]])
            out[name] = total
        return out


KINDS = {"rigid_body": RigidBody, "manoeuvring_seakeeping": ManoeuvringSeakeeping, "sum": Sum}


def make(kind: str, parameters: Mapping[str, Any]):
    """The evaluator of an adapter of ``kind`` with start values ``parameters``."""
    return KINDS[kind](parameters)
