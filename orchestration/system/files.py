"""Open and save system files by their kind: SSP (.ssd, .ssp) or OSP (OspSystemStructure.xml)."""
from __future__ import annotations

import os
from pathlib import Path

from orchestration.system.model import System, SystemFileError


def load_system(path: Path) -> System:
    """Read a system file; the kind comes from the extension (.ssd, .ssp) or the XML root (.xml)."""
    path = Path(path)
    if not path.exists():
        raise SystemFileError(f"system file not found: {path}")
    if path.is_dir():
        candidates = [path / "OspSystemStructure.xml", path / "SystemStructure.ssd"]
        found = [c for c in candidates if c.is_file()]
        if not found:
            raise SystemFileError(f"{path} is a folder without OspSystemStructure.xml or SystemStructure.ssd")
        path = found[0]
    suffix = path.suffix.lower()
    if suffix in (".ssd", ".ssp"):
        from orchestration.system.ssp import read_ssp

        return read_ssp(path)
    if suffix == ".xml":
        head = path.read_text(errors="replace")[:2000]
        if "OspSystemStructure" in head:
            from orchestration.system.osp import read_osp

            return read_osp(path)
        raise SystemFileError(f"{path}: an .xml system file must be an OspSystemStructure")
    raise SystemFileError(f"{path}: unknown system file kind {suffix!r} (use .ssd, .ssp or OspSystemStructure.xml)")


def save_system(system: System, kind: str, out: Path, *, power_bonds: bool | None = None) -> Path:
    """Write ``system`` as ``kind`` ("ssp", "ssd" or "osp") to ``out`` (a file for SSP, a folder for OSP);
    ``power_bonds`` is :func:`~orchestration.system.osp.write_osp`'s (SSP always keeps the bonds)."""
    out = Path(out)
    if kind in ("ssp", "ssd"):
        from orchestration.system.ssp import write_ssp

        if out.suffix.lower() not in (".ssp", ".ssd"):
            out = out.with_suffix(f".{kind}")
        if out.is_dir():
            raise SystemFileError(f"cannot write the {kind.upper()} file {out}: it is a folder (--out)")
        _folder(out.parent, out)
        write_ssp(system, out)
        return out
    if kind == "osp":
        from orchestration.system.osp import write_osp

        _folder(out, out)
        return write_osp(system, out, power_bonds=power_bonds)
    raise SystemFileError(f"unknown system file kind {kind!r} (ssp, ssd or osp)")


def folder_problem(folder: Path, what: str = "folder") -> str | None:
    """Make ``folder`` (and its parents) to write into, or say why it cannot be one (None: it is
    one now). The command line's --out of runs, sweeps, exports and system files."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        return f"{what} {folder} is a file, not a folder"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"cannot make the {what} {folder}: {exc.strerror or exc}"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"cannot write into the {what} {folder}: permission denied"
    return None


def _folder(folder: Path, out: Path) -> None:
    """Make the folder a system file is written into, or say why it cannot be one (--out)."""
    problem = folder_problem(folder)
    if problem:
        raise SystemFileError(f"cannot write {out}: {problem} (--out)")
