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
  100-131 s, and without, 136-175 s, both against the uncompensated one) and the histories of the
  tension through the splash zone and of the payload depth over 100-175 s (RMS of the difference,
  interpolated onto the reference's points, over the reference's standard deviation);
* deck landing: touchdown time and velocity, peak contact force, and the payload's heave after
  touchdown (RMS of the height difference over 25-45 s).

"error" is the largest error of a scenario's peak figures: the two splash-zone tension peaks (the
goal: within 1 %) for the lift, the touchdown velocity and the contact-force peak for the landing;
the other figures are in the tables beside it.  Cost: macro steps, rejected
steps, CPU time of the run (the machine is shared by other jobs: CPU time is what the run itself
spent; wall time is recorded too).  A run that fails (an FMU diverges) is recorded with its message.

``--shipped`` runs every shipped scenario (offshore lift and its compliant-cable and swapped-ship
variants, deck landing, moored barge, ship + heavy crane, hook release, crane tip compensation on
both cranes, both motion platforms; ``--scenarios`` picks some) as ``marine-cosim run FILE
--scenario EVENTS --algorithm A`` does, with fixed, ecco and error-control at their defaults, and a
fixed-step reference at a quarter of the file's step: steps, CPU and wall time, and the error of
each scenario's key histories (RMS of the difference in % of the reference's standard deviation).
``--algorithms`` picks runs (reference, fixed, ecco, error-control, error-control-jacobi: error
control with ``--method jacobi``, error-control-hold: error control without rollback, its steps from
the hold error); ``--deadline 2026-11-26T02:50`` (UTC) stops runs there and
records how far they got; several processes may share the results file (merged under a lock).

Results: the runs' histories are kept in results/benchmarks/ (not committed: a cache the errors are
computed from, resumed where a run stopped); benchmarks/data/step_control_benchmark.json (``--shipped``:
step_control_shipped.json) holds the figures only (steps, CPU, errors), which ``--report-only`` reads;
markdown tables on stdout (docs/algorithms_benchmark.md quotes them).
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
SHIPPED_OUT = ROOT / "benchmarks" / "data" / "step_control_shipped.json"
#: the histories behind the figures: megabytes per scenario, so outside the repository
CACHE = ROOT / "results" / "benchmarks"
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
        # heave: against the uncompensated heave (the compensated one is a few cm, mostly the residual
        # of the compensation, where a relative error says little)
        scale = sr["heave"]["without_ahc"]["payload_heave_std_m"]
        for label in ("with_ahc", "without_ahc"):
            out[f"heave_{label}_%"] = 100.0 * (s["heave"][label]["payload_heave_std_m"] -
                                               sr["heave"][label]["payload_heave_std_m"]) / scale
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


PEAKS = {"offshore_lift": ("tension_peak_max_%", "tension_peak_min_%"),
         "deck_landing": ("touchdown_velocity_%", "contact_peak_%")}


def error_of(name: str, f: dict[str, float]) -> float:
    return max(abs(f[k]) for k in PEAKS[name])


def run_all(names, selected, out: Path, log=print) -> dict:
    """Run what is not yet in the cache (CACHE / out.name), then write the digest to ``out``."""
    cache = CACHE / out.name
    results = _load(cache)
    for name in names:
        res = results.setdefault(name, {})
        if "reference" not in res:
            spec = {"algorithm": "fixed", "step": REFERENCE_FACTOR * BASE[name], "options": {}}
            log(f"[{name}] reference {spec['step']:g} s ...")
            res["reference"] = {"spec": spec, **simulate_run(name, spec, log)}
            _save(cache, results)
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
            _save(cache, results)
    merged = _load(out)
    merged.update(digest(results))
    _save(out, merged)
    return merged


def digest(results: dict) -> dict:
    """The figures of every run without its histories (what benchmarks/data keeps)."""
    out: dict = {}
    for name, res in results.items():
        ref = res.get("reference")
        if name not in BASE or not ref or "failed" in ref:
            continue
        entry = out.setdefault(name, {})
        for label, r in res.items():
            kept = {k: v for k, v in r.items() if k not in ("time", "series")}
            if label != "reference" and "failed" not in r:
                kept["figures"] = figures(name, r, ref)
                kept["error"] = error_of(name, kept["figures"])
            entry[label] = kept
    return out


