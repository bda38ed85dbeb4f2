"""The Ship's reuse of work (the speed-ups of the offshore lift) gives exactly what a full
recomputation gives: forces kept over a change of the articulated inertia/bias, the kinematics kept
over a feedthrough refresh, the inputs compared by value, the batched set_real, the lazy outputs."""
from __future__ import annotations

import math

import numpy as np
import pytest

from components.ship import Ship
from components.waves import make_sea
from tests.components.test_ship import make_ship, radiation, vessel  # noqa: F401  (fixtures)

# every test twice, the compiled kernels and the numpy reference (tests/components/conftest.py): each
# has its own shortcuts
pytestmark = pytest.mark.usefixtures("implementation")

HARDPOINTS = ((-30.0, 4.0, -12.0), (25.0, 0.0, -8.0))


def articulated(scale: float):
    """An articulated inertia and bias like a crane's (symmetric positive definite, full)."""
    rng = np.random.default_rng(int(scale * 1000))
    A = rng.normal(size=(6, 6))
    IA = scale * (A @ A.T + 6 * np.eye(6)) * np.array([1, 1, 1, 10, 10, 10])[:, None] ** 0.5 \
        * np.array([1, 1, 1, 10, 10, 10])[None, :] ** 0.5 * 3e4
    bias = np.array([1e4, -2e4, -300e3 * 9.81, 5e4, -1e5, 2e4]) * scale
    return IA, bias


def fresh_copy(ship: Ship, vessel, radiation, sea) -> Ship:  # noqa: F811
    """A new Ship in the state of ``ship`` with its loads: everything recomputed from scratch. Same
    parameters and the same RAO object: the excitation's heading interpolation is redone only when
    the heading moves by more than a tolerance, so a new RAO would interpolate at another heading."""
    other = Ship(ship.p, sea=sea, rao=ship.rao)
    other.set_state(ship.get_state())
    return other


def outputs(ship: Ship, points: np.ndarray):
    return [ship.nu_dot, *ship.points_kinematics(points), np.array(ship.euler), ship.wave_excitation()]


