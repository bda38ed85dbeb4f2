"""Fixtures of the FMU tests: C hosts compiled once, the portable FMUs built once per session, and a
mount namespace in which no Python exists."""
from __future__ import annotations

import glob
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import fmpy
import pytest

import build_fmus
from tests.support.fmu_runner import FmuUnderTest

C_HOST_DIR = Path(__file__).resolve().parents[1] / "models" / "c_host"
FMI_HEADERS = Path(fmpy.__file__).parent / "c-code"


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without anything that would lend an FMU a Python."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "LD_LIBRARY_PATH")
           and not k.startswith(("PYTEST", "MARINE_COSIM_"))}
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def c_host(tmp_path_factory) -> Path:
    """tests/models/c_host/fmi2_host.c compiled: a minimal FMI importer that links no Python."""
    gcc = shutil.which("gcc")
    assert gcc, "gcc is needed to build the C test host"
    exe = tmp_path_factory.mktemp("c_host") / "fmi2_host"
    subprocess.run([gcc, "-O1", f"-I{FMI_HEADERS}", "-o", str(exe), str(C_HOST_DIR / "fmi2_host.c"), "-ldl", "-lm"],
                   check=True)
    linked = subprocess.run(["ldd", str(exe)], capture_output=True, text=True).stdout
    assert "python" not in linked.lower(), "the test host must not link Python"
    return exe


@pytest.fixture(scope="session")
def cosim_host(tmp_path_factory) -> Path:
    """tests/models/c_host/cosim_host.c linked against libcosimpy's libcosimc.so, both copied to a
    folder of their own (so they stay visible when the venv is hidden)."""
    import libcosimpy

    folder = tmp_path_factory.mktemp("cosim_host")
    library = Path(libcosimpy.__file__).parent / "libcosimc" / "libcosimc.so"
    shutil.copy2(library, folder / library.name)
    exe = folder / "cosim_host"
    subprocess.run([shutil.which("gcc") or "gcc", "-O1", "-o", str(exe), str(C_HOST_DIR / "cosim_host.c"),
                    f"-L{folder}", "-lcosimc", "-Wl,-rpath,$ORIGIN"], check=True)
    return exe


@pytest.fixture(scope="module")
def portable_fmu_dir(tmp_path_factory) -> Path:
    """The FMUs the portable tests drive (the offshore lift's five and the Contact; test_fmu_portable.py),
    built with build_fmus.py --portable, once for the module that uses them (its tests share one
    pytest-xdist worker, tests/conftest.py): the other adapters share the same build path, and
    building them all (a runtime in each) cost 160 s of the suite."""
    out = tmp_path_factory.mktemp("portable_fmus")
    build_fmus.build_all(out, ["Cable", "Contact", "Crane", "Payload", "Ship", "Winch"], portable=True)
    return out


def python_prefixes() -> tuple[list[str], list[str]]:
    """Folders and files through which a process could find a Python on this machine: the
    interpreters' prefixes (pyenv, Debian's), this venv and this checkout."""
    root = str(build_fmus.ROOT)
    folders = {sys.prefix, sys.base_prefix, os.path.realpath(sys.base_prefix), root, "/root/.pyenv",
               *glob.glob("/usr/lib/python3*"), *glob.glob("/usr/local/lib/python3*"), "/usr/share/python3"}
    folders = sorted(f for f in folders if os.path.isdir(f))
    # a folder inside another one is hidden with it (and cannot be mounted over once it is)
    folders = [f for f in folders if not any(f != g and f.startswith(g.rstrip("/") + "/") for g in folders)]
    files = {os.path.realpath(f) for f in glob.glob("/usr/bin/python*") + glob.glob("/usr/local/bin/python*")
             + glob.glob("/usr/lib/x86_64-linux-gnu/libpython*")}
    files = sorted(f for f in files if os.path.isfile(f) and not any(f.startswith(g + "/") for g in folders))
    return folders, files


def without_python(command: list[str]) -> list[str]:
    """``command`` wrapped to run in a private mount namespace where every Python prefix is an empty
    tmpfs and every python executable and libpython is /dev/null; the wrapper first checks that no
    python can be started there."""
    folders, files = python_prefixes()
    steps = [f"mount -t tmpfs none {shlex.quote(f)}" for f in folders]
    steps += [f"mount --bind /dev/null {shlex.quote(f)}" for f in files]
    steps += ["for p in python3 python python3.11 python3.12; do if command -v $p >/dev/null 2>&1 && $p -c 1 "
              "2>/dev/null; then echo \"a python is still reachable: $p\" >&2; exit 99; fi; done"]
    script = "set -e; " + "; ".join(steps) + '; exec "$@"'
    return ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", *command]


@pytest.fixture
def open_fmu(fmu_dir):
    """``open_fmu(model)``: the freshly built FMU ``model`` instantiated, freed after the test."""
    opened = []

    def open_(model: str) -> FmuUnderTest:
        opened.append(FmuUnderTest(fmu_dir / f"{model}.fmu"))
        return opened[-1]
    yield open_
    for fmu in opened:
        fmu.close()
