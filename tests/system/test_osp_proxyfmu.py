"""libcosim's ``proxyfmu://localhost?file=PATH`` sources (its test systems
OspSystemStructure_proxyfmu.xml and OspSystemStructure_Dahlquist_proxyfmu.xml use them): the FMU at
PATH, run in a process of its own as libcosim's proxy-fmu runs it. Before: refused ("URI scheme
'proxyfmu' is not supported")."""
from __future__ import annotations

import numpy as np
import pytest

from orchestration import simulate
from orchestration.backends import make_slave_factory
from orchestration.backends.process import ProcessSlave
from orchestration.master.slaves import InProcessSlave
from orchestration.system.backend_choice import BackendConfig
from orchestration.system.model import SystemFileError
from orchestration.system.osp import read_osp, write_osp
from tests.models.reference_fmus.build import FmuBuildError, build_reference_fmu

pytestmark = pytest.mark.gcc

NS = "http://opensimulationplatform.com/MSMI/OSPSystemStructure"


@pytest.fixture(scope="module")
def dahlquist(tmp_path_factory):
    try:
        return build_reference_fmu("Dahlquist", 2, tmp_path_factory.mktemp("proxy") / "fmi2")
    except FmuBuildError as exc:
        pytest.skip(str(exc))


def system_file(folder, source: str):
    path = folder / "OspSystemStructure.xml"
    path.write_text(f'<OspSystemStructure xmlns="{NS}" version="0.1"><BaseStepSize>0.1</BaseStepSize>'
                    f'<EndTime>1.0</EndTime><Simulators><Simulator name="dq" source="{source}"/>'
                    f'<Simulator name="plain" source="{source.split("file=")[-1]}"/></Simulators></OspSystemStructure>')
    return path


@pytest.mark.parametrize("form", ["proxyfmu://localhost?file={rel}", "proxyfmu:///localhost?file={rel}",
                                  "proxyfmu://localhost?file={uri}"])
def test_a_proxyfmu_source_runs_its_fmu_in_a_worker_process(dahlquist, tmp_path, form):
    """The file relative to the system file (libcosim's test data: ../fmi2/Dahlquist.fmu) or a file: URI;
    the component runs in a worker process (a ProcessSlave) and gives the in-process FMU's bits."""
    folder = dahlquist.parent.parent / "systems"
    folder.mkdir(exist_ok=True)
    source = form.format(rel="../fmi2/Dahlquist.fmu", uri=dahlquist.as_uri())
    system = read_osp(system_file(folder, source))
    assert system.components["dq"].source == dahlquist and system.components["dq"].own_process
    assert not system.components["plain"].own_process
    factory = make_slave_factory(BackendConfig(), system)
    slaves = [factory(name, c.source) for name, c in system.components.items()]
    try:
        assert isinstance(slaves[0], ProcessSlave) and isinstance(slaves[1], InProcessSlave)
    finally:
        for s in slaves:
            s.free()
    r = simulate(system, variables=["dq.x", "plain.x"])
    np.testing.assert_array_equal(r["dq.x"], r["plain.x"])
    assert r["dq.x"][-1] == pytest.approx(0.9 ** 10)


def test_a_proxyfmu_source_is_written_back_as_one(dahlquist, tmp_path):
    system = read_osp(system_file(tmp_path, f"proxyfmu://localhost?file={dahlquist.as_uri()}"))
    written = write_osp(system, tmp_path / "out").read_text()
    assert 'source="proxyfmu://localhost?file=Dahlquist.fmu"' in written
    assert read_osp(tmp_path / "out" / "OspSystemStructure.xml").components["dq"].own_process


@pytest.mark.parametrize("source, message", [
    ("proxyfmu://10.0.0.5:9090?file=Dahlquist.fmu", "a proxyfmu server on '10.0.0.5:9090'"),
    ("proxyfmu://localhost?model=Dahlquist.fmu", "takes one query, file=PATH"),
    ("proxyfmu://localhost?file=Nothing.fmu", "FMU file not found"),
])
def test_a_proxyfmu_source_marine_cosim_cannot_run_is_refused(dahlquist, tmp_path, source, message):
    path = tmp_path / "OspSystemStructure.xml"
    path.write_text(f'<OspSystemStructure xmlns="{NS}" version="0.1"><BaseStepSize>0.1</BaseStepSize>'
                    f'<Simulators><Simulator name="dq" source="{source}"/></Simulators></OspSystemStructure>')
    with pytest.raises(SystemFileError, match=message):
        read_osp(path)
