"""The heave-roll-pitch platform (components/platform.py; de Zeeuw's thesis §4-1 to §4-3,
ship_crane_digest.md §2.4), its controllers (components/platform_control.py, components/nmpc.py) and the
box barge (components/box_barge.py)."""
from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from components.box_barge import box_barge
from components.nmpc import NMPC, MPCSettings, ShipPlatformModel, euler_matrix, platform_hrp
from components.platform import (PROBLEMS, Cylinders, Platform, PlatformError, SarrusGeometry, forward_kinematics,
                                 inverse_kinematics, leg_jacobian, leg_lengths, platform_inertia, platform_mechanism,
                                 rotation)
from components.platform_control import THESIS_GAINS, QuasiStaticPID
from components.articulated_body import ArticulatedBody

VALIDATION_COMPONENT = "motion compensation"
GEO = SarrusGeometry()
DEG = math.pi / 180


# ---------------------------------------------------------------------- inertia (RBinertias.m)

def test_platform_inertia_per_unit_mass(validation):
    """Digest §2.4 [derived] from RBinertias.m: CoG 62.58 m above the platform origin; about the origin
    I_xx = 5675.4, I_yy = 5757.7, I_zz = 99.5 m^2 per kg, coupling +-62.58 m; roll radius of gyration
    75.3 m about the base, 41.9 m about the CoG (to the printed digits)."""
    p = platform_inertia(1.0)
    Io = p.about_origin()
    for what, ref, ours, tol in (("CoG height", -62.58, p.cg[2], 0.005), ("I_xx / m", 5675.4, Io[0, 0], 0.05),
                                 ("I_yy / m", 5757.7, Io[1, 1], 0.05), ("I_zz / m", 99.5, Io[2, 2], 0.05),
                                 ("k_roll about the base", 75.3, math.sqrt(Io[0, 0]), 0.05),
                                 ("k_roll about the CoG", 41.9, math.sqrt(p.inertia[0, 0]), 0.05)):
        validation.record(case=f"S2 RBinertias: platform {what} per unit mass", reference=ref, ours=ours,
                          tolerance=tol, tol_kind="abs", unit="m or m2", source="ship_crane_digest.md 2.4 [derived]")
        assert abs(ours - ref) <= tol, (what, ours, ref)
    assert p.cg[:2] == pytest.approx([0.0, 0.0])


# ---------------------------------------------------------------------- kinematics

def test_neutral_pose_and_leg_lengths():
    """Our geometry (docs/motion_platform.md): at the thesis' start pose, 8 m above the deck, the
    legs are the 6 m of setleg.m and the knees 3 m inboard, 4 m up."""
    st = inverse_kinematics([-8.0, 0.0, 0.0], GEO)
    np.testing.assert_allclose(st.length[0], 6.0, atol=1e-12)
    assert st.problem[0] == 0
    np.testing.assert_allclose(st.knee[0, 0], [4.0, 0.0, -4.0], atol=1e-12)


@pytest.mark.parametrize("x, problem", [([0.0, 0.0, 0.0], 1), ([-10.2, 0.0, 0.0], 2), ([-8.0, 0.0, 0.3], 2),
                                        ([0.1, 0.0, 0.0], 1), ([-8.0, 0.0, 0.0], 0)])
def test_inverse_kinematics_problems(x, problem):
    st = inverse_kinematics(x, GEO)
    assert st.problem[0] == problem, PROBLEMS[st.problem[0]]
    if problem:
        with pytest.raises(PlatformError, match=PROBLEMS[problem][:20]):
            leg_lengths(np.array(x), GEO)


def test_stroke_limits_are_errors():
    geo = SarrusGeometry(stroke=(5.0, 6.5))
    with pytest.raises(PlatformError, match="cylinder 1 .* beyond its stroke"):
        leg_lengths(np.array([-9.5, 0.0, 0.0]), geo)


