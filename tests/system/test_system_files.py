"""System files: SSP (.ssd/.ssp) and OSP (OspSystemStructure.xml) read into and written from System.

* round trips System -> file -> System for .ssd, zipped .ssp and OSP;
* the hand-written files in tests/data/systems/ (an .ssd with an .ssv parameter file, an .ssm
  mapping, unit conversions, a relay through a system connector, power bonds; an OSP file with a
  VariableGroupConnection and a LinearTransformation function) read into the expected System;
* error messages name the file, the element and the value;
* written files are accepted by other tools: the .ssd validates against the SSP 1.0 XSD (shipped
  with FMPy), FMPy reads the .ssp, and libcosim loads and runs both the OSP and the SSP export of a
  two-Payload system, with the numbers showing that initial values, step multiples, linear
  transformations and variable groups took effect.

libcosim runs in a child process (it aborts the whole process on FMU errors, see
tests/fmus/test_fmu_libcosim.py); the child runs without LD_PRELOAD.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from lxml import etree

from orchestration.system.osp import OSP_MD_NS, OSP_NS, osp_model_description, read_osp, write_osp
from orchestration.system.ssp import SSD_IN_SSP, read_ssp, write_ssp
from orchestration.system.model import Component, System, SystemFileError

DATA = Path(__file__).resolve().parents[1] / "data" / "systems"


# ---------------------------------------------------------------------------------------------------- helpers


@pytest.fixture
def data_dir(tmp_path, payload_fmu) -> Path:
    """A copy of tests/data/systems with the freshly built Payload.fmu beside the .ssd files."""
    folder = tmp_path / "systems"
    shutil.copytree(DATA, folder)
    shutil.copyfile(payload_fmu, folder / "Payload.fmu")
    return folder


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    """Keep .ssp extraction out of the user's cache folder."""
    monkeypatch.setenv("MARINE_COSIM_CACHE", str(tmp_path / "cache"))


def canonical(system: System, name: bool = True, sources: bool = True) -> System:
    """``system`` without what a file cannot reproduce: origins, source_file (and optionally name, sources)."""
    components = {n: dataclasses.replace(c, origin="", source=Path(os.path.abspath(c.source)) if sources else None)
                  for n, c in system.components.items()}
    connections = [dataclasses.replace(c, origin="") for c in system.connections]
    return dataclasses.replace(system, components=components, connections=connections, source_file=None,
                               name=system.name if name else "")


def two_payloads(fmu: Path, algorithm: str = "fixed") -> System:
    """Two Payloads: identity, transformed and unit-converting connections, a power bond, a step multiple."""
    system = System("two-payloads", start_time=0.0, stop_time=2.0, base_step=0.01, algorithm=algorithm,
                    algorithm_options={"tolerance": 1e-6, "max_iterations": 3, "verbose": True, "mode": "jacobi"})
    system.add_component(Component("a", fmu, {"mass": 50.0, "gravity": 9.81}))
    system.add_component(Component("b", fmu, {"mass": 200.0, "initial.position[2]": -1.5}, step_multiple=2))
    for k in range(3):
        system.connect(f"a.cg.velocity[{k}]", f"b.water.velocity[{k}]")
    system.connect("b.cg.position[2]", "a.water.elevation", factor=-1.0, offset=0.5)
    system.connect("a.position[2]", "b.cg.force[2]", factor=1000.0, converts_units=True)
    system.connect("b.attachment1.velocity[0]", "a.attachment1.force[0]", power_bond="bond")
    system.connect("a.attachment1.velocity[0]", "b.attachment1.force[0]", power_bond="bond")
    return system


def ssp_schema() -> etree.XMLSchema:
    import fmpy.ssp.ssd
    return etree.XMLSchema(file=str(Path(fmpy.ssp.ssd.__file__).parent / "schema" / "SystemStructureDescription.xsd"))


def assert_ssd_schema_valid(ssd_bytes: bytes, label: str) -> None:
    schema = ssp_schema()
    doc = etree.fromstring(ssd_bytes)
    assert schema.validate(doc), f"{label} is not valid SSP 1.0: {schema.error_log}"


def assert_ssv_schema_valid(ssv_bytes: bytes, label: str) -> None:
    import fmpy.ssp

    schema = etree.XMLSchema(file=str(Path(fmpy.ssp.__file__).parent / "schema" / "SystemStructureParameterValues.xsd"))
    root = etree.fromstring(ssv_bytes)
    assert schema.validate(root), f"{label} is not valid SSP 1.0 (SSV): {schema.error_log}"


def raises_system_file_error(*fragments: str):
    """Context manager: a SystemFileError whose message contains every fragment."""
    class _Check:
        def __enter__(self):
            self.ctx = pytest.raises(SystemFileError)
            self.info = self.ctx.__enter__()
            return self.info

        def __exit__(self, *exc):
            handled = self.ctx.__exit__(*exc)
            message = str(self.info.value)
            missing = [f for f in fragments if f not in message]
            assert not missing, f"message lacks {missing}: {message}"
            return handled
    return _Check()


