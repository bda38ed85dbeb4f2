"""Speed and accuracy of the line component (components.line) against MoorDyn 2.7.2 on one case.

    python benchmarks/bench_cable.py [--repeat N] [--markdown PATH] [--json PATH]
    python benchmarks/bench_cable.py --payout [--repeat N]

--payout: a winch wire paying out and hauling in (no MoorDyn; see payout_case below), microseconds
of CPU per coupling step with the pay-out in the kernel, the previous path (the kernel one sub-step
at a time, the pay-out in Python) and the numpy reference.

Case (tests/test_line.py, MoorDyn's WD0050_Chain deck): the 50 m chain, 410 m, 41 segments,
anchor 400 m from the fairlead and 50 m below it; the fairlead heaves 1 m at a 10 s period,
ramped in over 20 s; 60 s at a 0.1 s coupling step (600 calls of MoorDyn's Step / our step).

Measured per configuration:

* wall: CPU seconds of this process (time.process_time; both codes run single-threaded in it, so
  on a loaded machine this is the wall time each would take alone) spent in the 600 coupling
  steps (best of N repeats; the repeats go round the configurations in turn, so load from other
  processes falls on all of them alike).  Ours runs compiled (components/kernels/line.c) unless
  the label says numpy (the reference, ``compiled=False``).  The set-up
  (MoorDyn's Create + Init with its dynamic-relaxation initial condition; our Line() with the
  catenary and the static Newton solve) is reported separately as ``init`` (best of N).
* ratio: wall / wall of MoorDyn at dtM = 1 ms.
* errors of the fairlead-force magnitude |F|(t) against two references: MoorDyn at dtM = 1 ms
  ("MD") and our implicit scheme at a 2 ms sub-step ("fine", the time-converged solution of our
  own discretisation).  max and min: relative error of the largest and smallest |F| over the
  60 s; rms: RMS over the 600 samples of |F| - |F|_ref, in percent of the reference's standard
  deviation (its dynamic part; the mean of ~1000 kN would hide every error).

A configuration whose forces are NaN, raise an error or exceed 10x the reference is 'unstable'.
Rows marked with * in the wall column are timed in one run only (the slow references).
MoorDyn's console output ('t = ...' lines, the NaN report) is sent to /dev/null at the file
descriptor level.  BLAS is limited to one thread (MoorDyn is single-threaded).
"""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from components.line import Line, LineParams  # noqa: E402
from tests.components.test_catenary import MOORDYN_DECK  # noqa: E402

# the chain of tests/test_line.py (MoorDyn deck: D, m', EA, BA = -1, Cd, Ca, CdAx, CaAx, seabed)
CHAIN = LineParams(length=410.0, diameter=0.252, mass_per_length=390.0, EA=1.674e9, damping=-1.0,
                   Cdn=1.37, Cdt=0.64, Can=1.0, Cat=0.0, kBot=1e5, cBot=1e4, friction=0.5)
ANCHOR = np.array([400.0, 0.0, 50.0])        # NED; MoorDyn (z up) has it at (400, 0, -50)
FAIRLEAD = np.zeros(3)
N_SEG = 41
T_END, DT = 60.0, 0.1
STEPS = int(round(T_END / DT))


def heave(t: float, amp: float = 1.0, period: float = 10.0, ramp: float = 20.0) -> tuple[float, float]:
    """Upward fairlead heave (z up) and its rate, ramped in linearly over ``ramp`` s
    (the same as tests/test_line.py)."""
    w = 2 * math.pi / period
    if t < ramp:
        return amp * t / ramp * math.sin(w * t), amp * (t / ramp * w * math.cos(w * t) + math.sin(w * t) / ramp)
    return amp * math.sin(w * t), amp * w * math.cos(w * t)


