"""The claims of docs/algorithms_benchmark.md that hold, on a fast subset of
benchmarks/bench_algorithms.py (quarter car of tests/models/quarter_car over a bump, 2 s):

* the two FMUs converge to the monolithic ODE at first order (the reference is right);
* our master with libcosim's ECCO conventions reproduces libcosim's ECCO run bit for bit, so the two
  ECCOs differ only in the energy level the tolerance is scaled with;
* at equal macro steps our ECCO's error is within 15 % of libcosim's in the 500-2700 step range
  (measured 0.94-1.04), and up to 2x larger near 4 600 steps (measured 2.0);
* with the force/velocity bond alone, adaptive step control does not reach the best fixed-step error
  with 3x fewer macro steps: the best, ECCO with atol = 1e-3 rtol, needs 1.7x fewer (Jacobi);
* why: fixed-step errors sit in the wheel (the bump), the adaptive ones in the chassis, which
  integrates the wheel velocity it receives: held over steps of varying length, that integral drifts
  (with a fixed step the hold errors telescope);
* with the wheel height connected as well (no drift), ECCO reaches the best fixed-step error with
  3.8x fewer macro steps, and at equal steps its error is 84 % smaller (the size of gain the ECCO paper reports);
* error control pays about three doSteps per accepted macro step.

Numbers in the docstrings are the measured ones (the runs are deterministic).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks import bench_algorithms as bench
from orchestration.master.algorithms.fixed import FixedStepAlgorithm
from tests.models.quarter_car.build import build_quarter_car_fmus
from tests.models.quarter_car.model import QuarterCar, quarter_car_system

CAR = QuarterCar()


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    return build_quarter_car_fmus(tmp_path_factory.mktemp("quarter_car"))


@pytest.fixture(scope="module")
def ref():
    return bench.Reference(CAR)


_RUNS: dict = {}


def run(fmus, ref, family, method, setting, position=False, variables=bench.VARIABLES, trajectory=False):
    """One point of the benchmark; the runs are deterministic, so a run asked for by several tests
    (the 20 000-step fixed reference, ECCO at 1e-2) is computed once per session."""
    key = (id(fmus), id(ref), family, method, setting, position, tuple(variables))
    if key not in _RUNS:
        system = quarter_car_system(fmus, CAR, wheel_position=position)
        if family == "fixed":
            traj = bench.run_ours(system, FixedStepAlgorithm(method), setting, variables=variables)
        else:
            make = bench.FAMILIES[family][1]
            traj = bench.run_ours(system, make(setting, method), bench.H0, variables=variables)
        _RUNS[key] = (bench.point(family, method, setting, traj, ref), traj)
    p, traj = _RUNS[key]
    return (p, traj) if trajectory else p


_LIBCOSIM: dict = {}


def run_libcosim(fmus, ref, tol, tmp_path):
    """libcosim's ECCO on the exported system (once per tolerance and session, like :func:`run`)."""
    key = (id(fmus), id(ref), tol)
    if key not in _LIBCOSIM:
        folder = tmp_path / f"ecco_{tol:g}"
        osp = bench.write_ecco_osp(quarter_car_system(fmus, CAR), folder, tol)
        try:
            traj = bench.run_libcosim(osp, folder)
        except bench.LibcosimUnavailable as exc:
            pytest.fail(f"libcosimpy (a declared test dependency) cannot be used: {exc}", pytrace=False)
        _LIBCOSIM[key] = (traj, bench.point("libcosim-ecco", "jacobi", tol, traj, ref))
    return _LIBCOSIM[key]


def test_fixed_step_converges_to_the_monolithic_reference_at_first_order(fmus, ref):
    """Measured: Jacobi 4.50e-2 (h = 1 ms), 2.22e-2 (0.5 ms); Gauss-Seidel 1.45e-2, 7.24e-3."""
    for method, bound in (("jacobi", 0.025), ("gauss-seidel", 0.008)):
        coarse = run(fmus, ref, "fixed", method, 1e-3)
        fine = run(fmus, ref, "fixed", method, 5e-4)
        assert coarse.error / fine.error == pytest.approx(2.0, rel=0.05), (method, coarse.error, fine.error)
        assert fine.error < bound
    # the bump really excites both bodies: 5 cm road, about 4.7 cm wheel and 6.5 mm chassis travel
    assert ref.scale_wheel == pytest.approx(0.0473, rel=0.01)
    assert ref.scale_chassis == pytest.approx(0.0065, rel=0.01)


