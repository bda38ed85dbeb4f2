"""The block turnover of Lee (2020) §4.1 (scenarios/block_turnover/, docs/block_turnover.md):
a 348 t block turned over by a floating crane (4 slings) and two crawler cranes (3 slings each).

* at rest (before the hoist), the slings' vertical pull on the three hooks equals the block's
  weight within 0.5 % (issue 25's acceptance), and the block hangs level;
* the whole turnover from the committed system and events files, calm water, through the CLI:
  the block reaches 90 deg (within 1 deg, mean over the last 10 s) and hangs there from the
  floating crane alone, the slings again carry the weight within 0.5 %; no sling passes through the block at any
  recorded step (``contact.penetration``, the deepest sling point inside the block, stays below the
  contact's 1 µm detection threshold); every crawler sling bends over the block (six contact nodes);
* the five wave cases of Table 4-2 (regular beam waves on the barge): the largest contact force on
  the block grows with the wave height and falls with the wave period, the order the thesis reports
  (validation record against the thesis' 55 / 33 / 27 / 24 / 108 t).
"""
from __future__ import annotations


import numpy as np
import pytest

from orchestration.runs.reference import turnover as tv

WEIGHT = tv.BLOCK_MASS * tv.G
PENETRATION_LIMIT = 1e-6          # m: the contact inserts a node where a segment is deeper than 1 µm


def _run(fmu_dir, tmp_path, stop, case=None, every=1):
    from orchestration.runs.reference import load_reference
    from orchestration.runs.run import RunSettings, run

    _, _, path = load_reference("block_turnover", fmu_dir, tmp_path, log=lambda m: None)
    params = {f"barge.{k}": v for k, v in tv.wave_parameters(case).items()}
    settings = RunSettings(system=str(path), stop=stop, scenario=str(tv.FOLDER / "events.yaml"),
                           variables=tv.RECORD, memory=True, files=False, parameters=params, record_every=every)
    return run(settings, log=lambda m: None).results


def test_plan_turns_the_block_over_90_degrees():
    """The hook paths of the events: the floating crane hoists and luffs back, the crawlers hold their
    height and travel under it; the planned rates integrate back to the planned paths (1 mm)."""
    p0, p1 = tv.hook_plan(0.0), tv.hook_plan(tv.PHASES["end"])
    assert tv._turn_angle(tv.PHASES["turn"][1]) == pytest.approx(np.pi / 2)
    assert p1["fc.hoist"] < p0["fc.hoist"] - 25.0            # the floating-crane hook rises > 25 m
    assert p1["crawler.travel"] < p0["crawler.travel"] - 20.0
    events = tv.plan_events()
    pos = dict.fromkeys(("fc_crane.joint1.setpoint", "fc_crane.joint2.setpoint", "crawler1.joint1.setpoint",
                         "crawler1.joint2.setpoint"), 0.0)
    rate = dict.fromkeys(pos, 0.0)
    last = 0.0
    for e in events + [{"time": tv.PHASES["end"], "model": "", "variable": "", "value": 0.0}]:
        for key in pos:
            pos[key] += rate[key] * (e["time"] - last)
        last = e["time"]
        key = f"{e['model']}.{e['variable']}"
        if key in rate:
            rate[key] = e["value"]
    assert pos["fc_crane.joint1.setpoint"] == pytest.approx(p1["fc.luff"] - p0["fc.luff"], abs=1e-3)
    assert pos["fc_crane.joint2.setpoint"] == pytest.approx(p1["fc.hoist"] - p0["fc.hoist"], abs=1e-3)
    assert pos["crawler1.joint1.setpoint"] == pytest.approx(p1["crawler.travel"] - p0["crawler.travel"], abs=1e-3)
    assert pos["crawler1.joint2.setpoint"] == pytest.approx(p1["crawler.hoist"] - p0["crawler.hoist"], abs=1e-3)


@pytest.mark.slow
def test_at_rest_the_slings_carry_the_weight(fmu_dir, tmp_path):
    """Calm water, the first 2 s (before the hoist): the sum of the hooks' vertical loads is the
    block's weight within 0.5 %, and the block stays level (0.1 deg) where it started (2 cm: the
    hooks and the barge settle; the block rises 13 mm, measured)."""
    r = _run(fmu_dir, tmp_path, tv.PHASES["settle"])
    support = tv.vertical_support(r)
    rest = np.asarray(r.time) >= tv.PHASES["settle"] - 0.5
    assert abs(support[rest].mean() / WEIGHT - 1.0) < 0.005
    assert np.all(np.abs(support[rest] / WEIGHT - 1.0) < 0.005)
    assert np.degrees(np.abs(tv.turn_angle(r))).max() < 0.1
    assert np.abs(np.asarray(r["block.position[2]"]) - tv.block_start()[2]).max() < 0.02
    assert np.asarray(r["block.contact.penetration"]).max() <= PENETRATION_LIMIT


