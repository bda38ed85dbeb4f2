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
    target = sys.argv[1] if len(sys.argv) > 1 else build_fmus.ROOT / "build" / "quarter_car"
    for name, path in build_quarter_car_fmus(target).items():
        print(name, path)
