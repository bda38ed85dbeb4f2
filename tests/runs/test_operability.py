"""Operability (issue 27): the DAF, slack-wire and snap criteria on tension histories with a known
answer, limits on any variable type, seeds combined per sea state, the allowable Hs per Tp and the
operability over a scatter diagram; the criteria file's mistakes named; and ``marine-cosim sweep``
on the offshore lift giving the go/no-go table and the chart."""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from orchestration.errors import CriteriaError
from orchestration.master.observers.results import Results
from orchestration.runs.operability import (Limit, OperabilityResult, SeaState, TensionCriterion, allowable_hs,
                                            combine, criteria_from_dict, evaluate_run, load_criteria, operability,
                                            tension_checks)

ROOT = Path(__file__).resolve().parents[2]
S = 100.0e3                                   # N, the static tension of the synthetic histories
T_WAVE = 8.0                                  # s


def _history(amplitude: float, n: int = 4001, duration: float = 40.0):
    """T = S (1 + amplitude sin(2 pi t / T_WAVE)), clipped at 0 (a wire cannot push); the grid holds
    the crests and troughs exactly (t = 2, 6, 10, ... s)."""
    t = np.linspace(0.0, duration, n)
    return t, np.maximum(0.0, S * (1.0 + amplitude * np.sin(2 * math.pi * t / T_WAVE)))


def test_daf_and_slack_of_a_sinusoidal_tension():
    """DAF = max T / static = 1 + a; min T / static_min = 1 - a: the slack criterion (>= 10 %) holds
    for a = 0.85 (15 %) and fails for a = 0.95 (5 %); no slack event, no snap load."""
    crit = TensionCriterion("w.tension", "wire", static=S, max_daf=1.9, slack_fraction=0.10)
    t, T = _history(0.85)
    r = tension_checks(t, T, crit)
    assert r["daf"] == pytest.approx(1.85, abs=1e-12) and r["min_ratio"] == pytest.approx(0.15, abs=1e-12)
    assert r["daf_ok"] and r["slack_ok"] and r["snaps"] == 0 and r["snap_max"] == 0.0
    t, T = _history(0.95)
    r = tension_checks(t, T, crit)
    assert r["min_ratio"] == pytest.approx(0.05, abs=1e-12) and not r["slack_ok"]
    assert r["daf"] == pytest.approx(1.95, abs=1e-12) and not r["daf_ok"]     # 1.95 > 1.9
    # the slack criterion is relative to the smallest static load (submerged): 20 % of S over 0.5 S
    r = tension_checks(*_history(0.8), TensionCriterion("w.tension", "wire", static=S, static_min=0.5 * S))
    assert r["min_ratio"] == pytest.approx(0.4, abs=1e-12) and r["daf"] == pytest.approx(1.8, abs=1e-12)


def test_slack_events_and_their_snap_loads_are_counted():
    """a = 1.2: the wire goes slack once per wave (5 waves in 40 s); a snap spike of 3 S put 0.1 s
    after each re-tensioning is the snap load; a static from a window's mean is the mean tension."""
    t, T = _history(1.2)
    below = T < 0.1 * S
    rises = np.flatnonzero(below[:-1] & ~below[1:]) + 1
    assert len(rises) == 5
    T = T.copy()
    for k in rises:
        T[k + 10] = 3.0 * S                  # 0.1 s later
    crit = TensionCriterion("w.tension", "wire", static=S, max_snap=2.5 * S)
    r = tension_checks(t, T, crit)
    assert r["snaps"] == 5 and r["snap_max"] == 3.0 * S and not r["snap_ok"] and not r["slack_ok"]
    assert r["min_ratio"] == 0.0
    t, T = _history(0.5)
    r = tension_checks(t, T, TensionCriterion("w.tension", "wire", static_window=(0.0, 32.0)))
    assert r["static"] == pytest.approx(S, rel=1e-3)          # four whole waves


def _results(amplitude: float, roll: float, saturated: bool) -> Results:
    t, T = _history(amplitude)
    return Results(t, {"cable.winch.tension": T, "payload.euler[0]": roll * np.sin(t),
                       "winch.motor.saturated": np.array([saturated] * len(t))})


CRITERIA = {"window": [0.0, 40.0], "sea_state": {"hs": "ship.sea.hs", "tp": "ship.sea.period", "seed": "ship.sea.seed"},
            "tensions": [{"label": "hoist", "variable": "cable.winch.tension", "static": S, "max_daf": 1.5}],
            "limits": [{"label": "roll", "variable": "payload.euler[0]", "stat": "absmax", "max": 0.1},
                       {"label": "saturated", "variable": "winch.motor.saturated", "stat": "any", "max": 0}]}


