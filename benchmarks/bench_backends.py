"""Execution backends (issue 10): per-macro-step overhead with 5 FMUs, and what the process backend
gains with two compute-heavy FMUs on 2 cores. Figures go in docs/distributed.md and
benchmarks/data/backends.json; they are measured, never asserted by the tests.

    python benchmarks/bench_backends.py [--steps N] [--repeat R] [--skip-ray] [--part overhead|speedup|scaling]

1. **Overhead.** A chain of 5 plain-C oscillator FMUs (tests/models/c_fmu: microseconds per doStep, so
   the time per macro step is almost all master and transport) runs Jacobi fixed steps in-process,
   with the process backend (one worker process per FMU, the default), with the process backend's
   FMUs in 2 and in 1 worker processes (``workers=2``/``workers=1``: one frame per worker and
   macro step), with the ray backend (a local Ray instance, one actor per FMU) and with all five
   FMUs in one Ray actor group (one actor, one call per macro step); overhead per macro step =
   (backend - in-process) / steps, best of R runs (the backends take turns, run by run, so a
   burst of load from elsewhere does not fall on one backend only). The CPU time of the master per
   step is recorded too (less sensitive to other load on the machine than the wall time). Goals:
   process <= 100 us, Ray <= 1.5 ms.
2. **Speedup.** Two Payload FMUs (pythonfmu: Python code, one GIL per process) with a tiny RK4
   sub-step, a few ms of compute per macro step each, coupled through a connection; in-process they
   step one after the other, with the process backend in parallel on the 2 cores. Speedup =
   in-process / process wall time, each the best of R runs taken in turns, with the load average
   of every run recorded. Goal >= 1.6x.
3. **Scaling.** The process backend's overhead with 1 to 5 oscillator FMUs (a worker each), with the
   master's and the workers' CPU per step: flat per FMU while the master and the workers have cores
   of their own, growing once they share them.

The machine is shared: the load average is recorded with the figures.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from orchestration.master.algorithms.fixed import FixedStepAlgorithm  # noqa: E402
from orchestration.backends import BackendConfig, make_slave_factory  # noqa: E402
from orchestration.master.execution import Execution  # noqa: E402
from orchestration.system.model import Component, System  # noqa: E402


def oscillator_chain(fmu: Path, n: int) -> System:
    s = System("chain")
    for k in range(n):
        s.add_component(Component(f"o{k}", fmu))
    for k in range(1, n):
        s.connect(f"o{k - 1}.x", f"o{k}.F", factor=10.0)
    return s


def heavy_pair(payload: Path, substep: float) -> System:
    s = System("heavy")
    for name in ("a", "b"):
        s.add_component(Component(name, payload, {"mass": 1000.0, "hydro.volume": 0.5, "max_substep": substep}))
    s.connect("a.cg.position[2]", "b.cg.force[0]", factor=10.0)
    s.connect("b.cg.position[0]", "a.cg.force[0]", factor=-10.0)
    return s


CONFIGS = {"inprocess": BackendConfig("inprocess"), "process": BackendConfig("process"),
           "process-2": BackendConfig("process", workers=2), "process-1": BackendConfig("process", workers=1),
           "ray": BackendConfig("ray"), "ray-group": BackendConfig("ray", placement={"*": {"group": "all"}})}
# the Ray backend's other transports (ray_backend.TRANSPORTS; the default is direct): same configs,
# chosen through MARINE_COSIM_RAY_TRANSPORT while the run is set up
for _transport in ("calls", "compiled"):
    CONFIGS[f"ray-{_transport}"], CONFIGS[f"ray-group-{_transport}"] = CONFIGS["ray"], CONFIGS["ray-group"]
RAY_TRANSPORT_ENV = "MARINE_COSIM_RAY_TRANSPORT"


def _transport_of(backend: str) -> str | None:
    if not backend.startswith("ray"):
        return None
    tail = backend.rsplit("-", 1)[-1]
    return tail if tail in ("calls", "compiled") else "direct"


def _process_cpu(pid: int) -> float:
    """CPU seconds of a process (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def timed_run(system: System, backend: str, steps: int, h: float, cpu: list | None = None,
              busy: list | None = None) -> float:
    """Wall time of ``steps`` Jacobi macro steps (initialisation excluded); the master's CPU time
    is appended to ``cpu``, the worker processes' CPU time / wall time (cores kept busy) to ``busy``."""
    transport = _transport_of(backend)
    saved = os.environ.get(RAY_TRANSPORT_ENV)
    if transport:
        os.environ[RAY_TRANSPORT_ENV] = transport
    ex = Execution(system, FixedStepAlgorithm(method="jacobi"), slave_factory=make_slave_factory(CONFIGS[backend]))
    try:
        ex.initialize()
        if saved is None:
            os.environ.pop(RAY_TRANSPORT_ENV, None)
        else:
            os.environ[RAY_TRANSPORT_ENV] = saved
        ex.run(5 * h, h)                        # warm up: first calls register value references
        pids = [s.pid for s in ex.slaves if getattr(s, "pid", None)]
        w0 = sum(_process_cpu(pid) for pid in pids)
        c0, t0 = time.process_time(), time.perf_counter()
        ex.run(5 * h + steps * h, h)
        elapsed = time.perf_counter() - t0
        if cpu is not None:
            cpu.append(time.process_time() - c0)
        if busy is not None and pids:
            busy.append((sum(_process_cpu(pid) for pid in pids) - w0) / elapsed)
        return elapsed
    finally:
        ex.free()


def overhead_part(oscillator: Path, args) -> dict:
    n, h = 5, 1e-3
    backends = ["inprocess", "process", "process-2", "process-1"] + ([] if args.skip_ray else ["ray", "ray-group"])
    if not args.skip_ray:
        backends += [f"{b}-{t}" for t in args.ray_also for b in ("ray", "ray-group")]
    if args.only:
        backends = ["inprocess"] + [b for b in backends if b in args.only and b != "inprocess"]
    if "ray" in backends:
        from orchestration.backends import ray as ray_backend

        ray_backend.connect(None)
    walls: dict[str, list[float]] = {b: [] for b in backends}
    cpus: dict[str, list[float]] = {b: [] for b in backends}
    loads: dict[str, list[float]] = {b: [] for b in backends}
    steps_of = {b: args.steps if not b.startswith("ray") else max(200, args.steps // 4) for b in backends}
    for _ in range(args.repeat):                   # in turns: load from elsewhere spreads over all
        for backend in backends:
            walls[backend].append(timed_run(oscillator_chain(oscillator, n), backend, steps_of[backend], h,
                                            cpus[backend]))
            loads[backend].append(os.getloadavg()[0])
    per_step, cpu_step = {}, {}
    for backend in backends:
        steps = steps_of[backend]
        best = min(range(args.repeat), key=walls[backend].__getitem__)
        per_step[backend], cpu_step[backend] = walls[backend][best] / steps, min(cpus[backend]) / steps
        print(f"{n} oscillators, {backend:9s}: {per_step[backend] * 1e6:9.1f} us per macro step, master CPU "
              f"{cpu_step[backend] * 1e6:7.1f} us (best of {args.repeat}, {steps} steps, load at the best run "
              f"{loads[backend][best]:.2f})", flush=True)
    overhead = {b: (per_step[b] - per_step["inprocess"]) for b in backends if b != "inprocess"}
    for b, v in overhead.items():
        print(f"  overhead {b}: {v * 1e6:.1f} us per macro step with {n} FMUs")
    return {"fmus": n, "fmu": "tests/models/c_fmu oscillator (C)", "algorithm": "fixed Jacobi",
            "per_step_us": {b: round(v * 1e6, 1) for b, v in per_step.items()},
            "master_cpu_per_step_us": {b: round(v * 1e6, 1) for b, v in cpu_step.items()},
            "overhead_us": {b: round(v * 1e6, 1) for b, v in overhead.items()},
            "master_cpu_overhead_us": {b: round((cpu_step[b] - cpu_step["inprocess"]) * 1e6, 1) for b in overhead},
            "load_average_1min": {b: [round(x, 2) for x in v] for b, v in loads.items()},
            "ray_transport": "ray, ray-group: direct connection (default); -calls: ordinary actor calls; "
                             "-compiled: Ray compiled graphs",
            "goals_us": {"process": 100, "process-2": 100, "process-1": 100, "ray": 1500, "ray-group": 1500}}


def speedup_part(payload: Path, args) -> dict:
    substep, hh = args.substep, 0.01
    single = timed_run(heavy_pair(payload, substep), "inprocess", 20, hh) / 20 / 2
    print(f"heavy Payload step (max_substep {substep:g} s, macro step {hh:g} s): {single * 1e3:.2f} ms each",
          flush=True)
    runs: dict[str, list[float]] = {"inprocess": [], "process": []}
    loads: dict[str, list[float]] = {"inprocess": [], "process": []}
    busy: list[float] = []
    for _ in range(args.repeat):                   # in turns, the load of every run recorded
        for backend in runs:
            runs[backend].append(timed_run(heavy_pair(payload, substep), backend, args.heavy_steps, hh,
                                           busy=busy if backend == "process" else None))
            loads[backend].append(os.getloadavg()[0])
    times = {b: min(v) for b, v in runs.items()}
    for backend, t in times.items():
        best = runs[backend].index(t)
        print(f"2 heavy Payloads, {backend:9s}: {t / args.heavy_steps * 1e3:.2f} ms per macro step (best of "
              f"{args.repeat}; load at that run {loads[backend][best]:.2f}, over all runs "
              f"{min(loads[backend]):.2f}-{max(loads[backend]):.2f})", flush=True)
    speedup = times["inprocess"] / times["process"]
    print(f"  process-backend speedup on {os.cpu_count()} cores: {speedup:.2f}x (goal >= 1.6x); the workers kept "
          f"{max(busy):.2f} cores busy (2 = fully parallel)")
    return {"fmus": "2 x Payload", "max_substep_s": substep, "macro_step_s": hh,
            "compute_per_fmu_step_ms": round(single * 1e3, 2), "steps": args.heavy_steps, "repeat": args.repeat,
            "ms_per_step": {b: round(t / args.heavy_steps * 1e3, 2) for b, t in times.items()},
            "ms_per_step_all_runs": {b: [round(t / args.heavy_steps * 1e3, 2) for t in v] for b, v in runs.items()},
            "load_average_1min": {b: [round(x, 2) for x in v] for b, v in loads.items()},
            "speedup": round(speedup, 2), "goal": 1.6, "worker_cores_busy": round(max(busy), 2)}


def scaling_part(oscillator: Path, args) -> dict:
    """Overhead of the process backend (a worker per FMU) against the number of FMUs, with the
    master's and the workers' CPU per step: where the cost per FMU stops being flat, the machine
    has run out of cores for the master and the workers (docs/distributed.md)."""
    h, counts = 1e-3, list(range(1, 6))
    rows: dict[int, dict] = {}
    for n in counts:
        walls: dict[str, list[float]] = {"inprocess": [], "process": []}
        cpus: dict[str, list[float]] = {"inprocess": [], "process": []}
        busy: list[float] = []
        for _ in range(args.repeat):
            for backend in walls:
                walls[backend].append(timed_run(oscillator_chain(oscillator, n), backend, args.steps, h, cpus[backend],
                                                busy if backend == "process" else None))
        best = {b: min(v) / args.steps for b, v in walls.items()}
        k = walls["process"].index(min(walls["process"]))
        rows[n] = {"inprocess_us": round(best["inprocess"] * 1e6, 1), "process_us": round(best["process"] * 1e6, 1),
                   "overhead_us": round((best["process"] - best["inprocess"]) * 1e6, 1),
                   "master_cpu_us": round(cpus["process"][k] / args.steps * 1e6, 1),
                   "workers_cpu_us": round(busy[k] * walls["process"][k] / args.steps * 1e6, 1),
                   "load_average_1min": round(os.getloadavg()[0], 2)}
        r = rows[n]
        print(f"{n} FMU(s), a worker each: overhead {r['overhead_us']:6.1f} us per macro step "
              f"({r['overhead_us'] / n:5.1f} per FMU); CPU per step: master {r['master_cpu_us']:.1f} us, "
              f"workers {r['workers_cpu_us']:.1f} us (load {r['load_average_1min']:.2f})", flush=True)
    return {"backend": "process, one worker per FMU", "fmu": "tests/models/c_fmu oscillator (C)",
            "algorithm": "fixed Jacobi",
            "cores": os.cpu_count(), "steps": args.steps, "repeat": args.repeat, "by_fmus": rows}


def _carry_over(overhead: dict, previous: dict) -> None:
    """Carry the figures of backends not measured this time (--skip-ray, --only) over from the file
    being replaced, each with the date of its run and that run's in-process baseline (overheads are
    only comparable within one run)."""
    old = previous.get("overhead") or {}
    old_from = old.get("figures_from") or {}
    for backend in (old.get("per_step_us") or {}):
        if backend == "inprocess" or backend in overhead["per_step_us"]:
            continue
        for key in ("per_step_us", "master_cpu_per_step_us", "overhead_us", "master_cpu_overhead_us",
                    "load_average_1min"):
            value = (old.get(key) or {}).get(backend)
            if value is not None:
                overhead.setdefault(key, {})[backend] = value
        if backend.startswith("ray") and old.get("ray_figures_from"):
            when = old["ray_figures_from"]
        else:
            when = (old_from.get(backend) or {}).get("date") or previous.get("date")
        baseline = (old_from.get(backend) or {}).get("inprocess_us") or (old.get("per_step_us") or {}).get("inprocess")
        overhead.setdefault("figures_from", {})[backend] = {"date": when, "inprocess_us": baseline,
                                                            "note": "an earlier run, carried over"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000, help="macro steps for the overhead runs")
    parser.add_argument("--heavy-steps", type=int, default=200, help="macro steps for the speedup runs")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--substep", type=float, default=2.5e-4,
                        help="RK4 sub-step of the heavy Payloads [s] (smaller: more compute per macro step)")
    parser.add_argument("--skip-ray", action="store_true")
    parser.add_argument("--ray-also", default="calls", type=lambda v: [t for t in v.split(",") if t],
                        help="the Ray backend's other transports to measure beside the default direct one "
                             "(comma-separated: calls, compiled; '' for none)")
    parser.add_argument("--only", type=lambda v: v.split(","), default=None,
                        help="measure only these backends (comma-separated; in-process is always measured)")
    parser.add_argument("--part", choices=["overhead", "speedup", "scaling"],
                        help="only this part (the other part's figures stay in --out)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "data" / "backends.json")
    args = parser.parse_args(argv)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import build_fmus
    from tests.models.c_fmu.build import build_oscillator_fmu

    previous: dict = json.loads(args.out.read_text()) if args.out.is_file() else {}
    report: dict = dict(previous) if args.part else {}
    report.update({"date": datetime.date.today().isoformat(), "python": platform.python_version(),
                   "cpus": os.cpu_count(), "platform": platform.platform()})
    with tempfile.TemporaryDirectory() as tmp:
        for part in ("overhead", "speedup", "scaling"):
            if args.part not in (None, part):
                continue
            report[f"load_average_before_{part}"] = os.getloadavg()
            if part == "overhead":
                report[part] = overhead_part(build_oscillator_fmu(Path(tmp)), args)
                if args.skip_ray or args.only:
                    _carry_over(report[part], previous)
            elif part == "speedup":
                report[part] = speedup_part(build_fmus.build_all(Path(tmp) / "fmus", ["Payload"])[0], args)
            else:
                report[part] = scaling_part(build_oscillator_fmu(Path(tmp) / "scaling"), args)
            report[f"load_average_after_{part}"] = os.getloadavg()
    for stale in ("load_average_before", "load_average_after"):
        report.pop(stale, None)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
