"""The crane's outputs formed in its kernel calls give the bits of the paths they replace.

mc_crane_step evaluates at the step's end in the call that takes the step (what Crane.evaluate
computed next, in a second call), and the evaluation forms the attachments' motion (mc_aba_points,
AbaResult.point_motion's numbers). Both are checked bit for bit against the separate calls and
against point_motion; the once-per-process check that falls back to numpy where the kernel would
round otherwise is shown to notice a difference. The Crane FMU's outputs (the attachments formed with
the others, the joint outputs in one update) equal those of the numpy reference's FMU to rounding.
"""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from components import kernels
from components.crane import BaseMotion, Crane
from components.kernels import crane as crane_kernel
from components.mechanism import preset
from components.rotations import quat_normalize
from fmus.crane import Crane as CraneFmu

pytestmark = pytest.mark.gcc

PRESETS = ["knuckle_boom", "sms_palfinger", "sms_prismatic"]


def random_base(rng) -> BaseMotion:
    return BaseMotion(rng.normal(size=3) * 5, quat_normalize(np.array([1.0, *(0.05 * rng.normal(size=3))])),
                      rng.normal(size=3), 0.05 * rng.normal(size=3), rng.normal(size=3), 0.05 * rng.normal(size=3))


def random_loads(rng, mech) -> list:
    return [(a.link, np.asarray(a.point, float), rng.normal(size=3) * 1e4, np.zeros(3)) for a in mech.attachments]


def _compiled_crane(mech) -> Crane:
    crane = Crane(mech, compiled=True)
    assert crane._compiled is not None
    return crane


def _points_of(mech, crane: Crane) -> list:
    return [(a.link, crane.body.point_in_joint_frame(a.link, a.point)) for a in mech.attachments[:3]]


@pytest.mark.parametrize("name", PRESETS)
def test_the_evaluation_made_in_the_step_call_equals_a_separate_evaluation(name):
    """After each step the Crane holds the evaluation the step's call made; evaluating afresh at
    the same state and inputs gives the same bits (ABA work, actuator torques, z', points)."""
    rng = np.random.default_rng(11)
    mech = preset(name)
    crane = _compiled_crane(mech)
    crane.bind_points(_points_of(mech, crane))
    for k in range(8):
        crane.set_inputs(random_base(rng), crane.setpoint + 0.1 * rng.normal(size=crane.n), random_loads(rng, mech))
        crane.step(0.02, 0.005 if k % 2 else 0.02)
        fused, act, z_dot = crane._last
        assert fused.q is crane.q                                # the state the adapter's checks compare
        crane._last = None
        fresh, act2, z_dot2 = crane._compiled.evaluate(crane)
        assert fused._work.tobytes() == fresh._work.tobytes()
        assert act.tobytes() == act2.tobytes() and z_dot.tobytes() == z_dot2.tobytes()
        assert fused.points.tobytes() == fresh.points.tobytes()
        for x, y in zip(fused._base, fresh._base):
            assert np.asarray(x).tobytes() == np.asarray(y).tobytes()
        crane._last = (fused, act, z_dot)


@pytest.mark.parametrize("name", PRESETS)
def test_points_formed_by_the_kernel_equal_point_motion(name):
    """The motion of the bound points in an evaluation's result is point_motion's, bit for bit,
    where the kernel reproduces numpy (else nothing is bound and the result carries none)."""
    rng = np.random.default_rng(12)
    mech = preset(name)
    crane = _compiled_crane(mech)
    points = _points_of(mech, crane)
    bound = crane.bind_points(points)
    assert bound == crane_kernel.points_reproduce_numpy(kernels.library())
    for k in range(6):
        crane.q = crane.q + 0.3 * rng.normal(size=crane.n)
        crane.qd = rng.normal(size=crane.n) if k % 3 else np.zeros(crane.n)
        crane.set_inputs(random_base(rng), crane.setpoint, random_loads(rng, mech))
        result, _ = crane.evaluate()
        if not bound:
            assert result.points is None
            continue
        for j, (link, r) in enumerate(points):
            pos, vel, vP = result.point_motion(link, r)
            got = result.points[13 * j:13 * (j + 1)]
            assert got[0] == link and got[1:4].tobytes() == r.tobytes()
            assert got[4:7].tobytes() == pos.tobytes()
            assert got[7:10].tobytes() == vel.tobytes()
            assert got[10:13].tobytes() == np.asarray(vP).tobytes()


