"""The Tysse-Egeland crane's tip kinematics (ship_crane_digest.md section 2.3, the paper's eqs. 109
and 113) through the articulated-body algorithm on components/data/cranes/tysse_egeland.json: the
tip position p = f(q_c) and its Jacobian

    J = [[c1 a_c, -s1 a_s, -a3 s1 s23], [-s1 a_c, -c1 a_s, -a3 c1 s23], [0, -a_c, -a3 c23]],
    a_c = a3 c23 + a2 c2,  a_s = a3 s23 + a2 s2,

so that the tip velocity in {0} (NED, z down) is J q_c' -- the mapping the paper's computed-torque
law (eqs. 114-116) is built on.  tests/runs/test_b4_ship_heavy_crane.py asserts eq. 109; here both
are validation cases, at 200 random joint states.
"""
from __future__ import annotations

import math

import numpy as np

from components.articulated_body import ArticulatedBody
from components.mechanism import preset

VALIDATION_COMPONENT = "crane"
SOURCE = "ship_crane_digest.md 2.3 (Tysse-Egeland eqs. 109, 113)"
D1, A2, A3 = 4.0, 2.5, 2.5


def paper(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s1, c1 = math.sin(q[0]), math.cos(q[0])
    s2, c2 = math.sin(q[1]), math.cos(q[1])
    s23, c23 = math.sin(q[1] + q[2]), math.cos(q[1] + q[2])
    ac, as_ = A3 * c23 + A2 * c2, A3 * s23 + A2 * s2
    p = np.array([s1 * ac, c1 * ac, -D1 - as_])
    J = np.array([[c1 * ac, -s1 * as_, -A3 * s1 * s23],
                  [-s1 * ac, -c1 * as_, -A3 * c1 * s23],
                  [0.0, -ac, -A3 * c23]])
    return p, J


def test_tip_position_and_jacobian_vs_the_paper(validation):
    body = ArticulatedBody(preset("tysse_egeland"))
    rng = np.random.default_rng(113)
    worst_p = worst_v = 0.0
    for _ in range(200):
        q, qd = rng.uniform(-math.pi, math.pi, 3), rng.uniform(-1.0, 1.0, 3)
        pos, vel, _ = body.forward_dynamics(q, qd, np.zeros(3)).point_kinematics(2, [0.0, 0.0, 0.0])
        p, J = paper(q)
        worst_p = max(worst_p, float(np.max(np.abs(pos - p))))
        worst_v = max(worst_v, float(np.max(np.abs(vel - J @ qd))))
    # two formulations of the same kinematics: round-off
    validation.record(case="Tysse-Egeland crane tip position vs eq. 109 (200 random states)", reference="eq. 109",
                      ours=f"worst {worst_p:.1e} m", error=worst_p, tolerance=1e-12, tol_kind="abs", unit="m",
                      source=SOURCE)
    validation.record(case="Tysse-Egeland crane tip velocity vs J(q) q' of eq. 113 (200 random states)",
                      reference="eq. 113", ours=f"worst {worst_v:.1e} m/s", error=worst_v, tolerance=1e-12,
                      tol_kind="abs", unit="m/s", source=SOURCE)
    assert worst_p < 1e-12 and worst_v < 1e-12
