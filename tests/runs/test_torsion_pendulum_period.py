"""SMS API 4.3.6 / 4.1.3 torsion period test (sms_api_digest.md sections 4.1 and 4.3: "4.1.3 Torsion
period test is the same as 4.3.6"): a payload hung on a cable with torsional stiffness GJ swings
about the cable axis.  The report's cable has no torsional inertia ("the twist response is
instantaneous", digest section 2.1 Torsion), so the reference is the torsion pendulum

    I theta'' = -(GJ / L) theta,        T = 2 pi sqrt(I L / GJ)

with I the payload's moment of inertia about the cable axis.  Run through the Payload and Cable
FMUs under our master (the same system as tests/master/test_cable_torsion.py, which checks its
energy); gravity off so that only the torsion mode moves.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from orchestration import simulate
from orchestration.system.model import Component, System

VALIDATION_COMPONENT = "cable"
SOURCE = "sms_api_digest.md 4.1.3/4.3.6 (torsion period; T = 2 pi sqrt(I L / GJ), twist without inertia)"


def torsion_pendulum(fmu_dir, GJ: float, L: float, I: float, w0: float) -> System:
    s = System("torsion_pendulum")
    s.add_component(Component("payload", fmu_dir / "Payload.fmu", {
        "mass": 1000.0, "inertia[0,0]": 2e3, "inertia[1,1]": 2e3, "inertia[2,2]": I, "gravity": 0.0,
        "attachment1.location[2]": -1.0, "initial.position[2]": L + 1.0, "initial.angular_velocity[2]": w0}))
    s.add_component(Component("cable", fmu_dir / "Cable.fmu", {
        "length": L, "diameter": 0.02, "mass_per_length": 1.0, "EA": 1e8, "GJ": GJ, "gravity": 0.0,
        "water_density": 0.0, "n_segments": 5, "end_a.swivel": False, "end_b.swivel": False,
        "end_a.body_attitude": True, "end_b.body_attitude": True, "end_a.position[0]": 0.0,
        "end_a.position[2]": L, "seabed.depth": 100.0}))
    for i in range(3):
        s.connect(f"payload.attachment1.position[{i}]", f"cable.end_a.position[{i}]")
        s.connect(f"payload.attachment1.velocity[{i}]", f"cable.end_a.velocity[{i}]")
        s.connect(f"payload.angular_velocity[{i}]", f"cable.end_a.angular_velocity[{i}]")
        s.connect(f"cable.end_a.force[{i}]", f"payload.attachment1.force[{i}]")
        s.connect(f"cable.end_a.moment[{i}]", f"payload.cg.moment[{i}]")
    for i in range(4):
        s.connect(f"payload.quaternion[{i}]", f"cable.end_a.quaternion[{i}]")
    return s


def upward_crossings(t: np.ndarray, x: np.ndarray) -> np.ndarray:
    i = np.nonzero((x[:-1] < 0.0) & (x[1:] >= 0.0))[0]
    return t[i] - x[i] * (t[i + 1] - t[i]) / (x[i + 1] - x[i])


@pytest.mark.parametrize("GJ, L, I", [(1e4, 10.0, 1e3), (4e4, 20.0, 5e2)])
def test_torsion_pendulum_period(fmu_dir, validation, GJ, L, I):
    reference = 2.0 * math.pi * math.sqrt(I * L / GJ)
    stop = 3.2 * reference
    r = simulate(torsion_pendulum(fmu_dir, GJ, L, I, 0.2), stop, 0.01, method="jacobi", extrapolation=1,
                 variables=["payload.angular_velocity[2]"])
    w = r["payload.angular_velocity[2]"]
    up = upward_crossings(r.time, w)
    period = float(np.mean(np.diff(up)))
    # crossings interpolated between 10 ms samples (a few 1e-4 s each), the period averaged over 2 cycles
    validation.record(case=f"SMS 4.3.6 torsion pendulum period, GJ {GJ:g} N m2, L {L:g} m, I {I:g} kg m2 "
                           "(Payload + Cable FMUs)",
                      reference=reference, ours=period, tolerance=1e-3, unit="s", source=SOURCE)
    assert len(up) >= 2
    assert period == pytest.approx(reference, rel=1e-3)
