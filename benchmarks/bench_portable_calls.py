"""Two builds of portable FMUs (``build_fmus.py --portable``: the FMU's Python in a child process, one
round trip over a socket per call that enters it) driven alternately with a master's calls of one
macro step: setReal, doStep, getReal, then the feedthrough refresh's setReal and getReal.

    python benchmarks/bench_portable_calls.py --old DIR_OLD --new DIR_NEW

Each DIR holds Winch.fmu and Payload.fmu of one version (``build_fmus.build_all(Path(DIR),
["Winch", "Payload"], portable=True)`` run in that version's checkout). Wall time per macro step
(most of the work is in the child processes), best of 12 blocks of 200 steps, blocks of the two
versions alternating. Not pass/fail.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.fmu_runner import FmuUnderTest  # noqa: E402

CASES = {  # model: (inputs set, outputs read)
    "Winch": (["line.tension", "speed_setpoint"], ["motor.torque", "payout.speed", "payout.reference_speed"]),
    "Payload": (["attachment1.force[0]", "attachment1.force[1]", "attachment1.force[2]"],
                ["cg.position[0]", "cg.position[1]", "cg.position[2]", "cg.velocity[2]"]),
}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--old", type=Path, required=True)
    p.add_argument("--new", type=Path, required=True)
    p.add_argument("--blocks", type=int, default=12)
    p.add_argument("--steps", type=int, default=200)
    args = p.parse_args()
    for model, (inputs, outputs) in CASES.items():
        fmus = {label: FmuUnderTest(folder / f"{model}.fmu", instance_name=label)
                for label, folder in (("old", args.old), ("new", args.new))}
        best, t = {}, {label: 0.0 for label in fmus}
        try:
            for fmu in fmus.values():
                fmu.initialize()
            for block in range(args.blocks):
                for label in (("old", "new") if block % 2 == 0 else ("new", "old")):
                    fmu = fmus[label]
                    slave, vi, vo = fmu.slave, [fmu.vr[n] for n in inputs], [fmu.vr[n] for n in outputs]
                    u, refreshed = [1.0e3] * len(inputs), [1.1e3] * len(inputs)
                    t0 = time.perf_counter()
                    for _ in range(args.steps):
                        slave.setReal(vi, u)
                        slave.doStep(t[label], 0.01)
                        t[label] += 0.01
                        slave.getReal(vo)
                        slave.setReal(vi, refreshed)
                        slave.getReal(vo)
                    best[label] = min(best.get(label, float("inf")), 1e6 * (time.perf_counter() - t0) / args.steps)
        finally:
            for fmu in fmus.values():
                fmu.close()
        print(f"{model}: wall per macro step (setReal, doStep, getReal, setReal, getReal): old {best['old']:.0f} us, "
              f"new {best['new']:.0f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
