"""Observers: what watches a run (libcosim's observer). The execution calls them at the start, after
every macro step and at the end.

* :mod:`.results`: recording -- :class:`~.results.MemoryObserver` (in memory, for scripts and
  tests), :class:`~.results.FileObserver` (CSV, Parquet and metadata.json, written as the run goes)
  and :class:`~.results.Results`, what a run returns and :func:`~.results.load_results` reads back;
* :mod:`.checkpoint`: every FMU's state and the master's, written every T s of simulated time, and
  the resume from them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orchestration.master.execution import Execution


class Observer:
    """Called by the execution; override what you need."""

    def on_start(self, execution: "Execution") -> None: ...
    def on_step(self, execution: "Execution") -> None: ...
    def on_finish(self, execution: "Execution", error: BaseException | None) -> None: ...
