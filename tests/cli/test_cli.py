"""The marine-cosim command: run, validate, info, plot, convert; clear errors, non-zero exits."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from orchestration.cli.main import main
from orchestration.system.ssp import write_ssp
from orchestration.system.model import Component, System

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def hook_system(payload_fmu, tmp_path) -> Path:
    """The scenarios/hook_release system, pointed at the freshly built FMU."""
    fmu = tmp_path / "fmus" / "Payload.fmu"
    fmu.parent.mkdir()
    shutil.copy(payload_fmu, fmu)
    s = System("hook", stop_time=3.0, base_step=0.01, algorithm_options={"method": "gauss-seidel"})
    s.add_component(Component("payload", fmu, {"mass": 1000.0, "hydro.volume": 0.5, "initial.position[2]": -1.0}))
    s.add_component(Component("buoy", fmu, {"mass": 10.0, "hydro.volume": 0.05, "gravity": 9.81}))
    s.connect("payload.cg.position[2]", "buoy.water.elevation", factor=-1.0)
    return write_ssp(s, tmp_path / "hook.ssd")


def test_validate_ok_and_broken(hook_system, tmp_path, capsys):
    assert main(["validate", str(hook_system)]) == 0
    out = capsys.readouterr().out
    assert "not connected" in out        # warnings are shown, the system is still valid
    assert out.splitlines()[-1] == f"OK: {hook_system} is valid (2 components, 1 connections, 2 warning(s))"
    broken = tmp_path / "broken.ssd"
    broken.write_text(hook_system.read_text().replace('startConnector="cg.position[2]"',
                                                       'startConnector="cg.positon[2]"'))
    assert main(["validate", str(broken)]) != 0
    captured = capsys.readouterr()
    assert "cg.positon[2]" in captured.out + captured.err and "broken.ssd" in captured.out + captured.err
    assert len(captured.err.strip().splitlines()) == 1 and not captured.out     # one line



def test_run_set_overrides_start_values_by_name(hook_system, tmp_path, capsys):
    """``run --set COMPONENT.VARIABLE=VALUE`` (RunSettings.parameters): applied over the system file,
    recorded in the metadata; a misspelt name is refused before the run with the close match."""
    out = tmp_path / "heavy"
    assert main(["run", str(hook_system), "--stop", "0.5", "--quiet", "--out", str(out),
                 "--set", "payload.mass=4000", "--set", "buoy.hydro.volume=0.1"]) == 0
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["components"]["payload"]["parameters"]["mass"] == 4000.0
    assert meta["parameters"] == {"payload.mass": 4000.0, "buoy.hydro.volume": 0.1}
    assert main(["run", str(hook_system), "--stop", "0.5", "--quiet", "--set", "payload.mas=4000"]) == 2
    assert "did you mean 'mass'" in capsys.readouterr().err
    assert main(["run", str(hook_system), "--stop", "0.5", "--quiet", "--set", "payload.mass"]) == 2
    assert "expected NAME=VALUE" in capsys.readouterr().err


def test_each_option_has_one_spelling_across_verbs():
    """The same meaning, the same flag: no verb spells stop time, result folder, recorded variables or
    the Ray address another way."""
    import argparse

    from orchestration.cli.main import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    flags = {verb: {o for a in p._actions for o in a.option_strings} for verb, p in sub.choices.items()}
    every = set().union(*flags.values())
    for other in ("--stop-time", "--output", "--outdir", "--address", "--vars", "--record", "--parameter",
                  "--step-size", "--seed-value"):
        assert other not in every, other
    for verb in ("run", "sweep", "simulate"):
        assert {"--stop", "--step", "--out", "--variables", "--quiet"} <= flags[verb], verb
    assert "--ray-address" in flags["run"] and "--ray-address" in flags["sweep"]
    assert "--record-every" in flags["run"] and "--record-every" in flags["sweep"]
    assert "--set" in flags["run"] and "--set" in flags["simulate"]


def test_run_writes_results_and_metadata(hook_system, tmp_path, capsys):
    scenario = tmp_path / "events.json"
    scenario.write_text(json.dumps({"events": [
        {"time": 0.0, "model": "payload", "variable": "cg.force[2]", "value": -9810.0},
        {"time": 1.0, "model": "payload", "variable": "cg.force[2]", "action": "reset"}]}))
    out = tmp_path / "run"
    assert main(["run", str(hook_system), "--stop", "2", "--out", str(out), "--scenario", str(scenario),
                 "--quiet"]) == 0
    assert "200 steps to t = 2 s" in capsys.readouterr().out
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["status"] == "completed" and meta["algorithm"]["method"] == "gauss-seidel"
    assert meta["system"]["sha256"] and meta["scenario"] == str(scenario)
    assert (out / "results.csv").is_file() and list((out / "results.parquet").glob("*.parquet"))
    # plots
    assert main(["plot", str(out), "payload.cg.position", "buoy.water"]) == 0
    pngs = sorted((out / "plots").glob("*.png"))
    assert [p.name for p in pngs] == ["buoy.png", "payload.png"] and all(p.stat().st_size > 10_000 for p in pngs)


def test_errors_are_one_message_and_nonzero(hook_system, tmp_path, capsys):
    assert main(["run", str(tmp_path / "nope.ssd")]) == 2
    err = capsys.readouterr().err
    assert "error: system file not found" in err and "Traceback" not in err
    assert main(["run", str(hook_system), "--stop", "1", "--scenario", str(tmp_path / "missing.yaml")]) == 2
    assert "missing.yaml" in capsys.readouterr().err
    with pytest.raises(Exception):
        main(["--debug", "run", str(tmp_path / "nope.ssd")])


def test_info_on_fmu_and_system(hook_system, payload_fmu, capsys):
    assert main(["info", str(payload_fmu)]) == 0
    out = capsys.readouterr().out
    assert "canGetAndSetFMUstate" in out and "attachment1.force[2]" in out and " N " in out
    assert main(["info", str(hook_system)]) == 0
    out = capsys.readouterr().out
    assert "component payload" in out and "payload.cg.position[2] -> buoy.water.elevation  (x -1 + 0)" in out


def test_convert_to_osp_and_back(hook_system, tmp_path, capsys):
    assert main(["convert", str(hook_system), "--to", "osp", "--out", str(tmp_path / "osp")]) == 0
    osp = Path(capsys.readouterr().out.strip())
    assert osp.name == "OspSystemStructure.xml"
    assert main(["validate", str(osp)]) == 0
    assert main(["convert", str(osp), "--to", "ssp", "--out", str(tmp_path / "again.ssp")]) == 0
    assert main(["run", str(tmp_path / "again.ssp"), "--stop", "0.5", "--quiet", "--out", str(tmp_path / "r")]) == 0


def test_shipped_scenario_system_is_valid_when_fmus_are_built(payload_fmu, tmp_path, capsys):
    """scenarios/hook_release points at build/fmus/Payload.fmu; laid out like a checkout with the
    FMU built, it validates and runs with its scenario file."""
    folder = tmp_path / "scenarios" / "hook_release"
    shutil.copytree(ROOT / "scenarios" / "hook_release", folder)
    (tmp_path / "build" / "fmus").mkdir(parents=True)
    shutil.copy(payload_fmu, tmp_path / "build" / "fmus" / "Payload.fmu")
    assert main(["validate", str(folder / "hook_release.ssd")]) == 0
    assert main(["run", str(folder / "hook_release.ssd"), "--scenario", str(folder / "events.yaml"), "--stop", "3",
                 "--quiet", "--out", str(tmp_path / "out")]) == 0
    from orchestration.master.observers.results import load_results

    r = load_results(tmp_path / "out")
    z = r["payload.cg.position[2]"]
    assert abs(z[r.time <= 2.0][-1] - z[0]) < 0.05 and z[-1] > z[0] + 1.0   # held, then released


def test_run_with_the_process_backend_in_shared_workers(hook_system, tmp_path):
    """`--backend process --workers 1`: both FMUs in one worker process, results bit for bit those of
    the in-process run, the choice in the run's metadata; a bad worker count is refused by name."""
    from orchestration.master.observers.results import load_results

    common = ["--quiet", "--stop", "0.5"]
    assert main(["run", str(hook_system), *common, "--backend", "process", "--workers", "1",
                 "--out", str(tmp_path / "shared")]) == 0
    assert main(["run", str(hook_system), *common, "--out", str(tmp_path / "inproc")]) == 0
    meta = json.loads((tmp_path / "shared" / "metadata.json").read_text())
    assert meta["backend"]["backend"] == "process" and meta["backend"]["workers"] == 1
    a, b = load_results(tmp_path / "shared"), load_results(tmp_path / "inproc")
    assert a.columns.keys() == b.columns.keys() and all(np.array_equal(a[k], b[k]) for k in a.columns)
    assert main(["run", str(hook_system), *common, "--workers", "2", "--out", str(tmp_path / "bad")]) == 2


