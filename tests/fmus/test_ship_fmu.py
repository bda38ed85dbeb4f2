"""The Ship FMU: outputs, feedthrough, reproducible seas, complete state, bad input."""
from __future__ import annotations

import numpy as np
import pytest
from fmpy.fmi1 import FMICallException

from components.rotations import quat_to_matrix
from tests.support.fmu_runner import FmuUnderTest


@pytest.fixture(scope="module")
def ship_fmu(fmu_dir):
    return fmu_dir / "Ship.fmu"


@pytest.fixture
def ship(ship_fmu):
    fmu = FmuUnderTest(ship_fmu)
    yield fmu
    fmu.close()


SEA = {"sea.spectrum": 1, "sea.hs": 3.0, "sea.period": 8.0, "sea.direction": 2.4, "sea.seed": 7,
       "sea.n_frequencies": 40, "sea.spreading": 4.0, "sea.n_directions": 5}


def test_hardpoint_kinematics_follow_the_ship(ship):
    ship.initialize({**SEA, "hardpoint2.location[0]": 20.0, "hardpoint2.location[2]": -10.0})
    ship.run(0.0, 20.0, 0.1, ["position[2]"])
    pos = ship.get([f"position[{i}]" for i in range(3)])
    q = ship.get([f"quaternion[{i}]" for i in range(4)])
    hp = ship.get([f"hardpoint2.position[{i}]" for i in range(3)])
    assert np.allclose(hp, pos + quat_to_matrix(q) @ np.array([20.0, 0.0, -10.0]), atol=1e-9)
    assert np.allclose(ship.get([f"hardpoint2.quaternion[{i}]" for i in range(4)]), q)
    assert abs(ship.get(["euler[1]"])[0]) > 1e-4     # the sea moves it


def test_acceleration_depends_directly_on_the_hardpoint_force(ship):
    ship.initialize({"sea.spectrum": 0})
    before = ship.get(["hardpoint1.acceleration[2]", "acceleration[2]"])
    ship.set({"hardpoint1.force[2]": 1e6})               # 100 t on the crane base, no step taken
    after = ship.get(["hardpoint1.acceleration[2]", "acceleration[2]"])
    assert np.allclose(before, 0.0, atol=1e-12) and after[0] > 1e-3 and after[1] > 1e-3


@pytest.mark.slow
def test_same_seed_same_sea_other_seed_other_sea(ship_fmu):
    def run(seed):
        fmu = FmuUnderTest(ship_fmu, instance_name=f"s{seed}")
        try:
            fmu.initialize({**SEA, "sea.seed": seed})
            return fmu.run(0.0, 10.0, 0.1, ["wave.elevation", "position[2]", "euler[0]"])[1]
        finally:
            fmu.close()

    a, b, c = run(7), run(7), run(8)
    assert np.array_equal(a, b) and not np.allclose(a, c)


@pytest.mark.slow
def test_state_round_trip_with_waves_and_memory(ship, ship_fmu):
    names = [v.name for v in ship.md.modelVariables if v.causality == "output"]
    ship.initialize({**SEA, "hardpoint1.inertia_linear[0,0]": 1e5, "hardpoint1.inertia_linear[1,1]": 1e5,
                     "hardpoint1.inertia_linear[2,2]": 1e5})
    ship.set({"hardpoint1.force[2]": 5e5, "current.velocity[0]": 0.5})
    t, _ = ship.run(0.0, 5.0, 0.1, names)
    state = ship.slave.getFMUstate()
    blob = ship.slave.serializeFMUstate(state)
    _, first = ship.run(t, t + 5.0, 0.1, names)
    ship.slave.setFMUstate(state)
    _, second = ship.run(t, t + 5.0, 0.1, names)
    assert np.array_equal(first, second)
    other = FmuUnderTest(ship_fmu, instance_name="other")
    try:
        other.initialize({})
        other.slave.setFMUstate(other.slave.deSerializeFMUstate(blob))
        _, third = other.run(t, t + 5.0, 0.1, names)
        assert np.array_equal(first, third)
    finally:
        other.close()


def test_missing_vessel_file_is_named(ship):
    ship.slave.setupExperiment(startTime=0.0)
    ship.slave.enterInitializationMode()
    ship.set({"vessel_file": "/nonexistent/barge.nc"})
    with pytest.raises(FMICallException):
        ship.slave.exitInitializationMode()
    assert any("vessel_file" in m and "barge.nc" in m for m in ship.errors()), ship.errors()


def test_bad_sea_parameters_are_refused(ship):
    ship.slave.setupExperiment(startTime=0.0)
    ship.slave.enterInitializationMode()
    with pytest.raises(FMICallException):
        ship.set({"sea.hs": -1.0})
    with pytest.raises(FMICallException):
        ship.set({"sea.spectrum": 7})
    assert any("'sea.hs'" in m for m in ship.errors()) and any("'sea.spectrum'" in m for m in ship.errors())