# ---------------------------------------------------------------------------------------------------- SSP round trips


def test_ssd_round_trip(tmp_path, payload_fmu):
    system = two_payloads(payload_fmu)
    path = write_ssp(system, tmp_path / "out" / "two.ssd")

    text = path.read_bytes()
    assert_ssd_schema_valid(text, "written .ssd")
    root = etree.fromstring(text)
    ns = {"ssd": "http://ssp-standard.org/SSP1/SystemStructureDescription"}
    sources = root.xpath("//ssd:Component/@source", namespaces=ns)
    assert sources == [os.path.relpath(payload_fmu, tmp_path / "out")] * 2   # relative to the .ssd's folder

    back = read_ssp(path)
    assert canonical(back) == canonical(system)
    assert back.source_file == path.absolute()
    assert back.components["b"].source == payload_fmu.absolute()
    assert "two.ssd" in back.connections[0].origin and "line" in back.connections[0].origin


def test_ssd_round_trip_is_stable_and_keeps_types(tmp_path, payload_fmu):
    """write(read(write(s))) gives the same bytes, and option types survive (Real/Integer/Boolean/String)."""
    system = two_payloads(payload_fmu)
    first = write_ssp(system, tmp_path / "one.ssd").read_bytes()
    again = write_ssp(read_ssp(tmp_path / "one.ssd"), tmp_path / "two.ssd").read_bytes()
    assert first == again
    options = read_ssp(tmp_path / "one.ssd").algorithm_options
    assert options == {"tolerance": 1e-6, "max_iterations": 3, "verbose": True, "mode": "jacobi"}
    assert [type(v) for v in options.values()] == [float, int, bool, str]


def test_ssp_zip_round_trip(tmp_path, payload_fmu):
    system = two_payloads(payload_fmu)
    path = write_ssp(system, tmp_path / "two.ssp")
    with zipfile.ZipFile(path) as zf:
        # the start values in one .ssv per component (FMPy and libcosim read them), the FMU once
        assert sorted(zf.namelist()) == ["SystemStructure.ssd", "resources/Payload.fmu", "resources/a.ssv",
                                         "resources/b.ssv"]
        assert zf.read("resources/Payload.fmu") == payload_fmu.read_bytes()
        assert_ssd_schema_valid(zf.read("SystemStructure.ssd"), "SystemStructure.ssd in the .ssp")
        for ssv in ("resources/a.ssv", "resources/b.ssv"):
            assert_ssv_schema_valid(zf.read(ssv), ssv)

    back = read_ssp(path)
    assert canonical(back, sources=False) == canonical(system, sources=False)
    for comp in back.components.values():   # the FMUs resolve to real files with the original content
        assert comp.source.is_file() and comp.source.name == "Payload.fmu"
        assert comp.source.read_bytes() == payload_fmu.read_bytes()
        assert str(tmp_path / "cache") in str(comp.source)   # the content-addressed cache ($MARINE_COSIM_CACHE)
    assert back.source_file == path.absolute()
    assert read_ssp(path).components["a"].source == back.components["a"].source   # cache reused

    extracted = read_ssp(path, extract_dir=tmp_path / "here")
    assert extracted.components["a"].source == (tmp_path / "here" / "resources" / "Payload.fmu").absolute()


def test_ssp_with_two_different_fmus_of_the_same_name(tmp_path, payload_fmu):
    """Different files named Payload.fmu get distinct resources; components sharing a file share one copy."""
    other = tmp_path / "other" / "Payload.fmu"
    other.parent.mkdir()
    with zipfile.ZipFile(payload_fmu) as src, zipfile.ZipFile(other, "w") as dst:   # same model, other bytes
        for item in src.infolist():
            dst.writestr(item, src.read(item.filename))
        dst.writestr("documentation/note.txt", "a different file")
    system = System("s", base_step=0.01)
    system.add_component(Component("a", payload_fmu))
    system.add_component(Component("b", other))
    system.add_component(Component("c", payload_fmu))
    path = write_ssp(system, tmp_path / "s.ssp")
    with zipfile.ZipFile(path) as zf:
        assert sorted(zf.namelist()) == ["SystemStructure.ssd", "resources/Payload.fmu", "resources/Payload_2.fmu"]
    back = read_ssp(path)
    assert back.components["a"].source == back.components["c"].source != back.components["b"].source
    assert back.components["b"].source.read_bytes() == other.read_bytes()


def test_fmpy_reads_the_written_ssp(tmp_path, payload_fmu):
    """Interoperability: FMPy's SSP reader (with schema validation) accepts our archive."""
    from fmpy.ssp.ssd import read_ssd
    path = write_ssp(two_payloads(payload_fmu), tmp_path / "two.ssp")
    ssd = read_ssd(str(path), validate=True)
    assert [e.name for e in ssd.system.elements] == ["a", "b"]
    assert len(ssd.system.connections) == 7
    # the start values from the .ssv files (FMPy validates them against the SSV schema)
    values = {p.name: p.value for p in ssd.system.elements[1].parameterBindings[0].parameterValues[0].parameters}
    assert float(values["mass"]) == 200.0


