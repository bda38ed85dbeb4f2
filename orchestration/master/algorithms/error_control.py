"""Error-controlled adaptive co-simulation with rollback: step doubling (Richardson's error
estimate) on the coupling variables, using FMU state save/restore.

Sources: Schierz, Arnold, Clauss, "Co-simulation with communication step size control in an FMI
compatible master algorithm", 9th Modelica Conference 2012; Arnold, Clauss, Schierz, Arch. Mech.
Eng. 60(1) 2013 (anchors_cosim.md section 3).

From t, save every slave's state; one coupling step of h gives the coupled outputs y_1; restore;
two steps of h/2 give y_2.  The local error of the (first-order, inputs held) coupling is about
y_2 - y_1, measured as

    err = sqrt( mean_k [ (y_2,k - y_1,k) / (atol + rtol |y_2,k|) ]^2 )

over the outputs the master tracks: connected ones and recorded ones (a held input's error shows
first in the receiving slave's outputs, which need not be connected anywhere).

err <= 1 accepts the step and keeps the two half steps (the better result); otherwise the master
restores and retries with a smaller step.  Next step: h * clamp(safety err^(-1/2), min, max)
(order p = 1 of the coupling error, exponent -1/(p+1)).  Cost: three coupling steps and one
save/two restores per accepted step.

Before the first step every slave's rollback is tested, one slave at a time with its inputs held:
save, step, restore, step again -- the outputs must repeat bit for bit.  A slave without fmi2GetFMUstate,
or one that does not restore
exactly, stops the run with a message naming it, instead of giving a wrong result.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

import numpy as np

from orchestration.errors import RollbackError  # noqa: F401  (re-exported)
from orchestration.master.algorithms.step_control import AdaptiveAlgorithm

if TYPE_CHECKING:
    from orchestration.master.execution import Execution




class ErrorControlAlgorithm(AdaptiveAlgorithm):
    """Step doubling with rollback (module docstring)."""

    name = "error-control"

    def __init__(self, rtol: float = 1e-3, atol: float = 1e-6, h0: float | None = None, min_step: float = 1e-6,
                 max_step: float = 1.0, safety: float = 0.9, min_change: float = 0.2, max_change: float = 2.0,
                 method: str = "jacobi", order: Sequence[str] | None = None, extrapolation: int = 0,
                 hold_check: bool = False) -> None:
        super().__init__(method, order, extrapolation)
        self.hold_check = bool(hold_check)
        if not (rtol >= 0.0 and atol >= 0.0 and rtol + atol > 0.0):
            raise ValueError(f"error-control: rtol = {rtol!r}, atol = {atol!r} must be >= 0 and not both 0")
        if not 0.0 < min_step <= max_step:
            raise ValueError(f"error-control: need 0 < min_step <= max_step ({min_step!r}, {max_step!r})")
        self.rtol, self.atol, self.min_step, self.max_step = float(rtol), float(atol), float(min_step), float(max_step)
        self.safety, self.min_change, self.max_change = safety, min_change, max_change
        if h0 is not None:
            self.next_step = float(h0)
        self.rejected = 0
        self._tested = False

    def settings(self) -> dict:
        return {"algorithm": self.name, "method": self.method, "rtol": self.rtol, "atol": self.atol,
                "min_step": self.min_step, "max_step": self.max_step, "safety": self.safety,
                "extrapolation": self.extrapolation, "hold_check": self.hold_check}

    def setup(self, execution: "Execution") -> None:
        super().setup(execution)
        for s in execution.slaves:
            if not s.can_get_and_set_state:
                source = getattr(getattr(s, "fmu", None), "name", "")
                raise RollbackError(f"error-control rolls steps back, but {s.name} ({source}) cannot save and "
                                    "restore its state (canGetAndSetFMUstate is false, or FMI 1.0); use "
                                    "--algorithm fixed or ecco for this system")

    def _coupled_outputs(self) -> np.ndarray:
        """Every output the master tracks: connection sources and recorded outputs (the coupling
        error of a held input shows first in the receiving slave's own outputs)."""
        ex = self.execution
        return np.concatenate([y for y in ex.outputs] or [np.zeros(0)])

    def _hold_error(self, t_end: float) -> float:
        """Input-hold error (``hold_check=True``): each slave's inputs held over the last half step
        against those its sources give at t + h (feedthrough refreshed), scaled as the outputs are.
        Step doubling cannot see an input that starts to change inside the step (a contact force when
        the bodies touch in the second half: both runs held it at 0); this can, and it also keeps each
        held input within rtol of its end value, which contact transients need (positions measured
        against rtol |y| are too coarse there).  First order in h, so off by default: on a smooth
        coupling at tight tolerance it sets the step (B3 at rtol 1e-4: steps of 1e-5 s)."""
        ex = self.execution
        worst = 0.0
        for i in range(len(ex.slaves)):
            if not ex.links[i]:
                continue
            held = ex.inputs[i]
            now = ex.compute_inputs(i, t_end, 0.0, 0, updated=())
            scale = self.atol + self.rtol * np.maximum(np.abs(now), np.abs(held))
            worst = max(worst, float(np.sqrt(np.mean(np.square((now - held) / scale)))))
        return worst

    def self_test(self, t: float, h: float) -> None:
        """Each slave alone, inputs held: save, step, restore, step again -- the outputs must repeat
        bit for bit (testing the slaves one by one names the one that does not restore)."""
        ex = self.execution
        for i, slave in enumerate(ex.slaves):
            u = ex.compute_inputs(i, t, h, 0, updated=())
            state = slave.get_state()
            try:
                first = slave.exchange(ex.in_vrs[i], u, t, h, ex.out_vrs[i]).copy()
                slave.set_state(state)
                again = slave.exchange(ex.in_vrs[i], u, t, h, ex.out_vrs[i])
                slave.set_state(state)
            finally:
                slave.free_state(state)
            if not np.array_equal(first, again):
                k = int(np.argmax(np.abs(first - again)))
                raise RollbackError(
                    f"{slave.name} does not restore its state exactly: after a rollback its output "
                    f"{ex.out_names[i][k]!r} was {again[k]!r} instead of {first[k]!r}; error-control would give "
                    "wrong results with it (use --algorithm fixed or ecco)")
        self._tested = True

    def step(self, t: float, h: float) -> float:
        if not self._tested:
            self.self_test(t, h)
        ex = self.execution
        snap = ex.save()
        try:
            while True:
                self.coupling_step(t, h)
                y1 = self._coupled_outputs()
                ex.restore(snap)
                self.coupling_step(t, 0.5 * h)
                self.coupling_step(t + 0.5 * h, 0.5 * h)
                y2 = self._coupled_outputs()
                scale = self.atol + self.rtol * np.abs(y2)
                err = float(np.sqrt(np.mean(np.square((y2 - y1) / scale)))) if y2.size else 0.0
                if self.hold_check:
                    err = max(err, self._hold_error(t + h))
                factor = self.safety * err ** -0.5 if err > 0.0 else self.max_change
                if not math.isfinite(err):
                    factor = self.min_change
                if err <= 1.0 or h <= self.min_step * (1 + 1e-12):
                    self.log.append({"time": t + h, "step": h, "error": err, "rejected": self.rejected})
                    self.next_step = min(max(h * min(max(factor, self.min_change), self.max_change),
                                             self.min_step), self.max_step)
                    return h
                self.rejected += 1
                ex.restore(snap)
                h = max(h * min(max(factor, self.min_change), 1.0), self.min_step)
        finally:
            ex.discard(snap)
