"""rigid_body.c's mc_rigid_body_loads, mc_rigid_body_motion and mc_rigid_body_accelerations
(RigidBody.set_loads' held values, motion_outputs and acceleration_outputs compiled) against the
numpy code they reproduce.

Where the RigidBody's check at first use found the kernels give the numpy code's bits here (this
machine's BLAS forms the small products as the kernels do), they must be the same bits; else the
numpy code runs, and the kernels are compared to a stated tolerance: relative 1e-12 of the largest
magnitude per evaluation (the loads' moment matrix, the positions, velocities and accelerations),
1e-12 rad for the Euler angles. A body with the kernels against the numpy reference body (whose
RK4 step is Python, not C: equal to rounding) over a trajectory through the splash zone: relative
1e-10.
The Payload FMU in-process with and without the kernels: the same tolerance, and a state restore
between steps.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from components import kernels
from components.kernels.rigid_body import CompiledRigidBody, loads_of, motion_of
from components.rigid_body import (MOTION_FIELDS, HydroParameters, RigidBody, RigidBodyParameters,
                                   _kernels_reproduce_numpy)
from components.rotations import quat_normalize

pytestmark = pytest.mark.gcc          # the kernels are compiled once per source hash (user cache)

REL = 1e-12


def rel_err(x, ref) -> float:
    x, ref = np.asarray(x, float), np.asarray(ref, float)
    return float(np.abs(x - ref).max(initial=0.0) / max(np.abs(ref).max(initial=0.0), 1e-300))


@pytest.fixture(scope="module")
def lib():
    found = kernels.library()
    assert found is not None, kernels.status()
    return found


def _body(n: int, hydro: bool, compiled: bool, seed: int = 0, cg=(0.1, -0.2, 0.3)) -> RigidBody:
    rng = np.random.default_rng(seed)
    h = None
    if hydro:
        h = HydroParameters(volume=4.0, cb=np.array([0.1, 0.0, -0.2]),
                            added_mass=np.array([6e3, 6.5e3, 8e3, 3e3, 5e3, 6e3]), drag_linear=np.full(6, 2e3),
                            drag_quadratic=np.full(6, 5e3), splash_height=2.0)
    points = rng.normal(size=(n, 3)) * 2.0
    if n > 2:
        points[2] = 0.0          # unused attachments at the origin (the Payload FMU's)
    p = RigidBodyParameters(mass=1e4, inertia=np.diag([1.1e4, 1.7e4, 2.1e4]) + 50.0, cg=np.array(cg, float),
                            attachments=points, hydro=h)
    return RigidBody(p, position=(0.0, 0.0, -1.0), quaternion=(0.95, 0.1, -0.2, 0.05), velocity=(0.3, -0.1, 0.8),
                     angular_velocity=(0.05, -0.1, 0.08), compiled=compiled)


def _flat(out: dict) -> np.ndarray:
    return np.concatenate([out[key] for key, _ in MOTION_FIELDS] + [
        a for pair in zip(out["attachment_positions"], out["attachment_velocities"]) for a in pair])


def _flat_accelerations(out: dict) -> np.ndarray:
    return np.concatenate([out["cg_acceleration"], out["angular_acceleration_ned"], [out["submerged_fraction"]],
                           *out["attachment_accelerations"]])


@pytest.mark.parametrize("n", [0, 1, 2, 4, 7])
def test_loads_kernel_equals_set_loads(lib, n):
    exact = _kernels_reproduce_numpy(lib, n)[0]
    rng = np.random.default_rng(n)
    for k in range(300):
        body = _body(n, hydro=False, compiled=False, seed=k)
        forces = rng.normal(size=(n, 3)) * 10.0 ** rng.integers(-4, 7, (n, 3))
        if k % 7 == 0:
            forces[:] = -0.0
        inputs = np.concatenate((forces.ravel(), rng.normal(size=9) * 1e3, [rng.normal()]))
        f = 3 * n
        body.set_loads(forces, inputs[f:f + 3], inputs[f + 3:f + 6], inputs[f + 6:f + 9], inputs[-1])
        got, ref = loads_of(lib, body._arms, inputs), np.array(body._held_loads())
        if exact:
            assert got.tobytes() == ref.tobytes(), k
        else:
            assert rel_err(got[6:15], ref[6:15]) < REL and np.array_equal(np.r_[got[:6], got[15:]],
                                                                            np.r_[ref[:6], ref[15:]])


@pytest.mark.parametrize("n", [0, 1, 4])
def test_motion_kernel_equals_motion_outputs(lib, n):
    exact = _kernels_reproduce_numpy(lib, n)[1]
    rng = np.random.default_rng(10 + n)
    for k in range(300):
        body = _body(n, hydro=False, compiled=False, seed=k, cg=(0.0, 0.0, 0.0) if k % 4 == 0 else rng.normal(size=3))
        y = np.concatenate((rng.normal(size=3) * 50.0, quat_normalize(rng.normal(size=4)),
                            rng.normal(size=6) if k % 5 else np.zeros(6)))
        if k % 9 == 0:      # gimbal lock and the identity: the Euler angles' special cases
            y[3:7] = (math.sqrt(0.5), 0.0, math.sqrt(0.5), 0.0) if k % 2 else (1.0, 0.0, 0.0, 0.0)
        body._y = y
        got, ref = motion_of(lib, body._cg, body._arms, y), _flat(body.motion_outputs())
        if exact:
            assert got.tobytes() == ref.tobytes(), k
        else:
            euler = slice(10, 13)
            assert np.abs(got[euler] - ref[euler]).max() < 1e-12
            assert rel_err(np.delete(got, euler), np.delete(ref, euler)) < REL


@pytest.mark.parametrize("n", [0, 1, 4])
def test_acceleration_kernel_equals_acceleration_outputs(lib, n):
    """With and without hydro parameters, in, out of and across the water line (the submerged
    fraction), from the numpy code's own rates."""
    exact = _kernels_reproduce_numpy(lib, n)[2]
    rng = np.random.default_rng(20 + n)
    fractions = set()
    for k in range(300):
        body = _body(n, hydro=k % 3 > 0, compiled=False, seed=k)
        body.set_loads(rng.normal(size=(n, 3)) * 1e4, rng.normal(size=3) * 1e3, rng.normal(size=3) * 1e3,
                       rng.normal(size=3), rng.normal())
        body._y = np.concatenate((rng.normal(size=3) * (1.0, 1.0, 2.0), quat_normalize(rng.normal(size=4)),
                                  rng.normal(size=6) if k % 5 else np.zeros(6)))
        kernel = CompiledRigidBody(lib)
        kernel.set_constants(body)
        kernel.set_loads(body)
        got, ref = kernel.accelerations(body._y, body._rates()), _flat_accelerations(body.acceleration_outputs())
        fractions.add(round(ref[6], 1))
        if exact:
            assert got.tobytes() == ref.tobytes(), k
        else:
            assert rel_err(got, ref) < REL and abs(got[6] - ref[6]) < 1e-12
    assert {0.0, 1.0} < fractions, fractions


