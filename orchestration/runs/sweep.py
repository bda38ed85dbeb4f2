"""Ensembles: one system run over a grid or random samples of parameters, each run a Ray task.

The operability analysis before a lift: the same co-simulation in every sea state of a scatter
diagram (Hs x Tp) and with several wave seeds, and per run the few numbers that decide -- the
largest wire tension, the largest payload motion. ``marine-cosim sweep``::

    marine-cosim sweep lift.ssd --grid ship.sea.hs=1,2,3 --grid ship.sea.period=6:10:2 \\
        --random 5 --range ship.sea.seed=int:1:100000 --seed 7 \\
        --summary cable.end_a.tension:max --summary payload.cg.position[2]:absmax

* **Cases**: the product of the ``--grid`` values (``V1,V2,...`` or ``START:STOP:STEP``), times
  ``--random N`` samples of the ``--range`` parameters (uniform; ``int:LO:HI`` for integers such
  as seeds) drawn from ``--seed``: reproducible.
* **Runners**: Ray tasks (default; a local Ray instance, or a cluster with ``--ray-address``),
  local processes (``--backend process``, ``--jobs`` at a time) or one case at a time
  (``--backend serial``). Each case runs the in-process master in a fresh process of its own:
  pythonfmu FMUs share one Python interpreter per process, so a case must not inherit modules or
  global state from the case before it (and the result of a case must not depend on where it
  ran). For Ray the system's FMUs travel through the object store and the results come back as
  files, so no shared file system is needed.
* **Results**: ``<out>/runs/run-NNNN/`` (results.csv, results.parquet/, metadata.json as
  ``marine-cosim run`` writes them), ``summary.csv`` (one row per run: parameters, status,
  summary values, steps, wall time, the node that ran it, error), ``sweep.json`` (the specification and the cases) and,
  for two grid parameters, one heat map PNG per summary value (random samples of a cell combined
  with ``--aggregate``, default max: the worst case).

A failed case is reported in the table and the others go on.
"""
from __future__ import annotations

import csv
import itertools
import json
import math
import os
import re
import shutil
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from orchestration.errors import SweepError, did_you_mean  # noqa: F401  (re-exported)
from orchestration.runs.run import RunSettings, check_run, make_output_folder

STATS: dict[str, Callable[[np.ndarray], float]] = {
    "max": lambda x: float(np.max(x)),
    "min": lambda x: float(np.min(x)),
    "absmax": lambda x: float(np.max(np.abs(x))),
    "mean": lambda x: float(np.mean(x)),
    "rms": lambda x: float(np.sqrt(np.mean(np.square(x)))),
    "std": lambda x: float(np.std(x)),
    "final": lambda x: float(x[-1]),
}
RUNNERS = ("ray", "process", "serial")




def _number(text: str, where: str) -> Any:
    text = text.strip()
    if not text:
        raise SweepError(f"{where}: empty value")
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return text                      # a String parameter (e.g. a file name)
    if not math.isfinite(value):
        raise SweepError(f"{where}: {text!r} is not a finite number")
    return value


def parse_grid(item: str) -> tuple[str, list]:
    """``comp.var=1,2,3`` or ``comp.var=START:STOP:STEP`` (STOP included)."""
    name, sep, values = item.partition("=")
    where = f"--grid {item!r}"
    if not sep or "." not in name.strip():
        raise SweepError(f"{where}: expected COMPONENT.VARIABLE=V1,V2,... or COMPONENT.VARIABLE=START:STOP:STEP")
    name = name.strip()
    if ":" in values and "," not in values:
        parts = values.split(":")
        if len(parts) != 3:
            raise SweepError(f"{where}: a range is START:STOP:STEP")
        try:
            start, stop, step = (float(p) for p in parts)
        except ValueError:
            raise SweepError(f"{where}: START, STOP and STEP must be numbers") from None
        if not step > 0 or stop < start:
            raise SweepError(f"{where}: need STEP > 0 and STOP >= START")
        n = int(math.floor((stop - start) / step + 1e-9)) + 1
        if n > 10000:
            raise SweepError(f"{where}: {n} values; more than 10000 in one parameter is surely a mistake")
        integral = all(float(p).is_integer() for p in parts) and all("." not in p for p in parts)
        grid = [int(round(start + k * step)) if integral else float(f"{start + k * step:.12g}") for k in range(n)]
    else:
        grid = [_number(v, where) for v in values.split(",")]
    if len(set(map(repr, grid))) != len(grid):
        raise SweepError(f"{where}: a value is repeated")
    return name, grid


