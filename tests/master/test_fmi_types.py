"""The master as an FMI importer (issue 30): every variable type through connections and recordings,
FMI 1.0, 2.0 and 3.0 co-simulation FMUs mixed in one system, FMUs that end the simulation, and the
same results as FMPy.

The FMUs are made with tool chains other than ours, after the Reference FMUs of the Modelica
Association: Feedthrough and Stair in plain C for FMI 2.0 (tests/models/c_fmu/typed_fmi2.c), their FMI
3.0 counterparts with pythonfmu3 (tests/models/fmi3), the plain-C FMI 1.0 Oscillator. With the
Reference FMUs themselves in a folder named by MARINE_COSIM_REFERENCE_FMUS (their release archive, or
a build of github.com/modelica/Reference-FMUs: fmi1/, fmi2/, fmi3/ sub-folders or flat), every model is
also run through FMPy and through ``marine-cosim simulate`` and compared.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import yaml
from fmpy import read_model_description, simulate_fmu

from orchestration import simulate
from orchestration.cli.main import main
from orchestration.errors import MarineCosimError
from orchestration.master.observers.results import load_results
from orchestration.runs.single_fmu import run_fmu
from orchestration.system.model import Component, System
from orchestration.system.ssp import write_ssp
from orchestration.system.validation import validate_system
from tests.models.c_fmu.build import build_stair_fmu, build_typed_feedthrough_fmu
from tests.models.c_fmu.build_fmi1 import build_oscillator_fmi1_fmu
from tests.models.fmi3.build import build_fmi3_fmus

pytestmark = pytest.mark.gcc          # the FMI 1.0 and 2.0 FMUs are plain C built with gcc

FMI2_PAIRS = [("real_out", "real_in"), ("int_out", "int_in"), ("enum_out", "enum_in"), ("bool_out", "bool_in"),
              ("string_out", "string_in")]
FMI3_KINDS = ("Float64", "Int32", "Int64", "UInt64", "Boolean", "String")


@pytest.fixture(scope="module")
def fmus(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("typed_fmus")
    return {"Feedthrough": build_typed_feedthrough_fmu(out), "Stair": build_stair_fmu(out),
            "Oscillator1": build_oscillator_fmi1_fmu(out), **build_fmi3_fmus(out)}


def events(tmp_path: Path, items: list[tuple[float, str, str, object]]) -> Path:
    path = tmp_path / "events.yaml"
    path.write_text(yaml.safe_dump({"events": [{"time": t, "model": m, "variable": v, "value": x}
                                               for t, m, v, x in items]}))
    return path


def chain(fmu: Path, pairs, name: str = "chain") -> System:
    s = System(name, stop_time=1.0, base_step=0.1)
    s.add_component(Component("a", fmu))
    s.add_component(Component("b", fmu))
    for out, inp in pairs:
        s.connect(f"a.{out}", f"b.{inp}")
    return s


def test_two_fmi2_feedthroughs_deliver_every_type(fmus, tmp_path):
    """Real, Integer, Enumeration, Boolean and String from a's inputs (scenario events at 0.5 s)
    through a's outputs into b and out of b, recorded in each type as they change."""
    s = chain(fmus["Feedthrough"], FMI2_PAIRS)
    scenario = events(tmp_path, [(0.5, "a", "real_in", 2.5), (0.5, "a", "int_in", -7), (0.5, "a", "enum_in", 3),
                                 (0.5, "a", "bool_in", True), (0.5, "a", "string_in", "hello")])
    assert validate_system(s).ok
    r = simulate(s, scenario=scenario, variables=[f"b.{out}" for out, _ in FMI2_PAIRS])
    assert r["b.int_out"].dtype == np.int64 and r["b.bool_out"].dtype == bool and r["b.real_out"].dtype == float
    assert r["b.string_out"].dtype == object
    before, after = r.time < 0.45, r.time > 0.55
    for name, start, end in (("real_out", 0.0, 2.5), ("int_out", 0, -7), ("enum_out", 1, 3), ("bool_out", False, True),
                             ("string_out", "", "hello")):
        values = r[f"b.{name}"]
        assert all(v == start for v in values[before]), (name, values)
        assert all(v == end for v in values[after]), (name, values)
    assert r.types == {"b.real_out": "Real", "b.int_out": "Integer", "b.enum_out": "Enumeration",
                       "b.bool_out": "Boolean", "b.string_out": "String"}


def test_two_fmi3_feedthroughs_deliver_every_type(fmus, tmp_path):
    s = chain(fmus["Feedthrough3"], [(f"{k}_out", f"{k}_in") for k in FMI3_KINDS])
    big = 2 ** 53 - 1                     # the largest integer a float64 carries exactly
    values = {"Float64": 0.1, "Int32": -2 ** 31, "Int64": -big, "UInt64": big, "Boolean": True, "String": "ö ✓"}
    scenario = events(tmp_path, [(0.3, "a", f"{k}_in", v) for k, v in values.items()])
    r = simulate(s, scenario=scenario, variables=[f"b.{k}_out" for k in FMI3_KINDS])
    for kind, value in values.items():
        series = r[f"b.{kind}_out"]
        assert series[-1] == value and series[0] != value, (kind, series[0], series[-1])
    assert r.types["b.UInt64_out"] == "Integer" and r["b.Int64_out"].dtype == np.int64


