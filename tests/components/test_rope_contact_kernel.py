"""The compiled rope contact (components/kernels/rope_contact.c) against the numpy reference of
components/rope_contact.py: segment depths, the depths of rope segments in a posed body, and whole
updates of slings round a turning, moving block (detection, node equilibrium, tensions with
damping, node forces, body wrenches).

Stated tolerance: bit for bit.  The kernel forms matrix products with fused multiply-adds in k
order, as numpy's matmul does here through OpenBLAS on a CPU with FMA (the products of
components/kernels/nmpc.c likewise); on a CPU without FMA the two would agree to rounding only.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from components import kernels
from components.convex import Box
from components.rope_contact import EdgeMesh, Rope, RopeContact, RopeEnd, segment_depths
from components.rotations import skew

pytestmark = pytest.mark.gcc          # the kernels are compiled once per source hash (user cache)


@pytest.fixture(scope="module")
def kernel():
    from components.kernels.rope_contact import compiled

    lib = kernels.library()
    assert lib is not None, kernels.status()
    return compiled(lib)


def rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    k = skew(axis / np.linalg.norm(axis))
    return np.eye(3) + math.sin(angle) * k + (1.0 - math.cos(angle)) * k @ k


def test_segment_depths_are_the_reference_bit_for_bit(kernel):
    """Random segments in, through, beside and along the faces of a block and a tessellated
    polyhedron (parallel to faces, ends on faces, degenerate), and a body without faces."""
    rng = np.random.default_rng(7)
    block = EdgeMesh.from_shape(Box((13.5, 17.0, 4.5))).halfspaces
    for H in (block, EdgeMesh.from_shape(Box((1.0, 2.0, 3.0)), refine=3).halfspaces, np.zeros((0, 4))):
        size = 20.0 if H is block else 4.0
        p0 = rng.uniform(-size, size, (4000, 3))
        p1 = p0 + rng.normal(0.0, size, (4000, 3))
        p1[::7, 2] = p0[::7, 2]                                  # parallel to the top and bottom faces
        p1[::11] = p0[::11]                                      # points
        if len(H):
            p0[::5, 0] = -H[0, 3] / H[0, 0] if H[0, 0] else p0[::5, 0]   # ends on a face
        np.testing.assert_array_equal(kernel.segment_depths(p0, p1, H), segment_depths(p0, p1, H))


def test_body_depths_are_the_reference_bit_for_bit(kernel):
    """Segments in NED taken into a turned, moved body's frame, then their depths: as
    RopeContact._body_depths's numpy ((X - p) @ R)."""
    rng = np.random.default_rng(8)
    H = EdgeMesh.from_shape(Box((13.5, 17.0, 4.5))).halfspaces
    for _ in range(50):
        p, R = rng.normal(0.0, 10.0, 3), rotation(rng.normal(size=3), rng.uniform(-3.0, 3.0))
        X0 = p + rng.uniform(-20.0, 20.0, (60, 3))
        X1 = X0 + rng.normal(0.0, 15.0, (60, 3))
        np.testing.assert_array_equal(kernel.body_depths(X0, X1, p, R, H),
                                      segment_depths((X0 - p) @ R, (X1 - p) @ R, H))


def _slings(seed: int, damping: float) -> list[Rope]:
    """Ten slings like the block turnover's: four from a hook above the middle, three from each of two
    hooks off the ends, lugs 0.3 m off the block's faces, 0.97-1.2 times their chords long."""
    rng = np.random.default_rng(seed)
    half = np.array([13.5, 17.0, 4.5])
    ropes = []
    for k in range(10):
        sx = rng.choice([-1.0, 1.0])
        lug = np.array([sx * (half[0] + 0.3), rng.uniform(-16.0, 16.0), rng.uniform(-4.0, 4.0)])
        hook = (np.array([0.0, 0.0, -35.0]) if k < 4 else
                np.array([sx * rng.uniform(14.0, 22.0), rng.uniform(-8.0, 8.0), -rng.uniform(10.0, 20.0)]))
        length = float(np.linalg.norm(hook - lug)) * rng.uniform(0.97, 1.2)
        ropes.append(Rope(RopeEnd(hook), RopeEnd(lug, 0), length, 1.9e8, damping=damping * rng.uniform(0.0, 2.0)))
    return ropes


