"""One co-simulation run from settings: what ``marine-cosim run`` does, callable from Python (the
sweep runs every case through it, tests add their own manipulators and observers).

Steps: read and validate the system, apply parameter overrides, pick the algorithm and the backend,
check the coupling, record results progressively (results.csv, results.parquet/, metadata.json),
write checkpoints if asked, run, and write the algorithm log. A run that fails keeps the results
written so far (metadata.json says ``failed`` and why); with checkpoints it can be resumed:
:func:`resume_run` reads the settings from the checkpoint, builds the same execution, restores
every FMU and the master, and appends to the same results.
"""
from __future__ import annotations

import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from orchestration.execution import Execution, Manipulator, Observer
from orchestration.system import System


class RunError(RuntimeError):
    """A run that cannot start as asked; the message says why."""


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
    variables: list[str] | None = None             # "component.variable"; default all Real outputs and inputs
    flush_every: int = 1000
    backend: str | None = None                     # default: the system file's, else inprocess
    ray_address: str | None = None
    placement: dict[str, dict] = field(default_factory=dict)
    call_timeout: float | None = None
    workers: int | None = None                     # process backend: worker processes (default one per FMU)
    checkpoint_every: float | None = None
    keep_checkpoints: int = 3
    parameters: dict[str, Any] = field(default_factory=dict)  # "component.variable" -> start value (sweeps)
    quiet: bool = True

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class RunReport:
    """How a run ended: where its results are, steps, end time, wall time (of this process)."""

    out: Path
    steps: int
    time: float
    wall: float
    system_name: str
    start_time: float                              # simulated time this process started from
    checkpoints: list[Path] = field(default_factory=list)
    resumed_from: Path | None = None

    def line(self) -> str:
        resumed = f" (resumed at t = {self.start_time:g} s)" if self.resumed_from else ""
        return (f"{self.system_name}: {self.steps} steps to t = {self.time:g} s{resumed} in {self.wall:.2f} s wall "
                f"({(self.time - self.start_time) / max(self.wall, 1e-9):.1f}x real time); results in {self.out}")


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def apply_parameters(system: System, parameters: dict[str, Any]) -> None:
    """Set ``component.variable`` start values on a loaded system, checking names against the FMUs."""
    from fmpy import read_model_description

    for key, value in parameters.items():
        component, sep, variable = key.partition(".")
        if not sep or component not in system.components:
            raise RunError(f"parameter {key!r}: no component {component!r} (the system has "
                           f"{sorted(system.components)})")
        md = read_model_description(str(system.components[component].source))
        known = {v.name: v for v in md.modelVariables}
        if variable not in known:
            import difflib

            close = difflib.get_close_matches(variable, known, n=3)
            raise RunError(f"parameter {key!r}: {component} ({Path(system.components[component].source).name}) has "
                           f"no variable {variable!r}" + (f"; did you mean {', '.join(close)}?" if close else ""))
        if known[variable].causality not in ("parameter", "input"):
            raise RunError(f"parameter {key!r} is a {known[variable].causality}; only parameters and inputs have "
                           "start values to set")
        system.components[component].parameters[variable] = value


