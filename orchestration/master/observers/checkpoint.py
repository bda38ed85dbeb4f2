"""Checkpoints: the whole co-simulation state on disk every T seconds of simulated time, and
resuming a run from the last one.

Why: a long run on several hosts can lose a worker, an actor or a node; with checkpoints it goes on
from the last one instead of from the start (``marine-cosim run --checkpoint-every T`` and
``marine-cosim run --resume DIR``). It works on every backend: FMU states are serialized where the
FMU runs (fmi2SerializeFMUstate) and brought back as bytes, so a run may even resume on another
backend than the one it started on.

A checkpoint is a folder ``<out>/checkpoints/t=<time>_step=<n>/`` with

* ``state.pkl``: each FMU's serialized state, the master's state (time, held inputs and outputs,
  extrapolation history, overrides, biases: Execution.master_state), the algorithm's own state
  (e.g. the fixed-step counter, the adaptive step and controller memory, the algorithm log) and the
  manipulators' state (e.g. which scenario events are done);
* ``manifest.json``: time, step count, system file and its SHA-256, and the run settings, so
  ``--resume`` needs nothing else.

Folders are written under a temporary name and renamed, so a run that dies while writing leaves the
previous checkpoint intact; the last ``keep`` are kept. Before writing, the result observers are
flushed, so every result row up to the checkpoint is on disk; on resume, rows written after the
checkpoint (by the run that died) are dropped and the new rows appended.
"""
from __future__ import annotations

import csv
import datetime
import io
import json
import math
import os
import pickle
import shutil
from pathlib import Path
from typing import Any, Iterable, Sequence


from orchestration.errors import CheckpointError  # noqa: F401  (re-exported)
from orchestration.master.execution import Execution, ExecutionError, Observer
from orchestration.master.observers.results import FileObserver, types_of
from orchestration.master.slaves import SlaveError

FORMAT = 1
STATE_FILE = "state.pkl"
MANIFEST = "manifest.json"




def _picklable_state(obj: Any, skip: Iterable[str] = ()) -> dict[str, Any]:
    """The attributes of ``obj`` that pickle (what its own state is, without references to the
    execution or to live objects)."""
    state = {}
    for key, value in vars(obj).items():
        if key in skip:
            continue
        try:
            state[key] = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            continue
    return state


def _restore_attributes(obj: Any, state: dict[str, bytes]) -> None:
    for key, blob in state.items():
        setattr(obj, key, pickle.loads(blob))


def check_checkpointable(execution: Execution) -> None:
    """Every FMU must serialize its state, else checkpoints are impossible: say which one cannot."""
    for s in execution.slaves:
        cs = s.model_description.coSimulation or s.model_description.modelExchange   # ME: the master integrates
        if not (s.model_description.fmiVersion == "2.0" and cs is not None and cs.canGetAndSetFMUstate
                and cs.canSerializeFMUstate):
            raise CheckpointError(f"checkpoints need every FMU to serialize its state, but {s.name} "
                                  f"({Path(str(getattr(s, 'fmu', ''))).name}) cannot (canSerializeFMUstate is false "
                                  "or FMI 1.0); run without --checkpoint-every")


def capture(execution: Execution) -> dict[str, Any]:
    """The complete co-simulation state at the present communication point (module docstring)."""
    master = execution.master_state()
    slaves = {}
    for s in execution.slaves:
        try:
            slaves[s.name] = s.checkpoint_state()
        except SlaveError as exc:
            raise ExecutionError(f"checkpoint at t = {execution.time:g} s: {exc}") from None
    return {"format": FORMAT, "time": execution.time, "steps_taken": execution.steps_taken,
            "master": master, "slaves": slaves,
            "algorithm": _picklable_state(execution.algorithm, skip=("execution",)),
            "manipulators": [(type(m).__qualname__, _picklable_state(m)) for m in execution.manipulators]}


