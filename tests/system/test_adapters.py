"""Port adapters in system files (orchestration.system.adapters): their interfaces, SSP and OSP
round trips, what validation says about them, and the warning for a mechanical port connected in
part."""
from __future__ import annotations

from pathlib import Path

import pytest

from orchestration.errors import SystemFileError
from orchestration.system.adapters import ADAPTER_TYPE, AdapterError, adapter_description, parameters
from orchestration.system.fmu_info import component_info
from orchestration.system.model import Component, System
from orchestration.system.osp import read_osp, write_osp
from orchestration.system.ssp import read_ssp, write_ssp
from orchestration.system.validation import validate_system

MOTION = (("position", 3), ("quaternion", 4), ("velocity", 3), ("angular_velocity", 3), ("acceleration", 3),
          ("angular_acceleration", 3))


def test_the_interface_follows_the_parameters_that_shape_it():
    md = adapter_description("rigid_body", {"attitude": "euler", "angle_unit": "deg", "points": 3,
                                            "force_unit": "kN", "moment_unit": "kN.m"})
    names = {v.name: v for v in md.modelVariables}
    assert names["reference.euler[2]"].unit == "deg" and names["reference.angular_velocity[0]"].unit == "deg/s"
    assert "reference.quaternion[0]" not in names and names["point1.quaternion[0]"].unit == "1"
    assert "point3.lever[2]" in names and "point3.moment[2]" in names and "point4.force[0]" not in names
    assert names["reference.force[0]"].unit == "kN" and names["reference.moment[0]"].unit == "kN.m"
    deps = {u.variable.name: {d.name for d in u.dependencies} for u in md.outputs}
    assert deps["point2.position[0]"] == {"reference.position[0]", "reference.position[1]", "reference.position[2]",
                                          "reference.euler[0]", "reference.euler[1]", "reference.euler[2]"}
    # no path inside the adapter from its loads to its motion: no algebraic loop of its own
    assert not any(d.startswith("point") for n, ds in deps.items() if n.startswith("point") for d in ds)
    with pytest.raises(AdapterError, match="angle_unit = 'grad' is not one of 'rad', 'deg'"):
        parameters("rigid_body", {"angle_unit": "grad"})
    with pytest.raises(AdapterError, match="euler_sequence = 'zyz' is not a sequence"):
        parameters("rigid_body", {"euler_sequence": "zyz"})
    with pytest.raises(AdapterError, match="points = 0 must be a whole number from 1 to 16"):
        parameters("rigid_body", {"points": 0})
    with pytest.raises(AdapterError, match="NED goes with FRD"):
        parameters("manoeuvring_seakeeping", {"world": "NED", "body": "FLU"})
    with pytest.raises(AdapterError, match="unknown adapter kind 'rigid_bdy' .*did you mean 'rigid_body'"):
        parameters("rigid_bdy")


def ship_and_adapters(fmu_dir: Path) -> System:
    """Ship.fmu -> rigid_body (point 1 30 m aft, point 2 with a constant load) -> crane, the crane's
    load back through the adapter into the ship's origin (kN, kN.m there: converted by the
    connections)."""
    s = System("adapted", start_time=0.0, stop_time=1.0, base_step=0.05, algorithm="fixed",
               algorithm_options={"method": "gauss-seidel"})
    s.add_component(Component("ship", fmu_dir / "Ship.fmu", {"sea.spectrum": 0,
                                                             **{f"hardpoint1.location[{i}]": 0.0 for i in range(3)}}))
    s.add_component(Component("hull", None, {"points": 2, "point1.lever[0]": -30.0, "point1.lever[2]": -8.0,
                                             "point2.lever[1]": -8.0, "point2.force[2]": 1.0e6, "force_unit": "kN",
                                             "moment_unit": "kN.m"}, adapter="rigid_body"))
    s.add_component(Component("crane", fmu_dir / "Crane.fmu", {"mechanism": "knuckle_boom"}))
    for w, n in MOTION:
        for i in range(n):
            s.connect(f"ship.{w}[{i}]", f"hull.reference.{w}[{i}]")
            s.connect(f"hull.point1.{w}[{i}]", f"crane.base.{w}[{i}]")
    for i in range(3):
        s.connect(f"crane.base.force[{i}]", f"hull.point1.force[{i}]")
        s.connect(f"crane.base.moment[{i}]", f"hull.point1.moment[{i}]")
        s.connect(f"hull.reference.force[{i}]", f"ship.hardpoint1.force[{i}]", factor=1000.0, converts_units=True)
        s.connect(f"hull.reference.moment[{i}]", f"ship.hardpoint1.moment[{i}]", factor=1000.0,
                  converts_units=True)
    return s


def table(s: System):
    return sorted((c.label(), round(c.factor, 12), round(c.offset, 12)) for c in s.connections)