# ---------------------------------------------------------------------------------------------------- reading the
# hand-written SSD


def test_read_hand_written_ssd_with_ssv_ssm_and_units(data_dir):
    assert_ssd_schema_valid((data_dir / "payload_pair.ssd").read_bytes(), "payload_pair.ssd")
    system = read_ssp(data_dir / "payload_pair.ssd")

    assert system.name == "payload-pair"
    assert (system.start_time, system.stop_time, system.base_step) == (0.5, 10.0, 0.01)
    assert system.algorithm == "fixed" and system.algorithm_options == {"extrapolation": 1}
    assert system.components["a"].source == (data_dir / "Payload.fmu").absolute()

    a, b = system.components["a"], system.components["b"]
    assert a.parameters == {"mass": 50.0, "gravity": 9.81, "hydro.water_density": 1000.0}   # + system level
    assert a.step_multiple == 1 and b.step_multiple == 2                                       # osp:StepSizeHint
    assert b.parameters == pytest.approx({
        "mass": 200.0,                  # .ssv m_t = 0.2, .ssm m_t -> mass with factor 1000
        "gravity": 1.62,                # .ssm g -> gravity
        "initial.position[2]": -5.0,    # -5000 mm -> m (unit conversion of a parameter)
        "hydro.volume": 2.0,            # ssv:Integer for a Real variable
        "max_substep": 0.005,           # system-level binding with prefix "b."
    }, rel=1e-12)
    assert type(b.parameters["hydro.volume"]) is float

    by_target = {c.target: c for c in system.connections}
    assert len(by_target) == len(system.connections) == 6

    c = by_target[("b", "water.elevation")]          # m (from the FMU) -> connector declared in mm
    assert c.source == ("a", "position[2]")
    assert (c.factor, c.offset, c.converts_units) == (pytest.approx(1000.0), 0.0, True)

    c = by_target[("b", "water.velocity[0]")]        # m/s -> km/h (3.6), then LinearTransformation 2x + 1
    assert c.factor == pytest.approx(7.2, rel=1e-12) and c.offset == pytest.approx(1.0)
    assert c.converts_units

    c = by_target[("b", "water.velocity[1]")]        # relay through the system connector "drift" (km/h)
    assert c.source == ("a", "cg.velocity[1]")
    assert c.factor == pytest.approx(0.5, rel=1e-12) and c.offset == pytest.approx(0.0, abs=1e-15)

    c = by_target[("b", "water.velocity[2]")]        # written input -> output, read output -> input
    assert c.source == ("a", "cg.velocity[2]") and c.is_identity and not c.converts_units

    bond = {c.label() for c in system.connections if c.power_bond == "sling"}
    assert bond == {"a.attachment1.velocity[2] -> b.attachment1.force[2]",
                    "b.attachment1.velocity[2] -> a.attachment1.force[2]"}
    assert all(c.is_identity for c in system.connections if c.power_bond)


def test_hand_written_ssd_survives_a_round_trip(data_dir, tmp_path):
    """Everything read from the hand-written file (relay, mapping, units...) is kept by write + read."""
    system = read_ssp(data_dir / "payload_pair.ssd")
    for suffix in (".ssd", ".ssp"):
        back = read_ssp(write_ssp(system, tmp_path / f"again{suffix}"))
        assert canonical(back, sources=suffix == ".ssd") == canonical(system, sources=suffix == ".ssd")


def test_ssp_archive_with_parameter_files(data_dir, tmp_path):
    """An .ssp made by another tool, with .ssv/.ssm inside it: references resolve inside the archive and
    messages name the archive member."""
    archive = tmp_path / "by-hand.ssp"
    with zipfile.ZipFile(archive, "w") as zf:
        ssd = (data_dir / "payload_pair.ssd").read_text().replace('source="Payload.fmu"',
                                                                  'source="resources/Payload.fmu"')
        zf.writestr("SystemStructure.ssd", ssd)
        for name in ("b_params.ssv", "b_mapping.ssm"):
            zf.write(data_dir / name, name)
        zf.write(data_dir / "Payload.fmu", "resources/Payload.fmu")
    system = read_ssp(archive)
    assert system.components["b"].parameters["mass"] == pytest.approx(200.0)

    broken = tmp_path / "broken.ssp"
    with zipfile.ZipFile(broken, "w") as zf:
        zf.writestr("SystemStructure.ssd", ssd)
        zf.writestr("b_params.ssv", (data_dir / "b_params.ssv").read_text().replace('value="0.2"', 'value="heavy"'))
        zf.write(data_dir / "b_mapping.ssm", "b_mapping.ssm")
        zf.write(data_dir / "Payload.fmu", "resources/Payload.fmu")
    with raises_system_file_error(f"{broken}!/b_params.ssv", "ssv:Real", "line 7", "'heavy'"):
        read_ssp(broken)


# ---------------------------------------------------------------------------------------------------- SSP errors


