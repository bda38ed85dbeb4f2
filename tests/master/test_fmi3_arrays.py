"""FMI 3.0 array variables of a third-party FMU in our master: the Modelica Association's Reference
FMU StateSpace (``der(x) = A x + B u``, ``y = C x + D u``; u, y, x are arrays sized by the
structural parameters m, r, n, all 3; A, B, C, D are 3x3), compiled here with gcc from the vendored
sources (tests/models/reference_fmus).

Elements are addressed ``u[0]``, ``A[0][0]`` (0-based, row-major): connected to and from scalar
Feedthrough FMUs, given start values, recorded, under every algorithm and in worker processes.
With A = -I (start values of its diagonal elements) and constant inputs u, the FMU's fixed
forward-Euler step (1 ms) gives x_i(t) = u_i (1 - (1 - h)^(t/h)) exactly and y = x + u; the
continuous solution is u_i (2 - exp(-t)).

ArrayFeedthrough (ours, on the Reference FMUs' framework) takes the Int32, Boolean and matrix paths
with arrays of fixed sizes.
"""
from __future__ import annotations

import re
import zipfile

import numpy as np
import pytest
from fmpy import simulate_fmu

from orchestration import simulate
from orchestration.cli.main import main
from orchestration.errors import SystemFileError
from orchestration.master.observers.results import default_observed, load_results
from orchestration.system.files import load_system
from orchestration.system.model import Component, Connection, System
from orchestration.system.ssp import write_ssp
from orchestration.system.validation import validate_system
from tests.models.reference_fmus.build import FmuBuildError, build_reference_fmu

pytestmark = pytest.mark.gcc          # the Reference FMUs are compiled with gcc here

H = 1e-3                              # StateSpace's fixed solver step (its config.h)
U = np.array([2.0, 0.5, -1.0])        # u[0], u[2]: from src's continuous and discrete outputs; u[1]: a start value
NEGATIVE_A = {"A[0][0]": -1.0, "A[1][1]": -1.0, "A[2][2]": -1.0}


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    out = tmp_path_factory.mktemp("reference_fmus")
    try:
        return {model: build_reference_fmu(model, 3, out) for model in ("StateSpace", "Feedthrough")}
    except FmuBuildError as exc:
        pytest.skip(str(exc))


def statespace_system(ref) -> System:
    """Feedthrough outputs into u[0] and u[2], u[1] a start value, y[0] into another Feedthrough."""
    s = System("arrays", stop_time=2.0, base_step=0.1)
    s.add_component(Component("ss", ref["StateSpace"], parameters={**NEGATIVE_A, "u[1]": 0.5}))
    s.add_component(Component("src", ref["Feedthrough"], parameters={"Float64_continuous_input": 2.0,
                                                                      "Float64_discrete_input": -1.0}))
    s.add_component(Component("sink", ref["Feedthrough"]))
    s.connect("src.Float64_continuous_output", "ss.u[0]")
    s.connect("src.Float64_discrete_output", "ss.u[2]")
    s.connect("ss.y[0]", "sink.Float64_continuous_input")
    return s


def euler(t: np.ndarray) -> np.ndarray:
    """y(t) of the FMU's own forward Euler with A = -I, B = C = D = I and the constant inputs U."""
    return U[:, None] * (2.0 - (1.0 - H) ** np.round(t / H))


@pytest.mark.parametrize("algorithm,backend", [("fixed", None), ("iterative", None), ("error-control", None),
                                               ("fixed", "process"), ("iterative", "process")])
def test_elements_of_statespace_connect_to_scalar_fmus_and_match_the_exact_solution(ref, algorithm, backend):
    s = statespace_system(ref)
    assert validate_system(s).ok, validate_system(s)
    r = simulate(s, algorithm=algorithm, variables=["ss.y[0]", "ss.y[1]", "ss.y[2]", "ss.u[1]",
                                                    "sink.Float64_continuous_output"],
                 **({"backend": backend} if backend else {}))
    t = np.asarray(r.time)
    assert t[-1] == pytest.approx(2.0)
    y = np.array([np.asarray(r[f"ss.y[{i}]"]) for i in range(3)])
    # each element is the one asked for (u[1] = 0.5 and u[2] = -1 would show in a mix-up)
    assert np.abs(y - euler(t)).max() < 1e-12
    assert np.abs(y - U[:, None] * (2.0 - np.exp(-t))).max() < 5e-4       # the continuous solution
    assert np.array_equal(np.asarray(r["ss.u[1]"]), np.full(len(t), 0.5))
    assert np.allclose(np.asarray(r["sink.Float64_continuous_output"]), y[0], rtol=0, atol=1e-12)


