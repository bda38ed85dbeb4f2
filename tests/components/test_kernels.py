"""The compiled kernels (components/kernels) against the numpy reference they reproduce.

Each kernel computes the reference's equations with the same operations, in C; results agree to
rounding. Stated tolerances: relative 1e-12 of the largest magnitude for one evaluation of the
articulated-body algorithm and the rigid-body derivative (measured 2e-14; accelerations of a crane
near its static balance, small differences of large forces: 1e-12 of 1 m/s2 or rad/s2), and for trajectories of
the crane (RK4 with its controllers, end stops and moving base), the rigid body (RK4 through
the splash zone) and the ship (waves, hardpoint loads, an attached mechanism, fluid memory) over
100-300 steps, relative 1e-10 (measured up to 6e-14). Also: the fallback to numpy when the
kernels are disabled, and the shipped library's glibc floor.
"""
from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import build_fmus
from components import kernels
from components.articulated_body import ArticulatedBody
from components.crane import BaseMotion, Crane
from components.mechanism import JointControl, JointLimits, preset
from components.rigid_body import HydroParameters, RigidBody, RigidBodyParameters
from components.rotations import quat_from_euler_zyx, quat_normalize
from components.spatial import euler_zyx
from components.waves import make_sea
from tests.components.test_articulated_body import random_chain
from tests.components.test_ship import make_ship, radiation, vessel  # noqa: F401  (fixtures)

pytestmark = pytest.mark.gcc          # the kernels are compiled once per source hash (user cache)

REL = 1e-12
ROOT = Path(__file__).resolve().parents[2]


def rel_err(x, ref) -> float:
    x, ref = np.asarray(x, float), np.asarray(ref, float)
    return float(np.abs(x - ref).max() / max(np.abs(ref).max(), 1e-300))


@pytest.fixture(scope="module", autouse=True)
def compiled_available():
    assert kernels.library() is not None, kernels.status()


# ------------------------------------------------------------------------------ articulated body

MECHANISMS = {"knuckle_boom": lambda: preset("knuckle_boom"), "sms_palfinger": lambda: preset("sms_palfinger"),
              "sms_prismatic": lambda: preset("sms_prismatic"), "random7": lambda: random_chain(11),
              "random12": lambda: random_chain(5, n=12)}


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_articulated_body_kernel_equals_the_numpy_reference(name):
    m = MECHANISMS[name]()
    ref, ker = ArticulatedBody(m, compiled=False), ArticulatedBody(m, compiled=True)
    assert ker.compiled and not ref.compiled
    n = ref.n
    rng = np.random.default_rng(7)
    scale = 9.81 * m.total_mass() * 5.0
    for trial in range(40):
        q, qd, tau = rng.uniform(-2, 2, n), rng.uniform(-1, 1, n), rng.normal(size=n) * scale
        R = euler_zyx(*rng.uniform(-math.pi, math.pi, 3))
        p, v, w = rng.normal(size=3) * 10, rng.normal(size=3), rng.normal(size=3) * 0.3
        a, al, g = rng.normal(size=3), rng.normal(size=3) * 0.3, np.array([0.0, 0.0, 9.81])
        wrenches = [(int(rng.integers(n)), rng.normal(size=3), rng.normal(size=3) * scale / 10,
                     rng.normal(size=3) * scale) for _ in range(int(rng.integers(0, 6)))]
        calls = [((q, qd, tau), {}), ((q, qd, tau, R, p, v, w, a, al, g, wrenches), {}),
                 ((q, qd, tau), {"base_a": a, "gravity": (0.0, 0.0, -9.81)}),
                 ((q, qd, tau), {"link_wrenches": wrenches})]
        args, kwargs = calls[trial % len(calls)]
        r0, r1 = ref.forward_dynamics(*args, **kwargs), ker.forward_dynamics(*args, **kwargs)
        a2, al2 = rng.normal(size=3), rng.normal(size=3) * 0.3
        e0, e1 = ref.reevaluate(r0, a2, al2, wrenches[:1]), ker.reevaluate(r1, a2, al2, wrenches[:1])
        for x, y in ((r0, r1), (e0, e1)):
            for attr in ("qdd", "articulated_inertia", "bias", "base_wrench", "spatial_accelerations"):
                assert rel_err(getattr(y, attr), getattr(x, attr)) < REL, (trial, attr)
            assert abs(y.kinetic_energy - x.kinetic_energy) <= REL * abs(x.kinetic_energy)
            assert abs(y.potential_energy() - x.potential_energy()) <= REL * m.total_mass() * 9.81 * (
                1.0 + np.abs(p).max() + 50.0)
            for F0, F1 in zip(x.joint_frames, y.joint_frames):
                assert np.abs(F1 - F0).max() < REL * (1.0 + np.abs(p).max() + 50.0)
            for link in range(n):
                point = rng.normal(size=3)
                for u, u_ref in zip(y.point_kinematics(link, point), x.point_kinematics(link, point)):
                    assert rel_err(u, u_ref) < REL
            for (R0, p0), (R1, p1) in zip(x.link_poses, y.link_poses):
                assert np.abs(R1 - R0).max() < REL and rel_err(p1, p0) < REL
        # a fresh call with the reevaluated inputs gives the kernel's reevaluation bit for bit
        fresh = ker.forward_dynamics(*args[:3], *e1._base[:6], e1._base[6], wrenches[:1]) if len(args) > 3 else None
        if fresh is not None:
            np.testing.assert_array_equal(fresh.qdd, e1.qdd)
            np.testing.assert_array_equal(fresh.base_wrench, e1.base_wrench)


