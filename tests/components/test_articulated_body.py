"""ArticulatedBody (components/articulated_body.py) against Pinocchio, and its own invariants.

Pinocchio (PyPI ``pin``) is the reference: the same chains are built as pin.Model with
revolute-z / prismatic-z joints, fixed base or with the crane base as a free-flyer joint whose
acceleration is prescribed (pin.rnea / pin.crba on the free-flyer model). Checks:

* joint accelerations, fixed base (pin.aba) and moving base (free flyer), 100 random states each,
  relative 1e-9; with link wrenches (pin's fext);
* the base wrench against pin.rnea's free-flyer joint force, relative 1e-9;
* articulated inertia I_A against pin's ABA articulated inertia of the free-flyer joint (Yaba),
  and -base_wrench == I_A [a; alpha] + bias for random base accelerations, with the wrench from
  pin (independent of I_A), relative 1e-9;
* a base at rest in static equilibrium: base wrench = weight and its moment; gravity <-> base
  acceleration equivalence; finite-difference checks of point kinematics on a moving base;
* ABA <-> RNEA round trip; mass matrix against pin.crba; energies against pin;
* a passive 7-DOF chain under gravity, RK4 for 100 s: total energy within 1e-6 relative.
"""
from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest

from components.articulated_body import ArticulatedBody
from components.mechanism import (Attachment, JointControl, JointLimits, Link, Mechanism, dh_transform,
                                  load_mechanism, mechanism_to_dict, preset,
                                  preset_names, validate_mechanism)
from components.spatial import euler_zyx, rx, ry, rz

pin = pytest.importorskip("pinocchio")

N_STATES = 100
REL = 1e-9


# ------------------------------------------------------------------------------------------------
# helpers


def random_chain(seed: int, n: int = 7, prismatic: bool = True) -> Mechanism:
    """A random serial chain: random DH constants, joint types, masses, CG offsets and CG-frame
    orientations; inertias of random boxes (so they obey the triangle inequalities)."""
    rng = np.random.default_rng(seed)
    links = []
    for i in range(n):
        joint = "prismatic" if (prismatic and rng.random() < 0.3) else "revolute"
        m = float(rng.uniform(1.0, 50.0))
        lx, ly, lz = rng.uniform(0.1, 2.0, 3)
        inertia = m / 12.0 * np.diag([ly**2 + lz**2, lx**2 + lz**2, lx**2 + ly**2])
        links.append(Link(
            name=f"l{i}", joint=joint, a=float(rng.uniform(-1.5, 1.5)), alpha=float(rng.uniform(-math.pi, math.pi)),
            d=float(rng.uniform(-1.0, 1.0)), theta=float(rng.uniform(-math.pi, math.pi)), mass=m,
            cg=rng.uniform(-1.0, 1.0, 3), inertia=inertia, cg_orientation=rng.uniform(-math.pi, math.pi, 3),
        ))
    base = (rng.normal(size=3), rng.uniform(-math.pi, math.pi, 3))
    return Mechanism(f"random{seed}", links, base_offset=base,
                     attachments=[Attachment("tip", n - 1, rng.normal(size=3))])


MECHANISMS = {
    "sms_palfinger": lambda: preset("sms_palfinger"),
    "knuckle_boom": lambda: preset("knuckle_boom"),
    "random7": lambda: random_chain(11),
}


