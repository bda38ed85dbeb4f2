"""Shared parts of the adaptive master algorithms (ecco.py, error_control.py, iterative.py): one
coupling step of every slave, the PI step-size controller, and the base class.

PI controller (Gustafsson; as libcosim's ``ecco_algorithm.cpp`` and Sadjina et al. 2017, eq. 22)::

    gain = safety * e_n^-(kI + kP) * e_{n-1}^kP,  clamped to [min_change, max_change]
    h_{n+1} = clamp(gain * h_n, h_min, h_max)

with e_n the step's error indicator (1 = on tolerance).  e_n = 0 keeps the step.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from orchestration.master.algorithms.fixed import Algorithm, gauss_seidel_order

if TYPE_CHECKING:
    from orchestration.master.execution import Execution


@dataclass
class PIController:
    """Step-size controller (module docstring); parameter names and defaults as libcosim's
    EccoConfiguration in its quarter-truck example."""

    safety: float = 0.99
    min_step: float = 1e-5
    max_step: float = 1e-2
    min_change: float = 0.2
    max_change: float = 1.5
    kp: float = 0.2
    ki: float = 0.15

    def __post_init__(self) -> None:
        bad = [(n, getattr(self, n)) for n in ("safety", "min_step", "max_step", "min_change", "max_change")
               if not (math.isfinite(getattr(self, n)) and getattr(self, n) > 0.0)]
        bad += [(n, getattr(self, n)) for n in ("kp", "ki") if not (math.isfinite(getattr(self, n))
                                                                   and getattr(self, n) >= 0.0)]
        if self.min_step > self.max_step:
            bad.append(("min_step", self.min_step))
        if self.min_change > 1.0 or self.max_change < 1.0:
            bad.append(("min_change/max_change", (self.min_change, self.max_change)))
        if bad:
            raise ValueError("step controller: " + ", ".join(f"{n} = {v!r}" for n, v in bad) +
                             " (positive steps with min_step <= max_step, min_change <= 1 <= max_change)")
        self._prev = None

    def next(self, h: float, error: float) -> float:
        """The next step after a step h with error indicator ``error``."""
        if not math.isfinite(error):
            gain = self.min_change
        elif error <= 0.0:
            gain = 1.0 if self._prev is None else self.max_change
        else:
            prev = self._prev if self._prev else error
            gain = self.safety * error ** -(self.ki + self.kp) * prev ** self.kp
            gain = min(max(gain, self.min_change), self.max_change)
        if math.isfinite(error) and error > 0.0:
            self._prev = error
        return min(max(gain * h, self.min_step), self.max_step)

    def settings(self) -> dict:
        return {k: getattr(self, k) for k in ("safety", "min_step", "max_step", "min_change", "max_change",
                                              "kp", "ki")}


class AdaptiveAlgorithm(Algorithm):
    """An algorithm that proposes its own steps (Execution.run calls :meth:`start`, then steps with
    ``next_step`` until the stop time).  One coupling step = every slave steps once, Jacobi or
    Gauss-Seidel, inputs held (no extrapolation, no multi-rate)."""

    adaptive = True

    def __init__(self, method: str = "jacobi", order: Sequence[str] | None = None, extrapolation: int = 0) -> None:
        if method not in ("jacobi", "gauss-seidel"):
            raise ValueError(f"unknown coupling method {method!r} (jacobi or gauss-seidel)")
        if extrapolation not in (0, 1, 2):
            raise ValueError(f"extrapolation order {extrapolation!r}: 0 (hold), 1 (linear) or 2 (quadratic)")
        self.method, self.order = method, list(order) if order else None
        self.extrapolation = int(extrapolation)
        self.next_step = math.nan
        self.log: list[dict] = []          # one row per accepted step, for results and plots

    def setup(self, execution: "Execution") -> None:
        super().setup(execution)
        n = len(execution.slaves)
        if any(m != 1 for m in execution.step_multiple):
            raise ValueError(f"{self.name}: step multiples (multi-rate) are not supported; use the fixed algorithm")
        if self.order:
            self._order = [execution.index[name] for name in self.order]
        elif self.method == "gauss-seidel":
            self._order = gauss_seidel_order(n, execution.slave_edges(), [s.name for s in execution.slaves])
        else:
            self._order = list(range(n))
        self._refresh_order = gauss_seidel_order(n, execution.slave_edges(), [s.name for s in execution.slaves])

    def start(self, h0: float) -> None:
        """Called by Execution.run with the run's step: the first step (unless set explicitly)."""
        if not math.isfinite(self.next_step):
            self.next_step = h0

    def coupling_step(self, t: float, h: float) -> None:
        ex = self.execution
        ex.before_step(t, h)
        if self.method == "jacobi":
            inputs = [ex.compute_inputs(i, t, h, self.extrapolation, updated=()) for i in self._order]
            for i, u in zip(self._order, inputs):
                ex.advance(i, u, t, h)
        else:
            updated: set[int] = set()
            for i in self._order:
                ex.advance(i, ex.compute_inputs(i, t, h, self.extrapolation, updated=updated), t, h)
                updated.add(i)
        ex.refresh_feedthrough(t + h, self._refresh_order)

    def step(self, t: float, h: float) -> float:
        raise NotImplementedError