def test_fmi_1_2_and_3_in_one_system_with_the_conversions_ssp_allows(fmus):
    """An Integer into a Real, a Boolean into an Integer, a Float64 into a Real across versions; the
    FMI 1.0 Oscillator's position drives the FMI 3.0 Float64 input."""
    s = System("mixed", stop_time=0.5, base_step=0.05)
    s.add_component(Component("osc", fmus["Oscillator1"], {"x0": 0.2}))
    s.add_component(Component("f2", fmus["Feedthrough"], {"int_in": 4, "bool_in": True}))
    s.add_component(Component("f3", fmus["Feedthrough3"]))
    s.add_component(Component("g2", fmus["Feedthrough"]))
    s.connect("osc.x", "f3.Float64_in")
    s.connect("f2.int_out", "f3.Int32_in")
    s.connect("f2.bool_out", "f3.Boolean_in")
    s.connect("f3.Float64_out", "g2.real_in")
    s.connect("f3.Boolean_out", "g2.int_in")
    report = validate_system(s)
    assert report.ok, report
    r = simulate(s, variables=["osc.x", "f3.Float64_out", "f3.Int32_out", "f3.Boolean_out", "g2.real_out",
                               "g2.int_out"])
    assert np.array_equal(r["f3.Float64_out"], r["osc.x"])          # feedthrough, refreshed at every point
    assert np.array_equal(r["g2.real_out"], r["osc.x"])
    assert set(r["f3.Int32_out"]) == {4} and all(r["f3.Boolean_out"]) and set(r["g2.int_out"]) == {1}


@pytest.mark.parametrize("source, target, message", [
    ("f2.real_out", "f2b.int_in", "a Real output cannot drive a Integer input exactly"),
    ("f2.string_out", "f2b.real_in", "a String output cannot drive a Real input exactly"),
    ("f3.Int64_out", "f3b.Int32_in", "Int64 values can fall outside Int32's range"),
    ("f3.UInt64_out", "f3b.Int64_in", "UInt64 values can fall outside Int64's range"),
])
def test_what_cannot_be_converted_is_refused_by_validate_and_run_alike(fmus, tmp_path, source, target, message):
    s = System("refused", stop_time=0.2, base_step=0.1)
    for name, model in (("f2", "Feedthrough"), ("f2b", "Feedthrough"), ("f3", "Feedthrough3"),
                        ("f3b", "Feedthrough3")):
        s.add_component(Component(name, fmus[model]))
    s.connect(source, target)
    errors = [str(p) for p in validate_system(s).errors]
    assert len(errors) == 1 and message in errors[0], errors
    with pytest.raises(MarineCosimError, match="type mismatch") as raised:
        simulate(s)
    assert message in str(raised.value)
    path = write_ssp(s, tmp_path / "refused.ssd") if "String" not in source else None
    if path is not None:
        assert main(["validate", str(path)]) == 1
        assert main(["run", str(path), "--quiet", "--out", str(tmp_path / "out")]) == 2


def test_a_gain_needs_a_real_target(fmus):
    s = chain(fmus["Feedthrough"], [])
    s.connect("a.int_out", "b.int_in", factor=2.0)
    errors = [str(p) for p in validate_system(s).errors]
    assert len(errors) == 1 and "a linear transformation (factor, offset) needs a Real target" in errors[0]


def test_start_values_are_checked_by_type(fmus):
    s = System("starts", stop_time=0.2, base_step=0.1)
    s.add_component(Component("f", fmus["Feedthrough"], {"int_in": 2.5, "bool_in": "maybe", "real_in": "x"}))
    s.add_component(Component("g", fmus["Feedthrough3"], {"Int32_in": 2 ** 31}))
    errors = " | ".join(str(p) for p in validate_system(s).errors)
    assert "'int_in': 2.5 is not a whole number (Integer)" in errors
    assert "'bool_in': 'maybe' is not a Boolean" in errors
    assert "'real_in': 'x' is not a number (Real)" in errors
    assert "'Int32_in': 2147483648 is outside Int32's range" in errors


def test_the_stair_counter_is_recorded_as_it_changes_and_its_end_ends_the_run(fmus, tmp_path, capsys):
    """FMI 2.0: doStep returns fmi2Discard at 9 s with fmi2Terminated: the run ends there with exit
    status 0, the last row at 9 s, metadata.json says who ended it."""
    assert main(["simulate", str(fmus["Stair"]), "--out", str(tmp_path / "alone"), "--no-plot", "--quiet"]) == 0
    r = load_results(tmp_path / "alone")
    assert r.time[-1] == 9.0 and r["Stair.counter"][-1] == 9
    assert list(np.unique(r["Stair.counter"])) == list(range(1, 10))
    assert r["Stair.counter"].dtype == np.int64
    meta = json.loads((tmp_path / "alone" / "metadata.json").read_text())
    assert meta["status"] == "completed" and meta["terminated_by"] == {"component": "Stair", "time": 9.0}

    s = System("stairs", stop_time=20.0, base_step=0.5)
    s.add_component(Component("stair", fmus["Stair"]))
    s.add_component(Component("f", fmus["Feedthrough"]))
    s.connect("stair.counter", "f.int_in")
    path = write_ssp(s, tmp_path / "stairs.ssd")
    assert main(["run", str(path), "--quiet", "--out", str(tmp_path / "system")]) == 0
    r = load_results(tmp_path / "system")
    assert r.time[-1] == 9.0 and r["f.int_out"][-1] == 9 and r["stair.counter"][-1] == 9


