"""The compiled contact of two boxes (components/kernels/contact.c) against the numpy reference
(ContactPair._normal_loads: GJK/EPA of components/convex.py, the interference of
components/interference.py, the footprint quadrature of components/contact.py).

Stated tolerances: apart, the distance bit for bit (the same GJK operations); overlapping, the
penetration depth and the normal to 1e-14 (separating axes against EPA), the interference volume
relative 1e-11 (thin slabs: measured 7e-13) and its centroid 1e-12 m, and the normal force with
dashpots whose bound (the spring at the same point) does not bind relative 1e-12 (measured 2e-14).
Where the bound binds inside a triangle, or for the dashpots' moments (a quadratic integrand), the
two quadratures differ by the choice of triangles (qhull's against a fan): stated as 3 % of E V
for the force (measured 2.3 %) and, for the moments, 1 % of (|f_d| + E V) times the lever (the
footprint's size plus the centroid's distance from the body's centre; measured 0.6 %), in random
cases with approach speeds up to 1 m/s.
"""
from __future__ import annotations

import numpy as np
import pytest

from components import kernels
from components.contact import ContactMaterial, ContactPair, ContactParams
from components.convex import Box, Sphere
from components.rotations import quat_to_matrix

pytestmark = pytest.mark.gcc          # the kernels are compiled once per source hash (user cache)

MATERIALS = (ContactMaterial(950e6, 50e6), ContactMaterial(950e6, 50e6))
PAYLOAD, DECK = Box([1.25, 1.0, 0.5]), Box([10.0, 8.0, 1.0])


@pytest.fixture(scope="module", autouse=True)
def compiled_available():
    assert kernels.library() is not None, kernels.status()


def rotation(rng, scale):
    q = np.concatenate(([1.0], rng.normal(0.0, scale, 3)))
    return quat_to_matrix(q / np.linalg.norm(q))


def pairs(a=PAYLOAD, b=DECK, params=ContactParams()):
    return ContactPair(a, b, *MATERIALS, params, compiled=False), ContactPair(a, b, *MATERIALS, params, compiled=True)


def cases(seed, n, speed, gap=(-0.02, 0.08)):
    """Payload poses over the deck (tilted up to ~6 degrees, some flat), the deck's slightly
    rotated on every other case, random velocities of scale ``speed``."""
    rng = np.random.default_rng(seed)
    for k in range(n):
        pa = np.array([rng.normal(0.0, 2.0), rng.normal(0.0, 2.0), -1.5 + rng.uniform(*gap)])
        Ra = rotation(rng, 0.05) if k % 3 else np.eye(3)
        pb, Rb = rng.normal(0.0, 0.1, 3), rotation(rng, 0.01) if k % 2 else np.eye(3)
        yield (pa, Ra, rng.normal(0.0, speed, 3), rng.normal(0.0, 0.2 * speed, 3), pb, Rb,
               rng.normal(0.0, 0.3 * speed, 3), rng.normal(0.0, 0.03 * speed, 3))


def test_apart_the_distance_is_the_reference_bit_for_bit():
    reference, compiled = pairs()
    rng = np.random.default_rng(3)
    apart = 0
    for k in range(300):
        pa = rng.normal(0.0, 3.0, 3) + np.array([0.0, 0.0, -3.0 - rng.uniform(0.0, 5.0)])
        Ra, Rb = rotation(rng, 0.5), rotation(rng, 0.2 if k % 2 else 0.0)
        args = (pa, Ra, np.zeros(3), np.zeros(3), np.zeros(3), Rb, np.zeros(3), np.zeros(3))
        want, got = reference._normal_loads(*args), compiled._kernel.normal_loads(*args)
        if want[0] <= 0.0:
            continue                  # overlapping
        apart += 1
        assert want[1] is None and got is not None and got[1] is None
        assert got[0] == want[0], (k, got[0], want[0])
    assert apart > 200


def test_in_contact_geometry_and_forces_equal_the_reference_to_rounding():
    reference, compiled = pairs()
    seen = 0
    for args in cases(1, 600, speed=1e-4, gap=(0.005, 0.08)):   # slow: the dashpots' bound does not bind
        want, got = reference._normal_loads(*args), compiled._kernel.normal_loads(*args)
        assert got is not None and (got[1] is None) == (want[1] is None)
        assert abs(got[0] - want[0]) <= 1e-14
        if want[1] is None:
            continue
        seen += 1
        distance, point, n, fn, fd, damping_a, damping_b, volume = got
        assert abs(volume - want[7]) <= 1e-11 * want[7]
        assert np.abs(point - want[1]).max() <= 1e-12
        assert np.abs(n - want[2]).max() <= 1e-14
        assert abs(fn - want[3]) <= 1e-12 * want[3]
        assert abs(fd - want[4]) <= 1e-12 * want[3]
        assert damping_a is not None and want[5] is not None
    assert seen > 500


