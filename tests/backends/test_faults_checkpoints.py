"""Faults and checkpoints (issue 10): a worker process or Ray actor killed mid-run stops the master
with an error naming the FMU instance, the results written so far stay on disk, and the run resumes
from its last checkpoint to the same numbers as a run that was never interrupted -- bit for bit, also
for an adaptive algorithm and across backends; a hung worker is stopped after the call timeout.
"""
from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import numpy as np
import pytest

from orchestration.master.observers.checkpoint import CheckpointError, find_checkpoint, list_checkpoints, read_manifest
from orchestration.master.execution import ExecutionError
from orchestration.master.manipulators import Manipulator
from orchestration.master.observers import Observer
from orchestration.master.observers.results import load_results
from orchestration.runs.run import RunSettings, resume_run, run
from orchestration.system.ssp import write_ssp
from orchestration.system.model import Component, System


def chain_file(payload_fmu, folder: Path) -> Path:
    s = System("chain")
    s.add_component(Component("a", payload_fmu, {"mass": 1.0}))
    s.add_component(Component("b", payload_fmu, {"mass": 2.0, "gravity": 0.0}))
    s.add_component(Component("c", payload_fmu, {"mass": 3.0, "gravity": 0.0}))
    s.connect("a.cg.position[2]", "b.cg.force[0]", factor=1.5)
    s.connect("b.cg.acceleration[0]", "c.cg.force[1]", factor=3.0)
    return write_ssp(s, folder / "chain.ssd")


class Killer(Manipulator):
    """Kills (or stops) the worker process or Ray actor of one component before the step at ``at``."""

    def __init__(self, component: str, at: float, how: str = "kill"):
        self.component, self.at, self.how, self.done = component, at, how, False

    def before_step(self, execution, t, h):
        if self.done or t < self.at - 1e-9:
            return
        self.done = True
        slave = execution.slaves[execution.index[self.component]]
        if hasattr(slave, "pid"):
            os.kill(slave.pid, signal.SIGKILL if self.how == "kill" else signal.SIGSTOP)
        else:
            import time

            import ray

            pid = slave.where_is()["pid"]          # the actor's process (a local Ray instance)
            ray.kill(slave.actor, no_restart=True)
            # ray.kill only asks the cluster to end the actor: wait until its process has ended, so
            # the step at ``at`` is the one that fails (a direct connection answers in ~0.1 ms)
            deadline = time.monotonic() + 30.0
            while _running(pid) and time.monotonic() < deadline:
                time.sleep(0.005)


