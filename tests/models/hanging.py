"""Bodies hung on a line (Cable.fmu) as the tests' systems join them: the connections of a body's
point to a cable end, and the torsion pendulum of the cable-torsion tests."""
from __future__ import annotations

from pathlib import Path

from orchestration.system.model import Component, System


def link(system: System, point: str, cable_end: str, attitude: bool = False) -> None:
    """Connect a body's point (``payload.attachment1``) to a cable end (``cable.end_b``): the point's
    position and velocity (NED) into the end, the end's force back into the point. With ``attitude``
    also the body's angular velocity and quaternion into the end (for an end that follows the body's
    attitude, ``end_*.body_attitude``) and the end's moment into the body's ``cg.moment``."""
    body = point.split(".", 1)[0]
    for i in range(3):
        system.connect(f"{point}.position[{i}]", f"{cable_end}.position[{i}]")
        system.connect(f"{point}.velocity[{i}]", f"{cable_end}.velocity[{i}]")
        if attitude:
            system.connect(f"{body}.angular_velocity[{i}]", f"{cable_end}.angular_velocity[{i}]")
        system.connect(f"{cable_end}.force[{i}]", f"{point}.force[{i}]")
        if attitude:
            system.connect(f"{cable_end}.moment[{i}]", f"{body}.cg.moment[{i}]")
    if attitude:
        for i in range(4):
            system.connect(f"{body}.quaternion[{i}]", f"{cable_end}.quaternion[{i}]")


def torsion_pendulum(fmu_dir: Path, GJ: float, L: float, I: float, w0: float) -> System:
    """A 1 t payload of polar inertia ``I`` [kg m2] on ``L`` [m] of cable of torsional stiffness ``GJ``
    [N m2], gravity off, spun at ``w0`` [rad/s]: only the torsion mode moves, at
    omega = sqrt(GJ / (L I))."""
    s = System("torsion_pendulum")
    s.add_component(Component("payload", fmu_dir / "Payload.fmu", {
        "mass": 1000.0, "inertia[0,0]": 2e3, "inertia[1,1]": 2e3, "inertia[2,2]": I, "gravity": 0.0,
        "attachment1.location[2]": -1.0, "initial.position[2]": L + 1.0, "initial.angular_velocity[2]": w0}))
    s.add_component(Component("cable", fmu_dir / "Cable.fmu", {
        "length": L, "diameter": 0.02, "mass_per_length": 1.0, "EA": 1e8, "GJ": GJ, "gravity": 0.0,
        "water_density": 0.0, "n_segments": 5, "end_a.swivel": False, "end_b.swivel": False,
        "end_a.body_attitude": True, "end_b.body_attitude": True, "end_a.position[0]": 0.0,
        "end_a.position[2]": L, "seabed.depth": 100.0}))
    link(s, "payload.attachment1", "cable.end_a", attitude=True)
    return s
