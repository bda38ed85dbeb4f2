"""The torsion's small-vector arithmetic in Python floats (components/rod.py) against the numpy
expressions it replaces: the same operations in the same order, so the same bits.

The twist of a line of up to rod.SMALL elements is formed in floats (_twist_floats) and of a longer
one in numpy (Twist._twist_arrays); both are compared on random tangents.  Their one transcendental
is atan2: math.atan2 and np.arctan2 are the C library's both, except where numpy has AVX-512 SVML
loops, hence the 1e-14 rad allowed there (measured equal to the bit without them).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from components import rod


def _unit_rows(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def test_cross_rotate_and_transport_of_one_vector_are_numpys_to_the_bit():
    rng = np.random.default_rng(3)
    for _ in range(2000):
        a, b, v = rng.standard_normal((3, 3)) * 10.0 ** rng.uniform(-6, 6, (3, 1))
        k = a / np.linalg.norm(a)
        angle = float(rng.uniform(-7.0, 7.0))
        assert np.array_equal(rod.cross(a, b), np.cross(a, b))
        assert np.array_equal(rod.cross(a[None], np.stack([b, v])), np.cross(a[None], np.stack([b, v])))
        c, s = math.cos(angle), math.sin(angle)
        assert np.array_equal(rod.rotate_about(v, k, angle),
                              v * c + np.cross(k, v) * s + k * float(k @ v) * (1.0 - c))
        t1, t2 = _unit_rows(rng.standard_normal((2, 3)))
        u = v - float(v @ t1) * t1
        assert np.array_equal(np.array(rod.transport3(u.tolist(), t1.tolist(), t2.tolist())),
                              rod.transport(u[None], t1[None], t2[None])[0])


@pytest.mark.parametrize("n", range(2, rod.SMALL + 1))
def test_twist_in_floats_is_the_numpy_twist(n):
    rng = np.random.default_rng(n)
    compared = 0
    for _ in range(300):
        # a line's tangents: a direction and a spread about it (some spread wide: the references'
        # axis changes, and the fallback to sequential transport is met)
        t = _unit_rows(rng.standard_normal(3) + rng.uniform(0.0, 1.5) * rng.standard_normal((n, 3)))
        ma = rod._perpendicular(t[0])
        mb = rod.rotate_about(rod._perpendicular(t[-1]), t[-1], float(rng.uniform(-3.0, 3.0)))
        twist = rod.Twist(t)
        floats = rod._twist_floats(t, ma, mb)
        if floats is None:          # tangents in all directions: the numpy path's own fallback
            continue
        compared += 1
        assert floats == pytest.approx(twist._twist_arrays(t, ma, mb), rel=0.0, abs=1e-14)
    assert compared > 100
