"""Port adapters in the master (orchestration.master.adapters): exact conversions at any angle, the
rigid-body kinematics against finite differences, power kept through every adapter at random states,
and the adapter behind the slave interface (state, errors)."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from orchestration.master.adapters import AdapterSlave
from orchestration.master.adapters.frames import (Conventions, euler_to_matrix, euler_to_quaternion, matrix_to_euler,
                                                  quat_from_matrix, quat_to_matrix)
from orchestration.master.adapters.kinds import ManoeuvringSeakeeping, RigidBody
from orchestration.master.slaves import SlaveError

SEQUENCES = ["".join(p) for p in itertools.permutations("xyz")]
RNG = np.random.default_rng(20240521)


def rot(axis: str, a: float) -> np.ndarray:
    """An elementary rotation written out, independent of the code under test."""
    c, s = math.cos(a), math.sin(a)
    return {"x": np.array([[1, 0, 0], [0, c, -s], [0, s, c]]), "y": np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]]),
            "z": np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])}[axis]


@pytest.mark.parametrize("sequence", SEQUENCES)
def test_euler_to_quaternion_is_exact_at_any_angle(sequence):
    """R(q(angles)) equals the product of the elementary rotations to rounding, for angles anywhere
    in (-pi, pi] (pitch-like middle angle in (-pi/2, pi/2)), and the angles come back."""
    for _ in range(200):
        angles = RNG.uniform(-math.pi, math.pi, 3)
        middle = "xyz".index(sequence[1])
        angles[middle] = RNG.uniform(-0.49 * math.pi, 0.49 * math.pi)
        expected = np.eye(3)
        for axis in sequence:
            expected = expected @ rot(axis, angles["xyz".index(axis)])
        q = euler_to_quaternion(angles, sequence)
        assert np.linalg.norm(q) == pytest.approx(1.0, abs=1e-15)
        assert np.max(np.abs(quat_to_matrix(q) - expected)) < 1e-14
        assert np.max(np.abs(euler_to_matrix(angles, sequence) - expected)) < 1e-14
        assert np.max(np.abs(matrix_to_euler(expected, sequence) - angles)) < 1e-12


def test_quaternion_from_matrix_at_every_angle():
    for _ in range(500):
        q = RNG.normal(size=4)
        q /= np.linalg.norm(q)
        back = quat_from_matrix(quat_to_matrix(q))
        assert min(np.max(np.abs(back - q)), np.max(np.abs(back + q))) < 1e-14
    for angle in (math.pi, -math.pi, math.pi - 1e-9):          # the half-turns where w -> 0
        R = rot("z", angle) @ rot("x", 0.3)
        assert np.max(np.abs(quat_to_matrix(quat_from_matrix(R)) - R)) < 1e-14


def test_the_27_degree_case_of_the_issue_is_exact():
    """Issue 21: at 27 deg of yaw the small-angle quaternion (1, r/2, p/2, y/2) had norm 1.028; the
    adapter's quaternion is a unit quaternion and its heading is 27 deg exactly."""
    c = Conventions("NED", "FRD")
    q = c.attitude(euler_to_quaternion(np.radians([0.0, 0.0, 27.0])))
    assert np.linalg.norm(q) == pytest.approx(1.0, abs=1e-15)
    assert math.degrees(matrix_to_euler(quat_to_matrix(q))[2]) == pytest.approx(27.0, abs=1e-12)
    small = np.array([1.0, 0.0, 0.0, math.radians(27.0) / 2])
    assert np.linalg.norm(small) == pytest.approx(1.028, abs=1e-3)


