"""The ship's fused kernel calls (issue 26) give exactly what the calls they replace give: the
derivative and the body points' kinematics in one call (ship.c's mc_ship mode 2), a sub-step with its
own stage excitations (mode 3, whose sums follow numpy's BLAS), and Ship.set_articulated against
set_loads. Exact equality throughout: these are claims of the same bits."""
from __future__ import annotations

import numpy as np
import pytest

from components import kernels
from components.ship import Ship, _points_kernel_reproduces_numpy
from components.waves import ForceRAO, make_sea
from tests.components.test_ship import make_ship, radiation, vessel  # noqa: F401  (fixtures)

pytestmark = pytest.mark.gcc

HARDPOINTS = ((-30.0, 4.0, -12.0), (25.0, 0.0, -8.0), (0.0, 7.0, -8.0))


@pytest.fixture(scope="module")
def sea():
    return make_sea("jonswap", 2.5, 8.0, seed=11, mean_direction=2.88, n_frequencies=60)


def articulated(rng) -> tuple[np.ndarray, np.ndarray]:
    """An articulated inertia and bias like a crane's (symmetric positive definite)."""
    A = rng.normal(size=(6, 6))
    IA = (A @ A.T + 6 * np.eye(6)) * 3e4
    return IA, np.array([1e4, -2e4, -3e6, 5e4, -1e5, 2e4]) * rng.uniform(0.5, 1.5)


def compiled_ship(vessel, radiation, sea) -> Ship:  # noqa: F811
    assert kernels.library() is not None, kernels.status()
    ship = make_ship(vessel, radiation, hardpoints=HARDPOINTS, sea=sea, compiled=True)
    assert ship._compiled is not None and ship._sea_kernel is not None
    return ship


def same(a, b) -> bool:
    return np.asarray(a).tobytes() == np.asarray(b).tobytes()


def test_derivative_and_points_in_one_call_equal_the_two_calls(vessel, radiation, sea):  # noqa: F811
    ship = compiled_ship(vessel, radiation, sea)
    rng = np.random.default_rng(5)
    points = np.vstack([np.zeros(3), ship.p.cg, ship.p.hardpoints])
    for k in range(12):
        IA, bias = articulated(rng)
        ship.set_loads(rng.normal(size=(3, 3)) * 1e4, rng.normal(size=(3, 3)) * 1e4, rng.normal(size=3) * 0.3,
                       IA if k % 3 else None, bias if k % 3 else None)
        ship.step(0.025, 0.05)
        wave = ship._compiled_wave(ship.time, ship.y)
        c = ship._compiled
        dy, R, euler, kinematics = c.derivative_and_points(ship, ship.y, wave, points)
        dy_ref, R_ref, euler_ref = c.derivative(ship, ship.y, wave)
        assert same(dy, dy_ref) and same(R, R_ref) and euler == euler_ref
        ref = c.points(ship.y, R_ref, dy_ref[7:13], points)
        assert all(same(a, b) for a, b in zip(kinematics, ref))


def test_points_kinematics_after_new_loads_equal_the_separate_calls(vessel, radiation, sea):  # noqa: F811
    """Ship.points_kinematics, which now takes the derivative and the points in one call where the
    accelerations are not kept, against _current() followed by the points alone."""
    a, b = (compiled_ship(vessel, radiation, sea) for _ in "ab")
    points = np.vstack([np.zeros(3), a.p.cg, a.p.hardpoints])
    if not _points_kernel_reproduces_numpy(a._compiled, len(points)):
        pytest.skip("the points kernel does not give numpy's bits here (the numpy code runs)")
    rng = np.random.default_rng(7)
    for k in range(10):
        IA, bias = articulated(rng)
        for ship in (a, b):
            ship.set_loads(np.zeros((3, 3)), np.zeros((3, 3)), (0.0, 0.0, 0.0), IA, bias)
            ship.step(0.025, 0.05)
        got = a.points_kinematics(points)
        nu_dot, R, _ = b._current()
        ref = b._compiled.points(b.y, R, nu_dot, np.asarray(points, float))
        assert all(same(x, y) for x, y in zip(got, ref))
        assert same(a._dy_now, b._dy_now) and same(a.nu_dot, b.nu_dot) and a.euler == b.euler


