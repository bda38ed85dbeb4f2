"""Scenario files: change parameters or inputs at given times, as libcosim's scenario manager does.

Format (JSON or YAML), the same keys as libcosim's scenarios::

    description: Hook releases the payload at 2 s
    end: 10.0                     # optional: stop time of the run
    events:
      - time: 0.0
        model: payload            # component name ("component" is accepted too)
        variable: attachment1.force[2]
        action: override          # override (default) | bias | reset
        value: -98100.0
      - time: 2.0
        model: payload
        variable: attachment1.force[2]
        action: reset             # release the override: the connection (or start value) rules again

``override`` forces an input (also over its connection) or sets a tunable parameter; ``bias``
adds to an input after its connection; ``reset`` removes both. An event at time t is applied
before the macro step that starts at t.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from components.data_files import load_json, load_yaml, read_text
from orchestration.errors import ScenarioError  # noqa: F401  (re-exported)
from orchestration.errors import did_you_mean
from orchestration.master.manipulators import Manipulator
from orchestration.system.fmu_info import component_info, family, parse_start
from orchestration.system.model import System
from orchestration.system.validation import start_value_problem

if TYPE_CHECKING:
    from orchestration.master.execution import Execution

ACTIONS = ("override", "bias", "reset")


def _finite(value: Any, what: str, origin: str) -> float:
    """``value`` as a finite float, else a ScenarioError naming it: YAML reads ``.nan``, ``nan``
    and ``true`` as numbers float() takes, which would make an event that never fires (or at 1 s)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ScenarioError(f"{origin}: {what} {value!r} is not a number")
    try:
        number = float(value)
    except ValueError:
        raise ScenarioError(f"{origin}: {what} {value!r} is not a number") from None
    if not math.isfinite(number):
        raise ScenarioError(f"{origin}: {what} {value!r} is not a finite number")
    return number


def _name(value: Any, key: str, origin: str) -> str:
    if isinstance(value, (list, dict)) or isinstance(value, bool):
        raise ScenarioError(f"{origin}: {key} {value!r} is not a name")
    return str(value)


def _typed_value(value: Any, kind: str) -> tuple[Any, str | None]:
    """The event's value as the variable's FMI type (a quoted number for a Real is taken, as
    before), and why it cannot be one, or None."""
    if isinstance(value, str) and family(kind) in ("Real", "Integer", "Enumeration"):
        try:
            value = parse_start("Real", value)
        except ValueError:
            return value, f"{value!r} is not a number ({kind})"
        if family(kind) != "Real" and math.isfinite(value) and value == int(value):
            value = int(value)
    return value, start_value_problem(kind, value)



@dataclass
class Event:
    time: float
    component: str
    variable: str
    action: str
    value: Any
    origin: str


