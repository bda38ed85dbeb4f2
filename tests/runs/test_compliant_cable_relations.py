"""The relations of compliant_cable_digest.md (the OSP compliant-constraint cable) as validation
cases of our CompliantCable FMU (tests/fmus/test_compliant_cable.py checks the interface):

* "Effective axial restoring force: F = beta^2 / epsilon dL": a cable of N = 10 elements stretched
  by 1 cm, each element by 1 mm;
* "Effective Young's modulus: E = beta^2 L / (epsilon N A)": the same cable's stress over strain;
* "alpha = beta critical, alpha < beta under-damped": a body of 1 / (epsilon N) on the cable's end
  released 1 cm from rest overshoots by exp(-pi zeta / sqrt(1 - zeta^2)) at alpha = zeta beta, and
  not at alpha = beta (the effective damping scales with alpha / epsilon).
"""
from __future__ import annotations

import math

import pytest

from tests.fmus.test_compliant_cable import BETA, EPS, L, N, step_response, straight

VALIDATION_COMPONENT = "cable"
SOURCE = "compliant_cable_digest.md (Model)"


def test_axial_force_and_modulus(fmu_dir, validation):
    fmu = straight(fmu_dir / "CompliantCable.fmu", 0.01)
    try:
        F = fmu.get(["forceA[2]"])[0]
    finally:
        fmu.close()
    area = math.pi * 0.01 ** 2
    element = BETA ** 2 / EPS * 0.01 / N
    modulus = -F * L / (area * 0.01)
    # a static stretch: exact up to round-off
    validation.record(case="compliant cable: axial force of a 1 cm stretch over 10 elements vs beta^2 / epsilon dL",
                      reference=element, ours=-F, tolerance=1e-9, unit="N", source=SOURCE)
    validation.record(case="compliant cable: effective Young's modulus vs beta^2 L / (epsilon N A)",
                      reference=BETA ** 2 * L / (EPS * N * area), ours=modulus, tolerance=1e-9, unit="Pa",
                      source=SOURCE)
    assert -F == pytest.approx(element, rel=1e-9)
    assert modulus == pytest.approx(BETA ** 2 * L / (EPS * N * area), rel=1e-9)


@pytest.mark.slow
def test_damping_alpha_against_beta(fmu_dir, validation):
    zeta = 0.3
    under = step_response(fmu_dir, zeta * BETA)
    critical = step_response(fmu_dir, BETA)
    overshoot = -under.min() / 0.01
    reference = math.exp(-math.pi * zeta / math.sqrt(1 - zeta ** 2))
    # the 1 ms hold of the coupling (Jacobi) changes the damping a little (measured +0.8 %): 3 %
    validation.record(case="compliant cable: overshoot at alpha = 0.3 beta vs exp(-pi zeta / sqrt(1 - zeta^2))",
                      reference=reference, ours=overshoot, tolerance=0.03, unit="-", source=SOURCE)
    # critically damped: no crossing of the rest position, beyond the hold's 1 % of the release
    validation.record(case="compliant cable: overshoot at alpha = beta (critical: none)", reference=0.0,
                      ours=max(0.0, -critical.min() / 0.01), tolerance=0.01, tol_kind="abs", unit="-",
                      source=SOURCE)
    assert overshoot == pytest.approx(reference, rel=0.03)
    assert -critical.min() / 0.01 < 0.01