# the swapped-ship variants need third-party ship FMUs the tests build themselves (tests/runs/test_ship_swap.py)
SWAPPED = ("third_party", "6dof_ship", "manoeuvring_ship")
SHIPPED = sorted(p.relative_to(ROOT / "scenarios") for p in (ROOT / "scenarios").glob("*/*.ssd")
                 if not any(tag in p.name for tag in SWAPPED))


@pytest.mark.parametrize("scenario", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_scenarios_declare_their_unconnected_inputs(scenario, fmu_dir, tmp_path, capsys):
    """Every shipped system file validates with its last line OK and no warning about inputs left
    unconnected: those are unused on purpose and carry their start values (docs/scenarios.md)."""
    folder = tmp_path / "scenarios"
    shutil.copytree(ROOT / "scenarios", folder)
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "fmus").symlink_to(fmu_dir)
    assert main(["validate", str(folder / scenario)]) == 0
    out = capsys.readouterr().out
    assert "not connected" not in out and out.splitlines()[-1].startswith(f"OK: {folder / scenario} is valid")


def test_a_scenario_given_on_the_command_line_replaces_a_missing_own_one(fmu_dir, tmp_path, capsys):
    """The system file names its events (mc:Scenario) but was copied without them: ``--scenario``
    brings another file, and the run no longer needs the missing one."""
    folder = tmp_path / "scenarios" / "hook_release"
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "scenarios" / "hook_release" / "hook_release.ssd", folder)
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "fmus").symlink_to(fmu_dir)
    assert main(["run", str(folder / "hook_release.ssd"), "--stop", "0.1", "--quiet"]) == 2
    assert "events.yaml" in capsys.readouterr().err            # one line naming the missing file
    events = ROOT / "scenarios" / "hook_release" / "events.yaml"
    assert main(["run", str(folder / "hook_release.ssd"), "--scenario", str(events), "--stop", "0.1", "--quiet",
                 "--out", str(tmp_path / "out")]) == 0


def test_convert_to_osp_says_when_it_leaves_power_bonds_out(fmu_dir, tmp_path, capsys):
    """libcosim loads one power bond per OSP file: ``convert --to osp`` of the moored barge (four
    fairlead bonds, twelve scalar ones) leaves them out with a warning on stderr, ``--power-bonds
    write`` keeps them."""
    folder = tmp_path / "scenarios"
    shutil.copytree(ROOT / "scenarios" / "moored_barge", folder / "moored_barge")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "fmus").symlink_to(fmu_dir)
    ssd = folder / "moored_barge" / "moored_barge.ssd"
    assert main(["convert", str(ssd), "--to", "osp", "--out", str(tmp_path / "auto")]) == 0
    err = capsys.readouterr().err
    assert "warning:" in err and "power bonds left out" in err and "has 12 (fairlead1.0" in err, err
    assert 'powerBond=' not in (tmp_path / "auto" / "OspSystemStructure.xml").read_text()
    assert main(["convert", str(ssd), "--to", "osp", "--out", str(tmp_path / "all"), "--power-bonds", "write"]) == 0
    assert "warning:" not in capsys.readouterr().err
    assert (tmp_path / "all" / "OspSystemStructure.xml").read_text().count('powerBond="fairlead1.0"') == 2
