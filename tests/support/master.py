"""Run a System with the master alone (Execution + MemoryObserver), for the tests of the master layer.

Users and the other tests go through the one run path (``orchestration.simulate``), which first
validates the system; the master's own tests also run systems that validation would refuse on
purpose (a position driving a force to test the coupling arithmetic), so they drive the execution
directly, as the run path does after its checks.
"""
from __future__ import annotations

from typing import Sequence

from orchestration.master.algorithms.fixed import Algorithm, FixedStepAlgorithm
from orchestration.master.execution import Execution
from orchestration.master.manipulators import Manipulator
from orchestration.master.observers import Observer
from orchestration.master.observers.results import MemoryObserver, Results, default_observed
from orchestration.system.model import System


def run_master(system: System, stop_time: float | None = None, step: float | None = None, method: str = "jacobi",
               extrapolation: int = 0, order: list[str] | None = None, algorithm: Algorithm | None = None,
               variables: Sequence[str] | None = None, manipulators: Sequence[Manipulator] = (),
               observers: Sequence[Observer] = ()) -> Results:
    """Run ``system`` in this process and return the recorded variables ("component.variable";
    default: all Real outputs and inputs)."""
    stop_time = stop_time if stop_time is not None else system.stop_time
    step = step if step is not None else system.base_step
    algorithm = algorithm or FixedStepAlgorithm(method=method, extrapolation=extrapolation, order=order)
    selected = ([tuple(v.split(".", 1)) for v in variables] if variables is not None
                else default_observed(system))
    memory = MemoryObserver(selected)
    execution = Execution(system, algorithm, observers=[memory, *observers], manipulators=manipulators,
                          observed=selected)
    try:
        execution.initialize()
        execution.run(stop_time, step)
    finally:
        execution.free()
    return memory.results({"algorithm": algorithm.settings()})
