"""Result observers: recorded variables written progressively to CSV and Parquet, with metadata.

Why Parquet (and not HDF5): it is the columnar format every analysis stack reads without extra
native libraries (pandas, polars, DuckDB, Spark, MATLAB ``parquetread``), it compresses well, and
its unit of writing, a complete file, makes progressive writing crash-safe: every flush writes one
self-contained part ``results.parquet/part-NNNNN.parquet``, so a run that dies keeps every part
written before (an HDF5 or single Parquet file left half-written can be unreadable). Readers take
the folder as one dataset (``pandas.read_parquet("results.parquet")``).

Files in the output folder:

* ``results.csv``: header ``time,<component>.<variable>,...``, one row per communication point,
  flushed with every part (Real as the shortest decimal that reads back to the same double,
  Integer and Enumeration as integers, Boolean as 0/1, String as text, Binary as hex);
* ``results.parquet/part-*.parquet``: the same columns, each in its type (float64, int64, bool,
  string, binary), each field's metadata holding its ``unit`` and ``fmi_type`` (``time``: s, Real);
* ``metadata.json``: system file and its SHA-256, FMU paths and GUIDs, parameters, algorithm
  settings, package versions, start time, the unit and FMI type family of every column, and at the
  end status, wall time, the error if any and ``terminated_by`` when an FMU ended the run;
  also in every Parquet part's schema metadata (key ``marine_cosim``; the units and types also under
  ``PANDAS_ATTRS``, so ``pandas.read_parquet`` gives them in ``df.attrs["units"]`` and
  ``df.attrs["types"]``).

``record_every`` N (``marine-cosim run --record-every N``) records the start and every N-th macro
step (``execution.steps_taken`` a multiple of N, so a resumed run keeps the same grid); the
simulation itself still takes every step.
"""
from __future__ import annotations

import csv
import datetime
import json
import math
import platform
import warnings
from operator import itemgetter
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Sequence

import numpy as np

from orchestration.errors import UsageError, did_you_mean
from orchestration.master.execution import Execution, Observer
from orchestration.system.model import System

class Results:
    """Recorded time series by ``"component.variable"``, with their units and the run's metadata.

    ``results["payload.position[2]"]`` is a numpy array over ``results.time`` (float64 for Real,
    int64 for Integer and Enumeration, bool for Boolean, object arrays of str/bytes for String and
    Binary); ``results.units`` maps each column to its unit from the modelDescription ("" when none);
    ``results.types`` to its FMI type family; ``results.metadata`` holds what metadata.json holds
    (system, FMUs, parameters, algorithm, status, timings). ``to_pandas()`` gives a DataFrame indexed
    by time with the units in ``df.attrs["units"]``."""

    def __init__(self, time: np.ndarray, columns: dict[str, np.ndarray], metadata: dict | None = None,
                 units: dict[str, str] | None = None, types: dict[str, str] | None = None):
        self.time = np.asarray(time, dtype=float)
        self.columns = columns
        self.metadata = metadata or {}
        self.units = dict(units if units is not None else self.metadata.get("units", {}))
        self.types = dict(types if types is not None else self.metadata.get("types", {}))

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.columns:
            raise KeyError(f"no result column {name!r}{did_you_mean(name, self.columns)}")
        return self.columns[name]

    def __contains__(self, name: str) -> bool:
        return name in self.columns

    @property
    def names(self) -> list[str]:
        return list(self.columns)

    def require_rows(self, source: Path | str, what: str) -> None:
        """Raise UsageError when there is no row to ``what`` (plot, export, replay): a run that
        stopped before its first recorded point leaves only a header."""
        if len(self.time) == 0:
            raise UsageError(f"{source}: no rows to {what} (a header only: the run stopped before its first "
                             "recorded point)")

    def to_pandas(self):
        """A pandas DataFrame indexed by ``time`` [s]; units in ``df.attrs["units"]`` (column -> unit),
        FMI type families in ``df.attrs["types"]`` and the run's metadata in ``df.attrs["metadata"]``."""
        import pandas as pd

        frame = pd.DataFrame(self.columns, index=pd.Index(self.time, name="time"))
        frame.attrs["units"] = {name: self.units.get(name, "") for name in self.columns}
        frame.attrs["units"]["time"] = "s"
        frame.attrs["types"] = {name: self.types.get(name, "Real") for name in self.columns}
        frame.attrs["metadata"] = self.metadata
        return frame


