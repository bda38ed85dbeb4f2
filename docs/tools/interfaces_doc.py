"""The FMU interface reference (docs/interfaces.md), generated from the FMUs' modelDescription.xml.

The document is never edited by hand, so it cannot drift from the FMUs: regenerate it with

    python docs/tools/interfaces_doc.py                # builds the FMUs into a temporary folder
    python docs/tools/interfaces_doc.py --fmus build/fmus --out docs/interfaces.md
    python docs/tools/interfaces_doc.py --check        # exit 1 if docs/interfaces.md is stale

and ``tests/test_docs_interfaces.py`` fails when the committed file differs from a fresh render.

What is rendered per FMU (sorted by model name): model name, description, FMI version, the
CoSimulation capabilities, the DefaultExperiment, then one table per causality. The GUID and
``generationDateAndTime`` are left out on purpose (they change with the sources or the clock), so
the same interfaces give the same text, byte for byte.

Table rows collapse the elements of a vector or tensor into one row when they share unit, frame,
meaning and direct feedthrough: ``cg.force[0]``, ``cg.force[1]``, ``cg.force[2]`` become
``cg.force[0..2]`` and ``inertia[0,0]`` ... ``inertia[1,2]`` become ``inertia[0,0 1,1 2,2 0,1 0,2 1,2]``.
:func:`expand_name` turns such a row name back into the scalar names. Elements that differ in any of
those are kept as rows of their own. The frame is read from the description's suffix: "[NED, north]",
"[body, x forward]" or "[body]" (frame, optionally axis).

Only the standard library is used: the FMUs are opened as zip archives and the XML read with
ElementTree; nothing is loaded or instantiated.
"""
from __future__ import annotations

import argparse
import re
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence
from xml.etree import ElementTree

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:          # run as a script from a checkout: python docs/tools/interfaces_doc.py
    sys.path.insert(0, str(ROOT))
DEFAULT_OUT = ROOT / "docs" / "interfaces.md"
REGENERATE = "python docs/tools/interfaces_doc.py"

# Axis names of the frames, in index order (the same as fmus._base.AXES, repeated here so that this
# module does not import the FMU code). A collapsed vector whose elements name exactly these axes in
# this order shows only the frame name.
FRAME_AXES: dict[str, tuple[str, ...]] = {
    "NED": ("north", "east", "down"),
    "body": ("x forward", "y starboard", "z down"),
}

# Tables in this order; causalities absent from an FMU give no table.
CAUSALITY_TITLES: tuple[tuple[str, str], ...] = (
    ("structuralParameter", "Structural parameters"),
    ("parameter", "Parameters"),
    ("calculatedParameter", "Calculated parameters"),
    ("input", "Inputs"),
    ("output", "Outputs"),
    ("local", "Local variables"),
    ("independent", "Independent variable"),
)
WITH_START = {"structuralParameter", "parameter", "input"}
VARIABLE_TYPES = ("Real", "Integer", "Boolean", "String", "Enumeration")

# "name[label]" -> ("name", "label"); the label is an index "2" or a tensor index "0,1"
_ELEMENT = re.compile(r"^(?P<base>.+)\[(?P<label>[^\[\]]+)\]$")
# description suffix " [frame]" or " [frame, axis]"; the frame is an identifier
_FRAME_SUFFIX = re.compile(r"\s*\[(?P<frame>[A-Za-z][A-Za-z0-9_.-]*)(?:,\s*(?P<axis>[^\[\]]+?))?\s*\]\s*$")
_RANGE = re.compile(r"^(?P<first>\d+)\.\.(?P<last>\d+)$")

