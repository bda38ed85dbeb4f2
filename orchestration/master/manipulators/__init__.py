"""Manipulators: what changes variables during a run (libcosim's manipulator), called before every
macro step: :mod:`.scenario` (timed events from a scenario file) and :mod:`.signals` (inputs as
functions of time, for code and tests).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from orchestration.master.execution import Execution


class Manipulator:
    """Changes variables during a run (scenario events, user overrides)."""

    def variables(self) -> Iterable[tuple[str, str]]:
        """(component, variable) pairs this manipulator may touch, known before the run."""
        return ()

    def before_step(self, execution: "Execution", t: float, h: float) -> None: ...

    def next_time(self, t: float) -> float | None:
        """The time of this manipulator's next change after t, if it has one: an adaptive algorithm
        ends a step there, so the change acts at its own time (None: none, or continuous)."""
        return None
