"""Randomised bad-input trials against built FMUs, through their real FMI binary (FMPy's FMU2Slave).

Each trial instantiates one FMU and drives it through a random sequence of FMI calls: good and bad
start times, parameters, inputs and step sizes, calls out of the FMI life cycle, FMU states saved,
restored, serialised and tampered with (a NaN in an array, an array of another shape, another
version).  After every call the trial reads every Real variable: a read that returns fmi2OK (or
fmi2Warning) with a non-finite value is a *NaN at OK*.  The outcome of a trial is

* ``ok``: every call returned fmi2OK or fmi2Warning;
* ``error``: some call returned fmi2Error (or worse) with a message -- a clean refusal;
* ``nan``: a NaN or infinity was returned at fmi2OK;
* ``crash``: the process died (decided by :func:`run_trials`, which runs the trials in a child);
* ``hang``: a trial took longer than the timeout (likewise).

    python -m tests.fmus.fuzz_fmus [DIR [FMU ...]] [--trials 300] [--seed 0]   # DIR: built FMUs

The trials run in a child process (``--child``, the trials to run on its stdin), one JSON line
per trial start and end, so that a crash or a hang is counted (and the next trial goes on in a
fresh child) instead of taking the caller down.  Seeded: trial ``k`` of an FMU with seed ``s`` is always the same calls.

What a trial costs is mostly the FMU's own work (measured at 20 trials per FMU: the
CompliantCable's and the Cable's static equilibrium, set up anew for outputs read in initialisation
mode and again when it ends, and the Ship's radiation fit, about half of the CPU); around it,
each FMU is extracted once per :func:`run_trials` (or once for several, ``workdir``), the child
loads each FMU's binary once and instantiates it afresh for every trial, and writes the bytecode
of the FMU's Python sources beside them, so that a later child (after a crash, or of another run
sharing ``workdir``) does not compile them again.  A trial that
crashes or hangs is run again alone in a fresh child, which tells whether it fails on its own or
only after the trials before it in the same process.
"""
from __future__ import annotations

import argparse
import base64
import json
import math
import os
import random
import selectors
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

OUTCOMES = ("ok", "error", "nan", "crash", "hang")
ROOT = Path(__file__).resolve().parents[2]

BAD_REALS = (math.nan, math.inf, -math.inf, 1e308, -1e308, 1e300, -1e30, 1e-300, -1e-300, 0.0, -1.0, 1e30)
BAD_TIMES = (math.nan, math.inf, -math.inf, 1e30, -1e30, 1e308)
STEPS = (0.01, 0.01, 0.025, 0.001, 0.1, 1.0, 10.0, 1000.0, 1e9, 1e-9, 1e-300, 0.0, -0.01, math.nan, math.inf)


# --------------------------------------------------------------------------------------- one trial (child)

