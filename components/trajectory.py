"""Planned load trajectories and the stabilised servo constraint of crane trajectory control
(Lee 2020, §2.5.2 motion planning, eqs. 75-81, and §2.5.4 hybrid feedback, eqs. 110-111).

**Motion planning.** A translation from r0 to rf and a rotation from attitude R_a to R_e, both
following one scalar profile c(t) from 0 to 1 over [t0, tf]:

    r(t) = r0 + (rf - r0) c(t)                                   (eq. 75)
    R(t) = R_a Rot(e_r, s_re c(t)),  R_a^T R_e = Rot(e_r, s_re)  (eqs. 77-81)

with the axis-angle of the relative rotation from Rodrigues' formula,

    s_re = arccos((tr(R_a^T R_e) - 1) / 2),
    e_r = [R32 - R23, R13 - R31, R21 - R12] / (2 sin s_re).

The thesis prints 1 / sin s_re; the factor 2 is missing there (digest §1.7, typo).  c(t) has an
acceleration phase of length tau0, a constant velocity and a deceleration phase of length tau0;
the thesis does not print c_I..c_III (digest: gap), so this is the trapezoidal velocity profile
the digest proposes:

    c_I   = (t - t0)^2 / (2 tau0 (tau - tau0)),               t0 <= t < t0 + tau0
    c_II  = (t - t0 - tau0 / 2) / (tau - tau0),               t0 + tau0 <= t < tf - tau0
    c_III = 1 - (tf - t)^2 / (2 tau0 (tau - tau0)),           tf - tau0 <= t <= tf

(tau = tf - t0; c, c' continuous; c'' piecewise constant, +-1 / (tau0 (tau - tau0))).
``SmoothProfile`` has the same phases and cruise speed with c'' to c'''' continuous, which a load
hung on ropes needs for bounded drive forces (its class docstring).

**Hybrid feedback.** The feedforward inverse dynamics drives the load along gamma(t).  The
feedback stabilises the servo constraint s = x_plant - gamma (eq. 110),

    s'' + alpha s' + beta s + chi int s dt = 0,

by replacing the planned acceleration gamma'' in the inverse dynamics by (eq. 111)

    gamma'' - alpha s' - beta s - chi int s dt.

The thesis gives no gains (digest: gap); ``ServoFeedback.from_poles`` places the three poles of
eq. 110 (a PID on the tracking error).

[Lee20] H.-W. Lee, PhD thesis, Seoul National University, 2020, §2.5.2, §2.5.4.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["TrapezoidProfile", "SmoothProfile", "axis_angle", "rotation", "PlannedMotion", "ServoFeedback"]


@dataclass(frozen=True)
class TrapezoidProfile:
    """c(t): 0 at t0, 1 at tf, accelerating over tau0, then constant speed, decelerating over tau0."""
    t0: float
    tf: float
    tau0: float

    def __post_init__(self) -> None:
        tau = self.tf - self.t0
        if not (math.isfinite(tau) and tau > 0.0 and 0.0 < self.tau0 <= tau / 2):
            raise ValueError(f"need t0 < tf and 0 < tau0 <= (tf - t0) / 2, got t0 {self.t0}, tf {self.tf}, "
                             f"tau0 {self.tau0}")

    def __call__(self, t: float) -> tuple[float, float, float]:
        """(c, c', c'') at t (clamped to 0 before t0 and to 1 after tf)."""
        t0, tf, a = self.t0, self.tf, self.tau0
        k = 1.0 / (a * (tf - t0 - a))                # the peak acceleration of c
        if t <= t0:
            return 0.0, 0.0, 0.0
        if t >= tf:
            return 1.0, 0.0, 0.0
        if t < t0 + a:
            d = t - t0
            return 0.5 * k * d * d, k * d, k
        if t < tf - a:
            return (t - t0 - a / 2) / (tf - t0 - a), 1.0 / (tf - t0 - a), 0.0
        d = tf - t
        return 1.0 - 0.5 * k * d * d, k * d, -k


@dataclass(frozen=True)
class SmoothProfile:
    """c(t) with the same three phases and the same constant speed 1 / (tau - tau0) as
    TrapezoidProfile, but with c' rising along the septic smoothstep

        c'  = Psi(u) / (tau - tau0),  Psi(u) = 35 u^4 - 84 u^5 + 70 u^6 - 20 u^7,  u = (t - t0) / tau0
        c   = tau0 (7 u^5 - 14 u^6 + 10 u^7 - 5 u^8 / 2) / (tau - tau0)

    (mirrored in the deceleration phase), so that c'' (the acceleration), c''' (jerk) and c''''
    (snap) are continuous and zero at the phase joints.  Why: a load hung on ropes is
    underactuated, so the crane drives that steer it (trolleys, booms) sit where the ropes' slope
    gives the load its acceleration; their own acceleration, and so the drive force, follows the
    load's fourth derivative.  With the trapezoid's jumps in c'' the inverse dynamics
    (components/servo_constraints.py) asks for an infinite trolley force at every joint; with this
    profile it stays bounded.  (The thesis does not print c_I..c_III; digest §1.7, gap.)"""
    t0: float
    tf: float
    tau0: float

    def __post_init__(self) -> None:
        TrapezoidProfile(self.t0, self.tf, self.tau0)          # the same checks

    def derivatives(self, t: float) -> tuple[float, float, float, float, float]:
        """(c, c', c'', c''', c'''') at t (clamped before t0 and after tf)."""
        t0, tf, a = self.t0, self.tf, self.tau0
        V = 1.0 / (tf - t0 - a)
        if t <= t0:
            return 0.0, 0.0, 0.0, 0.0, 0.0
        if t >= tf:
            return 1.0, 0.0, 0.0, 0.0, 0.0
        if t0 + a <= t < tf - a:
            return (t - t0 - a / 2) * V, V, 0.0, 0.0, 0.0
        mirrored = t >= tf - a                     # the mirror image: c(t) = 1 - c(t0 + tf - t)
        u = (tf - t) / a if mirrored else (t - t0) / a
        c = a * V * u ** 5 * (7.0 - 14.0 * u + 10.0 * u * u - 2.5 * u ** 3)
        c1 = V * u ** 4 * (35.0 - 84.0 * u + 70.0 * u * u - 20.0 * u ** 3)
        c2 = V / a * 140.0 * u ** 3 * (1.0 - u) ** 3
        c3 = V / a ** 2 * 420.0 * u * u * (1.0 - u) ** 2 * (1.0 - 2.0 * u)
        c4 = V / a ** 3 * 840.0 * u * (1.0 - u) * (1.0 - 5.0 * u + 5.0 * u * u)
        if not mirrored:
            return c, c1, c2, c3, c4
        return 1.0 - c, c1, -c2, c3, -c4

    def __call__(self, t: float) -> tuple[float, float, float]:
        """(c, c', c'') at t."""
        return self.derivatives(t)[:3]


def axis_angle(R: np.ndarray) -> tuple[np.ndarray, float]:
    """(unit axis, angle in [0, pi]) of the rotation matrix R, by Rodrigues' formula (module
    docstring; with the factor 2), the angle from atan2(sin, cos).  Near pi the axis is taken from
    R + I = 2 e e^T instead."""
    R = np.asarray(R, float)
    v = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])      # 2 sin(a) e
    # atan2 of (sin, cos) rather than arccos of the trace: accurate near 0 and pi as well
    angle = math.atan2(0.5 * float(np.linalg.norm(v)), 0.5 * (float(np.trace(R)) - 1.0))
    if angle < 1e-12:
        return np.array([1.0, 0.0, 0.0]), 0.0
    if math.pi - angle < 1e-6:
        B = 0.5 * (R + np.eye(3))                    # = e e^T at angle pi
        k = int(np.argmax(np.diag(B)))
        e = B[:, k] / math.sqrt(B[k, k])
        if float(e @ v) < 0.0:                       # the sign that v still carries
            e = -e
        return e / np.linalg.norm(e), angle
    e = v / (2.0 * math.sin(angle))
    return e / np.linalg.norm(e), angle


def rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rot(axis, angle) = I + sin(a) [e]x + (1 - cos(a)) [e]x^2."""
    e = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0.0, -e[2], e[1]], [e[2], 0.0, -e[0]], [-e[1], e[0], 0.0]])
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * K @ K


@dataclass(frozen=True)
class PlannedMotion:
    """The planned pose of a load (eqs. 75-81): position r0 -> rf, attitude R_a -> R_e, one profile."""
    r0: np.ndarray
    rf: np.ndarray
    R_a: np.ndarray
    R_e: np.ndarray
    profile: "TrapezoidProfile | SmoothProfile"
    axis: np.ndarray = field(init=False)
    angle: float = field(init=False)

    def __post_init__(self) -> None:
        axis, angle = axis_angle(np.asarray(self.R_a, float).T @ np.asarray(self.R_e, float))
        object.__setattr__(self, "axis", axis)
        object.__setattr__(self, "angle", angle)

    def at(self, t: float) -> dict:
        """Position, velocity, acceleration, attitude R, angular velocity and acceleration (world
        frame) at t."""
        c, cd, cdd = self.profile(t)
        d = np.asarray(self.rf, float) - np.asarray(self.r0, float)
        R = np.asarray(self.R_a, float) @ rotation(self.axis, self.angle * c)
        w_axis = np.asarray(self.R_a, float) @ self.axis          # the axis is fixed in the world too
        return {"position": np.asarray(self.r0, float) + d * c, "velocity": d * cd, "acceleration": d * cdd,
                "attitude": R, "angular_velocity": w_axis * self.angle * cd,
                "angular_acceleration": w_axis * self.angle * cdd}


@dataclass
class ServoFeedback:
    """The stabilised servo constraint of eqs. 110-111 on n coordinates: the commanded acceleration
    gamma'' - alpha s' - beta s - chi int s, s = x - gamma.  The integral is a state advanced by
    ``update`` (explicit Euler over the controller's sample time)."""
    alpha: float
    beta: float
    chi: float
    integral: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @classmethod
    def from_poles(cls, poles: tuple[float, float, float]) -> "ServoFeedback":
        """Gains with eq. 110's characteristic polynomial (p + p1)(p + p2)(p + p3), poles > 0 [1/s]."""
        p1, p2, p3 = (float(p) for p in poles)
        if not all(p > 0.0 and math.isfinite(p) for p in (p1, p2, p3)):
            raise ValueError(f"poles must be positive and finite, got {poles}")
        return cls(alpha=p1 + p2 + p3, beta=p1 * p2 + p1 * p3 + p2 * p3, chi=p1 * p2 * p3)

    def command(self, gamma_dd: np.ndarray, s: np.ndarray, s_d: np.ndarray) -> np.ndarray:
        """The acceleration to feed the inverse dynamics (eq. 111)."""
        s = np.asarray(s, float)
        if self.integral.shape != s.shape:
            self.integral = np.zeros_like(s)
        return np.asarray(gamma_dd, float) - self.alpha * np.asarray(s_d, float) - self.beta * s \
            - self.chi * self.integral

    def update(self, s: np.ndarray, dt: float) -> None:
        s = np.asarray(s, float)
        if self.integral.shape != s.shape:
            self.integral = np.zeros_like(s)
        self.integral = self.integral + s * dt
