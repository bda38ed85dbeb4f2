"""Reference FMUs of the Modelica Association in our master, the way a user runs them: a system file
that connects them, ``marine-cosim validate`` and ``run`` with every algorithm.

The FMUs are compiled here with gcc from a vendored subset of github.com/modelica/Reference-FMUs
(tests/models/reference_fmus: Stair, BouncingBall, Feedthrough, FMI 2.0 and 3.0), some with a
capability flag of their modelDescription changed to stand for FMUs we have not seen (one without
getFMUstate, one that needs a fixed communication step).  What these runs found:

* an Integer input fed by an Integer output (Stair's counter) took fractions under the iterative
  master (its trapezoidal average and Aitken's relaxation) and under input extrapolation (order 1,
  2): the FMU refused 1.25 and the run stopped.  Integer, Enumeration and Boolean values are now held
  (extrapolation) and iterated by substitution (iterative);
* an FMU that declares canHandleVariableCommunicationStepSize false was stepped with varying steps
  by error-control and ECCO without a word; they now warn by name before the first step (FMI reads a
  missing flag as false and generators write false by default, pythonfmu3 among them, so most such
  FMUs take any step; one that cannot stops the run by its doStep status);
* an output that overflows (Dahlquist with k = -1e308) was fed on and recorded as inf with exit
  status 0 and no word; the recorders now name the variables and the time they turned NaN or
  infinite (a NonFiniteWarning, metadata.json "non_finite").
"""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from fmpy import simulate_fmu

from orchestration import simulate
from orchestration.cli.main import main
from orchestration.errors import AlgorithmError, ConvergenceError
from orchestration.master.algorithms.step_control import StepSizeWarning
from orchestration.master.observers.results import NonFiniteWarning, load_results
from orchestration.system.model import Component, System
from orchestration.system.ssp import write_ssp
from tests.models.reference_fmus.build import FmuBuildError, build_reference_fmu

pytestmark = pytest.mark.gcc          # the Reference FMUs are compiled with gcc here

STATE = {2: "canGetAndSetFMUstate", 3: "canGetAndSetFMUState"}


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    out = tmp_path_factory.mktemp("reference_fmus")
    try:
        fmus = {}
        for v in (2, 3):
            d = out / f"fmi{v}"
            for model in ("Stair", "BouncingBall", "Feedthrough", "Dahlquist"):
                fmus[model, v] = build_reference_fmu(model, v, d)
            fmus["BouncingBall-nostate", v] = build_reference_fmu(
                "BouncingBall", v, d, suffix="_nostate", attributes={STATE[v]: "false"})
            fmus["BouncingBall-fixedstep", v] = build_reference_fmu(
                "BouncingBall", v, d, suffix="_fixedstep",
                attributes={"canHandleVariableCommunicationStepSize": "false"})
    except FmuBuildError as exc:
        pytest.skip(str(exc))
    return fmus


def stair_system(ref, v: int) -> System:
    """Stair's counter into a Feedthrough's Int32 (Integer for FMI 2.0) input and into another one's
    Float64 input: the counter, 1 to 9, steps up every second; Stair ends the run at 9 s."""
    s = System(f"stair{v}", stop_time=10.0, base_step=0.2)
    s.add_component(Component("st", ref["Stair", v]))
    s.add_component(Component("ft", ref["Feedthrough", v]))
    s.add_component(Component("ft2", ref["Feedthrough", v]))
    s.connect("st.counter", "ft.Int32_input")
    s.connect("st.counter", "ft2.Float64_continuous_input")
    return s


def ball_system(ref, v: int, ball: str = "BouncingBall") -> System:
    s = System(f"ball{v}", stop_time=3.0, base_step=0.01)
    s.add_component(Component("ball", ref[ball, v]))
    s.add_component(Component("ft", ref["Feedthrough", v]))
    s.connect("ball.h", "ft.Float64_continuous_input")
    return s


@pytest.mark.parametrize("v", [2, 3])
@pytest.mark.parametrize("how", [{"algorithm": "fixed"}, {"algorithm": "fixed", "extrapolation": 1},
                                 {"algorithm": "fixed", "extrapolation": 2}, {"algorithm": "iterative"},
                                 {"algorithm": "error-control"}],
                         ids=["hold", "extrapolation1", "extrapolation2", "iterative", "error-control"])
