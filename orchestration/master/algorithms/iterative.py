"""Iterative coupling with rollback for algebraic loops and strong coupling: each macro step is
repeated until the inputs held over it agree with the outputs it produces (a fixed point),
accelerated by Aitken's dynamic relaxation.

Source: U. Kuettler & W. A. Wall, "Fixed-point fluid-structure interaction solvers with dynamic
relaxation", Computational Mechanics 43 (2008) 61-72 (Aitken's Delta^2 for vectors); the
Gauss-Seidel/Jacobi waveform-iteration view in Gomes et al., ACM Computing Surveys 51(3) 2018.

From t with saved states: u(t) from the outputs at t; iterate on the coupling values at t + h,
u_k (u_0 = u(t)): step every slave over [t, t + h] with the held input (u(t) + u_k)/2 (trapezoidal,
second order; or u_k, implicit Euler, with trapezoidal=False); the outputs at t + h give
u~ = G(u_k) and the residual r_k = u~ - u_k; outputs with direct feedthrough are read with the
inputs set to u_k, so a converged step also satisfies an algebraic loop at t + h.  Converged when

    || r_k / (atol + rtol |u~|) ||_inf <= 1;

otherwise restore and retry with u_{k+1} = u_k + w_k r_k,  w_k = -w_{k-1} r_{k-1}.(r_k - r_{k-1}) /
|r_k - r_{k-1}|^2 (w_0 = ``relaxation``).  The converged step is implicit in the coupling: the
inputs over the step are the end-of-step outputs.  Non-convergence after ``max_iterations`` stops the
run naming the input with the largest residual.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from orchestration.errors import ConvergenceError  # noqa: F401  (re-exported)
from orchestration.master.algorithms.fixed import Algorithm

if TYPE_CHECKING:
    from orchestration.master.execution import Execution




class IterativeAlgorithm(Algorithm):
    """Fixed-step iterative coupling with Aitken relaxation (module docstring)."""

    name = "iterative"

    def __init__(self, rtol: float = 1e-6, atol: float = 1e-9, max_iterations: int = 50,
                 relaxation: float = 0.5, trapezoidal: bool = True) -> None:
        if not (rtol >= 0.0 and atol >= 0.0 and rtol + atol > 0.0):
            raise ValueError(f"iterative: rtol = {rtol!r}, atol = {atol!r} must be >= 0 and not both 0")
        if int(max_iterations) < 1 or not 0.0 < relaxation <= 1.0:
            raise ValueError(f"iterative: max_iterations = {max_iterations!r} >= 1 and 0 < relaxation = "
                             f"{relaxation!r} <= 1")
        self.rtol, self.atol = float(rtol), float(atol)
        self.max_iterations, self.relaxation = int(max_iterations), float(relaxation)
        self.trapezoidal = bool(trapezoidal)
        self.iterations: list[int] = []

    def settings(self) -> dict:
        return {"algorithm": self.name, "rtol": self.rtol, "atol": self.atol, "trapezoidal": self.trapezoidal,
                "max_iterations": self.max_iterations, "relaxation": self.relaxation}

    def setup(self, execution: "Execution") -> None:
        super().setup(execution)
        for s in execution.slaves:
            if not s.can_get_and_set_state:
                raise ConvergenceError(f"iterative coupling repeats steps, but {s.name} cannot save and restore "
                                       "its state (canGetAndSetFMUstate is false, or FMI 1.0)")
        if any(m != 1 for m in execution.step_multiple):
            raise ValueError("iterative: step multiples (multi-rate) are not supported")
        self._sizes = [len(u) for u in execution.inputs]
        # Integer, Enumeration and Boolean inputs: an average or a relaxed value of two integers is
        # no value they can take (a Stair counter of 1.25), so they take the iterate itself and are
        # updated by substitution, outside Aitken's products; None when every input is Real
        discrete = np.array([s.variables[name].type != "Real" for s, names in zip(execution.slaves, execution.in_names)
                             for name in names], dtype=bool)
        self._discrete = discrete if discrete.any() else None

    def _split(self, flat: np.ndarray) -> list[np.ndarray]:
        return np.split(flat, np.cumsum(self._sizes)[:-1])

    def step(self, t: float, h: float) -> float:
        ex = self.execution
        n = len(ex.slaves)
        everyone = range(n)
        snap = ex.save()
        try:
            u0 = np.concatenate([ex.compute_inputs(i, t, h, 0, updated=()) for i in everyone])
            u = u0.copy()                # the coupling values at t + h, iterated
            # Aitken's inner products in tolerance units: forces (1e6 N) and positions (1 m) count alike
            weight = 1.0 / (self.atol + self.rtol * np.abs(u0))
            discrete = self._discrete
            if discrete is not None:
                weight[discrete] = 0.0
            r_prev, w = None, self.relaxation
            for k in range(1, self.max_iterations + 1):
                if k > 1:
                    ex.restore(snap)
                held = 0.5 * (u0 + u) if self.trapezoidal else u
                if discrete is not None and self.trapezoidal:
                    held = np.where(discrete, u, held)
                for i, ui in zip(everyone, self._split(held)):
                    ex.advance(i, ui, t, h)
                # outputs that depend on inputs are evaluated at the candidate end values u, so a
                # converged step also solves the algebraic loop at t + h
                for i, ui in zip(everyone, self._split(u)):
                    if ex.feedthrough[i]:
                        ex.feed(i, t + h, ui)
                u_new = np.concatenate([ex.compute_inputs(i, t, h, 0, updated=everyone) for i in everyone])
                r = u_new - u
                scaled = np.abs(r) / (self.atol + self.rtol * np.abs(u_new))
                if not scaled.size or float(np.max(scaled)) <= 1.0:
                    self.iterations.append(k)
                    return h
                if r_prev is not None:
                    dr = (r - r_prev) * weight
                    denom = float(dr @ dr)
                    if denom > 0.0:
                        w = float(np.clip(-w * float((r_prev * weight) @ dr) / denom, -2.0, 2.0)) or self.relaxation
                u, r_prev = u + w * r, r
                if discrete is not None:
                    u = np.where(discrete, u_new, u)
            j = int(np.argmax(scaled))
            i = int(np.searchsorted(np.cumsum(self._sizes), j, side="right"))
            name = ex.in_names[i][j - int(np.sum(self._sizes[:i]))]
            raise ConvergenceError(f"iterative coupling did not converge at t = {t:.6g} s (step {h:g} s) in "
                                   f"{self.max_iterations} iterations: largest residual {float(r[j]):.3e} at "
                                   f"{ex.slaves[i].name}.{name} (tolerance {self.atol:g} + {self.rtol:g} |u|); "
                                   "try a smaller step or more iterations")
        finally:
            ex.discard(snap)
