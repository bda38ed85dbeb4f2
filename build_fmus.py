"""Build one FMI 2.0 co-simulation FMU per component adapter found in fmus/.

    python build_fmus.py [--out DIR] [--portable [--old-glibc | --runtime-base PREFIX]] [NAME ...]

An adapter is a module ``fmus/<name>.py`` (not starting with "_") that defines
``class <Model>(Fmi2Slave):``; the FMU is ``<Model>.fmu``. Each FMU carries in ``resources/``
the adapter, the support modules and exactly the ``components`` modules it imports (found by
following its imports), under a private package named after their content hash, so it runs
without this repository and never shares a module with another FMU or with a process that imported
this checkout. On Linux the FMU binary is fmus/native/fmi2_loader.c (compiled here with gcc), which
implements the FMI API and runs the Python end of the FMU (fmus/native/fmi_bridge.py):

* default build: in the host's Python, or in the Python running this script, which the binary
  starts from ``resources/python_env.txt`` in a host without one;
* ``--portable``: in a child process running a Python runtime bundled in ``resources/runtime``
  (this Python's, or with ``--old-glibc`` one built in an old Debian for a lower glibc floor).

The compiled kernels of the physics (components/kernels/*.c: the articulated-body algorithm, the
rigid body) are compiled here too, once per build, and shipped beside their Python bindings in
every FMU that imports them (``resources/_mc_<hash>/components/kernels/libmc_kernels.so``): no
compiler is needed where the FMU runs. Without a C compiler the FMUs run the numpy reference.

See docs/fmu_runtime.md. Default builds are reproducible: the same sources give the same archive
entries, the same GUID and the same modelDescription.xml apart from ``generationDateAndTime``.
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import importlib.util
import json
import logging
import os
import re
import shutil
import struct
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent
ADAPTERS = ROOT / "fmus"
LOADER_SOURCE = ADAPTERS / "native" / "fmi2_loader.c"
BRIDGE_SOURCE = ADAPTERS / "native" / "fmi_bridge.py"
KERNELS = "components/kernels/__init__.py"      # an FMU that bundles this gets the compiled kernels
BUNDLED_PACKAGES = ("components", "fmus")
CLASS_PATTERN = re.compile(r"^class (\w+)\(\s*Fmi2Slave\s*\)\s*:", re.MULTILINE)  # pythonfmu's own rule
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
PRIVATE_PREFIX = "_mc_"
PRIVATE_FORMAT = "marine-cosim private package 1"   # changes when stage_sources lays files out anew

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


def _module_file(module: str, root: Path = ROOT) -> Path | None:
    base = root.joinpath(*module.split("."))
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def bundled_files(script: Path, root: Path = ROOT) -> list[Path]:
    """The source files an adapter needs: its imports within components/ and fmus/ of ``root``,
    recursively, with the packages' __init__ files."""
    needed: set[Path] = set()
    todo = [script]
    while todo:
        path = todo.pop()
        tree = ast.parse(path.read_text(), filename=str(path))
        package = ".".join(path.relative_to(root).with_suffix("").parts[:-1]) if path != script else ""
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
                    file = _module_file(".".join(parts[:depth]), root)
                    if file and file not in needed:
                        needed.add(file)
                        todo.append(file)
    return sorted(needed - {script})


def data_files(script: Path, root: Path = ROOT) -> list[Path]:
    """Data an adapter declares in a module-level ``FMU_RESOURCES = ("components/data/...", ...)``
    (paths relative to the repository), bundled under resources/ at the same relative path."""
    tree = ast.parse(script.read_text(), filename=str(script))
    files = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "FMU_RESOURCES" for t in node.targets):
            for item in ast.literal_eval(node.value):
                path = root / item
                if not path.is_file():
                    raise FileNotFoundError(f"{script.name}: FMU_RESOURCES names {item}, which does not exist")
                files.append(path)
    return files


# ---------------------------------------------------------------------------------------------
# The FMU's private package: its Python under a name that carries the content hash
# ---------------------------------------------------------------------------------------------

def model_sources(script: Path, root: Path = ROOT) -> dict[str, bytes]:
    """Everything of the project an FMU of ``script`` runs, by the path it has in resources/: the
    adapter, the modules it imports (under their package paths) and its data files."""
    files = {f"{script.stem}.py": script.read_bytes()}
    for path in bundled_files(script, root) + data_files(script, root):
        files[path.relative_to(root).as_posix()] = path.read_bytes()
    return files


def private_package(sources: dict[str, bytes]) -> str:
    """``_mc_<hash>``: the package name an FMU's Python gets, from the content of ``sources``.

    FMUs built from different sources get different names, so several of them, and a process
    that imported the checkout's ``components``, never share a module in ``sys.modules``."""
    digest = hashlib.sha256(PRIVATE_FORMAT.encode())
    # the FMU binary and its Python end belong to the code that runs, and so do the kernels' C sources
    sources = {**sources, "<loader>": LOADER_SOURCE.read_bytes(), "<bridge>": BRIDGE_SOURCE.read_bytes()}
    if KERNELS in sources:
        sources["<kernels>"] = kernel_digest().encode()
    for name in sorted(sources):
        digest.update(name.encode() + b"\0" + hashlib.sha256(sources[name]).digest())
    return PRIVATE_PREFIX + digest.hexdigest()[:16]


