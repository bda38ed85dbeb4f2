"""Benchmark B4 scenario (d) (ship_crane_digest.md 7.5 B4, after the Tysse-Egeland paper's section 8.4):
the 250 t payload released from a pendulum swing with the crane tip held, co-simulated (Ship FMU +
Crane FMU under our master, mass-aware ship-crane interface, 0.01 s) against the monolithic reference
of tests/models/b4 -- the scenario tests/runs/test_b4_ship_heavy_crane.py leaves out.

The paper starts its pendulum at [phi_x, phi_y] = [-45, 45] deg (eqs. 118-120) and reports (figures
only) that the swinging load disturbs the tip more and affects roll more than heave and pitch.  Here
the B4 crane's two hook joints (swing in the boom's plane and across it) start at -45 and +45 deg from
the hanging equilibrium of scenario (a)'s 250 t; the ship and the crane joints start at that
equilibrium.  Acceptance as for the other B4 scenarios: heave, roll, pitch, tip position and hoist
tension within 2 % (RMS of the difference over the reference signal's range).

Measured: roll 0.47 %, tip 1.9 %, tension 0.10 % pass; heave 9.2 % and pitch 6.1 % do not, and are
recorded as deviations (the heave difference peaks at 8.6 mm of a 50 mm range).  The difference is not
the coupling: it is the same at 0.005 s (9.2 %, 6.1 %) and with explicit force coupling instead of the
mass-aware interface (8.9 %, 5.9 %).  It is a difference between the two models that only a swinging
load shows, and it grows with the swing in the boom's plane (a sway pull on the ship, heeled 7.9 deg
by the 250 t along sway): heave 18 % swung in that plane only, 1.6 % swung across it only, 23 % of a
7 mm range at -10 / 10 deg.  The likeliest cause is where the two put the crane's reaction:
components/ship.py turns every attached wrench it receives (the Crane FMU's bias wrench p_A, which
holds the swinging load's centripetal and Coriolis reactions as well as the weights, or its whole
base wrench with explicit coupling) into the seakeeping axes, the roll-pitch tilt meant for weights
carried by the body-axis buoyancy; the monolithic reference (tests/models/b4/monolithic.py) tilts only
the weights and loads and keeps the inertial reaction in body axes, so a sideways pull F has a body
heave component F sin(7.9 deg) in one and not the other (up to 0.137 x 1.7 MN / C33 = 1.7e-2 m).
Tilting the reference's whole crane reaction instead (an experiment, not kept) brings heave and pitch
to 4.5 % and 4.3 % but roll and tip to 4.3 % and 18 %: the tilt is part of the story, not all of it.
The test asserts the signals within the acceptance at 2 % and heave and pitch at the deviation's
size, so that a change either way shows.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from tests.models.b4 import cosim, model as b4

VALIDATION_COMPONENT = "B4 ship + heavy crane"
TOLERANCE = 0.02
SWING = (math.radians(-45.0), math.radians(45.0))      # hook joints 4 and 5 (indices 3, 4)
SCENARIO = b4.Scenario("d: 250 t pendulum released from -45 / 45 deg, tip held", 250e3, 8.0)


@pytest.mark.slow
def test_b4_d_pendulum_swing_cosimulation_matches_the_monolithic_reference(fmu_dir, tmp_path, monkeypatch,
                                                                          validation):
    equilibrium = b4.initial_state

    def swung(scenario, level: bool = False):
        state = equilibrium(scenario, level)
        if scenario.name != SCENARIO.name:
            return state
        q = state.q.copy()
        q[3] += SWING[0]
        q[4] += SWING[1]
        return replace(state, q=q)

    monkeypatch.setattr(b4, "initial_state", swung)
    co = cosim.run(fmu_dir, SCENARIO, "mass-aware", workdir=tmp_path)
    ref = b4.reference(SCENARIO, co.time, rtol=1e-6)
    errors = cosim.errors(co, ref)
    for signal, e in errors.items():
        validation.record(case=f"B4 (d) {signal}: co-simulation vs monolithic, RMS / range", reference="monolithic",
                          ours=f"co-simulation, {b4.STEP} s", error=e, tolerance=TOLERANCE,
                          source="ship_crane_digest.md 7.5 (B4 (d), pendulum initial condition)")
    print("\nB4 (d): " + ", ".join(f"{k} {100 * v:.2f} %" for k, v in errors.items()))
    assert max(errors[k] for k in ("roll", "tip", "tension")) < TOLERANCE
    # the recorded deviation (module docstring): the tilt of the inertial reaction, not the coupling
    assert errors["heave"] < 0.12 and errors["pitch"] < 0.08
    # the swing moves the ship and the load: not two flat lines
    assert np.ptp(ref["roll"]) > math.radians(0.05) and np.ptp(ref["tension"]) > 0.1 * np.mean(ref["tension"])
