"""CPU seconds per simulated second of the RiggedBlock model (components/rope_bodies.py,
components/rope_contact.py): the 348 t block of Lee (2020) section 4.1 hanging on four slings from
one hook, straight (lugs on the top corners) and wrapped (each sling bent over a top edge), at the
FMU's 1 ms internal step with 10 ms communication steps and its per-step outputs (a fresh contact
update and the penetration check).  Frictionless and with edge and rope friction 0.2.
`python benchmarks/bench_rope_contact.py`; best of 2 repeats of 2 simulated seconds.
"""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from components.convex import Box  # noqa: E402
from components.rigid_body import RigidBody, RigidBodyParameters  # noqa: E402
from components.rope_bodies import Body, RopeBodies  # noqa: E402
from components.rope_contact import EdgeMesh, Rope, RopeEnd  # noqa: E402

MASS, G, EA = 348000.0, 9.81, 1e9
HOOK = np.array([0.0, 0.0, -30.0])
# the riggings of tests/fmus/test_rigged_block.py: lugs (body frame), unstretched length, damping
RIGGINGS = {
    "straight": ([(sx * 13.5, sy * 17.0, -4.5) for sx in (-1, 1) for sy in (-1, 1)],
                 math.dist(HOOK, (13.5, 17.0, -4.5)) * (1.0 - 1.3 * MASS * G / 4 / EA), 2e7),
    "wrapped": ([(sx * 13.5, sy * 8.0, 4.5) for sx in (-1, 1) for sy in (-1, 1)],
                (math.hypot(math.hypot(13.5, 25.5), 8.0) + 9.0) * (1.0 - 0.0015), 2e8),
}


def cpu_per_second(rigging: str, mu: float, seconds: float = 2.0) -> float:
    lugs, length, damping = RIGGINGS[rigging]
    body = RigidBody(RigidBodyParameters(mass=MASS, inertia=np.diag([2.5e7, 2.1e7, 3.8e7]), gravity=G))
    ropes = [Rope(RopeEnd(HOOK.copy()), RopeEnd(np.array(lug, dtype=float), 0), length, EA, mu_edge=(mu, mu),
                  mu_rope=(mu, mu), damping=damping) for lug in lugs]
    model = RopeBodies([Body(EdgeMesh.from_shape(Box((13.5, 17.0, 4.5))), body)], ropes, substep=1e-3)
    t0 = time.process_time()
    for _ in range(round(seconds / 0.01)):
        for r in range(len(ropes)):
            model.set_end_motion(r, 0, HOOK, np.zeros(3))
        model.step(0.01)
        model.evaluate_now()
        model.contact.max_penetration()
    return (time.process_time() - t0) / seconds


def main() -> None:
    print(f"{'rigging':<10}{'friction':>10}{'CPU s per simulated s':>24}")
    for rigging in RIGGINGS:
        for mu in (0.0, 0.2):
            best = min(cpu_per_second(rigging, mu) for _ in range(2))
            print(f"{rigging:<10}{mu:>10.1f}{best:>24.2f}")


if __name__ == "__main__":
    main()
