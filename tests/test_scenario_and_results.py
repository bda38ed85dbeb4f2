"""Scenario events and result files (CSV, Parquet parts, metadata), including a failed run."""
from __future__ import annotations

import json

import numpy as np
import pytest

from orchestration.algorithms import FixedStepAlgorithm
from orchestration.execution import Execution, ExecutionError, simulate
from orchestration.observers import FileObserver, load_results
from orchestration.scenario import ScenarioError, load_scenario
from orchestration.system import Component, System

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
            scenario.check(ex)
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
