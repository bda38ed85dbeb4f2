"""The hand-written YAML and JSON files (crane files, scenarios, criteria) refuse a key given twice:
PyYAML and json keep the last one without a word."""
from __future__ import annotations

import json

import pytest
import yaml

from components.data_files import load_json, load_yaml
from components.mechanism import load_mechanism


def test_yaml_reads_what_safe_load_reads():
    text = "a: 1\nb: [1, 2]\nc: {x: 1.5, y: null}\nbase: &b {p: 1, q: 5}\nd:\n  <<: *b\n  q: 2\n"
    assert load_yaml(text) == yaml.safe_load(text)       # a merge key's base is overridden, not doubled


@pytest.mark.parametrize("text, key, line", [("a: 1\nb: 2\na: 3\n", "a", 1),
                                             ("events:\n  - time: 1\n    value: 2\n    value: 3\n", "value", 3),
                                             ("{a: 1, a: 2}", "a", 1)])
def test_yaml_refuses_a_key_given_twice(text, key, line):
    with pytest.raises(yaml.YAMLError, match=f"key '{key}' given twice \\(first at line {line}\\)"):
        load_yaml(text)


def test_json_refuses_a_key_given_twice_at_any_depth():
    assert load_json('{"a": {"b": 1}, "c": [{"b": 2}]}') == {"a": {"b": 1}, "c": [{"b": 2}]}
    with pytest.raises(ValueError, match="key 'b' given twice"):
        load_json('{"a": [{"b": 1, "b": 2}]}')


def test_a_crane_file_with_a_mass_given_twice_is_refused(tmp_path):
    from components.mechanism import PRESET_DIR

    text = (PRESET_DIR / "knuckle_boom.json").read_text()
    data = json.loads(text)
    assert load_mechanism(PRESET_DIR / "knuckle_boom.json").links      # the preset reads
    first = json.dumps(data["links"][0]["mass"])
    doubled = text.replace(f'"mass": {first}', f'"mass": {first}, "mass": 1.0', 1)
    assert doubled != text
    (tmp_path / "crane.json").write_text(doubled)
    with pytest.raises(ValueError, match="key 'mass' given twice"):
        load_mechanism(tmp_path / "crane.json")


@pytest.mark.parametrize("kind", ["fifo", "device", "folder", "missing"])
def test_a_crane_file_or_mesh_that_is_no_regular_file_is_refused_before_reading(tmp_path, kind):
    """A FIFO named as a crane file or a mesh blocked the read for ever, /dev/zero filled the memory
    (the Crane, TipCompensator and Contact FMUs read them at initialisation)."""
    import os

    from components.convex import ConvexMesh
    from components.data_files import read_text

    path = tmp_path / "crane.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path = "/dev/zero"
    elif kind == "folder":
        path.mkdir()
    said = {"fifo": "not a regular file", "device": "not a regular file", "folder": "is a folder",
            "missing": "cannot be read"}[kind]
    for read in (read_text, load_mechanism, ConvexMesh.from_file):
        with pytest.raises(ValueError, match=said):
            read(path)


def test_read_text_refuses_what_is_not_utf8(tmp_path):
    from components.data_files import read_text

    path = tmp_path / "crane.json"
    path.write_bytes(b"{\"a\": \xff}")
    with pytest.raises(ValueError, match="crane.json is not UTF-8 text"):
        read_text(path)