PREAMBLE = f"""\
# FMU interfaces

<!-- Generated from the FMUs' modelDescription.xml by `{REGENERATE}`.
     Do not edit by hand: tests/test_docs_interfaces.py fails when this file is stale. -->

This reference lists every variable of every marine-cosim FMU. It is generated from the
modelDescription.xml of the FMUs built by `build_fmus.py`, so it always matches them; regenerate it
with `{REGENERATE}` after changing an adapter in `fmus/`.

## Conventions

* **Units** are SI (kg, m, s, N, rad, ...); the unit column gives the modelDescription unit, `1` for
  dimensionless quantities.
* **World frame NED**: x north, y east, z down (a local, flat-earth frame).
* **Body frame**: x forward, y starboard, z down, fixed to the component's body reference origin.
* **Attitude**: quaternions are Hamilton quaternions, scalar first (w, x, y, z), and rotate
  body-frame vectors into NED: v_NED = R(q) v_body. Euler angles are zyx (yaw-pitch-roll,
  R = Rz(yaw) Ry(pitch) Rx(roll), Fossen 2011 eq. 2.18), stored as (roll, pitch, yaw); they are
  for humans only, the dynamics and the couplings use quaternions.
* **Vectors** are scalar variables named `name[0]`, `name[1]`, `name[2]`: zero-based indices, the
  components along the axes of the frame the description names, e.g. `[NED, north]` or
  `[body, x forward]`. **Tensors** are named `name[i,j]` (zero-based row, column); symmetric tensors
  list only the independent entries.
* **Mechanical ports**: every mechanical port `<port>` exposes its force `<port>.force`, its position
  `<port>.position` and its velocity `<port>.velocity` (one of them input, the others outputs, or
  the other way round), so components can be coupled either way (position/velocity to force, or
  force to position/velocity). Each FMU section lists the ports found in its variables.
* **Direct feedthrough**: the output column *feedthrough from* names the inputs an output depends on
  within the same communication step (ModelStructure/Outputs dependencies). A master must resolve
  such an output after setting those inputs (algebraic loop if two FMUs feed through to each other);
  `-` means the output depends only on the state, so it can be read before the inputs are set;
  *all inputs* means every input of the FMU.

## Reading the tables

* The elements of a vector or tensor with the same unit, frame and meaning are shown in one row:
  `cg.force[0..2]` stands for `cg.force[0]`, `cg.force[1]`, `cg.force[2]`, and
  `inertia[0,0 1,1 2,2 0,1 0,2 1,2]` for `inertia[0,0]`, `inertia[1,1]`, ..., `inertia[1,2]`, in
  that order. The start column then lists the elements' start values in the same order.
* The frame column is read from the description's suffix: `NED` or `body` for a vector whose
  elements are along that frame's axes in index order, `NED, down` for a scalar along one axis, `-`
  when the variable has no frame. The meaning column is the description without that suffix.
"""


@dataclass
class Variable:
    """One ScalarVariable of a modelDescription.xml."""

    index: int                      # 1-based position in ModelVariables (what ModelStructure refers to)
    name: str
    causality: str
    variability: str
    type: str                       # Real, Integer, Boolean, String, Enumeration
    description: str
    unit: str | None
    start: str | None
    base: str                       # "cg.force" for "cg.force[1]", the name itself for a scalar
    label: str | None               # "1" for "cg.force[1]", "0,1" for "inertia[0,1]", None for a scalar
    frame: str | None               # "NED" from "... [NED, north]"
    axis: str | None                # "north" from "... [NED, north]"
    meaning: str                    # the description without the frame suffix
    depends_on: tuple[int, ...] | None = None   # outputs: indices of the knowns; None if undeclared


@dataclass
class Model:
    """What the document shows of one FMU."""

    name: str
    description: str
    fmi_version: str
    cosimulation: dict[str, str] | None
    default_experiment: dict[str, str]
    variables: list[Variable] = field(default_factory=list)


@dataclass
class Row:
    """One table row: a scalar or a collapsed vector/tensor group."""

    name: str
    unit: str
    frame: str
    start: str
    meaning: str
    feedthrough: str


# ---------------------------------------------------------------------------------------------- parsing


def split_frame(description: str) -> tuple[str, str | None, str | None]:
    """``"Position [NED, north]"`` -> ``("Position", "NED", "north")``; no suffix -> ``(description, None, None)``."""
    match = _FRAME_SUFFIX.search(description)
    if not match:
        return description.strip(), None, None
    axis = match.group("axis")
    return description[: match.start()].strip(), match.group("frame"), axis.strip() if axis else None


def split_element(name: str) -> tuple[str, str | None]:
    """``"cg.force[1]"`` -> ``("cg.force", "1")``; a scalar name -> ``(name, None)``."""
    match = _ELEMENT.match(name)
    return (match.group("base"), match.group("label")) if match else (name, None)


def _read_xml(path: Path) -> bytes:
    if path.suffix.lower() == ".xml":
        return path.read_bytes()
    with zipfile.ZipFile(path) as archive:
        return archive.read("modelDescription.xml")


def read_model(path: Path) -> Model:
    """Parse the modelDescription.xml of an FMU (or of a bare ``*.xml`` file)."""
    root = ElementTree.fromstring(_read_xml(path))
    if not root.get("fmiVersion", "").startswith("2."):
        raise ValueError(f"{path}: only FMI 2.0 model descriptions are supported "
                         f"(fmiVersion={root.get('fmiVersion')!r})")
    declared_units: dict[str, str] = {}
    for simple in root.findall("TypeDefinitions/SimpleType"):
        for child in simple:
            if child.get("unit"):
                declared_units[simple.get("name", "")] = child.get("unit", "")
    cosim = root.find("CoSimulation")
    experiment = root.find("DefaultExperiment")
    model = Model(
        name=root.get("modelName", path.stem),
        description=root.get("description", ""),
        fmi_version=root.get("fmiVersion", ""),
        cosimulation=dict(cosim.attrib) if cosim is not None else None,
        default_experiment=dict(experiment.attrib) if experiment is not None else {},
    )
    for index, sv in enumerate(root.findall("ModelVariables/ScalarVariable"), start=1):
        typed = next((child for child in sv if child.tag in VARIABLE_TYPES), None)
        kind = typed.tag if typed is not None else "?"
        unit = None
        start = None
        if typed is not None:
            unit = typed.get("unit") or declared_units.get(typed.get("declaredType", ""))
            start = typed.get("start")
        name = sv.get("name", "")
        description = sv.get("description", "")
        meaning, frame, axis = split_frame(description)
        base, label = split_element(name)
        model.variables.append(Variable(
            index=index, name=name, causality=sv.get("causality", "local"),
            variability=sv.get("variability", "continuous"), type=kind, description=description,
            unit=unit, start=start, base=base, label=label, frame=frame, axis=axis, meaning=meaning))
    by_index = {v.index: v for v in model.variables}
    for unknown in root.findall("ModelStructure/Outputs/Unknown"):
        variable = by_index.get(int(unknown.get("index", "0")))
        if variable is None:
            continue
        deps = unknown.get("dependencies")
        variable.depends_on = None if deps is None else tuple(int(d) for d in deps.split())
    return model


# ---------------------------------------------------------------------------------------------- formatting


def format_value(text: str | None, kind: str = "Real") -> str:
    """A start value as written in the tables: ``"0.0"`` -> ``0``, ``"9.81"`` -> ``9.81``, ``None`` -> ``-``."""
    if text is None:
        return "-"
    if kind == "String":
        return '"' + text + '"'
    if kind in ("Real", "Integer", "Enumeration"):
        try:
            value = float(text)
        except ValueError:
            return text
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    return text


def escape(text: str) -> str:
    """Markdown-escape free text for a table cell (pipes, emphasis, HTML) and keep it on one line."""
    text = " ".join(text.split())
    for char in ("\\", "|", "*", "<", "`"):
        text = text.replace(char, "\\" + char)
    return text


def collapse_labels(labels: Sequence[str]) -> str:
    """Index labels of a group as written in a row name: ``0..2`` for 0, 1, 2; otherwise space-separated."""
    if len(labels) > 1 and all(label.isdigit() for label in labels) \
            and [int(label) for label in labels] == list(range(int(labels[0]), int(labels[0]) + len(labels))):
        return f"{labels[0]}..{labels[-1]}"
    return " ".join(labels)


def expand_name(name: str) -> list[str]:
    """Inverse of the row naming: ``cg.force[0..2]`` -> ``["cg.force[0]", "cg.force[1]", "cg.force[2]"]``,
    ``inertia[0,0 1,1]`` -> ``["inertia[0,0]", "inertia[1,1]"]``, ``mass`` -> ``["mass"]``."""
    base, label = split_element(name)
    if label is None:
        return [name]
    match = _RANGE.match(label)
    if match:
        labels = [str(i) for i in range(int(match.group("first")), int(match.group("last")) + 1)]
    else:
        labels = label.split()
    return [f"{base}[{item}]" for item in labels]


def _frame_of(members: Sequence[Variable]) -> str:
    frame = members[0].frame
    if frame is None:
        return "-"
    axes = [m.axis for m in members]
    if len(members) == 1:
        return f"{frame}, {axes[0]}" if axes[0] else frame
    if all(a is None for a in axes):
        return frame
    labels = [m.label or "" for m in members]
    standard = FRAME_AXES.get(frame, ())
    if all(label.isdigit() and int(label) < len(standard) and axis == standard[int(label)]
           for label, axis in zip(labels, axes)):
        return frame
    return f"{frame} ({', '.join(a or '-' for a in axes)})"


def _feedthrough(variable: Variable, model: Model) -> str:
    """The input groups an output depends on directly, e.g. ``attachment1.force``; ``-`` if none."""
    if variable.depends_on is None:
        return "all inputs (not declared)"
    if not variable.depends_on:
        return "-"
    by_index = {v.index: v for v in model.variables}
    inputs = [v for v in model.variables if v.causality == "input"]
    knowns = [by_index[i] for i in sorted(set(variable.depends_on)) if i in by_index]
    if inputs and {v.index for v in inputs} <= {k.index for k in knowns} and len(_groups(inputs)) > 1:
        rest = [k for k in knowns if k.causality != "input"]
        if not rest:
            return "all inputs"
    parts = []
    for base, members in _groups(knowns).items():
        complete = [v for v in model.variables if v.base == base and v.causality == members[0].causality]
        if len(members) == len(complete) or members[0].label is None:
            parts.append(f"`{base}`")
        else:
            parts.append(f"`{base}[{collapse_labels([m.label or '' for m in members])}]`")
    return ", ".join(parts)


def _groups(variables: Iterable[Variable]) -> dict[str, list[Variable]]:
    """Variables by group name, groups in order of first appearance."""
    groups: dict[str, list[Variable]] = {}
    for variable in variables:
        groups.setdefault(variable.base, []).append(variable)
    return groups


def _row(members: Sequence[Variable], model: Model, name: str) -> Row:
    first = members[0]
    if len(members) == 1:
        start = format_value(first.start, first.type)
    else:
        start = "(" + ", ".join(format_value(m.start, m.type) for m in members) + ")"
    meaning = escape(first.meaning) or "-"
    if first.causality == "parameter" and first.variability == "tunable":
        meaning += " (tunable)"
    return Row(name=name, unit=first.unit or "-", frame=_frame_of(members), start=start, meaning=meaning,
               feedthrough=_feedthrough(first, model) if first.causality == "output" else "")


def table_rows(model: Model, causality: str) -> list[Row]:
    """The rows of one causality's table: vector/tensor elements collapsed where they agree."""
    rows = []
    for base, members in _groups(v for v in model.variables if v.causality == causality).items():
        same = len({(m.unit, m.frame, m.meaning, m.type, m.variability,
                     _feedthrough(m, model) if causality == "output" else "") for m in members}) == 1
        collapsible = len(members) > 1 and same and all(m.label is not None for m in members) \
            and len({m.label for m in members}) == len(members)
        if collapsible:
            rows.append(_row(members, model, f"{base}[{collapse_labels([m.label or '' for m in members])}]"))
        else:
            rows.extend(_row([m], model, m.name) for m in members)
    return rows


def _table(rows: Sequence[Row], causality: str) -> list[str]:
    with_start = causality in WITH_START
    output = causality == "output"
    header = ["name", "unit", "frame"] + (["start"] if with_start else []) + ["meaning"] \
        + (["feedthrough from"] if output else [])
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in rows:
        cells = [f"`{row.name}`", escape(row.unit), escape(row.frame)] + ([escape(row.start)] if with_start else []) \
            + [row.meaning] + ([row.feedthrough] if output else [])
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def mechanical_ports(model: Model) -> list[str]:
    """Prefixes ``p`` that have ``p.force``, ``p.position`` and ``p.velocity`` groups (any causality)."""
    members: dict[str, set[str]] = {}
    for variable in model.variables:
        prefix, _, quantity = variable.base.rpartition(".")
        if prefix:
            members.setdefault(prefix, set()).add(quantity)
    return sorted(p for p, quantities in members.items() if {"force", "position", "velocity"} <= quantities)


def render_model(model: Model) -> str:
    """The section of one FMU."""
    lines = [f"## {model.name}", "", escape(model.description) or "(no description)", "",
             f"* FMI version: {model.fmi_version}"]
    counts = [(title.lower(), sum(1 for v in model.variables if v.causality == causality))
              for causality, title in CAUSALITY_TITLES]
    lines.append(f"* Scalar variables: {len(model.variables)} ("
                 + ", ".join(f"{n} {title}" for title, n in counts if n) + ")")
    if model.default_experiment:
        lines.append("* DefaultExperiment: " + ", ".join(
            f"{key} = {format_value(value)}" for key, value in sorted(model.default_experiment.items())))
    else:
        lines.append("* DefaultExperiment: none")
    ports = mechanical_ports(model)
    lines.append("* Mechanical ports: " + (", ".join(f"`{p}`" for p in ports) if ports else "none"))
    if model.cosimulation is None:
        lines.append("* CoSimulation: not supported")
    else:
        lines += ["", "CoSimulation capabilities:", "", "| attribute | value |", "|---|---|"]
        lines += [f"| {key} | {escape(value)} |" for key, value in sorted(model.cosimulation.items())]
    for causality, title in CAUSALITY_TITLES:
        rows = table_rows(model, causality)
        if rows:
            lines += ["", f"### {model.name} {title.lower()}", ""] + _table(rows, causality)
    return "\n".join(lines) + "\n"


def render_interfaces(fmu_paths: list[Path]) -> str:
    """The whole document (preamble, then one section per FMU sorted by model name) as Markdown."""
    models = sorted((read_model(Path(p)) for p in fmu_paths), key=lambda m: m.name)
    names = [m.name for m in models]
    if len(set(names)) != len(names):
        raise ValueError(f"two FMUs with the same model name among {sorted(names)}")
    parts = [PREAMBLE]
    if models:
        parts.append("## Models\n\n" + "\n".join(
            f"* [{m.name}](#{m.name.lower()}): {escape(m.description)}" for m in models) + "\n")
    else:
        parts.append("## Models\n\nNo FMUs.\n")
    parts += [render_model(m) for m in models]
    return "\n".join(parts)


def write_interfaces_doc(fmu_dir: Path, out: Path) -> Path:
    """Render every ``*.fmu`` in ``fmu_dir`` into ``out`` (parent folders created); returns ``out``."""
    text = render_interfaces(sorted(Path(fmu_dir).glob("*.fmu")))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
    return out


def main(argv: list[str] | None = None) -> int:
    """``python docs/tools/interfaces_doc.py [--fmus DIR] [--out FILE] [--check]``."""
    parser = argparse.ArgumentParser(description="Generate the FMU interface reference docs/interfaces.md "
                                                 "from the FMUs' modelDescription.xml.")
    parser.add_argument("--fmus", type=Path, help="folder with the FMUs (default: build them into a temp folder)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output file (docs/interfaces.md)")
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 if the output file differs from a fresh render")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="marine_cosim_doc_") as tmp:
        fmu_dir = args.fmus
        if fmu_dir is None:
            sys.path.insert(0, str(ROOT))
            import build_fmus

            fmu_dir = Path(tmp)
            build_fmus.build_all(fmu_dir)
        fmus = sorted(Path(fmu_dir).glob("*.fmu"))
        if not fmus:
            print(f"no *.fmu in {fmu_dir}", file=sys.stderr)
            return 2
        if args.check:
            current = args.out.read_text(encoding="utf-8") if args.out.is_file() else None
            if current != render_interfaces(fmus):
                print(f"{args.out} is stale: run `{REGENERATE}`", file=sys.stderr)
                return 1
            print(f"{args.out} is up to date ({len(fmus)} FMUs)")
            return 0
        out = write_interfaces_doc(Path(fmu_dir), args.out)
    print(f"wrote {out} ({len(fmus)} FMUs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
