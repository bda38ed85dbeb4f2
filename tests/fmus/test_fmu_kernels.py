"""The FMUs carry the compiled kernels (components/kernels) and run them, with no compiler needed
where they run: the library sits beside the kernels' Python in the FMU's private package. Each FMU
(Crane, Ship, Payload, Cable, CompliantCable, Contact: a box settling flat onto a deck, where the
dashpots' quadrature is exact in both; Winch) run with the kernels agrees with the same FMU run on the numpy reference
(MARINE_COSIM_KERNELS=0) to rounding: relative 1e-9 of each output's largest magnitude over 2 s
(measured below 1e-12). The Winch's kernel gives the Python's bits, and the Winch FMU does too."""
from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import build_fmus
from components import kernels
from tests.support.fmu_runner import FmuUnderTest

pytestmark = pytest.mark.gcc          # the build compiles the kernels

CASES = {
    "Crane": ({"mechanism": "knuckle_boom", "base.velocity[2]": 0.3, "base.angular_velocity[0]": 0.02,
               "attachment2.force[2]": 5e4, "joint2.setpoint": 1.1},
              ["joint1.position", "joint2.position", "joint4.position", "base.force[2]", "base.moment[1]",
               "attachment2.position[2]", "attachment2.acceleration[2]", "base.inertia_linear[0,0]",
               "base.bias_force[2]"]),
    "Ship": ({"sea.spectrum": 1, "sea.hs": 2.5, "sea.period": 8.0, "sea.direction": 2.88, "sea.seed": 11,
              "hardpoint1.force[2]": 1e6, "hardpoint1.inertia_linear[0,0]": 1e5, "hardpoint1.inertia_linear[1,1]": 1e5,
              "hardpoint1.inertia_linear[2,2]": 1e5, "hardpoint1.bias_force[2]": 5e5},
             ["position[2]", "euler[0]", "euler[1]", "euler[2]", "velocity[0]", "acceleration[2]",
              "angular_acceleration[0]", "hardpoint1.position[2]", "hardpoint1.acceleration[2]"]),
    # the 50 m chain paying out at the fairlead in a current; a hanging wire with a winch (no bending)
    "Cable": ({"winch.end": 2, "winch.speed": 0.5, "current.velocity[0]": 0.5},
              ["end_a.force[0]", "end_a.force[2]", "end_b.force[0]", "end_b.force[2]", "end_b.tension",
               "max_tension", "segment_count"]),
    "CompliantCable": ({"BetaM": 0.0, "BetaT": 0.0, "AlphaM": 0.0, "waterDensity": 1025.0, "posA[2]": 99.0,
                        "velB[0]": 0.3, "retractedSpeedA": 0.2},
                       ["forceA[0]", "forceA[2]", "forceB[0]", "forceB[2]"]),
    # a box settling flat onto a deck (two boxes: the contact kernel), sliding slowly
    "Contact": ({"body2.size[0]": 10.0, "body2.size[1]": 10.0, "body1.position[2]": -0.99, "body1.velocity[2]": 1e-3,
                 "body1.velocity[0]": 0.01},
                ["body1.force[0]", "body1.force[2]", "body1.moment[1]", "body2.moment[1]", "pair12.volume",
                 "pair12.normal_force", "pair12.point[2]", "pair12.distance"]),
    # heave compensation paying out against a weak motor (power limit), the drive reversing the drum
    "Winch": ({"mode": 2, "line.tension": 4e5, "hardpoint.velocity_down": -0.3, "speed_setpoint": 0.2,
               "motor.max_power": 1e5, "max_substep": 0.003},
              ["payout.speed", "payout.length", "payout.line_length", "payout.reference_speed", "drum.speed",
               "motor.torque", "motor.power"]),
    "Payload": ({"attachment1.force[2]": -5e4, "initial.angular_velocity[0]": 0.1},
                ["position[0]", "position[2]", "quaternion[1]", "velocity[2]", "angular_velocity[0]",
                 "attachment1.position[2]"]),
}


@pytest.mark.parametrize("model", sorted(CASES))
def test_fmus_ship_the_kernel_library(fmu_dir, model):
    with zipfile.ZipFile(fmu_dir / f"{model}.fmu") as archive:
        names = [n for n in archive.namelist() if n.endswith(f"/components/kernels/{kernels.LIBRARY}")]
        assert len(names) == 1, archive.namelist()
        assert build_fmus.glibc_floor([archive.read(names[0])]) <= (2, 17)
        assert not [n for n in archive.namelist() if n.endswith((".c", ".h"))], "sources stay at home"


def _run(fmu_dir, model, tmp_path, label):
    start, names = CASES[model]
    fmu = FmuUnderTest(fmu_dir / f"{model}.fmu", instance_name=label, unzip_dir=str(tmp_path / label))
    try:
        fmu.initialize(start)
        _, rows = fmu.run(0.0, 2.0, 0.01, names)
        assert not fmu.errors(), fmu.errors()
        # the kernels module of the FMU's private package (FMUs of the same sources share it)
        package = build_fmus.read_settings(fmu_dir / f"{model}.fmu", "loader.txt")["package"]
        own = sys.modules[f"{package}.components.kernels"]
        return rows, own.status(), Path(own.__file__).parent
    finally:
        fmu.close()


@pytest.mark.parametrize("model", sorted(CASES))
def test_fmus_run_their_kernels_and_agree_with_the_numpy_reference(fmu_dir, model, tmp_path, monkeypatch):
    compiled, status, where = _run(fmu_dir, model, tmp_path, "compiled")
    assert status == f"compiled kernels from {where / kernels.LIBRARY}", status     # the FMU's own copy
    monkeypatch.setenv("MARINE_COSIM_KERNELS", "0")
    reference, status, _ = _run(fmu_dir, model, tmp_path, "numpy")
    assert "disabled" in status, status
    span = np.maximum(np.abs(reference).max(axis=0), 1e-300)
    assert np.all(np.isfinite(compiled))
    assert np.all(np.abs(compiled - reference).max(axis=0) <= 1e-9 * span), (
        np.abs(compiled - reference).max(axis=0) / span)


def test_the_winch_fmu_gives_the_same_bits_with_and_without_its_kernel(fmu_dir, tmp_path, monkeypatch):
    """winch.c reproduces the Winch's Python bit for bit (tests/components/test_winch_kernel.py): so does the FMU."""
    compiled, status, _ = _run(fmu_dir, "Winch", tmp_path, "compiled")
    assert status.startswith("compiled kernels from"), status
    monkeypatch.setenv("MARINE_COSIM_KERNELS", "0")
    reference, status, _ = _run(fmu_dir, "Winch", tmp_path, "numpy")
    assert "disabled" in status, status
    assert np.array_equal(compiled.view(np.int64), reference.view(np.int64))
    assert np.ptp(compiled[:, 4]) > 0.0 and np.ptp(compiled[:, 5]) > 0.0      # the drum and the motor moved