def _running(pid: int) -> bool:
    """The process exists and is not a zombie (Linux /proc)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


class Crash(Manipulator):
    """Raises at ``at`` (a master that dies, for in-process runs)."""

    def __init__(self, at: float):
        self.at = at

    def before_step(self, execution, t, h):
        if t >= self.at:
            raise RuntimeError("simulated crash")


class Pids(Observer):
    def on_start(self, execution):
        self.pids = [s.pid for s in execution.slaves if hasattr(s, "pid")]


def same_results(a: Path, b: Path) -> None:
    ra, rb = load_results(a), load_results(b)
    assert np.array_equal(ra.time, rb.time), (len(ra.time), len(rb.time))
    assert ra.columns.keys() == rb.columns.keys()
    for k in ra.columns:
        assert np.array_equal(ra[k], rb[k]), k
    # the CSV carries the same rows (no row twice after a resume)
    ca = np.loadtxt(a / "results.csv", delimiter=",", skiprows=1)
    cb = np.loadtxt(b / "results.csv", delimiter=",", skiprows=1)
    assert np.array_equal(ca, cb)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["process", "ray", "ray-group"])
def test_killed_worker_names_the_fmu_keeps_results_and_resumes_exactly(payload_fmu, tmp_path, backend, request):
    """ray-group: b and c share one actor; killing it loses both (the error names the first)."""
    if backend.startswith("ray"):
        request.getfixturevalue("ray_local")
    system = chain_file(payload_fmu, tmp_path)
    common = dict(system=str(system), stop=2.0, step=0.05, options={"method": "jacobi"}, quiet=True)
    run(RunSettings(out=str(tmp_path / "ref"), **common))

    out = tmp_path / "run"
    placement = {"b": {"group": "bc"}, "c": {"group": "bc"}} if backend == "ray-group" else {}
    settings = RunSettings(out=str(out), backend=backend.split("-")[0], placement=placement, checkpoint_every=0.5,
                           flush_every=10_000, **common)
    pids = Pids()
    with pytest.raises(ExecutionError) as failure:
        run(settings, manipulators=[Killer("b", 1.2)], observers=[pids])
    message = str(failure.value)
    died = {"process": "worker process .* was killed by signal SIGKILL", "ray": "Ray actor died",
            "ray-group": r"Ray actor \(group 'bc', hosting b, c\) died"}[backend]
    import re

    assert message.startswith("b (Payload.fmu)") and re.search(died, message) and "doStep(t = 1.2 s" in message, message
    # results up to the failure are on disk, and say why the run ended
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["status"] == "failed" and "b (Payload.fmu)" in meta["error"]
    kept = load_results(out)
    assert kept.time[-1] == pytest.approx(1.2) and len(kept.time) == 25
    # no worker outlives the run
    for pid in getattr(pids, "pids", []):
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    # checkpoints at 0.5 and 1.0 s; resume from the last one with the same backend
    assert [read_manifest(c)["time"] for c in list_checkpoints(out / "checkpoints")] == pytest.approx([0.5, 1.0])
    assert read_manifest(find_checkpoint(out))["settings"]["backend"] == backend.split("-")[0]
    report = resume_run(out)
    assert report.start_time == pytest.approx(1.0) and report.time == pytest.approx(2.0)
    same_results(out, tmp_path / "ref")
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["status"] == "completed" and meta["resumed"][0]["time"] == pytest.approx(1.0)


@pytest.mark.slow
def test_hung_worker_is_stopped_after_the_call_timeout(payload_fmu, tmp_path):
    system = chain_file(payload_fmu, tmp_path)
    settings = RunSettings(system=str(system), out=str(tmp_path / "run"), stop=1.0, step=0.05, backend="process",
                           call_timeout=1.0, quiet=True)
    with pytest.raises(ExecutionError, match=r"^c \(Payload.fmu\): no answer from its worker process .* within 1 s"):
        run(settings, manipulators=[Killer("c", 0.3, how="stop")])
    assert json.loads((tmp_path / "run" / "metadata.json").read_text())["status"] == "failed"


@pytest.fixture(scope="module")
def b3_fmus(tmp_path_factory):
    from tests.models.b3.build import build_b3_fmus

    return build_b3_fmus(tmp_path_factory.mktemp("b3_checkpoints"))


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["error-control", "ecco"])
def test_adaptive_run_resumes_on_another_backend_to_the_same_numbers(b3_fmus, tmp_path, algorithm):
    """The adaptive step, the controller memory and the log come back with the checkpoint; a run
    checkpointed in-process continues in worker processes."""
    from tests.models.b3.build import b3_system

    s = b3_system(b3_fmus, "T3-3")
    path = write_ssp(s, tmp_path / "b3.ssd")
    common = dict(system=str(path), stop=0.16, step=0.01, algorithm=algorithm,
                  options={"rtol": 1e-2, "atol": 1e-3, "method": "gauss-seidel"}, quiet=True)   # 20-40 steps
    run(RunSettings(out=str(tmp_path / "ref"), **common))
    out = tmp_path / "run"
    with pytest.raises(RuntimeError, match="simulated crash"):
        run(RunSettings(out=str(out), checkpoint_every=0.05, **common), manipulators=[Crash(0.12)])
    last = find_checkpoint(out)
    assert 0.1 - 1e-9 <= read_manifest(last)["time"] < 0.12          # a sum of adaptive steps: 0.0999...9
    resume_run(out, {"backend": "process"})
    same_results(out, tmp_path / "ref")
    # the step log (times, steps, errors, the variable that set each step) to the last digit
    assert (out / "algorithm.csv").read_text() == (tmp_path / "ref" / "algorithm.csv").read_text()


def test_cli_checkpoint_resume_and_run_longer(payload_fmu, tmp_path, capsys):
    from orchestration.cli.main import main

    system = chain_file(payload_fmu, tmp_path)
    args = ["--step", "0.05", "--quiet"]
    assert main(["run", str(system), "--stop", "1.5", *args, "--out", str(tmp_path / "ref")]) == 0
    out = tmp_path / "run"
    assert main(["run", str(system), "--stop", "1", "--checkpoint-every", "0.25", *args, "--out", str(out)]) == 0
    assert len(list_checkpoints(out / "checkpoints")) == 3          # 0.5, 0.75, 1.0 (the last three kept)
    capsys.readouterr()
    assert main(["run", "--resume", str(out), "--stop", "1.5", "--quiet"]) == 0
    assert "resumed at t = 1 s" in capsys.readouterr().out
    same_results(out, tmp_path / "ref")
    # clear errors
    assert main(["run", str(system), "--resume", str(out)]) == 2
    assert "either SYSTEM or --resume" in capsys.readouterr().err
    assert main(["run", "--resume", str(tmp_path)]) == 2
    assert "no checkpoint in" in capsys.readouterr().err
    assert main(["run", str(system), "--stop", "1", "--checkpoint-every", "-1", *args, "--out",
                 str(tmp_path / "neg")]) == 2
    assert "positive time" in capsys.readouterr().err


@pytest.mark.gcc
def test_checkpoints_need_serializable_fmus(tmp_path):
    from tests.models.c_fmu.build_fmi1 import build_oscillator_fmi1_fmu

    s = System("fmi1")
    s.add_component(Component("osc", build_oscillator_fmi1_fmu(tmp_path), {}))
    path = write_ssp(s, tmp_path / "osc.ssd")
    with pytest.raises(CheckpointError, match="osc .*cannot"):
        run(RunSettings(system=str(path), out=str(tmp_path / "o"), stop=0.1, step=0.01, checkpoint_every=0.05))
