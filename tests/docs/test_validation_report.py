"""The validation-record API (tests/support/validation_record.py) and the report writer
(docs/tools/validation_report.py) on synthetic records; one real validation test end to end."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from docs.tools import validation_report as vr
from tests.support import validation_record
from tests.support.validation_record import Recorder, component_for, make_record, read_records

ROOT = Path(__file__).resolve().parents[2]


def test_errors_are_computed_as_documented():
    assert make_record("a", 2.0, 2.02, 0.02).error == pytest.approx(0.01)                  # relative
    assert make_record("a", -2.0, -2.02, 0.02, "abs").error == pytest.approx(0.02)         # absolute
    r = make_record("v", [0.04, 0.04, 0.0], [0.0401, 0.04, 1e-9], 1e-2)                   # vectors: max|d| / max|ref|
    assert r.error == pytest.approx(1e-4 / 0.04)
    assert make_record("s", "pin.aba", "worst", 1e-9, error=3e-10).error == 3e-10         # the test's own error
    assert make_record("x", 0.0, 1e-7, 1e-6, "abs").passed
    with pytest.raises(ValueError):
        make_record("zero reference", 0.0, 1.0, 0.1, "rel")
    with pytest.raises(ValueError):
        make_record("words", "a", "b", 0.1)                                                # no error given
    with pytest.raises(ValueError):
        make_record("kind", 1.0, 1.0, 0.1, "percent")
    with pytest.raises(ValueError):
        make_record("shape", [1.0, 2.0], [1.0, 2.0, 3.0], 0.1)


def test_pass_is_error_within_tolerance():
    assert make_record("ok", 100.0, 100.5, 0.005).passed                                   # exactly at the tolerance
    assert not make_record("bad", 100.0, 100.6, 0.005).passed
    assert not make_record("nan", 1.0, math.nan, 0.1).passed
    exact = make_record("bitwise", "libcosim", "same", 0.0, "abs", error=0.0)
    assert exact.passed and exact.ratio == 0.0
    assert not make_record("inf", "libcosim", "other", 0.0, "abs", error=math.inf).passed


def test_recorder_appends_json_lines_and_round_trips(tmp_path, monkeypatch):
    out = tmp_path / "sub" / "records.jsonl"
    monkeypatch.setenv(vr.ENV_OUT, str(out))
    rec = Recorder(test="tests/test_x.py::test_y[1]", component="crane")
    rec.record(case="vector", reference=[1.0, 2.0], ours=[1.0, 2.1], tolerance=0.1, unit="m", source="here")
    rec.record(case="described", reference="monolithic", ours="0.1 %", error=1e-3, tolerance=1e-2)
    rec.record(case="elsewhere", reference=1.0, ours=1.0, tolerance=0.0, tol_kind="abs", component="ship")
    assert len(rec.records) == 3
    lines = out.read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(line)["test"] == "tests/test_x.py::test_y[1]" for line in lines)
    back = read_records(out)
    assert [r.case for r in back] == ["vector", "described", "elsewhere"]
    assert back[0].reference == [1.0, 2.0] and back[0].error == pytest.approx(0.05) and back[0].unit == "m"
    assert [r.component for r in back] == ["crane", "crane", "ship"]
    assert all(r.passed for r in back)
    monkeypatch.delenv(vr.ENV_OUT)
    quiet = Recorder()
    quiet.record(case="no file", reference=1.0, ours=1.0, tolerance=0.1)
    assert quiet.out is None and len(quiet.records) == 1


def test_component_of_a_module_and_the_marker(monkeypatch):
    assert component_for(SimpleNamespace(__name__="tests.components.test_catenary")) == "cable"
    assert component_for(SimpleNamespace(__name__="tests.test_unknown")) == "other"
    assert component_for(SimpleNamespace(__name__="tests.test_x", VALIDATION_COMPONENT="B4")) == "B4"

    class Item:
        def __init__(self, names):
            self.fixturenames, self.marks = names, []

        def get_closest_marker(self, name):
            return next((m for m in self.marks if m == name), None)

        def add_marker(self, name):
            self.marks.append(name)

    a, b = Item(["tmp_path", "validation"]), Item(["tmp_path"])
    validation_record.mark_items([a, b])
    validation_record.mark_items([a])
    assert a.marks == ["validation"] and b.marks == []
    # --quick leaves out the validation tests that build or run FMUs
    fmu, plain, other = Item(["validation", "fmu_dir"]), Item(["validation"]), Item(["fmu_dir"])
    items = [fmu, plain, other]
    monkeypatch.setenv(vr.ENV_QUICK, "1")
    validation_record.mark_items(items)
    assert items == [plain, other]
    monkeypatch.setenv(vr.ENV_QUICK, "0")
    items = [fmu, plain, other]
    validation_record.mark_items(items)
    assert items == [fmu, plain, other]


def test_conftest_registers_the_marker(request):
    assert any(line.startswith("validation:") for line in request.config.getini("markers"))


def synthetic():
    return [
        make_record("SMS 4.1.1 tip", 0.440014, 0.44, 1e-4, unit="m", source="sms_api_digest.md 4.1.1",
                    component="cable", test="tests/test_a.py::test_one"),
        make_record("Table 3-3 T_H", 2541.7, 2541.9, 0.05, "abs", unit="kN", source="Table 3-3",
                    component="cable", test="tests/test_a.py::test_two"),
        make_record("SMS 4.3.1 | pipe", [0.04] * 3, [0.04] * 3, 1e-6, component="payload",
                    test="tests/test_b.py::test_three"),
        make_record("custom thing", "ref", "ours", 1.0, error=0.5, component="zeta",
                    test="tests/test_c.py::TestK::test_four[x-1]"),
    ]


def test_report_tables_plots_and_fail(tmp_path):
    records = synthetic()
    assert records[0].error == pytest.approx(14e-6 / 0.440014)     # 3.2e-5 <= 1e-4: passes
    assert records[0].passed and not records[1].passed             # 0.2 kN > 0.05 kN
    outcomes = [vr.TestOutcome("tests/test_a.py::test_one", "passed"),
                vr.TestOutcome("tests/test_a.py::test_two", "failed", "assert 2541.9 == 2541.7"),
                vr.TestOutcome("tests/test_b.py::test_three", "passed"),
                vr.TestOutcome("tests/test_c.py::TestK::test_four[x-1]", "passed"),
                vr.TestOutcome("tests/test_d.py::test_moordyn", "skipped", "moordyn not installed"),
                vr.TestOutcome("tests/test_e.py::test_silent", "passed")]
    out = tmp_path / "docs" / "validation_report.md"
    vr.write_report(records, out, outcomes, meta={"date": "2025-01-01", "commit": "abc", "machine": "test box",
                                                  "notes": ["one test deselected: it hangs"]})
    text = out.read_text()
    assert "## Notes\n\n* one test deselected: it hangs" in text
    assert "**4 validation cases** from 4 tests: 3 pass, **1 outside tolerance**" in text
    assert "* git commit: abc" in text and "* machine: test box" in text and "* date: 2025-01-01" in text
    # one table per component, in the report's order (payload before cable), unknown ones last
    assert text.index("## payload") < text.index("## cable") < text.index("## zeta")
    row = next(line for line in text.splitlines() if line.startswith("| Table 3-3 T_H"))
    assert row == "| Table 3-3 T_H | 2541.7 kN | 2541.9 kN | 0.2 kN | 0.05 kN | **FAIL** (test failed) | Table 3-3 |"
    row = next(line for line in text.splitlines() if line.startswith("| SMS 4.1.1 tip"))
    assert "| 0.440014 m | 0.44 m | 3.18e-05 | 1.00e-04 rel | pass |" in row
    assert "SMS 4.3.1 \\| pipe" in text                                        # cells escape '|'
    assert "[0.04, 0.04, 0.04]" in text
    assert "| cable | 2 | 1 | 1 | 4 |" in text.replace("[cable](#cable)", "cable")
    assert "## Failed tests" in text and "tests/test_a.py::test_two" in text
    assert "moordyn not installed" in text and "tests/test_e.py::test_silent" in text
    for name in ("summary", "cable", "payload", "zeta"):
        png = tmp_path / "docs" / "img" / f"validation_{name}.png"
        assert png.stat().st_size > 1000 and png.read_bytes()[:4] == b"\x89PNG"
        assert f"](img/validation_{name}.png)" in text


def test_all_pass_and_stale_plots_removed(tmp_path):
    img = tmp_path / "img"
    img.mkdir()
    (img / "validation_gone.png").write_bytes(b"old")
    (img / "other.png").write_bytes(b"keep")
    records = [r for r in synthetic() if r.passed]
    vr.write_report(records, tmp_path / "r.md", meta={"date": "d", "commit": "c", "machine": "m"})
    text = (tmp_path / "r.md").read_text()
    assert "3 pass, all within tolerance" in text and "FAIL" not in text
    assert not (img / "validation_gone.png").exists() and (img / "other.png").exists()


def test_render_from_records_and_exit_status(tmp_path, capsys):
    path = tmp_path / "records.jsonl"
    for r in synthetic():
        validation_record.append_record(path, r)
    junit = tmp_path / "junit.xml"
    junit.write_text('<testsuites><testsuite><testcase classname="tests.test_a" name="test_two" time="1.5">'
                     '<failure message="boom"/></testcase><testcase classname="tests.test_c.TestK" '
                     'name="test_four[x-1]"/><testcase classname="tests.test_d" name="test_s">'
                     '<skipped message="no fcl"/></testcase></testsuite></testsuites>')
    outcomes = vr.read_junit(junit)
    assert [(o.nodeid, o.outcome) for o in outcomes] == [("tests/test_a.py::test_two", "failed"),
                                                        ("tests/test_c.py::TestK::test_four[x-1]", "passed"),
                                                        ("tests/test_d.py::test_s", "skipped")]
    out = tmp_path / "report.md"
    assert vr.main(["--records", str(path), "--junit", str(junit), "--out", str(out)]) == 1     # one FAIL
    assert "FAIL cable: Table 3-3 T_H" in capsys.readouterr().out
    good = tmp_path / "good.jsonl"
    for r in synthetic():
        if r.passed:
            validation_record.append_record(good, r)
    assert vr.main(["--records", str(good), "--out", str(out)]) == 0


def test_report_from_records_names_the_commit_they_were_made_at(tmp_path, monkeypatch):
    """A report rendered later (e.g. from a clean clone's CI records) names the records' commit, not
    the checkout that renders it; records without one fall back to the checkout, said so."""
    path = tmp_path / "records.jsonl"
    monkeypatch.setenv(vr.ENV_OUT, str(path))
    Recorder(test="tests/test_x.py::test_y").record(case="c", reference=1.0, ours=1.0, tolerance=0.1)
    made = json.loads(path.read_text())["commit"]
    assert made.rstrip("+") == validation_record.checkout_commit().rstrip("+") and len(made.rstrip("+")) == 12
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_text(path.read_text().replace(made, "0123456789ab"))
    out = tmp_path / "report.md"
    assert vr.main(["--records", str(elsewhere), "--out", str(out)]) == 0
    assert "* git commit: 0123456789ab\n" in out.read_text()
    old = tmp_path / "old.jsonl"
    old.write_text(path.read_text().replace(f', "commit": "{made}"', ""))
    assert read_records(old)[0].commit == ""
    vr.main(["--records", str(old), "--out", str(out)])
    assert "(this checkout; the records do not name theirs)" in out.read_text()


def test_pytest_marker_selects_and_records_end_to_end(tmp_path):
    """A real validation test in a subprocess: -m validation selects it, its records reach the file."""
    out = tmp_path / "records.jsonl"
    env = dict(os.environ, **{vr.ENV_OUT: str(out)})
    test = "tests/components/test_rigid_body.py"
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-m", "validation",
                        test, "-k", "sms_4_3_1 or rotation_helpers"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 passed" in r.stdout and "deselected" in r.stdout          # rotation_helpers is not a validation test
    records = read_records(out)
    assert [x.case.split(":")[0] for x in records] == ["SMS 4.3.1 linear acceleration"] * 2
    assert all(x.passed and x.component == "payload" and x.test.endswith("test_sms_4_3_1_linear_acceleration")
               for x in records)
