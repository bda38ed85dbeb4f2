"""Portable FMUs built with ``--old-glibc`` run on the oldest Debian release the package mirror serves.

``build_fmus.old_glibc_python`` builds a CPython of this project's minor version inside a Debian 11
(bullseye, glibc 2.31) minbase root filesystem made with debootstrap; both are cached in
~/.cache/marine-cosim-build (the first run takes 10-20 minutes, later ones reuse them). The FMUs
built on it run in that root filesystem -- no Python there -- in a C host compiled there, and agree
with the default build run here.
"""
from __future__ import annotations

import shutil
import subprocess
import uuid
import zipfile
from pathlib import Path

import numpy as np
import pytest
from fmpy import extract, read_model_description

import build_fmus
from tests.fmus.conftest import C_HOST_DIR, FMI_HEADERS
from tests.fmus.test_fmu_c_host import CASES, fmpy_rows

pytestmark = [pytest.mark.slow, pytest.mark.gcc]

MODELS = ("Payload", "Ship")   # one without scipy, one with the most of it


@pytest.fixture(scope="module")
def rootfs() -> Path:
    if not shutil.which("debootstrap"):   # the test sets itself up: Debian's package, as root
        subprocess.run(["apt-get", "install", "-y", "-q", "debootstrap"], check=True, capture_output=True,
                       timeout=900)
    return build_fmus.old_release_rootfs()


@pytest.fixture(scope="module")
def old_glibc_fmus(rootfs, tmp_path_factory) -> Path:
    base = build_fmus.old_glibc_python()
    out = tmp_path_factory.mktemp("old_glibc_fmus")
    build_fmus.build_all(out, list(MODELS), portable=True, runtime_base=base)
    return out


@pytest.fixture(scope="module")
def place(rootfs):
    """A folder inside the root filesystem for this test module (removed afterwards)."""
    inside = Path("/tmp") / f"marine-cosim-test-{uuid.uuid4().hex[:8]}"
    (rootfs / inside.relative_to("/")).mkdir(parents=True)
    yield inside
    shutil.rmtree(rootfs / inside.relative_to("/"), ignore_errors=True)


@pytest.fixture(scope="module")
def old_c_host(rootfs, place) -> Path:
    """The C host compiled inside the root filesystem, against its glibc."""
    folder = rootfs / place.relative_to("/")
    shutil.copy2(C_HOST_DIR / "fmi2_host.c", folder)
    for header in FMI_HEADERS.glob("fmi2*.h"):
        shutil.copy2(header, folder)
    subprocess.run(["chroot", str(rootfs), "gcc", "-O1", f"-I{place}", "-o", f"{place}/fmi2_host",
                    f"{place}/fmi2_host.c", "-ldl", "-lm"], check=True, capture_output=True, env=_chroot_env())
    return place / "fmi2_host"


def _chroot_env(**extra: str) -> dict[str, str]:
    return {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LC_ALL": "C", **extra}


def test_the_root_filesystem_is_old_and_has_no_python(rootfs):
    version = subprocess.run(["chroot", str(rootfs), "ldd", "--version"], capture_output=True, text=True,
                             env=_chroot_env()).stdout.splitlines()[0]
    assert version.endswith("2.31"), version
    probe = subprocess.run(["chroot", str(rootfs), "sh", "-c", "command -v python3 python || echo none"],
                           capture_output=True, text=True, env=_chroot_env())
    assert probe.stdout.strip() == "none", probe.stdout


@pytest.mark.parametrize("model", MODELS)
def test_glibc_floor_is_that_of_the_old_release(old_glibc_fmus, model):
    with zipfile.ZipFile(old_glibc_fmus / f"{model}.fmu") as archive:
        binaries = [archive.read(n) for n in archive.namelist() if archive.read(n)[:4] == b"\x7fELF"]
    assert build_fmus.glibc_floor(binaries) <= (2, 31)


@pytest.mark.parametrize("model", MODELS)
def test_portable_fmu_runs_in_the_old_release_like_the_default_build_here(
        rootfs, place, old_c_host, old_glibc_fmus, fmu_dir, model):
    start, names = CASES[model]
    stop, step = 1.0, 0.01
    fmu = old_glibc_fmus / f"{model}.fmu"
    md = read_model_description(str(fmu))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    unzipped = place / f"{model}_unzipped"
    extract(str(fmu), unzipdir=str(rootfs / unzipped.relative_to("/")))
    args = [str(old_c_host), str(unzipped), model, md.guid, repr(stop), repr(step), ",".join(str(vr[n]) for n in names),
            *(f"set:{vr[k]}={v!r}" for k, v in start.items())]
    run = subprocess.run(["chroot", str(rootfs), *args], capture_output=True, text=True, timeout=600,
                         env=_chroot_env(MARINE_COSIM_CACHE=f"{place}/cache"))
    assert run.returncode == 0, run.stderr[-3000:]
    rows = np.loadtxt(run.stdout.splitlines())[:, 1:]
    reference = fmpy_rows(fmu_dir / f"{model}.fmu", start, names, stop, step)
    # another glibc's libm (2.31 against this machine's) may round a transcendental function
    # differently in the last bit; everything else is the same code
    assert np.allclose(rows, reference, rtol=1e-12, atol=1e-12)
