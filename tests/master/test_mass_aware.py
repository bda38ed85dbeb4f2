"""Benchmark B2 (ship_crane_digest.md 7.5): a rigid dummy mass on the ship at mass ratios 0.2, 0.5,
1.5 and 4, and the added-mass check (orchestration/master/coupling_check.py). docs/mass_aware.md.

(a) explicit force/acceleration coupling diverges where the master's error recursion predicts
    (mass ratio rho(M_s^-1 M_a) > 1 for Gauss-Seidel and Jacobi with inputs held), at the predicted
    rate per macro step, and not below;
(b) the mass-aware interface (crane base.inertia_*/bias_* -> ship hardpoint1.inertia_*/bias_*)
    matches the monolithic ship carrying the same mass within 1 % (heave, roll, pitch);
(c) check_added_mass warns "it will diverge" exactly for the cases that diverge, and says nothing
    for the mass-aware connection.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks import bench_b2 as b2
from orchestration.master.algorithms.fixed import FixedStepAlgorithm
from orchestration.master.coupling_check import (Scheme, attached_inertia, check_added_mass, find_attachments,
                                          growth_factor, initial_sweeps, ship_mobility, stability_limit)
from orchestration.master.execution import Execution
from orchestration.master.algorithms.iterative import IterativeAlgorithm

STOP = 20.0          # s of sea for the accuracy runs
EXPLICIT_STOP = 3.0  # s: enough macro steps to see a divergence grow by orders of magnitude
DIVERGING = {1.5, 4.0}


# ---------------------------------------------------------------------- the scheme's limits (no FMUs)

def test_textbook_limits_are_the_digests(validation):
    """Digest 7.3: the ship steps with the attachment's force held or extrapolated to the step end,
    the attachment answers the new acceleration, one sweep per step: rho < 1, 1/3, 1/7."""
    for order, expected in ((0, 1.0), (1, 1.0 / 3.0), (2, 1.0 / 7.0)):
        scheme = Scheme(method="gauss-seidel", extrapolation=order, weights="end", refresh=False)
        validation.record(case=f"explicit coupling stability limit on the mass ratio, extrapolation order {order}",
                          reference=expected, ours=stability_limit(scheme), tolerance=1e-6,
                          source="ship_crane_digest.md 7.3")
        assert stability_limit(scheme) == pytest.approx(expected, rel=1e-6)


def test_limits_of_our_master():
    """Midpoint extrapolation and the feedthrough refresh sweep (coupling_check docstring)."""
    jacobi = [stability_limit(Scheme("jacobi", k)) for k in (0, 1, 2)]
    assert jacobi == pytest.approx([1.0, 0.5, 2.0 / 7.0], rel=1e-6)
    # Gauss-Seidel stepping in the refresh order (the default for a two-component loop): two sweeps a step
    assert [stability_limit(Scheme("gauss-seidel", k)) for k in (0, 1, 2)] == pytest.approx([1.0] * 3, rel=1e-6)
    assert stability_limit(Scheme("gauss-seidel", 1, ship_steps_first=False)) == pytest.approx(0.5, rel=1e-6)
    for rho in (0.2, 0.5, 1.5, 4.0):
        assert growth_factor(rho, Scheme("gauss-seidel")) == pytest.approx(rho * rho)
        assert growth_factor(rho, Scheme("jacobi")) == pytest.approx(rho)
    assert stability_limit(Scheme("iterative")) == math.inf
    assert initial_sweeps(0.2) == pytest.approx(28.6, abs=0.1) and initial_sweeps(0.5) > 50


# ---------------------------------------------------------------------- B2 with the FMUs

@pytest.fixture(scope="module")
def cases(fmu_dir, tmp_path_factory):
    """Mechanism files and systems per mass ratio (weightless dummy mass; one weighted case)."""
    folder = tmp_path_factory.mktemp("b2")
    out = {}
    for ratio, gravity in [(r, 0.0) for r in b2.RATIOS] + [(0.2, b2.G)]:
        mass = b2.mass_for(ratio)
        mech = b2.write_mechanism(mass, folder)
        out[(ratio, gravity)] = dict(mass=mass, mechanism=mech,
                                     explicit=b2.explicit_system(fmu_dir, mech, gravity=gravity),
                                     aware=b2.mass_aware_system(fmu_dir, mech, gravity=gravity),
                                     mono=b2.monolithic_system(fmu_dir, mass, gravity=gravity))
    return out


@pytest.fixture(scope="module")
def reference_runs(cases):
    """Monolithic and mass-aware runs (STOP s) per case."""
    runs = {}
    for key, c in cases.items():
        runs[key] = (b2.run(c["mono"], STOP), b2.run(c["aware"], STOP))
    return runs


@pytest.mark.slow
def test_the_mass_ratios_are_the_digests(cases, fmu_dir):
    """rho(M_s^-1 M_a) of the dummy mass, from the crane's initial base.inertia_* and the supply
    vessel's M_RB + A_inf, is the intended 0.2 ... 4; finite differences on the FMUs (the ship's
    port mobility, the crane's d force / d acceleration) give the same number."""
    for ratio in b2.RATIOS:
        system = cases[(ratio, 0.0)]["explicit"]
        findings = check_added_mass(system, method="gauss-seidel", near=0.0)
        assert findings and findings[0].mass_ratio == pytest.approx(ratio, rel=1e-4)
        assert "roll" in findings[0].modes
    att = find_attachments(cases[(1.5, 0.0)]["explicit"])[0]
    Ms, Y, _ = ship_mobility(cases[(1.5, 0.0)]["explicit"], att)
    _, Y_fd, _ = ship_mobility(cases[(1.5, 0.0)]["explicit"], att, finite_differences=True)
    IA, how = attached_inertia(cases[(1.5, 0.0)]["explicit"], att)
    IA_fd, how_fd = attached_inertia(cases[(1.5, 0.0)]["explicit"], att, finite_differences=True)
    assert "inertia" in how and how_fd == "finite differences"
    assert np.allclose(Y_fd, Y, rtol=1e-5, atol=1e-6 * np.abs(Y).max())
    assert np.allclose(IA_fd, IA, rtol=1e-5, atol=1e-6 * np.abs(IA).max())