def parse_range(item: str) -> tuple[str, tuple[str, float, float]]:
    """``comp.var=LO:HI`` (uniform real) or ``comp.var=int:LO:HI`` (uniform integer, both included)."""
    name, sep, spec = item.partition("=")
    where = f"--range {item!r}"
    if not sep or "." not in name.strip():
        raise SweepError(f"{where}: expected COMPONENT.VARIABLE=LO:HI or COMPONENT.VARIABLE=int:LO:HI")
    parts = spec.split(":")
    kind = "real"
    if parts and parts[0] == "int":
        kind, parts = "int", parts[1:]
    if len(parts) != 2:
        raise SweepError(f"{where}: expected LO:HI (or int:LO:HI)")
    try:
        lo, hi = float(parts[0]), float(parts[1])
    except ValueError:
        raise SweepError(f"{where}: LO and HI must be numbers") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and hi >= lo):
        raise SweepError(f"{where}: need finite LO <= HI")
    return name.strip(), (kind, lo, hi)


def parse_summary(item: str) -> tuple[str, str]:
    """``comp.var:stat`` with stat one of STATS (default max)."""
    column, sep, stat = item.rpartition(":")
    if not sep:
        column, stat = item, "max"
    if "." not in column:
        raise SweepError(f"--summary {item!r}: expected COMPONENT.VARIABLE:STAT, e.g. cable.end_a.tension:max")
    if stat not in STATS:
        raise SweepError(f"--summary {item!r}: unknown statistic {stat!r} (use {', '.join(STATS)})")
    return column.strip(), stat


@dataclass
class SweepSpec:
    """What to vary and what to tabulate (module docstring)."""

    grid: dict[str, list] = field(default_factory=dict)
    random: int = 0
    ranges: dict[str, tuple[str, float, float]] = field(default_factory=dict)
    seed: int = 0
    summary: list[tuple[str, str]] = field(default_factory=list)
    aggregate: str = "max"

    @classmethod
    def from_arguments(cls, grid: Sequence[str] = (), random: int = 0, ranges: Sequence[str] = (), seed: int = 0,
                       summary: Sequence[str] = (), aggregate: str = "max") -> "SweepSpec":
        spec = cls(seed=int(seed), random=int(random or 0), aggregate=aggregate)
        for item in grid:
            name, values = parse_grid(item)
            if name in spec.grid:
                raise SweepError(f"--grid: {name} is given twice")
            spec.grid[name] = values
        for item in ranges:
            name, rng = parse_range(item)
            if name in spec.ranges or name in spec.grid:
                raise SweepError(f"--range: {name} is given twice (or also in --grid)")
            spec.ranges[name] = rng
        spec.summary = [parse_summary(s) for s in summary]
        spec.check()
        return spec

    def check(self) -> None:
        if self.random < 0:
            raise SweepError(f"--random {self.random}: the number of samples cannot be negative")
        if self.ranges and not self.random:
            raise SweepError("--range needs --random N (how many samples to draw)")
        if self.random and not self.ranges:
            raise SweepError("--random N needs at least one --range COMPONENT.VARIABLE=LO:HI to draw")
        if not self.grid and not self.random:
            raise SweepError("nothing to sweep: give --grid and/or --random with --range")
        if self.aggregate not in ("max", "min", "mean"):
            raise SweepError(f"--aggregate {self.aggregate!r}: max, min or mean")

    @property
    def parameters(self) -> list[str]:
        return list(self.grid) + list(self.ranges)

    def cases(self) -> list[dict[str, Any]]:
        """Every case's parameter values: grid points (first parameter slowest) times random samples."""
        rng = np.random.default_rng(self.seed)
        points = list(itertools.product(*self.grid.values())) if self.grid else [()]
        cases = []
        for point in points:
            base = dict(zip(self.grid, point))
            for _ in range(max(1, self.random) if self.random else 1):
                values = dict(base)
                for name, (kind, lo, hi) in self.ranges.items():
                    values[name] = int(rng.integers(int(lo), int(hi), endpoint=True)) if kind == "int" \
                        else float(rng.uniform(lo, hi))
                cases.append(values)
        return cases

    def to_dict(self) -> dict:
        return {"grid": self.grid, "random": self.random, "ranges": {k: list(v) for k, v in self.ranges.items()},
                "seed": self.seed, "summary": [f"{c}:{s}" for c, s in self.summary], "aggregate": self.aggregate}