def test_the_numpy_reference_binds_no_points():
    mech = preset("knuckle_boom")
    crane = Crane(mech, compiled=False)
    assert not crane.bind_points(_points_of(mech, crane))
    crane.set_inputs(random_base(np.random.default_rng(1)), crane.setpoint, [])
    assert crane.evaluate()[0].points is None


def test_the_points_check_notices_a_kernel_that_rounds_otherwise():
    """points_reproduce_numpy compares with numpy's bits: a kernel whose products are rounded
    otherwise (the three products summed without fused multiply-adds, as another BLAS may) fails it."""
    def plain(n, work_address, points_address, m):
        size = crane_kernel.offsets(n)["size"]
        work = np.ctypeslib.as_array((ctypes.c_double * size).from_address(work_address))
        pts = np.ctypeslib.as_array((ctypes.c_double * (13 * m)).from_address(points_address)).reshape(m, 13)
        o = crane_kernel.offsets(n)
        for p in pts:
            i = int(p[0])
            T, V = work[o["T"] + 12 * i:o["T"] + 12 * i + 12], work[o["V"] + 6 * i:o["V"] + 6 * i + 6]
            R, pJ, w, vO, r = T[:9].reshape(3, 3), T[9:], V[:3], V[3:], p[1:4]
            vP = vO + np.array([w[1] * r[2] - w[2] * r[1], w[2] * r[0] - w[0] * r[2], w[0] * r[1] - w[1] * r[0]])
            p[4:7] = [pJ[k] + (R[k, 0] * r[0] + R[k, 1] * r[1] + R[k, 2] * r[2]) for k in range(3)]
            p[7:10] = [R[k, 0] * vP[0] + R[k, 1] * vP[1] + R[k, 2] * vP[2] for k in range(3)]
            p[10:13] = vP

    class Library:
        mc_aba_points = staticmethod(plain)

    assert not crane_kernel.points_reproduce_numpy(Library())


def _fmu(mechanism: str) -> tuple[CraneFmu, dict]:
    fmu = CraneFmu(instance_name="crane", resources=None)
    vr = {name: info.value_reference for name, info in fmu.info.items()}
    fmu.setup_experiment(0.0)
    fmu.enter_initialization_mode()
    fmu.set_string([vr["mechanism"]], [mechanism])
    fmu.exit_initialization_mode()
    assert fmu.failure is None
    return fmu, vr


def _set(fmu, vr, values: dict) -> None:
    names = [f"{group}[{i}]" for group, x in values.items() for i in range(len(x))]
    fmu.set_real([vr[n] for n in names], [float(v) for x in values.values() for v in x])


def _step(fmu, vr, r: np.random.Generator, t: float):
    """A random base motion and hook load set, then a step of 0.01 s from t; the base."""
    base = random_base(r)
    _set(fmu, vr, {"base.position": base.position, "base.quaternion": base.quaternion,
                   "base.velocity": base.velocity, "base.angular_velocity": base.angular_velocity,
                   "attachment1.force": r.normal(size=3) * 1e3})
    fmu.do_step(t, 0.01)
    return base


