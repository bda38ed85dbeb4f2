"""Master overhead per macro step per FMU, over raw FMPy calls (figures go in docs/performance.md).

    python benchmarks/bench_master.py [N_FMUS] [STEPS]

A chain of N C oscillator FMUs (tests/models/c_fmu, microseconds per doStep) is run three ways for the
same number of macro steps:

1. raw: the loop a minimal hand-written master would do, calling FMPy's ctypes functions
   (fmi2SetReal, fmi2DoStep, fmi2GetReal) with preallocated buffers;
2. fmpy: the same through FMPy's convenience methods (setReal/doStep/getReal), as most Python
   masters do;
3. ours: Execution + FixedStepAlgorithm (Jacobi and Gauss-Seidel), recording nothing.

Overhead = (ours - raw) / (steps * N). Goal: <= 20 us.
"""
from __future__ import annotations

import argparse
import ctypes
import sys
import tempfile
import time
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from orchestration.master.algorithms.fixed import FixedStepAlgorithm  # noqa: E402
from orchestration.master.execution import Execution  # noqa: E402
from orchestration.master.slaves import InProcessSlave  # noqa: E402
from tests.models.c_fmu.build import build_oscillator_fmu  # noqa: E402
from benchmarks.bench_backends import oscillator_chain as chain  # noqa: E402


def raw(fmu: Path, n: int, steps: int, h: float, convenience: bool) -> float:
    slaves = [InProcessSlave(f"o{k}", fmu) for k in range(n)]
    for s in slaves:
        s.instantiate()
        s.setup(0.0, None)
        s.enter_initialization()
        s.exit_initialization()
    vr_x, vr_f = slaves[0].variables["x"].value_reference, slaves[0].variables["F"].value_reference
    fmus = [s._fmu for s in slaves]
    x = [0.0] * n
    if convenience:
        t0 = time.perf_counter()
        for k in range(steps):
            t = k * h
            for i, f in enumerate(fmus):
                if i:
                    f.setReal([vr_f], [10.0 * x[i - 1]])
                f.doStep(t, h)
                x[i] = f.getReal([vr_x])[0]
        elapsed = time.perf_counter() - t0
    else:
        vx, vf = (ctypes.c_uint * 1)(vr_x), (ctypes.c_uint * 1)(vr_f)
        buf = (ctypes.c_double * 1)()
        calls = [(f._functions["fmi2SetReal"], f._functions["fmi2DoStep"], f._functions["fmi2GetReal"], f.component)
                 for f in fmus]
        t0 = time.perf_counter()
        for k in range(steps):
            t = k * h
            for i, (set_real, do_step, get_real, c) in enumerate(calls):
                if i:
                    buf[0] = 10.0 * x[i - 1]
                    set_real(c, vf, 1, buf)
                do_step(c, t, h, 1)
                get_real(c, vx, 1, buf)
                x[i] = buf[0]
        elapsed = time.perf_counter() - t0
    for s in slaves:
        s.terminate()
        s.free()
    return elapsed


def ours(fmu: Path, n: int, steps: int, h: float, method: str) -> float:
    ex = Execution(chain(fmu, n), FixedStepAlgorithm(method=method))
    ex.initialize()
    t0 = time.perf_counter()
    ex.run(steps * h, h)
    elapsed = time.perf_counter() - t0
    ex.free()
    return elapsed


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("n_fmus", nargs="?", type=int, default=4, help="oscillator FMUs in the chain (default 4)")
    p.add_argument("steps", nargs="?", type=int, default=5000, help="macro steps (default 5000)")
    args = p.parse_args()
    n, steps = args.n_fmus, args.steps
    h = 1e-3
    with tempfile.TemporaryDirectory() as tmp:
        fmu = build_oscillator_fmu(Path(tmp))
        best = lambda f, *a: min(f(fmu, n, steps, h, *a) for _ in range(3))
        t_raw = best(raw, False)
        t_fmpy = best(raw, True)
        t_jacobi = best(ours, "jacobi")
        t_gs = best(ours, "gauss-seidel")
    per = lambda t: t / (steps * n) * 1e6
    print(f"{n} oscillator FMUs, {steps} macro steps (best of 3)")
    print(f"  raw ctypes loop            {per(t_raw):7.2f} us per step per FMU")
    print(f"  FMPy convenience methods   {per(t_fmpy):7.2f} us  (+{per(t_fmpy - t_raw):.2f})")
    print(f"  marine-cosim Jacobi        {per(t_jacobi):7.2f} us  (overhead {per(t_jacobi - t_raw):.2f})")
    print(f"  marine-cosim Gauss-Seidel  {per(t_gs):7.2f} us  (overhead {per(t_gs - t_raw):.2f})")


if __name__ == "__main__":
    main()