def test_runs_seeds_and_sea_states_are_judged():
    crit = criteria_from_dict(CRITERIA, "test")
    ok = evaluate_run(_results(0.3, 0.05, False), crit)
    assert ok["go"] and ok["values"]["hoist:daf"] == pytest.approx(1.3) and ok["values"]["saturated"] == 0.0
    bad = evaluate_run(_results(0.3, 0.05, True), crit)          # a Boolean limit
    assert not bad["go"] and bad["fails"] == ["saturated: 1 > 0"]
    # a grid Hs (1, 2, 3) x Tp (8, 10), two seeds: the worst seed decides
    amplitude = {1: 0.2, 2: 0.4, 3: 0.45}
    rows = []
    for hs in (1, 2, 3):
        for tp in (8, 10):
            for seed in (1, 2):
                a = amplitude[hs] + (0.2 if (hs, tp, seed) == (2, 8, 2) else 0.0)   # one bad seed at Hs 2, Tp 8
                rows.append({"ship.sea.hs": hs, "ship.sea.period": tp, "ship.sea.seed": seed, "status": "ok",
                             "checks": evaluate_run(_results(a, 0.05, False), crit)})
    rows.append({"ship.sea.hs": 3, "ship.sea.period": 10, "ship.sea.seed": 3, "status": "failed", "checks": None})
    result = combine(rows, ["ship.sea.hs", "ship.sea.period", "ship.sea.seed"], crit)
    go = {(s.key["ship.sea.hs"], s.key["ship.sea.period"]): s.go for s in result.states}
    assert go == {(1, 8): True, (1, 10): True, (2, 8): False, (2, 10): True, (3, 8): True, (3, 10): False}
    state = next(s for s in result.states if s.key == {"ship.sea.hs": 2, "ship.sea.period": 8})
    assert state.values["hoist:daf"] == pytest.approx(1.6) and state.runs == 2
    assert next(s for s in result.states if s.key["ship.sea.hs"] == 3 and s.key["ship.sea.period"] == 10).fails \
        == ["1 of 3 runs failed"]
    # allowable Hs: a no-go caps the Hs above it (Hs 3 at Tp 8 passes, but Hs 2 did not)
    assert [(a["tp"], a["allowable_hs"]) for a in result.allowable] == [(8, 1.0), (10, 2.0)]
    table = result.table()
    assert "NO-GO" in table and "allow. Hs" in table
    # the mean of the seeds (the expected extreme) lets Hs 2, Tp 8 pass: mean DAF 1.5
    mean = combine(rows, ["ship.sea.hs", "ship.sea.period", "ship.sea.seed"],
                   criteria_from_dict({**CRITERIA, "seeds": "mean"}, "test"))
    assert next(s for s in mean.states if s.key == {"ship.sea.hs": 2, "ship.sea.period": 8}).go


def test_operability_over_a_scatter_diagram():
    """Allowable Hs 2 m at Tp 8 s and 4 m at 12 s (3 m at 10 s by interpolation), alpha 0.75:
    OP_WF 1.5, 2.25, 3 m; the go classes of the diagram below hold 10 + 20 + 30 + 5 = 65 of 100;
    the Tp = 14 s column (10) lies outside the simulated periods."""
    states = [SeaState({"hs": hs, "tp": tp}, 1, 0, {}, [] if hs <= limit else ["x"])
              for tp, limit in ((8, 2.0), (12, 4.0)) for hs in (1.0, 2.0, 3.0, 4.0, 5.0)]
    result = OperabilityResult({"hs": "hs", "tp": "tp", "heading": None, "seed": None}, states, [], [])
    result.allowable = allowable_hs(result, alpha=0.75)
    assert [(a["tp"], a["allowable_hs"], a["op_wf"]) for a in result.allowable] == [(8, 2.0, 1.5), (12, 4.0, 3.0)]
    crit = criteria_from_dict({**CRITERIA, "scatter": {
        "hs": [1.0, 2.0, 3.0], "tp": [8.0, 10.0, 12.0, 14.0],
        "probability": [[10, 20, 10, 5], [15, 10, 20, 3], [0, 5, 0, 2]]}}, "test")
    [op] = operability(result, crit.scatter)
    assert op["percent"] == pytest.approx(100 * (10 + 20 + 10 + 10 + 20) / 100)
    assert op["uncovered_percent"] == pytest.approx(10.0)


