"""A fuzzer of system files (issue 23): a valid system file mutated at random (seeded, a bounded
count) -- hostile numbers in attributes and start values, elements deleted or duplicated, names
misspelt, types and kinds swapped, the XML cut short -- and each mutant validated and run. Every
outcome must be one of: valid and run to the end with finite results, or refused with one line and
exit status 1 (validate) or 2 (run). Never an internal error (exit 3), a crash, a hang or a result
with NaN from a run that said it completed.
"""
from __future__ import annotations

import collections
import copy
import json
import random
import signal
from pathlib import Path

import numpy as np
import pytest
from lxml import etree

from orchestration.cli.main import main
from orchestration.system.model import Component, System
from orchestration.system.ssp import write_ssp

HOSTILE = ["nan", "inf", "-inf", "0", "-1", "1e300", "-1e300", "1e-300", "", "abc", "2147483648", "0.5", "true"]
MUTANTS = 100
SECONDS_PER_CASE = 60


def base_system(fmu_dir: Path, folder: Path) -> Path:
    """Two Payloads and a Winch: Real connections with a transformation, Integer and Boolean inputs."""
    s = System("fuzzed", stop_time=0.2, base_step=0.05)
    s.add_component(Component("a", fmu_dir / "Payload.fmu", {"mass": 500.0, "gravity": 9.81}))
    s.add_component(Component("b", fmu_dir / "Payload.fmu", {"mass": 800.0, "gravity": 0.0}))
    s.add_component(Component("w", fmu_dir / "Winch.fmu", {"initial_line_length": 10.0, "mode": 1,
                                                           "max_substep": 0.005}))
    s.connect("a.cg.position[2]", "b.cg.force[0]", factor=10.0)
    s.connect("a.cg.velocity[2]", "w.hardpoint.velocity_down")
    return write_ssp(s, folder / "fuzzed.ssd")


def mutate(tree: etree._ElementTree, rng: random.Random) -> tuple[etree._ElementTree, str]:
    """One random mutation of a copy of ``tree``; returns it and what was done."""
    tree = copy.deepcopy(tree)
    elements = [e for e in tree.iter() if isinstance(e.tag, str)]
    kind = rng.choice(["attribute", "attribute", "delete", "duplicate", "rename", "retype", "rekind"])
    if kind == "attribute":
        candidates = [(e, a) for e in elements for a in e.attrib]
        e, a = rng.choice(candidates)
        value = rng.choice(HOSTILE)
        e.set(a, value)
        return tree, f"{etree.QName(e).localname}@{a}={value!r}"
    if kind == "delete":
        e = rng.choice([e for e in elements if e.getparent() is not None])
        e.getparent().remove(e)
        return tree, f"deleted {etree.QName(e).localname}"
    if kind == "duplicate":
        e = rng.choice([e for e in elements if e.getparent() is not None])
        e.getparent().append(copy.deepcopy(e))
        return tree, f"duplicated {etree.QName(e).localname}"
    if kind == "rename":
        candidates = [(e, a) for e in elements for a in ("name", "startElement", "endElement", "startConnector",
                                                         "endConnector") if a in e.attrib]
        e, a = rng.choice(candidates)
        text = e.get(a)
        i = rng.randrange(max(1, len(text)))
        e.set(a, text[:i] + rng.choice("xyz_.[") + text[i + 1:])
        return tree, f"{etree.QName(e).localname}@{a} misspelt"
    if kind == "retype":
        typed = [e for e in elements if etree.QName(e).localname in ("Real", "Integer", "Boolean", "String")]
        e = rng.choice(typed)
        new = rng.choice(["Real", "Integer", "Boolean", "String", "Enumeration"])
        e.tag = f"{{{etree.QName(e).namespace}}}{new}"
        return tree, f"{etree.QName(e).localname} retyped {new}"
    connectors = [e for e in elements if "kind" in e.attrib]
    e = rng.choice(connectors)
    e.set("kind", {"input": "output", "output": "input"}.get(e.get("kind"), "parameter"))
    return tree, f"connector {e.get('name')} kind swapped"


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang()


def outcome(args: list[str]) -> tuple[int | str, str]:
    """(exit status or 'hang', what was printed to stderr)."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(SECONDS_PER_CASE)
    try:
        return main(args), ""
    except _Hang:
        return "hang", ""
    except SystemExit as exc:              # argparse
        return int(exc.code or 0), ""
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.slow
def test_mutated_system_files_are_run_or_refused_in_one_line(fmu_dir, tmp_path, capsys):
    rng = random.Random(20261125)
    original = etree.parse(str(base_system(fmu_dir, tmp_path)))
    counts = collections.Counter()
    bad = []
    refused = []          # valid files an FMU refused when the run started (a value it checks itself)
    for k in range(MUTANTS):
        tree, what = mutate(original, rng)
        path = tmp_path / f"mutant_{k:03d}.ssd"
        text = etree.tostring(tree, xml_declaration=True, encoding="UTF-8")
        if rng.random() < 0.05:
            text = text[: rng.randrange(len(text))]                    # cut short: not XML any more
            what = "truncated"
        path.write_bytes(text)
        validated, _ = outcome(["validate", str(path)])
        said = capsys.readouterr().err
        out = tmp_path / f"run_{k:03d}"
        ran, _ = outcome(["run", str(path), "--quiet", "--out", str(out)])
        printed = capsys.readouterr()
        counts[f"validate {validated}"] += 1
        counts[f"run {ran}"] += 1
        lines = [line for line in printed.err.splitlines() if line.startswith("marine-cosim")]
        if validated not in (0, 1, 2) or ran not in (0, 2) or "internal error" in printed.err + said:
            bad.append((what, validated, ran, printed.err[-400:]))
            continue
        if ran == 2 and len(lines) != 1:
            bad.append((what, "not one line", printed.err[-400:]))
        if ran == 0:
            meta = json.loads((out / "metadata.json").read_text())
            data = np.genfromtxt(out / "results.csv", delimiter=",", names=True)
            finite = all(np.all(np.isfinite(np.asarray(data[n], float))) for n in data.dtype.names)
            if meta["status"] != "completed" or not finite:
                bad.append((what, "completed with non-finite results" if not finite else meta["status"]))
            counts["finite results"] += finite
        if validated == 0 and ran == 2:
            counts["valid but refused by run"] += 1
            refused.append(f"{what}: {printed.err.strip()[-300:]}")
    print("\n" + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    print("\n".join(refused))
    assert not bad, bad[:5]
    assert counts["run 0"] > 0 and counts["run 2"] > 0          # both kinds of outcome were reached
    assert sum(v for k, v in counts.items() if k.startswith("run ")) == MUTANTS
