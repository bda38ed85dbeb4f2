"""Power bonds in system files (issue 20): every shipped scenario declares them and validates without
the warning for unbonded force/velocity ports; the warning itself; the OSP export writes one bond per
output/input pair, as libcosim takes them (it refuses a bond with more than two connections)."""
from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest
from lxml import etree

from orchestration.runs.reference.paths import ROOT
from orchestration.system.files import load_system
from orchestration.system.model import Component, System
from orchestration.system.osp import read_osp, write_osp
from orchestration.system.validation import validate_system

#: scenario file -> its bonds and their connection counts
SHIPPED = {
    "offshore_lift/offshore_lift.ssd": {"crane_base": 12, "crane_tip": 6, "hook": 6, "winch": 2},
    "deck_landing/deck_landing.ssd": {"crane_base": 12, "crane_tip": 6, "hook": 6, "winch": 2,
                                      "payload_contact": 12, "deck_contact": 12},
    "moored_barge/moored_barge.ssd": {f"fairlead{k}": 6 for k in range(1, 5)},
    "ship_heavy_crane/ship_heavy_crane.ssd": {"crane_base": 12},
    "hook_release/hook_release.ssd": {},
    "offshore_lift/offshore_lift_compliant_cable.ssd": {"crane_base": 12, "crane_tip": 6, "hook": 6, "winch": 2},
    "crane_tip_compensation/crane_tip_compensation.ssd": {"crane_base": 12, "crane_tip": 6, "hook": 6, "winch": 2},
    "crane_tip_compensation/ship_heavy_crane_compensated.ssd": {"crane_base": 12},
    "motion_platform/motion_platform_pid.ssd": {"platform_base": 12, "legs": 6},
    "motion_platform/motion_platform_nmpc.ssd": {"platform_base": 12, "legs": 6},
}


def bond_warnings(report) -> list[str]:
    return [str(p) for p in report.warnings if "without a power bond" in p.message]


@pytest.mark.parametrize("relative", sorted(SHIPPED))
def test_every_shipped_scenario_declares_its_power_bonds(fmu_dir, tmp_path, relative):
    # laid out as a checkout whose build/fmus holds the freshly built FMUs (a clean clone has none)
    shutil.copytree(ROOT / "scenarios", tmp_path / "scenarios")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "fmus").symlink_to(fmu_dir)
    system = load_system(tmp_path / "scenarios" / relative)
    assert Counter(c.power_bond for c in system.connections if c.power_bond) == Counter(SHIPPED[relative])
    report = validate_system(system)
    assert report.ok and not bond_warnings(report), bond_warnings(report)


def hanging(fmu_dir: Path, bond: str | None = "hook") -> System:
    """A payload on a wire: the wire's end force to the payload, its velocity (a bond) and position back."""
    s = System("hanging", stop_time=1.0, base_step=0.01)
    s.add_component(Component("cable", Path(fmu_dir) / "Cable.fmu", {"length": 10.0}))
    s.add_component(Component("payload", Path(fmu_dir) / "Payload.fmu", {"mass": 500.0}))
    for k in range(3):
        s.connect(f"payload.attachment1.position[{k}]", f"cable.end_a.position[{k}]")
        s.connect(f"payload.attachment1.velocity[{k}]", f"cable.end_a.velocity[{k}]", power_bond=bond)
        s.connect(f"cable.end_a.force[{k}]", f"payload.attachment1.force[{k}]", power_bond=bond)
    return s


def test_validate_warns_about_force_and_velocity_without_a_bond(fmu_dir):
    loose = bond_warnings(validate_system(hanging(fmu_dir, bond=None)))
    assert len(loose) == 1
    assert "cable and payload exchange a force" in loose[0] and "ECCO" in loose[0] and "mc:PowerBond" in loose[0]
    assert "cable.end_a.force[0..2] -> payload.attachment1.force[0..2]" in loose[0]
    assert "payload.attachment1.velocity[0..2] -> cable.end_a.velocity[0..2]" in loose[0]
    assert not bond_warnings(validate_system(hanging(fmu_dir)))


