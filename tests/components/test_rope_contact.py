"""Wire rope wrapping rigid bodies (components/rope_contact.py, components/rope_bodies.py), issue 25:
the verification cases of Lee (2020) sections 3.1.1-3.1.3 (wire_rope_mooring_digest.md 2.5-2.7)
and the measurement behind the coupling decision (docs/rope_contact.md).

* box dropped on a rope: the thesis gives no span and EA; the digest's reconstruction (anchors on
  the rope line 89.2 m apart, EA = 9e8 N, 10 m cube of 1 t, centre 20 m above the line) gives the
  analytic minimum height and maximum tension from energy + geometry; ours at h = 0.01 s within
  1 %;
* friction along the edge (30 deg incline): a = g (sin 30 - mu cos 30) (the digest's corrected
  eq. 112), stick at mu = tan 30;
* friction along the rope (10 t and 20 t over two 90 deg edges): the exact point-contact Coulomb
  curve |T_next - T_prev| = mu |F| (ours) and the thesis' linearised eq. 113 are both recorded;
* sliding off two ropes, two meshes of one box: the same motion and detachment time;
* coupling: the rope wrench held over a communication step without prediction (FMU ports,
  zero-order hold) gains energy; evaluated at the predicted mid-step pose it does not.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from components.convex import Box, ConvexMesh
from components.rigid_body import RigidBody, RigidBodyParameters
from components.rope_bodies import Body, EndContact, RopeBodies
from components.rope_contact import (ContactNode, EdgeMesh, Rope, RopeContact, RopeEnd, RopeEndInsideBody,
                                     RopeOverstretched, segment_depth, segment_depths)
from components.rotations import quat_from_euler_zyx, skew

VALIDATION_COMPONENT = "contact"
G = 9.81
SRC = "wire_rope_mooring_digest.md"


# ------------------------------------------------------------------------------------ geometry
def test_box_edges_and_inward_normals():
    mesh = EdgeMesh.from_shape(Box((1.0, 2.0, 3.0)))
    assert len(mesh.edges) == 12
    for e in mesh.edges:
        mid = 0.5 * (e.a + e.b)
        # the inward normal of an edge of a box centred on the origin points at the centre's side
        assert float(e.n_in @ (-mid)) > 0.0
        assert math.isclose(float(np.linalg.norm(e.n_in)), 1.0)
    assert len(EdgeMesh.from_shape(Box((1.0, 2.0, 3.0)), refine=3).edges) == 36


def test_segment_depth():
    _, H = Box((1.0, 1.0, 1.0)).polyhedron()
    assert segment_depth(np.array([-3.0, 0, 0]), np.array([3.0, 0, 0]), H) == pytest.approx(1.0)
    assert segment_depth(np.array([-3.0, 0, 0.9]), np.array([3.0, 0, 0.9]), H) == pytest.approx(0.1)
    assert segment_depth(np.array([-3.0, 0, 1.5]), np.array([3.0, 0, 1.5]), H) < 0.0


def test_rope_wraps_a_block_and_leaves_no_segment_inside():
    """A sling pulled down through a fixed block wraps two edges; no segment stays inside."""
    mesh = EdgeMesh.from_shape(Box((2.0, 2.0, 2.0)))
    rope = Rope(RopeEnd(np.array([-5.0, 0.0, 0.5])), RopeEnd(np.array([5.0, 0.0, 0.5])), 10.0, 1e8)
    rc = RopeContact([mesh], [rope])
    res = rc.update([(np.zeros(3), np.eye(3))])
    assert len(rope.nodes) == 2
    assert rc.max_penetration() <= 1e-9
    # the rope goes round the bottom (z = +2) edges, the shorter way
    assert all(abs(float(p[2]) - 2.0) < 1e-9 for p in res.points[0][1:-1])
    # frictionless: one tension, and the rope lifts the block like a sling (-z, up)
    assert np.ptp(res.tension[0]) < 1e-6 * res.tension[0].max()
    assert res.body_force[0][2] < 0.0


def _random_sling_run(seed: int, n_updates: int = 100, anywhere: bool = False) -> tuple[int, float]:
    """Four slings like the block turnover's (lugs on pad-eyes 0.3 m off the end faces of a 27 x 34 x
    9 m block, hooks 5-30 m above, unstretched lengths 0.97-1.3 times the chord: taut or slack); the
    block turns about y at up to 1.7 deg per update and the hooks wander 0.15 m per update (slings
    going slack over the edges, coming taut round a corner).  ``anywhere``: lugs anywhere on any face
    (on it or 0.3 m off), hooks 3-30 m off in any direction, the block turning about a random axis.
    Returns (updates that ran out of insert / remove passes, deepest sling point inside the block
    over all updates)."""
    size = np.array([27.0, 34.0, 9.0])
    rng = np.random.default_rng(seed)
    mesh = EdgeMesh.from_shape(Box(tuple(size / 2)))
    axis = rng.normal(size=3) if anywhere else np.array([0.0, 1.0, 0.0])
    axis /= np.linalg.norm(axis)

    def rot(angle: float) -> np.ndarray:
        k = skew(axis)
        return np.eye(3) + math.sin(angle) * k + (1.0 - math.cos(angle)) * k @ k

    def ok(hook: np.ndarray, rope: Rope, R: np.ndarray) -> bool:      # hook clear of the block, sling not overstretched
        return (not np.all(np.abs(R.T @ hook) < size / 2 + 0.05)
                and float(np.linalg.norm(hook - R @ rope.end_b.point)) < 1.1 * rope.length)

    ropes = []
    for _ in range(4):
        if anywhere:
            ax = int(rng.integers(3))
            lug = (rng.random(3) - 0.5) * size
            lug[ax] = rng.choice([-1.0, 1.0]) * (size[ax] / 2 + rng.choice([0.0, 0.3]))
            while True:
                d = rng.normal(size=3)
                hook = lug + d / np.linalg.norm(d) * rng.uniform(3, 30)
                if not np.all(np.abs(hook) < size / 2 + 0.5):
                    break
        else:
            sx = rng.choice([-1.0, 1.0])
            lug = np.array([sx * (size[0] / 2 + 0.3), rng.uniform(-16, 16), rng.uniform(-4.4, 4.4)])
            hook = lug + np.array([sx * rng.uniform(-8, 8), rng.uniform(-8, 8), -rng.uniform(5, 30)])
        ropes.append(Rope(RopeEnd(hook), RopeEnd(lug, 0), float(np.linalg.norm(hook - lug)) * rng.uniform(0.97, 1.3),
                          1.9e8))
    rc = RopeContact([mesh], ropes)
    angle, rate = 0.0, rng.uniform(-0.03, 0.03)
    drift = rng.normal(size=(4, 3)) * 0.1
    hits, deepest = 0, -math.inf
    for _ in range(n_updates):
        R = rot(angle)
        ends = []
        for i, rope in enumerate(ropes):
            h = rope.end_a.point
            for _try in range(30):
                hn = h + drift[i] + rng.normal(size=3) * 0.15
                if ok(hn, rope, R):
                    h = hn
                    break
            else:
                drift[i] = rng.normal(size=3) * 0.1
            ends.append((h, None))
        before = rc.pass_limit_hits
        rc.update([(np.zeros(3), R)], ends=ends)
        hits += rc.pass_limit_hits > before
        deepest = max(deepest, rc.max_penetration())
        if all(ok(rope.end_a.point, rope, rot(angle + rate)) for rope in ropes):
            angle += rate
    return hits, deepest


@pytest.mark.slow
def test_random_slings_round_a_block_settle_every_update():
    """2 500 updates of random slings round a turning block (``_random_sling_run``): no update runs out
    of its insert / remove passes, and no sling point is inside the block after any update (the
    deepest is round-off, 1.8e-15 m).  A new node goes on the edge of the shortest detour whose two new
    segments clear the block, never on an edge through the segment's own end, and a node leaves its
    edge only where the rope then clears the block.  Before that rule (a node on an edge through the
    segment's end, removed again by the next pass), 7 of these updates hit the pass limit, with slings
    up to 0.74 m inside the block (measured, docs/rope_contact.md)."""
    hits, deepest = 0, -math.inf
    for seed in range(25):
        h, d = _random_sling_run(seed)
        hits, deepest = hits + h, max(deepest, d)
    assert hits == 0
    assert deepest <= 1e-12


def test_random_slings_anywhere_round_a_block_settle_every_update():
    """800 updates of slings from anywhere on the block to hooks in any direction, the block turning
    about a random axis (``_random_sling_run(anywhere=True)``): slings over the block's corners too.
    Two nodes that meet at a vertex both stay: either alone slides off the corner and lets the rope
    cut a face (a rope over a corner cycled between the two until both were kept, measured with
    this generator at other seeds)."""
    for seed in range(8):
        hits, deepest = _random_sling_run(seed, anywhere=True)
        assert hits == 0, seed
        assert deepest <= 1e-12, seed


def test_segment_depths_of_many_segments_are_those_of_each():
    _, H = Box((1.0, 2.0, 3.0)).polyhedron()
    rng = np.random.default_rng(3)
    p0, p1 = 4.0 * rng.normal(size=(200, 3)), 4.0 * rng.normal(size=(200, 3))
    p1[:5] = p0[:5]                                               # points, inside or out
    many = segment_depths(p0, p1, H)
    assert np.any(many > 0.0) and np.any(many < 0.0)
    for a, b, d in zip(p0, p1, many):
        assert d == segment_depth(a, b, H)
        # by sampling: outside, no point of the segment is inside; inside, the midpoint depth is a
        # lower bound of the deepest point (2001 samples: within 1 cm here)
        x = a + np.linspace(0.0, 1.0, 2001)[:, None] * (b - a)
        deepest = float(np.max(-np.max(x @ H[:, :3].T + H[:, 3], axis=1)))
        if d > 0.0:
            assert d <= deepest + 0.01
        else:
            assert deepest <= 0.0


def test_scalar_node_arithmetic_is_numpy_to_the_last_bit():
    """The per-node arithmetic in scalars (a single node's Newton step, the force on a node, segment
    lengths) gives the vectorised numpy results bit for bit, so the fast paths do not change a
    trajectory."""
    from components import rope_contact as rc

    rng = np.random.default_rng(7)
    for k in range(500):
        X = 10.0 * rng.normal(size=(3, 3))
        sig = np.array([0.0, rng.uniform(1.0, 20.0), 25.0])
        D = 5.0 * rng.normal(size=(1, 3))
        mu = 0.2 if k % 2 else 0.0
        rope = Rope(RopeEnd(X[0]), RopeEnd(X[2]), 25.0, 1e8, mu_rope=(mu, mu))
        assert rc._newton_step_one(X.tolist(), sig.tolist(), D[0].tolist(), rope) == rc._newton_step(X, sig, D, rope)[0]
        f, t0, t1, l0, l1 = rc._node_pull(rope.ea, X.tolist(), sig.tolist())
        T = rc._tensions(X, sig, rope.ea)
        d = np.diff(X, axis=0)
        l = np.linalg.norm(d, axis=1)
        assert [t0, t1] == T.tolist() and [l0, l1] == l.tolist() == rc._lengths(X.tolist())
        assert f == ((T[1] / l[1]) * d[1] - (T[0] / l[0]) * d[0]).tolist()
        assert rc._edot3(D[0], X[0]) == float(np.einsum("ij,ij->i", D, X[:1])[0])


def test_cached_positions_follow_the_poses_the_ends_and_the_nodes():
    """Node and end positions are kept through an update; a new pose, new ends or a moved node give
    fresh ones (``points`` equals p + R x computed anew)."""
    rope = Rope(RopeEnd(np.array([-3.0, 0.0, -3.0])), RopeEnd(np.array([3.0, 0.0, -3.0])), 9.0, 1e8)
    rc = RopeContact([EdgeMesh.from_shape(Box((1.0, 1.0, 1.0)))], [rope])

    def fresh() -> np.ndarray:
        p, R = rc._poses[0]
        nodes = [p + R @ (rc.meshes[0].edges[n.edge].a + n.s * (rc.meshes[0].edges[n.edge].b
                                                                - rc.meshes[0].edges[n.edge].a)) for n in rope.nodes]
        return np.array([rope.end_a.point, *nodes, rope.end_b.point])

    rc.update([(np.array([0.0, 0.0, -2.5]), np.eye(3))])       # the rope bent over the top edges
    assert len(rope.nodes) == 2
    assert np.array_equal(rc.points(rope), fresh())
    R = np.array([[1.0, 0.0, 0.0], [0.0, math.cos(0.1), -math.sin(0.1)], [0.0, math.sin(0.1), math.cos(0.1)]])
    rc.update([(np.array([0.1, 0.0, -2.4]), R)], ends=[(np.array([-3.0, 0.2, -3.1]), None)])
    assert np.array_equal(rc.points(rope), fresh())
    rope.nodes[0].s = 0.25                                     # moved by hand: read afresh
    assert np.array_equal(rc.points(rope), fresh())
    rope.end_a.point = np.array([-3.0, 0.3, -3.2])             # an end set by hand, too
    assert np.array_equal(rc.points(rope), fresh())
    res = rc.update([(np.array([0.1, 0.0, -2.4]), R)])
    assert np.array_equal(res.points[0], fresh()) and np.array_equal(rc.points(rope), fresh())


def test_driven_ends_move_on_at_their_velocity_until_set_again():
    """RopeBodies' driven ends (all evaluated in one array expression): x0 + (t - t0) v from the time
    each was set, an end set later joins, undriven ends stay None."""
    rb = RigidBody(RigidBodyParameters(mass=1000.0, inertia=np.eye(3) * 700.0, gravity=0.0), compiled=False)
    ropes = [Rope(RopeEnd(np.array([0.0, y, -5.0])), RopeEnd(np.array([0.0, y, -0.5]), 0), 4.6, 1e7)
             for y in (-0.4, 0.4)]
    s = RopeBodies([Body(EdgeMesh.from_shape(Box((0.5, 0.5, 0.5))), rb)], ropes, substep=1e-3)
    s.set_end_motion(0, 0, np.array([0.0, -0.4, -5.0]), np.array([0.1, 0.0, 0.0]))
    s.step(0.01)
    ends = s._ends(0.0)
    assert ends[1] == (None, None)
    assert np.allclose(ends[0][0], [0.001, -0.4, -5.0], rtol=0.0, atol=1e-15)
    s.set_end_motion(1, 0, np.array([0.0, 0.4, -5.0]), np.array([0.0, 0.0, -0.2]))
    s.step(0.01)
    ends = s._ends(0.005)
    assert np.allclose(ends[0][0], [0.0025, -0.4, -5.0], rtol=0.0, atol=1e-15)
    assert np.allclose(ends[1][0], [0.0, 0.4, -5.003], rtol=0.0, atol=1e-15)
    assert ends[0][1] is None and ends[1][1] is None


def test_damping_takes_the_strain_rate_from_the_end_velocities():
    """T = EA e + c de/dt with de/dt = u . (v_B - v_A) / L0 exactly: the velocities given, not a
    difference of positions (a hook moved between updates changes nothing but the elastic part)."""
    ea, c, l0 = 1e8, 2e6, 9.9
    rope = Rope(RopeEnd(np.array([0.0, 0.0, 0.0])), RopeEnd(np.array([10.0, 0.0, 0.0])), l0, ea, damping=c)
    rc = RopeContact([EdgeMesh.from_shape(Box((1.0, 1.0, 1.0)))], [rope])
    far = [(np.array([0.0, 0.0, 50.0]), np.eye(3))]
    v_a, v_b = np.array([-0.3, 0.2, 0.0]), np.array([0.5, 0.0, 0.1])
    res = rc.update(far, ends=[(None, None)], velocities=[(np.zeros(3), np.zeros(3))], end_velocities=[(v_a, v_b)])
    expected = ea * (10.0 / l0 - 1.0) + c * (0.5 + 0.3) / l0
    assert res.tension[0][0] == pytest.approx(expected, rel=1e-12)
    # moved far between two updates, at rest: the elastic tension only
    res = rc.update(far, ends=[(np.array([-1.0, 0.0, 0.0]), None)])
    assert res.tension[0][0] == pytest.approx(ea * (11.0 / l0 - 1.0), rel=1e-12)
    # a body-attached end moves with its body: v + w x r
    rope.end_b = RopeEnd(np.array([0.0, 0.0, -1.0]), 0)
    pose = [(np.array([10.0, 0.0, 1.0]), np.eye(3))]       # the lug at (10, 0, 0), on the top face
    w = np.array([0.0, 0.0, 0.4])                           # lug velocity w x (0, 0, -1) = 0: spin about z
    res = rc.update(pose, ends=[(np.zeros(3), None)], velocities=[(np.array([0.2, 0.0, 0.0]), w)],
                    end_velocities=[(np.zeros(3), None)])
    assert res.tension[0][0] == pytest.approx(ea * (10.0 / l0 - 1.0) + c * 0.2 / l0, rel=1e-12)


def test_a_world_end_inside_a_body_is_refused():
    rope = Rope(RopeEnd(np.array([0.2, 0.0, 0.0])), RopeEnd(np.array([10.0, 0.0, 0.0])), 9.0, 1e8)
    rc = RopeContact([EdgeMesh.from_shape(Box((1.0, 1.0, 1.0)))], [rope])
    with pytest.raises(RopeEndInsideBody, match="end A of rope 0 is 0.8 m inside body 0"):
        rc.update([(np.zeros(3), np.eye(3))])
    with pytest.raises(ValueError, match="pose of body 0 is not finite"):
        rc.update([(np.array([np.nan, 0.0, 0.0]), np.eye(3))])
    # ends 20 m apart on a 9 m rope: strain 1.2, beyond MAX_STRAIN
    with pytest.raises(RopeOverstretched, match="the ends of rope 0 are 20 m apart, 2.222 times"):
        rc.update([(np.zeros(3), np.eye(3))], ends=[(np.array([-10.0, 0.0, 5.0]), np.array([10.0, 0.0, 5.0]))])


def _block_and_hook(velocity: float, damping: float, radius: float = 1.0, k: float = 2e6):
    """A 1000 kg cube (2 m), weightless, moving along +x at ``velocity`` toward a hook held at x = 2.1 m
    (its block a sphere of ``radius``, 0.1 m away); a slack rope (20 m, ends 1.1 m apart) ties the hook to the
    cube's +x face."""
    rb = RigidBody(RigidBodyParameters(mass=1000.0, inertia=1000.0 * 4.0 / 6.0 * np.eye(3), gravity=0.0),
                   velocity=(velocity, 0.0, 0.0), compiled=False)
    rope = Rope(RopeEnd(np.array([2.1, 0.0, 0.0])), RopeEnd(np.array([1.0, 0.0, 0.0]), 0), 20.0, 1e8)
    s = RopeBodies([Body(EdgeMesh.from_shape(Box((1.0, 1.0, 1.0))), rb)], [rope], substep=1e-3,
                   end_contacts=[EndContact(0, 0, radius, k, damping)])
    s.set_end_motion(0, 0, np.array([2.1, 0.0, 0.0]), np.zeros(3))
    return s, rb


def test_a_hook_block_pushes_a_body_off():
    """EndContact: a hook 0.25 m into its 1 m radius (the face 0.75 m away) pushes the body with
    k delta along the face normal and takes the opposite force, at the face; a cube thrown at it
    without damping comes back at its speed, having gone in v sqrt(m / k) (undamped linear spring);
    with damping it comes back slower; no moment where the hook is in line with the CG."""
    s, rb = _block_and_hook(0.0, 0.0)
    s.set_end_motion(0, 0, np.array([1.75, 0.0, 0.0]), np.zeros(3))
    res = s.evaluate_now()
    assert s.end_contact_force[0] == pytest.approx([2e6 * 0.25, 0.0, 0.0], abs=1e-9)
    assert res.body_force[0] == pytest.approx([-2e6 * 0.25, 0.0, 0.0], abs=1e-9)
    assert res.body_moment[0] == pytest.approx(np.zeros(3), abs=1e-9)
    s.set_end_motion(0, 0, np.array([1.75, 0.5, 0.0]), np.zeros(3))        # off the CG line: a moment
    res = s.evaluate_now()
    assert res.body_moment[0] == pytest.approx(np.cross([1.0, 0.5, 0.0], [-5e5, 0.0, 0.0]), abs=1e-6)

    for damping, rebound in ((0.0, 1.0), (2e4, None)):
        s, rb = _block_and_hook(1.0, damping)
        x_max = -np.inf
        for _ in range(300):                     # contact from 0.1 s, about pi sqrt(m / k) = 70 ms long
            s.step(1e-3)
            x_max = max(x_max, float(rb.position[0]))
        if rebound is None:
            assert -0.9 < rb.velocity[0] < -0.3                  # e = exp(-zeta pi / sqrt(1 - zeta^2)), zeta 0.22
        else:
            assert rb.velocity[0] == pytest.approx(-1.0, rel=1e-3)
            assert x_max - 0.1 == pytest.approx(1.0 * math.sqrt(1000.0 / 2e6), rel=1e-2)
        assert abs(rb.angular_velocity_body).max() < 1e-12


def test_a_hook_that_still_reaches_inside_is_refused():
    """A hook block too soft for the blow (k 100 N/m) lets the hook's centre into the body: refused
    by name, as a hook without a block is."""
    s, _ = _block_and_hook(1.0, 0.0, k=100.0)
    with pytest.raises(RopeEndInsideBody, match="end A of rope 0"):
        for _ in range(3000):
            s.step(1e-3)


# ------------------------------------------------------------------------ 2.5 box drop on a rope
DROP_M, DROP_A, DROP_C, DROP_EA = 1000.0, 5.0, 39.6, 9e8
DROP_L0 = 2 * DROP_C + 2 * DROP_A


def drop_system(coupling_step: float, midpoint: bool = True) -> tuple[RopeBodies, RigidBody]:
    rb = RigidBody(RigidBodyParameters(mass=DROP_M, inertia=DROP_M * (2 * DROP_A) ** 2 / 6 * np.eye(3)),
                   position=(0.0, 0.0, -20.0), compiled=False)
    rope = Rope(RopeEnd(np.array([-DROP_L0 / 2, 0, 0])), RopeEnd(np.array([DROP_L0 / 2, 0, 0])), DROP_L0, DROP_EA)
    s = RopeBodies([Body(EdgeMesh.from_shape(Box((DROP_A,) * 3)), rb)], [rope], substep=min(1e-3, coupling_step),
                   coupling_step=coupling_step, midpoint=midpoint)
    return s, rb


def drop_analytic() -> tuple[float, float]:
    """(minimum height of the centre above the rope line [m], maximum tension [N]):
    m g (20 - h) = k x^2 / 2, x = 2 (sqrt(c^2 + (a - h)^2) - c), k = EA / L0."""
    k = DROP_EA / DROP_L0

    def x(h: float) -> float:
        return 2.0 * (math.hypot(DROP_C, DROP_A - h) - DROP_C)

    h = brentq(lambda h: DROP_M * G * (20.0 - h) - 0.5 * k * x(h) ** 2, 0.0, DROP_A)
    return h, k * x(h)


def run_drop(coupling_step: float, t_end: float, midpoint: bool = True) -> dict:
    s, rb = drop_system(coupling_step, midpoint)
    e0 = s.energy()
    z_max, t_max, t_contact = -math.inf, 0.0, None
    while s.time < t_end - 1e-9:
        s.step(coupling_step)
        z_max = max(z_max, float(rb.position[2]))
        t_max = max(t_max, float(s.result.tension[0].max()))
        if t_contact is None and s.ropes[0].nodes:
            t_contact = s.time
    return {"h_min": -z_max, "T_max": t_max, "t_contact": t_contact,
            "dE": (s.energy() - e0) / (DROP_M * G * 20.0)}


def test_box_drop_on_rope_lee_3_1_1(validation):
    h_ref, t_ref = drop_analytic()
    r = run_drop(0.01, 3.6)                 # the thesis' step, to the lowest point and back up
    validation.record(case="box drop on a rope: minimum height of the centre, h = 0.01 s", reference=h_ref,
                      ours=r["h_min"], tolerance=0.01, tol_kind="rel", unit="m",
                      source=f"{SRC} 2.5 (energy + geometry, the digest's reconstruction)")
    validation.record(case="box drop on a rope: maximum tension, h = 0.01 s", reference=t_ref,
                      ours=r["T_max"], tolerance=0.01, tol_kind="rel", unit="N",
                      source=f"{SRC} 2.5 (energy + geometry, the digest's reconstruction)")
    validation.record(case="box drop on a rope: first contact", reference=math.sqrt(2 * 15 / G),
                      ours=r["t_contact"], tolerance=0.01, tol_kind="abs", unit="s",
                      source=f"{SRC} 2.5 (Table 3-1 text: 1.75 s)")
    validation.record(case="box drop on a rope: minimum height vs the thesis' Table 3-1", reference=2.28,
                      ours=r["h_min"], tolerance=0.01, tol_kind="rel", unit="m",
                      source=f"{SRC} 2.5 Table 3-1 (span and EA reconstructed)")
    validation.record(case="box drop on a rope: maximum tension vs the thesis' Table 3-1", reference=190.11,
                      ours=r["T_max"] / (G * 1000.0), tolerance=0.01, tol_kind="rel", unit="t",
                      source=f"{SRC} 2.5 Table 3-1 (span and EA reconstructed)")
    assert r["h_min"] == pytest.approx(h_ref, rel=0.01)
    assert r["T_max"] == pytest.approx(t_ref, rel=0.01)
    assert r["t_contact"] == pytest.approx(1.749, abs=0.011)
    assert abs(r["dE"]) < 1e-4                  # no damping: the box comes back up


@pytest.mark.slow
def test_coupling_measurement_ports_vs_shared():
    """The coupling decision of docs/rope_contact.md: 10 s of bouncing (3 impacts) at a 10 ms
    communication step.  Pose held over the step (FMU ports, zero-order hold): the energy grows by
    half the drop energy; wrench at the predicted mid-step pose: 1e-6."""
    zoh = run_drop(0.01, 10.0, midpoint=False)
    mid = run_drop(0.01, 10.0, midpoint=True)
    assert zoh["dE"] > 0.3
    assert abs(mid["dE"]) < 1e-5


# --------------------------------------------------------------- 2.7 case 1: friction along edge
def edge_friction_run(mu: float, t_end: float = 1.0) -> tuple[float, float]:
    """(reference, ours) mean acceleration along a 30 deg edge of a 20 t block slung over it."""
    th, m, w = math.radians(30.0), 20000.0, 5.0
    hs, ea = w / math.tan(math.radians(30.0)), 1e9
    a_ref = max(0.0, G * (math.sin(th) - mu * math.cos(th)))
    e = np.array([math.cos(th), 0.0, math.sin(th)])
    y = np.array([0.0, 1.0, 0.0])
    beam_R = np.column_stack([e, y, np.cross(e, y)])          # beam x along the incline, z its "down"
    hw = 2 * math.tan(math.radians(10.0))                     # a thin blade: one sharp top edge
    V = [(x, 0.0, 0.0) for x in (-60.0, 60.0)] + [(x, s * hw, 2.0) for x in (-60.0, 60.0) for s in (-1, 1)]
    beam = EdgeMesh.from_shape(ConvexMesh(V))
    apex = next(k for k, ed in enumerate(beam.edges) if abs(ed.a[1]) + abs(ed.a[2]) + abs(ed.b[2]) < 1e-9)
    ed = beam.edges[apex]
    s0 = float(-ed.a[0] / (ed.b[0] - ed.a[0]))
    # start in the state of steady sliding at a_ref: the block hangs along g - a e; if the friction
    # law were different the block would swing and its mean acceleration would be the model's
    g_eff = np.array([0.0, 0.0, G]) - a_ref * e
    d = g_eff / np.linalg.norm(g_eff)
    q = quat_from_euler_zyx(0.0, math.atan2(d[0], d[2]), 0.0)
    tension = m * float(np.linalg.norm(g_eff)) / (2 * math.cos(math.radians(30.0)))
    L0 = 2 * math.hypot(w, hs) / (1 + tension / ea)
    rb = RigidBody(RigidBodyParameters(mass=m, inertia=np.diag([m * (w ** 2 + 1) / 3] * 3)), position=hs * d,
                   quaternion=q, compiled=False)
    rope = Rope(RopeEnd(np.array([0.0, -w, 0.0]), 1), RopeEnd(np.array([0.0, w, 0.0]), 1), L0, ea,
                mu_edge=(mu, mu))
    rope.nodes.append(ContactNode(0, apex, s0, L0 / 2))
    s = RopeBodies([Body(beam, None, np.zeros(3), beam_R), Body(None, rb)], [rope], substep=1e-3)
    while s.time < t_end - 1e-9:
        s.step(0.01)
    return a_ref, float(rb.cg_velocity @ e) / s.time


@pytest.mark.slow
@pytest.mark.parametrize("mu", [0.0, 0.3, 0.5, 0.6])
def test_friction_along_edge_lee_3_1_3_case1(validation, mu):
    a_ref, a = edge_friction_run(mu)
    validation.record(case=f"rope sliding along a 30 deg edge, mu = {mu}: acceleration", reference=a_ref, ours=a,
                      tolerance=1e-3 * G, tol_kind="abs", unit="m/s2",
                      source=f"{SRC} 2.7 case 1 (Coulomb, corrected eq. 112; the thesis' eq. 70 deviates)")
    assert a == pytest.approx(a_ref, abs=1e-3 * G)


# --------------------------------------------------------------- 2.7 case 2: friction along rope
M1, M2 = 10000.0, 20000.0


def rope_friction_reference(mu: float) -> float:
    """Acceleration of the point-contact Coulomb law over two 90 deg edges: at each edge
    T_next = r T_prev, (r - 1)^2 = mu^2 (1 + r^2) (|F| = sqrt(T_prev^2 + T_next^2)), so
    T2 = r^2 T1 and a = g (m2 - r^2 m1) / (m2 + r^2 m1), zero once r^2 >= m2 / m1."""
    a = 1.0 - mu * mu
    r = (1.0 + math.sqrt(1.0 - a * a)) / a
    return max(0.0, G * (M2 - r * r * M1) / (M2 + r * r * M1))


def thesis_eq113(mu: float) -> float:
    """The thesis' eq. 113 (digest closed form): friction sqrt(2) T mu at each edge, one T."""
    T = 2 * M1 * M2 * G / (M1 + M2 - math.sqrt(2) * mu * (M2 - M1))
    return max(0.0, (T - M1 * G - math.sqrt(2) * mu * T) / M1)


def rope_friction_run(mu: float, t_end: float = 1.0) -> float:
    mesh = EdgeMesh.from_shape(Box((1.0, 5.0, 1.0)))

    def top_edge(x: float) -> int:
        return next(k for k, e in enumerate(mesh.edges)
                    if abs(e.a[0] - x) + abs(e.b[0] - x) + abs(e.a[2] + 1) + abs(e.b[2] + 1) < 1e-9)

    def s_mid(k: int) -> float:
        e = mesh.edges[k]
        return float(-e.a[1] / (e.b[1] - e.a[1]))

    hang, ea = 10.0, 1e9
    b1 = RigidBody(RigidBodyParameters(mass=M1, inertia=np.eye(3) * 1e4), position=(-1.0, 0.0, hang - 1.0),
                   compiled=False)
    b2 = RigidBody(RigidBodyParameters(mass=M2, inertia=np.eye(3) * 2e4), position=(1.0, 0.0, hang - 1.0),
                   compiled=False)
    t0 = 2 * M1 * M2 * G / (M1 + M2)           # start from the frictionless tension, uniform
    length = 2 * hang + 2.0
    L0 = length / (1 + t0 / ea)
    rope = Rope(RopeEnd(np.zeros(3), 1), RopeEnd(np.zeros(3), 2), L0, ea, mu_rope=(mu, mu))
    kl, kr = top_edge(-1.0), top_edge(1.0)
    rope.nodes += [ContactNode(0, kl, s_mid(kl), L0 * hang / length),
                   ContactNode(0, kr, s_mid(kr), L0 * (hang + 2) / length)]
    s = RopeBodies([Body(mesh), Body(None, b1), Body(None, b2)], [rope], substep=1e-3)
    ts, vs = [], []
    while s.time < t_end - 1e-9:
        s.step(0.01)
        ts.append(s.time)
        vs.append(float(b2.cg_velocity[2]))
    return float(np.polyfit(ts, vs, 1)[0])     # the axial oscillation of the start averages out


@pytest.mark.slow
@pytest.mark.parametrize("mu", [0.0, 0.1, 0.2, 0.3])
def test_friction_along_rope_lee_3_1_3_case2(validation, mu):
    a_ref = rope_friction_reference(mu)
    a = rope_friction_run(mu)
    validation.record(case=f"20 t / 10 t over two 90 deg edges, mu = {mu}: acceleration (point-contact Coulomb)",
                      reference=a_ref, ours=a, tolerance=1e-3 * G, tol_kind="abs", unit="m/s2",
                      source=f"{SRC} 2.7 case 2 (Coulomb per edge; frictionless 3.27 m/s2)")
    validation.record(case=f"20 t / 10 t over two 90 deg edges, mu = {mu}: vs the thesis' eq. 113",
                      reference=thesis_eq113(mu), ours=a, tolerance=0.05, tol_kind="abs", unit="m/s2",
                      source=f"{SRC} 2.7 case 2, eq. 113 (linearised: one tension in both normal forces)")
    assert a == pytest.approx(a_ref, abs=1e-3 * G)
    assert a == pytest.approx(thesis_eq113(mu), abs=0.05)


def test_rope_friction_references():
    """The two reference curves: equal without friction (3.27 m/s2), stick at 0.2391 (ours) and
    0.2357 (eq. 113), and at mu = 0.2 they differ by 0.03 m/s2."""
    assert rope_friction_reference(0.0) == pytest.approx(3.27, abs=1e-9)
    assert thesis_eq113(0.0) == pytest.approx(3.27, abs=1e-9)
    assert thesis_eq113(0.2) == pytest.approx(0.547, abs=1e-3)
    assert rope_friction_reference(0.2) == pytest.approx(0.5771, abs=1e-3)
    assert rope_friction_reference(0.2391) < 1e-3 < rope_friction_reference(0.2385)


# ------------------------------------------------------------- 2.6 sliding: mesh independence
def slide_run(refine: int, t_end: float = 3.2) -> tuple[np.ndarray, float]:
    """Box (10 m, 1 t), centre 1 m off the centreline, dropped 1 m onto two ropes 1 m apart."""
    rb = RigidBody(RigidBodyParameters(mass=DROP_M, inertia=DROP_M * (2 * DROP_A) ** 2 / 6 * np.eye(3)),
                   position=(0.0, 1.0, -6.0), compiled=False)
    ropes = [Rope(RopeEnd(np.array([-DROP_L0 / 2, y, 0])), RopeEnd(np.array([DROP_L0 / 2, y, 0])), DROP_L0, DROP_EA)
             for y in (-0.5, 0.5)]
    s = RopeBodies([Body(EdgeMesh.from_shape(Box((DROP_A,) * 3), refine=refine), rb)], ropes, substep=1e-3)
    out, pen = [], -math.inf
    while s.time < t_end - 1e-9:
        s.step(0.01)
        pen = max(pen, s.contact.max_penetration())
        out.append((s.time, rb.position[1], rb.position[2], s.result.tension[0].max(), s.result.tension[1].max(),
                    len(ropes[0].nodes) + len(ropes[1].nodes)))
    return np.array(out), pen


@pytest.mark.slow
def test_sliding_mesh_independence_lee_3_1_2(validation):
    a, pen_a = slide_run(1)
    b, pen_b = slide_run(3)

    def detach(x: np.ndarray) -> float:
        return float(x[np.flatnonzero(x[:, 5] > 0)[-1] + 1, 0])

    assert pen_a <= 1e-6 and pen_b <= 1e-6                    # no wire passes through the box
    assert a[-1, 1] > 5.0 and a[-1, 5] == 0                   # it tipped, slid off +y, and fell clear
    assert a[:, 3].max() > 0 and a[:, 4].max() > 0
    err = float(np.max(np.abs(a[:, 1:3] - b[:, 1:3])))
    validation.record(case="box sliding off two ropes: 12 vs 36 edges, position difference", reference=0.0,
                      ours=err, tolerance=1e-3, tol_kind="abs", unit="m",
                      source=f"{SRC} 2.6 (self-consistency; the thesis' detachment time varies slightly)")
    assert err < 1e-3
    assert detach(a) == pytest.approx(detach(b), abs=0.011)