def test_the_fused_sub_step_equals_the_step_it_replaces(vessel, radiation, sea, monkeypatch):  # noqa: F811
    """Ship.step with the excitations and the sub-step in one call (mc_ship mode 3) against step with
    that call refused (numpy's sums, the sub-step alone): the same states, stage excitations and
    outputs over steps with changing loads, sub-steps and a heading that moves."""
    a, b = (compiled_ship(vessel, radiation, sea) for _ in "ab")
    plan = sea.excitation_plan(a.rao, a.y[15], heading_tol=1e-4)
    if not a._sea_kernel.sums_exact(plan):
        pytest.skip("ship.c's excitation sums are not numpy's bits here (numpy sums them)")
    monkeypatch.setattr(b, "_compiled_stage_substep", lambda t, h, y: None)
    fused = []
    original = a._compiled.substep_in_waves

    def counted(*args, **kwargs):
        fused.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(a._compiled, "substep_in_waves", counted)
    rng = np.random.default_rng(11)
    points = np.vstack([np.zeros(3), a.p.hardpoints])
    for k in range(40):
        IA, bias = articulated(rng)
        forces = rng.normal(size=(3, 3)) * 1e5 * (k % 2)
        for ship in (a, b):
            ship.set_loads(forces, np.zeros((3, 3)), (0.2, 0.1, 0.0), IA if k % 4 else None, bias if k % 4 else None)
            if k % 3 == 0:
                ship.points_kinematics(points)      # the outputs' derivative: a first stage to reuse
            ship.step(0.025 if k % 5 else 0.1, 0.05 if k % 7 else 0.01)
        assert same(a.y, b.y) and a.time == b.time
        assert a._stage_waves.keys() == b._stage_waves.keys()
        assert all(same(a._stage_waves[t], b._stage_waves[t]) for t in a._stage_waves)
        assert all(same(x, y) for x, y in zip(a.points_kinematics(points), b.points_kinematics(points)))
    assert len(fused) > 40      # the fused call was taken (more than once per step: some steps have sub-steps)


def test_the_excitation_sums_follow_numpy_or_are_refused(vessel, radiation):  # noqa: F811
    """mc_ship_waves mode 2 (the sums of mc_ship mode 3) against numpy's product of the same
    cosines and sines: sums_exact says True only where every one is the same bits, and it does
    wherever numpy's BLAS forms products as OpenBLAS's Haswell family (where the points kernel
    gives numpy's bits) for the seas of the scenarios (2n <= 256)."""
    from components.kernels.ship import CompiledWaves

    rao = ForceRAO(omega=vessel.omega, heading=vessel.rao_headings, amplitude=vessel.force_rao_amp,
                   phase=vessel.force_rao_phase)
    haswell = _points_kernel_reproduces_numpy(make_ship(vessel, radiation, compiled=True)._compiled, 6)
    for kw in (dict(n_frequencies=60), dict(n_frequencies=40, spreading_s=4.0, n_directions=3),
               dict(n_frequencies=7), dict(n_frequencies=100)):
        sea = make_sea("jonswap", 2.5, 8.0, seed=11, mean_direction=2.88, **kw)
        waves = CompiledWaves(sea, kernels.library())
        plan = sea.excitation_plan(rao, 0.3, 1e-4)
        exact = waves.sums_exact(plan)
        assert exact == waves._check_sums(plan)     # kept once per shape: the same answer
        if haswell:
            assert exact, f"{kw}: the Haswell-family dgemm order is ship.c's"


@pytest.mark.parametrize("compiled", [True, False])
def test_set_articulated_equals_set_loads(vessel, radiation, sea, compiled):  # noqa: F811
    """The adapter's refresh hands the ship only a new articulated inertia and bias: the same
    accelerations, kept mass matrix and later steps as set_loads with the loads held."""
    a, b = (make_ship(vessel, radiation, hardpoints=HARDPOINTS, sea=sea, compiled=compiled) for _ in "ab")
    rng = np.random.default_rng(3)
    forces, moments, current = rng.normal(size=(3, 3)) * 1e4, rng.normal(size=(3, 3)) * 1e3, np.array([0.1, 0.2, 0.0])
    IA, bias = articulated(rng)
    for ship in (a, b):
        ship.set_loads(forces, moments, current, IA, bias)
    for k in range(12):
        if k % 3 == 0:
            IA = articulated(rng)[0]
        bias = articulated(rng)[1] if k % 4 else bias
        a.set_articulated(IA, bias)
        b.set_loads(b.hp_force, b.hp_moment, b.current, IA, bias)
        assert same(a.nu_dot, b.nu_dot) and a._articulated and b._articulated
        for ship in (a, b):
            ship.step(0.025, 0.05)
        assert same(a.y, b.y)


