"""``marine-cosim info SHIP.fmu`` recognises the ship interface families (OSP-IS vessel ports, 6-DOF
generalised force, 3-DOF manoeuvring) and prints the port adapter block to paste; pasted into a
system with a crane it validates (docs/ship_swap.md, step 1). ``info adapter:KIND`` lists a kind."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from orchestration.cli.main import main as cli
from orchestration.system.files import load_system
from orchestration.system.validation import validate_system

pytestmark = [pytest.mark.gcc,
              pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build the C FMUs")]


@pytest.fixture(scope="module")
def ships(tmp_path_factory) -> dict[str, Path]:
    from tests.models.c_fmu.build import build_third_party_ship_fmu
    from tests.models.c_fmu.build_fmi1 import build_manoeuvring_ship_fmu
    from tests.models.fmi3.build import build_vessel_6dof_fmu

    out = tmp_path_factory.mktemp("ships")
    return {"osp": build_third_party_ship_fmu(out), "six": build_vessel_6dof_fmu(out),
            "three": build_manoeuvring_ship_fmu(out)}


def info(path, capsys) -> str:
    assert cli(["info", str(path)]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("ship, title, expected", [
    ("osp", "interface profile: OSP-IS vessel ports", ['name="world"><ssv:String value="NED"',
                                                       'name="attitude_world"><ssv:String value="NWU"',
                                                       'name="body"><ssv:String value="FLU"',
                                                       'name="force_unit"><ssv:String value="kN"',
                                                       'startConnector="pointOfAttackMotion.nedDisplacement.north"']),
    ("six", "interface profile: 6-DOF generalised force at the origin", [
        'name="world"><ssv:String value="ENU"', 'name="acceleration_axes"><ssv:String value="body_derivative"',
        'name="load_axes"><ssv:String value="body"', 'endConnector="tau_N"/>']),
    ("three", "interface profile: 3-DOF manoeuvring model", [
        'source="manoeuvring_seakeeping"', 'startConnector="psi" endElement="hull" endConnector="manoeuvring.yaw"',
        'TODO: a seakeeping model gives heave, roll and pitch']),
])
def test_info_recognises_the_family(ship, title, expected, ships, capsys):
    out = info(ships[ship], capsys)
    assert title in out
    for text in expected:
        assert text in out, text
    assert "CHECK (a guess)" not in out          # these FMUs say their conventions


def test_our_ship_has_no_profile(fmu_dir, capsys):
    assert "interface profile" not in info(fmu_dir / "Ship.fmu", capsys)


def test_the_pasted_block_validates(ships, fmu_dir, tmp_path, capsys):
    """The 6-DOF block as printed, pasted into an .ssd with the ship and a crane, the TODO done (the
    crane's connections to point 1, the lever), has no errors and no unit or mapping warning."""
    out = info(ships["six"], capsys)
    block = out[out.index("<!-- 6-DOF"):]
    block = block.replace('<ssv:Parameter name="world">',
                          '<ssv:Parameter name="point1.lever[0]"><ssv:Real value="-24.6"/></ssv:Parameter>\n'
                          '      <ssv:Parameter name="world">')
    components, connections = [], []
    for line in block.splitlines():
        (connections if line.startswith("<ssd:Connection") else components).append(line)
    motion = (("position", 3), ("quaternion", 4), ("velocity", 3), ("angular_velocity", 3), ("acceleration", 3),
              ("angular_acceleration", 3))
    connections += [f'<ssd:Connection startElement="hull" startConnector="point1.{w}[{i}]" endElement="crane" '
                    f'endConnector="base.{w}[{i}]"/>' for w, n in motion for i in range(n)]
    connections += [f'<ssd:Connection startElement="crane" startConnector="base.{w}[{i}]" endElement="hull" '
                    f'endConnector="point1.{w}[{i}]"/>' for w in ("force", "moment") for i in range(3)]
    ssd = f'''<?xml version="1.0" encoding="UTF-8"?>
<ssd:SystemStructureDescription xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription"
    xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon"
    xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues" version="1.0" name="pasted">
  <ssd:System name="pasted">
    <ssd:Elements>
      <ssd:Component name="ship" type="application/x-fmu-sharedlibrary" source="{ships['six']}"/>
      {chr(10).join(components)}
      <ssd:Component name="crane" type="application/x-fmu-sharedlibrary" source="{fmu_dir / 'Crane.fmu'}">
        <ssd:ParameterBindings><ssd:ParameterBinding><ssd:ParameterValues>
          <ssv:ParameterSet version="1.0" name="crane.parameters"><ssv:Parameters>
            <ssv:Parameter name="mechanism"><ssv:String value="knuckle_boom"/></ssv:Parameter>
          </ssv:Parameters></ssv:ParameterSet>
        </ssd:ParameterValues></ssd:ParameterBinding></ssd:ParameterBindings>
      </ssd:Component>
    </ssd:Elements>
    <ssd:Connections>
      {chr(10).join(connections)}
    </ssd:Connections>
  </ssd:System>
</ssd:SystemStructureDescription>
'''
    path = tmp_path / "pasted.ssd"
    path.write_text(ssd)
    report = validate_system(load_system(path))
    assert report.ok, report
    assert not [p for p in report.warnings if "unit" in p.message or "mapped incompletely" in p.message
                or "carries" in p.message or "only in part" in p.message]


def test_info_of_an_adapter_kind(capsys):
    out = info("adapter:rigid_body", capsys)
    assert out.startswith("rigid_body port adapter:")
    assert "angle_unit" in out and "[shapes the interface]" in out and "point1.acceleration[2]" in out
    assert cli(["info", "adapter:rigid"]) == 2
    assert "unknown adapter kind 'rigid' (did you mean 'rigid_body'?)" in capsys.readouterr().err