class _Trial:
    """One FMU instance driven by one random sequence of calls."""

    def __init__(self, fmu, md, unzipped: str, rng: random.Random, slave=None):
        """``slave``: the FMU's binary already loaded (an FMU2Slave whose instance was freed), kept
        loaded after the trial; None: loaded for this trial and unloaded after it."""
        from fmpy import calloc, free
        from fmpy.fmi2 import (FMU2Slave, fmi2CallbackAllocateMemoryTYPE, fmi2CallbackFreeMemoryTYPE,
                               fmi2CallbackFunctions, fmi2CallbackLoggerTYPE)
        self.md, self.rng = md, rng
        self.reals = [v for v in md.modelVariables if v.type == "Real"]
        self.real_vrs = [v.valueReference for v in self.reals]
        self.params = [v for v in md.modelVariables if v.causality == "parameter"]
        self.inputs = [v for v in md.modelVariables if v.causality == "input"]
        self.messages: list[str] = []
        self.own_library = slave is None
        self.slave = slave if slave is not None else FMU2Slave(
            guid=md.guid, unzipDirectory=unzipped, modelIdentifier=md.coSimulation.modelIdentifier,
            instanceName="fuzz")
        self.callbacks = fmi2CallbackFunctions()
        self.callbacks.logger = fmi2CallbackLoggerTYPE(self._log)
        self.callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
        self.callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
        self.slave.instantiate(callbacks=self.callbacks, loggingOn=True)
        self.errors = 0
        self.nan_at_ok: list[str] = []
        self.silent: list[str] = []      # fmi2Error without a message saying why
        self.time = 0.0
        self.states: list = []

    def _log(self, component, instance, status, category, message):
        if status >= 3:
            self.messages.append(message.decode(errors="replace") if isinstance(message, bytes) else str(message))

    # ------------------------------------------------------------------ calls

    def call(self, name: str, *args):
        from fmpy.fmi1 import FMICallException
        before = len(self.messages)
        try:
            result = getattr(self.slave, name)(*args)
        except FMICallException:
            self.errors += 1
            if len(self.messages) == before:   # an error must say why
                self.silent.append(f"{name}: fmi2Error without a message")
            return None
        if name == "getReal":
            bad = [(self.md_name(vr), x) for vr, x in zip(args[0], result) if not math.isfinite(x)]
            if bad:
                self.nan_at_ok.append(f"getReal returned {bad[:3]} at fmi2OK")
        return result

    def md_name(self, vr: int) -> str:
        return next(v.name for v in self.reals if v.valueReference == vr)

    def read_all(self) -> None:
        self.call("getReal", self.real_vrs)

    # ------------------------------------------------------------------ random values

    def value(self, var, bad: bool):
        r = self.rng
        if var.type == "Real":
            if bad:
                choice = r.random()
                if choice < 0.6:
                    return r.choice(BAD_REALS)
                lo, hi = _num(var.min), _num(var.max)
                if choice < 0.8 and hi is not None:
                    return hi * r.choice((1.0, 1.0000001, 10.0)) + (1.0 if hi == 0.0 else 0.0)
                if lo is not None:
                    return lo - r.choice((1e-12, 1.0, abs(lo)))
                return r.choice(BAD_REALS)
            start = _num(var.start) or 0.0
            x = start * r.uniform(0.5, 2.0) if start else r.gauss(0.0, 1.0)
            lo, hi = _num(var.min), _num(var.max)
            return min(max(x, lo if lo is not None else -math.inf), hi if hi is not None else math.inf)
        if var.type == "Integer":
            lo = int(var.min) if var.min is not None else -5
            hi = int(var.max) if var.max is not None else 5
            if bad:
                return r.randint(lo - 3, hi + 3)
            # mostly near the start value (a count far up its range is valid but slow to build)
            start = int(var.start) if var.start is not None else lo
            return r.randint(lo, hi) if r.random() < 0.1 else min(max(start + r.randint(-2, 2), lo), hi)
        if var.type == "Boolean":
            return r.random() < 0.5
        return "x" * r.randint(0, 3) if bad else (var.start or "")

    def set_some(self, variables, bad_rate: float) -> None:
        if not variables:
            return
        chosen = self.rng.sample(variables, min(len(variables), self.rng.randint(1, 4)))
        for var in chosen:
            value = self.value(var, self.rng.random() < bad_rate)
            setter = {"Real": "setReal", "Integer": "setInteger", "Boolean": "setBoolean",
                      "String": "setString"}[var.type]
            self.call(setter, [var.valueReference], [value])

    # ------------------------------------------------------------------ the sequence

    def run(self) -> None:
        r = self.rng
        start = r.choice(BAD_TIMES) if r.random() < 0.05 else r.choice((0.0, 0.0, 5.0, -2.0))
        if r.random() < 0.95:
            self.call("setupExperiment", None, start)
        self.time = start if math.isfinite(start) else 0.0
        if r.random() < 0.05:   # out of order: step before initialisation
            self.call("doStep", self.time, 0.01)
        self.call("enterInitializationMode")
        self.set_some(self.params, bad_rate=0.2)
        self.read_all()        # outputs read in initialisation mode
        self.set_some(self.params, bad_rate=0.05)
        self.set_some(self.inputs, bad_rate=0.1)
        self.read_all()
        self.call("exitInitializationMode")
        self.read_all()
        for _ in range(r.randint(1, 8)):
            action = r.random()
            if action < 0.35:
                self.step()
            elif action < 0.6:
                self.set_some(self.inputs, bad_rate=0.3)
            elif action < 0.7:
                self.set_some(self.params, bad_rate=0.5)     # fixed after initialisation
            elif action < 0.8:
                self.save_or_restore()
            elif action < 0.88:
                self.tampered_state()
            elif action < 0.93:
                self.call(r.choice(("enterInitializationMode", "exitInitializationMode")))
            else:
                self.call("terminate")
                self.step()
                self.set_some(self.inputs, bad_rate=0.0)
            self.read_all()
        for state in self.states:
            self.call("freeFMUstate", state)

    def step(self) -> None:
        h = self.rng.choice(STEPS)
        t = self.time if self.rng.random() < 0.95 else self.rng.choice(BAD_TIMES)
        self.call("doStep", t, h)
        if math.isfinite(h) and h > 0.0:
            self.time += h

    def save_or_restore(self) -> None:
        if self.states and self.rng.random() < 0.5:
            self.call("setFMUstate", self.rng.choice(self.states))
        else:
            state = self.call("getFMUstate")
            if state is not None:
                self.states.append(state)

    def tampered_state(self) -> None:
        state = self.call("getFMUstate")
        if state is None:
            return
        self.states.append(state)
        blob = self.call("serializeFMUstate", state)
        if blob is None:
            return
        blob = _tamper(bytes(blob), self.rng)
        other = self.call("deSerializeFMUstate", blob)
        if other is not None:
            self.states.append(other)
            self.call("setFMUstate", other)

    def outcome(self) -> str:
        if self.nan_at_ok:
            return "nan"
        return "error" if self.errors else "ok"

    def close(self) -> None:
        try:
            self.slave.terminate()
        except Exception:
            pass
        if self.own_library:
            self.slave.freeInstance()                         # and the library
        else:
            self.slave.fmi2FreeInstance(self.slave.component)    # the library stays loaded


