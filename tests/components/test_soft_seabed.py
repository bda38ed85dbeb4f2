"""A mooring line on a soft seabed: which static fairlead tension is right, the analytic catenary's
or the lumped line's (issue 22, point 6)?

The case is Lee's static mooring comparison (wire_rope_mooring_digest.md sections 1.5 and 2.8):
111 m of 203.9 kg/m line (2000 N/m, here in air), EA 61 560 kN, anchor on the seabed, fairlead
100 m away and 25.8 m up, and a seabed soft enough that the grounded line sinks 0.42 m.

* The lumped line (components/line.py, seabed springs kBot d per unit length): 10.25 t.
* The elastic catenary (components/catenary.py), as the line's initial shape uses it: the seabed a
  rigid plane lowered by the grounded line's penetration delta = w / (kBot d), anchor included:
  10.41 t.
* The reference: the same continuous line on the same elastic (Winkler) foundation, solved as a
  boundary-value problem (below) to 1e-6: 10.249 t.

The lumped line is right; the catenary's rigid, lowered seabed is the approximation. On a spring
seabed the line is not at depth delta everywhere on the ground: it sinks from 0 at the anchor, held
at the surface, to delta over a length sqrt(H / (kBot d)) (3.2 m here), and lifts back to 0 over
the same length before the touchdown point, with a continuous slope. The catenary's suspended part
hangs from delta below the surface instead, 0.42 m more of vertical span: +1.6 % of fairlead
tension. The difference vanishes with delta (stiffer seabed), as the cases below show.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import solve_bvp

from components.catenary import solve_catenary
from components.line import Line, LineParams

G = 9.81
MASS, EA, LENGTH, SPAN, DEPTH, DIAMETER = 203.9, 61.56e6, 111.0, 100.0, 25.8, 0.1
W = MASS * G


def foundation_reference(penetration: float) -> float:
    """Fairlead tension [N] of the continuous extensible line on a Winkler foundation of stiffness
    k = w / penetration per unit length, no friction: with s the unstretched arc length from the
    anchor, H the constant horizontal tension and V(s) the vertical one,

        x' = H / T (1 + T / EA),  z' = V / T (1 + T / EA),  V' = w - k max(-z, 0),  T = hypot(H, V),

    x(0) = z(0) = 0 (anchor on the seabed surface), x(L) = span, z(L) = depth (z up), solved by
    collocation (scipy's solve_bvp) from the rigid-seabed catenary."""
    k = W / penetration

    def f(s, y, p):
        H = p[0]
        T = np.hypot(H, y[2])
        stretch = 1.0 + T / EA
        return np.vstack([H / T * stretch, y[2] / T * stretch, W - k * np.maximum(-y[1], 0.0)])

    def bc(ya, yb, p):
        return np.array([ya[0], ya[1], yb[0] - SPAN, yb[1] - DEPTH])

    cat = solve_catenary(SPAN, DEPTH, LENGTH, W, EA, 0.0, seabed=True)
    s, x, z = cat.profile(2001)
    V = np.gradient(z, s) * cat.H / np.maximum(np.gradient(x, s), 1e-6)
    sol = solve_bvp(f, bc, s, np.vstack([x, z - 0.5 * penetration, V]), p=[cat.H], tol=1e-6, bc_tol=1e-8,
                    max_nodes=100000)
    assert sol.status == 0, sol.message
    return math.hypot(sol.p[0], float(sol.sol(LENGTH)[2]))


def lumped(penetration: float, n: int) -> float:
    p = LineParams(length=LENGTH, diameter=DIAMETER, mass_per_length=MASS, EA=EA, rho_water=0.0,
                   kBot=W / (penetration * DIAMETER), cBot=0.0, friction=0.0)
    line = Line(p, np.array([0.0, 0.0, DEPTH]), np.array([SPAN, 0.0, 0.0]), n, DEPTH, scheme="implicit")
    assert line.static_equilibrium() < 1e-8
    return float(np.linalg.norm(line.fairlead_force()))


def catenary_on_lowered_seabed(penetration: float) -> float:
    return solve_catenary(SPAN, DEPTH + penetration, LENGTH, W, EA, 0.0, seabed=True).tension_fairlead


def test_soft_seabed_lumped_line_is_right_and_the_catenary_is_1_6_percent_high():
    reference = foundation_reference(0.42)
    assert reference / G / 1e3 == pytest.approx(10.249, abs=1e-3)
    assert lumped(0.42, 100) == pytest.approx(reference, rel=2e-4)
    assert catenary_on_lowered_seabed(0.42) / reference - 1.0 == pytest.approx(0.016, abs=0.001)


@pytest.mark.parametrize("penetration", [0.042, 0.0042])
def test_the_difference_goes_with_the_penetration(penetration):
    reference = foundation_reference(penetration)
    # (the transition length, 1 m and 0.3 m, is now about one element: 2e-4 of discretisation)
    assert lumped(penetration, 100) == pytest.approx(reference, rel=5e-4)
    # the catenary's error is about w delta at the fairlead (its extra vertical span)
    assert catenary_on_lowered_seabed(penetration) - reference == pytest.approx(
        (catenary_on_lowered_seabed(0.42) - foundation_reference(0.42)) * penetration / 0.42, rel=0.3)