def test_many_link_wrenches_grow_the_kernel_input():
    m = random_chain(3)
    ref, ker = ArticulatedBody(m, compiled=False), ArticulatedBody(m, compiled=True)
    rng = np.random.default_rng(1)
    q, qd, tau = rng.normal(size=7), rng.normal(size=7), rng.normal(size=7) * 1e3
    for count in (1, 9, 30, 0, 2):
        wr = [(int(rng.integers(7)), rng.normal(size=3), rng.normal(size=3) * 100, rng.normal(size=3) * 10)
              for _ in range(count)]
        assert rel_err(ker.forward_dynamics(q, qd, tau, link_wrenches=wr).qdd,
                       ref.forward_dynamics(q, qd, tau, link_wrenches=wr).qdd) < REL


# ------------------------------------------------------------------------------ crane


def _crane_mechanism(name: str):
    """A preset with its joints' controllers varied so that every branch of the actuator law runs:
    torque control, a saturating position controller and a joint driven into its end stop."""
    m = preset(name)
    if name == "knuckle_boom":
        m.links[2].control = JointControl("torque", torque_max=4e5)
        m.links[4].control = JointControl("position", kp=1e7, ki=1e5, kd=1e5, torque_max=2e4, power_max=5e3)
        m.links[1].limits = JointLimits(lower=-0.1, upper=math.radians(61.0), stiffness=5e9, damping=5e8)
    return m


@pytest.mark.parametrize("name", ["knuckle_boom", "tysse_egeland", "sms_revolute", "sms_double_pendulum"])
def test_crane_steps_compiled_equal_the_numpy_reference(name):
    rng = np.random.default_rng(3)
    m = _crane_mechanism(name)
    a, b = Crane(m, compiled=False), Crane(m, compiled=True)
    assert b._compiled is not None and a._compiled is None
    base = BaseMotion(rng.normal(size=3) * 5, quat_normalize(np.array([1.0, *(0.03 * rng.normal(size=3))])),
                      rng.normal(size=3) * 0.5, 0.02 * rng.normal(size=3), rng.normal(size=3) * 0.5,
                      0.02 * rng.normal(size=3))
    weight = 9.81 * m.total_mass() * 0.05
    loads = [(att.link, np.asarray(att.point, float), rng.normal(size=3) * weight, np.zeros(3))
             for att in m.attachments]
    setpoint = a.setpoint + np.where([c == "position" for c in a.mode], 0.05, 0.0)
    if name == "knuckle_boom":
        setpoint[2] = 3e5               # the knuckle's torque command
        setpoint[4] += 0.5              # saturates the tool tilt
    for crane in (a, b):
        crane.set_inputs(base, setpoint, loads)
    worst = 0.0
    for k in range(120):
        if k % 3 == 0:                  # the outputs' evaluation: also the first RK4 stage of the next step
            (ra, act_a), (rb, act_b) = a.evaluate(), b.evaluate()
            assert rel_err(act_b, act_a) < REL
            for attr in ("articulated_inertia", "bias", "base_wrench"):
                assert rel_err(getattr(rb, attr), getattr(ra, attr)) < REL, attr
            # accelerations near a static balance are small differences of large forces: against 1 (SI)
            for attr in ("qdd", "spatial_accelerations"):
                x, x_ref = getattr(rb, attr), getattr(ra, attr)
                assert np.abs(x - x_ref).max() < REL * max(1.0, np.abs(x_ref).max()), attr
            for att in m.attachments:
                for u, u_ref in zip(rb.point_kinematics(att.link, att.point), ra.point_kinematics(att.link, att.point)):
                    assert np.abs(u - u_ref).max() < REL * max(1.0, np.abs(u_ref).max())
        for crane in (a, b):
            crane.step(0.02, 0.01 if k % 2 else 0.02)
            crane.set_inputs(crane.base, setpoint, loads)
        worst = max(worst, rel_err(b.q, a.q), rel_err(b.qd, a.qd), rel_err(b.z, a.z) if a.z.any() else 0.0,
                    rel_err(b.base.position, a.base.position), rel_err(b.base.quaternion, a.base.quaternion))
    assert np.all(np.isfinite(a.q))
    assert worst < 1e-10, worst
    if name == "knuckle_boom":
        assert a.q[1] > a._hi[1], "the end stop was never engaged"
        act, saturated = a.actuator_torques(a.q, a.qd, a.z)
        assert saturated[4], "the tool tilt's actuator did not saturate"


def test_a_crane_with_its_own_joint_laws_keeps_the_python_steps():
    """components/platform.py's Platform replaces the joint servos by its cylinders: the compiled
    step (which has the Crane's laws built in) must not run it, the compiled ABA still does."""
    from components.platform import Cylinders, Platform, platform_inertia
    from tests.components.test_platform import GEO

    plat = Platform(GEO, platform_inertia(1e6), Cylinders())
    assert plat._compiled is None and plat.body.compiled
    assert Crane(preset("knuckle_boom"))._compiled is not None