@pytest.mark.slow
def test_our_ecco_with_libcosims_conventions_reproduces_libcosim(fmus, ref, tmp_path, validation):
    """libcosim's ECCO (libcosimpy 0.0.6, from our OspSystemStructure.xml with <Algorithm>ecco</Algorithm>)
    and ours with ``conventions: libcosim`` (energy level = the residual, whole-nanosecond steps, its
    start rule) take the same 599 steps and give the same heights to the last bit, but for the last
    step, which ours ends at the stop time and libcosim past it; ours proper takes 495."""
    theirs, lib = run_libcosim(fmus, ref, 1e-2, tmp_path)
    system = quarter_car_system(fmus, CAR)
    twin = bench.run_ours(system, bench.ecco_libcosim_convention(1e-2, "jacobi"), bench.H0)
    same = len(twin.time) == len(theirs.time)
    diff = max(float(np.max(np.abs(np.asarray(twin.values[n][:-1]) - np.asarray(theirs.values[n][:-1]))))
               for n in bench.VARIABLES) if same else float("inf")
    validation.record(case="quarter car, ECCO tol 1e-2: our master with libcosim's conventions vs libcosim's ECCO",
                      reference="libcosim's run, bit for bit", ours=f"{twin.steps} steps (libcosim {theirs.steps}), "
                      f"max diff {diff:.1e} m", error=diff, tolerance=0.0, tol_kind="abs", unit="m",
                      source="OSP libcosim (libcosimpy) ECCO")
    assert twin.steps == theirs.steps == 599
    np.testing.assert_allclose(twin.time[:-1], theirs.time[:-1], rtol=0, atol=1e-12)
    assert twin.time[-1] == bench.STOP < theirs.time[-1]
    for name in bench.VARIABLES:
        np.testing.assert_array_equal(twin.values[name][:-1], theirs.values[name][:-1], err_msg=name)
    ours = run(fmus, ref, "ecco", "jacobi", 1e-2)
    assert ours.steps == 495 and lib.error == pytest.approx(0.0928, rel=0.01)


@pytest.mark.slow
def test_our_ecco_against_libcosim_at_equal_macro_steps(fmus, ref, tmp_path):
    """At libcosim's 599 steps (tol 1e-2) our error, interpolated between tol 1e-2 (495 steps) and 3e-3
    (783), is 1.04x libcosim's; at its 4 628 steps (tol 1e-4) 2.0x: the relative tolerance scaled by the
    energy through the bond lets our steps grow in the slow phase, where the chassis error grows."""
    _, lib_coarse = run_libcosim(fmus, ref, 1e-2, tmp_path)
    ours = [run(fmus, ref, "ecco", "jacobi", tol) for tol in (1e-2, 3e-3)]
    ratio = bench.interpolate_error(ours, lib_coarse.steps) / lib_coarse.error
    assert ratio <= 1.15, ratio
    _, lib_fine = run_libcosim(fmus, ref, 1e-4, tmp_path)
    ours_fine = [run(fmus, ref, "ecco", "jacobi", tol) for tol in (1e-4, 3e-5)]
    ratio_fine = bench.interpolate_error(ours_fine, lib_fine.steps) / lib_fine.error
    assert ratio_fine == pytest.approx(2.0, abs=0.5)           # measured 2.0: ours worse here


@pytest.mark.slow
def test_extrapolated_ecco_beats_libcosim_at_equal_macro_steps(fmus, ref, tmp_path):
    """Our ECCO with linear extrapolation (an option libcosim's ECCO lacks), tol 1e-3: 1 074 steps, error
    2.5e-2; libcosim's at 1e-3: 1 532 steps, 7.7e-2.  Fewer steps and a smaller error, so at equal steps
    ours is smaller still (the benchmark interpolates: 0.20x here, 0.12-0.58x over every tolerance and
    variant)."""
    _, lib = run_libcosim(fmus, ref, 1e-3, tmp_path)
    system = quarter_car_system(fmus, CAR)
    ours = bench.point("ecco-extrapolated", "jacobi", 1e-3,
                       bench.run_ours(system, bench.ecco_extrapolated(1e-3, "jacobi"), bench.H0), ref)
    assert ours.steps <= lib.steps
    assert ours.error <= 0.6 * lib.error, (ours.error, lib.error)                # measured 0.33x