@pytest.mark.parametrize("seed,damping", [(1, 0.0), (2, 2e6), (3, 5e6)])
def test_updates_are_the_reference_bit_for_bit(seed, damping):
    """50 updates of ten slings (damped or not) round a block that moves, turns and spins, with
    hooks that wander and move on at given velocities, and a second body (fixed) that one hook
    rope may touch: every output of every update, and every node's state, equal."""
    rng = np.random.default_rng(seed)
    mesh, post = EdgeMesh.from_shape(Box((13.5, 17.0, 4.5))), EdgeMesh.from_shape(Box((1.0, 1.0, 3.0)))
    contacts = [RopeContact([mesh, post], _slings(seed, damping), compiled=flag) for flag in (False, True)]
    assert contacts[0]._kernel is None and contacts[1]._kernel is not None
    axis = rng.normal(size=3)
    drift = rng.normal(0.0, 0.02, (10, 3))
    hooks = [rope.end_a.point.copy() for rope in contacts[0].ropes]
    nodes = 0
    for step in range(50):
        angle = 0.1 * math.sin(0.05 * step)
        p = np.array([0.3 * math.sin(0.05 * step), 0.0, 0.2 * math.cos(0.03 * step)])
        R = rotation(axis, angle)
        velocities = [(rng.normal(0.0, 0.3, 3), rng.normal(0.0, 0.05, 3)), (np.zeros(3), np.zeros(3))]
        poses = [(p, R), (np.array([0.0, 0.0, -25.0]), np.eye(3))]
        ends, end_v = [], []
        for i, rope in enumerate(contacts[0].ropes):
            moved = hooks[i] + drift[i] + rng.normal(0.0, 0.05, 3)
            clear = (np.any(np.abs(R.T @ (moved - p)) > np.array([13.5, 17.0, 4.5]) + 3.0)
                     and np.any(np.abs(moved - poses[1][0]) > np.array([1.0, 1.0, 3.0]) + 0.5))
            if clear and np.linalg.norm(moved - (p + R @ rope.end_b.point)) < 1.15 * rope.length:
                hooks[i] = moved
            ends.append((hooks[i].copy(), None))
            end_v.append((drift[i] * 10.0, None) if i % 3 else (None, None))
        results = [rc.update(poses, ends=ends, velocities=velocities if step % 4 else None,
                             end_velocities=end_v if step % 5 else None) for rc in contacts]
        ref, out = results
        for name in ("body_force", "body_moment"):
            np.testing.assert_array_equal(getattr(out, name), getattr(ref, name), err_msg=f"{name}, update {step}")
        for name in ("tension", "points", "contact_force"):
            for a, b in zip(getattr(out, name), getattr(ref, name)):
                np.testing.assert_array_equal(a, b, err_msg=f"{name}, update {step}")
        for (a0, b0), (a1, b1) in zip(out.end_force, ref.end_force):
            np.testing.assert_array_equal(a0, a1)
            np.testing.assert_array_equal(b0, b1)
        for r0, r1 in zip(*(rc.ropes for rc in contacts)):
            assert r0.nodes == r1.nodes, f"update {step}"
        assert contacts[0].max_penetration() == contacts[1].max_penetration()
        nodes += sum(len(rope.nodes) for rope in contacts[0].ropes)
    assert nodes > 50                 # the slings did bend over the block's edges


def test_the_kernels_off_gives_the_reference(monkeypatch):
    """MARINE_COSIM_KERNELS=0: no kernel (the numpy reference); compiled=True then refuses."""
    monkeypatch.setenv("MARINE_COSIM_KERNELS", "0")
    mesh = EdgeMesh.from_shape(Box((1.0, 1.0, 1.0)))
    rope = Rope(RopeEnd(np.array([-5.0, 0.0, 0.5])), RopeEnd(np.array([5.0, 0.0, 0.5])), 10.0, 1e8)
    assert RopeContact([mesh], [rope])._kernel is None
    with pytest.raises(RuntimeError, match="no compiled rope contact kernel"):
        RopeContact([mesh], [rope], compiled=True)
