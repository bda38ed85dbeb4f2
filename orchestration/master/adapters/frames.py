"""Frame conventions of rigid-body ports: axes, attitudes and their conversion into ours, exactly.

Ours (components.rotations): world NED (x north, y east, z down), body x forward, y starboard,
z down (FRD), attitude as the unit quaternion (w, x, y, z) rotating body vectors into the world,
R = R(q), v_world = R v_body.

Another model's conventions are described by

* its world axes ``NED``, ``ENU`` (x east, y north, z up) or ``NWU`` (x north, y west, z up), as
  the matrix C_w with v_NED = C_w v_its;
* its body axes ``FRD`` or ``FLU`` (x forward, y to port, z up), C_b with v_FRD = C_b v_its;
* its attitude: Tait-Bryan Euler angles of any intrinsic sequence (``zyx``: R = Rz(psi) Ry(theta)
  Rx(phi), Fossen 2011 eq. 2.18) or a quaternion (order ``wxyz`` or ``xyzw``), each rotating its
  body axes into its world axes.

Its attitude R_its in ours is R = C_w R_its C_b^T; as quaternions q = q(C_w) (x) q_its (x) q(C_b)*
(Hamilton product, Diebel 2006 eq. 75 ff.), which stays continuous when q_its does. Every
conversion holds at any angle: no small-angle approximation anywhere. All frames are right-handed,
so the conversions are proper rotations and keep dot products (power) and cross products (moments).
"""
from __future__ import annotations

import math

import numpy as np

#: v_NED = C v_its for each world convention
WORLD_AXES = {
    "NED": np.eye(3),
    "ENU": np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]]),
    "NWU": np.diag([1.0, -1.0, -1.0]),
}
#: v_FRD = C v_its for each body convention
BODY_AXES = {"FRD": np.eye(3), "FLU": np.diag([1.0, -1.0, -1.0])}
AXIS = {"x": 0, "y": 1, "z": 2}


