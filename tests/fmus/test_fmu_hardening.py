"""The reproducers of issue 23 (FMU side), each a clear fmi2Error now: a non-finite read, a start
time, a tampered FMU state, a failed step or restore (FMI's error state), sub-steps without a
lower bound, one doStep of unbounded work, calls after fmi2Terminate."""
from __future__ import annotations

import base64
import json
import math

import numpy as np
import pytest

import build_fmus
from tests.support.fmu_runner import FmuUnderTest, expect_error


def outputs(fmu: FmuUnderTest) -> list[str]:
    return [v.name for v in fmu.md.modelVariables if v.causality == "output" and v.type == "Real"]


def test_crane_gravity_beyond_its_range_is_refused_in_initialisation(open_fmu):
    crane = open_fmu("Crane")
    crane.slave.setupExperiment(startTime=0.0)
    crane.slave.enterInitializationMode()
    expect_error(crane, crane.set, {"gravity": 1e308}, says="'gravity' = 1e+308 is outside its range")
    assert np.isfinite(crane.get(outputs(crane))).all()       # read in initialisation mode, status OK


def test_payload_added_inertia_beyond_its_range_is_refused(open_fmu):
    payload = open_fmu("Payload")
    payload.slave.setupExperiment(startTime=0.0)
    payload.slave.enterInitializationMode()
    expect_error(payload, payload.set, {"hydro.added_inertia[2]": 1e308}, says="'hydro.added_inertia[2]'")
    assert np.isfinite(payload.get(outputs(payload))).all()


def test_every_numeric_parameter_has_a_declared_range(fmu_dir):
    from fmpy import read_model_description
    for fmu in sorted(fmu_dir.glob("*.fmu")):
        for v in read_model_description(str(fmu)).modelVariables:
            if v.causality == "parameter" and v.type in ("Real", "Integer"):
                assert v.min is not None and v.max is not None, f"{fmu.stem}: {v.name}"
                assert math.isfinite(float(v.min)) and math.isfinite(float(v.max)), f"{fmu.stem}: {v.name}"


@pytest.mark.parametrize("start", [math.nan, math.inf, 1e30])
def test_a_start_time_that_is_not_a_time_is_the_error_state_for_every_fmu(open_fmu, start):
    for model in build_fmus.find_adapters():
        fmu = open_fmu(model)
        expect_error(fmu, fmu.slave.setupExperiment, None, start, says="start time")
        expect_error(fmu, fmu.slave.enterInitializationMode, says="error state")


def _tampered(blob: bytes, how: str) -> bytes:
    """The serialised state with the first number of the model's own state made NaN (``nan``), or
    its first float array one element short, or where it has none, its first float an array
    (``shape``)."""
    envelope = json.loads(bytes(blob))
    arrays, floats = [], []

    def walk(node):
        if isinstance(node, dict):
            if node.get("dtype", "").endswith("f8") and len(base64.b64decode(node["__ndarray__"])) >= 16:
                arrays.append(node)
            elif "__float__" in node:
                floats.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(envelope["state"]["__dict__"]["model"])
    if arrays:
        node = arrays[0]
        raw = np.frombuffer(base64.b64decode(node["__ndarray__"]), dtype="<f8").copy()
        if how == "nan":
            raw[1] = math.nan
        else:
            raw = raw[:-1]
            node["shape"] = [raw.size]
        node["__ndarray__"] = base64.b64encode(raw.tobytes()).decode()
    elif how == "nan":
        floats[0]["__float__"] = "nan"
    else:
        floats[0].clear()
        floats[0].update({"__ndarray__": base64.b64encode(np.zeros(2).tobytes()).decode(), "dtype": "<f8",
                          "shape": [2]})
    return json.dumps(envelope).encode()


