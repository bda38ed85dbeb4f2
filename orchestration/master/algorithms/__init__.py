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

from typing import Any

from orchestration.master.algorithms.fixed import Algorithm, FixedStepAlgorithm

NAMES = ("fixed", "ecco", "error-control", "iterative")


def _get(options: dict[str, Any], *keys: str, default=None):
    for k in keys:
        if k in options and options[k] is not None:
            return options[k]
    return default


def make_algorithm(name: str, options: dict[str, Any] | None = None) -> Algorithm:
    """An algorithm instance; unknown names and bad option values raise ValueError naming them."""
    o = dict(options or {})
    method = _get(o, "method", default="jacobi")
    if name == "fixed":
        return FixedStepAlgorithm(method=method, extrapolation=int(_get(o, "extrapolation", default=0)))
    if name == "ecco":
        from orchestration.master.algorithms.ecco import EccoAlgorithm
        from orchestration.master.algorithms.step_control import PIController

        controller = PIController(
            safety=float(_get(o, "safety_factor", "safety", default=0.99)),
            min_step=float(_get(o, "minimum_step_size", "min_step", default=1e-5)),
            max_step=float(_get(o, "maximum_step_size", "max_step", default=1e-2)),
            min_change=float(_get(o, "minimum_change_rate", "min_change", default=0.2)),
            max_change=float(_get(o, "maximum_change_rate", "max_change", default=1.5)),
            kp=float(_get(o, "proportional_gain", "kp", default=0.2)),
            ki=float(_get(o, "integral_gain", "ki", default=0.15)))
        h0 = _get(o, "step_size", "h0")
        return EccoAlgorithm(rtol=float(_get(o, "relative_tolerance", "rtol", default=1e-4)),
                             atol=float(_get(o, "absolute_tolerance", "atol", default=1e-6)),
                             h0=None if h0 is None else float(h0), controller=controller, method=method,
                             extrapolation=int(_get(o, "extrapolation", default=0)),
                             energy_reference=str(_get(o, "energy_reference", default="bond")))
    if name == "error-control":
        from orchestration.master.algorithms.error_control import ErrorControlAlgorithm

        h0 = _get(o, "step_size", "h0")
        return ErrorControlAlgorithm(rtol=float(_get(o, "rtol", "relative_tolerance", default=1e-3)),
                                     atol=float(_get(o, "atol", "absolute_tolerance", default=1e-6)),
                                     h0=None if h0 is None else float(h0),
                                     min_step=float(_get(o, "min_step", "minimum_step_size", default=1e-6)),
                                     max_step=float(_get(o, "max_step", "maximum_step_size", default=1.0)),
                                     method=method, extrapolation=int(_get(o, "extrapolation", default=0)),
                                     hold_check=str(_get(o, "hold_check", default=False)).lower() in ("1", "true",
                                                                                                      "yes"))
    if name == "iterative":
        from orchestration.master.algorithms.iterative import IterativeAlgorithm

        return IterativeAlgorithm(rtol=float(_get(o, "rtol", "relative_tolerance", default=1e-6)),
                                  atol=float(_get(o, "atol", "absolute_tolerance", default=1e-9)),
                                  max_iterations=int(_get(o, "max_iterations", default=50)))
    raise ValueError(f"unknown algorithm {name!r}; choose one of {', '.join(NAMES)}")
