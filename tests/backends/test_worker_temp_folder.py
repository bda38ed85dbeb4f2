"""A worker process unzips its FMUs in a temporary folder the master removes once the worker has
ended, killed or not (issue 23: a worker killed by SIGKILL left its unzipped FMU behind)."""
from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from orchestration.backends.process import ProcessPool
from orchestration.master.algorithms.fixed import FixedStepAlgorithm
from orchestration.master.execution import Execution, ExecutionError
from tests.backends.test_backends import chain


def test_a_killed_workers_unzipped_fmus_are_removed(payload_fmu):
    pool = ProcessPool(2)
    ex = Execution(chain(payload_fmu), FixedStepAlgorithm(method="jacobi"), slave_factory=pool.slave)
    try:
        folders = {w.peer.workdir: w for w in pool.workers}
        assert len(folders) == 2
        ex.initialize()
        ex.run(0.1, 0.05)
        for folder in folders:     # the FMUs are unzipped there
            assert any(Path(folder).glob("mc_fmu_*/modelDescription.xml")), folder
        killed = next(f for f, w in folders.items() if ex.slaves[2].pid == w.peer.pid)
        os.kill(ex.slaves[2].pid, signal.SIGKILL)
        with pytest.raises(ExecutionError, match="SIGKILL"):
            ex.run(0.3, 0.05)
        assert not Path(killed).exists()            # removed when the death was seen
    finally:
        ex.free()
    assert not any(Path(f).exists() for f in folders)
