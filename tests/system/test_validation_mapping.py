"""``marine-cosim validate`` catches a wrong mapping of a swapped ship (docs/ship_swap.md): each test
feeds one mistake into the correct mapping of the third-party ship (OsvSeakeeper, tests/models/c_fmu) under
the crane and asserts the message; the correct mapping has no errors.
"""
from __future__ import annotations

import dataclasses
import math
import shutil

import pytest

from orchestration.system.osp import read_osp, write_osp
from orchestration.system.ssp import read_ssp, write_ssp
from orchestration.system.model import System, SystemFileError
from orchestration.system.validation import validate_system, vectors
from tests.models.c_fmu.build import build_third_party_ship_fmu
from tests.models.ship_swap import POA, ship_crane_system, swap_ship

pytestmark = [pytest.mark.gcc,
              pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build the C FMU")]
DEG = math.pi / 180.0


@pytest.fixture(scope="module")
def ship_fmu(tmp_path_factory):
    return build_third_party_ship_fmu(tmp_path_factory.mktemp("osv"))


@pytest.fixture(scope="module")
def good(fmu_dir, ship_fmu) -> System:
    return swap_ship(ship_crane_system(fmu_dir), ship_fmu)


def edited(system: System, drop=(), change: dict | None = None, add=(), params: dict | None = None,
           unset: dict | None = None) -> System:
    """A copy of ``system`` with connections dropped (by target), changed ({target: {field: value}}),
    added, and start values set or removed ({component: [names]})."""
    s = System(system.name, dict(system.components), [], system.start_time, system.stop_time, system.base_step)
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
    # the vendor's triads are vectors too
    from fmpy import read_model_description
    md = read_model_description(str(good.components["ship"].source))
    found = vectors(md)
    assert [v.name for v in found["additionalNedForce.force"]] == [
        f"additionalNedForce.force.{a}" for a in ("north", "east", "down")]
    assert [v.name.rsplit(".", 1)[1] for v in found["cgShipMotion.angularDisplacement"]] == ["roll", "pitch", "yaw"]


# ---------------------------------------------------------------------- units

def test_degrees_into_radians_without_the_conversion(good):
    m = only_error(edited(good, change={"crane.base.angular_velocity[0]": {"factor": 1.0, "converts_units": False}}))
    assert ("(connection ship.cgShipMotion.angularVelocity.roll -> crane.base.angular_velocity[0]): source unit "
            "deg/s, target unit rad/s, factor 1.0, expected factor 0.017453292519943295 (deg/s -> rad/s; "
            "-0.017453292519943295 to flip the sign): the unit conversion is missing") in m


def test_a_conversion_the_wrong_way_round(good):
    m = only_error(edited(good, change={"ship.additionalNedForce.force.down": {"factor": 1000.0}}))
    assert ("crane.base.force[2] -> ship.additionalNedForce.force.down): source unit N, target unit kN, factor "
            "1000.0, expected factor 0.001 (N -> kN; -0.001 to flip the sign): the conversion is the wrong way "
            "round (kN -> N)") in m


def test_a_conversion_applied_twice(good):
    m = only_error(edited(good, change={"ship.additionalNedForce.moment.north": {"factor": 1e-6}}))
    assert "source unit N.m, target unit kN.m, factor 1e-06, expected factor 0.001" in m
    assert "the conversion is applied twice" in m


def test_a_sign_flip_and_an_offset_are_mapping_not_mistakes(good):
    s = edited(good, change={"crane.base.angular_velocity[1]": {"factor": -DEG},
                             "crane.base.position[2]": {"offset": -1.3}})
    assert errors(s) == []
    # an unusual gain on top of a conversion is only a warning
    report = validate_system(edited(good, change={"ship.additionalNedForce.force.north": {"factor": 2e-3}}))
    assert report.ok and any("a gain of 2 on top of the unit conversion" in str(p) for p in report.warnings)


def test_a_force_into_a_position_input(good):
    m = only_error(edited(good, add=[("crane.base.force[2]", f"ship.{POA}.zpos", {})]))
    assert (f"(connection crane.base.force[2] -> ship.{POA}.zpos): unit mismatch without conversion: "
            f"crane.base.force[2] is a force ('N'), ship.{POA}.zpos is a length ('m'): different quantities") in m


# ---------------------------------------------------------------------- names and causality

def test_an_output_connected_to_an_output(good):
    found = errors(edited(good, drop={"ship.additionalNedForce.force.down"},
                          add=[("crane.base.force[2]", "ship.cgShipMotion.nedDisplacement.down",
                                {"factor": 1e-3, "converts_units": True})]))
    assert len(found) == 2, found
    assert ("target ship.cgShipMotion.nedDisplacement.down is a output, not an input (it connects two outputs): a "
            "connection ends at an input (close inputs of ship: 'additionalNedForce.force.down'") in found[0]
    # and the force vector it should have completed
    assert "vector ship.additionalNedForce.force is mapped incompletely" in found[1]


def test_an_unknown_variable_suggests_the_vendors_name(good):
    found = errors(edited(good, change={"ship.additionalNedForce.force.down": {
        "target": ("ship", "additionalNedForce.force.dwn")}}))
    assert ("(connection crane.base.force[2] -> ship.additionalNedForce.force.dwn): ship (OsvSeakeeper.fmu) has no "
            "variable 'additionalNedForce.force.dwn' (did you mean 'additionalNedForce.force.down'") in found[0]
    assert len(found) == 2 and "vector ship.additionalNedForce.force is mapped incompletely" in found[1]


def test_an_unknown_variable_in_an_ssd_file(good, tmp_path):
    path = write_ssp(good, tmp_path / "swap.ssd")
    path.write_text(path.read_text().replace('endConnector="additionalNedForce.force.down"',
                                             'endConnector="additionalNedForce.forces.down"'))
    with pytest.raises(SystemFileError) as err:
        read_ssp(path)
    assert ("has no variable 'additionalNedForce.forces.down' (did you mean 'additionalNedForce.force.down'"
            in str(err.value))
    assert "ssd:Connection crane.base.force[2] -> ship.additionalNedForce.forces.down (line" in str(err.value)


# ---------------------------------------------------------------------- vectors and ports

def test_a_vector_mapped_incompletely(good):
    m = only_error(edited(good, drop={"ship.additionalNedForce.force.down"}))
    assert ("(component ship): vector ship.additionalNedForce.force is mapped incompletely: north, east "
            "connected, down not (keeping the start value: down=0)") in m


def test_the_quaternion_scalar_needs_its_start_value(good):
    m = only_error(edited(good, unset={"crane": ["base.quaternion[0]"]}))
    assert "vector crane.base.quaternion is mapped incompletely: [1], [2], [3] connected, [0] not" in m


def test_the_ship_gets_no_load_back(good):
    loads = {f"ship.additionalNedForce.{w}.{a}" for w in ("force", "moment") for a in ("north", "east", "down")}
    m = only_error(edited(good, drop=loads))
    assert ("(component ship): ship (OsvSeakeeper.fmu) carries crane (base.position[0..2] <- "
            "pointOfAttackMotion.nedDisplacement.north, pointOfAttackMotion.nedDisplacement.east, "
            "pointOfAttackMotion.nedDisplacement.down), but no load comes back: none of crane's force or moment "
            "outputs (base.force[0..2], base.moment[0..2]") in m
    assert "drives ship's force inputs (additionalNedForce.force.north" in m
    # start values on the ship's force inputs say the one-way coupling is intended
    zero = {f"additionalNedForce.force.{a}": 0.0 for a in ("north", "east", "down")}
    assert errors(edited(good, drop=loads, params={"ship": zero})) == []


def test_the_force_without_its_moment(good):
    """A warning, not an error: a swivelling line end has a force and no moment by design."""
    moments = {f"ship.additionalNedForce.moment.{a}" for a in ("north", "east", "down")}
    report = validate_system(edited(good, drop=moments))
    assert report.ok
    [m] = [str(p) for p in report.warnings if "without its moment" in str(p)]
    assert ("crane.base.force drives ship.additionalNedForce.force, but crane.base.moment (the moment about the "
            "same point) drives nothing and ship.additionalNedForce.moment is unconnected: ship gets the force "
            "without its moment") in m


# ---------------------------------------------------------------------- the mapping in files

def test_the_mapping_survives_ssp_and_osp(good, tmp_path):
    """Written as .ssd and as OspSystemStructure.xml (LinearTransformation functions) and read back:
    the same factors and offsets, and still valid."""
    def table(s: System):
        return sorted((c.label(), round(c.factor, 15), round(c.offset, 12)) for c in s.connections)

    ssd = read_ssp(write_ssp(good, tmp_path / "swap.ssd"))
    osp = read_osp(write_osp(good, tmp_path / "osp"))
    assert table(ssd) == table(osp) == table(good)
    assert validate_system(osp).ok and validate_system(ssd).ok
    text = (tmp_path / "osp" / "OspSystemStructure.xml").read_text()
    assert '<LinearTransformation name="unitConversion' in text and 'factor="0.001"' in text
