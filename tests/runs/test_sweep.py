"""Ensembles (issue 10): ``marine-cosim sweep`` over a grid of sea states (Hs x Tp) of the Ship FMU
as Ray tasks with per-run results, a summary table and heat maps; random samples reproducible from
their seed; the same case gives the same numbers on every runner; a failing case is reported while
the others go on; clear errors for bad specifications.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from orchestration.cli.main import main
from orchestration.master.observers.results import load_results
from orchestration.system.ssp import write_ssp
from orchestration.runs.sweep import (SweepError, SweepSpec, load_summary, parse_grid, parse_range, parse_summary,
                                      run_sweep)
from orchestration.system.model import Component, System


@pytest.fixture
def ship_system(fmu_dir, tmp_path) -> Path:
    s = System("ship_sea", stop_time=1.0, base_step=0.1)
    s.add_component(Component("ship", fmu_dir / "Ship.fmu", {"sea.hs": 2.0, "sea.period": 8.0, "sea.seed": 3}))
    return write_ssp(s, tmp_path / "ship.ssd")


@pytest.fixture
def payload_system(payload_fmu, tmp_path) -> Path:
    s = System("drop", stop_time=0.5, base_step=0.05)
    s.add_component(Component("p", payload_fmu, {"mass": 1000.0, "hydro.volume": 0.5, "initial.position[2]": -1.0}))
    return write_ssp(s, tmp_path / "drop.ssd")


@pytest.mark.slow
def test_sea_state_grid_on_ray_gives_table_heatmaps_and_run_folders(ship_system, tmp_path, ray_local, capsys):
    out = tmp_path / "sweep"
    code = main(["sweep", str(ship_system), "--grid", "ship.sea.hs=1,3", "--grid", "ship.sea.period=6:10:4",
                 "--summary", "ship.position[2]:absmax", "--summary", "ship.euler[1]:absmax", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "[sweep 4/4]" in captured.err and "4 runs done, 0 failed" in captured.out     # progress and result
    rows = load_summary(out / "summary.csv")
    assert [(r["ship.sea.hs"], r["ship.sea.period"]) for r in rows] == [(1, 6), (1, 10), (3, 6), (3, 10)]
    assert all(r["status"] == "ok" and r["steps"] == 10 for r in rows)
    heave = {(r["ship.sea.hs"], r["ship.sea.period"]): r["ship.position[2]:absmax"] for r in rows}
    for period in (6, 10):      # same seed, three times the wave height: the motion grows with it
        assert heave[(3, period)] > 1.5 * heave[(1, period)] > 0.0
    for r in rows:              # the per-run results came back from the tasks and agree with the table
        run = out / "runs" / r["run"]
        assert np.max(np.abs(load_results(run)["ship.position[2]"])) == r["ship.position[2]:absmax"]
        assert json.loads((run / "metadata.json").read_text())["parameters"]["ship.sea.hs"] == r["ship.sea.hs"]
    maps = sorted(p.name for p in out.glob("heatmap_*.png"))
    assert maps == ["heatmap_ship.euler_1_absmax.png", "heatmap_ship.position_2_absmax.png"]
    assert all((out / m).stat().st_size > 10_000 for m in maps)
    assert json.loads((out / "sweep.json").read_text())["spec"]["grid"]["ship.sea.period"] == [6, 10]


@pytest.mark.slow
def test_random_samples_are_reproducible_and_every_runner_gives_the_same_numbers(payload_system, tmp_path,
                                                                                   ray_local):
    make = lambda random: SweepSpec.from_arguments(grid=["p.hydro.volume=0.5,2"], random=random,
                                                   ranges=["p.mass=500:2000", "p.initial.position[2]=-3:-1"],
                                                   seed=11, summary=["p.cg.position[2]:max", "p.cg.velocity[2]:final"])
    four = make(2).cases()
    assert four == make(2).cases()                       # the same seed, the same samples
    assert len(four) == 4 and [c["p.hydro.volume"] for c in four] == [0.5, 0.5, 2, 2]
    assert all(500 <= c["p.mass"] <= 2000 and -3 <= c["p.initial.position[2]"] <= -1 for c in four)
    assert len({c["p.mass"] for c in four}) == 4
    spec = make(1)                                       # two cases run on each runner
    cases = spec.cases()
    assert len(cases) == 2 and cases[0]["p.mass"] != cases[1]["p.mass"]
    tables = {}
    for runner in ("ray", "serial"):
        result = run_sweep(payload_system, spec, out=tmp_path / runner, runner=runner, quiet=True)
        assert result.failed == 0 and result.heatmaps == []     # one grid parameter: no heat map
        tables[runner] = load_summary(result.summary_csv)
    for a, b in zip(tables["ray"], tables["serial"]):
        for key in ("p.mass", "p.cg.position[2]:max", "p.cg.velocity[2]:final"):
            assert a[key] == b[key]
    a, b = load_results(tmp_path / "ray/runs/run-0002"), load_results(tmp_path / "serial/runs/run-0002")
    assert a.columns.keys() == b.columns.keys() and all(np.array_equal(a[k], b[k]) for k in a.columns)


@pytest.mark.slow
def test_a_failing_case_is_reported_and_the_others_go_on(payload_system, tmp_path, capsys):
    out = tmp_path / "sweep"
    code = main(["sweep", str(payload_system), "--grid", "p.mass=1000,-5", "--summary", "p.cg.position[2]",
                 "--backend", "process", "--jobs", "2", "--out", str(out)])
    assert code == 1
    rows = load_summary(out / "summary.csv")
    assert [r["status"] for r in rows] == ["ok", "failed"]
    assert "mass" in rows[1]["error"] and rows[0]["p.cg.position[2]:max"] > -1.0
    assert "1 failed" in capsys.readouterr().out


def test_bad_specifications_are_refused_with_the_reason(payload_system, tmp_path):
    assert parse_grid("ship.sea.hs=1:3:0.5") == ("ship.sea.hs", [1.0, 1.5, 2.0, 2.5, 3.0])
    assert parse_grid("ship.sea.seed=1:7:3") == ("ship.sea.seed", [1, 4, 7])
    assert parse_range("s.sea.seed=int:1:9") == ("s.sea.seed", ("int", 1.0, 9.0))
    assert parse_summary("cable.end_a.tension") == ("cable.end_a.tension", "max")
    bad = [(lambda: parse_grid("hs=1,2"), "COMPONENT.VARIABLE"),
           (lambda: parse_grid("s.hs=3:1:1"), "STOP >= START"),
           (lambda: parse_grid("s.hs=1,1"), "repeated"),
           (lambda: parse_range("s.hs=1"), "LO:HI"),
           (lambda: parse_summary("s.x:median"), "unknown statistic 'median'"),
           (lambda: SweepSpec.from_arguments(ranges=["s.x=1:2"]), "needs --random"),
           (lambda: SweepSpec.from_arguments(random=3), "needs at least one --range"),
           (lambda: SweepSpec.from_arguments(), "nothing to sweep")]
    for call, message in bad:
        with pytest.raises(SweepError, match=message):
            call()
    spec = lambda **kw: SweepSpec.from_arguments(**{"grid": ["p.mass=1,2"], "summary": ["p.cg.position[2]"], **kw})
    with pytest.raises(SweepError, match=r"no component 'q'"):
        run_sweep(payload_system, spec(grid=["q.mass=1,2"]), out=tmp_path / "x", runner="serial")
    with pytest.raises(SweepError, match=r"no variable 'mas' \(did you mean 'mass'"):
        run_sweep(payload_system, spec(grid=["p.mas=1,2"]), out=tmp_path / "x", runner="serial")
    with pytest.raises(SweepError, match=r"no Real variable 'cg.positon\[2\]' \(did you mean 'cg.position\[2\]'"):
        run_sweep(payload_system, spec(summary=["p.cg.positon[2]"]), out=tmp_path / "x", runner="serial")
    with pytest.raises(SweepError, match="unknown sweep backend"):
        run_sweep(payload_system, spec(), out=tmp_path / "x", runner="dask")
    assert not (tmp_path / "x" / "runs").exists()           # refused before any run
