"""What an outside tool's hostile use of our FMUs at the FMI level found (2026-11-29), each through
the FMU's real binary: an FMU state handed to another instance, calls on a freed instance, states
kept over fmi2Reset, a state restored across the life cycle's phases (in initialisation mode, or
one of initialisation mode in step mode), and String parameters naming a file that never ends
(a FIFO, a folder).  The older rounds are in test_fmu_bad_input.py, test_fmu_hardening.py,
test_fmu_state.py and the fuzzer (fuzz_fmus.py)."""
from __future__ import annotations

import ctypes
import os
import threading
import time

import numpy as np
import pytest

from tests.support.fmu_runner import FMI2_ERROR, FmuUnderTest, expect_error

OUTPUTS = ["cg.position[2]", "cg.velocity[2]", "cg.acceleration[2]"]


# ------------------------------------------------------------------ FMU states and instances

def test_an_fmu_state_of_another_instance_is_refused_not_swapped_for_its_own(open_fmu):
    """A state was a number each instance counted from 1: the first state of a Payload handed
    to a second Payload, or to a Winch, restored *their own* first state at fmi2OK."""
    a, b, winch = open_fmu("Payload"), open_fmu("Payload"), open_fmu("Winch")
    a.initialize({"mass": 20.0})
    b.initialize()
    winch.initialize()
    a.run(0.0, 0.5, 0.05, OUTPUTS)
    foreign = a.slave.getFMUstate()
    b.run(0.0, 0.1, 0.05, OUTPUTS)
    b_state = b.slave.getFMUstate()
    winch_state = winch.slave.getFMUstate()
    b.run(0.1, 0.2, 0.05, OUTPUTS)
    before = b.get(OUTPUTS)
    expect_error(b, b.slave.setFMUstate, foreign, says="is not an FMU state of instance")
    expect_error(winch, winch.slave.setFMUstate, foreign, says="is not an FMU state of instance")
    expect_error(b, b.slave.serializeFMUstate, foreign, says="is not an FMU state of instance")
    expect_error(b, b.slave.setFMUstate, ctypes.c_void_p(12345), says="is not an FMU state of instance")
    # nothing was changed, and a refused handle is no error state: the instance goes on
    assert np.array_equal(b.get(OUTPUTS), before)
    b.run(0.2, 0.3, 0.05, OUTPUTS)
    b.slave.setFMUstate(b_state)                      # its own state still works
    # a state is freed by the instance that made it, once
    expect_error(b, b.slave.freeFMUstate, foreign, says="is not an FMU state of instance")
    a.slave.freeFMUstate(foreign)
    stale = ctypes.c_void_p(b_state.value)
    b.slave.freeFMUstate(b_state)
    expect_error(b, b.slave.setFMUstate, stale, says="is not an FMU state of instance")
    winch.slave.freeFMUstate(winch_state)


@pytest.mark.parametrize("model", ["Ship", "Payload"])
def test_a_step_from_another_time_than_the_instances_is_refused(open_fmu, model):
    """A doStep whose currentCommunicationPoint jumped forwards or backwards, with no state restored,
    was taken at fmi2OK: the Ship's waves at the master's time and its motion at its own. Now
    fmi2Error naming both times, the state unchanged; the rounding of a master's start + k h, and
    a step from a restored state's time, are taken."""
    fmu = open_fmu(model)
    fmu.initialize()
    fmu.run(0.0, 0.5, 0.05, [])
    state = fmu.slave.getFMUstate()
    outputs = [v.name for v in fmu.md.modelVariables if v.causality == "output" and v.type == "Real"]
    before = fmu.get(outputs)
    for t in (0.7, 0.3, 0.5 + 1e-6):
        expect_error(fmu, fmu.slave.doStep, t, 0.05, says=f"doStep at t = {t!r} s, but the instance is at t = ")
    assert np.array_equal(fmu.get(outputs), before)
    fmu.slave.doStep(0.5 + 1e-15, 0.05)                 # 0.1 * 5 rounded otherwise: taken
    fmu.slave.setFMUstate(state)                         # back to t = 0.5: a step from there is taken
    fmu.slave.doStep(0.5, 0.05)
    fmu.slave.freeFMUstate(state)


