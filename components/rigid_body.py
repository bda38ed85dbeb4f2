"""6-DOF rigid body (the payload): Newton-Euler equations at the CG with quaternion attitude.

Frames: world NED (x north, y east, z down; gravity +z), body (x forward, y starboard,
z down). The attitude is a unit quaternion q (Hamilton, scalar first) with
v_ned = R(q) v_body; see components/rotations.py.

Equations of motion (SMS API report CR 2010-256, eq. 23, extended with diagonal
added mass in the Kirchhoff form of Fossen (2011), "Handbook of Marine Craft
Hydrodynamics and Motion Control", eqs. 6.43-6.45 and 6.51, written about the CG
in body axes):

    nu = [v; omega]   (v: CG velocity in body axes, omega: angular velocity in body axes)
    M  = diag(m, m, m, I) + s diag(A)          (I: 3x3 inertia about the CG, A: added mass)
    [p; h] = M nu
    M nu_dot + [omega x p ; omega x h + v x p] = tau

For the rigid part alone this is m (v_dot + omega x v) = F, I omega_dot + omega x I omega = M_cg
(SMS eq. 23). s in [0, 1] is the submerged fraction. The time derivative of M
(s changes as the body crosses the splash zone) is ignored, as in the usual
slowly-varying added-mass approximation: M nu_dot uses the current M only.

Generalised force tau (body axes, about the CG):

* gravity     m g e_z (NED) at the CG;
* buoyancy    -s rho g V e_z (NED) at the centre of buoyancy cb -> moment (cb - cg) x f;
* attachments f_i (NED) at point a_i -> moment (a_i - cg) x R^T f_i;
* cg_force, cg_moment (NED) at the CG;
* damping     -s (D_lin nu_r + D_quad |nu_r| nu_r), nu_r = [v - R^T v_water; omega]
  (diagonal linear plus quadratic drag, Fossen 2011, eq. 6.61 ff.).

Submerged fraction (smooth wet/dry transition through a splash zone of height h):

    x = clip((depth_cb + h/2) / h, 0, 1),   s = 3 x^2 - 2 x^3   (C1 "smoothstep")

where depth_cb = z_cb + elevation is the depth of cb below the free surface
(the surface is at z_ned = -elevation). s = 0 if there are no hydro parameters.

State vector (13): [r_cg NED (3), q (4), v body (3), omega body (3)], integrated
with classic fourth-order Runge-Kutta; loads are held constant over a step
(zero-order hold, as an FMU sees them).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from components.rotations import cross, quat_normalize, quat_to_euler_zyx, quat_to_matrix

_STATE_SIZE = 13


@dataclass
class HydroParameters:
    """Hydrostatic and hydrodynamic data of the body (all optional, zero by default)."""

    volume: float = 0.0  # displaced volume when fully submerged [m3]
    cb: np.ndarray = field(default_factory=lambda: np.zeros(3))  # centre of buoyancy, body frame, rel. to origin [m]
    water_density: float = 1025.0  # [kg/m3]
    added_mass: np.ndarray = field(default_factory=lambda: np.zeros(6))  # diagonal, about CG, body axes [kg, kg m2]
    drag_linear: np.ndarray = field(default_factory=lambda: np.zeros(6))  # [N s/m, N m s/rad]
    drag_quadratic: np.ndarray = field(default_factory=lambda: np.zeros(6))  # [N s2/m2, N m s2/rad2]
    splash_height: float = 1.0  # height of the smooth wet/dry transition [m] (> 0)


@dataclass
class RigidBodyParameters:
    """Mass properties, attachment points and environment of a rigid body."""

    mass: float  # [kg] > 0
    inertia: np.ndarray  # (3, 3) about the CG, body axes [kg m2]
    cg: np.ndarray = field(default_factory=lambda: np.zeros(3))  # CG in body frame rel. to origin [m]
    attachments: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))  # (N, 3) body frame [m]
    gravity: float = 9.81  # [m/s2], acts along +z NED
    hydro: HydroParameters | None = None


# --------------------------------------------------------------------------------------------
# Parameter validation
# --------------------------------------------------------------------------------------------

Problem = tuple[str, object, str]


def _check_scalar(name: str, value: object, problems: list[Problem]) -> float | None:
    """Finite real scalar or None (problem recorded)."""
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        problems.append((name, value, "must be a real number"))
        return None
    if not math.isfinite(x):
        problems.append((name, value, "must be finite"))
        return None
    return x


def _check_array(name: str, value: object, shape: tuple[int | None, ...],
                 problems: list[Problem]) -> np.ndarray | None:
    """Finite float array of the given shape (None = any length) or None (problems recorded)."""
    try:
        a = np.array(value, dtype=float)
    except (TypeError, ValueError):
        problems.append((name, value, "must be an array of real numbers"))
        return None
    if a.size == 0 and shape[0] is None:
        a = a.reshape((0,) + shape[1:])  # an empty list of N x 3 points
    if a.ndim != len(shape) or any(n is not None and n != k for n, k in zip(shape, a.shape)):
        wanted = "(" + ", ".join("N" if n is None else str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"
        problems.append((name, value, f"must have shape {wanted}, got {a.shape}"))
        return None
    bad = np.argwhere(~np.isfinite(a))
    for idx in bad:
        problems.append((f"{name}[{','.join(str(int(i)) for i in idx)}]", float(a[tuple(idx)]), "must be finite"))
    return None if len(bad) else a


def _short(value: object) -> str:
    """One-line repr of a parameter value for error messages."""
    if isinstance(value, np.ndarray):
        return repr(value.tolist())
    return repr(value)


def validate_parameters(p: RigidBodyParameters) -> list[Problem]:
    """Check rigid-body parameters; return (name, offending value, reason) triples, empty if valid.

    Never raises for bad numbers. Checks: every number finite; mass > 0; inertia
    symmetric, positive definite and its principal moments satisfy the triangle
    inequalities I1 + I2 >= I3 (cyclic; any physical mass distribution does);
    gravity >= 0; hydro: volume >= 0, water_density > 0, added_mass >= 0,
    drag coefficients >= 0, splash_height > 0. Names are dotted/indexed, e.g.
    'mass', 'inertia[0,1]', 'inertia' (definiteness), 'hydro.added_mass[3]'.
    """
    problems: list[Problem] = []

    mass = _check_scalar("mass", p.mass, problems)
    if mass is not None and not mass > 0.0:
        problems.append(("mass", p.mass, "must be > 0"))

    inertia = _check_array("inertia", p.inertia, (3, 3), problems)
    if inertia is not None:
        scale = float(np.max(np.abs(inertia)))
        symmetric = True
        for i, j in ((0, 1), (0, 2), (1, 2)):
            # Tolerance: inertia tensors computed by CAD / rotations are symmetric only to rounding.
            if abs(inertia[i, j] - inertia[j, i]) > 1e-9 * scale:
                symmetric = False
                problems.append((f"inertia[{i},{j}]", float(inertia[i, j]),
                                 f"inertia must be symmetric (inertia[{j},{i}] = {float(inertia[j, i])!r})"))
        if symmetric:
            moments = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
            if not moments[0] > 0.0:
                problems.append(("inertia", p.inertia,
                                 f"must be positive definite (principal moments {moments.tolist()})"))
            elif moments[0] + moments[1] < moments[2] * (1.0 - 1e-9):
                # moments are sorted, so this is the only triangle inequality that can fail
                problems.append(("inertia", p.inertia,
                                 f"principal moments {moments.tolist()} violate the triangle "
                                 "inequality I1 + I2 >= I3"))

    _check_array("cg", p.cg, (3,), problems)
    _check_array("attachments", p.attachments, (None, 3), problems)

    gravity = _check_scalar("gravity", p.gravity, problems)
    if gravity is not None and gravity < 0.0:
        problems.append(("gravity", p.gravity, "must be >= 0"))

    h = p.hydro
    if h is not None:
        volume = _check_scalar("hydro.volume", h.volume, problems)
        if volume is not None and volume < 0.0:
            problems.append(("hydro.volume", h.volume, "must be >= 0"))
        _check_array("hydro.cb", h.cb, (3,), problems)
        rho = _check_scalar("hydro.water_density", h.water_density, problems)
        if rho is not None and not rho > 0.0:
            problems.append(("hydro.water_density", h.water_density, "must be > 0"))
        for name in ("added_mass", "drag_linear", "drag_quadratic"):
            a = _check_array(f"hydro.{name}", getattr(h, name), (6,), problems)
            if a is not None:
                for i in np.flatnonzero(a < 0.0):
                    problems.append((f"hydro.{name}[{i}]", float(a[i]), "must be >= 0"))
        splash = _check_scalar("hydro.splash_height", h.splash_height, problems)
        if splash is not None and not splash > 0.0:
            problems.append(("hydro.splash_height", h.splash_height, "must be > 0"))
    return problems


# --------------------------------------------------------------------------------------------
# Small helpers on 3x3 matrices stored as 9-tuples (row major); used in the hot loop
# --------------------------------------------------------------------------------------------

def _inv3(a: tuple[float, ...]) -> tuple[float, ...]:
    """Inverse of a 3x3 matrix given row major, by the adjugate (a is well conditioned here)."""
    a00, a01, a02, a10, a11, a12, a20, a21, a22 = a
    c00 = a11 * a22 - a12 * a21
    c01 = a12 * a20 - a10 * a22
    c02 = a10 * a21 - a11 * a20
    det = a00 * c00 + a01 * c01 + a02 * c02
    k = 1.0 / det
    return (c00 * k, (a02 * a21 - a01 * a22) * k, (a01 * a12 - a02 * a11) * k,
            c01 * k, (a00 * a22 - a02 * a20) * k, (a02 * a10 - a00 * a12) * k,
            c02 * k, (a01 * a20 - a00 * a21) * k, (a00 * a11 - a01 * a10) * k)


_FLOAT64 = np.dtype(np.float64)


def _is_vector3(a: object) -> bool:
    """A float64 numpy array of shape (3,) (set_loads takes it as it is)."""
    return type(a) is np.ndarray and a.dtype == _FLOAT64 and a.shape == (3,)


def _smoothstep(x: float) -> float:
    """s = 3 x^2 - 2 x^3 on x clipped to [0, 1]: C1, s(0) = 0, s(1) = 1, s'(0) = s'(1) = 0."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    return x * x * (3.0 - 2.0 * x)


