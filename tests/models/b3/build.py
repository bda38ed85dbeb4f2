"""Build the two B3 FMUs (B3Platform.fmu, B3Boat.fmu) with the project's pipeline (build_fmus.py)."""
from __future__ import annotations

import sys
from pathlib import Path

import build_fmus
from tests.support.fmu_build import build_adapters

HERE = Path(__file__).resolve().parent
ADAPTERS = {"B3Platform": HERE / "platform_fmu.py", "B3Boat": HERE / "boat_fmu.py"}


def b3_system(fmus: dict[str, Path], case: str = "T3-3"):
    """Platform and boat FMUs joined as B3 splits them (angle and rate to the platform, torque back);
    torque and rate form the power bond ``roll`` (ECCO)."""
    from orchestration.system.model import Component, System
    from tests.models.b3 import model as b3

    p = b3.TABLES[case]
    s = System("b3")
    s.add_component(Component("P", fmus["B3Platform"], parameters=b3.platform_parameters(p)))
    s.add_component(Component("B", fmus["B3Boat"], parameters=b3.boat_parameters(p, "torque")))
    s.connect("B.angle", "P.boat_angle")
    s.connect("B.rate", "P.boat_rate", power_bond="roll")
    s.connect("P.torque", "B.torque", power_bond="roll")
    return s


def build_b3_fmus(out_dir: Path | str) -> dict[str, Path]:
    """Build both FMUs into ``out_dir``; returns model name -> .fmu path."""
    return build_adapters(ADAPTERS, out_dir)


if __name__ == "__main__":
    for name, path in build_b3_fmus(sys.argv[1] if len(sys.argv) > 1 else build_fmus.ROOT / "build" / "b3").items():
        print(name, path)
