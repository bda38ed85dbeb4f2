"""Block turnover (scenarios/block_turnover, Lee 2020 §4.1): the five wave cases of Table 4-2, each the
whole turnover, and their largest contact forces against the thesis' (docs/block_turnover.md).

    python benchmarks/bench_block_turnover.py                  # calm + cases 1-5, 2 worker processes
    python benchmarks/bench_block_turnover.py --cases 2 5      # some cases only ("0" is calm water)
    python benchmarks/bench_block_turnover.py --jobs 1         # one after the other
    python benchmarks/bench_block_turnover.py --crawler-end-offset 12   # the crawler hooks out of the
                                                               # swinging block's reach (a variant plan)

Each case is the committed system and events files with the barge's sea set to the case's regular
beam waves (orchestration.runs.reference.turnover.wave_parameters).  Writes
benchmarks/data/block_turnover_waves.json (key figures per case, CPU seconds per run) and
block_turnover_waves.png (the contact force of every case over time).  Not pass/fail: the
figures go to docs/block_turnover.md; tests/runs/test_block_turnover.py checks the ordering on
shortened runs.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from orchestration.runs.reference import turnover as tv  # noqa: E402

OUT = ROOT / "benchmarks" / "data"


def run_case(case: int, stop: float | None = None, crawler_end_offset: float | None = None) -> dict:
    """One turnover (case 0: calm water); key figures and the contact-force history.
    ``crawler_end_offset``: the plan's CRAWLER_END_OFFSET instead of the committed one (the events
    are generated for it; the system file does not depend on it)."""
    from orchestration.runs.reference import load_reference
    from orchestration.runs.run import RunSettings, run

    variant = "" if crawler_end_offset is None else f"_offset{crawler_end_offset:g}"
    out = ROOT / "results" / f"block_turnover_waves{variant}" / f"case{case}"      # run files (not committed)
    _, _, path = load_reference("block_turnover", None, out, log=lambda m: None)
    events = tv.FOLDER / "events.yaml"
    if crawler_end_offset is not None:
        import yaml

        tv.CRAWLER_END_OFFSET = crawler_end_offset
        events = out / "events.yaml"
        events.write_text(yaml.safe_dump(tv.block_turnover_events(), sort_keys=False))
    params = {f"barge.{k}": v for k, v in tv.wave_parameters(case or None).items()}
    cpu = time.process_time()
    settings = RunSettings(system=str(path), stop=stop, scenario=str(events), variables=tv.RECORD,
                           memory=True, files=False, parameters=params)
    r = run(settings, log=lambda m: None).results
    figures = tv.summarize_turnover(r)
    figures["cpu_s"] = time.process_time() - cpu
    figures["case"] = case
    figures["crawler_end_offset_m"] = tv.CRAWLER_END_OFFSET
    figures["wave"] = tv.WAVE_CASES.get(case)
    figures["thesis_contact_force_max_t"] = tv.THESIS_CONTACT_T.get(case)
    t = np.asarray(r.time)
    force_t = np.asarray(r["block.contact.force"]) / 1e3 / tv.G
    # by phase: the turn (both ends held), the crawlers lowering, the block on the floating crane alone
    phases = {"turn": (0.0, tv.PHASES["turn"][1]), "lower": (tv.PHASES["turn"][1], tv.PHASES["lower"][1]),
              "hold": (tv.PHASES["lower"][1], tv.PHASES["end"])}
    masks = {name: (t >= a) & (t < b + 1e-9) for name, (a, b) in phases.items()}
    figures["contact_force_max_by_phase_t"] = {name: float(force_t[m].max()) for name, m in masks.items() if m.any()}
    keep = slice(None, None, 5)
    figures["history"] = {"time": t[keep].tolist(),
                          "contact_force_t": (np.asarray(r["block.contact.force"])[keep] / 1e3 / tv.G).tolist(),
                          "turn_angle_deg": np.degrees(tv.turn_angle(r))[keep].tolist()}
    (out / "figures.json").write_text(json.dumps(figures, default=float) + "\n")     # as soon as it is done
    return figures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, nargs="*", default=[0, 1, 2, 3, 4, 5])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--stop", type=float, default=None, help="shorten every run (s)")
    parser.add_argument("--crawler-end-offset", type=float, default=None,
                        help=f"the crawler hooks' end beyond their lugs (m; the plan's {tv.CRAWLER_END_OFFSET:g})")
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    n = len(args.cases)
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(run_case, args.cases, [args.stop] * n, [args.crawler_end_offset] * n))
    table = {str(r["case"]): {k: v for k, v in r.items() if k != "history"} for r in results}
    name = "block_turnover_waves" + ("" if args.crawler_end_offset is None else f"_offset{args.crawler_end_offset:g}")
    (OUT / f"{name}.json").write_text(json.dumps(table, indent=2, default=float) + "\n")
    print(f"{'case':>4} {'T [s]':>6} {'H [m]':>6} {'max contact [t]':>16} {'thesis [t]':>11} {'angle [deg]':>12} "
          f"{'pen [m]':>9} {'cpu [s]':>8}")
    for r in results:
        w = r["wave"] or {"period": float("nan"), "height": 0.0}
        thesis = r["thesis_contact_force_max_t"]
        print(f"{r['case']:>4} {w['period']:>6.1f} {w['height']:>6.1f} {r['contact_force_max_t']:>16.2f} "
              f"{'' if thesis is None else f'{thesis:.0f}':>11} {r['turn_angle_end_deg']:>12.2f} "
              f"{r['penetration_max_m']:>9.1e} {r['cpu_s']:>8.1f}")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4.5))
    for r in results:
        h = r["history"]
        w = r["wave"]
        label = "calm" if not r["case"] else f"case {r['case']}: T {w['period']:g} s, H {w['height']:g} m"
        ax.plot(h["time"], h["contact_force_t"], label=label, lw=1)
    ax.set_xlabel("time [s]")
    ax.set_ylabel("largest contact node force on the block [t]")
    ax.set_title("Block turnover in the wave cases of Lee (2020) Table 4-2")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(OUT / f"{name}.png", dpi=110)
    print(f"written: {OUT / (name + '.json')}, {OUT / (name + '.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