def test_a_freed_instance_is_refused_not_read(open_fmu):
    """Calls on an instance after fmi2FreeInstance read freed memory: fmi2Fatal, or a crash."""
    payload = open_fmu("Payload")
    payload.initialize()
    component = ctypes.c_void_p(payload.slave.component)
    library = payload.slave.dll                      # the C functions themselves: FMPy's raise on error
    library.fmi2FreeInstance(component)              # the library stays loaded
    assert library.fmi2DoStep(component, ctypes.c_double(0.0), ctypes.c_double(0.01), 1) == FMI2_ERROR
    assert library.fmi2Terminate(component) == FMI2_ERROR
    assert library.fmi2Reset(component) == FMI2_ERROR
    values = (ctypes.c_double * 1)()
    vrs = (ctypes.c_uint * 1)(payload.vr["cg.position[2]"])
    assert library.fmi2GetReal(component, vrs, ctypes.c_size_t(1), values) == FMI2_ERROR
    library.fmi2FreeInstance(component)              # twice: nothing happens
    # the library serves new instances as before
    other = open_fmu("Payload")
    other.initialize()
    _, rows = other.run(0.0, 0.05, 0.01, OUTPUTS)
    assert np.isfinite(rows).all()


def test_null_arrays_for_a_count_of_values_are_refused(open_fmu):
    """A host whose nvr does not match its arrays (NULL for n > 0): the loader copied from
    address 0, a crash of the host process."""
    payload = open_fmu("Payload")
    payload.initialize()
    component, library = ctypes.c_void_p(payload.slave.component), payload.slave.dll
    vrs = (ctypes.c_uint * 1)(payload.vr["cg.position[2]"])
    for name in ("fmi2GetReal", "fmi2SetReal", "fmi2GetInteger", "fmi2SetInteger", "fmi2GetBoolean",
                 "fmi2SetBoolean", "fmi2GetString", "fmi2SetString"):
        assert getattr(library, name)(component, None, ctypes.c_size_t(3), None) == FMI2_ERROR, name
        assert getattr(library, name)(component, vrs, ctypes.c_size_t(1), None) == FMI2_ERROR, name
    assert any("NULL array of value references" in m for m in payload.errors()), payload.errors()
    # nothing given for nothing asked is fine, and the instance goes on
    assert library.fmi2GetReal(component, None, ctypes.c_size_t(0), None) == 0
    _, rows = payload.run(0.0, 0.05, 0.01, OUTPUTS)
    assert np.isfinite(rows).all()


def test_fmu_states_outlive_a_reset(open_fmu):
    """The host holds an FMU state until fmi2FreeFMUstate: fmi2Reset forgot every one ("unknown
    FMU state"), so a checkpoint taken before a reset could not be restored after it."""
    payload = open_fmu("Payload")
    payload.initialize({"mass": 50.0})
    t, _ = payload.run(0.0, 0.5, 0.05, OUTPUTS)
    state = payload.slave.getFMUstate()
    at_save = payload.get(OUTPUTS)
    _, first = payload.run(t, t + 0.5, 0.05, OUTPUTS)
    payload.slave.reset()
    payload.slave.setFMUstate(state)
    assert np.array_equal(payload.get(OUTPUTS), at_save)
    _, again = payload.run(t, t + 0.5, 0.05, OUTPUTS)
    assert np.array_equal(first, again)
    # the restored run is past initialisation: it is not initialised again over the state
    expect_error(payload, payload.slave.enterInitializationMode, says="not allowed in step mode")
    payload.slave.freeFMUstate(state)


