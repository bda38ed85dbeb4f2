"""Speed of the Ship FMU alone in FMPy at a 0.05 s macro step (goal >= 200x real time).

    python benchmarks/bench_ship.py [SECONDS]

Default sea (JONSWAP Hs 2.5 m, Tp 8 s, 60 components), MSS supply vessel (48 fluid-memory states),
per macro step: doStep and getReal of 6 outputs (what a master connecting a crane reads).
Also reports the component alone (components.ship, no FMI) for the same run. Best of 3 runs.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import build_fmus  # noqa: E402
from tests.support.fmu_runner import FmuUnderTest  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("seconds", nargs="?", type=float, default=60.0, help="simulated seconds (default 60)")
    seconds = p.parse_args().seconds
    h = 0.05
    steps = int(seconds / h)
    with tempfile.TemporaryDirectory() as tmp:
        fmu_path = build_fmus.build_all(Path(tmp), ["Ship"])[0]
        t0 = time.perf_counter()
        fmu = FmuUnderTest(fmu_path)
        fmu.initialize({})
        setup = time.perf_counter() - t0
        vrs = [fmu.vr[n] for n in ("hardpoint1.position[2]", "hardpoint1.velocity[2]", "hardpoint1.acceleration[2]",
                                   "euler[0]", "euler[1]", "position[2]")]
        walls = []
        for repeat in range(3):   # best of 3: the machine is shared, the minimum is the cost
            t0 = time.perf_counter()
            for k in range(repeat * steps, (repeat + 1) * steps):
                fmu.slave.doStep(k * h, h)
                fmu.slave.getReal(vrs)
            walls.append(time.perf_counter() - t0)
        wall = min(walls)
        ship = fmu  # keep alive until the component run below
        component = None
        try:
            sys.path.insert(0, str(ROOT / "fmus"))
            from fmus.ship import Ship

            adapter = Ship(instance_name="bench", resources=str(ROOT))
            adapter.setup_experiment(0.0)
            adapter.exit_initialization_mode()
            runs = []
            for _ in range(3):
                t1 = time.perf_counter()
                for _ in range(steps):
                    adapter.ship.step(h, h)
                runs.append(time.perf_counter() - t1)
            component = min(runs)
        finally:
            ship.close()
    print(f"Ship FMU, {seconds:g} s at h = {h} s: setup {setup:.2f} s (radiation fit), "
          f"{wall / steps * 1e6:.0f} us per macro step -> {seconds / wall:.0f}x real time")
    if component:
        print(f"components.ship alone: {component / steps * 1e6:.0f} us per step -> {seconds / component:.0f}x real "
              f"time")


if __name__ == "__main__":
    main()
