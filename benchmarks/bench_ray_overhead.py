"""Ray backend per-macro-step overhead with 5 FMUs, with and without Ray Compiled Graphs
(orchestration/ray_cgraph.py): the ray configurations of bench_backends.py's overhead part, plus
the master's CPU time and how many cores the actor processes kept busy (graph actors busy-wait).

    python benchmarks/bench_ray_overhead.py [--steps N] [--repeat R] [--configs inprocess,ray,...]

Configurations: ``inprocess`` (the reference), ``ray`` (one actor per FMU, ordinary calls),
``ray-cg`` (one actor per FMU, compiled graphs), ``ray-group`` (all five in one actor group,
ordinary calls), ``ray-group-cg`` (the group through a compiled graph). Five plain-C oscillator
FMUs (tests/c_fmu: microseconds per doStep) in a chain, Jacobi fixed steps; overhead per macro
step = (configuration - in-process) / steps, best of R runs. A local Ray instance with 2 CPUs is
started and shut down by the script. The machine may be shared: the load average is printed with
every figure, and the master CPU per step is the steadier figure.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

from benchmarks.bench_backends import oscillator_chain  # noqa: E402
from orchestration import ray_cgraph  # noqa: E402
from orchestration.algorithms import FixedStepAlgorithm  # noqa: E402
from orchestration.backends import BackendConfig, make_slave_factory  # noqa: E402
from orchestration.execution import Execution  # noqa: E402

GROUP = {"*": {"group": "all"}}
CONFIGS = {"inprocess": (BackendConfig("inprocess"), False), "ray": (BackendConfig("ray"), False),
           "ray-cg": (BackendConfig("ray"), True), "ray-group": (BackendConfig("ray", placement=GROUP), False),
           "ray-group-cg": (BackendConfig("ray", placement=GROUP), True)}


def _process_cpu(pid: int) -> float:
    """CPU seconds of a process (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def timed_run(fmu: Path, name: str, steps: int, h: float = 1e-3) -> tuple[float, float, float]:
    """(wall s, master CPU s, actor cores busy) of ``steps`` macro steps after a warm-up (which
    registers value references and compiles the graphs)."""
    config, compiled = CONFIGS[name]
    os.environ[ray_cgraph.ENV] = "1" if compiled else "0"
    ex = Execution(oscillator_chain(fmu, 5), FixedStepAlgorithm(method="jacobi"),
                   slave_factory=make_slave_factory(config))
    try:
        ex.initialize()
        ex.run(5 * h, h)
        pids = sorted({s.where_is()["pid"] for s in ex.slaves if hasattr(s, "where_is")})
        w0 = sum(_process_cpu(p) for p in pids)
        c0, t0 = time.process_time(), time.perf_counter()
        ex.run(5 * h + steps * h, h)
        wall = time.perf_counter() - t0
        return wall, time.process_time() - c0, (sum(_process_cpu(p) for p in pids) - w0) / wall
    finally:
        ex.free()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400, help="macro steps per ray run (in-process: 5x)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--configs", default="inprocess,ray,ray-cg,ray-group,ray-group-cg")
    args = parser.parse_args(argv)
    names = args.configs.split(",")
    from orchestration import ray_backend
    from tests.c_fmu.build import build_oscillator_fmu

    ray = ray_backend.connect(None, num_cpus=2)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            fmu = build_oscillator_fmu(Path(tmp))
            wall: dict[str, float] = {}
            for name in names:
                steps = args.steps * (5 if name == "inprocess" else 1)
                runs = [timed_run(fmu, name, steps) for _ in range(args.repeat)]
                wall[name] = min(r[0] for r in runs) / steps
                cpu = min(r[1] for r in runs) / steps
                busy = max(r[2] for r in runs)
                print(f"{name:12s} {wall[name] * 1e6:8.1f} us per macro step, master CPU {cpu * 1e6:7.1f} us, actors "
                      f"kept {busy:4.2f} cores busy (best of {args.repeat}, {steps} steps; runs "
                      f"{[round(r[0] / steps * 1e6) for r in runs]} us; load {os.getloadavg()[0]:.2f})", flush=True)
            if "inprocess" in wall:
                for name in names:
                    if name != "inprocess":
                        print(f"  overhead {name}: {(wall[name] - wall['inprocess']) * 1e6:.1f} us per macro step "
                              "with 5 FMUs (goal <= 1500)")
    finally:
        ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