def test_error_missing_fmu(data_dir):
    with raises_system_file_error(str(data_dir / "missing_fmu.ssd"), "ssd:Component 'crane'", "line 8",
                                  "fmus/Crane.fmu", "not found"):
        read_ssp(data_dir / "missing_fmu.ssd")


def test_error_unknown_element_in_connection(data_dir):
    with raises_system_file_error(str(data_dir / "unknown_element.ssd"), "ssd:Connection", "line 11",
                                  "unknown element 'crane'", "components: payload"):
        read_ssp(data_dir / "unknown_element.ssd")


def test_error_incompatible_units(data_dir):
    with raises_system_file_error(str(data_dir / "incompatible_units.ssd"),
                                  "ssd:Connection a.position[2] -> b.water.elevation", "line 16",
                                  "'m'", "'s'", "a.position[2]", "b.water.elevation", "base-unit exponents"):
        read_ssp(data_dir / "incompatible_units.ssd")


def test_error_malformed_xml(data_dir):
    with raises_system_file_error(str(data_dir / "malformed.ssd"), "line 8", "malformed XML",
                                  "Elements line 6"):
        read_ssp(data_dir / "malformed.ssd")


@pytest.mark.parametrize("old, new, fragments", [
    ('endConnector="water.velocity[0]">', 'endConnector="water.speed[0]">',
     ["line 91", "has no variable 'water.speed[0]'"]),
    ('<ssc:LinearTransformation factor="2" offset="1"/>', '<ssc:LinearTransformation factor="two" offset="1"/>',
     ["ssc:LinearTransformation (line 92)", "factor='two' is not a number"]),
    ('<osp:StepSizeHint value="0.02"/>', '<osp:StepSizeHint value="0.025"/>',
     ["osp:StepSizeHint", "0.025", "not an integer multiple", "0.01",
      "libcosim would step it every 2 base step(s), 0.02 s: write that to run it the same way"]),
    ('<ssc:Real unit="km/h"/></ssd:Connector>\n          <ssd:Connector name="water.velocity[1]"',
     '<ssc:Real unit="knots"/></ssd:Connector>\n          <ssd:Connector name="water.velocity[1]"',
     ["ssd:Connector 'water.velocity[0]'", "unit 'knots' is not defined"]),
    ('<ssd:Connection startElement="a" startConnector="cg.velocity[1]" endConnector="drift"/>', '',
     ["system connector 'drift'", "nothing drives it"]),
    ('<mc:Algorithm name="fixed" baseStep="0.01">', '<mc:Algorithm name="fixed" baseStep="0.02">',
     ["mc:Algorithm 'fixed'", "baseStep='0.02'", "disagrees", "0.01"]),
    ('source="b_params.ssv"', 'source="b_values.ssv"', ["ssd:ParameterBinding", "b_values.ssv", "not found"]),
    ('<ssd:Connector name="position[2]" kind="output">', '<ssd:Connector name="position[2]" kind="input">',
     ["ssd:Connector 'position[2]' (line 44)", "kind='input'", "output in Payload.fmu"]),
    ('stopTime="10"', 'stopTime="0.1"', ["ssd:DefaultExperiment", "stopTime='0.1' is before startTime 0.5"]),
    ('<ssm:MappingEntry source="g" target="gravity"/>', '<ssm:MappingEntry source="g" target="gravitation"/>',
     ["b_mapping.ssm", "ssm:MappingEntry 'g' -> 'gravitation' (line 9)", "no such variable"]),
])
def test_ssd_error_messages(data_dir, old, new, fragments):
    """Faults injected into copies of the hand-written files: each message names file, element and value."""
    for name in ("payload_pair.ssd", "b_mapping.ssm"):
        text = (data_dir / name).read_text()
        if old in text:
            (data_dir / name).write_text(text.replace(old, new, 1))
            break
    else:
        pytest.fail(f"fault {old!r} not found in the test files")
    with raises_system_file_error(*fragments):
        read_ssp(data_dir / "payload_pair.ssd")


def test_write_errors(tmp_path, payload_fmu):
    system = two_payloads(payload_fmu)
    system.components["a"].parameters["masss"] = 1.0
    with raises_system_file_error("component 'a'", "'masss'", "no such variable"):
        write_ssp(system, tmp_path / "x.ssd")
    system = two_payloads(payload_fmu)
    system.connect("a.position[2]", "b.hook[0]")
    with raises_system_file_error("a.position[2] -> b.hook[0]", "no variable 'hook[0]'"):
        write_ssp(system, tmp_path / "x.ssd")
    with raises_system_file_error("x.fmi", ".ssd or .ssp"):
        write_ssp(two_payloads(payload_fmu), tmp_path / "x.fmi")
    system = two_payloads(payload_fmu)
    system.components["b"].source = tmp_path / "gone.fmu"
    with raises_system_file_error("component 'b'", "gone.fmu", "not found"):
        write_ssp(system, tmp_path / "x.ssp")


# ---------------------------------------------------------------------------------------------------- OSP


