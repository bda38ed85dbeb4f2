"""SMS API 4.1.1's printed reference, the linear cantilever deflection F L^3 / (3 EI) = 0.45 m
(sms_api_digest.md 4.1.1), against our line as a beam (the set-up of tests/components/test_line_features.py,
which records the comparison with the exact elastica, 0.440014 m):

* at the report's load (5e4 N, a 15 % deflection) the linear formula overestimates by the geometric
  non-linearity, 2.2 % -- within the 3.5 % the report accepted for its own 0.434 m;
* at a tenth of the load the linear formula holds: 0.045 m, with 0.023 % left of the non-linearity
  (measured, 3 and 24 elements alike).
"""
from __future__ import annotations

import pytest

from tests.components.test_line_features import TIP_LOAD, beam

VALIDATION_COMPONENT = "cable"
SOURCE = "sms_api_digest.md 4.1.1 (delta = F L^3 / (3 EI))"


@pytest.mark.parametrize("n", [3, 24])
def test_cantilever_tip_deflection_vs_the_linear_formula(n, validation):
    out = {}
    for load in (TIP_LOAD, TIP_LOAD / 10):
        line = beam(n)
        line.set_tip_force([0.0, 0.0, load])
        assert line.static_equilibrium() < 1e-3
        out[load] = float(line.r[-1, 2])
    # the report's own 3.5 % (0.434 m): the linear formula is not exact at this load
    validation.record(case=f"SMS 4.1.1 cantilever tip deflection, {n} elements, vs the printed 0.45 m (linear)",
                      reference=0.45, ours=out[TIP_LOAD], tolerance=0.035, unit="m", source=SOURCE)
    # small load: the linear limit (0.023 % of non-linearity left; 0.2 % allows the 3-element mesh's error)
    validation.record(case=f"SMS 4.1.1 cantilever, a tenth of the load, {n} elements: tip deflection vs F L^3 / (3 EI)",
                      reference=0.045, ours=out[TIP_LOAD / 10], tolerance=2e-3, unit="m", source=SOURCE)
    assert out[TIP_LOAD] == pytest.approx(0.45, rel=0.035)
    assert out[TIP_LOAD / 10] == pytest.approx(0.045, rel=2e-3)
