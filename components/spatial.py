"""Spatial (6-D) vector algebra in the style of Featherstone (2008), "Rigid Body Dynamics
Algorithms" (RBDA), Ch. 2, and his spatial_v2 toolbox.

Conventions (the same as RBDA; they hold inside this module and inside the articulated-body
algorithm in components/articulated_body.py):

* **Ordering [angular; linear].** A motion vector is m = [omega; v] and a force vector is
  f = [n; f]. ``v`` is the velocity of the body-fixed point that coincides with the origin of
  the coordinate frame, ``n`` is the moment about that origin (RBDA Sec. 2.2-2.4). The public
  outputs of components/articulated_body.py use the marine ordering [linear; angular]; see
  :func:`swap_halves`.
* **Spatial acceleration** is the derivative of the spatial velocity, so its linear part at a
  point O is a_O - omega x v_O, not the classical acceleration a_O of the body point at O
  (RBDA Sec. 2.11).
* **Plucker transforms** are *coordinate* transforms. If frame B has origin r (A coordinates)
  and its axes are obtained from A's by the rotation R (so v_A = R v_B for 3-vectors), then
  E = R^T and  ^B X_A = [[E, 0], [-E S(r), E]]  (RBDA eq. 2.24/2.26). Forces transform with
  ^B X*_A = ^B X_A^{-T} = [[E, -E S(r)], [0, E]]  (RBDA eq. 2.25).
  rotx/roty/rotz(theta) are the transforms to a frame rotated by +theta about x/y/z
  (RBDA Table 2.2); xlt(r) (alias Xtrans) is the transform to a frame translated by r.
* S(r) is the 3x3 cross-product matrix, S(r) a = r x a.

All functions take and return numpy arrays; SI units throughout (m, rad, kg, N).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from components.rotations import skew  # S(v) a = v x a, shared by every module

__all__ = [
    "skew", "crm", "crf", "rotx", "roty", "rotz", "xlt", "Xtrans", "Xrot", "plux", "plux_inv",
    "force_transform", "mcI", "rx", "ry", "rz", "euler_zyx", "homogeneous", "swap_halves",
    "SWAP6",
]


def crm(v: ArrayLike) -> np.ndarray:
    """Spatial cross product for motion vectors, v x m = crm(v) m  (RBDA eq. 2.31).

    crm([omega; v]) = [[S(omega), 0], [S(v), S(omega)]].
    """
    wx, wy, wz, vx, vy, vz = (float(e) for e in v)
    return np.array([
        [0.0, -wz, wy, 0.0, 0.0, 0.0],
        [wz, 0.0, -wx, 0.0, 0.0, 0.0],
        [-wy, wx, 0.0, 0.0, 0.0, 0.0],
        [0.0, -vz, vy, 0.0, -wz, wy],
        [vz, 0.0, -vx, wz, 0.0, -wx],
        [-vy, vx, 0.0, -wy, wx, 0.0],
    ])


def crf(v: ArrayLike) -> np.ndarray:
    """Spatial cross product for force vectors, v x* f = crf(v) f = -crm(v)^T f  (RBDA eq. 2.32)."""
    return -crm(v).T


def rx(theta: float) -> np.ndarray:
    """3x3 active rotation about x by theta: Rx = [[1, 0, 0], [0, c, -s], [0, s, c]]."""
    c, s = math.cos(theta), math.sin(theta)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def ry(theta: float) -> np.ndarray:
    """3x3 active rotation about y by theta: Ry = [[c, 0, s], [0, 1, 0], [-s, 0, c]]."""
    c, s = math.cos(theta), math.sin(theta)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rz(theta: float) -> np.ndarray:
    """3x3 active rotation about z by theta: Rz = [[c, -s, 0], [s, c, 0], [0, 0, 1]]."""
    c, s = math.cos(theta), math.sin(theta)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def euler_zyx(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """R = Rz(yaw) Ry(pitch) Rx(roll), the Z-Y'-X'' sequence of Fossen (2011, eq. 2.18) and of the
    SMS API report (eqs. 17/38/66, corrected; see the SMS digest Sec. 1). Maps vectors of the
    rotated frame into the reference frame."""
    return rz(yaw) @ ry(pitch) @ rx(roll)


def Xrot(E: ArrayLike) -> np.ndarray:
    """Pure-rotation Plucker transform [[E, 0], [0, E]] for the coordinate rotation E (= R^T)."""
    E = np.asarray(E, dtype=float)
    X = np.zeros((6, 6))
    X[:3, :3] = E
    X[3:, 3:] = E
    return X


def rotx(theta: float) -> np.ndarray:
    """Plucker transform to a frame rotated by +theta about x (RBDA Table 2.2):
    E = [[1, 0, 0], [0, c, s], [0, -s, c]]."""
    return Xrot(rx(theta).T)


def roty(theta: float) -> np.ndarray:
    """Plucker transform to a frame rotated by +theta about y: E = [[c, 0, -s], [0, 1, 0], [s, 0, c]]."""
    return Xrot(ry(theta).T)


def rotz(theta: float) -> np.ndarray:
    """Plucker transform to a frame rotated by +theta about z: E = [[c, s, 0], [-s, c, 0], [0, 0, 1]]."""
    return Xrot(rz(theta).T)


def xlt(r: ArrayLike) -> np.ndarray:
    """Plucker transform to a frame translated by r: [[1, 0], [-S(r), 1]]  (RBDA eq. 2.26)."""
    X = np.eye(6)
    X[3:, :3] = -skew(r)
    return X


Xtrans = xlt


def plux(E: ArrayLike, r: ArrayLike) -> np.ndarray:
    """General Plucker transform  ^B X_A = Xrot(E) xlt(r) = [[E, 0], [-E S(r), E]]  (RBDA eq. 2.28),
    E = coordinate rotation A -> B (E = R^T, R the active rotation of B's axes in A),
    r = origin of B in A coordinates."""
    E = np.asarray(E, dtype=float)
    X = np.zeros((6, 6))
    X[:3, :3] = E
    X[3:, 3:] = E
    X[3:, :3] = -E @ skew(r)
    return X


def plux_inv(X: np.ndarray) -> np.ndarray:
    """Inverse of a Plucker transform: (^B X_A)^{-1} = ^A X_B = [[E^T, 0], [S(r) E^T, E^T]]."""
    E = X[:3, :3]
    Xi = np.zeros((6, 6))
    Xi[:3, :3] = E.T
    Xi[3:, 3:] = E.T
    Xi[3:, :3] = X[3:, 3:].T @ (-X[3:, :3]) @ E.T  # S(r) E^T, with -E S(r) = X[3:, :3]
    return Xi


def force_transform(X: np.ndarray) -> np.ndarray:
    """Force transform X* = X^{-T} = [[E, -E S(r)], [0, E]] for a motion transform X (RBDA eq. 2.25)."""
    Xf = np.zeros((6, 6))
    Xf[:3, :3] = X[:3, :3]
    Xf[3:, 3:] = X[3:, 3:]
    Xf[:3, 3:] = X[3:, :3]
    return Xf


def mcI(m: float, c: ArrayLike, I_c: ArrayLike) -> np.ndarray:
    """Spatial inertia of a body of mass m, centre of mass c and rotational inertia I_c about the CM
    (same axes), at the frame origin  (RBDA eq. 2.63):

        I = [[I_c + m S(c) S(c)^T, m S(c)], [m S(c)^T, m 1]].
    """
    C = skew(c)
    I = np.zeros((6, 6))
    I[:3, :3] = np.asarray(I_c, dtype=float) + m * C @ C.T
    I[:3, 3:] = m * C
    I[3:, :3] = m * C.T
    I[3:, 3:] = m * np.eye(3)
    return I


def homogeneous(R: ArrayLike, p: ArrayLike) -> np.ndarray:
    """4x4 homogeneous transform [[R, p], [0, 1]] (R active rotation, p origin)."""
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


#: Permutation [angular; linear] <-> [linear; angular]; SWAP6 @ SWAP6 = 1.
SWAP6 = np.block([[np.zeros((3, 3)), np.eye(3)], [np.eye(3), np.zeros((3, 3))]])


def swap_halves(a: np.ndarray) -> np.ndarray:
    """Swap the 3-halves of a 6-vector, or rows and columns of a 6x6 matrix (P a P, P = SWAP6):
    converts between Featherstone's [angular; linear] and the marine [linear; angular] ordering."""
    a = np.asarray(a)
    if a.ndim == 1:
        return np.concatenate((a[3:], a[:3]))
    return SWAP6 @ a @ SWAP6