def test_where_the_dashpots_bound_binds_the_quadratures_agree_to_their_error():
    reference, compiled = pairs()
    seen = 0
    for args in cases(2, 400, speed=1.0):
        want, got = reference._normal_loads(*args), compiled._kernel.normal_loads(*args)
        if got is None or want[1] is None:
            continue
        seen += 1
        spring = reference.E_eff * want[7]
        assert abs(got[3] - want[3]) <= 0.03 * spring
        # moments about each body's centre: the levers reach the footprint's size beyond the centroid
        for p, mine, theirs in ((args[0], got[5], want[5]), (args[4], got[6], want[6])):
            scale = (abs(want[4]) + spring) * (2.5 + np.linalg.norm(want[1] - p))
            assert np.abs(mine - theirs).max() <= 0.01 * scale
    assert seen > 200


def test_boxes_with_flush_faces_and_deep_overlaps():
    """Equal boxes stacked with faces in one plane (a clipped face lying in the cutting plane),
    and overlaps deeper than half a box (the normal by the separating axes; at an exact tie of
    two normals, [0.5, 0.5, 0.5] here, each code may pick another of them)."""
    a, b = Box([1.0, 1.0, 1.0]), Box([1.0, 1.0, 1.0])
    reference, compiled = pairs(a, b)
    z = np.zeros(3)
    for offset in ([0.0, 0.0, 1.9], [0.0, 0.3, 1.5], [0.2, 0.0, 0.4], [0.5, 0.3, 0.7], [1.2, 0.0, 1.1]):
        args = (z, np.eye(3), z, z, np.array(offset), np.eye(3), z, z)
        want, got = reference._normal_loads(*args), compiled._kernel.normal_loads(*args)
        assert got is not None and want[1] is not None
        assert abs(got[7] - want[7]) <= 1e-12 * want[7], offset
        assert abs(got[0] - want[0]) <= 1e-14, offset
        assert np.abs(got[2] - want[2]).max() <= 1e-14, offset


def test_evaluate_and_advance_agree_over_a_landing():
    """ContactPair.evaluate with and without the kernel over a box settling onto a deck with
    friction: the loads the FMU outputs, step after step, to the dashpots' quadrature: the tilted
    box's footprint ends where the thickness, and so the dashpots' bound, goes to zero (the bound
    binds inside the triangles there), and rocking makes the moments' integrand quadratic over a
    triangle.  Forces 1e-7 (measured 1.5e-8), moments 1e-4 (measured 9e-6)."""
    reference, compiled = pairs(params=ContactParams(mu_static=0.5, mu_dynamic=0.4, stick_distance=0.02))
    rng = np.random.default_rng(5)
    R = rotation(rng, 0.02)
    worst = {}
    for k in range(200):
        pa = np.array([0.3 + 1e-4 * k, -0.2, -1.5 + 0.01 + 2e-4 * k])
        va, wa = np.array([0.01, 0.0, 2e-4]), np.array([0.0, 1e-4, 0.0])
        results = []
        for pair in (reference, compiled):
            res = pair.evaluate(pa, R, va, wa, np.zeros(3), np.eye(3), np.zeros(3), np.zeros(3))
            pair.advance(res, va, wa, pa, np.zeros(3), np.zeros(3), np.zeros(3), 0.0125)
            results.append(res)
        want, got = results
        assert got.in_contact == want.in_contact
        for name, tol in (("force_a", 1e-7), ("moment_a", 1e-4), ("force_b", 1e-7), ("moment_b", 1e-4)):
            x, y = getattr(got, name), getattr(want, name)
            worst[name] = max(worst.get(name, 0.0), np.abs(x - y).max() / max(np.abs(y).max(), 1.0))
            assert np.abs(x - y).max() <= tol * max(np.abs(y).max(), 1.0), (k, name, x, y)


def test_the_kernel_takes_two_boxes_under_the_volume_model_only():
    assert ContactPair(PAYLOAD, DECK, *MATERIALS)._kernel is not None
    assert ContactPair(PAYLOAD, DECK, *MATERIALS, compiled=False)._kernel is None
    assert ContactPair(Sphere(1.0), DECK, *MATERIALS)._kernel is None
    assert ContactPair(PAYLOAD, DECK, *MATERIALS, ContactParams(model="hunt_crossley"))._kernel is None
    with pytest.raises(RuntimeError, match="two boxes"):
        ContactPair(Sphere(1.0), DECK, *MATERIALS, compiled=True)


def test_touching_within_the_tolerance_goes_to_the_reference():
    reference, compiled = pairs()
    z = np.zeros(3)
    # the payload's bottom 0.5 micron above the deck: apart, within the 1 micron tolerance
    args = (np.array([0.0, 0.0, -1.5 - 5e-7]), np.eye(3), z, z, z, np.eye(3), z, z)
    assert compiled._kernel.normal_loads(*args) is None
    assert compiled._normal_loads(*args)[0] == reference._normal_loads(*args)[0]