@pytest.mark.parametrize("change, message", [
    ({"tensions": [{"variable": "w.t"}]}, "give the static tension as 'static'"),
    ({"tensions": [{"variable": "w.t", "static": 1, "max_dafx": 1}]},
     "unknown key 'max_dafx' \\(did you mean 'max_daf'"),
    ({"tensions": [{"variable": "w.t", "static": -1}]}, "static: -1 must be positive"),
    ({"limits": [{"variable": "p.x", "stat": "median", "max": 1}]}, "stat 'median'"),
    ({"limits": [{"variable": "p.x"}]}, "give 'max' and/or 'min'"),
    ({"window": [5, 1]}, "END must be after START"),
    ({"seeds": "best"}, "seeds: 'best'"),
    ({"scatter": {"hs": [1], "tp": [8, 10], "probability": [[1]]}}, "1 rows \\(hs\\) of 2 values"),
    ({"tensions": [], "limits": []}, "no criteria"),
])
def test_criteria_mistakes_are_named(change, message):
    with pytest.raises(CriteriaError, match=message):
        criteria_from_dict({**CRITERIA, **change}, "lift.yaml")


def test_the_shipped_criteria_file_reads():
    crit = load_criteria(ROOT / "scenarios" / "offshore_lift" / "operability.yaml")
    assert [t.label for t in crit.tensions] == ["hoist wire", "sling"]
    assert crit.tensions[0].static == 99.05e3 and crit.tensions[0].slack_fraction == 0.10
    assert "winch.motor.saturated" in crit.variables and crit.scatter is not None
    assert sum(map(sum, crit.scatter.probability)) == pytest.approx(1.0)
    assert isinstance(Limit("a.b", "any", "x", max=0), Limit)


