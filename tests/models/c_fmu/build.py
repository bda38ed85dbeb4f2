"""Build the plain-C test FMUs: the Oscillator (oscillator.c + modelDescription.xml) into
``Oscillator.fmu`` and the third-party ship (third_party_ship.c + third_party_ship.xml) into
``OsvSeakeeper.fmu``.

The FMUs are compiled with gcc against the FMI 2.0 headers that FMPy ships in ``fmpy/c-code``; no
Python and no code from this project goes into them, so they stand in for FMUs from a third party.

The model files share code through ``#include "..."`` of files in this folder (fmi2_common.h and
fmi2_common.c: the FMI 2.0 functions; oscillator_model.h: the Oscillator of the FMI 2.0 and 1.0
FMUs). The build expands those includes into one self-contained C file, which is what gets compiled
and what the FMU ships as ``sources/<model>.c`` (the file its modelDescription lists), so an FMU's
sources compile on their own.

    python -m tests.models.c_fmu.build OUT_DIR [oscillator|ship|ship-me]
"""
from __future__ import annotations

import platform
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
import zipfile
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "oscillator.c"
MODEL_DESCRIPTION = HERE / "modelDescription.xml"
MODEL_IDENTIFIER = "Oscillator"
SHIP_SOURCE = HERE / "third_party_ship.c"
SHIP_MODEL_DESCRIPTION = HERE / "third_party_ship.xml"
SHIP_MODEL_IDENTIFIER = "OsvSeakeeper"
PLATFORM = "linux64"
CFLAGS = ("-std=c99", "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-fvisibility=hidden")

# fixed timestamp for the archive members, so that the same sources give the same .fmu bytes
_ZIP_DATE = (2024, 1, 1, 0, 0, 0)


class FmuBuildError(RuntimeError):
    """The Oscillator FMU could not be built (no gcc, no FMI headers, compiler error, ...)."""


_LOCAL_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"[ \t]*$', re.MULTILINE)


def bundled_source(source: Path) -> str:
    """The text of ``source`` with every ``#include "name"`` of a file next to it replaced by that
    file's text (recursively, each file once), so that it compiles on its own; includes of other
    files (fmi2Functions.h, system headers) are kept."""
    done: set[Path] = set()

    def expand(path: Path) -> str:
        def include(match: re.Match) -> str:
            included = path.parent / match.group(1)
            if not included.is_file():
                return match.group(0)
            if included in done:
                return f"/* {match.group(1)}: expanded above */"
            done.add(included)
            return (f"/* ---- begin {match.group(1)} (tests/models/c_fmu) ---- */\n{expand(included).rstrip()}\n"
                    f"/* ---- end {match.group(1)} ---- */")
        return _LOCAL_INCLUDE.sub(include, path.read_text())

    done.add(source.resolve())
    return expand(source.resolve())


def fmi2_header_dir() -> Path:
    """The folder with fmi2Functions.h that FMPy ships."""
    try:
        import fmpy
    except ImportError as exc:  # pragma: no cover - fmpy is a project dependency
        raise FmuBuildError("fmpy is needed for the FMI 2.0 headers (fmpy/c-code)") from exc
    headers = Path(fmpy.__file__).resolve().parent / "c-code"
    if not (headers / "fmi2Functions.h").is_file():
        raise FmuBuildError(f"fmi2Functions.h not found in {headers}; is FMPy installed completely?")
    return headers