@contextlib.contextmanager
def quiet_fds() -> Iterator[None]:
    """Send file descriptors 1 and 2 to /dev/null (C-level output of MoorDyn included)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, devnull):
            os.close(fd)


def deck_with_dtm(dtm: float) -> str:
    """The MoorDyn deck with its ``dtM`` option line set to ``dtm`` seconds."""
    deck, n = re.subn(r"(?m)^\S+(\s+dtM\b)", f"{dtm:g}\\1", MOORDYN_DECK)
    if n != 1:
        raise RuntimeError("no dtM line in the MoorDyn deck")
    return deck


@dataclass
class Trial:
    """One timed run: the fairlead-force magnitudes (None if unstable) and the times [s]."""

    forces: np.ndarray | None
    wall: float
    init: float


def run_moordyn(dtm: float, workdir: Path) -> Trial:
    """MoorDyn 2.7.2 on the deck with the given dtM: Create + Init, then 600 Step calls of 0.1 s.
    MoorDyn moves the coupled fairlead at the given velocity within each step, as ours does."""
    import moordyn

    deck = workdir / "chain.txt"
    deck.write_text(deck_with_dtm(dtm))
    cwd = os.getcwd()
    os.chdir(workdir)                                 # MoorDyn writes its .out/.log files here
    forces: list[float] = []
    ok = True
    try:
        with quiet_fds():
            t0 = time.process_time()
            system = moordyn.Create(str(deck))
            if moordyn.Init(system, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]) != 0:
                raise RuntimeError("MoorDyn Init failed")
            t1 = time.process_time()
            t = 0.0
            try:
                for k in range(STEPS):
                    z, zd = heave(k * DT)
                    F = moordyn.Step(system, [0.0, 0.0, z], [0.0, 0.0, zd], t, DT)
                    t += DT
                    forces.append(float(np.linalg.norm(F)))
            except RuntimeError:                      # "MoorDyn reported an error integrating" (NaN)
                ok = False
            t2 = time.process_time()
            moordyn.Close(system)
    finally:
        os.chdir(cwd)
    return Trial(np.array(forces) if ok else None, t2 - t1, t1 - t0)


def run_ours(scheme: str, substep: float | None, theta: float = 0.6, compiled: bool | None = None) -> Trial:
    """Our line on the same case: Line() (catenary + static equilibrium), then 600 steps of 0.1 s."""
    t0 = time.process_time()
    line = Line(CHAIN, ANCHOR, FAIRLEAD, N_SEG, 50.0, scheme=scheme, substep=substep, theta=theta,
                compiled=compiled)
    t1 = time.process_time()
    forces = np.empty(STEPS)
    for k in range(STEPS):
        z, zd = heave(k * DT)
        line.set_ends(ANCHOR, np.zeros(3), [0.0, 0.0, -z], [0.0, 0.0, -zd])
        line.step(DT)
        forces[k] = np.linalg.norm(line.end_loads().force_b)     # what the Cable FMU reads
        if not math.isfinite(forces[k]):
            return Trial(None, time.process_time() - t1, t1 - t0)
    return Trial(forces, time.process_time() - t1, t1 - t0)


@dataclass
class Config:
    """A configuration of the table: label, sub-step shown, runner, and whether it is repeated."""

    label: str
    step: str
    run: Callable[[], Trial]
    repeat: bool = True
    trials: list[Trial] = field(default_factory=list)

    @property
    def forces(self) -> np.ndarray | None:
        return self.trials[0].forces if self.trials else None

    @property
    def stable(self) -> bool:
        return bool(self.trials) and all(t.forces is not None for t in self.trials)


def errors(T: np.ndarray, ref: np.ndarray) -> tuple[float, float, float]:
    """(max, min, rms) errors [%] of T against ref (module docstring)."""
    return (100.0 * (T.max() / ref.max() - 1.0), 100.0 * (T.min() / ref.min() - 1.0),
            100.0 * float(np.sqrt(np.mean((T - ref) ** 2)) / np.std(ref)))


def pct(x: float, signed: bool) -> str:
    """A percentage for the table: 3 decimals with a sign (max, min) or 2 without (rms)."""
    return f"{round(x, 3) + 0.0:+.3f}" if signed else f"{x:.2f}"


def payout_case(path: str) -> tuple[float, np.ndarray, list[int], int]:
    """A winch wire (60 m, d 40 mm, 6 elements of 10 m, an 800 kg free end in a 0.6 m/s current,
    tests/components/test_kernels.py's) paying out 6.1 m and hauling it in again over 32 s,
    320 coupling steps of 0.1 s with 10 implicit sub-steps of 0.01 s (an element splits and
    merges).  path: "kernel" (the pay-out in the kernel, one call per coupling step), "previous"
    (the kernel a sub-step at a time, the pay-out in Python) or "numpy".  Returns (CPU seconds of
    the coupling steps, the end loads and tip position after each, the element counts seen, kernel
    calls)."""
    from components.kernels.line import CompiledLine
    wire = LineParams(length=60.0, diameter=0.04, mass_per_length=6.7, EA=7.5e7, damping=-0.1,
                      Cdn=1.2, Cdt=0.05, Can=1.0, Cat=0.2)
    line = Line(wire, [0.0, 0.0, 0.0], [0.0, 0.0, 60.0], 6, math.inf, scheme="implicit", free_b=True,
                tip_mass=800.0, winch_end="a", current=(0.6, 0.2, 0.0), substep=0.01,
                compiled=False if path == "numpy" else None)
    calls = [0]
    if line._compiled is not None:
        run = line._compiled.run

        def counted(*args):
            calls[0] += 1
            return run(*args)
        line._compiled.run = counted
        if path == "previous":
            line._compiled.payout_in_place = lambda line: False
    assert isinstance(line._compiled, CompiledLine) == (path != "numpy")
    out, counts = np.empty((320, 9)), set()
    t0 = time.process_time()
    for k in range(320):
        t = k * 0.1
        line.set_payout(1.2 * math.cos(math.pi * t / 16.0))
        line.set_tip_force(np.array([300.0 * math.sin(0.7 * t), 0.0, 500.0 * math.sin(1.3 * t)]))
        line.step(0.1)
        loads = line.end_loads()
        out[k, :3], out[k, 3:6], out[k, 6:] = loads.force_a, loads.force_b, line.r[-1]
        counts.add(line.N)
    return time.process_time() - t0, out, sorted(counts), calls[0]


def main_payout(repeat: int) -> None:
    """--payout: us per coupling step, best of ``repeat`` runs of each path (in turn)."""
    from components import kernels
    print(kernels.status())
    best: dict[str, float] = {}
    results = {}
    for _ in range(max(repeat, 1)):
        for path in ("kernel", "previous", "numpy"):
            cpu, out, counts, calls = payout_case(path)
            best[path] = min(best.get(path, math.inf), cpu)
            results[path] = (out, counts, calls)
    ref = results["numpy"][0]
    print(f"winch wire paying out and hauling in: 320 coupling steps of 0.1 s, 10 sub-steps each, "
          f"{results['numpy'][1][0]}-{results['numpy'][1][-1]} elements; best of {repeat}, CPU per coupling step")
    for path, label in (("kernel", "compiled, pay-out in the kernel"),
                        ("previous", "compiled, a kernel call per sub-step, pay-out in Python"),
                        ("numpy", "numpy reference")):
        out, counts, calls = results[path]
        diff = float(np.abs(out - ref).max() / np.abs(ref).max())
        print(f"  {label:<58} {best[path] / 320 * 1e6:8.1f} us   kernel calls {calls:5d}   "
              f"largest difference to numpy {diff:.1e} (relative)")
    print(f"  kernel / previous {best['kernel'] / best['previous']:.2f}, "
          f"kernel / numpy {best['kernel'] / best['numpy']:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="timed repeats per configuration (best is kept)")
    ap.add_argument("--payout", action="store_true", help="the winch wire paying out (module docstring) instead")
    ap.add_argument("--markdown", type=Path, default=None, help="also write the table as Markdown here")
    ap.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "data" / "line_moordyn.json",
                    help="write the results here (default benchmarks/data/line_moordyn.json)")
    args = ap.parse_args()
    if args.payout:
        main_payout(args.repeat)
        return
    from components import kernels
    print(kernels.status())

    tmp = tempfile.TemporaryDirectory(prefix="bench_cable_")    # MoorDyn's deck and output files
    work = Path(tmp.name)
    configs = [Config(f"MoorDyn RK2 dtM {dtm * 1e3:g} ms", f"{dtm * 1e3:g} ms",
                      (lambda d=dtm: run_moordyn(d, work))) for dtm in (0.001, 0.002, 0.003, 0.004, 0.005)]
    probe = Line(CHAIN, ANCHOR, FAIRLEAD, N_SEG, 50.0, scheme="rk2", static_init=False)
    configs.append(Config("ours rk2 (default sub-step), numpy", f"{probe.substep * 1e3:.2f} ms",
                          lambda: run_ours("rk2", None), repeat=False))
    configs.append(Config("ours rk4 (default sub-step), numpy", f"{probe.dt_stable * 1e3:.2f} ms",
                          lambda: run_ours("rk4", None), repeat=False))
    for h in (0.005, 0.025):
        configs.append(Config("ours implicit theta 0.6, numpy", f"{h * 1e3:g} ms",
                              (lambda h=h: run_ours("implicit", h, compiled=False)), repeat=False))
    implicit = []
    for h in (0.004, 0.005, 0.00625, 0.01, 0.0125, 0.02, 0.025, 0.05):
        implicit.append(Config("ours implicit theta 0.6", f"{h * 1e3:g} ms", (lambda h=h: run_ours("implicit", h))))
    configs += implicit
    configs.append(Config("ours implicit theta 0.5", "50 ms", lambda: run_ours("implicit", 0.05, theta=0.5)))
    fine = Config("ours implicit theta 0.6 (fine)", "2 ms", lambda: run_ours("implicit", 0.002), repeat=False)
    configs.append(fine)

    t_start = time.perf_counter()
    for r in range(max(args.repeat, 1)):
        for c in configs:
            if (r > 0 and not c.repeat) or (c.trials and not c.stable):
                continue
            c.trials.append(c.run())
    total = time.perf_counter() - t_start
    tmp.cleanup()

    md_ref = configs[0]
    if not md_ref.stable or not fine.stable:
        raise SystemExit("a reference run (MoorDyn 1 ms or ours at 2 ms) is unstable")
    ref, ref_fine = md_ref.forces, fine.forces
    wall_md = min(t.wall for t in md_ref.trials)

    head = ["configuration", "step", "init s", "wall s", "wall/MD", "max MD %", "min MD %", "rms MD %",
            "max fine %", "min fine %", "rms fine %"]
    rows: list[list[str]] = []
    for c in configs:
        init = min(t.init for t in c.trials)
        wall = min(t.wall for t in c.trials)
        star = "" if c.repeat else "*"
        if not c.stable:
            rows.append([c.label, c.step, f"{init:.3f}", "unstable"] + [""] * 7)
            continue
        e_md, e_f = errors(c.forces, ref), errors(c.forces, ref_fine)
        rows.append([c.label, c.step, f"{init:.3f}", f"{wall:.2f}{star}", f"{wall / wall_md:.2f}"]
                    + [pct(x, signed=i < 2) for i, x in enumerate(e_md)]
                    + [pct(x, signed=i < 2) for i, x in enumerate(e_f)])

    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    fmt = "  ".join("{:<%d}" % w if i == 0 else "{:>%d}" % w for i, w in enumerate(widths))
    print(f"50 m chain, {N_SEG} segments, {T_END:g} s of ramped 1 m / 10 s heave at a {DT:g} s coupling step; "
          f"best of {args.repeat}")
    print(f"reference MoorDyn dtM 1 ms: max {ref.max() / 1e3:.2f} kN, min {ref.min() / 1e3:.2f} kN, "
          f"std {np.std(ref) / 1e3:.2f} kN; ours fine (implicit 2 ms): max {ref_fine.max() / 1e3:.2f} kN, "
          f"min {ref_fine.min() / 1e3:.2f} kN, std {np.std(ref_fine) / 1e3:.2f} kN")
    print(fmt.format(*head))
    for r in rows:
        print(fmt.format(*r))
    stable_md = [c for c in configs[:5] if c.stable]
    fastest_md = min(stable_md, key=lambda c: min(t.wall for t in c.trials))
    wall_fast = min(t.wall for t in fastest_md.trials)
    print(f"largest stable MoorDyn step: {stable_md[-1].step}; wall/MD is against MoorDyn at 1 ms "
          f"({wall_md:.2f} s); against MoorDyn at {fastest_md.step} ({wall_fast:.2f} s) divide by "
          f"{wall_fast / wall_md:.2f}.  * = one run only.  Total {total:.0f} s.")

    # the goal: at MoorDyn's largest stable step, our largest sub-step with an equal or smaller RMS
    # error against its own fine run, and the CPU times of the two
    md_best = stable_md[-1]
    md_rms = errors(md_best.forces, ref)[2]
    md_cpu = min(t.wall for t in md_best.trials)
    ok = [c for c in implicit if c.stable and errors(c.forces, ref_fine)[2] <= md_rms]
    fastest = [c for c in implicit if c.stable]
    fastest = min(fastest, key=lambda c: min(t.wall for t in c.trials)) if fastest else None
    summary = {"moordyn_largest_stable_step": md_best.step, "moordyn_rms_percent": md_rms, "moordyn_cpu_s": md_cpu}
    if ok:
        eq = ok[-1]
        cpu = min(t.wall for t in eq.trials)
        summary.update(equal_accuracy_step=eq.step, equal_accuracy_rms_percent=errors(eq.forces, ref_fine)[2],
                       equal_accuracy_cpu_s=cpu, ratio_to_moordyn=cpu / md_cpu)
        print(f"equal accuracy: MoorDyn at {md_best.step} (RMS {md_rms:.2f} % against MoorDyn 1 ms) "
              f"{md_cpu:.3f} s; ours implicit at {eq.step} (RMS {errors(eq.forces, ref_fine)[2]:.2f} % against "
              f"its 2 ms run) {cpu:.3f} s: {cpu / md_cpu:.2f}x MoorDyn's time (goal <= 1)")
    if fastest is not None:
        summary.update(ours_fastest_step=fastest.step, ours_fastest_cpu_s=min(t.wall for t in fastest.trials),
                       ours_fastest_rms_percent=errors(fastest.forces, ref_fine)[2])
    if args.json is not None:
        import json
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({
            "command": "python benchmarks/bench_cable.py", "date": time.strftime("%Y-%m-%d"),
            "kernels": kernels.status(), "load": os.getloadavg()[0], "repeat": args.repeat,
            "columns": head, "rows": rows, "summary": summary}, indent=1) + "\n")
        print(f"results written to {args.json}")

    if args.markdown is not None:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        args.markdown.write_text("\n".join(lines) + "\n")
        print(f"Markdown table written to {args.markdown}")


if __name__ == "__main__":
    main()
