"""``marine-cosim validate`` checks everything ``run`` checks before it starts, with the same message
(issue 23): broken time grids, empty systems, non-finite and out-of-range start values, connectors
declared with the wrong type. Each broken file: validate exits 1 naming the problem, run exits 2 with
that same one line, and neither hangs nor writes results.
"""
from __future__ import annotations

import re
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