#: how each FMI type family is stored: numpy dtype (object: str or bytes values)
DTYPES = {"Real": np.float64, "Integer": np.int64, "Enumeration": np.int64, "Boolean": np.bool_,
          "String": object, "Binary": object}


def typed_column(values, family: str) -> np.ndarray:
    """The values of one column as its family's dtype."""
    dtype = DTYPES.get(family, np.float64)
    if dtype is object:
        return np.array(list(values), dtype=object)
    return np.asarray(values, dtype=np.float64).astype(dtype) if dtype is not np.float64 else \
        np.asarray(values, dtype=np.float64)


def units_of(execution: Execution, variables: Sequence[tuple[str, str]]) -> dict[str, str]:
    """``"component.variable"`` -> unit of each recorded variable, from the modelDescriptions."""
    units = {}
    for comp, var in variables:
        info = execution.slaves[execution.index[comp]].variables.get(var)
        units[f"{comp}.{var}"] = (info.unit or "") if info is not None else ""
    return units


def types_of(execution: Execution, variables: Sequence[tuple[str, str]]) -> dict[str, str]:
    """``"component.variable"`` -> FMI type family of each recorded variable."""
    return {f"{comp}.{var}": execution.slaves[execution.index[comp]].variables[var].type for comp, var in variables}


class Gather:
    """Reads a fixed selection of (component, variable) values every step: where each one lives
    in the execution's arrays is looked up once, not per step. Numeric values of every type come
    from the arrays as floats (exact); String and Binary values by name.

    A row reads each slave's array (outputs or inputs) once, by one index array, and puts the
    values in column order by one permutation; ``floats`` holds the columns that come from float64
    arrays this way (always Python floats)."""

    def __init__(self, execution: "Execution", variables: Sequence[tuple[str, str]]):
        self.where = []
        self.execution = execution
        for comp, var in variables:
            i = execution.index[comp]
            info = execution.slaves[i].variables[var]
            if var in execution.out_names[i]:
                self.where.append((execution.outputs, i, execution.out_names[i].index(var)))
            elif var in execution.in_names[i]:
                self.where.append((execution.inputs, i, execution.in_names[i].index(var)))
            elif not info.numeric:
                self.where.append(("text", i, var))       # read by name every step
            else:   # an unconnected input or a parameter: constant unless set by name
                self.where.append((None, i, execution.value(comp, var)))
        # the plan: constants first, then each (arrays, slave) group's values, then the texts; a
        # row is the permutation of that list back into column order
        constants, groups, texts = [], {}, []
        for col, (arrays, i, pos) in enumerate(self.where):
            if arrays is None:
                constants.append((col, pos))
            elif isinstance(arrays, str):
                texts.append((col, i, pos))
            else:
                groups.setdefault((id(arrays), i), (arrays, i, [], []))
                groups[(id(arrays), i)][2].append(pos)
                groups[(id(arrays), i)][3].append(col)
        self._constants = [value for _, value in constants]
        self._groups = [(arrays, i, np.array(positions, dtype=np.intp), positions)
                        for arrays, i, positions, _ in groups.values()]
        self._texts = [(i, pos) for _, i, pos in texts]
        order = [col for col, _ in constants] + [col for *_, cols in groups.values() for col in cols] \
            + [col for col, _, _ in texts]
        at = [0] * len(order)
        for k, col in enumerate(order):
            at[col] = k
        self._pick = itemgetter(*at) if len(at) > 1 else None
        self.floats = frozenset(col for *_, cols in groups.values() for col in cols)

    def row(self) -> list:
        out = self._constants.copy()
        for arrays, i, index, positions in self._groups:
            values = arrays[i]
            if type(values) is np.ndarray and values.dtype == np.float64:
                out += values[index].tolist()
            else:
                out += [float(values[pos]) for pos in positions]
        if self._texts:
            execution = self.execution
            for i, pos in self._texts:
                values = execution.text_values[i]
                out.append(values[pos] if pos in values else execution.slaves[i].get_values([pos])[pos])
        if self._pick is None:
            return out
        return list(self._pick(out))


