"""Execution backends (issue 10): the same co-simulation in-process, in one worker process per FMU
and with one Ray actor per FMU gives the same numbers -- bit for bit -- with every master algorithm;
Jacobi steps are sent to every worker before any answer is collected; remote FMU states stay in
their worker; clear errors for unknown backends, a missing Ray and impossible placements; the
in-process path never imports Ray; the system file can choose the backend.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from orchestration.master.algorithms.fixed import FixedStepAlgorithm
from orchestration.backends import (BackendConfig, BackendError, backend_from_system, make_slave_factory,
                                    parse_place_arguments, resolve_backend)
from orchestration.master.algorithms.ecco import EccoAlgorithm
from orchestration.master.algorithms.error_control import ErrorControlAlgorithm
from orchestration.master.execution import Execution
from orchestration.master.observers.results import MemoryObserver, default_observed
from orchestration.master.algorithms.iterative import IterativeAlgorithm
from orchestration.backends.process import ProcessSlave
from orchestration.backends.remote import RemoteState
from orchestration.master.algorithms.step_control import PIController
from orchestration.system.model import Component, System
from tests.models.b3.build import b3_system as build_b3_system, build_b3_fmus

ROOT = Path(__file__).resolve().parents[2]
REMOTE = ["process", "ray"]


def factory_for(backend: str, request):
    """``ray-group``: every FMU in one shared actor (an actor group: one call per macro step)."""
    if backend.startswith("ray"):
        request.getfixturevalue("ray_local")
    if backend == "ray-group":
        return make_slave_factory(BackendConfig("ray", placement={"*": {"group": "all"}}))
    return make_slave_factory(BackendConfig(backend))


def chain(payload_fmu) -> System:
    """a falls; b is pushed along x by 1.5 x a's depth; c by 3 x b's acceleration (direct feedthrough:
    the refresh after each step reads b again) and steps every 2 base steps."""
    s = System("chain")
    s.add_component(Component("a", payload_fmu, {"mass": 1.0}))
    s.add_component(Component("b", payload_fmu, {"mass": 2.0, "gravity": 0.0}))
    s.add_component(Component("c", payload_fmu, {"mass": 3.0, "gravity": 0.0}, step_multiple=2))
    s.connect("a.cg.position[2]", "b.cg.force[0]", factor=1.5)    # a gain: N per m
    s.connect("b.cg.acceleration[0]", "c.cg.force[1]", factor=3.0)
    return s


def record(system: System, algorithm, factory, stop: float, step: float,
           manipulators=()) -> tuple[np.ndarray, np.ndarray]:
    """Every Real output and input at every communication point."""
    variables = default_observed(system)
    memory = MemoryObserver(variables)
    ex = Execution(system, algorithm, slave_factory=factory, observers=[memory], observed=variables,
                   manipulators=list(manipulators))
    try:
        ex.initialize()
        ex.run(stop, step)
    finally:
        ex.free()
    return np.array(memory.time), np.array(memory.rows)


@pytest.fixture(scope="module")
def b3_fmus(tmp_path_factory):
    return build_b3_fmus(tmp_path_factory.mktemp("b3_backends"))


def b3_system(fmus) -> System:
    return build_b3_system(fmus, "T3-3")


# ---------------------------------------------------------------------- same numbers everywhere

@pytest.mark.slow
@pytest.mark.parametrize("backend", REMOTE + ["ray-group"])
@pytest.mark.parametrize("method,extrapolation", [("jacobi", 0), ("jacobi", 2), ("gauss-seidel", 1)])
def test_fixed_step_is_bitwise_equal_to_in_process(payload_fmu, backend, method, extrapolation, request):
    make = lambda: FixedStepAlgorithm(method=method, extrapolation=extrapolation)
    t0, ref = record(chain(payload_fmu), make(), None, 1.0, 0.05)
    t1, got = record(chain(payload_fmu), make(), factory_for(backend, request), 1.0, 0.05)
    assert ref.shape == (21, got.shape[1]) and np.array_equal(t0, t1)
    assert np.array_equal(ref, got), f"{backend} differs from in-process: max |diff| {np.max(np.abs(ref - got))}"
    assert np.ptp(ref, axis=0).max() > 1.0           # something moved


ADAPTIVE = {
    "ecco": lambda: EccoAlgorithm(rtol=1e-2, atol=1e-3, method="gauss-seidel",
                                  controller=PIController(min_step=1e-4, max_step=0.05)),
    "error-control": lambda: ErrorControlAlgorithm(rtol=1e-2, atol=1e-3, hold_check=True),  # ~20 steps, some rejected
    "iterative": lambda: IterativeAlgorithm(),
}
STOP = {"ecco": 0.3, "error-control": 0.2, "iterative": 0.06}     # iterative: ~20 iterations a step on B3


@pytest.mark.slow
@pytest.mark.parametrize("backend,name", [(b, n) for b in REMOTE for n in sorted(ADAPTIVE)]
                         + [("ray-group", "error-control")])
def test_adaptive_and_rollback_algorithms_are_bitwise_equal_to_in_process(b3_fmus, backend, name, request):
    """ECCO (steps from the bond power), error control (rollback through remote FMU states, the
    rollback self-test) and iterative coupling (rollback, feedthrough reads) on B3."""
    stop = STOP[name]
    t0, ref = record(b3_system(b3_fmus), ADAPTIVE[name](), None, stop, 0.01)
    alg = ADAPTIVE[name]()
    t1, got = record(b3_system(b3_fmus), alg, factory_for(backend, request), stop, 0.01)
    assert np.array_equal(t0, t1) and np.array_equal(ref, got)
    assert len(t0) > 5 and t0[-1] == pytest.approx(stop)
    if name == "error-control":
        assert alg.rejected > 0 and alg._tested        # rollbacks happened; the self-test ran on the remote slaves


def bonded_chain(payload_fmu) -> System:
    """The chain, c still every 2 base steps, with a power bond between b and c: ECCO's and error
    control's steps are cycles of the step multiples (step_control.py)."""
    s = chain(payload_fmu)
    s.connections[-1].power_bond = "bc"
    s.connect("c.cg.velocity[1]", "b.water.velocity[0]", power_bond="bc")
    return s


