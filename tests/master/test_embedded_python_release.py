"""pythonfmu3 binaries free their embedded-interpreter state twice at exit unless the host calls
their ``finalizePythonInterpreter`` first (release_embedded_python in orchestration/master/slaves.py;
the intermittent glibc abort after test_fmi_types.py and test_master.py)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from orchestration.master.slaves import InProcessSlave, release_embedded_python

ROOT = Path(__file__).resolve().parents[2]


class _Library:
    """A stand-in for a ctypes library; ``exports`` the finalizer or not."""

    def __init__(self, calls: list[str], exports: bool):
        self._calls = calls
        if exports:
            self.finalizePythonInterpreter = lambda: calls.append("finalize")


class _Fmu:
    """FMPy's FMU3Slave as far as free goes: its freeInstance also unloads the library."""

    def __init__(self, calls: list[str], exports: bool):
        self.dll = _Library(calls, exports)
        self.component = object()
        self._calls = calls

    def fmi3FreeInstance(self, component) -> None:
        self._calls.append("fmi3FreeInstance")

    def freeLibrary(self) -> None:
        self._calls.append("freeLibrary")

    def freeInstance(self) -> None:
        self.fmi3FreeInstance(self.component)
        self.freeLibrary()


def _slave(calls: list[str], version: str, exports: bool) -> InProcessSlave:
    slave = InProcessSlave.__new__(InProcessSlave)
    slave.fmi_version, slave._own_dir = version, False
    slave._fmu = _Fmu(calls, exports)
    return slave


def test_free_finalizes_a_pythonfmu3_binary_before_unloading_it():
    calls: list[str] = []
    slave = _slave(calls, "3.0", exports=True)
    slave.free()
    # the library is unloaded only after the finalizer ran
    assert calls == ["fmi3FreeInstance", "finalize", "freeLibrary"]
    assert slave._fmu is None
    slave.free()                                   # once: a second free calls nothing
    assert calls == ["fmi3FreeInstance", "finalize", "freeLibrary"]


def test_binaries_without_the_symbol_are_left_alone():
    calls: list[str] = []
    _slave(calls, "3.0", exports=False).free()
    assert calls == ["fmi3FreeInstance", "freeLibrary"]
    calls.clear()
    _slave(calls, "2.0", exports=True).free()      # FMI 2.0: FMPy's freeInstance as before
    assert calls == ["fmi3FreeInstance", "freeLibrary"]
    assert release_embedded_python(_Library([], exports=False)) is False


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_no_use_after_free_at_exit_under_valgrind(tmp_path):
    from tests.models.fmi3.build import build_fmi3_fmus

    fmu = build_fmi3_fmus(tmp_path)["Feedthrough3"]
    script = tmp_path / "load_step_free.py"
    script.write_text(
        "import sys\n"
        "from orchestration.master.slaves import InProcessSlave\n"
        "s = InProcessSlave('f', sys.argv[1])\n"
        "s.instantiate(); s.setup(0.0, None); s.enter_initialization(); s.exit_initialization()\n"
        "s.do_step(0.0, 0.1)\n"
        "s.terminate(); s.free()\n")
    # addressability errors only (invalid reads, writes and frees: a use after free is one);
    # without tracking undefined values memcheck runs the interpreter about twice as fast
    run = subprocess.run(["valgrind", "--errors-for-leak-kinds=none", "--undef-value-errors=no",
                          sys.executable, str(script), str(fmu)],
                         cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PYTHONMALLOC": "malloc",
                                        "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, timeout=900)
    errors = _invalid_accesses(run.stderr)
    # before the fix: invalid reads inside finalizePythonInterpreter of the PyState block the exit
    # handlers had freed (the decrement that follows is the write glibc aborts on); glibc's own
    # dl-load strncmp reads are valgrind noise, present with and without the fix
    ours = [e for e in errors if "finalizePythonInterpreter" in e or "Invalid write" in e or "Invalid free" in e]
    assert not ours, "\n\n".join(ours)[-4000:]


def _invalid_accesses(report: str) -> list[str]:
    """The valgrind error blocks of ``report`` that start with "Invalid"."""
    blocks, current = [], []
    for line in report.splitlines():
        text = line.split("== ", 1)[-1] if line.startswith("==") else line
        if not text.strip():
            if current:
                blocks.append("\n".join(current))
            current = []
        else:
            current.append(text)
    if current:
        blocks.append("\n".join(current))
    return [b for b in blocks if b.startswith("Invalid")]