@pytest.mark.slow
def test_sweep_of_the_offshore_lift_gives_the_table_and_the_chart(tmp_path, capsys):
    """``marine-cosim sweep offshore_lift`` (the reference scenario by name, its events) over 2 Hs x
    2 Tp with the shipped criteria, shortened to 6 s: every run judged, the go/no-go table printed
    and written, the chart drawn, the operability over the criteria file's scatter diagram."""
    from orchestration.cli.main import main

    out = tmp_path / "sweep"
    code = main(["sweep", "offshore_lift", "--grid", "ship.sea.hs=1,5", "--grid", "ship.sea.period=6,10",
                 "--grid", "ship.sea.seed=11", "--stop", "6", "--backend", "process", "--jobs", "2",
                 "--criteria", str(ROOT / "scenarios" / "offshore_lift" / "operability.yaml"), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "Hs \\ Tp" in captured.out and "operability" in captured.out
    rows = list(csv.DictReader(open(out / "operability.csv")))
    assert len(rows) == 4 and {r["go"] for r in rows} <= {"GO", "NO-GO"}
    assert all(float(r["hoist wire:daf"]) >= 1.0 and float(r["hoist wire:min_ratio"]) > 0 for r in rows)
    calm = next(r for r in rows if r["ship.sea.hs"] == "1" and r["ship.sea.period"] == "10")
    assert calm["go"] == "GO", calm["reasons"]
    doc = json.loads((out / "operability.json").read_text())
    assert [a["tp"] for a in doc["allowable_hs"]] == [6, 10] and doc["operability"][0]["percent"] > 0
    assert (out / "allowable_hs.png").stat().st_size > 10_000
    # judged again with edited criteria, no new runs: a DAF limit of 1 fails every sea state
    strict = tmp_path / "strict.yaml"
    strict.write_text((ROOT / "scenarios" / "offshore_lift" / "operability.yaml").read_text()
                      .replace("max_daf: 1.30", "max_daf: 1.0"))
    assert main(["operability", str(out), "--criteria", str(strict)]) == 0
    assert {r["go"] for r in csv.DictReader(open(out / "operability.csv"))} == {"NO-GO"}


def test_the_docs_show_the_shipped_criteria_file():
    """docs/operability.md lists scenarios/offshore_lift/operability.yaml as it is."""
    text = (ROOT / "docs" / "operability.md").read_text()
    shipped = (ROOT / "scenarios" / "offshore_lift" / "operability.yaml").read_text()
    assert f"```yaml\n{shipped}```" in text


def test_wave_headings_are_judged_apart(tmp_path):
    """A heading parameter splits the table, the allowable Hs and the operability per heading; the
    chart draws one line per heading."""
    from orchestration.runs.operability import plot_allowable

    crit = criteria_from_dict({**CRITERIA, "sea_state": {}, "scatter": {"hs": [1.0, 2.0], "tp": [8.0],
                                                                         "probability": [[3], [1]]}}, "test")
    rows = []
    for heading, amplitude in ((0.0, 0.2), (1.57, 0.45)):          # beam sea: Hs 2 fails
        for hs in (1, 2):
            a = amplitude * hs / 2 if heading == 0.0 else (0.2 if hs == 1 else 0.6)
            rows.append({"s.sea.hs": hs, "s.sea.period": 8, "s.sea.direction": heading, "status": "ok",
                         "checks": evaluate_run(_results(a, 0.05, False), crit)})
    result = combine(rows, ["s.sea.hs", "s.sea.period", "s.sea.direction"], crit)
    assert result.axes == {"hs": "s.sea.hs", "tp": "s.sea.period", "heading": "s.sea.direction", "seed": None}
    assert [(a["heading"], a["allowable_hs"]) for a in result.allowable] == [(0.0, 2.0), (1.57, 1.0)]
    assert [round(o["percent"], 6) for o in result.operability] == [100.0, 75.0]
    table = result.table()
    assert "heading s.sea.direction = 0" in table and "heading s.sea.direction = 1.57" in table
    assert plot_allowable(result, crit, tmp_path / "chart.png").stat().st_size > 10_000


def test_a_criteria_file_that_is_not_text_is_refused_naming_it(tmp_path):
    """Before: a UnicodeDecodeError from the reader (an internal error in the CLI)."""
    from orchestration.runs.operability import load_criteria

    path = tmp_path / "criteria.yaml"
    path.write_bytes(b"tension: \xff\n")
    with pytest.raises(CriteriaError, match="criteria.yaml is not UTF-8 text"):
        load_criteria(path)


_SWEEP = {"system": "lift.ssd", "spec": {"grid": {"ship.sea.hs": [1, 2]}, "ranges": {}},
          "cases": [{"name": "run-0001", "ship.sea.hs": 1}, {"name": "run-0002", "ship.sea.hs": 2}]}
_SUMMARY = ("run,ship.sea.hs,status,steps,wall_s,node,error\r\n"
            "run-0001,1,ok,120,6.4,vm,\r\nrun-0002,2,ok,120,8.6,vm,\r\n")


@pytest.mark.parametrize("record, summary, message", [
    ("{", _SUMMARY, "sweep.json: not the record of a sweep \\(Expecting property name"),
    ("[]", _SUMMARY, "sweep.json: not the record of a sweep \\(a JSON object"),
    ({**_SWEEP, "cases": [{"ship.sea.hs": 1}]}, _SUMMARY, "sweep.json: not the record of a sweep"),
    ({**_SWEEP, "spec": {"grid": [1, 2]}}, _SUMMARY, "sweep.json: not the record of a sweep"),
    (b"\xff\xfe", _SUMMARY, "sweep.json: not the record of a sweep \\(.*not UTF-8"),
    (_SWEEP, "", "summary.csv: no runs in it"),
    (_SWEEP, _SUMMARY.split("\r\n")[0] + "\r\n", "summary.csv: no runs in it"),
    (_SWEEP, _SUMMARY.replace("status", "state"), "summary.csv: not the summary of a sweep"),
    (_SWEEP, _SUMMARY.replace(",vm,\r\nrun-0002", ",vm\r\nrun-0002"), "summary.csv, line 2: not as many values"),
])
def test_a_sweep_folder_written_wrong_is_refused_naming_the_file(tmp_path, record, summary, message):
    """The operability of a sweep folder cut short or edited by hand. Before: a JSONDecodeError or a
    TypeError (internal errors in the CLI), and an empty summary judged nothing and said so nowhere."""
    from orchestration.runs.operability import judge_sweep
    from orchestration.runs.sweep import SweepError

    folder = tmp_path / "sweep"
    folder.mkdir()
    (folder / "sweep.json").write_bytes(record if isinstance(record, bytes) else
                                        (record if isinstance(record, str) else json.dumps(record)).encode())
    (folder / "summary.csv").write_text(summary, newline="")
    crit = load_criteria(ROOT / "scenarios" / "offshore_lift" / "operability.yaml")
    with pytest.raises(SweepError, match=message):
        judge_sweep(folder, crit)