def test_euler_angles_take_pythons_hypot(lib):
    """The pitch is atan2(-R31, hypot(R11, R21)) with CPython's hypot, whose last bit the C library's
    does not always give: the kernel's Euler angles equal rotations.quat_to_euler_zyx's bits over
    many attitudes (the quaternion's components over many scales, not normalised)."""
    from components.rotations import quat_to_euler_zyx

    rng = np.random.default_rng(3)
    body = _body(0, hydro=False, compiled=False)
    for _ in range(20000):
        y = np.zeros(13)
        y[3:7] = rng.normal(size=4) * 10.0 ** rng.integers(-3, 3)
        assert motion_of(lib, body._cg, body._arms, y)[10:13].tolist() == list(quat_to_euler_zyx(y[3:7]))


@pytest.mark.parametrize("hydro", [False, True])
@pytest.mark.parametrize("n", [1, 4])
def test_a_body_with_the_kernels_follows_the_reference(n, hydro):
    """set_loads, step and motion_outputs over 200 steps in and out of the water: the held loads
    and the motion outputs are the numpy code's bits at the compiled body's own state (where the
    check found them so), and the trajectory follows the numpy reference body to 1e-10."""
    ker, ref = _body(n, hydro, compiled=True), _body(n, hydro, compiled=False)
    loads_exact, motion_exact, accelerations_exact = _kernels_reproduce_numpy(ker._compiled.lib, n)
    rng = np.random.default_rng(n)
    fractions, worst = set(), 0.0
    for k in range(200):
        forces = rng.normal(size=(n, 3)) * 2e4
        forces[:, 2] -= 1e5 / n * (1.0 + 0.5 * math.sin(0.2 * k))     # heave through the splash zone
        loads = (forces, rng.normal(size=3) * 100.0, rng.normal(size=3) * 50.0, np.array([0.3, 0.1, 0.0]),
                 1.5 * math.sin(0.05 * k))
        for body in (ker, ref):
            body.set_loads(*loads)
        if loads_exact:
            held = _body(n, hydro, compiled=False)
            held.set_loads(*loads)
            assert ker._held_loads() == held._held_loads()
        out = ker.motion_outputs()
        if motion_exact:
            assert _flat(out).tobytes() == _flat(ker._motion_reference()).tobytes()
        assert rel_err(_flat(out), _flat(ref.motion_outputs())) < 1e-10
        if k % 3 == 0:      # read between steps: their rates are the next step's first stage
            out = ker.acceleration_outputs()
            if accelerations_exact:
                reference = _flat_accelerations(ker._acceleration_reference())
                assert _flat_accelerations(out).tobytes() == reference.tobytes()
            assert rel_err(_flat_accelerations(out), _flat_accelerations(ref.acceleration_outputs())) < 1e-10
        for body in (ker, ref):
            body.step(0.025, 0.01)
        fractions.add(round(ref.submerged_fraction, 1))
        worst = max(worst, rel_err(ker.get_state()["state"], ref.get_state()["state"]))
    assert worst < 1e-10, worst
    if hydro:
        assert 0.0 in fractions and max(fractions) >= 0.9 and len(fractions) > 3, \
            f"the body did not cross the splash zone: {fractions}"


