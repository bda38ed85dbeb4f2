"""Build Reference FMUs (https://github.com/modelica/Reference-FMUs, the vendored subset beside this
file) with gcc: FMI 2.0 or 3.0 co-simulation (or model exchange only), for tests/master/test_reference_fmus.py and
tests/master/test_fmi3_arrays.py (StateSpace: FMI 3.0 only, its array variables)."""
from __future__ import annotations

import platform
import re
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODELS = ("Stair", "BouncingBall", "Feedthrough", "Dahlquist", "StateSpace", "ArrayFeedthrough")


class FmuBuildError(RuntimeError):
    """A Reference FMU could not be built (no gcc, compiler error, ...)."""


def _platform(fmi_version: int) -> str:
    machine = platform.machine().lower()
    if fmi_version >= 3:
        arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
        return f"{arch}-linux"
    if machine not in ("x86_64", "amd64"):
        raise FmuBuildError(f"FMI 2.0 names no binary folder for {machine!r} on Linux")
    return "linux64"


def build_reference_fmu(model: str, fmi_version: int, out_dir: Path, *, suffix: str = "",
                        attributes: dict[str, str] | None = None, model_exchange_only: bool = False) -> Path:
    """Compile ``model`` (one of MODELS) as an FMI ``fmi_version`` (2 or 3) co-simulation FMU into
    ``out_dir``; ``attributes``: CoSimulation attributes of the modelDescription to set (e.g.
    ``{"canGetAndSetFMUState": "false"}``), ``suffix`` names that variant's file.
    ``model_exchange_only``: the FMU's CoSimulation interface removed from its modelDescription (the
    binary has both), as a model-exchange-only FMU of another tool."""
    if model not in MODELS or fmi_version not in (2, 3) or not (HERE / model / f"FMI{fmi_version}.xml").is_file():
        raise ValueError(f"no Reference FMU {model!r} for FMI {fmi_version}")
    gcc = shutil.which("gcc")
    if gcc is None:
        raise FmuBuildError("gcc was not found on PATH; it is needed to compile the Reference FMUs")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    xml = (HERE / model / f"FMI{fmi_version}.xml").read_text(encoding="utf-8")
    for name, value in (attributes or {}).items():
        # the attribute on the CoSimulation element: replaced where it is, else added
        block = re.search(r"<CoSimulation\b[^>]*?(/?)>", xml, re.S)
        element = block.group(0)
        if re.search(rf"\b{name}=\"[^\"]*\"", element):
            new = re.sub(rf"\b{name}=\"[^\"]*\"", f'{name}="{value}"', element)
        else:
            new = element.replace("<CoSimulation", f'<CoSimulation {name}="{value}"', 1)
        xml = xml.replace(element, new, 1)
    if model_exchange_only:
        if "<ModelExchange" not in xml:
            raise ValueError(f"the Reference FMU {model!r} has no ModelExchange interface")
        xml = re.sub(r"<CoSimulation\b[^>]*/>|<CoSimulation\b.*?</CoSimulation>", "", xml, flags=re.S)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        binary = tmp / "binaries" / _platform(fmi_version) / f"{model}.so"
        binary.parent.mkdir(parents=True)
        cmd = [gcc, "-shared", "-fPIC", "-O2", "-fvisibility=hidden", f"-DFMI_VERSION={fmi_version}",
               "-DDISABLE_PREFIX", f"-I{HERE / model}", f"-I{HERE / 'include'}", "-o", str(binary),
               str(HERE / model / "model.c"), str(HERE / "src" / f"fmi{fmi_version}Functions.c"),
               str(HERE / "src" / "cosimulation.c"), "-lm"]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise FmuBuildError(f"gcc failed ({result.returncode}):\n{' '.join(cmd)}\n{result.stderr}")
        fmu = out_dir / f"{model}{suffix}.fmu"
        with zipfile.ZipFile(fmu, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("modelDescription.xml", xml)
            zf.write(binary, binary.relative_to(tmp).as_posix())
    return fmu