def test_statespace_alone_in_fmpy_agrees_with_our_run(ref):
    """FMPy runs StateSpace with the same start values (its own array handling) and gets our y."""
    theirs = simulate_fmu(str(ref["StateSpace"]), stop_time=2.0, output_interval=0.1, output=["y"],
                          start_values={"A": [-1.0, 0, 0, 0, -1.0, 0, 0, 0, -1.0], "u": list(U)})
    s = System("alone", stop_time=2.0, base_step=0.1)
    s.add_component(Component("ss", ref["StateSpace"], parameters={**NEGATIVE_A, **{f"u[{i}]": float(U[i])
                                                                                    for i in range(3)}}))
    ours = simulate(s, variables=[f"ss.y[{i}]" for i in range(3)])
    assert np.array_equal(ours.time, theirs["time"])
    for i in range(3):
        assert np.array_equal(np.asarray(ours[f"ss.y[{i}]"]), theirs["y"][:, i]), i


@pytest.mark.parametrize("backend", [None, "process"])
def test_ecco_steps_a_power_bond_through_array_elements(ref, backend):
    """A feedback loop y[0] -> Feedthrough -> u[0] marked as a power bond, D[0][0] = 0 (an element
    of a 2-D array), A[0][0] = -2, B[0][1] = 1 with u[1] = 0.5: x[0]' = -x[0] + 0.5."""
    s = System("bond", stop_time=2.0, base_step=0.01)
    s.add_component(Component("ss", ref["StateSpace"], parameters={
        **NEGATIVE_A, "A[0][0]": -2.0, "D[0][0]": 0.0, "B[0][1]": 1.0, "u[1]": 0.5}))
    s.add_component(Component("ft", ref["Feedthrough"]))
    s.connect("ss.y[0]", "ft.Float64_continuous_input", power_bond="loop")
    s.connect("ft.Float64_continuous_output", "ss.u[0]", power_bond="loop")
    for algorithm in ("ecco", "fixed"):
        r = simulate(s, algorithm=algorithm, variables=["ss.y[0]", "ss.x[0]"],
                     **({"backend": backend} if backend else {}))
        t, y0 = np.asarray(r.time), np.asarray(r["ss.y[0]"])
        assert t[-1] == pytest.approx(2.0) and np.all(np.isfinite(y0)), algorithm
        assert np.array_equal(y0, np.asarray(r["ss.x[0]"])), algorithm          # D[0][0] = 0 took
        # the loop lags a step: 7.4e-4 from the continuous solution (2026-11-29)
        assert np.abs(y0 - 0.5 * (1.0 - np.exp(-t))).max() < 2e-3, algorithm


def test_whole_arrays_connect_element_by_element_from_a_system_file(ref, tmp_path):
    """ss1.y -> ss2.u written as one connection of whole arrays: three element connections."""
    s = System("whole", stop_time=1.0, base_step=0.1)
    s.add_component(Component("ss1", ref["StateSpace"], parameters=dict(NEGATIVE_A)))
    s.add_component(Component("ss2", ref["StateSpace"], parameters=dict(NEGATIVE_A)))
    s.connections.append(Connection(("ss1", "y"), ("ss2", "u")))
    ssd = write_ssp(s, tmp_path / "whole.ssd")
    loaded = load_system(ssd)
    assert [(c.source[1], c.target[1]) for c in loaded.connections] == [("y[0]", "u[0]"), ("y[1]", "u[1]"),
                                                                        ("y[2]", "u[2]")]
    assert validate_system(loaded).ok
    r = simulate(loaded, variables=["ss1.y[1]", "ss2.u[1]"])
    y, u = np.asarray(r["ss1.y[1]"]), np.asarray(r["ss2.u[1]"])
    # the fixed-step master feeds each step the output of the step before (the start: the initial one)
    assert u[0] == y[0] == 2.0 and np.array_equal(u[1:], y[:-1])
    assert y[-1] == pytest.approx(2.0 * (2.0 - np.exp(-1.0)), abs=1e-3)
    # System.connect does the same
    s2 = System("whole2")
    s2.add_component(Component("ss1", ref["StateSpace"]))
    s2.add_component(Component("ss2", ref["StateSpace"]))
    s2.connect("ss1.y", "ss2.u", factor=2.0)
    assert [(c.target[1], c.factor) for c in s2.connections] == [("u[0]", 2.0), ("u[1]", 2.0), ("u[2]", 2.0)]


