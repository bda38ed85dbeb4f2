"""The GJK/EPA cases of anchors_marine.md section 3h ("GJK (here)"), checked there with python-fcl:
a box 2 x 2 x 2 m and a sphere of radius 0.5 m, the sphere's centre at z = 2 (distance 0.5 m,
exact) and at z = 1.3 (penetration 0.2 m, exact), through components/convex.py.
"""
from __future__ import annotations

import numpy as np

from components.convex import Box, Sphere, gjk_distance, penetration

VALIDATION_COMPONENT = "contact"
SOURCE = "anchors_marine.md 3h (GJK, python-fcl: exact)"


def test_box_sphere_distance_and_penetration(validation):
    box, ball = Box([1.0, 1.0, 1.0]), Sphere(0.5)
    apart = gjk_distance(box, None, ball, ([0.0, 0.0, 2.0], np.eye(3)))
    overlap = penetration(box, None, ball, ([0.0, 0.0, 1.3], np.eye(3)))
    # exact for a box and a sphere up to round-off
    validation.record(case="box 2 x 2 x 2 m, sphere r 0.5 m at z 2 m: distance", reference=0.5, ours=apart.distance,
                      tolerance=1e-12, tol_kind="abs", unit="m", source=SOURCE)
    validation.record(case="box 2 x 2 x 2 m, sphere r 0.5 m at z 1.3 m: penetration depth", reference=0.2,
                      ours=overlap.depth, tolerance=1e-12, tol_kind="abs", unit="m", source=SOURCE)
    assert abs(apart.distance - 0.5) <= 1e-12 and not apart.intersecting
    assert abs(overlap.depth - 0.2) <= 1e-12
    assert np.allclose(np.abs(overlap.normal), [0.0, 0.0, 1.0], atol=1e-12)
