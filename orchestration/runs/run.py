"""The one run path: every way of running a system goes through :func:`run` -- ``marine-cosim run``,
``demo``, ``simulate`` (one FMU), ``sweep`` (each case), the reference scenarios, the Python API
(:func:`orchestration.simulate`) and the benchmarks.

Steps, in this order, so that every mistake in the inputs is reported before an FMU is
instantiated: read the system file (building our own FMUs first when a shipped scenario names them
and they are not built yet: orchestration.runs.first_run), apply parameter overrides (names
checked), validate the system against its FMUs, read and check the scenario file (the one given,
else the system file's own ``mc:Scenario``), check the recorded variable names, resolve stop
time and step, the algorithm and the backend, check the ship-attachment coupling; then build the
execution with its observers (results written progressively to ``results.csv``,
``results.parquet/`` and ``metadata.json``, and/or kept in memory; checkpoints if asked), run it with
the progress display, and write the algorithm log. A run that fails keeps the results written so
far (metadata.json says ``failed`` and why); with checkpoints it can be resumed: :func:`resume_run`
reads the settings from the checkpoint, builds the same execution, restores every FMU and the
master, and appends to the same results.
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from orchestration.errors import RunError, did_you_mean
from orchestration.master.execution import Execution
from orchestration.master.manipulators import Manipulator
from orchestration.master.observers import Observer
from orchestration.master.observers.results import Results
from orchestration.system.files import folder_problem
from orchestration.system.model import System


@dataclass
class RunSettings:
    """Everything a run needs besides the system itself (all JSON-friendly, stored in checkpoints)."""

    system: str                                    # system file path
    out: str | None = None                         # result folder (default results/<system name>)
    stop: float | None = None
    step: float | None = None
    algorithm: str | None = None                   # default: the system file's, else fixed
    options: dict[str, Any] = field(default_factory=dict)     # algorithm options over the file's
    scenario: str | None = None
    variables: list[str] | None = None             # "component.variable"; default every numeric output and input
    flush_every: int = 1000
    record_every: int = 1                          # record the start and every N-th macro step
    backend: str | None = None                     # default: the system file's, else inprocess
    ray_address: str | None = None
    placement: dict[str, dict] = field(default_factory=dict)
    call_timeout: float | None = None
    workers: int | None = None                     # process backend: worker processes (default one per FMU)
    checkpoint_every: float | None = None
    keep_checkpoints: int = 3
    parameters: dict[str, Any] = field(default_factory=dict)  # "component.variable" -> start value (sweeps)
    quiet: bool = True                             # no progress display, no informational lines
    files: bool = True                             # write results.csv, results.parquet/, metadata.json into out
    memory: bool = False                           # keep the recorded values in memory (RunReport.results)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class RunReport:
    """How a run ended: where its results are, steps, end time, timings (of this process) and, with
    ``memory``, the results themselves."""

    out: Path | None
    steps: int
    time: float
    wall: float                                    # s, from the end of initialisation to the end
    system_name: str
    start_time: float                              # simulated time this process started from
    checkpoints: list[Path] = field(default_factory=list)
    resumed_from: Path | None = None
    results: Results | None = None
    initialisation: float = 0.0                    # s of wall time to instantiate and initialise the FMUs
    cpu: float = 0.0                               # s of CPU time of this process over the run (not initialisation)
    algorithm: dict = field(default_factory=dict)

    @property
    def simulated(self) -> float:
        return self.time - self.start_time

    def timings(self) -> dict:
        """Run figures for summaries: simulated time, macro steps, wall and CPU time, real-time factors."""
        return {"simulated_s": self.simulated, "macro_steps": self.steps,
                "initialisation_s": round(self.initialisation, 3),
                "wall_s": round(self.wall, 3), "cpu_s": round(self.cpu, 3),
                "real_time_factor_wall": round(self.simulated / max(self.wall, 1e-9), 2),
                "real_time_factor_cpu": round(self.simulated / max(self.cpu, 1e-9), 2), "algorithm": self.algorithm}

    def line(self) -> str:
        resumed = f" (resumed at t = {self.start_time:g} s)" if self.resumed_from else ""
        where = f"; results in {self.out}" if self.out is not None else ""
        return (f"{self.system_name}: {self.steps} steps to t = {self.time:g} s{resumed} in {self.wall:.2f} s wall "
                f"({self.simulated / max(self.wall, 1e-9):.1f}x real time){where}")


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def apply_parameters(system: System, parameters: dict[str, Any]) -> None:
    """Set ``component.variable`` start values on a loaded system, checking names against the FMUs."""
    from orchestration.system.fmu_info import component_info

    for key, value in parameters.items():
        component, sep, variable = key.partition(".")
        if not sep or component not in system.components:
            raise RunError(f"parameter {key!r}: no component {component!r}{did_you_mean(component, system.components)} "
                           f"(the system has {', '.join(sorted(system.components))})")
        known = component_info(system.components[component]).variables
        if variable not in known:
            settable = [n for n, v in known.items() if v.causality in ("parameter", "input")]
            raise RunError(f"parameter {key!r}: {component} ({system.components[component].display_source}) has "
                           f"no variable {variable!r}"
                           f"{did_you_mean(variable, settable)}")
        if known[variable].causality not in ("parameter", "input"):
            raise RunError(f"parameter {key!r} is a {known[variable].causality}; only parameters and inputs have "
                           "start values to set")
        system.components[component].parameters[variable] = value


def _recorded(system: System, names: Sequence[str] | None) -> list[tuple[str, str]]:
    """The (component, variable) pairs to record: ``names`` checked against the FMUs, or every numeric
    output and input."""
    from orchestration.master.observers.results import default_observed
    from orchestration.system.fmu_info import component_info

    if not names:
        return default_observed(system)
    selected = []
    for name in names:
        component, sep, variable = name.partition(".")
        if not sep or component not in system.components:
            raise RunError(f"recorded variable {name!r}: no component {component!r}"
                           f"{did_you_mean(component, system.components)}")
        known = component_info(system.components[component]).variables
        if variable not in known:
            from orchestration.system.arrays import info_element_problem

            problem = info_element_problem(known, variable)    # y[3] of a 3-array, A[0,1]: say why
            raise RunError(f"recorded variable {name!r}: " + (f"{component}: {problem}" if problem else
                           f"{component} has no variable {variable!r}{did_you_mean(variable, known)}"))
        if known[variable].array or known[variable].type == "Clock":
            raise RunError(f"recorded variable {name!r} is {'an array' if known[variable].array else 'a Clock'}: "
                           "only scalar variables are recorded")
        selected.append((component, variable))
    return selected


def _time_grid(system: System, stop: float | None, step: float | None) -> tuple[float, float]:
    if stop is None or step is None:
        raise RunError(f"{system.source_file or system.name}: give --stop and --step: the system file does not set "
                       f"{'an end time' if stop is None else 'a base step'}")
    return float(stop), float(step)          # the rest of the grid was checked with the system


@dataclass
class _Prepared:
    execution: Execution
    out: Path | None
    stop: float
    step: float
    checkpointer: Any
    memory: Any


@dataclass
class CheckedRun:
    """What :func:`check_run` found usable: the run's scenario, recorded variables, time grid,
    algorithm and backend."""

    system: System
    scenario: Any
    scenario_file: str | None
    variables: list[tuple[str, str]]
    stop: float | None               # None: not given (validate of a file without one)
    step: float | None
    algorithm: Any
    backend: Any


def check_run(settings: RunSettings, system: System | None = None, manipulators: Sequence[Manipulator] = (),
              log: Callable[[str], None] = _stderr, require_grid: bool = True) -> CheckedRun:
    """Every check of a run before an FMU is instantiated (``marine-cosim validate`` makes the same
    ones on the file's own settings): the system against its FMUs, the scenario's events, the
    recorded names, the time grid, the algorithm and its options, the backend, the output
    settings and the ship-attachment coupling. Raises a MarineCosimError naming the first problem.
    ``require_grid=False`` lets a file without a stop time or base step pass (validate: it is
    valid, and run asks for --stop and --step)."""
    from orchestration.backends import resolve_backend
    from orchestration.master.algorithms import make_algorithm
    from orchestration.master.coupling_check import check_added_mass
    from orchestration.master.manipulators.scenario import Scenario, load_scenario
    from orchestration.runs.first_run import load_system
    from orchestration.system.validation import validate_system

    if system is None:
        system = load_system(Path(settings.system), log=log)
    if settings.parameters:
        apply_parameters(system, settings.parameters)
    # the system file's own scenario (mc:Scenario) unless the run brings one
    scenario_file = settings.scenario or (None if any(isinstance(m, Scenario) for m in manipulators)
                                          else system.scenario)
    scenario = load_scenario(Path(scenario_file)) if scenario_file else None
    stop = settings.stop if settings.stop is not None else (
        scenario.end if scenario and scenario.end else system.stop_time)
    step = settings.step if settings.step is not None else system.base_step
    # the same checks as marine-cosim validate, on the time grid this run will use
    # the run's scenario supersedes the file's own, which then need not exist
    own, system.scenario = system.scenario, scenario_file
    try:
        report = validate_system(system, stop, step)
    finally:
        system.scenario = own
    for p in report.warnings:
        if not settings.quiet:
            log(str(p))
    if not report.ok:
        first = report.errors[0]
        more = f" (and {len(report.errors) - 1} more: marine-cosim validate {system.source_file})" \
            if len(report.errors) > 1 else ""
        raise RunError(f"{first.where}: {first.message}{more}" if first.where else f"{first.message}{more}")
    if scenario is not None:
        for warning in scenario.check(system, stop):
            if not settings.quiet:
                log(warning)
    variables = _recorded(system, settings.variables)
    if require_grid or (stop is not None and step is not None):
        stop, step = _time_grid(system, stop, step)
    if settings.algorithm is not None and not isinstance(settings.algorithm, str):
        algorithm = settings.algorithm                 # an algorithm object (Python API, tests)
    else:
        algorithm_name = settings.algorithm or system.algorithm or "fixed"
        options = {k: v for k, v in system.algorithm_options.items()
                   if k not in ("backend", "ray_address") and not k.startswith("placement.")}
        given = {k: v for k, v in settings.options.items() if v is not None}
        options.update(given)
        # the file's options are for the file's algorithm: another one asked for on the command line
        # is not held to them; what the command line gives, it must read
        checked = set(given) | (set(options) if algorithm_name == (system.algorithm or "fixed") else set())
        try:
            algorithm = make_algorithm(algorithm_name, options, check=checked)
        except ValueError as exc:
            # name where the algorithm and its options came from: the file, the command line or both
            source = str(system.source_file or system.name)
            asked = [f"--algorithm {settings.algorithm}"] * bool(settings.algorithm) + \
                [f"{key}={value}" for key, value in sorted(given.items())]
            if asked:
                source += f" with {' '.join(asked)}"
            raise RunError(f"{source}: {exc}") from None
    backend = resolve_backend(system, settings.backend, settings.ray_address, settings.placement,
                              settings.call_timeout, settings.workers)
    # asked for on the command line, these would be ignored by the backend the run uses
    if settings.ray_address is not None and backend.name != "ray":
        raise RunError(f"--ray-address needs the ray backend; this run uses {backend.name!r} (--backend ray)")
    if settings.call_timeout is not None and backend.name == "inprocess":
        raise RunError("--call-timeout needs a backend with workers (process or ray): in-process FMUs have no "
                       "worker to time out")
    _check_output_settings(settings)
    # explicit coupling of a heavy attachment to a ship diverges whatever the step: say so first
    for finding in check_added_mass(system, algorithm=algorithm):
        if finding.severity == "error":
            raise RunError(str(finding))
        if not settings.quiet:
            log(str(finding))
    return CheckedRun(system, scenario, scenario_file, variables, stop, step, algorithm, backend)


def _check_output_settings(settings: RunSettings) -> None:
    """The counts and periods that say how results are written: whole numbers >= 1, positive times."""
    for name, value in (("record every", settings.record_every), ("flush every", settings.flush_every)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise RunError(f"{name} {value!r} steps: a whole number >= 1")
    every = settings.checkpoint_every
    # 0 would mean no checkpoints at all, which is not what asking for them says
    if every is not None and not (isinstance(every, (int, float)) and not isinstance(every, bool)
                                  and math.isfinite(every) and every > 0):
        raise RunError(f"--checkpoint-every must be a positive time in seconds, not {every!r}")


def make_output_folder(out: Path, what: str) -> Path:
    """Make ``out`` (and its parents) a folder to write into, or raise a RunError saying why not;
    before any FMU is instantiated, so that a mistyped --out costs nothing."""
    out = Path(out)
    problem = folder_problem(out, what)
    if problem:
        raise RunError(f"{problem} (--out)")
    return out


def prepare(settings: RunSettings, system: System | None = None, manipulators: Sequence[Manipulator] = (),
            observers: Sequence[Observer] = (), log: Callable[[str], None] = _stderr,
            resumed_from: Path | None = None) -> _Prepared:
    """Check everything of ``settings`` (:func:`check_run`) and build the execution (FMUs
    instantiated, not initialised)."""
    from orchestration.backends import make_slave_factory
    from orchestration.master.observers.checkpoint import CheckpointObserver, ResumingFileObserver
    from orchestration.master.observers.results import FileObserver, MemoryObserver

    checked = check_run(settings, system, manipulators, log)
    system, scenario, scenario_file = checked.system, checked.scenario, checked.scenario_file
    variables, stop, step, algorithm, backend = (checked.variables, checked.stop, checked.step, checked.algorithm,
                                                 checked.backend)
    out = None
    all_observers: list[Observer] = []
    # with result files the FileObserver warns of NaN or infinite values: said once, not by both
    memory = MemoryObserver(variables, settings.record_every, warn=not settings.files) if settings.memory else None
    if memory is not None:
        all_observers.append(memory)
    file_observer = None
    if settings.files:
        out = Path(settings.out) if settings.out else Path("results") / system.name
        make_output_folder(out, "result folder")
        extra = {"stop_time": stop, "base_step": step, "scenario": str(scenario_file) if scenario_file else None,
                 "backend": backend.describe(), "parameters": dict(settings.parameters) or None}
        if resumed_from is not None:
            file_observer = ResumingFileObserver(out, variables, flush_every=settings.flush_every,
                                                 extra_metadata=extra, resumed_from=resumed_from,
                                                 record_every=settings.record_every)
        else:
            file_observer = FileObserver(out, variables, flush_every=settings.flush_every, extra_metadata=extra,
                                         record_every=settings.record_every)
        all_observers.append(file_observer)
    all_observers += list(observers)
    checkpointer = None
    if settings.checkpoint_every:
        if file_observer is None:
            raise RunError("checkpoints need result files (files=True): a resumed run appends to them")
        checkpointer = CheckpointObserver(out / "checkpoints", settings.checkpoint_every,
                                          manifest={"settings": settings.to_dict()}, flush=[file_observer],
                                          keep=settings.keep_checkpoints, log=None if settings.quiet else log)
        all_observers.append(checkpointer)
    all_manipulators = ([scenario] if scenario else []) + list(manipulators)
    execution = Execution(system, algorithm, slave_factory=make_slave_factory(backend, system),
                          observers=all_observers, manipulators=all_manipulators, observed=variables, stop_time=stop)
    if file_observer is not None and backend.name == "ray":        # where each FMU runs, for the metadata
        try:
            file_observer.extra["actors"] = {s.name: s.where_is() for s in execution.slaves}
        except Exception:
            execution.free()
            raise
    return _Prepared(execution, out, stop, step, checkpointer, memory)


def run(settings: RunSettings, manipulators: Sequence[Manipulator] = (), observers: Sequence[Observer] = (),
        system: System | None = None, log: Callable[[str], None] = _stderr,
        progress: Callable[[float, float], None] | None = None) -> RunReport:
    """Run as ``marine-cosim run`` does; returns where the results are, how far the run got, its
    timings and (``settings.memory``) the results. A failure raises after the results so far are
    written (metadata.json: status failed, the error)."""
    prepared = prepare(settings, system, manipulators, observers, log)
    execution = prepared.execution
    if progress is None and not settings.quiet:
        from orchestration.runs.progress import Progress

        progress = Progress(execution.system.name, execution.system.start_time)
    started = time.perf_counter()
    try:
        execution.initialize()
        initialised = time.perf_counter()
        cpu0 = time.process_time()
        execution.run(prepared.stop, prepared.step, progress=progress)
        cpu = time.process_time() - cpu0
    finally:
        if hasattr(progress, "close"):
            progress.close()
        execution.free()
        _write_log(execution, prepared.out)
    results = prepared.memory.results({"algorithm": execution.algorithm.settings()}) if prepared.memory else None
    return RunReport(prepared.out, execution.steps_taken, execution.time, execution.wall_time(),
                     execution.system.name, execution.system.start_time,
                     prepared.checkpointer.written if prepared.checkpointer else [], None, results,
                     initialised - started, cpu, execution.algorithm.settings())


def resume_run(path: Path, overrides: dict[str, Any] | None = None, manipulators: Sequence[Manipulator] = (),
               observers: Sequence[Observer] = (), log: Callable[[str], None] = _stderr,
               progress: Callable[[float, float], None] | None = None) -> RunReport:
    """Continue a run from its last checkpoint (``path``: a result folder, its checkpoints/ folder or
    one checkpoint). ``overrides``: settings to change, e.g. ``stop`` (run longer) or ``backend``."""
    from orchestration.errors import CheckpointError
    from orchestration.master.observers import checkpoint as ck
    from orchestration.system.files import load_system

    where = ck.find_checkpoint(path)
    manifest = ck.read_manifest(where)
    if "settings" not in manifest:
        raise CheckpointError(f"{where}: the manifest has no run settings")
    settings = RunSettings(**manifest["settings"])
    overrides = {key: value for key, value in (overrides or {}).items() if value is not None}
    if "backend" in overrides and overrides["backend"] != settings.backend:
        # the stored run's options of its own backend do not carry over to another one (check_run
        # refuses them as given for nothing); options given with the resume do
        if overrides["backend"] != "ray":
            settings.ray_address = None
        if overrides["backend"] == "inprocess":
            settings.call_timeout = None
    for key, value in overrides.items():
        setattr(settings, key, value)
    system = load_system(Path(settings.system))
    if manifest.get("system_sha256") and system.file_hash() != manifest["system_sha256"]:
        log(f"warning: {settings.system} changed since the checkpoint was written")
    state = ck.read_state(where)
    prepared = prepare(settings, system, manipulators, observers, log, resumed_from=where)
    execution = prepared.execution
    started = time.perf_counter()
    try:
        file_observers, execution.observers = execution.observers, []
        try:
            execution.initialize()          # instantiate and initialise the FMUs, then overwrite their state
        finally:
            execution.observers = file_observers
        ck.apply(execution, state)
        resumed_at = execution.time
        for observer in execution.observers:
            observer.on_start(execution)
        if not settings.quiet:
            log(f"resuming {system.name} at t = {execution.time:g} s from {where}")
            if progress is None:
                from orchestration.runs.progress import Progress

                progress = Progress(system.name, resumed_at)
        initialised = time.perf_counter()
        cpu0 = time.process_time()
        execution.run(prepared.stop, prepared.step, progress=progress)
        cpu = time.process_time() - cpu0
    finally:
        if hasattr(progress, "close"):
            progress.close()
        execution.free()
        _write_log(execution, prepared.out)
    results = prepared.memory.results({"algorithm": execution.algorithm.settings()}) if prepared.memory else None
    return RunReport(prepared.out, execution.steps_taken, execution.time, execution.wall_time(), execution.system.name,
                     resumed_at, prepared.checkpointer.written if prepared.checkpointer else [], where, results,
                     initialised - started, cpu, execution.algorithm.settings())


def _write_log(execution: Execution, out: Path | None) -> None:
    log = getattr(execution.algorithm, "log", None)
    if log and out is not None:
        write_algorithm_log(out / "algorithm.csv", log)


def write_algorithm_log(path: Path, log: list[dict]) -> None:
    """One row per accepted macro step: time, step, error indicator, per-bond energy residuals..."""
    import csv

    columns = list(dict.fromkeys(k for row in log for k in row))
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns)
        w.writeheader()
        w.writerows(log)
