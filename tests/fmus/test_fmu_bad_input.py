"""Bad input gives fmi2Error and a log message naming the variable and the value: never a crash,
a hang or a silent NaN output."""
from __future__ import annotations

import math

import numpy as np
import pytest
from fmpy.fmi1 import FMICallException

from tests.support.fmu_runner import FmuUnderTest

FMI2_ERROR = 3


@pytest.fixture
def payload(payload_fmu):
    fmu = FmuUnderTest(payload_fmu)
    yield fmu
    fmu.close()


def expect_error(call, *args):
    with pytest.raises(FMICallException) as info:
        call(*args)
    assert f"status {FMI2_ERROR}" in str(info.value), str(info.value)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_input_is_rejected_and_named(payload, value):
    payload.initialize()
    payload.set({"attachment1.force[2]": 100.0})
    expect_error(payload.set, {"attachment1.force[2]": value})
    assert any("attachment1.force[2]" in m and repr(value) in m for m in payload.errors()), payload.errors()
    # the previous value is kept and the run goes on with finite outputs
    assert payload.get(["attachment1.force[2]"])[0] == 100.0
    _, rows = payload.run(0.0, 0.1, 0.01, ["cg.position[2]", "cg.acceleration[2]"])
    assert np.all(np.isfinite(rows))


def test_negative_mass_is_rejected_and_named(payload):
    payload.slave.setupExperiment(startTime=0.0)
    payload.slave.enterInitializationMode()
    expect_error(payload.set, {"mass": -5.0})
    assert any("'mass'" in m and "-5.0" in m for m in payload.errors())


@pytest.mark.parametrize("tensor, culprit", [
    ({"inertia[0,0]": 100.0, "inertia[1,1]": 100.0, "inertia[2,2]": 100.0, "inertia[0,1]": 150.0}, "inertia"),
    ({"inertia[0,0]": 1.0, "inertia[1,1]": 1.0, "inertia[2,2]": 5.0}, "inertia"),   # triangle inequality
    ({"mass": 0.0}, "mass"),
])
def test_unphysical_parameters_fail_initialisation_with_a_named_error(payload, tensor, culprit):
    payload.slave.setupExperiment(startTime=0.0)
    payload.slave.enterInitializationMode()
    payload.set(tensor)
    expect_error(payload.slave.exitInitializationMode)
    assert any(f"'{culprit}" in m for m in payload.errors()), payload.errors()
    # and the instance refuses to step instead of producing garbage
    expect_error(payload.slave.doStep, 0.0, 0.01)
    assert any("cannot step" in m for m in payload.errors())


def test_overflowing_state_is_reported_not_output_silently(payload):
    payload.initialize({"attachment1.location[0]": 1.0})
    payload.set({"attachment1.force[1]": 1e308, "cg.force[1]": 1e308})
    expect_error(payload.slave.doStep, 0.0, 0.01)
    assert any("became" in m and ("nan" in m or "inf" in m) for m in payload.errors()), payload.errors()


@pytest.mark.parametrize("step", [0.0, -0.01])
def test_non_positive_step_is_an_error(payload, step):
    payload.initialize()
    expect_error(payload.slave.doStep, 0.0, step)
    assert any("step size" in m for m in payload.errors())


def test_fixed_parameter_cannot_change_after_initialisation(payload):
    payload.initialize()
    expect_error(payload.set, {"mass": 20.0})
    assert any("'mass'" in m and "fixed" in m for m in payload.errors())


def test_unknown_value_reference_is_an_error_and_the_instance_survives(payload):
    payload.initialize()
    with pytest.raises(FMICallException) as info:
        payload.slave.getReal([99999])
    assert f"status {FMI2_ERROR}" in str(info.value)
    assert any("99999" in m for m in payload.errors()), payload.errors()
    # pythonfmu would have freed the Python instance on an exception; ours is still alive
    _, rows = payload.run(0.0, 0.05, 0.01, ["cg.position[2]"])
    assert rows[-1, 0] > 0.0
