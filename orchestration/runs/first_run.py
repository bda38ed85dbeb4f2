"""A system file whose FMUs are our own and not built yet (a shipped scenario on a fresh clone).

The shipped scenarios point at ``build/fmus/<Model>.fmu`` of the checkout, which ``build_fmus.py``
writes. Reading such a file before any build finds no FMU; :func:`load_system` then builds the
missing FMUs of ours that the file names, as ``marine-cosim demo`` does, and reads it again. An FMU
of ours missing elsewhere, or any FMU when building is not asked for (``validate``), is reported
with the one command that builds it.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from orchestration.errors import MissingFmuError
from orchestration.runs.reference.paths import DEFAULT_FMU_DIR, ROOT
from orchestration.system.model import System

_FMU_NAME = re.compile(r"""source=["'](?:[^"']*/)?([A-Za-z_][A-Za-z0-9_]*)\.fmu["']""")   # SSP and OSP
#: FMUs of shipped scenarios that are not ours: how the checkout builds them ({out}: their folder)
#: (the ship swaps' third-party ships: docs/ship_swap.md)
OTHER_FMUS = {"OsvSeakeeper": "python -m tests.models.c_fmu.build {out} ship",
              "Vessel6Dof": "python -m tests.models.fmi3.build {out} vessel",
              "ManoeuvringShip1": "python -m tests.models.c_fmu.build_fmi1 {out} ship"}


def _our_models() -> set[str]:
    try:
        import build_fmus
    except ImportError:            # an installation without the builder
        return set()
    return set(build_fmus.find_adapters())


def _missing_models(system_file: Path, missing: Path) -> list[str]:
    """Our models that ``system_file`` names and ``missing``'s folder lacks (``missing`` first)."""
    text = Path(system_file).read_text(errors="replace") if Path(system_file).is_file() else ""
    ours = _our_models()
    named = [missing.stem] + [m for m in _FMU_NAME.findall(text) if m in ours]
    return [m for m in dict.fromkeys(named) if m in ours and not (missing.parent / f"{m}.fmu").is_file()]


def _with_hint(exc: MissingFmuError, system_file: Path) -> MissingFmuError:
    if exc.path is None:
        return exc
    if Path(system_file).suffix.lower() == ".ssp":
        # the path is in the archive's extraction cache: building into it would not mend the archive
        return MissingFmuError(f"{exc}; the archive {Path(system_file).name} does not carry it (marine-cosim convert "
                               "SYSTEM --to ssp writes every FMU into resources/)", exc.path)
    other = OTHER_FMUS.get(Path(exc.path).stem)
    if other is not None and (ROOT / "tests").is_dir():
        return MissingFmuError(f"{exc}; build it with: cd {ROOT} && {other.format(out=Path(exc.path).parent)}",
                               exc.path)
    if Path(exc.path).stem not in _our_models():
        return exc
    models = _missing_models(system_file, Path(exc.path))
    if not models:
        return exc
    return MissingFmuError(f"{exc}; build {'it' if len(models) == 1 else 'them'} with: marine-cosim build --out "
                           f"{Path(exc.path).parent} {' '.join(models)}", exc.path)


def load_system(path: Path, build: bool = True, log: Callable[[str], None] | None = print) -> System:
    """Read the system file ``path``; with ``build``, FMUs of ours missing from the checkout's
    build/fmus are built first (every one the file names), else the error names the command."""
    from orchestration.system.files import load_system as read

    built: set[Path] = set()
    while True:
        try:
            return read(path)
        except MissingFmuError as exc:
            missing = Path(exc.path) if exc.path is not None else None
            if not build or missing is None or missing in built or missing.parent.resolve() != \
                    DEFAULT_FMU_DIR.resolve() or missing.stem not in _our_models():
                raise _with_hint(exc, path) from None
            import build_fmus

            models = _missing_models(path, missing)
            if log is not None:
                log(f"building {', '.join(models)} into {DEFAULT_FMU_DIR} (not built yet; marine-cosim build "
                    "does the same) ...")
            build_fmus.build_all(DEFAULT_FMU_DIR, models)
            built.update(DEFAULT_FMU_DIR / f"{m}.fmu" for m in models)
