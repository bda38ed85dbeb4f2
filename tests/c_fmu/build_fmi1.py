"""Build the plain-C FMI 1.0 co-simulation Oscillator (oscillator_fmi1.c + modelDescription_fmi1.xml)
into ``Oscillator1.fmu``.

The FMU is compiled with gcc from the one C file, which declares the FMI 1.0 co-simulation API
itself (every function exported as ``Oscillator1_fmi...``), so no header is needed; no Python and
no code from this project goes into it.

    python -m tests.c_fmu.build_fmi1 OUT_DIR
"""
from __future__ import annotations

import platform
import shutil
import subprocess
import sys
import tempfile
import warnings
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "oscillator_fmi1.c"
MODEL_DESCRIPTION = HERE / "modelDescription_fmi1.xml"
MODEL_IDENTIFIER = "Oscillator1"
PLATFORM = "linux64"
CFLAGS = ("-std=c99", "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-fvisibility=hidden")

# fixed timestamp for the archive members, so that the same sources give the same .fmu bytes
_ZIP_DATE = (2024, 1, 1, 0, 0, 0)


class FmuBuildError(RuntimeError):
    """The Oscillator1 FMU could not be built (no gcc, compiler error, ...)."""


def build_oscillator_fmi1_fmu(out_dir: Path) -> Path:
    """Compile ``oscillator_fmi1.c`` and package it as ``out_dir/Oscillator1.fmu``; returns that path.

    The archive holds ``modelDescription.xml`` (from ``modelDescription_fmi1.xml``),
    ``binaries/linux64/Oscillator1.so`` and ``sources/oscillator_fmi1.c``. Raises
    :class:`FmuBuildError` with the reason if it cannot be built.
    """
    if not (sys.platform.startswith("linux") and sys.maxsize > 2**32):
        raise FmuBuildError(f"only {PLATFORM} binaries are built (this is {sys.platform}/{platform.machine()})")
    gcc = shutil.which("gcc")
    if gcc is None:
        raise FmuBuildError("gcc was not found on PATH; it is needed to compile tests/c_fmu/oscillator_fmi1.c "
                            "into the Oscillator1 FMU (install gcc, e.g. apt-get install gcc)")

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    fmu = out_dir / f"{MODEL_IDENTIFIER}.fmu"

    with tempfile.TemporaryDirectory(prefix="oscillator1_build_") as tmp:
        binary = Path(tmp) / f"{MODEL_IDENTIFIER}.so"
        cmd = [gcc, *CFLAGS, "-o", str(binary), str(SOURCE), "-lm"]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise FmuBuildError(f"gcc failed ({result.returncode}):\n{' '.join(cmd)}\n{result.stderr}")
        if result.stderr.strip():
            warnings.warn(f"gcc warnings for {SOURCE.name}:\n{result.stderr}", stacklevel=2)

        members = {
            "modelDescription.xml": MODEL_DESCRIPTION.read_bytes(),
            f"binaries/{PLATFORM}/{MODEL_IDENTIFIER}.so": binary.read_bytes(),
            f"sources/{SOURCE.name}": SOURCE.read_bytes(),
        }
        partial = fmu.with_suffix(".fmu.part")
        with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for name, data in members.items():
                info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
                zf.writestr(info, data)
        partial.replace(fmu)
    return fmu


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m tests.c_fmu.build_fmi1 OUT_DIR", file=sys.stderr)
        return 2
    try:
        print(build_oscillator_fmi1_fmu(Path(args[0])))
    except FmuBuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
