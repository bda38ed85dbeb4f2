"""``marine-cosim validate`` catches a wrong mapping of a swapped ship (docs/ship_swap.md): each test
feeds one mistake into the correct mapping of the third-party ship (OsvSeakeeper, tests/models/c_fmu)
under the crane -- tests/data/systems/ship_crane_third_party_ship.ssd, a rigid_body port adapter
between them -- and asserts the message; the correct mapping has no errors.
"""
from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import pytest

from orchestration.system.files import load_system
from orchestration.system.model import System, SystemFileError
from orchestration.system.osp import read_osp, write_osp
from orchestration.system.ssp import read_ssp, write_ssp
from orchestration.system.validation import validate_system, vectors
from tests.models.c_fmu.build import build_third_party_ship_fmu
from tests.models.ship_swap import SMALL, variant_path

pytestmark = [pytest.mark.gcc,
              pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build the C FMU")]
VARIANT = variant_path(SMALL, "osp_vessel")
POA = "additionalNedForce.pointOfAttackRel2APAndBL"


@pytest.fixture(scope="module")
def good(fmu_dir, tmp_path_factory) -> System:
    folder = tmp_path_factory.mktemp("osv")
    for fmu in Path(fmu_dir).glob("*.fmu"):
        (folder / fmu.name).symlink_to(fmu)
    build_third_party_ship_fmu(folder)
    text = VARIANT.read_text().replace('source="../../../build/fmus/', f'source="{folder}/')
    text = re.sub(r'(<ssv:String value=")([^"/]+\.json)"', lambda m: f'{m[1]}{VARIANT.parent / m[2]}"', text)
    path = folder / VARIANT.name
    path.write_text(text)
    return load_system(path)


def edited(system: System, drop=(), change: dict | None = None, add=(), params: dict | None = None,
           unset: dict | None = None) -> System:
    """A copy of ``system`` with connections dropped (by target), changed ({target: {field: value}}),
    added, and start values set or removed ({component: [names]})."""
    s = System(system.name, {}, [], system.start_time, system.stop_time, system.base_step)
    s.components = {k: dataclasses.replace(c, parameters=dict(c.parameters)) for k, c in system.components.items()}
    for c in system.connections:
        label = ".".join(c.target)
        if label in drop:
            continue
        s.connections.append(dataclasses.replace(c, **(change or {}).get(label, {})))
    for source, target, kwargs in add:
        s.connect(source, target, **kwargs)
    for comp, values in (params or {}).items():
        s.components[comp].parameters.update(values)
    for comp, names in (unset or {}).items():
        for n in names:
            s.components[comp].parameters.pop(n)
    return s


def errors(system: System) -> list[str]:
    return [str(p) for p in validate_system(system).errors]


def only_error(system: System) -> str:
    found = errors(system)
    assert len(found) == 1, "\n".join(found)
    return found[0]


# ---------------------------------------------------------------------- the correct mapping

def test_the_correct_mapping_is_valid(good):
    report = validate_system(good)
    assert report.ok, report
    text = "\n".join(str(p) for p in report.warnings)
    assert "unit" not in text and "mapped incompletely" not in text and "carries" not in text
    assert "only in part" not in text
    assert all(c.is_identity for c in good.connections)     # the adapter converts, the connections only join
    # the vendor's triads are vectors too
    from fmpy import read_model_description
    md = read_model_description(str(good.components["ship"].source))
    found = vectors(md)
    assert [v.name for v in found["additionalNedForce.force"]] == [
        f"additionalNedForce.force.{a}" for a in ("north", "east", "down")]
    assert [v.name.rsplit(".", 1)[1] for v in found["cgShipMotion.angularDisplacement"]] == ["roll", "pitch", "yaw"]


# ---------------------------------------------------------------------- units

def test_the_adapter_left_in_radians(good):
    """The vendor gives degrees; an adapter left at its default angle unit (rad) takes radians: every
    angle, rate and angular acceleration connection says so, with the factor it would need."""
    found = errors(edited(good, unset={"hull": ["angle_unit"]}))
    assert len(found) == 9, "\n".join(found)
    assert any("(connection ship.cgShipMotion.angularVelocity.roll -> hull.reference.angular_velocity[0]): source "
               "unit deg/s, target unit rad/s, factor 1.0, expected factor 0.017453292519943295 (deg/s -> rad/s; "
               "-0.017453292519943295 to flip the sign): the unit conversion is missing" in m for m in found)


def test_the_adapter_left_in_newtons(good):
    found = errors(edited(good, unset={"hull": ["force_unit"]}))
    assert len(found) == 3, "\n".join(found)
    assert ("(connection hull.reference.force[2] -> ship.additionalNedForce.force.down): source unit N, target unit "
            "kN, factor 1.0, expected factor 0.001 (N -> kN; -0.001 to flip the sign): the unit conversion is "
            "missing") in found[2]


def test_a_conversion_the_wrong_way_round(good):
    s = edited(good, unset={"hull": ["force_unit"]},
               change={f"ship.additionalNedForce.force.{a}": {"factor": 1000.0} for a in ("north", "east", "down")})
    assert "factor 1000.0, expected factor 0.001 (N -> kN; -0.001 to flip the sign): the conversion is the wrong way " \
           "round (kN -> N)" in errors(s)[0]


def test_a_force_into_a_position_input(good):
    m = only_error(edited(good, add=[("crane.base.force[2]", f"ship.{POA}.zpos", {})]))
    assert (f"(connection crane.base.force[2] -> ship.{POA}.zpos): unit mismatch without conversion: "
            f"crane.base.force[2] is a force ('N'), ship.{POA}.zpos is a length ('m'): different quantities") in m


def test_an_adapter_value_that_is_not_one_of_its_choices(good):
    m = only_error(edited(good, params={"hull": {"attitude_world": "NUW"}}))
    assert m.endswith("(component hull): rigid_body adapter: attitude_world = 'NUW' is not one of '', 'NED', 'ENU', "
                      "'NWU'")


# ---------------------------------------------------------------------- names and causality

def test_an_output_connected_to_an_output(good):
    found = errors(edited(good, drop={"ship.additionalNedForce.force.down"},
                          add=[("hull.reference.force[2]", "ship.cgShipMotion.nedDisplacement.down", {})]))
    assert len(found) == 3, found
    assert ("target ship.cgShipMotion.nedDisplacement.down is a output, not an input (it connects two outputs): a "
            "connection ends at an input (close inputs of ship: 'additionalNedForce.force.down'") in found[0]
    assert "hull.reference.force[2] is a force ('kN'), ship.cgShipMotion.nedDisplacement.down is a length" in found[1]
    assert "vector ship.additionalNedForce.force is mapped incompletely" in found[2]


def test_an_unknown_variable_suggests_the_vendors_name(good):
    found = errors(edited(good, change={"ship.additionalNedForce.force.down": {
        "target": ("ship", "additionalNedForce.force.dwn")}}))
    assert ("(connection hull.reference.force[2] -> ship.additionalNedForce.force.dwn): ship (OsvSeakeeper.fmu) has "
            "no variable 'additionalNedForce.force.dwn' (did you mean 'additionalNedForce.force.down'") in found[0]
    assert len(found) == 2 and "vector ship.additionalNedForce.force is mapped incompletely" in found[1]


def test_an_unknown_adapter_port(good):
    found = errors(edited(good, change={"crane.base.velocity[1]": {"source": ("hull", "point1.velocty[1]")}}))
    assert ("hull (rigid_body adapter) has no variable 'point1.velocty[1]' (did you mean 'point1.velocity[1]'"
            in found[0])


def test_an_unknown_variable_in_an_ssd_file(good, tmp_path):
    path = write_ssp(good, tmp_path / "swap.ssd")
    path.write_text(path.read_text().replace('endConnector="additionalNedForce.force.down"',
                                             'endConnector="additionalNedForce.forces.down"'))
    with pytest.raises(SystemFileError) as err:
        read_ssp(path)
    assert ("has no variable 'additionalNedForce.forces.down' (did you mean 'additionalNedForce.force.down'"
            in str(err.value))
    assert "ssd:Connection hull.reference.force[2] -> ship.additionalNedForce.forces.down (line" in str(err.value)


# ---------------------------------------------------------------------- vectors and ports

def test_a_vector_mapped_incompletely(good):
    m = only_error(edited(good, drop={"ship.additionalNedForce.force.down"}))
    assert ("(component ship): vector ship.additionalNedForce.force is mapped incompletely: north, east "
            "connected, down not (keeping the start value: down=0)") in m


def test_a_crane_base_without_velocities_and_accelerations(good):
    """Issue 21: a crane base that gets the ship's position and attitude but nothing else is a warning."""
    drop = {f"crane.base.{w}[{i}]" for w in ("velocity", "angular_velocity", "acceleration", "angular_acceleration")
            for i in range(3)}
    report = validate_system(edited(good, drop=drop))
    assert report.ok
    [m] = [str(p) for p in report.warnings if "only in part" in str(p)]
    assert "(component crane): port crane.base is connected only in part: position, quaternion connected, velocity, " \
           "angular_velocity, acceleration, angular_acceleration not (12 input(s) keep their start values)" in m


def test_the_ship_gets_no_load_back(good):
    loads = {f"ship.additionalNedForce.{w}.{a}" for w in ("force", "moment") for a in ("north", "east", "down")}
    m = only_error(edited(good, drop=loads))
    assert ("(component ship): ship (OsvSeakeeper.fmu) carries hull (reference.position[0..2] <- "
            "pointOfAttackMotion.nedDisplacement.north, pointOfAttackMotion.nedDisplacement.east, "
            "pointOfAttackMotion.nedDisplacement.down), but no load comes back: none of hull's force or moment "
            "outputs (reference.force[0..2], reference.moment[0..2]") in m
    # start values on the ship's force inputs say the one-way coupling is intended
    zero = {f"additionalNedForce.force.{a}": 0.0 for a in ("north", "east", "down")}
    assert errors(edited(good, drop=loads, params={"ship": zero})) == []


def test_the_force_without_its_moment(good):
    """A warning, not an error: a swivelling line end has a force and no moment by design."""
    moments = {f"ship.additionalNedForce.moment.{a}" for a in ("north", "east", "down")}
    report = validate_system(edited(good, drop=moments))
    assert report.ok
    [m] = [str(p) for p in report.warnings if "without its moment" in str(p)]
    assert ("hull.reference.force drives ship.additionalNedForce.force, but hull.reference.moment (the moment about "
            "the same point) drives nothing and ship.additionalNedForce.moment is unconnected: ship gets the force "
            "without its moment") in m


# ---------------------------------------------------------------------- the mapping in files

def test_the_mapping_survives_ssp_and_osp(good, tmp_path):
    """Written as .ssd and as OspSystemStructure.xml (the adapter a Simulator with source
    marine-cosim-adapter:rigid_body) and read back: the same components, start values and connections,
    and still valid."""
    def table(s: System):
        return sorted((c.label(), c.factor, c.offset) for c in s.connections)

    ssd = read_ssp(write_ssp(good, tmp_path / "swap.ssd"))
    osp = read_osp(write_osp(good, tmp_path / "osp"))
    assert table(ssd) == table(osp) == table(good)
    for s in (ssd, osp):
        assert s.components["hull"].adapter == "rigid_body"
        assert s.components["hull"].parameters == good.components["hull"].parameters
        assert validate_system(s).ok
    assert 'source="marine-cosim-adapter:rigid_body"' in (tmp_path / "osp" / "OspSystemStructure.xml").read_text()
