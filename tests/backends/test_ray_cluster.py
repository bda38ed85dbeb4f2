"""A two-node Ray cluster on this machine (issue 10): a head node and a second node that offers a
custom resource ``windows``, both on loopback addresses (127.0.0.2 and 127.0.0.3; Ray would turn
127.0.0.1 into the machine's outside address). ``marine-cosim run --backend ray --ray-address ...
--place b=windows=1`` puts component b on the second node, ships the FMU there through the object
store and gives the in-process numbers bit for bit; ``marine-cosim sweep --ray-address ...`` spreads
its cases over both nodes.

The cluster is started with ``ray start --block`` in process groups of its own and stopped by
signalling exactly those groups, whatever the tests do (a finalizer), so nothing outlives them and
no other Ray on the machine is touched. It uses Ray's token authentication with a token of its own,
given to the nodes and the drivers through the environment.
"""
from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from orchestration.master.observers.results import load_results
from orchestration.runs.run import RunSettings, run
from orchestration.system.ssp import write_ssp
from orchestration.runs.sweep import load_summary
from orchestration.system.model import Component, System

pytestmark = [pytest.mark.cluster, pytest.mark.slow]     # starts a two-node Ray cluster on loopback

HEAD_IP, WORKER_IP = "127.0.0.2", "127.0.0.3"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HEAD_IP, 0))
        return s.getsockname()[1]