def assert_identical(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert np.array_equal(np.asarray(x), np.asarray(y)), (x, y)


def test_a_new_articulated_inertia_or_bias_gives_what_a_full_recomputation_gives(vessel, radiation):  # noqa: F811
    sea = make_sea("jonswap", hs=3.0, period=8.0, mean_direction=2.0, seed=5)
    ship = make_ship(vessel, radiation, hardpoints=HARDPOINTS, sea=sea)
    points = np.array([[0.0, 0.0, 0.0], *HARDPOINTS])
    forces, moments = np.array([[0.0, 0.0, 2e5], [1e4, 0.0, 0.0]]), np.zeros((2, 3))
    for k in range(40):
        IA, bias = articulated(1.0 + 0.01 * k)
        ship.set_loads(forces, moments, (0.3, 0.1, 0.0), IA, bias)
        ship.step(0.025, 0.05)
        outputs(ship, points)                       # the outputs at the end of the step (cached)
        # the feedthrough refresh: a new inertia and bias at the same state (forces kept) ...
        IA2, bias2 = articulated(1.005 + 0.01 * k)
        ship.set_loads(forces, moments, (0.3, 0.1, 0.0), IA2, bias2)
        assert_identical(outputs(ship, points), outputs(fresh_copy(ship, vessel, radiation, sea), points))
        # ... the bias alone, as the next step's inputs (the inertia matrix kept) ...
        ship.set_loads(forces, moments, (0.3, 0.1, 0.0), IA2, 1.01 * bias2)
        assert_identical(outputs(ship, points), outputs(fresh_copy(ship, vessel, radiation, sea), points))
        # ... and a hardpoint force or the current at the same state: the forces are recomputed
        if k % 10 == 0:
            ship.set_loads(forces * 1.5, moments, (0.3, 0.1, 0.0), IA2, 1.01 * bias2)
            assert_identical(outputs(ship, points), outputs(fresh_copy(ship, vessel, radiation, sea), points))
            ship.set_loads(forces * 1.5, moments, (0.0, 0.4, 0.0), IA2, 1.01 * bias2)
            assert_identical(outputs(ship, points), outputs(fresh_copy(ship, vessel, radiation, sea), points))
            ship.set_loads(forces * 1.5, moments, (0.0, 0.4, 0.0))        # the crane let go
            assert_identical(outputs(ship, points), outputs(fresh_copy(ship, vessel, radiation, sea), points))
    assert abs(ship.position[2]) > 1e-3                                    # it moved


def test_steps_with_reused_first_stages_equal_steps_from_scratch(vessel, radiation):  # noqa: F811
    """The first RK4 stage reuses the end-of-step evaluation (whole when the loads are the same,
    forces only when the inertia or bias changed): the same state as a ship rebuilt every step."""
    sea = make_sea("jonswap", hs=3.0, period=8.0, mean_direction=2.0, seed=6)
    kept = make_ship(vessel, radiation, hardpoints=HARDPOINTS, sea=sea)
    scratch = make_ship(vessel, radiation, hardpoints=HARDPOINTS, sea=sea)
    forces, moments = np.zeros((2, 3)), np.zeros((2, 3))
    for k in range(60):
        IA, bias = articulated(1.0 + 0.02 * (k // 3))       # the same loads for 3 steps in a row
        for ship in (kept, scratch):
            ship.set_loads(forces, moments, (0.0, 0.0, 0.0), IA, bias * (1.0 + 0.001 * (k % 2)))
        kept.nu_dot                                          # outputs read: the end-of-step evaluation
        scratch = fresh_copy(scratch, vessel, radiation, sea)
        kept.step(0.025, 0.05)
        scratch.step(0.025, 0.05)
        assert np.array_equal(kept.y, scratch.y), k
    assert abs(kept.euler[0]) > 1e-5


@pytest.fixture
def adapter():
    from fmus.ship import Ship as ShipFmu

    slave = ShipFmu(instance_name="cache", resources=".")
    messages = []
    slave.log = lambda message, *a, **k: messages.append(message)
    slave.messages = messages
    return slave


def start(slave, **values):
    for name, value in {"sea.seed": 3, "sea.n_frequencies": 30, "wave_probe.position[0]": 5.0, **values}.items():
        info = slave.info[name]
        slave._set_checked(info, info.index, value)
    slave.setup_experiment(0.0)
    slave.enter_initialization_mode()
    slave.exit_initialization_mode()
    assert slave.initialized and not slave.failure


def vr(slave, *names):
    return [slave.info[n].value_reference for n in names]


COUPLING = [f"hardpoint1.{w}[{i}]" for w in ("bias_force", "bias_moment") for i in range(3)] + [
    f"hardpoint1.inertia_linear[{lab}]" for lab in ("0,0", "1,1", "2,2", "0,1", "0,2", "1,2")] + [
    f"hardpoint1.inertia_angular[{lab}]" for lab in ("0,0", "1,1", "2,2", "0,1", "0,2", "1,2")] + [
    "wave_probe.position[0]", "wave_probe.position[1]", "hardpoint2.force[2]"]


def coupling_values(k: int) -> list[float]:
    s = 1.0 + 0.01 * k
    return [1e3 * s, -2e3, -2.9e6 * s, 1e4, -2e4 * s, 5e3,
            3e5 * s, 3.1e5, 2.9e5, 1e3 * s, -2e3, 5e2,
            2e7 * s, 2.2e7, 1.5e6, 1e5, -3e4 * s, 2e4,
            5.0 + k, -2.0 * s, -1e4 * s]


def all_outputs(slave):
    vrs = [i.value_reference for i in slave.info.values() if i.causality == "output"]
    return np.array(slave.get_real(vrs))


def test_fmu_refresh_and_lazy_outputs_equal_a_restored_instance(adapter):
    """Per macro step as the offshore lift's master does it: set, doStep, get, set (refresh), get.
    Every output, eager or lazy, equals what an instance restored from the FMU state and given the
    same inputs computes from scratch."""
    from fmus.ship import Ship as ShipFmu

    slave = adapter
    start(slave)
    vrs = vr(slave, *COUPLING)
    for k in range(30):
        slave.set_real(vrs, coupling_values(k))
        slave.do_step(0.025 * k, 0.025)
        after_step = all_outputs(slave)
        slave.set_real(vrs, coupling_values(k) if k % 3 == 0 else coupling_values(k + 1))   # the refresh
        refreshed = all_outputs(slave)
        if k % 5 == 0:
            other = ShipFmu(instance_name="scratch", resources=".")
            start(other)
            other._set_fmu_state(slave._get_fmu_state())
            assert np.array_equal(all_outputs(other), refreshed)
            other.set_real(vrs, coupling_values(k))
            slave.set_real(vrs, coupling_values(k))
            assert np.array_equal(all_outputs(other), all_outputs(slave))
        assert np.all(np.isfinite(after_step)) and np.all(np.isfinite(refreshed))
    power = slave.get_real(vr(slave, "hardpoint2.power"))[0]
    velocity = np.array(slave.get_real(vr(slave, *(f"hardpoint2.velocity[{i}]" for i in range(3)))))
    force = slave.v["hardpoint2.force"]                 # the refresh's: coupling_values(30)
    assert force[2] == -1e4 * (1.0 + 0.01 * 30) and power == pytest.approx(force[2] * velocity[2], rel=1e-12)


def test_batched_set_real_checks_like_the_general_path(adapter):
    slave = adapter
    start(slave)
    vrs = vr(slave, "hardpoint1.bias_force[2]", "current.velocity[0]")
    before = slave.input_version
    slave.set_real(vrs, [-1e6, 0.5])
    assert slave.v["hardpoint1.bias_force"][2] == -1e6 and slave.v["current.velocity"][0] == 0.5
    assert slave.input_version > before and slave._inputs_changed and "update_other_outputs" in slave._stale
    slave.set_real(vrs, [math.nan, 0.7])                  # rejected by name, the valid value taken
    assert slave.v["hardpoint1.bias_force"][2] == -1e6 and slave.v["current.velocity"][0] == 0.7
    assert any("hardpoint1.bias_force[2]" in m and "not finite" in m for m in slave.messages)
    # a parameter after initialisation still goes through the general checks
    slave.set_real(vr(slave, "max_substep"), [0.01])
    assert slave.v["max_substep"] == 0.05 and any("fixed" in m for m in slave.messages)