def _num(x):
    return None if x is None else float(x)


def _tamper(blob: bytes, rng: random.Random) -> bytes:
    """A well-formed serialised state with one thing wrong: a NaN in an array, an array of
    another shape, a float made non-finite, or another version."""
    envelope = json.loads(blob)
    arrays, floats = [], []

    def walk(node):
        if isinstance(node, dict):
            if "__ndarray__" in node:
                if node["dtype"].endswith("f8"):
                    arrays.append(node)
                return
            if "__float__" in node:
                floats.append(node)
                return
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(envelope["state"])
    choice = rng.random()
    if choice < 0.4 and arrays:
        node = rng.choice(arrays)
        raw = bytearray(base64.b64decode(node["__ndarray__"]))
        if raw:
            k = rng.randrange(len(raw) // 8)
            raw[8 * k: 8 * k + 8] = bytes.fromhex("000000000000f87f")   # NaN, little-endian
        node["__ndarray__"] = base64.b64encode(bytes(raw)).decode()
    elif choice < 0.7 and arrays:
        node = rng.choice(arrays)
        raw = base64.b64decode(node["__ndarray__"])
        n = len(raw) // 8
        keep = max(0, n - rng.randint(1, 3)) if rng.random() < 0.5 else n + rng.randint(1, 3)
        raw = (raw + bytes(8 * keep))[: 8 * keep]
        node["__ndarray__"] = base64.b64encode(raw).decode()
        node["shape"] = [keep]
    elif choice < 0.85 and floats:
        rng.choice(floats)["__float__"] = rng.choice(("nan", "inf", "-inf"))
    else:
        inner = envelope["state"].get("__dict__", {})
        if "version" in inner:
            inner["version"] = rng.choice((0, 1, 99))
        else:
            envelope["version"] = 99
    return json.dumps(envelope).encode()


def child(jobs: list[tuple[Path, str, int]], seed: int) -> None:
    """Run the trials ``jobs`` ((FMU, its extracted folder, trial number) in order), a JSON line at
    each start and end.  Each FMU's binary is loaded once and instantiated afresh for each trial."""
    from fmpy import read_model_description
    from fmpy.fmi2 import FMU2Slave
    # the FMUs' Python sources compiled once for every child that runs them (beside them, in the
    # extracted folders; this process's own modules are imported by now)
    sys.dont_write_bytecode = False
    opened: dict[Path, tuple] = {}
    try:
        for fmu, unzipped, k in jobs:
            if fmu not in opened:
                md = read_model_description(str(Path(unzipped) / "modelDescription.xml"))
                opened[fmu] = (md, FMU2Slave(guid=md.guid, unzipDirectory=unzipped,
                                             modelIdentifier=md.coSimulation.modelIdentifier, instanceName="fuzz"))
            md, slave = opened[fmu]
            print(json.dumps({"start": k}), flush=True)
            trial = _Trial(fmu, md, unzipped, random.Random(f"{seed}:{md.modelName}:{k}"), slave=slave)
            try:
                trial.run()
            finally:
                trial.close()
            print(json.dumps({"end": k, "outcome": trial.outcome(), "why": trial.nan_at_ok[:3],
                              "silent": trial.silent[:3]}), flush=True)
    finally:
        for _, slave in opened.values():
            slave.freeLibrary()


def extract_once(fmu: Path, workdir: Path) -> Path:
    """``fmu`` extracted into a folder of ``workdir`` named by its content (kept for later runs
    sharing ``workdir``; a folder whose extraction did not finish is made again)."""
    import hashlib
    import zipfile

    digest = hashlib.sha256(Path(fmu).read_bytes()).hexdigest()[:16]
    folder = Path(workdir) / f"{Path(fmu).stem}-{digest}"
    done = folder / ".extracted"
    if not done.is_file():
        shutil.rmtree(folder, ignore_errors=True)
        with zipfile.ZipFile(fmu) as archive:
            archive.extractall(folder)
        done.touch()
    return folder


# ------------------------------------------------------------------------------------ the parent

def run_trials(fmus: list[Path], trials: int, seed: int = 0, timeout: float = 120.0,
               workdir: Path | None = None) -> tuple[dict[str, Counter], list[str]]:
    """Run ``trials`` trials of every FMU in ``fmus`` in child processes; the outcome counts per
    FMU and what went wrong (crash, hang, NaN at OK, an error without a message) trial by trial.
    A child that dies, or stalls for ``timeout`` seconds on one trial, is counted as a crash or a
    hang of that trial, and a new child goes on with the next; the trial is then run again alone
    in a fresh child, and the report says whether it fails on its own.  ``workdir``: where the FMUs
    are extracted, kept for other runs (default: a temporary folder of this run)."""
    with tempfile.TemporaryDirectory(prefix="fuzz-fmus-") as tmp:
        folders = {fmu: extract_once(fmu, Path(workdir or tmp)) for fmu in fmus}
        jobs = [(fmu, str(folders[fmu]), k) for fmu in fmus for k in range(trials)]
        counts = {fmu.stem: Counter({o: 0 for o in OUTCOMES}) for fmu in fmus}
        problems: list[str] = []
        done = 0
        while done < len(jobs):
            start = done
            failed, done = _run_child(jobs, done, seed, timeout, counts, problems)
            if failed is not None and failed > start:      # (the child's first trial ran alone already)
                problems[-1] += _alone(jobs[failed], seed, timeout)
    return counts, problems


def _run_child(jobs: list, done: int, seed: int, timeout: float, counts: dict[str, Counter],
               problems: list[str]) -> tuple[int | None, int]:
    """Run ``jobs[done:]`` in one child until they end or one crashes or hangs; counts and problems
    added to.  (the index of a trial that crashed or hung, or None; the number of jobs done)."""
    proc = subprocess.Popen([sys.executable, "-m", "tests.fmus.fuzz_fmus", "--seed", str(seed), "--child"],
                            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    proc.stdin.write(json.dumps([(str(f), u, k) for f, u, k in jobs[done:]]))   # the jobs
    proc.stdin.close()
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    failed = None
    try:
        while done < len(jobs):
            fmu, _, k = jobs[done]
            if not selector.select(timeout=max(0.0, deadline - time.monotonic())):
                counts[fmu.stem]["hang"] += 1
                problems.append(f"{fmu.stem} trial {k}: no answer in {timeout:g} s")
                failed, done = done, done + 1
                break
            line = proc.stdout.readline()
            if not line:   # the child died before this trial ended
                proc.wait()
                counts[fmu.stem]["crash"] += 1
                problems.append(f"{fmu.stem} trial {k}: the process died (exit {proc.returncode})")
                failed, done = done, done + 1
                break
            message = json.loads(line)
            if "start" in message:
                deadline = time.monotonic() + timeout
                continue
            outcome = message["outcome"]
            counts[fmu.stem][outcome] += 1
            if outcome == "nan" or message["silent"]:
                problems.append(f"{fmu.stem} trial {k}: {message['why'] + message['silent']}")
            done += 1
    finally:
        selector.close()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
    return failed, done


def _alone(job: tuple, seed: int, timeout: float) -> str:
    """What ``job`` (a trial that crashed or hung after others in the same child) does alone in a
    fresh child, as a sentence to add to its problem."""
    counts = {job[0].stem: Counter({o: 0 for o in OUTCOMES})}
    problems: list[str] = []
    _run_child([job], 0, seed, timeout, counts, problems)
    outcome = next(o for o, n in counts[job[0].stem].items() if n)
    if outcome in ("crash", "hang"):
        return f"; alone in a fresh process too ({outcome})"
    return f"; alone in a fresh process it ends as {outcome!r}: it fails only after the trials before it"


def format_counts(results: dict[str, Counter]) -> str:
    lines = [f"{'FMU':<20}" + "".join(f"{o:>8}" for o in OUTCOMES)]
    for name, counts in results.items():
        lines.append(f"{name:<20}" + "".join(f"{counts[o]:>8}" for o in OUTCOMES))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)   # jobs as JSON on stdin
    p.add_argument("dir", nargs="?", type=Path, help="folder of built FMUs (default: build them now)")
    p.add_argument("names", nargs="*", help="FMU names (default: all)")
    p.add_argument("--trials", type=int, default=300, help="trials per FMU")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=120.0, help="seconds one trial may take (wall)")
    args = p.parse_args(argv)
    if args.child:
        child([(Path(f), u, k) for f, u, k in json.loads(sys.stdin.read())], args.seed)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.dir
        if folder is None:
            import build_fmus
            folder = Path(tmp)
            build_fmus.build_all(folder)
        fmus = sorted(f for f in folder.glob("*.fmu") if not args.names or f.stem in args.names)
        results, problems = run_trials(fmus, args.trials, args.seed, args.timeout)
        print(format_counts(results))
        for line in problems:
            print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
