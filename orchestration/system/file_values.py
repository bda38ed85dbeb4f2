"""String start values that name files (a crane's mechanism, a vessel's data, a contact mesh).

An FMU sees such a file only as a String parameter, and opens a relative path from the working
directory of the process it runs in. A system that travels (another folder, another machine, a
``.ssp`` archive) therefore cannot hand the FMU the text written in the system file; the system
layer resolves it when the file is read, and the FMU gets an absolute path:

* a value is a file reference when its ``ssv:Parameter`` carries the marine-cosim annotation
  ``<mc:File/>`` (what :func:`~orchestration.system.ssp.write_ssp` writes), or, unmarked (a
  hand-written file), when it names an existing file, or looks like a file name (a path separator,
  or a suffix such as ``.json``: ``knuckle_boom`` is a preset name, ``lift.json`` a file);
* a relative value is resolved against the folder of the system file (the ``.ssd``, the root of an
  extracted ``.ssp``, the folder of an ``OspSystemStructure.xml``), never the working directory;
  a ``file:`` URI or an absolute path is taken as it is;
* the result is a :class:`FileValue`: a ``str`` holding the absolute path (what the FMU is given)
  that remembers the text written in the file (for messages); ``marine-cosim validate`` reports a
  file value that names no file.

Writing, a ``FileValue`` or a String value that names an existing file (relative to the working
directory for a system made in Python) is written relative to the ``.ssd``, or packed into the
``.ssp``'s ``resources/`` and written as the resource URI ``resources/<name>`` (relative to the
archive's root, where the ``.ssd`` is), with ``<mc:File/>``.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse
from urllib.request import url2pathname

__all__ = ["FileValue", "looks_like_file", "resolve_file_value", "names_a_file"]

# a file name's suffix: a dot, a letter, then up to four letters or digits (".json", ".nc", ".stl";
# not "0.5" or "v1.2")
_SUFFIX = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,4}$")


class FileValue(str):
    """A String start value that names a file: the absolute path, with ``written``, the text of the
    system file it was resolved from."""

    written: str

    def __new__(cls, path: str | os.PathLike, written: str | None = None) -> "FileValue":
        value = super().__new__(cls, str(path))
        value.written = str(path) if written is None else written
        return value

    def __reduce__(self):
        return FileValue, (str(self), self.written)

    @property
    def path(self) -> Path:
        return Path(str(self))


def looks_like_file(text: str) -> bool:
    """A value that reads as a file name: one word with a path separator or a file suffix, or a
    ``file:`` URI."""
    if not text or any(c.isspace() for c in text):
        return False
    if text.startswith("file:"):
        return True
    scheme = urlparse(text).scheme
    if len(scheme) > 1:
        return False                      # another URI scheme: not ours to resolve
    return "/" in text or "\\" in text or bool(_SUFFIX.search(text))


def _to_path(text: str, base: Path) -> Path:
    parsed = urlparse(text)
    if parsed.scheme == "file":
        path = Path(url2pathname(unquote(parsed.path)))
    else:
        path = Path(unquote(text) if "%" in text else text)
    if not path.is_absolute():
        path = Path(base) / path
    return Path(os.path.normpath(os.path.abspath(path)))


def resolve_file_value(text: str, base: Path, marked: bool = False) -> str:
    """``text`` (a String start value read from a system file whose folder is ``base``) as a
    :class:`FileValue` if it is a file reference (see the module docstring), else unchanged."""
    if not isinstance(text, str) or not text or (not marked and not looks_like_file(text)
                                                 and not (Path(base) / text).is_file()):
        return text
    return FileValue(_to_path(text, base), text)


def names_a_file(value: Any) -> bool:
    """A start value the writers treat as a file reference: a :class:`FileValue`, or a String that
    names an existing file (relative to the working directory: a system made in Python)."""
    if isinstance(value, FileValue):
        return True
    return isinstance(value, str) and looks_like_file(value) and Path(value).is_file()