def test_osp_round_trip(tmp_path, payload_fmu):
    system = two_payloads(payload_fmu)
    system.algorithm_options = {}   # fixed-step options have no place in OSP
    for copy in (True, False):
        folder = tmp_path / f"osp-copy-{copy}"
        path = write_osp(system, folder, copy_fmus=copy)
        assert path == folder / "OspSystemStructure.xml"
        back = read_osp(path)
        expected = canonical(system, name=False, sources=not copy)
        assert canonical(back, name=False, sources=not copy) == expected
        if copy:
            assert [c.source for c in back.components.values()] == [(folder / "Payload.fmu").absolute()] * 2
            assert (folder / "Payload.fmu").read_bytes() == payload_fmu.read_bytes()
        assert (folder / "Payload_OspModelDescription.xml").is_file()
        root = etree.parse(str(path)).getroot()
        assert root.tag == f"{{{OSP_NS}}}OspSystemStructure" and root.prefix is None   # libcosim needs no prefix
    assert read_osp(tmp_path / "osp-copy-True").components["b"].step_multiple == 2   # a folder works too


def test_osp_round_trip_ecco(tmp_path, payload_fmu):
    system = two_payloads(payload_fmu, algorithm="ecco")
    with raises_system_file_error("ecco", "safety_factor", "absolute_tolerance"):
        write_osp(system, tmp_path / "osp")
    system.algorithm_options = {"safety_factor": 0.99, "step_size": 1e-4, "minimum_step_size": 1e-5,
                                "maximum_step_size": 1e-2, "minimum_change_rate": 0.2, "maximum_change_rate": 1.5,
                                "proportional_gain": 0.2, "integral_gain": 0.15, "relative_tolerance": 1e-6,
                                "absolute_tolerance": 1e-6}
    system.connections = [c for c in system.connections if c.is_identity]
    back = read_osp(write_osp(system, tmp_path / "osp"))
    assert canonical(back, name=False, sources=False) == canonical(system, name=False, sources=False)


def test_read_hand_written_osp(data_dir):
    system = read_osp(data_dir / "osp" / "OspSystemStructure.xml")
    assert (system.start_time, system.stop_time, system.base_step, system.algorithm) == (0.0, 1.0, 0.01, "fixed")
    hook, load = system.components["hook"], system.components["load"]
    assert hook.source == load.source == (data_dir / "Payload.fmu").absolute()
    assert hook.parameters == {"mass": 50.0, "gravity": 9.0} and hook.step_multiple == 1
    assert load.parameters == {"mass": 200.0, "initial.position[2]": -2.5} and load.step_multiple == 3

    labels = [(c.label(), c.factor, c.offset, c.power_bond) for c in system.connections]
    assert labels == [
        ("hook.attachment1.velocity[2] -> load.attachment1.force[2]", 1.0, 0.0, "sling"),   # input listed first
        ("load.attachment1.velocity[2] -> hook.attachment1.force[2]", 1.0, 0.0, "sling"),
        # the group connection: nested LinearVelocity group -> Generic group, pairwise in order
        ("hook.attachment1.velocity[0] -> load.water.velocity[0]", 1.0, 0.0, None),
        ("hook.attachment1.velocity[1] -> load.water.velocity[1]", 1.0, 0.0, None),
        ("hook.attachment1.velocity[2] -> load.water.velocity[2]", 1.0, 0.0, None),
        ("load.cg.position[2] -> hook.water.elevation", -1.0, 2.5, None),                  # LinearTransformation
    ]


@pytest.mark.parametrize("old, new, fragments", [
    ('stepSize="0.03"', 'stepSize="0.035"', ["Simulator 'load'", "stepSize=0.035", "not an integer multiple",
                                             "libcosim would step it every 3 base step(s), 0.03 s"]),
    ('<Real value="9"/>', '<Integer value="9"/>', ["Integer (line", "'gravity'", "Real"]),
    ('<LinearTransformation name="depth" factor="-1" offset="2.5"/>',
     '<LinearTransformation name="depth" factor="-1" offset="2.5"/><Sum name="total" inputCount="2"/>',
     ["Sum 'total'", "needs exactly one connection of its signal 'in[0]' (found 0)"]),
    ('<VariableGroup simulator="load" name="current"/>', '<VariableGroup simulator="load" name="currents"/>',
     ["VariableGroup load.currents", "no variable group 'currents'"]),
    ('<Variable simulator="load" name="attachment1.velocity[2]" causality="output"/>',
     '<Variable simulator="load" name="attachment1.force[1]" causality="input"/>',
     ["VariableConnection", "attachment1.force[1] (input)", "attachment1.force[2] (input)", "output and an input"]),
    ('<VariableGroup simulator="hook" name="attachment1.velocity"/>',
     '<VariableGroup simulator="hook" name="attachment1"/>',
     ["VariableGroupConnection", "hook.attachment1 has 2 nested groups", "load.current has 0"]),
    ('<Variable simulator="load" name="cg.position[2]"/>', '<Variable simulator="winch" name="cg.position[2]"/>',
     ["Variable winch.cg.position[2]", "unknown simulator 'winch'"]),
    ('<Signal function="depth" name="out"/>', '<Signal function="depth" name="output"/>',
     ["Signal depth.output", "has the signals in, out, not 'output'"]),
    ('source="../Payload.fmu" stepSize', 'source="proxyfmu://10.0.0.5:9090?file=../Payload.fmu" stepSize',
     ["Simulator 'load'", "a proxyfmu server on '10.0.0.5:9090'", "--backend ray"]),
    ('<EndTime>1.0</EndTime>', '<EndTime>1.0</EndTime', ["OspSystemStructure.xml: line", "malformed XML"]),
])
def test_osp_error_messages(data_dir, old, new, fragments):
    path = data_dir / "osp" / "OspSystemStructure.xml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    with raises_system_file_error(str(path), *fragments):
        read_osp(path)