def test_an_integer_counter_reaches_integer_and_real_inputs_whole(ref, v, how):
    """Before: 'ft (Feedthrough.fmu): a Integer input: np.float64(1.25) is not a whole number' under
    iterative and extrapolation; now the counter arrives as it is, under every algorithm."""
    r = simulate(stair_system(ref, v), variables=["st.counter", "ft.Int32_output", "ft2.Float64_continuous_output"],
                 **how)
    assert r.time[-1] == pytest.approx(9.0)           # Stair ends the run
    counter = np.asarray(r["st.counter"], dtype=float)
    assert np.array_equal(counter, np.floor(r.time + 1e-9) + 1)
    # the Feedthroughs are direct feedthrough: their outputs are the counter at the same time (but at
    # 9 s, where Stair ends the run: its counter is 10 there, the Feedthroughs' last step had 9)
    assert np.array_equal(np.asarray(r["ft.Int32_output"], dtype=float)[:-1], counter[:-1])
    assert np.array_equal(np.asarray(r["ft2.Float64_continuous_output"], dtype=float)[:-1], counter[:-1])


@pytest.mark.parametrize("v", [2, 3])
@pytest.mark.parametrize("algorithm", ["error-control", "ecco"])
def test_adaptive_algorithms_warn_of_an_fmu_that_declares_a_fixed_step(ref, v, algorithm):
    """Before: error-control stepped it with 3025 steps of varying size (rollback=never) or halves of
    its step (step doubling) without a word; now the run warns by name, and fixed and iterative run it
    without the warning."""
    s = ball_system(ref, v, "BouncingBall-fixedstep")
    with pytest.warns(StepSizeWarning, match=r"ball \(BouncingBall_fixedstep.fmu\) declares that it can only be "
                                             r"stepped with one step size \(canHandleVariableCommunicationStepSize"):
        if algorithm == "ecco":     # the warning comes first; this system has no power bonds for ECCO
            with pytest.raises(AlgorithmError, match="ecco needs power bonds"):
                simulate(s, algorithm=algorithm, variables=["ball.h"])
        else:
            r = simulate(s, algorithm=algorithm, variables=["ball.h"])
            assert np.all(np.isfinite(r["ball.h"]))
    for ok in ("fixed", "iterative"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", StepSizeWarning)
            r = simulate(s, algorithm=ok, variables=["ball.h"])
        assert len(r.time) == 301 and np.all(np.isfinite(r["ball.h"]))


@pytest.mark.parametrize("v", [2, 3])
def test_an_fmu_without_state_access_is_refused_by_iterative_and_stepped_forward_by_error_control(ref, v):
    s = ball_system(ref, v, "BouncingBall-nostate")
    with pytest.raises(ConvergenceError, match="ball cannot save and restore its state"):
        simulate(s, algorithm="iterative")
    with pytest.warns(StepSizeWarning, match="cannot save and restore its state"):
        r = simulate(s, algorithm="error-control", variables=["ball.h", "ft.Float64_continuous_output"])
    assert r.time[-1] == pytest.approx(3.0) and np.all(np.isfinite(r["ball.h"]))
    assert np.array_equal(r["ft.Float64_continuous_output"], r["ball.h"])


@pytest.mark.parametrize("v", [2, 3])
def test_a_bouncing_ball_system_file_validates_and_runs_with_every_algorithm(ref, v, tmp_path, capsys):
    """An event-driven FMU (the ball's bounces are state events inside its steps) through the CLI:
    the fixed-step run gives FMPy's values at every communication point; the adaptive and iterative
    masters finish with finite values that agree with it where their points coincide."""
    ssd = write_ssp(ball_system(ref, v), tmp_path / "ball.ssd")
    assert main(["validate", str(ssd)]) == 0
    theirs = simulate_fmu(str(ref["BouncingBall", v]), stop_time=3.0, output_interval=0.01, output=["h"])
    for algorithm in ("fixed", "error-control", "iterative"):
        out = tmp_path / algorithm
        assert main(["run", str(ssd), "--algorithm", algorithm, "--out", str(out), "--quiet"]) == 0, algorithm
        ours = load_results(out)
        h = np.asarray(ours["ball.h"])
        assert ours.time[-1] == pytest.approx(3.0) and np.all(np.isfinite(h)), algorithm
        # the iterative master feeds the converged iterate: within its tolerance of ball.h
        assert np.allclose(np.asarray(ours["ft.Float64_continuous_output"]), h, rtol=1e-12, atol=1e-12), algorithm
        if algorithm != "error-control":       # the same grid
            assert np.array_equal(ours.time, theirs["time"])
            assert np.array_equal(h, theirs["h"]), algorithm
    capsys.readouterr()


@pytest.mark.parametrize("v", [2, 3])
def test_an_output_that_overflows_is_named_with_the_time_it_began(ref, v, tmp_path, capsys):
    """Before: columns of inf, exit status 0, not a word; now a warning names them, earliest first."""
    s = System(f"overflow{v}", stop_time=1.0, base_step=0.1)
    s.add_component(Component("d", ref["Dahlquist", v], {"k": -1e308}))
    s.add_component(Component("ft", ref["Feedthrough", v]))
    s.connect("d.x", "ft.Float64_continuous_input")
    with pytest.warns(NonFiniteWarning, match=r"NaN or infinite: d\.x \(from t = 0\.2 s\), "
                                              r"ft\.Float64_continuous_output \(from t = 0\.2 s\)"):
        r = simulate(s, variables=["d.x", "ft.Float64_continuous_output"])
    assert r["d.x"][1] == pytest.approx(1e307) and np.isinf(r["d.x"][2])
    ssd = write_ssp(s, tmp_path / "overflow.ssd")
    assert main(["run", str(ssd), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert "d.x (from t = 0.2 s)" in capsys.readouterr().err
    non_finite = json.loads((tmp_path / "out" / "metadata.json").read_text())["non_finite"]
    assert non_finite["d.x"] == pytest.approx(0.2) and non_finite["ft.Float64_continuous_input"] == pytest.approx(0.2)
    # in memory and in files at once: said once
    with pytest.warns(NonFiniteWarning) as said:
        simulate(s, variables=["d.x"], out=tmp_path / "both")
    assert len([w for w in said if w.category is NonFiniteWarning]) == 1
    # a run without: no such key, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonFiniteWarning)
        simulate(s, parameters={"d.k": 1.0}, variables=["d.x"])


def test_an_fmu_the_master_cannot_run_is_refused_naming_what_it_runs(ref, tmp_path, capsys):
    """An FMU with neither a CoSimulation nor a ModelExchange interface (the Reference FMU Clocks is FMI
    3.0 ScheduledExecution only; here BouncingBall with both removed) is refused by SSP and OSP files
    alike, saying what the master runs. A ModelExchange-only FMU is run (tests/master/test_model_exchange.py)."""
    import re
    import zipfile

    neither = tmp_path / "BouncingBallNone.fmu"
    with zipfile.ZipFile(ref["BouncingBall", 2]) as src, zipfile.ZipFile(neither, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "modelDescription.xml":
                data = re.sub(rb"<CoSimulation\b[^>]*/>|<CoSimulation\b.*?</CoSimulation>", b"", data, flags=re.S)
                data = re.sub(rb"<ModelExchange\b[^>]*/>|<ModelExchange\b.*?</ModelExchange>", b"", data, flags=re.S)
            dst.writestr(item, data)
    osp = tmp_path / "OspSystemStructure.xml"
    osp.write_text('<OspSystemStructure xmlns="http://opensimulationplatform.com/MSMI/OSPSystemStructure" '
                   f'version="0.1"><BaseStepSize>0.1</BaseStepSize><Simulators><Simulator name="ball" '
                   f'source="{neither}"/></Simulators></OspSystemStructure>')
    ssd = tmp_path / "me.ssd"
    ssd.write_text('<ssd:SystemStructureDescription '
                   'xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription" version="1.0" name="me">'
                   '<ssd:System name="me"><ssd:Elements><ssd:Component name="ball" '
                   f'source="{neither.name}"/></ssd:Elements></ssd:System></ssd:SystemStructureDescription>')
    for path in (ssd, osp):
        assert main(["validate", str(path)]) != 0
        said = capsys.readouterr()
        assert ("BouncingBallNone.fmu has no CoSimulation interface: the master runs FMI 1.0, 2.0 and 3.0 "
                "co-simulation FMUs and FMI 2.0 and 3.0 model-exchange FMUs") in said.out + said.err


def test_an_osp_power_bond_may_label_its_variables_by_role_as_libcosim_reads_them(ref, tmp_path):
    """libcosim's own ECCO case (tests/data/fmi2/quarter_truck) declares causality="input" on the
    chassis' velocity, an FMU output: in a power-bond connection libcosim reads @causality as the
    variable's role in the bond. Before: refused ("causality='input', but 'velocity' is output");
    now the direction comes from the FMUs there, and a plain connection still checks it."""
    from orchestration.system.osp import read_osp

    ft = ref["Feedthrough", 2]
    conn = ('<VariableConnection{bond}><Variable simulator="a" name="Float64_continuous_output" causality="input"/>'
            '<Variable simulator="b" name="Float64_continuous_input" causality="output"/></VariableConnection>'
            '<VariableConnection{bond}><Variable simulator="b" name="Float64_continuous_output" causality="input"/>'
            '<Variable simulator="a" name="Float64_continuous_input" causality="output"/></VariableConnection>')
    path = tmp_path / "OspSystemStructure.xml"

    def write(bond: str) -> None:
        path.write_text('<OspSystemStructure xmlns="http://opensimulationplatform.com/MSMI/OSPSystemStructure" '
                        'version="0.1"><BaseStepSize>0.1</BaseStepSize><Simulators>'
                        f'<Simulator name="a" source="{ft}"/><Simulator name="b" source="{ft}"/></Simulators>'
                        f'<Connections>{conn.format(bond=bond)}</Connections></OspSystemStructure>')

    write(' powerBond="ab"')
    s = read_osp(path)
    assert [(c.label(), c.power_bond) for c in s.connections] == [
        ("a.Float64_continuous_output -> b.Float64_continuous_input", "ab"),
        ("b.Float64_continuous_output -> a.Float64_continuous_input", "ab")]
    write("")
    with pytest.raises(Exception, match="causality='input', but 'Float64_continuous_output' is output"):
        read_osp(path)


def typed_system(ref) -> System:
    """Integer, Boolean and Enumeration outputs of FMI 2.0 FMUs into inputs of each type and into a
    Real input, next to Real connections: every value-reference array of the Feedthroughs mixes types."""
    s = System("typed", stop_time=3.0, base_step=0.2)
    s.add_component(Component("st", ref["Stair", 2]))
    s.add_component(Component("ft", ref["Feedthrough", 2], {"Boolean_input": True, "Enumeration_input": 2}))
    s.add_component(Component("ft2", ref["Feedthrough", 2]))
    s.connect("st.counter", "ft.Int32_input")
    s.connect("st.counter", "ft.Float64_continuous_input")
    s.connect("ft.Int32_output", "ft2.Int32_input")
    s.connect("ft.Int32_output", "ft2.Float64_continuous_input")
    s.connect("ft.Boolean_output", "ft2.Boolean_input")
    s.connect("ft.Enumeration_output", "ft2.Enumeration_input")
    return s


TYPED = ["st.counter", "ft.Int32_output", "ft.Float64_continuous_output", "ft.Boolean_output",
         "ft.Enumeration_output", "ft2.Int32_output", "ft2.Float64_continuous_output", "ft2.Boolean_output",
         "ft2.Enumeration_output"]


def differing_columns(a, b, names, rows=slice(None)) -> list[str]:
    """The names whose recorded values differ between two results (over ``rows``)."""
    return [n for n in names
            if not np.array_equal(np.asarray(a[n], dtype=float)[rows], np.asarray(b[n], dtype=float)[rows])]


def test_integer_outputs_in_the_process_backend_fmi2(ref):
    """Before: the process backend's FMI 2.0 fast path (_Hosted.stepper) called fmi2GetReal and
    fmi2SetReal with every value reference, so the first step failed: 'st (Stair.fmu): getReal failed:
    status 3 (error) -- FMU log: Get Float64 is not allowed for value reference 1.' (Stair's Integer
    counter); now a step with typed references goes the generic
    path (InProcessSlave, per type), with the in-process values."""
    s = System("res", stop_time=1.0, base_step=0.2)
    s.add_component(Component("st", ref["Stair", 2]))
    s.add_component(Component("ft", ref["Feedthrough", 2]))
    s.connect("st.counter", "ft.Int32_input")
    r = simulate(s, backend="process", variables=["st.counter", "ft.Int32_output"])
    assert np.array_equal(np.asarray(r["ft.Int32_output"]), np.asarray(r["st.counter"]))
    ours, theirs = (simulate(typed_system(ref), variables=TYPED, **b) for b in ({"backend": "process"}, {}))
    assert np.array_equal(ours.time, theirs.time) and len(ours.time) == 16
    assert differing_columns(ours, theirs, TYPED) == []
    assert np.array_equal(np.asarray(ours["ft2.Boolean_output"], dtype=float), np.ones(16))
    assert np.array_equal(np.asarray(ours["ft2.Enumeration_output"], dtype=float), np.full(16, 2.0))
    assert np.array_equal(np.asarray(ours["ft2.Float64_continuous_output"], dtype=float),
                          np.asarray(ours["st.counter"], dtype=float))


@pytest.mark.parametrize("v", [2, 3])
def test_an_fmu_ends_the_run_in_the_process_backend(ref, v, tmp_path, capsys):
    """Before: Stair's request to end the simulation at 9 s (FMI 3.0 terminateSimulation; FMI 2.0
    fmi2Discard with fmi2Terminated) came back from the worker as a failure, 'st: exchange failed in the
    worker: TerminateRequest: st asked to end the simulation at t = 9 s' (FMI 3.0), 'st (Stair.fmu):
    doStep(t = 8.5 s, h = 0.5 s) failed: status 2 (discard)' (FMI 2.0 fast path), and the run failed;
    now the worker answers it as its own kind, the master re-raises TerminateRequest and the run ends
    at 9 s as it does in-process: completed, terminated by st, the same rows (the last one but for st,
    test below). Stair alone, recording its Real time only, takes the FMI 2.0 fast path."""
    r = simulate(stair_system(ref, v), backend="process", variables=["st.counter"])
    assert r.time[-1] == pytest.approx(9.0)
    alone = System(f"alone{v}", stop_time=10.0, base_step=0.5)
    alone.add_component(Component("st", ref["Stair", v]))
    ssd = write_ssp(alone, tmp_path / "alone.ssd")
    assert main(["run", str(ssd), "--backend", "process", "--variables", "st.time", "--out", str(tmp_path / "alone"),
                 "--quiet"]) == 0
    meta = json.loads((tmp_path / "alone" / "metadata.json").read_text())
    assert meta["status"] == "completed" and meta["end_time"] == pytest.approx(9.0)
    assert meta["terminated_by"] == {"component": "st", "time": pytest.approx(9.0)}

    ssd = write_ssp(stair_system(ref, v), tmp_path / "stair.ssd")
    names = ["st.counter", "ft.Int32_output", "ft2.Float64_continuous_output"]
    for backend in ("inprocess", "process"):
        assert main(["run", str(ssd), "--backend", backend, "--out", str(tmp_path / backend), "--quiet"]) == 0
    capsys.readouterr()
    ours, theirs = load_results(tmp_path / "process"), load_results(tmp_path / "inprocess")
    assert np.array_equal(ours.time, theirs.time) and ours.time[-1] == pytest.approx(9.0)
    assert differing_columns(ours, theirs, names) == []
    meta = {b: json.loads((tmp_path / b / "metadata.json").read_text()) for b in ("inprocess", "process")}
    for key in ("status", "end_time", "macro_steps", "terminated_by"):
        assert meta["process"][key] == meta["inprocess"][key], key


@pytest.mark.parametrize("v", [2, 3])
def test_the_last_row_of_a_run_an_fmu_ends_in_the_process_backend(ref, v):
    """Before: Execution.sync re-raised a remote slave's TerminateRequest without recording its
    outputs where it stopped (advance does, in-process), so its last row held the step before's
    (Stair's counter 9, not 10)."""
    ours, theirs = (simulate(stair_system(ref, v), variables=["st.counter"], **b) for b in ({"backend": "process"}, {}))
    assert np.array_equal(ours.time, theirs.time)
    assert differing_columns(ours, theirs, ["st.counter"]) == []
