"""Extrapolated inputs stay inside the input's declared range (orchestration/master/execution.py,
compute_inputs): a linear extrapolation through a wire tension that touches 0 overshoots below it,
and the Winch FMU (line.tension: min 0) refuses a negative value with an error, which stopped ECCO
with extrapolation on the offshore lift. Held values pass as they are."""
from __future__ import annotations

import numpy as np
import pytest

from orchestration.master.execution import ExecutionError, _extrapolate
from orchestration.system.model import Component, System
from tests.support.master import run_master

G = 9.81
H = 0.1
V0 = G * 0.55        # thrown up: the top of its flight at 0.55 s, half-way between two communication points


def thrown(payload_fmu, winch_fmu, offset: float) -> System:
    """A payload thrown up in air; its depth, shifted so that its highest point is 0 (``offset``
    = 0), is the winch's line tension: >= 0 at every communication point, 0 at the top of the flight."""
    s = System("thrown")
    s.add_component(Component("body", payload_fmu, {"mass": 1.0, "initial.position[2]": -100.0,
                                                    "initial.velocity[2]": -V0}))
    s.add_component(Component("winch", winch_fmu, {}))
    s.connect("body.cg.position[2]", "winch.line.tension", offset=100.0 + V0 * V0 / (2 * G) + offset)
    return s


@pytest.fixture
def winch_fmu(fmu_dir):
    return fmu_dir / "Winch.fmu"


def test_a_linear_extrapolation_below_the_inputs_minimum_is_clamped_to_it(payload_fmu, winch_fmu):
    r = run_master(thrown(payload_fmu, winch_fmu, 0.0), 1.0, H, method="jacobi", extrapolation=1,
                   variables=["body.cg.position[2]", "winch.line.tension"])
    tension = r["winch.line.tension"][1:]             # the value each step used
    held = r["body.cg.position[2]"] + 100.0 + V0 * V0 / (2 * G)
    assert held.min() >= -1e-12                      # the source itself never leaves the range
    # what the linear extrapolation gives at each step's midpoint (the first step holds: one point)
    raw = np.array([held[0]] + [_extrapolate([(0.0, held[k - 1:k]), (H, held[k:k + 1])], 1, 1.5 * H)[0]
                                for k in range(1, len(held) - 1)])
    assert raw.min() < -0.03                          # about 3 g h^2 / 8 below 0 near the top
    np.testing.assert_allclose(tension, np.maximum(raw, 0.0), rtol=1e-9, atol=1e-9)
    assert np.any((tension == 0.0) & (raw < 0.0))      # clamped exactly at the bound


def test_held_inputs_are_not_clamped(payload_fmu, winch_fmu):
    """A held value out of range is the source's own output: the master passes it on and the FMU
    says what is wrong, rather than the master hiding it."""
    with pytest.raises(ExecutionError, match="line.tension"):
        run_master(thrown(payload_fmu, winch_fmu, -1.0), 1.0, H, method="jacobi", extrapolation=0,
                   variables=["winch.line.tension"])