def test_osp_write_errors(tmp_path, payload_fmu):
    system = two_payloads(payload_fmu)
    system.connections[-1].factor = 2.0    # a power-bond connection with a transformation
    with raises_system_file_error("cannot export connection a.attachment1.velocity[0] -> b.attachment1.force[0] "
                                  "with a linear transformation", "power bond 'bond'"):
        write_osp(system, tmp_path / "osp")
    system = two_payloads(payload_fmu)
    system.base_step = None
    with raises_system_file_error("no base step"):
        write_osp(system, tmp_path / "osp")
    system = two_payloads(payload_fmu, algorithm="richardson")
    with raises_system_file_error("'richardson'", "cannot be exported"):
        write_osp(system, tmp_path / "osp")


def test_osp_model_description_groups(payload_fmu):
    """Variable groups derived from our naming scheme, in the schema's element order, with unique names."""
    root = etree.fromstring(osp_model_description(payload_fmu))
    ns = {"o": OSP_MD_NS}
    assert root.tag == f"{{{OSP_MD_NS}}}OspModelDescription" and root.get("version") == "1.0"
    units = {u.get("name"): dict(u[0].attrib) for u in root.find("o:UnitDefinitions", ns)}
    assert units["N"] == {"kg": "1", "m": "1", "s": "-2"} and units["1"] == {}

    groups = root.find("o:VariableGroups", ns)
    top = [(etree.QName(g).localname, g.get("name")) for g in groups]
    order = ["Generic", "LinearMechanicalPort", "AngularMechanicalPort", "LinearMechanicalQuasiPort"]
    assert [t for t, _ in top] == sorted((t for t, _ in top), key=order.index), "schema sequence order"
    names = [g.get("name") for g in root.iter() if g.get("name") and etree.QName(g).localname != "Unit"]
    assert len(names) == len(set(names)), "group names must be unique in the file"

    def refs(group) -> list[str]:
        return [v.get("ref") for v in group.findall("o:Variable", ns)]

    def group(kind, name):
        found = groups.xpath(f"o:{kind}[@name='{name}']", namespaces=ns)
        assert len(found) == 1, f"{kind} {name} not found in {top}"
        return found[0]

    for port in ("attachment1", "attachment4", "cg"):
        linear = group("LinearMechanicalPort", port)
        force, velocity = list(linear)
        assert (etree.QName(force).localname, force.get("name")) == ("Force", f"{port}.force")
        assert refs(force) == [f"{port}.force[{i}]" for i in range(3)]
        assert force.find("o:Variable", ns).get("unit") == "N"
        assert (etree.QName(velocity).localname, velocity.get("name")) == ("LinearVelocity", f"{port}.velocity")
        assert refs(velocity) == [f"{port}.velocity[{i}]" for i in range(3)]
        quasi = group("LinearMechanicalQuasiPort", f"{port}.quasi")
        q_force, displacement = list(quasi)
        assert refs(q_force) == refs(force) and q_force.get("name") == f"{port}.quasi.force"
        assert (etree.QName(displacement).localname, displacement.get("name")) == ("LinearDisplacement",
                                                                                  f"{port}.position")
    angular = group("AngularMechanicalPort", "cg.angular")
    torque, omega = list(angular)
    assert (etree.QName(torque).localname, refs(torque)) == ("Torque", [f"cg.moment[{i}]" for i in range(3)])
    assert (etree.QName(omega).localname, refs(omega)) == ("AngularVelocity",
                                                           [f"angular_velocity[{i}]" for i in range(3)])
    assert refs(group("Generic", "quaternion")) == [f"quaternion[{i}]" for i in range(4)]
    assert refs(group("Generic", "water.velocity")) == [f"water.velocity[{i}]" for i in range(3)]
    generic = {n for t, n in top if t == "Generic"}
    assert "attachment1.force" not in generic and "inertia" not in generic   # in a port / a parameter
    assert "attachment1.acceleration" in generic and "position" in generic


# ---------------------------------------------------------------------------------------------------- libcosim

