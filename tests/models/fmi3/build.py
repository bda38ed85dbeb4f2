"""Build the FMI 3.0 test FMUs (feedthrough3.py, stair3.py) with pythonfmu3."""
from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent


def build_fmi3_fmus(out_dir: Path) -> dict[str, Path]:
    """``Feedthrough3.fmu`` and ``Stair3.fmu`` in ``out_dir``; model name -> path."""
    from pythonfmu3.builder import FmuBuilder

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return {name: Path(FmuBuilder.build_FMU(HERE / script, dest=out))
            for name, script in (("Feedthrough3", "feedthrough3.py"), ("Stair3", "stair3.py"))}