@pytest.mark.slow
def test_b2_explicit_coupling_diverges_where_predicted(cases, reference_runs, validation):
    """(a) Gauss-Seidel and Jacobi with held inputs: stable at 0.2 and 0.5, diverging at 1.5 and 4 at
    the predicted rate per macro step (rho^2 and rho) - from one initial sweep, so the stepping is
    what diverges. Execution.initialize's own 200 sweeps fail from about 0.79 on."""
    table = []
    for ratio in b2.RATIOS:
        system = cases[(ratio, 0.0)]["explicit"]
        mono, aware = reference_runs[(ratio, 0.0)]
        for method in ("gauss-seidel", "jacobi"):
            predicted = growth_factor(ratio, Scheme(method))
            if ratio in DIVERGING:
                r = b2.run(system, EXPLICIT_STOP, method=method, single_sweep_init=True, blowup=1e4)
                measured = b2.measured_growth(r, aware)
                table.append((ratio, method, r.status, measured, predicted))
                validation.record(case=f"B2 mass ratio {ratio}, explicit {method}: growth per macro step (diverges)",
                                  reference=predicted, ours=measured, tolerance=0.05,
                                  source="ship_crane_digest.md 7.3/7.5 B2 (growth rho^2 / rho predicted)")
                assert r.status == "diverged"
                assert measured == pytest.approx(predicted, rel=0.05)
            else:
                r = b2.run(system, 10.0, method=method, max_sweeps=1000)
                errors = b2.relative_error(r, mono)
                table.append((ratio, method, r.status, errors, predicted))
                assert r.status == "ok"
                assert max(errors.values()) < 0.1          # bounded and close: held inputs, first order
        default = b2.run(system, 0.1, method="gauss-seidel")
        assert (default.status == "init failed") == (initial_sweeps(ratio) > 50)
    print("\nB2 explicit:", *table, sep="\n  ")


def test_b2_mass_aware_interface_matches_the_monolithic_ship(reference_runs, validation):
    """(b) Heave, roll and pitch within 1 % of the monolithic reference at every mass ratio (and
    with the mass's weight at 0.2), where explicit coupling diverges as well."""
    for (ratio, gravity), (mono, aware) in reference_runs.items():
        assert mono.status == aware.status == "ok"
        errors = b2.relative_error(aware, mono)
        print(f"\nB2 mass-aware, ratio {ratio}{' with weight' if gravity else ''}: "
              + ", ".join(f"{k} {100 * v:.3f} %" for k, v in errors.items()))
        validation.record(case=f"B2 mass ratio {ratio}{' with weight' if gravity else ''}: mass-aware interface vs "
                          "monolithic ship (heave, roll, pitch)", reference="monolithic ship",
                          ours=f"{100 * max(errors.values()):.3f} %", error=max(errors.values()), tolerance=0.01,
                          source="ship_crane_digest.md 7.5 B2")
        assert max(errors.values()) < 0.01
        assert np.max(np.abs(mono.data["ship.euler[0]"])) > 0.01      # the sea moves it (rad)
    # the mass matters: the reference motions differ between the ratios
    a, b = reference_runs[(0.2, 0.0)][0], reference_runs[(4.0, 0.0)][0]
    assert np.max(np.abs(a.data["ship.euler[0]"] - b.data["ship.euler[0]"])) > 0.005


