"""The master runs FMUs it did not build: a plain C FMI 2.0 FMU (tests/models/c_fmu), alone and mixed
with our pythonfmu-based Payload."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from orchestration import simulate
from orchestration.system.model import Component, System
from orchestration.system.validation import validate_system
from tests.models.c_fmu.build import build_oscillator_fmu

pytestmark = pytest.mark.gcc          # builds plain-C FMUs or hosts with gcc


@pytest.fixture(scope="module")
def oscillator(tmp_path_factory):
    return build_oscillator_fmu(tmp_path_factory.mktemp("c_fmu"))


def two_oscillators_reference(t_end: float, gain: float):
    """o1 free (m 10, k 1000, c 5, x0 0.1); o2 (same, x0 0.1) forced by gain * x1."""
    m, k, c = 10.0, 1000.0, 5.0

    def rhs(_, y):
        x1, v1, x2, v2 = y
        return [v1, (-k * x1 - c * v1) / m, v2, (gain * x1 - k * x2 - c * v2) / m]

    return solve_ivp(rhs, (0.0, t_end), [0.1, 0.0, 0.1, 0.0], rtol=1e-12, atol=1e-14, dense_output=True)


@pytest.mark.parametrize("method", ["jacobi", "gauss-seidel"])
def test_c_fmus_coupled_converge_to_the_monolithic_solution(oscillator, method):
    gain = 200.0
    s = System("c")
    s.add_component(Component("o1", oscillator))
    s.add_component(Component("o2", oscillator))
    s.connect("o1.x", "o2.F", factor=gain, converts_units=True)
    assert validate_system(s).ok
    ref = two_oscillators_reference(2.0, gain)
    errors = []
    for h in (2e-3, 1e-3):
        r = simulate(s, 2.0, h, method=method, variables=["o1.x", "o2.x"])
        exact = ref.sol(r.time)
        # o1 is not coupled: exact up to its RK4
        assert np.max(np.abs(r["o1.x"] - exact[0])) < 1e-8
        errors.append(np.max(np.abs(r["o2.x"] - exact[2])))
    # explicit coupling with a held input is first order: halving h halves the error
    assert errors[1] < 0.6 * errors[0]
    assert errors[1] < 5e-3 * np.max(np.abs(exact[2]))


def test_c_fmu_drives_a_pythonfmu_payload(oscillator, payload_fmu):
    s = System("mixed")
    s.add_component(Component("o", oscillator))
    s.add_component(Component("p", payload_fmu, {"mass": 1.0, "gravity": 0.0}))
    s.connect("o.x", "p.cg.force[0]", factor=10.0, converts_units=True)
    r = simulate(s, 1.0, 0.01, method="gauss-seidel", variables=["o.x", "p.cg.position[0]", "p.cg.force[0]"])
    # the payload integrates exactly what it was fed: x'' = 10 * o.x(held) / 1 kg
    x, v, h = 0.0, 0.0, 0.01
    for f in r["p.cg.force[0]"][1:]:
        x += v * h + 0.5 * f * h * h
        v += f * h
    assert r["p.cg.position[0]"][-1] == pytest.approx(x, rel=1e-10)
    assert np.allclose(r["p.cg.force[0]"][1:], 10.0 * r["o.x"][1:])


@pytest.mark.parametrize("name", ["error-control", "iterative"])
def test_rollback_algorithms_run_third_party_c_fmus(oscillator, name):
    """The rollback algorithms use fmi2GetFMUstate/SetFMUstate of a C FMU they did not build (its
    self-test passes).  Error control bounds the local error per step, so its global error is that
    of a fixed-step run with as many steps (measured 2.9e-3 m in 202 steps); the iterative
    (trapezoidal) coupling is second order (7.4e-6 m at 2 ms)."""
    from orchestration.master.algorithms import make_algorithm

    gain = 200.0
    s = System("c")
    s.add_component(Component("o1", oscillator))
    s.add_component(Component("o2", oscillator))
    s.connect("o1.x", "o2.F", factor=gain, converts_units=True)
    ref = two_oscillators_reference(2.0, gain)
    # the iterative master keeps the macro step: a maximum step is error control's alone
    alg = make_algorithm(name, {"rtol": 1e-4, "atol": 1e-6, **({"max_step": 0.01} if name == "error-control" else {})})
    r = simulate(s, 2.0, 2e-3, algorithm=alg, variables=["o1.x", "o2.x"])
    exact = ref.sol(r.time)
    err = np.max(np.abs(r["o2.x"] - exact[2]))
    n = len(r.time) - 1
    fixed = simulate(s, 2.0, 2.0 / n, method="jacobi", variables=["o2.x"])
    err_fixed = np.max(np.abs(fixed["o2.x"] - ref.sol(fixed.time)[2]))
    print(f"\n{name} on C FMUs: max error {err:.2e} m in {n} steps (fixed Jacobi, same steps: {err_fixed:.2e})")
    assert r.time[-1] == pytest.approx(2.0)
    assert err <= 1.2 * err_fixed
    if name == "iterative":
        assert err < 1e-4 * np.max(np.abs(exact[2]))