def test_the_kernels_are_used(lib, monkeypatch):
    """Where the check finds the kernels exact (here: OpenBLAS's Haswell kernels), a compiled body
    forms its held loads, motion and acceleration outputs in C: the numpy code's functions are not
    called."""
    if not all(_kernels_reproduce_numpy(lib, 4)):
        pytest.skip("this machine's BLAS rounds the small products otherwise: the numpy code runs")
    body = _body(4, hydro=True, compiled=True)
    assert body._loads_kernel and body._motion_kernel and body._acceleration_kernel

    def refused(*args, **kwargs):
        raise AssertionError("the numpy code ran")

    monkeypatch.setattr(RigidBody, "_motion_reference", refused)
    monkeypatch.setattr(RigidBody, "_acceleration_reference", refused)
    monkeypatch.setattr(CompiledRigidBody, "set_loads", refused)
    body.set_loads(np.ones((4, 3)), np.ones(3), np.ones(3), np.ones(3), 0.5)
    body.set_loads(np.ones((4, 3)).tolist(), [1.0, 2.0, 3.0])          # the general path too
    body.step(0.025, 0.01)
    body.motion_outputs()
    body.motion_array()
    body.acceleration_outputs()
    body.acceleration_array()
    assert body.get_state()["cg_force"].tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("compiled", [False, True])
