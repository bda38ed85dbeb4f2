"""Results in the formats other tools read: MATLAB (.mat) and netCDF-4 / HDF5 (.nc, xarray).

    marine-cosim export RESULTS --to mat|netcdf [--out FILE]

``RESULTS`` is a result folder (``results.parquet/`` or ``results.csv`` with ``metadata.json``) or
a results CSV. Every recorded variable keeps its FMI type and its unit:

* **MATLAB** (``scipy.io.savemat``, MAT 5, compressed): ``time`` (N x 1, s); ``signals``, a struct
  per component with one field per variable, a vector ``name[0..n-1]`` as an N x n matrix
  (``signals.ship.position(:, 3)`` is ``ship.position[2]``) and other names with ``.``, ``[``, ``,``
  made MATLAB-safe (``winch.brake.engaged`` -> ``signals.winch.brake_engaged``); ``units`` and
  ``types``, structs of the same shape holding each field's unit and FMI type family; ``names``
  (every original column) and ``fields`` (where each one is, e.g. ``signals.ship.position(:,3)``);
  ``metadata``, the run's metadata.json as text. Real columns are double, Integer and Enumeration
  int64, Boolean logical, String a cell array of char.
* **netCDF-4 / HDF5** (xarray, h5netcdf engine): one variable per column over the ``time``
  dimension, named as the column (``ds["ship.position[2]"]``), with attributes ``units``,
  ``fmi_type`` and ``long_name``; Real float64, Integer int64, Boolean bool (xarray stores it as
  int8 with ``dtype: bool`` and reads it back as bool), String and Binary (hex) as strings; the
  run's metadata in the global attribute ``marine_cosim`` (JSON). The file is an HDF5 file too
  (h5py, HDFView, MATLAB ``h5read``).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from orchestration.errors import UsageError
from orchestration.master.observers.results import Results, load_results
from orchestration.runs.run import make_output_folder

FORMATS = {"mat": ".mat", "netcdf": ".nc"}

_VECTOR = re.compile(r"^(?P<base>.+)\[(?P<i>\d+)\]$")


def export_results(results_path: Path | str, to: str, out: Path | str | None = None) -> Path:
    """Write the results of ``results_path`` as ``to`` ("mat" or "netcdf") into ``out`` (default:
    ``results.mat`` / ``results.nc`` in the result folder); returns the file."""
    if to not in FORMATS:
        raise UsageError(f"--to {to!r}: choose one of {', '.join(FORMATS)}")
    results_path = Path(results_path)
    results = load_results(results_path)
    # h5netcdf takes minutes for a zero-length time axis (each variable rescans the others) and an
    # empty file answers nothing
    results.require_rows(results_path, "export")
    folder = results_path if results_path.is_dir() else results_path.parent
    out = Path(out) if out is not None else folder / f"results{FORMATS[to]}"
    if out.is_dir():
        # scipy's savemat wrote nothing and said nothing for a folder: the file goes into it
        out = out / f"results{FORMATS[to]}"
    make_output_folder(out.parent, "folder of the export")
    (write_mat if to == "mat" else write_netcdf)(results, out)
    return out


def _matlab_name(text: str) -> str:
    name = re.sub(r"\W+", "_", text).strip("_") or "x"
    return name if name[0].isalpha() else f"v_{name}"


def _column(values: np.ndarray, family: str) -> np.ndarray:
    if family == "Binary":
        return np.array([bytes(v).hex() for v in values], dtype=object)
    if family == "String":
        return np.array([str(v) for v in values], dtype=object)
    return np.asarray(values)


def write_mat(results: Results, path: Path) -> Path:
    """MATLAB MAT 5 file (module docstring)."""
    from scipy.io import savemat

    signals: dict[str, dict] = {}
    units: dict[str, dict] = {}
    types: dict[str, dict] = {}
    names, fields = [], []
    groups: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for name in results.names:
        component, _, variable = name.partition(".")
        m = _VECTOR.match(variable)
        base = m.group("base") if m else variable
        groups.setdefault((component, base), []).append((int(m.group("i")) if m else -1, name))
    for (component, base), members in groups.items():
        comp = _matlab_name(component)
        field = _matlab_name(base)
        indices = sorted(i for i, _ in members)
        family = {results.types.get(n, "Real") for _, n in members}
        unit = {results.units.get(n, "") for _, n in members}
        as_matrix = indices == list(range(len(indices))) and len(family) == 1 and len(unit) == 1 \
            and family <= {"Real", "Integer", "Enumeration", "Boolean"}
        target = signals.setdefault(comp, {})
        if as_matrix:
            ordered = [n for _, n in sorted(members)]
            target[field] = np.column_stack([results[n] for n in ordered])
            units.setdefault(comp, {})[field] = unit.pop()
            types.setdefault(comp, {})[field] = family.pop()
            for k, n in enumerate(ordered):
                names.append(n)
                fields.append(f"signals.{comp}.{field}(:,{k + 1})")
        else:
            for _, n in sorted(members):
                f = _matlab_name(n.partition(".")[2])
                fam = results.types.get(n, "Real")
                col = _column(results[n], fam)
                target[f] = col.reshape(-1, 1) if col.dtype != object else col
                units.setdefault(comp, {})[f] = results.units.get(n, "")
                types.setdefault(comp, {})[f] = fam
                names.append(n)
                fields.append(f"signals.{comp}.{f}")
    savemat(str(path), {"time": np.asarray(results.time, float).reshape(-1, 1), "signals": signals, "units": units,
                        "types": types, "names": np.array(names, dtype=object),
                        "fields": np.array(fields, dtype=object),
                        "metadata": json.dumps(results.metadata, default=str)},
            long_field_names=True, do_compression=True, oned_as="column")
    return path


def to_xarray(results: Results):
    """The results as an xarray Dataset over ``time`` (attributes: units, FMI type, long name)."""
    import xarray as xr

    data = {}
    for name in results.names:
        family = results.types.get(name, "Real")
        data[name] = xr.Variable(("time",), _column(results[name], family).astype(str)
                                 if family in ("String", "Binary") else results[name],
                                 attrs={"units": results.units.get(name, ""), "fmi_type": family, "long_name": name})
    ds = xr.Dataset(data, coords={"time": ("time", np.asarray(results.time, float),
                                           {"units": "s", "fmi_type": "Real", "long_name": "simulated time"})})
    ds.attrs["marine_cosim"] = json.dumps(results.metadata, default=str)
    ds.attrs["title"] = f"marine-cosim results of {results.metadata.get('system', {}).get('name', 'a run')}"
    return ds


def write_netcdf(results: Results, path: Path) -> Path:
    """netCDF-4 (HDF5) file through xarray and h5netcdf (module docstring)."""
    try:
        ds = to_xarray(results)
    except ImportError:
        raise UsageError("--to netcdf needs xarray and h5netcdf: pip install 'marine-cosim[export]'") from None
    try:
        ds.to_netcdf(path, engine="h5netcdf")
    except (ImportError, ValueError) as exc:
        if "h5netcdf" in str(exc) or isinstance(exc, ImportError):
            raise UsageError("--to netcdf needs h5netcdf: pip install 'marine-cosim[export]'") from None
        raise
    return path
