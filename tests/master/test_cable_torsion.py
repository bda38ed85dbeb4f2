"""A torsion pendulum through the FMUs (issue 22): a payload hung on a cable with torsional
stiffness, its attitude into the cable's end fixed to it (end_a.body_attitude), the cable's end
moment back into it.

Gravity off, so only the torsion mode moves: I theta'' = -(GJ / L) theta, omega = 1 rad/s. The
energy E = I w^2 / 2 + GJ L tau^2 / 2 (tau the cable's twist rate) is conserved by the physics;
what a coupling scheme adds is its own:

* the moment held over each step at its start value (zero-order hold, any fixed-step master
  without extrapolation) gains energy at the rate h omega^2 / 2: +35 % in 60 s at h = 0.01 s,
  whichever FMU steps first, now that the moment answers the twist of its own instant;
* held at its value extrapolated to the step's middle (``extrapolation=1``) it keeps it to 1e-4;
* before the fix the moment was formed from the twist held at the step's start and declared
  without feedthrough, one step behind the payload: +146 % (Jacobi), and extrapolation could not
  help (+35 %).
"""
from __future__ import annotations

import numpy as np
import pytest

from orchestration import simulate
from orchestration.system.model import System
from tests.models.hanging import torsion_pendulum

GJ, L, I = 1e4, 10.0, 1e3          # N m2, m, kg m2: omega = sqrt(GJ / (L I)) = 1 rad/s


def pendulum(fmu_dir) -> System:
    return torsion_pendulum(fmu_dir, GJ, L, I, 0.5)


def energy_drift(fmu_dir, stop: float, **algorithm) -> tuple[float, float]:
    r = simulate(pendulum(fmu_dir), stop, 0.01, variables=["payload.angular_velocity[2]", "cable.twist_rate",
                                                           "payload.euler[2]"], **algorithm)
    E = 0.5 * I * r["payload.angular_velocity[2]"] ** 2 + 0.5 * GJ * L * r["cable.twist_rate"] ** 2
    return float(np.max(np.abs(E / E[0] - 1.0))), float(np.max(np.abs(r["payload.euler[2]"])))


def test_torsion_pendulum_swings_and_keeps_its_energy_for_10_s(fmu_dir):
    drift, amplitude = energy_drift(fmu_dir, 10.0, method="jacobi", extrapolation=1)
    assert amplitude == pytest.approx(0.5, rel=1e-3)          # w0 / omega: the cable's torsion acts
    assert drift < 3e-4             # the zero-order hold: 5 % by now


@pytest.fixture(scope="module")
def held_drift(fmu_dir) -> float:
    """The zero-order hold's drift over the 60 s, one run for both methods: without extrapolation
    the Jacobi and Gauss-Seidel runs are the same run (measured: the recorded angular velocity,
    twist rate and yaw equal bit for bit over the 60 s)."""
    return energy_drift(fmu_dir, 60.0, method="jacobi")[0]


@pytest.mark.slow
@pytest.mark.parametrize("method", ["jacobi", "gauss-seidel"])
def test_torsion_pendulum_keeps_its_energy_within_0_1_percent_over_60_s(fmu_dir, method, held_drift):
    """The acceptance of issue 22: 60 s at 0.01 s steps (measured 1.1e-4, both methods); the
    zero-order hold's +35 % measured alongside, so the test sees the coupling, not the physics."""
    drift, _ = energy_drift(fmu_dir, 60.0, method=method, extrapolation=1)
    assert drift < 1e-3
    assert held_drift == pytest.approx(np.expm1(0.01 * 1.0 * 60.0 / 2.0), rel=0.05)     # h omega^2 T / 2