def privatise(text: str, package: str) -> str:
    """``text`` (a module's source) with every absolute import of ``components`` or ``fmus`` moved
    under ``package``: ``from components.x import y`` -> ``from <package>.components.x import y``.
    Only the import statements change, so line numbers in tracebacks stay those of the source."""
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int]] = []          # (line index, column) where to insert "<package>."
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in BUNDLED_PACKAGES:
                    edits.append((alias.lineno - 1, alias.col_offset))
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module \
                and node.module.split(".")[0] in BUNDLED_PACKAGES:
            line = lines[node.lineno - 1]
            match = re.compile(r"from\s+").match(line, node.col_offset)
            if not match or not line.startswith(node.module.split(".")[0], match.end()):
                raise ValueError(f"cannot rewrite the import on line {node.lineno}: {line.strip()!r}")
            edits.append((node.lineno - 1, match.end()))
    for row, col in sorted(edits, reverse=True):
        lines[row] = lines[row][:col] + package + "." + lines[row][col:]
    return "".join(lines)


def stage_sources(script: Path, stage: Path, root: Path = ROOT) -> tuple[str, Path]:
    """Write the FMU's resources/ Python into ``stage``: the private package ``_mc_<hash>``
    (``components``, ``fmus`` and the loader's ``fmi_bridge`` below it, imports rewritten), the
    adapter as the top-level module ``_mc_<hash>_<adapter>`` (pythonfmu's slavemodule), and the
    data files at their repository paths. Returns the package name and the adapter's file."""
    sources = model_sources(script, root)
    package = private_package(sources)
    (stage / package).mkdir(parents=True)
    (stage / package / "__init__.py").write_text(
        f'"""{script.stem} of marine-cosim, private to the FMUs built from exactly these sources."""\n')
    shutil.copy2(BRIDGE_SOURCE, stage / package / BRIDGE_SOURCE.name)
    entry = stage / f"{package}_{script.stem}.py"
    for name, data in sources.items():
        python = name.endswith(".py")
        target = entry if name == f"{script.stem}.py" else stage / package / name if python else stage / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(privatise(data.decode(), package).encode() if python else data)
    return package, entry


def kernel_digest() -> str:
    """Hash of the kernels' C sources and compiler flags (components/kernels)."""
    from components import kernels

    return kernels.source_digest()