@pytest.mark.parametrize("suffix", [".ssd", ".ssp"])
def test_ssp_round_trip(fmu_dir, tmp_path, suffix):
    s = ship_and_adapters(fmu_dir)
    path = write_ssp(s, tmp_path / f"adapted{suffix}")
    if suffix == ".ssd":
        text = path.read_text()
        assert f'<ssd:Component name="hull" type="{ADAPTER_TYPE}" source="rigid_body">' in text
        assert '<ssv:String value="kN.m"/>' in text and "<mc:File" not in text
    back = read_ssp(path)
    for name in ("hull",):
        assert back.components[name].adapter == s.components[name].adapter
        assert back.components[name].source is None
        assert back.components[name].parameters == s.components[name].parameters
    assert isinstance(back.components["hull"].parameters["moment_unit"], str)
    assert table(back) == table(s)
    assert validate_system(back).ok


def test_osp_round_trip(fmu_dir, tmp_path):
    s = ship_and_adapters(fmu_dir)
    path = write_osp(s, tmp_path / "osp")
    text = path.read_text()
    assert 'source="marine-cosim-adapter:rigid_body"' in text
    assert not list((tmp_path / "osp").glob("*adapter*_OspModelDescription.xml"))
    back = read_osp(path)
    assert back.components["hull"].adapter == "rigid_body" and back.components["hull"].parameters == \
        s.components["hull"].parameters
    assert table(back) == table(s)


def test_an_adapter_in_an_ssd_is_checked_when_read(fmu_dir, tmp_path):
    s = ship_and_adapters(fmu_dir)
    good = write_ssp(s, tmp_path / "good.ssd").read_text()
    cases = [
        (good.replace('source="rigid_body"', 'source="rigid_bdy"'),
         "unknown adapter kind source='rigid_bdy' (did you mean 'rigid_body'?)"),
        (good.replace('<ssv:String value="kN.m"/>', '<ssv:String value="kNm"/>'),
         "rigid_body adapter: moment_unit = 'kNm' is not one of 'N.m', 'kN.m', 'MN.m'"),
        (good.replace('startConnector="point1.velocity[1]"', 'startConnector="point1.velocty[1]"'),
         "component 'hull' (rigid_body adapter) has no variable 'point1.velocty[1]' (did you mean "
         "'point1.velocity[1]'"),
    ]
    for k, (text, message) in enumerate(cases):
        path = tmp_path / f"bad{k}.ssd"
        path.write_text(text)
        with pytest.raises(SystemFileError) as info:
            read_ssp(path)
        assert message in str(info.value)
        assert f"bad{k}.ssd" in str(info.value)


def test_validation_of_adapters(fmu_dir):
    s = ship_and_adapters(fmu_dir)
    report = validate_system(s)
    assert report.ok, report
    s.components["hull"].parameters["lever[0]"] = 1.0
    errors = [str(p) for p in validate_system(s).errors]
    assert len(errors) == 1 and errors[0].startswith(
        "error: adapted (component hull): start value for unknown variable 'lever[0]' (did you mean ")
    assert "'point1.lever[0]'" in errors[0]
    del s.components["hull"].parameters["lever[0]"]
    s.components["hull"].parameters["load_axes"] = "NED"
    errors = [str(p) for p in validate_system(s).errors]
    assert errors == ["error: adapted (component hull): rigid_body adapter: load_axes = 'NED' is not one of 'world', "
                      "'body'"]
    s.components["hull"].parameters["load_axes"] = "body"
    assert component_info(s.components["hull"]).variables["point1.position[0]"].causality == "output"


def test_a_crane_base_connected_in_part_is_a_warning(fmu_dir):
    """Issue 21: a crane base that gets a position and nothing else (22 inputs at zero) is reported."""
    s = System("partial", start_time=0.0, stop_time=1.0, base_step=0.05)
    s.add_component(Component("ship", fmu_dir / "Ship.fmu", {"sea.spectrum": 0}))
    s.add_component(Component("crane", fmu_dir / "Crane.fmu", {"mechanism": "knuckle_boom",
                                                               "base.force[0]": 0.0}))
    for i in range(3):
        s.connect(f"ship.hardpoint1.position[{i}]", f"crane.base.position[{i}]")
    for i in range(4):
        s.connect(f"ship.hardpoint1.quaternion[{i}]", f"crane.base.quaternion[{i}]")
    warnings = [str(p) for p in validate_system(s).warnings if "connected only in part" in str(p)]
    assert warnings == ["warning: partial (component crane): port crane.base is connected only in part: position, "
                        "quaternion connected, velocity, angular_velocity, acceleration, angular_acceleration not "
                        "(12 input(s) keep their start values): it follows a motion without the rates or "
                        "accelerations that go with it; connect them, or give them start values in the system file if "
                        "that is intended"]
    for w in ("velocity", "angular_velocity", "acceleration", "angular_acceleration"):
        for i in range(3):
            s.connect(f"ship.hardpoint1.{w}[{i}]", f"crane.base.{w}[{i}]")
    assert not [p for p in validate_system(s).warnings if "connected only in part" in str(p)]
