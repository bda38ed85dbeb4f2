"""Compiled kernels for the hot paths of the physics: C sources beside this file, built into one
shared library (``libmc_kernels.so``) and called through ctypes: the articulated-body algorithm
(aba.c) and the crane's RK4 step (crane.c), the rigid body (rigid_body.c), the ship's
seakeeping derivative and RK4 sub-step (ship.c), the lumped-mass line's implicit step
(line.c), the volumetric contact of two boxes (contact.c), the NMPC's prediction model and its
cost batches (nmpc.c), the rope contact's segment depths and loads (rope_contact.c) and the
winch's sub-steps (winch.c). Each has its Python binding beside it (aba.py, crane.py,
rigid_body.py, ship.py, line.py, contact.py, nmpc.py, rope_contact.py, winch.py), used by the
component it speeds up.

The numpy code of each component stays the readable reference; a kernel computes the same
equations in the same way, so results agree to rounding (tests/components/test_kernels.py states
the tolerances). Where no library can be had, the components run their numpy code.

Where the library comes from, first found wins:

1. ``MARINE_COSIM_KERNELS=0`` (or ``off``, ``no``, ``false``) in the environment: none, the
   numpy reference everywhere (for comparisons and for ruling the kernels out).
2. ``libmc_kernels.so`` beside this file: an FMU's copy, compiled by build_fmus.py and shipped
   in the FMU's resources (no compiler needed where it runs).
3. A checkout or an installed package (the C sources beside this file): the library compiled
   once per content of the sources into ``$MARINE_COSIM_KERNEL_CACHE`` (default
   ``$XDG_CACHE_HOME/marine-cosim/kernels``, else ``~/.cache/marine-cosim/kernels``) with the C
   compiler found (``$CC``, ``cc``, ``gcc``); nothing if there is none.

``status()`` tells which, and why not. Only Linux and macOS builds are tried; on other systems the
components run their numpy code.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
LIBRARY = "libmc_kernels.so"
SOURCES = ("aba.c", "crane.c", "rigid_body.c", "ship.c", "line.c", "contact.c", "nmpc.c", "rope_contact.c", "winch.c")
HEADER = "kernels.h"
# the calling conventions of the Python bindings below; kernels.h's MC_KERNELS_ABI must match
ABI = 7
# no FMA contraction (results must not depend on the target CPU), no errno for sqrt (inlined);
# no -march: the library runs on any x86-64; -s: no symbols beyond the exported functions
CFLAGS = ("-O3", "-fPIC", "-shared", "-s", "-ffp-contract=off", "-fno-math-errno", "-std=c99", "-Wall")

_library: ctypes.CDLL | None = None
_status = "not loaded yet"
_tried = False


def source_digest() -> str:
    """Hash of the kernel sources and the flags they are built with (names the cached library)."""
    digest = hashlib.sha256(" ".join(CFLAGS).encode())
    for name in (HEADER, *SOURCES):
        digest.update(name.encode() + b"\0" + (HERE / name).read_bytes())
    return digest.hexdigest()[:16]


def compiler() -> str | None:
    """The C compiler to build the library with, or None."""
    for candidate in (os.environ.get("CC"), "cc", "gcc"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


def compile_library(output: Path, cc: str | None = None) -> Path:
    """Build the library from the sources beside this file into ``output``; raises RuntimeError
    with the compiler's message if it fails."""
    cc = cc or compiler()
    if cc is None:
        raise RuntimeError("no C compiler found (set CC)")
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    # compiled under a temporary name and renamed: processes building at once never see half a file
    fd, partial = tempfile.mkstemp(prefix=".partial-", suffix=".so", dir=output.parent)
    os.close(fd)
    # the sources by their names (no path of this machine in the library): builds are reproducible
    command = [cc, *CFLAGS, "-o", partial, *SOURCES, "-lm"]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=HERE)
        if result.returncode != 0:
            raise RuntimeError(f"compiling the kernels failed ({' '.join(command)}):\n{result.stderr[-3000:]}")
        os.replace(partial, output)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return output


