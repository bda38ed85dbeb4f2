"""A system that travels (issue 29): the offshore lift's .ssp, copied alone into an empty folder, runs
from there; a shipped scenario on a fresh clone (no FMUs built) builds its FMUs on the first
``marine-cosim run``, and ``validate`` names the one command that builds them."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from orchestration.cli.main import main
from orchestration.runs import first_run
from orchestration.runs.reference import catalogue
from orchestration.system.model import Component, System
from orchestration.system.ssp import read_ssp, write_ssp

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MARINE_COSIM_CACHE", str(tmp_path / "cache"))


@pytest.mark.slow
def test_the_offshore_lift_ssp_runs_alone_in_an_empty_folder(fmu_dir, tmp_path, monkeypatch, capsys):
    """convert --to ssp packs FMUs, mechanism file, events and start values; the archive alone, in
    an empty folder far from the checkout, runs with its crane and its events."""
    ssd = catalogue.prepare_system_file("offshore_lift", fmu_dir, tmp_path / "systems")
    assert main(["convert", str(ssd), "--to", "ssp", "--out", str(tmp_path / "offshore_lift.ssp")]) == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    shutil.move(tmp_path / "offshore_lift.ssp", empty / "offshore_lift.ssp")
    shutil.rmtree(tmp_path / "systems")
    monkeypatch.chdir(empty)
    assert main(["run", "offshore_lift.ssp", "--stop", "0.25", "--quiet", "--out", "results"]) == 0
    metadata = json.loads((empty / "results" / "metadata.json").read_text())
    assert metadata["status"] == "completed"
    assert metadata["scenario"].endswith("resources/events.yaml")       # the events came along
    assert sorted(p.name for p in empty.iterdir()) == ["offshore_lift.ssp", "results"]


@pytest.fixture
def fresh_clone(tmp_path, monkeypatch) -> Path:
    """scenarios/hook_release laid out as in a checkout whose build/fmus does not exist yet."""
    folder = tmp_path / "scenarios" / "hook_release"
    shutil.copytree(ROOT / "scenarios" / "hook_release", folder)
    monkeypatch.setattr(first_run, "DEFAULT_FMU_DIR", tmp_path / "build" / "fmus")
    return folder / "hook_release.ssd"


def test_first_run_of_a_shipped_scenario_builds_its_fmus(fresh_clone, tmp_path, capsys):
    assert main(["run", str(fresh_clone), "--stop", "0.1", "--quiet", "--out", str(tmp_path / "out")]) == 0
    assert "building Payload into" in capsys.readouterr().err
    assert (tmp_path / "build" / "fmus" / "Payload.fmu").is_file()
    metadata = json.loads((tmp_path / "out" / "metadata.json").read_text())
    assert metadata["scenario"] == str(fresh_clone.parent / "events.yaml")   # the file names its events


def test_validate_before_the_build_names_the_command(fresh_clone, tmp_path, capsys):
    assert main(["validate", str(fresh_clone)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "FMU file not found" in err
    assert err.endswith(f"build it with: marine-cosim build --out {tmp_path / 'build' / 'fmus'} Payload")
    assert not (tmp_path / "build").exists()


def test_convert_with_initial_inputs(payload_fmu, tmp_path):
    """--initial-inputs: every connected input's start value is its value after our initialisation
    (here -1 x the payload's depth), for masters that set no inputs before initialising."""
    s = System("hook", stop_time=1.0, base_step=0.01)
    s.add_component(Component("payload", payload_fmu, {"mass": 1000.0, "initial.position[2]": 2.5}))
    s.add_component(Component("buoy", payload_fmu, {"mass": 10.0}))
    s.connect("payload.cg.position[2]", "buoy.water.elevation", factor=-1.0)
    ssd = write_ssp(s, tmp_path / "hook.ssd")
    assert main(["convert", str(ssd), "--to", "ssp", "--initial-inputs", "--out", str(tmp_path / "hook.ssp")]) == 0
    exported = read_ssp(tmp_path / "hook.ssp")
    assert exported.components["buoy"].parameters["water.elevation"] == pytest.approx(-2.5, abs=1e-12)
    assert exported.components["payload"].parameters == s.components["payload"].parameters


@pytest.mark.parametrize("ssd", sorted((ROOT / "scenarios").glob("*/*.ssd")), ids=lambda p: p.name)
def test_shipped_system_files_are_valid_ssp(ssd):
    """Every shipped .ssd is valid SSP 1.0 (FMPy's reader checks the schema), mc: annotations included."""
    from tests.system.test_system_files import assert_ssd_schema_valid

    assert_ssd_schema_valid(ssd.read_bytes(), str(ssd.relative_to(ROOT)))