@pytest.mark.parametrize("name", ["knuckle_boom", "sms_prismatic"])
def test_fmu_outputs_with_the_kernels_equal_the_numpy_reference(name, monkeypatch):
    """The same steps and feedthrough refreshes through the adapter, compiled and on numpy: every
    output (attachments of the kernel's points, joint outputs of the one update, zeros for the
    joints and attachments the mechanism lacks) agrees to rounding."""
    runs = []
    for compiled in (True, False):
        if compiled:
            monkeypatch.delenv("MARINE_COSIM_KERNELS", raising=False)
        else:
            monkeypatch.setenv("MARINE_COSIM_KERNELS", "0")
        fmu, vr = _fmu(name)
        assert (fmu.crane._compiled is not None) == compiled
        names = [n for n, info in fmu.info.items() if info.causality == "output"]
        outputs = [vr[n] for n in names]
        rows, t, r = [], 0.0, np.random.default_rng(13)      # the same inputs in both runs
        for k in range(12):
            base = _step(fmu, vr, r, t)
            t += 0.01
            rows.append(fmu.get_real(outputs))
            _set(fmu, vr, {"base.position": base.position + 0.01, "base.acceleration": r.normal(size=3)})
            rows.append(fmu.get_real(outputs))
        assert fmu.failure is None
        runs.append((np.array(rows), fmu))
    (got, fmu), (ref, _) = runs
    assert np.all(np.isfinite(got))
    # to rounding of each output vector's largest magnitude over the run (a component that is zero
    # in exact arithmetic is rounding noise of the others)
    group = [n.split("[")[0] for n in names]
    largest = {g: np.abs(ref[:, [j for j, h in enumerate(group) if h == g]]).max() for g in set(group)}
    scale = np.array([max(largest[g], 1e-300) for g in group])
    bad = np.abs(got - ref) > 1e-9 * scale
    assert not bad.any(), [(names[j], got[:, j].max(), ref[:, j].max()) for j in np.flatnonzero(bad.any(0))]
    mech = preset(name)
    for k in range(len(mech.links) + 1, 8):
        assert [fmu.v[f"joint{k}.{x}"] for x in ("position", "rate", "torque", "power")] == [0.0] * 4
    for k in range(len(mech.attachments) + 1, 4):
        assert not fmu.v[f"attachment{k}.position"].any() and not fmu.v[f"attachment{k}.velocity"].any()


def _run_fmu(name: str) -> tuple[np.ndarray, CraneFmu]:
    """Steps and feedthrough refreshes (base moved, then also the base acceleration and the loads
    only), every output read after each; a state restored midway (new output arrays)."""
    fmu, vr = _fmu(name)
    names = [n for n, info in fmu.info.items() if info.causality == "output"]
    outputs = [vr[n] for n in names]
    rows, t, r = [], 0.0, np.random.default_rng(14)
    for k in range(12):
        base = _step(fmu, vr, r, t)
        t += 0.01
        rows.append(fmu.get_real(outputs))
        _set(fmu, vr, {"base.position": base.position + 0.01})
        rows.append(fmu.get_real(outputs))
        _set(fmu, vr, {"base.acceleration": r.normal(size=3), "attachment1.force": r.normal(size=3) * 1e3})
        rows.append(fmu.get_real(outputs))
        if k == 5:
            fmu._set_fmu_state(fmu._get_fmu_state())
    assert fmu.failure is None
    return np.array(rows), fmu


@pytest.mark.parametrize("name", ["knuckle_boom", "sms_prismatic"])
def test_fmu_outputs_written_by_the_kernel_equal_those_the_adapter_writes(name, monkeypatch):
    """The outputs the compiled evaluation writes into the adapter's arrays (bind_outputs) are the
    bits the adapter writes itself from the same evaluations."""
    monkeypatch.delenv("MARINE_COSIM_KERNELS", raising=False)
    bound, fmu = _run_fmu(name)
    assert fmu._outputs_bound == crane_kernel.points_reproduce_numpy(kernels.library())
    monkeypatch.setattr(Crane, "bind_outputs", lambda self, arrays: False)
    written, other = _run_fmu(name)
    assert not other._outputs_bound
    assert bound.tobytes() == written.tobytes()


def test_bind_outputs_refuses_arrays_it_cannot_write():
    mech = preset("knuckle_boom")
    crane = _compiled_crane(mech)
    crane.bind_points(_points_of(mech, crane)[:1])     # bound or not (the BLAS decides), as the FMU does
    m = int(crane._compiled._cr[crane._compiled._points_at])
    good = [np.zeros(s) for s in (6, 9, 6, 3, 3) + (3, 3) * m]
    assert crane.bind_outputs(good)
    assert not crane.bind_outputs(good[:-1])                                # one short
    assert not crane.bind_outputs([*good[:1], np.zeros(9, dtype=np.float32), *good[2:]])
    assert not crane.bind_outputs([*good[:2], np.zeros(12)[::2], *good[3:]])  # not contiguous
    crane.set_inputs(random_base(np.random.default_rng(2)), crane.setpoint, [])
    assert not crane.evaluate()[0].outputs_written