def test_frame_conventions():
    """ENU yaw 30 deg (counter-clockwise from east) is heading 60 deg; a z-up body (FLU) rolled to
    starboard-down by +10 deg in NWU is our roll +10 deg, pitched bow-down +5 deg is our pitch -5 deg."""
    heading = lambda conv, angles: np.degrees(matrix_to_euler(quat_to_matrix(
        conv.attitude(euler_to_quaternion(np.radians(angles))))))
    assert heading(Conventions("ENU", "FLU"), [0, 0, 30.0]) == pytest.approx([0, 0, 60.0], abs=1e-12)
    assert heading(Conventions("NWU", "FLU"), [10.0, 5.0, 20.0]) == pytest.approx([10.0, -5.0, -20.0], abs=1e-12)
    # OSP vessel style: displacements NED, angles in a z-up frame
    c = Conventions("NED", "FLU", "NWU")
    assert heading(c, [10.0, 5.0, 20.0]) == pytest.approx([10.0, -5.0, -20.0], abs=1e-12)
    for conv in (Conventions("ENU", "FLU"), Conventions("NED", "FLU", "NWU")):
        q = RNG.normal(size=4)
        assert np.allclose(conv.attitude_back(conv.attitude(q / np.linalg.norm(q))), q / np.linalg.norm(q))


# ---------------------------------------------------------------------- kinematics vs finite differences

def trajectory(t: float):
    """A smooth 6-DOF motion of a reference point (ours): large yaw, some roll and pitch."""
    p = np.array([3.0 * math.sin(0.4 * t) + 1.0, 2.0 * t, 0.5 * math.cos(0.9 * t)])
    angles = np.array([0.3 * math.sin(1.1 * t), 0.2 * math.cos(0.7 * t), 1.5 * t + 0.8])
    return p, euler_to_matrix(angles), angles


def derivatives(t: float, h: float = 1e-4):
    """v, w, a, dw of the trajectory by central differences (w from R' R^T)."""
    def vel(s):
        pa, Ra, _ = trajectory(s - h)
        pb, Rb, _ = trajectory(s + h)
        _, R, _ = trajectory(s)
        W = (Rb - Ra) / (2 * h) @ R.T
        return (pb - pa) / (2 * h), np.array([W[2, 1], W[0, 2], W[1, 0]])
    v, w = vel(t)
    (va, wa), (vb, wb) = vel(t - h), vel(t + h)
    return v, w, (vb - va) / (2 * h), (wb - wa) / (2 * h)


CASES = [
    {"world": "NED", "body": "FRD", "attitude": "quaternion"},
    {"world": "ENU", "body": "FLU", "attitude": "euler", "angle_unit": "deg", "velocity_axes": "body",
     "angular_velocity_axes": "body", "acceleration_axes": "body_derivative", "angular_acceleration_axes": "body"},
    {"world": "NWU", "body": "FLU", "attitude": "euler", "euler_sequence": "xyz", "acceleration_axes": "body"},
    {"world": "NED", "attitude_world": "NWU", "body": "FLU", "attitude": "euler", "angle_unit": "deg",
     "angular_velocity_axes": "body", "angular_acceleration_axes": "body"},
    {"world": "ENU", "body": "FRD", "attitude": "quaternion", "quaternion_order": "xyzw", "velocity_axes": "body"},
]


def its_inputs(p: dict, t: float) -> dict[str, float]:
    """The reference point's motion at t as the other model would give it in conventions ``p``."""
    conv = Conventions(p.get("world", "NED"), p.get("body", "FRD"), p.get("attitude_world") or None)
    pos, R, _ = trajectory(t)
    v, w, a, dw = derivatives(t)
    origin = np.array([p.get(f"origin[{i}]", 0.0) for i in range(3)])
    scale = math.pi / 180 if p.get("angle_unit") == "deg" else 1.0
    u = {}
    put = lambda name, x: u.update({f"reference.{name}[{i}]": float(y) for i, y in enumerate(x)})
    put("position", conv.Cw.T @ (pos - origin))
    R_its = conv.Ca.T @ R @ conv.Cb
    if p["attitude"] == "euler":
        put("euler", matrix_to_euler(R_its, p.get("euler_sequence", "zyx")) / scale)
    else:
        q = quat_from_matrix(R_its)
        put("quaternion", [q[1], q[2], q[3], q[0]] if p.get("quaternion_order") == "xyzw" else q)
    body = lambda x: conv.Cb.T @ R.T @ x
    world = lambda x: conv.Cw.T @ x
    put("velocity", body(v) if p.get("velocity_axes") == "body" else world(v))
    put("angular_velocity", (body(w) if p.get("angular_velocity_axes") == "body" else world(w)) / scale)
    if p.get("acceleration_axes") == "body_derivative":
        put("acceleration", body(a) - np.cross(body(w), body(v)))
    else:
        put("acceleration", body(a) if p.get("acceleration_axes") == "body" else world(a))
    put("angular_acceleration", (body(dw) if p.get("angular_acceleration_axes") == "body" else world(dw)) / scale)
    return u