def test_elements_are_recorded_by_default_and_by_name_from_the_command_line(ref, tmp_path, capsys):
    s = statespace_system(ref)
    observed = default_observed(s)
    assert ("ss", "y[2]") in observed and ("ss", "u[0]") in observed
    assert ("ss", "y") not in observed and ("ss", "A[0][0]") not in observed     # parameters: when asked
    ssd = write_ssp(s, tmp_path / "arrays.ssd")
    out = tmp_path / "run"
    assert main(["run", str(ssd), "--out", str(out), "--quiet", "--variables", "ss.y[2]", "ss.x[2]"]) == 0
    r = load_results(out)
    assert np.abs(np.asarray(r["ss.y[2]"]) - euler(np.asarray(r.time))[2]).max() < 1e-12
    assert np.abs(np.asarray(r["ss.x[2]"]) - (euler(np.asarray(r.time))[2] - U[2])).max() < 1e-12
    capsys.readouterr()


def _ssd_with(ref, tmp_path, source: str, target: str):
    """An SSD with the connection source -> target as a user would edit it: written with a valid
    element of StateSpace (y[0] or u[0]) in its place, then that name replaced in the file."""
    s = System("bad", stop_time=1.0, base_step=0.1)
    s.add_component(Component("ss", ref["StateSpace"]))
    s.add_component(Component("ft", ref["Feedthrough"]))
    ends = [tuple(end.split(".", 1)) for end in (source, target)]
    stand_in = [(comp, ("y[0]" if k == 0 else "u[0]") if comp == "ss" else var) for k, (comp, var) in enumerate(ends)]
    s.connections.append(Connection(*stand_in))
    ssd = write_ssp(s, tmp_path / "bad.ssd")
    text = ssd.read_text()
    for (_, var), (_, written) in zip(ends, stand_in):
        text = text.replace(f'"{written}"', f'"{var}"')
    ssd.write_text(text)
    return ssd


@pytest.mark.parametrize("source,target,expected", [
    ("ss.y[3]", "ft.Float64_continuous_input", "'y[3]' is out of range: y has shape 3 (elements y[0] .. y[2]"),
    ("ft.Float64_continuous_output", "ss.A[0,1]", "one bracket per dimension, 'A[0][1]'"),
    ("ft.Float64_continuous_output", "ss.A[1]", "A has 2 dimension(s) (shape 3x3): an element is written A[i][j]"),
    ("ss.y", "ft.Float64_continuous_input", "ss.y is a whole array (shape 3) and ft.Float64_continuous_input a "
                                            "scalar"),
])
def test_a_system_file_with_a_wrong_element_or_an_array_into_a_scalar_is_refused_by_name(ref, tmp_path, capsys,
                                                                                        source, target, expected):
    ssd = _ssd_with(ref, tmp_path, source, target)
    with pytest.raises(SystemFileError) as caught:
        load_system(ssd)
    assert expected in str(caught.value)
    assert main(["validate", str(ssd)]) != 0
    captured = capsys.readouterr()
    assert expected in (captured.out + captured.err).replace("\n", " ")


def test_whole_arrays_of_different_shapes_are_refused_naming_both(ref):
    s = System("shapes", stop_time=1.0, base_step=0.1)
    s.add_component(Component("a", ref["StateSpace"]))
    s.add_component(Component("b", ref["StateSpace"]))
    with pytest.raises(SystemFileError, match=r"shape mismatch: a\.y has shape 3, b\.A has shape 3x3"):
        s.connect("a.y", "b.A")
    assert s.connections == []
    s.connections.append(Connection(("a", "y"), ("b", "A")))       # not through connect: the validation says it
    assert any("shape mismatch: a.y has shape 3, b.A has shape 3x3" in str(p) for p in validate_system(s).errors)


def test_start_values_of_whole_arrays_and_of_sizing_structural_parameters_are_refused(ref):
    s = System("starts", stop_time=1.0, base_step=0.1)
    s.add_component(Component("ss", ref["StateSpace"], parameters={"u": 1.0, "n": 2, "y[5]": 1.0, "A[2][2]": 0.5}))
    errors = [str(p) for p in validate_system(s).errors]
    assert any("'u' is an array variable: give start values to its elements" in e for e in errors), errors
    sizes = "'n' is a structural parameter that sizes the arrays A, B, C, x0, x, der(x)"
    assert any(sizes in e for e in errors), errors
    assert any("'y[5]' is out of range" in e for e in errors), errors
    assert not any("A[2][2]" in e for e in errors), errors


