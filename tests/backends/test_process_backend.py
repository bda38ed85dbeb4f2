"""The process backend's worker pools and the backend annotation of SSP files.

``workers=N`` hosts the FMUs in N worker processes (round-robin): the numbers stay those of the
in-process run bit for bit, FMUs really share a process, a killed shared worker stops the run
naming an FMU it hosted and no worker outlives its execution. The SSP writer writes the
``mc:Backend`` annotation the reader understands, so converting a system keeps its backend.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from orchestration.master.algorithms.fixed import FixedStepAlgorithm
from orchestration.backends import BackendConfig, BackendError, backend_from_system, make_slave_factory, \
    resolve_backend
from orchestration.master.execution import Execution, ExecutionError
from orchestration.backends.process import ProcessPool
from orchestration.system.ssp import write_ssp
from orchestration.system.model import Component, System, SystemFileError
from orchestration.system.files import load_system
from tests.backends.test_backends import chain, record

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("method", ["jacobi", "gauss-seidel"])
def test_shared_workers_give_the_in_process_numbers_bit_for_bit(payload_fmu, method):
    s = chain(payload_fmu)
    t0, y0 = record(s, FixedStepAlgorithm(method=method), None, 0.6, 0.05)
    t1, y1 = record(s, FixedStepAlgorithm(method=method), make_slave_factory(BackendConfig("process", workers=2)),
                    0.6, 0.05)
    assert len(t0) == 13 and np.array_equal(t0, t1) and np.array_equal(y0, y1)
    assert np.isfinite(y0).all() and np.ptp(y0, axis=0).max() > 0     # something moved


def test_round_robin_one_worker_and_the_workers_end_with_the_execution(payload_fmu):
    pool = ProcessPool(2)
    ex = Execution(chain(payload_fmu), FixedStepAlgorithm(), slave_factory=pool.slave)
    try:
        pids = [s.pid for s in ex.slaves]
        assert pids[0] == pids[2] != pids[1] and len(pool.workers) == 2     # a, c in one; b in the other
        ex.initialize()
        ex.run(0.2, 0.05)
    finally:
        ex.free()
    for pid in set(pids):
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    one = ProcessPool(1)
    ex = Execution(chain(payload_fmu), FixedStepAlgorithm(), slave_factory=one.slave)
    try:
        assert len({s.pid for s in ex.slaves}) == 1
        ex.initialize()
        ex.run(0.1, 0.05)
        assert ex.time == pytest.approx(0.1)
    finally:
        ex.free()


def test_killed_shared_worker_names_an_fmu_it_hosted(payload_fmu):
    pool = ProcessPool(2)
    ex = Execution(chain(payload_fmu), FixedStepAlgorithm(method="jacobi"), slave_factory=pool.slave)
    try:
        ex.initialize()
        ex.run(0.1, 0.05)
        os.kill(ex.slaves[2].pid, signal.SIGKILL)                 # the worker of a and c
        with pytest.raises(ExecutionError) as failure:
            ex.run(0.3, 0.05)
        message = str(failure.value)
        assert message.startswith(("a (Payload.fmu)", "c (Payload.fmu)")), message
        assert "hosting a, c) was killed by signal SIGKILL" in message and "the FMU instances are lost" in message
        # the worker of b still answers
        assert ex.slaves[1].get_values(["mass"]) == {"mass": 2.0}
    finally:
        ex.free()


def test_workers_option_is_checked(payload_fmu, tmp_path):
    with pytest.raises(BackendError, match="needs the process backend"):
        BackendConfig("ray", workers=2)
    with pytest.raises(BackendError, match="whole number >= 1"):
        BackendConfig("process", workers=0)
    with pytest.raises(ValueError):
        ProcessPool(0)
    s = chain(payload_fmu)
    path = write_ssp(s, tmp_path / "w.ssd", backend=BackendConfig("process", workers=2))
    assert resolve_backend(load_system(path)).workers == 2
    assert resolve_backend(load_system(path), "process").workers == 2
    assert resolve_backend(load_system(path), "inprocess").workers is None
    assert resolve_backend(load_system(path), workers=1).workers == 1
    bad = tmp_path / "bad.ssd"
    bad.write_text(path.read_text().replace('workers="2"', 'workers="1.5"'))
    with pytest.raises(SystemFileError, match="workers"):
        backend_from_system(load_system(bad))


@pytest.mark.parametrize("config", [
    BackendConfig("ray", "auto", {"b": {"num_cpus": 1.0, "resources": {"windows": 1.0}}, "*": {"group": "light"}},
                  120.0),
    BackendConfig("process", call_timeout=30.0, workers=2),
    BackendConfig("process"),
], ids=["ray", "process-workers", "process"])
def test_ssp_writer_keeps_the_backend_through_a_conversion(payload_fmu, tmp_path, config):
    s = chain(payload_fmu)
    first = write_ssp(s, tmp_path / "first.ssd", backend=config)
    read = backend_from_system(load_system(first))
    assert read.describe() == config.describe()
    # marine-cosim convert: read the file, write another (ssd and ssp): the annotation comes along
    for target in ("second.ssd", "third.ssp"):
        converted = write_ssp(load_system(first), tmp_path / target)
        assert backend_from_system(load_system(converted)).describe() == config.describe()
    # a system without one gets none
    plain = write_ssp(s, tmp_path / "plain.ssd")
    assert "Backend" not in plain.read_text() and backend_from_system(load_system(plain)) is None


def test_cli_convert_keeps_the_backend(payload_fmu, tmp_path):
    source = write_ssp(chain(payload_fmu), tmp_path / "src.ssd", backend=BackendConfig("process", workers=2))
    out = tmp_path / "converted.ssp"
    done = subprocess.run([sys.executable, "-m", "orchestration.cli.main", "convert", str(source), "--to", "ssp",
                           "--out", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    config = backend_from_system(load_system(out))
    assert (config.name, config.workers) == ("process", 2)


def test_unwritable_placement_is_refused(payload_fmu, tmp_path):
    with pytest.raises(SystemFileError, match="max_restarts"):
        write_ssp(chain(payload_fmu), tmp_path / "x.ssd",
                  backend=BackendConfig("ray", placement={"a": {"max_restarts": 2}}))


def _oscillator_chain(fmu: Path) -> System:
    s = System("oscillators")
    for k in range(3):
        s.add_component(Component(f"o{k}", fmu))
    s.connect("o0.x", "o1.F", factor=10.0)
    s.connect("o1.x", "o2.F", factor=10.0)
    return s


@pytest.mark.slow
@pytest.mark.gcc
@pytest.mark.parametrize("fmi", ["2.0", "1.0"])
def test_c_fmus_fmi2_fast_path_and_fmi1_generic_path_are_bit_identical(tmp_path, fmi):
    from tests.models.c_fmu.build import build_oscillator_fmu
    from tests.models.c_fmu.build_fmi1 import build_oscillator_fmi1_fmu

    fmu = (build_oscillator_fmu if fmi == "2.0" else build_oscillator_fmi1_fmu)(tmp_path)
    s = _oscillator_chain(fmu)
    t0, y0 = record(s, FixedStepAlgorithm(), None, 0.2, 0.01)
    assert np.ptp(y0, axis=0).max() > 0
    for config in (BackendConfig("process"), BackendConfig("process", workers=2)):
        t1, y1 = record(s, FixedStepAlgorithm(), make_slave_factory(config), 0.2, 0.01)
        assert np.array_equal(t0, t1) and np.array_equal(y0, y1), config


@pytest.mark.gcc
def test_a_failed_step_in_the_worker_reads_as_in_process(tmp_path):
    from orchestration.backends.process import ProcessSlave
    from orchestration.master.slaves import InProcessSlave, SlaveError
    from tests.models.c_fmu.build import build_oscillator_fmu

    fmu = build_oscillator_fmu(tmp_path)
    messages = []
    for slave in (InProcessSlave("o", fmu), ProcessSlave("o", fmu)):
        try:
            slave.instantiate()
            slave.setup(0.0, None)
            slave.enter_initialization()
            slave.exit_initialization()
            vi, vo = np.array([slave.variables["F"].value_reference]), np.array([slave.variables["x"].value_reference])
            with pytest.raises(SlaveError) as failure:
                slave.exchange(vi, np.array([1.0]), 5.0, 1e-3, vo)      # the FMU is at t = 0
            messages.append(str(failure.value))
            with pytest.raises(SlaveError) as failure:                      # the FMU is in its error state now
                slave.exchange(vi, np.array([1.0]), 0.0, 1e-3, vo)
            messages.append(str(failure.value))
        finally:
            slave.terminate()
            slave.free()
    assert messages[:2] == messages[2:], messages
    assert messages[0].startswith("o (Oscillator.fmu): doStep(t = 5 s") and "currentCommunicationPoint" in messages[0]
    assert messages[1].startswith("o (Oscillator.fmu): setReal failed")


class _ScriptedPeer:
    """The far end of a socket pair driven by the test (no process)."""
    pid, noun = None, "scripted worker"

    def alive(self) -> bool:
        return True

    def describe(self, names) -> str:
        return "scripted worker"

    def ended(self) -> str:
        return "closed its socket"

    def kill(self) -> None:
        pass

    def close(self) -> None:
        pass


def _answer(values: np.ndarray | None = None, error: str | None = None) -> bytes:
    from orchestration.backends import process as pb

    if error is not None:
        blob = error.encode()
        item = pb._ANSWER.pack(pb._ERROR, len(blob)) + blob + bytes(pb._padded(len(blob)) - len(blob))
    else:
        item = pb._ANSWER.pack(pb._VALUES, values.nbytes) + values.tobytes()
    return pb._FRAME.pack(len(item), 1) + item


def test_collect_reads_whole_answers_and_hands_split_or_failed_ones_to_the_general_path():
    """_Reply.collect (Execution.sync's batch read): an answer that arrives whole is read in one
    go; one that arrives in pieces, an error answer and a closed socket take the general path,
    which must pick up the bytes the fast path has read already."""
    import socket
    import threading
    import time

    from orchestration.backends import process as pb
    from orchestration.master.slaves import SlaveError

    class Slave:                                   # what a reply needs of its slave
        def __init__(self, worker):
            self._worker, self._dead, self.name = worker, None, "s"

        def _timeout(self):                        # a lost byte fails the test instead of hanging it
            return 2.0

        def mark_dead(self, how):
            self._dead = self._dead or f"s: {how}"
            return self._dead

    pool = pb.WirePool(heartbeat=0.2)
    ends = [socket.socketpair() for _ in range(4)]
    workers = [pb._Worker(pool, master_end, _ScriptedPeer()) for master_end, _ in ends]
    slaves = [Slave(w) for w in workers]
    for w, s in zip(workers, slaves):
        w.slaves.append(s)
        w.live = 1
    replies = [pb._Reply(s, None, 0.0, 0.1) for s in slaves]
    for k, (w, r) in enumerate(zip(workers, replies)):
        w.add_exchange(0, 1, 2, 0.0, 0.1, np.array([float(k)]), r)
    for _, far in ends:                            # the requests went out, one frame each
        assert len(far.recv(1 << 16)) == pb._STEP.size + 8
    whole, split = _answer(np.array([1.0, 2.0])), _answer(np.array([3.0, 4.0, 5.0]))
    ends[0][1].sendall(whole)
    ends[1][1].sendall(split[:11])                 # the rest comes later
    ends[2][1].sendall(_answer(error="s: doStep failed: status 3 (error)"))
    ends[3][1].close()                             # the worker is gone

    def finish_split():
        time.sleep(0.05)
        ends[1][1].sendall(split[11:])

    threading.Thread(target=finish_split).start()
    pb._Reply.collect(replies)
    assert replies[0].result().tolist() == [1.0, 2.0]
    assert replies[1].result().tolist() == [3.0, 4.0, 5.0]
    with pytest.raises(SlaveError, match="doStep failed"):
        replies[2].result()
    with pytest.raises(SlaveError, match="closed its socket during doStep"):
        replies[3].result()
    assert [w.have for w in workers[:3]] == [0, 0, 0] and not any(w.outstanding for w in workers[:3])
    for master_end, far in ends:
        master_end.close()
        far.close()


@pytest.mark.slow
def test_the_offshore_lift_with_its_events_runs_in_the_process_backend_as_in_process(fmu_dir, tmp_path):
    """The shipped lift's scenario overrides Integer inputs of the Winch (its mode): the worker's fast
    path called fmi2GetReal/fmi2SetReal on them and the run stopped at its first step ('valueReference
    ... is not of type Real'). Every recorded series equals the in-process run's bits."""
    from orchestration.runs import reference as rs
    from orchestration.runs.api import simulate

    system, scenario, _ = rs.load_reference("offshore_lift", fmu_dir, tmp_path / "lift", log=lambda m: None)
    events = rs.events_file("offshore_lift")
    runs = [simulate(system, 1.0, scenario=events, backend=b) for b in ("inprocess", "process")]
    assert len(runs[0].time) == 41 and np.array_equal(runs[0].time, runs[1].time)
    assert sorted(runs[0].columns) == sorted(runs[1].columns)
    differ = [k for k in runs[0].columns if not np.array_equal(runs[0][k], runs[1][k], equal_nan=True)]
    assert differ == []
