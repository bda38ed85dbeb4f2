"""Regenerate the reference scenarios' system and events files from their builders.

    python scenarios/write_systems.py [offshore_lift|deck_landing|moored_barge ...] [--fmus build/fmus]

Writes ``scenarios/<name>/<name>.ssd`` and ``events.yaml`` (and the lift crane's mechanism file)
from orchestration.runs.reference (lift.py, landing.py, barge.py), where every number has its
reason. A developer tool: the files are committed, users only run them.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from orchestration.runs.reference import DEFAULT_FMU_DIR, NAMES, write_systems  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="scenarios (default: all)")
    parser.add_argument("--fmus", type=Path, default=DEFAULT_FMU_DIR, help="FMU folder the files point at")
    args = parser.parse_args(argv)
    for path in write_systems(args.names or NAMES, args.fmus):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
