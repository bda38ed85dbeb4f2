"""Lumped-mass line: mooring chain, wire rope or umbilical, with bending, torsion, hydrodynamics,
seabed contact, variable length and an implicit integrator.  Pure numpy/scipy, no FMI.

Sources
-------
[HG15] M. Hall & A. Goupee, "Validation of a lumped-mass mooring line model with DeepCwind
       semisubmersible model test data", Ocean Engineering 104 (2015) 590-603 (MoorDyn v1:
       axial springs-dampers, Morison loads at the nodes, seabed, explicit RK2).
[MD]   MoorDyn v2 documentation (moordyn.readthedocs.io, "Model Structure", "Input Files"):
       BA/-zeta damping, seabed kBot / cBot per unit diameter, node tangents, FricDamp friction,
       submerged fraction of segments crossing the free surface.
[BU03] Buckham's cubic-spline lumped-mass cable (SMS API, sms_api_digest.md section 2.1):
       bending through spline curvatures, quasi-static torsion, a variable-length end element
       driven by a winch.  Implemented in components/rod.py.
[BW98] D. Baraff & A. Witkin, "Large steps in cloth simulation", SIGGRAPH 1998: the linearly
       implicit step (M - h dF/dv - h^2 dF/dx) dv = h (F + h dF/dx v), here as a theta-method.
[CAT]  components/catenary.py: the static elastic catenary used for the at-rest initial state.

Conventions
-----------
SI units, world frame NED (z DOWN).  N elements join N+1 nodes, node 0 at end A (anchor, or the
lower end of a crane wire), node N at end B (fairlead, crane tip or winch).  End A is always
driven (``set_ends``); end B is driven or ``free`` (a dynamic node with an optional point mass
and point force, e.g. the tip of a cantilever).  Element e joins nodes e and e+1 and has
unstretched length l_e (all equal except a winch element, below).

Why a lumped-mass line with spline bending (and not ANCF or compliant constraints)
----------------------------------------------------------------------------------
Mooring chain and steel wire are dominated by axial stiffness, drag and seabed contact; a
lumped-mass line is what MoorDyn and OrcaFlex use for them and what our users compare with.
Buckham's spline adds bending and torsion without extra states (curvatures follow from node
positions), so one model covers chain (EI = GJ = 0, identical to MoorDyn v1) and umbilicals or
short stiff wires (the SMS API beam).  The bending force is the exact gradient of the spline's
bending energy (components/rod.py), so it is conservative and its Jacobian is constant between
length changes -- which makes the implicit integrator cheap.  ANCF would add 6 gradient states per
node and a dense mass matrix for little gain at mooring scales.

Model
-----
Element e: chord d_e = r_{e+1} - r_e, length lambda_e, tangent q_e, strain eps_e = lambda_e/l_e - 1,
strain rate eps'_e = (v_{e+1} - v_e).q_e / l_e, tension (no compression: a cable goes slack)::

    T_e = max(f(eps_e) + c_e eps'_e, 0) if eps_e > 0 else 0,   f = EA eps or a tension-strain table

A rod (``compression`` CE > 0, SMS's $CE) carries compression CE EA eps instead of going slack.
c_e = -damping * l_e sqrt(EA m') when ``damping`` < 0 (MoorDyn's -zeta: zeta = 1 is critical for
one segment's axial mode), else c_e = damping.  Node i (length share l_i = (l_{i-1} + l_i)/2)::

    M_i a_i = sum_e(tension) + bending + torsion shear + W_i + D_i + I_i + B_i (+ point force)
    M_i  = m' l_i I + w_i rho A l_i [Can (I - qq^T) + Cat qq^T]        (q the node tangent)
    W_i  = (m' - w_i rho A) g l_i e_z                                  (weight - buoyancy)
    D_i  = w_i [1/2 rho Cdn d lam_i |u_n| u_n + 1/2 rho Cdt pi d lam_i |u_t| u_t],   u = U_f - v_i
    I_i  = w_i rho A l_i [(1 + Can) a_f,n + (1 + Cat) a_f,t]           (Froude-Krylov + added mass)

w_i is the node's wetted fraction: each element's submerged length fraction (its ends' depths
below the local free surface, linear in between, smoothed over one diameter at the surface),
averaged over the adjacent elements [MD].  The fluid velocity U_f is the current profile
(piecewise linear in depth, zero above the mean surface) plus, as an option, the particle
velocity and acceleration a_f of a components.waves.Sea -- the same seeded sea the ship FMU uses.
Seabed (plane z = seabed_depth), penetration p > 0: normal F_n = max(kBot p + cBot v_z, 0) d l_i,
regularised Coulomb friction -min(c_f |v_h|, mu F_n) v_h/|v_h| [MD].

Bending EI and torsion GJ: components/rod.py (spline curvature, clamped or pinned ends, uniform
quasi-static twist between torsionally held ends, twist-bend shear GJ tau t x r'').

Variable length [BU03]
----------------------
A winch at end A or B pays out at speed u (> 0 out): the element at that end grows,
dl_w/dt = u.  It is split when l_w > 1.6 l_0 (a new node at l_0 from the inner node, on the
chord, with the interpolated velocity) and merged with its neighbour when l_w < 0.4 l_0 (the
hysteresis avoids chatter).  Node masses follow from the element lengths, so the line's mass is
m' times its unstretched length at all times; momentum changes only by the new material entering
with the winch end's velocity.

Time integration
----------------
``scheme="rk2"`` (MoorDyn's default) or ``"rk4"``: explicit, sub-step limited by the highest
axial mode  omega_ax = 2 sqrt(EA/(m' l^2))  (RK2: dt < ~2/omega; 3.4 ms for the 50 m chain at
safety 0.7) and, with bending, the highest bending mode (largest eigenvalue of EI K / m).
Stiff steel wire makes these limits microseconds.  ``scheme="implicit"``: the linearly implicit
theta-method [BW98]

    (M + theta h C + theta^2 h^2 K) dv = h (F - theta h K v),   v+ = v + dv,  x+ = x + h (v + theta dv)

with K = -dF/dx (axial springs with their geometric stiffness, bending, seabed) and
C = -dF/dv (axial and bending damping, linearised Morison drag, seabed damping and friction)
assembled block-tridiagonal (banded Cholesky, O(N)) or, with bending, dense.  For linear forces
this is unconditionally stable for theta >= 1/2; theta = 0.6 (default) damps modes far above
1/h while keeping the numerical damping of the resolved motion small (ratio about
(theta - 1/2) omega h).  The sub-step is then set by accuracy, not stability.

Initial state: the elastic catenary [CAT] through the ends (straight for a free end), then a
damped Newton solve of the discrete static equilibrium (the same Jacobian), so a mooring starts
with no transient.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.linalg import LinAlgError, solve_banded
from scipy.linalg.lapack import dpbsv
from scipy.sparse.linalg import eigsh

from components.catenary import node_positions_3d, solve_catenary
from components.rod import SplineBending, Twist, cross, rotate3, transport3

__all__ = ["LineParams", "Line", "EndLoads"]


_FLOAT64 = np.dtype(np.float64)


def _vector3(x) -> np.ndarray:
    """x as a float64 array of shape (3,): x itself if it is one (no conversion, no copy)."""
    if type(x) is np.ndarray and x.dtype == _FLOAT64 and x.shape == (3,):
        return x
    return np.asarray(x, dtype=float).reshape(3)


class EndLoads(NamedTuple):
    """What a line gives its end connections (Line.end_loads), NED, SI."""

    force_a: np.ndarray       # force the line exerts on end A (3,) [N]
    force_b: np.ndarray       # force the line exerts on end B (3,) [N]
    moment_a: np.ndarray      # moment on end A (3,) [N m]
    moment_b: np.ndarray      # moment on end B (3,) [N m]
    twist_rate: float         # uniform twist rate [rad/m]
    tensions: np.ndarray      # element tensions (N,) [N], end A first


# estimated seconds of work the static equilibrium may take (its iterations, see solve_cost)
STATIC_WORK = 3.0


class LineWorkExceeded(RuntimeError):
    """A step needed more work than :attr:`Line.work_limit` allows (its implicit iterations)."""


@dataclass(frozen=True)
class LineParams:
    """Line type and environment (SI).  Defaults: none for the line, MoorDyn's for the seabed."""

    length: float                 # unstretched length L [m] (initial, if a winch changes it)
    diameter: float               # volume-equivalent diameter d [m]
    mass_per_length: float        # m' [kg/m]
    EA: float                     # axial stiffness [N] (the largest slope if tension_strain is given)
    damping: float = -1.0         # internal axial damping c [N s]; negative = -zeta (MoorDyn BA/-zeta)
    EI: float = 0.0               # bending stiffness [N m^2]
    GJ: float = 0.0               # torsional stiffness [N m^2]
    bending_damping: float = 0.0  # [N m^2 s]: bending force -c_b D^T k(v) (SMS's BCID)
    tension_strain: tuple = ()    # optional ((strain, tension), ...) table, first row (0, 0)
    compression: float = 0.0      # CE: compressive stiffness CE*EA for strain < 0 (0: a cable, 1: a rod)
    Cdn: float = 1.2              # normal drag coefficient
    Cdt: float = 0.0              # tangential drag coefficient (on pi d)
    Can: float = 1.0              # normal added-mass coefficient
    Cat: float = 0.0              # tangential added-mass coefficient
    rho_water: float = 1025.0     # [kg/m^3]
    g: float = 9.81               # [m/s^2]
    kBot: float = 1.0e5           # seabed stiffness per unit diameter [Pa/m]
    cBot: float = 1.0e4           # seabed damping per unit diameter [Pa s/m]
    friction: float = 0.5         # Coulomb coefficient mu
    friction_damping: float = 200.0  # c_f, low-speed friction regularisation [N s/m]

    @property
    def area(self) -> float:
        return math.pi / 4 * self.diameter**2

    @property
    def weight_per_length(self) -> float:
        """Submerged weight per unstretched length w = (m' - rho pi d^2/4) g [N/m]."""
        return (self.mass_per_length - self.rho_water * self.area) * self.g

    def check(self) -> list[tuple[str, float, str]]:
        """Problems with the parameters as (field, value, reason); empty when usable."""
        bad = []
        for name in ("length", "diameter", "mass_per_length", "EA"):
            val = getattr(self, name)
            if not (math.isfinite(val) and val > 0.0):
                bad.append((name, val, "must be a positive number"))
        for name in ("EI", "GJ", "bending_damping", "compression", "Cdn", "Cdt", "Can", "Cat", "rho_water", "g", "kBot",
                     "cBot", "friction", "friction_damping"):
            val = getattr(self, name)
            if not (math.isfinite(val) and val >= 0.0):
                bad.append((name, val, "must be a non-negative number"))
        if self.tension_strain:
            tab = np.asarray(self.tension_strain, dtype=float)
            if tab.ndim != 2 or tab.shape[1] != 2 or tab.shape[0] < 2 or np.any(~np.isfinite(tab)):
                bad.append(("tension_strain", float("nan"), "must be rows of (strain, tension), at least two"))
            elif tab[0, 0] != 0.0 or tab[0, 1] != 0.0 or np.any(np.diff(tab[:, 0]) <= 0) or \
                    np.any(np.diff(tab[:, 1]) < 0):
                bad.append(("tension_strain", float(tab[0, 0]),
                            "must start at (0, 0) with increasing strain and non-decreasing tension"))
        return bad


