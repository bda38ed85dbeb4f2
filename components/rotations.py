"""Rotation helpers: unit quaternions, rotation matrices and zyx Euler angles.

Conventions (used throughout marine-cosim):

* Quaternions are Hamilton quaternions, scalar first, q = [w, x, y, z].
* A quaternion rotates body-frame vectors into the world (NED) frame:
  v_ned = R(q) v_body.
* Euler angles are the zyx (yaw-pitch-roll, Z-Y'-X'') sequence,
  R = Rz(yaw) Ry(pitch) Rx(roll), as in Fossen (2011), "Handbook of Marine Craft
  Hydrodynamics and Motion Control", eq. 2.18, and the SMS API report (eq. 17, corrected).
  They are for humans (input/output only); the dynamics use quaternions, which
  have no gimbal lock.

These functions run in the inner loop of the rigid-body integrator. They work
on Python floats taken from the small input arrays and build the result in one
`np.array` call, which is several times faster than chains of numpy operations
on 3- and 4-vectors.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike


def _floats(v: ArrayLike) -> list[float]:
    """Return the entries of a small vector as Python floats (fast path for ndarrays)."""
    if isinstance(v, np.ndarray):
        return v.tolist()
    return [float(e) for e in v]


def skew(v: ArrayLike) -> np.ndarray:
    """Skew-symmetric cross-product matrix S(v), so that S(v) @ u = v x u.

    S(v) = [[0, -v3, v2], [v3, 0, -v1], [-v2, v1, 0]]  (Fossen 2011, eq. 2.10).
    """
    x, y, z = _floats(v)
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def cross(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Cross product a x b of two 3-vectors (np.cross costs ~25 us on 3-vectors, this ~1 us)."""
    ax, ay, az = _floats(a)
    bx, by, bz = _floats(b)
    return np.array([ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx])


def quat_multiply(p: ArrayLike, q: ArrayLike) -> np.ndarray:
    """Hamilton product p (x) q of two scalar-first quaternions.

    (p0, p) (x) (q0, q) = (p0 q0 - p.q,  p0 q + q0 p + p x q).
    Composition: R(p (x) q) = R(p) R(q).
    """
    pw, px, py, pz = _floats(p)
    qw, qx, qy, qz = _floats(q)
    return np.array([
        pw * qw - px * qx - py * qy - pz * qz,
        pw * qx + px * qw + py * qz - pz * qy,
        pw * qy - px * qz + py * qw + pz * qx,
        pw * qz + px * qy - py * qx + pz * qw,
    ])


def quat_normalize(q: ArrayLike) -> np.ndarray:
    """Return q / |q|. Raises ValueError for a zero or non-finite quaternion.

    The sign is kept (q and -q are the same rotation) so that a time series of
    quaternions stays continuous.
    """
    w, x, y, z = _floats(q)
    n = math.sqrt(w * w + x * x + y * y + z * z)
    if not (n > 0.0 and math.isfinite(n)):
        raise ValueError(f"cannot normalise quaternion {q!r}")
    return np.array([w / n, x / n, y / n, z / n])


def quat_to_matrix(q: ArrayLike) -> np.ndarray:
    """Rotation matrix R(q) (body -> NED) of a quaternion q = [w, x, y, z].

    R = I + 2 w S(e) + 2 S(e)^2 with e = [x, y, z], written out (Fossen 2011, eq. 2.72).
    The factor 2/|q|^2 instead of 2 makes the result a proper rotation even
    when q is not exactly unit (as inside a Runge-Kutta stage).
    """
    w, x, y, z = _floats(q)
    s = 2.0 / (w * w + x * x + y * y + z * z)
    wx, wy, wz = s * w * x, s * w * y, s * w * z
    xx, xy, xz = s * x * x, s * x * y, s * x * z
    yy, yz, zz = s * y * y, s * y * z, s * z * z
    return np.array([
        [1.0 - yy - zz, xy - wz, xz + wy],
        [xy + wz, 1.0 - xx - zz, yz - wx],
        [xz - wy, yz + wx, 1.0 - xx - yy],
    ])


def quat_from_euler_zyx(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """Unit quaternion of R = Rz(yaw) Ry(pitch) Rx(roll) [rad].

    q = qz(yaw) (x) qy(pitch) (x) qx(roll), each factor [cos(a/2), sin(a/2) * axis]
    (Fossen 2011, eq. 2.84 ff.).
    """
    cr, sr = math.cos(0.5 * roll), math.sin(0.5 * roll)
    cp, sp = math.cos(0.5 * pitch), math.sin(0.5 * pitch)
    cy, sy = math.cos(0.5 * yaw), math.sin(0.5 * yaw)
    return np.array([
        cy * cp * cr + sy * sp * sr,
        cy * cp * sr - sy * sp * cr,
        cy * sp * cr + sy * cp * sr,
        sy * cp * cr - cy * sp * sr,
    ])


def quat_to_euler_zyx(q: ArrayLike) -> tuple[float, float, float]:
    """zyx Euler angles (roll, pitch, yaw) [rad] of a quaternion.

    From R = Rz Ry Rx: R31 = -sin(pitch), R32 = cos(pitch) sin(roll), R33 = cos(pitch) cos(roll),
    R21 = cos(pitch) sin(yaw), R11 = cos(pitch) cos(yaw) (Fossen 2011, eq. 2.77 ff.).
    Pitch uses atan2(-R31, hypot(R11, R21)) rather than asin(-R31), which is
    ill-conditioned near +-90 deg. At exactly +-90 deg (gimbal lock) only
    yaw - roll (or yaw + roll) is defined; the split returned there is arbitrary.
    Ranges: roll, yaw in (-pi, pi], pitch in [-pi/2, pi/2].
    """
    w, x, y, z = _floats(q)
    s = 2.0 / (w * w + x * x + y * y + z * z)
    r11 = 1.0 - s * (y * y + z * z)
    r21 = s * (x * y + w * z)
    r31 = s * (x * z - w * y)
    r32 = s * (y * z + w * x)
    r33 = 1.0 - s * (x * x + y * y)
    roll = math.atan2(r32, r33)
    pitch = math.atan2(-r31, math.hypot(r11, r21))
    yaw = math.atan2(r21, r11)
    return roll, pitch, yaw


def quat_derivative(q: ArrayLike, omega_body: ArrayLike) -> np.ndarray:
    """Quaternion kinematics q_dot = 0.5 q (x) [0, omega_body].

    omega_body is the angular velocity in the body frame [rad/s]
    (Fossen 2011, eq. 2.86, T(q) omega written as a Hamilton product).
    """
    w, x, y, z = _floats(q)
    p, r, t = _floats(omega_body)
    return np.array([
        -0.5 * (x * p + y * r + z * t),
        0.5 * (w * p + y * t - z * r),
        0.5 * (w * r - x * t + z * p),
        0.5 * (w * t + x * r - y * p),
    ])
