"""Hybrid feedforward + PID trajectory control (components/hybrid_control.py; Lee 2020 §4.3.1 and
§4.3.2, eqs. 110-111; digest §2.15, §2.16).

* §4.3.1 case 1 (gantry, 300 t, starting 1 m off in x): "converges to the trajectory within 40
  seconds; y, z and rotation follow exactly"; trolley forces peak (saturate at 50 kN) at the start
  and then decay;
* §4.3.2 (floating crane in JONSWAP waves from the stern, Table 4-6): maximum tracking error
  0.003 m in both cases; DAF 1.002 (case 1) and 1.006 (case 2).
Case 2 of §4.3.1 (wind) is not built: the digest gives no wind coefficients or areas.
"""
from __future__ import annotations

import numpy as np
import pytest

from components.crane_rigs import FloatingCrane, GantryCrane, floating_plan, gantry_plan
from components.hybrid_control import run, thesis_feedback
from components.wave_motion import BargeMotion

VALIDATION_COMPONENT = "crane trajectory control"


def test_gantry_case_1_converges_within_40_s(validation):
    """Thesis: converges within 40 s, y/z/rotation follow exactly, trolley force saturating at
    50 kN at the start.  Ours: |x error| 1 m -> 8.9 mm at 40 s (tolerance 1 cm after 40 s); y within
    1.8 mm (tolerance 2 mm); z: the load sinks 40 mm at 0.5 s (the winches pay out at once to the
    model's ropes, already sloped toward where the trolleys must go, while the saturated trolleys
    take seconds to get there; a deviation from "exactly"), 0.35 mm after 10 s (tolerances 50 mm,
    1 mm after 10 s); attitude 6.6 mrad at most,
    1.1 mrad after 10 s (tolerances 10, 2 mrad); trolley force at its 50 kN limit at the start,
    under 30 kN after 20 s."""
    rig = GantryCrane()
    res = run(rig, gantry_plan(), 60.0, feedback=thesis_feedback(), start_offset=np.array([1.0, 0.0, 0.0]))
    t, s = res.t, res.s
    x_after_40 = np.abs(s[t >= 40.0, 0]).max()
    print(f"case 1: |x error| after 40 s {x_after_40 * 1e3:.1f} mm; max y {np.abs(s[:, 1]).max() * 1e3:.2f} mm, "
          f"z {np.abs(s[:, 2]).max() * 1e3:.2f} mm, attitude {np.abs(s[:, 3:]).max() * 1e3:.2f} mrad")
    validation.record(case="§4.3.1 case 1: |x error| after 40 s, 1 m at the start (thesis: converged within 40 s)",
                      reference=0.0, ours=x_after_40, tolerance=0.01, tol_kind="abs", unit="m",
                      source="wire_rope_mooring_digest.md §2.15 (Lee 2020 §4.3.1)")
    assert s[0, 0] == pytest.approx(1.0)
    assert x_after_40 < 0.01
    assert np.abs(s[:, 1]).max() < 2e-3
    assert np.abs(s[:, 2]).max() < 0.05 and np.abs(s[t >= 10.0, 2]).max() < 1e-3
    assert np.abs(s[:, 3:]).max() < 1e-2 and np.abs(s[t >= 10.0, 3:]).max() < 2e-3
    trolley = np.abs(res.force[:, 1:3])
    assert trolley[:100].max() == pytest.approx(50e3)                 # saturated at the start
    assert trolley[t >= 20.0].max() < 30e3                            # then decays
    assert (res.T > 0.0).all()


CASES = {1: (0.003, 1.002, 0.998), 2: (0.003, 1.006, 0.994)}     # Table 4-6: error [m], DAF max, min


@pytest.mark.slow
@pytest.mark.parametrize("case", [1, 2])
def test_floating_crane_in_waves(case, validation):
    """Table 4-6 (digest §2.16): max tracking error 0.003 m, DAF 1.002 / 1.006 (min 299.48 /
    298.05 t of 300 t: 0.998 / 0.994).  Ours: error 2.1 / 1.3 mm (tolerance: within the thesis'
    3 mm, its last digit rounded up: < 3.5 mm); DAF within 0.005 of the thesis (half a percent of
    the weight: our plan's timing, a choice, sets 0.0028 of it in calm water)."""
    rig = FloatingCrane()
    rig.motion = BargeMotion.thesis_case(case, 60.0)
    res = run(rig, floating_plan(rig), 60.0, feedback=thesis_feedback())
    err = np.linalg.norm(res.s[:, :3], axis=1).max()
    daf_max, daf_min = res.daf()
    ref_err, ref_max, ref_min = CASES[case]
    print(f"case {case}: max tracking error {err * 1e3:.2f} mm, DAF {daf_max:.4f} / {daf_min:.4f}")
    src = "wire_rope_mooring_digest.md §2.16 (Lee 2020 §4.3.2, Table 4-6)"
    validation.record(case=f"§4.3.2 case {case}: max tracking error in waves (ours within the thesis' 3 mm)",
                      reference=ref_err, ours=err, error=max(0.0, err - ref_err), tolerance=0.5e-3,
                      tol_kind="abs", unit="m", source=src, note="error: by how much ours exceeds 3 mm")
    validation.record(case=f"§4.3.2 case {case}: DAF max", reference=ref_max, ours=daf_max, tolerance=0.005,
                      tol_kind="abs", source=src, note="our plan's timing (a choice) gives 1.0028 in calm water")
    validation.record(case=f"§4.3.2 case {case}: DAF min", reference=ref_min, ours=daf_min, tolerance=0.005,
                      tol_kind="abs", source=src)
    assert err < 3.5e-3
    assert daf_max == pytest.approx(ref_max, abs=0.005)
    assert daf_min == pytest.approx(ref_min, abs=0.005)
