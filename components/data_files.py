"""Reading the files people name by hand (crane files, scenarios, operability criteria, meshes).

A mapping key given twice in YAML or JSON is an error naming the key and its lines: PyYAML and the
json module keep the last of the two without a word, so an event with two ``value:`` lines, or a
crane link with two ``mass:`` lines, would run with one of them silently dropped.

A file is read only if it is a regular file of at most MAX_FILE_BYTES (:func:`file_problem`): a
FIFO blocks the read until a writer comes, for ever, and /dev/zero never ends and fills the memory,
so either named as a crane file, a scenario or a mesh hung the run or the FMU call."""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

MAX_FILE_BYTES = 256 * 2 ** 20     # a data file named by hand (mesh, crane, scenario): at most 256 MiB


def file_problem(path: str | Path, max_bytes: int = MAX_FILE_BYTES) -> str | None:
    """What makes ``path`` unfit to read, before anything reads it (None: nothing): it must be a
    regular file of at most ``max_bytes``."""
    try:
        info = os.stat(path)
    except (OSError, ValueError) as exc:
        return f"cannot be read: {exc.strerror if isinstance(exc, OSError) and exc.strerror else exc}"
    if not stat.S_ISREG(info.st_mode):
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file (a device, a pipe or a socket)"
        return f"is {kind}"
    if info.st_size > max_bytes:
        return f"is {info.st_size} bytes, more than the {max_bytes} a data file may have"
    return None


def read_bytes(path: str | Path) -> bytes:
    """The bytes of a file named by hand; ValueError naming it if it is not a regular file of at
    most MAX_FILE_BYTES (:func:`file_problem`), OSError if reading fails."""
    problem = file_problem(path)
    if problem:
        raise ValueError(f"{path} {problem}")
    return Path(path).read_bytes()


def read_text(path: str | Path) -> str:
    """:func:`read_bytes` decoded as UTF-8 (ValueError on other bytes, naming the file)."""
    data = read_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text: {exc}") from None


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` that refuses a key given twice in one mapping (a yaml.YAMLError saying
    where)."""
    import yaml

    class StrictLoader(yaml.SafeLoader):
        pass

    def mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue                 # "<<: *base": the keys written beside it override the base's
            key = loader.construct_object(key_node, deep=True)
            try:
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {key!r} given twice (first at line {seen[key]})", key_node.start_mark)
                seen[key] = key_node.start_mark.line + 1
            except TypeError:            # an unhashable key: SafeLoader says so below
                continue
        return yaml.SafeLoader.construct_mapping(loader, node, deep)

    StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    return yaml.load(text, Loader=StrictLoader)


def load_json(text: str) -> Any:
    """``json.loads`` that refuses a key given twice in one object (a ValueError naming it)."""

    def unique(pairs: list[tuple[str, Any]]) -> dict:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise ValueError(f"key {key!r} given twice in one object")
            out[key] = value
        return out

    return json.loads(text, object_pairs_hook=unique)