@pytest.mark.slow
@pytest.mark.parametrize("backend,name", [(b, n) for b in REMOTE for n in ("ecco", "error-control")])
def test_adaptive_algorithms_on_multi_rate_systems_are_bitwise_equal_to_in_process(payload_fmu, backend, name,
                                                                                     request):
    make = {"ecco": lambda: EccoAlgorithm(rtol=1e-3, atol=1e-6),
            "error-control": lambda: ErrorControlAlgorithm(rtol=1e-3)}[name]
    t0, ref = record(bonded_chain(payload_fmu), make(), None, 0.6, 0.05)
    alg = make()
    t1, got = record(bonded_chain(payload_fmu), alg, factory_for(backend, request), 0.6, 0.05)
    assert alg.cycle == 2 and np.array_equal(t0, t1) and np.array_equal(ref, got)
    assert t0[-1] == 0.6 and len(t0) > 6 and np.ptp(np.diff(t0)) > 0.0       # it adapted


# ---------------------------------------------------------------------- parallel stepping

class _SpyReply:
    def __init__(self, inner, name: str, log: list):
        self.inner, self.name, self.log = inner, name, log

    def result(self):
        self.log.append(("collect", self.name))
        return self.inner.result()


class SpySlave(ProcessSlave):
    log: list = []

    def exchange_async(self, in_vrs, in_values, t, h, out_vrs):
        SpySlave.log.append(("send", self.name))
        return _SpyReply(super().exchange_async(in_vrs, in_values, t, h, out_vrs), self.name, SpySlave.log)


@pytest.mark.slow
def test_jacobi_sends_every_step_before_collecting_any(payload_fmu):
    s = System("three")
    for name in "abc":
        s.add_component(Component(name, payload_fmu, {"mass": 1.0}))
    s.connect("a.cg.position[2]", "b.cg.force[0]")
    s.connect("b.cg.position[0]", "c.cg.force[0]")
    SpySlave.log = []
    record(s, FixedStepAlgorithm(method="jacobi"), lambda n, p: SpySlave(n, p), 0.3, 0.1)
    log = SpySlave.log
    assert len(log) == 3 * 2 * 3
    for k in range(0, len(log), 6):
        block = log[k:k + 6]
        assert [kind for kind, _ in block] == ["send"] * 3 + ["collect"] * 3, block
        assert sorted(name for _, name in block[:3]) == ["a", "b", "c"]
    # Gauss-Seidel: a chain a -> b -> c is sequential (each needs the new output of the one before)
    SpySlave.log = []
    record(s, FixedStepAlgorithm(method="gauss-seidel"), lambda n, p: SpySlave(n, p), 0.1, 0.1)
    assert [kind for kind, _ in SpySlave.log] == ["send", "collect"] * 3