@pytest.mark.parametrize("case", range(len(CASES)))
def test_rigid_motion_against_finite_differences(case):
    """The point's position, attitude, velocity and acceleration from the adapter equal those of the
    moving point A = p + R r differentiated numerically, whatever the other model's conventions."""
    lever = np.array([-24.6, 3.0, -6.7])
    p = {**CASES[case], "origin[0]": 12.0, "origin[1]": -4.0, "origin[2]": 0.3,
         **{f"point1.lever[{i}]": float(x) for i, x in enumerate(lever)}}
    adapter = RigidBody(p)
    point = lambda s: trajectory(s)[0] + trajectory(s)[1] @ lever
    for t in (0.3, 1.7, 4.2):
        u = its_inputs(p, t)
        u.update({f"point1.{w}[{i}]": 0.0 for w in ("force", "moment") for i in range(3)})
        out = adapter.evaluate(u)
        get = lambda name, n=3: np.array([out[f"point1.{name}[{i}]"] for i in range(n)])
        h = 1e-4
        v_fd = (point(t + h) - point(t - h)) / (2 * h)
        a_fd = (point(t + h) - 2 * point(t) + point(t - h)) / h ** 2
        _, R, _ = trajectory(t)
        _, w, _, dw = derivatives(t)
        assert np.max(np.abs(get("position") - point(t))) < 1e-12
        assert np.max(np.abs(quat_to_matrix(get("quaternion", 4)) - R)) < 1e-13
        assert np.max(np.abs(get("velocity") - v_fd)) < 1e-6
        assert np.max(np.abs(get("angular_velocity") - w)) < 1e-6
        assert np.max(np.abs(get("acceleration") - a_fd)) < 1e-4
        assert np.max(np.abs(get("angular_acceleration") - dw)) < 1e-5


# ---------------------------------------------------------------------- power

def random_body_inputs(p: dict, n_points: int, rng) -> dict[str, float]:
    u = {}
    for name in ("position", "velocity", "angular_velocity", "acceleration", "angular_acceleration"):
        u.update({f"reference.{name}[{i}]": float(x) for i, x in enumerate(rng.normal(size=3))})
    if p.get("attitude") == "euler":
        u.update({f"reference.euler[{i}]": float(x) for i, x in enumerate(rng.uniform(-170, 170, 3))})
    else:
        u.update({f"reference.quaternion[{i}]": float(x) for i, x in enumerate(rng.normal(size=4))})
    for k in range(1, n_points + 1):
        u.update({f"point{k}.force[{i}]": float(x) for i, x in enumerate(rng.normal(scale=1e5, size=3))})
        u.update({f"point{k}.moment[{i}]": float(x) for i, x in enumerate(rng.normal(scale=1e6, size=3))})
    return u