def build_c_fmu(source: Path, model_description: Path | str, model_identifier: str, out_dir: Path,
                include_dirs: tuple[Path, ...] = (), defines: tuple[str, ...] = (),
                fmu_name: str | None = None) -> Path:
    """Compile one C file (with its includes from this folder expanded, :func:`bundled_source`, and
    ``#define`` lines for ``defines`` in front) into
    ``binaries/linux64/<model_identifier>.so`` and package it with its modelDescription (a file, or
    its text) and the expanded source under ``sources/`` as ``out_dir/<fmu_name or model_identifier>.fmu``.
    Raises :class:`FmuBuildError` with the reason if it cannot be built."""
    if not (sys.platform.startswith("linux") and sys.maxsize > 2**32):
        raise FmuBuildError(f"only {PLATFORM} binaries are built (this is {sys.platform}/{platform.machine()})")
    gcc = shutil.which("gcc")
    if gcc is None:
        raise FmuBuildError(f"gcc was not found on PATH; it is needed to compile {source.name} into the "
                            f"{model_identifier} FMU (install gcc, e.g. apt-get install gcc)")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    fmu = out_dir / f"{fmu_name or model_identifier}.fmu"

    with tempfile.TemporaryDirectory(prefix=f"{model_identifier.lower()}_build_") as tmp:
        binary = Path(tmp) / f"{model_identifier}.so"
        bundled = Path(tmp) / source.name
        # the defines go into the shipped source, so that it compiles to this binary on its own
        bundled.write_text("".join(f"#define {d}\n" for d in defines) + bundled_source(source))
        cmd = [gcc, *CFLAGS, *(f"-I{d}" for d in include_dirs), "-o", str(binary), str(bundled), "-lm"]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise FmuBuildError(f"gcc failed ({result.returncode}):\n{' '.join(cmd)}\n{result.stderr}")
        if result.stderr.strip():
            warnings.warn(f"gcc warnings for {source.name}:\n{result.stderr}", stacklevel=2)

        members = {
            "modelDescription.xml": model_description.encode() if isinstance(model_description, str)
            else model_description.read_bytes(),
            f"binaries/{PLATFORM}/{model_identifier}.so": binary.read_bytes(),
            f"sources/{source.name}": bundled.read_bytes(),
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


def build_oscillator_fmu(out_dir: Path) -> Path:
    """Compile ``oscillator.c`` and package it as ``out_dir/Oscillator.fmu``; returns that path.

    The archive holds ``modelDescription.xml``, ``binaries/linux64/Oscillator.so`` and
    ``sources/oscillator.c``. Raises :class:`FmuBuildError` with the reason if it cannot be built.
    """
    return build_c_fmu(SOURCE, MODEL_DESCRIPTION, MODEL_IDENTIFIER, out_dir, (fmi2_header_dir(),))


def build_strict_oscillator_fmu(out_dir: Path) -> Path:
    """The Oscillator built with ``STRICT_STOP_TIME`` defined as ``out_dir/Oscillator.fmu``: fmi2DoStep
    refuses a step that ends after stopTime by any amount, as strict third-party FMUs (20-sim) do."""
    return build_c_fmu(SOURCE, MODEL_DESCRIPTION, MODEL_IDENTIFIER, out_dir, (fmi2_header_dir(),),
                       defines=("STRICT_STOP_TIME",))


def build_discarding_oscillator_fmu(out_dir: Path, max_step: float = 0.05) -> Path:
    """The Oscillator built with ``MAX_COMMUNICATION_STEP`` as ``out_dir/Oscillator.fmu``: fmi2DoStep
    returns fmi2Discard, its state unchanged, for a step longer than ``max_step`` seconds, as an FMU
    whose internal solver fails on long steps does."""
    return build_c_fmu(SOURCE, MODEL_DESCRIPTION, MODEL_IDENTIFIER, out_dir, (fmi2_header_dir(),),
                       defines=(f"MAX_COMMUNICATION_STEP {max_step!r}",))


def build_third_party_ship_fmu(out_dir: Path) -> Path:
    """Compile ``third_party_ship.c`` and package it as ``out_dir/OsvSeakeeper.fmu`` (with
    ``third_party_ship.xml`` as its modelDescription.xml); returns that path. The ship FMU of a
    "third party" for the ship swap (docs/ship_swap.md). Raises :class:`FmuBuildError`."""
    return build_c_fmu(SHIP_SOURCE, SHIP_MODEL_DESCRIPTION, SHIP_MODEL_IDENTIFIER, out_dir, (fmi2_header_dir(),))


SHIP_STATES = ("north", "east", "down", "phi", "theta", "psi", "u", "v", "w", "p", "q", "r")


def ship_model_exchange_description() -> str:
    """third_party_ship.xml as the model-exchange build declares itself: a ModelExchange element in
    place of CoSimulation, its 12 states (vr 400-411) and their derivatives (420-431) appended to the
    variables (so the existing indices hold) and listed in ModelStructure."""
    xml = SHIP_MODEL_DESCRIPTION.read_text()
    xml = re.sub(r"<CoSimulation\b.*?</CoSimulation>",
                 '<ModelExchange modelIdentifier="OsvSeakeeper" canGetAndSetFMUstate="true" '
                 'canSerializeFMUstate="true" canNotUseMemoryManagementFunctions="false">\n'
                 '    <SourceFiles><File name="third_party_ship.c"/></SourceFiles>\n  </ModelExchange>', xml,
                 count=1, flags=re.S)
    first = len(re.findall(r"<ScalarVariable\b", xml)) + 1
    states = "".join(
        f'    <ScalarVariable name="x.{n}" valueReference="{400 + i}" causality="local" variability="continuous" '
        f'initial="calculated" description="State {i} of the integrator (CG displacement NED, Euler zyx, body '
        f'velocities)"><Real/></ScalarVariable>\n' for i, n in enumerate(SHIP_STATES))
    derivatives = "".join(
        f'    <ScalarVariable name="der(x.{n})" valueReference="{420 + i}" causality="local" '
        f'variability="continuous" initial="calculated"><Real derivative="{first + i}"/></ScalarVariable>\n'
        for i, n in enumerate(SHIP_STATES))
    xml = xml.replace("  </ModelVariables>", states + derivatives + "  </ModelVariables>", 1)
    n = len(SHIP_STATES)
    listed = "".join(f'      <Unknown index="{first + n + i}"/>\n' for i in range(n))
    xml = xml.replace("    </Outputs>", "    </Outputs>\n    <Derivatives>\n" + listed + "    </Derivatives>", 1)
    initial = "".join(f'      <Unknown index="{first + i}"/>\n' for i in range(2 * n))
    return xml.replace("    </InitialUnknowns>", initial + "    </InitialUnknowns>", 1)


def build_third_party_ship_me_fmu(out_dir: Path) -> Path:
    """The third-party ship for model exchange only, as ``out_dir/OsvSeakeeperME.fmu`` (modelIdentifier
    OsvSeakeeper): the same equations, which the master integrates (orchestration.master.model_exchange),
    with the same ports as OsvSeakeeper.fmu."""
    return build_c_fmu(SHIP_SOURCE, ship_model_exchange_description(), SHIP_MODEL_IDENTIFIER, out_dir,
                       (fmi2_header_dir(),), defines=("MODEL_EXCHANGE",), fmu_name="OsvSeakeeperME")


TYPED_SOURCE = HERE / "typed_fmi2.c"


def build_typed_feedthrough_fmu(out_dir: Path) -> Path:
    """``typed_fmi2.c`` as ``out_dir/Feedthrough.fmu``: one input and output of every FMI 2.0 type,
    copied at once (after the Reference FMU Feedthrough)."""
    return build_c_fmu(TYPED_SOURCE, HERE / "typed_feedthrough2.xml", "Feedthrough", out_dir, (fmi2_header_dir(),))


def build_stair_fmu(out_dir: Path) -> Path:
    """``typed_fmi2.c -DSTAIR`` as ``out_dir/Stair.fmu``: an Integer counter that ends the simulation
    at 9 s (after the Reference FMU Stair)."""
    return build_c_fmu(TYPED_SOURCE, HERE / "stair2.xml", "Stair", out_dir, (fmi2_header_dir(),), ("STAIR",))


def build_main(argv: list[str] | None, usage: str, builders: dict[str, Callable[[Path], Path]]) -> int:
    """The command line of the build modules: ``OUT_DIR [NAME]``, NAME one of ``builders`` (the first
    is the default; with one builder no NAME is accepted). Prints the FMU's path; returns the exit
    status (2 for a usage error, 1 if the FMU cannot be built)."""
    args = sys.argv[1:] if argv is None else argv
    if any(a in ("-h", "--help") for a in args):
        print(f"usage: {usage}")
        return 0
    if len(args) not in ((1, 2) if len(builders) > 1 else (1,)) or (len(args) == 2 and args[1] not in builders) \
            or any(a.startswith("-") for a in args):     # an option is no output folder
        print(f"usage: {usage}", file=sys.stderr)
        return 2
    try:
        build = builders[args[1] if len(args) == 2 else next(iter(builders))]
        print(build(Path(args[0])))
    except FmuBuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    return build_main(argv, "python -m tests.models.c_fmu.build OUT_DIR [oscillator|ship|ship-me]",
                      {"oscillator": build_oscillator_fmu, "ship": build_third_party_ship_fmu,
                       "ship-me": build_third_party_ship_me_fmu})


if __name__ == "__main__":
    sys.exit(main())