def test_motion_array_and_its_views(compiled):
    """motion_array() is motion_outputs() in one array, formed in place; motion_views() are views
    of it; the same for the accelerations; get_state keeps copies of the loads, not the kernel's
    arrays."""
    body = _body(4, hydro=True, compiled=compiled)
    flat, views = body.motion_array(), body.motion_views()
    accelerations, acceleration_views = body.acceleration_array(), body.acceleration_views()
    for k in range(5):
        body.set_loads(np.full((4, 3), -1e4 * k), water_elevation=0.1 * k)
        body.step(0.025, 0.01)
        state = body.get_state()
        assert body.motion_array() is flat
        out = body.motion_outputs()
        assert flat.tobytes() == _flat(out).tobytes()
        for key, _ in MOTION_FIELDS:
            assert views[key].tobytes() == out[key].tobytes() and np.shares_memory(views[key], flat)
        assert [a.tobytes() for a in views["attachment_velocities"]] == \
            [a.tobytes() for a in out["attachment_velocities"]]
        assert body.acceleration_array() is accelerations
        out = body.acceleration_outputs()
        assert accelerations.tobytes() == _flat_accelerations(out).tobytes()
        assert acceleration_views["cg_acceleration"].tobytes() == out["cg_acceleration"].tobytes()
        assert [a.tobytes() for a in acceleration_views["attachment_accelerations"]] == \
            [a.tobytes() for a in out["attachment_accelerations"]]
        body.set_loads(np.zeros((4, 3)))
        assert state["attachment_forces"].tolist() == np.full((4, 3), -1e4 * k).tolist()
        # the fresh outputs leave the arrays alone (an FMU's outputs are views of them)
        kept = flat.tobytes(), accelerations.tobytes()
        body.step(0.025, 0.01)
        body.motion_outputs()
        body.acceleration_outputs()
        assert (flat.tobytes(), accelerations.tobytes()) == kept


def test_payload_fmu_with_and_without_the_kernels(monkeypatch):
    """The Payload FMU in-process, its kernels against MARINE_COSIM_KERNELS=0: every output over
    80 steps in and out of the water with four attachments loaded, a state taken and restored on
    the way (its outputs read back before the next step, then stepping on)."""
    from fmus.payload import Payload
    from tests.fmus.test_fmi_speed_calls import started, vr

    start = {"hydro.volume": 4.0, "hydro.added_mass[2]": 8e3, "hydro.drag_quadratic[2]": 6e3,
             "cg.location[2]": 0.2, "attachment1.location[2]": -1.0, "attachment2.location[0]": 1.5,
             "attachment3.location[1]": -0.5, "initial.position[2]": -1.0, "initial.angular_velocity[0]": 0.1}
    slaves = []
    for disabled in ("", "0"):
        monkeypatch.setenv("MARINE_COSIM_KERNELS", disabled)
        slaves.append(started(Payload, **start))
    compiled, reference = slaves
    assert compiled.body._acceleration_kernel == all(_kernels_reproduce_numpy(compiled.body._compiled.lib, 4))
    assert reference.body._compiled is None
    outputs = [i.value_reference for i in compiled.info.values() if i.causality == "output" and i.kind == "Real"]
    inputs = vr(compiled, *(f"attachment{k}.force[{i}]" for k in range(1, 5) for i in range(3)), "water.elevation")
    saved = None
    for k in range(80):
        values = [5e3 * math.sin(k + i) for i in range(12)] + [math.sin(0.1 * k)]
        values[2] -= 9e4
        for slave in slaves:
            slave.set_real(inputs, values)
        a, b = compiled.get_real(outputs), reference.get_real(outputs)
        assert rel_err(a, b) < 1e-10, k
        if k == 30:
            saved = [s._get_fmu_state() for s in slaves]
            kept = [s.get_real(outputs) for s in slaves]
        if k == 50:
            for slave, state, values_then in zip(slaves, saved, kept):
                slave._set_fmu_state(state)
                assert slave.get_real(outputs) == values_then
        for slave in slaves:
            slave.do_step(slave.time, 0.025)
            assert slave.failure is None