def body_powers(p: dict, n_points: int, rng) -> tuple[float, float]:
    """A rigid_body adapter with conventions ``p`` and ``n_points`` random points on a random state:
    the power of the loads at the points (ours) and of the resultant at the reference point (in its
    axes and units, with its velocities in those axes)."""
    levers = rng.normal(scale=20.0, size=(n_points, 3))
    p = {**p, "points": n_points, **{f"point{k + 1}.lever[{i}]": float(levers[k, i]) for k in range(n_points)
                                     for i in range(3)}}
    adapter = RigidBody(p)
    u = random_body_inputs(p, n_points, rng)
    out = adapter.evaluate(u)
    vec = lambda d, name: np.array([d[f"{name}[{i}]"] for i in range(3)])
    ours = sum(vec(u, f"point{k}.force") @ vec(out, f"point{k}.velocity")
               + vec(u, f"point{k}.moment") @ vec(out, f"point{k}.angular_velocity") for k in range(1, n_points + 1))
    F = vec(out, "reference.force") * {"N": 1, "kN": 1e3}[p.get("force_unit", "N")]
    M = vec(out, "reference.moment") * {"N.m": 1, "kN.m": 1e3}[p.get("moment_unit", "N.m")]
    _, _, R, v, w, _, _ = adapter.reference_motion(u)
    conv = adapter.attitude.conventions
    if p.get("load_axes") == "body":
        v_its, w_its = conv.Cb.T @ R.T @ v, conv.Cb.T @ R.T @ w
    else:
        v_its, w_its = conv.Cw.T @ v, conv.Cw.T @ w
    return float(ours), float(F @ v_its + M @ w_its)


@pytest.mark.parametrize("p", [
    {"world": "NED", "body": "FRD"},
    {"world": "ENU", "body": "FLU", "attitude": "euler", "angle_unit": "deg", "load_axes": "body",
     "force_unit": "kN", "moment_unit": "kN.m", "velocity_axes": "body", "angular_velocity_axes": "body"},
    {"world": "NWU", "body": "FLU", "attitude": "euler", "euler_sequence": "yxz"},
    {"world": "NED", "attitude_world": "NWU", "body": "FLU", "attitude": "euler", "angle_unit": "deg",
     "force_unit": "kN", "moment_unit": "kN.m", "angular_velocity_axes": "body"},
], ids=["ours", "enu-flu-body-kN", "nwu-yxz", "osp-vessel"])
def test_power_through_the_rigid_body_adapter_is_equal_on_both_sides(p):
    """F.v + M.w of the loads at the points equals that of the resultant at the reference point, in
    the other model's axes and units, to rounding (1e-12 of the terms), at 200 random states."""
    rng = np.random.default_rng(7)
    worst = 0.0
    for _ in range(200):
        ours, theirs = body_powers(p, int(rng.integers(1, 4)), rng)
        worst = max(worst, abs(ours - theirs) / max(1.0, abs(ours)))
    assert worst < 1e-12


