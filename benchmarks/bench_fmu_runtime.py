"""Cost of the two FMU runtimes of docs/fmu_runtime.md: in-process (default build) and child process
(``--portable``): time per FMI call, first instantiation (cold and warm runtime cache), FMU size.

    python benchmarks/bench_fmu_runtime.py [--default DIR] [--portable DIR] [MODEL ...]

Builds what is missing into temporary folders. The in-process numbers are those of the loader's
in-process path, which is what an in-process isolated interpreter (design (a)) would also run per
call; the child-process numbers add one socket round trip per call (design (b)).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fmpy import extract  # noqa: E402

import build_fmus  # noqa: E402
from tests.support.fmu_runner import FmuUnderTest  # noqa: E402

CALLS = 2000


def per_call(fmu: FmuUnderTest, names: list[str]) -> dict[str, float]:
    """Median of 5 batches, in microseconds per call."""
    vrs = [fmu.vr[n] for n in names]
    an_input = next(v for v in fmu.md.modelVariables if v.causality == "input" and v.type == "Real")
    first, value = an_input.valueReference, float(an_input.start)
    slave = fmu.slave
    t = [0.0]

    def step():
        slave.doStep(t[0], 1e-3)
        t[0] += 1e-3

    out = {}
    for label, call in (("getReal", lambda: slave.getReal(vrs)), ("setReal", lambda: slave.setReal([first], [value])),
                        ("doStep", step)):
        samples = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(CALLS // 5):
                call()
            samples.append((time.perf_counter() - start) / (CALLS // 5) * 1e6)
        out[label] = statistics.median(samples)
    return out


def first_instantiate(fmu_path: Path, cache: Path, unzipped: Path) -> float:
    """Seconds from loading the binary to an instance (the host's unzipping is not counted)."""
    os.environ["MARINE_COSIM_CACHE"] = str(cache)
    if not unzipped.exists():
        extract(str(fmu_path), unzipdir=str(unzipped))
    start = time.perf_counter()
    fmu = FmuUnderTest(fmu_path, unzip_dir=str(unzipped))
    elapsed = time.perf_counter() - start
    fmu.close()
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--default", type=Path)
    parser.add_argument("--portable", type=Path)
    parser.add_argument("models", nargs="*", default=["Payload", "Winch", "Crane", "Cable", "Contact", "Ship"])
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        default = args.default or build_fmus.ensure_built(args.models, Path(tmp) / "default", log=lambda *_: None)
        portable = args.portable or build_fmus.ensure_built(args.models, Path(tmp) / "portable", portable=True,
                                                            log=lambda *_: None)
        print("| FMU | zipped MiB (default / portable) | first instantiate, portable: empty cache / cached "
              "| getReal us (in-process / child) | setReal us | doStep us (1 ms) |")
        print("|---|---|---|---|---|---|")
        for model in args.models:
            d, p = default / f"{model}.fmu", portable / f"{model}.fmu"
            cold = first_instantiate(p, Path(tmp) / f"cache_{model}", Path(tmp) / f"u1_{model}")
            warm = first_instantiate(p, Path(tmp) / f"cache_{model}", Path(tmp) / f"u2_{model}")
            costs = []
            for path in (d, p):
                fmu = FmuUnderTest(path)
                fmu.initialize({})
                names = [v.name for v in fmu.md.modelVariables if v.causality == "output"][:6]
                costs.append(per_call(fmu, names))
                fmu.close()
            print(f"| {model} | {d.stat().st_size / 2**20:.2f} / {p.stat().st_size / 2**20:.1f} "
                  f"| {cold:.2f} s / {warm:.2f} s "
                  f"| {costs[0]['getReal']:.1f} / {costs[1]['getReal']:.1f} "
                  f"| {costs[0]['setReal']:.1f} / {costs[1]['setReal']:.1f} "
                  f"| {costs[0]['doStep']:.0f} / {costs[1]['doStep']:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
