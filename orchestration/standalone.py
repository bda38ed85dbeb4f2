"""Run one FMU on its own (FMPy as the host) and write its results as CSV and a plot.

This is ``marine-cosim simulate``; systems of several FMUs are the master's job (later issues).
"""
from __future__ import annotations

import csv
import math
import sys
import time
from pathlib import Path
from typing import Sequence

import numpy as np
from fmpy import read_model_description, simulate_fmu


def parse_assignments(pairs: Sequence[str]) -> dict[str, float | bool | str]:
    """``["mass=5", "hydro.volume=2.5"]`` -> ``{"mass": 5.0, ...}``, with a clear error on bad input."""
    values: dict[str, float | bool | str] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name:
            raise ValueError(f"expected NAME=VALUE, got {pair!r}")
        if text.lower() in ("true", "false"):
            values[name] = text.lower() == "true"
            continue
        try:
            values[name] = float(text)
        except ValueError:
            values[name] = text
    return values


def run_fmu(fmu: Path, out_dir: Path, stop_time: float | None = None, step_size: float | None = None,
            start_values: dict | None = None, outputs: Sequence[str] | None = None, plot: bool = True,
            progress: bool = True, title: str | None = None) -> Path:
    """Simulate ``fmu`` with a fixed communication step; returns the CSV written in ``out_dir``.

    Start values are checked against the modelDescription first, so a typo in a name gives one
    clear message listing close matches instead of an FMI error."""
    md = read_model_description(str(fmu))
    by_name = {v.name: v for v in md.modelVariables}
    start_values = dict(start_values or {})
    for name in start_values:
        if name not in by_name:
            import difflib

            close = difflib.get_close_matches(name, by_name, n=3)
            raise ValueError(f"{fmu.name} has no variable {name!r}" + (f" (did you mean {close}?)" if close else ""))
        if by_name[name].causality not in ("parameter", "input"):
            raise ValueError(f"{name!r} is an {by_name[name].causality} of {fmu.name} and cannot be set")
    experiment = md.defaultExperiment
    stop_time = float(stop_time if stop_time is not None else (experiment.stopTime if experiment else 10.0))
    step_size = float(step_size if step_size is not None else (experiment.stepSize if experiment else 0.01))
    if not (step_size > 0 and stop_time > 0 and math.isfinite(stop_time)):
        raise ValueError(f"need stop time > 0 and step size > 0, got {stop_time} and {step_size}")
    outputs = list(outputs) if outputs else [v.name for v in md.modelVariables if v.causality == "output"]

    started = time.perf_counter()
    last_report = [-1.0]

    def report(t: float, _recorder) -> bool:
        fraction = t / stop_time
        if progress and (fraction - last_report[0] >= 0.1 or fraction >= 1.0):
            last_report[0] = fraction
            elapsed = time.perf_counter() - started
            print(f"  {fmu.stem}: t = {t:8.2f} s ({100 * fraction:5.1f} %), {elapsed:6.1f} s wall",
                  file=sys.stderr, flush=True)
        return True

    result = simulate_fmu(str(fmu), fmi_type="CoSimulation", stop_time=stop_time, step_size=step_size,
                          output_interval=step_size, start_values=start_values, output=outputs,
                          step_finished=report)
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path = out_dir / f"{fmu.stem}.csv"
    with open(csv_path, "w", newline="") as f:
        writer = csv.writer(f)
        units = [by_name[n].unit or "" for n in outputs]
        writer.writerow(["time [s]"] + [f"{n} [{u}]" if u else n for n, u in zip(outputs, units)])
        for row in result:
            writer.writerow([repr(float(x)) for x in row])
    if plot:
        plot_results(result, outputs, {n: by_name[n].unit for n in outputs}, out_dir / f"{fmu.stem}.png",
                     title=title or fmu.stem)
    return csv_path


def plot_results(result: np.ndarray, names: Sequence[str], units: dict, path: Path, title: str = "") -> Path:
    """All ``names`` of an FMPy result in one PNG (panels grouped by vector)."""
    from orchestration.execution import Results
    from orchestration.plotting import plot_results as plot

    prefix = path.stem + "."
    results = Results(result["time"], {prefix + n: result[n] for n in names})
    written = plot(results, None, path.parent, units={prefix + n: u for n, u in units.items()}, title=title)
    written[0].replace(path)
    for extra in written[1:]:
        extra.replace(path.with_name(f"{path.stem}_{extra.stem.rsplit('_', 1)[-1]}.png"))
    return path
