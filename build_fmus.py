"""Build one FMI 2.0 co-simulation FMU per component adapter found in fmus/.

    python build_fmus.py [--out DIR] [NAME ...]

An adapter is a module ``fmus/<name>.py`` (not starting with "_") that defines
``class <Model>(Fmi2Slave):``; the FMU is ``<Model>.fmu``. Each FMU carries in ``resources/``
the adapter, the support modules and exactly the ``components`` modules it imports (found by
following its imports), so it runs without this repository. On Linux the FMU binary is our
native loader (fmus/native/pythonfmu_loader.c, compiled here with gcc), which lets hosts without
Python of their own load the FMU; it finds Python through ``resources/python_env.txt``, written
here from the Python running this script (see docs/fmu_runtime.md).

Builds are reproducible: the same sources give the same archive entries, the same GUID and the
same modelDescription.xml apart from ``generationDateAndTime``.
"""
from __future__ import annotations

import argparse
import ast
import logging
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
ADAPTERS = ROOT / "fmus"
LOADER_SOURCE = ADAPTERS / "native" / "pythonfmu_loader.c"
BUNDLED_PACKAGES = ("components", "fmus")
CLASS_PATTERN = re.compile(r"^class (\w+)\(\s*Fmi2Slave\s*\)\s*:", re.MULTILINE)  # pythonfmu's own rule
ZIP_DATE = (1980, 1, 1, 0, 0, 0)

log = logging.getLogger("build_fmus")


def find_adapters(directory: Path = ADAPTERS) -> dict[str, Path]:
    """Model name -> adapter script, for every adapter module in ``directory``."""
    found = {}
    for script in sorted(directory.glob("*.py")):
        if script.name.startswith("_"):
            continue
        match = CLASS_PATTERN.search(script.read_text())
        if match:
            found[match.group(1)] = script
    return found


def _module_file(module: str) -> Path | None:
    base = ROOT.joinpath(*module.split("."))
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def bundled_files(script: Path) -> list[Path]:
    """The repository files an adapter needs: its imports within components/ and fmus/, recursively,
    with the packages' __init__ files."""
    needed: set[Path] = set()
    todo = [script]
    while todo:
        path = todo.pop()
        tree = ast.parse(path.read_text(), filename=str(path))
        package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1]) if path != script else ""
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(p for p in parent + [base] if p)
                names = [base] + [f"{base}.{a.name}" for a in node.names]
            for name in names:
                if name.split(".")[0] not in BUNDLED_PACKAGES:
                    continue
                parts = name.split(".")
                for depth in range(1, len(parts) + 1):
                    file = _module_file(".".join(parts[:depth]))
                    if file and file not in needed:
                        needed.add(file)
                        todo.append(file)
    return sorted(needed)


def data_files(script: Path) -> list[Path]:
    """Data an adapter declares in a module-level ``FMU_RESOURCES = ("components/data/...", ...)``
    (paths relative to the repository), bundled under resources/ at the same relative path."""
    tree = ast.parse(script.read_text(), filename=str(script))
    files = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "FMU_RESOURCES" for t in node.targets):
            for item in ast.literal_eval(node.value):
                path = ROOT / item
                if not path.is_file():
                    raise FileNotFoundError(f"{script.name}: FMU_RESOURCES names {item}, which does not exist")
                files.append(path)
    return files


def python_environment() -> dict[str, str]:
    """Where a non-Python host finds the Python that has numpy and scipy: this one."""
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    soname = sysconfig.get_config_var("INSTSONAME") or sysconfig.get_config_var("LDLIBRARY") or ""
    libpython = Path(libdir) / soname
    if not (sysconfig.get_config_var("Py_ENABLE_SHARED") and libpython.is_file()):
        log.warning("this Python has no shared libpython (%s): hosts without Python will need "
                    "MARINE_COSIM_LIBPYTHON", libpython)
    return {"python": sys.executable, "libpython": str(libpython),
            "version": f"{sys.version_info.major}.{sys.version_info.minor}"}


def compile_loader(workdir: Path) -> Path | None:
    """Compile the native loader for this platform, or None (with a warning) if that is impossible."""
    if not sys.platform.startswith("linux"):
        log.warning("native loader is Linux-only: %s FMUs keep pythonfmu's binary", sys.platform)
        return None
    import fmpy

    fmi_headers = Path(fmpy.__file__).parent / "c-code"
    output = workdir / "loader.so"
    command = [shutil.which("gcc") or "gcc", "-shared", "-fPIC", "-O2", "-Wall", "-Wno-format-truncation",
               f"-I{sysconfig.get_paths()['include']}", f"-I{fmi_headers}", "-o", str(output),
               str(LOADER_SOURCE), "-ldl", "-lpthread", "-Wl,-Bsymbolic"]
    try:
        subprocess.run(command, check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        log.warning("could not compile the native loader (%s); the FMUs will only load in Python hosts "
                    "or with LD_PRELOAD=libpython", detail.strip()[:500])
        return None
    return output


def _write_entry(archive: zipfile.ZipFile, name: str, data: bytes, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (0o755 if executable else 0o644) << 16
    archive.writestr(info, data)


def build_fmu(model: str, script: Path, out: Path, loader: Path | None, workdir: Path) -> Path:
    """Build ``out/<model>.fmu`` from ``script``."""
    from pythonfmu.builder import FmuBuilder

    stage = workdir / f"stage_{model}"
    stage.mkdir()
    for file in bundled_files(script) + data_files(script):
        target = stage / file.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(file, target)
    raw = FmuBuilder.build_FMU(script, dest=workdir / f"raw_{model}.fmu",
                               project_files=[stage / p for p in BUNDLED_PACKAGES if (stage / p).exists()])
    entries: dict[str, tuple[bytes, bool]] = {}
    with zipfile.ZipFile(raw) as archive:
        for item in archive.infolist():
            if item.is_dir() or "__pycache__" in item.filename:
                continue
            entries[item.filename] = (archive.read(item), False)
    if loader is not None:
        pythonfmu_binary = f"binaries/linux64/{model}.so"
        entries["binaries/linux64/pythonfmu-export.so"] = (entries.pop(pythonfmu_binary)[0], True)
        entries[pythonfmu_binary] = (loader.read_bytes(), True)
    env = python_environment()
    entries["resources/python_env.txt"] = ("".join(f"{k}={v}\n" for k, v in env.items()).encode(), False)
    target = out / f"{model}.fmu"
    with zipfile.ZipFile(target, "w") as archive:
        for name in sorted(entries):
            data, executable = entries[name]
            _write_entry(archive, name, data, executable)
    return target


def build_all(out: Path, names: list[str] | None = None) -> list[Path]:
    adapters = find_adapters()
    unknown = set(names or []) - set(adapters)
    if unknown:
        raise SystemExit(f"no adapter for {sorted(unknown)} in {ADAPTERS} (found {sorted(adapters)})")
    out.mkdir(parents=True, exist_ok=True)
    built = []
    # pythonfmu imports the adapter; it must see this checkout's packages, not an installed copy
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory(prefix="marine_cosim_build_") as tmp:
        workdir = Path(tmp)
        loader = compile_loader(workdir)
        for model, script in adapters.items():
            if names and model not in names:
                continue
            path = build_fmu(model, script, out, loader, workdir)
            log.info("built %s", path)
            built.append(path)
    return built


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "fmus", help="output folder (build/fmus)")
    parser.add_argument("models", nargs="*", help="build only these models (e.g. Payload)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for path in build_all(args.out, args.models):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
