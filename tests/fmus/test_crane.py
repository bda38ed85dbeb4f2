"""The crane model (components.crane) and the Crane FMU: holding under PID, base reaction on a
fixed and a heaving base, end stops, strong-coupling outputs, state, and the crane on the ship."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from components.crane import BaseMotion, Crane, still_base
from components.mechanism import JointControl, JointLimits, load_mechanism, mechanism_to_dict, preset
from orchestration import simulate
from orchestration.system.model import Component, System
from tests.support.fmu_runner import FmuUnderTest

G = 9.81


def settle(crane, seconds, dt=0.01, sub=0.002):
    for _ in range(int(round(seconds / dt))):
        crane.step(dt, sub)


def test_knuckle_boom_holds_its_pose_and_loads_the_base_with_its_weight(validation):
    mech = preset("knuckle_boom")
    mass = sum(l.mass for l in mech.links)
    crane = Crane(mech, gravity=G)
    crane.set_inputs(still_base(), crane.setpoint, [])
    settle(crane, 4.0)
    result, _ = crane.evaluate()
    q0 = np.array([l.initial_position for l in mech.links])
    assert np.max(np.abs(crane.q - q0)[[1, 2, 3, 4, 6]]) < 2e-2        # position-controlled joints hold (P droop)
    assert np.max(np.abs(crane.qd)) < 1e-3
    validation.record(case="knuckle boom at rest: vertical base force = weight", reference=mass * G / 1e3,
                      ours=result.base_wrench[2] / 1e3, tolerance=1e-3, unit="kN", source="static equilibrium")
    # fixed base, static: the crane pushes the ship down with its weight and the weight's moment
    assert result.base_wrench[0:3] == pytest.approx([0.0, 0.0, mass * G], rel=1e-3, abs=50.0)
    cg = sum(l.mass * pose_cg for l, pose_cg in zip(mech.links, link_cgs(crane))) / mass
    assert result.base_wrench[3:6] == pytest.approx(np.cross(cg, [0.0, 0.0, mass * G]), rel=2e-3, abs=50.0)


def link_cgs(crane):
    """World position of every link's CG (links' J frames: pose of F_{i-1} moved by the joint)."""
    result, _ = crane.evaluate()
    out = []
    for i, link in enumerate(crane.mechanism.links):
        R, p = result.joint_frames[i][0:3, 0:3], result.joint_frames[i][0:3, 3]
        out.append(p + R @ np.asarray(link.cg, float))
    return out


def test_base_wrench_on_a_heaving_base_carries_the_inertia(validation):
    """Base accelerating upward at 2 m/s2 (NED -z): once the joints have settled under their
    controllers the crane moves rigidly with the base and the base force is m (g + 2); at any instant
    the articulated inertia predicts the wrench: -base_wrench = I_A [a; alpha] + bias."""
    mech = preset("knuckle_boom")
    mass = sum(l.mass for l in mech.links)
    crane = Crane(mech, gravity=G)
    crane.set_inputs(still_base(), crane.setpoint, [])
    settle(crane, 3.0)
    up = BaseMotion(np.zeros(3), np.array([1.0, 0, 0, 0]), np.zeros(3), np.zeros(3), np.array([0, 0, -2.0]),
                    np.zeros(3))
    crane.set_inputs(up, crane.setpoint, [])
    result, _ = crane.evaluate()
    a = np.array([0, 0, -2.0, 0, 0, 0])
    assert np.allclose(-result.base_wrench, result.articulated_inertia @ a + result.bias, rtol=1e-9, atol=1e-6)
    for _ in range(300):                      # 3 s of constant upward acceleration
        crane.step(0.01, 0.002)
        crane.base = BaseMotion(crane.base.position, crane.base.quaternion, crane.base.velocity,
                                crane.base.angular_velocity, np.array([0, 0, -2.0]), np.zeros(3))
    result, _ = crane.evaluate()
    validation.record(case="knuckle boom on a base accelerating up at 2 m/s^2: base force = m (g + 2)",
                      reference=mass * (G + 2.0) / 1e3, ours=result.base_wrench[2] / 1e3, tolerance=5e-3, unit="kN",
                      source="Newton's second law (rigid crane)")
    assert result.base_wrench[2] == pytest.approx(mass * (G + 2.0), rel=5e-3)


@pytest.mark.slow
def test_end_stop_holds_a_passive_joint():
    """A passive luffing joint falling onto its lower stop (SMS 4.4.9-like, gentler gains) rests on it
    within the static deflection weight-moment / K."""
    mech = preset("knuckle_boom")
    mech.links[1].control = JointControl(mode="passive")
    mech.links[1].limits = JointLimits(lower=0.5, upper=1.5, stiffness=5e9, damping=5e8)
    crane = Crane(mech, gravity=G)
    crane.set_inputs(still_base(), crane.setpoint, [])
    settle(crane, 8.0, dt=0.01, sub=0.001)
    assert 0.5 - 0.01 < crane.q[1] < 0.5
    assert abs(crane.qd[1]) < 1e-3


def test_torque_and_power_limits_are_respected():
    mech = preset("knuckle_boom")
    mech.links[0].control = JointControl(mode="velocity", kp=5e7, ki=0.0, torque_max=2e6, power_max=1e6)
    crane = Crane(mech, gravity=G)
    sp = crane.setpoint.copy()
    sp[0] = 1.0                                             # ask the slew for 1 rad/s: far too much
    crane.set_inputs(still_base(), sp, [])
    worst_torque = worst_power = 0.0
    for _ in range(300):
        crane.step(0.01, 0.002)
        _, act = crane.evaluate()
        worst_torque = max(worst_torque, abs(act[0]))
        worst_power = max(worst_power, abs(act[0] * crane.qd[0]))
    assert worst_torque <= 2e6 * (1 + 1e-12) and worst_power <= 1e6 * 1.02
    assert 0.0 < crane.qd[0] < 1.0


@pytest.fixture(scope="module")
def crane_fmu(fmu_dir):
    return fmu_dir / "Crane.fmu"


def test_crane_fmu_outputs_and_state(crane_fmu):
    fmu = FmuUnderTest(crane_fmu)
    try:
        fmu.initialize({"base.acceleration[2]": -1.0})
        names = [v.name for v in fmu.md.modelVariables if v.causality == "output"]
        fmu.set({"attachment3.force[2]": 5e4, "joint1.setpoint": 0.1})   # 5 t on the tool tip, slew 0.1 rad/s
        t, _ = fmu.run(0.0, 0.5, 0.01, names)
        state = fmu.slave.getFMUstate()
        _, first = fmu.run(t, t + 0.5, 0.01, names)
        fmu.slave.setFMUstate(state)
        _, second = fmu.run(t, t + 0.5, 0.01, names)
        assert np.array_equal(first, second)
        assert fmu.get(["joint1.rate"])[0] > 0.05
        # the outputs for the ship are consistent: base force = -(I_A a + bias)
        IA = np.zeros((6, 6))
        sym = lambda x: np.array([[x[0], x[3], x[4]], [x[3], x[1], x[5]], [x[4], x[5], x[2]]])
        IA[0:3, 0:3] = sym(fmu.get([f"base.inertia_linear[{k}]" for k in ("0,0", "1,1", "2,2", "0,1", "0,2", "1,2")]))
        IA[0:3, 3:6] = fmu.get([f"base.inertia_coupling[{i},{j}]" for i in range(3) for j in range(3)]).reshape(3, 3)
        IA[3:6, 0:3] = IA[0:3, 3:6].T
        IA[3:6, 3:6] = sym(fmu.get([f"base.inertia_angular[{k}]" for k in ("0,0", "1,1", "2,2", "0,1", "0,2", "1,2")]))
        bias = fmu.get([f"base.bias_force[{i}]" for i in range(3)] + [f"base.bias_moment[{i}]" for i in range(3)])
        wrench = fmu.get([f"base.force[{i}]" for i in range(3)] + [f"base.moment[{i}]" for i in range(3)])
        assert np.allclose(-wrench, IA @ np.array([0, 0, -1.0, 0, 0, 0]) + bias, rtol=1e-8, atol=1e-3)
    finally:
        fmu.close()


@pytest.mark.slow
def test_crane_on_the_ship_in_co_simulation(fmu_dir):
    """Ship hardpoint 1 carries the crane base: the ship sinks under the crane's weight by its
    hydrostatics (about mass / (rho g Awp)) and the crane follows the ship."""
    s = System("ship_crane")
    s.add_component(Component("ship", fmu_dir / "Ship.fmu", {"sea.spectrum": 0}))
    s.add_component(Component("crane", fmu_dir / "Crane.fmu"))
    for var in ("position", "velocity", "angular_velocity", "acceleration", "angular_acceleration"):
        for i in range(3):
            s.connect(f"ship.hardpoint1.{var}[{i}]", f"crane.base.{var}[{i}]")
    for i in range(4):
        s.connect(f"ship.hardpoint1.quaternion[{i}]", f"crane.base.quaternion[{i}]")
    for i in range(3):
        s.connect(f"crane.base.force[{i}]", f"ship.hardpoint1.force[{i}]")
        s.connect(f"crane.base.moment[{i}]", f"ship.hardpoint1.moment[{i}]")
    r = simulate(s, 40.0, 0.05, method="gauss-seidel",
                 variables=["ship.position[2]", "ship.euler[1]", "crane.base.force[2]", "crane.attachment1.position[2]",
                            "ship.hardpoint1.position[2]"])
    mass = sum(l.mass for l in preset("knuckle_boom").links)
    assert r["crane.base.force[2]"][-1] == pytest.approx(mass * G, rel=0.02)
    assert r["ship.position[2]"][-1] > 0.03                     # it sank (supply vessel: ~0.09 m for 128 t)
    assert np.all(np.isfinite(r["crane.attachment1.position[2]"]))


@pytest.mark.parametrize("method", ["master-jacobi", "master-gauss-seidel"])
def test_tip_on_a_base_moving_at_5_m_s_is_where_the_crane_alone_puts_it(crane_fmu, method):
    """Issue 22: a crane on a ship making 5 m/s, coupling step 0.05 s. Read as a master reads them
    (after each step, before the next inputs, or after the inputs of t + h are set), the tip's
    position and velocity are those of the crane component alone at the same instant, to 1 mm
    (they were one step behind the base: 25 cm)."""
    speed, h, steps = 5.0, 0.05, 60
    base_at = lambda t: BaseMotion(np.array([speed * t, 0.0, -8.0]), np.array([1.0, 0.0, 0.0, 0.0]),
                                   np.array([speed, 0.0, 0.0]), np.zeros(3), np.zeros(3), np.zeros(3))
    alone = Crane(preset("knuckle_boom"), gravity=G)
    tip_link, tip_point = None, None
    fmu = FmuUnderTest(crane_fmu)
    try:
        def base_inputs(t):
            b = base_at(t)
            return {**{f"base.position[{i}]": b.position[i] for i in range(3)},
                    **{f"base.velocity[{i}]": b.velocity[i] for i in range(3)}}
        fmu.initialize(base_inputs(0.0))
        mech = alone.mechanism
        att = mech.attachments[0]
        tip_link, tip_point = att.link, alone.body.point_in_joint_frame(att.link, att.point)
        names = [f"attachment1.position[{i}]" for i in range(3)] + [f"attachment1.velocity[{i}]" for i in range(3)]
        worst = 0.0
        alone.set_inputs(base_at(0.0), alone.setpoint, [])
        for k in range(steps):
            t = k * h
            fmu.set(base_inputs(t))
            fmu.slave.doStep(t, h)
            if method == "master-gauss-seidel":
                fmu.set(base_inputs(t + h))        # the base's outputs of t + h, before reading
            tip = fmu.get(names)
            alone.set_inputs(base_at(t), alone.setpoint, [])
            alone.step(h, 0.002)
            alone.set_inputs(base_at(t + h), alone.setpoint, [])
            result, _ = alone.evaluate()
            pos, vel, _ = result.point_motion(tip_link, tip_point)
            worst = max(worst, float(np.max(np.abs(tip[:3] - pos))))
            assert np.allclose(tip[3:], vel, atol=1e-3), (t, tip[3:], vel)
        assert worst < 1e-3, worst
        assert tip[0] > speed * steps * h - 50.0          # it went along with the base
    finally:
        fmu.close()


def _stiff_boom(tmp_path, factor: float) -> Path:
    """The knuckle boom with its main-boom joint's P and D gains times ``factor``, as a file."""
    mech = preset("knuckle_boom")
    control = mech.links[1].control
    control.kp *= factor
    control.kd *= factor
    path = tmp_path / f"stiff_boom_{factor:g}.json"
    path.write_text(json.dumps(mechanism_to_dict(mech)))
    return path