# Loads a system file in libcosim (argv[1] = "osp" or "ssp", argv[2] = path), steps argv[3] times and
# records the listed variables after every step; writes JSON to argv[4]. Exit code 3: no libcosimpy.
_LIBCOSIM_RUNNER = r'''
import json, sys
try:
    from libcosimpy._internal import libcosimc, get_last_error_message
    libcosimc()
    from libcosimpy.CosimEnums import CosimErrorCode, CosimExecutionState
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    from libcosimpy.CosimObserver import CosimObserver
except Exception as exc:
    sys.stderr.write(f"LIBCOSIMPY-UNAVAILABLE: {type(exc).__name__}: {exc}\n")
    sys.exit(3)
kind, path, n_steps, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
spec = json.loads(sys.argv[5])
log_output_level(CosimLogLevel.WARNING)
try:
    execution = (CosimExecution.from_osp_config_file(path) if kind == "osp" else CosimExecution.from_ssp_file(path))
except AssertionError as exc:
    raise SystemExit(f"libcosim cannot load {path}: {exc}")
observer = CosimObserver.create_last_value()
if not execution.add_observer(observer):
    raise SystemExit(f"add_observer: {get_last_error_message()}")
slaves = {info.name.decode(): info.index for info in execution.slave_infos()}
refs = {name: {v.name.decode(): v.reference for v in execution.slave_variables(i)} for name, i in slaves.items()}
result = {"slaves": sorted(slaves), "times_ns": [], "values": {key: [] for key in spec}}
for _ in range(n_steps):
    if not execution.step(1):
        raise SystemExit(f"step: {get_last_error_message()}")
    status = execution.status()
    if CosimErrorCode(status.error_code) != CosimErrorCode.SUCCESS or \
            CosimExecutionState(status.state) == CosimExecutionState.ERROR:
        raise SystemExit(f"bad status: {get_last_error_message()}")
    result["times_ns"].append(status.current_time)
    for key in spec:
        slave, variable = key.split(".", 1)
        result["values"][key].append(observer.last_real_values(slaves[slave], [refs[slave][variable]])[0])
json.dump(result, open(out, "w"))
'''


def run_libcosim(kind: str, path: Path, variables: list[str], tmp_path: Path, n_steps: int = 60) -> dict:
    out = tmp_path / "libcosim_result.json"
    out.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    proc = subprocess.run([sys.executable, "-c", _LIBCOSIM_RUNNER, kind, str(path), str(n_steps), str(out),
                           json.dumps(variables)], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=180)
    if proc.returncode == 3 and "LIBCOSIMPY-UNAVAILABLE" in proc.stderr:
        pytest.fail("libcosimpy (a declared test dependency) cannot be used: " + proc.stderr.strip(), pytrace=False)
    if proc.returncode != 0 or not out.is_file():
        pytest.fail(f"libcosim run of {path} failed (exit {proc.returncode}):\n--- stdout:\n{proc.stdout[-4000:]}"
                    f"\n--- stderr:\n{proc.stderr[-4000:]}", pytrace=False)
    raw = json.loads(out.read_text())
    raw["values"] = {k: np.array(v) for k, v in raw["values"].items()}
    return raw


def assert_follows(target: np.ndarray, source: np.ndarray, factor: float, offset: float, label: str,
                   max_lag: int = 3, start: int | None = None) -> None:
    """target[n] == factor * source[m] + offset for some m in n - max_lag .. n (libcosim passes values on
    after steps, and a slower component sees them later), from step ``start`` on (default max_lag: before,
    a slow component may still hold its initial input), and the signal is not trivially constant."""
    expected = factor * source + offset
    start = max_lag if start is None else start
    assert np.ptp(expected[start:]) > 1e-6, f"{label}: the source does not move, the test would prove nothing"
    for n in range(start, len(target)):
        candidates = expected[n - max_lag:n + 1]
        assert np.min(np.abs(candidates - target[n])) <= 1e-9 * max(1.0, abs(target[n])), \
            f"{label}: step {n + 1}: {target[n]!r} is not {factor} * source + {offset} of steps {n - max_lag + 1}.." \
            f"{n + 1} ({candidates})"


RECORDED = ["a.mass", "b.mass", "a.cg.position[2]", "b.cg.position[2]", "a.water.elevation", "a.position[2]",
            "b.cg.force[2]", "a.cg.velocity[2]", "b.water.velocity[2]", "b.initial.position[2]"]


def check_two_payload_run(run: dict) -> None:
    v = run["values"]
    assert run["slaves"] == ["a", "b"]
    assert run["times_ns"] == [10_000_000 * (n + 1) for n in range(len(run["times_ns"]))]
    assert set(v["a.mass"]) == {50.0} and set(v["b.mass"]) == {200.0} and set(v["b.initial.position[2]"]) == {-1.5}
    assert_follows(v["a.water.elevation"], v["b.cg.position[2]"], -1.0, 0.5, "LinearTransformation")
    assert_follows(v["b.cg.force[2]"], v["a.position[2]"], 1000.0, 0.0, "unit conversion")
    assert_follows(v["b.water.velocity[2]"], v["a.cg.velocity[2]"], 1.0, 0.0, "identity")
    # b (step multiple 2) changes its outputs every other base step only; a every step
    changes_b = np.count_nonzero(np.diff(v["b.cg.position[2]"]))
    changes_a = np.count_nonzero(np.diff(v["a.cg.position[2]"]))
    assert changes_a == len(v["a.cg.position[2]"]) - 1
    assert changes_b <= len(v["b.cg.position[2]"]) // 2 + 1


