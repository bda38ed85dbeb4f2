"""The Cable FMU's cheap output path (components/line.py Line.end_loads, _end_forces,
_geometry_changed_fast) gives what the full evaluation gives.

end_loads computes the end forces from the two end nodes in Python floats, in _forces' order of
floating-point operations, instead of evaluating every node; a winch pay-out updates only the
entries of the node arrays its element touches.  Both must reproduce the full computation
(node_forces(), end_moments(), twist_rate(), tensions(), _geometry_changed) in every feature
combination: splash zone, waves, current profile, seabed contact and friction, non-linear EA, a
rod's compression, a free tip with a point force, a winch at either end, bending and torsion.
On the development machine the values are bit-identical; the tolerance below (1e-12 of the
force scale) leaves room for another platform's numpy summing a row of three in another order,
and still fails on any missing or wrong term (the smallest of them, tangential drag on a slow
end node, is ~1e-6 of the end force).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from components.line import Line, LineParams
from components.waves import make_sea

WIRE = LineParams(length=30.0, diameter=0.04, mass_per_length=6.7, EA=7.5e7, damping=-0.1, Cdn=1.2, Cdt=0.05,
                  Can=1.0, Cat=0.2)
CHAIN = LineParams(length=410.0, diameter=0.252, mass_per_length=390.0, EA=1.674e9, damping=-1.0, Cdn=1.37,
                   Cdt=0.64, Can=1.0, Cat=0.0)


def _sea():
    return make_sea("jonswap", hs=2.5, period=8.0, gamma=3.3, mean_direction=2.8, spreading_s=0.0, n_frequencies=20,
                    n_directions=1, seed=3, random_frequencies=False, regular_amplitude=0.0)


def _wire(winch_end: str, sea=None, params: LineParams = WIRE) -> Line:
    # crane tip 20 m above the mean surface, payload 10 m below it: the wire crosses the splash zone
    return Line(params, np.array([0.0, 0.0, 10.0]), np.array([0.0, 0.0, -20.0]), 10, 500.0, scheme="implicit",
                winch_end=winch_end, sea=sea)


def _drive_wire(line: Line, t: float) -> None:
    line.set_ends(np.array([0.3 * math.sin(t), 0.1, 10.0 + 0.5 * math.sin(0.8 * t)]),
                  np.array([0.3 * math.cos(t), 0.0, 0.4 * math.cos(0.8 * t)]), np.array([0.0, 0.0, -20.0]),
                  np.array([0.05, 0.0, 0.0]))
    line.set_payout(1.0 if t < 3.0 else -1.5)


def _chain(profile: bool) -> Line:
    prof = np.array([[0.0, 1.0, 0.2, 0.0], [50.0, 0.3, 0.1, 0.0]]) if profile else None
    return Line(CHAIN, np.array([400.0, 0.0, 50.0]), np.zeros(3), 30, 50.0, scheme="implicit",
                current=np.array([0.5, 0.2, 0.0]), current_profile=prof)


def _drive_chain(line: Line, t: float) -> None:
    # the anchor drags sideways on the seabed: friction and seabed damping at end A
    line.set_ends(np.array([400.0, 0.2 * math.sin(t), 50.0]), np.array([0.0, 0.2 * math.cos(t), 0.0]),
                  np.array([0.0, 0.0, math.sin(0.6 * t)]), np.array([0.0, 0.0, 0.6 * math.cos(0.6 * t)]))


def _rod() -> Line:
    rod = LineParams(length=10.0, diameter=0.1, mass_per_length=20.0, EA=1e8, damping=-0.5, EI=2e4, GJ=1e4,
                     compression=1.0)
    return Line(rod, np.zeros(3), np.array([10.0, 0.0, 0.0]), 10, 500.0, scheme="implicit", clamped_a=True,
                free_b=True, tip_mass=5.0, swivel_a=False, swivel_b=False, winch_end="a")


def _drive_rod(line: Line, t: float) -> None:
    line.set_ends(np.zeros(3), np.zeros(3))
    line.set_tip_force(np.array([0.0, 100.0 * math.sin(t), 200.0]))
    line.set_payout(0.05)
    line.set_end_twist(0.0, 0.1 * t)


def _free_tip_cable() -> Line:
    # no bending: the scalar path with a free end B (tip mass and point force)
    return Line(WIRE, np.zeros(3), np.array([0.0, 0.0, 20.0]), 8, 500.0, scheme="implicit", free_b=True,
                tip_mass=100.0, winch_end="a")


def _drive_free_tip(line: Line, t: float) -> None:
    line.set_ends(np.array([0.2 * math.sin(t), 0.0, 0.0]), np.array([0.2 * math.cos(t), 0.0, 0.0]))
    line.set_tip_force(np.array([50.0 * math.sin(2 * t), 0.0, 500.0]))
    line.set_payout(0.5)


CASES = {
    "wire, winch at B, splash zone": (lambda: _wire("b"), _drive_wire, 0.025, 240),
    "wire, winch at A, waves": (lambda: _wire("a", _sea()), _drive_wire, 0.025, 240),
    "wire, non-linear EA": (lambda: _wire("b", params=LineParams(
        length=30.0, diameter=0.04, mass_per_length=6.7, EA=7.5e7, damping=-0.1,
        tension_strain=((0.0, 0.0), (0.01, 3e5), (0.02, 9e5)))), _drive_wire, 0.025, 120),
    "wire, a rod's compression": (lambda: _wire("b", params=LineParams(
        length=30.0, diameter=0.04, mass_per_length=6.7, EA=7.5e7, damping=-0.1, compression=0.5)),
        _drive_wire, 0.025, 120),
    "chain on the seabed, current profile": (lambda: _chain(True), _drive_chain, 0.1, 60),
    "chain on the seabed, uniform current": (lambda: _chain(False), _drive_chain, 0.1, 60),
    "free tip with a point force": (_free_tip_cable, _drive_free_tip, 0.025, 120),
    "rod: bending, torsion, free tip": (_rod, _drive_rod, 0.02, 60),
}


@pytest.mark.parametrize("case", list(CASES))
def test_end_loads_are_the_full_evaluation(case):
    make, drive, h, steps = CASES[case]
    line = make()
    checked = 0
    for k in range(steps):
        drive(line, k * h)
        line.step(h)
        if k % 10:
            continue
        loads = line.end_loads()
        F = line.node_forces()
        scale = float(np.max(np.abs(F[[0, -1]]))) + 1.0
        assert np.max(np.abs(loads.force_a - F[0])) <= 1e-12 * scale, case
        assert np.max(np.abs(loads.force_b - F[-1])) <= 1e-12 * scale, case
        assert np.array_equal(loads.tensions, line.tensions())
        ma, mb = line.end_moments()
        assert np.array_equal(loads.moment_a, ma) and np.array_equal(loads.moment_b, mb)
        assert loads.twist_rate == line.twist_rate()
        checked += 1
    assert checked == steps // 10
    assert np.all(np.isfinite(line.r))


def test_end_loads_see_every_term():
    """The comparison above can fail: the end force of a moving wire in the splash zone has
    tension, weight, drag and added inertia in it, and dropping the drag changes it."""
    line = _wire("a", _sea())
    for k in range(40):
        _drive_wire(line, k * 0.025)
        line.step(0.025)
    full = line.node_forces()[0]
    line._kdn = 0.0                       # no normal drag: a different force
    assert np.max(np.abs(line.end_loads().force_a - full)) > 1e-9 * np.max(np.abs(full))


@pytest.mark.parametrize("winch_end", ["a", "b"])
def test_payout_updates_the_node_arrays_as_a_full_rebuild(winch_end):
    line = _wire(winch_end)
    line.set_payout(0.7)
    for k in range(200):                  # 4.2 m: splits on the way (the full rebuild), growth between
        line.set_ends(np.array([0.0, 0.0, 10.0]), np.zeros(3), np.array([0.0, 0.0, -20.0]), np.zeros(3))
        line.step(0.03)
        fast = [a.copy() for a in (line.l_node, line.m_node, line.c_el, line._man_l, line._mat_l, line._rhoA_l)]
        line._geometry_changed()
        full = (line.l_node, line.m_node, line.c_el, line._man_l, line._mat_l, line._rhoA_l)
        for a, b in zip(fast, full):
            assert np.array_equal(a, b)
    assert line.N > 10