@pytest.mark.slow
def test_b2_check_warns_exactly_for_the_cases_that_diverge(cases):
    """(c) 'it will diverge' for 1.5 and 4 with Gauss-Seidel and Jacobi, nothing of the kind at 0.2
    and 0.5; nothing at all for the mass-aware interface."""
    for ratio in b2.RATIOS:
        c = cases[(ratio, 0.0)]
        for method in ("gauss-seidel", "jacobi"):
            findings = check_added_mass(c["explicit"], method=method)
            diverging = [f for f in findings if f.diverges]
            assert bool(diverging) == (ratio in DIVERGING), (ratio, method, [str(f) for f in findings])
            if diverging:
                f = diverging[0]
                assert f.severity == "warning" and f.kind == "diverges"
                assert f.growth == pytest.approx(ratio ** 2 if method == "gauss-seidel" else ratio, rel=1e-3)
                text = str(f)
                assert f"mass ratio {ratio:.3g}" in text and "above the limit 1 " in text and "will diverge" in text
                assert "crane.base.inertia_* / bias_* to ship.hardpoint1.inertia_* / bias_*" in text
            # the initial sweeps (200) run out from about 0.79 on (measured: 65 sweeps at 0.5)
            init = [f for f in findings if f.kind == "initialization"]
            assert not init
        assert check_added_mass(c["aware"]) == []
    # Jacobi with linear extrapolation: 0.5 is on its limit (neutral), 1.5 beyond
    kinds = {ratio: {f.kind for f in check_added_mass(cases[(ratio, 0.0)]["explicit"], method="jacobi",
                                                       extrapolation=1)} for ratio in (0.2, 0.5, 1.5)}
    assert kinds[0.2] == set() and kinds[0.5] & {"near-limit", "diverges"} and "diverges" in kinds[1.5]


@pytest.mark.slow
def test_check_reads_the_scheme_from_an_execution_and_flags_double_counting(cases):
    """From an Execution (its algorithm and, once initialized, its own crane instance); iterative
    coupling does not diverge (only the initial sweeps are reported); force and inertia both
    connected counts the mass twice (an error)."""
    system = cases[(1.5, 0.0)]["explicit"]
    ex = Execution(system, FixedStepAlgorithm(method="jacobi"))
    try:
        before = check_added_mass(ex)
        ex.initialize(tolerance=math.inf)
        after = check_added_mass(ex)
    finally:
        ex.free()
    for findings in (before, after):
        assert [f.kind for f in findings] == ["diverges"] and findings[0].scheme == "Jacobi"
        assert findings[0].mass_ratio == pytest.approx(1.5, rel=1e-3)
    # iterative coupling: no divergence, but Execution.initialize is the same for every algorithm
    assert [f.kind for f in check_added_mass(system, algorithm=IterativeAlgorithm())] == ["initialization"]
    assert check_added_mass(cases[(0.5, 0.0)]["explicit"], algorithm="iterative") == []
    assert check_added_mass(cases[(0.2, 0.0)]["explicit"], algorithm="iterative") == []
    both = cases[(0.5, 0.0)]["aware"]
    both = type(both)(both.name, dict(both.components), list(both.connections))
    for i in range(3):
        both.connect(f"crane.base.force[{i}]", f"ship.hardpoint1.force[{i}]")
    findings = check_added_mass(both)
    assert [(f.severity, f.kind) for f in findings] == [("error", "double-counted")]
    partial = cases[(0.5, 0.0)]["aware"]
    partial = type(partial)(partial.name, dict(partial.components),
                            [c for c in partial.connections if "bias_moment" not in c.target[1]])
    assert [f.kind for f in check_added_mass(partial)] == ["incomplete"]


def test_init_sweeps_constant_matches_the_execution_default():
    import inspect

    from orchestration.master.coupling_check import INIT_SWEEPS
    assert inspect.signature(Execution.initialize).parameters["max_sweeps"].default == INIT_SWEEPS