def test_leg_jacobian_against_finite_differences_of_the_kinematics():
    rng = np.random.default_rng(2)
    for _ in range(5):
        x = np.array([-8.0, 0.0, 0.0]) + rng.uniform(-1, 1, 3) * [0.8, 0.1, 0.1]
        J = leg_jacobian(x, GEO)
        h = 1e-4
        for j in range(3):
            e = np.eye(3)[j] * h
            fd = (inverse_kinematics(x + e, GEO).length[0] - inverse_kinematics(x - e, GEO).length[0]) / (2 * h)
            np.testing.assert_allclose(J[:, j], fd, rtol=1e-6, atol=1e-8)
    # batched = one by one
    xs = np.array([[-8.0, 0.01, -0.02], [-7.5, 0.05, 0.0]])
    np.testing.assert_allclose(leg_jacobian(xs, GEO), [leg_jacobian(x, GEO) for x in xs], rtol=1e-12)
    np.testing.assert_allclose(leg_jacobian(xs, GEO, order=4), [leg_jacobian(x, GEO, order=4) for x in xs],
                               rtol=1e-12)


def test_the_plants_leg_jacobian_is_smooth_in_the_pose():
    """The five-point Jacobian (the plant's) agrees with the three-point one to its round-off and does
    not jump as the pose moves by 1e-13: times MN of leg force, the three-point one's 1e-9 jumps are
    mN m of deck moment that no step size removes (the feedthrough test reads them as a response)."""
    x = np.array([-8.0, 0.01, 0.02])
    moved = [x + k * np.array([1e-13, 0.0, 1e-13]) for k in range(1, 6)]
    J4 = leg_jacobian(x, GEO, order=4)
    np.testing.assert_allclose(J4, leg_jacobian(x, GEO), atol=2e-9)
    assert max(np.abs(leg_jacobian(m, GEO, order=4) - J4).max() for m in moved) < 1e-11


def test_forward_kinematics_thesis_example(validation):
    """Thesis code example (digest §2.4): from the bad guess [-1, 0, 0] to x_actual = [-0.31, 3 deg, 1 deg]
    within at most 4 Newton-Raphson iterations to ||d ell|| <= 1e-2 m, typically 1 to 3. Our geometry has
    the platform 8 m higher (the thesis' platformdata.mat is not given): the same offsets from -8 m."""
    actual = np.array([-8.31, 3 * DEG, 1 * DEG])
    x, iterations = forward_kinematics(leg_lengths(actual, GEO), GEO, np.array([-9.0, 0.0, 0.0]))
    validation.record(case="S2 forward kinematics: NR iterations from the bad guess (<= 4)", reference=4,
                      ours=iterations, error=max(0, iterations - 4), tolerance=0, tol_kind="abs", unit="iterations",
                      source="ship_crane_digest.md 2.4 (funKforw.m)")
    assert 1 <= iterations <= 4
    assert np.linalg.norm(inverse_kinematics(x, GEO).length[0] - leg_lengths(actual, GEO)) <= 1e-2
    tight, it = forward_kinematics(leg_lengths(actual, GEO), GEO, np.array([-9.0, 0.0, 0.0]), max_iter=10, tol=1e-10)
    np.testing.assert_allclose(tight, actual, atol=1e-9)
    with pytest.raises(PlatformError, match="did not converge"):
        forward_kinematics(leg_lengths(actual, GEO), GEO, np.array([-9.0, 0.0, 0.0]), max_iter=1, tol=1e-12)


def test_mechanism_chain_is_the_platform_pose():
    """The DH chain of platform_mechanism puts its last link at c = [0, 0, z], R_BP = R_X(phi) R_Y(theta)."""
    mech = platform_mechanism(platform_inertia(1e6))
    body = ArticulatedBody(mech)
    C = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    for x in ([-8.0, 0.1, -0.2], [-7.0, -0.3, 0.25], [-9.0, 0.0, 0.0]):
        T = body.joint_frames(np.array(x))[2]
        np.testing.assert_allclose(T[:3, 3], [0.0, 0.0, x[0]], atol=1e-12)
        np.testing.assert_allclose(T[:3, :3] @ C.T, rotation(x[1], x[2]), atol=1e-12)


# ---------------------------------------------------------------------- dynamics

@functools.lru_cache(maxsize=None)
def _barge_model(mass=1e6):
    v = box_barge(100, 30, 4, 5.95, omega=np.linspace(0.05, 4.0, 40), headings=np.radians(np.arange(0, 360, 30)))
    A_inf = np.diag([v.added_mass[j, j, -1] for j in range(6)])
    return ShipPlatformModel(v.MRB + A_inf, v.MRB, v.restoring, np.array([0.0, 0.0, -4.0]), platform_inertia(mass),
                             GEO), v


