"""Files a system refers to besides its FMUs (orchestration/system/file_values.py): String start
values that name files, and the scenario. They are resolved against the system file, never the
working directory; written relative to the .ssd, packed into the .ssp (resources/) or copied into
the OSP folder; validate reports one that names no file."""
from __future__ import annotations

import os
import pickle
import shutil
import zipfile
from pathlib import Path

import pytest

from orchestration.system.file_values import FileValue, looks_like_file, resolve_file_value
from orchestration.system.model import Component, System, SystemFileError
from orchestration.system.osp import read_osp, write_osp
from orchestration.system.ssp import read_ssp, write_ssp
from orchestration.system.validation import validate_system
from tests.system.test_system_files import assert_ssd_schema_valid, assert_ssv_schema_valid

MESH = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 2 4\nf 1 3 4\nf 2 3 4\n"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MARINE_COSIM_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def contact_system(fmu_dir, tmp_path) -> System:
    """A Contact FMU whose body A is a mesh file (a String start value naming a file), and a scenario."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "box.obj").write_text(MESH)
    (data / "events.yaml").write_text("events:\n  - {time: 0.5, model: contact, variable: \"body1.position[2]\", "
                                      "action: override, value: 0.1}\n")
    s = System("meshes", stop_time=1.0, base_step=0.01, scenario=data / "events.yaml")
    s.add_component(Component("contact", fmu_dir / "Contact.fmu", {"body1.shape": 4,
                                                                   "body1.mesh_file": str(data / "box.obj")}))
    return s


def test_what_is_a_file_value(tmp_path):
    (tmp_path / "lift.json").write_text("{}")
    assert looks_like_file("lift.json") and looks_like_file("data/x") and looks_like_file("file:///x")
    assert not looks_like_file("knuckle_boom") and not looks_like_file("0.5") and not looks_like_file("v1.2")
    assert not looks_like_file("0.01 1e5; 0.02 3e5") and not looks_like_file("https://x/y.json")
    value = resolve_file_value("lift.json", tmp_path)
    assert isinstance(value, FileValue) and value == str(tmp_path / "lift.json") and value.written == "lift.json"
    assert resolve_file_value("knuckle_boom", tmp_path) == "knuckle_boom"          # a preset name stays a name
    missing = resolve_file_value("sub/none.json", tmp_path)
    assert isinstance(missing, FileValue) and missing.path == tmp_path / "sub" / "none.json"
    assert pickle.loads(pickle.dumps(value)).written == "lift.json"     # travels to worker processes


def test_ssd_names_files_relative_to_itself_and_resolves_them_from_any_folder(contact_system, tmp_path, monkeypatch):
    path = write_ssp(contact_system, tmp_path / "sys" / "meshes.ssd")
    text = path.read_text()
    assert 'value="../data/box.obj"' in text and "<mc:File/>" in text
    assert_ssd_schema_valid(path.read_bytes(), "an .ssd with a file value and a scenario")
    assert '<mc:Scenario source="../data/events.yaml"/>' in text
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    back = read_ssp(path)
    mesh = back.components["contact"].parameters["body1.mesh_file"]
    assert isinstance(mesh, FileValue) and mesh.path == tmp_path / "data" / "box.obj"
    assert back.scenario == tmp_path / "data" / "events.yaml"
    assert validate_system(back).ok


def test_a_hand_written_path_from_the_working_directory_is_reported(contact_system, tmp_path, monkeypatch):
    """The issue's case: a path written relative to the working directory names no file beside the
    system file; validate says so (with where it looked), whatever the working directory."""
    path = write_ssp(contact_system, tmp_path / "meshes.ssd")
    path.write_text(path.read_text().replace('value="data/box.obj"', 'value="project/data/box.obj"')
                    .replace("<mc:File/>", ""))
    monkeypatch.chdir(tmp_path)
    report = validate_system(read_ssp(path))
    assert not report.ok
    message = str(report.errors[0])
    assert "'body1.mesh_file' = 'project/data/box.obj' names no file" in message
    assert str(tmp_path / "project" / "data" / "box.obj") in message and "meshes.ssd" in message


def test_a_missing_scenario_is_reported(contact_system, tmp_path):
    path = write_ssp(contact_system, tmp_path / "meshes.ssd")
    (tmp_path / "data" / "events.yaml").unlink()
    report = validate_system(read_ssp(path))
    assert any("scenario file not found" in p.message for p in report.errors)


def test_ssp_carries_the_files_and_parameter_files(contact_system, tmp_path, monkeypatch):
    ssp = write_ssp(contact_system, tmp_path / "meshes.ssp")
    with zipfile.ZipFile(ssp) as z:
        names = sorted(z.namelist())
        ssv = z.read("resources/contact.ssv").decode()
    assert names == ["SystemStructure.ssd", "resources/Contact.fmu", "resources/box.obj", "resources/contact.ssv",
                     "resources/events.yaml"]
    assert 'value="resources/box.obj"' in ssv            # an SSP resource URI (relative to the archive's root)
    assert_ssv_schema_valid(ssv.encode(), "resources/contact.ssv")
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.move(ssp, alone / "meshes.ssp")
    shutil.rmtree(tmp_path / "data")                      # the originals are gone
    monkeypatch.chdir(alone)
    back = read_ssp(Path("meshes.ssp"))
    mesh = back.components["contact"].parameters["body1.mesh_file"]
    assert mesh.path.is_file() and mesh.path.read_text() == MESH and back.scenario.is_file()
    assert validate_system(back).ok
    # written again (the file values keep their mark) and inline instead of in .ssv files
    again = write_ssp(back, tmp_path / "again.ssp", parameter_files=False)
    with zipfile.ZipFile(again) as z:
        assert "resources/contact.ssv" not in z.namelist() and "resources/box.obj" in z.namelist()
        assert b'value="resources/box.obj"' in z.read("SystemStructure.ssd")


def test_ssp_cannot_be_written_without_its_files(contact_system, tmp_path):
    os.remove(tmp_path / "data" / "box.obj")
    contact_system.components["contact"].parameters["body1.mesh_file"] = FileValue(tmp_path / "data" / "box.obj")
    with pytest.raises(SystemFileError, match="parameter 'body1.mesh_file': file not found"):
        write_ssp(contact_system, tmp_path / "meshes.ssp")


def test_osp_folder_carries_the_files(contact_system, tmp_path, monkeypatch):
    config = write_osp(contact_system, tmp_path / "osp")
    assert (tmp_path / "osp" / "box.obj").read_text() == MESH
    assert 'value="box.obj"' in config.read_text()
    monkeypatch.chdir(tmp_path)
    back = read_osp(config)
    assert back.components["contact"].parameters["body1.mesh_file"].path == tmp_path / "osp" / "box.obj"


def test_ssd_with_parameter_files_beside_it(contact_system, tmp_path):
    """parameter_files=True for an .ssd: one <stem>.<component>.ssv beside it, read back the same;
    a file value in the .ssv is still relative to the .ssd."""
    path = write_ssp(contact_system, tmp_path / "sys" / "meshes.ssd", parameter_files=True)
    ssv = tmp_path / "sys" / "meshes.contact.ssv"
    assert 'source="meshes.contact.ssv"' in path.read_text() and 'value="../data/box.obj"' in ssv.read_text()
    back = read_ssp(path)
    assert back.components["contact"].parameters == contact_system.components["contact"].parameters
