"""docs/interfaces.md is generated from the FMUs and must match them (docs/tools/interfaces_doc.py)."""
from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest
from fmpy import read_model_description

from docs.tools import interfaces_doc
from docs.tools.interfaces_doc import expand_name, render_interfaces, split_frame

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "interfaces.md"
TABLE_CAUSALITY = {title.lower(): causality for causality, title in interfaces_doc.CAUSALITY_TITLES}


def all_fmus(fmu_dir: Path) -> list[Path]:
    return sorted(fmu_dir.glob("*.fmu"))


# ---------------------------------------------------------------------------------------------- the committed file


def test_committed_doc_matches_the_fmus(fmu_dir):
    expected = render_interfaces(all_fmus(fmu_dir))
    assert DOC.is_file(), f"{DOC} is missing: run `python docs/tools/interfaces_doc.py`"
    current = DOC.read_text(encoding="utf-8")
    if current != expected:
        diff = [f"line {i + 1}:\n  committed: {a!r}\n  generated: {b!r}"
                for i, (a, b) in enumerate(zip(current.splitlines(), expected.splitlines())) if a != b][:3]
        pytest.fail("docs/interfaces.md is stale (the FMU interfaces changed): run "
                    "`python docs/tools/interfaces_doc.py` and commit the result.\n" + "\n".join(diff)
                    + ("" if diff else f"\n(line counts {len(current.splitlines())} vs {len(expected.splitlines())})"),
                    pytrace=False)


def test_render_is_deterministic(fmu_dir):
    fmus = all_fmus(fmu_dir)
    first = render_interfaces(fmus)
    assert render_interfaces(list(reversed(fmus))) == first
    assert "guid" not in first.lower() and "generationDateAndTime" not in first
    assert first.endswith("\n") and not first.endswith("\n\n")


# ---------------------------------------------------------------------------------------------- every variable listed


def _expand(name: str) -> list[str]:
    """Row name -> scalar names, written independently of interfaces_doc.expand_name."""
    match = re.fullmatch(r"(.+)\[([^\[\]]+)\]", name)
    if not match:
        return [name]
    base, label = match.groups()
    span = re.fullmatch(r"(\d+)\.\.(\d+)", label)
    labels = [str(i) for i in range(int(span[1]), int(span[2]) + 1)] if span else label.split()
    return [f"{base}[{x}]" for x in labels]


def _sections(text: str) -> dict[str, str]:
    """Model name -> its section (from "## Name" to the next level-2 heading)."""
    parts = re.split(r"^## ", text, flags=re.MULTILINE)
    return {part.split("\n", 1)[0].strip(): part for part in parts[1:]}


