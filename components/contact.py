"""Contact forces between two convex bodies: the SMS API volume-of-interference normal force (or
Hunt-Crossley point contact) and stick-slip friction.  Pure numpy/scipy, no FMI.

Sources
-------
[SMS]  SMS API final report, contact resolution (sms_api_digest.md section 2.5): GJK, the
       interference polyhedron, the Kelvin-Voigt-Winkler volumetric normal force (eqs. 78-89),
       Karnopp friction (eqs. 90-92), the force applied at the interference centroid.
[HC75] K. H. Hunt & F. R. E. Crossley, "Coefficient of restitution interpreted as damping in
       vibroimpact", J. Appl. Mech. 42 (1975): f = K d^n (1 + 3 (1 - e)/2 * d'/v_impact); damping
       that vanishes with the penetration, so the force starts from zero at first contact.
[CS79] P. A. Cundall & O. D. L. Strack, "A discrete numerical model for granular assemblies",
       Geotechnique 29 (1979): the tangential spring with a Coulomb slider (stick-slip).

Normal force [SMS eqs. 83/87, 89]
---------------------------------
The SMS model is a Winkler bed of springs and dashpots along the contact normal n (GJK/EPA, from A
towards B): at a point x of the contact's footprint (the interference polyhedron's shadow on the
contact plane), where the bodies overlap by the thickness d(x) and approach at
ddot(x) = n . (u_A(x) - u_B(x)) (u_X the rigid velocity field v_X + w_X x (x - p_X)),

    p(x) = E_eff d(x) + p_d(x),        E_eff = E_A E_B / (h_B E_A + h_A E_B),
                                       B_eff = B_A B_B / (h_B B_A + h_A B_B),
    h_X = (3 Vol_X / (4 pi))^(1/3)     (the equivalent-sphere radius: the spring-bed depth).

The springs sum to E_eff V at the interference centroid [SMS eq. 87] (V = int d dA; the volume and
centroid from components/interference.py).  The dashpots are the report's B_eff dV/dt made
pointwise, with one bound:

    p_d(x) = B_eff ddot(x), limited to [-E_eff d(x), +E_eff d(x)]

* over the footprint with the exact velocity field, so rotation counts: a rocking or tumbling body
  is damped like a translating one.  The damping power int p_d ddot dA is never negative, for any
  motion (the report's B_eff dV/dt at the centroid's normal speed ignored rotation: a box landing
  on a corner kept 78 % of its kinetic energy and rocked on);
* bounded by the spring at the same point, the damping grows with the penetration from zero at
  first touch, Hunt-Crossley's remedy for a Kelvin-Voigt contact's force jump [HC75]: a face
  landing flat no longer meets the full face's dashpots at once (570 times the weight);
* from below, no point of the bed pulls (p >= 0 pointwise, where the report only clamps the total).
  Where B_eff ddot is within the bound (the contact established) this is the report's law.

The footprint integrals use the interference polyhedron's faces that face B (their shadows tile the
footprint), each cut in 9 triangles with the thickness d at their centroids (the chord of the
polyhedron along n).  The spring's share is exact; the quadrature error of the dashpots' cannot
make them push energy in.

Hunt-Crossley alternative [HC75]: f_n = K d^n (1 + 3 (1 - e) / 2 * d' / v_impact), d the EPA
penetration depth, v_impact the approach speed when the contact began (a state).

Friction [SMS eqs. 90-92, CS79]
-------------------------------
Karnopp's model needs the applied tangential force, which a contact FMU does not see.  The
equivalent used here is a tangential spring z at the contact with a Coulomb slider: z follows the
tangential sliding velocity, f_t = -k_t z - c_t v_t; if |f_t| > mu_s f_n the contact slips with
f_t = -mu_d f_n (direction of the trial force) and z is set back to the slider's limit.  k_t =
mu_s f_n / stick_distance (the tangential spring reaches the static limit after stick_distance of
creep, default 1 mm), c_t = k_t stick_time.  A block on an incline with mu_s > tan(theta) stays
put (the spring holds it); with mu_d < tan(theta) it slides at a = g (sin - mu_d cos).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.spatial import ConvexHull

from components.convex import Box, closest
from components.interference import MIN_RADIUS, interference

__all__ = ["ContactMaterial", "ContactParams", "ContactPair", "ContactResult", "footprint", "rotate_small"]


@dataclass(frozen=True)
class ContactMaterial:
    """Material of one body: Young's modulus E [Pa] and material damping B [Pa s] [SMS]."""

    E: float = 950e6
    B: float = 50e6


@dataclass(frozen=True)
class ContactParams:
    """Force laws of a pair (SI)."""

    model: str = "volume"              # "volume" [SMS] or "hunt_crossley" [HC75]
    bed_depth_a: float | None = None   # h_A [m]; None: equivalent-sphere radius of body A
    bed_depth_b: float | None = None
    hc_stiffness: float = 1e9          # K [N/m^n]
    hc_exponent: float = 1.5           # n
    restitution: float = 0.5           # e
    hc_min_impact_speed: float = 0.05  # [m/s]: floor of v_impact (a contact that starts at rest)
    mu_static: float = 0.3
    mu_dynamic: float = 0.3
    stick_distance: float = 1e-3       # [m]
    stick_time: float = 0.01           # c_t = k_t stick_time [s]: damps the stick spring
    tolerance: float = 1e-6            # zero-distance tolerance [m] (the report's 1 micron)

    def check(self) -> list[tuple[str, object, str]]:
        bad = []
        if self.model not in ("volume", "hunt_crossley"):
            bad.append(("model", self.model, "must be 'volume' or 'hunt_crossley'"))
        for name in ("hc_stiffness", "hc_exponent", "stick_distance", "hc_min_impact_speed"):
            val = getattr(self, name)
            if not (math.isfinite(val) and val > 0.0):
                bad.append((name, val, "must be a positive number"))
        for name in ("mu_static", "mu_dynamic", "stick_time", "tolerance"):
            val = getattr(self, name)
            if not (math.isfinite(val) and val >= 0.0):
                bad.append((name, val, "must be a non-negative number"))
        if not 0.0 <= self.restitution <= 1.0:
            bad.append(("restitution", self.restitution, "must be in [0, 1]"))
        for name in ("bed_depth_a", "bed_depth_b"):
            val = getattr(self, name)
            if val is not None and not (math.isfinite(val) and val > 0.0):
                bad.append((name, val, "must be a positive number (or None)"))
        return bad


@dataclass
class ContactResult:
    """Loads of one evaluation, world frame (NED): on A about A's reference point, on B about B's."""

    force_a: np.ndarray = field(default_factory=lambda: np.zeros(3))
    moment_a: np.ndarray = field(default_factory=lambda: np.zeros(3))
    force_b: np.ndarray = field(default_factory=lambda: np.zeros(3))
    moment_b: np.ndarray = field(default_factory=lambda: np.zeros(3))
    in_contact: bool = False
    distance: float = math.inf        # signed: < 0 is the penetration depth
    volume: float = 0.0               # interference volume [m^3]
    point: np.ndarray = field(default_factory=lambda: np.zeros(3))
    normal: np.ndarray = field(default_factory=lambda: np.zeros(3))
    normal_force: float = 0.0


def cross3(a, b) -> np.ndarray:
    """a x b of two 3-vectors: np.cross's formula (a1 b2 - a2 b1, ...) in Python floats, the same
    bits without np.cross's per-call overhead (tens of microseconds, a dozen calls an evaluation)."""
    a0, a1, a2 = a.tolist() if isinstance(a, np.ndarray) else a
    b0, b1, b2 = b.tolist() if isinstance(b, np.ndarray) else b
    return np.array((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0))


def _floats3(x) -> list:
    return x.tolist() if type(x) is np.ndarray else [float(c) for c in x]