def pin_model(m: Mechanism, free_flyer: bool = False):
    """The same chain as a pin.Model. Joint i's frame is the joint-moved proximal frame J_i; the
    DH transforms are composed with pinocchio's own SE3 algebra from the raw DH constants:
    J_i = J_{i-1} C_{i-1} (Rot_z(theta) Rot_z(q) | Trans_z(d) Trans_z(q))."""
    model = pin.Model()
    parent = 0
    if free_flyer:
        parent = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "base")
    B = m.base_offset_matrix()
    prev = pin.SE3(B[:3, :3], B[:3, 3])
    rot = pin.utils.rotate
    for l in m.links:
        if l.joint == "revolute":
            place, joint = prev * pin.SE3(rot("z", l.theta), np.zeros(3)), pin.JointModelRZ()
        else:
            place, joint = prev * pin.SE3(np.eye(3), np.array([0.0, 0.0, l.d])), pin.JointModelPZ()
        parent = model.addJoint(parent, joint, place, l.name)
        R = euler_zyx(*l.cg_orientation)
        model.appendBodyToJoint(parent, pin.Inertia(l.mass, np.asarray(l.cg, float), R @ l.inertia @ R.T),
                                pin.SE3.Identity())
        tx = pin.SE3(np.eye(3), np.array([l.a, 0.0, 0.0])) * pin.SE3(rot("x", l.alpha), np.zeros(3))
        if l.joint == "revolute":
            prev = pin.SE3(np.eye(3), np.array([0.0, 0.0, l.d])) * tx
        else:
            prev = pin.SE3(rot("z", l.theta), np.zeros(3)) * tx
        # the distal DH frame F_i as a pinocchio frame, for link-wrench points
        model.addFrame(pin.Frame(f"F_{l.name}", parent, prev, pin.FrameType.OP_FRAME))
    return model


def random_rotation(rng) -> np.ndarray:
    return euler_zyx(*rng.uniform(-math.pi, math.pi, 3))


def random_state(rng, n: int, scale_tau: float):
    return rng.uniform(-2, 2, n), rng.uniform(-1, 1, n), rng.normal(size=n) * scale_tau


def random_base(rng):
    return (random_rotation(rng), rng.normal(size=3) * 10, rng.normal(size=3), rng.normal(size=3) * 0.3,
            rng.normal(size=3) * 2, rng.normal(size=3) * 0.3)


def tau_scale(m: Mechanism) -> float:
    return 9.81 * m.total_mass() * 2.0


def rel_err(x, ref) -> float:
    x, ref = np.asarray(x), np.asarray(ref)
    return float(np.abs(x - ref).max() / max(np.abs(ref).max(), 1e-300))


def free_flyer_inputs(R, p, v, w, a, alpha, q, qd):
    """Pinocchio free-flyer q, v and the prescribed base part of the acceleration. Its velocity is
    the body twist [R^T v; R^T w]; its acceleration is the derivative of that twist,
    [R^T (a - w x v); R^T alpha] (the spatial acceleration, not the classical one)."""
    qf = np.concatenate((p, pin.Quaternion(R).coeffs(), q))
    vf = np.concatenate((R.T @ v, R.T @ w, qd))
    ab = np.concatenate((R.T @ (a - np.cross(w, v)), R.T @ alpha))
    return qf, vf, ab


def pin_forces(model, data, qf, wrenches, n_base_joints: int):
    """pin fext (local joint frames) for our link wrenches (link, point in F_link, force, moment)."""
    pin.forwardKinematics(model, data, qf)
    pin.updateFramePlacements(model, data)
    fext = [pin.Force.Zero() for _ in range(model.njoints)]
    for (i, point, force, moment) in wrenches:
        j = n_base_joints + 1 + i
        oMf = data.oMf[model.getFrameId(f"F_{model.names[j]}")]
        oMi = data.oMi[j]
        pw = oMf.act(np.asarray(point, float))                 # world point
        r = oMi.actInv(pw)                                     # in the joint frame
        f = oMi.rotation.T @ force
        mo = oMi.rotation.T @ moment + np.cross(r, f)
        fext[j] += pin.Force(f, mo)
    return fext


def random_wrenches(rng, n: int, scale: float):
    return [(int(rng.integers(0, n)), rng.normal(size=3), rng.normal(size=3) * scale, rng.normal(size=3) * scale)
            for _ in range(3)]


# ------------------------------------------------------------------------------------------------
# mechanism data


def test_presets_load_and_validate():
    names = preset_names()
    for name in ("sms_revolute", "sms_prismatic", "sms_double_pendulum", "sms_centripetal", "sms_palfinger",
                 "knuckle_boom"):
        assert name in names
    for name in names:
        m = preset(name)
        assert validate_mechanism(m) == [], name
        ArticulatedBody(m)
    assert preset("sms_palfinger").n == 7 and preset("knuckle_boom").n == 7
    kb = preset("knuckle_boom")
    assert 100e3 < kb.total_mass() < 200e3
    # the SMS tables are entered in degrees as printed
    pal = preset("sms_palfinger")
    assert pal.links[0].alpha == pytest.approx(math.pi / 2)
    assert pal.links[2].initial_position == pytest.approx(math.pi / 2)
    assert pal.links[1].limits.lower == pytest.approx(-math.pi / 4)
    assert pal.links[1].control.mode == "passive" and pal.links[0].control.mode == "position"


