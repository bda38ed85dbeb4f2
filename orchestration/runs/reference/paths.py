"""Where the reference scenarios' files are: the scenarios/ folder of the checkout and build/fmus."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCENARIOS = ROOT / "scenarios"
DEFAULT_FMU_DIR = ROOT / "build" / "fmus"
