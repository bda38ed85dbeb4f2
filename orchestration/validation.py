"""Check a system against its FMUs before running it.

Every problem names where it comes from (system file and element, as recorded by the reader in
``origin``), the component and the variable. Errors stop a run; warnings (unconnected inputs, loops
through FMUs that do not declare their dependencies) are reported and the run goes on.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from fmpy import read_model_description

from orchestration.graphs import strongly_connected_components
from orchestration.system import Connection, System

NUMERIC = {"Real", "Integer", "Enumeration"}


@dataclass
class Problem:
    severity: str        # "error" | "warning"
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.severity}: {self.where}: {self.message}" if self.where else f"{self.severity}: {self.message}"


@dataclass
class ValidationReport:
    problems: list[Problem] = field(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def __str__(self) -> str:
        if not self.problems:
            return "no problems"
        return "\n".join(str(p) for p in self.problems)


def _suggest(name: str, options) -> str:
    close = difflib.get_close_matches(name, list(options), n=3)
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""


def _loc(system: System, origin: str) -> str:
    return origin or (Path(system.source_file).name if system.source_file else system.name)


def validate_system(system: System) -> ValidationReport:
    report = ValidationReport()
    add = lambda severity, where, message: report.problems.append(Problem(severity, where, message))
    descriptions = {}
    for component in system.components.values():
        where = _loc(system, component.origin) + f" (component {component.name})"
        source = Path(component.source)
        if not source.exists():
            add("error", where, f"FMU file not found: {source}")
            continue
        try:
            md = read_model_description(str(source))
        except Exception as exc:
            add("error", where, f"cannot read {source.name}: {exc}")
            continue
        if md.coSimulation is None:
            add("error", where, f"{source.name} has no co-simulation interface")
            continue
        if md.fmiVersion not in ("1.0", "2.0"):
            add("error", where, f"{source.name} is FMI {md.fmiVersion}; FMI 1.0 and 2.0 co-simulation are supported")
            continue
        descriptions[component.name] = md
        variables = {v.name: v for v in md.modelVariables}
        for name, value in component.parameters.items():
            if name not in variables:
                add("error", where, f"start value for unknown variable {name!r}{_suggest(name, variables)}")
                continue
            v = variables[name]
            if v.causality in ("output", "calculatedParameter", "independent") or v.variability == "constant":
                add("error", where, f"{name!r} is a {v.variability} {v.causality} and cannot be given a start value")
        if component.step_multiple < 1 or int(component.step_multiple) != component.step_multiple:
            add("error", where, f"step multiple must be a positive integer, got {component.step_multiple!r}")

    connected_inputs: dict[tuple[str, str], Connection] = {}
    for c in system.connections:
        where = _loc(system, c.origin) + f" (connection {c.label()})"
        ends = []
        for role, (comp, var) in (("source", c.source), ("target", c.target)):
            if comp not in system.components:
                add("error", where, f"unknown {role} component {comp!r}{_suggest(comp, system.components)}")
                ends.append(None)
                continue
            md = descriptions.get(comp)
            if md is None:
                ends.append(None)    # already reported
                continue
            variables = {v.name: v for v in md.modelVariables}
            if var not in variables:
                add("error", where, f"{comp} ({Path(system.components[comp].source).name}) has no variable "
                                    f"{var!r}{_suggest(var, variables)}")
                ends.append(None)
                continue
            ends.append(variables[var])
        src, dst = ends
        if src is not None and src.causality not in ("output", "calculatedParameter"):
            add("error", where, f"source {'.'.join(c.source)} is a {src.causality}, not an output")
        if dst is not None and dst.causality != "input":
            add("error", where, f"target {'.'.join(c.target)} is a {dst.causality}, not an input")
        if src is not None and dst is not None:
            if src.type != dst.type and not (src.type in NUMERIC and dst.type in NUMERIC):
                add("error", where, f"type mismatch: {src.type} {'.'.join(c.source)} -> {dst.type} {'.'.join(c.target)}")
            elif src.type != dst.type and dst.type != "Real":
                add("error", where, f"type mismatch: {src.type} output cannot drive {dst.type} input exactly")
            if not c.is_identity and src.type not in NUMERIC:
                add("error", where, f"a linear transformation needs numeric variables, not {src.type}")
            su, du = _unit(src), _unit(dst)
            if su and du and su != du and c.is_identity and not c.converts_units:
                add("error", where, f"unit mismatch without conversion: {'.'.join(c.source)} is in {su!r}, "
                                    f"{'.'.join(c.target)} in {du!r} (give the connector units or a linear "
                                    f"transformation)")
        if c.target in connected_inputs:
            first = connected_inputs[c.target]
            add("error", where, f"input {'.'.join(c.target)} is connected twice (also from "
                                f"{'.'.join(first.source)})")
        else:
            connected_inputs[c.target] = c

    for name, md in descriptions.items():
        component = system.components[name]
        loose = [v.name for v in md.modelVariables
                 if v.causality == "input" and (name, v.name) not in connected_inputs and v.name not in component.parameters]
        if loose:
            add("warning", _loc(system, component.origin) + f" (component {name})",
                f"{len(loose)} input(s) not connected, keeping their start values: {_compact(loose)}")

    _check_loops(system, descriptions, report)
    return report


def _compact(names: list[str]) -> str:
    """["a.f[0]", "a.f[1]", "a.f[2]", "b"] -> "a.f[0..2], b" (vector elements folded)."""
    import re

    groups: dict[str, list[str]] = {}
    for n in names:
        m = re.fullmatch(r"(.*)\[(\d+)\]", n)
        key, index = (m.group(1), m.group(2)) if m else (n, None)
        groups.setdefault(key, []).append(index)
    parts = []
    for key, indices in groups.items():
        numbers = sorted(int(i) for i in indices if i is not None)
        if not numbers:
            parts.append(key)
        elif numbers == list(range(numbers[0], numbers[-1] + 1)) and len(numbers) > 1:
            parts.append(f"{key}[{numbers[0]}..{numbers[-1]}]")
        else:
            parts.extend(f"{key}[{i}]" for i in numbers)
    return ", ".join(parts)


def _unit(v) -> str | None:
    return v.unit or (v.declaredType.unit if v.declaredType is not None else None)


def _check_loops(system: System, descriptions: dict, report: ValidationReport) -> None:
    """Algebraic loops: cycles through connections and direct feedthrough inside FMUs."""
    graph: dict[tuple[str, str], set[tuple[str, str]]] = {}
    undeclared: set[str] = set()
    connected_in = {c.target for c in system.connections}
    connected_out = {c.source for c in system.connections}
    for c in system.connections:
        graph.setdefault(c.source, set()).add(c.target)
    for name, md in descriptions.items():
        inputs = [v.name for v in md.modelVariables if v.causality == "input" and (name, v.name) in connected_in]
        outputs_by_name = {u.variable.name: u for u in (md.outputs or [])}
        for v in md.modelVariables:
            if v.causality != "output" or (name, v.name) not in connected_out:
                continue
            unknown = outputs_by_name.get(v.name)
            if unknown is None or unknown.dependencies is None:
                deps = inputs      # nothing declared: assume the worst, but only warn about it
                if inputs:
                    undeclared.add(name)
            else:
                deps = [d.name for d in unknown.dependencies if d.causality == "input"]
            for d in deps:
                if (name, d) in connected_in:
                    graph.setdefault((name, d), set()).add((name, v.name))
    for cycle in _cycles(graph):
        text = " -> ".join(f"{c}.{v}" for c, v in cycle + [cycle[0]])
        components = {c for c, _ in cycle}
        note = ("; some FMUs on it declare no output dependencies, so this loop may not exist"
                if components & undeclared else
                "; the fixed-step master runs it explicitly (one sweep per step, so a value on the loop lags a "
                "step): for strong coupling break it with the mass-aware interface, a compliant element or an "
                "iterative algorithm")
        # a warning, not an error: explicit masters (ours, libcosim) run such systems, with a delay
        report.problems.append(Problem("warning", _loc(system, ""),
                                       f"algebraic loop through direct feedthrough: {text}{note}"))


def _cycles(graph: dict) -> list[list]:
    """One representative cycle per strongly connected component with a cycle."""
    nodes = sorted(set(graph) | {w for ws in graph.values() for w in ws})
    return [_cycle_in(graph, set(scc)) for scc in strongly_connected_components(nodes, lambda v: graph.get(v, ()))
            if len(scc) > 1 or scc[0] in graph.get(scc[0], ())]


def _cycle_in(graph: dict, scc: set) -> list:
    start = min(scc)
    path, seen = [start], {start}
    node = start
    while True:
        nxt = min(w for w in graph.get(node, ()) if w in scc)
        if nxt == start:
            return path
        if nxt in seen:
            return path[path.index(nxt):]
        path.append(nxt)
        seen.add(nxt)
        node = nxt
