"""Interference polyhedron of two convex polyhedra: its volume and centroid.

Pure numpy/scipy, no FMI.  The volume and the centroid feed the SMS volumetric contact force
(components/contact.py): f_n = E_eff V, applied at the interference centroid [SMS eqs. 73-87].

Sources
-------
[SMS]   SMS API final report, section 2.5.7 (sms_api_digest.md): the interference polyhedron by
        Muller-Preparata with the origin moved to an interior point, Quickhull, zero-distance
        tolerance 1 micron; volume and centroid by signed tetrahedra (eqs. 94-95).
[MP78]  D. E. Muller, F. P. Preparata, "Finding the intersection of two convex polyhedra",
        Theoretical Computer Science 7 (1978) 217-236.
[BDH96] C. B. Barber, D. P. Dobkin, H. Huhdanpaa, "The Quickhull algorithm for convex hulls",
        ACM TOMS 22 (1996) (qhull: scipy.spatial.HalfspaceIntersection and ConvexHull).
[BV04]  S. Boyd, L. Vandenberghe, "Convex Optimization", CUP 2004, section 8.5.1 (Chebyshev
        centre of a polyhedron as a linear programme).

Method
------
A polyhedron is a pair (vertices, halfspaces) as returned by ``ConvexShape.polyhedron``
(components/convex.py): halfspace rows (n, d), n.x + d <= 0 inside.  The interference polyhedron
is the set satisfying both halfspace sets.

0. Early exit and pruning with the vertices' bounding boxes: A n B lies in their overlap box, so
   an overlap thinner than 2 min_radius on some axis gives zero, and the planes that contain the
   whole overlap box are replaced by the box's 6 planes (most facets of a tessellated sphere).
1. Interior point: the Chebyshev centre (x_c, r) of the stacked halfspaces [BV04]:
   maximise r subject to n_i.x + r |n_i| <= -d_i (scipy.optimize.linprog, HiGHS).  r is the radius
   of the largest ball inside the intersection; r < ``min_radius`` (default 1e-6 m, the report's
   1 micron zero-distance tolerance) means disjoint, touching or a sliver: zero volume.  The LP
   (about 1 ms, 10 ms for two icospheres) is skipped when a cheap candidate (overlap-box centre,
   mean of the shared vertices, that mean centred on its chords along the axes) is already at
   least a quarter as deep as the overlap box allows (see ``_quick_interior``): r_max >= r0 >=
   min_radius then decides "interference" the same way;
   and hulls found apart by GJK (components/convex.py) give zero without it.
2. Muller-Preparata [MP78]: with the origin moved to x_c each plane n.x = -d maps to the dual point
   n/(-d); the convex hull of the dual points, dualised back, is the intersection.  qhull does
   exactly this in ``HalfspaceIntersection`` (which is why it needs a strictly interior point).
3. ConvexHull (Quickhull) of the intersection vertices; triangles (v1, v2, v3) relative to x_c:
       V = sum V_t,        V_t = |v1 . (v2 x v3)| / 6                       [SMS eq. 94]
       c = x_c + sum V_t (v1 + v2 + v3) / 4 / V                              [SMS eq. 95]
   (x_c is inside, so every tetrahedron has the sign of the outward orientation: |.| is exact.)

Robustness: touching, disjoint and degenerate (flat) cases return volume 0, centroid None; qhull
failures are retried with joggled input (QJ) and otherwise give volume 0; the result never holds
NaN.  Coordinates are shifted to a local origin first (qhull and the LP lose digits far from 0).
"""
from __future__ import annotations

import math
from typing import NamedTuple, Optional

import numpy as np
from scipy.optimize import linprog
from scipy.spatial import ConvexHull, HalfspaceIntersection, QhullError

__all__ = ["Interference", "interference", "shape_interference", "chebyshev_centre"]

MIN_RADIUS = 1e-6      # [m] the SMS zero-distance tolerance (1 micron)


class Interference(NamedTuple):
    """volume [m^3]; centroid (world) or None when there is no interference; vertices (k, 3) of
    the interference polyhedron (empty when none)."""

    volume: float
    centroid: Optional[np.ndarray]
    vertices: np.ndarray


_NONE = Interference(0.0, None, np.zeros((0, 3)))


def _split(poly) -> tuple[Optional[np.ndarray], np.ndarray]:
    """(vertices or None, halfspaces (m, 4)) from a (vertices, halfspaces) pair or a bare
    halfspace array."""
    if isinstance(poly, (tuple, list)) and len(poly) == 2:
        V, H = poly
        V = None if V is None else np.asarray(V, dtype=float).reshape(-1, 3)
    else:
        V, H = None, poly
    H = np.asarray(H, dtype=float)
    if H.ndim != 2 or H.shape[1] != 4:
        raise ValueError(f"halfspaces must be an (m, 4) array of rows (n, d), got shape {H.shape}")
    if not np.all(np.isfinite(H)) or (V is not None and not np.all(np.isfinite(V))):
        raise ValueError("polyhedron has non-finite entries")
    return V, H