def test_an_fmi3_stair_ends_the_run_through_terminate_simulation(fmus, tmp_path):
    r = run_fmu(fmus["Stair3"], tmp_path, plot=False, progress=False, stop_time=20.0, step_size=0.2)
    results = load_results(tmp_path)
    assert r.time == pytest.approx(9.0) and results["Stair3.counter"][-1] == 9


@pytest.mark.parametrize("model, start", [("Feedthrough", {"int_in": 3, "bool_in": True, "real_in": 0.25}),
                                          ("Stair", {}), ("Oscillator1", {"x0": 0.3}),
                                          ("Feedthrough3", {"Int64_in": 5, "Boolean_in": True}), ("Stair3", {})])
def test_simulate_gives_fmpys_results(fmus, tmp_path, model, start):
    """``marine-cosim simulate`` and FMPy's simulate_fmu on the same FMU with the same defaults (stop
    time, step): the same communication points and values, to the last bit (FMPy has no String
    columns)."""
    fmu = fmus[model]
    ours = load_results(run_fmu(fmu, tmp_path, start_values=start, plot=False, progress=False).out)
    theirs = simulate_fmu(str(fmu), fmi_type="CoSimulation", start_values=start)
    assert np.array_equal(ours.time, theirs["time"])
    for name in theirs.dtype.names[1:]:
        assert np.array_equal(ours[f"{fmu.stem}.{name}"], theirs[name]), name


def test_the_default_step_of_an_fmu_without_one_is_fmpys(fmus, tmp_path):
    """The FMI 1.0 Oscillator has no step size in its DefaultExperiment: FMPy's interval (500-1000
    steps), not a crash on None."""
    assert read_model_description(str(fmus["Oscillator1"])).defaultExperiment.stepSize is None
    report = run_fmu(fmus["Oscillator1"], tmp_path, plot=False, progress=False)
    assert 500 <= report.steps <= 1000


# ---------------------------------------------------------------------------- the Reference FMUs

REFERENCE = os.environ.get("MARINE_COSIM_REFERENCE_FMUS")
SKIP = "set MARINE_COSIM_REFERENCE_FMUS to a folder of the Reference FMUs (github.com/modelica/Reference-FMUs)"


def reference_fmus() -> list[Path]:
    if not REFERENCE:
        return []
    return sorted(p for p in Path(REFERENCE).rglob("*.fmu")
                  if read_model_description(str(p)).coSimulation is not None)


def _scalar_outputs(md) -> list[str]:
    return [v.name for v in md.modelVariables if v.causality == "output" and not getattr(v, "dimensions", None)
            and v.type not in ("Clock", "Binary")]


@pytest.mark.skipif(not REFERENCE, reason=SKIP)
@pytest.mark.parametrize("fmu", reference_fmus(), ids=lambda p: f"{p.parent.parent.name}-{p.stem}")
def test_reference_fmu_gives_fmpys_results(fmu, tmp_path):
    md = read_model_description(str(fmu))
    if any(v.type == "Clock" for v in md.modelVariables) or fmu.stem == "Roberts":
        pytest.skip(f"{fmu.stem}: clocks (scheduled execution) or a stiff 1e8 s run are out of this test's scope")
    outputs = _scalar_outputs(md)
    theirs = simulate_fmu(str(fmu), fmi_type="CoSimulation", output=outputs)
    report = run_fmu(fmu, tmp_path, outputs=outputs, plot=False, progress=False)
    ours = load_results(report.out)
    assert np.array_equal(ours.time, theirs["time"])
    for name in theirs.dtype.names[1:]:
        assert np.array_equal(np.asarray(ours[f"{fmu.stem}.{name}"]), np.asarray(theirs[name])), name


@pytest.mark.skipif(not REFERENCE, reason=SKIP)
def test_reference_feedthroughs_chained_through_every_type(tmp_path):
    for fmu in (p for p in reference_fmus() if p.stem == "Feedthrough"):
        md = read_model_description(str(fmu))
        inputs = {v.name for v in md.modelVariables if v.causality == "input"}
        pairs = [(v.name, v.name.replace("_output", "_input")) for v in md.modelVariables
                 if v.causality == "output" and v.name.replace("_output", "_input") in inputs
                 and v.type not in ("Binary", "Clock")]
        s = chain(fmu, pairs, "reference_chain")
        assert validate_system(s).ok
        r = simulate(s, variables=[f"b.{o}" for o, _ in pairs])
        assert len(r.time) == 11 and all(f"b.{o}" in r for o, _ in pairs)