def build_execution(settings: RunSettings, system: System | None = None, manipulators: Sequence[Manipulator] = (),
                    observers: Sequence[Observer] = (), log: Callable[[str], None] = _stderr,
                    resumed_from: Path | None = None) -> tuple[Execution, Path, float, float, Any]:
    """The execution for ``settings`` (not initialized), its result folder, stop time, base step and
    checkpoint observer (None without checkpoints)."""
    from orchestration.algorithm_factory import make_algorithm
    from orchestration.backends import make_slave_factory, resolve_backend
    from orchestration.checkpoint import CheckpointObserver, ResumingFileObserver
    from orchestration.coupling_check import check_added_mass
    from orchestration.execution import default_observed
    from orchestration.observers import FileObserver
    from orchestration.scenario import load_scenario
    from orchestration.systemfile import load_system
    from orchestration.validation import validate_system

    if system is None:
        system = load_system(Path(settings.system))
    if settings.parameters:
        apply_parameters(system, settings.parameters)
    report = validate_system(system)
    for p in report.warnings:
        log(str(p))
    if not report.ok:
        raise RunError("the system is not valid:\n" + "\n".join(str(p) for p in report.errors))
    scenario = load_scenario(Path(settings.scenario)) if settings.scenario else None
    stop = settings.stop if settings.stop is not None else (
        scenario.end if scenario and scenario.end else system.stop_time)
    step = settings.step if settings.step is not None else system.base_step
    if stop is None or step is None:
        raise RunError("give --stop and --step: the system file does not set an end time and a base step")
    algorithm_name = settings.algorithm or system.algorithm or "fixed"
    options = {k: v for k, v in system.algorithm_options.items()
               if k not in ("backend", "ray_address") and not k.startswith("placement.")}
    options.update({k: v for k, v in settings.options.items() if v is not None})
    try:
        algorithm = make_algorithm(algorithm_name, options)
    except ValueError as exc:
        raise RunError(str(exc)) from None
    backend = resolve_backend(system, settings.backend, settings.ray_address, settings.placement,
                              settings.call_timeout, settings.workers)
    # explicit coupling of a heavy attachment to a ship diverges whatever the step: say so first
    for finding in check_added_mass(system, algorithm=algorithm):
        log(str(finding))
        if finding.severity == "error":
            raise RunError(str(finding))
    variables = ([tuple(v.split(".", 1)) for v in settings.variables] if settings.variables
                 else default_observed(system))
    out = Path(settings.out) if settings.out else Path("results") / system.name
    extra = {"stop_time": stop, "base_step": step, "scenario": settings.scenario, "backend": backend.describe(),
             "parameters": dict(settings.parameters) or None}
    if resumed_from is not None:
        file_observer = ResumingFileObserver(out, variables, flush_every=settings.flush_every, extra_metadata=extra,
                                             resumed_from=resumed_from)
    else:
        file_observer = FileObserver(out, variables, flush_every=settings.flush_every, extra_metadata=extra)
    all_observers: list[Observer] = [file_observer, *observers]
    checkpointer = None
    if settings.checkpoint_every:
        checkpointer = CheckpointObserver(out / "checkpoints", settings.checkpoint_every,
                                          manifest={"settings": settings.to_dict()}, flush=[file_observer],
                                          keep=settings.keep_checkpoints, log=None if settings.quiet else log)
        all_observers.append(checkpointer)
    all_manipulators = ([scenario] if scenario else []) + list(manipulators)
    execution = Execution(system, algorithm, slave_factory=make_slave_factory(backend), observers=all_observers,
                          manipulators=all_manipulators, observed=variables)
    try:
        if scenario:
            scenario.check(execution)
        if backend.name == "ray":        # where each FMU runs, for the metadata
            file_observer.extra["actors"] = {s.name: s.where_is() for s in execution.slaves}
    except Exception:
        execution.free()
        raise
    return execution, out, stop, step, checkpointer


def run_system(settings: RunSettings, manipulators: Sequence[Manipulator] = (), observers: Sequence[Observer] = (),
               system: System | None = None, log: Callable[[str], None] = _stderr,
               progress: Callable[[float, float], None] | None = None) -> RunReport:
    """Run as ``marine-cosim run`` does; returns where the results are and how far it got. A failure
    raises after the results so far are written (metadata.json: status failed, the error)."""
    execution, out, stop, step, checkpointer = build_execution(settings, system, manipulators, observers, log)
    try:
        execution.initialize()
        execution.run(stop, step, progress=progress)
    finally:
        execution.free()
        _write_log(execution, out)
    return RunReport(out, execution.steps_taken, execution.time, execution.wall_time(), execution.system.name,
                     execution.system.start_time, checkpointer.written if checkpointer else [])


def resume_run(path: Path, overrides: dict[str, Any] | None = None, manipulators: Sequence[Manipulator] = (),
               observers: Sequence[Observer] = (), log: Callable[[str], None] = _stderr,
               progress: Callable[[float, float], None] | None = None) -> RunReport:
    """Continue a run from its last checkpoint (``path``: a result folder, its checkpoints/ folder or
    one checkpoint). ``overrides``: settings to change, e.g. ``stop`` (run longer) or ``backend``."""
    from orchestration import checkpoint as ck

    where = ck.find_checkpoint(path)
    manifest = ck.read_manifest(where)
    if "settings" not in manifest:
        raise ck.CheckpointError(f"{where}: the manifest has no run settings")
    settings = RunSettings(**manifest["settings"])
    for key, value in (overrides or {}).items():
        if value is not None:
            setattr(settings, key, value)
    from orchestration.systemfile import load_system

    system = load_system(Path(settings.system))
    if manifest.get("system_sha256") and system.file_hash() != manifest["system_sha256"]:
        log(f"warning: {settings.system} changed since the checkpoint was written")
    state = ck.read_state(where)
    execution, out, stop, step, checkpointer = build_execution(settings, system, manipulators, observers, log,
                                                               resumed_from=where)
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
        execution.run(stop, step, progress=progress)
    finally:
        execution.free()
        _write_log(execution, out)
    return RunReport(out, execution.steps_taken, execution.time, execution.wall_time(), execution.system.name,
                     resumed_at, checkpointer.written if checkpointer else [], where)


def _write_log(execution: Execution, out: Path) -> None:
    log = getattr(execution.algorithm, "log", None)
    if log:
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