# the motion outputs in motion_array()'s order, with their sizes; then each attachment's
# position and velocity (3 + 3)
MOTION_FIELDS = (("position", 3), ("velocity", 3), ("quaternion", 4), ("euler", 3), ("cg_position", 3),
                 ("cg_velocity", 3), ("angular_velocity_ned", 3), ("angular_velocity_body", 3))
_MOTION_HEAD = sum(size for _, size in MOTION_FIELDS)

_KERNELS_EXACT: dict = {}


def _kernels_reproduce_numpy(lib, n_attachments: int) -> tuple[bool, bool, bool]:
    """Whether rigid_body.c's mc_rigid_body_loads, mc_rigid_body_motion and
    mc_rigid_body_accelerations give set_loads' held values, motion_outputs' and
    acceleration_outputs' bits here (the loads, the motion, the accelerations). The kernels form
    numpy's small products (arms.T @ f, a dgemm; R.dot(x), a dgemv) as OpenBLAS's Haswell-family
    kernels do (fused multiply-adds in their order); another BLAS or kernel rounds them otherwise,
    and then this module's numpy code runs, so that the body's results are the same bits with or
    without the kernels. Checked once per process, library and number of attachments, on random points,
    forces, states and centres of gravity, with zeros and signed zeros among them (a body at rest,
    unused attachments at the origin, a CG at the origin), in, out of and across the water line."""
    from components.kernels.rigid_body import N_MOTION, CompiledRigidBody, loads_of, motion_of

    key = (id(lib), n_attachments)
    if key not in _KERNELS_EXACT:
        rng = np.random.default_rng(26)
        loads_exact = motion_exact = accelerations_exact = True
        for k in range(24):
            arms = rng.normal(size=(n_attachments, 3)) * 10.0 ** rng.integers(-2, 2, (n_attachments, 3))
            if k % 3 == 0 and n_attachments:
                arms[0] = 0.0
            cg = np.zeros(3) if k % 4 == 0 else rng.normal(size=3)
            hydro = HydroParameters(volume=0.5, cb=rng.normal(size=3), added_mass=np.full(6, 0.1),
                                    drag_quadratic=np.ones(6)) if k % 2 else None
            body = RigidBody(RigidBodyParameters(mass=1.0, inertia=np.eye(3), cg=cg, attachments=arms + cg,
                                                 hydro=hydro), compiled=False)
            forces = rng.normal(size=(n_attachments, 3)) * 10.0 ** rng.integers(-3, 6, (n_attachments, 3))
            if k % 5 == 0:
                forces[:] = -0.0
            inputs = np.concatenate((forces.ravel(), rng.normal(size=9) * 1e3, [rng.normal()]))
            f = 3 * n_attachments
            body.set_loads(forces, inputs[f:f + 3], inputs[f + 3:f + 6], inputs[f + 6:f + 9], inputs[-1])
            loads_exact = loads_exact and \
                loads_of(lib, body._arms, inputs).tobytes() == np.array(body._held_loads()).tobytes()
            y = np.concatenate((rng.normal(size=3) * (50.0 if k % 3 else 0.5), quat_normalize(rng.normal(size=4)),
                                rng.normal(size=6) if k % 6 else np.zeros(6)))
            body._y = y
            reference = np.empty(N_MOTION + 6 * n_attachments)
            body._motion_into(reference)
            motion_exact = motion_exact and motion_of(lib, body._cg, body._arms, y).tobytes() == reference.tobytes()
            kernel = CompiledRigidBody(lib)
            kernel.set_constants(body)
            kernel.set_loads(body)
            out = body.acceleration_outputs()
            reference = np.concatenate([out["cg_acceleration"], out["angular_acceleration_ned"],
                                        [out["submerged_fraction"]], *out["attachment_accelerations"]])
            accelerations_exact = accelerations_exact and \
                kernel.accelerations(y, body._rates()).tobytes() == reference.tobytes()
        _KERNELS_EXACT[key] = (loads_exact, motion_exact, accelerations_exact)
    return _KERNELS_EXACT[key]


