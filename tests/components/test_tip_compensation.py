"""The crane-tip computed-torque law (components/tip_compensation.py; Tysse & Egeland §7, digest §3.3):
the torques it commands give exactly the tip acceleration it asks for, on a moving base with free and
locked joints, and it refuses what it cannot do."""
from __future__ import annotations

import json

import numpy as np
import pytest

from components.crane import BaseMotion
from components.mechanism import load_mechanism
from components.rotations import quat_normalize, quat_to_matrix
from components.tip_compensation import CompensationError, TipCompensator
from tests.models import tip_compensation as tc
from tests.models.b4 import model as b4


@pytest.fixture(scope="module")
def heavy(tmp_path_factory):
    path = tmp_path_factory.mktemp("tc") / "b4.json"
    path.write_text(json.dumps(b4.mechanism(250e3, "position")))
    return load_mechanism(path)


@pytest.fixture(scope="module")
def knuckle(tmp_path_factory):
    return load_mechanism(tc.write_lift_mechanism(tmp_path_factory.mktemp("tc") / "kb.json"))


def _random_base(rng) -> BaseMotion:
    quat = quat_normalize(np.array([1.0, *0.08 * rng.standard_normal(3)]))
    return BaseMotion(10 * rng.standard_normal(3), quat, rng.standard_normal(3), 0.1 * rng.standard_normal(3),
                      2 * rng.standard_normal(3), 0.3 * rng.standard_normal(3))


def _aba(law, base, q, qd, tau, loads):
    R = quat_to_matrix(base.quaternion)
    return law.body.forward_dynamics(q, qd, tau, R, base.position, base.velocity, base.angular_velocity,
                                     base.acceleration, base.angular_acceleration, gravity=law.gravity,
                                     link_wrenches=loads)


def test_commanded_torques_give_the_desired_tip_acceleration(heavy):
    """Free joints (hook swing, hoist spring) with measured forces, a load on the payload, a random moving
    base: forward dynamics with the commanded torques gives a_tip = -K_d e' - K_p e to round-off."""
    law = TipCompensator(heavy, ["actuated"] * 3 + ["free"] * 3, (2, np.zeros(3)), omega=2.0, zeta=0.8)
    rng = np.random.default_rng(7)
    q0 = np.array([l.initial_position for l in heavy.links])
    for _ in range(10):
        q, qd = q0 + 0.1 * rng.standard_normal(6), 0.3 * rng.standard_normal(6)
        base = _random_base(rng)
        free = 1e5 * rng.standard_normal(3)
        loads = [(5, np.zeros(3), 1e5 * rng.standard_normal(3), 1e4 * rng.standard_normal(3))]
        target = law.tip_position(base, q) + 0.2 * rng.standard_normal(3)
        cmd = law.command(base, q, qd, free, loads, target=target)
        e, ed = cmd.tip_position - target, cmd.tip_velocity
        np.testing.assert_allclose(cmd.desired_acceleration, -law.kd * ed - law.kp * e, rtol=1e-12, atol=1e-12)
        res = _aba(law, base, q, qd, np.concatenate([cmd.torque, free]), loads)
        p, v, a = res.point_kinematics(2, np.zeros(3))
        np.testing.assert_allclose(p, cmd.tip_position, atol=1e-12)
        np.testing.assert_allclose(v, cmd.tip_velocity, atol=1e-12)
        np.testing.assert_allclose(a, cmd.desired_acceleration, atol=1e-9 * max(1.0, np.abs(a).max()))
        np.testing.assert_allclose(res.qdd[:3], cmd.qdd, atol=1e-10)


def test_locked_joints_are_rigid_in_the_model(knuckle):
    """Knuckle boom with the telescope and tool locked: the commanded torques are the inverse dynamics
    (RNEA) of the commanded accelerations with the locked joints at rest relative to their links."""
    roles = ["actuated"] * 3 + ["locked"] * 4
    law = TipCompensator(knuckle, roles, (3, np.zeros(3)), omega=3.0)
    rng = np.random.default_rng(3)
    q0 = np.array([l.initial_position for l in knuckle.links])
    for _ in range(5):
        q = q0 + 0.05 * rng.standard_normal(7)
        qd = np.concatenate([0.1 * rng.standard_normal(3), np.zeros(4)])
        base = _random_base(rng)
        loads = [(3, np.zeros(3), np.array([0.0, 2e4, 9.8e4]), np.zeros(3))]
        cmd = law.command(base, q, qd, np.zeros(0), loads, target=law.tip_position(base, q) + 0.1)
        R = quat_to_matrix(base.quaternion)
        rnea = law.body.inverse_dynamics(q, qd, np.concatenate([cmd.qdd, np.zeros(4)]), R, base.position,
                                         base.velocity, base.angular_velocity, base.acceleration,
                                         base.angular_acceleration, gravity=law.gravity, link_wrenches=loads)
        np.testing.assert_allclose(cmd.torque, rnea.tau[:3], rtol=1e-9, atol=1e-6)


def test_hold_mode_asks_the_joint_space_law(heavy):
    law = TipCompensator(heavy, ["actuated"] * 3 + ["free"] * 3, (2, np.zeros(3)), omega=2.0)
    rng = np.random.default_rng(11)
    q = np.array([l.initial_position for l in heavy.links]) + 0.05 * rng.standard_normal(6)
    qd = 0.2 * rng.standard_normal(6)
    base, hold = _random_base(rng), q[:3] + 0.01
    cmd = law.command(base, q, qd, np.zeros(3), (), hold=hold)
    np.testing.assert_allclose(cmd.qdd, -law.kd * qd[:3] - law.kp * (q[:3] - hold), rtol=1e-12)
    res = _aba(law, base, q, qd, np.concatenate([cmd.torque, np.zeros(3)]), [])
    np.testing.assert_allclose(res.qdd[:3], cmd.qdd, atol=1e-10)


def test_stretched_crane_is_refused(heavy):
    """Boom and jib in line (jib angle 0): the tip cannot move along the arm; no command, a clear error."""
    law = TipCompensator(heavy, ["actuated"] * 3 + ["free"] * 3, (2, np.zeros(3)))
    q = np.array([l.initial_position for l in heavy.links])
    q[2] = 0.0
    base = BaseMotion(np.zeros(3), np.array([1.0, 0, 0, 0]), *(np.zeros(3) for _ in range(4)))
    with pytest.raises(CompensationError, match="singular"):
        law.command(base, q, np.zeros(6), np.zeros(3), (), target=law.tip_position(base, q))


@pytest.mark.parametrize("roles, match", [
    (["actuated"] * 2 + ["free"] * 4, "exactly 3"),
    (["actuated"] * 3 + ["loose"] * 3, "unknown joint role"),
    (["actuated"] * 3, "3 joint roles for 6 joints"),
])
def test_bad_roles_are_refused(heavy, roles, match):
    with pytest.raises(ValueError, match=match):
        TipCompensator(heavy, roles, (2, np.zeros(3)))
