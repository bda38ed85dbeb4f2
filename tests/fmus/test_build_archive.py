"""build_fmus.write_archive writes the FMU archives: the same bytes as zipfile, each shared member
compressed once per build."""
from __future__ import annotations

import os
import zipfile
from pathlib import Path

import build_fmus

ENTRIES = {
    "modelDescription.xml": (b'<?xml version="1.0"?>\n<fmiModelDescription/>\n' * 40, False),
    "binaries/linux64/Model.so": (os.urandom(3000) + bytes(5000), True),
    "resources/runtime/lib/empty/.keep": (b"", False),
    "resources/données.txt": ("é".encode() * 100, False),
    "resources/a.pyc": (bytes(range(256)) * 64, False),
}


def zipfile_archive(target: Path, entries: dict[str, tuple[bytes, bool]]) -> None:
    """The archive as build_fmus wrote it with zipfile before write_archive."""
    with zipfile.ZipFile(target, "w") as archive:
        for name in sorted(entries):
            data, executable = entries[name]
            info = zipfile.ZipInfo(name, date_time=build_fmus.ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o755 if executable else 0o644) << 16
            archive.writestr(info, data, compresslevel=build_fmus.ZIP_LEVEL)


def test_write_archive_writes_the_bytes_zipfile_writes(tmp_path):
    zipfile_archive(tmp_path / "zipfile.fmu", ENTRIES)
    build_fmus.write_archive(tmp_path / "written.fmu", ENTRIES)
    assert (tmp_path / "written.fmu").read_bytes() == (tmp_path / "zipfile.fmu").read_bytes()
    with zipfile.ZipFile(tmp_path / "written.fmu") as archive:
        assert archive.testzip() is None
        assert {n: archive.read(n) for n in archive.namelist()} == {n: d for n, (d, _) in ENTRIES.items()}
        assert archive.getinfo("binaries/linux64/Model.so").external_attr >> 16 == 0o755


def test_a_build_cache_compresses_a_shared_member_once_and_each_archive_keeps_its_copy(tmp_path):
    cache = build_fmus.BuildCache()
    other = {**ENTRIES, "modelDescription.xml": (b"<other/>", False)}
    build_fmus.write_archive(tmp_path / "a.fmu", ENTRIES, cache)
    build_fmus.write_archive(tmp_path / "b.fmu", other, cache)
    assert len(cache.deflated) == len(ENTRIES) + 1
    for name, entries in (("a.fmu", ENTRIES), ("b.fmu", other)):
        zipfile_archive(tmp_path / f"zipfile_{name}", entries)
        assert (tmp_path / name).read_bytes() == (tmp_path / f"zipfile_{name}").read_bytes(), name