def test_a_state_restored_in_initialization_mode_is_the_run_that_goes_on(open_fmu):
    """Restored between fmi2EnterInitializationMode and fmi2ExitInitializationMode, a state past
    initialisation was dropped at fmi2OK: the outputs read and the exit rebuilt the model from the
    parameters, and the run started again from t = 0."""
    a, b = open_fmu("Payload"), open_fmu("Payload")
    a.initialize({"mass": 50.0})
    t, _ = a.run(0.0, 0.5, 0.05, OUTPUTS)
    blob = a.slave.serializeFMUstate(a.slave.getFMUstate())
    at_save = a.get(OUTPUTS)
    _, first = a.run(t, t + 0.5, 0.05, OUTPUTS)
    b.slave.setupExperiment(startTime=0.0)
    b.slave.enterInitializationMode()
    b.slave.setFMUstate(b.slave.deSerializeFMUstate(blob))
    assert np.array_equal(b.get(OUTPUTS), at_save)
    b.slave.exitInitializationMode()
    assert np.array_equal(b.get(OUTPUTS), at_save)
    _, second = b.run(t, t + 0.5, 0.05, OUTPUTS)
    assert np.array_equal(first, second)


def test_a_state_of_initialization_mode_restored_in_step_mode_can_be_initialised(open_fmu):
    """A state taken in initialisation mode, restored after it: fmi2ExitInitializationMode was
    refused (step mode) and fmi2DoStep too (not initialised): a dead end but for fmi2Reset."""
    payload = open_fmu("Payload")
    payload.slave.setupExperiment(startTime=0.0)
    payload.slave.enterInitializationMode()
    payload.set({"mass": 50.0})
    state = payload.slave.getFMUstate()
    payload.slave.exitInitializationMode()
    _, first = payload.run(0.0, 0.2, 0.05, OUTPUTS)
    payload.slave.setFMUstate(state)
    payload.slave.exitInitializationMode()
    _, again = payload.run(0.0, 0.2, 0.05, OUTPUTS)
    assert np.array_equal(first, again)


def test_a_refused_restore_leaves_the_life_cycle_as_it_was(open_fmu):
    """The undo of a refused restore brings back the phase too (the error state says why)."""
    payload = open_fmu("Payload")
    payload.slave.setupExperiment(startTime=0.0)
    payload.slave.enterInitializationMode()
    state = payload.slave.getFMUstate()
    payload.slave.exitInitializationMode()
    payload.run(0.0, 0.1, 0.05, OUTPUTS)
    good = payload.slave.getFMUstate()
    bad = payload.slave.deSerializeFMUstate(b'{"format": "marine-cosim-fmu-state"}')
    expect_error(payload, payload.slave.setFMUstate, bad, says="fmi2SetFMUstate failed")
    payload.slave.setFMUstate(good)
    payload.run(0.1, 0.2, 0.05, OUTPUTS)             # still in step mode
    for s in (state, good, bad):
        payload.slave.freeFMUstate(s)


@pytest.mark.parametrize("model", ["Payload", "Winch", "Cable"])
def test_a_garbled_serialised_state_is_refused(open_fmu, model):
    """One character of a base64 array or a number changed (a flipped bit, a garbled file):
    another valid state, of numbers nobody saved, restored at fmi2OK."""
    fmu = open_fmu(model)
    names = [v.name for v in fmu.md.modelVariables if v.causality == "output" and v.type == "Real"]
    fmu.initialize()
    fmu.run(0.0, 0.05, 0.01, names)
    good = fmu.slave.getFMUstate()
    blob = bytes(fmu.slave.serializeFMUstate(good))
    before = fmu.get(names)
    # the last array or float of the model's own state, one character changed, still valid JSON
    at = max(blob.rfind(b'"__ndarray__":"') + 15, blob.rfind(b'"__float__":"') + 13)
    while not chr(blob[at]).isalnum():
        at += 1
    char = chr(blob[at])
    other = char.swapcase() if char.isalpha() else str((int(char) + 1) % 10)
    garbled = blob[:at] + other.encode() + blob[at + 1:]
    state = fmu.slave.deSerializeFMUstate(garbled)
    expect_error(fmu, fmu.slave.setFMUstate, state, says="not intact")
    fmu.slave.setFMUstate(good)
    assert np.array_equal(fmu.get(names), before)
    # intact bytes restore, in this instance and in a fresh one
    fmu.slave.setFMUstate(fmu.slave.deSerializeFMUstate(blob))
    assert np.array_equal(fmu.get(names), before)