@pytest.mark.parametrize("backend", REMOTE)
def test_remote_states_stay_in_the_worker_and_serialize(payload_fmu, backend, request):
    factory = factory_for(backend, request)
    slave = factory("p", payload_fmu)
    try:
        slave.instantiate()
        slave.setup(0.0, None)
        slave.enter_initialization()
        slave.set_values({"mass": 2.0})
        slave.exit_initialization()
        vrs = np.array([slave.variables["cg.position[2]"].value_reference])
        fvr = np.array([slave.variables["cg.force[2]"].value_reference])
        state = slave.get_state()
        assert isinstance(state, RemoteState)
        first = slave.exchange(fvr, np.array([5.0]), 0.0, 0.1, vrs)
        blob = slave.checkpoint_state()
        assert isinstance(blob, bytes) and len(blob) > 100
        slave.set_state(state)
        again = slave.exchange(fvr, np.array([5.0]), 0.0, 0.1, vrs)
        assert np.array_equal(first, again)
        later = slave.exchange(fvr, np.array([5.0]), 0.1, 0.1, vrs)
        slave.restore_checkpoint_state(blob)
        assert np.array_equal(slave.exchange(fvr, np.array([5.0]), 0.1, 0.1, vrs), later)
        copy = slave.deserialize_state(slave.serialize_state(state))
        slave.set_state(copy)
        assert np.array_equal(slave.exchange(fvr, np.array([5.0]), 0.0, 0.1, vrs), first)
        slave.free_state(copy)
        slave.free_state(state)
        with pytest.raises(Exception, match="no saved FMU state"):
            slave.set_state(state)
        assert slave.get_values(["mass"]) == {"mass": 2.0}
    finally:
        slave.terminate()
        slave.free()


# ---------------------------------------------------------------------- choosing a backend

def test_unknown_backend_missing_ray_and_bad_placement_are_clear(payload_fmu, monkeypatch):
    s = chain(payload_fmu)
    with pytest.raises(BackendError, match="unknown backend 'gpu'.*inprocess, process, ray"):
        resolve_backend(s, "gpu")
    with pytest.raises(BackendError, match="needs the ray backend"):
        resolve_backend(s, "process", placement={"a": {"resources": {"windows": 1}}})
    with pytest.raises(BackendError, match=r"unknown component\(s\) \['crane'\]"):
        resolve_backend(s, "ray", placement={"crane": {"num_cpus": 1}})
    assert parse_place_arguments(["a=windows=1,licence=2", 'b={"num_cpus": 1}', "c=group=light,gpu=1"]) == {
        "a": {"resources": {"windows": 1.0, "licence": 2.0}}, "b": {"num_cpus": 1},
        "c": {"group": "light", "resources": {"gpu": 1.0}}}
    for bad in ["a", "a=windows=x", "a={nope", "a=group="]:
        with pytest.raises(BackendError, match="--place"):
            parse_place_arguments([bad])
    monkeypatch.setitem(sys.modules, "ray", None)          # as if Ray were not installed
    with pytest.raises(BackendError, match=r"pip install 'marine-cosim\[distributed\]'"):
        make_slave_factory(BackendConfig("ray"))


def test_placement_no_node_offers_is_refused_at_once(payload_fmu, ray_local):
    from orchestration.backends.ray import check_placement

    with pytest.raises(BackendError, match=r"no node of the Ray cluster offers windows=1.*ray start"):
        check_placement({"resources": {"windows": 1}}, "crane")
    check_placement({"num_cpus": 1}, "crane")