# ---------------------------------------------------------------------- one case (in a task)

def run_case(task: dict, *fmu_blobs: bytes) -> dict:
    """Run one case and return its status, summary values and -- when ``task["ship_results"]`` --
    its result files as bytes. ``fmu_blobs``: the system's FMU files in ``task["fmus"]`` order when
    they travel with the task (no shared file system); else the paths in the system are used."""
    from orchestration.master.observers.results import load_results
    from orchestration.runs.run import RunSettings, run

    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="mc_sweep_"))
    out = work / "out" if task["ship_results"] else Path(task["out"])
    outcome: dict[str, Any] = {"name": task["name"], "status": "ok", "summary": {}, "error": None, "steps": 0,
                               "node": _node()}
    try:
        system = task["system"]
        if fmu_blobs:
            for k, (fmu_path, blob) in enumerate(zip(task["fmus"], fmu_blobs)):
                local = work / "fmus" / f"{k}_{Path(fmu_path).name}"
                local.parent.mkdir(parents=True, exist_ok=True)
                local.write_bytes(blob)
                for component in system.components.values():
                    if str(component.source) == fmu_path:
                        component.source = local
        scenario = None
        if task.get("scenario_text") is not None:
            scenario = work / task["scenario_name"]
            scenario.write_text(task["scenario_text"])
        settings = RunSettings(system=str(system.source_file or ""), out=str(out), stop=task["stop"],
                               step=task["step"], algorithm=task["algorithm"],
                               scenario=str(scenario) if scenario else None, variables=task["variables"],
                               backend="inprocess", parameters=task["params"], quiet=True,
                               record_every=task.get("record_every", 1))
        warnings: list[str] = []
        report = run(settings, system=system, log=warnings.append)
        outcome["steps"] = report.steps
        results = load_results(out)
        for column, stat in task["summary"]:
            outcome["summary"][f"{column}:{stat}"] = STATS[stat](np.asarray(results[column]))
    except Exception as exc:
        outcome["status"], outcome["error"] = "failed", f"{type(exc).__name__}: {exc}"
    finally:
        outcome["wall"] = time.perf_counter() - started
        if task["ship_results"]:
            outcome["files"] = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
                                if p.is_file()} if out.is_dir() else {}
        shutil.rmtree(work, ignore_errors=True)
    return outcome


def _node() -> str:
    """Where this case runs: the Ray node's address inside a Ray task, else the host name."""
    import sys

    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        try:
            return ray.util.get_node_ip_address()
        except Exception:
            pass
    import socket

    return socket.gethostname()


# ---------------------------------------------------------------------- the driver

@dataclass
class SweepResult:
    out: Path
    rows: list[dict]
    done: int
    failed: int
    wall: float
    summary_csv: Path
    heatmaps: list[Path] = field(default_factory=list)
    operability: Any = None                 # orchestration.runs.operability.OperabilityResult with criteria


def _label(params: dict[str, Any]) -> str:
    return " ".join(f"{k.split('.')[-1]}={v:.4g}" if isinstance(v, float) else f"{k.split('.')[-1]}={v}"
                    for k, v in params.items())


def _check_names(system, spec: SweepSpec, variables: list[str] | None) -> None:
    """Fail before any run: unknown components or variables in the parameters and the summary."""
    from orchestration.runs.run import RunError, apply_parameters
    from orchestration.system.fmu_info import component_description

    probe = {**{name: values[0] for name, values in spec.grid.items()},
             **{name: (int(lo) if kind == "int" else lo) for name, (kind, lo, _) in spec.ranges.items()}}
    saved = {c: dict(comp.parameters) for c, comp in system.components.items()}
    try:
        apply_parameters(system, probe)
    except RunError as exc:
        raise SweepError(str(exc)) from None
    finally:
        for c, params in saved.items():
            system.components[c].parameters = params
    for column, stat in spec.summary:
        component, _, variable = column.partition(".")
        if component not in system.components:
            raise SweepError(f"--summary {column}:{stat}: no component {component!r}"
                             f"{did_you_mean(component, system.components)} (the system has "
                             f"{sorted(system.components)})")
        md = component_description(system.components[component])
        found = {v.name: v for v in md.modelVariables}
        if variable not in found or found[variable].type != "Real":
            reals = [n for n, v in found.items() if v.type == "Real"]
            raise SweepError(f"--summary {column}:{stat}: {component} has no Real variable {variable!r}"
                             f"{did_you_mean(variable, reals)}")
        if variables is not None and column not in variables:
            variables.append(column)