def report(results: dict) -> str:
    """Markdown tables of a digest (:func:`digest`)."""
    lines = []
    for name, res in results.items():
        ref = res.get("reference")
        if name not in BASE or not ref:
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
            f = r["figures"]
            keys = keys or [k for k in f]
            cells = " | ".join(f"{f[k]:+.2f}" for k in keys)
            rows.append(f"| {label} | {r['steps']} | {r.get('rejected', 0)} | {r['cpu_s']:.1f} "
                        f"({r['cpu_s'] / base_cpu:.2f}x) | {cells} | **{r['error']:.2f}** |")
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


def _load(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


def _save(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)


# ============================================================================ every shipped scenario

#: scenario -> (system file, events file, the variables whose histories measure its error)
SHIPPED = {
    "offshore_lift": ("offshore_lift/offshore_lift.ssd", "offshore_lift/events.yaml",
                      ["cable.winch.tension", "payload.position[2]"]),
    "deck_landing": ("deck_landing/deck_landing.ssd", "deck_landing/events.yaml",
                     ["payload.position[2]", "contact.pair12.normal_force"]),
    "moored_barge": ("moored_barge/moored_barge.ssd", "moored_barge/events.yaml",
                     [f"line{k}.end_b.tension" for k in range(1, 5)] + ["barge.position[0]", "barge.position[1]"]),
    "ship_heavy_crane": ("ship_heavy_crane/ship_heavy_crane.ssd", "ship_heavy_crane/lift.yaml",
                         ["crane.attachment2.position[2]", "ship.euler[0]"]),
    "hook_release": ("hook_release/hook_release.ssd", "hook_release/events.yaml",
                     ["payload.position[2]", "payload.velocity[2]"]),
    "offshore_lift_compliant_cable": ("offshore_lift/offshore_lift_compliant_cable.ssd", "offshore_lift/events.yaml",
                                      ["cable.forceB[2]", "payload.position[2]"]),
    "offshore_lift_third_party_ship": ("offshore_lift/offshore_lift_third_party_ship.ssd",
                                       "offshore_lift/events.yaml", ["cable.winch.tension", "payload.position[2]"]),
    "offshore_lift_6dof_ship": ("offshore_lift/offshore_lift_6dof_ship.ssd", "offshore_lift/events.yaml",
                                ["cable.winch.tension", "payload.position[2]"]),
    "offshore_lift_manoeuvring_ship": ("offshore_lift/offshore_lift_manoeuvring_ship.ssd",
                                       "offshore_lift/events.yaml", ["cable.winch.tension", "payload.position[2]"]),
    "crane_tip_compensation": ("crane_tip_compensation/crane_tip_compensation.ssd",
                               "crane_tip_compensation/events.yaml",
                               ["cable.winch.tension", "payload.position[2]", "crane.attachment2.position[2]"]),
    "ship_heavy_crane_compensated": ("crane_tip_compensation/ship_heavy_crane_compensated.ssd",
                                     "crane_tip_compensation/events_heavy.yaml",
                                     ["crane.attachment1.position[2]", "ship.euler[0]"]),
    "motion_platform_pid": ("motion_platform/motion_platform_pid.ssd", "motion_platform/events_pid.yaml",
                            ["platform.platform.euler[0]", "platform.platform.euler[1]", "platform.leg1.force"]),
    "motion_platform_nmpc": ("motion_platform/motion_platform_nmpc.ssd", "motion_platform/events_nmpc.yaml",
                             ["platform.platform.euler[0]", "platform.platform.euler[1]", "platform.leg1.force"]),
    "block_turnover": ("block_turnover/block_turnover.ssd", "block_turnover/events.yaml",
                       ["block.sling1.tension", "block.sling5.tension", "block.contact.force",
                        "block.quaternion[2]"]),
}
ALGORITHMS = ("fixed", "ecco", "error-control")
#: further runs by label: (algorithm, options) -- error control with Jacobi where the file sets
#: Gauss-Seidel (``marine-cosim run FILE --algorithm error-control --method jacobi``; why:
#: orchestration/master/algorithms/error_control.py, "Gauss-Seidel and an FMU that carries its inputs")
VARIANTS = {"error-control-jacobi": ("error-control", {"method": "jacobi"}),
            # steps from the hold error, no rollback (what error control does where an FMU has no state)
            "error-control-hold": ("error-control", {"rollback": "never"})}


class DeadlineReached(Exception):
    """A run stopped at the wall-clock deadline (``--deadline``): recorded with how far it got."""


def shipped_run(name: str, algorithm: str, step_factor: float = 1.0, deadline: float | None = None,
                log=print, options: dict | None = None) -> dict:
    """A shipped scenario as ``marine-cosim run FILE --scenario EVENTS --algorithm A`` runs it (defaults).

    ``deadline`` (seconds since the epoch): the run stops there and is recorded as stopped, with the
    simulated time it reached and the CPU time spent so far (progress is logged every minute)."""
    from orchestration.system.files import load_system

    ssd, events, variables = SHIPPED[name]
    path = ROOT / "scenarios" / ssd
    step = load_system(path).base_step * step_factor
    settings = RunSettings(system=str(path), scenario=str(ROOT / "scenarios" / events), algorithm=algorithm,
                           step=step, variables=variables, files=False, memory=True, options=dict(options or {}))
    cpu0, wall0 = time.process_time(), time.time()
    state = {"t": math.nan, "logged": wall0}

    def progress(t: float, stop: float) -> None:
        state["t"] = t
        now = time.time()
        if now - state["logged"] > 60.0:
            state["logged"] = now
            log(f"    [{name} {algorithm}] t = {t:.3f} of {stop:g} s, cpu {time.process_time() - cpu0:.0f} s")
        if deadline is not None and now > deadline:
            raise DeadlineReached(f"stopped at the deadline at t = {t:.3f} of {stop:g} s after "
                                  f"{time.process_time() - cpu0:.0f} s CPU")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            report = run(settings, log=lambda _msg: None, progress=progress)
        except Exception as exc:
            return {"failed": f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}",
                    "reached": state["t"], "cpu_s": time.process_time() - cpu0, "wall_s": time.time() - wall0,
                    "warnings": [str(w.message)[:300] for w in caught]}
    r = report.results
    return {"time": r.time.tolist(), "series": {k: r[k].tolist() for k in variables}, "steps": report.steps,
            "end": report.time, "cpu_s": report.cpu, "wall_s": report.wall,
            "rejected": (report.algorithm or {}).get("rejected", 0),
            "warnings": [str(w.message)[:300] for w in caught]}