def cache_folder() -> Path:
    env = os.environ.get("MARINE_COSIM_KERNEL_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "marine-cosim" / "kernels"


def _open(path: Path) -> ctypes.CDLL:
    lib = ctypes.CDLL(str(path))
    lib.mc_kernels_abi.restype = ctypes.c_int
    found = lib.mc_kernels_abi()
    if found != ABI:
        raise RuntimeError(f"{path} has kernel ABI {found}, these bindings need {ABI}")
    _declare(lib)
    return lib


def _declare(lib: ctypes.CDLL) -> None:
    ptr, integer = ctypes.c_void_p, ctypes.c_int
    for name in ("mc_aba", "mc_aba_reevaluate", "mc_crane_step", "mc_crane_evaluate"):
        getattr(lib, name).argtypes = [ptr]
        getattr(lib, name).restype = integer
    lib.mc_aba_work_size.argtypes = [integer]
    lib.mc_aba_work_size.restype = integer
    lib.mc_rigid_body_derivative.argtypes = [ptr, ptr, ptr, ptr]
    lib.mc_rigid_body_derivative.restype = None
    lib.mc_rigid_body_step.argtypes = [ptr, ptr, ptr, integer, ctypes.c_double, ptr]
    lib.mc_rigid_body_step.restype = None
    lib.mc_rigid_body_loads.argtypes = [ptr, integer, ptr, ptr]
    lib.mc_rigid_body_loads.restype = None
    lib.mc_rigid_body_motion.argtypes = [ptr, ptr, integer, ptr, ptr]
    lib.mc_rigid_body_motion.restype = None
    lib.mc_rigid_body_accelerations.argtypes = [ptr, ptr, ptr, integer, ptr, ptr, ptr]
    lib.mc_rigid_body_accelerations.restype = None
    lib.mc_ship.argtypes = [ptr, integer]
    lib.mc_ship.restype = integer
    lib.mc_ship_waves.argtypes = [ptr, integer]
    lib.mc_ship_waves.restype = integer
    lib.mc_ship_points.argtypes = [ptr, ptr, integer, ptr]
    lib.mc_ship_points.restype = None
    lib.mc_line_work_size.argtypes = [integer]
    lib.mc_line_work_size.restype = integer
    lib.mc_line_implicit.argtypes = [ptr, ptr]
    lib.mc_line_implicit.restype = integer
    lib.mc_line_end_loads.argtypes = [ptr, ptr]
    lib.mc_line_end_loads.restype = None
    lib.mc_line_advance.argtypes = [ptr, ptr]
    lib.mc_line_advance.restype = integer
    lib.mc_contact_box_box.argtypes = [ptr, ptr]
    lib.mc_contact_box_box.restype = integer
    lib.mc_winch_step.argtypes = [ptr, ptr]
    lib.mc_winch_step.restype = integer
    lib.mc_winch_present_drive.argtypes = [ptr, ptr]
    lib.mc_winch_present_drive.restype = None


def _disabled() -> bool:
    return os.environ.get("MARINE_COSIM_KERNELS", "").strip().lower() in ("0", "off", "no", "false")


def library() -> ctypes.CDLL | None:
    """The kernels' library, or None (see the module docstring; ``status()`` says why)."""
    global _library, _status, _tried
    if _disabled():                  # asked each time: a process may switch it (tests do)
        return None
    if _tried:
        return _library
    _tried = True
    shipped = HERE / LIBRARY
    try:
        if shipped.is_file():
            _library, _status = _open(shipped), f"compiled kernels from {shipped}"
            return _library
        if not all((HERE / s).is_file() for s in (HEADER, *SOURCES)):
            _status = f"no {LIBRARY} and no kernel sources beside {HERE}"
            return None
        if not (sys.platform.startswith("linux") or sys.platform == "darwin"):
            _status = f"kernels are built on Linux and macOS only, not {sys.platform}"
            return None
        cached = cache_folder() / source_digest() / LIBRARY
        if not cached.is_file():
            compile_library(cached)
        _library, _status = _open(cached), f"compiled kernels from {cached}"
    except (OSError, RuntimeError, subprocess.SubprocessError, AttributeError) as exc:
        _library, _status = None, f"numpy reference: {exc}"
    return _library


def status() -> str:
    """Where the kernels come from, or why the numpy reference runs."""
    if _disabled():
        return "numpy reference: disabled by MARINE_COSIM_KERNELS"
    library()
    return _status


def address(array) -> int:
    """The data address of a C-contiguous float64 numpy array, for the kernel calls (the array
    must outlive the call)."""
    return array.ctypes.data

