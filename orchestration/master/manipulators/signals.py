"""Time signals as a manipulator: drive inputs with functions of time (a sine heave, a ramp).

Used in tests and scripts where a quantity comes from outside the system (a prescribed ship heave,
an oscillating load).  Each function is evaluated at the start t of every macro step and forced
onto its input, over any connection, like a scenario ``override``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Mapping

from orchestration.master.manipulators import Manipulator

if TYPE_CHECKING:
    from orchestration.master.execution import Execution


class TimeSignals(Manipulator):
    """Force inputs to f(t): ``TimeSignals({("cable", "end_a.position[2]"): lambda t: sin(t)})``."""

    def __init__(self, signals: Mapping[tuple[str, str], Callable[[float], float]]) -> None:
        self.signals = dict(signals)

    def variables(self):
        return list(self.signals)

    def before_step(self, execution: Execution, t: float, h: float) -> None:
        for (component, variable), f in self.signals.items():
            execution.override(component, variable, float(f(t)))
