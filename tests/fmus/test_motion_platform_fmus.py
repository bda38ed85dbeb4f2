"""The MotionPlatform, PlatformController and TipCompensator FMUs on their own: validation of the
modelDescription, a still deck, impossible poses and bad parameters as FMI errors."""
from __future__ import annotations

import numpy as np
import pytest
from fmpy.fmi1 import FMICallException
from fmpy.validation import validate_fmu

from tests.models import motion_platform as mp
from tests.support.fmu_runner import FmuUnderTest

STILL = {"base.quaternion[0]": 1.0}
STATIC = 9.81e6 / 3 / 0.9          # 1000 t on three legs at d ell / d z = -0.9


@pytest.mark.parametrize("model", ["MotionPlatform", "PlatformController", "TipCompensator"])
def test_model_description_validates(fmu_dir, model):
    assert validate_fmu(str(fmu_dir / f"{model}.fmu")) == []


def test_platform_holds_on_a_still_deck(fmu_dir):
    fmu = FmuUnderTest(fmu_dir / "MotionPlatform.fmu")
    try:
        fmu.initialize({**STILL, **{f"leg{k}.force_command": STATIC for k in (1, 2, 3)}})
        names = ["x[0]", "x[1]", "leg1.length", "leg2.force", "base.force[2]", "platform.top[2]"]
        _, rows = fmu.run(0.0, 1.0, 0.02, names)
        assert not fmu.errors()
        np.testing.assert_allclose(rows[-1, :3], [-8.0, 0.0, 6.0], atol=1e-4)   # the chain's 2 kg aside
        assert rows[-1, 3] == pytest.approx(STATIC)
        assert rows[-1, 4] == pytest.approx(9.81e6, rel=1e-5)        # the weight on the deck
        assert rows[-1, 5] == pytest.approx(-108.0, abs=1e-4)         # tower top 100 m above the base
    finally:
        fmu.close()


def test_overstretched_linkage_is_an_fmi_error(fmu_dir):
    """Full push on all legs: the platform rises until a linkage is stretched out; the step that gets
    there fails with the reason, not a NaN."""
    fmu = FmuUnderTest(fmu_dir / "MotionPlatform.fmu")
    try:
        fmu.initialize({**STILL, **{f"leg{k}.force_command": 2e7 for k in (1, 2, 3)}})
        t, failed = 0.0, False
        for _ in range(200):
            try:
                fmu.slave.doStep(t, 0.02)
            except FMICallException:
                failed = True
                break
            t += 0.02
        assert failed, "the platform never failed"
        assert any("over-stretched" in m or "stroke" in m for m in fmu.errors()), fmu.errors()
    finally:
        fmu.close()


@pytest.mark.parametrize("model, values, name", [
    ("MotionPlatform", {"linkage.alpha": 1.5}, "alpha"),
    ("MotionPlatform", {"cylinder.force_min": 3e7}, "cylinder.force_min"),
    ("PlatformController", {"method": 1, "vessel_file": "/nonexistent/barge.nc"}, "vessel_file"),
    ("TipCompensator", {"actuated_joints": "1,2"}, "actuated_joints"),
    ("TipCompensator", {"actuated_joints": "1,2,9"}, "actuated_joints"),
    # the knuckle boom's attachment 1 (the knuckle pin) is not moved by the knuckle: singular in any pose
    ("TipCompensator", {"tip_attachment": 1}, "tip_attachment"),
])
def test_bad_parameters_are_refused(fmu_dir, model, values, name):
    fmu = FmuUnderTest(fmu_dir / f"{model}.fmu")
    try:
        fmu.slave.setupExperiment(startTime=0.0)
        fmu.slave.enterInitializationMode()
        fmu.set(values)
        try:
            fmu.slave.exitInitializationMode()
        except Exception:
            pass
        assert any(name in m for m in fmu.errors()), fmu.errors()
    finally:
        fmu.close()


def test_controller_holds_the_platform_at_rest(fmu_dir):
    """The PID controller fed the still platform's legs keeps the static leg forces."""
    fmu = FmuUnderTest(fmu_dir / "PlatformController.fmu")
    try:
        fmu.initialize({"method": 0, **{f"leg{k}.length": 6.0 for k in (1, 2, 3)},
                        "ship.position[2]": mp.static_sinkage()})
        _, rows = fmu.run(0.0, 0.2, 0.02, [f"leg{k}.force_command" for k in (1, 2, 3)] + ["platform.x[0]"])
        assert not fmu.errors()
        np.testing.assert_allclose(rows[:, :3], STATIC, rtol=1e-6)
        np.testing.assert_allclose(rows[:, 3], -8.0, atol=1e-9)
    finally:
        fmu.close()


def test_controller_samples_on_its_own_clock(fmu_dir):
    """Each command comes out one sample period (0.02 s) after the measurements it is computed from,
    whatever the communication step: steps of 0.01 s give, at every 0.02 s, what steps of 0.02 s give,
    and hold it in between."""
    names = [f"leg{k}.force_command" for k in (1, 2, 3)] + ["platform.x[1]"]
    rows = {}
    for h in (0.02, 0.01):
        fmu = FmuUnderTest(fmu_dir / "PlatformController.fmu")
        try:
            fmu.initialize({"method": 0, "leg1.length": 6.0, "leg2.length": 6.05, "leg3.length": 6.0,
                            "ship.position[2]": mp.static_sinkage()})
            _, rows[h] = fmu.run(0.0, 0.2, h, names)
            assert not fmu.errors()
        finally:
            fmu.close()
    fine, coarse = rows[0.01], rows[0.02]
    np.testing.assert_array_equal(fine[1::2], coarse)             # t = 0.02, 0.04, ...
    np.testing.assert_array_equal(fine[2::2], coarse[:-1])        # t = 0.03, 0.05, ...: held
    assert np.ptp(coarse[:, 1]) > 1e3                              # the leg error drives the commands
