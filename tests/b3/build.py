"""Build the two B3 FMUs (B3Platform.fmu, B3Boat.fmu) with the project's pipeline (build_fmus.py)."""
from __future__ import annotations

import sys
from pathlib import Path

import build_fmus
from tests.fmu_build import build_adapters

HERE = Path(__file__).resolve().parent
ADAPTERS = {"B3Platform": HERE / "platform_fmu.py", "B3Boat": HERE / "boat_fmu.py"}


def build_b3_fmus(out_dir: Path | str) -> dict[str, Path]:
    """Build both FMUs into ``out_dir``; returns model name -> .fmu path."""
    return build_adapters(ADAPTERS, out_dir)


if __name__ == "__main__":
    for name, path in build_b3_fmus(sys.argv[1] if len(sys.argv) > 1 else build_fmus.ROOT / "build" / "b3").items():
        print(name, path)