@pytest.mark.parametrize("model", ["Winch", "Cable", "Contact"])
@pytest.mark.parametrize("how", ["nan", "shape"])
def test_a_tampered_state_is_refused_whole_and_a_valid_one_recovers(open_fmu, model, how):
    fmu = open_fmu(model)
    names = outputs(fmu)
    fmu.initialize()
    fmu.run(0.0, 0.05, 0.01, names)
    good = fmu.slave.getFMUstate()
    before = fmu.get(names)
    bad = fmu.slave.deSerializeFMUstate(_tampered(fmu.slave.serializeFMUstate(good), how))
    expect_error(fmu, fmu.slave.setFMUstate, bad, says="fmi2SetFMUstate failed")
    # the error state: every later call says so, never fmi2OK with a NaN
    expect_error(fmu, fmu.slave.getReal, [fmu.vr[n] for n in names], says="error state")
    expect_error(fmu, fmu.slave.doStep, 0.05, 0.01, says="cannot step")
    # a valid state is the way out, and nothing of the refused one was kept
    fmu.slave.setFMUstate(good)
    assert np.array_equal(fmu.get(names), before)
    _, rows = fmu.run(0.05, 0.1, 0.01, names)
    assert np.isfinite(rows).all()
    for state in (good, bad):
        fmu.slave.freeFMUstate(state)


def test_after_a_failed_step_every_read_is_an_error(open_fmu):
    payload = open_fmu("Payload")
    payload.initialize({"attachment1.location[0]": 1.0})
    payload.set({"attachment1.force[1]": 1e308, "cg.force[1]": 1e308})
    expect_error(payload, payload.slave.doStep, 0.0, 0.01, says="became")
    for _ in range(2):
        expect_error(payload, payload.slave.getReal, [payload.vr["cg.position[2]"]], says="error state")
    expect_error(payload, payload.set, {"attachment1.force[1]": 0.0}, says="error state")


@pytest.mark.parametrize("model", ["Winch", "Ship", "Crane", "Payload", "MotionPlatform"])
@pytest.mark.parametrize("substep", [1e-300, 1e-9])
def test_a_sub_step_below_its_lower_bound_is_refused(open_fmu, model, substep):
    fmu = open_fmu(model)
    fmu.slave.setupExperiment(startTime=0.0)
    fmu.slave.enterInitializationMode()
    expect_error(fmu, fmu.set, {"max_substep": substep}, says="'max_substep'")


def test_one_do_step_may_not_run_without_bound(open_fmu):
    crane = open_fmu("Crane")
    crane.initialize()
    message = expect_error(crane, crane.slave.doStep, 0.0, 1000.0, says="internal sub-steps")
    assert "at most" in message
    # refused, not failed: the instance goes on with steps it may take
    _, rows = crane.run(0.0, 0.02, 0.01, outputs(crane))
    assert np.isfinite(rows).all()


def test_nothing_but_reads_after_terminate(open_fmu):
    winch = open_fmu("Winch")
    winch.initialize()
    winch.run(0.0, 0.02, 0.01, ["payout.speed"])
    winch.slave.terminate()
    assert np.isfinite(winch.get(["payout.speed"])).all()     # FMI 2.0 lets a master read the final values
    expect_error(winch, winch.set, {"speed_setpoint": 1.0}, says="terminated")
    expect_error(winch, winch.slave.doStep, 0.02, 0.01, says="terminated")
    expect_error(winch, winch.slave.enterInitializationMode, says="terminated")


def test_calls_out_of_the_life_cycle_are_refused_and_change_nothing(open_fmu):
    winch = open_fmu("Winch")
    winch.slave.setupExperiment(startTime=0.0)
    winch.slave.enterInitializationMode()
    expect_error(winch, winch.slave.enterInitializationMode, says="not allowed in initialization mode")
    expect_error(winch, winch.slave.setupExperiment, None, 1.0, says="not allowed in initialization mode")
    winch.slave.exitInitializationMode()
    expect_error(winch, winch.slave.exitInitializationMode, says="not allowed in step mode")
    winch.run(0.0, 0.02, 0.01, ["payout.speed"])    # refused calls left no error state behind
