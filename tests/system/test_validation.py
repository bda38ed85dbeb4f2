"""Validation before running: one clear message per problem, naming file, element and variable."""
from __future__ import annotations

from pathlib import Path


from orchestration.system.model import Component, System
from orchestration.system.validation import validate_system


def system(payload_fmu, *connections, **components) -> System:
    s = System("t", source_file=Path("plant.ssd"))
    for name in components or ("a", "b"):
        s.add_component(Component(name, payload_fmu, origin=f"plant.ssd: Component {name} (line 3)"))
    for k, (src, dst, kwargs) in enumerate(connections):
        s.connect(src, dst, origin=f"plant.ssd: Connection #{k + 1} (line {10 + k})", **kwargs)
    return s


def messages(report, severity="error") -> list[str]:
    return [str(p) for p in report.problems if p.severity == severity]


def test_a_good_system_has_no_errors(payload_fmu):
    report = validate_system(system(payload_fmu, ("a.attachment1.position[2]", "b.water.elevation", {"factor": -1.0})))
    assert report.ok, report
    # unconnected inputs are warnings, naming the input
    [warning] = [m for m in messages(report, "warning") if "component b" in m]
    assert "not connected" in warning and "cg.force[0..2]" in warning and "water.elevation" not in warning


def test_unknown_fmu_file(tmp_path):
    s = System("t")
    s.add_component(Component("ship", tmp_path / "Ship.fmu", origin="plant.ssd: Component ship (line 4)"))
    [m] = messages(validate_system(s))
    assert "plant.ssd: Component ship (line 4)" in m and "FMU file not found" in m and "Ship.fmu" in m


def test_unknown_variable_suggests_the_right_one(payload_fmu):
    [m] = messages(validate_system(system(payload_fmu, ("a.cg.positon[2]", "b.cg.force[2]", {}))))
    assert "Connection #1 (line 10)" in m and "'cg.positon[2]'" in m and "cg.position[2]" in m


def test_unknown_component(payload_fmu):
    [m] = messages(validate_system(system(payload_fmu, ("crane.tip.position[2]", "b.cg.force[2]", {}))))
    assert "unknown source component 'crane'" in m


def test_causality_mismatch(payload_fmu):
    errors = messages(validate_system(system(payload_fmu, ("a.cg.force[2]", "b.mass", {}))))
    assert any("source a.cg.force[2] is a input, not an output" in m for m in errors)
    assert any("target b.mass is a parameter, not an input" in m for m in errors)


def test_unit_mismatch_without_conversion(payload_fmu):
    [m] = messages(validate_system(system(payload_fmu, ("a.cg.velocity[2]", "b.cg.force[2]", {}))))
    assert "unit mismatch" in m and "'m/s'" in m and "'N'" in m
    # an explicit linear transformation or a unit conversion is accepted
    assert validate_system(system(payload_fmu, ("a.cg.velocity[2]", "b.cg.force[2]", {"factor": 500.0}))).ok


def test_input_connected_twice(payload_fmu):
    errors = messages(validate_system(system(payload_fmu, ("a.attachment1.position[2]", "b.cg.force[2]", {}),
                                             ("a.attachment2.position[2]", "b.cg.force[2]", {}))))
    assert any("connected twice" in m and "b.cg.force[2]" in m and "a.attachment1.position[2]" in m for m in errors)


def test_algebraic_loop_is_reported_with_its_cycle(payload_fmu):
    # accelerations depend directly on forces: a.acc -> b.force -> b.acc -> a.force -> a.acc
    s = system(payload_fmu, ("a.cg.acceleration[2]", "b.cg.force[2]", {"factor": 1.0, "converts_units": True}),
               ("b.cg.acceleration[2]", "a.cg.force[2]", {"factor": 1.0, "converts_units": True}))
    report = validate_system(s)
    loop = [m for m in messages(report, "warning") if "algebraic loop" in m]
    assert len(loop) == 1 and report.ok      # reported with its cycle; explicit masters can still run it
    assert ("a.cg.acceleration[2] -> b.cg.force[2] -> b.cg.acceleration[2] -> a.cg.force[2] -> a.cg.acceleration[2]"
            in loop[0])


def test_no_loop_through_state_outputs(payload_fmu):
    s = system(payload_fmu, ("a.attachment1.position[2]", "b.attachment1.force[2]", {"factor": 1e4}),
               ("b.attachment1.position[2]", "a.attachment1.force[2]", {"factor": 1e4}))
    assert not [m for m in messages(validate_system(s)) if "loop" in m]


def test_bad_start_values(payload_fmu):
    s = System("t")
    s.add_component(Component("a", payload_fmu, {"mas": 3.0, "cg.position[0]": 1.0}, origin="x.ssd: Component a"))
    errors = messages(validate_system(s))
    assert any("unknown variable 'mas'" in m and "'mass'" in m for m in errors)
    assert any("'cg.position[0]' is a continuous output" in m for m in errors)
