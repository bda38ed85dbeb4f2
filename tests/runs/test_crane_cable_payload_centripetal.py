"""SMS API 4.4.8 (sms_api_digest.md section 5, "4.4 BoomCrane class"): crane, cable and payload,
centripetal -- the Crane, Cable and Payload FMUs under our master.

One revolute link about the vertical, a 67 500 kg cuboid 100 x 0.5 x 0.5 m (I = diag(2812.5,
5.61e7, 5.61e7) kg m2, CG 50 m from the joint); the cable of 4.4.7 (20 m, two elements) hangs from
the link 100 m from the joint, the 5 kg payload of 4.4.7 from it.  The link turns at a constant
rate w; the horizontal cable force on the payload is its centripetal force m R w^2.  Report: after
100 s, averaged over 10 s, expected "(5 kg)(100 m)(w)^2 = 0.106404 N", simulated 0.105994 N; the
rate the report prints (0.014712 rad/s) gives 0.10822 N, the expected value belongs to
w = 0.014588 rad/s (erratum 11), the rate run here.

The report spins the link up from rest (commanded 0.35 rad/s, reached 0.0147 rad/s) and averages
the swing out.  Here the system starts in the steady turn instead: the link at w, the payload moving
with it on its conical-pendulum radius (tan(phi) = w^2 R / g, the 21 m from the link to the payload's
CG), the cable with the motion of its ends (start_moving).  The radial component of the cable force
on the payload is averaged over three pendulum periods: what swing is left (from the compound
pendulum's slightly different cone) averages out over whole periods.  NED here (the joint axis
points down), base 1 m above the origin as the report's [-100, 0, 1] (z up).
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from orchestration import simulate
from orchestration.system.model import Component, System
from tests.models.hanging import link

VALIDATION_COMPONENT = "crane"
G, M, L, EA, MPL = 9.81, 5.0, 20.0, 2e4, 0.01
R, W = 100.0, 0.014588             # joint-to-cable radius [m]; the rate of the report's 0.106404 N [rad/s]
SOURCE = "sms_api_digest.md 4.4.8 (erratum 11: 0.106404 N is w = 0.014588 rad/s)"


def mechanism(path) -> None:
    link = {"name": "link1", "joint": "revolute", "a": 0.0, "alpha": 0.0, "d": 0.0, "theta": 0.0,
            "initial_position": 0.0, "initial_rate": W, "mass": 67500.0, "cg": [50.0, 0.0, 0.0],
            "inertia": [2812.5, 5.61e7, 5.61e7],
            # the rate held by a velocity loop (I about the joint 2.25e8 kg m2: time constant 0.2 s)
            "control": {"mode": "velocity", "kp": 1e9, "ki": 0.0, "kd": 0.0}}
    path.write_text(json.dumps({"format": "marine-cosim crane 1.0", "name": "sms_4_4_8",
                                "description": "SMS API 4.4.8 (Table 25), NED", "angle_unit": "rad",
                                "links": [link], "attachments": [{"name": "cable", "link": 0,
                                                                  "point": [R, 0.0, 0.0]}]}))


@pytest.mark.slow
def test_sms_4_4_8_crane_cable_payload_centripetal(fmu_dir, tmp_path, validation):
    mechanism(tmp_path / "crane.json")
    wire = L + (M * G * L + MPL * G * L**2 / 2) / EA     # stretched (tests/master/test_cable_payload_sms.py)
    length = wire + 1.0                                  # link tip to the payload's CG
    phi = math.atan(W**2 * R / G)
    for _ in range(50):                                  # the cone: tan(phi) = w^2 (R + l sin(phi)) / g
        phi = math.atan(W**2 * (R + length * math.sin(phi)) / G)
    d = length * math.sin(phi)
    tip_z = -1.0
    attach = np.array([d * wire / length, 0.0, tip_z + wire * math.cos(phi)])
    cg = np.array([d, 0.0, tip_z + length * math.cos(phi)])
    crane = {"mechanism": str(tmp_path / "crane.json"), "gravity": G, "base.position[0]": -R,
             "base.position[2]": tip_z, "joint1.setpoint": W}
    cable = {"length": L, "n_segments": 2, "EA": EA, "diameter": 0.005, "mass_per_length": MPL, "damping": -1.0,
             "water_density": 0.0, "gravity": G, "seabed.depth": 1e4, "start_moving": True,
             "end_a.position[2]": tip_z, "end_a.velocity[1]": W * R,
             **{f"end_b.position[{i}]": attach[i] for i in range(3)}, "end_b.velocity[1]": W * (R + attach[0])}
    payload = {"mass": M, "inertia[0,0]": 1.667, "inertia[1,1]": 1.667, "inertia[2,2]": 2.679e-4, "gravity": G,
               "hydro.volume": 0.0, "attachment1.location[2]": -1.0, "initial.angular_velocity[2]": W,
               **{f"initial.position[{i}]": cg[i] for i in range(3)}, "initial.velocity[1]": W * (R + d)}
    s = System("crane_cable_payload_centripetal")
    s.add_component(Component("crane", fmu_dir / "Crane.fmu", crane))
    s.add_component(Component("cable", fmu_dir / "Cable.fmu", cable))
    s.add_component(Component("payload", fmu_dir / "Payload.fmu", payload))
    link(s, "crane.attachment1", "cable.end_a")
    link(s, "payload.attachment1", "cable.end_b")
    period = 2.0 * math.pi * math.sqrt(length / G)       # the pendulum's
    stop = 4.0 * period
    names = ["payload.position[0]", "payload.position[1]", "cable.end_b.force[0]", "cable.end_b.force[1]",
             "crane.joint1.rate"]
    r = simulate(s, stop, 0.01, method="gauss-seidel", order=["crane", "cable", "payload"], variables=names)
    late = r.time > stop - 3.0 * period
    px, py = r["payload.position[0]"] + R, r["payload.position[1]"]       # from the joint axis
    radius = np.hypot(px, py)
    fx, fy = r["cable.end_b.force[0]"], r["cable.end_b.force[1]"]
    inward = -(fx * px + fy * py) / radius
    force = float(np.mean(inward[late]))
    rate = float(np.mean(r["crane.joint1.rate"][late]))
    magnitude = float(np.mean(np.hypot(fx, fy)[late]))
    print(f"\n4.4.8: inward force {force:.6f} N, |horizontal force| {magnitude:.6f} N, rate {rate:.6f} rad/s, "
          f"payload radius {np.mean(radius[late]):.4f} m; m R w^2 = {M * R * W**2:.6f} N")
    # the printed 0.106404 N is m R w^2 with R the joint-to-cable radius; the payload's cone adds
    # d / R = 0.05 %; the report's own error is 0.39 %
    validation.record(case="SMS 4.4.8 crane + cable + payload turning at 0.014588 rad/s: centripetal cable force "
                           "on the payload (3 Crane, Cable, Payload FMUs)", reference=0.106404, ours=force,
                      tolerance=5e-3, unit="N", source=SOURCE + ", report simulated 0.105994 N")
    # the same force against m r w^2 at our payload's own radius and rate
    exact = M * float(np.mean(radius[late])) * rate**2
    validation.record(case="SMS 4.4.8 centripetal cable force on the payload vs m r w^2 at its radius",
                      reference=exact, ours=force, tolerance=2e-3, unit="N", source="Newton's second law (steady turn)")
    assert rate == pytest.approx(W, rel=1e-6)
    assert force == pytest.approx(0.106404, rel=5e-3)
    assert force == pytest.approx(exact, rel=2e-3)
