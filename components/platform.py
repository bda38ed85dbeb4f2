"""The 3-DOF heave-roll-pitch motion-compensation platform of W.A. de Zeeuw, *Ship Motion Compensation
Platform for High Payloads* (MSc thesis, TU Delft 2012, §4-1 to §4-3; ship_crane_digest.md §2.4): three
Sarrus linkages 120 deg apart, each a lower arm d1 and an upper arm d2 in a vertical plane through the
deck centre, with a hydraulic cylinder from a deck point b2 to the point D a fraction alpha along the
upper arm; the platform on top.

Frames: the deck frame B (the ship's body axes x forward, y starboard, z down, origin at the deck centre:
the Ship's hardpoint) and the platform frame P. The platform's pose relative to the deck is
(thesis eqs. 4-1, 4-36, psi = 0)

    c = [0, 0, z],   R_BP = R_X(phi) R_Y(theta),   x = [z, phi, theta]   (z < 0: above the deck).

Inverse kinematics per leg k (thesis 4-6 to 4-10), a_k fixed in P, b1_k (the lower arm's hinge) and
b2_k (the cylinder's deck pivot) fixed in B, u_k the leg plane's radial unit vector:

    A = c + R_BP a                     (the cardan joint at the top of the upper arm)
    K = the knee: |K - b1| = |d1|, |K - A| = |d2|, in the leg plane, inboard, above the deck
    D = A + alpha (K - A),   l = D - b2,   leg length ell = |l|.

The knee is found in the leg plane from A's in-plane coordinates; A's small out-of-plane offset s (the
thesis' c, R parameterisation does not keep A exactly in the plane) shortens the in-plane reach of the
upper arm to sqrt(|d2|^2 - s^2). Errors stop the simulation, as in the thesis' code (funKinv.m): a
linkage stretched beyond |d1| + |d2| (or folded below their difference), a knee below the deck or
outboard of its hinge (the angle between -z_B and d1 outside (0, pi/2)), the platform at or below the
deck (z >= 0), a cylinder beyond its stroke, and a leg Jacobian that is singular.

Leg loads: a cylinder force f_k > 0 extends leg k; by virtual work the generalised force on x is
tau_x = J^T f with J = d ell / d x (3x3, central differences of the exact kinematics; thesis 4-11 to
4-24 give it in closed form from the velocity of D). The platform is carried on the deck by a chain of a
prismatic joint along z_B and revolute joints about x_B and the rolled y axis (:func:`platform_mechanism`)
so that components.articulated_body gives its dynamics on the moving deck and the deck's wrench, articulated
inertia and bias for the mass-aware coupling with the Ship (docs/mass_aware.md); the linkage arms are
massless. Forward kinematics (4-25, 4-26): Newton-Raphson on x from measured leg lengths.

Platform inertia (RBinertias.m, digest §2.4): box, standing and lying hollow cylinders and a hexagonal
base, fractions 0.35 / 0.35 / 0.10 / 0.20 of the platform mass (:func:`platform_inertia`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from components.crane import Crane
from components.mechanism import Link, Mechanism

PSI = -np.array([0.0, 2 * math.pi / 3, 4 * math.pi / 3])     # leg directions (thesis code: psis)
# R_B,J3 = R_X(phi) R_Y(theta) C for the DH chain of platform_mechanism (checked in the tests)
_C = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])


class PlatformError(ValueError):
    """The mechanism cannot be where it is asked to be (singular, over-stretched, crashed)."""


@dataclass
class SarrusGeometry:
    """The three linkages (our choice where the thesis' platformdata.mat is not given; docs/motion_platform.md).

    r_base: radius of the lower arms' deck hinges b1; r_platform: radius of the cardan joints a in P (in
    the platform's base plane); arm_lower, arm_upper: |d1|, |d2|; alpha: where the cylinder acts on the
    upper arm (0 at the platform, 1 at the knee); r_cylinder, z_cylinder: the cylinders' deck pivots b2
    (radius, height: z < 0 above the deck); stroke: (shortest, longest) leg length."""

    r_base: float = 7.0
    r_platform: float = 7.0
    arm_lower: float = 5.0
    arm_upper: float = 5.0
    alpha: float = 0.2
    r_cylinder: float = 6.4
    z_cylinder: float = -1.2
    stroke: tuple[float, float] = (3.5, 9.0)
    psi: np.ndarray = field(default_factory=lambda: PSI.copy())

    def __post_init__(self):
        u = np.stack([np.cos(self.psi), np.sin(self.psi), np.zeros(3)], axis=1)
        self.u = u                                                 # (3 legs, 3) radial unit vectors
        self.b1 = self.r_base * u
        self.a = self.r_platform * u
        self.b2 = self.r_cylinder * u + np.array([0.0, 0.0, self.z_cylinder])
        self.side = np.cross(np.array([0.0, 0.0, 1.0]), u)        # normal of each leg plane

    def problems(self) -> list[tuple[str, float, str]]:
        out = []
        for name in ("r_base", "r_platform", "arm_lower", "arm_upper", "r_cylinder"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v > 0):
                out.append((name, v, "must be positive"))
        if not (0.0 <= self.alpha <= 1.0):
            out.append(("alpha", self.alpha, "must be in [0, 1]"))
        if not (0 < self.stroke[0] < self.stroke[1]):
            out.append(("stroke", self.stroke, "need 0 < shortest < longest"))
        return out


def rotation(phi, theta) -> np.ndarray:
    """R_BP = R_X(phi) R_Y(theta), batched over the leading axes of phi and theta."""
    phi, theta = np.asarray(phi, float), np.asarray(theta, float)
    cp, sp, ct, st = np.cos(phi), np.sin(phi), np.cos(theta), np.sin(theta)
    R = np.zeros(np.broadcast_shapes(phi.shape, theta.shape) + (3, 3))
    R[..., 0, 0], R[..., 0, 2] = ct, st
    R[..., 1, 0], R[..., 1, 1], R[..., 1, 2] = sp * st, cp, -sp * ct
    R[..., 2, 0], R[..., 2, 1], R[..., 2, 2] = -cp * st, sp, cp * ct
    return R


def euler_from_matrix(R: np.ndarray) -> np.ndarray:
    """Roll, pitch, yaw (zyx, R = Rz Ry Rx) of a rotation matrix, for people."""
    return np.array([math.atan2(R[2, 1], R[2, 2]), -math.asin(max(-1.0, min(1.0, R[2, 0]))),
                     math.atan2(R[1, 0], R[0, 0])])


@dataclass
class LegState:
    """Inverse kinematics of a batch of poses: (N, 3 legs) lengths, (N, 3, 3) points, and what failed."""

    length: np.ndarray
    A: np.ndarray
    knee: np.ndarray
    D: np.ndarray
    problem: np.ndarray          # (N,) index of a geometric problem (0 none, see PROBLEMS)


PROBLEMS = ("", "the platform is at or below the deck (heave >= 0)", "a linkage is over-stretched",
            "a linkage is folded shut", "a knee is below the deck or outboard of its hinge")


def _linkage(x: np.ndarray, geo: SarrusGeometry):
    """The inverse kinematics' arithmetic for poses x (N, 3), without its checks: A, knee, D, the leg
    lengths, and what the checks need (dist, L2sq, kr, kh)."""
    R = rotation(x[:, 1], x[:, 2])                                  # (N, 3, 3)
    A = np.matmul(R, geo.a.T).transpose(0, 2, 1)                    # (N, legs, 3): R a
    A[:, :, 2] += x[:, 0:1]                                         # + c
    g = A - geo.b1
    rho = (g * geo.u).sum(axis=2)                                   # radial (outboard) in the leg plane
    h = -g[..., 2]                                                  # height above the hinge
    s = (g * geo.side).sum(axis=2)                                  # out of the leg plane
    L1 = geo.arm_lower
    L2sq = np.maximum(geo.arm_upper ** 2 - s * s, 0.0)
    dsq = rho * rho + h * h
    dist = np.sqrt(dsq)
    # knee: the two-circle intersection on the inboard side of the hinge-to-A line
    cos_b = np.clip((dsq + L1 * L1 - L2sq) / (2 * L1 * np.maximum(dist, 1e-12)), -1.0, 1.0)
    ang = np.arctan2(rho, h) - np.arccos(cos_b)     # d1 from the vertical, outboard + (gamma - angle(g, d1))
    kr, kh = L1 * np.sin(ang), L1 * np.cos(ang)
    knee = geo.b1 + kr[..., None] * geo.u
    knee[..., 2] -= kh
    D = A + geo.alpha * (knee - A)
    length = np.sqrt(((D - geo.b2) ** 2).sum(axis=2))
    return A, knee, D, length, dist, L2sq, kr, kh


def inverse_kinematics(x: np.ndarray, geo: SarrusGeometry) -> LegState:
    """Leg lengths of poses x = [z, phi, theta] (shape (3,) or (N, 3)); never raises (see ``problem``)."""
    x = np.atleast_2d(np.asarray(x, float))
    return _leg_state(x, geo, *_linkage(x, geo))


def _leg_state(x, geo, A, knee, D, length, dist, L2sq, kr, kh) -> LegState:
    """inverse_kinematics' checks on the linkage of poses x (N, 3)."""
    L1 = geo.arm_lower
    problem = np.zeros(len(x), dtype=int)
    problem[(dist > L1 + np.sqrt(L2sq)).any(axis=1)] = 2
    problem[(dist < np.abs(L1 - np.sqrt(L2sq)) + 1e-9).any(axis=1)] = 3
    problem[(problem == 0) & ((kh <= 0.0) | (kr >= 0.0)).any(axis=1)] = 4
    problem[x[:, 0] >= 0.0] = 1
    return LegState(length, A, knee, D, problem)


def leg_lengths(x: np.ndarray, geo: SarrusGeometry) -> np.ndarray:
    """ell (3,) of one pose; PlatformError when the geometry fails or a cylinder leaves its stroke."""
    return _checked_lengths(x, inverse_kinematics(x, geo), geo)


def _checked_lengths(x: np.ndarray, st: LegState, geo: SarrusGeometry) -> np.ndarray:
    """leg_lengths from the inverse kinematics st of the one pose x."""
    if st.problem[0]:
        raise PlatformError(f"platform pose z = {x[0]:.4g} m, roll = {math.degrees(x[1]):.4g} deg, pitch = "
                            f"{math.degrees(x[2]):.4g} deg: {PROBLEMS[st.problem[0]]}")
    ell = st.length[0]
    lo, hi = geo.stroke
    bad = np.nonzero((ell < lo) | (ell > hi))[0]
    if len(bad):
        k = int(bad[0])
        raise PlatformError(f"cylinder {k + 1} at {ell[k]:.4g} m is beyond its stroke [{lo}, {hi}] m")
    return ell


_DX = 1e-6
_PERT = np.concatenate([_DX * np.eye(3), -_DX * np.eye(3)])
# the five-point stencil: truncation O(h^4) ~ 1e-13 and round-off ~ 2e-12 at h = 1e-3 (the three-point
# one's round-off at 1e-6 is ~1e-9, and it jumps as the pose moves by 1e-14)
_DX4 = 1e-3
_PERT4 = np.concatenate([_DX4 * np.eye(3), -_DX4 * np.eye(3), 2 * _DX4 * np.eye(3), -2 * _DX4 * np.eye(3)])


def leg_jacobian(x: np.ndarray, geo: SarrusGeometry, order: int = 2) -> np.ndarray:
    """J = d ell / d x (..., 3 legs, 3), central differences, batched over poses (N, 3) or one (3,).

    ``order`` 2: three-point differences (the NMPC's batches: half the kinematics); 4: five-point
    differences, 1e-12 smooth in x (the plant: its leg forces' torques J^T f carry J's round-off
    times forces of MN into the deck's wrench and bias)."""
    x = np.asarray(x, float)
    xs = np.atleast_2d(x)
    n = len(xs)
    pert = (xs[:, None, :] + (_PERT4 if order == 4 else _PERT)[None]).reshape(-1, 3)
    J = _differences(_linkage(pert, geo)[3], n, order)             # the lengths, without the checks
    return J[0] if x.ndim == 1 else J


def _differences(ell: np.ndarray, n: int, order: int) -> np.ndarray:
    """leg_jacobian's difference quotients from the lengths (n * 12 or n * 6, 3) of its perturbed poses."""
    if order == 4:
        ell = ell.reshape(n, 12, 3)
        J = ((8.0 * (ell[:, 0:3] - ell[:, 3:6]) - (ell[:, 6:9] - ell[:, 9:12])) * (1.0 / (12.0 * _DX4)))
        return J.transpose(0, 2, 1)
    ell = ell.reshape(n, 6, 3)
    return ((ell[:, :3] - ell[:, 3:]) * (0.5 / _DX)).transpose(0, 2, 1)


def kinematics_and_jacobian(x: np.ndarray, geo: SarrusGeometry, order: int = 2) -> tuple[LegState, np.ndarray]:
    """inverse_kinematics(x) and leg_jacobian(x, order) of one pose x (3,) in one evaluation of the
    linkage (the pose and its perturbations as one batch; the values of the two calls: the
    linkage's arithmetic is row by row)."""
    x = np.asarray(x, float)
    xs = np.concatenate([x[None], x[None] + (_PERT4 if order == 4 else _PERT)])
    A, knee, D, length, dist, L2sq, kr, kh = _linkage(xs, geo)
    st = _leg_state(xs[:1], geo, A[:1], knee[:1], D[:1], length[:1], dist[:1], L2sq[:1], kr[:1], kh[:1])
    return st, _differences(length[1:], 1, order)[0]


def forward_kinematics(ell: np.ndarray, geo: SarrusGeometry, guess: np.ndarray, max_iter: int = 4,
                       tol: float = 1e-2) -> tuple[np.ndarray, int]:
    """Pose x from measured leg lengths by Newton-Raphson (thesis 4-25, 4-26: at most 4 iterations,
    ||ell - ell(x)|| <= 1e-2 m, warm-started from ``guess``); returns (x, iterations). PlatformError
    if it does not converge."""
    x, it, _ = forward_kinematics_jacobian(ell, geo, guess, max_iter, tol)
    return x, it


def forward_kinematics_jacobian(ell: np.ndarray, geo: SarrusGeometry, guess: np.ndarray, max_iter: int = 4,
                                tol: float = 1e-2) -> tuple[np.ndarray, int, np.ndarray]:
    """forward_kinematics with the (three-point) leg Jacobian at the pose found: (x, iterations, J)."""
    x = np.asarray(guess, float).copy()
    ell = np.asarray(ell, float)
    for it in range(max_iter + 1):
        st, J = kinematics_and_jacobian(x, geo)
        r = ell - st.length[0]
        if np.linalg.norm(r) <= tol:
            return x, it, J
        if it == max_iter:
            break
        x = x + np.linalg.solve(J, r)
    raise PlatformError(f"forward kinematics did not converge in {max_iter} iterations from {guess} "
                        f"(residual {np.linalg.norm(r):.3g} m)")


# ---------------------------------------------------------------------- inertia

@dataclass
class PlatformInertia:
    """Mass, CG (P frame) and rotational inertia about the CG (P axes)."""

    mass: float
    cg: np.ndarray
    inertia: np.ndarray

    def about_origin(self) -> np.ndarray:
        """Rotational inertia about P's origin (parallel axes)."""
        r = self.cg
        return self.inertia + self.mass * (r.dot(r) * np.eye(3) - np.outer(r, r))


def platform_inertia(mass: float) -> PlatformInertia:
    """RBinertias.m (digest §2.4): the tower and its load as four parts, positions in P (z down):
    box 0.35 (5 x 4 x 4 m, CG at [0, 0, -100]); standing hollow cylinder 0.35 (h 100 m, r 5 / 5.05 m,
    [0, 0, -50]); lying hollow cylinder along x 0.10 (l 100 m, [0, 0, -100]); hexagonal base 0.20
    (circumradius 7 m, thickness 0.4 m, [0, 0, -0.4]), the thesis' formulas (the hexagon's
    I_xx = I_yy = (5/16) sqrt(3) a^4 t rho with rho = m / A, A = (3/2) sqrt(3) a^2, I_zz = m a^2 / 2)."""
    m = float(mass)
    parts = []
    mb = 0.35 * m
    parts.append((mb, [0, 0, -100.0], np.diag([mb * (4 ** 2 + 4 ** 2) / 12, mb * (5 ** 2 + 4 ** 2) / 12,
                                                mb * (5 ** 2 + 4 ** 2) / 12])))
    r1, r2, h = 5.0, 5.05, 100.0
    ms = 0.35 * m
    trans, axial = ms * (3 * (r1 * r1 + r2 * r2) + h * h) / 12, ms * (r1 * r1 + r2 * r2) / 2
    parts.append((ms, [0, 0, -50.0], np.diag([trans, trans, axial])))
    ml = 0.10 * m
    trans, axial = ml * (3 * (r1 * r1 + r2 * r2) + h * h) / 12, ml * (r1 * r1 + r2 * r2) / 2
    parts.append((ml, [0, 0, -100.0], np.diag([axial, trans, trans])))
    mh, a, t = 0.20 * m, 7.0, 0.4
    area = 1.5 * math.sqrt(3) * a * a
    ixx = 5 / 16 * math.sqrt(3) * a ** 4 * t * (mh / area)
    parts.append((mh, [0, 0, -0.4], np.diag([ixx, ixx, mh * a * a / 2])))
    cg = sum(mi * np.asarray(ri) for mi, ri, _ in parts) / m
    I = np.zeros((3, 3))
    for mi, ri, Ii in parts:
        d = np.asarray(ri) - cg
        I += Ii + mi * (d.dot(d) * np.eye(3) - np.outer(d, d))
    return PlatformInertia(m, cg, I)


def platform_mechanism(inertia: PlatformInertia, x0=(-8.0, 0.0, 0.0)) -> Mechanism:
    """The platform on the deck as a serial chain for components.articulated_body: a prismatic joint
    along z_B (q1 = z), a revolute joint about x_B (q2 = phi) and one about the rolled y axis
    (q3 = theta), so that the last link's frame is P (up to the constant axis permutation _C); the two
    intermediate links carry 1 kg (the chain needs positive masses; the linkage arms are massless in
    the thesis' model). Base = the deck frame B; attachment 1: P's origin."""
    half = math.pi / 2
    dummy = dict(a=0.0, mass=1.0, inertia=np.eye(3), control=None)
    links = [Link("heave", "prismatic", alpha=half, d=0.0, theta=half, initial_position=x0[0], **dummy),
             Link("roll", "revolute", alpha=half, d=0.0, theta=half, initial_position=x0[1], **dummy),
             Link("pitch", "revolute", a=0.0, alpha=0.0, d=0.0, theta=0.0, mass=inertia.mass,
                  cg=_C.T @ inertia.cg, inertia=_C.T @ inertia.inertia @ _C, initial_position=x0[2])]
    return Mechanism("motion_platform", links, attachments=[("platform", 2, np.zeros(3))])


# ---------------------------------------------------------------------- the plant

@dataclass
class Cylinders:
    """Hydraulic cylinders as ideal force actuators within their force limits: f = clip(u, f_min, f_max)
    (the thesis' legs are force inputs; its NMPC constraint is on the leg force level)."""

    f_min: float = -5.0e6
    f_max: float = 2.0e7

    def force(self, command: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        f = np.clip(command, self.f_min, self.f_max)
        return f, f != command


class Platform(Crane):
    """The platform's dynamics on the moving deck: components.crane.Crane's articulated-body model,
    RK4 and base-motion handling, with the joint forces tau = J(x)^T f of the cylinders (held forces,
    the Jacobian of each RK4 stage's pose) in place of joint servos."""

    def __init__(self, geometry: SarrusGeometry, inertia: PlatformInertia, cylinders: Cylinders,
                 x0=(-8.0, 0.0, 0.0), gravity: float = 9.81):
        super().__init__(platform_mechanism(inertia, x0), gravity)
        self.geometry = geometry
        self.cylinders = cylinders
        self.command = np.zeros(3)
        self._kinematics = None                        # (pose bytes, lengths, Jacobian) of the last pose
        leg_lengths(self.q, geometry)                  # the start pose must be valid

    def set_command(self, command: np.ndarray) -> None:
        self.command = np.asarray(command, float).copy()
        self._last = None

    def leg_kinematics(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ell, J) at pose q: the leg lengths (PlatformError if the pose is impossible) and the
        five-point leg Jacobian, checked for singularity. The last pose's are kept: the outputs
        (evaluated again after each new force command, and their leg lengths and rates) and the next
        step's first RK4 stage all ask for the pose the last stage ended at (the linkage was
        evaluated 16 times a step, now 4: one batch per pose)."""
        key = q.tobytes()
        kept = self._kinematics
        if kept is not None and kept[0] == key:
            return kept[1], kept[2]
        st, J = kinematics_and_jacobian(q, self.geometry, order=4)
        ell = _checked_lengths(q, st, self.geometry)
        cond = np.linalg.cond(J)
        if not cond < 1e8:
            raise PlatformError(f"the legs are singular at z = {q[0]:.4g} m, roll = {math.degrees(q[1]):.4g} deg, "
                                f"pitch = {math.degrees(q[2]):.4g} deg (leg Jacobian condition number {cond:.3g}): "
                                "the cylinders cannot hold the platform there")
        self._kinematics = (key, ell, J)
        return ell, J

    def actuator_torques(self, q, qd, z):
        _, J = self.leg_kinematics(q)
        f, saturated = self.cylinders.force(self.command)
        return J.T.dot(f), saturated

    def legs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(length, rate, force, saturated) of the three legs at the present state."""
        ell, J = self.leg_kinematics(self.q)
        f, sat = self.cylinders.force(self.command)
        return ell, J.dot(self.qd), f, sat

    def get_state(self) -> dict:
        return {**super().get_state(), "command": self.command.copy()}

    def set_state(self, s: dict) -> None:
        super().set_state(s)
        self.command = np.array(s["command"], float)
