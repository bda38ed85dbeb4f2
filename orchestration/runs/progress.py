"""The one progress display of every run: a tqdm bar over simulated time (it also renders in Jupyter
notebooks), with the real-time factor beside it.

Off a terminal (CI logs, redirected output) the bar is redrawn at most every 10 s, so a log keeps a
handful of lines instead of thousands.
"""
from __future__ import annotations

import sys
import time
from typing import Callable


class Progress:
    """Callable ``(t, stop)`` the master calls after every macro step; ``close()`` at the end.

    ``start`` is the simulated time the run starts from (None: the time of the first call, e.g. a
    resumed run)."""

    def __init__(self, description: str = "", start: float | None = None, enabled: bool = True):
        self.description, self.start, self.enabled = description, start, enabled
        self._bar = None
        self._t0 = time.perf_counter()
        self._shown = 0.0
        self._last = -1.0

    def __call__(self, t: float, stop: float) -> None:
        if not self.enabled:
            return
        if self._bar is None:
            self._open(t, stop)
        done = min(t, stop) - self.start
        now = time.perf_counter()
        if now - self._last < 0.2 and t < stop:
            return                          # a macro step is tens of microseconds: do not redraw per step
        self._last = now
        elapsed = now - self._t0
        if elapsed > 0:
            self._bar.set_postfix_str(f"{done / elapsed:.1f}x real time", refresh=False)
        self._bar.update(done - self._shown)
        self._shown = done
        if t >= stop:
            self.close()

    def _open(self, t: float, stop: float) -> None:
        from tqdm.auto import tqdm

        if self.start is None:
            self.start = t
        tty = sys.stderr.isatty()
        self._bar = tqdm(total=max(stop - self.start, 0.0), desc=f"{self.description}: " if self.description else None,
                         unit="s",
                         unit_scale=False, file=sys.stderr, mininterval=0.25 if tty else 10.0, leave=True,
                         dynamic_ncols=True,
                         bar_format="{desc}{percentage:3.0f}%|{bar}| t = {n:.2f}/{total:.2f} s "
                                    "[{elapsed}<{remaining}{postfix}]")
        self._t0 = time.perf_counter()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def make_progress(enabled: bool, description: str = "", start: float | None = None) -> Callable | None:
    """A :class:`Progress` when ``enabled``, else None (no call per step at all)."""
    return Progress(description, start) if enabled else None