def chebyshev_centre(halfspaces: np.ndarray) -> tuple[np.ndarray, float]:
    """Centre and radius of the largest ball inside {x: n_i.x + d_i <= 0} [BV04 8.5.1]:
    max r s.t. n_i.x + |n_i| r <= -d_i.  r < 0 (the most-violated depth) when the set is empty;
    r = inf when the set contains arbitrarily large balls; (0, -inf) if the LP fails."""
    H = np.asarray(halfspaces, dtype=float)
    A = np.column_stack((H[:, :3], np.linalg.norm(H[:, :3], axis=1)))
    res = linprog(c=[0.0, 0.0, 0.0, -1.0], A_ub=A, b_ub=-H[:, 3], bounds=[(None, None)] * 4,
                  method="highs")
    if res.status == 3:
        return np.zeros(3), math.inf
    if res.status != 0 or res.x is None or not np.all(np.isfinite(res.x)):
        return np.zeros(3), -math.inf
    return res.x[:3], float(res.x[3])


def _volume_centroid(P: np.ndarray, x0: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Hull of points P with interior point x0: (volume, centroid, hull vertices) [SMS eqs. 94-95]."""
    try:
        hull = ConvexHull(P)
    except QhullError:
        hull = ConvexHull(P, qhull_options="QJ")
    T = P[hull.simplices] - x0                          # (m, 3 vertices, 3)
    T1, T2 = T[:, 1], T[:, 2]                           # T1 x T2 as np.cross has it, without its overhead
    cross = np.stack((T1[:, 1] * T2[:, 2] - T1[:, 2] * T2[:, 1], T1[:, 2] * T2[:, 0] - T1[:, 0] * T2[:, 2],
                      T1[:, 0] * T2[:, 1] - T1[:, 1] * T2[:, 0]), axis=-1)
    vt = np.abs(np.einsum("ij,ij->i", T[:, 0], cross)) / 6.0
    vol = float(vt.sum())
    c = x0 + (vt[:, None] * T.sum(axis=1)).sum(axis=0) / (4.0 * vol) if vol > 0.0 else x0
    return vol, c, P[hull.vertices]


def _quick_interior(H: np.ndarray, V: np.ndarray, half: np.ndarray) -> tuple[Optional[np.ndarray], float]:
    """A well-inside point without the LP, if an easy one exists: the overlap-box centre (the
    local origin) or the mean of the vertices lying in both polyhedra (a point of A n B by
    convexity).  Accepted when its inscribed radius r0 >= r_up / 4, r_up = the overlap box's
    smallest half width >= the Chebyshev radius: then r_max >= r0 (the zero-volume decision is
    the LP's whenever r_up / 4 >= min_radius) and qhull sees a point nearly as central as the
    Chebyshev centre.  (None, 0) otherwise.  V, H relative to the overlap box centre."""
    r_up = float(half.min())
    r0 = float(-H[:, 3].max())
    if r0 >= 0.25 * r_up:
        return np.zeros(3), r0
    V = V[np.all(np.abs(V) <= half * (1.0 + 1e-12), axis=1)]     # only these can be in A n B
    inside = V[(V @ H[:, :3].T + H[:, 3]).max(axis=1) <= 1e-12 * max(r_up, 1.0)]
    if len(inside):
        x = inside.mean(axis=0)
        r0 = float(-(H[:, :3] @ x + H[:, 3]).max())
        if r0 >= 0.25 * r_up:
            return x, r0
        # the mean of the shared vertices lies on a face when the overlap is a thin slab (a box
        # resting on a deck: its bottom corners): centre it on the chords through it along the
        # axes, thinnest first (a point of A n B stays one: the chord's midpoint is inside)
        x = x.copy()
        # a tilted slab's bounding box is thicker than the slab: there, a point 0.1 % of the box's
        # size inside every plane is central enough for qhull (dual points within 1000 x the scale;
        # tests/components/test_convex.py checks the volumes and centroids against the LP's)
        enough = min(0.25 * r_up, 1e-3 * float(half.max()))
        for _ in range(2):
            for axis in np.argsort(half):
                a = H[:, axis]
                room = -(H[:, :3] @ x + H[:, 3])                 # >= 0 inside: s a <= room
                with np.errstate(divide="ignore", invalid="ignore"):
                    hi = np.min(np.where(a > 1e-12, room / a, np.inf))
                    lo = np.max(np.where(a < -1e-12, room / a, -np.inf))
                if np.isfinite(hi) and np.isfinite(lo) and hi >= lo:
                    x[axis] += 0.5 * (lo + hi)
            r0 = float(-(H[:, :3] @ x + H[:, 3]).max())
            if r0 >= enough:
                return x, r0
    return None, 0.0


def _apart(Va: np.ndarray, Vb: np.ndarray) -> bool:
    """True if the convex hulls of two vertex sets are disjoint (GJK distance > 0)."""
    from components.convex import _gjk_core

    def sup(V):
        return lambda d: tuple(V[int(np.argmax(V @ np.array(d)))].tolist())
    v0 = tuple((Va.mean(axis=0) - Vb.mean(axis=0)).tolist())
    return not _gjk_core(sup(Va), sup(Vb), v0, 1e-9, 128).intersecting


def interference(poly_a, poly_b, min_radius: float = MIN_RADIUS) -> Interference:
    """Interference polyhedron of two convex polyhedra, its volume and centroid.

    poly_a, poly_b: (vertices (n, 3), halfspaces (m, 4)) in one frame, as from
    ``ConvexShape.polyhedron(p, R)``; the vertices (may be None) serve a bounding-box early exit
    and the local origin.  A bare (m, 4) halfspace array is accepted too.  Returns volume 0 and
    centroid None when the largest ball inside the intersection has radius < ``min_radius``
    (disjoint, touching or sliver contact).  Raises ValueError only for malformed input or an
    unbounded intersection.
    """
    Va, Ha = _split(poly_a)
    Vb, Hb = _split(poly_b)
    H = np.vstack((Ha, Hb))
    norms = np.linalg.norm(H[:, :3], axis=1)
    if np.any((norms == 0.0) & (H[:, 3] > 0.0)):
        return _NONE                                    # an impossible row 0.x + d <= 0, d > 0: empty
    H = H[norms > 0.0] / norms[norms > 0.0, None]      # unit normals; 0.x + d <= 0 rows carry no geometry
    if Va is not None and Vb is not None and len(Va) and len(Vb):
        lo = np.maximum(Va.min(axis=0), Vb.min(axis=0))
        hi = np.minimum(Va.max(axis=0), Vb.max(axis=0))
        if np.any(hi - lo < 2.0 * min_radius):          # bounding boxes apart: no ball of min_radius
            return _NONE
        origin, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
        H[:, 3] += H[:, :3] @ origin                    # shift: n.(x' + o) + d = n.x' + (d + n.o)
        # A n B lies in the overlap box [-half, half]: a plane that holds the whole box cannot
        # bound A n B, drop it (most of a tessellated sphere's facets) and bound by the box
        # instead (A n B = (kept planes) n box: each dropped halfspace contains the box)
        far = np.abs(H[:, :3]) @ half + H[:, 3] <= 0.0
        if np.any(far):
            box = np.zeros((6, 4))
            box[:3, :3], box[3:, :3] = np.eye(3), -np.eye(3)
            box[:, 3] = -np.concatenate((half, half))
            H = np.vstack((H[~far], box))
        xc, r = _quick_interior(H, np.vstack((Va, Vb)) - origin, half)
        if xc is not None and r < min_radius:
            xc = None                                   # let the LP decide near the tolerance
        if xc is None and _apart(Va, Vb):
            return _NONE                                # GJK: disjoint hulls, no LP needed
    else:
        origin, xc, r = np.zeros(3), None, 0.0
    if xc is None:
        xc, r = chebyshev_centre(H)
        if math.isinf(r) and r > 0:
            raise ValueError("the halfspaces do not bound a finite region")
        if not r >= min_radius:
            return _NONE
    P = None
    for opts in (None, "H QJ"):
        try:
            hs = HalfspaceIntersection(H, xc) if opts is None else HalfspaceIntersection(H, xc, qhull_options=opts)
            P = hs.intersections
            break
        except (QhullError, ValueError):
            continue
    if P is None or len(P) < 4:
        return _NONE
    if not np.all(np.isfinite(P)):
        raise ValueError("the halfspaces do not bound a finite region")
    try:
        vol, c, verts = _volume_centroid(P, xc)
    except (QhullError, ValueError):
        return _NONE
    if not (vol > 0.0 and math.isfinite(vol) and np.all(np.isfinite(c))):
        return _NONE
    return Interference(vol, c + origin, verts + origin)


def shape_interference(shapeA, poseA, shapeB, poseB, min_radius: float = MIN_RADIUS) -> Interference:
    """``interference`` of two ConvexShapes (components/convex.py) at poses (p, R) or (p, q)."""
    from components.convex import as_pose
    pA, RA = as_pose(poseA)
    pB, RB = as_pose(poseB)
    return interference(shapeA.polyhedron(pA, RA), shapeB.polyhedron(pB, RB), min_radius)