def test_bound_outputs_are_written_only_for_their_points(vessel, radiation, sea):  # noqa: F811
    """Ship.bind_outputs: the fused call writes CO's and the chosen point's outputs, the same values
    as its kinematics, and only for the points bound (another points array writes nothing)."""
    ship = compiled_ship(vessel, radiation, sea)
    points = np.vstack([np.zeros(3), ship.p.cg, ship.p.hardpoints])
    if not _points_kernel_reproduces_numpy(ship._compiled, len(points)):
        pytest.skip("the points kernel does not give numpy's bits here (the numpy code runs)")
    arrays = tuple(np.full(n, np.nan) for n in (3, 3, 3, 3, 3, 4, 3, 3, 4, 3, 3, 3, 3))
    assert ship.bind_outputs(points, arrays, 2)
    rng = np.random.default_rng(13)
    for k in range(6):
        IA, bias = articulated(rng)
        ship.set_loads(np.zeros((3, 3)), np.zeros((3, 3)), (0.0, 0.0, 0.0), IA, bias)
        ship.step(0.025, 0.05)
        other = points.copy()
        ship.points_kinematics(other)                       # not the points bound: nothing written
        assert not ship.outputs_written
        ship._cache = None
        pos, vel, acc, w, wd = ship.points_kinematics(points)
        assert ship.outputs_written
        q = ship.y[3:7]
        expected = (pos[0], vel[0], acc[0], w, wd, q, ship.euler, pos[2], q, vel[2], w, acc[2], wd)
        assert all(same(a, np.asarray(b, float)) for a, b in zip(arrays, expected))
    assert not ship.bind_outputs(points, arrays[:-1], 2)       # a wrong table: unbound
    ship._cache = None
    ship.points_kinematics(points)
    assert not ship.outputs_written


def test_fmu_outputs_with_and_without_the_bound_outputs(monkeypatch):
    """The Ship FMU's outputs when the kernel writes them (bound in _bind_outputs) and when the
    adapter does: the same bits over the lift's call pattern (set, doStep, get, refresh, get) and a
    restored state."""
    from fmus.ship import Ship as ShipFmu
    from tests.components.test_ship_speed_cache import COUPLING, all_outputs, coupling_values, start, vr

    slaves = [ShipFmu(instance_name=name, resources=".") for name in "ab"]
    for slave in slaves:
        slave.log = lambda message, *a, **k: None
        start(slave)
    slaves[1].ship.bind_outputs(None, None, 0)
    monkeypatch.setattr(slaves[1].ship, "bind_outputs", lambda *a: False)     # and after a restore
    vrs = vr(slaves[0], *COUPLING)
    state = None
    for k in range(20):
        outputs = []
        for slave in slaves:
            if k == 10:
                slave._set_fmu_state(state[slave.instance_name])
            slave.set_real(vrs, coupling_values(k))
            slave.do_step(0.025 * (k if k < 10 else k - 4), 0.025)      # from 10 on: again from 6
            assert not slave.failure
            assert slave is slaves[0] or not slave.ship.outputs_written
            first = all_outputs(slave)
            slave.set_real(vrs, coupling_values(k + 1))
            outputs.append((first, all_outputs(slave)))
        assert same(outputs[0][0], outputs[1][0]) and same(outputs[0][1], outputs[1][1])
        if k == 5:
            state = {slave.instance_name: slave._get_fmu_state() for slave in slaves}
    written = slaves[0].ship.outputs_written
    assert written == _points_kernel_reproduces_numpy(slaves[0].ship._compiled, 6)


def test_elevations_of_some_rows_are_those_of_all_rows(sea):
    """CompiledWaves.elevation with ``rows``: each entry asked is the same bits as with every row
    computed (the rows not asked keep older cosines), through time changes and moved points."""
    from components.kernels.ship import CompiledWaves

    parts, whole = CompiledWaves(sea, kernels.library()), CompiledWaves(sea, kernels.library())
    rng = np.random.default_rng(17)
    points = rng.uniform(-100.0, 100.0, (6, 2))
    t = 10.0
    for k in range(60):
        if k % 4 == 0:
            t += 0.025
        points = points.copy()
        points[int(rng.integers(0, 6))] += rng.normal(size=2)
        rows = [(0, 5), (1, 2, 3, 4), (5,), (0,), (2, 4)][k % 5]
        got = parts.elevation(t, points, rows)
        ref = whole.elevation(t, points)
        assert all(got[r].tobytes() == ref[r].tobytes() for r in rows)
