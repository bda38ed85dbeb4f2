"""The deck-landing transient of benchmarks/bench_landing.py (issue 9, item 5c) on a fast subset:

* the monolithic reference uses the Contact FMU's own force law and lands when free fall says;
* fixed-step co-simulation converges to it (first order);
* error control with rollback reaches a smaller error than fixed step at 1 ms with at least 3x fewer
  macro steps;
* without the hold check, step doubling cannot see a touchdown inside a step (both of its runs held
  the contact force at 0) and its error does not fall with the tolerance: the check is what makes
  error control work on contact.

Figures are the measured ones (deterministic runs); docs/algorithms_benchmark.md has the full ladders.
"""
from __future__ import annotations

import math

import pytest

from benchmarks import bench_landing as bench
from tests.models.deck_landing.model import G, DeckLanding, Reference, check_force_law

CASE = DeckLanding()


@pytest.fixture(scope="module")
def ref():
    return Reference(CASE, bench.STOP + 0.05)


def test_reference_uses_the_contact_law_and_free_fall(ref, validation):
    assert check_force_law(CASE) < 1e-7
    # touchdown: 0.3 m at 1 m/s plus free fall
    t_touch = (-CASE.speed + math.sqrt(CASE.speed ** 2 + 2 * G * CASE.drop)) / G
    validation.record(case="deck landing: monolithic reference touchdown time vs free fall", reference=t_touch,
                      ours=ref.touchdown, tolerance=1e-9, tol_kind="abs", unit="s", source="analytic (free fall)")
    assert ref.touchdown == pytest.approx(t_touch, abs=1e-9)
    assert ref.impact_speed == pytest.approx(2.6241, abs=1e-4)
    # settles on the pads: static penetration m g / (E_eff A)
    z, v = Reference(CASE, 2.0)([2.0])
    E_eff, _ = CASE.effective()
    static = CASE.mass * G / (E_eff * CASE.area)
    assert z[0] + 0.5 * CASE.size[2] - CASE.deck_top == pytest.approx(static, rel=0.02)
    # 4.49 cm: the dashpots grow with the penetration (4.07 cm when they met the touchdown at once)
    assert ref.peak_penetration == pytest.approx(0.0449, abs=5e-4)


@pytest.mark.slow
def test_fixed_step_converges_and_error_control_needs_3x_fewer_steps(fmu_dir, ref, validation):
    fixed_2ms = bench.run_point(fmu_dir, ref, "fixed", 2e-3, 0)
    fixed_1ms = bench.run_point(fmu_dir, ref, "fixed", 1e-3, 0)
    print(f"\nfixed 2 ms: {fixed_2ms.error:.4f}, 1 ms: {fixed_1ms.error:.4f}")
    assert fixed_2ms.error / fixed_1ms.error == pytest.approx(1.8, abs=0.3)       # first order (measured 1.98)
    adaptive = bench.run_point(fmu_dir, ref, "error-control", 1e-1, 1)
    print(f"error control (tol 1e-1, linear extrapolation): {adaptive.steps} steps, {adaptive.do_steps} doSteps, "
          f"error {adaptive.error:.4f}")
    validation.record(case="deck landing (Payload + Contact FMUs): fixed step 1 ms vs monolithic ODE",
                      reference="monolithic ODE", ours=f"error {fixed_1ms.error:.4f}", error=fixed_1ms.error,
                      tolerance=fixed_2ms.error,
                      source="tests/models/deck_landing (tolerance: the 2 ms error, first order)")
    validation.record(case=f"deck landing: error control (tol 1e-1, {adaptive.steps} steps) vs monolithic ODE",
                      reference="monolithic ODE", ours=f"error {adaptive.error:.4f}", error=adaptive.error,
                      tolerance=fixed_1ms.error, source="tests/models/deck_landing (tolerance: fixed step 1 ms)")
    assert adaptive.error < fixed_1ms.error
    assert fixed_1ms.steps / adaptive.steps >= 3.0                               # measured 4.65 (error 0.032 vs 0.30)


@pytest.mark.slow
def test_without_the_hold_check_step_doubling_misses_the_touchdown(fmu_dir, ref, monkeypatch):
    make = bench.algorithm

    def no_hold(family, setting, extrapolation):
        alg = make(family, setting, extrapolation)
        alg.hold_check = False
        return alg

    monkeypatch.setattr(bench, "algorithm", no_hold)
    blind = bench.run_point(fmu_dir, ref, "error-control", 1e-2, 0)
    monkeypatch.undo()
    seeing = bench.run_point(fmu_dir, ref, "error-control", 1e-2, 0)
    print(f"\nerror control 1e-2 without hold check: {blind.steps} steps, error {blind.error:.3f}; "
          f"with: {seeing.steps} steps, error {seeing.error:.3f}")
    assert blind.error > 0.5                                                     # measured 0.81
    assert seeing.error < 0.1                                                    # measured 0.047
