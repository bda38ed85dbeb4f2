"""Scenario events and result files (CSV, Parquet parts, metadata), including a failed run."""
from __future__ import annotations

import json

import numpy as np
import pytest

from orchestration.master.algorithms.fixed import FixedStepAlgorithm
from orchestration.master.execution import Execution, ExecutionError
from orchestration import simulate
from orchestration.master.observers.results import FileObserver, load_results
from orchestration.master.manipulators.scenario import ScenarioError, load_scenario
from orchestration.system.model import Component, System

HOOK = """
description: a hook holds the payload, lifts it harder at 1 s, releases it at 2 s
end: 3.0
events:
  - time: 0.0
    model: p
    variable: "attachment1.force[2]"
    action: override
    value: -9.81
  - time: 1.0
    model: p
    variable: "attachment1.force[2]"
    action: bias
    value: -1.0
  - time: 2.0
    model: p
    variable: "attachment1.force[2]"
    action: reset
"""


def one_payload(payload_fmu) -> System:
    s = System("hook")
    s.add_component(Component("p", payload_fmu, {"mass": 1.0}))
    return s


def test_yaml_scenario_overrides_biases_and_resets(payload_fmu, tmp_path):
    path = tmp_path / "hook.yaml"
    path.write_text(HOOK)
    scenario = load_scenario(path)
    assert scenario.end == 3.0
    r = simulate(one_payload(payload_fmu), scenario.end, 0.01, manipulators=[scenario],
                 variables=["p.cg.position[2]", "p.attachment1.force[2]"])
    t, z, f = r.time, r["p.cg.position[2]"], r["p.attachment1.force[2]"]
    assert np.allclose(z[t <= 1.0 + 1e-9], 0.0, atol=1e-12)           # held: weight balanced
    assert f[0] == -9.81                                                # the t = 0 event is in the initial state
    assert f[np.searchsorted(t, 1.5)] == pytest.approx(-10.81)
    # lifted at 1 m/s2 for 1 s: at t = 2 s, z = -0.5 m and v = -1 m/s; then free fall
    assert z[np.searchsorted(t, 2.0)] == pytest.approx(-0.5, rel=1e-9)
    assert z[-1] == pytest.approx(-0.5 - 1.0 + 0.5 * 9.81, rel=1e-9)
    assert f[-1] == 0.0


@pytest.mark.parametrize("text, expected", [
    ("events: [{time: 1, model: p, variable: x, action: explode, value: 1}]", "action 'explode'"),
    ("events: [{model: p, variable: x, value: 1}]", "missing time"),
    ("events: [{time: 1, model: p, variable: x}]", "needs a value"),
    ("events: {a: 1}", "'events' list"),
    ("events: [{time: soon, model: p, variable: x, value: 1}]", "not a number"),
])
def test_bad_scenario_files_are_named(tmp_path, text, expected):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert "bad.yaml" in str(info.value) and expected in str(info.value)


def test_scenario_on_a_fixed_parameter_is_refused(payload_fmu, tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"events": [{"time": 1, "model": "p", "variable": "mass", "value": 2}]}))
    scenario = load_scenario(path)
    ex = Execution(one_payload(payload_fmu), manipulators=[scenario])
    try:
        with pytest.raises(ScenarioError, match="events\\[0\\].*fixed parameter"):
            scenario.check(ex.system)
    finally:
        ex.free()


def run_to_files(system, out, stop, step, flush_every):
    variables = [("p", "cg.position[2]"), ("p", "cg.velocity[2]"), ("p", "cg.force[0]")]
    observer = FileObserver(out, variables, flush_every=flush_every)
    ex = Execution(system, FixedStepAlgorithm(), observers=[observer], observed=variables)
    try:
        ex.initialize()
        ex.run(stop, step)
    finally:
        ex.free()


def test_results_are_written_as_csv_parquet_and_metadata(payload_fmu, tmp_path):
    system = one_payload(payload_fmu)
    run_to_files(system, tmp_path / "out", 1.0, 0.01, flush_every=30)
    parts = sorted((tmp_path / "out" / "results.parquet").glob("part-*.parquet"))
    assert len(parts) == 4   # 101 rows in flushes of 30
    from_parquet = load_results(tmp_path / "out")
    csv_rows = np.loadtxt(tmp_path / "out" / "results.csv", delimiter=",", skiprows=1)
    assert np.array_equal(csv_rows[:, 0], from_parquet.time)
    assert np.array_equal(csv_rows[:, 1], from_parquet["p.cg.position[2]"])
    assert from_parquet["p.cg.position[2]"][-1] == pytest.approx(0.5 * 9.81, rel=1e-12)
    meta = json.loads((tmp_path / "out" / "metadata.json").read_text())
    assert meta["status"] == "completed" and meta["macro_steps"] == 100
    assert meta["components"]["p"]["guid"].startswith("{") and meta["components"]["p"]["parameters"] == {"mass": 1.0}
    assert meta["algorithm"]["method"] == "jacobi" and "numpy" in meta["packages"]