def _tables(section: str) -> dict[str, list[list[str]]]:
    """Table title ("inputs") -> rows as lists of cells (header and rule excluded)."""
    tables: dict[str, list[list[str]]] = {}
    current = None
    for line in section.splitlines():
        heading = re.match(r"^### \S+ (.+)$", line)
        if heading:
            current = tables.setdefault(heading.group(1), [])
        elif current is not None and line.startswith("| `"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            current.append(cells)
    return tables


def test_every_variable_of_every_fmu_is_in_the_doc(fmu_dir):
    sections = _sections(render_interfaces(all_fmus(fmu_dir)))
    for fmu in all_fmus(fmu_dir):
        md = read_model_description(str(fmu))
        assert md.modelName in sections, f"no section for {md.modelName}"
        section = sections[md.modelName]
        listed: dict[str, str] = {}
        for title, rows in _tables(section).items():
            for row in rows:
                for name in _expand(row[0].strip("`")):
                    assert name not in listed, f"{md.modelName}: {name} listed twice"
                    listed[name] = TABLE_CAUSALITY[title]
        expected = {v.name: v.causality for v in md.modelVariables}
        assert listed == expected, (f"{md.modelName}: missing {sorted(set(expected) - set(listed))}, "
                                    f"extra {sorted(set(listed) - set(expected))}")
        # and each group name appears as such
        for v in md.modelVariables:
            group = v.name.split("[")[0]
            assert f"`{group}[" in section or f"`{group}`" in section, f"{md.modelName}: {group}"


def test_units_frames_and_feedthrough_match_the_model_description(fmu_dir):
    sections = _sections(render_interfaces(all_fmus(fmu_dir)))
    for fmu in all_fmus(fmu_dir):
        md = read_model_description(str(fmu))
        by_name = {v.name: v for v in md.modelVariables}
        inputs = {v.name.split("[")[0] for v in md.modelVariables if v.causality == "input"}
        deps = {u.variable.name: {d.name.split("[")[0] for d in (u.dependencies or [])} for u in md.outputs}
        for title, rows in _tables(sections[md.modelName]).items():
            for row in rows:
                for name in _expand(row[0].strip("`")):
                    variable = by_name[name]
                    assert row[1] == (variable.unit or "-"), name
                    _, frame, _ = split_frame(variable.description or "")
                    assert row[2].split(",")[0].split(" (")[0] == (frame or "-"), name
                    if title == "outputs":
                        cell = row[-1]
                        shown = inputs if cell == "all inputs" else (
                            set() if cell == "-" else {g.strip("` ").split("[")[0] for g in cell.split(",")})
                        assert shown == deps[name], f"{md.modelName}: feedthrough of {name}"


# ---------------------------------------------------------------------------------------------- collapse logic

SYNTHETIC = """<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="Synth" guid="{0}" description="A | synthetic model">
  <CoSimulation modelIdentifier="Synth" canGetAndSetFMUstate="true"/>
  <DefaultExperiment startTime="0" stopTime="5.0" stepSize="0.1"/>
  <ModelVariables>
    <ScalarVariable name="v[0]" valueReference="0" causality="parameter" variability="fixed"
        description="Offset [NED, north]"><Real unit="m" start="1.0"/></ScalarVariable>
    <ScalarVariable name="v[1]" valueReference="1" causality="parameter" variability="fixed"
        description="Offset [NED, east]"><Real unit="m" start="2.0"/></ScalarVariable>
    <ScalarVariable name="v[2]" valueReference="2" causality="parameter" variability="fixed"
        description="Offset [NED, down]"><Real unit="m" start="3.5"/></ScalarVariable>
    <ScalarVariable name="t[0,0]" valueReference="3" causality="parameter" variability="tunable"
        description="Stiffness [body]"><Real unit="N/m" start="10.0"/></ScalarVariable>
    <ScalarVariable name="t[1,1]" valueReference="4" causality="parameter" variability="tunable"
        description="Stiffness [body]"><Real unit="N/m" start="20.0"/></ScalarVariable>
    <ScalarVariable name="t[0,1]" valueReference="5" causality="parameter" variability="tunable"
        description="Stiffness [body]"><Real unit="N/m" start="0.0"/></ScalarVariable>
    <ScalarVariable name="w[0]" valueReference="6" causality="parameter" variability="fixed"
        description="Mixed a | b"><Real unit="m" start="0.0"/></ScalarVariable>
    <ScalarVariable name="w[1]" valueReference="7" causality="parameter" variability="fixed"
        description="Mixed a | b"><Real unit="s" start="0.0"/></ScalarVariable>
    <ScalarVariable name="swapped[0]" valueReference="8" causality="parameter" variability="fixed"
        description="Swapped axes [NED, east]"><Real unit="m" start="0.0"/></ScalarVariable>
    <ScalarVariable name="swapped[1]" valueReference="9" causality="parameter" variability="fixed"
        description="Swapped axes [NED, north]"><Real unit="m" start="0.0"/></ScalarVariable>
    <ScalarVariable name="n" valueReference="10" causality="parameter" variability="fixed"
        description="Count"><Integer start="4"/></ScalarVariable>
    <ScalarVariable name="f[0]" valueReference="11" causality="input" variability="continuous"
        description="Force [NED, north]"><Real unit="N" start="0.0"/></ScalarVariable>
    <ScalarVariable name="f[1]" valueReference="12" causality="input" variability="continuous"
        description="Force [NED, east]"><Real unit="N" start="0.0"/></ScalarVariable>
    <ScalarVariable name="f[2]" valueReference="13" causality="input" variability="continuous"
        description="Force [NED, down]"><Real unit="N" start="0.0"/></ScalarVariable>
    <ScalarVariable name="g" valueReference="14" causality="input" variability="continuous"
        description="Heave [NED, down]"><Real unit="m" start="0.25"/></ScalarVariable>
    <ScalarVariable name="a[0]" valueReference="15" causality="output" variability="continuous"
        description="Acc [body, x forward]"><Real unit="m/s2"/></ScalarVariable>
    <ScalarVariable name="a[1]" valueReference="16" causality="output" variability="continuous"
        description="Acc [body, y starboard]"><Real unit="m/s2"/></ScalarVariable>
    <ScalarVariable name="a[2]" valueReference="17" causality="output" variability="continuous"
        description="Acc [body, z down]"><Real unit="m/s2"/></ScalarVariable>
    <ScalarVariable name="b" valueReference="18" causality="output" variability="continuous"
        description="Depends on f[2]"><Real unit="N"/></ScalarVariable>
    <ScalarVariable name="c" valueReference="19" causality="output" variability="continuous"
        description="Depends on everything"><Real unit="N"/></ScalarVariable>
    <ScalarVariable name="d" valueReference="20" causality="output" variability="continuous"
        description="State only"><Real unit="m"/></ScalarVariable>
    <ScalarVariable name="e" valueReference="21" causality="output" variability="continuous"
        description="Undeclared"><Real unit="m"/></ScalarVariable>
  </ModelVariables>
  <ModelStructure>
    <Outputs>
      <Unknown index="16" dependencies="12 13 14"/>
      <Unknown index="17" dependencies="12 13 14"/>
      <Unknown index="18" dependencies="12 13 14"/>
      <Unknown index="19" dependencies="14"/>
      <Unknown index="20" dependencies="12 13 14 15"/>
      <Unknown index="21" dependencies=""/>
      <Unknown index="22"/>
    </Outputs>
  </ModelStructure>
</fmiModelDescription>
"""


@pytest.fixture
def synthetic_fmu(tmp_path) -> Path:
    path = tmp_path / "Synth.fmu"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("modelDescription.xml", SYNTHETIC)
    return path


def _rows(text: str) -> dict[str, list[str]]:
    return {row[0].strip("`"): row for rows in _tables(_sections(text)["Synth"]).values() for row in rows}


def test_vectors_and_tensors_collapse_into_one_row(synthetic_fmu):
    rows = _rows(render_interfaces([synthetic_fmu]))
    assert rows["v[0..2]"] == ["`v[0..2]`", "m", "NED", "(1, 2, 3.5)", "Offset"]
    assert rows["t[0,0 1,1 0,1]"] == ["`t[0,0 1,1 0,1]`", "N/m", "body", "(10, 20, 0)", "Stiffness (tunable)"]
    # elements that disagree (here the unit) stay separate; pipes are escaped
    assert rows["w[0]"][1:] == ["m", "-", "0", r"Mixed a \| b"]
    assert rows["w[1]"][1] == "s"
    # axes not in the frame's order are spelled out
    assert rows["swapped[0..1]"][2] == "NED (east, north)"
    assert rows["n"][1:4] == ["-", "-", "4"]
    assert rows["g"][1:4] == ["m", "NED, down", "0.25"]
    assert rows["f[0..2]"][1:4] == ["N", "NED", "(0, 0, 0)"]


def test_feedthrough_is_compressed_into_input_groups(synthetic_fmu):
    rows = _rows(render_interfaces([synthetic_fmu]))
    assert rows["a[0..2]"][1:] == ["m/s2", "body", "Acc", "`f`"]
    assert rows["b"][-1] == "`f[2]`"
    assert rows["c"][-1] == "all inputs"
    assert rows["d"][-1] == "-"
    assert rows["e"][-1] == "all inputs (not declared)"


def test_row_names_expand_back_to_the_scalars():
    assert expand_name("cg.force[0..2]") == ["cg.force[0]", "cg.force[1]", "cg.force[2]"]
    assert expand_name("inertia[0,0 1,1 2,2 0,1 0,2 1,2]") == [
        "inertia[0,0]", "inertia[1,1]", "inertia[2,2]", "inertia[0,1]", "inertia[0,2]", "inertia[1,2]"]
    assert expand_name("mass") == ["mass"]
    assert split_frame("Position of the CG [NED, north]") == ("Position of the CG", "NED", "north")
    assert split_frame("Inertia [body]") == ("Inertia", "body", None)
    assert split_frame("Mass of the payload") == ("Mass of the payload", None, None)


def test_header_shows_capabilities_and_experiment_not_guid(synthetic_fmu, tmp_path):
    text = render_interfaces([synthetic_fmu])
    section = _sections(text)["Synth"]
    assert r"A \| synthetic model" in section
    assert "| canGetAndSetFMUstate | true |" in section
    assert "DefaultExperiment: startTime = 0, stepSize = 0.1, stopTime = 5" in section
    assert "{0}" not in text
    out = interfaces_doc.write_interfaces_doc(tmp_path, tmp_path / "doc" / "interfaces.md")
    assert out.read_text(encoding="utf-8") == text
    assert interfaces_doc.main(["--fmus", str(tmp_path), "--out", str(out), "--check"]) == 0
    out.write_text(text + "edited by hand\n", encoding="utf-8")
    assert interfaces_doc.main(["--fmus", str(tmp_path), "--out", str(out), "--check"]) == 1