def test_a_guid_of_another_build_is_refused_at_instantiation(fmu_dir, tmp_path):
    """fmi2Instantiate ignored the GUID: a host holding the modelDescription.xml of another build
    (a stale unzip folder, another version) ran with value references meaning other variables."""
    from fmpy import calloc, extract, free, read_model_description
    from fmpy.fmi2 import (FMU2Slave, fmi2CallbackAllocateMemoryTYPE, fmi2CallbackFreeMemoryTYPE,
                           fmi2CallbackFunctions, fmi2CallbackLoggerTYPE)
    fmu = fmu_dir / "Payload.fmu"
    md = read_model_description(str(fmu))
    unzipped = extract(str(fmu), unzipdir=str(tmp_path / "payload"))
    said = []
    callbacks = fmi2CallbackFunctions()
    callbacks.logger = fmi2CallbackLoggerTYPE(lambda c, name, status, category, message: said.append(message.decode()))
    callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
    callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
    wrong = FMU2Slave(guid="{00000000-0000-5000-8000-000000000000}", unzipDirectory=unzipped,
                      modelIdentifier=md.coSimulation.modelIdentifier, instanceName="stale")
    with pytest.raises(Exception):
        wrong.instantiate(callbacks=callbacks)
    assert any("GUID" in m and md.guid in m for m in said), said
    right = FMU2Slave(guid=md.guid, unzipDirectory=unzipped, modelIdentifier=md.coSimulation.modelIdentifier,
                      instanceName="right")
    right.instantiate(callbacks=callbacks)
    right.setupExperiment(startTime=0.0)
    right.enterInitializationMode()
    right.exitInitializationMode()
    right.doStep(0.0, 0.01)
    right.terminate()
    right.freeInstance()


# ------------------------------------------------------------------ files named by String parameters

@pytest.fixture
def fifo(tmp_path):
    """A named pipe, opened for writing (and closed: end of file) after 20 s, so that a reader
    that waits for it ends rather than hangs the test."""
    made = []

    def make(name: str):
        path = tmp_path / name
        os.mkfifo(path)
        made.append(path)
        return path
    yield make
    for path in made:
        threading.Thread(target=lambda p=path: open(p, "wb").close(), daemon=True).start()


def _refused_at_initialisation(fmu: FmuUnderTest, values: dict, says: str) -> float:
    """Seconds until fmi2ExitInitializationMode refused ``values`` (reads in initialisation mode first)."""
    started = time.monotonic()
    fmu.slave.setupExperiment(startTime=0.0)
    fmu.slave.enterInitializationMode()
    fmu.set(values)
    fmu.slave.getReal([fmu.vr[next(v.name for v in fmu.md.modelVariables if v.causality == "output"
                                   and v.type == "Real")]])
    expect_error(fmu, fmu.slave.exitInitializationMode, says=says)
    return time.monotonic() - started


def test_a_mesh_file_that_is_a_pipe_or_a_folder_is_refused(open_fmu, fifo, tmp_path):
    """A mesh file read whole: a FIFO blocked fmi2GetReal and fmi2ExitInitializationMode until a
    writer came (for ever), /dev/zero filled the memory."""
    pipe = fifo("mesh.obj")
    contact = open_fmu("Contact")
    took = _refused_at_initialisation(contact, {"body1.shape": 4, "body1.mesh_file": str(pipe)},
                                      says="not a regular file")
    assert took < 10.0
    folder = open_fmu("Contact")
    _refused_at_initialisation(folder, {"body1.shape": 4, "body1.mesh_file": str(tmp_path)}, says="is a folder")


@pytest.mark.parametrize("model", ["TipCompensator", "Crane"])
def test_a_mechanism_file_that_is_a_pipe_is_refused(open_fmu, fifo, model):
    """Both read their crane file with components.mechanism.load_mechanism, which checks it first."""
    pipe = fifo("crane.json")
    fmu = open_fmu(model)
    took = _refused_at_initialisation(fmu, {"mechanism": str(pipe)}, says="not a regular file")
    assert took < 10.0