def test_osp_export_writes_one_bond_per_scalar_pair(fmu_dir, tmp_path):
    """The vector bond of three velocities one way and three forces back becomes hook.0 .. hook.2
    (velocity[k] with force[k]), each on exactly two VariableConnections with causalities; read
    back, they are three scalar bonds, as libcosim sees them."""
    system = hanging(fmu_dir)
    path = write_osp(system, tmp_path / "osp", power_bonds=True)
    root = etree.parse(str(path)).getroot()
    bonds: dict[str, list] = {}
    for vc in root.iter("{*}VariableConnection"):
        if vc.get("powerBond"):
            bonds.setdefault(vc.get("powerBond"), []).append(
                [(v.get("simulator"), v.get("name"), v.get("causality")) for v in vc])
    assert sorted(bonds) == [f"hook.{k}" for k in range(3)]
    for name, conns in bonds.items():
        assert len(conns) == 2, name
        (s1, n1, c1), (t1, m1, d1) = conns[0]
        (s2, n2, c2), (t2, m2, d2) = conns[1]
        assert (c1, d1, c2, d2) == ("output", "input", "output", "input")
        assert (s1, t1) == (t2, s2)                      # one each way between the same two simulators
        assert n1[-3:] == m1[-3:] == n2[-3:] == m2[-3:]   # the same axis: force[k] with velocity[k]
    back = read_osp(path)
    assert Counter(c.power_bond for c in back.connections if c.power_bond) == {f"hook.{k}": 2 for k in range(3)}


def test_osp_export_refuses_a_bond_it_cannot_pair(fmu_dir, tmp_path):
    from orchestration.system.model import SystemFileError

    system = hanging(fmu_dir)
    system.connections[-1].power_bond = None              # three velocities, two forces
    with pytest.raises(SystemFileError, match="power bond 'hook' has 3 connection"):
        write_osp(system, tmp_path / "osp", power_bonds=True)


def test_osp_export_leaves_out_bonds_libcosim_cannot_load(fmu_dir, tmp_path):
    """libcosim loads one power bond per file: by default the three scalar bonds of the hook are left
    out, with a warning that says why, for the fixed-step algorithm (which does not use them); ECCO
    needs them, so its export is refused; one bond is written."""
    from orchestration.system.model import SystemFileError
    from orchestration.system.osp import ExportWarning

    system = hanging(fmu_dir)
    with pytest.warns(ExportWarning, match=r"libcosim loads at most 1 power bond .* has 3 \(hook.0, hook.1, hook.2\)"):
        path = write_osp(system, tmp_path / "fixed")
    assert not [vc for vc in etree.parse(str(path)).getroot().iter("{*}VariableConnection") if vc.get("powerBond")]
    system.algorithm = "ecco"
    system.algorithm_options = {"safety_factor": 0.99, "step_size": 1e-4, "minimum_step_size": 1e-5,
                                "maximum_step_size": 2e-2, "minimum_change_rate": 0.2, "maximum_change_rate": 1.5,
                                "proportional_gain": 0.2, "integral_gain": 0.15, "relative_tolerance": 1.0,
                                "absolute_tolerance": 1.0}
    with pytest.raises(SystemFileError, match="its ECCO algorithm needs them"):
        write_osp(system, tmp_path / "ecco")
    for c in system.connections:                          # one axis bonded: libcosim takes it
        c.power_bond = "hook" if c.power_bond and c.source[1][-3:] == "[2]" else None
    path = write_osp(system, tmp_path / "one")
    assert sorted(vc.get("powerBond") for vc in etree.parse(str(path)).getroot().iter("{*}VariableConnection")
                  if vc.get("powerBond")) == ["hook", "hook"]
