"""ContactPair.evaluate and advance on Python floats (issue 26) give the bits of the numpy
formulas they replaced: the loads of an evaluation and the friction state after a step, in stick
and in slip, compiled and numpy, volumetric and Hunt-Crossley."""
from __future__ import annotations

import numpy as np
import pytest

from components.contact import ContactMaterial, ContactPair, ContactParams, ContactResult
from components.convex import Box
from components.rotations import quat_to_matrix


def friction_numpy(p: ContactParams, fn, n, vt, z):
    """The array form of ContactPair._friction before issue 26."""
    if fn <= 0.0 or p.mu_static <= 0.0:
        return np.zeros(3), np.zeros(3)
    z = z - (z @ n) * n
    kt = p.mu_static * fn / p.stick_distance
    ct = kt * p.stick_time
    trial = -kt * z - ct * vt
    mag = float(np.linalg.norm(trial))
    if mag <= p.mu_static * fn:
        return trial, z
    direction = trial / mag if mag > 0.0 else -vt / max(float(np.linalg.norm(vt)), 1e-300)
    ft = p.mu_dynamic * fn * direction
    return ft, -(ft + ct * vt) / kt


def cross(a, b):
    return np.array((a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]))


def evaluate_numpy(pair: ContactPair, pa, Ra, va, wa, pb, Rb, vb, wb) -> ContactResult:
    """The array form of ContactPair.evaluate before issue 26 (its normal loads from the pair)."""
    distance, point, n, fn, fd, damping_a, damping_b, volume = pair._normal_loads(pa, Ra, va, wa, pb, Rb, vb, wb)
    res = ContactResult()
    res.distance = distance
    if point is None:
        return res
    vrel = (va + cross(wa, point - pa)) - (vb + cross(wb, point - pb))
    if pair.p.model != "volume":
        depth = max(-distance, 0.0)
        rate = float(vrel @ n)
        v_imp = pair.v_impact if pair.was_in_contact else rate
        damp = 1.5 * (1.0 - pair.p.restitution) * rate / max(v_imp, pair.p.hc_min_impact_speed)
        fn = max(pair.p.hc_stiffness * depth**pair.p.hc_exponent * (1.0 + damp), 0.0)
    res.volume, res.in_contact, res.point, res.normal, res.normal_force = volume, True, point, n, fn
    vt = vrel - (vrel @ n) * n
    F_a = -fn * n + friction_numpy(pair.p, fn, n, vt, pair.z)[0]
    res.force_a, res.force_b = F_a, -F_a
    if damping_a is None:
        res.moment_a, res.moment_b = cross(point - pa, F_a), cross(point - pb, -F_a)
    else:
        F_c = F_a + fd * n
        res.moment_a = cross(point - pa, F_c) + damping_a
        res.moment_b = cross(point - pb, -F_c) + damping_b
    return res


def z_after_numpy(pair: ContactPair, res, va, wa, pa, vb, wb, pb, dt):
    n, point = res.normal, res.point
    vrel = (va + cross(wa, point - pa)) - (vb + cross(wb, point - pb))
    vt = vrel - (vrel @ n) * n
    return friction_numpy(pair.p, res.normal_force, n, vt, pair.z + vt * dt)[1]


def same(a, b) -> bool:
    return np.array_equal(np.asarray(a, dtype=float).view(np.int64), np.asarray(b, dtype=float).view(np.int64))


@pytest.mark.parametrize("model", ["volume", "hunt_crossley"])
@pytest.mark.parametrize("compiled", [None, False])
def test_float_arithmetic_gives_the_numpy_bits(model, compiled):
    rng = np.random.default_rng(26)
    params = ContactParams(model=model, mu_static=0.5, mu_dynamic=0.4, stick_distance=0.02, stick_time=0.05,
                           hc_stiffness=1e7)
    pair = ContactPair(Box([2.0, 1.5, 1.0]), Box([5.0, 4.0, 0.5]), ContactMaterial(2e6, 2e5),
                       ContactMaterial(2e6, 2e5), params, compiled=compiled)
    checked = slipping = 0
    for k in range(60):
        # A lying on B (a little tilted), the two turned together by R0: normals in no axis
        R0 = quat_to_matrix(rng.normal(size=4))
        q = rng.normal(size=4) * [1.0, 0.03, 0.03, 0.03] + [3.0, 0.0, 0.0, 0.0]
        pb = np.array([1.0, -2.0, 0.5])
        Ra, Rb = R0 @ quat_to_matrix(q), R0
        pa = pb + R0 @ np.array([0.3 * rng.normal(), 0.3 * rng.normal(), -1.48 + 0.01 * rng.normal()])
        va, wa = rng.normal(size=3) * [0.5, 0.5, 0.2], rng.normal(size=3) * 0.05
        vb, wb = rng.normal(size=3) * 0.1, rng.normal(size=3) * 0.01
        pair.z = rng.normal(size=3) * (0.04 if k % 2 else 0.004)      # slip and stick
        args = (pa, Ra, va, wa, pb, Rb, vb, wb)
        expected = evaluate_numpy(pair, *args)
        got = pair.evaluate(*args)
        for name in ("force_a", "moment_a", "force_b", "moment_b", "point", "normal"):
            assert same(getattr(got, name), getattr(expected, name)), (k, name)
        for name in ("in_contact", "distance", "volume", "normal_force"):
            assert same(getattr(got, name), getattr(expected, name)), (k, name)
        if got.in_contact:
            checked += 1
            z = z_after_numpy(pair, got, va, wa, pa, vb, wb, pb, 0.0125)
            slipping += float(np.linalg.norm(-pair.p.mu_static * got.normal_force / pair.p.stick_distance * pair.z))\
                > pair.p.mu_static * got.normal_force
            pair.advance(got, va, wa, pa, vb, wb, pb, 0.0125)
            assert same(pair.z, z), k
    assert checked > 30 and 0 < slipping < checked