def _check_criteria(system, criteria, variables: list[str] | None) -> None:
    """The variables the operability criteria read exist (any type) and are recorded."""
    from orchestration.errors import CriteriaError
    from orchestration.system.fmu_info import model_info

    for name in criteria.variables:
        component, _, variable = name.partition(".")
        if component not in system.components:
            raise CriteriaError(f"{criteria.source}: {name}: no component {component!r}"
                                f"{did_you_mean(component, system.components)}")
        known = model_info(Path(system.components[component].source)).variables
        if variable not in known:
            raise CriteriaError(f"{criteria.source}: {name}: {component} has no variable {variable!r}"
                                f"{did_you_mean(variable, known)}")
        if variables is not None and name not in variables:
            variables.append(name)


def run_sweep(system_path: Path, spec: SweepSpec, out: Path | None = None, runner: str = "ray",
              address: str | None = None, jobs: int | None = None, stop: float | None = None,
              step: float | None = None, algorithm: str | None = None, scenario: Path | None = None,
              variables: Sequence[str] | None = None, quiet: bool = False,
              log: Callable[[str], None] = print, criteria=None, record_every: int = 1) -> SweepResult:
    """Run every case of ``spec`` on ``system_path`` (module docstring); returns the table. With
    ``criteria`` (:class:`orchestration.runs.operability.Criteria`) the runs are judged afterwards:
    the go/no-go table and the allowable-Hs chart (:mod:`orchestration.runs.operability`)."""
    from orchestration.runs.first_run import load_system

    if runner not in RUNNERS:
        raise SweepError(f"unknown sweep backend {runner!r}; choose one of {', '.join(RUNNERS)}")
    system = load_system(Path(system_path), log=log)        # builds our FMUs once, before the cases
    variables = list(variables) if variables else None
    _check_names(system, spec, variables)
    if criteria is not None:
        _check_criteria(system, criteria, variables)
    _check_common_settings(system, runner, address, jobs, stop, step, algorithm, scenario, variables, record_every)
    cases = spec.cases()
    out = make_output_folder(Path(out) if out else Path("results") / f"{system.name}_sweep", "sweep folder")
    runs_dir = out / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    width = max(4, len(str(len(cases))))
    names = [f"run-{k + 1:0{width}d}" for k in range(len(cases))]
    (out / "sweep.json").write_text(json.dumps(
        {"system": str(Path(system_path).resolve()), "spec": spec.to_dict(), "runner": runner, "address": address,
         "cases": [{"name": n, **c} for n, c in zip(names, cases)]}, indent=2, default=str))
    ship = runner == "ray"
    fmus = sorted({str(c.source) for c in system.components.values() if not c.adapter})
    base = {"system": system, "stop": stop, "step": step, "algorithm": algorithm, "variables": variables,
            "record_every": record_every,
            "summary": spec.summary, "ship_results": ship, "fmus": fmus if ship else [],
            "scenario_text": Path(scenario).read_text() if scenario else None,
            "scenario_name": Path(scenario).name if scenario else None}
    tasks = [{**base, "name": n, "params": c, "out": str(runs_dir / n)} for n, c in zip(names, cases)]
    rows: dict[str, dict] = {}
    started = time.perf_counter()
    failed = 0
    summary_csv = out / "summary.csv"

    def finished(outcome: dict) -> None:
        nonlocal failed
        name = outcome["name"]
        files = outcome.pop("files", None)
        if files is not None:
            target = runs_dir / name
            shutil.rmtree(target, ignore_errors=True)
            for rel, blob in files.items():
                (target / rel).parent.mkdir(parents=True, exist_ok=True)
                (target / rel).write_bytes(blob)
        case = cases[names.index(name)]
        rows[name] = {"run": name, **case, "status": outcome["status"], **outcome["summary"],
                      "steps": outcome["steps"], "wall_s": round(outcome["wall"], 3), "node": outcome.get("node", ""),
                      "error": outcome["error"] or ""}
        failed += outcome["status"] != "ok"
        _write_summary(summary_csv, [rows[n] for n in names if n in rows], spec)
        if not quiet:
            elapsed = time.perf_counter() - started
            eta = elapsed / len(rows) * (len(cases) - len(rows))
            values = ", ".join(f"{k} = {v:.4g}" for k, v in outcome["summary"].items())
            what = values if outcome["status"] == "ok" else f"FAILED: {outcome['error']}"
            log(f"[sweep {len(rows)}/{len(cases)}] {name} {_label(case)}: {what} ({outcome['wall']:.1f} s)  "
                f"elapsed {elapsed:.0f} s, ETA {eta:.0f} s" + (f", {failed} failed" if failed else ""))

    if not quiet:
        log(f"sweep of {system.name}: {len(cases)} runs over {', '.join(spec.parameters)} with {runner}"
            + (f" at {address}" if address else ""))
    if runner in ("serial", "process"):
        workers = 1 if runner == "serial" else (jobs or os.cpu_count() or 1)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(_in_fresh_process, task): task["name"] for task in tasks}
            for future in as_completed(futures):
                try:
                    finished(future.result())
                except Exception as exc:       # the process running it died
                    finished({"name": futures[future], "status": "failed", "summary": {}, "steps": 0, "wall": 0.0,
                              "error": f"{type(exc).__name__}: {exc}"})
    else:
        _run_on_ray(tasks, fmus, address, finished)
    result_rows = [rows[n] for n in names]
    heatmaps = plot_heatmaps(result_rows, spec, out) if len(spec.grid) == 2 and spec.summary else []
    judged = None
    if criteria is not None:
        from orchestration.runs.operability import judge_sweep

        judged = judge_sweep(out, criteria)
    return SweepResult(out, result_rows, len(rows) - failed, failed, time.perf_counter() - started, summary_csv,
                       heatmaps, judged)


