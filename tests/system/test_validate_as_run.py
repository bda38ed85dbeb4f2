"""``marine-cosim validate`` checks everything ``run`` checks before it starts, with the same message
(issue 23): broken time grids, empty systems, non-finite and out-of-range start values, connectors
declared with the wrong type; duplicate names, connections to missing variables or of the wrong
causality, start values of the wrong type, bad step multiples, empty or missing referenced files.
Each broken file: validate exits 1 naming the problem (2 for a file that cannot be read as a
system), run exits 2 with that same one line, and neither hangs nor writes results.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from orchestration.cli.main import main
from orchestration.system.model import Component, System
from orchestration.system.ssp import write_ssp


def good(payload_fmu: Path, tmp_path: Path) -> Path:
    s = System("good", stop_time=1.0, base_step=0.1)
    s.add_component(Component("p", payload_fmu, {"mass": 1000.0}))
    return write_ssp(s, tmp_path / "good.ssd")


def edit(path: Path, replacements: list[tuple[str, str]], name: str) -> Path:
    text = path.read_text()
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new)
    out = path.with_name(name)
    out.write_text(text)
    return out


def step(value: str) -> list[tuple[str, str]]:
    """The base step in both annotations that carry it (OSP and ours must agree)."""
    return [('baseStepSize="0.1"', f'baseStepSize="{value}"'), ('baseStep="0.1"', f'baseStep="{value}"')]


CASES = {
    "nan stop time": ([('stopTime="1.0"', 'stopTime="nan"')], "the stop time nan is not a finite number"),
    "tiny base step": (step("1e-12"), "macro steps (more than 1e+08)"),
    "step longer than the run": (step("1000000.0"), "is longer than the run"),
    "infinite parameter": ([('<ssv:Real value="1000.0"', '<ssv:Real value="inf"')],
                           "'mass': inf is not a finite number"),
    "negative mass": ([('<ssv:Real value="1000.0"', '<ssv:Real value="-5.0"')],
                      "'mass': -5.0 is outside the variable's range"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_validate_refuses_what_run_refuses_with_the_same_line(payload_fmu, tmp_path, capsys, case):
    replacements, message = CASES[case]
    broken = edit(good(payload_fmu, tmp_path), replacements, f"{case.replace(' ', '_')}.ssd")
    assert main(["validate", str(broken)]) == 1
    said = capsys.readouterr().out
    assert message in said, said
    out = tmp_path / "out"
    assert main(["run", str(broken), "--quiet", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and "error: error" not in err, err
    assert not (out / "results.csv").exists()


def test_a_step_longer_than_a_stop_given_on_the_command_line_is_refused(payload_fmu, tmp_path, capsys):
    base = good(payload_fmu, tmp_path)
    assert main(["run", str(base), "--quiet", "--stop", "1", "--step", "1e6", "--out", str(tmp_path / "o")]) == 2
    assert "longer than the run" in capsys.readouterr().err


def test_an_empty_system_is_refused(tmp_path, capsys):
    path = write_ssp(System("empty", stop_time=1.0, base_step=0.1), tmp_path / "empty.ssd")
    assert main(["validate", str(path)]) == 1
    assert "the system has no component" in capsys.readouterr().out
    assert main(["run", str(path), "--quiet", "--out", str(tmp_path / "o")]) == 2
    assert "the system has no component" in capsys.readouterr().err


def test_a_connector_declared_with_another_type_than_its_variable(payload_fmu, tmp_path, capsys):
    s = System("two", stop_time=1.0, base_step=0.1)
    s.add_component(Component("a", payload_fmu))
    s.add_component(Component("b", payload_fmu))
    s.connect("a.cg.position[2]", "b.cg.force[2]", factor=1.0, offset=0.5)
    path = write_ssp(s, tmp_path / "two.ssd")
    text = path.read_text()
    connector = re.search(r'<ssd:Connector name="cg.force\[2\]" kind="input">\s*<ssc:Real[^/]*/>', text).group(0)
    broken = tmp_path / "typed.ssd"
    broken.write_text(text.replace(connector, re.sub(r"<ssc:Real[^/]*/>", "<ssc:Boolean/>", connector)))
    for verb, status, stream in (("validate", 2, "err"), ("run", 2, "err")):
        args = [verb, str(broken)] + (["--quiet", "--out", str(tmp_path / "o")] if verb == "run" else [])
        assert main(args) == status
        said = getattr(capsys.readouterr(), stream)
        assert "the connector is declared Boolean, but 'cg.force[2]' is a Real" in said, said


def pair(payload_fmu: Path, tmp_path: Path) -> Path:
    """Two components, a's position driving b's force (a deliberate gain: factor and offset)."""
    s = System("pair", stop_time=1.0, base_step=0.1)
    s.add_component(Component("a", payload_fmu, {"mass": 1000.0}))
    s.add_component(Component("b", payload_fmu))
    s.connect("a.cg.position[2]", "b.cg.force[2]", factor=1.0, offset=0.5)
    return write_ssp(s, tmp_path / "pair.ssd")


B_CONNECTORS = ('<ssd:Connector name="cg.force[2]" kind="input">\n            <ssc:Real/>\n'
                '          </ssd:Connector>\n        </ssd:Connectors>\n')


def on_b(xml: str) -> list[tuple[str, str]]:
    """``xml`` added to component b after its connectors."""
    return [(B_CONNECTORS, B_CONNECTORS + "        " + xml + "\n")]


# hostile files beyond the cases above, on the two-component system: each is refused by validate
# and run alike with the same line (validate: exit 2 for a file that cannot be read as a system, 1
# for a system with problems)
PAIR_CASES = {
    "duplicate component name": ([('<ssd:Component name="b"', '<ssd:Component name="a"'),
                                  ('endElement="b"', 'endElement="a"')], "component name 'a' is used twice"),
    "connection to a variable the FMU lacks": (
        [('endConnector="cg.force[2]"', 'endConnector="cg.farce[2]"'),
         ('<ssd:Connector name="cg.force[2]"', '<ssd:Connector name="cg.farce[2]"')],
        "Payload.fmu has no variable 'cg.farce[2]' (did you mean 'cg.force[2]'"),
    "output to output": ([('endConnector="cg.force[2]"', 'endConnector="cg.position[1]"'),
                          ('<ssd:Connector name="cg.force[2]" kind="input"',
                           '<ssd:Connector name="cg.position[1]" kind="output"')],
                         "a connection must join an output and an input"),
    "connector kind against the variable's causality": (
        [('<ssd:Connector name="cg.force[2]" kind="input"', '<ssd:Connector name="cg.force[2]" kind="output"')],
        "kind='output', but 'cg.force[2]' is input in Payload.fmu"),
    "connection to a parameter": ([('endConnector="cg.force[2]"', 'endConnector="mass"'),
                                   ('<ssd:Connector name="cg.force[2]" kind="input"',
                                    '<ssd:Connector name="mass" kind="parameter"')],
                                  "connections to parameters are not supported"),
    "Boolean start value for a Real": ([('<ssv:Real value="1000.0"/>', '<ssv:Boolean value="true"/>')],
                                       "parameter 'mass' is ssv:Boolean but variable 'mass' of Payload.fmu is Real"),
    "String start value for a Real": ([('<ssv:Real value="1000.0"/>', '<ssv:String value="heavy"/>')],
                                      "parameter 'mass' is ssv:String but variable 'mass' of Payload.fmu is Real"),
    "text for a number": ([('<ssv:Real value="1000.0"/>', '<ssv:Real value="heavy"/>')],
                          "value='heavy' is not a number"),
    "zero step": (step("0"), "baseStepSize='0' must be positive"),
    "negative step": (step("-0.1"), "baseStepSize='-0.1' must be positive"),
    "NaN step": (step("nan"), "baseStepSize='nan' must be positive"),
    "infinite step": (step("inf"), "the base step inf is not a positive finite number"),
    "stop before start": ([('startTime="0.0" stopTime="1.0"', 'startTime="2.0" stopTime="1.0"')],
                          "stopTime='1.0' is before startTime 2.0"),
    "stop at start": ([('startTime="0.0" stopTime="1.0"', 'startTime="1.0" stopTime="1.0"')],
                      "the stop time 1 s is not after the start time 1 s"),
    "NaN start": ([('startTime="0.0"', 'startTime="nan"')], "the start time nan is not a finite number"),
    "step multiple 0": (on_b('<ssd:Annotations><ssc:Annotation type="org.marine-cosim"><mc:Component '
                             'stepMultiple="0"/></ssc:Annotation></ssd:Annotations>'), "stepMultiple='0' must be >= 1"),
    "step multiple 1.5": (on_b('<ssd:Annotations><ssc:Annotation type="org.marine-cosim"><mc:Component '
                               'stepMultiple="1.5"/></ssc:Annotation></ssd:Annotations>'),
                          "stepMultiple='1.5' is not an integer"),
    "OSP step size hint 0": (on_b('<ssd:Annotations><ssc:Annotation type="com.opensimulationplatform">'
                                  '<osp:StepSizeHint value="0"/></ssc:Annotation></ssd:Annotations>'),
                             "StepSizeHint value=0.0 must be positive"),
    "empty parameter set file": (on_b('<ssd:ParameterBindings><ssd:ParameterBinding source="empty.ssv"/>'
                                      '</ssd:ParameterBindings>'), "empty.ssv: line 1, column 1: malformed XML"),
    "missing parameter set file": (on_b('<ssd:ParameterBindings><ssd:ParameterBinding source="missing.ssv"/>'
                                        '</ssd:ParameterBindings>'), "file not found: source='missing.ssv'"),
    "missing FMU": ([('source="Payload.fmu" implementation="CoSimulation">\n        <ssd:Connectors>\n'
                      '          <ssd:Connector name="cg.force',
                      'source="Nope.fmu" implementation="CoSimulation">\n        <ssd:Connectors>\n'
                      '          <ssd:Connector name="cg.force')], "FMU file not found: source='Nope.fmu'"),
}


@pytest.mark.parametrize("case", sorted(PAIR_CASES))
def test_validate_refuses_hostile_files_as_run_does(payload_fmu, tmp_path, capsys, case):
    replacements, message = PAIR_CASES[case]
    shutil.copy(payload_fmu, tmp_path / "Payload.fmu")          # the FMU beside the file: source="Payload.fmu"
    source = pair(tmp_path / "Payload.fmu", tmp_path)
    (tmp_path / "empty.ssv").write_text("")
    broken = edit(source, replacements, f"{case.replace(' ', '_')}.ssd")
    assert main(["validate", str(broken)]) in (1, 2)
    said = capsys.readouterr()
    assert message in said.out + said.err, said
    out = tmp_path / "out"
    assert main(["run", str(broken), "--quiet", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and "error: error" not in err, err
    assert not (out / "results.csv").exists()