# ------------------------------------------------------------------------------ rigid body


def _body(hydro: bool, compiled: bool) -> RigidBody:
    h = None
    if hydro:
        h = HydroParameters(volume=20.0, cb=np.array([0.1, 0.0, -0.2]),
                            added_mass=np.array([1e4, 2e4, 3e4, 5e3, 6e3, 7e3]), drag_linear=np.full(6, 1e3),
                            drag_quadratic=np.full(6, 5e3), splash_height=2.0)
    p = RigidBodyParameters(mass=1e4, inertia=np.diag([2e4, 3e4, 2.5e4]) + 100.0, cg=np.array([0.1, -0.2, 0.3]),
                            attachments=np.array([[1.0, 0.5, -1.0], [-1.0, 0.5, -1.0], [0.0, -0.5, -1.0]]), hydro=h)
    return RigidBody(p, position=(0.0, 0.0, -1.5), quaternion=(1.0, 0.1, 0.2, 0.05), velocity=(0.5, 0.1, 0.3),
                     angular_velocity=(0.1, -0.2, 0.3), compiled=compiled)


@pytest.mark.parametrize("hydro", [False, True])
def test_rigid_body_compiled_equals_the_numpy_reference(hydro):
    rng = np.random.default_rng(5)
    a, b = _body(hydro, False), _body(hydro, True)
    fractions = set()
    worst = 0.0
    for k in range(200):
        forces = rng.normal(size=(3, 3)) * 1e4
        for body in (a, b):
            body.set_loads(forces, np.array([100.0, -50.0, 20.0]), np.array([10.0, 20.0, 30.0]),
                           np.array([0.3, 0.1, 0.0]), 0.5 * math.sin(0.1 * k))
        if k % 2:
            outa, outb = a.outputs(), b.outputs()
            for key, value in outa.items():
                if key != "euler":
                    assert rel_err(np.asarray(outb[key]), np.asarray(value)) < REL, key
        np.testing.assert_allclose(b._compiled.derivative(a._y), a._derivative(a._y), rtol=0, atol=REL * np.abs(
            a._derivative(a._y)).max())
        a.step(0.025, 0.01)
        b.step(0.025, 0.01)
        fractions.add(round(a.submerged_fraction, 1))
        worst = max(worst, rel_err(b._y, a._y))
    assert worst < 1e-10, worst
    if hydro:
        assert len(fractions) > 3, f"the body did not cross the splash zone: {fractions}"


# ------------------------------------------------------------------------------ ship


