"""The Python API: run a system from a script or a notebook, as FMPy's ``simulate_fmu`` runs one FMU.

    from orchestration import simulate
    res = simulate("scenarios/offshore_lift/offshore_lift.ssd", stop_time=60,
                   parameters={"ship.sea.hs": 3.0}, scenario="scenarios/offshore_lift/events.yaml")
    df = res.to_pandas()                  # indexed by time; units in df.attrs["units"]
    res["cable.winch.tension"]            # a numpy array over res.time
    res.metadata["run"]                   # steps, wall and CPU time, real-time factor, algorithm

It is the command line's run path (orchestration.runs.run), with results kept in memory and, if
``out`` is given, also written there as ``marine-cosim run`` writes them.
"""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Sequence

from orchestration.master.manipulators import Manipulator
from orchestration.master.observers import Observer
from orchestration.master.observers.results import Results
from orchestration.system.model import System


def simulate(system: str | Path | System, stop_time: float | None = None, step: float | None = None, *,
             parameters: dict[str, Any] | None = None, scenario: str | Path | None = None,
             algorithm: Any = None, method: str | None = None, extrapolation: int | None = None,
             order: Sequence[str] | None = None,
             options: dict[str, Any] | None = None, variables: Sequence[str] | None = None,
             out: str | Path | None = None, backend: str | None = None, progress: bool = False,
             record_every: int = 1, manipulators: Sequence[Manipulator] = (),
             observers: Sequence[Observer] = ()) -> Results:
    """Run ``system`` (a system file -- .ssd, .ssp, OspSystemStructure.xml -- or a
    :class:`~orchestration.system.model.System`) and return its recorded variables.

    ``stop_time`` and ``step`` default to the system file's (``scenario``'s ``end`` first);
    ``parameters`` sets start values by ``"component.variable"``; ``algorithm`` is a name (fixed,
    ecco, error-control, iterative) or an algorithm object, ``method``/``extrapolation``/``options``
    its settings (``order``: the Gauss-Seidel order of the fixed-step algorithm, component names);
    ``variables`` ("component.variable") limits the recording (default: every numeric output and
    input), ``record_every`` N keeps the start and every N-th macro step; ``out`` also writes the
    result files there; ``backend`` chooses where the FMUs
    run (inprocess, process, ray). The returned :class:`Results` carry the run's figures in
    ``metadata["run"]``."""
    from orchestration.runs.run import RunSettings, run

    given = system if isinstance(system, System) else None
    if given is not None and parameters:
        given = copy.deepcopy(given)              # the caller's System keeps its own start values
    path = str(given.source_file or given.name) if given is not None else str(system)
    opts = dict(options or {})
    if method is not None:
        opts["method"] = method
    if extrapolation is not None:
        opts["extrapolation"] = extrapolation
    settings = RunSettings(system=path, out=str(out) if out is not None else None, stop=stop_time, step=step,
                           algorithm=algorithm if isinstance(algorithm, str) else None, options=opts,
                           scenario=str(scenario) if scenario is not None else None,
                           variables=list(variables) if variables is not None else None, backend=backend,
                           record_every=record_every,
                           parameters=dict(parameters or {}), quiet=not progress, files=out is not None, memory=True)
    if algorithm is not None and not isinstance(algorithm, str):
        settings.algorithm = algorithm
    elif order is not None:
        from orchestration.master.algorithms.fixed import FixedStepAlgorithm

        settings.algorithm = FixedStepAlgorithm(method=method or "jacobi", extrapolation=extrapolation or 0,
                                                order=list(order))
    report = run(settings, manipulators=manipulators, observers=observers, system=given)
    results = report.results
    results.metadata["run"] = report.timings()
    results.metadata["end_time"] = report.time
    if report.out is not None:
        results.metadata["out"] = str(report.out)
    return results
