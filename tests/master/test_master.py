"""The fixed-step master on systems of Payload FMUs whose answers are known in closed form.

Free bodies (gravity off) driven through connections give polynomial motions, so Jacobi,
Gauss-Seidel, extrapolation and multi-rate each have an exact expected value.
"""
from __future__ import annotations

import numpy as np
import pytest

from orchestration.master.algorithms.fixed import FixedStepAlgorithm, gauss_seidel_order
from orchestration.master.execution import Execution, ExecutionError, _extrapolate
from orchestration.master.observers.results import MemoryObserver
from tests.support.master import run_master as simulate
from orchestration.system.model import Component, System

M = 2.0   # kg of the driven body


def chain(payload_fmu, multiple_b: int = 1) -> System:
    """a falls freely under gravity; b (no gravity) is pushed along x by a force equal to a's depth."""
    s = System("chain")
    s.add_component(Component("a", payload_fmu, {"mass": 1.0}))
    s.add_component(Component("b", payload_fmu, {"mass": M, "gravity": 0.0}, step_multiple=multiple_b))
    s.connect("a.cg.position[2]", "b.cg.force[0]")
    return s


def force_history(result) -> np.ndarray:
    return result["b.cg.force[0]"]


def test_jacobi_feeds_outputs_from_the_start_of_the_step(payload_fmu):
    h = 0.1
    r = simulate(chain(payload_fmu), 1.0, h, method="jacobi", variables=["a.cg.position[2]", "b.cg.force[0]"])
    z = 0.5 * 9.81 * r.time**2
    assert np.allclose(r["a.cg.position[2]"], z, rtol=1e-12, atol=1e-14)
    # the force used for the step ending at t is a's depth at t - h
    assert np.allclose(force_history(r)[1:], z[:-1], rtol=1e-12, atol=1e-14)


def test_gauss_seidel_feeds_the_new_output_downstream(payload_fmu):
    h = 0.1
    r = simulate(chain(payload_fmu), 1.0, h, method="gauss-seidel", variables=["a.cg.position[2]", "b.cg.force[0]"])
    z = 0.5 * 9.81 * r.time**2
    assert np.allclose(force_history(r)[1:], z[1:], rtol=1e-12)


@pytest.mark.parametrize("order", [1, 2])
def test_extrapolation_holds_the_midpoint_value(payload_fmu, order):
    h = 0.1
    r = simulate(chain(payload_fmu), 1.0, h, method="jacobi", extrapolation=order,
                 variables=["a.cg.position[2]", "b.cg.force[0]"])
    t = r.time
    z = lambda x: 0.5 * 9.81 * x**2
    used = force_history(r)[1:]
    step_start = t[:-1]
    if order == 2:
        # a's depth is quadratic in t: order-2 extrapolation is exact once 3 points exist
        expected = z(step_start + 0.5 * h)
        assert np.allclose(used[2:], expected[2:], rtol=1e-10)
    else:
        # linear through the last two points, evaluated at the midpoint
        expected = z(step_start) + (z(step_start) - z(step_start - h)) * 0.5
        assert np.allclose(used[1:], expected[1:], rtol=1e-10)
    # the first steps fall back to lower orders (not enough history yet)
    assert used[0] == pytest.approx(0.0, abs=1e-14)


def test_multi_rate_slave_steps_every_m_base_steps(payload_fmu):
    h, m = 0.05, 4
    system = chain(payload_fmu, multiple_b=m)
    r = simulate(system, 1.0, h, method="jacobi", variables=["b.cg.position[0]", "b.cg.force[0]"])
    # b holds its input over each of its own steps of m*h: the force changes every m base steps only
    force = force_history(r)[1:]
    blocks = force.reshape(-1, m)
    assert np.allclose(blocks, blocks[:, :1])
    # b jumps ahead to the end of its own step and its outputs hold until its next one
    x = r["b.cg.position[0]"][1:].reshape(-1, m)
    assert np.allclose(x, x[:, :1]) and np.all(np.diff(x[1:, 0]) > 0)


def test_free_body_under_held_force_matches_the_exact_discrete_solution(payload_fmu):
    """b integrates exactly (RK4 is exact for a constant force): its x after N Jacobi steps is the
    sum of the piecewise-constant-force parabolas."""
    h = 0.1
    r = simulate(chain(payload_fmu), 1.0, h, method="jacobi", variables=["b.cg.position[0]", "b.cg.force[0]"])
    x, v = 0.0, 0.0
    for f in force_history(r)[1:]:
        a = f / M
        x += v * h + 0.5 * a * h * h
        v += a * h
    assert r["b.cg.position[0]"][-1] == pytest.approx(x, rel=1e-12)


def test_initial_values_propagate_through_connections(payload_fmu):
    s = System("init")
    s.add_component(Component("a", payload_fmu, {"initial.position[2]": 7.0}))
    s.add_component(Component("b", payload_fmu, {"gravity": 0.0, "mass": 10.0}))
    s.add_component(Component("c", payload_fmu, {"gravity": 0.0}))
    s.connect("a.cg.position[2]", "b.cg.force[0]")
    s.connect("b.cg.acceleration[0]", "c.cg.force[1]", factor=3.0)   # feedthrough output, two hops
    memory = MemoryObserver([("b", "cg.force[0]"), ("c", "cg.force[1]")])
    ex = Execution(s, FixedStepAlgorithm(), observers=[memory], observed=memory.variables)
    try:
        sweeps = ex.initialize()
    finally:
        ex.free()
    # b is 10 kg: a = 7 N / 10 kg; c sees 3 * 0.7 N before the first step
    assert memory.rows[0] == pytest.approx([7.0, 2.1])
    assert sweeps >= 2


def test_gauss_seidel_order_follows_the_graph():
    # 0 -> 2 -> 1, plus a feedback pair 3 <-> 4 fed by 1
    edges = {(0, 2), (2, 1), (1, 3), (3, 4), (4, 3)}
    assert gauss_seidel_order(5, edges, list("abcde")) == [0, 2, 1, 3, 4]


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="extrapolation"):
        FixedStepAlgorithm(extrapolation=3)
    with pytest.raises(ValueError, match="method"):
        FixedStepAlgorithm(method="newton")


def test_extrapolation_polynomials():
    hist = [(0.0, np.array([1.0])), (1.0, np.array([2.0])), (2.0, np.array([5.0]))]   # 1 + t^2
    assert _extrapolate(hist, 2, 3.0)[0] == pytest.approx(10.0)
    assert _extrapolate(hist, 1, 3.0)[0] == pytest.approx(8.0)
    assert _extrapolate(hist, 0, 3.0)[0] == 5.0


def test_fmu_error_stops_the_run_with_the_fmu_message(payload_fmu):
    s = System("bad")
    s.add_component(Component("a", payload_fmu, {"mass": 1.0, "attachment1.location[0]": 1.0}))
    s.add_component(Component("b", payload_fmu, {"mass": 1.0}))
    s.connect("a.cg.position[2]", "b.cg.force[0]", factor=1e308)   # overflows to inf in b
    with pytest.raises(ExecutionError) as info:
        simulate(s, 1.0, 0.1, variables=["b.cg.position[0]"])
    message = str(info.value)
    assert "b (Payload.fmu)" in message and "doStep" in message and "position[0]" in message and "nan" in message
