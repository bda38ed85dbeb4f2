"""Build the plain-C FMI 1.0 co-simulation FMUs: the Oscillator (oscillator_fmi1.c +
modelDescription_fmi1.xml) into ``Oscillator1.fmu``, the 3-DOF manoeuvring ship
(manoeuvring_ship_fmi1.c + manoeuvring_ship_fmi1.xml) into ``ManoeuvringShip1.fmu``.

The FMU is compiled with gcc from the one C file (with the model it shares with the FMI 2.0
Oscillator, oscillator_model.h, expanded into it, as in build.py), which declares the FMI 1.0
co-simulation API itself (every function exported as ``Oscillator1_fmi...``), so no header is
needed; no Python and no code from this project goes into it.

    python -m tests.models.c_fmu.build_fmi1 OUT_DIR [oscillator|ship]
"""
from __future__ import annotations

import sys
from pathlib import Path

from tests.models.c_fmu.build import build_c_fmu, build_main

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "oscillator_fmi1.c"
MODEL_DESCRIPTION = HERE / "modelDescription_fmi1.xml"
MODEL_IDENTIFIER = "Oscillator1"


def build_oscillator_fmi1_fmu(out_dir: Path) -> Path:
    """Compile ``oscillator_fmi1.c`` and package it as ``out_dir/Oscillator1.fmu``; returns that path.

    The archive holds ``modelDescription.xml`` (from ``modelDescription_fmi1.xml``),
    ``binaries/linux64/Oscillator1.so`` and ``sources/oscillator_fmi1.c``. Raises
    :class:`FmuBuildError` with the reason if it cannot be built.
    """
    return build_c_fmu(SOURCE, MODEL_DESCRIPTION, MODEL_IDENTIFIER, out_dir)


def build_manoeuvring_ship_fmu(out_dir: Path) -> Path:
    """Compile ``manoeuvring_ship_fmi1.c`` and package it as ``out_dir/ManoeuvringShip1.fmu``: the
    third-party 3-DOF manoeuvring ship of the ship swap (docs/ship_swap.md). Raises FmuBuildError."""
    return build_c_fmu(HERE / "manoeuvring_ship_fmi1.c", HERE / "manoeuvring_ship_fmi1.xml", "ManoeuvringShip1",
                       out_dir)


def main(argv: list[str] | None = None) -> int:
    return build_main(argv, "python -m tests.models.c_fmu.build_fmi1 OUT_DIR [oscillator|ship]",
                      {"oscillator": build_oscillator_fmi1_fmu, "ship": build_manoeuvring_ship_fmu})


if __name__ == "__main__":
    sys.exit(main())