def _wait_for(path: Path, text: str, process: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.is_file() and text in path.read_text(errors="replace"):
            return
        if process.poll() is not None:
            raise RuntimeError(f"ray start ended with "
                               f"{process.returncode}:\n{path.read_text(errors='replace')[-3000:]}")
        time.sleep(0.2)
    raise RuntimeError(f"ray start did not come up within {timeout:g} s:\n{path.read_text(errors='replace')[-3000:]}")


def _stop(process: subprocess.Popen) -> None:
    """Stop a `ray start --block` and everything in its process group (only those processes)."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(timeout=15)


@pytest.fixture(scope="module")
def cluster():
    """Head (1 CPU) and a 'windows' node (1 CPU, resource windows=1); yields the address."""
    ray = str(Path(sys.executable).parent / "ray")
    folder = Path(tempfile.mkdtemp(prefix="mcray", dir="/tmp"))     # short: Ray's socket paths must fit 107 chars
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token",
           "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    port = _free_port()
    started = []
    try:
        head_log = folder / "head.log"
        head = subprocess.Popen([ray, "start", "--head", "--block", f"--port={port}", f"--node-ip-address={HEAD_IP}",
                                 "--num-cpus=1", "--include-dashboard=false", "--disable-usage-stats",
                                 f"--temp-dir={folder / 't'}"], stdout=open(head_log, "w"), stderr=subprocess.STDOUT,
                                env=env, start_new_session=True)
        started.append(head)
        _wait_for(head_log, "Ray runtime started", head)
        worker_log = folder / "worker.log"
        worker = subprocess.Popen([ray, "start", "--block", f"--address={HEAD_IP}:{port}",
                                   f"--node-ip-address={WORKER_IP}", "--num-cpus=1", '--resources={"windows": 1}',
                                   "--disable-usage-stats"], stdout=open(worker_log, "w"), stderr=subprocess.STDOUT,
                                  env=env, start_new_session=True)
        started.append(worker)
        _wait_for(worker_log, "Ray runtime started", worker)
        yield {"address": f"{HEAD_IP}:{port}", "env": env}
    finally:
        for process in reversed(started):
            _stop(process)
        import shutil

        shutil.rmtree(folder, ignore_errors=True)


def _cli(cluster: dict, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """marine-cosim in a process of its own (this test process may hold a local Ray instance)."""
    return subprocess.run([sys.executable, "-m", "orchestration.cli.main", *args], capture_output=True, text=True,
                          cwd=cwd, env=cluster["env"], timeout=300)


@pytest.mark.slow
def test_fmu_placed_on_the_windows_node_gives_in_process_numbers(cluster, payload_fmu, tmp_path):
    s = System("chain")
    s.add_component(Component("a", payload_fmu, {"mass": 1.0}))
    s.add_component(Component("b", payload_fmu, {"mass": 2.0, "gravity": 0.0}))
    s.connect("a.cg.position[2]", "b.cg.force[0]", factor=1.5)
    path = write_ssp(s, tmp_path / "chain.ssd")
    run(RunSettings(system=str(path), out=str(tmp_path / "ref"), stop=0.5, step=0.05, quiet=True))
    warn = {**cluster, "env": {**cluster["env"], "PYTHONWARNINGS": "always"}}
    done = _cli(warn, "run", str(path), "--stop", "0.5", "--step", "0.05", "--backend", "ray", "--ray-address",
                cluster["address"], "--place", "b=windows=1", "--quiet", "--out", str(tmp_path / "ray"), cwd=tmp_path)
    assert done.returncode == 0 and "no direct connection" not in done.stderr, done.stderr
    meta = json.loads((tmp_path / "ray" / "metadata.json").read_text())
    assert meta["actors"]["b"]["node_ip"] == WORKER_IP
    # the steps went over the direct connection (ray_direct), to the actor's node address
    assert meta["actors"]["b"]["transport"] == "direct"
    assert meta["actors"]["b"]["direct_address"].startswith(WORKER_IP + ":")
    # the FMU reached the node through the object store, into a folder of the actor's own
    assert "mc_ray_fmu_" in meta["actors"]["b"]["fmu"] and str(payload_fmu) != meta["actors"]["b"]["fmu"]
    a, b = load_results(tmp_path / "ref"), load_results(tmp_path / "ray")
    assert np.array_equal(a.time, b.time) and all(np.array_equal(a[k], b[k]) for k in a.columns)
    # the same through Ray compiled graphs (ray_cgraph), one of them to the other node: no fallback
    graphs = {**cluster, "env": {**cluster["env"], "MARINE_COSIM_RAY_COMPILED": "1", "PYTHONWARNINGS": "always"}}
    done = _cli(graphs, "run", str(path), "--stop", "0.5", "--step", "0.05", "--backend", "ray", "--ray-address",
                cluster["address"], "--place", "b=windows=1", "--quiet", "--out", str(tmp_path / "cg"), cwd=tmp_path)
    assert done.returncode == 0 and "no Ray compiled graph" not in done.stderr, done.stderr
    c = load_results(tmp_path / "cg")
    assert np.array_equal(a.time, c.time) and all(np.array_equal(a[k], c[k]) for k in a.columns)
    # a placement no node offers is refused at once
    done = _cli(cluster, "run", str(path), "--stop", "0.5", "--step", "0.05", "--backend", "ray", "--ray-address",
                cluster["address"], "--place", "a=licence=1", "--quiet", "--out", str(tmp_path / "bad"), cwd=tmp_path)
    assert done.returncode == 2 and "no node of the Ray cluster offers licence=1" in done.stderr


@pytest.mark.slow
def test_sweep_spreads_its_cases_over_the_cluster(cluster, payload_fmu, tmp_path):
    s = System("drop", stop_time=0.3, base_step=0.05)
    s.add_component(Component("p", payload_fmu, {"mass": 1000.0, "hydro.volume": 0.5}))
    path = write_ssp(s, tmp_path / "drop.ssd")
    done = _cli(cluster, "sweep", str(path), "--grid", "p.mass=500,2000", "--summary", "p.cg.position[2]:max",
                "--ray-address", cluster["address"], "--out", str(tmp_path / "sweep"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = load_summary(tmp_path / "sweep" / "summary.csv")
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert sorted(r["node"] for r in rows) == [HEAD_IP, WORKER_IP]     # one CPU per node: one case each
    assert (tmp_path / "sweep" / "runs" / "run-0002" / "results.csv").is_file()
