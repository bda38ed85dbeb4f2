"""The work of one doStep is bounded by an estimate of its cost (issue 23): the line's FMUs (Cable,
CompliantCable) count sub-steps x nodes x the cost of a node (bending included) and their implicit
iterations; the PlatformController counts its samples.  A step too expensive is an fmi2Error
naming what makes it so, and the instance is in the error state."""
from __future__ import annotations

import pytest
from fmpy.fmi1 import FMICallException

from tests.support.fmu_runner import FmuUnderTest


def failed_step(fmu: FmuUnderTest, t: float, h: float) -> str:
    before = len(fmu.errors())
    with pytest.raises(FMICallException):
        fmu.slave.doStep(t, h)
    new = fmu.errors()[before:]
    assert new, "fmi2Error without a message"
    return new[0]


def test_the_campaigns_bending_damping_step_ends_in_a_clear_error(open_fmu):
    """Trial 176 of the 300-trial campaign (seed 0): a 10 s doStep with bending damping whose
    elements keep snapping took minutes (a dense Cholesky a solve, up to 31 x 9 solves a
    sub-step); it now stops at its work bound, naming the parameters."""
    cable = open_fmu("CompliantCable")
    cable.slave.setupExperiment(startTime=5.0)
    cable.slave.enterInitializationMode()
    cable.set({"BetaT": 0.14243280881548923, "maxSubstep": 0.02283973274686482, "dragNormal": 2.274964770185972,
               "seabedDepth": 1000207.1793903275, "AlphaM": 0.8586792555063262, "posA[1]": -0.4185731261726209,
               "retractedSpeedB": -0.20205745823706356, "retractedSpeedA": 1.2032026393878599})
    cable.slave.exitInitializationMode()
    message = failed_step(cable, 5.0, 10.0)
    assert "linear solves" in message and "AlphaM = 0.858679" in message and "maxSubstep" in message, message
    # the error state: every later call says why
    assert "linear solves" in failed_step(cable, 15.0, 0.01)


def test_a_step_over_a_long_line_is_refused_up_front(open_fmu):
    cable = open_fmu("CompliantCable")
    cable.initialize({"numElements": 2000, "Length": 2000.0})
    message = failed_step(cable, 0.0, 30.0)   # 1500 sub-steps of 2000 elements
    assert "1500 sub-steps" in message and "numElements = 2000" in message and "at most" in message, message
    assert "cannot step" in failed_step(cable, 30.0, 0.01)


def test_a_stiff_cables_step_with_bending_is_refused_up_front(open_fmu):
    cable = open_fmu("Cable")
    cable.initialize({"n_segments": 400, "EI": 1e4, "max_substep": 0.001})
    message = failed_step(cable, 0.0, 5.0)    # 5000 sub-steps of 400 elements with bending
    assert "n_segments = 400" in message and "EI = 10000" in message and "at most" in message, message


def test_the_controller_bounds_the_samples_of_one_step(open_fmu):
    """Trials 179 and 202 (seed 0): a doStep of 1e9 s sampled every 20 ms ran for ever."""
    controller = open_fmu("PlatformController")
    controller.initialize({"method": 0})
    before = len(controller.errors())
    with pytest.raises(FMICallException):
        controller.slave.doStep(0.0, 1e9)
    assert any("internal sub-steps" in m and "at most 200 s" in m for m in controller.errors()[before:])