def test_stiff_joint_gains_get_stable_sub_steps(crane_fmu, tmp_path):
    """Issue 22: main-boom gains 100 times the preset's need RK4 sub-steps below 1.1 ms; at the
    default 2 ms the crane alone chatters, held only by its torque and power limits. The FMU finds
    the limit at initialisation, says so, and takes stable sub-steps: the boom holds still and
    the base carries the crane's weight."""
    path = _stiff_boom(tmp_path, 100.0)
    alone = Crane(load_mechanism(path), gravity=G)
    alone.set_inputs(still_base(), alone.setpoint, [])
    settle(alone, 2.0, sub=0.002)
    assert abs(alone.qd[1]) > 1e-4                        # the defect: chatter

    fmu = FmuUnderTest(crane_fmu)
    try:
        fmu.initialize({"mechanism": str(path), "max_substep": 0.002})
        warnings = [m for s, m in fmu.messages if s == 1]
        assert any("max_substep" in m and "joint 2" in m for m in warnings), warnings
        _, rows = fmu.run(0.0, 2.0, 0.01, ["joint2.rate", "base.force[2]"])
        assert not fmu.errors()
    finally:
        fmu.close()
    mass = sum(l.mass for l in preset("knuckle_boom").links)
    assert np.max(np.abs(rows[-50:, 0])) < 1e-6
    assert rows[-1, 1] == pytest.approx(mass * G, rel=1e-3)


def test_gains_beyond_any_sub_step_are_refused_by_name(crane_fmu, tmp_path):
    path = _stiff_boom(tmp_path, 1e10)
    fmu = FmuUnderTest(crane_fmu)
    try:
        with pytest.raises(Exception):
            fmu.initialize({"mechanism": str(path)})
        assert any("mechanism:links[1].control.kd" in m and "lower it" in m for m in fmu.errors()), fmu.errors()
    finally:
        fmu.close()
