"""OSP's Sum and VectorSum functions (OspSystemStructure ``Functions``, as libcosim's
osp_config_parser reads them: signals ``in[0]`` .. ``in[n-1]`` and ``out``; a VectorSum joined by
SignalGroupConnections to variable groups of the simulators' OspModelDescription, element j of
in[i] to the group's j-th variable). marine-cosim runs each as a ``sum`` port adapter. Before: both
were refused ("Sum functions are not supported").

The FMUs are the Reference FMUs Dahlquist (x = exp(-k t)) and Feedthrough (outputs = inputs),
compiled here; every sum is checked against the sum of the recorded inputs, exactly.
"""
from __future__ import annotations

import numpy as np
import pytest

from orchestration import simulate
from orchestration.cli.main import main
from orchestration.errors import SystemFileError
from orchestration.system.osp import read_osp
from tests.models.reference_fmus.build import FmuBuildError, build_reference_fmu

pytestmark = pytest.mark.gcc

NS = "http://opensimulationplatform.com/MSMI/OSPSystemStructure"


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    out = tmp_path_factory.mktemp("osp_sum")
    try:
        return {m: build_reference_fmu(m, 2, out) for m in ("Dahlquist", "Feedthrough")}
    except FmuBuildError as exc:
        pytest.skip(str(exc))


def osp(folder, simulators: str, functions: str, connections: str, name: str = "OspSystemStructure.xml"):
    path = folder / name
    path.write_text(f'<OspSystemStructure xmlns="{NS}" version="0.1"><BaseStepSize>0.1</BaseStepSize>'
                    f'<EndTime>1.0</EndTime><Simulators>{simulators}</Simulators><Functions>{functions}</Functions>'
                    f'<Connections>{connections}</Connections></OspSystemStructure>')
    return path


def signal(sim: str, var: str, function: str, sig: str) -> str:
    return (f'<SignalConnection><Variable simulator="{sim}" name="{var}"/>'
            f'<Signal function="{function}" name="{sig}"/></SignalConnection>')


def test_a_sum_of_three_outputs_drives_an_input(fmus, tmp_path):
    """libcosim's own example (tests/data/msmi/OspSystemStructure.xml: Sum inputCount="3", in[0..2]
    from three outputs, out into an input), here with three Dahlquists of k = 1, 2, 3 into a
    Feedthrough: its output is x1 + x2 + x3 at every point, to the last bit of that sum."""
    sims = "".join(f'<Simulator name="d{k}" source="{fmus["Dahlquist"]}"><InitialValues><InitialValue variable="k">'
                   f'<Real value="{k}"/></InitialValue></InitialValues></Simulator>' for k in (1, 2, 3))
    sims += f'<Simulator name="ft" source="{fmus["Feedthrough"]}"/>'
    conns = "".join(signal(f"d{k}", "x", "mySum", f"in[{k - 1}]") for k in (1, 2, 3))
    conns += signal("ft", "Float64_continuous_input", "mySum", "out")
    path = osp(tmp_path, sims, '<Sum name="mySum" inputCount="3"/>', conns)
    assert main(["validate", str(path)]) == 0
    system = read_osp(path)
    assert system.components["mySum"].adapter == "sum"
    r = simulate(system, variables=["d1.x", "d2.x", "d3.x", "ft.Float64_continuous_output"])
    expected = (r["d1.x"] + r["d2.x"]) + r["d3.x"]
    np.testing.assert_array_equal(r["ft.Float64_continuous_output"], expected)
    assert expected[-1] == pytest.approx(0.9 ** 10 + 0.8 ** 10 + 0.7 ** 10)     # explicit Euler, h = 0.1


def test_a_vector_sum_joins_variable_groups(fmus, tmp_path):
    """VectorSum inputCount="2" dimension="2": two Feedthroughs' output groups (continuous and discrete
    Float64 output, from the OspModelDescription) summed element by element into a third one's input
    group."""
    sims = "".join(f'<Simulator name="{n}" source="{fmus["Feedthrough"]}"><InitialValues>'
                   f'<InitialValue variable="Float64_continuous_input"><Real value="{a}"/></InitialValue>'
                   f'<InitialValue variable="Float64_discrete_input"><Real value="{b}"/></InitialValue>'
                   '</InitialValues></Simulator>' for n, a, b in (("a", 1.5, 2.25), ("b", 10.0, -4.0)))
    sims += f'<Simulator name="c" source="{fmus["Feedthrough"]}"/>'
    (tmp_path / "Feedthrough_OspModelDescription.xml").write_text(
        '<OspModelDescription xmlns="https://open-simulation-platform.com/OspModelDescription/1.0.0" '
        'version="1.0"><VariableGroups>'
        '<Generic name="outs"><Variable ref="Float64_continuous_output"/><Variable ref="Float64_discrete_output"/>'
        '</Generic><Generic name="ins"><Variable ref="Float64_continuous_input"/>'
        '<Variable ref="Float64_discrete_input"/></Generic></VariableGroups></OspModelDescription>')
    group = ('<SignalGroupConnection><VariableGroup simulator="{s}" name="{g}"/>'
             '<SignalGroup function="vs" name="{sig}"/></SignalGroupConnection>')
    conns = (group.format(s="a", g="outs", sig="in[0]") + group.format(s="b", g="outs", sig="in[1]")
             + group.format(s="c", g="ins", sig="out"))
    path = osp(tmp_path, sims, '<VectorSum name="vs" inputCount="2" dimension="2"/>', conns)
    # the FMUs' OspModelDescription is looked for beside the FMU or the system file
    import shutil
    shutil.copy(tmp_path / "Feedthrough_OspModelDescription.xml", fmus["Feedthrough"].parent)
    assert main(["validate", str(path)]) == 0
    r = simulate(read_osp(path), variables=["c.Float64_continuous_output", "c.Float64_discrete_output"])
    assert r["c.Float64_continuous_output"][-1] == 11.5
    assert r["c.Float64_discrete_output"][-1] == -1.75
    # a dimension the groups do not have is refused, naming the group
    wide = osp(tmp_path, sims, '<VectorSum name="vs" inputCount="2" dimension="3"/>', conns, name="wide.xml")
    with pytest.raises(SystemFileError, match=r"group a.outs has 2 variables; the VectorSum 'vs' has dimension 3"):
        read_osp(wide)