class NonFiniteWarning(UserWarning):
    """Recorded Real values that are NaN or infinite (an FMU's output, or an input fed from one)."""


def first_non_finite(time, names: Sequence[str], block: np.ndarray, found: dict[str, float]) -> None:
    """Add to ``found`` each of ``names`` (the columns of ``block``, one row per time in ``time``)
    whose values turn NaN or infinite, with the first time they do (kept if already there)."""
    bad = ~np.isfinite(block)
    if not bad.any():
        return
    for k in np.nonzero(bad.any(axis=0))[0]:
        if names[k] not in found:
            found[names[k]] = float(time[int(np.argmax(bad[:, k]))])


def warn_non_finite(found: dict[str, float]) -> None:
    """Say which recorded variables are not numbers, the earliest first: otherwise a run that fed
    NaN from one FMU to the next ends with exit status 0 and columns of nan without a word."""
    if not found:
        return
    order = sorted(found, key=found.get)          # by time, then in the order of the columns
    listed = ", ".join(f"{name} (from t = {found[name]:g} s)" for name in order[:6])
    more = f" and {len(order) - 6} more" if len(order) > 6 else ""
    warnings.warn(f"recorded values are NaN or infinite: {listed}{more}; the earliest is where it began "
                  "(an FMU's output, or an input fed from one): look at that FMU's parameters, inputs "
                  "and log", NonFiniteWarning, stacklevel=2)


class MemoryObserver(Observer):
    """Keeps selected variables in memory (for scripts and tests), every ``record_every``-th step.
    ``warn``: :meth:`results` warns of values that are NaN or infinite (off where a FileObserver of
    the same run says it already)."""

    def __init__(self, variables: Sequence[tuple[str, str]], record_every: int = 1, warn: bool = True):
        self.variables = list(variables)
        self.record_every = max(1, int(record_every))
        self.warn = warn
        self.time: list[float] = []
        self.rows: list[list] = []
        self.units: dict[str, str] = {}
        self.types: dict[str, str] = {}

    def on_start(self, execution: Execution) -> None:
        self._gather = Gather(execution, self.variables)
        self.units = units_of(execution, self.variables)
        self.types = types_of(execution, self.variables)
        self.time.append(execution.time)
        self.rows.append(self._gather.row())

    def on_step(self, execution: Execution) -> None:
        if execution.steps_taken % self.record_every:
            return
        self.time.append(execution.time)
        self.rows.append(self._gather.row())

    def results(self, metadata: dict | None = None) -> Results:
        """What was recorded, as :class:`Results` (each column in its type's dtype)."""
        columns = {}
        for k, (c, v) in enumerate(self.variables):
            name = f"{c}.{v}"
            columns[name] = typed_column([row[k] for row in self.rows], self.types.get(name, "Real"))
        real = [name for name in columns if self.types.get(name, "Real") == "Real"] if self.warn else []
        if real:
            found: dict[str, float] = {}
            first_non_finite(self.time, real, np.column_stack([columns[name] for name in real]), found)
            warn_non_finite(found)
        return Results(np.array(self.time), columns, metadata, self.units, self.types)


PACKAGES = ("marine-cosim", "fmpy", "pythonfmu", "numpy", "scipy", "pyarrow", "libcosimpy", "ray")


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            pass
    return versions


def run_metadata(execution: Execution, extra: dict | None = None) -> dict:
    system = execution.system
    return {
        "system": {"name": system.name, "file": str(system.source_file) if system.source_file else None,
                   "sha256": system.file_hash()},
        "components": {
            s.name: {"fmu": str(c.source) if not c.adapter else None, **({"adapter": c.adapter} if c.adapter else {}),
                     "guid": s.model_description.guid,
                     "model": s.model_description.modelName, "fmi_version": s.model_description.fmiVersion,
                     "generation_tool": s.model_description.generationTool,
                     "parameters": {k: v for k, v in c.parameters.items()}, "step_multiple": c.step_multiple}
            for s, c in zip(execution.slaves, system.components.values())},
        "connections": [{"from": ".".join(c.source), "to": ".".join(c.target), "factor": c.factor,
                         "offset": c.offset} for c in system.connections],
        "algorithm": execution.algorithm.settings(),
        "start_time": system.start_time,
        "packages": package_versions(),
        "platform": platform.platform(),
        "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        **(extra or {}),
    }