def apply(execution: Execution, state: dict[str, Any]) -> None:
    """Put a :func:`capture` back into an initialized execution of the same system."""
    if state.get("format") != FORMAT:
        raise CheckpointError(f"checkpoint format {state.get('format')!r} is not {FORMAT}")
    names = [s.name for s in execution.slaves]
    if sorted(names) != sorted(state["slaves"]):
        raise CheckpointError(f"the checkpoint holds components {sorted(state['slaves'])}, the system has "
                              f"{sorted(names)}")
    for s in execution.slaves:
        try:
            s.restore_checkpoint_state(state["slaves"][s.name])
        except SlaveError as exc:
            raise CheckpointError(f"restoring {s.name} from the checkpoint failed: {exc}") from None
    execution.load_master_state(state["master"])
    _restore_attributes(execution.algorithm, state["algorithm"])
    # manipulators by kind, in order: a scenario gets back which events are done; manipulators the
    # resumed run does not have (e.g. added by a script to the first run) are left out
    saved = list(state["manipulators"])
    for m in execution.manipulators:
        match = next((k for k, (kind, _) in enumerate(saved) if kind == type(m).__qualname__), None)
        if match is not None:
            _restore_attributes(m, saved.pop(match)[1])


def _folder_name(time: float, steps: int) -> str:
    return f"t={time:.9g}_step={steps:09d}"


