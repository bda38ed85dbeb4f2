"""Build QuarterCarChassis.fmu and QuarterCarWheel.fmu with the project's pipeline (build_fmus.py).

    python -m tests.models.quarter_car.build [OUT_DIR]
"""
from __future__ import annotations

import sys
from pathlib import Path

import build_fmus
from tests.support.fmu_build import build_adapters

HERE = Path(__file__).resolve().parent
ADAPTERS = {"QuarterCarChassis": HERE / "chassis_fmu.py", "QuarterCarWheel": HERE / "wheel_fmu.py"}


def build_quarter_car_fmus(out_dir: Path | str) -> dict[str, Path]:
    """Build both FMUs into ``out_dir``; returns model name -> .fmu path."""
    return build_adapters(ADAPTERS, out_dir)


if __name__ == "__main__":
    if len(sys.argv) > 2 or any(a.startswith("-") for a in sys.argv[1:]):
        print("usage: python -m tests.models.quarter_car.build [OUT_DIR]  (default build/quarter_car)")
        sys.exit(0 if sys.argv[1:] in (["-h"], ["--help"]) else 2)
    target = sys.argv[1] if len(sys.argv) > 1 else build_fmus.ROOT / "build" / "quarter_car"
    for name, path in build_quarter_car_fmus(target).items():
        print(name, path)
