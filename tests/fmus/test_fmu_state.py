"""fmi2GetFMUstate / SetFMUstate / (De)SerializeFMUstate cover the complete internal state:
step -> save -> step -> restore -> step reproduces the outputs bit for bit."""
from __future__ import annotations

import numpy as np
import pytest

from tests.support.fmu_runner import FmuUnderTest

# a tumbling, submerging, loaded payload: every part of the state changes
START = {"initial.position[2]": -2.0, "initial.angular_velocity[0]": 0.3, "initial.angular_velocity[1]": 1.1,
         "initial.angular_velocity[2]": 0.05, "inertia[0,0]": 1000.0, "inertia[1,1]": 2500.0,
         "inertia[2,2]": 3000.0, "inertia[0,1]": 120.0, "mass": 5000.0, "hydro.volume": 4.0,
         "hydro.drag_quadratic[2]": 3000.0, "hydro.added_mass[2]": 2000.0, "attachment1.location[0]": 1.0}
INPUTS = {"attachment1.force[2]": -2.0e4, "cg.moment[0]": 500.0}


def outputs(fmu: FmuUnderTest) -> list[str]:
    return [v.name for v in fmu.md.modelVariables if v.causality == "output"]


@pytest.fixture
def payload(payload_fmu):
    fmu = FmuUnderTest(payload_fmu)
    fmu.initialize(START)
    fmu.set(INPUTS)
    yield fmu
    fmu.close()


def test_save_step_restore_step_is_bit_identical(payload):
    names = outputs(payload)
    t, _ = payload.run(0.0, 1.0, 0.05, names)
    state = payload.slave.getFMUstate()
    at_save = payload.get(names)
    _, first = payload.run(t, t + 1.0, 0.05, names)
    assert not np.array_equal(payload.get(names), at_save)
    payload.slave.setFMUstate(state)
    assert np.array_equal(payload.get(names), at_save)
    _, second = payload.run(t, t + 1.0, 0.05, names)
    assert first.shape == second.shape and np.array_equal(first, second)
    # restoring the same state twice works too: the saved state is not aliased by the running model
    payload.slave.setFMUstate(state)
    _, third = payload.run(t, t + 1.0, 0.05, names)
    assert np.array_equal(first, third)
    payload.slave.freeFMUstate(state)


def test_restore_brings_back_inputs_and_outputs(payload):
    names = outputs(payload)
    payload.run(0.0, 0.5, 0.05, names)
    state = payload.slave.getFMUstate()
    before = payload.get(names)
    payload.set({"attachment1.force[2]": 0.0})
    payload.run(0.5, 1.0, 0.05, names)
    payload.slave.setFMUstate(state)
    assert np.array_equal(payload.get(names), before)
    assert payload.get(["attachment1.force[2]"])[0] == INPUTS["attachment1.force[2]"]


def test_serialized_state_restores_bit_identically_in_another_instance(payload, payload_fmu):
    names = outputs(payload)
    t, _ = payload.run(0.0, 1.0, 0.05, names)
    state = payload.slave.getFMUstate()
    blob = payload.slave.serializeFMUstate(state)
    _, first = payload.run(t, t + 1.0, 0.05, names)

    other = FmuUnderTest(payload_fmu, instance_name="other")
    try:
        other.initialize({})        # default parameters: everything must come from the blob
        restored = other.slave.deSerializeFMUstate(blob)
        other.slave.setFMUstate(restored)
        _, second = other.run(t, t + 1.0, 0.05, names)
        assert np.array_equal(first, second)
        other.slave.freeFMUstate(restored)
    finally:
        other.close()


def test_foreign_state_blob_is_refused_with_an_error(payload):
    from fmpy.fmi1 import FMICallException

    names = outputs(payload)
    payload.run(0.0, 0.1, 0.05, names)
    before = payload.get(names)
    good = payload.slave.getFMUstate()
    # pythonfmu deserialises on the class, where no log exists: the refusal comes at setFMUstate
    foreign = payload.slave.deSerializeFMUstate(b'{"format": "something else"}')
    with pytest.raises(FMICallException) as info:
        payload.slave.setFMUstate(foreign)
    assert "status 3" in str(info.value)
    assert any("deserialisation failed" in m and "format" in m for m in payload.errors()), payload.errors()
    payload.slave.freeFMUstate(foreign)
    # a failed restore is FMI's error state: every later call says so, until a valid state is restored
    with pytest.raises(FMICallException):
        payload.slave.doStep(0.1, 0.05)
    payload.slave.setFMUstate(good)
    # the instance was never half-restored: it goes on from where it was
    assert np.array_equal(payload.get(names), before)
    payload.run(0.1, 0.2, 0.05, names)


def test_a_state_restored_again_is_checked_once(payload, monkeypatch):
    """A master restores one state many times (an iterative master at every iteration, error
    control twice a step): its check (_state_problem, which walks every variable and the model's
    state) runs at the first restore; a state read from bytes is a new state and is checked again."""
    import sys

    checked = []
    # the FMU's own copy of fmus/_base.py (its private package), loaded in this process
    bases = {m.Fmi2Slave for name, m in list(sys.modules.items())
             if name.startswith("_mc_") and name.endswith(".fmus._base")}
    assert bases
    for cls in bases:
        original = cls._state_problem
        monkeypatch.setattr(cls, "_state_problem",
                            lambda self, state, _f=original: checked.append(id(state)) or _f(self, state))
    names = outputs(payload)
    t, _ = payload.run(0.0, 0.5, 0.05, names)
    state = payload.slave.getFMUstate()
    _, first = payload.run(t, t + 0.5, 0.05, names)
    for _ in range(3):
        payload.slave.setFMUstate(state)
        _, again = payload.run(t, t + 0.5, 0.05, names)
        assert np.array_equal(first, again)
    assert len(checked) == 1
    restored = payload.slave.deSerializeFMUstate(payload.slave.serializeFMUstate(state))
    payload.slave.setFMUstate(restored)
    assert len(checked) == 2
    payload.slave.freeFMUstate(restored)
    payload.slave.freeFMUstate(state)
