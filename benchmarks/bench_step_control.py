"""Step-size control on the real scenarios (issue 20): accuracy against cost for fixed step, ECCO and
error control, with and without input extrapolation, on the offshore lift and the deck landing.

    python benchmarks/bench_step_control.py                          # both scenarios, every run (hours)
    python benchmarks/bench_step_control.py --scenarios offshore_lift --runs fixed-0.025,ecco-0.1
    python benchmarks/bench_step_control.py --report-only            # tables from the stored results

Each scenario runs in full (its system file and events, in-process) as ``marine-cosim run`` runs it,
recording the variables of its summary (orchestration/runs/reference/summaries.py).  Reference:
fixed step at a quarter of the file's step (0.00625 s for the lift; 0.003125 s base for the deck
landing).  The figures users read, against the reference's:

* offshore lift: the splash-zone wire-tension peaks (largest and smallest tension at the winch in
  the 25 s after water entry), the payload heave (its standard deviation with heave compensation,
  100-131 s, and without, 136-175 s) and the history of the tension through the splash zone (RMS of
  the difference, interpolated onto the reference's points, over the reference's standard deviation);
* deck landing: touchdown time and velocity, peak contact force, and the payload's heave after
  touchdown (RMS of the height difference over 25-45 s).

"error" is the largest relative error of a scenario's figures (the tension peaks, heave and touchdown
velocity in %; histories in % of the reference's standard deviation).  Cost: macro steps, rejected
steps, CPU time of the run (the machine is shared by other jobs: CPU time is what the run itself
spent; wall time is recorded too).  A run that fails (an FMU diverges) is recorded with its message.

Results: benchmarks/data/step_control_benchmark.json; markdown tables on stdout
(docs/algorithms_benchmark.md quotes them).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
import traceback
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from orchestration.runs.reference import RECORD, events_file, summarize, system_file  # noqa: E402
from orchestration.runs.run import RunSettings, run  # noqa: E402

DEFAULT_OUT = ROOT / "benchmarks" / "data" / "step_control_benchmark.json"
SCENARIOS = ("offshore_lift", "deck_landing")
#: the file's base step (the landing: its base step; the rest steps at twice it)
BASE = {"offshore_lift": 0.025, "deck_landing": 0.0125}
REFERENCE_FACTOR = 0.25


def runs(name: str) -> dict[str, dict]:
    """label -> run settings (algorithm, options, step)."""
    h = BASE[name]
    out: dict[str, dict] = {}
    for factor in (1.0, 0.5, 1.6):
        for x in (0, 1):
            out[f"fixed-{factor * h:g}" + ("-x1" if x else "")] = {"algorithm": "fixed", "step": factor * h,
                                                                 "options": {"extrapolation": x}}
    for tol in (0.3, 0.1, 0.03):
        for x in (0, 1):
            out[f"ecco-{tol:g}" + ("-x1" if x else "")] = {"algorithm": "ecco", "step": h,
                                                           "options": {"rtol": tol, "extrapolation": x}}
    for tol in (0.2, 0.1, 0.05):
        for x in (0, 1):
            out[f"error-control-{tol:g}" + ("-x1" if x else "")] = {
                "algorithm": "error-control", "step": h, "options": {"rtol": tol, "extrapolation": x}}
    # larger steps than the file's where the error (or the energy residual) allows them
    for tol in (0.1,):
        out[f"ecco-{tol:g}-max2"] = {"algorithm": "ecco", "step": h,
                                     "options": {"rtol": tol, "max_step": 2 * h * (2 if name == "deck_landing" else 1)}}
        out[f"error-control-{tol:g}-max4"] = {
            "algorithm": "error-control", "step": h,
            "options": {"rtol": tol, "max_step": 4 * h * (2 if name == "deck_landing" else 1)}}
    return out


def simulate_run(name: str, spec: dict, log=print) -> dict:
    """One run of scenario ``name``: its figures, the histories the errors need, the cost."""
    settings = RunSettings(system=str(system_file(name)), scenario=str(events_file(name)), step=spec["step"],
                           algorithm=spec["algorithm"], options=dict(spec.get("options", {})),
                           variables=list(RECORD[name]), files=False, memory=True)
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            report = run(settings, log=lambda _msg: None)
        except Exception as exc:                   # an FMU that diverged: recorded, not fatal
            return {"failed": f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}",
                    "wall_s": time.perf_counter() - t0}
    r = report.results
    keep = {"offshore_lift": ["cable.winch.tension", "payload.position[2]"],
            "deck_landing": ["payload.position[2]", "payload.velocity[2]", "contact.pair12.normal_force"]}[name]
    algorithm = dict(report.algorithm or {})
    return {"summary": summarize(name, r), "time": r.time.tolist(), "series": {k: r[k].tolist() for k in keep},
            "steps": report.steps, "cpu_s": report.cpu, "wall_s": report.wall,
            "rejected": algorithm.get("rejected", 0), "warnings": [str(w.message)[:300] for w in caught
                                                                    if "StepSize" in type(w.message).__name__]}


def _interp(t_ref, t, y):
    return np.interp(np.asarray(t_ref), np.asarray(t), np.asarray(y))


def _rel(x: float, ref: float) -> float:
    return 100.0 * (x - ref) / abs(ref) if ref else math.nan


def figures(name: str, run: dict, ref: dict) -> dict[str, float]:
    """Errors of a run's figures against the reference's (% ; module docstring)."""
    out: dict[str, float] = {}
    t_ref = np.asarray(ref["time"])
    if name == "offshore_lift":
        s, sr = run["summary"]["lift"], ref["summary"]["lift"]
        out["tension_peak_max_%"] = _rel(s["splash_zone_tension_max_kN"], sr["splash_zone_tension_max_kN"])
        out["tension_peak_min_%"] = _rel(s["splash_zone_tension_min_kN"], sr["splash_zone_tension_min_kN"])
        for label in ("with_ahc", "without_ahc"):
            out[f"heave_{label}_%"] = _rel(s["heave"][label]["payload_heave_std_m"],
                                           sr["heave"][label]["payload_heave_std_m"])
        a = sr["water_entry_s"]
        win = (t_ref >= a) & (t_ref <= a + 25.0)
        T_ref = np.asarray(ref["series"]["cable.winch.tension"])[win]
        T = _interp(t_ref[win], run["time"], run["series"]["cable.winch.tension"])
        out["tension_history_%"] = 100.0 * float(np.sqrt(np.mean((T - T_ref) ** 2)) / np.std(T_ref))
        deep = (t_ref >= 100.0) & (t_ref <= 175.0)
        z_ref = np.asarray(ref["series"]["payload.position[2]"])[deep]
        z = _interp(t_ref[deep], run["time"], run["series"]["payload.position[2]"])
        out["heave_history_%"] = 100.0 * float(np.sqrt(np.mean((z - z_ref) ** 2)) / np.std(z_ref))
    else:
        s, sr = run["summary"]["landing"], ref["summary"]["landing"]
        out["touchdown_velocity_%"] = _rel(s["touchdown_velocity_m_s"], sr["touchdown_velocity_m_s"])
        out["contact_peak_%"] = _rel(s["contact_force_peak_kN"], sr["contact_force_peak_kN"])
        out["touchdown_time_ms"] = 1e3 * (s["touchdown_s"] - sr["touchdown_s"])
        late = (t_ref >= 25.0) & (t_ref <= 45.0)
        z_ref = np.asarray(ref["series"]["payload.position[2]"])[late]
        z = _interp(t_ref[late], run["time"], run["series"]["payload.position[2]"])
        out["heave_history_%"] = 100.0 * float(np.sqrt(np.mean((z - z_ref) ** 2)) / max(np.std(z_ref), 1e-9))
    return out


def error_of(name: str, f: dict[str, float]) -> float:
    keys = [k for k in f if k.endswith("%")]
    return max(abs(f[k]) for k in keys)


def run_all(names, selected, out: Path, log=print) -> dict:
    results = json.loads(out.read_text()) if out.is_file() else {}
    for name in names:
        res = results.setdefault(name, {})
        if "reference" not in res:
            spec = {"algorithm": "fixed", "step": REFERENCE_FACTOR * BASE[name], "options": {}}
            log(f"[{name}] reference {spec['step']:g} s ...")
            res["reference"] = {"spec": spec, **simulate_run(name, spec, log)}
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(results))
        for label, spec in runs(name).items():
            if selected and label not in selected:
                continue
            if label in res and not res[label].get("failed", "").startswith("KeyboardInterrupt"):
                continue
            log(f"[{name}] {label} ...")
            try:
                res[label] = {"spec": spec, **simulate_run(name, spec, log)}
            except Exception:
                res[label] = {"spec": spec, "failed": traceback.format_exc().splitlines()[-1]}
            r = res[label]
            if "failed" in r:
                log(f"    failed: {r['failed']}")
            else:
                f = figures(name, r, res["reference"])
                log(f"    {r['steps']} steps, cpu {r['cpu_s']:.1f} s, error {error_of(name, f):.2f} % {f}")
            out.write_text(json.dumps(results))
    return results


def report(results: dict) -> str:
    lines = []
    for name, res in results.items():
        ref = res.get("reference")
        if not ref or "failed" in ref:
            continue
        base = res.get(f"fixed-{BASE[name]:g}")
        base_cpu = base["cpu_s"] if base and "failed" not in base else math.nan
        keys = None
        rows = []
        for label, r in res.items():
            if label == "reference":
                continue
            if "failed" in r:
                rows.append(f"| {label} | – | – | – | failed: {r['failed'][:120]} |")
                continue
            f = figures(name, r, ref)
            keys = keys or [k for k in f]
            cells = " | ".join(f"{f[k]:+.2f}" for k in keys)
            rows.append(f"| {label} | {r['steps']} | {r.get('rejected', 0)} | {r['cpu_s']:.1f} "
                        f"({r['cpu_s'] / base_cpu:.2f}x) | {cells} | **{error_of(name, f):.2f}** |")
        if keys is None:
            continue
        lines.append(f"### {name}\n")
        lines.append(f"Reference: fixed step {ref['spec']['step']:g} s, {ref['steps']} steps, "
                     f"CPU {ref['cpu_s']:.1f} s.\n")
        lines.append("| run | macro steps | rejected | CPU s (x fixed at the file's step) | "
                     + " | ".join(keys) + " | error % |")
        lines.append("|---" * (5 + len(keys)) + "|")
        lines.extend(r.replace("| failed", "| – " * (len(keys) - 1) + "| failed") if "failed" in r else r
                     for r in rows)
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--runs", default="", help="labels to run (default: all not yet stored)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args(argv)
    names = [n for n in args.scenarios.split(",") if n]
    if not args.report_only:
        run_all(names, set(filter(None, args.runs.split(","))), args.out)
    results = json.loads(args.out.read_text()) if args.out.is_file() else {}
    print(report({n: results[n] for n in names if n in results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