@pytest.mark.slow
def test_the_turnover_runs_from_the_cli_to_90_degrees(fmu_dir, tmp_path, validation):
    """The committed files through ``marine-cosim run`` (calm water, 78 s): the block turns over to
    90 deg (mean over the last 10 s within 1 deg; it swings slowly on the floating crane) once the
    crawlers have lowered their slings to zero load in phase 3; the slings carry the weight within
    0.5 % at rest before the hoist and at the end; no sling inside the block at any step (1 µm);
    the six crawler slings bend over the block (one contact node each) and, slack at the end, lie
    on its edge, the floating crane's never touch it."""
    import pandas as pd

    from orchestration.cli.main import main
    from orchestration.runs.reference import load_reference

    _, _, path = load_reference("block_turnover", fmu_dir, tmp_path / "system", log=lambda m: None)
    out = tmp_path / "run"
    assert main(["run", str(path), "--out", str(out), "--quiet", "--variables", *tv.RECORD]) == 0
    r = pd.read_csv(out / "results.csv")
    assert r["time"].iloc[-1] == pytest.approx(tv.PHASES["end"])
    summary = tv.summarize_turnover(r)
    for when in ("start", "end"):
        validation.record(f"block turnover, calm: the slings' vertical pull at rest ({when}) against the weight",
                          WEIGHT, WEIGHT * (1.0 + summary[f"balance_{when}"]), tolerance=0.005, unit="N",
                          source="Lee (2020) sec. 4.1 block, 348 t; issue 25 acceptance (0.5 %)")
    validation.record("block turnover, calm: turnover angle at the end (mean over the last 10 s)", 90.0,
                      summary["turn_angle_end_deg"], tolerance=1.0, tol_kind="abs", unit="deg",
                      source="Lee (2020) sec. 4.1; issue 25 acceptance (90 deg)")
    assert abs(summary["balance_start"]) < 0.005, summary
    assert abs(summary["balance_end"]) < 0.005, summary
    assert abs(summary["turn_angle_end_deg"] - 90.0) < 1.0, summary
    end = np.asarray(r["time"]) >= tv.PHASES["end"] - tv.REST_WINDOW
    assert np.abs(np.degrees(tv.turn_angle(r))[end] - 90.0).max() < 2.0          # swinging about 90 deg
    crawler = np.array([np.asarray(r[f"block.sling{j}.tension"])[end].max() for j in range(5, 11)])
    assert np.all(crawler == 0.0), crawler                    # the crawlers carry nothing at the end
    assert np.asarray(r["block.contact.penetration"]).max() <= PENETRATION_LIMIT
    nodes = np.array([np.asarray(r[f"block.sling{j}.contact_nodes"]).max() for j in range(1, 11)])
    assert list(nodes[:4]) == [0, 0, 0, 0] and list(nodes[4:]) == [1] * 6, nodes
    last = np.array([np.asarray(r[f"block.sling{j}.contact_nodes"])[-1] for j in range(5, 11)])
    assert list(last) == [1] * 6, last                        # slack, lying on the edge


#: The wave cases run to 34 s, 70 deg into the turn (the crawler slings bent over the edge from about
#: 12 s; the calm contact force peaks at 33 s): the comparison the docs make with the thesis, at
#: 45-52 s of CPU each; the whole runs are benchmarks/bench_block_turnover.py's.
SHORT_STOP = tv.SHORT_STOP


@pytest.mark.slow
def test_wave_cases_order_the_contact_forces_as_the_thesis(fmu_dir, tmp_path, validation):
    """Table 4-2's five regular beam seas on the barge: the largest contact force on the block grows
    with the wave height (cases 4 < 2 < 5: H 0.5, 1, 2 m at 10 s) and falls with the wave period
    (cases 1 > 2 > 3: T 8, 10, 12 s at 1 m), as Lee (2020) §4.1 reports (55, 33, 27, 24, 108 t).
    Measured to 34 s: 61.2, 32.3, 20.8, 21.2, 100.5 t.  The thesis' ranks are recorded; cases 3 and 4
    (27 against 24 t there, a longer period against a lower wave) swap places in ours (20.8 against
    21.2 t), a pair the acceptance does not order."""
    forces = {}
    for case in tv.WAVE_CASES:
        r = _run(fmu_dir, tmp_path / f"case{case}", SHORT_STOP, case)
        forces[case] = float(np.asarray(r["block.contact.force"]).max())
        assert np.asarray(r["block.contact.penetration"]).max() <= PENETRATION_LIMIT
    ours = sorted(tv.WAVE_CASES, key=lambda c: -forces[c])
    thesis = sorted(tv.WAVE_CASES, key=lambda c: -tv.THESIS_CONTACT_T[c])
    for case in tv.WAVE_CASES:
        validation.record(f"block turnover, wave case {case}: rank of the largest contact force (1 = largest; "
                          f"ours {forces[case] / 1e3 / tv.G:.2f} t to {SHORT_STOP:g} s, thesis "
                          f"{tv.THESIS_CONTACT_T[case]:g} t)", thesis.index(case) + 1, ours.index(case) + 1,
                          tolerance=0.0, tol_kind="abs", source="Lee (2020) sec. 4.1, Table 4-2 and text",
                          note="" if case in (1, 2, 5) else "cases 3 and 4 are not ordered by the acceptance")
    assert forces[4] < forces[2] < forces[5], forces          # grows with the wave height
    assert forces[1] > forces[2] > forces[3], forces          # falls with the wave period