def quat_multiply(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hamilton product p (x) q (scalar first): R(p (x) q) = R(p) R(q)."""
    pw, px, py, pz = p
    qw, qx, qy, qz = q
    return np.array([pw * qw - px * qx - py * qy - pz * qz, pw * qx + px * qw + py * qz - pz * qy,
                     pw * qy - px * qz + py * qw + pz * qx, pw * qz + px * qy - py * qx + pz * qw])


def quat_conjugate(q: np.ndarray) -> np.ndarray:
    return np.array([q[0], -q[1], -q[2], -q[3]])


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """R(q) of a (not necessarily unit) quaternion (w, x, y, z): R = I + 2 w S(e) + 2 S(e)^2, scaled
    by 1/|q|^2 (Fossen 2011 eq. 2.72)."""
    w, x, y, z = (float(a) for a in q)
    s = 2.0 / (w * w + x * x + y * y + z * z)
    return np.array([[1.0 - s * (y * y + z * z), s * (x * y - w * z), s * (x * z + w * y)],
                     [s * (x * y + w * z), 1.0 - s * (x * x + z * z), s * (y * z - w * x)],
                     [s * (x * z - w * y), s * (y * z + w * x), 1.0 - s * (x * x + y * y)]])


def quat_from_matrix(R: np.ndarray) -> np.ndarray:
    """The unit quaternion (w >= 0) of a rotation matrix, by Shepperd's method (Shepperd 1978,
    "Quaternion from rotation matrix", J. Guidance Control 1(3)): from the largest of
    4 w^2, 4 x^2, 4 y^2, 4 z^2, so it is accurate at every angle."""
    t = np.trace(R)
    candidates = [t, R[0, 0], R[1, 1], R[2, 2]]
    k = int(np.argmax(candidates))
    if k == 0:
        r = math.sqrt(1.0 + t)
        q = np.array([0.5 * r, (R[2, 1] - R[1, 2]) / (2 * r), (R[0, 2] - R[2, 0]) / (2 * r),
                      (R[1, 0] - R[0, 1]) / (2 * r)])
    else:
        i = k - 1
        j, m = (i + 1) % 3, (i + 2) % 3
        r = math.sqrt(max(1.0 + R[i, i] - R[j, j] - R[m, m], 0.0))
        q = np.zeros(4)
        q[1 + i] = 0.5 * r
        q[0] = (R[m, j] - R[j, m]) / (2 * r)
        q[1 + j] = (R[j, i] + R[i, j]) / (2 * r)
        q[1 + m] = (R[m, i] + R[i, m]) / (2 * r)
    q /= np.linalg.norm(q)
    return q if q[0] >= 0.0 else -q


def axis_quaternion(axis: int, angle: float) -> np.ndarray:
    """The rotation by ``angle`` [rad] about body axis 0, 1 or 2: (cos a/2, sin a/2 e_axis)."""
    q = np.zeros(4)
    q[0] = math.cos(0.5 * angle)
    q[1 + axis] = math.sin(0.5 * angle)
    return q


def axis_matrix(axis: int, angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    i, j = (axis + 1) % 3, (axis + 2) % 3
    R = np.eye(3)
    R[i, i], R[i, j], R[j, i], R[j, j] = c, -s, s, c
    return R


def check_sequence(sequence: str) -> str | None:
    """Why ``sequence`` is not a Tait-Bryan sequence (three different axes of x, y, z), or None."""
    if len(sequence) != 3 or set(sequence) != {"x", "y", "z"}:
        return f"{sequence!r} is not a sequence of the three axes x, y, z (e.g. 'zyx')"
    return None


def euler_to_quaternion(angles: np.ndarray, sequence: str = "zyx") -> np.ndarray:
    """Unit quaternion of Euler angles ``angles`` [rad] given per body axis (about x, y, z: roll,
    pitch, yaw) and composed in the intrinsic ``sequence``: for ``zyx``
    q = q_z(yaw) (x) q_y(pitch) (x) q_x(roll), R = Rz Ry Rx (Fossen 2011 eq. 2.18 and 2.84)."""
    q = np.array([1.0, 0.0, 0.0, 0.0])
    for name in sequence:
        axis = AXIS[name]
        q = quat_multiply(q, axis_quaternion(axis, float(angles[axis])))
    return q


def euler_to_matrix(angles: np.ndarray, sequence: str = "zyx") -> np.ndarray:
    R = np.eye(3)
    for name in sequence:
        axis = AXIS[name]
        R = R @ axis_matrix(axis, float(angles[axis]))
    return R


def matrix_to_euler(R: np.ndarray, sequence: str = "zyx") -> np.ndarray:
    """Euler angles (about x, y, z) of R for the intrinsic Tait-Bryan ``sequence`` (i, j, k):
    R = R_i(a) R_j(b) R_k(c) gives b = atan2(e R_ik, sqrt(R_ii^2 + R_ij^2)), a = atan2(-e R_jk, R_kk),
    c = atan2(-e R_ij, R_ii), e = +1 for the cyclic sequences xyz, yzx, zxy and -1 otherwise
    (for zyx: pitch = asin(-R_31), yaw = atan2(R_21, R_11), roll = atan2(R_32, R_33), Fossen 2011
    eq. 2.77 ff.). At b = +-90 deg only a +- c is defined; the split returned is arbitrary."""
    i, j, k = (AXIS[a] for a in sequence)
    e = 1.0 if (j - i) % 3 == 1 else -1.0
    angles = np.zeros(3)
    angles[j] = math.atan2(e * R[i, k], math.hypot(R[i, i], R[i, j]))
    angles[i] = math.atan2(-e * R[j, k], R[k, k])
    angles[k] = math.atan2(-e * R[i, j], R[i, i])
    return angles


class Conventions:
    """One model's frame conventions (module docstring) and the conversions into ours."""

    def __init__(self, world: str = "NED", body: str = "FRD", attitude_world: str | None = None):
        self.world = world
        self.body = body
        self.attitude_world = attitude_world or world
        self.Cw = WORLD_AXES[world]
        self.Cb = BODY_AXES[body]
        self.Ca = WORLD_AXES[self.attitude_world]
        self.qa = quat_from_matrix(self.Ca)
        self.qb_conj = quat_conjugate(quat_from_matrix(self.Cb))

    def attitude(self, q_its: np.ndarray) -> np.ndarray:
        """Our quaternion of its attitude quaternion (w, x, y, z), normalised."""
        q = quat_multiply(quat_multiply(self.qa, q_its), self.qb_conj)
        return q / np.linalg.norm(q)

    def attitude_back(self, q: np.ndarray) -> np.ndarray:
        """Its attitude quaternion of ours (the inverse of :meth:`attitude`)."""
        return quat_multiply(quat_multiply(quat_conjugate(self.qa), q), quat_conjugate(self.qb_conj))

    def world_vector(self, v_its: np.ndarray) -> np.ndarray:
        return self.Cw @ v_its

    def body_vector(self, v_its: np.ndarray) -> np.ndarray:
        return self.Cb @ v_its