def _check_common_settings(system, runner: str, address: str | None, jobs: int | None, stop: float | None,
                           step: float | None, algorithm: str | None, scenario: Path | None,
                           variables: list[str] | None, record_every: int) -> None:
    """The settings every case shares, checked once as a case's run would check them: a mistake in
    them (a NaN stop, a scenario event of the wrong type) would otherwise fail every case alike,
    each after starting its process or Ray task."""
    import copy

    if address is not None and runner != "ray":
        raise SweepError(f"--ray-address needs the ray backend; this sweep uses {runner!r} (--backend ray)")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise SweepError(f"--jobs {jobs!r}: a whole number >= 1 (cases at a time)")
    if jobs is not None and runner != "process":
        raise SweepError(f"--jobs needs the process backend; this sweep uses {runner!r} (--backend process)")
    settings = RunSettings(system=str(system.source_file or system.name), stop=stop, step=step, algorithm=algorithm,
                           scenario=str(scenario) if scenario else None, variables=variables, backend="inprocess",
                           record_every=record_every, quiet=True)
    check_run(settings, copy.deepcopy(system))


def _in_fresh_process(task: dict) -> dict:
    """One case in a new process of its own (module docstring: no state shared between cases)."""
    import multiprocessing

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(run_case, task).result()


def _run_on_ray(tasks: list[dict], fmus: list[str], address: str | None, finished: Callable[[dict], None]) -> None:
    from orchestration.backends import ray as ray_backend

    ray = ray_backend.connect(address)
    # max_calls=1: a fresh worker process per case (module docstring)
    remote = ray.remote(num_cpus=1, max_retries=0, max_calls=1)(run_case)
    blobs = [ray.put(Path(f).read_bytes()) for f in fmus]        # once, shared by every task
    pending = {}
    for task in tasks:
        pending[remote.remote(task, *blobs)] = task["name"]
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            name = pending.pop(ref)
            try:
                outcome = ray.get(ref)
            except Exception as exc:           # the task's worker or node died
                outcome = {"name": name, "status": "failed", "summary": {}, "steps": 0, "wall": 0.0,
                           "error": f"{type(exc).__name__}: "
                                    f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"}
            finished(outcome)


def _write_summary(path: Path, rows: list[dict], spec: SweepSpec) -> None:
    labels = [f"{c}:{s}" for c, s in spec.summary]
    columns = ["run", *spec.parameters, "status", *labels, "steps", "wall_s", "node", "error"]
    tmp = path.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        for row in rows:
            w.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in row.items()})
    os.replace(tmp, path)