def test_simulating_statespace_alone_records_its_output_elements_as_fmpy_gives_them(ref, tmp_path, capsys):
    """``marine-cosim simulate`` of one FMU: every element of its output arrays, FMPy's values."""
    out = tmp_path / "alone"
    assert main(["simulate", str(ref["StateSpace"]), "--out", str(out), "--no-plot", "--quiet",
                 "--set", "A[0][0]=-1", "--set", "u[2]=0.25"]) == 0
    ours = load_results(out)
    theirs = simulate_fmu(str(ref["StateSpace"]), fmi_type="CoSimulation", output=["y"],
                          start_values={"A": [-1.0, 0, 0, 0, 1.0, 0, 0, 0, 1.0], "u": [1.0, 2.0, 0.25]})
    assert np.array_equal(ours.time, theirs["time"])
    for i in range(3):
        assert np.array_equal(np.asarray(ours[f"StateSpace.y[{i}]"]), theirs["y"][:, i]), i
    capsys.readouterr()


def test_an_array_whose_size_cannot_be_resolved_is_refused_naming_its_structural_parameter(ref, tmp_path):
    """StateSpace with the start value of m (the size of u) taken out of its modelDescription."""
    broken = tmp_path / "StateSpace_no_m.fmu"
    with zipfile.ZipFile(ref["StateSpace"]) as src, zipfile.ZipFile(broken, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "modelDescription.xml":
                text = data.decode()
                line = next(x for x in text.splitlines() if 'name="m"' in x)
                data = text.replace(line, line.replace(' start="3"', "")).encode()
            dst.writestr(item, data)
    s = System("unsized", stop_time=1.0, base_step=0.1)
    s.add_component(Component("ss", broken))
    s.add_component(Component("ft", ref["Feedthrough"]))
    s.connections.append(Connection(("ft", "Float64_continuous_output"), ("ss", "u[0]")))
    expected = "array B: its dimension 2 (structural parameter m) has no start value: its size cannot be resolved"
    errors = [str(p) for p in validate_system(s).errors]
    assert any(expected in e for e in errors), errors
    ssd = tmp_path / "unsized.ssd"
    s.connections[0] = Connection(("ft", "Float64_continuous_output"), ("ss", "time"))   # writable
    with pytest.raises(SystemFileError, match=re.escape(expected)):
        write_ssp(s, ssd)


# ---------------------------------------------------------------------------- Int32, Boolean, a matrix

@pytest.fixture(scope="module")
def typed(tmp_path_factory):
    """ArrayFeedthrough (tests/models/reference_fmus, ours on the Reference FMUs' framework): arrays of
    fixed sizes, ints_out = 10 ints_in (Int32[3]), flags_out = not flags_in (Boolean[2]), m_out (3x2)
    the transpose of m_in (2x3); Stair's counter (1, 2, ... every second) and a Feedthrough feed it."""
    out = tmp_path_factory.mktemp("typed_arrays")
    try:
        return {model: build_reference_fmu(model, 3, out) for model in ("ArrayFeedthrough", "Stair", "Feedthrough")}
    except FmuBuildError as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize("algorithm,backend", [("fixed", None), ("iterative", None), ("fixed", "process")])
def test_integer_boolean_and_matrix_elements_arrive_whole_and_in_row_major_order(typed, algorithm, backend):
    s = System("typed", stop_time=3.0, base_step=0.5)
    s.add_component(Component("af", typed["ArrayFeedthrough"], parameters={"ints_in[2]": -7, "m_in[0][1]": 0.25,
                                                                              "flags_in[1]": False}))
    s.add_component(Component("st", typed["Stair"]))
    s.add_component(Component("ft", typed["Feedthrough"], parameters={"Boolean_input": True,
                                                                       "Float64_continuous_input": 3.5}))
    s.add_component(Component("ft2", typed["Feedthrough"]))
    s.connect("st.counter", "af.ints_in[1]")
    s.connect("ft.Boolean_output", "af.flags_in[0]")
    s.connect("ft.Float64_continuous_output", "af.m_in[1][2]", factor=2.0, offset=1.0)
    s.connect("af.ints_out[1]", "ft2.Int32_input")
    report = validate_system(s)
    assert report.ok, report
    names = ["af.ints_out[0]", "af.ints_out[1]", "af.ints_out[2]", "af.flags_out[0]", "af.flags_out[1]",
             "af.m_out[0][1]", "af.m_out[1][0]", "af.m_out[2][1]", "st.counter", "ft2.Int32_output"]
    r = simulate(s, algorithm=algorithm, variables=names, **({"backend": backend} if backend else {}))
    n = len(r.time)
    counter = np.asarray(r["st.counter"], dtype=float)
    assert np.array_equal(np.asarray(r["af.ints_out[0]"], dtype=float), np.full(n, 10.0))      # its start value
    assert np.array_equal(np.asarray(r["af.ints_out[2]"], dtype=float), np.full(n, -70.0))     # a start value set
    assert np.array_equal(np.asarray(r["af.ints_out[1]"], dtype=float), 10 * counter)          # direct feedthrough
    assert np.array_equal(np.asarray(r["ft2.Int32_output"], dtype=float), 10 * counter)
    # the modelDescription's flags_in is (false, true): here (true from ft, false a start value)
    assert list(np.asarray(r["af.flags_out[0]"], dtype=bool)) == [False] * n
    assert list(np.asarray(r["af.flags_out[1]"], dtype=bool)) == [True] * n
    # m_out[j][i] = m_in[i][j]: m_in[0][1] = 0.25 (a start value), m_in[1][0] = 4 (the modelDescription's),
    # m_in[1][2] = 2 * 3.5 + 1 (the linear transformation)
    assert np.array_equal(np.asarray(r["af.m_out[1][0]"]), np.full(n, 0.25))
    assert np.array_equal(np.asarray(r["af.m_out[0][1]"]), np.full(n, 4.0))
    assert np.array_equal(np.asarray(r["af.m_out[2][1]"]), np.full(n, 8.0))


def test_whole_arrays_with_as_many_elements_in_another_shape_are_refused(typed):
    s = System("transposed")
    s.add_component(Component("a", typed["ArrayFeedthrough"]))
    s.add_component(Component("b", typed["ArrayFeedthrough"]))
    with pytest.raises(SystemFileError, match=r"shape mismatch: a\.m_out has shape 3x2, b\.m_in has shape 2x3"):
        s.connect("a.m_out", "b.m_in")
    s.connect("a.ints_out", "b.ints_in")
    assert [c.target[1] for c in s.connections] == ["ints_in[0]", "ints_in[1]", "ints_in[2]"]


def test_a_recorded_element_out_of_range_says_so_on_the_command_line(ref, tmp_path, capsys):
    """Before: the generic "has no variable 'y[3]' (did you mean 'y[2]')"."""
    ssd = write_ssp(statespace_system(ref), tmp_path / "arrays.ssd")
    assert main(["run", str(ssd), "--out", str(tmp_path / "run"), "--quiet", "--variables", "ss.y[3]"]) == 2
    err = capsys.readouterr().err
    assert "recorded variable 'ss.y[3]': ss: " in err and "has no variable" not in err, err
    assert "out of range" in err or "shape 3" in err, err


def test_an_element_takes_its_arrays_declared_range_and_is_stepped_by_typed_reference(ref):
    """declared_range (the bounds input extrapolation keeps) gives an element its array's min and
    max; the coupling check's finite differences read and set elements by their typed references
    (before, by the array's plain value reference: the FMU refused nValues of 1 for a 3-array)."""
    from fmpy import read_model_description

    from orchestration.master.coupling_check import _finite_difference
    from orchestration.master.execution import declared_range
    from orchestration.master.slaves import InProcessSlave

    md = read_model_description(str(ref["StateSpace"]))
    u = next(v for v in md.modelVariables if v.name == "u")
    u.min, u.max = "-4", "7"

    class Described:
        model_description = md

    lo, hi = declared_range(Described(), ["u[1]", "y[0]"])
    assert list(lo) == [-4.0, -np.inf] and list(hi) == [7.0, np.inf]

    slave = InProcessSlave("ss", ref["StateSpace"])
    try:
        slave.instantiate()
        slave.setup(0.0, 1.0)
        slave.enter_initialization()
        slave.exit_initialization()
        # y = C x + D u with C = D = I and x(0) = 0: dy/du = I
        D = _finite_difference(slave, {0: "y[0]", 1: "y[1]"}, {0: "u[0]", 1: "u[1]"})
        assert D[:2, :2] == pytest.approx(-np.eye(2))
    finally:
        slave.terminate()
        slave.free()


def test_info_shows_each_arrays_shape_and_its_elements(ref, capsys):
    """Before: an array was listed as a plain Float64, with nothing to say how its elements are named."""
    assert main(["info", str(ref["StateSpace"])]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^  A +parameter +Float64\[3x3\]", out, re.M)
    assert re.search(r"^  u +input +Float64\[3\]", out, re.M)
    assert "    A[0][0] .. A[2][2]\n" in out and "    y[0] .. y[2]\n" in out