@pytest.mark.slow
def test_adaptive_does_not_save_3x_macro_steps_on_the_bump(fmus, ref):
    """Best fixed Jacobi error (h = 0.1 ms, 20 000 steps) 4.41e-3.  ECCO with atol = 1e-3 rtol reaches it
    with 11 840 steps (interpolated between tol 3e-3: 6 502 steps, 1.28e-2 and 1e-3: 13 219 steps,
    3.62e-3): 1.7x fewer, not 3x.  ECCO with rtol = atol (libcosim's example style) does not reach it
    within 12 600 steps."""
    best = run(fmus, ref, "fixed", "jacobi", 1e-4)
    assert best.error == pytest.approx(4.41e-3, rel=0.02)
    curve = [run(fmus, ref, "ecco-small-atol", "jacobi", tol) for tol in (3e-3, 1e-3)]
    needed = bench.steps_for_error(curve, best.error)
    assert not math.isnan(needed)
    saving = best.steps / needed
    assert saving == pytest.approx(2.15, abs=0.85)              # measured 1.7: short of 3x


@pytest.mark.slow
def test_where_the_errors_are(fmus, ref):
    """Fixed step: the wheel (the bump; 4.5e-2 against 1.15e-2 for the chassis at 1 ms).  ECCO (tol 1e-3):
    the chassis (7.1e-2 against 1.1e-2).  The chassis integrates the wheel velocity it is given; held over
    steps of varying length the integral drifts from the wheel's height (+0.18 mm at the end, 0.39 mm at
    most), which the suspension spring turns into a chassis offset.  With a fixed step the hold errors
    telescope: the drift ends at 0."""
    v = bench.VARIABLES + ["chassis.wheel_position"]
    fixed, fixed_traj = run(fmus, ref, "fixed", "jacobi", 1e-3, variables=v, trajectory=True)
    assert fixed.error_wheel > 3.0 * fixed.error_chassis
    ecco, ecco_traj = run(fmus, ref, "ecco", "jacobi", 1e-3, variables=v, trajectory=True)
    assert ecco.error_chassis > 3.0 * ecco.error_wheel
    assert ecco.error_wheel < fixed.error_wheel and ecco.steps < fixed.steps      # the bump itself is fine
    drift = {name: t.values["chassis.wheel_position"][-1] - t.values["wheel.position"][-1]
             for name, t in (("fixed", fixed_traj), ("ecco", ecco_traj))}
    assert abs(drift["fixed"]) < 1e-6
    assert drift["ecco"] == pytest.approx(1.8e-4, rel=0.1)


@pytest.mark.slow
def test_with_the_wheel_position_adaptive_saves_3x(fmus, ref):
    """Bond + wheel height connected: the best fixed Jacobi error (20 000 steps) 4.39e-3 is reached by ECCO
    with atol = 1e-3 rtol in about 5 200 steps (between tol 1e-2: 2 804 steps, 1.10e-2 and 3e-3: 6 458
    steps, 3.23e-3), 3.8x fewer.  ECCO with rtol = atol = 1e-2: 489 steps, error 3.4e-2, 0.16x the fixed-step
    error at the same number of steps (interpolated between 400 and 1 000 steps)."""
    best = run(fmus, ref, "fixed", "jacobi", 1e-4, position=True)
    assert best.error == pytest.approx(4.39e-3, rel=0.02)
    curve = [run(fmus, ref, "ecco-small-atol", "jacobi", tol, position=True) for tol in (1e-2, 3e-3)]
    saving = best.steps / bench.steps_for_error(curve, best.error)
    assert saving >= 3.0, saving
    fixed = [run(fmus, ref, "fixed", "jacobi", h, position=True) for h in (5e-3, 2e-3)]
    ecco = run(fmus, ref, "ecco", "jacobi", 1e-2, position=True)
    assert ecco.error / bench.interpolate_error(fixed, ecco.steps) < 0.3


@pytest.mark.slow
def test_error_control_costs_three_dosteps_per_accepted_step(fmus, ref):
    """tol 3e-2: 1 138 accepted steps, 146 rejected, 3 854 doSteps per FMU (one step of h and two of h/2
    per attempt, plus the rollback self-test)."""
    p = run(fmus, ref, "error-control", "jacobi", 3e-2)
    assert p.rejected > 0
    assert 3.0 <= p.do_steps / p.steps <= 3.0 + 3.0 * p.rejected / p.steps + 0.01
