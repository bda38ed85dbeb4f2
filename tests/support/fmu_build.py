"""Build test FMUs from adapter scripts outside fmus/ with the project's pipeline (build_fmus.py)."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import build_fmus


def build_adapters(adapters: dict[str, Path], out_dir: Path | str) -> dict[str, Path]:
    """Build each ``model name -> adapter script`` into ``out_dir``; returns model name -> .fmu path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    # pythonfmu imports the adapter: it must see this checkout's fmus package
    if str(build_fmus.ROOT) not in sys.path:
        sys.path.insert(0, str(build_fmus.ROOT))
    built = {}
    with tempfile.TemporaryDirectory(prefix="marine_cosim_test_fmus_") as tmp:
        workdir = Path(tmp)
        loader = build_fmus.compile_loader(workdir)
        for model, script in adapters.items():
            built[model] = build_fmus.build_fmu(model, script, out, loader, workdir)
    return built
