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
from tests.models.hanging import torsion_pendulum

VALIDATION_COMPONENT = "cable"
SOURCE = "sms_api_digest.md 4.1.3/4.3.6 (torsion period; T = 2 pi sqrt(I L / GJ), twist without inertia)"


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
