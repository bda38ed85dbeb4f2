"""The rigid body's and the line's fast paths for inputs that are already float64 arrays of the
right shapes (RigidBody.set_loads, Line.set_ends, Line.set_end_tangents) give the same bits as the
general path, keep the caller's arrays out of their state, and still refuse bad shapes."""
from __future__ import annotations

import numpy as np
import pytest

from components.line import Line, LineParams
from components.rigid_body import HydroParameters, RigidBody, RigidBodyParameters


def _body(n_attachments: int, compiled: bool | None = None) -> RigidBody:
    rng = np.random.default_rng(n_attachments)
    params = RigidBodyParameters(mass=5e3, inertia=np.diag([4e3, 5e3, 6e3]), cg=np.array([0.1, -0.2, 0.3]),
                                 attachments=rng.standard_normal((n_attachments, 3)),
                                 hydro=HydroParameters(volume=2.0, drag_linear=np.ones(6),
                                                       drag_quadratic=np.ones(6)))
    return RigidBody(params, angular_velocity=(0.1, -0.2, 0.3), quaternion=(0.9, 0.1, 0.2, 0.3), compiled=compiled)


def _held(body: RigidBody) -> list[bytes]:
    return [np.asarray(x, dtype=float).tobytes() for x in (
        body._held_loads(), body._water_elevation,
        body._attachment_forces, body._cg_force, body._cg_moment, body._water_velocity)]


@pytest.mark.parametrize("compiled", [False, None])     # the numpy code; the loads' kernel where it is exact
@pytest.mark.parametrize("n", [0, 1, 4, 9])
def test_set_loads_arrays_and_lists_hold_the_same_bits(n, compiled):
    rng = np.random.default_rng(10 + n)
    fast, general = _body(n, compiled), _body(n, compiled)
    for k in range(200):
        forces = rng.standard_normal((n, 3)) * 10.0 ** rng.integers(-6, 7, (n, 3))
        cg_force, cg_moment, water = (rng.standard_normal(3) * 1e3 for _ in range(3))
        if k % 5 == 0:      # signed zeros: numpy's sum starts at +0.0, so must the floats
            forces[:] = -0.0
            cg_force[:] = -0.0
        fast.set_loads(forces, cg_force, cg_moment, water, 0.5)
        general.set_loads(forces.tolist(), cg_force.tolist(), tuple(cg_moment), list(water), 0.5)
        assert _held(fast) == _held(general)
        expected = (forces.sum(axis=0) + cg_force).tobytes()
        assert np.array(fast._held_loads()[:3]).tobytes() == expected
        assert fast._rates().tobytes() == general._rates().tobytes()


@pytest.mark.parametrize("compiled", [False, None])
def test_set_loads_copies_the_callers_arrays_and_checks_other_shapes(compiled):
    body = _body(4, compiled)
    forces, cg_force = np.ones((4, 3)), np.full(3, 2.0)
    body.set_loads(forces, cg_force)
    before = body.get_state()
    forces[:] = 7.0
    cg_force[:] = 7.0
    after = body.get_state()
    assert np.array_equal(after["attachment_forces"], before["attachment_forces"])
    assert np.array_equal(after["cg_force"], before["cg_force"])
    with pytest.raises(ValueError, match="attachment_forces must have shape"):
        body.set_loads(np.ones((3, 3)))
    with pytest.raises(ValueError, match="cg_moment must have shape"):
        body.set_loads(np.ones((4, 3)), np.ones(3), np.ones(4))
    body.set_loads(np.ones((4, 3), dtype=np.float32), np.ones(3, dtype=int))     # converted, as before
    assert body._held_loads()[:3] == (5.0, 5.0, 5.0)


def test_line_ends_and_tangents_from_arrays_as_from_lists():
    def line():
        return Line(LineParams(length=55.0, EA=1e8, mass_per_length=10.0, diameter=0.05), np.array([0.0, 0.0, 50.0]),
                    np.array([0.0, 0.0, 0.0]), 10, 1000.0, clamped_a=True)

    fast, general = line(), line()
    ends = [np.array([1.0, 2.0, 49.0]), np.array([0.1, -0.0, 0.2]), np.array([0.5, 0.0, 0.0]),
            np.array([0.0, 0.3, -0.1])]
    fast.set_ends(*ends)
    general.set_ends(*(e.tolist() for e in ends))
    assert fast.r.tobytes() == general.r.tobytes() and fast.v.tobytes() == general.v.tobytes()
    assert fast.va is not ends[1] and fast.vb is not ends[3]
    ends[1][:] = 9.0
    assert fast.va.tolist() == [0.1, -0.0, 0.2]
    fast.set_end_tangents(np.array([0.0, 3.0, 4.0]), np.zeros(3))
    general.set_end_tangents([0.0, 3.0, 4.0], [0.0, -0.0, 0.0])
    assert fast.t_a.tobytes() == general.t_a.tobytes() and fast.t_b.tobytes() == general.t_b.tobytes()
    with pytest.raises(ValueError):
        fast.set_ends(np.ones(4), np.ones(3))


def test_attachments_at_one_point_share_their_values_not_their_arrays():
    """An attachment at an earlier one's point (bit for bit) takes its values: the same as the
    properties give, each attachment its own array."""
    points = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, -3.0], [0.0, 0.0, 0.0], [-0.0, 0.0, 0.0], [1.0, 2.0, -3.0]])
    params = RigidBodyParameters(mass=5e3, inertia=np.diag([4e3, 5e3, 6e3]), cg=np.array([0.1, -0.2, 0.3]),
                                 attachments=points)
    body = RigidBody(params, velocity=(1.0, -2.0, 0.5), angular_velocity=(0.1, -0.2, 0.3),
                     quaternion=(0.9, 0.1, 0.2, 0.3), compiled=False)
    body.set_loads(np.arange(15.0).reshape(5, 3), np.ones(3), np.full(3, -2.0))
    out = body.outputs()
    for i in range(len(points)):
        assert out["attachment_positions"][i].tobytes() == body.attachment_position(i).tobytes()
        assert out["attachment_velocities"][i].tobytes() == body.attachment_velocity(i).tobytes()
        assert out["attachment_accelerations"][i].tobytes() == body.attachment_acceleration(i).tobytes()
    for key in ("attachment_positions", "attachment_velocities", "attachment_accelerations"):
        assert len({id(a) for a in out[key]}) == len(points)