class Scenario(Manipulator):
    def __init__(self, events: list[Event], end: float | None = None, description: str = "", source: str = ""):
        self.events = sorted(events, key=lambda e: e.time)
        self.end = end
        self.description = description
        self.source = source
        self._next = 0

    def variables(self):
        return [(e.component, e.variable) for e in self.events]

    def check(self, system: System, stop: float | None = None) -> list[str]:
        """Every event names a known component and variable of a settable kind, with a value of the
        variable's type, at or after the start time: checked against the FMUs' modelDescriptions
        before anything is instantiated, with close matches for typos. Returns warnings: events
        after ``stop`` (the run's stop time), which never happen."""
        late = []
        for e in self.events:
            if e.time < system.start_time:
                raise ScenarioError(f"{e.origin}: time {e.time:g} s is before the start time of {system.name} "
                                    f"({system.start_time:g} s)")
            if stop is not None and e.time > stop:
                late.append(e)
            if e.component not in system.components:
                raise ScenarioError(f"{e.origin}: model {e.component!r} is not a component of {system.name}"
                                    f"{did_you_mean(e.component, system.components)} (components: "
                                    f"{', '.join(sorted(system.components))})")
            variables = component_info(system.components[e.component]).variables
            if e.variable not in variables:
                settable = [n for n, v in variables.items() if v.causality in ("input", "parameter")]
                raise ScenarioError(f"{e.origin}: {e.component} has no variable {e.variable!r}"
                                    f"{did_you_mean(e.variable, settable)}")
            info = variables[e.variable]
            if info.causality not in ("input", "parameter") or (
                    info.causality == "parameter" and info.variability != "tunable"):
                raise ScenarioError(f"{e.origin}: {e.component}.{e.variable} is a {info.variability or ''} "
                                    f"{info.causality}; only inputs and tunable parameters can change during a run")
            if e.action == "bias" and (info.causality != "input" or info.type != "Real"):
                raise ScenarioError(f"{e.origin}: bias needs a Real input, {e.component}.{e.variable} is a "
                                    f"{info.type} {info.causality}")
            if e.action != "reset":
                e.value, problem = _typed_value(e.value, info.kind or info.type)
                if problem:
                    raise ScenarioError(f"{e.origin}: value for {e.component}.{e.variable}: {problem}")
        if not late:
            return []
        times = ", ".join(f"{e.time:g}" for e in late[:5]) + (", ..." if len(late) > 5 else "")
        return [f"warning: {self.source}: {len(late)} event(s) after the stop time {stop:g} s never happen "
                f"(at {times} s)"]

    def next_time(self, t: float) -> float | None:
        for e in self.events[self._next:]:
            if e.time > t:
                return e.time
        return None

    def before_step(self, execution: Execution, t: float, h: float) -> None:
        while self._next < len(self.events) and self.events[self._next].time <= t + 1e-9 * max(1.0, h):
            e = self.events[self._next]
            self._next += 1
            if e.action == "override":
                execution.override(e.component, e.variable, e.value)
            elif e.action == "bias":
                execution.bias(e.component, e.variable, e.value)
            else:
                execution.override(e.component, e.variable, None)
                if e.variable in execution.in_names[execution.index[e.component]] and \
                        execution.slaves[execution.index[e.component]].variables[e.variable].type == "Real":
                    execution.bias(e.component, e.variable, None)


def load_scenario(path: Path) -> Scenario:
    path = Path(path)
    try:
        text = read_text(path)      # a FIFO or /dev/zero would hang the read
    except (OSError, ValueError) as exc:
        raise ScenarioError(f"cannot read scenario {path}: {exc}") from None
    try:
        # a key given twice (two value: lines in an event) is refused, not the last one kept
        data = load_yaml(text) if path.suffix.lower() in (".yaml", ".yml") else load_json(text)
    except Exception as exc:
        kind = "YAML" if path.suffix.lower() in (".yaml", ".yml") else "JSON"
        raise ScenarioError(f"{path}: not valid {kind}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("events"), list):
        raise ScenarioError(f"{path}: expected a mapping with an 'events' list")
    events = []
    for k, item in enumerate(data["events"]):
        origin = f"{path}: events[{k}]"
        if not isinstance(item, dict):
            raise ScenarioError(f"{origin}: expected a mapping, got {item!r}")
        component = item.get("model", item.get("component"))
        action = item.get("action", "override")
        missing = [key for key, value in (("time", item.get("time")), ("model", component),
                                          ("variable", item.get("variable"))) if value is None]
        if missing:
            raise ScenarioError(f"{origin}: missing {', '.join(missing)}")
        if not isinstance(action, str) or action not in ACTIONS:
            raise ScenarioError(f"{origin}: action {action!r} is not one of {ACTIONS}")
        if action != "reset" and "value" not in item:
            raise ScenarioError(f"{origin}: action {action!r} needs a value")
        # null would read as a release of the override: say so rather than reset silently
        if action != "reset" and item["value"] is None:
            raise ScenarioError(f"{origin}: the value is empty (null); to release an override use action: reset")
        if isinstance(item.get("value"), (list, dict)):
            raise ScenarioError(f"{origin}: value {item['value']!r} is not one value")
        t = _finite(item["time"], "time", origin)
        events.append(Event(t, _name(component, "model", origin), _name(item["variable"], "variable", origin), action,
                            item.get("value"), origin))
    end = data.get("end")
    return Scenario(events, _finite(end, "end", str(path)) if end is not None else None,
                    str(data.get("description", "")), str(path))
