"""The master algorithm by name, with options from the system file and the command line.

Names: ``fixed`` (algorithms.FixedStepAlgorithm), ``ecco`` (ecco.EccoAlgorithm), ``error-control``
(error_control.ErrorControlAlgorithm), ``iterative`` (iterative.IterativeAlgorithm).  Options use
the snake_case keys the system readers produce; for ECCO those of libcosim's EccoConfiguration as
orchestration/system/osp.py reads them (``safety_factor``, ``step_size``, ``minimum_step_size``,
``maximum_step_size``, ``minimum_change_rate``, ``maximum_change_rate``, ``proportional_gain``,
``integral_gain``, ``relative_tolerance``, ``absolute_tolerance``), and the short ``rtol``,
``atol``, ``min_step``, ``max_step``, ``method``, ``max_iterations`` for all.
"""
from __future__ import annotations

from difflib import get_close_matches
from typing import Any, Iterable

from orchestration.master.algorithms.fixed import Algorithm, FixedStepAlgorithm

NAMES = ("fixed", "ecco", "error-control", "iterative")
#: default tolerances (docs/algorithms.md says how they were chosen)
ECCO_RTOL, ECCO_ATOL = 1e-2, 1e-3
EC_RTOL, EC_ATOL = 1e-3, 1e-6


#: options read by the run rather than by the algorithm (OSP's numWorkerThreads)
NOT_ALGORITHM_OPTIONS = frozenset({"num_worker_threads"})


class _Options:
    """The options given, and the names the algorithm asked for (those it reads, whether given or
    not): a name given that it never asks for is one it would ignore."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.values, self.asked = options, set()

    def get(self, *keys: str, default=None):
        self.asked.update(keys)
        for k in keys:
            if k in self.values and self.values[k] is not None:
                return self.values[k]
        return default


def _get(options: _Options, *keys: str, default=None):
    return options.get(*keys, default=default)


def _float(value) -> float | None:
    return None if value is None else float(value)


def _bool(value) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{value!r} is not a boolean (true/false)")


def make_algorithm(name: str, options: dict[str, Any] | None = None,
                   check: Iterable[str] | None = None) -> Algorithm:
    """An algorithm instance; unknown names, bad option values and options the algorithm does not
    read (among ``check``: all given, if None) raise ValueError naming them. A misspelt option
    would otherwise be ignored without a word: ``min_stpe`` runs with the default minimum step."""
    o = _Options(dict(options or {}))
    algorithm = _make(name, o)
    ignored = sorted(k for k in (o.values if check is None else check)
                     if k in o.values and k not in o.asked and k not in NOT_ALGORITHM_OPTIONS)
    if ignored:
        known = sorted(o.asked)
        hints = [f"{k!r} (did you mean {', '.join(map(repr, close))}?)" if (close := get_close_matches(k, known, 3))
                 else repr(k) for k in ignored]
        raise ValueError(f"the {name} algorithm has no option {', '.join(hints)}; its options: {', '.join(known)}")
    return algorithm


def _make(name: str, o: _Options) -> Algorithm:
    method = _get(o, "method", default="jacobi")
    if name == "fixed":
        return FixedStepAlgorithm(method=method, extrapolation=int(_get(o, "extrapolation", default=0)))
    if name == "ecco":
        from orchestration.master.algorithms.ecco import EccoAlgorithm
        from orchestration.master.algorithms.step_control import PIController

        controller = PIController(
            safety=float(_get(o, "safety_factor", "safety", default=0.99)),
            min_step=_float(_get(o, "minimum_step_size", "min_step")),
            max_step=_float(_get(o, "maximum_step_size", "max_step")),
            min_change=float(_get(o, "minimum_change_rate", "min_change", default=0.2)),
            max_change=float(_get(o, "maximum_change_rate", "max_change", default=1.5)),
            kp=float(_get(o, "proportional_gain", "kp", default=0.2)),
            ki=float(_get(o, "integral_gain", "ki", default=0.15)))
        return EccoAlgorithm(rtol=float(_get(o, "relative_tolerance", "rtol", default=ECCO_RTOL)),
                             atol=float(_get(o, "absolute_tolerance", "atol", default=ECCO_ATOL)),
                             h0=_float(_get(o, "step_size", "h0")), controller=controller, method=method,
                             extrapolation=int(_get(o, "extrapolation", default=0)),
                             energy_reference=_get(o, "energy_reference"),
                             time_resolution=_float(_get(o, "time_resolution")),
                             refresh=_bool(_get(o, "refresh")),
                             conventions=str(_get(o, "conventions", default="paper")))
    if name == "error-control":
        from orchestration.master.algorithms.error_control import ErrorControlAlgorithm

        return ErrorControlAlgorithm(rtol=float(_get(o, "rtol", "relative_tolerance", default=EC_RTOL)),
                                     atol=float(_get(o, "atol", "absolute_tolerance", default=EC_ATOL)),
                                     h0=_float(_get(o, "step_size", "h0")),
                                     min_step=_float(_get(o, "min_step", "minimum_step_size")),
                                     max_step=_float(_get(o, "max_step", "maximum_step_size")),
                                     method=method, extrapolation=int(_get(o, "extrapolation", default=0)),
                                     hold_check=bool(_bool(_get(o, "hold_check", default=False))),
                                     measure=str(_get(o, "measure", default="coupling")),
                                     norm=str(_get(o, "norm", default="max")),
                                     rollback=str(_get(o, "rollback", default="auto")))
    if name == "iterative":
        from orchestration.master.algorithms.iterative import IterativeAlgorithm

        return IterativeAlgorithm(rtol=float(_get(o, "rtol", "relative_tolerance", default=1e-6)),
                                  atol=float(_get(o, "atol", "absolute_tolerance", default=1e-9)),
                                  max_iterations=int(_get(o, "max_iterations", default=50)))
    raise ValueError(f"unknown algorithm {name!r}; choose one of {', '.join(NAMES)}")