def test_validate_reports_problems_and_never_raises():
    m = random_chain(1, n=3)
    m.links[0].mass = -1.0
    m.links[1].joint = "spherical"
    m.links[2].inertia = np.diag([1.0, 1.0, 3.0])           # violates I1 + I2 >= I3
    m.links[0].limits = JointLimits(1.0, -1.0, 1e6, 1e3)
    m.links[1].control = JointControl(mode="bogus", kp=-1.0)
    m.links[2].cg = [0.0, float("nan"), 0.0]
    m.attachments.append(Attachment("bad", 7, [0, 0, 0]))
    problems = validate_mechanism(m)
    fields = {f for f, _, _ in problems}
    for f in ("links[0].mass", "links[1].joint", "links[2].inertia", "links[0].limits", "links[1].control.mode",
              "links[1].control.kp", "links[2].cg", "attachments[1].link"):
        assert f in fields, (f, problems)
    assert all(isinstance(r, str) for _, _, r in problems)
    with pytest.raises(ValueError):
        ArticulatedBody(m)
    # garbage never raises
    assert validate_mechanism(None)
    assert validate_mechanism(Mechanism("x", []))
    bad = random_chain(2, n=2)
    bad.links[0].inertia = "heavy"
    bad.base_offset = np.zeros((4, 4))
    fields = {f for f, _, _ in validate_mechanism(bad)}
    assert {"links[0].inertia", "base_offset"} <= fields


def test_json_round_trip_and_yaml(tmp_path):
    m = random_chain(5)
    for unit in ("rad", "deg"):
        d = mechanism_to_dict(m, angle_unit=unit)
        path = tmp_path / f"c_{unit}.json"
        path.write_text(json.dumps(d))
        m2 = load_mechanism(path)
        assert validate_mechanism(m2) == []
        a, b = ArticulatedBody(m), ArticulatedBody(m2)
        rng = np.random.default_rng(0)
        q, qd, tau = random_state(rng, m.n, 100.0)
        assert rel_err(b.forward_dynamics(q, qd, tau).qdd, a.forward_dynamics(q, qd, tau).qdd) < 1e-12
    yaml = pytest.importorskip("yaml")
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(mechanism_to_dict(m, "deg")))
    assert load_mechanism(path).links[3].alpha == pytest.approx(m.links[3].alpha)


def test_dh_geometry_matches_paul_convention():
    """Distal frames F_i = B * base_offset * prod A_i with A = Trans_z(d) Rot_z(theta) Trans_x(a) Rot_x(alpha),
    the joint variable added to theta or d (SMS eqs. 28-32)."""
    rng = np.random.default_rng(3)
    for m in (random_chain(7), preset("knuckle_boom"), preset("sms_palfinger")):
        ab = ArticulatedBody(m)
        q = rng.uniform(-2, 2, m.n)
        R, p = random_rotation(rng), rng.normal(size=3)
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = R, p
        T = T @ m.base_offset_matrix()
        for i, (l, (Ri, pi)) in enumerate(zip(m.links, ab.link_poses(q, R, p))):
            rev = l.joint == "revolute"
            T = T @ dh_transform(l.a, l.alpha, l.d + (0 if rev else q[i]), l.theta + (q[i] if rev else 0))
            assert np.allclose(Ri, T[:3, :3], atol=1e-12) and np.allclose(pi, T[:3, 3], atol=1e-10)


# ------------------------------------------------------------------------------------------------
# against pinocchio