def test_osp_export_runs_in_libcosim(tmp_path, payload_fmu):
    """The OSP export of a two-Payload system (initial values, step multiple, LinearTransformation
    functions, power bond) loads in libcosim and steps; the numbers show each feature took effect."""
    system = two_payloads(payload_fmu)
    path = write_osp(system, tmp_path / "osp")
    run = run_libcosim("osp", path, RECORDED, tmp_path)
    check_two_payload_run(run)


def test_ssp_export_runs_in_libcosim(tmp_path, payload_fmu):
    """The .ssp export (osp:FixedStepAlgorithm, osp:StepSizeHint, ssc:LinearTransformation) runs in libcosim
    with the same results as the OSP export."""
    system = two_payloads(payload_fmu)
    ssp_run = run_libcosim("ssp", write_ssp(system, tmp_path / "two.ssp"), RECORDED, tmp_path)
    check_two_payload_run(ssp_run)
    osp_run = run_libcosim("osp", write_osp(system, tmp_path / "osp"), RECORDED, tmp_path)
    for key in RECORDED:
        np.testing.assert_array_equal(ssp_run["values"][key], osp_run["values"][key], err_msg=key)


def test_generated_variable_groups_work_in_libcosim(tmp_path, payload_fmu):
    """A VariableGroupConnection between groups of our generated OspModelDescription: libcosim connects
    the same variables as read_osp says (b.water.velocity[k] follows a.attachment1.velocity[k])."""
    system = System("groups", stop_time=1.0, base_step=0.01)
    system.add_component(Component("a", payload_fmu, {"mass": 10.0, "cg.force[0]": 30.0, "cg.force[1]": -20.0}))
    system.add_component(Component("b", payload_fmu))
    path = write_osp(system, tmp_path / "osp")
    tree = etree.parse(str(path))
    connections = etree.SubElement(tree.getroot(), f"{{{OSP_NS}}}Connections")
    group_connection = etree.SubElement(connections, f"{{{OSP_NS}}}VariableGroupConnection")
    etree.SubElement(group_connection, f"{{{OSP_NS}}}VariableGroup", simulator="a", name="attachment1.velocity")
    etree.SubElement(group_connection, f"{{{OSP_NS}}}VariableGroup", simulator="b", name="water.velocity")
    tree.write(str(path), xml_declaration=True, encoding="UTF-8")

    labels = [c.label() for c in read_osp(path).connections]
    assert labels == [f"a.attachment1.velocity[{k}] -> b.water.velocity[{k}]" for k in range(3)]
    keys = [f"{s}.{v}[{k}]" for k in range(3) for s, v in (("a", "attachment1.velocity"), ("b", "water.velocity"))]
    run = run_libcosim("osp", path, keys, tmp_path, n_steps=30)
    for k in range(3):
        assert_follows(run["values"][f"b.water.velocity[{k}]"], run["values"][f"a.attachment1.velocity[{k}]"],
                       1.0, 0.0, f"group element {k}")


def test_hand_written_osp_runs_in_libcosim(data_dir, tmp_path):
    """The hand-written OSP test file is valid for libcosim too (so read_osp is tested on a real format)."""
    run = run_libcosim("osp", data_dir / "osp" / "OspSystemStructure.xml",
                       ["hook.water.elevation", "load.cg.position[2]", "load.water.velocity[2]",
                        "hook.attachment1.velocity[2]"], tmp_path, n_steps=30)
    v = run["values"]
    # load steps every 3 base steps: what it sees (and what it gives) lags by up to 2 x 3 base steps
    assert_follows(v["hook.water.elevation"], v["load.cg.position[2]"], -1.0, 2.5, "depth function", max_lag=6)
    assert_follows(v["load.water.velocity[2]"], v["hook.attachment1.velocity[2]"], 1.0, 0.0, "group connection",
                   max_lag=6)


def test_a_path_that_climbs_out_of_an_ssp_archive_is_refused(payload_fmu, tmp_path):
    """Inside an .ssp, '../../Payload.fmu' named a file beside the extraction folder (the cache),
    not one in the archive."""
    system = System("hook", stop_time=1.0, base_step=0.1)
    system.add_component(Component("p", payload_fmu, {"mass": 1000.0}))
    good = write_ssp(system, tmp_path / "good.ssp")
    with zipfile.ZipFile(good) as archive:
        members = {n: archive.read(n) for n in archive.namelist()}
    members[SSD_IN_SSP] = members[SSD_IN_SSP].replace(b'source="resources/Payload.fmu"', b'source="../../Payload.fmu"')
    with zipfile.ZipFile(tmp_path / "bad.ssp", "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    with pytest.raises(SystemFileError, match="'../../Payload.fmu' points outside the archive"):
        read_ssp(tmp_path / "bad.ssp")
    assert read_ssp(good).components["p"].source.is_file()