def test_power_splits_exactly_in_the_manoeuvring_seakeeping_adapter():
    """The crane's power at the point equals the manoeuvring model's X u + Y v + N r plus the
    seakeeping model's F_s.v_s + M_s.w_s, at random states, in every convention of the manoeuvring
    model (rounding only)."""
    rng = np.random.default_rng(11)
    conventions = [{"world": "NED", "body": "FRD"},
                   {"world": "ENU", "body": "FLU", "angle_unit": "deg", "force_unit": "kN", "moment_unit": "kN.m"},
                   {"world": "NWU", "body": "FLU", "velocity_axes": "world", "acceleration_axes": "world",
                    "load_axes": "world"}]
    worst = 0.0
    for conv in conventions * 50:
        p = {**conv, "origin[0]": 5.0, "origin[1]": -3.0, "points": 2,
             **{f"point{k}.lever[{i}]": float(x) for k in (1, 2) for i, x in enumerate(rng.normal(scale=15.0,
                                                                                                   size=3))}}
        adapter = ManoeuvringSeakeeping(p)
        u = {"manoeuvring.yaw": float(rng.uniform(-170, 170)), "manoeuvring.yaw_rate": float(rng.normal()),
             "manoeuvring.yaw_acceleration": float(rng.normal())}
        for name in ("position", "velocity", "acceleration"):
            u.update({f"manoeuvring.{name}[{i}]": float(x) for i, x in enumerate(rng.normal(size=2))})
        q = euler_to_quaternion(np.array([rng.uniform(-0.3, 0.3), rng.uniform(-0.2, 0.2), rng.uniform(-0.1, 0.1)]))
        u.update({f"seakeeping.quaternion[{i}]": float(x) for i, x in enumerate(q)})
        for name in ("position", "velocity", "angular_velocity", "acceleration", "angular_acceleration",
                     ("point1", "force"), ("point1", "moment"), ("point2", "force"), ("point2", "moment")):
            port, var = name if isinstance(name, tuple) else ("seakeeping", name)
            scale = {"force": 1e5, "moment": 1e6}.get(var, 1.0)
            u.update({f"{port}.{var}[{i}]": float(x) for i, x in enumerate(rng.normal(scale=scale, size=3))})
        out = adapter.evaluate(u)
        vec = lambda d, name, n=3: np.array([d[f"{name}[{i}]"] for i in range(n)])
        crane = sum(vec(u, f"point{k}.force") @ vec(out, f"point{k}.velocity") + vec(u, f"point{k}.moment") @ vec(
            out, f"point{k}.angular_velocity") for k in (1, 2))
        fs = 1e3 if conv.get("force_unit") == "kN" else 1.0
        angle = math.pi / 180 if conv.get("angle_unit") == "deg" else 1.0
        force = vec(out, "manoeuvring.force", 2) * fs
        velocity = vec(u, "manoeuvring.velocity", 2)
        if conv.get("load_axes", "body") != conv.get("velocity_axes", "body"):
            raise AssertionError("the test pairs force and velocity in the same axes")
        manoeuvring = force @ velocity + out["manoeuvring.moment"] * fs * u["manoeuvring.yaw_rate"] * angle
        seakeeping = vec(out, "seakeeping.force") @ vec(u, "seakeeping.velocity") + vec(
            out, "seakeeping.moment") @ vec(u, "seakeeping.angular_velocity")
        worst = max(worst, abs(crane - manoeuvring - seakeeping) / max(1.0, abs(crane)))
    assert worst < 1e-11


def test_the_manoeuvring_seakeeping_pose_takes_each_dof_from_its_model():
    p = {"world": "ENU", "body": "FLU", "angle_unit": "deg", "origin[0]": 100.0, "origin[1]": 50.0}
    roll, pitch, yaw_s = math.radians(4.0), math.radians(-2.0), math.radians(3.0)
    u = {"manoeuvring.position[0]": 10.0, "manoeuvring.position[1]": 20.0, "manoeuvring.yaw": 30.0,
         "manoeuvring.yaw_rate": 0.0, "manoeuvring.yaw_acceleration": 0.0,
         **{f"manoeuvring.{n}[{i}]": 0.0 for n in ("velocity", "acceleration") for i in range(2)},
         **{f"seakeeping.{n}[{i}]": 0.0 for n in ("velocity", "angular_velocity", "acceleration",
                                                   "angular_acceleration", "position") for i in range(3)},
         "seakeeping.position[2]": 0.25,
         **{f"seakeeping.quaternion[{i}]": float(x) for i, x in enumerate(euler_to_quaternion(
             np.array([roll, pitch, yaw_s])))},
         **{f"point1.{n}[{i}]": 0.0 for n in ("force", "moment") for i in range(3)}}
    out = ManoeuvringSeakeeping(p).evaluate(u)
    # ENU (10 east, 20 north) + origin: north 120, east 60; heading 90 - 30 = 60 deg; z and roll/pitch from seakeeping
    assert [out[f"point1.position[{i}]"] for i in range(3)] == pytest.approx([120.0, 60.0, 0.25], abs=1e-12)
    angles = matrix_to_euler(quat_to_matrix(np.array([out[f"point1.quaternion[{i}]"] for i in range(4)])))
    assert angles == pytest.approx([roll, pitch, math.radians(60.0)], abs=1e-12)


# ---------------------------------------------------------------------- behind the slave interface

def test_adapter_slave_state_and_refusals():
    s = AdapterSlave("motion", "rigid_body", {"point1.lever[0]": 10.0})
    s.instantiate()
    s.enter_initialization()
    s.set_values({"point1.lever[0]": 10.0})
    s.exit_initialization()
    yaw = [s.variables[f"reference.quaternion[{i}]"].reference for i in range(4)]
    out = np.array([s.variables[f"point1.position[{i}]"].reference for i in range(3)])
    quarter = euler_to_quaternion(np.array([0.0, 0.0, math.pi / 2]))
    s.set_reals(np.array(yaw), quarter)
    assert s.get_reals(out) == pytest.approx([0.0, 10.0, 0.0], abs=1e-14)
    state = s.get_state()
    blob = s.serialize_state(state)
    s.set_reals(np.array(yaw), np.array([1.0, 0.0, 0.0, 0.0]))
    assert s.get_reals(out) == pytest.approx([10.0, 0.0, 0.0])
    s.set_state(s.deserialize_state(blob))
    assert s.get_reals(out) == pytest.approx([0.0, 10.0, 0.0], abs=1e-14)
    with pytest.raises(SlaveError, match="shapes the adapter's interface"):
        s.set_values({"attitude": "euler"})
    with pytest.raises(SlaveError, match="only be set before the run"):
        s.set_values({"point1.lever[0]": 5.0})
    s.set_reals(np.array(yaw), np.zeros(4))
    with pytest.raises(SlaveError, match=r"motion \(rigid_body adapter\): its attitude quaternion .* is not a "
                                         "rotation"):
        s.get_reals(out)


# ---------------------------------------------------------------------- in a run

MOTION = (("position", 3), ("quaternion", 4), ("velocity", 3), ("angular_velocity", 3), ("acceleration", 3),
          ("angular_acceleration", 3))


def test_a_ship_hardpoint_moved_by_the_adapter_is_the_ships_own(fmu_dir):
    """Ship.fmu's origin (hardpoint 1 at CO) through a rigid_body adapter with a lever equals Ship.fmu's
    own hardpoint 2 at that lever, in a regular wave, heading 52 deg: position to 1e-12 m, velocity and
    acceleration to rounding."""
    from orchestration import simulate
    from orchestration.system.model import Component, System

    lever = (-30.0, 5.0, -8.0)
    s = System("moved", start_time=0.0, stop_time=2.0, base_step=0.05)
    s.add_component(Component("ship", fmu_dir / "Ship.fmu", {
        "sea.spectrum": 3, "sea.amplitude": 1.0, "sea.period": 7.0, "sea.direction": 2.0, "initial.euler[2]": 0.9,
        **{f"hardpoint1.location[{i}]": 0.0 for i in range(3)}, **{f"hardpoint1.force[{i}]": 0.0 for i in range(3)},
        **{f"hardpoint2.location[{i}]": x for i, x in enumerate(lever)}}))
    s.add_component(Component("hull", None, {f"point1.lever[{i}]": x for i, x in enumerate(lever)},
                              adapter="rigid_body"))
    for w, n in MOTION:
        for i in range(n):
            s.connect(f"ship.hardpoint1.{w}[{i}]", f"hull.reference.{w}[{i}]")
    names = [f"{c}.{w}[{i}]" for c in ("hull.point1", "ship.hardpoint2") for w, n in MOTION for i in range(n)]
    r = simulate(s, 2.0, 0.05, variables=names)
    tolerance = {"position": 1e-12, "quaternion": 1e-14}
    for w, n in MOTION:
        for i in range(n):
            a, b = r[f"hull.point1.{w}[{i}]"], r[f"ship.hardpoint2.{w}[{i}]"]
            assert np.max(np.abs(a - b)) < tolerance.get(w, 1e-12), f"{w}[{i}]"
    assert np.ptp(r["ship.hardpoint2.position[2]"]) > 0.1