class FileObserver(Observer):
    """Records ``variables`` ((component, variable) pairs) to CSV and Parquet in ``out_dir``,
    every ``record_every``-th macro step, flushing every ``flush_every`` recorded points."""

    def __init__(self, out_dir: Path, variables: Sequence[tuple[str, str]], flush_every: int = 1000,
                 parquet: bool = True, extra_metadata: dict | None = None, record_every: int = 1):
        self.out_dir = Path(out_dir)
        self.record_every = max(1, int(record_every))
        self.variables = list(variables)
        self.flush_every = max(1, int(flush_every))
        self.parquet = parquet
        self.extra = extra_metadata or {}
        self._rows: list[list[float]] = []
        self._parts = 0
        #: recorded Real variables that became NaN or infinite, with the first time (metadata "non_finite")
        self.non_finite: dict[str, float] = {}
        self.columns = ["time"] + [f"{c}.{v}" for c, v in self.variables]

    # -- observer -------------------------------------------------------------------------------

    def on_start(self, execution: Execution) -> None:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.types = types_of(execution, self.variables)
        self.units = units_of(execution, self.variables)
        self.metadata = run_metadata(execution, {"recorded": self.columns[1:], "units": self.units,
                                                 "types": self.types, "record_every": self.record_every,
                                                 **self.extra})
        self.metadata["status"] = "running"
        self._write_metadata()
        self._csv_file = open(self.out_dir / "results.csv", "w", newline="")
        self._csv = csv.writer(self._csv_file)
        self._csv.writerow(self.columns)
        if self.parquet:
            (self.out_dir / "results.parquet").mkdir(exist_ok=True)
            for old in (self.out_dir / "results.parquet").glob("part-*.parquet"):
                old.unlink()
        self._locate(execution)
        self._take(execution)

    def on_step(self, execution: Execution) -> None:
        if execution.steps_taken % self.record_every:
            return
        self._take(execution)
        if len(self._rows) >= self.flush_every:
            self.flush()

    def on_finish(self, execution: Execution, error: BaseException | None) -> None:
        self.flush()
        self._csv_file.close()
        self.metadata["status"] = "failed" if error else "completed"
        self.metadata["end_time"] = execution.time
        self.metadata["macro_steps"] = execution.steps_taken
        self.metadata["wall_time_s"] = round(execution.wall_time(), 3)
        if error is not None:
            self.metadata["error"] = f"{type(error).__name__}: {error}"
        if getattr(execution, "terminated", None):
            self.metadata["terminated_by"] = execution.terminated
        if self.non_finite:
            self.metadata["non_finite"] = self.non_finite
        self._write_metadata()
        warn_non_finite(self.non_finite)

    # -- internals ------------------------------------------------------------------------------

    def _locate(self, ex: Execution) -> None:
        self._gather = Gather(ex, self.variables)
        # columns always holding Python floats of a Real: the CSV writer's str() is their repr
        families = ["Real"] + [self.types.get(name, "Real") for name in self.columns[1:]]
        self._convert = [(k, family) for k, family in enumerate(families)
                         if not (k >= 1 and family == "Real" and k - 1 in self._gather.floats)]

    def _take(self, ex: Execution) -> None:
        self._rows.append([ex.time, *self._gather.row()])

    def flush(self) -> None:
        if not self._rows:
            return
        rows = self._rows
        self._rows = []
        families = ["Real"] + [self.types.get(name, "Real") for name in self.columns[1:]]
        convert = getattr(self, "_convert", None)
        if convert is None:
            convert = list(enumerate(families))
        if "String" in families:
            texts = []
            for row in rows:
                text = row.copy()
                for k, family in convert:
                    text[k] = _csv_text(text[k], family)
                texts.append(text)
            self._csv.writerows(texts)       # a String may need the csv module's quoting
        else:
            self._csv_file.write(_csv_lines(rows, families, convert))
        self._csv_file.flush()
        real = [k for k, family in enumerate(families) if k and family == "Real"]
        # rows of numbers as one float block (one conversion in C; a list per column and 485
        # columns took 0.4 ms a row of the lift): the non-finite check and the Parquet columns
        # read it. Integers beyond 2**53 become floats here as typed_column makes them.
        block = None if {"String", "Binary"} & set(families) else np.array(rows, dtype=float)
        if real:
            found = block[:, real] if block is not None else np.array(
                [itemgetter(*real)(row) for row in rows], dtype=float).reshape(len(rows), len(real))
            first_non_finite([row[0] for row in rows], [self.columns[k] for k in real], found, self.non_finite)
        if self.parquet:
            import pyarrow as pa
            import pyarrow.parquet as pq

            if block is not None:
                arrays = [pa.array(block[:, k] if f == "Real" else block[:, k].astype(DTYPES[f]))
                          for k, f in enumerate(families)]
            else:
                arrays = [pa.array(typed_column([row[k] for row in rows], f)) for k, f in enumerate(families)]
            units = getattr(self, "units", None) or self.metadata.get("units", {})
            schema = pa.schema([pa.field(name, array.type, metadata={
                "unit": "s" if k == 0 else units.get(name, ""), "fmi_type": families[k]})
                for k, (name, array) in enumerate(zip(self.columns, arrays))],
                metadata={"marine_cosim": json.dumps(self.metadata, default=str),
                          # pandas.read_parquet puts this into DataFrame.attrs
                          "PANDAS_ATTRS": json.dumps({"units": {"time": "s", **units},
                                                      "types": {"time": "Real", **self.types}})})
            table = pa.Table.from_arrays(arrays, schema=schema)
            pq.write_table(table, self.out_dir / "results.parquet" / f"part-{self._parts:05d}.parquet")
            self._parts += 1

    def _write_metadata(self) -> None:
        tmp = self.out_dir / "metadata.json.tmp"
        tmp.write_text(json.dumps(self.metadata, indent=2, default=str))
        tmp.replace(self.out_dir / "metadata.json")


