"""The crane's evaluation caches give the numbers of a fresh full evaluation.

Three shortcuts are checked against a recomputation from scratch after random input changes:
ArticulatedBody.reevaluate (passes 2-3 only, for a new base acceleration and new link wrenches),
components.crane.Crane's cached evaluation and first-same-as-last RK4 stage, and the Crane FMU
adapter's output refresh (nothing, accelerations only, or everything, by what changed)."""
from __future__ import annotations

import numpy as np
import pytest

from components.articulated_body import ArticulatedBody
from components.crane import BaseMotion, Crane
from components.mechanism import preset
from components.rotations import quat_normalize
from components.spatial import euler_zyx
from fmus.crane import Crane as CraneFmu

# every test twice, the compiled kernels and the numpy reference (tests/components/conftest.py): each
# has its own shortcuts
pytestmark = pytest.mark.usefixtures("implementation")


def random_base(rng) -> BaseMotion:
    return BaseMotion(rng.normal(size=3) * 5, quat_normalize(np.array([1.0, *(0.05 * rng.normal(size=3))])),
                      rng.normal(size=3), 0.05 * rng.normal(size=3), rng.normal(size=3), 0.05 * rng.normal(size=3))


def random_loads(rng, mech, k: int | None = None) -> list:
    k = len(mech.attachments) if k is None else k
    return [(a.link, np.asarray(a.point, float), rng.normal(size=3) * 1e4, np.zeros(3))
            for a in mech.attachments[:k]]


@pytest.mark.parametrize("name", ["knuckle_boom", "sms_palfinger", "sms_prismatic"])
def test_reevaluate_equals_a_fresh_forward_dynamics_bit_for_bit(name):
    rng = np.random.default_rng(1)
    mech = preset(name)
    ab = ArticulatedBody(mech)
    n = ab.n
    for _ in range(10):
        q, qd, tau = rng.uniform(-1, 1, n), rng.uniform(-0.5, 0.5, n), rng.normal(size=n) * 1e4
        R = euler_zyx(*rng.normal(size=3) * 0.1)
        p, v, w = rng.normal(size=3), rng.normal(size=3), 0.05 * rng.normal(size=3)
        g = np.array([0.0, 0.0, 9.81])
        wrenches = [(rng.integers(n), rng.normal(size=3), rng.normal(size=3) * 1e4, rng.normal(size=3) * 1e3)]
        first = ab.forward_dynamics(q, qd, tau, R, p, v, w, rng.normal(size=3), rng.normal(size=3), g, wrenches)
        first.joint_frames                                   # cached: reevaluate hands them on
        a, al = rng.normal(size=3), 0.1 * rng.normal(size=3)
        new_wrenches = [(rng.integers(n), rng.normal(size=3), rng.normal(size=3) * 1e4, np.zeros(3)),
                        (n - 1, np.zeros(3), rng.normal(size=3) * 1e3, np.zeros(3))]
        for lw in (new_wrenches, None):
            again = ab.reevaluate(first, a, al, link_wrenches=lw)
            fresh = ab.forward_dynamics(q, qd, tau, R, p, v, w, a, al, g, lw)
            for attr in ("qdd", "articulated_inertia", "bias", "base_wrench", "spatial_accelerations"):
                np.testing.assert_array_equal(getattr(again, attr), getattr(fresh, attr), err_msg=attr)
            for link in range(n):
                point = rng.normal(size=3)
                for x, y in zip(again.point_kinematics(link, point), fresh.point_kinematics(link, point)):
                    np.testing.assert_array_equal(x, y)
        # the shortcut changes only what it claims to: the first result is left as it was
        np.testing.assert_array_equal(first.qdd, ab.forward_dynamics(q, qd, tau, R, p, v, w, first._base[4],
                                                                     first._base[5], g, wrenches).qdd)


def test_crane_cached_evaluation_equals_a_fresh_crane_after_random_input_changes():
    rng = np.random.default_rng(2)
    mech = preset("knuckle_boom")
    crane = Crane(mech)
    crane.set_inputs(random_base(rng), crane.setpoint, random_loads(rng, mech))
    for _ in range(5):
        crane.step(0.01, 0.005)
    for trial in range(12):
        base = crane.base
        what = trial % 3
        if what == 0:       # only the base acceleration and the loads: passes 2-3 again
            new = BaseMotion(base.position, base.quaternion, base.velocity, base.angular_velocity,
                             rng.normal(size=3), 0.05 * rng.normal(size=3))
            loads = random_loads(rng, mech, int(rng.integers(0, 4)))
        elif what == 1:     # nothing
            new, loads = base, list(crane.loads)
        else:               # the pose: everything again
            new, loads = random_base(rng), random_loads(rng, mech)
        crane.evaluate()
        crane.set_inputs(new, crane.setpoint, loads)
        cached, act = crane.evaluate()
        fresh = Crane(mech)
        fresh.set_state(crane.get_state())
        fresh.set_inputs(new, crane.setpoint, loads)
        ref, act_ref = fresh.evaluate()
        np.testing.assert_array_equal(act, act_ref)
        for attr in ("qdd", "articulated_inertia", "bias", "base_wrench"):
            np.testing.assert_array_equal(getattr(cached, attr), getattr(ref, attr), err_msg=f"{attr}, case {what}")
        for att in mech.attachments:
            for x, y in zip(cached.point_kinematics(att.link, att.point), ref.point_kinematics(att.link, att.point)):
                np.testing.assert_array_equal(x, y)