@pytest.mark.slow
def test_power_bonds_through_an_adapter_drive_ecco(fmu_dir):
    """A crane on Ship.fmu through a rigid_body adapter, with a power bond each side of the adapter
    (crane base - adapter point 1, adapter reference - ship hardpoint): ECCO controls the step from
    both bonds, and the adapter, which keeps the power exactly, adds no residual of its own."""
    from orchestration import simulate
    from orchestration.master.algorithms import make_algorithm
    from orchestration.system.model import Component, System

    s = System("bonded", start_time=0.0, stop_time=1.0, base_step=0.01)
    s.add_component(Component("ship", fmu_dir / "Ship.fmu", {"sea.spectrum": 0,
                                                             **{f"hardpoint1.location[{i}]": 0.0 for i in range(3)}}))
    s.add_component(Component("hull", None, {"point1.lever[0]": -30.0, "point1.lever[2]": -8.0}, adapter="rigid_body"))
    s.add_component(Component("crane", fmu_dir / "Crane.fmu", {"mechanism": "knuckle_boom",
                                                               "attachment2.force[2]": 98100.0}))
    for w, n in MOTION:
        for i in range(n):
            bond = "ship" if w in ("velocity", "angular_velocity") else None
            s.connect(f"ship.hardpoint1.{w}[{i}]", f"hull.reference.{w}[{i}]", power_bond=bond)
            s.connect(f"hull.point1.{w}[{i}]", f"crane.base.{w}[{i}]",
                      power_bond="crane" if w in ("velocity", "angular_velocity") else None)
    for w in ("force", "moment"):
        for i in range(3):
            s.connect(f"crane.base.{w}[{i}]", f"hull.point1.{w}[{i}]", power_bond="crane")
            s.connect(f"hull.reference.{w}[{i}]", f"ship.hardpoint1.{w}[{i}]", power_bond="ship")
    algorithm = make_algorithm("ecco", {"rtol": 1e-3, "atol": 1e-3, "step_size": 0.01, "min_step": 1e-4,
                                        "max_step": 0.05, "method": "gauss-seidel"})
    r = simulate(s, 1.0, 0.01, algorithm=algorithm, variables=["crane.base.position[2]"])
    assert sorted(algorithm.settings()["bonds"]) == ["crane", "ship"]
    assert r.time[-1] == pytest.approx(1.0) and np.all(np.isfinite(r["crane.base.position[2]"]))
    assert all(np.isfinite(v) for v in algorithm.energy_residual.values())


@pytest.mark.slow
def test_a_run_with_an_adapter_resumes_from_its_checkpoint(fmu_dir, tmp_path):
    """Ship.fmu -> rigid_body -> crane and back, written as an .ssd: run 2 s with checkpoints every
    0.5 s, resume from the one at 1 s, and the resumed second half equals the uninterrupted run
    bit for bit (the adapter's state, its inputs, travels in the checkpoint)."""
    import shutil as sh

    from orchestration.master.observers.results import load_results
    from orchestration.runs.run import RunSettings, resume_run, run
    from orchestration.system.ssp import write_ssp
    from tests.system.test_adapters import ship_and_adapters

    system = ship_and_adapters(fmu_dir)
    path = write_ssp(system, tmp_path / "adapted.ssd")
    names = ["crane.base.position[2]", "hull.reference.force[2]", "ship.hardpoint1.force[2]"]
    full = run(RunSettings(system=str(path), out=str(tmp_path / "full"), stop=2.0, step=0.05, variables=names,
                           checkpoint_every=0.5, keep_checkpoints=10))
    assert len(full.checkpoints) >= 3
    checkpoint = next(p for p in full.checkpoints if p.name.startswith("t=1_"))        # the one at 1 s
    sh.copytree(tmp_path / "full", tmp_path / "resumed")
    resumed = resume_run(tmp_path / "resumed" / "checkpoints" / checkpoint.name)
    a, b = load_results(tmp_path / "full"), load_results(tmp_path / "resumed")
    assert resumed.start_time == pytest.approx(1.0) and resumed.time == pytest.approx(2.0)
    for n in names:
        assert np.array_equal(a[n][-10:], b[n][-10:]), n
