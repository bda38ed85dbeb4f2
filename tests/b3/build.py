"""Build the two B3 FMUs (B3Platform.fmu, B3Boat.fmu) with the project's pipeline (build_fmus.py)."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import build_fmus

HERE = Path(__file__).resolve().parent
ADAPTERS = {"B3Platform": HERE / "platform_fmu.py", "B3Boat": HERE / "boat_fmu.py"}


def build_b3_fmus(out_dir: Path | str) -> dict[str, Path]:
    """Build both FMUs into ``out_dir``; returns model name -> .fmu path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    # pythonfmu imports the adapter: it must see this checkout's fmus package
    if str(build_fmus.ROOT) not in sys.path:
        sys.path.insert(0, str(build_fmus.ROOT))
    built = {}
    with tempfile.TemporaryDirectory(prefix="marine_cosim_b3_") as tmp:
        workdir = Path(tmp)
        loader = build_fmus.compile_loader(workdir)
        for model, script in ADAPTERS.items():
            built[model] = build_fmus.build_fmu(model, script, out, loader, workdir)
    return built


if __name__ == "__main__":
    for name, path in build_b3_fmus(sys.argv[1] if len(sys.argv) > 1 else build_fmus.ROOT / "build" / "b3").items():
        print(name, path)