def test_prediction_model_against_the_articulated_body():
    """The NMPC's Kane model and the plant's ABA (two independent formulations) give the same platform
    accelerations for the same ship motion and leg forces (the plant's two 1 kg intermediate links
    aside: 1e-4 relative)."""
    model, _ = _barge_model()
    rng = np.random.default_rng(4)
    plat = Platform(GEO, model.platform, Cylinders())
    for _ in range(4):
        s = np.zeros(18)
        s[:3], s[3:6], s[6:12] = rng.standard_normal(3), 0.05 * rng.standard_normal(3), 0.2 * rng.standard_normal(6)
        s[12:15] = [-8.0, 0.0, 0.0] + np.array([0.3, 0.03, 0.03]) * rng.uniform(-1, 1, 3)
        s[15:18] = 0.2 * rng.standard_normal(3)
        f = 3.6e6 + 1e6 * rng.standard_normal(3)
        ds = model.derivative(s[None], f[None])[0]
        R = euler_matrix(s[None, 3:6])[0]
        v, w, vd, wd, r = s[6:9], s[9:12], ds[6:9], ds[9:12], model.hardpoint
        res = plat.body.forward_dynamics(s[12:15], s[15:18], leg_jacobian(s[12:15], GEO).T @ f, R, s[:3] + R @ r,
                                         R @ (v + np.cross(w, r)), R @ w,
                                         R @ (vd + np.cross(wd, r) + np.cross(w, v + np.cross(w, r))), R @ wd,
                                         gravity=np.array([0.0, 0.0, 9.81]))
        scale = np.abs(ds[15:18]).max() + 1e-3
        np.testing.assert_allclose(ds[15:18], res.qdd, atol=1e-4 * scale)


def test_static_hold_in_calm_water():
    """The platform held by its static leg forces on a still deck stays where it is."""
    plat = Platform(GEO, platform_inertia(1e6), Cylinders())
    res = plat.body.forward_dynamics(plat.q, plat.qd, np.zeros(3), gravity=plat.gravity)
    h = -plat.body.mass_matrix(plat.q) @ res.qdd
    f = np.linalg.solve(leg_jacobian(plat.q, GEO, order=4).T, h)       # the plant's Jacobian
    np.testing.assert_allclose(f, 9.81e6 / 3 / 0.9, rtol=1e-5)    # 1000 t (+ 2 kg of the chain) on three legs at 0.9
    plat.set_command(f)
    for _ in range(20):
        plat.step(0.05, 0.05)
    np.testing.assert_allclose(plat.q, [-8.0, 0.0, 0.0], atol=1e-9)
    assert np.abs(plat.qd).max() < 1e-9


def test_cylinder_force_limits():
    c = Cylinders(-1e6, 5e6)
    f, sat = c.force(np.array([-2e6, 1e6, 9e6]))
    np.testing.assert_allclose(f, [-1e6, 1e6, 5e6])
    assert sat.tolist() == [True, False, True]


# ---------------------------------------------------------------------- controllers

def test_quasi_static_pid_gains_and_setpoints():
    pid = QuasiStaticPID(GEO)
    assert {g: getattr(pid, g) for g in THESIS_GAINS} == THESIS_GAINS
    # a level ship at rest: the legs of the set point are those of the relative pose
    ell = pid.leg_setpoints(0.0, 0.0, 0.0, (-8.0, 0.0, 0.0))
    np.testing.assert_allclose(ell, 6.0, atol=1e-12)
    # the ship heaves up 0.5 m and rolls 2 deg: the platform must go 0.5 m down relative and roll back
    ell = pid.leg_setpoints(-0.5, 2 * DEG, 0.0, (-8.0, 0.0, 0.0))
    np.testing.assert_allclose(ell, inverse_kinematics([-7.5 / math.cos(2 * DEG), -2 * DEG, 0.0], GEO).length[0])
    # mean and differential parts
    pid.precharge(np.array([3e6, 4e6, 5e6]))
    f = pid.command(0.0, 0.0, 0.0, (-8.0, 0.0, 0.0), np.array([6.0, 6.0, 6.0]), 0.02)
    np.testing.assert_allclose(f, [3e6, 4e6, 5e6])
    e = np.array([0.01, 0.0, -0.01])
    f = pid.forces(e, np.zeros(3), np.zeros(3))
    np.testing.assert_allclose(f, 200e6 * e)
    f = pid.forces(np.full(3, 0.01), np.zeros(3), np.zeros(3))
    np.testing.assert_allclose(f, 8e6 * 0.01)


