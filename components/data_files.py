"""Reading the YAML and JSON files people write by hand (crane files, scenarios, operability
criteria): a mapping key given twice is an error naming the key and its lines. PyYAML and the json
module keep the last of the two without a word, so an event with two ``value:`` lines, or a crane
link with two ``mass:`` lines, would run with one of them silently dropped."""
from __future__ import annotations

import json
from typing import Any


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
