"""SMS API 4.4.7 (sms_api_digest.md section 4.4): crane, cable and payload, static -- the Crane,
Cable and Payload FMUs under our master.

One revolute link about the vertical (tests/data/cranes/sms_crane_cable.json), base at [-1, 0, 0] so
the cable hangs from the world origin; a 20 m cable in two 10 m elements; a 5 kg payload (0.01793 x
0.01793 x 2 m, I = diag(1.667, 1.667, 2.679e-4)) hanging from its body point 1 m above its CG.
Expected: the payload CG at 21 m below the origin (report: z -21.00141, z up, "axially stiff" cable
with unlisted EA).  Our cable: EA 2e4 N, 0.01 kg/m, in air -- the bounce mode (14 rad/s) is
resolved by the 10 ms macro step (Gauss-Seidel, as tests/master/test_cable_payload_sms.py); the payload
then rests at 21 m + the static stretch (m g L + w L^2 / 2) / EA, checked to 0.1 mm, and the crane's
base carries the weight of everything.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from orchestration import simulate
from orchestration.system.model import Component, System
from tests.models.hanging import link

G, M, L, EA, MPL = 9.81, 5.0, 20.0, 2e4, 0.01
MECHANISM = Path(__file__).resolve().parents[1] / "data" / "cranes" / "sms_crane_cable.json"


@pytest.mark.slow
def test_sms_4_4_7_crane_cable_payload_static(fmu_dir, validation):
    crane = {"mechanism": str(MECHANISM), "gravity": G, "base.position[0]": -1.0}
    cable = {"length": L, "n_segments": 2, "EA": EA, "diameter": 0.005, "mass_per_length": MPL, "damping": -1.0,
             "water_density": 0.0, "gravity": G, "seabed.depth": 1e4, "end_a.position[2]": 0.0,
             "end_b.position[2]": L}
    payload = {"mass": M, "inertia[0,0]": 1.667, "inertia[1,1]": 1.667, "inertia[2,2]": 2.679e-4, "gravity": G,
               "hydro.volume": 0.0, "initial.position[2]": L + 1.0, "attachment1.location[2]": -1.0}
    s = System("crane_cable_payload")
    s.add_component(Component("crane", fmu_dir / "Crane.fmu", crane))
    s.add_component(Component("cable", fmu_dir / "Cable.fmu", cable))
    s.add_component(Component("payload", fmu_dir / "Payload.fmu", payload))
    link(s, "crane.attachment1", "cable.end_a")
    link(s, "payload.attachment1", "cable.end_b")
    names = ["payload.position[0]", "payload.position[1]", "payload.position[2]", "crane.base.force[2]",
             "crane.attachment1.position[2]", "cable.end_b.tension"]
    r = simulate(s, 30.0, 0.01, method="gauss-seidel", order=["crane", "cable", "payload"], variables=names)
    late = r.time > 25.0
    z = float(np.mean(r["payload.position[2]"][late]))
    expected = L + 1.0 + (M * G * L + MPL * G * L**2 / 2) / EA
    base = float(np.mean(r["crane.base.force[2]"][late]))
    weight = (10.0 + MPL * L + M) * G
    print(f"\n4.4.7: payload CG z {z:.6f} m (21 m + stretch: {expected:.6f}; report 21.00141 with its EA), "
          f"x, y {np.max(np.abs(r['payload.position[0]'][late])):.1e}, "
          f"{np.max(np.abs(r['payload.position[1]'][late])):.1e}; "
          f"crane base force {base:.3f} N vs weight {weight:.3f} N")
    validation.record(case="SMS 4.4.7 crane + cable + payload static: payload CG depth (21 m + stretch)",
                      reference=expected, ours=z, tolerance=1e-4, tol_kind="abs", unit="m",
                      source="sms_api_digest.md 4.4.7 (report 21.00141 m with its unlisted EA)")
    validation.record(case="SMS 4.4.7 crane base vertical force = total weight", reference=weight, ours=base,
                      tolerance=1e-3, unit="N", source="static equilibrium")
    assert z == pytest.approx(expected, abs=1e-4)
    assert np.max(np.abs(r["payload.position[0]"][late])) < 1e-6
    assert np.max(np.abs(r["payload.position[1]"][late])) < 1e-6
    assert base == pytest.approx(weight, rel=1e-3)