def test_ship_compiled_equals_the_numpy_reference(vessel, radiation):  # noqa: F811
    """Waves, two loaded hardpoints, an attached mechanism's inertia and bias switched on and off,
    station keeping, fluid memory; the outputs read between steps (their derivative is the first
    stage of the next step) in some steps only, one and five sub-steps per step."""
    sea = make_sea("jonswap", hs=2.5, period=8.0, mean_direction=2.9, n_frequencies=60, seed=1)
    ships = [make_ship(vessel, radiation, hardpoints=((-30.0, 5.0, -21.0), (10.0, 0.0, -2.0)), sea=sea,
                       quaternion=quat_from_euler_zyx(0.02, -0.01, 0.3), compiled=compiled)
             for compiled in (False, True)]
    assert ships[1]._compiled is not None and ships[0]._compiled is None and ships[0].n_rad > 0
    rng = np.random.default_rng(0)
    IA = np.diag([1e5, 1e5, 1e5, 1e7, 1e7, 1e7])
    IA[0, 4] = IA[4, 0] = 2e5
    worst = 0.0
    points = np.array([[-30.0, 5.0, -21.0]])
    for k in range(300):
        F, M, pA = rng.normal(size=(2, 3)) * 1e5, rng.normal(size=(2, 3)) * 1e4, rng.normal(size=6) * 1e5
        attached = (k // 50) % 2 == 1
        for ship in ships:
            ship.set_loads(F, M, (0.3, 0.1, 0.0), IA if attached else None, pA if attached else None)
            if k % 3:
                ship.nu_dot, ship.points_kinematics(points)
        a, b = ships
        if k % 3:
            for x, y in zip((a.nu_dot, *a.points_kinematics(points), a.euler), (b.nu_dot, *b.points_kinematics(points),
                                                                                 b.euler)):
                assert rel_err(y, x) < REL
        for ship in ships:
            ship.step(0.025, 0.05 if k % 5 else 0.005)
        worst = max(worst, rel_err(b.y, a.y))
    assert worst < 1e-10, worst
    assert np.abs(a.y[16:]).max() > 0.0, "the fluid memory never moved"


# ------------------------------------------------------------------------------ fallback, library


def test_without_kernels_the_numpy_reference_runs_and_compiled_true_says_why():
    code = ("from components.mechanism import preset\n"
            "from components.articulated_body import ArticulatedBody\n"
            "from components.crane import Crane\n"
            "ab = ArticulatedBody(preset('knuckle_boom'))\n"
            "assert not ab.compiled and Crane(preset('knuckle_boom'))._compiled is None\n"
            "from components.line import Line, LineParams\n"
            "p = LineParams(length=10.0, diameter=0.04, mass_per_length=6.7, EA=7.5e7)\n"
            "assert Line(p, [0, 0, 0], [0, 0, 9.9], 4, 1e9, scheme='implicit')._compiled is None\n"
            "try:\n"
            "    ArticulatedBody(preset('knuckle_boom'), compiled=True)\n"
            "except RuntimeError as exc:\n"
            "    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                         env={**os.environ, "MARINE_COSIM_KERNELS": "0"})
    assert out.returncode == 0, out.stderr
    assert "disabled by MARINE_COSIM_KERNELS" in out.stdout


def test_the_library_needs_nothing_newer_than_an_old_glibc(tmp_path):
    lib = kernels.compile_library(tmp_path / kernels.LIBRARY)
    assert build_fmus.glibc_floor([lib.read_bytes()]) <= (2, 17)
    # built from the sources' names only: no path of this machine inside (reproducible FMUs)
    assert str(kernels.HERE).encode() not in lib.read_bytes()


# ------------------------------------------------------------------------------ line

LINE_REL = 1e-9        # over hundreds of implicit steps (measured 1e-14 to 2e-12)


def _chain_line(compiled):
    from components.line import Line, LineParams
    chain = LineParams(length=410.0, diameter=0.252, mass_per_length=390.0, EA=1.674e9, damping=-1.0,
                       Cdn=1.37, Cdt=0.64, Can=1.0, Cat=0.0, kBot=1e5, cBot=1e4, friction=0.5)
    return Line(chain, [400.0, 0.0, 50.0], [0.0, 0.0, 0.0], 41, 50.0, scheme="implicit", substep=0.005,
                compiled=compiled)


def _wire(**kw):
    from components.line import LineParams
    return LineParams(**{**dict(length=60.0, diameter=0.04, mass_per_length=6.7, EA=7.5e7, damping=-0.1,
                                Cdn=1.2, Cdt=0.05, Can=1.0, Cat=0.2), **kw})


def _drive(line, steps, dt, end_b=None, payout=None, tip=None):
    """Drive a line for ``steps`` coupling steps; the end loads after each."""
    out = []
    for k in range(steps):
        t = k * dt
        if end_b is not None:
            pos, vel = end_b(t)
            line.set_ends(line.r[0], line.va, pos, vel)
        if payout is not None:
            line.set_payout(payout(t))
        if tip is not None:
            line.set_tip_force(tip(t))
        line.step(dt)
        out.append(np.concatenate([line.end_loads().force_a, line.end_loads().force_b, line.r[-1], [line.N]]))
    return np.array(out)


def test_line_chain_compiled_equals_the_numpy_reference():
    def heave(t):
        w = 2 * math.pi / 10.0
        return np.array([0.0, 0.0, -math.sin(w * t)]), np.array([0.0, 0.0, -w * math.cos(w * t)])

    a, b = _chain_line(False), _chain_line(None)
    assert a._compiled is None and b._compiled is not None
    ra, rb = _drive(a, 100, 0.1, heave), _drive(b, 100, 0.1, heave)
    assert rel_err(rb, ra) < LINE_REL
    assert rel_err(b.r, a.r) < LINE_REL and rel_err(b.v, a.v) < LINE_REL * 1e3   # v ~ 1e-3 of r
    assert b.t == a.t


def test_line_winch_pay_out_and_haul_in_with_current_compiled_equal_the_reference():
    from components.line import Line

    def make(compiled):
        return Line(_wire(), [0.0, 0.0, 0.0], [0.0, 0.0, 60.0], 6, math.inf, scheme="implicit", free_b=True,
                    tip_mass=800.0, winch_end="a", current=(0.6, 0.2, 0.0), substep=0.01, compiled=compiled)

    def payout(t):               # out 6.1 m (a split), then in again (a merge), smoothly: the wire stays taut
        return 1.2 * math.cos(math.pi * t / 16.0)  # (snaps make the reference itself sensitive to rounding)

    def tip(t):
        return np.array([300.0 * math.sin(0.7 * t), 0.0, 500.0 * math.sin(1.3 * t)])

    a, b = make(False), make(None)
    ra, rb = _drive(a, 160, 0.1, payout=payout, tip=tip), _drive(b, 160, 0.1, payout=payout, tip=tip)
    assert ra[:, -1].max() > 6 and ra[:, -1].min() < ra[:, -1].max()    # it split and merged
    assert np.array_equal(ra[:, -1], rb[:, -1])
    assert rel_err(rb, ra) < LINE_REL


@pytest.mark.parametrize("ends", ["a", "both"])
def test_line_pay_out_in_the_kernel_equals_the_sub_step_path_and_the_reference(monkeypatch, ends):
    """A winch paying out and hauling in (splits and merges) with the pay-out in the kernel (one
    call per coupling step of 10 sub-steps, more only where an element splits or merges), against
    the previous path (the kernel a sub-step at a time, the pay-out in Python) and the numpy
    reference: the rest lengths equal to the bit, the states and end loads to LINE_REL."""
    from components.kernels.line import CompiledLine
    from components.line import Line
    calls = []
    run = CompiledLine.run

    def counted_run(self, line, h, n_steps, dl, *args):
        calls.append(dl is None)
        return run(self, line, h, n_steps, dl, *args)

    monkeypatch.setattr(CompiledLine, "run", counted_run)

    def make(compiled):
        if ends == "a":
            return Line(_wire(), [0.0, 0.0, 0.0], [0.0, 0.0, 60.0], 6, math.inf, scheme="implicit", free_b=True,
                        tip_mass=800.0, winch_end="a", current=(0.6, 0.2, 0.0), substep=0.01, compiled=compiled)
        return Line(_wire(damping=2e5), [0.0, 0.0, 0.0], [1.0, 0.0, 59.9], 6, math.inf, scheme="implicit",
                    winch_end="both", current=(0.3, 0.0, 0.0), substep=0.01, compiled=compiled)

    def drive(line, previous=False):
        if previous:       # the kernel a sub-step at a time, the pay-out in Python
            monkeypatch.setattr(line._compiled, "payout_in_place", lambda line: False)
        out, lengths = [], []
        for k in range(160):
            t = k * 0.1
            u = 1.2 * math.cos(math.pi * t / 16.0)  # out ~6 m (splits), then in again (merges)
            if ends == "a":
                line.set_payout(u)
                line.set_tip_force(np.array([300.0 * math.sin(0.7 * t), 0.0, 500.0 * math.sin(1.3 * t)]))
            else:
                line.set_payout(u, "a")         # both ends' elements split; end B follows (taut)
                line.set_payout(u, "b")
                line.set_ends(line.r[0], line.va, np.array([1.0, 0.0, 59.9 + 12.2 * math.sin(math.pi * t / 16.0)]),
                              np.array([0.0, 0.0, 12.2 * math.pi / 16.0 * math.cos(math.pi * t / 16.0)]))
            line.step(0.1)
            loads = line.end_loads()
            out.append(np.concatenate([loads.force_a, loads.force_b, line.r.ravel()[-3:]]))
            lengths.append(line.l.copy())
        return np.array(out), lengths, line

    ref, ref_l, a = drive(make(False))
    calls.clear()
    new, new_l, b = drive(make(None))
    kernel_calls = len(calls)
    assert all(calls[:1])
    calls.clear()
    old, old_l, c = drive(make(None), previous=True)
    assert len(calls) == 1600 and not any(calls)         # one call per sub-step before
    counts = [x.size for x in ref_l]
    assert max(counts) > min(counts) and counts[-1] < max(counts)    # split and merged
    assert 160 <= kernel_calls < 160 + 2 * (max(counts) - min(counts) + 2) * (2 if ends == "both" else 1)
    for x, y, z in zip(ref_l, new_l, old_l):
        assert np.array_equal(x, y) and np.array_equal(y, z)          # rest lengths: the same bits
    assert rel_err(new, ref) < LINE_REL and rel_err(new, old) < LINE_REL
    assert rel_err(b.r, a.r) < LINE_REL and rel_err(b.r, c.r) < LINE_REL
    for name in ("l_node", "m_node", "_man_l", "_mat_l", "_rhoA_l", "c_el"):
        assert np.array_equal(getattr(b, name), getattr(c, name)), name
    print(f"\n{ends}: {kernel_calls} kernel calls for 160 coupling steps; elements {min(counts)}-{max(counts)}; "
          f"against the reference {rel_err(new, ref):.1e}, against the sub-step path {rel_err(new, old):.1e}")


def test_line_through_the_wave_surface_compiled_equals_the_reference():
    from components.line import Line
    sea = make_sea("regular", period=8.0, regular_amplitude=1.5)

    def make(compiled):
        # taut (slack lines snap, and snaps make the reference itself sensitive to rounding)
        return Line(_wire(length=34.97), [0.0, 0.0, 30.0], [0.0, 0.0, -5.0], 12, 40.0, scheme="implicit",
                    sea=sea, winch_end="b", substep=0.02, compiled=compiled)

    def end_b(t):
        return np.array([0.8 * math.sin(0.5 * t), 0.0, -5.0 + 0.01 * math.sin(0.8 * t)]), \
            np.array([0.4 * math.cos(0.5 * t), 0.0, 0.008 * math.cos(0.8 * t)])

    a, b = make(False), make(None)
    ra = _drive(a, 100, 0.1, end_b, payout=lambda t: 0.005 * math.sin(t))
    rb = _drive(b, 100, 0.1, end_b, payout=lambda t: 0.005 * math.sin(t))
    assert rel_err(rb, ra) < LINE_REL


@pytest.mark.parametrize("winch", [False, True])
def test_line_snaps_take_the_reference_newton_iterations_compiled(monkeypatch, winch):
    """A slack wire with a heavy free end jerked up and down snaps taut: the kernel's Newton
    iterations at the theta point and half steps (line.c) against the reference's, with and
    without a winch paying out (the rest length lengthened at the theta point), over the first
    0.3 s (dozens of snaps).  Tolerance 1e-6: Newton stops at |delta| <= 1e-9 + 1e-6 |dv|, so where
    rounding changes the number of iterations (or a halving) the two agree to that, not to
    rounding; and the snapping wire amplifies any difference (measured 1e-12 to 1e-8)."""
    from components.line import Line
    forces, steps = [], []
    reference_forces, reference_step = Line._forces, Line._implicit_step

    def counted_forces(self, *args, **kw):
        forces.append(1)
        return reference_forces(self, *args, **kw)

    def counted_step(self, *args, **kw):
        steps.append(self._compiled is not None)
        return reference_step(self, *args, **kw)

    monkeypatch.setattr(Line, "_forces", counted_forces)
    monkeypatch.setattr(Line, "_implicit_step", counted_step)

    def make(compiled):
        line = Line(_wire(length=20.0), [0.0, 0.0, 0.0], [0.0, 0.0, 19.0], 8, math.inf, scheme="implicit",
                    free_b=True, tip_mass=2000.0, substep=0.01, compiled=compiled,
                    winch_end="a" if winch else None)
        if winch:
            line.set_payout(0.3)
        return line

    def end_a(line):
        def f(t):
            w = 2 * math.pi / 2.0
            line.set_ends(np.array([0.0, 0.0, -1.5 * math.sin(w * t)]),
                          np.array([0.0, 0.0, -1.5 * w * math.cos(w * t)]))
            return line.r[-1], line.v[-1]
        return f

    a, b = make(False), make(None)
    forces.clear()
    steps.clear()
    ra = _drive(a, 6, 0.05, end_a(a))
    assert len(forces) > len(steps) + 10       # the reference's Newton iterations: snaps happened
    steps.clear()
    rb = _drive(b, 6, 0.05, end_a(b))
    assert not steps                           # ... all of them in the kernel
    print(f"\nlargest relative difference {rel_err(rb, ra):.1e}, {len(forces)} force evaluations")
    assert rel_err(rb, ra) < 1e-6


def test_a_line_with_bending_keeps_the_numpy_step_and_compiled_true_says_why():
    from components.line import Line
    assert Line(_wire(EI=100.0), [0.0, 0.0, 0.0], [0.0, 0.0, 10.0], 5, math.inf, scheme="implicit")._compiled is None
    assert Line(_wire(), [0.0, 0.0, 0.0], [0.0, 0.0, 10.0], 5, math.inf, scheme="rk2")._compiled is None
    with pytest.raises(RuntimeError, match="without bending"):
        Line(_wire(EI=100.0), [0.0, 0.0, 0.0], [0.0, 0.0, 10.0], 5, math.inf, scheme="implicit", compiled=True)


def test_line_end_loads_compiled_equal_the_reference():
    """Line.end_loads by the kernel (forces on the ends, tensions) against the reference's
    _end_forces and node_forces(), on the chain (seabed, friction) and a winch wire with a free end."""
    from components.line import Line

    b = _chain_line(None)
    wire = Line(_wire(), [0.0, 0.0, 0.0], [0.0, 0.0, 60.0], 6, math.inf, scheme="implicit", free_b=True,
                tip_mass=800.0, winch_end="a", current=(0.6, 0.2, 0.0), substep=0.01)
    wire.set_payout(0.5)
    wire.set_tip_force(np.array([100.0, -50.0, 300.0]))
    for line in (b, wire):
        for _ in range(5):
            line.step(0.1)
            got = line.end_loads()
            compiled, line._compiled = line._compiled, None
            try:
                ref, F = line.end_loads(), line.node_forces()
            finally:
                line._compiled = compiled
            scale = np.abs(F).max()
            assert np.abs(got.force_a - ref.force_a).max() <= 1e-12 * scale
            assert np.abs(got.force_b - ref.force_b).max() <= 1e-12 * scale
            assert np.abs(got.force_b - F[-1]).max() <= 1e-12 * scale
            assert rel_err(got.tensions, ref.tensions) < 1e-13


@pytest.mark.parametrize("case", ["chain", "winch at a free end", "winches at both ends"])
def test_line_step_outputs_written_by_the_kernel_equal_end_loads(case):
    """Line.bind_step_outputs: the kernel call that takes a step's sub-steps (mc_line_advance)
    writes the end loads of the state they end in, the same arithmetic as mc_line_end_loads in
    the same order: equal to the bit to Line.end_loads() evaluated afterwards (forces, end B's
    motion, the end and largest tensions, the slack fraction), and to the numpy reference to
    rounding.  After a step whose last sub-step ends in a split or merge (the pay-out's geometry
    in Python) nothing is written and step_outputs is None (the free end's winch: one sub-step a
    step); an earlier split is followed by a kernel call that writes them (both ends: ten).  A
    current profile (the fluid is the caller's) writes nothing."""
    from components.line import Line
    if case == "chain":
        line = _chain_line(None)
    elif case == "winch at a free end":
        line = Line(_wire(), [0.0, 0.0, 0.0], [0.0, 0.0, 60.0], 6, math.inf, scheme="implicit", free_b=True,
                    tip_mass=800.0, winch_end="a", current=(0.6, 0.2, 0.0), substep=0.01)
    else:
        line = Line(_wire(damping=2e5), [0.0, 0.0, 0.0], [1.0, 0.0, 59.9], 6, math.inf, scheme="implicit",
                    winch_end="both", current=(0.3, 0.0, 0.0), substep=0.01)
    dt = 0.01 if case == "winch at a free end" else 0.1
    outputs = [np.full(3, np.nan) for _ in range(4)]
    assert line.bind_step_outputs(*outputs)
    written, skipped, split_and_written = 0, 0, 0
    for k in range(int(round(8.0 / dt))):
        t = k * dt
        u = 2.4 * math.cos(math.pi * t / 8.0)       # out ~6 m (splits), then in again (merges)
        if case == "chain":
            w = 2 * math.pi / 10.0
            line.set_ends(line.r[0], line.va, np.array([0.0, 0.0, -math.sin(w * t)]),
                          np.array([0.0, 0.0, -w * math.cos(w * t)]))
        elif case == "winch at a free end":
            line.set_payout(u)
            line.set_tip_force(np.array([300.0 * math.sin(0.7 * t), 0.0, 500.0 * math.sin(1.3 * t)]))
        else:
            line.set_payout(u, "a")
            line.set_payout(u, "b")
            line.set_ends(line.r[0], line.va, np.array([1.0, 0.0, 59.9 + 12.2 * math.sin(math.pi * t / 8.0)]),
                          np.array([0.0, 0.0, 12.2 * math.pi / 8.0 * math.cos(math.pi * t / 8.0)]))
        for x in outputs:
            x[:] = np.nan
        n_before = line.N
        line.step(dt)
        summary = line.step_outputs
        if summary is None:
            skipped += 1
            assert line.N != n_before           # a split or merge in the step's last sub-step
            continue
        written += 1
        split_and_written += line.N != n_before
        loads = line.end_loads()
        T = loads.tensions
        same = [np.array_equal(outputs[0], loads.force_a), np.array_equal(outputs[1], loads.force_b),
                np.array_equal(outputs[2], line.r[-1]), np.array_equal(outputs[3], line.v[-1]),
                summary.tolist() == [T[0], T[-1], T.max(), np.count_nonzero(T <= 0.0) / T.size]]
        assert all(same), (k, same)
        compiled, line._compiled = line._compiled, None
        try:
            F = line.node_forces()
        finally:
            line._compiled = compiled
        scale = np.abs(F).max()
        assert np.abs(outputs[0] - F[0]).max() <= 1e-12 * scale and np.abs(outputs[1] - F[-1]).max() <= 1e-12 * scale
    assert written > 0.95 * (written + skipped)
    if case == "winch at a free end":
        assert skipped > 1
    elif case == "winches at both ends":
        assert split_and_written >= 1
    # a current profile: the kernel takes one sub-step per call with the caller's fluid, no loads
    profile = Line(_wire(), [0.0, 0.0, 0.0], [0.0, 0.0, 60.0], 6, 100.0, scheme="implicit", free_b=True,
                   tip_mass=800.0, current_profile=np.array([[0.0, 1.0, 0.0, 0.0], [100.0, 0.2, 0.0, 0.0]]))
    outputs = [np.full(3, np.nan) for _ in range(4)]
    assert profile.bind_step_outputs(*outputs)
    profile.step(0.1)
    assert profile.step_outputs is None and all(np.isnan(x).all() for x in outputs)
    # the numpy reference has no kernel to write them
    assert not _chain_line(False).bind_step_outputs(*outputs)


# ------------------------------------------------------------------------------ ship: the sea's phases


@pytest.mark.parametrize("kind", ["long-crested", "spread", "random frequencies"])
def test_ship_wave_kernel_equals_the_numpy_reference(vessel, kind):  # noqa: F811
    """ship.c's mc_ship_waves (the phases, cosines and sines of Sea.elevation and Sea.excitation; the
    sums stay numpy's) against the numpy code: the phases are the same operations, cos and sin the C
    library's, so the same bits where numpy's loops call those (x86-64 without AVX-512: measured
    equal on 3000 random times and positions per sea); 1e-13 of the largest term elsewhere."""
    from components.kernels.ship import CompiledWaves
    from components.waves import ForceRAO

    kw = {"long-crested": dict(n_frequencies=60), "spread": dict(n_frequencies=40, spreading_s=4.0, n_directions=5),
          "random frequencies": dict(n_frequencies=100, random_frequencies=True)}[kind]
    sea = make_sea("jonswap", 2.5, 8.0, seed=11, mean_direction=2.88, **kw)
    rao = ForceRAO(omega=vessel.omega, heading=vessel.rao_headings, amplitude=vessel.force_rao_amp,
                   phase=vessel.force_rao_phase)
    waves = CompiledWaves(sea, kernels.library())
    rng = np.random.default_rng(3)
    same = True
    t, points = 0.0, np.zeros((6, 2))
    for k in range(300):
        h = rng.uniform(0.001, 0.05)
        if k % 3 == 0:          # a new time and new points
            t, points = rng.uniform(0.0, 2000.0), rng.uniform(-200.0, 200.0, (int(rng.integers(1, 8)), 2))
        else:                   # the same time, one point moved (the kernel keeps the other rows)
            points = points.copy()
            points[-1 if k % 3 == 1 else int(rng.integers(0, len(points)))] = rng.uniform(-200.0, 200.0, 2)
        ref = sea.elevation(t, points[:, 0], points[:, 1])
        got = waves.elevation(t, points)
        assert np.abs(got - ref).max() <= 1e-13 * sea.amplitude.sum() * 10
        same &= np.array_equal(got, ref)
        times = np.array([t, t + 0.5 * h, t + h])
        north, east, psi = rng.uniform(-100.0, 100.0, 3)
        ref = sea.excitation(times, north, east, psi, rao, heading_tol=1e-4)
        got = waves.excitation(sea.excitation_plan(rao, psi, 1e-4), times, north, east)
        assert got.shape == ref.shape == (3, 6)
        assert rel_err(got, ref) < 1e-12
        same &= np.array_equal(got, ref)
    x = rng.uniform(-1e3, 1e3, 10000)
    if np.array_equal(np.cos(x), [math.cos(v) for v in x]) and np.array_equal(np.sin(x), [math.sin(v) for v in x]):
        assert same, "numpy's cos and sin are the C library's here: the kernel must give the same bits"


def test_ship_with_the_wave_kernel_gives_the_same_elevations_and_steps(vessel, radiation):  # noqa: F811
    """A compiled Ship with the wave kernel against one on the reference's Sea calls (its kernel
    switched off): elevations at the points, excitation and state after steps, equal to rounding
    (the same bits where numpy's cos and sin are the C library's)."""
    sea = make_sea("jonswap", hs=2.5, period=8.0, mean_direction=2.9, n_frequencies=60, seed=1)
    ships = [make_ship(vessel, radiation, hardpoints=((-30.0, 5.0, -21.0),), sea=sea, compiled=True) for _ in "ab"]
    assert ships[0]._sea_kernel is not None
    ships[1]._sea_kernel = None
    points = np.array([[0.0, 0.0], [-30.0, 5.0], [12.0, -40.0]])
    for k in range(40):
        a, b = ships
        assert rel_err(a.wave_elevations(points), b.wave_elevations(points)) < 1e-12
        assert rel_err(a.wave_excitation(), b.wave_excitation()) < 1e-12
        for ship in ships:
            ship.step(0.025, 0.05 if k % 5 else 0.005)
        assert rel_err(a.y, b.y) < 1e-10


def test_ship_points_kernel_equals_the_numpy_reference(vessel, radiation):  # noqa: F811
    """ship.c's mc_ship_points (the body points' positions, velocities, accelerations, omega and
    omega' in NED) against components/ship.py's numpy code: the same bits where the Ship's check at
    first use found them (this machine's BLAS forms its small products as the kernel does), else equal
    to 1e-12 of the largest value; the Ship's outputs equal with and without it."""
    from components.rotations import quat_to_matrix
    from components.ship import _points_kernel_reproduces_numpy, _rigid_point_accelerations, _rigid_point_motion

    sea = make_sea("jonswap", hs=2.5, period=8.0, mean_direction=2.9, n_frequencies=60, seed=1)
    ship = make_ship(vessel, radiation, hardpoints=((-30.0, 5.0, -21.0),), sea=sea, compiled=True)
    rng = np.random.default_rng(7)
    for K in (1, 2, 6):
        exact = _points_kernel_reproduces_numpy(ship._compiled, K)
        rs = np.vstack([np.zeros(3), rng.normal(size=(5, 3)) * 30.0])[:K]
        for _ in range(100):
            y = np.concatenate([rng.normal(size=3) * 50.0, quat_normalize(rng.normal(size=4)),
                                rng.normal(size=6) * 0.3])
            R, nu_dot = quat_to_matrix(y[3:7]), rng.normal(size=6) * 0.2
            c_wv, wwr, pos, vel, w_ned = _rigid_point_motion(y, R, rs)
            ref = (pos, vel, *_rigid_point_accelerations(rs, c_wv, wwr, R, nu_dot))
            got = ship._compiled.points(y, R, nu_dot, rs)
            got = (got[0], got[1], got[2], got[4])
            for a, b in zip(got, ref):
                assert rel_err(a, b) < 1e-12 if not exact else np.array_equal(a, b)
    # the Ship's outputs with and without the kernel, over steps with waves
    other = make_ship(vessel, radiation, hardpoints=((-30.0, 5.0, -21.0),), sea=sea, compiled=True)
    other._points_kernel = False
    points = np.array([[0.0, 0.0, 0.0], [-30.0, 5.0, -21.0], [10.0, 2.0, -3.0]])
    exact = _points_kernel_reproduces_numpy(ship._compiled, len(points))
    for k in range(30):
        for s in (ship, other):
            s.set_loads(np.array([[1e4, 2e4, 3e5]]), np.array([[1e3, 0.0, 0.0]]))
        a, b = ship.points_kinematics(points), other.points_kinematics(points)
        for x, y in zip(a, b):
            assert np.array_equal(x, y) if exact else rel_err(x, y) < 1e-12
        for s in (ship, other):
            s.step(0.025, 0.025)
