"""marine-cosim's co-simulation: system files, the master, execution backends, runs and the command line.

The Python API::

    from orchestration import simulate
    res = simulate("scenarios/offshore_lift/offshore_lift.ssd", stop_time=60, parameters={"ship.sea.hs": 3.0},
                   scenario="scenarios/offshore_lift/events.yaml")
    df = res.to_pandas()

Layers, each a sub-package that imports only the ones before it (checked by import-linter,
docs/architecture.md): ``system`` (the system model, SSP and OSP files, units, validation) ->
``master`` (execution, slaves, algorithms, observers, manipulators, coupling checks) ->
``backends`` (in-process, process, Ray) -> ``runs`` (the one run path, the Python API, sweeps,
single-FMU runs, reference scenarios, plots) -> ``cli``. ``errors`` is below them all.
"""
from __future__ import annotations

from importlib import metadata as _metadata
from typing import TYPE_CHECKING, Any

from orchestration.errors import MarineCosimError

try:
    __version__ = _metadata.version("marine-cosim")
except _metadata.PackageNotFoundError:        # a checkout on sys.path without an installation
    __version__ = "0+unknown"

__all__ = ["simulate", "load_results", "load_system", "Results", "MarineCosimError", "__version__"]

if TYPE_CHECKING:
    from orchestration.master.observers.results import Results, load_results
    from orchestration.runs.api import simulate
    from orchestration.system.files import load_system

_LAZY = {"simulate": "orchestration.runs.api", "Results": "orchestration.master.observers.results",
         "load_results": "orchestration.master.observers.results", "load_system": "orchestration.system.files"}


def __getattr__(name: str) -> Any:
    # the API's modules import numpy, FMPy and the master: only when asked for
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'orchestration' has no attribute {name!r}")