@pytest.mark.parametrize("name", list(MECHANISMS))
def test_fixed_base_aba_matches_pinocchio(name, validation):
    m = MECHANISMS[name]()
    ab = ArticulatedBody(m)
    model = pin_model(m)
    data = model.createData()
    g = np.array([0.0, 0.0, 9.81])
    model.gravity = pin.Motion(g, np.zeros(3))
    rng = np.random.default_rng(42)
    worst = 0.0
    for _ in range(N_STATES):
        q, qd, tau = random_state(rng, m.n, tau_scale(m))
        r = ab.forward_dynamics(q, qd, tau, gravity=g)
        worst = max(worst, rel_err(r.qdd, pin.aba(model, data, q, qd, tau)))
        # energies and the mass matrix
        assert r.kinetic_energy == pytest.approx(pin.computeKineticEnergy(model, data, q, qd), rel=1e-12, abs=1e-9)
        assert r.potential_energy() == pytest.approx(pin.computePotentialEnergy(model, data, q), rel=1e-12, abs=1e-6)
    Hp = pin.crba(model, data, q)
    Hp = np.triu(Hp) + np.triu(Hp, 1).T
    assert rel_err(ab.mass_matrix(q), Hp) < 1e-12
    print(f"\n{name}: fixed-base qdd worst relative error vs pin.aba {worst:.2e}")
    validation.record(case=f"{name}: fixed-base joint accelerations vs Pinocchio ({N_STATES} random states)",
                      reference="pin.aba", ours=f"worst {worst:.1e}", error=worst, tolerance=REL,
                      source="Pinocchio (pin)")
    assert worst < REL


@pytest.mark.parametrize("name", list(MECHANISMS))
def test_moving_base_matches_pinocchio_free_flyer(name, validation):
    """Base as a free-flyer joint with prescribed acceleration: qdd from pin.crba/pin.rnea
    (M_jj qdd = tau - rnea(q, v, [a_base; 0])_j), base wrench = -(pin.rnea free-flyer force),
    with random link wrenches (pin fext), and I_A against pin's articulated inertia Yaba."""
    m = MECHANISMS[name]()
    ab = ArticulatedBody(m)
    model = pin_model(m, free_flyer=True)
    data = model.createData()
    g = np.array([0.0, 0.0, 9.81])
    model.gravity = pin.Motion(g, np.zeros(3))
    rng = np.random.default_rng(7)
    n = m.n
    e_qdd = e_w = e_ia = e_bias = 0.0
    for k in range(N_STATES):
        q, qd, tau = random_state(rng, n, tau_scale(m))
        R, p, v, w, a, alpha = random_base(rng)
        wrenches = random_wrenches(rng, n, tau_scale(m)) if k % 2 else None
        r = ab.forward_dynamics(q, qd, tau, R, p, v, w, a, alpha, gravity=g, link_wrenches=wrenches)
        qf, vf, a_b = free_flyer_inputs(R, p, v, w, a, alpha, q, qd)
        fext = pin_forces(model, data, qf, wrenches, 1) if wrenches else None
        M = pin.crba(model, data, qf)
        M = np.triu(M) + np.triu(M, 1).T
        args = (model, data, qf, vf, np.concatenate((a_b, np.zeros(n))))
        b = pin.rnea(*args, fext) if fext else pin.rnea(*args)
        qdd_ref = np.linalg.solve(M[6:, 6:], tau - b[6:])
        e_qdd = max(e_qdd, rel_err(r.qdd, qdd_ref))
        args = (model, data, qf, vf, np.concatenate((a_b, qdd_ref)))
        tf = pin.rnea(*args, fext) if fext else pin.rnea(*args)
        wrench_ref = -np.concatenate((R @ tf[:3], R @ tf[3:6]))    # base joint force on the crane, negated
        e_w = max(e_w, rel_err(r.base_wrench, wrench_ref))
        # I_A: pin's ABA articulated inertia of the free-flyer joint (massless base body), local [lin; ang]
        pin.aba(model, data, qf, vf, np.concatenate((np.zeros(6), tau)))
        Yaba = data.Yaba[1]
        Rb = np.kron(np.eye(2), R)
        e_ia = max(e_ia, rel_err(r.articulated_inertia, Rb @ Yaba @ Rb.T))
        # -base_wrench == I_A [a; alpha] + bias for other base accelerations (wrench from pin)
        a2, al2 = rng.normal(size=3) * 3, rng.normal(size=3)
        qf2, vf2, a_b2 = free_flyer_inputs(R, p, v, w, a2, al2, q, qd)
        args = (model, data, qf2, vf2, np.concatenate((a_b2, np.zeros(n))))
        b2 = pin.rnea(*args, fext) if fext else pin.rnea(*args)
        qdd2 = np.linalg.solve(M[6:, 6:], tau - b2[6:])
        args = (model, data, qf2, vf2, np.concatenate((a_b2, qdd2)))
        tf2 = pin.rnea(*args, fext) if fext else pin.rnea(*args)
        wrench2 = -np.concatenate((R @ tf2[:3], R @ tf2[3:6]))
        pred = r.articulated_inertia @ np.concatenate((a2, al2)) + r.bias
        e_bias = max(e_bias, rel_err(-wrench2, pred))
    print(f"\n{name}: moving base, worst relative errors vs pinocchio: qdd {e_qdd:.2e}, base wrench {e_w:.2e}, "
          f"I_A {e_ia:.2e}, I_A a + p_A {e_bias:.2e}")
    for what, ref, err in (("joint accelerations", "pin.crba/pin.rnea", e_qdd), ("base wrench", "pin.rnea", e_w),
                           ("articulated inertia I_A", "pin Yaba", e_ia)):
        validation.record(case=f"{name}: moving base, {what} vs Pinocchio ({N_STATES} random states)", reference=ref,
                          ours=f"worst {err:.1e}", error=err, tolerance=REL, source="Pinocchio (pin), free flyer")
    assert e_qdd < REL and e_w < REL and e_ia < REL and e_bias < REL
    IA = r.articulated_inertia
    assert np.allclose(IA, IA.T, rtol=0, atol=1e-9 * np.abs(IA).max())
    # positive semi-definite: with tau held fixed, the first joint's axis carries no inertia
    # (I^a_0 S_0 = 0), so I_A is singular about the slew axis through the base
    ev = np.linalg.eigvalsh(IA)
    assert ev.min() > -1e-12 * ev.max()


