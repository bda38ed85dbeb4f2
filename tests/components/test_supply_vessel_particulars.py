"""The MSS supply vessel our Ship component carries (components/data/vessels/supply.nc, from MSS
supply.mat) against the numbers ship_crane_digest.md section 4.1 gives for it: the cross-check with
MSS supply.log (displacement, radii of gyration) and the quick hydrostatics table (waterplane area,
C33, C44, I44 and the periods without added mass).

These are the data the Tysse-Egeland paper takes its ship from; the natural periods with added mass,
sinkage and heel are in tests/components/test_vessel_data.py and tests/components/test_ship.py.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from components import vessel_data as vd

VALIDATION_COMPONENT = "ship"
TABLE = "ship_crane_digest.md 4.1 (quick hydrostatics from the MSS data)"
LOG = "ship_crane_digest.md 4.1 (MSS supply.log)"


@pytest.fixture(scope="module")
def supply() -> vd.VesselData:
    return vd.load_vessel(vd.default_vessel_path())


def rigid_body_about_cg(v: vd.VesselData) -> np.ndarray:
    """Diagonal inertias about the CG: MRB (about CO) minus the parallel-axis terms m (|r|^2 - r_i^2)."""
    r = np.asarray(v.cg, float)
    return np.array([v.MRB[3 + i, 3 + i] - v.mass * (r @ r - r[i] ** 2) for i in range(3)])


def test_supply_particulars_vs_mss_log(supply, validation):
    v = supply
    I = rigid_body_about_cg(v)
    # every value printed to its last digit: half a unit of that digit is the tolerance
    cases = (("displacement (rho nabla)", 6362.21, v.rho * v.particulars["nabla"] / 1e3, "t", 0.005),
             ("mass", 6362.21, v.mass / 1e3, "t", 0.005),
             ("roll radius of gyration r44 about the CG", 6.72, math.sqrt(I[0] / v.mass), "m", 0.005),
             ("pitch radius of gyration r55 about the CG", 20.7, math.sqrt(I[1] / v.mass), "m", 0.05),
             ("yaw radius of gyration r66 about the CG", 20.7, math.sqrt(I[2] / v.mass), "m", 0.05))
    for what, ref, ours, unit, tol in cases:
        validation.record(case=f"supply vessel data: {what}", reference=ref, ours=ours, tolerance=tol + 1e-9,
                          tol_kind="abs", unit=unit, source=LOG)
    for _, ref, ours, _, tol in cases:
        assert abs(ours - ref) <= tol + 1e-9


def test_supply_quick_hydrostatics(supply, validation):
    v = supply
    C33, C44 = v.restoring[2, 2], v.restoring[3, 3]
    I44 = rigid_body_about_cg(v)[0]
    cases = (("waterplane area C33 / (rho g)", 1383.0, C33 / (v.rho * v.g), "m^2", 0.5),
             ("heave stiffness C33", 13.9, C33 / 1e6, "MN/m", 0.05),
             ("roll stiffness C44", 133.8, C44 / 1e6, "MN m/rad", 0.05),
             ("roll inertia I44 = m r44^2", 2.87, I44 / 1e8, "1e8 kg m^2", 0.005),
             ("heave period without added mass 2 pi sqrt(m / C33)", 4.25, 2 * math.pi * math.sqrt(v.mass / C33),
              "s", 0.005),
             ("roll period without A44 2 pi sqrt(I44 / C44)", 9.2, 2 * math.pi * math.sqrt(I44 / C44), "s", 0.05))
    for what, ref, ours, unit, tol in cases:
        # to the printed digit (half a unit of the last digit)
        validation.record(case=f"supply vessel: {what}", reference=ref, ours=ours, tolerance=tol + 1e-9,
                          tol_kind="abs", unit=unit, source=TABLE)
    for _, ref, ours, _, tol in cases:
        assert abs(ours - ref) <= tol + 1e-9
