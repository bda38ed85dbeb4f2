"""Master algorithms: how slaves are stepped and how outputs become inputs.

The execution (execution.py) owns the slaves, the connection plan and the current values; an
algorithm only decides, per macro step, which slaves step, in which order, and with which input
values. Later algorithms (ECCO, error control with rollback, iterative coupling) implement the
same two methods, :meth:`Algorithm.setup` and :meth:`Algorithm.step`.

FixedStepAlgorithm
------------------
* **Jacobi**: every due slave gets its inputs from the outputs at t, then all step (in parallel
  on backends that can).
* **Gauss-Seidel**: due slaves step one after another in ``order``; a slave whose source has
  already stepped this macro step reads that source's new output at t + h. The default order comes
  from the connection graph (see :func:`gauss_seidel_order`).
* **Input extrapolation** of order 0, 1 or 2 for outputs not yet updated: the polynomial through
  the last 1-3 communication points is evaluated at the *midpoint* of the receiving slave's step
  and held over the step. FMI 2.0 co-simulation inputs are constant over a step unless the FMU
  can interpolate inputs; the midpoint value gives that constant the exact integral of a linearly
  varying input.
* **Multi-rate**: slave i steps every ``m_i`` base steps with step m_i h (OSP's decimation
  factor); between its steps, faster slaves see its latest outputs.
* **Direct feedthrough** (outputs that depend on inputs within a step, declared in the
  modelDescription): after every macro step such slaves get their inputs from the new outputs and
  their outputs are read again, so a feedthrough output never lags a step behind its inputs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING


from orchestration.system.graphs import strongly_connected_components

if TYPE_CHECKING:
    from orchestration.master.execution import Execution


class Algorithm:
    """Interface of a master algorithm."""

    name = "abstract"

    def setup(self, execution: "Execution") -> None:
        self.execution = execution

    def step(self, t: float, h: float) -> float:
        """Advance the system from t by one macro step of (base) size h; return the step taken."""
        raise NotImplementedError

    def settings(self) -> dict:
        """The algorithm's settings, for result metadata."""
        return {"algorithm": self.name}


def gauss_seidel_order(n: int, edges: set[tuple[int, int]], names: list[str]) -> list[int]:
    """Order for Gauss-Seidel: sources before their sinks where the graph allows it.

    Strongly connected groups (feedback) are kept in declaration order; the groups themselves are
    topologically sorted (Tarjan's algorithm), so a chain a -> b -> c steps as a, b, c and each
    slave sees the newest outputs of everything upstream of it."""
    successors = {i: sorted(j for (a, j) in edges if a == i) for i in range(n)}
    groups = [sorted(g) for g in strongly_connected_components(range(n), successors.__getitem__)]
    # Tarjan emits groups in reverse topological order
    return [v for group in reversed(groups) for v in group]


def grid_end(ex, k: int, base: float) -> float:
    """The k-th communication point start + k * base, or the stop time exactly where that is at or
    past it (a slower slave's last step in a run that ends between its communication points, and
    the float noise of start + k * base: 174.975 + 0.025 is 175.00000000000003; no FMU is asked to
    step past its stop time, which strict FMUs refuse)."""
    end = ex.system.start_time + k * base
    stop = ex.stop_time
    if stop is not None and end > stop - 1e-9 * max(1.0, abs(stop)):
        return stop
    return end


@dataclass
class FixedStepAlgorithm(Algorithm):
    """Fixed-step Jacobi or Gauss-Seidel with input extrapolation and multi-rate stepping."""

    method: str = "jacobi"              # "jacobi" | "gauss-seidel"
    extrapolation: int = 0              # 0, 1 or 2
    order: list[str] | None = None      # Gauss-Seidel order by component name (default: from the graph)
    name: str = field(default="fixed", init=False)

    def __post_init__(self):
        if self.method not in ("jacobi", "gauss-seidel"):
            raise ValueError(f"unknown fixed-step method {self.method!r} (jacobi or gauss-seidel)")
        if self.extrapolation not in (0, 1, 2):
            raise ValueError(f"input extrapolation order must be 0, 1 or 2, not {self.extrapolation!r}")

    def settings(self) -> dict:
        return {"algorithm": self.name, "method": self.method, "extrapolation": self.extrapolation,
                "order": [self.execution.slaves[i].name for i in self._order]}

    def setup(self, execution: "Execution") -> None:
        super().setup(execution)
        n = len(execution.slaves)
        if self.order:
            unknown = set(self.order) - set(execution.index)
            if unknown or len(set(self.order)) != n:
                raise ValueError(f"Gauss-Seidel order {self.order} must name every component exactly once "
                                 f"({sorted(execution.index)})")
            self._order = [execution.index[name] for name in self.order]
        elif self.method == "gauss-seidel":
            self._order = gauss_seidel_order(n, execution.slave_edges(), [s.name for s in execution.slaves])
        else:
            self._order = list(range(n))
        # sources before sinks, for making feedthrough outputs consistent after each step
        self._refresh_order = gauss_seidel_order(n, execution.slave_edges(), [s.name for s in execution.slaves])
        self._count = 0

    def step(self, t: float, h: float) -> float:
        ex = self.execution
        n = self._count
        due = [i for i in self._order if n % ex.step_multiple[i] == 0]
        # the communication points are start + k h, and a step goes from one to another: its size is
        # their difference (as FMPy and the Reference FMUs' fmusim compute it), not h, which differs
        # from it by rounding and would make a sub-stepping FMU split its step differently; a step
        # that would end at or past the stop time ends on it (grid_end)
        base = ex.base_step if ex.base_step is not None else h
        span = {m: grid_end(ex, n + m, base) - t for m in {ex.step_multiple[i] for i in due}}
        if self.method == "jacobi":
            inputs = [ex.compute_inputs(i, t, span[ex.step_multiple[i]], self.extrapolation, updated=()) for i in due]
            for i, u in zip(due, inputs):
                ex.advance(i, u, t, span[ex.step_multiple[i]])
        else:
            updated: set[int] = set()
            for i in due:
                H = span[ex.step_multiple[i]]
                ex.advance(i, ex.compute_inputs(i, t, H, self.extrapolation, updated=updated), t, H)
                updated.add(i)
        ex.refresh_feedthrough(grid_end(ex, n + 1, base), self._refresh_order)
        self._count += 1
        return h