# ------------------------------------------------------------------------------------------------
# invariants


@pytest.mark.parametrize("name", list(MECHANISMS))
def test_aba_rnea_round_trip(name):
    m = MECHANISMS[name]()
    ab = ArticulatedBody(m)
    rng = np.random.default_rng(3)
    for _ in range(20):
        q, qd, tau = random_state(rng, m.n, tau_scale(m))
        base = random_base(rng)
        wr = random_wrenches(rng, m.n, tau_scale(m))
        r = ab.forward_dynamics(q, qd, tau, *base, link_wrenches=wr)
        inv = ab.inverse_dynamics(q, qd, r.qdd, *base, link_wrenches=wr)
        assert rel_err(inv.tau, tau) < 1e-10
        assert rel_err(inv.base_wrench, r.base_wrench) < 1e-10


@pytest.mark.parametrize("name", list(MECHANISMS))
def test_static_equilibrium_base_wrench_is_the_weight(name):
    """Base at rest (any pose), tau = gravity compensation from inverse_dynamics: qdd = 0 and the
    crane pushes on the base with its weight, F = M g, M_O = sum m_i (c_i - p_base) x g."""
    m = MECHANISMS[name]()
    ab = ArticulatedBody(m)
    rng = np.random.default_rng(5)
    g = np.array([0.0, 0.0, 9.81])
    for _ in range(10):
        q = rng.uniform(-2, 2, m.n)
        R, p = random_rotation(rng), rng.normal(size=3) * 10
        tau = ab.inverse_dynamics(q, np.zeros(m.n), np.zeros(m.n), base_R=R, base_p=p, gravity=g).tau
        r = ab.forward_dynamics(q, np.zeros(m.n), tau, base_R=R, base_p=p, gravity=g)
        assert np.abs(r.qdd).max() < 1e-9
        moment = np.zeros(3)
        for T, l in zip(r.joint_frames, m.links):
            c = T[:3, :3] @ l.cg + T[:3, 3]
            moment += np.cross(c - p, l.mass * g)
        expected = np.concatenate((m.total_mass() * g, moment))
        assert rel_err(r.base_wrench, expected) < 1e-10
        assert r.kinetic_energy == 0.0