# --------------------------------------------------------------------------------------------
# Rigid body
# --------------------------------------------------------------------------------------------

class RigidBody:
    """6-DOF rigid body integrated at its CG (equations in the module docstring).

    Attributes: params (a private copy of the parameters), time [s] (advanced by step()).
    Outputs are evaluated at the current state and the current loads; accelerations
    therefore change when set_loads is called, even without a step.
    """

    def __init__(self, params: RigidBodyParameters, position: ArrayLike = (0.0, 0.0, 0.0),
                 quaternion: ArrayLike = (1.0, 0.0, 0.0, 0.0), velocity: ArrayLike = (0.0, 0.0, 0.0),
                 angular_velocity: ArrayLike = (0.0, 0.0, 0.0), compiled: bool | None = None) -> None:
        """Create the body.

        position: body reference origin in NED [m]; quaternion: attitude (normalised here);
        velocity: velocity of the body ORIGIN in NED [m/s]; angular_velocity: body frame [rad/s].
        compiled: None runs the derivative and the RK4 steps compiled (components/kernels) if
        they can be had, True requires that, False runs the Python code of this module, which is
        the reference (results equal to rounding). Compiled, set_loads' held values,
        motion_outputs and acceleration_outputs are too where that gives the reference's bits
        (_kernels_reproduce_numpy).
        Raises ValueError naming the bad parameter(s) if validate_parameters finds problems
        or the initial state is not finite.
        """
        problems = validate_parameters(params)
        initial = {"position": (position, 3), "quaternion": (quaternion, 4),
                   "velocity": (velocity, 3), "angular_velocity": (angular_velocity, 3)}
        arrays = {}
        for name, (value, n) in initial.items():
            a = _check_array(name, value, (n,), problems)
            arrays[name] = a
        if arrays["quaternion"] is not None and not np.linalg.norm(arrays["quaternion"]) > 0.0:
            problems.append(("quaternion", quaternion, "must be non-zero"))
        if problems:
            raise ValueError("invalid rigid body: " + "; ".join(
                f"{name} = {_short(value)} ({reason})" for name, value, reason in problems))

        self.params = copy.deepcopy(params)  # later edits of the caller's object must not leak in
        self._compiled = None
        if compiled is not False:
            from components import kernels
            from components.kernels.rigid_body import CompiledRigidBody

            lib = kernels.library()
            if lib is None and compiled:
                raise RuntimeError(f"no compiled rigid-body kernel: {kernels.status()}")
            self._compiled = CompiledRigidBody(lib) if lib is not None else None
        self._setup_constants(self.params)
        # set_loads' held values, motion_outputs and acceleration_outputs compiled where that gives
        # numpy's bits (_kernels_reproduce_numpy); with the loads' kernel the inputs are kept in its arrays
        self._loads_kernel = self._motion_kernel = self._acceleration_kernel = False
        if self._compiled is not None:
            self._loads_kernel, self._motion_kernel, self._acceleration_kernel = _kernels_reproduce_numpy(
                self._compiled.lib, self.n_attachments)
            if self._loads_kernel:
                c = self._compiled
                self._attachment_forces, self._cg_force = c.forces, c.cg_force
                self._cg_moment, self._water_velocity = c.cg_moment, c.water_velocity

        q = quat_normalize(arrays["quaternion"])
        R = quat_to_matrix(q)
        omega = arrays["angular_velocity"]
        cg_arm_ned = R @ self._cg
        r_cg = arrays["position"] + cg_arm_ned
        # v_cg = v_origin + omega_ned x (R cg), then into body axes
        v_cg_ned = arrays["velocity"] + cross(R @ omega, cg_arm_ned)
        self._y = np.concatenate((r_cg, q, R.T @ v_cg_ned, omega))
        self.time = 0.0
        self._rates_cache: np.ndarray | None = None
        self.set_loads(np.zeros((self.n_attachments, 3)))

    def _setup_constants(self, p: RigidBodyParameters) -> None:
        """Copy the parameters into plain floats/tuples for the derivative (hot loop)."""
        self._mass = float(p.mass)
        self._inertia = np.array(p.inertia, dtype=float)
        self._cg = np.array(p.cg, dtype=float)
        self._attachments = np.array(p.attachments, dtype=float).reshape(-1, 3)
        self._arms = self._attachments - self._cg  # attachment points relative to the CG, body frame
        # the same rows as (view, floats) pairs, for outputs() (iterating the array costs more)
        self._arm_rows = [(arm, tuple(arm.tolist())) for arm in self._arms]
        # the first attachment at each one's point (bit for bit: -0.0 is not 0.0 here); one at an
        # earlier one's point (an FMU's unused attachments at the origin) has its values
        first: dict[bytes, int] = {}
        self._arm_first = [first.setdefault(arm.tobytes(), i) for i, arm in enumerate(self._arms)]
        self._motion = np.zeros(_MOTION_HEAD + 6 * len(self._arms))    # motion_array()'s
        self._accelerations = np.zeros(7 + 3 * len(self._arms))    # acceleration_array()'s
        self._mg = self._mass * float(p.gravity)
        inertia = tuple(self._inertia.ravel().tolist())
        self._I = inertia
        self._Iinv_dry = _inv3(inertia)
        h = p.hydro
        self._has_hydro = h is not None
        if h is None:
            self._buoyancy_full = 0.0
            self._arm_cb = (0.0, 0.0, 0.0)
            self._added = (0.0,) * 6
            self._d_lin = (0.0,) * 6
            self._d_quad = (0.0,) * 6
            self._splash = 1.0
            self._Iinv_wet = self._Iinv_dry
        else:
            self._buoyancy_full = float(h.water_density) * float(p.gravity) * float(h.volume)  # rho g V [N]
            self._arm_cb = tuple((np.array(h.cb, dtype=float) - self._cg).tolist())  # cb relative to the CG
            self._added = tuple(np.asarray(h.added_mass, dtype=float).tolist())
            self._d_lin = tuple(np.asarray(h.drag_linear, dtype=float).tolist())
            self._d_quad = tuple(np.asarray(h.drag_quadratic, dtype=float).tolist())
            self._splash = float(h.splash_height)
            a = self._added
            wet = list(inertia)
            wet[0] += a[3]
            wet[4] += a[4]
            wet[8] += a[5]
            self._Iinv_wet = _inv3(tuple(wet))
        if self._compiled is not None:
            self._compiled.set_constants(self)

    @property
    def n_attachments(self) -> int:
        """Number of attachment points N."""
        return self._attachments.shape[0]

    # ----------------------------------------------------------------------------------------
    # Loads
    # ----------------------------------------------------------------------------------------

    def set_loads(self, attachment_forces: ArrayLike | None, cg_force: ArrayLike = (0.0, 0.0, 0.0),
                  cg_moment: ArrayLike = (0.0, 0.0, 0.0), water_velocity: ArrayLike = (0.0, 0.0, 0.0),
                  water_elevation: float = 0.0) -> None:
        """Set the loads held constant (zero-order hold) over the following step(s).

        attachment_forces: (N, 3) NED forces at the attachment points [N] (None: zeros);
        cg_force (3,) NED [N] and cg_moment (3,) NED [N m] act at the CG;
        water_velocity (3,) NED [m/s] (current, used in the drag);
        water_elevation [m], positive UP: the free surface is at z_ned = -water_elevation.
        """
        n = self.n_attachments
        f = attachment_forces
        if (type(f) is np.ndarray and f.dtype == _FLOAT64 and f.shape == (n, 3) and _is_vector3(cg_force)
                and _is_vector3(cg_moment) and _is_vector3(water_velocity)):
            # float64 arrays of the right shapes (an FMU's inputs): nothing to check or convert,
            # only copied (the caller may change its arrays later; the loads' kernel copies them)
            if not self._loads_kernel:
                f, cg_force, cg_moment, water_velocity = (f.copy(), cg_force.copy(), cg_moment.copy(),
                                                          water_velocity.copy())
        else:
            f = np.zeros((n, 3)) if attachment_forces is None else np.array(attachment_forces, dtype=float)
            if f.size == 0 and n == 0:
                f = np.zeros((0, 3))
            if f.shape != (n, 3):
                raise ValueError(f"attachment_forces must have shape ({n}, 3), got {f.shape}")
            loads = {}
            for name, value in (("cg_force", cg_force), ("cg_moment", cg_moment), ("water_velocity", water_velocity)):
                a = np.array(value, dtype=float)
                if a.shape != (3,):
                    raise ValueError(f"{name} must have shape (3,), got {a.shape}")
                loads[name] = a
            cg_force, cg_moment, water_velocity = loads["cg_force"], loads["cg_moment"], loads["water_velocity"]
        if self._loads_kernel:
            # the held values below, formed in C (rigid_body.c, mc_rigid_body_loads) from copies of
            # the inputs in the kernel's arrays (which _attachment_forces etc. are)
            self._water_elevation = float(water_elevation)
            self._compiled.loads(f, cg_force, cg_moment, water_velocity, self._water_elevation)
            self._rates_cache = None
            return
        self._attachment_forces = f
        self._cg_force = cg_force
        self._cg_moment = cg_moment
        self._water_velocity = water_velocity
        self._water_elevation = float(water_elevation)

        # Precomputed for the derivative. Total NED force at the CG except weight/buoyancy,
        # f.sum(axis=0) + cg_force in floats: numpy's sum over the rows is 0.0 + f_0 + f_1 + ...
        # in that order (the same bits; its reduce costs more than the arithmetic)
        fx, fy, fz = 0.0, 0.0, 0.0
        for x, y, z in f.tolist():
            fx, fy, fz = fx + x, fy + y, fz + z
        cx, cy, cz = cg_force.tolist()
        self._f_ned = (fx + cx, fy + cy, fz + cz)
        self._m_ned = tuple(self._cg_moment.tolist())
        # Moment of the attachment forces in body axes, sum_i a_i x (R^T f_i), is bilinear in
        # (a_i, f_i), so it equals eps_jkl (C R)_kl with the constant C = sum_i a_i f_i^T:
        # one 3x3 product per evaluation, whatever N is.
        self._c_att = tuple((self._arms.T @ f).ravel().tolist())
        self._v_water = tuple(self._water_velocity.tolist())
        self._rates_cache = None
        if self._compiled is not None:
            self._compiled.set_loads(self)

    def _held_loads(self) -> tuple[float, ...]:
        """The values set_loads holds for the derivative, in rigid_body.c's order: the NED force at
        the CG without weight and buoyancy (3), the NED moment (3), C = sum_i a_i f_i^T (9), the
        water velocity (3) and elevation."""
        if self._loads_kernel:
            return self._compiled.held_loads()
        return (*self._f_ned, *self._m_ned, *self._c_att, *self._v_water, self._water_elevation)

    # ----------------------------------------------------------------------------------------
    # Dynamics
    # ----------------------------------------------------------------------------------------

    def _submerged_fraction(self, z_cg: float, r20: float, r21: float, r22: float) -> float:
        """Smoothstep of the relative depth of cb in the splash zone (module docstring)."""
        if not self._has_hydro:
            return 0.0
        a0, a1, a2 = self._arm_cb
        depth = z_cg + r20 * a0 + r21 * a1 + r22 * a2 + self._water_elevation
        return _smoothstep((depth + 0.5 * self._splash) / self._splash)

    def _derivative(self, y: np.ndarray) -> np.ndarray:
        """dy/dt of the state [r_cg, q, v, omega] under the current loads.

        r_cg_dot = R v;  q_dot = 0.5 q (x) [0, omega];
        [v_dot; omega_dot] = M^-1 (tau - [omega x p ; omega x h + v x p]).

        Written on Python floats: for 3-vectors this is several times faster than
        numpy calls (~1 us per numpy call), and this runs 4 times per RK4 sub-step.
        """
        _, _, z, qw, qx, qy, qz, u, v, w, p, q, r = y.tolist()

        # Rotation matrix body -> NED (same as rotations.quat_to_matrix, inlined)
        k = 2.0 / (qw * qw + qx * qx + qy * qy + qz * qz)
        wx, wy, wz = k * qw * qx, k * qw * qy, k * qw * qz
        xx, xy, xz = k * qx * qx, k * qx * qy, k * qx * qz
        yy, yz, zz = k * qy * qy, k * qy * qz, k * qz * qz
        r00, r01, r02 = 1.0 - yy - zz, xy - wz, xz + wy
        r10, r11, r12 = xy + wz, 1.0 - xx - zz, yz - wx
        r20, r21, r22 = xz - wy, yz + wx, 1.0 - xx - yy

        s = self._submerged_fraction(z, r20, r21, r22)

        # Forces at the CG, NED, then body: F_b = R^T F_ned. Weight minus buoyancy is along e_z.
        fx, fy, fz = self._f_ned
        fz += self._mg - s * self._buoyancy_full
        Fx = r00 * fx + r10 * fy + r20 * fz
        Fy = r01 * fx + r11 * fy + r21 * fz
        Fz = r02 * fx + r12 * fy + r22 * fz

        # Moments about the CG, body: R^T m_ned + eps_jkl (C R)_kl (see set_loads)
        mx, my, mz = self._m_ned
        c00, c01, c02, c10, c11, c12, c20, c21, c22 = self._c_att
        Mx = (r00 * mx + r10 * my + r20 * mz
              + (c10 * r02 + c11 * r12 + c12 * r22) - (c20 * r01 + c21 * r11 + c22 * r21))
        My = (r01 * mx + r11 * my + r21 * mz
              + (c20 * r00 + c21 * r10 + c22 * r20) - (c00 * r02 + c01 * r12 + c02 * r22))
        Mz = (r02 * mx + r12 * my + r22 * mz
              + (c00 * r01 + c01 * r11 + c02 * r21) - (c10 * r00 + c11 * r10 + c12 * r20))

        I00, I01, I02, I10, I11, I12, I20, I21, I22 = self._I
        m = self._mass
        if s > 0.0:
            # Buoyancy b = -s rho g V R^T e_z acting at cb: moment (cb - cg) x b
            bs = -s * self._buoyancy_full
            bx, by, bz = bs * r20, bs * r21, bs * r22
            ax, ay, az = self._arm_cb
            Mx += ay * bz - az * by
            My += az * bx - ax * bz
            Mz += ax * by - ay * bx
            # Damping on the velocity relative to the water (current rotated into body axes)
            cx, cy, cz = self._v_water
            ur = u - (r00 * cx + r10 * cy + r20 * cz)
            vr = v - (r01 * cx + r11 * cy + r21 * cz)
            wr = w - (r02 * cx + r12 * cy + r22 * cz)
            dl, dq = self._d_lin, self._d_quad
            Fx -= s * (dl[0] + dq[0] * abs(ur)) * ur
            Fy -= s * (dl[1] + dq[1] * abs(vr)) * vr
            Fz -= s * (dl[2] + dq[2] * abs(wr)) * wr
            Mx -= s * (dl[3] + dq[3] * abs(p)) * p
            My -= s * (dl[4] + dq[4] * abs(q)) * q
            Mz -= s * (dl[5] + dq[5] * abs(r)) * r
            # Mass matrix M = diag(m, m, m, I) + s diag(A)
            a = self._added
            mu, mv, mw = m + s * a[0], m + s * a[1], m + s * a[2]
            I00 += s * a[3]
            I11 += s * a[4]
            I22 += s * a[5]
            if s == 1.0:
                Ji = self._Iinv_wet
            else:
                Ji = _inv3((I00, I01, I02, I10, I11, I12, I20, I21, I22))
        else:
            mu = mv = mw = m
            Ji = self._Iinv_dry

        # Momenta p = M_lin v and h = M_ang omega; Coriolis-centripetal terms (Kirchhoff form)
        pu, pv, pw = mu * u, mv * v, mw * w
        hx = I00 * p + I01 * q + I02 * r
        hy = I10 * p + I11 * q + I12 * r
        hz = I20 * p + I21 * q + I22 * r
        Fx -= q * pw - r * pv
        Fy -= r * pu - p * pw
        Fz -= p * pv - q * pu
        Mx -= q * hz - r * hy + v * pw - w * pv
        My -= r * hx - p * hz + w * pu - u * pw
        Mz -= p * hy - q * hx + u * pv - v * pu

        j00, j01, j02, j10, j11, j12, j20, j21, j22 = Ji
        return np.array([
            r00 * u + r01 * v + r02 * w,
            r10 * u + r11 * v + r12 * w,
            r20 * u + r21 * v + r22 * w,
            -0.5 * (qx * p + qy * q + qz * r),
            0.5 * (qw * p + qy * r - qz * q),
            0.5 * (qw * q - qx * r + qz * p),
            0.5 * (qw * r + qx * q - qy * p),
            Fx / mu,
            Fy / mv,
            Fz / mw,
            j00 * Mx + j01 * My + j02 * Mz,
            j10 * Mx + j11 * My + j12 * Mz,
            j20 * Mx + j21 * My + j22 * Mz,
        ])

    def linear_modes(self) -> list[tuple[complex, str]]:
        """Eigenvalues of the body's linear force laws, each with the parameter that sets it, for
        the stability of the RK4 sub-steps (components/stability.py): linear drag on each body
        axis (-c / m) and the splash zone's buoyancy stiffness rho g V / splash_height with the
        heave drag (roots of m s^2 + c s + k).  The dry mass and inertia (no added mass) and the
        full drag make them the fastest the body can have.  Quadratic drag, whose rate grows with
        the speed, is not included."""
        if not self._has_hydro:
            return []
        m, inertia = self._mass, self._inertia
        modes = []
        for i in range(3):
            c = self._d_lin[i]
            if i == 2 and self._buoyancy_full > 0.0 and self._splash > 0.0:
                k = self._buoyancy_full / self._splash
                for root in np.roots([m, c, k]):
                    # the faster of two real roots is the drag's, an oscillation the stiffness's
                    drag = abs(root.imag) == 0.0 and abs(root) > math.sqrt(k / m)
                    modes.append((complex(root), "hydro.drag_linear[2]" if drag else "hydro.splash_height"))
            elif c > 0.0:
                modes.append((complex(-c / m), f"hydro.drag_linear[{i}]"))
            c = self._d_lin[3 + i]
            if c > 0.0 and inertia[i, i] > 0.0:
                modes.append((complex(-c / inertia[i, i]), f"hydro.drag_linear_rotation[{i}]"))
        return modes

    def step(self, dt: float, max_substep: float) -> None:
        """Advance by dt [s] with classic RK4 in n = ceil(dt / max_substep) equal sub-steps.

        The quaternion is renormalised after each sub-step (its norm drifts by O(h^5)
        per step otherwise). The loads set by set_loads are held constant.
        """
        if not (math.isfinite(dt) and dt >= 0.0):
            raise ValueError(f"dt must be finite and >= 0, got {dt!r}")
        if not (math.isfinite(max_substep) and max_substep > 0.0):
            raise ValueError(f"max_substep must be finite and > 0, got {max_substep!r}")
        if dt == 0.0:
            return
        # The 1e-9 keeps e.g. 1.1 / 0.1 = 11.000000000000002 from giving 12 sub-steps.
        n = max(1, math.ceil(dt / max_substep - 1e-9))
        h = dt / n
        if self._compiled is not None:                 # the same RK4 in C (components/kernels/rigid_body.c)
            self._y = self._compiled.step(self._y, n, h, self._rates_cache)
            self.time += dt
            self._rates_cache = None
            return
        f = self._derivative
        y = self._y
        # first same as last: the outputs' derivative at this state and these loads, if they
        # were read (set_loads and step drop it), is exactly the first stage
        k1 = self._rates_cache
        for _ in range(n):
            if k1 is None:
                k1 = f(y)
            k2 = f(y + (0.5 * h) * k1)
            k3 = f(y + (0.5 * h) * k2)
            k4 = f(y + h * k3)
            y = y + (h / 6.0) * (k1 + 2.0 * (k2 + k3) + k4)
            qn = y[3:7]  # a view into the fresh y: normalise in place
            qn /= math.sqrt(float(qn @ qn))
            k1 = None
        self._y = y
        self.time += dt
        self._rates_cache = None

    def _rates(self) -> np.ndarray:
        """Derivative at the current state and loads (cached until either changes)."""
        if self._rates_cache is None:
            self._rates_cache = self._derivative(self._y) if self._compiled is None else \
                self._compiled.derivative(self._y)
        return self._rates_cache

    # ----------------------------------------------------------------------------------------
    # Outputs (fresh arrays, current state and loads)
    # ----------------------------------------------------------------------------------------

    @property
    def _R(self) -> np.ndarray:
        return quat_to_matrix(self._y[3:7])

    @property
    def quaternion(self) -> np.ndarray:
        """Attitude quaternion [w, x, y, z] (body -> NED)."""
        return self._y[3:7].copy()

    @property
    def euler(self) -> tuple[float, float, float]:
        """zyx Euler angles (roll, pitch, yaw) [rad]."""
        return quat_to_euler_zyx(self._y[3:7])

    @property
    def rotation_matrix(self) -> np.ndarray:
        """R (body -> NED)."""
        return self._R

    @property
    def cg_position(self) -> np.ndarray:
        """CG position, NED [m]."""
        return self._y[0:3].copy()

    @property
    def position(self) -> np.ndarray:
        """Body reference origin, NED [m]: r_cg - R cg."""
        return self._y[0:3] - self._R @ self._cg

    @property
    def cg_velocity(self) -> np.ndarray:
        """CG velocity, NED [m/s]: R v."""
        return self._R @ self._y[7:10]

    @property
    def velocity(self) -> np.ndarray:
        """Velocity of the body reference origin, NED [m/s]: v_cg + omega_ned x R (0 - cg)."""
        R = self._R
        return R @ (self._y[7:10] + cross(self._y[10:13], -self._cg))

    @property
    def cg_acceleration(self) -> np.ndarray:
        """CG acceleration, NED [m/s2]: R (v_dot + omega x v)."""
        y, d = self._y, self._rates()
        return self._R @ (d[7:10] + cross(y[10:13], y[7:10]))

    @property
    def angular_velocity_body(self) -> np.ndarray:
        """Angular velocity omega, body axes [rad/s]."""
        return self._y[10:13].copy()

    @property
    def angular_velocity_ned(self) -> np.ndarray:
        """Angular velocity, NED axes [rad/s]: R omega."""
        return self._R @ self._y[10:13]

    @property
    def angular_acceleration_body(self) -> np.ndarray:
        """omega_dot, body axes [rad/s2]."""
        return self._rates()[10:13].copy()

    @property
    def angular_acceleration_ned(self) -> np.ndarray:
        """d/dt (R omega) = R omega_dot (the R S(omega) omega term vanishes) [rad/s2]."""
        return self._R @ self._rates()[10:13]

    def _attachment_arm(self, i: int) -> np.ndarray:
        if not 0 <= i < self.n_attachments:
            raise IndexError(f"attachment index {i} out of range (N = {self.n_attachments})")
        return self._arms[i]

    def attachment_position(self, i: int) -> np.ndarray:
        """Position of attachment i, NED [m]: r_cg + R (a_i - cg)."""
        return self._y[0:3] + self._R @ self._attachment_arm(i)

    def attachment_velocity(self, i: int) -> np.ndarray:
        """Velocity of attachment i, NED [m/s]: R (v + omega x (a_i - cg))."""
        y = self._y
        return self._R @ (y[7:10] + cross(y[10:13], self._attachment_arm(i)))

    def attachment_acceleration(self, i: int) -> np.ndarray:
        """Acceleration of attachment i, NED [m/s2]: a_cg + alpha x rho + omega x (omega x rho),
        with rho = R (a_i - cg); evaluated in body axes and rotated."""
        y, d = self._y, self._rates()
        v, w, rho = y[7:10], y[10:13], self._attachment_arm(i)
        a_body = d[7:10] + cross(w, v) + cross(d[10:13], rho) + cross(w, cross(w, rho))
        return self._R @ a_body

    def outputs(self) -> dict:
        """Every output at once, bit for bit what the properties and attachment_*() give:
        :meth:`motion_outputs` and :meth:`acceleration_outputs` in one dict.  Arrays are fresh."""
        out = self.motion_outputs()
        out.update(self.acceleration_outputs())
        return out

    def motion_outputs(self) -> dict:
        """The outputs of the state alone, bit for bit what the properties and attachment_*()
        give: position, velocity, quaternion, euler, cg_position, cg_velocity,
        angular_velocity_ned, angular_velocity_body, and (lists in attachment order)
        attachment_positions, attachment_velocities.  Arrays are fresh.

        Same equations, same floating-point operations in the same order; R is computed once
        instead of once per output, the cross products are rotations.cross written out, and
        R.dot(x) stands for the properties' R @ x (both are one BLAS gemv of a 3x3 matrix and a
        3-vector; .dot costs a third). Compiled (rigid_body.c, mc_rigid_body_motion) where that
        gives these bits (_kernels_reproduce_numpy): the arrays are then views of one fresh array."""
        if self._motion_kernel:
            return self._motion_dict(self._compiled.motion(self._y, own=False).copy())
        return self._motion_reference()

    def motion_array(self) -> np.ndarray:
        """:meth:`motion_outputs` in one array: the MOTION_FIELDS in their order, then each
        attachment's position and velocity.  The body's own array, formed again in place at each
        call (:meth:`motion_views` are views of it; copy what is to be kept): for an FMU adapter,
        which reads every output at each step."""
        if self._motion_kernel:
            return self._compiled.motion(self._y)
        self._motion_into(self._motion)
        return self._motion

    def motion_views(self) -> dict:
        """:meth:`motion_outputs`'s dict of views of :meth:`motion_array`'s array (their values
        change with each call of motion_array)."""
        return self._motion_dict(self._motion)

    def _motion_dict(self, flat: np.ndarray) -> dict:
        """motion_outputs()'s dict of views of an array in motion_array()'s layout."""
        out, start = {}, 0
        for key, size in MOTION_FIELDS:
            out[key] = flat[start:start + size]
            start += size
        points = flat[start:].reshape(-1, 2, 3)
        out["attachment_positions"] = list(points[:, 0])
        out["attachment_velocities"] = list(points[:, 1])
        return out

    def _motion_into(self, flat: np.ndarray) -> None:
        """The numpy code's motion outputs written into an array in motion_array()'s layout."""
        out = self._motion_reference()
        np.concatenate([out[key] for key, _ in MOTION_FIELDS] + [
            a for pair in zip(out["attachment_positions"], out["attachment_velocities"]) for a in pair], out=flat)

    def _motion_reference(self) -> dict:
        """motion_outputs() in numpy and floats (the reference)."""
        y = self._y
        rot = quat_to_matrix(y[3:7]).dot
        vx, vy, vz = y[7:10].tolist()
        wx, wy, wz = y[10:13].tolist()
        mx, my, mz = (-self._cg).tolist()
        r_cg = y[0:3]
        positions, velocities = [], []
        for i, (arm, (px, py, pz)) in zip(self._arm_first, self._arm_rows):
            if i < len(positions):      # at an earlier attachment's point: the same values
                positions.append(positions[i].copy())
                velocities.append(velocities[i].copy())
                continue
            positions.append(r_cg + rot(arm))
            # omega x rho
            cx, cy, cz = wy * pz - wz * py, wz * px - wx * pz, wx * py - wy * px
            velocities.append(rot(np.array([vx + cx, vy + cy, vz + cz])))
        return {
            "position": r_cg - rot(self._cg),
            "velocity": rot(np.array([vx + (wy * mz - wz * my), vy + (wz * mx - wx * mz), vz + (wx * my - wy * mx)])),
            "quaternion": y[3:7].copy(),
            "euler": np.array(quat_to_euler_zyx(y[3:7])),
            "cg_position": r_cg.copy(),
            "cg_velocity": rot(y[7:10]),
            "angular_velocity_ned": rot(y[10:13]),
            "angular_velocity_body": y[10:13].copy(),
            "attachment_positions": positions,
            "attachment_velocities": velocities,
        }

    def acceleration_outputs(self) -> dict:
        """The outputs that depend on the loads too, bit for bit what the properties and
        attachment_acceleration() give: cg_acceleration, angular_acceleration_ned,
        submerged_fraction and (a list in attachment order) attachment_accelerations; the rates
        (the derivative) are formed here, not for the motion alone (a master that reads no
        acceleration does not pay for them).  Written as :meth:`motion_outputs` is, and compiled
        as it is (rigid_body.c, mc_rigid_body_accelerations)."""
        if self._acceleration_kernel:
            return self._acceleration_dict(self._compiled.accelerations(self._y, self._rates(), own=False).copy())
        return self._acceleration_reference()

    def acceleration_array(self) -> np.ndarray:
        """:meth:`acceleration_outputs` in one array: cg_acceleration (3), angular_acceleration_ned
        (3), submerged_fraction, then each attachment's acceleration (3).  The body's own array,
        formed again in place at each call, as :meth:`motion_array`'s."""
        if self._acceleration_kernel:
            return self._compiled.accelerations(self._y, self._rates())
        out = self._acceleration_reference()
        np.concatenate([out["cg_acceleration"], out["angular_acceleration_ned"], [out["submerged_fraction"]],
                        *out["attachment_accelerations"]], out=self._accelerations)
        return self._accelerations

    def acceleration_views(self) -> dict:
        """:meth:`acceleration_outputs`'s dict of views of :meth:`acceleration_array`'s array (their
        values change with each call of acceleration_array), but for the submerged fraction, a
        number (element 6 of the array)."""
        out = self._acceleration_dict(self._accelerations)
        del out["submerged_fraction"]
        return out

    def _acceleration_dict(self, flat: np.ndarray) -> dict:
        """acceleration_outputs()'s dict of views of an array in acceleration_array()'s layout."""
        return {"cg_acceleration": flat[0:3], "angular_acceleration_ned": flat[3:6],
                "submerged_fraction": float(flat[6]), "attachment_accelerations": list(flat[7:].reshape(-1, 3))}

    def _acceleration_reference(self) -> dict:
        """acceleration_outputs() in numpy and floats (the reference)."""
        y, d = self._y, self._rates()
        R = quat_to_matrix(y[3:7])
        rot = R.dot
        vx, vy, vz = y[7:10].tolist()
        wx, wy, wz = y[10:13].tolist()
        dvx, dvy, dvz = d[7:10].tolist()
        dwx, dwy, dwz = d[10:13].tolist()
        # v_dot + omega x v, shared by the CG and every attachment
        bx = dvx + (wy * vz - wz * vy)
        by = dvy + (wz * vx - wx * vz)
        bz = dvz + (wx * vy - wy * vx)
        accelerations = []
        for i, (arm, (px, py, pz)) in zip(self._arm_first, self._arm_rows):
            if i < len(accelerations):  # at an earlier attachment's point: the same values
                accelerations.append(accelerations[i].copy())
                continue
            # omega x rho, omega_dot x rho, omega x (omega x rho)
            cx, cy, cz = wy * pz - wz * py, wz * px - wx * pz, wx * py - wy * px
            accelerations.append(rot(np.array([
                bx + (dwy * pz - dwz * py) + (wy * cz - wz * cy),
                by + (dwz * px - dwx * pz) + (wz * cx - wx * cz),
                bz + (dwx * py - dwy * px) + (wx * cy - wy * cx)])))
        return {
            "cg_acceleration": rot(np.array([bx, by, bz])),
            "angular_acceleration_ned": rot(d[10:13]),
            "submerged_fraction": self._submerged_fraction(float(y[2]), *R[2].tolist()),
            "attachment_accelerations": accelerations,
        }

    @property
    def submerged_fraction(self) -> float:
        """s in [0, 1] at the current state and water elevation (0 without hydro parameters)."""
        R = self._R
        return self._submerged_fraction(float(self._y[2]), *R[2].tolist())

    @property
    def kinetic_energy(self) -> float:
        """Rigid-body kinetic energy 0.5 m v.v + 0.5 omega.I omega [J] (no added mass)."""
        v, w = self._y[7:10], self._y[10:13]
        return float(0.5 * self._mass * (v @ v) + 0.5 * (w @ (self._inertia @ w)))

    @property
    def angular_momentum_ned(self) -> np.ndarray:
        """Rigid-body angular momentum about the CG, NED axes: R I omega [kg m2/s]."""
        return self._R @ (self._inertia @ self._y[10:13])

    # ----------------------------------------------------------------------------------------
    # State handling
    # ----------------------------------------------------------------------------------------

    def get_state(self) -> dict[str, np.ndarray | float]:
        """Complete internal state (copies): state vector, time and the held loads."""
        return {
            "state": self._y.copy(),
            "time": self.time,
            "attachment_forces": self._attachment_forces.copy(),
            "cg_force": self._cg_force.copy(),
            "cg_moment": self._cg_moment.copy(),
            "water_velocity": self._water_velocity.copy(),
            "water_elevation": self._water_elevation,
        }

    def set_state(self, state: dict) -> None:
        """Restore a dict from get_state (copied in); step() then reproduces bit for bit."""
        y = np.array(state["state"], dtype=float)
        if y.shape != (_STATE_SIZE,):
            raise ValueError(f"state must have shape ({_STATE_SIZE},), got {y.shape}")
        self.set_loads(state["attachment_forces"], state["cg_force"], state["cg_moment"],
                       state["water_velocity"], state["water_elevation"])
        self._y = y
        self.time = float(state["time"])
        self._rates_cache = None

    def state_is_finite(self) -> bool:
        """True if the state vector and time are all finite."""
        return bool(np.isfinite(self._y).all()) and math.isfinite(self.time)