def test_first_rk4_stage_reused_from_the_outputs_gives_the_same_step():
    """Crane.step takes its first stage from the evaluation the outputs made when nothing changed
    in between; a step without that evaluation, or after a changed input, ends in the same state."""
    rng = np.random.default_rng(3)
    mech = preset("knuckle_boom")
    a, b = Crane(mech), Crane(mech)
    base, loads = random_base(rng), random_loads(rng, mech)
    for crane in (a, b):
        crane.set_inputs(base, crane.setpoint, loads)
    for k in range(6):
        a.evaluate()                                            # the outputs, then the step
        if k % 2:                                               # an input set in between: no reuse
            new = random_base(rng)
            for crane in (a, b):
                crane.set_inputs(new, crane.setpoint, loads)
        a.step(0.02, 0.01)
        b.step(0.02, 0.01)                                      # never evaluated before stepping
        for x, y in ((a.q, b.q), (a.qd, b.qd), (a.z, b.z)):
            np.testing.assert_array_equal(x, y)
        for crane in (a, b):
            crane.set_inputs(base, crane.setpoint, loads)


def _fmu(rng):
    fmu = CraneFmu(instance_name="crane", resources=None)
    vr = {name: info.value_reference for name, info in fmu.info.items()}
    fmu.setup_experiment(0.0)
    fmu.enter_initialization_mode()
    fmu.set_string([vr["mechanism"]], ["knuckle_boom"])
    fmu.exit_initialization_mode()
    assert fmu.failure is None
    return fmu, vr


def _set(fmu, vr, values: dict) -> None:
    names = [f"{group}[{i}]" for group, x in values.items() for i in range(len(x))]
    fmu.set_real([vr[n] for n in names], [float(v) for x in values.values() for v in x])


def test_fmu_output_refresh_equals_a_full_recomputation(tmp_path):
    """After each random input change (accelerations and forces only, nothing, or the base pose),
    every output of the adapter equals the outputs of a copy restored from its FMU state, which
    computes everything afresh."""
    rng = np.random.default_rng(4)
    fmu, vr = _fmu(rng)
    outputs = [vr[n] for n, info in fmu.info.items() if info.causality == "output"]
    pose = {"base.position": rng.normal(size=3), "base.quaternion": [1.0, 0.01, -0.02, 0.03],
            "base.velocity": rng.normal(size=3), "base.angular_velocity": 0.02 * rng.normal(size=3)}
    _set(fmu, vr, pose)
    t = 0.0
    for trial in range(9):
        fmu.do_step(t, 0.01)
        t += 0.01
        fmu.get_real(outputs)                                   # the outputs at the end of the step
        what = trial % 3
        change = {}
        if what == 0:
            change = {"base.acceleration": rng.normal(size=3), "base.angular_acceleration": 0.05 * rng.normal(size=3),
                      **{f"attachment{k}.force": rng.normal(size=3) * 1e4 for k in (1, 2)}}
        elif what == 2:
            change = {"base.position": rng.normal(size=3), "base.velocity": rng.normal(size=3),
                      "base.acceleration": rng.normal(size=3)}
        _set(fmu, vr, {**pose, **change} if what == 1 else change)   # what == 1: the same values again
        got = np.array(fmu.get_real(outputs))
        fresh = CraneFmu(instance_name="fresh", resources=None)
        fresh._set_fmu_state(fmu._get_fmu_state())
        fresh._inputs_changed = True
        ref = np.array(fresh.get_real(outputs))
        assert fresh.failure is None and fmu.failure is None
        np.testing.assert_array_equal(got, ref, err_msg=f"case {what}")
        assert np.all(np.isfinite(got))


def test_inputs_changed_in_place_or_restored_state_are_not_taken_for_unchanged():
    """set_inputs compares values, not objects: the same arrays changed in place, or an evaluation
    made for a restored state, never pass for the inputs in effect."""
    rng = np.random.default_rng(5)
    mech = preset("knuckle_boom")
    crane = Crane(mech)
    base, loads = random_base(rng), random_loads(rng, mech)
    crane.set_inputs(base, crane.setpoint, loads)
    crane.evaluate()
    base.acceleration[:] = rng.normal(size=3)               # the same object, other values
    loads[0][2][:] = rng.normal(size=3) * 1e4
    base.position[:] = rng.normal(size=3)
    crane.set_inputs(base, crane.setpoint, loads)
    fresh = Crane(mech)
    fresh.set_state(crane.get_state())
    fresh.set_inputs(base, crane.setpoint, loads)
    np.testing.assert_array_equal(crane.evaluate()[0].base_wrench, fresh.evaluate()[0].base_wrench)
    state = crane.get_state()
    crane.set_state({**state, "base": [x * 0.5 for x in state["base"]]})
    crane.evaluate()                                        # for the restored (halved) base
    crane.set_inputs(base, crane.setpoint, loads)           # the inputs of before: must evaluate again
    np.testing.assert_array_equal(crane.evaluate()[0].base_wrench, fresh.evaluate()[0].base_wrench)