def test_in_process_and_process_runs_never_import_ray(payload_fmu, tmp_path):
    code = f"""
import sys
from orchestration import simulate
from orchestration.system.model import System, Component
from orchestration.backends import make_slave_factory, BackendConfig
s = System("x"); s.add_component(Component("p", {str(payload_fmu)!r}, {{}}))
simulate(s, 0.1, 0.05)
make_slave_factory(BackendConfig("process"))
import orchestration.cli.main, orchestration.runs.run, orchestration.runs.sweep
import orchestration.master.observers.checkpoint
assert "ray" not in sys.modules, "ray was imported"
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr


def write_with_backend(system: System, path: Path, annotation: str) -> Path:
    from orchestration.system.ssp import write_ssp

    write_ssp(system, path)
    text = path.read_text()
    marker = '<ssc:Annotation type="org.marine-cosim">'
    at = text.rindex(marker) + len(marker)       # the DefaultExperiment's annotation, the file's last one
    path.write_text(text[:at] + annotation + text[at:])
    return path


def test_system_file_chooses_the_backend(payload_fmu, tmp_path, capsys):
    from orchestration.cli.main import main
    from orchestration.master.observers.results import load_results
    from orchestration.system.files import load_system

    s = chain(payload_fmu)
    s.stop_time, s.base_step = 0.5, 0.05
    ray_file = write_with_backend(s, tmp_path / "ray.ssd", '<mc:Backend name="ray" callTimeout="30">'
                                  '<mc:Placement component="b" numCpus="1"><mc:Resource name="windows" value="1"/>'
                                  '</mc:Placement></mc:Backend>')
    config = backend_from_system(load_system(ray_file))
    assert (config.name, config.call_timeout) == ("ray", 30.0)
    assert config.placement == {"b": {"num_cpus": 1.0, "resources": {"windows": 1.0}}}
    # the command line wins; the file's placement belongs to its ray choice
    assert resolve_backend(load_system(ray_file), "process").placement == {}
    assert main(["validate", str(ray_file)]) == 0        # other readers ignore the annotation

    proc_file = write_with_backend(s, tmp_path / "proc.ssd", '<mc:Backend name="process"/>')
    assert main(["run", str(proc_file), "--quiet", "--out", str(tmp_path / "proc")]) == 0
    assert main(["run", str(proc_file), "--quiet", "--backend", "inprocess", "--out", str(tmp_path / "inproc")]) == 0
    meta = json.loads((tmp_path / "proc" / "metadata.json").read_text())
    assert meta["backend"]["backend"] == "process" and meta["status"] == "completed"
    a, b = load_results(tmp_path / "proc"), load_results(tmp_path / "inproc")
    assert a.columns.keys() == b.columns.keys() and all(np.array_equal(a[k], b[k]) for k in a.columns)
    bad = write_with_backend(s, tmp_path / "bad.ssd", '<mc:Backend name="quantum"/>')
    assert main(["run", str(bad), "--quiet", "--out", str(tmp_path / "bad")]) == 2
    assert "unknown backend 'quantum'" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_ray_backend_matches_in_process(payload_fmu, tmp_path, ray_local, capsys):
    from orchestration.cli.main import main
    from orchestration.master.observers.results import load_results
    from orchestration.system.ssp import write_ssp

    s = chain(payload_fmu)
    path = write_ssp(s, tmp_path / "chain.ssd")
    common = ["--stop", "0.5", "--step", "0.05", "--method", "gauss-seidel", "--quiet"]
    assert main(["run", str(path), *common, "--out", str(tmp_path / "ref")]) == 0
    assert main(["run", str(path), *common, "--backend", "ray", "--place", 'a={"num_cpus": 1}',
                 "--out", str(tmp_path / "ray")]) == 0
    a, b = load_results(tmp_path / "ref"), load_results(tmp_path / "ray")
    assert all(np.array_equal(a[k], b[k]) for k in a.columns) and np.array_equal(a.time, b.time)
    actors = json.loads((tmp_path / "ray" / "metadata.json").read_text())["actors"]
    assert sorted(actors) == ["a", "b", "c"] and all("mc_ray_fmu_" in v["fmu"] for v in actors.values())
    assert len({v["pid"] for v in actors.values()}) == 3
    # an actor group: b and c share one actor (one call per macro step for both)
    assert main(["run", str(path), *common, "--backend", "ray", "--place", "b=group=light", "--place", "c=group=light",
                 "--out", str(tmp_path / "group")]) == 0
    actors = json.loads((tmp_path / "group" / "metadata.json").read_text())["actors"]
    assert actors["b"]["pid"] == actors["c"]["pid"] != actors["a"]["pid"] and actors["b"]["hosts"] == ["b", "c"]
    g = load_results(tmp_path / "group")
    assert all(np.array_equal(a[k], g[k]) for k in a.columns)


def test_a_ray_address_ray_cannot_parse_is_a_backend_error():
    """ray.init raises ValueError for an address it cannot parse (before connecting): that was an
    internal error from the Python API (the command line refuses such addresses earlier)."""
    pytest.importorskip("ray")
    import subprocess
    import sys

    # in a process of its own: connect() does nothing in a process already connected to Ray (an
    # earlier test of this worker may have started one), and then never reads the address
    code = ("from orchestration.backends.ray import connect\n"
            "from orchestration.errors import BackendError\n"
            "try:\n    connect('256.1.1.1:notaport')\nexcept BackendError as exc:\n    print('BackendError:', exc)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "BackendError: cannot start or join the Ray cluster at 256.1.1.1:notaport" in done.stdout, \
        done.stdout + done.stderr
