"""Results with units and every variable type (issue 27): the winch's Integer mode and Boolean brake
recorded by default; every N-th step recorded on request; the Parquet files opened in pandas, the
MATLAB file in scipy and the netCDF file in xarray show each column's unit and FMI type."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import scipy.io
import xarray as xr

from orchestration.cli.main import main
from orchestration.master.observers.results import load_results
from orchestration.runs.run import RunSettings, run
from orchestration.system.model import Component, System
from orchestration.system.ssp import write_ssp


@pytest.fixture
def winch_results(fmu_dir, tmp_path):
    """A winch alone for 1 s at 0.01 s steps, every 5th step recorded: paying out (mode 0), brake off."""
    s = System("winch_alone", stop_time=1.0, base_step=0.01)
    s.add_component(Component("winch", fmu_dir / "Winch.fmu", {"mode": 0, "speed_setpoint": 0.5, "brake": False,
                                                                "line.tension": 5.0e4, "initial_line_length": 20.0}))
    path = write_ssp(s, tmp_path / "winch.ssd")
    out = tmp_path / "run"
    run(RunSettings(system=str(path), out=str(out), record_every=5))
    return out


def test_every_type_is_recorded_with_its_unit_and_decimated(winch_results):
    r = load_results(winch_results)
    assert len(r.time) == 21 and np.allclose(np.diff(r.time), 0.05)       # start + every 5th of 100 steps
    assert r["winch.mode"].dtype == np.int64 and r["winch.brake.engaged"].dtype == np.bool_
    assert r["winch.payout.speed"].dtype == np.float64 and r["winch.payout.speed"][-1] > 0.0
    assert r.types["winch.mode"] == "Integer" and r.types["winch.motor.saturated"] == "Boolean"
    assert r.units["winch.payout.speed"] == "m/s" and r.units["winch.motor.power"] == "W"
    assert json.loads((winch_results / "metadata.json").read_text())["record_every"] == 5


def test_pandas_reads_units_and_types_from_the_parquet_files(winch_results):
    df = pd.read_parquet(winch_results / "results.parquet")
    assert df["winch.mode"].dtype == np.int64 and df["winch.brake"].dtype == bool
    assert df["winch.payout.line_length"].dtype == np.float64
    assert df.attrs["units"]["winch.payout.line_length"] == "m" and df.attrs["units"]["time"] == "s"
    assert df.attrs["types"]["winch.brake.engaged"] == "Boolean" and df.attrs["types"]["winch.mode"] == "Integer"
    schema = pq.read_schema(next((winch_results / "results.parquet").glob("part-*.parquet")))
    field = schema.field("winch.drum.speed")
    assert field.metadata[b"unit"] == b"rad/s" and field.metadata[b"fmi_type"] == b"Real"
    assert schema.field("winch.motor.saturated").metadata[b"fmi_type"] == b"Boolean"


def test_matlab_file_keeps_units_and_types(winch_results, capsys):
    assert main(["export", str(winch_results), "--to", "mat"]) == 0
    path = winch_results / "results.mat"
    assert capsys.readouterr().out.strip() == str(path)
    m = scipy.io.loadmat(path, simplify_cells=True)
    r = load_results(winch_results)
    assert np.array_equal(m["time"], r.time)
    w = m["signals"]["winch"]
    assert np.array_equal(w["payout_speed"], r["winch.payout.speed"]) and w["payout_speed"].dtype == np.float64
    assert w["mode"].dtype == np.int64 and list(w["mode"]) == [0] * 21
    assert w["brake_engaged"].dtype == np.uint8           # written as MATLAB logical, read back by scipy as uint8
    assert m["units"]["winch"]["payout_speed"] == "m/s" and m["types"]["winch"]["brake_engaged"] == "Boolean"
    assert m["types"]["winch"]["mode"] == "Integer"
    names = list(m["names"])
    assert m["fields"][names.index("winch.brake.engaged")] == "signals.winch.brake_engaged"
    assert json.loads(m["metadata"])["system"]["name"] == "winch_alone"


def test_vectors_become_matrices_and_strings_stay_text(tmp_path, fmu_dir):
    """A vector is an N x 3 matrix in MATLAB; a String (the ship's vessel file, asked for by name) is a
    cell array there, text in netCDF and pandas."""
    s = System("ship_alone", stop_time=0.2, base_step=0.1)
    s.add_component(Component("ship", fmu_dir / "Ship.fmu", {"sea.spectrum": 0}))
    run(RunSettings(system=str(write_ssp(s, tmp_path / "ship.ssd")), out=str(tmp_path / "r"),
                    variables=["ship.position[0]", "ship.position[1]", "ship.position[2]", "ship.wave.elevation",
                               "ship.vessel_file"]))
    assert main(["export", str(tmp_path / "r"), "--to", "mat"]) == 0
    m = scipy.io.loadmat(tmp_path / "r" / "results.mat", simplify_cells=True)
    assert m["signals"]["ship"]["position"].shape == (3, 3) and m["units"]["ship"]["position"] == "m"
    assert list(m["fields"]) == ["signals.ship.position(:,1)", "signals.ship.position(:,2)",
                                 "signals.ship.position(:,3)", "signals.ship.wave_elevation",
                                 "signals.ship.vessel_file"]
    assert m["types"]["ship"]["vessel_file"] == "String" and len(m["signals"]["ship"]["vessel_file"]) == 3
    assert all(np.size(cell) == 0 for cell in m["signals"]["ship"]["vessel_file"])       # '' as empty char arrays
    df = pd.read_parquet(tmp_path / "r" / "results.parquet")
    assert df.attrs["types"]["ship.vessel_file"] == "String" and df["ship.vessel_file"].tolist() == [""] * 3
    assert main(["export", str(tmp_path / "r"), "--to", "netcdf"]) == 0
    with xr.open_dataset(tmp_path / "r" / "results.nc", engine="h5netcdf") as ds:
        assert ds["ship.vessel_file"].attrs["fmi_type"] == "String" and ds["ship.position[2]"].attrs["units"] == "m"


def test_netcdf_file_keeps_units_and_types(winch_results, tmp_path):
    assert main(["export", str(winch_results), "--to", "netcdf", "--out", str(tmp_path / "w.nc")]) == 0
    with xr.open_dataset(tmp_path / "w.nc", engine="h5netcdf") as ds:
        r = load_results(winch_results)
        assert np.array_equal(ds["time"].values, r.time) and ds["time"].attrs["units"] == "s"
        assert ds["winch.brake.engaged"].dtype == bool and ds["winch.mode"].dtype == np.int64
        assert ds["winch.payout.speed"].attrs == {"units": "m/s", "fmi_type": "Real", "long_name": "winch.payout.speed"}
        assert ds["winch.motor.saturated"].attrs["fmi_type"] == "Boolean"
        assert np.array_equal(ds["winch.payout.speed"].values, r["winch.payout.speed"])
        assert json.loads(ds.attrs["marine_cosim"])["record_every"] == 5


def test_export_errors_are_one_line(tmp_path, capsys):
    assert main(["export", str(tmp_path), "--to", "mat"]) == 2
    assert "no results in" in capsys.readouterr().err