def _csv_lines(rows: list[list], families: list[str], convert: list[tuple[int, str]] | None = None) -> str:
    """The CSV text of rows without String columns: the values :func:`_csv_text` gives (none holds
    a comma or a quote, so csv.writer would write them as they are), a row at a time through orjson.

    orjson writes each float as the shortest decimal that reads back to the same double (Ryu's
    digits, the same digits as Python's repr), 20-25x faster than 485 calls of repr a row, which
    took 0.45 ms a row of the lift's recording. Its exponent form is JSON's: ``1e-7`` and
    ``0.00001`` where repr writes ``1e-07`` and ``1e-05``; both read back exactly. ``convert``:
    (position, family) of the columns whose values may not be Python floats (Integer, Boolean,
    a Real given as numpy); default all. A row with NaN or infinity (JSON has none), and rows with
    Binary columns, are written by :func:`_csv_text`."""
    import orjson

    if "Binary" in families:
        return "".join(",".join(_csv_text(v, f) for v, f in zip(row, families)) + "\r\n" for row in rows)
    convert = list(enumerate(families)) if convert is None else convert
    dumps = orjson.dumps
    lines = []
    for row in rows:
        if convert:
            row = row.copy()
            for k, family in convert:
                row[k] = float(row[k]) if family == "Real" else int(row[k])
        # a sum of numbers is finite only if every term is
        if math.isfinite(sum(row)):
            lines.append(dumps(row)[1:-1].decode())
        else:
            lines.append(",".join(_csv_text(v, f) for v, f in zip(row, families)))
    return "".join(line + "\r\n" for line in lines)


def _csv_text(value, family: str) -> str:
    """A value as the CSV writes it: repr of floats (round-trips exactly), integers as integers,
    Booleans as 0/1, Strings as they are, Binaries as hex."""
    if family == "Real":
        return repr(float(value))
    if family in ("Integer", "Enumeration", "Boolean"):
        return str(int(value))
    if family == "Binary":
        return bytes(value).hex()
    return str(value)


def _csv_value(text: str, family: str):
    if family in ("Integer", "Enumeration"):
        return int(float(text))
    if family == "Boolean":
        return bool(int(float(text)))
    if family == "String":
        return text
    if family == "Binary":
        return bytes.fromhex(text)
    return float(text)