def test_a_failed_run_keeps_what_was_flushed(payload_fmu, tmp_path):
    s = System("failing")
    s.add_component(Component("p", payload_fmu, {"mass": 1.0}))
    s.add_component(Component("q", payload_fmu, {"mass": 1.0}))
    # q's depth grows; from some point the huge factor overflows p's force and p fails
    s.connect("q.cg.position[2]", "p.cg.force[0]", factor=1e306)
    with pytest.raises(ExecutionError):
        run_to_files(s, tmp_path / "out", 2.0, 0.01, flush_every=10)
    meta = json.loads((tmp_path / "out" / "metadata.json").read_text())
    assert meta["status"] == "failed" and "p (Payload.fmu)" in meta["error"]
    kept = load_results(tmp_path / "out")
    assert len(kept.time) >= 2 and kept.time[-1] == pytest.approx(meta["end_time"])


WINCH_EVENTS = """
events:
  - {time: 0.2, model: w, variable: brake, value: true}
  - {time: 0.2, model: w, variable: mode, value: 1}
  - {time: 0.4, model: w, variable: brake, action: reset}
  - {time: 0.4, model: w, variable: mode, action: reset}
"""


def test_events_set_integer_and_boolean_inputs_with_their_own_type(fmu_dir, tmp_path):
    """The winch's brake (Boolean) and mode (Integer) inputs switched by events, then released back
    to their start values (no Real-vector workaround needed)."""
    path = tmp_path / "winch.yaml"
    path.write_text(WINCH_EVENTS)
    scenario = load_scenario(path)
    s = System("winch")
    s.add_component(Component("w", fmu_dir / "Winch.fmu", {"initial_line_length": 10.0, "max_substep": 1e-3}))
    ex = Execution(s, FixedStepAlgorithm(), manipulators=[scenario])
    seen = []
    try:
        scenario.check(ex.system)
        ex.initialize()
        for _ in range(6):
            ex.step(0.1)
            seen.append((round(ex.time, 6), ex.value("w", "brake"), ex.value("w", "mode"),
                         ex.value("w", "brake.engaged")))
    finally:
        ex.free()
    by_time = {t: rest for t, *rest in seen}
    assert by_time[0.1] == [False, 0, False]
    assert by_time[0.3] == [True, 1, True]          # the events at 0.2 act on the step 0.2 -> 0.3
    assert by_time[0.5] == [False, 0, False]        # reset: the start values again


def test_bias_on_a_boolean_input_is_refused_by_name(fmu_dir, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("events: [{time: 0.1, model: w, variable: brake, action: bias, value: 1}]")
    scenario = load_scenario(path)
    s = System("winch")
    s.add_component(Component("w", fmu_dir / "Winch.fmu"))
    ex = Execution(s, FixedStepAlgorithm(), manipulators=[scenario])
    try:
        with pytest.raises(ScenarioError, match="bias needs a Real input, w.brake is a Boolean input"):
            scenario.check(ex.system)
    finally:
        ex.free()


@pytest.mark.gcc
def test_an_event_on_a_feedthrough_input_reaches_the_other_slaves_in_the_same_step(tmp_path):
    """o's acceleration output depends directly on its force input; p is pushed by o's acceleration.
    A scenario that steps o.F at t = 0.5 must change p's input for the step starting at 0.5 (before
    the fix, p saw o's acceleration of the old force for one macro step)."""
    from tests.models.c_fmu.build import build_oscillator_fmu

    fmu = build_oscillator_fmu(tmp_path / "c_fmu")
    path = tmp_path / "push.yaml"
    path.write_text("events: [{time: 0.5, model: o, variable: F, value: 100.0}]")
    scenario = load_scenario(path)
    s = System("push")
    s.add_component(Component("o", fmu, {"m": 10.0, "k": 1000.0, "c": 5.0, "x0": 0.01}))
    s.add_component(Component("p", fmu, {"m": 10.0, "k": 1000.0, "c": 5.0}))
    s.connect("o.a", "p.F", factor=2.0)
    ex = Execution(s, FixedStepAlgorithm("jacobi"), manipulators=[scenario], observed=[("o", "x"), ("o", "v")])
    try:
        ex.initialize()
        while ex.time < 0.5 - 1e-9:
            ex.step(0.05)
        x, v = ex.value("o", "x"), ex.value("o", "v")
        ex.step(0.05)                                   # the event acts on this step
        pushed = float(ex.inputs[ex.index["p"]][0])
    finally:
        ex.free()
    expected = 2.0 * (100.0 - 1000.0 * x - 5.0 * v) / 10.0
    assert pushed == pytest.approx(expected, rel=1e-12)
