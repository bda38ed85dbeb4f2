"""The time grid of a run (Execution.run): the last step ends exactly at the stop time and no step
passes it, checked with the plain-C Oscillator built to refuse any step that ends after its stopTime
(as strict third-party FMUs do: a master that computes the last step's end as t + h asks for
174.975 + 0.025 = 175.00000000000003 > 175); a stop time that is not a multiple of the step ends
with a shortened step, as FMPy's does; so do slower slaves (step multiples) and adaptive steps.
"""
from __future__ import annotations

import numpy as np
import pytest

from orchestration import simulate
from orchestration.master.execution import steps_to
from orchestration.system.model import Component, System
from tests.models.c_fmu.build import FmuBuildError, build_strict_oscillator_fmu

pytestmark = pytest.mark.gcc          # builds a plain-C FMU with gcc


@pytest.fixture(scope="module")
def strict_fmu(tmp_path_factory):
    try:
        return build_strict_oscillator_fmu(tmp_path_factory.mktemp("strict_oscillator"))
    except FmuBuildError as exc:
        pytest.fail(f"the strict Oscillator FMU cannot be built: {exc}", pytrace=False)


def two_oscillators(fmu, stop: float, step: float, multiple: int = 1, bond: bool = False) -> System:
    """Two oscillators pushing each other with a damper force on their velocities (a power bond)."""
    s = System("two_oscillators", stop_time=stop, base_step=step)
    s.add_component(Component("a", fmu, {"m": 1.0, "k": 40.0, "c": 0.2, "x0": 0.1}))
    s.add_component(Component("b", fmu, {"m": 2.0, "k": 10.0, "c": 0.1}, step_multiple=multiple))
    bond_name = "damper" if bond else None
    s.connect("a.v", "b.F", factor=0.5, power_bond=bond_name)
    s.connect("b.v", "a.F", factor=0.5, power_bond=bond_name)
    return s


def test_a_fixed_step_run_ends_exactly_at_its_stop_time(strict_fmu):
    """175 s at 0.025 s: 7000 steps, the last one ends at 175.0 to the bit (the strict FMU would
    refuse 175.00000000000003)."""
    res = simulate(two_oscillators(strict_fmu, 175.0, 0.025), variables=["a.x", "b.x"])
    assert len(res.time) == 7001
    assert res.time[-1] == 175.0
    assert np.all(np.diff(res.time) > 0.0)


def test_a_stop_time_between_steps_ends_with_a_shortened_step(strict_fmu):
    """1 s at 0.3 s: steps end at 0.3, 0.6, 0.9 and 1.0 (FMPy's grid); --stop past the file's stop
    time is told to the FMUs (fmi2SetupExperiment), so the strict FMU accepts it."""
    res = simulate(two_oscillators(strict_fmu, 1.0, 0.3), variables=["a.x"])
    assert list(res.time) == pytest.approx([0.0, 0.3, 0.6, 0.9, 1.0], abs=1e-15)
    assert res.time[-1] == 1.0
    longer = simulate(two_oscillators(strict_fmu, 1.0, 0.3), stop_time=1.25, variables=["a.x"])
    assert longer.time[-1] == 1.25 and len(longer.time) == 6
    assert steps_to(0.0, 175.0, 0.025) == 7000 and steps_to(0.0, 1.0, 0.3) == 4 and steps_to(0.0, 0.9, 0.3) == 3


@pytest.mark.parametrize("stop", [0.175, 0.16])
def test_a_slower_slave_ends_at_the_stop_time_too(strict_fmu, stop):
    """b steps every second base step (0.05 s): its last step is cut at the stop time when the run ends
    between its communication points (7 base steps; 6.4)."""
    res = simulate(two_oscillators(strict_fmu, stop, 0.025, multiple=2), variables=["a.x", "b.x"])
    assert res.time[-1] == stop
    assert np.isfinite(res["b.x"]).all()


@pytest.mark.parametrize("algorithm", ["ecco", "error-control"])
def test_adaptive_steps_end_exactly_at_the_stop_time(strict_fmu, algorithm):
    res = simulate(two_oscillators(strict_fmu, 3.0, 0.01, bond=True), algorithm=algorithm, variables=["a.x"])
    assert res.time[-1] == 3.0
    assert np.all(np.diff(res.time) > 0.0)


def test_the_strict_fmu_refuses_the_naive_last_step(strict_fmu):
    """The test can fail: stepped on the naive grid t = n h, h = 0.025 s, the strict FMU refuses the
    last step to 175 s (174.975 + 0.025 = 175.00000000000003)."""
    from orchestration.master.slaves import InProcessSlave

    slave = InProcessSlave("a", strict_fmu)
    slave.instantiate()
    empty = np.zeros(0, dtype=np.int64)
    try:
        slave.setup(0.0, 175.0)
        slave.enter_initialization()
        slave.exit_initialization()
        with pytest.raises(Exception, match="past stopTime"):
            for n in range(7000):
                slave.exchange(empty, np.zeros(0), n * 0.025, 0.025, empty)
        assert n == 6999
    finally:
        slave.terminate()
        slave.free()