@pytest.mark.parametrize("functions, connections, message", [
    ('<Sum name="s" inputCount="2"/>', 'in0', "Sum 's' needs exactly one connection of its signal 'in[1]' (found 0)"),
    ('<Sum name="s" inputCount="2"/>', 'in0 in1 in1', "signal 'in[1]' (found 2)"),
    ('<Sum name="s" inputCount="2"/>', 'in0 in1 in5', "has the signals in[0], in[1], out, not 'in[5]'"),
    ('<Sum name="s" inputCount="0"/>', '', "inputCount='0' must be a whole number from 1 to 64"),
    ('<Sum name="s" inputCount="two"/>', '', "inputCount='two' must be a whole number"),
    ('<Sum name="d1" inputCount="1"/>', '', "function name 'd1' is also a simulator's"),
    ('<Product name="s"/>', '', "Product functions are not supported (LinearTransformation, Sum and VectorSum are)"),
    ('<VectorSum name="s" inputCount="1" dimension="2"/>', 'in0', "a VectorSum function is connected by "
                                                                  "SignalGroupConnection"),
])
def test_a_broken_function_is_refused_by_name(fmus, tmp_path, functions, connections, message):
    sims = (f'<Simulator name="d1" source="{fmus["Dahlquist"]}"/><Simulator name="d2" source="{fmus["Dahlquist"]}"/>'
            f'<Simulator name="ft" source="{fmus["Feedthrough"]}"/>')
    parts = {"in0": signal("d1", "x", "s", "in[0]"), "in1": signal("d2", "x", "s", "in[1]"),
             "in5": signal("d2", "x", "s", "in[5]")}
    conns = "".join(parts[c] for c in connections.split()) + (signal("ft", "Float64_continuous_input", "s", "out")
                                                              if connections else "")
    path = osp(tmp_path, sims, functions, conns)
    with pytest.raises(SystemFileError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
                       .replace("]", r"\]")):
        read_osp(path)


def test_a_sum_input_must_come_from_an_output(fmus, tmp_path):
    sims = f'<Simulator name="d1" source="{fmus["Dahlquist"]}"/><Simulator name="ft" source="{fmus["Feedthrough"]}"/>'
    conns = signal("ft", "Float64_continuous_input", "s", "in[0]") + signal("ft", "Float64_discrete_input", "s", "out")
    with pytest.raises(SystemFileError, match="ft.Float64_continuous_input is input, not an output"):
        read_osp(osp(tmp_path, sims, '<Sum name="s" inputCount="1"/>', conns))


def test_a_scalar_sum_is_written_back_as_an_osp_sum(fmus, tmp_path):
    """write_osp writes a scalar sum joined by identity connections as libcosim's <Sum> with its
    SignalConnections (not a marine-cosim adapter simulator, which libcosim cannot load); read back,
    it runs to the same bits."""
    from lxml import etree

    from orchestration.system.osp import write_osp

    sims = "".join(f'<Simulator name="d{k}" source="{fmus["Dahlquist"]}"/>' for k in (1, 2))
    sims += f'<Simulator name="ft" source="{fmus["Feedthrough"]}"/>'
    conns = signal("d1", "x", "s", "in[0]") + signal("d2", "x", "s", "in[1]")
    conns += signal("ft", "Float64_continuous_input", "s", "out")
    first = read_osp(osp(tmp_path, sims, '<Sum name="s" inputCount="2"/>', conns))
    written = write_osp(first, tmp_path / "out")
    root = etree.parse(str(written)).getroot()
    tags = [etree.QName(e).localname for e in root.iter()]
    assert tags.count("Sum") == 1 and tags.count("SignalConnection") == 3
    assert not [e for e in root.iter(f"{{{NS}}}Simulator") if e.get("name") == "s"]
    again = read_osp(written)
    a = simulate(first, variables=["ft.Float64_continuous_output"])
    b = simulate(again, variables=["ft.Float64_continuous_output"])
    np.testing.assert_array_equal(a["ft.Float64_continuous_output"], b["ft.Float64_continuous_output"])