def load_sweep_folder(sweep_dir: Path | str) -> tuple[dict, list[dict]]:
    """(sweep.json, summary.csv's rows) of a sweep folder, checked for what readers of the folder
    use: a JSON object with ``spec.grid`` and ``spec.ranges`` (objects) and ``cases`` (objects with a
    ``name``), and a summary with ``run`` and ``status`` columns and a row per run. Anything else
    (a file cut short, written by hand, of another tool) raises SweepError naming the file."""
    sweep_dir = Path(sweep_dir)
    record, summary = sweep_dir / "sweep.json", sweep_dir / "summary.csv"
    if not record.is_file() or not summary.is_file():
        raise SweepError(f"{sweep_dir}: not a sweep folder (no sweep.json and summary.csv)")
    from components.data_files import read_text

    try:
        sweep = json.loads(read_text(record))
    except ValueError as exc:     # JSONDecodeError, or read_text's refusal (not UTF-8, not a regular file)
        raise SweepError(f"{record}: not the record of a sweep ({exc})") from None
    spec = sweep.get("spec") if isinstance(sweep, dict) else None
    cases = sweep.get("cases") if isinstance(sweep, dict) else None
    if not (isinstance(spec, dict) and isinstance(spec.get("grid", {}), dict)
            and isinstance(spec.get("ranges", {}), dict) and isinstance(cases, list)
            and all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in cases)):
        raise SweepError(f"{record}: not the record of a sweep (a JSON object with 'spec' holding 'grid' and "
                         "'ranges', and 'cases', each with a 'name')")
    rows = load_summary(summary)
    if not rows:
        raise SweepError(f"{summary}: no runs in it (a header line and a row per run, as the sweep writes)")
    return sweep, rows


def load_summary(path: Path) -> list[dict]:
    """summary.csv back as dicts (numbers as floats where they parse); a file without the ``run``
    and ``status`` columns or with a row of another length raises SweepError naming the line."""
    rows = []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames is not None and not {"run", "status"} <= set(reader.fieldnames):
            raise SweepError(f"{path}: not the summary of a sweep (its header has no 'run' and 'status' columns)")
        for row in reader:
            if None in row or None in row.values():   # DictReader's marks of a longer or shorter row
                raise SweepError(f"{path}, line {reader.line_num}: not as many values as the header has columns "
                                 f"({len(reader.fieldnames)})")
            parsed = {}
            for k, v in row.items():
                try:
                    parsed[k] = float(v) if k not in ("run", "status", "error", "node") else v
                except ValueError:
                    parsed[k] = v
            rows.append(parsed)
    return rows


def plot_heatmaps(rows: list[dict], spec: SweepSpec, out: Path) -> list[Path]:
    """One heat map per summary value over the two grid parameters (x: the first, y: the second);
    the random samples of a cell are combined with ``spec.aggregate``; failed runs leave a cell
    empty."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    (px, xs), (py, ys) = list(spec.grid.items())
    combine = {"max": np.nanmax, "min": np.nanmin, "mean": np.nanmean}[spec.aggregate]
    paths = []
    for column, stat in spec.summary:
        label = f"{column}:{stat}"
        grid = np.full((len(ys), len(xs)), np.nan)
        for iy, y in enumerate(ys):
            for ix, x in enumerate(xs):
                values = [r[label] for r in rows if r[px] == x and r[py] == y and r["status"] == "ok"
                          and isinstance(r.get(label), (int, float))]
                if values:
                    grid[iy, ix] = combine(values)
        fig, ax = plt.subplots(figsize=(1.2 * len(xs) + 3.0, 0.8 * len(ys) + 2.2))
        image = ax.imshow(grid, origin="lower", cmap="viridis", aspect="auto")
        ax.set_xticks(range(len(xs)), [f"{x:g}" if isinstance(x, (int, float)) else str(x) for x in xs])
        ax.set_yticks(range(len(ys)), [f"{y:g}" if isinstance(y, (int, float)) else str(y) for y in ys])
        ax.set_xlabel(px)
        ax.set_ylabel(py)
        finite = grid[np.isfinite(grid)]
        middle = (finite.min() + finite.max()) / 2 if finite.size else 0.0
        for iy in range(len(ys)):
            for ix in range(len(xs)):
                v = grid[iy, ix]
                ax.text(ix, iy, "failed" if not np.isfinite(v) else f"{v:.3g}", ha="center", va="center",
                        fontsize=8, color="white" if (np.isfinite(v) and v < middle) else "black")
        samples = f", {spec.aggregate} of {spec.random} samples per cell" if spec.random else ""
        ax.set_title(f"{label}{samples}", fontsize=9)
        fig.colorbar(image, ax=ax, label=label)
        fig.tight_layout()
        path = out / f"heatmap_{re.sub(r'[^A-Za-z0-9_.-]+', '_', label)}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths
