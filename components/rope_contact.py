"""Wire rope wrapping round rigid bodies: contact nodes on body edges, Coulomb sliding along the edge
and along the rope.

Numpy, no FMI (the segments' depths in a body and the loads of all ropes run compiled,
components/kernels/rope_contact.c, where the kernels can be had: the same arithmetic).  The rope
between two end points (crane hook, lug, anchor) is a massless elastic polyline; where it meets a
convex polyhedron (components/convex.py Box, ConvexMesh, or the tessellated Cylinder of a sheave)
it bends over a *contact node* placed on an edge of the body.

Sources
-------
[Lee20]  H.-W. Lee, "Wire rope contact model and crane control method for the advanced simulation
         and automation of block erection", PhD thesis, Seoul National University, 2020,
         sections 2.2.1 (rope as a length constraint, eq. 43), 2.3 (rope-body interaction:
         detection, node on the body edge, eqs. 63-65; sliding along the rope and along the edge;
         friction eqs. 66-70) and 3.1 (verification).
[Ser10]  M. Servin, C. Lacoursiere, F. Nordfelth, K. Bodin, "Hybrid, multiresolution wires with
         massless frictional contacts", IEEE TVCG 17 (2011) 970-982 (massless contact nodes that
         slide along the rope and along the contact edge).
[Joh87]  K. L. Johnson, "Contact Mechanics", Cambridge 1987, ch. 7 (Coulomb friction; the capstan
         relation T2 = T1 exp(mu theta) is its limit for a rope on a smooth curved surface).

Model
-----
Rope: unstretched length L0, axial stiffness EA.  Nodes X_0 (end A), X_1 .. X_n (contact nodes),
X_{n+1} (end B) with material (unstretched arc-length) coordinates 0 = sigma_0 < sigma_j <
sigma_{n+1} = L0.  Segment j has length l_j = |X_{j+1} - X_j| and tension

    T_j = EA max(0, l_j / (sigma_{j+1} - sigma_j) - 1)          (slack segments carry nothing)

which is [Lee20] eq. 43 with the regularisation eps = 1/k made explicit (a stiff spring) and with
slack added (the thesis' rope can push).  The elastic energy is sum_j EA (l_j - ds_j)^2 / (2 ds_j).
Axial damping c adds c de/dt to every taut segment, de/dt = sum_j u_j . (V_{j+1} - V_j) / L0 the
mean strain rate from the nodes' velocities (a Kelvin-Voigt rope; ends and contact nodes move with
their body or at their given velocity).

Contact node j sits on edge E = [a, b] of body B (body frame) at x = a + s (b - a), s in [0, 1];
so it moves with the body while it sticks ([Lee20] 2.3.2, "sliding along the rope" is then
automatic).  The rope pulls the node, and so the body, with ([Lee20] eq. 64)

    F_j = T_j u_j - T_{j-1} u_{j-1},     u_j = (X_{j+1} - X_j) / l_j.

Normal force: N_j = |F_j - (F_j . e) e| (e the unit edge direction).  The node is removed when
F_j . n_E <= 0, n_E the inward edge normal (the negated sum of the two adjacent outward face
normals, [Lee20] eq. 65): the rope no longer presses on the edge.

The rope has no mass, so the node has no inertia and its two free coordinates (s along the edge,
sigma along the rope) obey Coulomb's law quasi-statically at every update:

* along the edge: stick while |F . e| <= mu_s N; otherwise the node slides along the edge to the
  point where F . e = +-mu_k N (frictionless: F . e = 0, the point of shortest rope, [Lee20] fig.
  2-31).  This replaces the thesis' heuristic ratio P_next = P + (1 - mu_k)(P' - P) (eq. 70), which
  [Lee20] 3.1.3 shows to deviate from Coulomb.  At an edge end the node moves on to the adjacent
  edge the rope pulls it into most ([Lee20] fig. 2-32), or stays on the vertex.
* along the rope: stick while |T_j - T_{j-1}| <= mu_s N (sigma_j frozen: [Lee20] eq. 66 freezes
  the fraction l_a / (l_a + l_b), the same thing for a uniformly stretched rope); otherwise the
  rope slips over the edge until |T_j - T_{j-1}| = mu_k N (the tension jump of a point contact,
  [Joh87]; a wrap over many short edges tends to the capstan law).  After a slip the node sticks
  again when, at the next update, it needs less than mu_k N to hold (the thesis leaves this
  transition unstated).

Detection and insertion ([Lee20] 2.3.1): every segment is clipped against the body's half-spaces
(Liang-Barsky); if its deepest point is more than ``PENETRATION_TOL`` inside, a node is inserted on
the edge point that makes the detour shortest (the thesis puts it on the edge closest to the
intersection points), with sigma splitting the segment's material in proportion to the new
lengths (uniform strain).  This repeats on the new segments, so a rope wraps several edges (a
sling round a block corner, a wire over a sheave polygon).  ``max_penetration`` checks a state.
"""
from __future__ import annotations

import math
from itertools import accumulate
from dataclasses import dataclass, field, replace
from typing import Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike

from components.rotations import skew

__all__ = ["Edge", "EdgeMesh", "RopeEnd", "ContactNode", "Rope", "RopeContactResult", "RopeContact",
           "RopeEndInsideBody", "RopeOverstretched", "segment_depth", "segment_depths",
           "PENETRATION_TOL"]

PENETRATION_TOL = 1e-6       # m: a segment deeper than this inside a body gets a contact node
MAX_STRAIN = 1.0             # ends further apart than (1 + this) L0 are refused: a wire parts at a few percent
_BISECT_ITER = 60            # bisection on a unit interval: 2^-60, round-off
_MAX_INSERT = 8              # nodes one segment may gain in one update (a sling round a block: 2-4)
_MAX_PASSES = 4 * _MAX_INSERT  # insert / equilibrate / remove passes of one rope per update
_MAX_SWEEPS = 200            # Gauss-Seidel sweeps of the node equilibrium per update
_MIN_SEGMENT = 1e-6          # m: no node is inserted closer than this to a segment's end (a lug on an edge)


@dataclass(frozen=True)
class Edge:
    """A body edge: end points a, b and unit inward normal n_in, all in the body frame
    (d = b - a, kept since every node position and edge direction needs it)."""
    a: np.ndarray
    b: np.ndarray
    n_in: np.ndarray
    d: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "d", self.b - self.a)


class EdgeMesh:
    """The edges of a convex polyhedron (body frame), for rope contact.

    Built from the polyhedron of a components/convex.py shape (``from_shape``).  ``refine`` > 1
    splits every edge into that many collinear pieces: the same shape with more edges (the mesh
    independence check of [Lee20] 3.1.2).
    """

    def __init__(self, vertices: ArrayLike, halfspaces: ArrayLike, refine: int = 1, tol: float = 1e-9) -> None:
        V = np.asarray(vertices, dtype=float).reshape(-1, 3)
        H = np.asarray(halfspaces, dtype=float).reshape(-1, 4)
        if refine < 1:
            raise ValueError(f"refine must be >= 1, got {refine}")
        size = float(np.max(np.ptp(V, axis=0)))
        eps = tol * max(size, 1.0)
        self.halfspaces = H
        self.size = size
        edges: list[Edge] = []
        on = np.abs(V @ H[:, :3].T + H[:, 3]) < 1e3 * eps      # on[v, f]: vertex v on facet f
        for i in range(len(H)):
            for k in range(i + 1, len(H)):
                ni, nk = H[i, :3], H[k, :3]
                d = np.cross(ni, nk)
                if np.linalg.norm(d) < 1e-6:
                    continue
                idx = np.flatnonzero(on[:, i] & on[:, k])
                if len(idx) < 2:
                    continue
                t = V[idx] @ d
                a, b = V[idx[int(np.argmin(t))]], V[idx[int(np.argmax(t))]]
                if np.linalg.norm(b - a) < 1e3 * eps:
                    continue
                n_in = -(ni + nk)
                n_in = n_in / np.linalg.norm(n_in)
                for r in range(refine):
                    edges.append(Edge(a + (b - a) * r / refine, a + (b - a) * (r + 1) / refine, n_in))
        if not edges:
            raise ValueError("no edges found: not a 3-D convex polyhedron")
        self.edges = edges
        # vertex -> incident edges (end 0 = a, 1 = b), keyed on rounded coordinates
        self._incident: dict[tuple, list[tuple[int, int]]] = {}
        for j, e in enumerate(edges):
            for end, p in ((0, e.a), (1, e.b)):
                self._incident.setdefault(self._key(p), []).append((j, end))

    @staticmethod
    def _key(p: np.ndarray) -> tuple:
        return tuple(np.round(p, 7).tolist())

    @classmethod
    def from_shape(cls, shape, refine: int = 1) -> "EdgeMesh":
        """Edges of a convex.py shape (its body-frame polyhedron; Sphere/Cylinder tessellated)."""
        V, H = shape.polyhedron()
        return cls(V, H, refine=refine)

    def incident(self, p: np.ndarray) -> list[tuple[int, int]]:
        """(edge index, end 0/1) of the edges that end at body-frame vertex p."""
        return self._incident.get(self._key(p), [])


def segment_depth(p0: np.ndarray, p1: np.ndarray, H: np.ndarray) -> float:
    """Largest depth [m] of segment p0-p1 inside the polyhedron {x : n.x + d <= 0} (H rows (n, d),
    same frame as the points); <= 0 if the segment stays outside.  Liang-Barsky clipping, then the
    depth of the midpoint of the clipped piece (the depth is concave along the segment, so the
    midpoint is a lower bound good enough for detection and exact for a straight crossing's middle)."""
    return float(segment_depths(np.asarray(p0, dtype=float)[None], np.asarray(p1, dtype=float)[None], H)[0])


def segment_depths(p0: np.ndarray, p1: np.ndarray, H: np.ndarray) -> np.ndarray:
    """``segment_depth`` of the segments p0[i]-p1[i] ((m, 3) arrays) at once.

    Liang-Barsky: with num_f = n_f . p0 + d_f (> 0: p0 outside face f) and den_f = n_f . (p1 - p0),
    the segment p0 + t (p1 - p0) is inside face f for t <= t_f = -num_f / den_f where den_f > 0 and
    for t >= t_f where den_f < 0; inside the body on [t0, t1] = [max(0, t_f | den_f < 0),
    min(1, t_f | den_f > 0)], empty if t0 > t1, and nowhere if parallel to a face it is outside of.
    The reductions take their bounds as ``initial`` and their masks as ``where`` (no temporaries:
    the arrays are small and called for often, so numpy's per-call overhead is the cost)."""
    if not len(H):
        return np.full(len(p0), -1.0)                    # no faces: nothing to be inside
    nT, d = H[:, :3].T, H[:, 3]
    dp = p1 - p0
    num = p0 @ nT + d                                   # (m, faces): > 0 outside the face
    den = dp @ nT
    parallel = np.abs(den) < 1e-300
    t = np.divide(-num, den, out=np.zeros_like(num), where=~parallel)   # 0 where parallel
    t1 = np.min(t, axis=1, where=den > 0.0, initial=1.0)
    t0 = np.max(t, axis=1, where=den < 0.0, initial=0.0)
    away = np.max(num, axis=1, where=parallel & (num > 0.0), initial=0.0)   # parallel and outside
    xm = p0 + (0.5 * (t0 + t1))[:, None] * dp
    depth = -np.max(xm @ nT + d, axis=1)
    return np.where(away > 0.0, -away, np.where(t0 > t1, -1.0, depth))


class RopeOverstretched(ValueError):
    """A rope whose ends are further apart than (1 + MAX_STRAIN) times its unstretched length."""

    def __init__(self, rope: int, distance: float, length: float) -> None:
        super().__init__(f"the ends of rope {rope} are {distance:.6g} m apart, {distance / length:.4g} times its "
                         f"unstretched length {length:.6g} m")
        self.rope, self.distance, self.length = rope, distance, length


class RopeEndInsideBody(ValueError):
    """A world-point rope end (a crane hook) inside a body its rope may touch."""

    def __init__(self, rope: int, end: int, body: int, depth: float) -> None:
        super().__init__(f"end {'AB'[end]} of rope {rope} is {depth:.4g} m inside body {body}")
        self.rope, self.end, self.body, self.depth = rope, end, body, depth


@dataclass
class RopeEnd:
    """Where a rope end is: ``body`` None for a world point (then ``point`` is NED, or it is set each
    update through ``RopeContact.update(ends=...)``), else a body index and a body-frame point."""
    point: np.ndarray
    body: Optional[int] = None


@dataclass
class ContactNode:
    """A contact node: body index, edge index, edge parameter s in [0, 1], material coordinate sigma
    [m], and the stick flags of its two friction directions."""
    body: int
    edge: int
    s: float
    sigma: float
    stick_edge: bool = True
    stick_rope: bool = True


@dataclass
class Rope:
    """A massless elastic wire rope between two ends, wrapping the bodies it meets.

    length: unstretched length L0 [m]; ea: axial stiffness EA [N]; mu_edge / mu_rope: (static,
    kinetic) Coulomb coefficients along the edge and along the rope; damping: axial damping
    c [N s] (tension += c * mean strain rate, only on taut segments), 0 in the verification cases."""
    end_a: RopeEnd
    end_b: RopeEnd
    length: float
    ea: float
    mu_edge: tuple[float, float] = (0.0, 0.0)
    mu_rope: tuple[float, float] = (0.0, 0.0)
    damping: float = 0.0
    bodies: Optional[Sequence[int]] = None     # bodies it may touch (None: all with edges)
    nodes: list[ContactNode] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not (self.length > 0.0 and self.ea > 0.0):
            raise ValueError(f"rope length and EA must be > 0, got {self.length}, {self.ea}")
        for name in ("mu_edge", "mu_rope"):
            ms, mk = getattr(self, name)
            if not (0.0 <= mk <= ms < 1.0):
                raise ValueError(f"{name} must be 0 <= kinetic <= static < 1, got {(ms, mk)}")


@dataclass
class RopeContactResult:
    """Loads and state after an update.

    body_force[i], body_moment[i]: NED force [N] and moment about the body origin [N m] the ropes
    apply to body i (contact nodes and body-attached ends); end_force[r]: (force on end A, force on
    end B) [N, NED]; tension[r]: segment tensions [N]; points[r]: node positions (ends included)."""
    body_force: np.ndarray
    body_moment: np.ndarray
    end_force: list[tuple[np.ndarray, np.ndarray]]
    tension: list[np.ndarray]
    points: list[np.ndarray]
    contact_force: list[np.ndarray]       # per rope, per contact node: F_j (NED, on the body)


def _tensions(X: np.ndarray, sig: np.ndarray, ea: float) -> np.ndarray:
    l = np.linalg.norm(np.diff(X, axis=0), axis=1)
    ds = np.maximum(np.diff(sig), _MIN_SEGMENT * 1e-3)
    return ea * np.maximum(0.0, l / ds - 1.0)


# Scalar forms of the per-node arithmetic.  A rope's contact update handles a few 3-vectors at a
# time, where a numpy call costs microseconds for nanoseconds of arithmetic; these helpers do the same
# operations on Python floats in the order numpy does them (so the results are the same to the last
# bit): np.linalg.norm and 1-d dot products sum x0 + x1 + x2 left to right, einsum("ij,ij->i") a row
# of three as (x0 + x2) + x1.

def _sub3(a: Sequence[float], b: Sequence[float]) -> list[float]:
    return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]


def _norm3(a: Sequence[float]) -> float:
    """|a|, as np.linalg.norm."""
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


def _dot3(a: Sequence[float], b: Sequence[float]) -> float:
    """a . b, as a 1-d numpy dot product."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _edot3(a: Sequence[float], b: Sequence[float]) -> float:
    """a . b, as einsum("ij,ij->i") sums a row of three."""
    return (a[0] * b[0] + a[2] * b[2]) + a[1] * b[1]


def _lengths(pts: Sequence[Sequence[float]]) -> list[float]:
    """Segment lengths |X_{j+1} - X_j| of a polyline (as np.linalg.norm(np.diff(X, axis=0), axis=1))."""
    return [_norm3(_sub3(b, a)) for a, b in zip(pts[:-1], pts[1:])]


def _node_pull(ea: float, pts: Sequence[Sequence[float]], sig: Sequence[float]
               ) -> tuple[list[float], float, float, float, float]:
    """The rope's force on a contact node from its two segments ([Lee20] eq. 64),
    F = T_next u_next - T_prev u_prev with T = EA max(0, l / ds - 1): (F, T_prev, T_next, l_prev,
    l_next) from the three points (previous node, node, next node) and their material coordinates."""
    d0, d1 = _sub3(pts[1], pts[0]), _sub3(pts[2], pts[1])
    l0, l1 = _norm3(d0), _norm3(d1)
    t0 = ea * max(0.0, l0 / max(sig[1] - sig[0], _MIN_SEGMENT * 1e-3) - 1.0)
    t1 = ea * max(0.0, l1 / max(sig[2] - sig[1], _MIN_SEGMENT * 1e-3) - 1.0)
    k0, k1 = (t0 / l0 if l0 > 0 else 0.0), (t1 / l1 if l1 > 0 else 0.0)
    return [k1 * d1[0] - k0 * d0[0], k1 * d1[1] - k0 * d0[1], k1 * d1[2] - k0 * d0[2]], t0, t1, l0, l1


def _newton_weights(X: np.ndarray, sig: np.ndarray, rope: Rope) -> np.ndarray:
    """The segment weights w_j of RopeContact._newton_edges' sum w_j l_j: one tension along a
    frictionless rope (1: the shortest rope), else the tensions (+ 1e-9 max T, so that a slack
    segment still has a direction to be short in)."""
    if rope.mu_rope[0] == 0.0:
        return np.ones(len(X) - 1)
    T = _tensions(X, sig, rope.ea)
    return T + 1e-9 * float(T.max()) if T.max() > 0.0 else np.ones_like(T)


def _newton_step(X: np.ndarray, sig: np.ndarray, D: np.ndarray, rope: Rope) -> list[float]:
    """The Newton step ds of RopeContact._newton_edges for n nodes: -H^-1 grad with
    grad_j = D_j . (w_{j-1} u_{j-1} - w_j u_j) and the tridiagonal H of d_j^T P d_k / l."""
    n = len(D)
    d = np.diff(X, axis=0)
    l = np.linalg.norm(d, axis=1)
    u = d / np.where(l > 0, l, 1.0)[:, None]
    w = _newton_weights(X, sig, rope)
    # node j (row j - 1) lies on segments j - 1 and j; D_j^T P_k D_i = c_k (D_j.D_i - (u_k.D_j)(u_k.D_i))
    grad = np.einsum("ij,ij->i", D, w[:-1, None] * u[:-1] - w[1:, None] * u[1:])
    c = w / np.maximum(l, 1e-12)
    uD_prev = np.einsum("ij,ij->i", u[:-1], D)          # u_{j-1} . D_j
    uD_next = np.einsum("ij,ij->i", u[1:], D)           # u_j . D_j
    DD = np.einsum("ij,ij->i", D, D)
    H = np.diag(c[:-1] * (DD - uD_prev ** 2) + c[1:] * (DD - uD_next ** 2))
    # segment j (1 <= j < n) joins nodes j and j + 1: u_j . D_{j+1} = uD_prev[j]
    off = -c[1:-1] * (np.einsum("ij,ij->i", D[:-1], D[1:]) - uD_next[:-1] * uD_prev[1:])
    H[np.arange(n - 1), np.arange(1, n)] = off
    H[np.arange(1, n), np.arange(n - 1)] = off
    H += np.eye(n) * (1e-12 * (1.0 + np.abs(H).max()))
    try:
        return (-np.linalg.solve(H, grad)).tolist()
    except np.linalg.LinAlgError:
        return (-grad / np.maximum(np.diag(H), 1e-300)).tolist()


def _newton_step_one(pts: list, sig: list, D: list, rope: Rope) -> float:
    """``_newton_step`` of a single node in scalars (same operations, same order):
    ds = -grad / H, grad = D . (w_0 u_0 - w_1 u_1), H = sum_k w_k / l_k (D.D - (u_k.D)^2)
    (+ 1e-12 (1 + |H|))."""
    d0, d1 = _sub3(pts[1], pts[0]), _sub3(pts[2], pts[1])
    l0, l1 = _norm3(d0), _norm3(d1)
    u0 = [x / (l0 if l0 > 0 else 1.0) for x in d0]
    u1 = [x / (l1 if l1 > 0 else 1.0) for x in d1]
    if rope.mu_rope[0] == 0.0:
        w0 = w1 = 1.0
    else:
        ea, floor = rope.ea, _MIN_SEGMENT * 1e-3
        t0 = ea * max(0.0, l0 / max(sig[1] - sig[0], floor) - 1.0)
        t1 = ea * max(0.0, l1 / max(sig[2] - sig[1], floor) - 1.0)
        top = max(t0, t1)
        w0, w1 = (t0 + 1e-9 * top, t1 + 1e-9 * top) if top > 0.0 else (1.0, 1.0)
    grad = _edot3(D, [w0 * u0[0] - w1 * u1[0], w0 * u0[1] - w1 * u1[1], w0 * u0[2] - w1 * u1[2]])
    c0, c1 = w0 / max(l0, 1e-12), w1 / max(l1, 1e-12)
    uD_prev, uD_next, DD = _edot3(u0, D), _edot3(u1, D), _edot3(D, D)
    h = c0 * (DD - uD_prev * uD_prev) + c1 * (DD - uD_next * uD_next)
    return -grad / (h + 1e-12 * (1.0 + abs(h)))


class RopeContact:
    """Ropes and the convex bodies they wrap (body poses given from outside at each update).

    meshes[i]: the EdgeMesh of body i (body frame).  update(poses) moves the contact nodes to
    their Coulomb equilibrium (module docstring) and returns the loads.
    """

    def __init__(self, meshes: Sequence[EdgeMesh], ropes: Sequence[Rope], compiled: Optional[bool] = None) -> None:
        """compiled: None computes the detection and the loads with the compiled kernel
        (components/kernels/rope_contact.c) if the kernels can be had, False never (the numpy
        reference), True requires it."""
        self.meshes = list(meshes)
        self.ropes = list(ropes)
        self._kernel = None
        if compiled is not False:
            from components import kernels
            from components.kernels.rope_contact import compiled as bind

            lib = kernels.library()
            if lib is not None:
                try:
                    self._kernel = bind(lib)
                except AttributeError:           # a library built before this kernel
                    self._kernel = None
            if compiled and self._kernel is None:
                raise RuntimeError(f"no compiled rope contact kernel: {kernels.status()}")
        self._poses: list[tuple[np.ndarray, np.ndarray]] = [(np.zeros(3), np.eye(3))] * len(self.meshes)
        # NED positions of the rope ends (A, B) per rope (id), valid until the poses (``_set_poses``)
        # or the ends change (``_ends_x``): the ends stay put through an update's many points() calls
        self._end_cache: dict[int, tuple] = {}
        self._layouts: dict[tuple[int, ...], tuple[np.ndarray, ...]] = {}     # _layout's
        # node id -> (node, (body, edge, s), NED position) at the present poses (_node_x)
        self._node_cache: dict[int, tuple[ContactNode, tuple[int, int, float], np.ndarray]] = {}
        self._edge_cache: dict[tuple[int, int], tuple[np.ndarray, float, list[float]]] = {}     # _edge_ned's
        #: rope updates whose insert / equilibrate / remove passes ran out (``_MAX_PASSES``) without
        #: settling; 0 in a healthy run
        self.pass_limit_hits = 0

    def _set_poses(self, poses: Sequence[tuple[ArrayLike, ArrayLike]]) -> None:
        self._poses = [(np.asarray(p, dtype=float), np.asarray(R, dtype=float)) for p, R in poses]
        self._end_cache.clear()
        self._node_cache.clear()
        self._edge_cache.clear()

    # ------------------------------------------------------------------ geometry
    def _node_x(self, n: ContactNode) -> np.ndarray:
        """NED position of a contact node, x = p + R (a + s (b - a)).  Kept per node until the node
        moves or the poses change: the points of a rope are read several times per update (insert,
        equilibrate, remove, detection, loads) and most of its nodes have not moved in between.
        The array is shared: callers copy it (into X), never change it."""
        hit = self._node_cache.get(id(n))
        if hit is not None and hit[0] is n and hit[1] == (n.body, n.edge, n.s):
            return hit[2]
        e = self.meshes[n.body].edges[n.edge]
        p, R = self._poses[n.body]
        x = p + R @ (e.a + n.s * e.d)
        self._node_cache[id(n)] = (n, (n.body, n.edge, n.s), x)
        return x

    def _edge_ned(self, body: int, edge: int) -> tuple[np.ndarray, float, list[float]]:
        """(R (b - a), its length, R n_in as a list) of an edge at the present pose, kept until the
        poses change (Newton and the removal test ask for the same edges many times per update)."""
        hit = self._edge_cache.get((body, edge))
        if hit is None:
            e, R = self.meshes[body].edges[edge], self._poses[body][1]
            D = R @ e.d
            hit = self._edge_cache[(body, edge)] = (D, math.sqrt(_edot3(D, D)), (R @ e.n_in).tolist())
        return hit

    def _edge_dir(self, n: ContactNode) -> np.ndarray:
        d = self._poses[n.body][1] @ self.meshes[n.body].edges[n.edge].d
        return d / np.linalg.norm(d)

    def _end_x(self, end: RopeEnd) -> np.ndarray:
        if end.body is None:
            return np.asarray(end.point, dtype=float)
        p, R = self._poses[end.body]
        return p + R @ end.point

    def _ends_x(self, rope: Rope) -> tuple[np.ndarray, np.ndarray]:
        """(end A, end B) of a rope, NED: kept until the poses change or an end (or its point) is
        replaced."""
        a, b = rope.end_a, rope.end_b
        hit = self._end_cache.get(id(rope))
        # (the same objects, compared by identity: read for every points() of every rope)
        if hit is None or not (hit[0] is rope and hit[1] is a and hit[2] is b and hit[3] is a.point
                               and hit[4] is b.point):
            hit = self._end_cache[id(rope)] = (rope, a, b, a.point, b.point, (self._end_x(a), self._end_x(b)))
        return hit[5]

    def points(self, rope: Rope) -> np.ndarray:
        """Node positions of a rope, ends included (NED, current poses)."""
        xa, xb = self._ends_x(rope)
        if not rope.nodes:
            return np.array((xa, xb))
        return np.array([xa, *(self._node_x(n) for n in rope.nodes), xb])

    @staticmethod
    def _sigma_list(rope: Rope) -> list[float]:
        return [0.0, *(n.sigma for n in rope.nodes), rope.length]

    @classmethod
    def _sigmas(cls, rope: Rope) -> np.ndarray:
        return np.array(cls._sigma_list(rope))

    def _node_force(self, rope: Rope, X: np.ndarray, sig: np.ndarray, j: int) -> tuple[np.ndarray, float, float]:
        """(F on contact node j (1-based in X), T_prev, T_next)."""
        f, t0, t1, _, _ = _node_pull(rope.ea, X[j - 1:j + 2].tolist(), sig[j - 1:j + 2].tolist())
        return np.array(f), t0, t1

    # ------------------------------------------------------------------ node equilibrium
    def _slide_edge(self, rope: Rope, X: np.ndarray, sig: np.ndarray, j: int) -> bool:
        """Coulomb along the edge for node j (X index); returns True if the node moved."""
        node = rope.nodes[j - 1]
        ms, mk = rope.mu_edge
        moved = False
        for _hop in range(4):                       # an edge, then at most a few edges onwards
            e = self._edge_dir(node)
            f, _, _ = self._node_force(rope, X, sig, j)
            fe = float(f @ e)
            fn = float(np.linalg.norm(f - fe * e))
            mu = ms if node.stick_edge else mk
            if abs(fe) <= mu * fn + 1e-12 * (1.0 + fn):
                node.stick_edge = True
                return moved
            node.stick_edge = False
            sgn = 1.0 if fe > 0 else -1.0

            def g(s: float) -> float:
                node.s = s
                X[j] = self._node_x(node)
                ff, _, _ = self._node_force(rope, X, sig, j)
                fe_ = float(ff @ e)
                return sgn * fe_ - mk * float(np.linalg.norm(ff - fe_ * e))

            s0 = node.s
            s_end = 1.0 if sgn > 0 else 0.0
            if g(s_end) > 0.0:                       # still pulled on at the edge end: go on
                node.s = s_end
                X[j] = self._node_x(node)
                moved = True
                if not self._hand_off(rope, X, sig, j):
                    return moved
                continue
            # root of g between lo (g > 0) and hi (g <= 0): Illinois regula falsi (a few
            # evaluations from a warm start, where bisection needs ~40)
            edge = self.meshes[node.body].edges[node.edge]
            tol_s = 1e-9 / max(float(np.linalg.norm(edge.b - edge.a)), 1e-12)
            lo, hi = s0, s_end
            glo, ghi = sgn * fe - mk * fn, g(s_end)
            side = 0
            for _ in range(_BISECT_ITER):
                if abs(hi - lo) <= tol_s:
                    break
                mid = (lo * ghi - hi * glo) / (ghi - glo) if glo != ghi else 0.5 * (lo + hi)
                gm = g(mid)
                if gm > 0.0:
                    lo, glo = mid, gm
                    if side == 1:
                        ghi *= 0.5
                    side = 1
                else:
                    hi, ghi = mid, gm
                    if side == -1:
                        glo *= 0.5
                    side = -1
                if abs(gm) <= 1e-12 * (1.0 + fn):
                    break
            node.s = float(mid) if abs(hi - lo) > tol_s else 0.5 * (lo + hi)
            X[j] = self._node_x(node)
            return True
        return moved

    def _newton_edges(self, rope: Rope, X: np.ndarray, sig: np.ndarray) -> bool:
        """Frictionless edges: all nodes at once to F_j . e_j = 0, i.e. the stationary point of
        sum_j T_j l_j with the tensions frozen (the shortest rope when they are equal).  Newton
        with the tridiagonal Hessian d_j^T P d_k / l (P = I - u u^T), steps clipped to the edges;
        a node pushed past an edge end is handed on (``_hand_off``).  True if a node moved."""
        n = len(rope.nodes)
        moved = False
        hand_offs = 0
        D = D_len = None
        for _ in range(30):
            if D is None:                    # the edges' NED directions (new after a hand-off)
                edges = [self._edge_ned(nd.body, nd.edge) for nd in rope.nodes]
                D, D_len = np.array([e[0] for e in edges]), [e[1] for e in edges]
            if n == 1:
                # one node (a sling over one edge, the common case): the same step in scalars
                ds = [_newton_step_one(X.tolist(), sig.tolist(), D[0].tolist(), rope)]
            else:
                ds = _newton_step(X, sig, D, rope)
            step = 0.0
            handed = False
            for j, nd in enumerate(rope.nodes, start=1):
                s_new = min(1.0, max(0.0, nd.s + ds[j - 1]))
                step = max(step, abs(s_new - nd.s) * D_len[j - 1])
                nd.s = s_new
                X[j] = self._node_x(nd)
                if s_new in (0.0, 1.0) and abs(ds[j - 1]) > 0.0:
                    if self._hand_off(rope, X, sig, j):
                        handed, D = True, None
                    X[j] = self._node_x(nd)
            if step > 0.0:
                moved = True
            hand_offs += int(handed)
            # a node may hand on a few times; one that bounces between two edges at a vertex
            # (the optimum is the vertex itself) stays there.  Newton converges quadratically on
            # the smooth sum T l: after a step below 1e-7 m the next is below ~1e-13 m, not worth
            # an iteration of its own
            if (step < 1e-10 and (not handed or hand_offs > 2 * n)) or (step < 1e-7 and not handed):
                break
        return moved

    def _hand_off(self, rope: Rope, X: np.ndarray, sig: np.ndarray, j: int) -> bool:
        """Node j at an edge end: move it onto the incident edge the rope pulls it into most."""
        node = rope.nodes[j - 1]
        mesh = self.meshes[node.body]
        e0 = mesh.edges[node.edge]
        v = e0.b if node.s >= 0.5 else e0.a
        R = self._poses[node.body][1]
        f, _, _ = self._node_force(rope, X, sig, j)
        beyond = R @ ((e0.b - e0.a) if node.s >= 0.5 else (e0.a - e0.b))
        if float(f @ beyond) <= 0.0:
            return False        # not pulled past this end (a Newton step overshot): no hand-off
        best, best_pull = None, 0.0
        for k, end in mesh.incident(v):
            if k == node.edge:
                continue
            ek = mesh.edges[k]
            out = (ek.b - ek.a) if end == 0 else (ek.a - ek.b)      # leaving the vertex
            out = R @ out / np.linalg.norm(out)
            fo = float(f @ out)
            fn = float(np.linalg.norm(f - fo * out))
            pull = fo - rope.mu_edge[1] * fn
            if pull > best_pull:
                best, best_pull = (k, end), pull
        if best is None:
            return False
        node.edge, node.s = best[0], float(best[1])
        return True

    def _slide_rope(self, rope: Rope, X: np.ndarray, sig: np.ndarray) -> bool:
        """Coulomb along the rope for all nodes at once; True if any sigma changed.

        A node slips when its tension jump exceeds mu_s N (stuck) or mu_k N (slipping), N = |F_j|.
        While slipping, T_next = r T_prev with r from (r - 1)^2 = mu_k^2 (1 + r^2 - 2 r c),
        c = u_prev . u_next (|T_next - T_prev| = mu_k |F|, F as in the module docstring), so along a
        run of slipping nodes between stuck nodes (or the ends) the tensions are T_0 times products
        of r, and T_0 follows from the run's fixed material: sum_j l_j / (1 + T_j / EA) = sigma_hi -
        sigma_lo.  Stuck nodes keep sigma.  A few passes settle nodes that change state."""
        ms, mk = rope.mu_rope
        n = len(rope.nodes)
        changed = False
        for _pass in range(2 * n + 2):
            d = np.diff(X, axis=0)
            l = np.linalg.norm(d, axis=1)
            u = d / np.where(l > 0, l, 1.0)[:, None]
            T = _tensions(X, sig, rope.ea)
            slip = np.zeros(n + 2, dtype=int)             # +1: T_next > T_prev, -1: <, 0: stuck / end
            for j in range(1, n + 1):
                node = rope.nodes[j - 1]
                f = T[j] * u[j] - T[j - 1] * u[j - 1]
                dT = T[j] - T[j - 1]
                mu = ms if node.stick_rope else mk
                if abs(dT) > mu * float(np.linalg.norm(f)) + 1e-9 * (1.0 + T[j] + T[j - 1]):
                    slip[j] = 1 if dT > 0 else -1
            if not slip.any():
                break
            j = 1
            while j <= n:
                if slip[j] == 0:
                    j += 1
                    continue
                k = j
                while k + 1 <= n and slip[k + 1] != 0:
                    k += 1
                # slipping run j..k: segments j-1 .. k, material sig[j-1] .. sig[k+1]
                ratio = [1.0]
                for i in range(j, k + 1):
                    c = float(u[i - 1] @ u[i])
                    a = 1.0 - mk * mk
                    b = 1.0 - mk * mk * c
                    r = (b + math.sqrt(max(0.0, b * b - a * a))) / a
                    ratio.append(ratio[-1] * (r if slip[i] > 0 else 1.0 / r))
                rho = np.array(ratio)
                ls = l[j - 1:k + 1]
                mat = float(sig[k + 1] - sig[j - 1])
                if ls.sum() <= mat:
                    t0 = 0.0                                # the run is slack
                    share = ls / ls.sum() * mat
                else:
                    # g(t) = sum l_i / (1 + rho_i t / EA) - mat is convex and decreasing with
                    # g(0) > 0: Newton from t = 0 stays left of the root and converges to it
                    # monotonically (quadratically near it)
                    kr = rho / rope.ea
                    t0 = 0.0
                    for _ in range(_BISECT_ITER):
                        q = 1.0 + kr * t0
                        g = float(np.sum(ls / q)) - mat
                        step = g / float(np.sum(ls * kr / (q * q)))
                        t0 += step
                        if not step > 1e-15 * t0:
                            break
                    share = ls / (1.0 + rho * t0 / rope.ea)
                    share *= mat / share.sum()
                for i in range(j, k + 1):
                    sig[i] = sig[i - 1] + share[i - j]
                    rope.nodes[i - 1].sigma = float(sig[i])
                    rope.nodes[i - 1].stick_rope = False
                changed = True
                j = k + 1
        for j in range(1, n + 1):
            if slip[j] == 0:
                rope.nodes[j - 1].stick_rope = True
        return changed

    def _equilibrate(self, rope: Rope) -> None:
        """Gauss-Seidel between the edge positions (s) and the material split (sigma) until
        neither moves."""
        if not rope.nodes:
            return
        X = self.points(rope)
        sig = self._sigmas(rope)
        n = len(rope.nodes)
        frictionless_rope = rope.mu_rope[0] == 0.0

        def uniform_strain() -> None:               # sigma in proportion to length
            # sigma_j = L0 (l_0 + ... + l_{j-1}) / sum l, the running sums left to right as np.cumsum;
            # the total as np.sum adds (pairwise from 8 terms on)
            l = _lengths(X.tolist())
            run = list(accumulate(l))
            total = max(run[-1] if len(l) < 8 else float(np.sum(l)), 1e-300)
            for k, node in enumerate(rope.nodes):
                node.sigma = sig[k + 1] = rope.length * run[k] / total

        for _ in range(_MAX_SWEEPS):
            if frictionless_rope:
                uniform_strain()
            changed = False
            if rope.mu_edge[0] == 0.0:
                x_old = X.copy()
                self._newton_edges(rope, X, sig)
                changed = float(np.max(np.abs(X - x_old))) > 1e-8
                if frictionless_rope and all(0.0 < nd.s < 1.0 for nd in rope.nodes):
                    # one tension: Newton's shortest rope does not depend on sigma (only a hand-off
                    # at an edge end reads the tensions), so no second sweep is needed
                    uniform_strain()
                    break
            else:
                for j in range(1, n + 1):
                    x_old = X[j].copy()
                    self._slide_edge(rope, X, sig, j)
                    if float(np.linalg.norm(X[j] - x_old)) > 1e-8:
                        changed = True
            if not frictionless_rope:
                s_old = sig.copy()
                self._slide_rope(rope, X, sig)
                if float(np.max(np.abs(sig - s_old))) > 1e-12 * rope.length:
                    changed = True
            if not changed:
                break

    def _remove(self, rope: Rope) -> bool:
        """Drop nodes the rope no longer presses onto their edge (F . n_in <= 0, [Lee20] eq. 65)."""
        if not rope.nodes:
            return False
        X = self.points(rope)
        pts, sig = X.tolist(), self._sigma_list(rope)
        for j in range(1, len(rope.nodes) + 1):
            node = rope.nodes[j - 1]
            f, _, _, l0, l1 = _node_pull(rope.ea, pts[j - 1:j + 2], sig[j - 1:j + 2])
            short = min(l0, l1)
            press = _dot3(f, self._edge_ned(node.body, node.edge)[2])          # F . n_in
            if press <= 0.0 or short < _MIN_SEGMENT:     # (a node run into its neighbour merges)
                # the node leaves its edge only where the merged segment clears the body: a slack
                # rope presses on nothing, yet it must not pass through the body either (it lies on
                # the edge), and a node removed where the rope would pass through is inserted again
                # at once
                p, R = self._poses[node.body]
                if self._segment_depths((R.T @ (X[j - 1] - p))[None], (R.T @ (X[j + 1] - p))[None],
                                        self.meshes[node.body].halfspaces)[0] > PENETRATION_TOL:
                    continue
                # ... and where the rope still clears it once the other nodes have settled: two
                # nodes met at a vertex (a rope over a block corner) are both needed there, for
                # either alone slides off the corner and the rope cuts the face
                kept = [replace(nd) for nd in rope.nodes]
                del rope.nodes[j - 1]
                self._equilibrate(rope)
                if any(d.any() for d in self._deep([rope], [self.points(rope)])[0].values()):
                    rope.nodes[:] = kept
                    continue
                return True
        return False

    def _segment_depths(self, p0: np.ndarray, p1: np.ndarray, H: np.ndarray) -> np.ndarray:
        """segment_depths, by the kernel if there is one."""
        if self._kernel is not None:
            return self._kernel.segment_depths(p0, p1, H)
        return segment_depths(p0, p1, H)

    def _bodies(self, rope: Rope) -> Sequence[int]:
        return range(len(self.meshes)) if rope.bodies is None else rope.bodies

    def _body_depths(self, ropes: Sequence[Rope], X: Sequence[np.ndarray]):
        """(body, indices into ``ropes`` of the ropes that may touch it, segment_depths of all their
        segments at ``X`` in rope order) per body: one segment_depths call per body, not per rope."""
        for b in sorted({b for rope in ropes for b in self._bodies(rope)}):
            mine = [i for i, rope in enumerate(ropes) if b in self._bodies(rope)]
            p, R = self._poses[b]
            if self._kernel is not None:
                X0 = np.concatenate([X[i][:-1] for i in mine])
                X1 = np.concatenate([X[i][1:] for i in mine])
                yield b, mine, self._kernel.body_depths(X0, X1, p, R, self.meshes[b].halfspaces)
                continue
            P0 = np.concatenate([X[i][:-1] for i in mine]) - p
            P1 = np.concatenate([X[i][1:] for i in mine]) - p
            yield b, mine, segment_depths(P0 @ R, P1 @ R, self.meshes[b].halfspaces)

    def _deep(self, ropes: Sequence[Rope], X: Sequence[np.ndarray]) -> list[dict[int, np.ndarray]]:
        """Per rope, per body it may touch: which segments reach deeper than PENETRATION_TOL into the
        body (at ``X``)."""
        out: list[dict[int, np.ndarray]] = [{} for _ in ropes]
        for b, mine, depth in self._body_depths(ropes, X):
            deep = depth > PENETRATION_TOL
            start = 0
            for i in mine:
                out[i][b] = deep[start:start + len(X[i]) - 1]
                start += len(X[i]) - 1
        return out

    def _insert(self, rope: Rope, deep: Optional[dict[int, np.ndarray]] = None) -> bool:
        """Insert a node where a segment penetrates a body; True if one was inserted.  ``deep``:
        the detection at the present node positions (``_deep``), if already made."""
        X = None
        if deep is None:
            X = self.points(rope)
            deep = self._deep([rope], [X])[0]
        if not any(d.any() for d in deep.values()):
            return False
        if X is None:
            X = self.points(rope)
        bodies = self._bodies(rope)
        sig = self._sigmas(rope)
        cap = sum(len(self.meshes[b].edges) for b in bodies)
        for j in range(len(X) - 1):
            for b in bodies:
                if not deep[b][j]:
                    continue
                mesh = self.meshes[b]
                p, R = self._poses[b]
                q0, q1 = R.T @ (X[j] - p), R.T @ (X[j + 1] - p)
                skip = {(nd.body, nd.edge) for nd in rope.nodes[max(0, j - 1):j + 1]}
                cand = []                       # (edge, s, detour length, point) per admissible edge
                for k, e in enumerate(mesh.edges):
                    if (b, k) in skip or min(_point_edge_distance(q0, e.a, e.b),
                                             _point_edge_distance(q1, e.a, e.b)) < _MIN_SEGMENT:
                        # an edge through the segment's own end: a node there would lie on the
                        # end's edge, not bend the rope (the end's node moves on by a hand-off)
                        continue
                    s, length = _shortest_via(q0, q1, e.a, e.b)
                    x = e.a + s * (e.b - e.a)
                    if min(float(np.linalg.norm(x - q0)), float(np.linalg.norm(x - q1))) < _MIN_SEGMENT:
                        continue                # an end on this edge already: no zero-length segment
                    cand.append((k, s, length, x))
                best = None
                if cand:
                    xs = np.array([c[3] for c in cand])
                    H = mesh.halfspaces
                    clear = ((self._segment_depths(np.repeat(q0[None], len(cand), 0), xs, H) <= PENETRATION_TOL
                              ).astype(int)
                             + (self._segment_depths(xs, np.repeat(q1[None], len(cand), 0), H) <= PENETRATION_TOL))
                    # the shortest detour whose two new segments clear the body; where none does (a
                    # rope that must wrap two edges or more), the shortest with one clear segment,
                    # whose other segment then gets its own node
                    i = min(range(len(cand)), key=lambda i: (-int(clear[i]), cand[i][2]))
                    best = (cand[i][2], cand[i][0], cand[i][1])
                if best is None:
                    continue
                if len(rope.nodes) >= cap:
                    # a taut rope meets each edge of a convex body at most once
                    r = next(i for i, other in enumerate(self.ropes) if other is rope)
                    raise ValueError(f"rope {r} would bend over more than the {cap} edges of the bodies it may "
                                     f"touch (degenerate geometry)")
                _, k, s = best
                e = mesh.edges[k]
                x = e.a + s * (e.b - e.a)
                la, lb = float(np.linalg.norm(x - q0)), float(np.linalg.norm(q1 - x))
                sg = sig[j] + (sig[j + 1] - sig[j]) * la / max(la + lb, 1e-300)
                rope.nodes.insert(j, ContactNode(b, k, s, float(sg)))
                return True
        return False

    def _check_ends(self) -> None:
        """A world-point end inside a body its rope may touch leaves the rope no path round the
        body: refused (RopeEndInsideBody), where the contact search would otherwise insert nodes
        without end."""
        where = [(r, k, end.point) for r, rope in enumerate(self.ropes)
                 for k, end in ((0, rope.end_a), (1, rope.end_b)) if end.body is None]
        if not where:
            return
        x = np.array([w[2] for w in where], dtype=float).reshape(-1, 3)
        if not np.all(np.isfinite(x)):
            r, k, point = where[int(np.flatnonzero(~np.isfinite(x).all(axis=1))[0])]
            raise ValueError(f"rope {r} end {'AB'[k]} is at {np.asarray(point).tolist()}: not finite")
        for b, mesh in enumerate(self.meshes):
            H = mesh.halfspaces
            if not len(H):
                continue
            p, R = self._poses[b]
            depth = -np.max(((x - p) @ R) @ H[:, :3].T + H[:, 3], axis=1)
            for i in np.flatnonzero(depth > PENETRATION_TOL).tolist():
                r, k, _ = where[i]
                if b in self._bodies(self.ropes[r]):
                    raise RopeEndInsideBody(r, k, b, float(depth[i]))

    # ------------------------------------------------------------------ public
    def update(self, poses: Sequence[tuple[ArrayLike, ArrayLike]], ends: Optional[Sequence] = None,
               velocities: Optional[Sequence[tuple[ArrayLike, ArrayLike]]] = None,
               end_velocities: Optional[Sequence] = None) -> RopeContactResult:
        """Set the body poses ((p NED, R body->NED) per mesh) and world-point rope ends
        (``ends[r] = (xA or None, xB or None)``), detect contacts, move the nodes to Coulomb
        equilibrium, and return the loads.

        velocities[i] = (v of the body origin, omega), NED, and end_velocities[r] = (vA or None,
        vB or None) for world-point ends, give the axial damping its strain rate (none given:
        at rest).  Raises RopeEndInsideBody for a world-point end inside a body the rope may touch
        (no rope path exists), RopeOverstretched for ends further apart than (1 + MAX_STRAIN) L0,
        and ValueError for a rope that would wrap more edges than its bodies have."""
        self._set_poses(poses)
        for i, (p, R) in enumerate(self._poses):
            if not (np.all(np.isfinite(p)) and np.all(np.isfinite(R))):
                raise ValueError(f"the pose of body {i} is not finite (position {p.tolist()}): its motion blew up "
                                 f"under rope forces too large for the integration step")
        if ends is not None:
            for rope, (xa, xb) in zip(self.ropes, ends):
                if xa is not None:
                    rope.end_a.point = np.asarray(xa, dtype=float)
                if xb is not None:
                    rope.end_b.point = np.asarray(xb, dtype=float)
            self._end_cache.clear()
        self._check_ends()
        if self.ropes:
            # a chord far beyond any wire's breaking strain: refused before the contact search,
            # whose work on such geometry (a body flung through space) is large (all ropes at once)
            ends = np.array([self._ends_x(rope) for rope in self.ropes])          # (ropes, 2, 3)
            chord = np.linalg.norm(ends[:, 1] - ends[:, 0], axis=1)
            length = np.array([rope.length for rope in self.ropes])
            over = np.flatnonzero(chord > (1.0 + MAX_STRAIN) * length)
            if len(over):
                r = int(over[0])
                raise RopeOverstretched(r, float(chord[r]), self.ropes[r].length)
        # (v, skew(w)^T, p) per body: point velocities v + w x (x - p) for the damping
        field = None if velocities is None else [
            (np.asarray(v, dtype=float), skew(w).T, pose[0]) for (v, w), pose in zip(velocities, self._poses)]
        Xs = [self.points(rope) for rope in self.ropes]       # kept up to date for _loads
        deep = self._deep(self.ropes, Xs)
        # a straight rope clear of every body has nothing to move
        todo = [(r, deep[r]) for r, rope in enumerate(self.ropes)
                if rope.nodes or any(d.any() for d in deep[r].values())]
        passes = dict.fromkeys((r for r, _ in todo), 0)
        hits = set()
        while todo:
            for r, first in todo:
                rope = self.ropes[r]
                while passes[r] < _MAX_PASSES:
                    passes[r] += 1
                    changed = self._insert(rope, first)
                    first = None
                    self._equilibrate(rope)
                    changed = self._remove(rope) or changed
                    if not changed:
                        break
                    self._equilibrate(rope)
                else:
                    hits.add(r)
            # done when no segment passes through a body at the equilibrium: a node the equilibrium
            # slid (or handed on round a corner) may have left one that does (one detection for all)
            ropes = [r for r, _ in todo]
            for r in ropes:
                Xs[r] = self.points(self.ropes[r])
            deep = self._deep([self.ropes[r] for r in ropes], [Xs[r] for r in ropes])
            todo = [(r, d) for r, d in zip(ropes, deep) if any(x.any() for x in d.values())]
            hits.update(r for r, _ in todo if passes[r] >= _MAX_PASSES)
            todo = [(r, d) for r, d in todo if passes[r] < _MAX_PASSES]
        self.pass_limit_hits += len(hits)
        return self._loads(Xs, field, end_velocities)

    def _loads(self, Xs: list[np.ndarray], field: Optional[Sequence],
               end_velocities: Optional[Sequence]) -> RopeContactResult:
        """Tensions (with damping) and the loads of every rope at the present nodes ``Xs`` (the
        points of each rope), all ropes' segments at once: T_j = EA max(0, l_j / ds_j - 1) (+ c de/dt
        on taut segments), the pull T_j u_j of segment j on its start node,
        F_j = T_j u_j - T_{j-1} u_{j-1} on the contact nodes, and the sums of forces and moments
        (about the body origin) per body."""
        nb = len(self.meshes)
        if not Xs:
            return RopeContactResult(np.zeros((nb, 3)), np.zeros((nb, 3)), [], [], [], [])
        counts, first, rows, rows1, starts, ends = self._layout(tuple(len(X) - 1 for X in Xs))
        X_all = np.concatenate(Xs)
        if self._kernel is not None:
            return self._loads_compiled(Xs, X_all, counts, first, starts, ends, field, end_velocities)
        d = X_all[rows1] - X_all[rows]
        l = np.sqrt(np.einsum("ij,ij->i", d, d))
        u = d / np.where(l > 0, l, 1.0)[:, None]
        ds = []                                  # material length of every segment, rope by rope
        for rope in self.ropes:
            sig = self._sigma_list(rope)
            ds += [b - a for a, b in zip(sig[:-1], sig[1:])]
        ea = np.repeat([rope.ea for rope in self.ropes], counts)
        T = ea * np.maximum(0.0, l / np.maximum(ds, _MIN_SEGMENT * 1e-3) - 1.0)        # as _tensions
        body_of = np.array([-1 if b is None else b for rope in self.ropes for b in
                            (rope.end_a.body, *(nd.body for nd in rope.nodes), rope.end_b.body)])
        on_body = {b: body_of == b for b in set(body_of.tolist()) - {-1}}      # the nodes on each body
        c = np.array([rope.damping for rope in self.ropes])
        damped = (c > 0.0) & (np.maximum.reduceat(T, first) > 0.0)
        if damped.any():
            # the mean strain rate of each rope, sum_j u_j . (V_{j+1} - V_j) / L0, from its nodes'
            # velocities: a contact node or a body-attached end moves with its body (v + w x r), a
            # world-point end at its given velocity.  A node sliding along its edge adds
            # sdot D_j . (u_{j-1} - u_j), which vanishes in frictionless equilibrium (F_j . e = 0)
            # and is left out.  Exact in the inputs: a hook moved between updates changes the
            # damping by its velocity, never by a difference of positions over a step.
            V = np.zeros_like(X_all)
            if field is not None:
                for b, on in on_body.items():
                    v, WT, p = field[b]
                    V[on] = v + (X_all[on] - p) @ WT
            if end_velocities is not None:
                for rope, a, z, ev in zip(self.ropes, starts.tolist(), ends.tolist(), end_velocities):
                    for k, end, at in ((0, rope.end_a, a), (1, rope.end_b, z)):
                        if end.body is None and ev[k] is not None:
                            V[at] = ev[k]
            rate = np.add.reduceat(np.einsum("ij,ij->i", u, V[rows1] - V[rows]), first) / \
                np.array([rope.length for rope in self.ropes])
            cr = np.repeat(np.where(damped, c * rate, 0.0), counts)
            T = np.where(T > 0.0, np.maximum(0.0, T + cr), 0.0)
        seg_f = T[:, None] * u                   # pull of each segment on its start node
        # the force on every node of every rope: end A, contact nodes, end B
        node_f = np.zeros((len(X_all), 3))
        node_f[rows] += seg_f
        node_f[rows1] -= seg_f
        body_force, body_moment = np.zeros((nb, 3)), np.zeros((nb, 3))
        for b, on in on_body.items():
            f, arm = node_f[on], X_all[on] - self._poses[b][0]
            body_force[b] = f.sum(axis=0)
            # arm x f, written out: np.cross does the same products, at many times the cost
            (ax, ay, az), (fx, fy, fz) = arm.T, f.T
            body_moment[b] = np.stack((ay * fz - az * fy, az * fx - ax * fz, ax * fy - ay * fx), axis=1).sum(axis=0)
        # per rope: (force on end A, on end B), its segments' tensions, its contact nodes' forces
        end_force = list(zip(node_f[starts], node_f[ends]))
        first_l, starts_l, ends_l = first.tolist(), starts.tolist(), ends.tolist()
        tension = [T[a:a + k] for a, k in zip(first_l, counts.tolist())]
        contact_force = [node_f[a + 1:z] for a, z in zip(starts_l, ends_l)]
        return RopeContactResult(body_force, body_moment, end_force, tension, Xs, contact_force)

    def _loads_compiled(self, Xs: list[np.ndarray], X_all: np.ndarray, counts: np.ndarray, first: np.ndarray,
                        starts: np.ndarray, ends: np.ndarray, field: Optional[Sequence],
                        end_velocities: Optional[Sequence]) -> RopeContactResult:
        """``_loads`` computed by the kernel (rope_contact.c's mc_rope_loads; the same arithmetic):
        its inputs packed, its outputs laid out as ``_loads`` returns them."""
        sig, params, body_of, end_v = [], [], [], []
        for r, rope in enumerate(self.ropes):
            sig += self._sigma_list(rope)
            params += (rope.ea, rope.damping, rope.length)
            body_of += (-1 if rope.end_a.body is None else rope.end_a.body, *(nd.body for nd in rope.nodes),
                        -1 if rope.end_b.body is None else rope.end_b.body)
            if end_velocities is not None and rope.damping > 0.0:     # (read for damped ropes only)
                for k, end in ((0, rope.end_a), (1, rope.end_b)):
                    v = end_velocities[r][k]
                    if end.body is None and v is not None:
                        end_v.append((r, k, v))
        T, node_f, body_force, body_moment = self._kernel.loads(
            [len(X) - 1 for X in Xs], X_all, sig, params, body_of, [p for p, _ in self._poses], field, end_v)
        end_force = list(zip(node_f[starts], node_f[ends]))
        first_l, starts_l, ends_l = first.tolist(), starts.tolist(), ends.tolist()
        tension = [T[a:a + k] for a, k in zip(first_l, counts.tolist())]
        contact_force = [node_f[a + 1:z] for a, z in zip(starts_l, ends_l)]
        return RopeContactResult(body_force, body_moment, end_force, tension, Xs, contact_force)

    def _layout(self, counts: tuple[int, ...]) -> tuple[np.ndarray, ...]:
        """Index arrays of the ropes' segments stacked rope after rope, for ``counts`` segments per
        rope: (counts, first segment of each rope, start node and end node of each segment, first
        node (end A) and last node (end B) of each rope), nodes stacked the same way.  Kept per layout: the
        node counts change seldom, the updates are many."""
        out = self._layouts.get(counts)
        if out is None:
            if len(self._layouts) > 1000:          # (ropes whose node counts keep changing)
                self._layouts.clear()
            n = np.array(counts)
            first = np.concatenate(([0], np.cumsum(n)[:-1]))
            rows = np.arange(int(n.sum())) + np.repeat(np.arange(len(n)), n)
            starts = first + np.arange(len(n))
            out = self._layouts[counts] = (n, first, rows, rows + 1, starts, starts + n)
        return out

    def elastic_energy(self, poses: Optional[Sequence] = None) -> float:
        """sum over segments of EA (l - ds)^2 / (2 ds), taut segments only [J] (at ``poses`` if
        given, else at the poses of the last update; the nodes stay where they are on their edges)."""
        if poses is not None:
            self._set_poses(poses)
        e = 0.0
        for rope in self.ropes:
            X = self.points(rope)
            sig = self._sigmas(rope)
            l = np.linalg.norm(np.diff(X, axis=0), axis=1)
            ds = np.diff(sig)
            ext = np.maximum(0.0, l - ds)
            e += float(np.sum(rope.ea * ext ** 2 / (2.0 * ds)))
        return e

    def max_penetration(self) -> float:
        """The deepest point [m] of any rope segment inside any body it may touch (<= tol when
        no wire passes through a body)."""
        worst = -math.inf
        for b, _, depth in self._body_depths(self.ropes, [self.points(rope) for rope in self.ropes]):
            if len(self.meshes[b].halfspaces):
                worst = max(worst, float(np.max(depth)))
        return worst


def _point_edge_distance(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Distance [m] from point x to the segment a-b."""
    d = b - a
    t = min(1.0, max(0.0, float((x - a) @ d) / max(float(d @ d), 1e-300)))
    return float(np.linalg.norm(x - a - t * d))


def _shortest_via(p0: np.ndarray, p1: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(s, length) minimising |p0 - x| + |x - p1| over x = a + s (b - a), s in [0, 1] (a convex
    function of s: golden-section search)."""
    d = b - a

    def L(s: float) -> float:
        x = a + s * d
        return float(np.linalg.norm(x - p0) + np.linalg.norm(p1 - x))

    lo, hi = 0.0, 1.0
    gr = 0.5 * (math.sqrt(5.0) - 1.0)
    c, e = hi - gr * (hi - lo), lo + gr * (hi - lo)
    fc, fe = L(c), L(e)
    for _ in range(50):
        if fc < fe:
            hi, e, fe = e, c, fc
            c = hi - gr * (hi - lo)
            fc = L(c)
        else:
            lo, c, fc = c, e, fe
            e = lo + gr * (hi - lo)
            fe = L(e)
    s = 0.5 * (lo + hi)
    return s, L(s)