def write_checkpoint(execution: Execution, directory: Path, manifest: dict | None = None, keep: int = 3) -> Path:
    """Write a checkpoint of ``execution`` into ``directory`` (a new subfolder); keep the last ``keep``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    state = capture(execution)
    name = _folder_name(execution.time, execution.steps_taken)
    tmp = directory / f".tmp-{name}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    with open(tmp / STATE_FILE, "wb") as f:
        pickle.dump(state, f, protocol=pickle.HIGHEST_PROTOCOL)
        f.flush()
        os.fsync(f.fileno())
    info = {"format": FORMAT, "time": execution.time, "steps_taken": execution.steps_taken,
            "written": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "system": str(execution.system.source_file) if execution.system.source_file else None,
            "system_sha256": execution.system.file_hash(),
            "components": [s.name for s in execution.slaves], **(manifest or {})}
    (tmp / MANIFEST).write_text(json.dumps(info, indent=2, default=str))
    final = directory / name
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    (directory / "latest.tmp").write_text(name)
    os.replace(directory / "latest.tmp", directory / "latest")
    for old in list_checkpoints(directory)[:-max(1, keep)]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def list_checkpoints(directory: Path) -> list[Path]:
    """Complete checkpoint folders in ``directory``, oldest first."""
    directory = Path(directory)
    found = []
    for d in directory.glob("t=*_step=*"):
        if (d / STATE_FILE).is_file() and (d / MANIFEST).is_file():
            try:
                steps = json.loads((d / MANIFEST).read_text())["steps_taken"]
                time = json.loads((d / MANIFEST).read_text())["time"]
            except (ValueError, KeyError, OSError):
                continue
            found.append((time, steps, d))
    return [d for _, _, d in sorted(found)]


def find_checkpoint(path: Path) -> Path:
    """The checkpoint ``path`` means: a checkpoint folder, a folder of checkpoints (its last one), or
    a result folder with ``checkpoints/`` (its last one)."""
    path = Path(path)
    if (path / STATE_FILE).is_file() and (path / MANIFEST).is_file():
        return path
    for candidate in (path, path / "checkpoints"):
        found = list_checkpoints(candidate) if candidate.is_dir() else []
        if found:
            return found[-1]
    raise CheckpointError(f"no checkpoint in {path} (expected a checkpoint folder with {STATE_FILE} and {MANIFEST}, "
                          "a checkpoints/ folder, or a result folder that has one)")


def read_manifest(checkpoint: Path) -> dict:
    return json.loads((Path(checkpoint) / MANIFEST).read_text())


def read_state(checkpoint: Path) -> dict:
    with open(Path(checkpoint) / STATE_FILE, "rb") as f:
        return pickle.load(f)


class CheckpointObserver(Observer):
    """Writes a checkpoint whenever simulated time passes a multiple of ``every`` seconds (from the
    start time), after flushing ``flush`` observers so the results up to it are on disk."""

    def __init__(self, directory: Path, every: float, manifest: dict | None = None,
                 flush: Sequence[Observer] = (), keep: int = 3, log=None):
        if not (every > 0 and math.isfinite(every)):
            raise CheckpointError(f"--checkpoint-every must be a positive time in seconds, not {every!r}")
        self.directory, self.every, self.manifest = Path(directory), float(every), manifest or {}
        self.flush, self.keep, self.log = list(flush), keep, log
        self.written: list[Path] = []

    def _next_after(self, execution: Execution, t: float) -> float:
        t0 = execution.system.start_time
        k = math.floor((t - t0) / self.every * (1 + 1e-12) + 1e-9) + 1
        return t0 + k * self.every

    def on_start(self, execution: Execution) -> None:
        check_checkpointable(execution)
        self._next = self._next_after(execution, execution.time)

    def on_step(self, execution: Execution) -> None:
        t = execution.time
        if t < self._next - 1e-9 * max(1.0, abs(t)):
            return
        for observer in self.flush:
            observer.flush()
        path = write_checkpoint(execution, self.directory, self.manifest, self.keep)
        self.written.append(path)
        if self.log:
            self.log(f"checkpoint at t = {t:g} s: {path}")
        self._next = self._next_after(execution, t)


class ResumingFileObserver(FileObserver):
    """A :class:`FileObserver` that continues the results of a run from a checkpoint: rows after the
    checkpoint time are dropped (the run that died may have written some), new rows are appended,
    and metadata.json records the resume."""

    def __init__(self, *args, resumed_from: Path, **kwargs):
        super().__init__(*args, **kwargs)
        self.resumed_from = Path(resumed_from)

    def on_start(self, execution: Execution) -> None:
        from orchestration.master.observers.results import run_metadata

        t_end = execution.time
        self.types = types_of(execution, self.variables)
        keep = t_end + 1e-9 * max(1.0, abs(t_end))
        csv_path = self.out_dir / "results.csv"
        if not csv_path.is_file():
            raise CheckpointError(f"cannot resume the results in {self.out_dir}: results.csv is missing")
        with open(csv_path, newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            rows = [row for row in reader if row and float(row[0]) <= keep]
        if header != self.columns:
            raise CheckpointError(f"cannot resume the results in {self.out_dir}: its columns differ from this run's "
                                  "(same --variables needed)")
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(header)
        writer.writerows(rows)
        tmp = csv_path.with_suffix(".csv.tmp")
        tmp.write_text(buffer.getvalue())
        os.replace(tmp, csv_path)
        self._csv_file = open(csv_path, "a", newline="")
        self._csv = csv.writer(self._csv_file)
        if self.parquet:
            self._trim_parquet(keep)
        old = {}
        if (self.out_dir / "metadata.json").is_file():
            old = json.loads((self.out_dir / "metadata.json").read_text())
        self.metadata = old or run_metadata(execution, {"recorded": self.columns[1:], **self.extra})
        self.metadata.update(self.extra)
        self.metadata["status"] = "running"
        self.metadata.setdefault("resumed", []).append(
            {"checkpoint": str(self.resumed_from), "time": t_end,
             "at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")})
        self.metadata.pop("error", None)
        self._write_metadata()
        self._locate(execution)

    def _trim_parquet(self, keep: float) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        folder = self.out_dir / "results.parquet"
        folder.mkdir(exist_ok=True)
        parts = sorted(folder.glob("part-*.parquet"))
        tables = [pq.read_table(p) for p in parts]
        for p in parts:
            p.unlink()
        self._parts = 0
        if tables:
            table = pa.concat_tables(tables)
            table = table.filter(pc.less_equal(table.column("time"), keep))
            if table.num_rows:
                pq.write_table(table, folder / "part-00000.parquet")
                self._parts = 1