def test_nmpc_at_equilibrium_holds_and_rejects_a_push():
    """At rest at its equilibrium the NMPC keeps the static forces; with the ship given a roll rate it
    answers within the force limits, its cost falls below that of holding the forces, and its
    suboptimality estimate is positive."""
    model, _ = _barge_model()
    s0 = np.zeros(18)
    s0[12] = -8.0
    s0[2] = 1e6 / (1025.0 * 3000.0)                       # sinkage under the platform
    u0 = np.full(3, 9.81e6 / 3 / 0.9)
    setpoint = platform_hrp(s0[None], model.hardpoint)[0]
    mpc = NMPC(model, MPCSettings())
    sol = mpc.solve(s0, u0, setpoint)
    assert np.abs(sol.forces - u0).max() < 0.05e6, sol.forces
    s1 = s0.copy()
    s1[9] = 1.0 * DEG                                   # ship roll rate 1 deg/s
    mpc = NMPC(model, MPCSettings())
    sol = mpc.solve(s1, u0, setpoint)
    held, _, _ = mpc._residuals(s1, u0, setpoint, np.zeros((1, 5, 3)))
    assert sol.cost < 0.5 * float(held[0] @ held[0])
    assert sol.alpha > 0.0
    assert 1 <= sol.iterations <= 10
    assert np.all(sol.forces >= -5e6) and np.all(sol.forces <= 2e7)


def test_nmpc_simulates_only_the_trajectories_that_differ():
    """NMPC._simulate runs a row only from the step its forces leave the first row's (a Jacobian
    batch's perturbation of step j leaves steps < j alone): the predictions are those of simulating
    every row over the whole horizon, to the bit, for a Jacobian batch and for rows in any order."""
    model, _ = _barge_model()
    s0 = np.zeros(18)
    s0[12], s0[2], s0[9] = -8.0, 1e6 / (1025.0 * 3000.0), 1.0 * DEG
    u0 = np.full(3, 9.81e6 / 3 / 0.9)
    mpc = NMPC(model, MPCSettings())
    N = mpc.s.horizon
    z = np.random.default_rng(2).normal(size=(N, 3)) * 0.1
    jac = np.concatenate([z.reshape(1, -1), z.reshape(1, -1) + np.eye(3 * N) * 1e-2]).reshape(-1, N, 3)
    mixed = jac[[0, 12, 3, 0, 15, 7]]                     # repeated, out of order
    for batch in (jac, mixed, jac[:1]):
        hrp, u = mpc._simulate(s0, u0, batch)
        s = np.repeat(s0[None], len(batch), axis=0)
        for i in range(N):                                  # every row, every step
            s = model.rk4(s, u[:, i], mpc.s.dt)
            assert np.array_equal(hrp[:, i], model.hrp(s)), i


# ---------------------------------------------------------------------- the barge

def test_box_barge_hydrostatics_and_excitation(validation):
    """Box barge (components/box_barge.py): hydrostatics exact for a box; the Froude-Krylov heave force
    tends to rho g A_wp at long waves; Haskind damping vanishes at both ends."""
    _, v = _barge_model()
    rho, g = 1025.0, 9.81
    assert v.mass == pytest.approx(rho * 100 * 30 * 4)
    assert v.restoring[2, 2] == pytest.approx(rho * g * 3000)
    gm = 2.0 + 900 / 48 - 5.95
    assert v.restoring[3, 3] == pytest.approx(rho * g * 12000 * gm)
    assert v.force_rao_amp[2, 0, 0] == pytest.approx(rho * g * 3000, rel=0.01)
    assert abs(abs(v.force_rao_phase[2, 0, 0]) - math.pi) < 1e-6              # up when the crest is at CO
    B33 = v.damping[2, 2]
    assert B33[0] < 0.05 * B33.max() and B33[-1] < 0.05 * B33.max()
    # the net linear righting moment at 30 deg with the 1000 t tower standing 75 m above the waterline
    net = (v.restoring[3, 3] - 1e6 * g * (4.0 + 8.0 + 62.58)) * math.radians(30)
    validation.record(case="S2 barge: net righting moment at 30 deg (sizing of our barge)", reference=550e6,
                      ours=net, tolerance=0.01, tol_kind="rel", unit="N.m", source="ship_crane_digest.md 4.2")
    assert net == pytest.approx(550e6, rel=0.01)
