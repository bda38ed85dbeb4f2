"""Standard compliance and reproducibility of every FMU that build_fmus.py makes."""
from __future__ import annotations

import pytest

import re
import zipfile
from pathlib import Path

from fmpy import read_model_description
from fmpy.validation import validate_fmu

import build_fmus

EXPECTED_MODELS = {"Payload", "Ship", "Crane", "Cable", "Winch", "Contact"}   # grows as components arrive


def all_fmus(fmu_dir: Path) -> list[Path]:
    return sorted(fmu_dir.glob("*.fmu"))


def test_one_fmu_per_adapter(fmu_dir):
    built = {p.stem for p in all_fmus(fmu_dir)}
    assert built == set(build_fmus.find_adapters())
    assert EXPECTED_MODELS <= built


@pytest.mark.slow
def test_fmpy_validation_has_zero_problems(fmu_dir):
    for fmu in all_fmus(fmu_dir):
        assert validate_fmu(str(fmu)) == [], fmu.name


def test_variables_carry_units_descriptions_frames_and_starts(fmu_dir):
    for fmu in all_fmus(fmu_dir):
        md = read_model_description(str(fmu))
        assert md.defaultExperiment is not None and md.defaultExperiment.stepSize
        cs = md.coSimulation
        assert cs.canGetAndSetFMUstate and cs.canSerializeFMUstate
        assert md.initialUnknowns, "InitialUnknowns missing"
        outputs = [v for v in md.modelVariables if v.causality == "output"]
        assert {u.variable.name for u in md.initialUnknowns} == {v.name for v in outputs}
        for v in md.modelVariables:
            assert v.description and len(v.description) > 10, v.name
            if v.type == "Real":
                assert v.unit, f"{fmu.name}: {v.name} has no unit"
            if v.causality in ("parameter", "input"):
                assert v.start is not None, v.name
            # a 3-vector element names its frame and axis
            if re.search(r"\[[012]\]$", v.name) and v.unit in ("m", "m/s", "m/s2", "N", "N.m", "rad/s", "rad/s2"):
                assert "[NED," in v.description or "[body," in v.description, f"{v.name}: frame missing"


def test_feedthrough_is_declared_only_where_it_exists(payload_fmu):
    md = read_model_description(str(payload_fmu))
    deps = {u.variable.name: [d.name for d in (u.dependencies or [])] for u in md.outputs}
    assert deps["cg.position[2]"] == [] and deps["attachment1.velocity[0]"] == []
    assert "attachment1.force[2]" in deps["cg.acceleration[2]"]


def _entries(fmu: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(fmu) as z:
        return {name: z.read(name) for name in z.namelist()}


def test_rebuild_gives_identical_fmu_apart_from_generation_time(fmu_dir, tmp_path):
    rebuilt = build_fmus.build_all(tmp_path)
    for second in rebuilt:
        a, b = _entries(fmu_dir / second.name), _entries(second)
        assert a.keys() == b.keys()
        stamp = re.compile(rb'generationDateAndTime="[^"]*"')
        assert stamp.sub(b"", a.pop("modelDescription.xml")) == stamp.sub(b"", b.pop("modelDescription.xml"))
        assert a == b, f"{second.name}: archive entries differ"


def test_fmu_carries_its_component_code(payload_fmu):
    names = set(_entries(payload_fmu))
    package = build_fmus.read_settings(payload_fmu, "loader.txt")["package"]
    assert {f"resources/{package}_payload.py", f"resources/{package}/components/rigid_body.py",
            f"resources/{package}/components/rotations.py", f"resources/{package}/fmus/_base.py",
            f"resources/{package}/fmi_bridge.py", "resources/python_env.txt", "resources/loader.txt",
            "binaries/linux64/Payload.so"} <= names
    # only what the adapter imports, not other adapters
    assert not any(n.startswith(f"resources/{package}/fmus/") and n.endswith(("ship.py", "crane.py")) for n in names)