def history_error(run: dict, ref: dict) -> float:
    """The largest RMS difference of the scenario's variables, in % of the reference's standard deviation."""
    t_ref = np.asarray(ref["time"])
    worst = 0.0
    for key, y_ref in ref["series"].items():
        y = _interp(t_ref, run["time"], run["series"][key])
        worst = max(worst, 100.0 * float(np.sqrt(np.mean((y - np.asarray(y_ref)) ** 2)) /
                                         max(np.std(y_ref), 1e-12)))
    return worst


def _store(out: Path, name: str, label: str, record: dict) -> None:
    """Merge one run into the cache (CACHE / out.name) under a lock (several benchmark processes may
    share it), then its figures into the digest ``out``."""
    import fcntl
    import tempfile

    cache = CACHE / out.name
    with open(Path(tempfile.gettempdir()) / f"{out.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        results = _load(cache)
        results.setdefault("shipped", {}).setdefault(name, {})[label] = record
        _save(cache, results)
        merged = _load(out)
        merged.setdefault("shipped", {})[name] = shipped_digest(results["shipped"][name])
        _save(out, merged)


def shipped_digest(entry: dict) -> dict:
    """One scenario's runs without their histories, each finished run with its error (% ; history_error)."""
    ref = entry.get("reference")
    out = {}
    for label, r in entry.items():
        kept = {k: v for k, v in r.items() if k not in ("time", "series")}
        kept["warnings"] = kept.get("warnings", [])[:3]
        if "failed" not in r and ref and "failed" not in ref:
            kept["error_%"] = history_error(r, ref) if label != "reference" else 0.0
        out[label] = kept
    return out


def run_shipped(out: Path, names=tuple(SHIPPED), algorithms=ALGORITHMS, deadline: float | None = None,
                redo: bool = False, log=print) -> None:
    for name in names:
        for label, algorithm, factor, options in (("reference", "fixed", REFERENCE_FACTOR, {}),
                                                  *((a, a, 1.0, {}) for a in ALGORITHMS),
                                                  *((k, a, 1.0, o) for k, (a, o) in VARIANTS.items())):
            if label not in algorithms:
                continue
            done = _load(CACHE / out.name).get("shipped", {}).get(name, {}).get(label)
            if done is not None and "failed" not in done and not redo:
                continue
            log(f"[{name}] {label} ...")
            r = shipped_run(name, algorithm, factor, deadline=deadline, log=log, options=options)
            _store(out, name, label, r)
            if "failed" in r:
                log(f"    failed: {r['failed']}")
            else:
                log(f"    {r['steps']} steps to {r['end']:g} s, cpu {r['cpu_s']:.1f} s")


def shipped_report(results: dict) -> str:
    """The table of a shipped digest (:func:`shipped_digest`)."""
    lines = ["| scenario | algorithm | reached | macro steps | rejected | CPU s (x fixed) | wall s | error % |",
             "|---|---|---|---|---|---|---|---|"]
    for name, entry in results.get("shipped", {}).items():
        fixed = entry.get("fixed", {})
        for algorithm in (*ALGORITHMS, *VARIANTS):
            r = entry.get(algorithm)
            if r is None:
                continue
            if "failed" in r:
                if "stopped" in r["failed"][:40]:      # the deadline, or by hand: how far it got
                    lines.append(f"| {name} | {algorithm} | unfinished: {r['reached']:.1f} s | | | "
                                 f"{r.get('cpu_s', math.nan):.0f} | | {r['failed'][:160]} |")
                    continue
                lines.append(f"| {name} | {algorithm} | failed: {r['failed'][:160]} | | | | | |")
                continue
            ratio = r["cpu_s"] / fixed["cpu_s"] if fixed.get("cpu_s") else math.nan
            err = r.get("error_%", math.nan)
            lines.append(f"| {name} | {algorithm} | {r['end']:g} s | {r['steps']} | {r['rejected']} | "
                         f"{r['cpu_s']:.1f} ({ratio:.2f}x) | {r['wall_s']:.1f} | {err:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", default="",
                        help=f"comma-separated (default: {','.join(SCENARIOS)}; with --shipped every shipped one)")
    parser.add_argument("--runs", default="", help="labels to run (default: all not yet stored)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--shipped", action="store_true",
                        help="every shipped scenario with fixed, ecco and error-control at their defaults instead")
    parser.add_argument("--algorithms", default="reference," + ",".join(ALGORITHMS),
                        help="with --shipped: which runs (reference, fixed, ecco, error-control)")
    parser.add_argument("--deadline", default="",
                        help="with --shipped: stop runs at this UTC time (ISO, e.g. 2026-11-26T03:00) and record "
                             "how far they got")
    parser.add_argument("--redo", action="store_true", help="with --shipped: run again what is stored")
    args = parser.parse_args(argv)
    names = [n for n in args.scenarios.split(",") if n]
    if args.shipped:
        args.out = SHIPPED_OUT if args.out == DEFAULT_OUT else args.out
        if not args.report_only:
            import datetime

            deadline = (datetime.datetime.fromisoformat(args.deadline).replace(tzinfo=datetime.timezone.utc)
                        .timestamp() if args.deadline else None)
            run_shipped(args.out, [n for n in names if n in SHIPPED] if names else tuple(SHIPPED),
                        algorithms=args.algorithms.split(","), deadline=deadline,
                        redo=args.redo, log=lambda m: print(m, flush=True))
        print(shipped_report(_load(args.out)))
        return 0
    names = names or list(SCENARIOS)
    if not args.report_only:
        run_all(names, set(filter(None, args.runs.split(","))), args.out)
    results = _load(args.out)
    print(report({n: results[n] for n in names if n in results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
