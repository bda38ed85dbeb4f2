"""Per-call cost of the FMI layer of our Python FMUs: getReal/setReal through the whole stack
(InProcessSlave -> ctypes -> native loader -> pythonfmu -> fmus/_base.py), on the offshore lift's
five FMUs with the variables the master really exchanges (figures go to docs/performance.md).

    python benchmarks/bench_fmi_calls.py [--calls N]

Per FMU, after initialisation, CPU microseconds per call (thread_time, best of 5 blocks of N):

* ``get``: getReal of the outputs the master reads, with nothing changed since the last read
  (no feedthrough recomputation: pure FMI overhead);
* ``set same``: setReal of the master's inputs with the values they already have (a master
  re-setting unchanged inputs; should not invalidate anything);
* ``set+get same``: both, as in the feedthrough refresh with unchanged inputs;
* ``set new``: setReal with values that differ every call (no get, so no recomputation).

Then the results recorder (orchestration/master/observers/results.py's FileObserver with the
default recording, every input and output: 485 columns in the lift): CPU microseconds per
recorded row to gather it (``Gather.row``) and to write it to the CSV (``flush`` without Parquet),
best of 5 blocks of 1000 rows.

Not pass/fail.  Run it from the repository root with the repository's Python.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# In one process the FMUs share sys.modules: import this checkout's components first, so that no
# FMU picks a components module from elsewhere (an editable install of another checkout).
import components  # noqa: E402,F401
from orchestration.runs import reference as rs  # noqa: E402
from orchestration.master.algorithms import make_algorithm  # noqa: E402
from orchestration.master.execution import Execution  # noqa: E402


def best_per_call(fn, calls: int, blocks: int = 5) -> float:
    best = float("inf")
    for _ in range(blocks):
        t0 = time.thread_time()
        for _ in range(calls):
            fn()
        best = min(best, time.thread_time() - t0)
    return 1e6 * best / calls


def recorder(ex: Execution, rows: int = 1000) -> None:
    """The results recorder's cost per row (module docstring)."""
    import tempfile

    from orchestration.master.observers.results import FileObserver, default_observed

    with tempfile.TemporaryDirectory(prefix="bench_recorder_") as folder:
        observer = FileObserver(Path(folder), default_observed(ex.system), flush_every=10 ** 9, parquet=False)
        observer.on_start(ex)
        gather = observer._gather
        best_row = best_flush = float("inf")
        for _ in range(5):
            observer._rows = []
            t0 = time.thread_time()
            for _ in range(rows):
                observer._rows.append([ex.time, *gather.row()])
            t1 = time.thread_time()
            observer.flush()
            t2 = time.thread_time()
            best_row, best_flush = min(best_row, t1 - t0), min(best_flush, t2 - t1)
        observer._csv_file.close()
    print(f"recorder, {len(observer.columns)} columns: gather {1e6 * best_row / rows:.1f} us per row, "
          f"CSV {1e6 * best_flush / rows:.1f} us per row")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=2000)
    args = p.parse_args(argv)
    fmu_dir = rs.ensure_fmus(rs.MODELS["offshore_lift"])
    system, _, _ = rs.load_reference("offshore_lift", fmu_dir, Path("/tmp") / "bench_fmi_calls", log=lambda m: None)
    ex = Execution(system, make_algorithm(system.algorithm, dict(system.algorithm_options)))
    try:
        ex.initialize()
        print("| FMU | inputs | outputs | get us | set same us | set+get same us | set new us |")
        print("|---|---|---|---|---|---|---|")
        for i, slave in enumerate(ex.slaves):
            in_vrs, out_vrs = ex.in_vrs[i], ex.out_vrs[i]
            slave.get_reals(out_vrs)               # settle any pending feedthrough recomputation
            values = slave.get_reals(in_vrs) if len(in_vrs) else np.zeros(0)
            get = best_per_call(lambda: slave.get_reals(out_vrs), args.calls)
            same = best_per_call(lambda: slave.set_reals(in_vrs, values), args.calls) if len(in_vrs) else float("nan")
            both = best_per_call(lambda: slave.set_and_get(in_vrs, values, out_vrs), args.calls) \
                if len(in_vrs) else float("nan")
            # tiny relative changes, alternating, so every call really changes every input
            bumped = [values * (1.0 + 1e-12) + 1e-12, values.copy()]
            k = [0]

            def set_new():
                k[0] ^= 1
                slave.set_reals(in_vrs, bumped[k[0]])
            new = best_per_call(set_new, args.calls) if len(in_vrs) else float("nan")
            slave.set_reals(in_vrs, values) if len(in_vrs) else None
            print(f"| {slave.name} | {len(in_vrs)} | {len(out_vrs)} | {get:.1f} | {same:.1f} | {both:.1f} | {new:.1f} "
                  f"|")
        recorder(ex)
    finally:
        ex.free()
    return 0


if __name__ == "__main__":
    sys.exit(main())
