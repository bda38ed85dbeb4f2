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

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestration.errors import ScenarioError  # noqa: F401  (re-exported)
from orchestration.errors import did_you_mean
from orchestration.master.manipulators import Manipulator
from orchestration.system.fmu_info import component_info
from orchestration.system.model import System

if TYPE_CHECKING:
    from orchestration.master.execution import Execution

ACTIONS = ("override", "bias", "reset")




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

    def check(self, system: System) -> None:
        """Every event names a known component and variable of a settable kind: checked against the
        FMUs' modelDescriptions before anything is instantiated, with close matches for typos."""
        for e in self.events:
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
        text = path.read_text()
    except OSError as exc:
        raise ScenarioError(f"cannot read scenario {path}: {exc}") from None
    try:
        if path.suffix.lower() in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
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
        if action not in ACTIONS:
            raise ScenarioError(f"{origin}: action {action!r} is not one of {ACTIONS}")
        if action != "reset" and "value" not in item:
            raise ScenarioError(f"{origin}: action {action!r} needs a value")
        try:
            t = float(item["time"])
        except (TypeError, ValueError):
            raise ScenarioError(f"{origin}: time {item['time']!r} is not a number") from None
        events.append(Event(t, str(component), str(item["variable"]), action, item.get("value"), origin))
    end = data.get("end")
    return Scenario(events, float(end) if end is not None else None, str(data.get("description", "")), str(path))
