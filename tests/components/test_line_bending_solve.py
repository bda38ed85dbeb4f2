"""The implicit line's linear solve with bending (components/line.py: the banded system of the
spline's operators instead of the dense bending stiffness) against the dense solve; the bound on a
step's work."""
from __future__ import annotations

import numpy as np
import pytest

from components.line import Line, LineParams, LineWorkExceeded


@pytest.mark.parametrize("ends", [{}, {"free_b": True}, {"clamped_a": True, "clamped_b": True}])
def test_the_banded_bending_solve_is_the_dense_one(ends):
    rng = np.random.default_rng(1)
    p = LineParams(length=100.0, diameter=0.04, mass_per_length=10.0, EA=1e7, EI=1e4, bending_damping=50.0)
    line = Line(p, np.zeros(3), np.array([0.0, 0.0, 90.0]), 20, 1e6, scheme="implicit", static_init=False, **ends)
    d = line._dyn
    nd = d.stop - d.start
    X = rng.standard_normal((nd, 3, 3))
    diag = X @ X.transpose(0, 2, 1) + 5.0 * np.eye(3)
    off = 0.3 * rng.standard_normal((nd - 1, 3, 3))
    rhs = rng.standard_normal((nd, 3))
    for c in (0.7, 1e-4, 1e3):
        A = line._dense(diag, off) + np.kron(c * line._bend.K[d, d], np.eye(3))
        dense = np.linalg.solve(A, rhs.ravel()).reshape(nd, 3)
        banded = line._solve(diag, off, rhs, c)
        assert np.max(np.abs(banded - dense)) <= 1e-10 * np.max(np.abs(dense)), c


def test_a_step_stops_at_its_work_limit():
    p = LineParams(length=100.0, diameter=0.04, mass_per_length=10.0, EA=1e7, EI=1e4)
    line = Line(p, np.zeros(3), np.array([0.0, 0.0, 90.0]), 20, 1e6, scheme="implicit", substep=0.01)
    n, cost = line.step_cost(1.0)
    assert n == 100 and cost == pytest.approx(100 * line.solve_cost())
    line.work_limit = 10 * line.solve_cost()
    with pytest.raises(LineWorkExceeded, match="linear solves in this step"):
        line.step(1.0)
    assert line.solves - line._step_solves == 11      # the solve over the limit is not taken
    line.work_limit = None
    line.step(0.05)                                    # unbounded again


def test_the_stability_limit_of_a_long_line_with_bending_is_the_full_eigenvalue_solves():
    """Above 200 nodes the largest bending eigenvalue comes from Lanczos (a full solve of the
    2001 x 2001 matrix of a 2000-element line took seconds)."""
    p = LineParams(length=600.0, diameter=0.04, mass_per_length=10.0, EA=1e7, EI=1e4)
    line = Line(p, np.zeros(3), np.array([0.0, 0.0, 590.0]), 300, 1e6, scheme="implicit", static_init=False)
    m = p.mass_per_length * line.l_node
    top = np.linalg.eigvalsh(p.EI * line._bend.K / np.sqrt(np.outer(m, m)))[-1]
    axial = 2.0 * np.sqrt(p.EA / (p.mass_per_length * line.l0 ** 2))
    assert line.omega_max == pytest.approx(np.hypot(axial, np.sqrt(top)), rel=1e-9)
    assert line.dt_stable == pytest.approx(2.0 / line.omega_max)
