"""The FMU binary's Windows half (process mode, docs/fmu_runtime.md "Windows") cross-compiles with
mingw-w64 into a DLL that exports the FMI 2.0 API and needs only KERNEL32 and the C runtime.
It is never run here: there is no Windows runtime bundle yet (see the docs)."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

import build_fmus
from tests.fmus.conftest import FMI_HEADERS

pytestmark = [pytest.mark.slow, pytest.mark.gcc]

FMI2_CO_SIMULATION = ("fmi2Instantiate", "fmi2FreeInstance", "fmi2SetupExperiment", "fmi2EnterInitializationMode",
                      "fmi2ExitInitializationMode", "fmi2DoStep", "fmi2GetReal", "fmi2SetReal", "fmi2GetFMUstate",
                      "fmi2SerializeFMUstate", "fmi2DeSerializeFMUstate", "fmi2Terminate", "fmi2GetVersion")


def test_win64_binary_cross_compiles(tmp_path):
    if not shutil.which("x86_64-w64-mingw32-gcc"):   # the test sets itself up: Debian's cross compiler
        subprocess.run(["apt-get", "install", "-y", "-q", "gcc-mingw-w64-x86-64"], check=True, capture_output=True,
                       timeout=1800)
    dll = tmp_path / "Payload.dll"
    subprocess.run(["x86_64-w64-mingw32-gcc", "-shared", "-O2", "-Wall", "-Werror", "-Wno-format-truncation",
                    f"-I{FMI_HEADERS}", "-o", str(dll), str(build_fmus.LOADER_SOURCE), "-static-libgcc", "-s"],
                   check=True, capture_output=True, text=True)
    table = subprocess.run(["x86_64-w64-mingw32-objdump", "-p", str(dll)], capture_output=True, text=True,
                           check=True).stdout
    assert set(re.findall(r"DLL Name: (\S+)", table)) <= {"KERNEL32.dll", "msvcrt.dll"}
    exported = set(re.findall(r"\]\s+(fmi2\w+)", table))
    assert set(FMI2_CO_SIMULATION) <= exported
