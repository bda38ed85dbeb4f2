"""The Cable FMU: at rest on its catenary, driven ends, complete state (the line physics is
validated in tests/test_line.py against MoorDyn)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from tests.support.fmu_runner import FmuUnderTest


@pytest.fixture
def cable(fmu_dir):
    fmu = FmuUnderTest(fmu_dir / "Cable.fmu")
    yield fmu
    fmu.close()


NAMES = ["end_b.force[0]", "end_b.force[2]", "end_b.tension", "end_a.tension", "slack_fraction"]


def test_mooring_starts_at_rest_with_moordyn_tension(cable, validation):
    cable.initialize({})
    start = cable.get(NAMES)
    _, rows = cable.run(0.0, 10.0, 0.1, NAMES)
    validation.record(case="Cable.fmu default 50 m chain: fairlead segment tension at rest vs MoorDyn", reference=997.2,
                      ours=start[2] / 1e3, tolerance=0.01, unit="kN",
                      source="MoorDyn 2.7.2 static (tests/test_line.py)")
    assert np.allclose(rows, start, rtol=1e-6)                       # no start-up transient
    assert start[2] == pytest.approx(997.2e3, rel=0.01)              # MoorDyn 2.7.2 static fairlead segment tension


def test_heaving_fairlead_loads_the_line_and_state_round_trips(cable):
    cable.initialize({})
    t, h, peak = 0.0, 0.1, 0.0
    for k in range(100):                                            # 10 s of 1 m heave, 10 s period
        z = 1.0 * math.sin(2 * math.pi * t / 10.0)
        w = 1.0 * 2 * math.pi / 10.0 * math.cos(2 * math.pi * t / 10.0)
        cable.set({"end_b.position[2]": z, "end_b.velocity[2]": w})
        cable.slave.doStep(t, h)
        t += h
        peak = max(peak, cable.get(["end_b.tension"])[0])
        if k == 49:
            state = cable.slave.getFMUstate()
            resume = (t, [v.name for v in cable.md.modelVariables if v.causality == "output"])
    # the same driving on the component directly (validated against MoorDyn in test_line.py)
    from components.line import Line, LineParams

    line = Line(LineParams(length=410.0, diameter=0.252, mass_per_length=390.0, EA=1.674e9, Cdn=1.37, Cdt=0.64),
                np.array([400.0, 0.0, 50.0]), np.zeros(3), 41, 50.0, scheme="implicit")
    t_ref, expected = 0.0, 0.0
    for _ in range(100):
        z = 1.0 * math.sin(2 * math.pi * t_ref / 10.0)
        w = 1.0 * 2 * math.pi / 10.0 * math.cos(2 * math.pi * t_ref / 10.0)
        line.set_ends(np.array([400.0, 0.0, 50.0]), np.zeros(3), np.array([0.0, 0.0, z]), np.array([0.0, 0.0, w]))
        line.step(h)
        t_ref += h
        expected = max(expected, float(line.tensions()[-1]))
    assert peak == pytest.approx(expected, rel=1e-12) and peak > 1.0e6
    t0, names = resume
    cable.slave.setFMUstate(state)
    _, a = cable.run(t0, t0 + 1.0, 0.1, names)
    cable.slave.setFMUstate(state)
    _, b = cable.run(t0, t0 + 1.0, 0.1, names)
    assert np.array_equal(a, b)


def test_impossible_span_is_refused(cable):
    """Also a regression test: the message contains "%", which the native loader once passed to
    vsnprintf as a format (a crash)."""
    cable.slave.setupExperiment(startTime=0.0)
    cable.slave.enterInitializationMode()
    cable.set({"length": 100.0})
    from fmpy.fmi1 import FMICallException

    with pytest.raises(FMICallException):
        cable.slave.exitInitializationMode()
    assert any("'length'" in m and "shorter" in m for m in cable.errors())