def load_results(path: Path) -> Results:
    """Read a result folder (Parquet parts, else CSV) or a CSV file. A file that is not one the
    recorder writes (no header, no time column, rows of another length, values of another type, a
    metadata.json that is not JSON) raises UsageError naming the file and the line."""
    path = Path(path)
    meta = {}
    if path.is_dir():
        if (path / "metadata.json").is_file():
            try:
                meta = json.loads((path / "metadata.json").read_text())
            except (ValueError, UnicodeDecodeError) as exc:
                raise UsageError(f"{path / 'metadata.json'}: not the metadata of a run ({exc})") from None
            if not isinstance(meta, dict):
                raise UsageError(f"{path / 'metadata.json'}: not the metadata of a run (a JSON object)")
        parts = sorted((path / "results.parquet").glob("part-*.parquet")) if (path / "results.parquet").is_dir() else []
        if parts:
            import pyarrow.parquet as pq
            import pyarrow as pa

            try:
                table = pa.concat_tables([_read_part(pq, p) for p in parts])
            except pa.ArrowInvalid as exc:   # parts of different columns or types
                raise UsageError(f"{path / 'results.parquet'}: its parts do not form one table ({exc})") from None
            cols = {name: table.column(name).to_numpy() for name in table.column_names}
            if "time" not in cols:
                raise UsageError(f"{path / 'results.parquet'}: no 'time' column")
            time = cols.pop("time")
            return Results(time, cols, meta)
        path = path / "results.csv"
    if not path.is_file():
        raise UsageError(f"no results in {path} (expected results.parquet/ or results.csv)")
    try:
        with open(path, newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            rows = [row for row in reader if row]
    except (UnicodeDecodeError, csv.Error) as exc:
        raise UsageError(f"{path}: not a results CSV ({exc})") from None
    if not header:
        raise UsageError(f"{path}: empty, not a results CSV (a header line with a 'time' column first)")
    types = meta.get("types", {}) if isinstance(meta.get("types", {}), dict) else {}
    # CSV headers from marine-cosim simulate carry units: "time [s]"
    time_key = next((k for k in header if k.split(" [")[0] == "time"), None)
    if time_key is None:
        raise UsageError(f"{path}: no 'time' column in its header (not a results CSV of marine-cosim)")
    for line, row in enumerate(rows, 2):
        if len(row) != len(header):
            raise UsageError(f"{path}, line {line}: {len(row)} values for the {len(header)} columns of the header")
    columns = {}
    for k, name in enumerate(header):
        family = "Real" if name == time_key else types.get(name, "Real")
        try:
            columns[name] = typed_column([_csv_value(row[k], family) for row in rows], family)
        except ValueError:
            line = next(i for i, row in enumerate(rows, 2) if not _parses(row[k], family))
            raise UsageError(f"{path}, line {line}: column {name!r} holds {rows[line - 2][k]!r}, not a "
                             f"{family} value") from None
    return Results(columns.pop(time_key), columns, meta)


def _read_part(pq, part: Path):
    """One Parquet part of a result folder; a part that is not Parquet (cut short, overwritten)
    raises UsageError naming it, and the CSV the recorder wrote beside it when there is one."""
    try:
        return pq.read_table(part)
    except (OSError, ValueError) as exc:   # pyarrow's ArrowInvalid is a ValueError, ArrowIOError an OSError
        csv_file = part.parent.parent / "results.csv"
        hint = f"; the run's CSV can be read instead: {csv_file}" if csv_file.is_file() else ""
        raise UsageError(f"{part}: not a readable Parquet part ({str(exc).splitlines()[0]}){hint}") from None


def _parses(text: str, family: str) -> bool:
    try:
        _csv_value(text, family)
        return True
    except ValueError:
        return False


def default_observed(system: System) -> list[tuple[str, str]]:
    """Every scalar numeric or String output and input of every component (Real, Integer,
    Enumeration, Boolean, FMI 3.0's sized types, String; adapters' ports too): the default recording.
    Binaries, clocks and arrays are recorded only by name (arrays not at all)."""
    from orchestration.system.fmu_info import NUMERIC, component_info

    selected = []
    for component in system.components.values():
        variables = component_info(component).variables
        selected += [(component.name, v.name) for v in variables.values()
                     if v.causality in ("output", "input") and (v.type in NUMERIC or v.type == "String")
                     and not v.array]
    return selected
