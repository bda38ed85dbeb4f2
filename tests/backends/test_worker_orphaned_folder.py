"""A process-backend worker removes its own temporary folder (its unzipped FMUs) and ends when its
socket to the master closes: a master killed by SIGKILL cannot remove them itself."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

MASTER = """
import sys
from pathlib import Path
from orchestration.backends.process import ProcessPool
from orchestration.master.algorithms.fixed import FixedStepAlgorithm
from orchestration.master.execution import Execution
from tests.backends.test_backends import chain

def main():
    pool = ProcessPool(2)
    ex = Execution(chain(Path(sys.argv[1])), FixedStepAlgorithm(method="jacobi"), slave_factory=pool.slave)
    ex.initialize()
    ex.run(0.1, 0.05)
    for w in pool.workers:
        print(w.peer.workdir, flush=True)
    print("running", flush=True)
    ex.run(1.0e6, 0.05)       # until killed


if __name__ == "__main__":     # spawn workers import this file again
    main()
"""


def _wait_until(condition, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


def test_workers_remove_their_folders_when_the_master_is_killed(payload_fmu, tmp_path):
    script = tmp_path / "master.py"
    script.write_text(MASTER)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    master = subprocess.Popen([sys.executable, str(script), str(payload_fmu)], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, text=True)
    folders: list[Path] = []
    try:
        for line in master.stdout:
            if line.strip() == "running":
                break
            folders.append(Path(line.strip()))
        assert len(folders) == 2, folders
        for folder in folders:       # the FMUs are unzipped there
            assert any(folder.glob("mc_fmu_*/modelDescription.xml")), folder
        master.send_signal(signal.SIGKILL)
        master.wait(timeout=30)
        assert _wait_until(lambda: not any(f.exists() for f in folders), timeout=30.0), \
            [f for f in folders if f.exists()]
    finally:
        if master.poll() is None:
            master.kill()
            master.wait()
        for folder in folders:       # nothing left behind when the check fails
            shutil.rmtree(folder, ignore_errors=True)
