"""One FMU on its own: ``marine-cosim simulate FMU``.

The FMU becomes a system of one component (named after the FMU file) and runs through the one run
path, so its results are written and read exactly as a system's (``results.csv``,
``results.parquet/``, ``metadata.json``, columns ``<component>.<variable>``), with a plot of its
outputs beside them.
"""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Sequence

from orchestration.errors import RunError, UsageError, did_you_mean
from orchestration.runs.run import RunReport, RunSettings, run
from orchestration.system.model import Component, System

def parse_assignments(pairs: Sequence[str]) -> dict[str, float | bool | str]:
    """``["mass=5", "hydro.volume=2.5"]`` -> ``{"mass": 5.0, ...}``, with a clear error on bad input."""
    values: dict[str, float | bool | str] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name:
            raise UsageError(f"--set {pair!r}: expected NAME=VALUE")
        if text.lower() in ("true", "false"):
            values[name] = text.lower() == "true"
            continue
        try:
            values[name] = float(text)
        except ValueError:
            values[name] = text
    return values


def fmu_system(fmu: Path, start_values: dict | None = None) -> System:
    """A system of the one FMU (component named after the file), its start values checked by name."""
    from orchestration.system.fmu_info import model_info

    fmu = Path(fmu)
    if not fmu.is_file():
        raise UsageError(f"FMU file not found: {fmu}")
    try:
        info = model_info(fmu)
    except Exception as exc:                 # FMPy raises many kinds for a file that is no FMU
        raise UsageError(f"{fmu}: cannot read its modelDescription.xml: {type(exc).__name__}: {exc}") from None
    for name in start_values or {}:
        if name not in info.variables:
            settable = [n for n, v in info.variables.items() if v.causality in ("parameter", "input")]
            raise UsageError(f"{fmu.name} has no variable {name!r}{did_you_mean(name, settable)}")
        if info.variables[name].causality not in ("parameter", "input"):
            raise UsageError(f"{name!r} is an {info.variables[name].causality} of {fmu.name} and cannot be set")
    component = re.sub(r"\W", "_", fmu.stem) or "fmu"
    system = System(component, source_file=fmu)
    system.add_component(Component(component, fmu.resolve(), dict(start_values or {}), origin=str(fmu)))
    return system


def default_experiment(fmu: Path, stop_time: float | None, step_size: float | None) -> tuple[float, float, float]:
    """(start, stop, step) as FMPy's ``simulate_fmu`` chooses them, so that a run here and one in
    FMPy are the same run: the arguments, else the DefaultExperiment's start (0) and stop (start +
    1 s); the step: the FMU's fixedInternalStepSize, else the DefaultExperiment's stepSize, doubled
    until the run has at most 1000 steps, else an interval that divides the run into 500-1000 steps
    (fmpy.util.auto_interval)."""
    from fmpy import read_model_description
    from fmpy.util import auto_interval

    md = read_model_description(str(fmu), validate=False)
    experiment = md.defaultExperiment
    start = float(experiment.startTime) if experiment is not None and experiment.startTime is not None else 0.0
    if stop_time is None:
        stop_time = float(experiment.stopTime) if experiment is not None and experiment.stopTime is not None \
            else start + 1.0
    if not (math.isfinite(stop_time) and stop_time > start):
        raise RunError(f"need a stop time after the start time {start:g} s, got {stop_time}")
    if step_size is None:
        fixed = getattr(md.coSimulation, "fixedInternalStepSize", None) if md.coSimulation is not None else None
        given = fixed if fixed is not None else (experiment.stepSize if experiment is not None else None)
        if given is not None:
            step_size = float(given)
            while (stop_time - start) / step_size > 1000:
                step_size *= 2
        else:
            step_size = float(auto_interval(stop_time - start))
    if not (step_size > 0 and math.isfinite(step_size)):
        raise RunError(f"need a positive step size, got {step_size}")
    return start, float(stop_time), float(step_size)


def run_fmu(fmu: Path, out_dir: Path, stop_time: float | None = None, step_size: float | None = None,
            start_values: dict | None = None, outputs: Sequence[str] | None = None, plot: bool = True,
            progress: bool = True, title: str | None = None) -> RunReport:
    """Simulate ``fmu`` alone with a fixed communication step; results, metadata and a plot of the
    recorded variables (default: every output) in ``out_dir``."""
    from orchestration.system.fmu_info import model_info

    fmu = Path(fmu)
    system = fmu_system(fmu, start_values)
    start, stop, step = default_experiment(fmu, stop_time, step_size)
    system.start_time, system.stop_time, system.base_step = start, stop, step
    name = next(iter(system.components))
    variables = model_info(fmu).variables
    for output in outputs or []:
        if output not in variables:
            raise UsageError(f"--variables {output!r}: {fmu.name} has no variable {output!r}"
                             f"{did_you_mean(output, variables)}")
        if variables[output].array:
            raise UsageError(f"--output {output!r} is an array variable: only scalars are recorded")
    recorded = list(outputs) if outputs else [n for n, v in variables.items()
                                              if v.causality == "output" and v.type != "Clock" and not v.array]
    settings = RunSettings(system=str(fmu), out=str(out_dir), stop=stop, step=step,
                           variables=[f"{name}.{v}" for v in recorded], quiet=not progress)
    report = run(settings, system=system)
    if plot:
        from orchestration.master.observers.results import load_results
        from orchestration.runs.plotting import plot_results

        plot_results(load_results(Path(out_dir)), None, Path(out_dir), title=title or fmu.stem)
    return report