def compile_kernels(workdir: Path) -> Path | None:
    """The physics kernels' shared library for this platform, or None (with a warning: the FMUs
    then run the numpy reference)."""
    from components import kernels

    if not sys.platform.startswith("linux"):
        log.warning("compiled kernels are shipped on Linux only: %s FMUs run the numpy reference", sys.platform)
        return None
    try:
        return kernels.compile_library(workdir / kernels.LIBRARY)
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
        log.warning("could not compile the physics kernels (%s); the FMUs will run the numpy reference",
                    str(exc).strip()[:500])
        return None


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
               "-DMC_WITH_PYTHON_HEADERS", str(LOADER_SOURCE), "-ldl", "-lpthread", "-Wl,-Bsymbolic"]
    try:
        subprocess.run(command, check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        log.warning("could not compile the native loader (%s); the FMUs will only load in Python hosts "
                    "or with LD_PRELOAD=libpython", detail.strip()[:500])
        return None
    return output


def _settings_text(settings: dict[str, str]) -> bytes:
    return "".join(f"{k}={v}\n" for k, v in settings.items()).encode()


@dataclass(frozen=True)
class Deflated:
    """An archive member's data as it is stored: raw deflate at ZIP_LEVEL, with its CRC-32 and size."""
    crc: int
    size: int
    data: bytes


@dataclass
class BuildCache:
    """The work the FMUs of one build share, done once for all of them. The portable FMUs of a build
    carry mostly the same runtime (libpython, numpy, scipy), and deflating it for every FMU
    was 60 % of a portable build, compiling its .pyc another 13 %. Each FMU still gets its own full
    copy of everything it needs; the cache lives only as long as one build, so its sources cannot
    change under it."""
    deflated: dict[bytes, Deflated] = field(default_factory=dict)      # sha256 of a member's data -> it
    compiled: dict[Path, bytes] = field(default_factory=dict)          # runtime .py -> its .pyc
    stripped: dict[Path, bytes] = field(default_factory=dict)          # binary -> stripped copy
    ldd: dict[tuple[Path, Path], str] = field(default_factory=dict)    # (binary, base) -> ldd's output
    unit_files: dict[tuple[Path, Path], list[tuple[Path, Path]]] = field(default_factory=dict)

    def deflate(self, data: bytes) -> Deflated:
        """``data`` deflated, compressed only the first time the build meets these bytes."""
        key = hashlib.sha256(data).digest()
        if key not in self.deflated:
            self.deflated[key] = deflate(data)
        return self.deflated[key]


def deflate(data: bytes) -> Deflated:
    """``data`` compressed as zipfile compresses a ZIP_DEFLATED member at ``compresslevel=ZIP_LEVEL``."""
    compressor = zlib.compressobj(ZIP_LEVEL, zlib.DEFLATED, -15)
    return Deflated(zlib.crc32(data), len(data), compressor.compress(data) + compressor.flush())


# zlib's default level: on a portable runtime's binaries (numpy, scipy, libpython) level 9 takes 2.6x
# the CPU time for an archive 0.7 % smaller (48 MB of .so files: 7.1 s and 13.93 MB against 2.7 s and
# 14.03 MB)
ZIP_LEVEL = 6
ZIP_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
ZIP_CENTRAL_HEADER = struct.Struct("<4s4B4HL2L5H2L")
ZIP_END_RECORD = struct.Struct("<4s4H2LH")
ZIP_VERSION = 20                                   # deflate, no zip64: what zipfile writes for these
ZIP_SYSTEM = 0 if sys.platform == "win32" else 3   # zipfile.ZipInfo's create_system
ZIP_SIZE_LIMIT = int(zipfile.ZIP64_LIMIT / 1.05)   # beyond this zipfile would write zip64 records


def _dos_date_time(date_time: tuple[int, ...] = ZIP_DATE) -> tuple[int, int]:
    year, month, day, hour, minute, second = date_time
    return hour << 11 | minute << 5 | second // 2, (year - 1980) << 9 | month << 5 | day


def write_archive(target: Path, entries: dict[str, tuple[bytes, bool]], cache: BuildCache | None = None) -> None:
    """Write ``entries`` (name -> (data, executable)) to the zip ``target`` in name order, byte for byte
    as zipfile writes them (ZIP_DEFLATED at ZIP_LEVEL, dated ZIP_DATE, mode 755 or 644). zipfile cannot
    store data compressed beforehand, and with ``cache`` a member's data is compressed once per build
    however many FMUs carry it."""
    deflated = (cache or BuildCache()).deflate
    dos_time, dos_date = _dos_date_time()
    central = []
    with open(target, "wb") as out:
        for name in sorted(entries):
            data, executable = entries[name]
            member = deflated(data)
            offset = out.tell()
            if member.size > ZIP_SIZE_LIMIT or len(member.data) > ZIP_SIZE_LIMIT or offset > zipfile.ZIP64_LIMIT:
                raise ValueError(f"{target.name}: {name} would need zip64 records, which write_archive does not write")
            encoded, flags = (name.encode(), 0) if name.isascii() else (name.encode("utf-8"), 0x800)
            sizes = (member.crc, len(member.data), member.size)
            out.write(ZIP_LOCAL_HEADER.pack(b"PK\x03\x04", ZIP_VERSION, 0, flags, zipfile.ZIP_DEFLATED, dos_time,
                                            dos_date, *sizes, len(encoded), 0) + encoded + member.data)
            mode = 0o755 if executable else 0o644
            central.append(ZIP_CENTRAL_HEADER.pack(b"PK\x01\x02", ZIP_VERSION, ZIP_SYSTEM, ZIP_VERSION, 0, flags,
                                                   zipfile.ZIP_DEFLATED, dos_time, dos_date, *sizes, len(encoded),
                                                   0, 0, 0, 0, mode << 16, offset) + encoded)
        start = out.tell()
        if len(central) > 0xFFFF or start > zipfile.ZIP64_LIMIT:
            raise ValueError(f"{target.name}: too many or too large members for an archive without zip64 records")
        out.write(b"".join(central))
        out.write(ZIP_END_RECORD.pack(b"PK\x05\x06", 0, 0, len(central), len(central), out.tell() - start, start, 0))


def build_fmu(model: str, script: Path, out: Path, loader: Path | None, workdir: Path,
              root: Path = ROOT, portable: bool = False, runtime_base: Path | None = None,
              kernels: Path | None = None, cache: BuildCache | None = None) -> Path:
    """Build ``out/<model>.fmu`` from ``script`` and the sources under ``root``; ``portable``
    bundles the Python runtime (``loader`` must then be :func:`compile_process_loader`'s);
    ``kernels`` is the compiled kernels' library (:func:`compile_kernels`), shipped if the model
    imports them; ``cache`` holds the work shared with the other FMUs of the same build."""
    from pythonfmu.builder import FmuBuilder

    cache = cache or BuildCache()

    stage = workdir / f"stage_{model}"
    stage.mkdir()
    package, entry = stage_sources(script, stage, root)
    bindings = stage / package / KERNELS
    if kernels is not None and bindings.is_file():
        shutil.copy2(kernels, bindings.parent / kernels.name)
    try:
        raw = FmuBuilder.build_FMU(entry, dest=workdir / f"raw_{model}.fmu",
                                   project_files=[p for p in stage.iterdir() if p != entry])
    finally:
        # pythonfmu put the stage on sys.path to import the entry module; the modules stay
        # importable only under their private name, which nothing else uses
        while str(stage) in sys.path:
            sys.path.remove(str(stage))
        # nor does this process keep them: their folder is about to be deleted
        for name in [n for n in sys.modules if n == package or n.startswith((package + ".", package + "_"))]:
            del sys.modules[name]
    entries: dict[str, tuple[bytes, bool]] = {}
    with zipfile.ZipFile(raw) as archive:
        for item in archive.infolist():
            if item.is_dir() or "__pycache__" in item.filename:
                continue
            entries[item.filename] = (archive.read(item), False)
    if loader is not None:
        entries[f"binaries/linux64/{model}.so"] = (loader.read_bytes(), True)
    model_class = CLASS_PATTERN.search(script.read_text()).group(1)
    settings = {"mode": "inprocess", "package": package, "module": entry.stem, "class": model_class}
    if portable:
        entries.update(runtime_entries(stage, package, entry, model_class, workdir, runtime_base, cache))
        for name in [n for n in entries if n.startswith("binaries/win64/")]:
            del entries[name]   # pythonfmu's DLL needs a Python on the target: not portable
        digest = hashlib.sha256()
        for name in sorted(n for n in entries if n.startswith("resources/")):
            digest.update(name.encode() + b"\0" + hashlib.sha256(entries[name][0]).digest())
        settings.update(mode="process", hash=f"{model}-{digest.hexdigest()[:16]}",
                        python=f"runtime/bin/{python_version()}")
        # it brings its own Python: no execution tool is needed on the target
        description = entries["modelDescription.xml"][0]
        entries["modelDescription.xml"] = (description.replace(b'needsExecutionTool="true"',
                                                               b'needsExecutionTool="false"'), False)
    else:
        entries["resources/python_env.txt"] = (_settings_text(python_environment()), False)
    entries["resources/loader.txt"] = (_settings_text(settings), False)
    target = out / f"{model}.fmu"
    write_archive(target, entries, cache)
    return target


# ---------------------------------------------------------------------------------------------
# --portable: the FMU brings its own Python runtime and runs it as a child process
# ---------------------------------------------------------------------------------------------

# glibc's own libraries are the target's; every other library a bundled binary needs is bundled
GLIBC_LIBRARIES = ("libc.so", "libm.so", "libpthread.so", "libdl.so", "librt.so", "libutil.so", "ld-linux")
# the site-packages distributions a portable FMU may bring (anything else the trace meets, such
# as Cython probed by scipy's test helpers, is optional to its importer); these two are bundled by
# sub-package: only the ones the model imports
SPLIT_DISTRIBUTIONS = ("numpy", "scipy")
# stdlib extension modules that would bring big system libraries (OpenSSL); hashlib and friends
# fall back to the builtin hash modules listed in ALWAYS_STDLIB
EXCLUDED_MODULES = ("_hashlib", "_ssl")
# never bundled: tests, headers, type stubs, build helpers
SKIPPED_PARTS = {"tests", "test", "include", "__pycache__", "_pyinstaller",
                 "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "pydoc_data", "venv"}
SKIPPED_SUFFIXES = ("conftest.py", ".pyi", ".h", ".c", ".pxd", ".pyx", ".a", ".txt", ".md", ".cfg", ".toml", ".f",
                    ".f90")
# imported on error paths and by the bridge, whatever the trace saw
ALWAYS_STDLIB = ("traceback", "linecache", "tokenize", "json", "socket", "struct", "array", "importlib",
                 "encodings", "copy", "uuid", "hashlib", "datetime", "dataclasses", "typing",
                 "_md5", "_sha1", "_sha256", "_sha512", "_sha3", "_blake2")

TRACE = r"""
import ast, importlib, json, math, sys
stage, package, entry, klass = sys.argv[1:5]
sys.path[:0] = [stage] + sys.argv[5:]
names = set(TOP)
root = __import__("pathlib").Path(stage)
for path in [*root.joinpath(package).rglob("*.py"), root / (entry + ".py")]:
    rel = path.relative_to(root).with_suffix("")
    names.add(".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts))
    # imports inside functions too, of numpy and scipy (an optional reader such as xarray stays out)
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found = [node.module] + [node.module + "." + a.name for a in node.names]
        else:
            continue
        names.update(n for n in found if n.split(".")[0] in ("numpy", "scipy"))
for name in sorted(names):
    try:
        importlib.import_module(name)
    except Exception:
        pass
for name in ALWAYS:
    importlib.import_module(name)
bridge = importlib.import_module(package + ".fmi_bridge")
slave = bridge.Instance(entry, klass, "trace", stage, False).slave
reals = [v.value_reference for v in slave.vars.values() if type(v).__name__ == "Real"]
slave.setup_experiment(0.0, None, None)
slave.enter_initialization_mode()
slave.get_real(reals)
slave.exit_initialization_mode()
for k in range(3):
    slave.do_step(0.01 * k, 0.01)
    slave.get_real(reals)
state = slave._get_fmu_state()
slave._set_fmu_state(type(slave)._fmu_state_from_bytes(type(slave)._fmu_state_to_bytes(state)))
slave.set_real(reals[:1], [math.nan])
slave.terminate()
modules = {n: getattr(m, "__file__", None) for n, m in list(sys.modules.items())}
libraries = sorted({line.split()[-1] for line in open("/proc/self/maps") if ".so" in line.split()[-1]})
print(json.dumps({"modules": modules, "libraries": libraries}))
"""


def _site_packages() -> list[str]:
    import site

    return [p for p in site.getsitepackages() if Path(p).is_dir()]


def python_version() -> str:
    return f"python{sys.version_info.major}.{sys.version_info.minor}"


def base_prefix(prefix: Path | None = None) -> Path:
    """The CPython installation a portable runtime is taken from: ``prefix`` (an installation of
    this Python's minor version, e.g. from :func:`old_glibc_python`), or the one running this script."""
    base = Path(prefix or sysconfig.get_config_var("prefix")).resolve()
    if not (base / "bin" / python_version()).is_file() or not (base / "lib" / python_version()).is_dir():
        raise SystemExit(f"{base} is not a {python_version()} installation (bin/{python_version()}, "
                         f"lib/{python_version()}); numpy and scipy come from this environment, so the runtime's "
                         f"Python must be the same minor version")
    return base


def _base_env(base: Path) -> dict[str, str]:
    return {**os.environ, "LD_LIBRARY_PATH": str(base / "lib")}


def trace_imports(stage: Path, package: str, entry: Path, model_class: str,
                  base: Path | None = None) -> tuple[dict, list[str]]:
    """Run the model once in a fresh, isolated interpreter of the runtime's Python (``base``) with
    this environment's site-packages, and return the modules it imported (name -> file) and the
    shared libraries it loaded. Every module of the FMU and every numpy or scipy import statement
    of its code is imported first, so code paths the short run does not reach are covered."""
    base = base_prefix(base)
    code = TRACE.replace("ALWAYS", repr(ALWAYS_STDLIB)).replace("TOP", repr(("numpy",)))
    result = subprocess.run([str(base / "bin" / python_version()), "-I", "-S", "-c", code, str(stage), package,
                             entry.stem, model_class, *_site_packages()], capture_output=True, text=True,
                            timeout=600, env=_base_env(base))
    if result.returncode != 0:
        raise RuntimeError(f"tracing {entry.stem} failed:\n{result.stderr[-3000:]}")
    found = json.loads(result.stdout.strip().splitlines()[-1])
    return found["modules"], found["libraries"]


def _skipped(relative: Path) -> bool:
    return bool(SKIPPED_PARTS & set(relative.parts[:-1])) or relative.name.endswith(SKIPPED_SUFFIXES)


def _is_binary(path: Path) -> bool:
    return path.suffix == ".so" or ".so." in path.name


def _ldd(binary: Path, base: Path, cache: BuildCache) -> str:
    """ldd's answer for ``binary`` with the runtime's libraries (``base``/lib) first, asked once per build."""
    if (binary, base) not in cache.ldd:
        cache.ldd[binary, base] = subprocess.run(["ldd", str(binary)], capture_output=True, text=True,
                                                 env=_base_env(base)).stdout
    return cache.ldd[binary, base]


def _needed_libraries(binary: Path, base: Path, bundled: set[str], cache: BuildCache | None = None) -> list[Path]:
    """Shared libraries ``binary`` needs beyond glibc, as this machine resolves them with the
    runtime's own libraries (``base``/lib) first; one ldd cannot find is fine if it is ``bundled``
    (a wheel's library found through the RPATH of the module that loads both)."""
    out = _ldd(binary, base, cache or BuildCache())
    missing = [line.split()[0] for line in out.splitlines() if "not found" in line]
    if set(missing) - bundled:
        raise RuntimeError(f"{binary} needs libraries found neither in {base / 'lib'} nor on this machine:\n{out}")
    found = []
    for line in out.splitlines():
        parts = line.split("=>")
        if len(parts) == 2 and parts[1].strip().startswith("/"):
            name, path = parts[0].strip(), Path(parts[1].split()[0])
            if not name.startswith(GLIBC_LIBRARIES) and not name.startswith("libpython"):
                found.append(path)
    return found


def _unit_files(unit: Path, top: Path, cache: BuildCache) -> list[tuple[Path, Path]]:
    """(file, path relative to ``top``) of the file ``unit`` or of the files below the folder ``unit``,
    those not skipped, in path order; one walk per build, however many models bundle the unit."""
    if (unit, top) not in cache.unit_files:
        found = [unit] if unit.is_file() else sorted(unit.rglob("*")) if unit.is_dir() else []
        cache.unit_files[unit, top] = [(src, src.relative_to(top)) for src in found
                                       if src.is_file() and not _skipped(src.relative_to(top))]
    return cache.unit_files[unit, top]


def runtime_files(modules: dict, libraries: list[str], base: Path | None = None,
                  cache: BuildCache | None = None) -> dict[str, Path]:
    """Path under resources/runtime -> file of this machine: the interpreter of ``base``, the stdlib
    modules and extension modules the model imports, numpy, the imported sub-packages of scipy,
    and the libraries (other than glibc) they need, looked for in ``base``/lib first."""
    base = base_prefix(base)
    cache = cache or BuildCache()
    version = python_version()
    stdlib = base / "lib" / version
    libpython = next((base / "lib").glob(f"lib{version}.so.1*"))
    files: dict[str, Path] = {f"bin/{version}": (base / "bin" / version).resolve(),
                              f"lib/{libpython.name}": libpython.resolve()}
    sites = [Path(p).resolve() for p in _site_packages()]
    loaded = {Path(lib).resolve() for lib in libraries}
    taken: set[Path] = set()
    for name, file in modules.items():
        if not file or name in EXCLUDED_MODULES:
            continue
        path = Path(file).resolve()
        if path.is_relative_to(stdlib):
            top = path.relative_to(stdlib).parts[0]
            if top == "site-packages":
                continue
            unit = stdlib / top if (stdlib / top).is_dir() and top != "lib-dynload" else path
            for src, rel in _unit_files(unit, stdlib, cache):
                files[f"lib/{version}/{rel.as_posix()}"] = src
            continue
        for site_dir in sites:
            if path.is_relative_to(site_dir):
                parts = path.relative_to(site_dir).parts
                split = parts[0] in SPLIT_DISTRIBUTIONS and len(parts) > 2
                unit = site_dir.joinpath(*parts[:2 if split else 1])
                if parts[0] not in SPLIT_DISTRIBUTIONS:   # pythonfmu's Python is in resources/ already
                    break
                units = [unit]
                if parts[0] in SPLIT_DISTRIBUTIONS:   # the distribution's own top-level files
                    units += [f for f in (site_dir / parts[0]).iterdir() if f.is_file()]
                for item in units:
                    if item in taken:
                        continue
                    taken.add(item)
                    for src, rel in _unit_files(item, site_dir, cache):
                        # every Python module of an imported sub-package (cheap, and a module imported
                        # on first use is there), but only the extension modules the model loaded
                        if not _is_binary(src) or src in loaded:
                            files[f"site-packages/{rel.as_posix()}"] = src
                break
    for lib in libraries:   # the vendored BLAS and Fortran runtimes of the wheels
        path = Path(lib).resolve()
        for site_dir in sites:
            if path.is_relative_to(site_dir):
                files[f"site-packages/{path.relative_to(site_dir).as_posix()}"] = path
    bundled = {src.resolve() for src in files.values()}
    names = {src.name for src in bundled}
    for rel, src in list(files.items()):
        if src.suffix == ".so" or ".so." in src.name:
            for dep in _needed_libraries(src, base, names, cache):
                if dep.resolve() not in bundled:   # a wheel's vendored library is found by its RPATH
                    files.setdefault(f"lib/{dep.name}", dep.resolve())
    return files


def _compiled(source: Path, cache: BuildCache) -> bytes:
    """``source`` as a .pyc that loads without its .py (legacy location, unchecked); once per build."""
    import importlib._bootstrap_external as external

    if source not in cache.compiled:
        text = source.read_bytes()
        code = compile(text, source.name, "exec", dont_inherit=True, optimize=0)
        cache.compiled[source] = bytes(external._code_to_hash_pyc(code, importlib.util.source_hash(text),
                                                                  checked=False))
    return cache.compiled[source]


def _stripped(path: Path, workdir: Path, cache: BuildCache) -> bytes:
    """``path`` (a binary) without its symbols, stripped once per build."""
    if path not in cache.stripped:
        cache.stripped[path] = _strip(path, workdir)
    return cache.stripped[path]


def _strip(path: Path, workdir: Path) -> bytes:
    strip = shutil.which("strip")
    if not strip:
        return path.read_bytes()
    copy = workdir / f"strip_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}"
    shutil.copy2(path, copy)
    subprocess.run([strip, "--strip-unneeded", str(copy)], check=False, capture_output=True)
    data = copy.read_bytes()
    copy.unlink()
    return data


def runtime_entries(stage: Path, package: str, entry: Path, model_class: str, workdir: Path,
                    base: Path | None = None, cache: BuildCache | None = None) -> dict[str, tuple[bytes, bool]]:
    """The archive entries of resources/runtime for one model: .pyc only, the interpreter's
    binaries stripped. The imports are traced for each model (each bundles only what it imports);
    ``cache`` shares the per-file work with the other models of the build."""
    base = base_prefix(base)
    cache = cache or BuildCache()
    modules, libraries = trace_imports(stage, package, entry, model_class, base)
    entries: dict[str, tuple[bytes, bool]] = {}
    python_build = base / "lib"
    for rel, src in sorted(runtime_files(modules, libraries, base, cache).items()):
        name = f"resources/runtime/{rel}"
        if src.suffix == ".py":
            entries[name[:-3] + ".pyc"] = (_compiled(src, cache), False)
        elif src.suffix == ".pyc":
            continue
        elif rel.startswith("bin/"):
            entries[name] = (_stripped(src, workdir, cache), True)
        elif _is_binary(src):
            # the interpreter's own libraries carry debug symbols; the wheels' binaries were
            # rewritten by auditwheel (patchelf), and strip breaks those ("ELF load command
            # address/offset not page-aligned"), so they stay as they are
            own = src.is_relative_to(python_build)
            entries[name] = (_stripped(src, workdir, cache) if own else src.read_bytes(), False)
        else:
            entries[name] = (src.read_bytes(), False)
    entries[f"resources/runtime/lib/{python_version()}/lib-dynload/.keep"] = (b"", False)
    return entries


def glibc_floor(binaries: list[bytes]) -> tuple[int, int]:
    """The newest GLIBC_x.y symbol version any of ``binaries`` (ELF images) needs, as objdump -T shows."""
    newest = (0, 0)
    with tempfile.TemporaryDirectory() as tmp:
        for k, data in enumerate(binaries):
            path = Path(tmp) / f"b{k}"
            path.write_bytes(data)
            out = subprocess.run(["objdump", "-T", str(path)], capture_output=True, text=True).stdout
            for major, minor in re.findall(r"\(GLIBC_(\d+)\.(\d+)", out):
                newest = max(newest, (int(major), int(minor)))
    return newest


OLD_SUITE = "bullseye"          # the oldest Debian release the package mirror serves (glibc 2.31)
SOURCE_SUITE = "bookworm"       # whose python3.X source package matches this project's Python
DEBIAN_MIRROR = "http://deb.debian.org/debian"
BUILD_CACHE = Path(os.environ.get("MARINE_COSIM_BUILD_CACHE", Path.home() / ".cache" / "marine-cosim-build"))
# the runtime's libraries beyond glibc, taken from the old release with the interpreter
OLD_LIBRARIES = ("libffi.so.7", "libz.so.1", "libbz2.so.1.0", "liblzma.so.5", "libuuid.so.1", "libstdc++.so.6",
                 "libgcc_s.so.1")


def _run(command: list[str], what: str, **kwargs) -> None:
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise RuntimeError(f"{what} failed ({' '.join(command[:3])} "
                           f"...):\n{result.stdout[-2000:]}{result.stderr[-3000:]}")


def old_release_rootfs(suite: str = OLD_SUITE, cache: Path = BUILD_CACHE) -> Path:
    """A Debian ``suite`` minbase root filesystem with a C toolchain, made once with debootstrap
    (root and the Debian mirror needed) and kept in ``cache``."""
    rootfs = cache / f"{suite}-build"
    if not (rootfs / ".complete").exists():
        if not shutil.which("debootstrap"):
            raise SystemExit("debootstrap is needed for an old-glibc runtime (apt-get install debootstrap)")
        shutil.rmtree(rootfs, ignore_errors=True)
        rootfs.parent.mkdir(parents=True, exist_ok=True)
        _run(["debootstrap", "--variant=minbase",
              "--include=build-essential,libffi-dev,zlib1g-dev,libbz2-dev,liblzma-dev,uuid-dev",
              suite, str(rootfs), DEBIAN_MIRROR], f"debootstrap {suite}", timeout=3600)
        (rootfs / ".complete").touch()
    return rootfs


def old_glibc_python(suite: str = OLD_SUITE, cache: Path = BUILD_CACHE) -> Path:
    """A CPython of this Python's minor version built inside a Debian ``suite`` root filesystem, so it
    needs no newer glibc than that release's; with that release's libffi, zlib, bz2, lzma, uuid,
    libstdc++ and libgcc_s in its lib/. Made once in ``cache`` and returned as an installation prefix
    for :func:`build_all`'s ``runtime_base``. The source is Debian's python3.X source package of
    ``SOURCE_SUITE`` (the upstream tarball in it; Debian's patches are not applied)."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    out = cache / f"python{version}-{suite}"
    if (out / ".complete").exists():
        return out
    rootfs = old_release_rootfs(suite, cache)
    sources = cache / "sources"
    sources.mkdir(parents=True, exist_ok=True)
    tarballs = sorted(sources.glob(f"python{version}_*.orig.tar.*"))
    if not tarballs:
        apt = cache / "apt"
        (apt / "lists" / "partial").mkdir(parents=True, exist_ok=True)
        (apt / "archives" / "partial").mkdir(parents=True, exist_ok=True)
        (apt / "sources.list").write_text(f"deb-src {DEBIAN_MIRROR} {SOURCE_SUITE} main\n")
        options = ["-o", f"Dir::Etc::SourceList={apt / 'sources.list'}", "-o", "Dir::Etc::SourceParts=/dev/null",
                   "-o", f"Dir::State::Lists={apt / 'lists'}", "-o", f"Dir::Cache={apt}"]
        _run(["apt-get", "-q", *options, "update"], "apt-get update (sources)", timeout=600)
        _run(["apt-get", "-q", *options, "source", "--download-only", f"python{version}"], "apt-get source",
             cwd=sources, timeout=1200)
        tarballs = sorted(sources.glob(f"python{version}_*.orig.tar.*"))
    build = rootfs / "build"
    shutil.rmtree(build, ignore_errors=True)
    build.mkdir()
    _run(["tar", "-xf", str(tarballs[-1]), "-C", str(build), "--strip-components=1"], "unpacking the source")
    prefix = f"/opt/python{version}"
    script = (f"cd /build && ./configure --prefix={prefix} --enable-shared --without-ensurepip "
              f"--disable-test-modules >/build/configure.log 2>&1 && make -j{os.cpu_count() or 2} >/build/make.log "
              f"2>&1 "
              f"&& make install >/build/install.log 2>&1")
    _run(["chroot", str(rootfs), "/bin/sh", "-c", script], f"building Python {version} in {suite}", timeout=7200,
         env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LC_ALL": "C"})
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(rootfs / prefix.lstrip("/"), out, symlinks=True)
    shutil.rmtree(rootfs / prefix.lstrip("/"))   # the root filesystem stays free of Python
    shutil.rmtree(build)
    for name in OLD_LIBRARIES:
        found = [p for d in ("usr/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu") for p in (rootfs / d).glob(name)]
        if not found:
            raise RuntimeError(f"{name} not found in the {suite} root filesystem")
        shutil.copy2(found[0].resolve(), out / "lib" / name)
    (out / ".complete").touch()
    return out


def compile_process_loader(workdir: Path) -> Path:
    """The portable FMU's binary: fmi2_loader.c without the in-process path (no libdl, no Python)."""
    import fmpy

    output = workdir / "process_loader.so"
    command = [shutil.which("gcc") or "gcc", "-shared", "-fPIC", "-O2", "-Wall", "-Wno-format-truncation",
               "-DMC_PROCESS_ONLY", f"-I{Path(fmpy.__file__).parent / 'c-code'}", "-o", str(output),
               str(LOADER_SOURCE), "-Wl,-Bsymbolic", "-s"]
    subprocess.run(command, check=True, capture_output=True, text=True)
    return output


def read_settings(fmu: Path, name: str) -> dict[str, str]:
    """``resources/<name>`` (key=value lines) of a built FMU; {} if absent."""
    with zipfile.ZipFile(fmu) as archive:
        try:
            text = archive.read(f"resources/{name}").decode()
        except KeyError:
            return {}
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def is_current(fmu: Path, portable: bool = False) -> bool:
    """True if ``fmu`` was built by this script from exactly this checkout's sources (adapter,
    components and fmus modules, data, loader), in the given mode, and, for the default build, for
    the Python running now."""
    try:
        settings = read_settings(fmu, "loader.txt")
        adapter = find_adapters().get(Path(fmu).stem)
        if adapter is None or settings.get("package") != private_package(model_sources(adapter)):
            return False
        if portable:
            return settings.get("mode") == "process"
        return settings.get("mode") == "inprocess" and \
            read_settings(fmu, "python_env.txt").get("python") == sys.executable
    except (OSError, zipfile.BadZipFile, ValueError, UnicodeDecodeError):
        return False


def ensure_built(models: list[str], fmu_dir: Path, portable: bool = False, log=print) -> Path:
    """Build the ``models`` (e.g. "Ship") into ``fmu_dir`` unless they are there and current;
    returns the folder."""
    fmu_dir = Path(fmu_dir)
    stale = [m for m in models if not is_current(fmu_dir / f"{m}.fmu", portable)]
    if stale:
        log(f"building {', '.join(stale)} into {fmu_dir} ...")
        build_all(fmu_dir, stale, portable=portable)
    return fmu_dir


def build_all(out: Path, names: list[str] | None = None, portable: bool = False,
              runtime_base: Path | None = None) -> list[Path]:
    """Build the FMUs of ``names`` (default: every adapter) into ``out``; ``portable`` bundles a
    Python runtime in each, taken from ``runtime_base`` (a CPython installation, default: this
    Python's; see docs/fmu_runtime.md)."""
    adapters = find_adapters()
    unknown = set(names or []) - set(adapters)
    if unknown:
        raise SystemExit(f"no adapter for {sorted(unknown)} in {ADAPTERS} (found {sorted(adapters)})")
    out.mkdir(parents=True, exist_ok=True)
    built = []
    with tempfile.TemporaryDirectory(prefix="marine_cosim_build_") as tmp:
        workdir = Path(tmp)
        loader = compile_process_loader(workdir) if portable else compile_loader(workdir)
        kernels = compile_kernels(workdir)
        cache = BuildCache()   # the models of this build share their runtime's files
        for model, script in adapters.items():
            if names and model not in names:
                continue
            path = build_fmu(model, script, out, loader, workdir, portable=portable, runtime_base=runtime_base,
                             kernels=kernels, cache=cache)
            log.info("built %s", path)
            built.append(path)
    return built


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "fmus", help="output folder (build/fmus)")
    parser.add_argument("--portable", action="store_true",
                        help="bundle a Python runtime, numpy and the scipy parts used: needs nothing on the target "
                             "but Linux x86-64 (docs/fmu_runtime.md)")
    parser.add_argument("--runtime-base", type=Path, metavar="PREFIX",
                        help="with --portable: take the Python runtime from this CPython installation (same minor "
                             "version) instead of the running one")
    parser.add_argument("--old-glibc", action="store_true",
                        help=f"with --portable: build that installation in a Debian {OLD_SUITE} root filesystem "
                             f"first (root, debootstrap; cached in {BUILD_CACHE}), for a lower glibc floor")
    parser.add_argument("models", nargs="*", help="build only these models (e.g. Payload)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    base = old_glibc_python() if args.old_glibc else args.runtime_base
    if base and not args.portable:
        parser.error("--runtime-base and --old-glibc apply to --portable builds")
    for path in build_all(args.out, args.models, portable=args.portable, runtime_base=base):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