def test_gravity_is_equivalent_to_base_acceleration():
    m = MECHANISMS["random7"]()
    ab = ArticulatedBody(m)
    rng = np.random.default_rng(9)
    g = np.array([0.3, -0.2, 9.81])
    for _ in range(10):
        q, qd, tau = random_state(rng, m.n, 500.0)
        R, p, v, w, a, alpha = random_base(rng)
        r1 = ab.forward_dynamics(q, qd, tau, R, p, v, w, a, alpha, gravity=g)
        r2 = ab.forward_dynamics(q, qd, tau, R, p, v, w, a - g, alpha, gravity=np.zeros(3))
        assert rel_err(r2.qdd, r1.qdd) < 1e-11
        assert rel_err(r2.base_wrench, r1.base_wrench) < 1e-11
        assert rel_err(r2.articulated_inertia, r1.articulated_inertia) < 1e-14


def _rotation_about(axis: np.ndarray, angle: float) -> np.ndarray:
    k = axis / np.linalg.norm(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


def test_point_kinematics_by_finite_differences():
    """A moving base (fixed rotation axis u: R(t) = Rot(u, th(t)) R0, w = u th', alpha = u th'') and
    q(t) = q0 + qd0 t + qdd t^2/2 with qdd from the ABA: central differences of point position and
    velocity reproduce point_kinematics' velocity and acceleration."""
    m = preset("knuckle_boom")
    ab = ArticulatedBody(m)
    rng = np.random.default_rng(2)
    q0, qd0, tau = random_state(rng, m.n, 1e5)
    R0 = random_rotation(rng)
    u = rng.normal(size=3)
    u /= np.linalg.norm(u)
    th1, th2 = 0.3, 0.5
    p0, v0, a0 = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
    point = [0.3, -0.2, 0.5]
    link = 6

    def at(t, qdd):
        R = _rotation_about(u, th1 * t + 0.5 * th2 * t * t) @ R0
        base = (R, p0 + v0 * t + 0.5 * a0 * t * t, v0 + a0 * t, u * (th1 + th2 * t), a0, u * th2)
        q = q0 + qd0 * t + 0.5 * qdd * t * t
        return ab.forward_dynamics(q, qd0 + qdd * t, tau, *base)

    r0 = at(0.0, np.zeros(m.n))
    qdd = r0.qdd
    x, v, a = at(0.0, qdd).point_kinematics(link, point)
    h = 1e-5       # central differences, O(h^2) truncation ~1e-9 here
    xp, vp, _ = at(h, qdd).point_kinematics(link, point)
    xm, vm, _ = at(-h, qdd).point_kinematics(link, point)
    assert rel_err((xp - xm) / (2 * h), v) < 1e-7
    assert rel_err((vp - vm) / (2 * h), a) < 1e-7
    # the tip attachment equals the distal frame origin of the last link
    Rn, pn = r0.link_poses[-1]
    assert np.allclose(r0.point_kinematics(6, m.attachment("tool_tip").point)[0], pn)


def test_joint_limit_torques_are_restoring():
    """SMS eqs. 71-72 with the upper-stop sign corrected (digest erratum 4)."""
    m = preset("sms_palfinger")
    ab = ArticulatedBody(m)
    lo, hi = -math.pi / 4, math.pi / 2
    q = np.zeros(7)
    qd = np.zeros(7)
    q[1] = lo - 0.01
    assert ab.joint_limit_torques(q, qd)[1] == pytest.approx(1e7 * 0.01)          # pushes up
    q[1] = hi + 0.01
    assert ab.joint_limit_torques(q, qd)[1] == pytest.approx(-1e7 * 0.01)         # pushes down
    qd[1] = 0.1
    assert ab.joint_limit_torques(q, qd)[1] == pytest.approx(-1e7 * 0.01 - 1e7 * 0.1)
    q[1] = 0.0
    assert np.all(ab.joint_limit_torques(q, qd) == 0.0)


def passive_chain() -> Mechanism:
    """7 revolute links of 1.5 m, 4 kg each, random twist angles: a chaotic spatial pendulum."""
    rng = np.random.default_rng(3)
    L = 1.5
    links = [Link(name=f"l{i}", joint="revolute", a=L, alpha=float(rng.choice([0.0, math.pi / 2, -math.pi / 2])),
                  d=float(rng.uniform(0, 0.2)), theta=0.0, mass=4.0, cg=np.array([-L / 2, 0.0, 0.0]),
                  inertia=np.diag([0.02, 4 * L * L / 12, 4 * L * L / 12]),
                  initial_position=float(rng.uniform(-1, 1)))
             for i in range(7)]
    return Mechanism("passive7", links)


@pytest.mark.slow
def test_passive_chain_conserves_energy_rk4(validation):
    """tau = 0, no limits, fixed base, gravity 9.81: RK4 with dt = 4 ms over 100 s keeps the total
    energy within 1e-6 of the largest kinetic energy reached."""
    m = passive_chain()
    ab = ArticulatedBody(m)
    q, qd = m.initial_state()
    tau = np.zeros(m.n)
    fd = ab.forward_dynamics

    def energy(q, qd):
        return ab.kinetic_energy(q, qd) + ab.potential_energy(q)

    E0 = energy(q, qd)
    dt, T = 0.004, 100.0
    dev = ke_max = 0.0
    t0 = time.perf_counter()
    for s in range(int(round(T / dt))):
        k1 = fd(q, qd, tau).qdd
        q2, v2 = q + 0.5 * dt * qd, qd + 0.5 * dt * k1
        k2 = fd(q2, v2, tau).qdd
        q3, v3 = q + 0.5 * dt * v2, qd + 0.5 * dt * k2
        k3 = fd(q3, v3, tau).qdd
        q4, v4 = q + dt * v3, qd + dt * k3
        k4 = fd(q4, v4, tau).qdd
        q = q + dt / 6.0 * (qd + 2 * v2 + 2 * v3 + v4)
        qd = qd + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        if s % 50 == 0:
            dev = max(dev, abs(energy(q, qd) - E0))
            ke_max = max(ke_max, ab.kinetic_energy(q, qd))
    wall = time.perf_counter() - t0
    print(f"\npassive 7-DOF chain, RK4 dt = {dt} s, 100 s: |E - E0|max / KE_max = {dev / ke_max:.2e} "
          f"(KE_max {ke_max:.1f} J), wall time {wall:.1f} s")
    validation.record(case="passive 7-DOF chain under gravity, RK4 100 s: total energy conserved", reference="E0",
                      ours=f"max |E - E0| / KE_max {dev / ke_max:.1e}", error=dev / ke_max, tolerance=1e-6,
                      source="analytic (conservative system)")
    assert dev / ke_max < 1e-6


def test_spatial_algebra_identities():
    """components/spatial.py: Plucker transforms, cross products and mcI against their definitions
    (RBDA Ch. 2) and pinocchio's SE3 action / inertia matrix (pin orders [linear; angular])."""
    from components.spatial import (crf, crm, force_transform, mcI, plux, plux_inv, rotx, roty, rotz,
                                    swap_halves, xlt)
    rng = np.random.default_rng(4)
    th = 0.7
    assert np.allclose(rotx(th), plux(rx(th).T, np.zeros(3)))
    assert np.allclose(roty(th), plux(ry(th).T, np.zeros(3)))
    assert np.allclose(rotz(th), plux(rz(th).T, np.zeros(3)))
    R, r = random_rotation(rng), rng.normal(size=3)
    X = plux(R.T, r)
    assert np.allclose(X, rotz(0.0) @ plux(R.T, np.zeros(3)) @ xlt(r))
    assert np.allclose(plux_inv(X) @ X, np.eye(6))
    assert np.allclose(force_transform(X), np.linalg.inv(X).T)
    # X maps [w; v at A's origin] (A coords) to B coords: pinocchio's SE3(R, r).actInv on [v; w]
    m_ = rng.normal(size=6)
    M = pin.SE3(R, r)
    ref = M.actInv(pin.Motion(m_[3:], m_[:3]))
    assert np.allclose(X @ m_, np.concatenate((ref.angular, ref.linear)))
    v, u = rng.normal(size=6), rng.normal(size=6)
    assert np.allclose(crf(v), -crm(v).T)
    assert np.allclose(crm(v) @ u, -crm(u) @ v)
    mass, c, Ic = 3.0, rng.normal(size=3), np.diag([1.0, 2.0, 2.5])
    assert np.allclose(swap_halves(mcI(mass, c, Ic)), pin.Inertia(mass, c, Ic).matrix())
    assert np.allclose(swap_halves(swap_halves(v)), v)