def _dot(a, b) -> float:
    """a . b of two 3-vectors (lists): numpy's sum, left to right."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _cross3f(a, b) -> list:
    """cross3 on lists, a list out."""
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _relative_velocity(point, pa, va, wa, pb, vb, wb) -> list:
    """(va + wa x (point - pa)) - (vb + wb x (point - pb)) on lists of floats."""
    ua = _cross3f(wa, [point[0] - pa[0], point[1] - pa[1], point[2] - pa[2]])
    ub = _cross3f(wb, [point[0] - pb[0], point[1] - pb[1], point[2] - pb[2]])
    return [(va[i] + ua[i]) - (vb[i] + ub[i]) for i in range(3)]


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b along the last axis, broadcast (np.cross's formula and bits, less overhead)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0), axis=-1)


# barycentric coordinates of the centroids of a triangle cut in 9 (3 x 3), each of 1/9 of its area
_SUB = np.array([[(i + 1 / 3 + (k == 1) / 3), (j + 1 / 3 + (k == 1) / 3)]
                 for i in range(3) for j in range(3 - i) for k in range(2) if (k == 0 or i + j < 2)]) / 3.0


def footprint(vertices: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Quadrature of a convex polyhedron's shadow on the plane normal to n: points (on the
    polyhedron's faces that face +n), their weights (shadow areas) and the polyhedron's thickness
    along n there (module docstring).  Empty arrays for a flat or degenerate polyhedron."""
    none = (np.zeros((0, 3)), np.zeros(0), np.zeros(0))
    try:
        hull = ConvexHull(np.asarray(vertices, dtype=float))
    except Exception:            # flat or degenerate interference: no footprint to speak of
        return none
    tri = hull.points[hull.simplices]
    # the facets' outward normals are qhull's equations (the simplices' vertex order is not)
    up = hull.equations[:, :3] @ n > 0.0
    if not up.any():
        return none
    tri = tri[up]
    shadow = np.abs(0.5 * _cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]) @ n)
    b = _SUB                     # (9, 2): x = v0 + b0 (v1 - v0) + b1 (v2 - v0)
    points = (tri[:, None, 0] + b[None, :, 0, None] * (tri[:, None, 1] - tri[:, None, 0])
              + b[None, :, 1, None] * (tri[:, None, 2] - tri[:, None, 0])).reshape(-1, 3)
    weights = np.repeat(shadow / len(b), len(b))
    # chord along n through each point: a . (x + s n) + c <= 0 for every face plane (a, c)
    a, c = hull.equations[:, :3], hull.equations[:, 3]
    an = a @ n
    rhs = -(points @ a.T + c)                       # (k, faces): s an <= rhs
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = rhs / an
    hi = np.min(np.where(an > 1e-12, bound, np.inf), axis=1)
    lo = np.max(np.where(an < -1e-12, bound, -np.inf), axis=1)
    thickness = np.maximum(hi - lo, 0.0)
    return points, weights, np.where(np.isfinite(thickness), thickness, 0.0)


def rotate_small(R: np.ndarray, omega: np.ndarray, dt: float) -> np.ndarray:
    """R advanced by a rotation of omega dt (world-frame angular velocity), Rodrigues."""
    phi = omega * dt
    a = float(np.linalg.norm(phi))
    if a == 0.0:
        return R
    k = phi / a
    K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return (np.eye(3) + math.sin(a) * K + (1.0 - math.cos(a)) * K @ K) @ R


class ContactPair:
    """Two convex shapes (components/convex.py) with their materials and the force laws."""

    def __init__(self, shape_a, shape_b, material_a: ContactMaterial, material_b: ContactMaterial,
                 params: ContactParams = ContactParams(), compiled: bool | None = None) -> None:
        """compiled: None evaluates two boxes under the volume model compiled
        (components/kernels/contact.c) if the kernels can be had, False never, True requires it."""
        bad = params.check()
        for name, mat in (("material_a", material_a), ("material_b", material_b)):
            if not (math.isfinite(mat.E) and mat.E > 0.0):
                bad.append((f"{name}.E", mat.E, "must be a positive number"))
            if not (math.isfinite(mat.B) and mat.B >= 0.0):
                bad.append((f"{name}.B", mat.B, "must be a non-negative number"))
        if bad:
            name, val, why = bad[0]
            raise ValueError(f"contact parameter {name} = {val!r} {why}")
        self.a, self.b, self.p = shape_a, shape_b, params
        ha = params.bed_depth_a or (3.0 * shape_a.volume / (4.0 * math.pi)) ** (1.0 / 3.0)
        hb = params.bed_depth_b or (3.0 * shape_b.volume / (4.0 * math.pi)) ** (1.0 / 3.0)
        Ea, Eb, Ba, Bb = material_a.E, material_b.E, material_a.B, material_b.B
        self.h = (ha, hb)
        self.E_eff = Ea * Eb / (hb * Ea + ha * Eb)
        self.B_eff = Ba * Bb / (hb * Ba + ha * Bb) if Ba > 0 and Bb > 0 else 0.0
        self.z = np.zeros(3)            # tangential spring (stick) displacement, world frame
        self.v_impact = 0.0
        self.was_in_contact = False
        self._key: bytes | None = None  # the inputs of the last evaluation and its normal loads
        self._normal: tuple = ()
        self._kinematics: tuple | None = None   # lists of floats of the same evaluation (evaluate)
        self._kernel = None
        boxes = type(shape_a) is Box and type(shape_b) is Box and params.model == "volume"
        if compiled is not False and boxes:
            from components import kernels
            from components.kernels.contact import CompiledContact

            lib = kernels.library()
            if lib is not None:
                self._kernel = CompiledContact(lib, shape_a.half_extents, shape_b.half_extents, self.E_eff,
                                               self.B_eff, params.tolerance, MIN_RADIUS)
        if compiled and self._kernel is None:
            from components import kernels

            why = kernels.status() if boxes else "the kernel takes two boxes under the volume model"
            raise RuntimeError(f"no compiled contact kernel: {why}")

    # ------------------------------------------------------------------ evaluation
    def _volume(self, pa, Ra, pb, Rb):
        return interference(self.a.polyhedron(pa, Ra), self.b.polyhedron(pb, Rb))

    def evaluate(self, pa: np.ndarray, Ra: np.ndarray, va: np.ndarray, wa: np.ndarray,
                 pb: np.ndarray, Rb: np.ndarray, vb: np.ndarray, wb: np.ndarray, key=None) -> ContactResult:
        """Loads for the poses (p, R body->world), velocities of the reference points and angular
        velocities (world frame).  Does not change the friction state (see ``advance``).  key: a
        caller that knows when its poses and velocities are the same as at its last call (the
        Contact FMU: a key of its inputs) gives a hashable that changes with them, else the
        arrays' bytes are the key."""
        # the geometry and the normal force depend on the poses and velocities alone: an FMU
        # evaluating twice at one instant (its step, then its outputs) computes them once
        if key is None:
            key = b"".join([np.asarray(x, dtype=float).tobytes() for x in (pa, Ra, va, wa, pb, Rb, vb, wb)])
        if key != self._key:
            self._key, self._normal = None, self._normal_loads(pa, Ra, va, wa, pb, Rb, vb, wb)
            self._kinematics = None
            self._key = key
        distance, point, n, fn, fd, damping_a, damping_b, volume = self._normal
        if point is None:
            res = ContactResult()
            res.distance = distance
            return res
        # the rest in Python floats, numpy's operations in numpy's order (the same bits without
        # numpy's per-call overhead on 3-vectors; a 3-vector dot product sums left to right)
        if self._kinematics is None:
            # the relative velocity at the contact point and the lever arms: the same inputs, the same values
            pa, va, wa, pb, vb, wb = (_floats3(pa), _floats3(va), _floats3(wa), _floats3(pb), _floats3(vb),
                                      _floats3(wb))
            P = point.tolist()
            self._kinematics = (n.tolist(), _relative_velocity(P, pa, va, wa, pb, vb, wb),
                                [P[0] - pa[0], P[1] - pa[1], P[2] - pa[2]], [P[0] - pb[0], P[1] - pb[1], P[2] - pb[2]])
        N, vrel, da, db = self._kinematics
        if self.p.model != "volume":
            # Hunt-Crossley's damping uses the impact speed, a state: formed on every call
            depth = max(-distance, 0.0)
            rate = _dot(vrel, N)                         # > 0: approaching (A moves towards B)
            v_imp = self.v_impact if self.was_in_contact else rate
            # a contact that starts at rest has no impact speed: the floor keeps the damping finite
            damp = 1.5 * (1.0 - self.p.restitution) * rate / max(v_imp, self.p.hc_min_impact_speed)
            fn = max(self.p.hc_stiffness * depth**self.p.hc_exponent * (1.0 + damp), 0.0)
        # friction (state z from advance())
        s = _dot(vrel, N)
        vt = [vrel[0] - s * N[0], vrel[1] - s * N[1], vrel[2] - s * N[2]]
        ft = self._friction(fn, N, vt, self.z.tolist())[0]
        F_a = [-fn * N[0] + ft[0], -fn * N[1] + ft[1], -fn * N[2] + ft[2]]
        if damping_a is None:
            moment_a = _cross3f(da, F_a)
            moment_b = _cross3f(db, [-F_a[0], -F_a[1], -F_a[2]])
        else:
            # the springs and friction at the centroid, the dashpots where they act
            F_c = [F_a[0] + fd * N[0], F_a[1] + fd * N[1], F_a[2] + fd * N[2]]
            ma, mb = _cross3f(da, F_c), _cross3f(db, [-F_c[0], -F_c[1], -F_c[2]])
            Da, Db = damping_a.tolist(), damping_b.tolist()
            moment_a = [ma[0] + Da[0], ma[1] + Da[1], ma[2] + Da[2]]
            moment_b = [mb[0] + Db[0], mb[1] + Db[1], mb[2] + Db[2]]
        return ContactResult(np.array(F_a), np.array(moment_a), np.array([-F_a[0], -F_a[1], -F_a[2]]),
                             np.array(moment_b), True, distance, volume, point, n, fn)

    def _normal_loads(self, pa, Ra, va, wa, pb, Rb, vb, wb) -> tuple:
        """(signed distance, contact point or None when the loads are zero, normal, normal force,
        the dashpots' share of it, their moments on A and on B or None, interference volume):
        the part of ``evaluate`` that depends on the poses and velocities alone (for Hunt-Crossley
        the geometry only)."""
        if self._kernel is not None:
            found = self._kernel.normal_loads(pa, Ra, va, wa, pb, Rb, vb, wb)
            if found is not None:
                return found
        c = closest(self.a, (pa, Ra), self.b, (pb, Rb))
        none = (c.distance, None, None, 0.0, 0.0, None, None, 0.0)
        if c.distance > self.p.tolerance:
            return none
        n = np.asarray(c.normal, dtype=float)
        if self.p.model != "volume":
            point = 0.5 * (np.asarray(c.point_a) + np.asarray(c.point_b))
            return c.distance, point, n, 0.0, 0.0, None, None, 0.0
        it = self._volume(pa, Ra, pb, Rb)
        if it.volume <= 0.0:
            return none
        point = np.asarray(it.centroid, dtype=float)
        fn = self.E_eff * it.volume
        fd, damping_a, damping_b = 0.0, None, None
        if self.B_eff > 0.0:
            # the dashpots over the footprint (module docstring): force on A, its moments
            x, w, d = footprint(it.vertices, n)
            if w.size:
                approach = ((va + _cross(wa, x - pa)) - (vb + _cross(wb, x - pb))) @ n
                spring = self.E_eff * d
                pd = np.clip(self.B_eff * approach, -spring, spring) * w
                fd = float(np.sum(pd))
                fn += fd
                lever = _cross(x, n)                       # (x - p) x n = x x n - p x n
                arm = pd @ lever
                damping_a = -(arm - fd * cross3(pa, n))
                damping_b = arm - fd * cross3(pb, n)
        return c.distance, point, n, max(fn, 0.0), fd, damping_a, damping_b, it.volume

    def _friction(self, fn: float, n, vt, z) -> tuple[list, list]:
        """(tangential force on A, slider-consistent z) for the spring state z [CS79]; 3-vectors
        as sequences of floats (lists out), numpy's arithmetic: np.linalg.norm is sqrt(x . x)."""
        p = self.p
        if fn <= 0.0 or p.mu_static <= 0.0:
            return [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]
        s = _dot(z, n)
        z = [z[0] - s * n[0], z[1] - s * n[1], z[2] - s * n[2]]   # keep the spring in the tangent plane
        kt = p.mu_static * fn / p.stick_distance
        ct = kt * p.stick_time
        trial = [-kt * z[0] - ct * vt[0], -kt * z[1] - ct * vt[1], -kt * z[2] - ct * vt[2]]
        limit = p.mu_static * fn
        mag = math.sqrt(_dot(trial, trial))
        if mag <= limit:
            return trial, z
        if mag > 0.0:
            direction = [trial[0] / mag, trial[1] / mag, trial[2] / mag]
        else:
            m = max(math.sqrt(_dot(vt, vt)), 1e-300)
            direction = [-vt[0] / m, -vt[1] / m, -vt[2] / m]
        f = p.mu_dynamic * fn
        ft = [f * direction[0], f * direction[1], f * direction[2]]
        return ft, [-(ft[i] + ct * vt[i]) / kt for i in range(3)]

    def advance(self, result: ContactResult, va: np.ndarray, wa: np.ndarray, pa: np.ndarray,
                vb: np.ndarray, wb: np.ndarray, pb: np.ndarray, dt: float) -> None:
        """End of a step of length dt: move the tangential spring with the sliding velocity at the
        contact point, and remember the impact speed (Hunt-Crossley)."""
        if not result.in_contact:
            self.z[:] = 0.0
            self.was_in_contact = False
            return
        N = result.normal.tolist()
        vrel = _relative_velocity(result.point.tolist(), _floats3(pa), _floats3(va), _floats3(wa), _floats3(pb),
                                  _floats3(vb), _floats3(wb))
        s = _dot(vrel, N)
        if not self.was_in_contact:
            self.v_impact = max(s, 1e-9)
        self.was_in_contact = True
        vt = [vrel[0] - s * N[0], vrel[1] - s * N[1], vrel[2] - s * N[2]]
        z = self.z.tolist()
        _, z = self._friction(result.normal_force, N, vt, [z[0] + vt[0] * dt, z[1] + vt[1] * dt, z[2] + vt[2] * dt])
        self.z = np.array(z, dtype=float)

    def get_state(self) -> dict:
        return {"z": self.z.copy(), "v_impact": self.v_impact, "was_in_contact": self.was_in_contact}

    def set_state(self, s: dict) -> None:
        self.z = np.array(s["z"], dtype=float)
        self.v_impact = float(s["v_impact"])
        self.was_in_contact = bool(s["was_in_contact"])