try:    # np.einsum without its Python wrapper (the same C routine): ten calls a step on tiny arrays
    from numpy._core.multiarray import c_einsum as _einsum
except ImportError:  # pragma: no cover - other numpy layouts
    _einsum = np.einsum

_EYE3 = np.eye(3)[None]
_EYE3.flags.writeable = False
_AXES = tuple(np.eye(3))


def _dot3(a0: float, a1: float, a2: float, b0: float, b1: float, b2: float) -> float:
    """a . b of 3-vectors in Python floats, summed in the order numpy's einsum("ij,ij->i") sums a
    row of three (two accumulators: (a0 b0 + a2 b2) + a1 b1), so scalar code reproduces the
    vectorised forces to the bit."""
    return (a0 * b0 + a2 * b2) + a1 * b1


def _unit_rows(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lam = np.sqrt(_einsum("ij,ij->i", d, d))
    return d / np.maximum(lam, 1e-12)[:, None], lam


class Line:
    """One line between end A (driven) and end B (driven or free); see the module docstring."""

    def __init__(self, params: LineParams, anchor: np.ndarray, fairlead: np.ndarray,
                 n_segments: int, seabed_depth: float,
                 current: np.ndarray = (0.0, 0.0, 0.0), scheme: str = "rk2",
                 substep: float | None = None, safety: float | None = None, *,
                 theta: float = 0.6, clamped_a: bool = False, clamped_b: bool = False,
                 swivel_a: bool = True, swivel_b: bool = True, free_b: bool = False,
                 tip_mass: float = 0.0, winch_end: str | None = None,
                 current_profile: np.ndarray | None = None, sea=None,
                 max_segments: int = 2000, static_init: bool = True,
                 attitude_a: bool = False, attitude_b: bool = False, compiled: bool | None = None) -> None:
        """Build the line at rest on its static shape between ``anchor`` (end A) and ``fairlead``
        (end B), both NED.

        n_segments: N.  seabed_depth: z of the seabed plane (NED, > 0 below the surface; use
        inf for no seabed).  current: uniform water velocity (NED) [m/s], or current_profile,
        rows (depth, north, east, down) with increasing depth.  scheme: "rk2", "rk4" or
        "implicit" (theta-method).  substep: largest internal sub-step [s]; default: safety x the
        explicit limit (0.7 RK2, 1.0 RK4), or 0.02 s for "implicit".
        clamped_a/b: bending-clamped ends (tangent from ``set_end_tangents``).  swivel_a/b:
        torsionally free ends (GJ acts only when neither end swivels).  free_b: end B is a
        dynamic node (point mass ``tip_mass``, force from ``set_tip_force``).  winch_end: "a",
        "b", "both" or None, the end(s) whose element changes length with ``set_payout``.  sea: a
        components.waves.Sea for wave kinematics (optional).  attitude_a/b: the end is fixed to
        a body whose attitude comes from ``set_end_attitudes``: a clamped end takes its tangent
        from the body, a torsionally held end its twist (``set_end_tangents`` and
        ``set_end_twist`` are then ignored at that end).  compiled: None runs the implicit step
        compiled (components/kernels/line.c) where the line allows it (no bending, torsion,
        tension-strain table or compression), False the numpy reference, True requires the kernel.
        """
        p = params
        problems = p.check()
        if problems:
            name, val, why = problems[0]
            raise ValueError(f"line parameter {name} = {val!r} {why}")
        if int(n_segments) < 2:
            raise ValueError(f"n_segments = {n_segments} must be >= 2")
        if scheme not in ("rk2", "rk4", "implicit"):
            raise ValueError(f"scheme = {scheme!r} must be 'rk2', 'rk4' or 'implicit'")
        if not 0.5 <= theta <= 1.0:
            raise ValueError(f"theta = {theta} must be in [0.5, 1]")
        if winch_end not in (None, "a", "b", "both"):
            raise ValueError(f"winch_end = {winch_end!r} must be 'a', 'b', 'both' or None")
        if free_b and winch_end in ("b", "both"):
            raise ValueError("a free end B cannot carry the winch (pay out at end A)")
        self.p = p
        self.N = int(n_segments)
        self.seabed_depth = float(seabed_depth)
        self.current = np.asarray(current, dtype=float).reshape(3).copy()
        self.current_profile = None if current_profile is None else self._check_profile(current_profile)
        self.sea = sea
        self.scheme, self.theta = scheme, float(theta)
        self.clamped_a, self.clamped_b = bool(clamped_a), bool(clamped_b)
        self.torsion = p.GJ > 0.0 and not (swivel_a or swivel_b)
        self.free_b, self.tip_mass = bool(free_b), float(tip_mass)
        self.winch_end, self.max_segments = winch_end, int(max_segments)
        self.winch_ends = {"a": ("a",), "b": ("b",), "both": ("a", "b")}.get(winch_end, ())
        self.l0 = p.length / self.N                       # nominal element length
        self.l = np.full(self.N, self.l0)
        self.payout = {"a": 0.0, "b": 0.0}       # pay-out speed at each winch end [m/s]
        self.length_limited = False
        self.tip_force = np.zeros(3)
        self.t_a = np.array([1.0, 0.0, 0.0])
        self.t_b = np.array([1.0, 0.0, 0.0])
        self.phi_a = self.phi_b = 0.0
        # ends fixed to bodies: the body's attitude (body -> NED) and angular velocity (NED) at
        # time _att_t, and the line's tangent and twist reference at the end in body axes
        self.attitude = {"a": bool(attitude_a), "b": bool(attitude_b)}
        self._R = {"a": np.eye(3), "b": np.eye(3)}
        self._w = {"a": np.zeros(3), "b": np.zeros(3)}
        self._att_t = 0.0
        self._t_body = {"a": None, "b": None}
        self._m_body = {"a": None, "b": None}
        self._tab = None          # clamped end tangents of the last _forces call
        self._table = np.asarray(p.tension_strain, dtype=float) if p.tension_strain else None
        self._kdn = 0.5 * p.rho_water * p.Cdn * p.diameter
        self._kdt = 0.5 * p.rho_water * p.Cdt * math.pi * p.diameter
        self._rhoA = p.rho_water * p.area
        self._geometry_changed()

        self._omega_max: float | None = None     # see omega_max: computed when first asked
        if substep is not None:
            self.substep = float(substep)
        elif scheme == "implicit":
            self.substep = 0.02      # accuracy: 0.05 % on the chain heave vs MoorDyn (docs/cable.md)
        else:
            self.substep = (safety if safety is not None else 0.7 if scheme == "rk2" else 1.0) * self.dt_stable

        a = np.asarray(anchor, dtype=float).reshape(3).copy()
        f = np.asarray(fairlead, dtype=float).reshape(3).copy()
        self.t = 0.0
        self.solves = 0           # linear solves so far (a measure of the work done, for callers that bound it)
        # estimated seconds of work one call to step may do (None: unbounded); see step_cost
        self.work_limit: float | None = None
        self._step_solves = 0     # self.solves at the start of the step being taken
        self.va, self.vb = np.zeros(3), np.zeros(3)
        self.r = self._initial_shape(a, f)
        self.v = np.zeros_like(self.r)
        if self.clamped_a:
            self.t_a = self._unit(self.r[1] - self.r[0])
        if self.clamped_b:
            self.t_b = self._unit(self.r[-1] - self.r[-2])
        self.twist = Twist(self._tangents(self.r)) if self.torsion else None
        self._compiled = self._compiled_kernel(compiled)
        # the end loads the kernel wrote for the state the last step ended in (bind_step_outputs)
        self.step_outputs: np.ndarray | None = None
        self._outputs_bound = False
        if static_init:
            # (without it the caller sets the ends' inputs, then calls static_equilibrium and
            # reset_twist, which binds ends fixed to bodies to their attitudes)
            self.static_equilibrium()
            self.reset_twist()

    @property
    def omega_max(self) -> float:
        """The highest axial and bending angular frequency [rad/s], the stability limit of the
        explicit schemes (module docstring); computed when first asked (the bending part is the
        largest eigenvalue of an n x n matrix: Lanczos on a long line, where a full eigenvalue
        solve takes seconds)."""
        if self._omega_max is None:
            p = self.p
            omega = 2.0 * math.sqrt(p.EA / (p.mass_per_length * self.l0 * self.l0))
            if self._bend is not None and p.EI > 0:
                m = p.mass_per_length * self.l_node
                Kb = p.EI * self._bend.K / np.sqrt(np.outer(m, m))
                if Kb.shape[0] > 200:
                    # a seeded start vector (not orthogonal to any mode by symmetry): the same answer
                    # in every run, as fixed-step results must be reproducible
                    v0 = np.random.default_rng(0).standard_normal(Kb.shape[0])
                    top = float(eigsh(Kb, k=1, which="LA", v0=v0, return_eigenvectors=False, tol=1e-10)[0])
                else:
                    top = float(np.linalg.eigvalsh(Kb)[-1])
                omega = math.hypot(omega, math.sqrt(max(top, 0.0)))
            self._omega_max = omega
        return self._omega_max

    @property
    def dt_stable(self) -> float:
        """2 / omega_max [s]: the explicit schemes' stability limit (RK2 at safety 1)."""
        return 2.0 / self.omega_max

    def reset_twist(self) -> None:
        """Declare the present shape torque-free and unbent at clamped ends: twist references
        re-chosen so that tau = 0, and the line's tangent and twist reference at an end fixed to
        a body (``attitude_a/b``) bound to that body's present attitude."""
        q = self._tangents(self.r)
        if self.torsion:
            self.twist = Twist(q)
        for end, tangent, m in (("a", self.t_a if self.clamped_a else q[0], None if self.twist is None else
                                 self.twist.m_a),
                                ("b", self.t_b if self.clamped_b else q[-1], None if self.twist is None else
                                 self.twist.m_b)):
            if self.attitude[end]:
                R = self._R[end]
                self._t_body[end] = R.T @ tangent
                self._m_body[end] = None if m is None else R.T @ m

    def _body_vector(self, end: str, u: np.ndarray, t: float) -> np.ndarray:
        """A body-fixed vector u (body axes) of the body at ``end``, in NED at time t: the attitude
        set at _att_t turned by its angular velocity over t - _att_t."""
        return np.array(self._body_floats(end, (u,), t)[0])

    def _body_floats(self, end: str, us: tuple, t: float) -> list:
        """_body_vector of each body-fixed vector in ``us``, as lists of Python floats (the same
        arithmetic: rotate3 is rotate_about's, w / |w| elementwise)."""
        R, w = self._R[end], self._w[end]
        xs = [(R @ u).tolist() for u in us]
        wn = math.sqrt(float(w @ w))
        s = t - self._att_t
        if wn > 0.0 and s != 0.0:
            axis = [wi / wn for wi in w.tolist()]
            xs = [rotate3(x, axis, wn * s) for x in xs]
        return xs

    def _end_tangents(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """Clamped end tangents at time t: the bodies' for ends fixed to bodies, else t_a, t_b."""
        ta, tb = self.t_a, self.t_b
        if self.clamped_a and self._t_body["a"] is not None:
            ta = self._body_vector("a", self._t_body["a"], t)
        if self.clamped_b and self._t_body["b"] is not None:
            tb = self._body_vector("b", self._t_body["b"], t)
        return ta, tb

    def _end_references(self, q: np.ndarray, t: float) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Material twist references of ends fixed to bodies at time t (None: the carried
        reference turned by the twist input): the body-fixed reference, parallel-transported from
        the body's line direction to the end element's tangent [BE08] (they differ by the
        bending of a pinned end, or the spline's end slope of a clamped one)."""
        out = []
        for end, e in (("a", 0), ("b", -1)):
            if self._m_body[end] is None:
                out.append(None)
                continue
            m, tb = self._body_floats(end, (self._m_body[end], self._t_body[end]), t)
            # in Python floats: transport3 is transport's arithmetic, the dot products are summed
            # from 0.0 left to right as numpy's dot of 3-vectors sums them
            qe = q[e].tolist()
            m0, m1, m2 = transport3(m, tb, qe)
            mq = ((0.0 + m0 * qe[0]) + m1 * qe[1]) + m2 * qe[2]
            m0, m1, m2 = m0 - mq * qe[0], m1 - mq * qe[1], m2 - mq * qe[2]
            nm = max(math.sqrt(((0.0 + m0 * m0) + m1 * m1) + m2 * m2), 1e-300)
            out.append(np.array([m0 / nm, m1 / nm, m2 / nm]))
        return out[0], out[1]

    def _compiled_kernel(self, compiled: bool | None):
        """The compiled implicit step (components/kernels/line.py) for this line, or None."""
        if compiled is False:
            return None
        from components import kernels
        from components.kernels.line import CompiledLine, eligible
        lib = kernels.library()
        if lib is None or not eligible(self):
            if compiled:
                raise RuntimeError(f"no compiled line kernel: {kernels.status()}" if lib is None else
                                   "the compiled line takes the implicit scheme without bending, torsion, "
                                   "tension-strain table or compression")
            return None
        return CompiledLine(self, lib)

    def _fluid_batch(self, n: int) -> tuple:
        """The fluid for the kernel's next call and how many of the n sub-steps it may take with it:
        all n in still water, one where the fluid moves with the nodes and time."""
        if self.current_profile is not None or self.sea is not None:
            return (*self._fluid(self.r, self.t), 1)
        return None, None, None, n

    def _compiled_steps(self, h: float, n: int, dl: tuple = (0.0, 0.0), loads: bool = False) -> None:
        """n implicit sub-steps of h by the kernel (the fluid from _fluid at the start of each);
        a step it leaves (a snap, see line.c) is taken by the reference _implicit_step.  loads:
        the kernel writes the loads of the state the last of its calls ends in (step_outputs)."""
        while n > 0:
            U, Af, zs, k = self._fluid_batch(n)
            done, rc = self._compiled.run(self, h, k, dl, U, Af, zs, loads)
            self.step_outputs = self._compiled.summary if loads and not rc else None
            for _ in range(done):
                self.t = self.t + h
            n -= done
            if rc:
                self.r, self.v = self._implicit_step(self.r, self.v, self.t, h, self.va, self.vb, dl)
                self.t = self.t + h
                n -= 1

    # ------------------------------------------------------------------ set-up helpers
    @staticmethod
    def _unit(v: np.ndarray) -> np.ndarray:
        n = float(np.linalg.norm(v))
        return v / n if n > 0 else np.array([1.0, 0.0, 0.0])

    @staticmethod
    def _check_profile(prof) -> np.ndarray:
        prof = np.atleast_2d(np.asarray(prof, dtype=float))
        if prof.ndim != 2 or prof.shape[1] != 4 or np.any(~np.isfinite(prof)) or np.any(np.diff(prof[:, 0]) <= 0):
            raise ValueError("current_profile must be rows (depth, north, east, down) with increasing depth")
        return prof

    def _geometry_changed(self) -> None:
        """Element lengths changed (start, winch): node shares, masses, bending operators."""
        p, l = self.p, self.l
        self.N = l.size
        self.l_node = np.empty(self.N + 1)
        self.l_node[1:-1] = 0.5 * (l[:-1] + l[1:])
        self.l_node[0], self.l_node[-1] = 0.5 * l[0], 0.5 * l[-1]
        self.m_node = p.mass_per_length * self.l_node
        # added mass and Froude-Krylov per unit wet fraction (as _forces multiplies them out)
        self._man_l = p.Can * self._rhoA * self.l_node
        self._mat_l = p.Cat * self._rhoA * self.l_node
        self._rhoA_l = self._rhoA * self.l_node
        if self.free_b:
            self.m_node = self.m_node.copy()
            self.m_node[-1] += self.tip_mass
        self.c_el = (-p.damping * l * math.sqrt(p.EA * p.mass_per_length) if p.damping < 0
                     else np.full(self.N, p.damping))
        need_rod = p.EI > 0 or p.bending_damping > 0 or (p.GJ > 0)
        self._bend = SplineBending(l, self.clamped_a, self.clamped_b) if need_rod else None
        self._dyn = slice(1, self.N + 1 if self.free_b else self.N)
        # _band_cache and _ones are keyed on their size (a winch changes l every step, N rarely)
        if getattr(self, "_EAvec", None) is None or self._EAvec.size != self.N:
            self._EAvec = np.full(self.N, self.p.EA)
            self._band_cache = None
            self._bending_band_cache = None
            self._ones = None

    def _initial_shape(self, a: np.ndarray, f: np.ndarray) -> np.ndarray:
        """Catenary [CAT] through the ends (straight line if that fails or end B is free)."""
        p, N = self.p, self.N
        straight = a + np.linspace(0.0, 1.0, N + 1)[:, None] * (f - a)
        if self.free_b or p.weight_per_length <= 0:
            return straight
        w = p.weight_per_length
        grounded_anchor = a[2] >= self.seabed_depth - 1e-9 and p.kBot > 0
        delta = w / (p.kBot * p.diameter) if grounded_anchor else 0.0
        a_eff = a + np.array([0.0, 0.0, delta])
        X = float(np.hypot(*(f - a_eff)[:2]))
        Z = float(a_eff[2] - f[2])
        try:
            if Z >= 0.0:
                cat = solve_catenary(X, Z, p.length, w, p.EA, 0.0, seabed=grounded_anchor)
                P = node_positions_3d(a_eff, f, cat, N + 1)
            else:  # end B below end A (a hanging wire): mirror, swap the ends
                cat = solve_catenary(X, -Z, p.length, w, p.EA, 0.0, seabed=False)
                P = node_positions_3d(f, a_eff, cat, N + 1)[::-1]
        except (ValueError, RuntimeError):
            return straight
        P = np.array(P, dtype=float)
        P[0], P[-1] = a, f
        return P

    # ------------------------------------------------------------------ environment
    def _fluid(self, r: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        """Fluid velocity (n, 3), acceleration (n, 3) or None, local surface z (n,) at the nodes."""
        if self.current_profile is not None:
            pr = self.current_profile
            depth = np.maximum(r[:, 2], 0.0)
            U = np.stack([np.interp(depth, pr[:, 0], pr[:, k]) for k in (1, 2, 3)], axis=1)
        else:
            U = self.current                              # broadcasts against (n, 3)
        if self.sea is None:
            return U, None, None
        depth = np.maximum(r[:, 2], 0.0)                  # constant extrapolation above the mean level
        U = U + self.sea.particle_velocity(t, r[:, 0], r[:, 1], depth)
        A = self.sea.particle_acceleration(t, r[:, 0], r[:, 1], depth)
        zs = -np.asarray(self.sea.elevation(t, r[:, 0], r[:, 1]), dtype=float)
        return U, A, zs

    def _wet_fraction(self, r: np.ndarray, zs: np.ndarray | None) -> np.ndarray:
        """Node wetted fractions w_i (module docstring)."""
        # NED: a node is surely wet below the lowest possible trough, z >= +sum(amplitudes)
        trough = 0.0 if self.sea is None else float(np.sum(self.sea.amplitude))
        z = r[:, 2]
        if float(z.min()) >= trough:
            if self._ones is None or self._ones.size != r.shape[0]:
                self._ones = np.ones(r.shape[0])
            return self._ones
        h = z if zs is None else z - zs                                     # depth below the local surface
        ah, hp = np.abs(h), np.maximum(h, 0)
        span = ah[:-1] + ah[1:]
        d = self.p.diameter
        f = (hp[:-1] + hp[1:]) / np.maximum(span, 1e-300)
        far = span > d
        if np.count_nonzero(far) < far.size:      # an element within a diameter of the surface: smoothed
            f = np.where(far, f, np.minimum(np.maximum(0.5 + (h[:-1] + h[1:]) / (2 * d), 0.0), 1.0))
        fl = f * self.l
        w = np.empty(r.shape[0])
        w[1:-1] = (fl[:-1] + fl[1:]) / (self.l[:-1] + self.l[1:])
        w[0], w[-1] = f[0], f[-1]
        return w

    def _tangents(self, r: np.ndarray) -> np.ndarray:
        return _unit_rows(r[1:] - r[:-1])[0]

    # ------------------------------------------------------------------ forces
    def _axial(self, lam: np.ndarray, rate: np.ndarray,
               stiffness: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """Tension (N,) and tangent stiffness dT/dlambda (N,) [N/m] (None unless ``stiffness``)."""
        eps = lam / self.l - 1.0
        if self._table is None:
            f, k = self.p.EA * eps, self._EAvec
        else:
            tab = self._table
            f = np.interp(eps, tab[:, 0], tab[:, 1], left=0.0,
                          right=None) + np.maximum(eps - tab[-1, 0], 0.0) * (tab[-1, 1] - tab[-2, 1]) / (
                              tab[-1, 0] - tab[-2, 0])
            slopes = np.diff(tab[:, 1]) / np.diff(tab[:, 0])
            idx = np.clip(np.searchsorted(tab[:, 0], eps, side="right") - 1, 0, slopes.size - 1)
            k = slopes[idx]
        # strain rate d(lambda/l)/dt: the winch element's rest length grows at the pay-out speed
        # (without this term its damping would read the pay-out as stretching)
        epsd = rate / self.l
        for end in self.winch_ends:
            u = self.payout[end]
            if u != 0.0:
                e = self._winch_element(end)
                epsd[e] -= lam[e] / self.l[e] ** 2 * u
        T = f + self.c_el * epsd
        if self.p.compression > 0.0:         # a rod: compression carried with CE * EA (SMS's $CE)
            neg = eps < 0.0
            T = np.where(neg, self.p.compression * self.p.EA * eps + self.c_el * epsd, T)
            return T, np.where(neg, self.p.compression * self.p.EA, k) / self.l if stiffness else None
        taut = (eps > 0.0) & (T > 0.0)
        return np.where(taut, T, 0.0), np.where(taut, k / self.l, 0.0) if stiffness else None

    def _forces(self, r: np.ndarray, v: np.ndarray, t: float, jac: bool = False) -> np.ndarray:
        """Net non-inertial force on every node (N+1, 3); with jac=True keeps what the implicit
        step needs (tangents, tensions, stiffnesses, drag and seabed derivatives, masses)."""
        p = self.p
        q, lam = _unit_rows(r[1:] - r[:-1])
        dv = v[1:] - v[:-1]
        rate = _einsum("ij,ij->i", dv, q)
        T, kax = self._axial(lam, rate)
        Tq = T[:, None] * q
        F = np.zeros(r.shape)
        F[:-1] += Tq
        F[1:] -= Tq
        U, Af, zs = self._fluid(r, t)
        w = self._wet_fraction(r, zs) if p.rho_water > 0 else np.zeros(r.shape[0])
        F[:, 2] += (self.m_node - w * self._rhoA * self.l_node) * p.g        # m_node has the tip mass
        # node tangents (for drag and added mass)
        qh = np.empty_like(r)
        qh[1:-1] = r[2:] - r[:-2]
        qh[0], qh[-1] = q[0], q[-1]
        qh[1:-1] = _unit_rows(qh[1:-1])[0]
        if p.rho_water > 0:
            lbar = np.empty(r.shape[0])
            np.add(lam[:-1], lam[1:], out=lbar[1:-1])
            lbar[0], lbar[-1] = lam[0], lam[-1]
            lbar *= 0.5
            kdn = self._kdn * lbar * w
            u = U - v
            ut = _einsum("ij,ij->i", u, qh)[:, None] * qh
            un = u - ut
            unm = np.sqrt(_einsum("ij,ij->i", un, un))
            F += (kdn * unm)[:, None] * un
            if self._kdt:
                F += (self._kdt * lbar * w * np.sqrt(_einsum("ij,ij->i", ut, ut)))[:, None] * ut
            ma_n = self._man_l * w
            ma_t = self._mat_l * w
            if Af is not None:
                at = np.einsum("ij,ij->i", Af, qh)[:, None] * qh
                F += (self._rhoA_l * w)[:, None] * Af + ma_n[:, None] * (Af - at) + ma_t[:, None] * at
        else:
            # no water (w = 0): drag, added mass and fluid inertia are zeros; adding them changed
            # nothing but the sign of a zero (a line in air, or a test with the physics cut down)
            kdn = ma_n = ma_t = w
            un = unm = None
        # seabed
        seabed = None
        if float(r[:, 2].max()) > self.seabed_depth:
            pen = r[:, 2] - self.seabed_depth
            hit = pen > 0.0
            idx = np.nonzero(hit)[0]
            ln = self.l_node[idx]
            vv = v[idx]
            Fn = p.kBot * pen[idx] + p.cBot * vv[:, 2]
            pressing = Fn > 0.0
            Fn = np.maximum(Fn, 0.0) * p.diameter * ln
            F[idx, 2] -= Fn
            vh = vv[:, :2]
            vhm = np.sqrt(np.einsum("ij,ij->i", vh, vh))
            lin = p.friction_damping * vhm < p.friction * Fn
            fmag = np.where(lin, p.friction_damping * vhm, p.friction * Fn)
            F[idx, :2] -= (fmag / np.maximum(vhm, 1e-300))[:, None] * vh
            seabed = (idx, pressing, ln, lin & (Fn > 0))
        # bending and torsion
        k = None
        if self._bend is not None:
            ta, tb = self._tab = self._end_tangents(t)
            k = self._bend.curvature(r, ta, tb)
            if p.EI > 0:
                F += p.EI * self._bend.force(k)
            if p.bending_damping > 0:
                F += p.bending_damping * self._bend.force(self._bend.B @ v)
            if self.twist is not None:
                self._Theta = self.twist.total_twist(q, self.phi_a, self.phi_b, *self._end_references(q, t))
                tau = self._Theta / float(np.add.reduce(self.l))
                n = p.GJ * tau * cross(q, 0.5 * (k[:-1] + k[1:]))
                F[:-1] += n
                F[1:] -= n
        if self.free_b:
            F[-1] += self.tip_force
        if jac:
            self._j = dict(q=q, lam=lam, T=T, kax=kax, qh=qh, ma_n=ma_n, ma_t=ma_t, kdn=kdn, un=un,
                           unm=unm, seabed=seabed)
        self._k = k
        self._qT = (q, T)        # for the outputs at this state (_moments, end_loads)
        return F

    def _mass_blocks(self, qh: np.ndarray, ma_n: np.ndarray, ma_t: np.ndarray,
                     qq: np.ndarray | None = None) -> np.ndarray:
        """3x3 node mass matrices (n, 3, 3): m I + ma_n (I - qq^T) + ma_t qq^T (qq: qh qh^T if known)."""
        if qq is None:
            qq = qh[:, :, None] * qh[:, None, :]
        return (self.m_node + ma_n)[:, None, None] * _EYE3 + (ma_t - ma_n)[:, None, None] * qq

    def _accel(self, r: np.ndarray, v: np.ndarray, t: float) -> np.ndarray:
        """Accelerations of the dynamic nodes (explicit schemes): the 3x3 mass inverted exactly."""
        F = self._forces(r, v, t, jac=True)
        j, d = self._j, self._dyn
        qh = j["qh"][d]
        Fd = F[d]
        Fq = np.einsum("ij,ij->i", Fd, qh)[:, None] * qh
        m = self.m_node[d]
        return (Fd - Fq) / (m + j["ma_n"][d])[:, None] + Fq / (m + j["ma_t"][d])[:, None]

    # ------------------------------------------------------------------ implicit step
    def _jacobian_blocks(self, v: np.ndarray, cC: float, cK: float, mass: bool = True,
                         statics: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Node blocks of A = M + cC C + cK K (diagonal (n,3,3), upper off-diagonal (n-1,3,3))
        and K v (n, 3) for all nodes, from the last _forces(jac=True).  ``statics``: slack
        elements keep their unstretched axial stiffness, so Newton can straighten a line that
        starts exactly unstretched (its true Jacobian there is zero)."""
        p, j = self.p, self._j
        q, lam, T, kax = j["q"], j["lam"], j["T"], j["kax"]
        if statics:
            k0 = p.EA if self._table is None else (self._table[1, 1] - self._table[0, 1]) / self._table[1, 0]
            kax = np.where(kax > 0.0, kax, k0 / self.l)
        qq = q[:, :, None] * q[:, None, :]
        eye = _EYE3
        Ke = kax[:, None, None] * qq + (T / np.maximum(lam, 1e-12))[:, None, None] * (eye - qq)
        Ce = (self.c_el / self.l)[:, None, None] * qq
        if self.p.compression <= 0.0:
            Ce = np.where((T > 0)[:, None, None], Ce, 0.0)
        G = cC * Ce + cK * Ke
        qh = j["qh"]
        qqh = qh[:, :, None] * qh[:, None, :]
        diag = self._mass_blocks(qh, j["ma_n"], j["ma_t"], qqh) if mass else np.zeros((v.shape[0], 3, 3))
        diag[:-1] += G
        diag[1:] += G
        off = -G
        Kv = np.zeros(v.shape)
        dvK = _einsum("eab,eb->ea", Ke, v[1:] - v[:-1])
        Kv[:-1] -= dvK
        Kv[1:] += dvK
        # linearised drag: C = kdn (|u_n| P + u_n u_n^T / |u_n|)
        kdn, un, unm = j["kdn"], j["un"], j["unm"]
        if un is not None:                                  # (None: no water, no drag)
            P = eye - qqh
            Cd = (kdn * unm)[:, None, None] * P + (kdn / np.maximum(unm, 1e-12))[:, None, None] * (
                un[:, :, None] * un[:, None, :])
            diag += cC * Cd
        if j["seabed"] is not None:
            idx, pressing, ln, lin = j["seabed"]
            kz = np.where(pressing, p.kBot * p.diameter * ln, 0.0)
            cz = np.where(pressing, p.cBot * p.diameter * ln, 0.0)
            diag[idx, 2, 2] += cC * cz + cK * kz
            Kv[idx, 2] += kz * v[idx, 2]
            cf = np.where(lin, p.friction_damping, 0.0)
            diag[idx, 0, 0] += cC * cf
            diag[idx, 1, 1] += cC * cf
        return diag, off, Kv

    def _band_index(self, n: int):
        """Where the upper triangles of the diagonal blocks and the off-diagonal blocks go in
        LAPACK's upper band storage ab[kd + i - j, j] = A[i, j] (kd = 5), as flat positions in
        the Fortran-ordered (6, 3n) ab, with the blocks' flat positions they come from."""
        if self._band_cache is None or self._band_cache[0] != n:
            a, b = np.meshgrid(np.arange(3), np.arange(3), indexing="ij")
            up = a <= b
            k = np.arange(n)[:, None, None]
            d_rows = np.broadcast_to(5 + a - b, (n, 3, 3))[:, up]
            d_cols = (3 * k + b)[:, up]
            d_src = (9 * k + 3 * a + b)[:, up]
            ko = np.arange(n - 1)[:, None, None]
            o_rows = np.broadcast_to(2 + a - b, (n - 1, 3, 3)).reshape(n - 1, 9)
            o_cols = (3 * ko + 3 + b).reshape(n - 1, 9)
            self._band_cache = (n, d_src.ravel(), (d_rows + 6 * d_cols).ravel(), (o_rows + 6 * o_cols).ravel())
        return self._band_cache

    def _solve(self, diag: np.ndarray, off: np.ndarray, rhs: np.ndarray, bend: float | None):
        """Solve the (symmetric positive definite) block system for the dynamic nodes, plus
        ``bend`` K_b (the spline's bending stiffness, components/rod.py) when ``bend`` is given."""
        self.solves += 1
        if self.work_limit is not None and (self.solves - self._step_solves) * self.solve_cost() > self.work_limit:
            raise LineWorkExceeded(
                f"the implicit integrator needed {self.solves - self._step_solves} linear solves in this step "
                f"(iterations on elements snapping taut or slack; about {self.solve_cost() * 1e3:.2g} ms each over "
                f"{self.N} elements), more than the {self.work_limit:.3g} s of work the step may do")
        n = diag.shape[0]
        if bend is not None:
            return self._solve_bending(diag, off, rhs, bend)
        _, d_src, d_dst, o_dst = self._band_index(n)
        flat = np.zeros(18 * n)
        flat[d_dst] = diag.reshape(-1)[d_src]
        if n > 1:
            flat[o_dst] = off.reshape(-1)
        ab = flat.reshape((6, 3 * n), order="F")      # Fortran order: LAPACK takes it as is
        # LAPACK's banded Cholesky directly: scipy's wrapper costs more than the solve here
        _, x, info = dpbsv(ab, rhs.reshape(-1, 1), lower=0, overwrite_ab=1, overwrite_b=0)
        if info == 0:
            return x.reshape(n, 3)
        A = self._dense(diag, off)
        return np.linalg.solve(A, rhs.ravel()).reshape(n, 3)

    @staticmethod
    def _dense(diag: np.ndarray, off: np.ndarray) -> np.ndarray:
        n = diag.shape[0]
        A = np.zeros((3 * n, 3 * n))
        for a in range(3):
            for b in range(3):
                A[a::3, b::3] += np.diag(diag[:, a, b])
                if n > 1:
                    A[a::3, b::3][np.arange(n - 1), np.arange(1, n)] += off[:, a, b]
                    A[a::3, b::3][np.arange(1, n), np.arange(n - 1)] += off[:, b, a]
        return A

    def _solve_bending(self, diag: np.ndarray, off: np.ndarray, rhs: np.ndarray, c: float) -> np.ndarray:
        """(A + c K_b) x = rhs, A block-tridiagonal, K_b = (D^T S^-1 D + D^T S^-T D) / 2 the
        spline's bending stiffness (components/rod.py: S, D tridiagonal, S^-1 dense), as the banded
        system of x with y1 = S^-1 D x and y2 = S^-T D x:

            A x + c/2 D^T (y1 + y2) = rhs,   S y1 - D x = 0,   S^T y2 - D x = 0

        unknowns ordered node by node (x_i, y1_i, y2_i: 9 a node, x pinned to 0 at the end nodes
        that are not dynamic), block-tridiagonal with 9 x 9 blocks: banded LU, O(N) where the
        dense K_b would cost O(N^3) (a 2000-element line: 7e10 operations a solve) and go through
        multi-threaded BLAS, which on a loaded machine takes seconds for a 150 x 150 Cholesky."""
        bend, d = self._bend, self._dyn
        n = bend.n
        S, lo, di, up = bend._S, bend._lo, bend._di, bend._up
        Dg, Up, Lo = np.zeros((n, 9, 9)), np.zeros((n - 1, 9, 9)), np.zeros((n - 1, 9, 9))
        e = np.eye(3)
        X, Y1, Y2 = slice(0, 3), slice(3, 6), slice(6, 9)
        # x rows: A, and c/2 D^T (y1 + y2) (D[j, i]: j = i -> di, j = i + 1 -> lo[i + 1], j = i - 1 -> up[i - 1])
        Dg[:, X, X] = e
        Dg[d, X, X] = diag
        k = np.arange(d.start, d.stop - 1)
        Up[k, X, X] = off
        Lo[k, X, X] = off.transpose(0, 2, 1)
        i = np.arange(d.start, d.stop)
        half = 0.5 * c
        for Y in (Y1, Y2):
            Dg[i, X, Y] = (half * di[i])[:, None, None] * e
            iu = i[i + 1 < n]
            Up[iu, X, Y] = (half * lo[iu + 1])[:, None, None] * e
            il = i[i >= 1]
            Lo[il - 1, X, Y] = (half * up[il - 1])[:, None, None] * e
            # -D x: D[i, i] = di, D[i, i + 1] = up[i], D[i, i - 1] = lo[i]
            Dg[:, Y, X] = -di[:, None, None] * e
            Up[:, Y, X] = -up[:-1, None, None] * e
            Lo[:, Y, X] = -lo[1:, None, None] * e
        # S y1: S[i, i] = S[1, i], S[i, i + 1] = S[0, i + 1], S[i, i - 1] = S[2, i - 1]; S^T y2 the transpose
        Dg[:, Y1, Y1] = S[1][:, None, None] * e
        Up[:, Y1, Y1] = S[0, 1:, None, None] * e
        Lo[:, Y1, Y1] = S[2, :-1, None, None] * e
        Dg[:, Y2, Y2] = S[1][:, None, None] * e
        Up[:, Y2, Y2] = S[2, :-1, None, None] * e
        Lo[:, Y2, Y2] = S[0, 1:, None, None] * e
        rows, cols = self._bending_band_index(n)
        ab = np.zeros((35, 9 * n))
        ab[rows, cols] = np.concatenate([Dg.reshape(-1), Up.reshape(-1), Lo.reshape(-1)])
        b = np.zeros((n, 9))
        b[d, X] = rhs
        try:
            x = solve_banded((17, 17), ab, b.reshape(-1), overwrite_ab=True, check_finite=False)
        except (LinAlgError, ValueError):
            return np.full_like(rhs, np.nan)   # singular: the step's output check names what became NaN
        return x.reshape(n, 9)[d, X]

    def _bending_band_index(self, n: int):
        """Where the 9 x 9 blocks of _solve_bending go in the (35, 9n) band storage of
        solve_banded((17, 17)): ab[17 + r - c, c] = M[r, c], nonzero entries only."""
        if self._bending_band_cache is None or self._bending_band_cache[0] != n:
            a, b = np.meshgrid(np.arange(9), np.arange(9), indexing="ij")
            k = np.arange(n)[:, None, None]
            ko = np.arange(n - 1)[:, None, None]
            r = np.concatenate([(9 * k + a).ravel(), (9 * ko + a).ravel(), (9 * ko + 9 + a).ravel()])
            c = np.concatenate([(9 * k + b).ravel(), (9 * ko + 9 + b).ravel(), (9 * ko + b).ravel()])
            self._bending_band_cache = (n, 17 + r - c, c)
        return self._bending_band_cache[1:]

    def _implicit_step(self, r: np.ndarray, v: np.ndarray, t: float, h: float,
                       va: np.ndarray, vb: np.ndarray, dl: tuple = (0.0, 0.0),
                       depth: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """One theta-method step (module docstring).  The first iterate is the linearly implicit
        step; if an element changes between slack and taut during it (a snap), Newton iterations
        on  M dv = h F(x + th dx, v + th dv)  follow at the theta point, and if they do not
        converge the step is split in two (up to 16 pieces).  ``dl``: the rest-length increments
        of the winch elements at ends A and B over the step."""
        p, th, d = self.p, self.theta, self._dyn
        grows = [(e, x) for e, x in ((0, dl[0]), (self.N - 1, dl[1])) if x]

        def lengthen(factor):
            for e, x in grows:
                self.l[e] += factor * x

        def ends(x, xd, tau):
            x[0], xd[0] = r[0] + va * tau, va
            if not self.free_b:
                x[-1], xd[-1] = r[-1] + vb * tau, vb

        def solve(F, v_eval):
            diag, off, Kv = self._jacobian_blocks(v_eval, th * h, (th * h) ** 2)
            extra = None
            if self._bend is not None and (p.EI > 0 or p.bending_damping > 0):
                Kb = self._bend.K
                Kv += p.EI * (Kb @ v_eval)
                extra = (th * h) ** 2 * p.EI + th * h * p.bending_damping
            return diag, off, extra, Kv

        F = self._forces(r, v, t, jac=True)
        taut0 = self._j["T"] > 0.0
        j0 = self._j                 # the mass at the start of the step, for a snap (below)
        diag, off, extra, Kv = solve(F, v)
        for e_w, x in grows:
            # the winch element's rest length grows by dl over the step: add th dF/dl dl to the
            # force (dT/dl = -dT/dlambda lambda / l) so a taut wire follows the pay-out smoothly
            # instead of going slack for a step and snapping back
            j = self._j
            dT = -j["kax"][e_w] * j["lam"][e_w] / self.l[e_w] * x
            dF = th * dT * j["q"][e_w]       # F is this step's own array: changed in place
            F[e_w] += dF
            F[e_w + 1] -= dF
        dv = self._solve(diag[d], off[d.start:d.stop - 1], h * (F[d] - th * h * Kv[d]), extra)

        def advance(dv):
            rn, vn = r.copy(), v.copy()
            rn[d] = r[d] + h * (v[d] + th * dv)
            vn[d] = v[d] + dv
            ends(rn, vn, h)
            return rn, vn

        rn, vn = advance(dv)
        d1 = rn[1:] - rn[:-1]
        lam1 = np.sqrt(_einsum("ij,ij->i", d1, d1))
        taut1 = lam1 > self.l
        if self.p.compression > 0.0 or taut0.tobytes() == taut1.tobytes():
            return rn, vn
        # only snaps that matter: an element that picks up, or drops, more than 0.1 % of the
        # largest tension (grounded chain links flicker around zero strain harmlessly)
        flip = taut0 != taut1
        T0 = self._j["T"]
        jump = np.where(taut1, self.p.EA * (lam1 / self.l - 1.0), T0)[flip]
        if np.max(jump) <= 1e-3 * max(float(np.max(T0)), float(np.max(self.m_node)) * self.p.g):
            return rn, vn
        # snap: Newton at the theta point
        M = self._mass_blocks(j0["qh"], j0["ma_n"], j0["ma_t"])[d]
        lengthen(th)
        try:
            for _ in range(8):
                x_th, v_th = r.copy(), v.copy()
                x_th[d] = r[d] + th * (rn[d] - r[d])
                v_th[d] = v[d] + th * dv
                ends(x_th, v_th, th * h)
                G = self._forces(x_th, v_th, t + th * h, jac=True)
                diag, off, extra, _ = solve(G, v_th)
                resid = h * G[d] - np.einsum("nab,nb->na", M, dv)
                delta = self._solve(diag[d], off[d.start:d.stop - 1], resid, extra)
                dv = dv + delta
                rn, vn = advance(dv)
                if np.max(np.abs(delta)) <= 1e-9 + 1e-6 * np.max(np.abs(dv)):
                    return rn, vn
        finally:
            lengthen(-th)
        if depth >= 4 or not np.all(np.isfinite(rn)):
            return rn, vn
        # not converged: two half steps
        hh = 0.5 * h
        half = (0.5 * dl[0], 0.5 * dl[1])
        r1, v1 = self._implicit_step(r, v, t, hh, va, vb, half, depth + 1)
        lengthen(0.5)
        try:
            return self._implicit_step(r1, v1, t + hh, hh, va, vb, half, depth + 1)
        finally:
            lengthen(-0.5)

    # ------------------------------------------------------------------ statics
    def static_equilibrium(self, max_iter: int = 200, tol: float = 1e-9) -> float:
        """Move the dynamic nodes to the static equilibrium at rest (velocities zeroed).

        Newton's method x += (K + mu M)^-1 F(x) with the implicit step's stiffness K (friction and
        drag vanish at rest) and a vanishing regularisation mu; it converges in a few iterations
        from the catenary, and for a nearly inextensible beam under a large tip load (the first
        step overstretches, the geometric stiffness then pulls it back).  If Newton has not
        converged after 30 iterations (slack lines: K singular), pseudo-transient continuation
        with switched evolution relaxation (Kelley & Keyes 1998) takes over from the best point:
        mu scaled by |F_new| / |F_old| each iteration, a damped pseudo-time march turning into
        Newton.  Returns max |F| over the dynamic nodes relative to the largest node weight (or
        1e-9 EA); the shape is kept only if it improved.  The iterations stop at STATIC_WORK
        seconds of estimated work (:meth:`solve_cost`): the dynamics settle what is left.
        """
        p, d = self.p, self._dyn
        self.v[:] = 0.0
        scale = max(float(np.max(self.m_node)) * p.g, 1e-9 * p.EA, 1e-12)
        mu0 = p.EA / (p.mass_per_length * self.l0 ** 2)       # ~ (highest axial frequency)^2 / 4
        start = self.r.copy()
        F0 = self._forces(start, self.v, self.t, jac=True)
        err0 = float(np.max(np.abs(F0[d]))) / scale
        best, best_err = start, err0

        def iterate(r, mu, n_iter, ser):
            nonlocal best, best_err
            F = self._forces(r, self.v, self.t, jac=True)
            res = float(np.linalg.norm(F[d]))
            for _ in range(n_iter):
                if best_err < tol:
                    return
                diag, off, _ = self._jacobian_blocks(self.v, 0.0, 1.0, mass=False, statics=True)
                diag += mu * self._mass_blocks(self._j["qh"], self._j["ma_n"], self._j["ma_t"])
                extra = p.EI if (self._bend is not None and p.EI > 0) else None
                dx = self._solve(diag[d], off[d.start:d.stop - 1], F[d], extra)
                trial = r.copy()
                trial[d] += dx
                Ft = self._forces(trial, self.v, self.t, jac=True)
                rt = float(np.linalg.norm(Ft[d]))
                if not np.isfinite(rt) or (ser and rt > 10.0 * res):
                    if not ser:
                        return
                    mu *= 100.0                                  # too bold: back off
                    self._forces(r, self.v, self.t, jac=True)
                    if mu > 1e6 * mu0:
                        return
                    continue
                if ser:
                    mu = min(max(mu * rt / max(res, 1e-300), 1e-12 * mu0), 1e6 * mu0)
                r, F, res = trial, Ft, rt
                err = float(np.max(np.abs(F[d]))) / scale
                if err < best_err:
                    best, best_err = r.copy(), err

        # the iterations within STATIC_WORK of estimated work (a long line with bending: 60 ms each)
        budget = max(20, int(STATIC_WORK / self.solve_cost()))
        iterate(start.copy(), 1e-12 * mu0, min(30, budget // 2), ser=False)
        if best_err >= tol:
            iterate(best.copy(), 1e-3 * mu0, min(max_iter, budget - min(30, budget // 2)), ser=True)
        self.r = best
        self._forces(self.r, self.v, self.t)
        return best_err

    # ------------------------------------------------------------------ winch
    def _winch_element(self, end: str) -> int:
        return 0 if end == "a" else self.N - 1

    def _payout(self, h: float) -> None:
        """Grow or shrink each winch element by u h; split or merge elements (module docstring).
        A haul-in longer than the winch element merges as many elements as it needs; the line
        never gets shorter than 2 elements with a winch element of 0.05 l0 (length_limited)."""
        self.length_limited = False
        for end in self.winch_ends:
            if self.payout[end] != 0.0:
                self._payout_end(end, h)

    def _payout_end(self, end: str, h: float) -> None:
        e = self._winch_element(end)
        lw = self.l[e] + self.payout[end] * h
        floor = 0.05 * self.l0
        while lw < 0.4 * self.l0 and self.N > 2:
            self.l[e] = lw
            self._merge(end)
            e = self._winch_element(end)
            lw = self.l[e]
        if lw < floor:
            lw, self.length_limited = floor, True
        self.l[e] = lw
        if lw > 1.6 * self.l0 and self.N < self.max_segments:
            self._split(end)
        else:
            self._geometry_changed_fast()
        if lw > 1.6 * self.l0 and self.N >= self.max_segments:
            self.length_limited = True

    def _geometry_changed_fast(self) -> None:
        """Only the winch element's length changed: update the entries of the node shares,
        masses, added-mass factors and damping that depend on it (the same formulas as
        _geometry_changed, entry by entry); with a rod, or a changed N, everything."""
        if self._bend is not None or self.l_node.size != self.l.size + 1 or self.N != self.l.size:
            self._geometry_changed()
            return
        p, l, N = self.p, self.l, self.N
        for e, i in ((e, i) for end in self.winch_ends for e in (self._winch_element(end),) for i in (e, e + 1)):
            if i == 0:
                self.l_node[0] = 0.5 * l[0]
            elif i == N:
                self.l_node[N] = 0.5 * l[-1]
            else:
                self.l_node[i] = 0.5 * (l[i - 1] + l[i])
            self.m_node[i] = p.mass_per_length * self.l_node[i]
            if self.free_b and i == N:
                self.m_node[i] += self.tip_mass
            self._man_l[i] = p.Can * self._rhoA * self.l_node[i]
            self._mat_l[i] = p.Cat * self._rhoA * self.l_node[i]
            self._rhoA_l[i] = self._rhoA * self.l_node[i]
            if p.damping < 0:
                self.c_el[e] = -p.damping * l[e] * math.sqrt(p.EA * p.mass_per_length)

    def _split(self, end: str) -> None:
        e = self._winch_element(end)
        l0, lw = self.l0, self.l[e]
        if end == "b":                  # element e = (N-1, N): new node l0 from node N-1
            i, j, frac = e, e + 1, l0 / lw
            new_l = (l0, lw - l0)
        else:                           # element 0 = (0, 1): new node l0 from node 1
            i, j, frac = 1, 0, l0 / lw
            new_l = (lw - l0, l0)
        rn = self.r[i] + frac * (self.r[j] - self.r[i])
        # the material velocity of the new node: the element's points also stream away from the
        # drum at the pay-out speed (d/dt of r_j + (s/l)(r_i - r_j) with s' = l' = u); the chord
        # interpolation alone reads as stretching of the new element (a tension spike at each split)
        vn = self.v[i] + frac * (self.v[j] - self.v[i]) + frac * self.payout[end] * (self.r[i] - self.r[j]) / lw
        pos = e + 1
        self.r = np.insert(self.r, pos, rn, axis=0)
        self.v = np.insert(self.v, pos, vn, axis=0)
        self.l = np.concatenate([self.l[:e], new_l, self.l[e + 1:]])
        self._geometry_changed()

    def _merge(self, end: str) -> None:
        if end == "b":                  # drop node N-1: elements N-2 and N-1 become one
            drop, keep = self.N - 1, slice(None, self.N - 2)
            self.l = np.concatenate([self.l[keep], [self.l[-2] + self.l[-1]]])
        else:                           # drop node 1
            drop = 1
            self.l = np.concatenate([[self.l[0] + self.l[1]], self.l[2:]])
        self.r = np.delete(self.r, drop, axis=0)
        self.v = np.delete(self.v, drop, axis=0)
        self._geometry_changed()

    # ------------------------------------------------------------------ public API
    def set_ends(self, anchor_pos: np.ndarray, anchor_vel: np.ndarray,
                 fairlead_pos: np.ndarray | None = None, fairlead_vel: np.ndarray | None = None) -> None:
        """Prescribe end A (and end B unless it is free), NED, at the current time; they move
        with these velocities during step()."""
        self.r[0] = _vector3(anchor_pos)
        self.va = _vector3(anchor_vel).copy()
        self.v[0] = self.va
        if not self.free_b and fairlead_pos is not None:
            self.r[-1] = _vector3(fairlead_pos)
            self.vb = _vector3(fairlead_vel).copy()
            self.v[-1] = self.vb

    def set_end_tangents(self, t_a: np.ndarray | None = None, t_b: np.ndarray | None = None) -> None:
        """Line direction (NED, pointing from end A towards end B) at clamped ends; zero: unchanged."""
        # a zero vector keeps the present tangent (the FMU's default: the initial geometry's)
        if t_a is not None and any(_vector3(t_a).tolist()):       # NaN counts as non-zero, as in count_nonzero
            self.t_a = self._unit(_vector3(t_a))
        if t_b is not None and any(_vector3(t_b).tolist()):
            self.t_b = self._unit(_vector3(t_b))

    def set_end_attitudes(self, R_a: np.ndarray | None = None, w_a: np.ndarray | None = None,
                          R_b: np.ndarray | None = None, w_b: np.ndarray | None = None) -> None:
        """Attitude (rotation matrix, body axes -> NED) and angular velocity (NED) [rad/s] of the
        bodies ends A and B are fixed to (``attitude_a/b``), at the current time; they turn at
        these rates during step()."""
        for end, R, w in (("a", R_a, w_a), ("b", R_b, w_b)):
            if R is not None:
                self._R[end] = np.asarray(R, dtype=float).reshape(3, 3).copy()
                self._w[end] = np.zeros(3) if w is None else np.asarray(w, dtype=float).reshape(3).copy()
        self._att_t = self.t

    def start_moving(self) -> None:
        """Give the line the motion of its ends instead of rest: node velocities interpolated
        between the end velocities along the unstretched length (a rigid translation when both
        ends move alike).  Ends moving alike through the water first settle the line on its steady
        shape in their frame (the static equilibrium with the relative current), so a line towed
        at constant speed starts without a transient."""
        va, vb = self.va, (self.vb if not self.free_b else self.va)
        if np.allclose(va, vb, rtol=0.0, atol=1e-9 * max(1.0, float(np.max(np.abs(va))))) and va.any():
            current = self.current
            self.current = current - va
            try:
                if self.current_profile is None and self.sea is None:
                    self.static_equilibrium()
            finally:
                self.current = current
        s = np.concatenate([[0.0], np.cumsum(self.l)]) / float(np.add.reduce(self.l))
        self.v = va[None, :] + s[:, None] * (vb - va)[None, :]
        self.v[0] = self.va
        if not self.free_b:
            self.v[-1] = self.vb

    def set_end_twist(self, phi_a: float = 0.0, phi_b: float = 0.0) -> None:
        """Rotation of the end fittings about the line axis [rad] (torsion, both ends held)."""
        self.phi_a, self.phi_b = float(phi_a), float(phi_b)

    def set_tip_force(self, force: np.ndarray) -> None:
        """Point force on a free end B (NED) [N]."""
        self.tip_force = np.asarray(force, dtype=float).reshape(3).copy()

    def set_payout(self, speed: float, end: str | None = None) -> None:
        """Winch pay-out speed [m/s] (> 0 pays out, < 0 hauls in) at ``end`` (default: the one
        winch end)."""
        if end is None:
            if len(self.winch_ends) > 1:
                raise ValueError("this line has winches at both ends: say which end pays out")
            if not self.winch_ends:
                if speed != 0.0:
                    raise ValueError("this line has no winch end (winch_end=None)")
                return
            end = self.winch_ends[0]
        if end not in self.winch_ends:
            raise ValueError(f"end {end!r} has no winch (winch_end={self.winch_end!r})")
        self.payout[end] = float(speed)

    @property
    def payout_speed(self) -> float:
        """Pay-out speed of the one winch end (the sum of both ends' with two winches) [m/s]."""
        return sum(self.payout.values())

    def solve_cost(self) -> float:
        """Estimated CPU seconds of one sub-step's work [s]: one linear solve with its force and
        Jacobian evaluation (implicit), or the scheme's 2 or 4 force evaluations (explicit).  Per
        node, plus the dense spline operators' matrix products (components/rod.py, O(n^2)) with
        bending or torsion; fitted on a 2020s x86-64 core, numpy reference (the compiled kernel
        is faster).  For bounds on the work of one call, not for benchmarks."""
        n = self.N + 1
        rod = self._bend is not None
        if self.scheme == "implicit":
            return 5e-4 + 1e-5 * n + 1e-8 * n * n if rod else 2e-4 + 1e-6 * n
        per_eval = 5e-5 + 5e-7 * n + (1e-8 * n * n if rod else 0.0)
        return (2 if self.scheme == "rk2" else 4) * per_eval

    def step_cost(self, dt: float, substep: float | None = None) -> tuple[int, float]:
        """The sub-steps ``step(dt, substep)`` takes and its estimated work [s] (one solve a
        sub-step; iterations on snaps come on top, bounded by :attr:`work_limit`)."""
        h_max = self.substep if substep is None else float(substep)
        n = max(1, int(math.ceil(dt / h_max - 1e-9)))
        return n, n * self.solve_cost()

    def step(self, dt: float, substep: float | None = None) -> None:
        """Advance by dt [s] with n = ceil(dt / substep) equal sub-steps.  With
        :attr:`work_limit` set, raises :class:`LineWorkExceeded` once the step's linear solves
        exceed it (the state is then part-way through the step)."""
        h_max = self.substep if substep is None else float(substep)
        n = max(1, int(math.ceil(dt / h_max - 1e-9)))
        h = dt / n
        self._step_solves = self.solves
        self.step_outputs = None
        # the loads of the step's end state from the kernel's last call (Line.end_loads's
        # condition for the kernel: a uniform current)
        loads = self._outputs_bound and self.sea is None and self.current_profile is None
        if self._compiled is not None and not any(self.payout[end] for end in self.winch_ends):
            self._compiled_steps(h, n, loads=loads)          # no pay-out: all sub-steps in the kernel
            n = 0
        elif self._compiled is not None and self._compiled.payout_in_place(self):
            self._compiled_payout_steps(h, n, loads)   # pay-out: the sub-steps and their pay-out in the kernel
            n = 0
        for _ in range(n):
            self._payout_substep(h)
        if self.twist is not None:
            q = self._tangents(self.r)
            self.twist.accept(q, self.twist.total_twist(q, self.phi_a, self.phi_b, *self._end_references(q, self.t)))
        # ends fixed to bodies turned with them over the step: their attitudes at its end
        for end in ("a", "b"):
            if self.attitude[end]:
                self._R[end] = np.array(self._body_floats(end, _AXES, self.t)).T.copy()     # columns
        self._att_t = self.t

    def _payout_substep(self, h: float) -> None:
        """One sub-step of a line whose winch may pay out: the step with the rest-length increments
        and the pay-out (a haul-in that would eat the winch element merges first)."""
        dl = self._payout_increment(h) if self.scheme == "implicit" else None
        if dl is not None:
            self._substep(h, dl)
            self._payout(h)
        else:
            self._payout(h)
            self._substep(h)

    def _compiled_payout_steps(self, h: float, n: int, loads: bool = False) -> None:
        """n sub-steps of h with the winch paying out, as _payout_substep takes them, in as few
        kernel calls as the fluid allows: the kernel grows the winch elements (components/kernels/
        line.c); a split, merge or length limit is _payout's after the kernel's step, and a step
        the kernel leaves (a snap in waves, a haul-in eating the winch element) _payout_substep's.
        loads: as _compiled_steps.  Called right after payout_in_place (whose binding the first
        kernel call keeps)."""
        PAYOUT_AFTER = self._compiled.PAYOUT_AFTER
        bound = True
        while n > 0:
            U, Af, zs, k = self._fluid_batch(n)
            done, rc = self._compiled.run(self, h, k, None, U, Af, zs, loads, bound)
            bound = False
            self.step_outputs = self._compiled.summary if loads and not rc else None
            if done:
                self.length_limited = False                # _payout's, for the kernel's steps
            for _ in range(done):
                self.t = self.t + h
            n -= done
            if rc == PAYOUT_AFTER:
                self._payout(h)                            # the last step's split, merge or limit
            elif rc:
                self._payout_substep(h)
                n -= 1

    def _payout_increment(self, h: float) -> tuple[float, float] | None:
        """Rest-length increments of the winch elements at ends A and B over a sub-step, as
        _payout will apply them; None when a haul-in would eat a whole winch element (then
        _payout merges elements first; splits and ordinary merges happen after the step)."""
        out = [0.0, 0.0]
        for k, end in enumerate(("a", "b")):
            u = self.payout[end] if end in self.winch_ends else 0.0
            if u != 0.0:
                e = self._winch_element(end)
                lw = self.l[e] + u * h
                if lw < 0.05 * self.l0:
                    return None
                out[k] = lw - self.l[e]
        return out[0], out[1]

    def _substep(self, h: float, dl: tuple = (0.0, 0.0)) -> None:
        t, r, v, va, vb = self.t, self.r, self.v, self.va, self.vb
        d = self._dyn

        def ends(x, xd, tau):
            x, xd = x.copy(), xd.copy()
            x[0], xd[0] = r[0] + va * tau, va
            if not self.free_b:
                x[-1], xd[-1] = r[-1] + vb * tau, vb
            return x, xd

        if self.scheme == "implicit" and self._compiled is not None:
            self._compiled_steps(h, 1, dl)
            return
        if self.scheme == "implicit":
            self.r, self.v = self._implicit_step(r, v, t, h, va, vb, dl)
        elif self.scheme == "rk2":
            hh = 0.5 * h
            a1 = self._accel(r, v, t)
            x2, v2 = ends(r, v, hh)
            x2[d] = r[d] + hh * v[d]
            v2[d] = v[d] + hh * a1
            a2 = self._accel(x2, v2, t + hh)
            rn, vn = ends(r, v, h)
            rn[d] = r[d] + h * v2[d]
            vn[d] = v[d] + h * a2
            self.r, self.v = rn, vn
        else:
            hh = 0.5 * h
            # the stage velocities are copies: d is a slice, and xd is overwritten stage by stage
            k1v, k1a = v[d].copy(), self._accel(r, v, t)
            x, xd = ends(r, v, hh)
            x[d], xd[d] = r[d] + hh * k1v, v[d] + hh * k1a
            k2v, k2a = xd[d].copy(), self._accel(x, xd, t + hh)
            x[d], xd[d] = r[d] + hh * k2v, v[d] + hh * k2a
            k3v, k3a = xd[d].copy(), self._accel(x, xd, t + hh)
            x, xd = ends(r, v, h)
            x[d], xd[d] = r[d] + h * k3v, v[d] + h * k3a
            k4v, k4a = xd[d].copy(), self._accel(x, xd, t + h)
            rn, vn = ends(r, v, h)
            rn[d] = r[d] + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
            vn[d] = v[d] + h / 6 * (k1a + 2 * k2a + 2 * k3a + k4a)
            self.r, self.v = rn, vn
        self.t = t + h

    # ------------------------------------------------------------------ outputs
    def node_forces(self) -> np.ndarray:
        """Net non-inertial force on every node (N+1, 3) at the current state [N], NED."""
        return self._forces(self.r, self.v, self.t)

    def fairlead_force(self) -> np.ndarray:
        """Force the line exerts ON end B [N], NED: end tension plus the end node's share of the
        weight, drag, seabed and bending shear (the massless end node passes them on)."""
        return self.node_forces()[-1]

    def anchor_force(self) -> np.ndarray:
        """Force the line exerts ON end A [N], NED (as ``fairlead_force``)."""
        return self.node_forces()[0]

    def end_moments(self) -> tuple[np.ndarray, np.ndarray]:
        """Moments the line exerts ON ends A and B [N m], NED: bending at clamped ends, torsion
        GJ tau about the line axis when both ends hold the twist (components/rod.py)."""
        if self._bend is None:           # no bending, and no torsion (it needs the rod)
            return np.zeros(3), np.zeros(3)
        self._forces(self.r, self.v, self.t)
        return self._moments()

    def _moments(self) -> tuple[np.ndarray, np.ndarray]:
        # from the curvatures, tangents and twist of the last _forces call, at the present state
        p = self.p
        q = self._qT[0]
        ma, mb = np.zeros(3), np.zeros(3)
        if self._k is not None and p.EI > 0:
            ta, tb = self._tab
            if self.clamped_a:
                ma += p.EI * cross(ta, self._k[0])
            if self.clamped_b:
                mb -= p.EI * cross(tb, self._k[-1])
        if self.twist is not None:
            tau = self._Theta / float(np.add.reduce(self.l))
            ma += p.GJ * tau * q[0]
            mb -= p.GJ * tau * q[-1]
        return ma, mb

    def twist_rate(self) -> float:
        """Uniform twist rate tau [rad/m] (0 unless both ends hold the twist)."""
        if self.twist is None:
            return 0.0
        self._forces(self.r, self.v, self.t)
        return self._Theta / float(np.add.reduce(self.l))

    def bind_step_outputs(self, force_a: np.ndarray, force_b: np.ndarray, tip_position: np.ndarray,
                          tip_velocity: np.ndarray) -> bool:
        """Have step() write, where its last sub-step ends, what end_loads() would give there into
        these arrays (float64, 3 each; kept until other arrays are bound): the forces on ends A and
        B, and end B's position and velocity (r[-1], v[-1]); then step_outputs holds the end
        elements' tensions (end A, end B), the largest tension and the fraction of slack elements
        (4 floats, the values of tensions()).  The compiled kernel does it, in the call that takes
        the sub-steps, for a line in a uniform current; after a step it did not,
        step_outputs is None.  Returns whether the kernel can (False: nothing is written)."""
        self._outputs_bound = self._compiled is not None and self._compiled.bind_outputs(
            force_a, force_b, tip_position, tip_velocity)
        return self._outputs_bound

    def end_loads(self) -> EndLoads:
        """What the outputs of a line read, at the present state, in one evaluation: the forces on
        ends A and B (``anchor_force``, ``fairlead_force``), the moments on them
        (``end_moments``), ``twist_rate`` and the element ``tensions``.  Without bending only the
        two end nodes are evaluated besides the tensions (_end_forces: the same values as
        node_forces())."""
        if self._compiled is not None and self.sea is None and self.current_profile is None:
            Fa, Fb, T = self._compiled.end_loads(self)          # the same values, compiled
            return EndLoads(Fa, Fb, np.zeros(3), np.zeros(3), 0.0, T)
        if self._bend is None:
            q, lam, T = self._tension_terms()
            Fa, Fb = self._end_forces(q, lam, T)
            return EndLoads(np.array(Fa), np.array(Fb), np.zeros(3), np.zeros(3), 0.0, T)
        F = self._forces(self.r, self.v, self.t)
        T = self._qT[1]          # _tension_terms' tensions: the same arithmetic on the same state
        ma, mb = self._moments()
        tau = 0.0 if self.twist is None else self._Theta / float(np.add.reduce(self.l))
        return EndLoads(F[0], F[-1], ma, mb, tau, T)

    def _end_forces(self, q: np.ndarray, lam: np.ndarray, T: np.ndarray) -> tuple[list, list]:
        """Rows 0 and N of _forces() at the present state, for a line without bending, given the
        element tangents, lengths and tensions (_tension_terms): the end element's tension plus
        the end node's weight, drag, fluid inertia, seabed (and tip force).

        The same formulas, in the same order of floating-point operations, as _forces, in
        Python floats: a line of a few elements spends its time in numpy's per-call overhead,
        and the outputs need two nodes, not N + 1 (tests/components/test_cable_speed_outputs.py checks
        that the values are the same as node_forces())."""
        p, N = self.p, self.N
        r, v = self.r, self.v
        four = [0, 1, N - 1, N]
        # fluid velocity and acceleration at the end nodes, surface at the end elements' nodes
        if self.current_profile is None and self.sea is None:
            U0 = UN = self.current.tolist()
            A0 = AN = None
            zs = None
        else:
            U, Af, zs = self._fluid(r[four], self.t)
            U = np.broadcast_to(U, (4, 3))
            U0, UN = U[0].tolist(), U[3].tolist()
            A0, AN = (None, None) if Af is None else (Af[0].tolist(), Af[3].tolist())
        # wet fraction of an end node: its element's submerged fraction (_wet_fraction)
        if p.rho_water <= 0:
            w0 = wN = 0.0
        else:
            trough = 0.0 if self.sea is None else float(np.sum(self.sea.amplitude))
            if float(r[:, 2].min()) >= trough:
                w0 = wN = 1.0
            else:
                h = r[four, 2] - (0.0 if zs is None else zs)
                h = h.tolist()
                dia = p.diameter

                def wet(h1, h2):
                    span = abs(h1) + abs(h2)
                    if span > dia:
                        return (max(h1, 0.0) + max(h2, 0.0)) / max(span, 1e-300)
                    return min(max(0.5 + (h1 + h2) / (2 * dia), 0.0), 1.0)

                w0, wN = wet(h[0], h[1]), wet(h[2], h[3])
        out = []
        for e, i, w, U, Af in ((0, 0, w0, U0, A0), (N - 1, N, wN, UN, AN)):
            q0, q1, q2 = q[e].tolist()
            lam_e, T_e = float(lam[e]), float(T[e])
            if i == 0:
                F0, F1, F2 = 0.0 + T_e * q0, 0.0 + T_e * q1, 0.0 + T_e * q2
            else:
                F0, F1, F2 = 0.0 - T_e * q0, 0.0 - T_e * q1, 0.0 - T_e * q2
            m, ln = float(self.m_node[i]), float(self.l_node[i])
            F2 += (m - w * self._rhoA * ln) * p.g
            # Morison drag with the end element's tangent
            vi = v[i].tolist()
            lbar = 0.5 * lam_e
            kdn = self._kdn * lbar * w
            u0, u1, u2 = U[0] - vi[0], U[1] - vi[1], U[2] - vi[2]
            uq = _dot3(u0, u1, u2, q0, q1, q2)
            t0, t1, t2 = uq * q0, uq * q1, uq * q2
            n0, n1, n2 = u0 - t0, u1 - t1, u2 - t2
            c = kdn * math.sqrt(_dot3(n0, n1, n2, n0, n1, n2))
            F0, F1, F2 = F0 + c * n0, F1 + c * n1, F2 + c * n2
            if self._kdt:
                c = self._kdt * lbar * w * math.sqrt(_dot3(t0, t1, t2, t0, t1, t2))
                F0, F1, F2 = F0 + c * t0, F1 + c * t1, F2 + c * t2
            if Af is not None:
                ma_n = p.Can * self._rhoA * ln * w
                ma_t = p.Cat * self._rhoA * ln * w
                fk = self._rhoA * ln * w
                aq = _dot3(Af[0], Af[1], Af[2], q0, q1, q2)
                a0, a1, a2 = aq * q0, aq * q1, aq * q2
                F0 += fk * Af[0] + ma_n * (Af[0] - a0) + ma_t * a0
                F1 += fk * Af[1] + ma_n * (Af[1] - a1) + ma_t * a1
                F2 += fk * Af[2] + ma_n * (Af[2] - a2) + ma_t * a2
            pen = r[i, 2].item() - self.seabed_depth
            if pen > 0.0:
                Fn = p.kBot * pen + p.cBot * vi[2]
                Fn = max(Fn, 0.0) * p.diameter * ln
                F2 -= Fn
                vhm = math.sqrt(vi[0] * vi[0] + vi[1] * vi[1])
                fmag = p.friction_damping * vhm if p.friction_damping * vhm < p.friction * Fn else p.friction * Fn
                c = fmag / max(vhm, 1e-300)
                F0, F1 = F0 - c * vi[0], F1 - c * vi[1]
            if self.free_b and i == N:
                tf = self.tip_force.tolist()
                F0, F1, F2 = F0 + tf[0], F1 + tf[1], F2 + tf[2]
            out.append([F0, F1, F2])
        return out[0], out[1]

    def tensions(self) -> np.ndarray:
        """Element tensions (N,) [N], end A first, >= 0."""
        return self._tension_terms()[2]

    def _tension_terms(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # element tangents, lengths and tensions at the present state, as _forces has them
        q, lam = _unit_rows(self.r[1:] - self.r[:-1])
        return q, lam, self._axial(lam, _einsum("ij,ij->i", self.v[1:] - self.v[:-1], q), stiffness=False)[0]

    @property
    def length(self) -> float:
        """Present unstretched length [m]."""
        return float(self.l.sum())

    @property
    def mass(self) -> float:
        """Structural mass of the line [kg] (without a tip mass)."""
        return float(self.m_node.sum()) - (self.tip_mass if self.free_b else 0.0)

    @property
    def ra(self) -> np.ndarray:
        return self.r[0].copy()

    @property
    def rb(self) -> np.ndarray:
        return self.r[-1].copy()

    def node_positions(self) -> np.ndarray:
        """All N+1 node positions (NED), end A first (a copy)."""
        return self.r.copy()

    def node_velocities(self) -> np.ndarray:
        """All N+1 node velocities (NED), end A first (a copy)."""
        return self.v.copy()

    def curvatures(self) -> np.ndarray:
        """Spline curvature vectors r'' at the nodes (N+1, 3) [1/m] (zeros without bending)."""
        if self._bend is None:
            return np.zeros_like(self.r)
        return self._bend.curvature(self.r, *self._end_tangents(self.t))

    def get_state(self) -> dict:
        """Copy of the full state (time, nodes, element lengths, end motion, twist memory)."""
        s = {"t": self.t, "r": self.r.copy(), "v": self.v.copy(), "l": self.l.copy(),
             "va": self.va.copy(), "vb": self.vb.copy(), "rb": self.r[-1].copy(),
             "payout": np.array([self.payout["a"], self.payout["b"]]), "tip_force": self.tip_force.copy(),
             "t_a": self.t_a.copy(), "t_b": self.t_b.copy(), "phi": np.array([self.phi_a, self.phi_b]),
             "att_t": self._att_t}
        for end in ("a", "b"):
            if self.attitude[end]:
                s[f"R_{end}"], s[f"w_{end}"] = self._R[end].copy(), self._w[end].copy()
                if self._t_body[end] is not None:
                    s[f"t_body_{end}"] = self._t_body[end].copy()
                if self._m_body[end] is not None:
                    s[f"m_body_{end}"] = self._m_body[end].copy()
        if self.twist is not None:
            s["twist"] = self.twist.get_state()
        return s

    def set_state(self, state: dict) -> None:
        """Restore a state from get_state (copied in)."""
        self.t = float(state["t"])
        for k in ("r", "v", "l", "va", "vb", "tip_force", "t_a", "t_b"):
            setattr(self, k, np.array(state[k], dtype=float, copy=True))
        payout = np.atleast_1d(np.asarray(state["payout"], dtype=float))
        if payout.size == 1:       # a state of a one-winch line
            payout = np.array([payout[0], 0.0]) if self.winch_end == "a" else np.array([0.0, payout[0]])
        self.payout = {"a": float(payout[0]), "b": float(payout[1])}
        self.phi_a, self.phi_b = (float(x) for x in state["phi"])
        self._att_t = float(state.get("att_t", self.t))
        for end in ("a", "b"):
            if f"R_{end}" in state:
                self._R[end] = np.array(state[f"R_{end}"], dtype=float)
                self._w[end] = np.array(state[f"w_{end}"], dtype=float)
            for key, store in (("t_body", self._t_body), ("m_body", self._m_body)):
                store[end] = np.array(state[f"{key}_{end}"], dtype=float) if f"{key}_{end}" in state else None
        if self.twist is not None and "twist" in state:
            self.twist.set_state(state["twist"])
        self._geometry_changed()
        self.step_outputs = None

    def state_is_finite(self) -> bool:
        return bool(np.all(np.isfinite(self.r)) and np.all(np.isfinite(self.v)) and np.all(np.isfinite(self.l)))
