"""Build QuarterCarChassis.fmu and QuarterCarWheel.fmu with the project's pipeline (build_fmus.py).

    python -m tests.data.quarter_car.build [OUT_DIR]
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import build_fmus

HERE = Path(__file__).resolve().parent
ADAPTERS = {"QuarterCarChassis": HERE / "chassis_fmu.py", "QuarterCarWheel": HERE / "wheel_fmu.py"}


def build_quarter_car_fmus(out_dir: Path | str) -> dict[str, Path]:
    """Build both FMUs into ``out_dir``; returns model name -> .fmu path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    # pythonfmu imports the adapter: it must see this checkout's fmus package
    if str(build_fmus.ROOT) not in sys.path:
        sys.path.insert(0, str(build_fmus.ROOT))
    built = {}
    with tempfile.TemporaryDirectory(prefix="marine_cosim_quarter_car_") as tmp:
        workdir = Path(tmp)
        loader = build_fmus.compile_loader(workdir)
        for model, script in ADAPTERS.items():
            built[model] = build_fmus.build_fmu(model, script, out, loader, workdir)
    return built


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else build_fmus.ROOT / "build" / "quarter_car"
    for name, path in build_quarter_car_fmus(target).items():
        print(name, path)
