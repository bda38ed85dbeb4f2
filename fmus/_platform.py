"""Platform parameters shared by the MotionPlatform FMU and its controller (the same names and defaults, so
a system file that sets them identically gives the controller the plant's geometry and inertia)."""
from __future__ import annotations

import math

from components.platform import Cylinders, SarrusGeometry, platform_inertia

GEOMETRY = (  # parameter, SarrusGeometry field, unit, description
    ("linkage.r_base", "r_base", "m", "Radius of the lower arms' deck hinges b1"),
    ("linkage.r_platform", "r_platform", "m", "Radius of the cardan joints on the platform (its base plane)"),
    ("linkage.arm_lower", "arm_lower", "m", "Length of the lower arms |d1|"),
    ("linkage.arm_upper", "arm_upper", "m", "Length of the upper arms |d2|"),
    ("linkage.alpha", "alpha", "1", "Where the cylinder acts on the upper arm (0 at the platform, 1 at the knee)"),
    ("cylinder.r_base", "r_cylinder", "m", "Radius of the cylinders' deck pivots b2"),
    ("cylinder.z_base", "z_cylinder", "m", "Height of the cylinders' deck pivots (deck frame z, < 0 above the deck)"),
)


def declare_platform(slave) -> None:
    """Declare the platform's geometry, inertia and cylinder parameters on an fmus._base.Fmi2Slave."""
    P = "parameter"
    d = SarrusGeometry()
    for name, field, unit, desc in GEOMETRY:
        slave.real(name, P, getattr(d, field), unit, desc)
    slave.real("cylinder.stroke_min", P, d.stroke[0], "m", "Shortest leg (cylinder) length", minimum=0.0)
    slave.real("cylinder.stroke_max", P, d.stroke[1], "m", "Longest leg (cylinder) length", minimum=0.0)
    c = Cylinders()
    slave.real("cylinder.force_min", P, c.f_min, "N", "Smallest cylinder force (pulling)")
    slave.real("cylinder.force_max", P, c.f_max, "N", "Largest cylinder force (pushing)")
    slave.real("platform.mass", P, 1.0e6, "kg", "Mass of the platform and its load (the thesis' 1000 t tower, "
                                                "distributed as its RBinertias.m)", minimum=0.0)
    slave.real("initial.x", P, [-8.0, 0.0, 0.0], "1", "Initial heave (m, deck z: < 0 above the deck), roll and "
                                                     "pitch (rad) of the platform relative to the deck", size=3)


def geometry(v: dict) -> SarrusGeometry:
    return SarrusGeometry(**{field: v[name] for name, field, *_ in GEOMETRY},
                          stroke=(v["cylinder.stroke_min"], v["cylinder.stroke_max"]))


def check_platform(v: dict) -> list[tuple[str, object, str]]:
    problems = [(f"linkage/cylinder.{n}", value, why) for n, value, why in geometry(v).problems()]
    if not v["platform.mass"] > 0.0:
        problems.append(("platform.mass", v["platform.mass"], "must be positive"))
    if not v["cylinder.force_min"] < v["cylinder.force_max"]:
        problems.append(("cylinder.force_min", v["cylinder.force_min"], "must be below cylinder.force_max"))
    if not all(math.isfinite(float(x)) for x in v["initial.x"]):
        problems.append(("initial.x", list(v["initial.x"]), "must be finite"))
    return problems


def inertia(v: dict):
    return platform_inertia(v["platform.mass"])


def cylinders(v: dict) -> Cylinders:
    return Cylinders(v["cylinder.force_min"], v["cylinder.force_max"])
