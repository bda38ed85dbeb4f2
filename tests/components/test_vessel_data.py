"""components/vessel_data.py: MSS reader, neutral NetCDF format, Capytaine import, validation.

Reference figures: ../shared/reference/anchors_marine.md (MSS supply: Lpp 82.8 m,
m 6.362e6 kg, GM_T 2.144 m; decoupled natural periods heave 6.36 s, roll 10.86 s,
pitch 6.04 s; s175 7.45 / 18.16 / 7.13 s) and ship_crane_digest.md (B2: static
sinkage 0.0705 m per 100 t, heel 2.1 deg per 100 t at 5 m).
"""
from __future__ import annotations

import math
from dataclasses import fields, replace
from pathlib import Path

import numpy as np
import pytest

from components import vessel_data as vd

ROOT = Path(__file__).resolve().parents[2]
# shared/ sits beside the checkout (CI: a fresh clone with shared/ next to it)
DATA = next((d for d in (ROOT.parent / "shared" / "data" / "vessels", Path("/work/shared/data/vessels"))
             if (d / "supply.mat").exists()), Path("/work/shared/data/vessels"))
SUPPLY = DATA / "supply.mat"
S175 = DATA / "s175.mat"

needs_data = pytest.mark.skipif(not SUPPLY.exists(), reason="MSS data not present")


def assert_same(a: vd.VesselData, b: vd.VesselData) -> None:
    """Every field bit-for-bit equal, but the RAO phases: those come from arctan2 in the MSS reader,
    which numpy computes with SIMD kernels whose last bit depends on the numpy build and the processor
    (1 ulp, 4.4e-16 rad, on 470 of the supply vessel's 7776 force-RAO phases with numpy 2.4 against
    the bundled file): equal within 4 ulp of pi."""
    for f in fields(vd.VesselData):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            assert x is not None and y is not None, f.name
            assert x.dtype == y.dtype == np.float64, f.name
            if f.name.endswith("_phase"):
                assert np.allclose(x, y, rtol=0.0, atol=4 * np.spacing(np.pi)), f.name
            else:
                assert np.array_equal(x, y), f.name
        else:
            assert x == y, f.name


@pytest.fixture(scope="module")
def supply() -> vd.VesselData:
    if not SUPPLY.exists():
        pytest.skip("MSS data not present")
    return vd.read_mss(SUPPLY)


@pytest.fixture(scope="module")
def s175() -> vd.VesselData:
    if not S175.exists():
        pytest.skip("MSS data not present")
    return vd.read_mss(S175)


# ----------------------------------------------------------------------------- MSS


def test_read_supply(supply):
    v = supply
    assert v.name == "supply"
    assert v.omega.shape == (36,) and v.rao_headings.shape == (36,)
    assert v.added_mass.shape == v.damping.shape == v.viscous_damping.shape == (6, 6, 36)
    assert v.restoring.shape == v.MRB.shape == (6, 6)
    assert v.force_rao_amp.shape == v.force_rao_phase.shape == (6, 36, 36)
    assert v.motion_rao_amp.shape == v.motion_rao_phase.shape == (6, 36, 36)
    assert v.mass == pytest.approx(6.362e6, rel=1e-3)
    assert v.rho == 1025.0 and v.g == pytest.approx(9.81, rel=1e-6)
    assert np.array_equal(v.MRB, v.MRB.T)
    np.testing.assert_allclose(v.cg, [-5.386, 0.0, -1.3], atol=1e-3)
    # legacy MSS main.CG = [x_g, 0, KG]: KG = T - z_g when CO is in the waterline
    assert v.particulars["T"] - v.cg[2] == pytest.approx(7.3, abs=1e-3)
    assert v.particulars["Lpp"] == pytest.approx(82.8, rel=1e-6)
    assert v.particulars["GM_T"] == pytest.approx(2.144)
    assert v.particulars["speed"] == 0.0
    assert np.all(np.diff(v.omega) > 0) and v.omega[0] > 0
    np.testing.assert_allclose(np.degrees(v.rao_headings), np.arange(0, 360, 10), atol=1e-9)
    assert np.all(np.abs(v.force_rao_phase) <= math.pi)
    assert "midships" in v.reference and "MIT" in v.source
    assert vd.validate_vessel(v) == []


def test_supply_hydrostatics(supply, validation):
    v = supply
    C33, C44 = v.restoring[2, 2], v.restoring[3, 3]
    p = v.particulars
    # C33 = rho g A_wp with a waterplane coefficient A_wp / (Lpp B) of a ship, 0.7..1
    cw = C33 / (v.rho * v.g * p["Lpp"] * p["B"])
    assert 0.7 < cw < 1.0, cw
    validation.record(case="supply vessel: sinkage per 100 t from C33", reference=0.0705, ours=100e3 * 9.81 / C33,
                      tolerance=0.01, unit="m", source="ship_crane_digest.md 7.5 B2")
    validation.record(case="supply vessel: heel per 100 t at 5 m from C44", reference=2.1,
                      ours=math.degrees(100e3 * 9.81 * 5.0 / C44), tolerance=0.03, unit="deg",
                      source="ship_crane_digest.md 7.5 B2")
    # static sinkage for 100 t at the CG: 0.0705 m (digest B2), within 1 %
    assert 100e3 * 9.81 / C33 == pytest.approx(0.0705, rel=0.01)
    # heel for 100 t at 5 m: 2.1 deg, within 3 %
    assert math.degrees(100e3 * 9.81 * 5.0 / C44) == pytest.approx(2.1, rel=0.03)
    # C44 = rho g nabla GM_T
    assert C44 == pytest.approx(v.rho * v.g * p["nabla"] * p["GM_T"], rel=1e-3)


def _natural_periods(v: vd.VesselData) -> list[float]:
    """Decoupled, iterated T_i = 2 pi sqrt((MRB_ii + A_ii(w)) / C_ii), i = heave, roll, pitch."""
    out = []
    for i in (2, 3, 4):
        w = 1.0
        for _ in range(200):
            w = math.sqrt(v.restoring[i, i] / (v.MRB[i, i] + np.interp(w, v.omega, v.added_mass[i, i])))
        out.append(2 * math.pi / w)
    return out


def test_natural_periods(supply, s175, validation):
    for v, ref in ((supply, [6.36, 10.86, 6.04]), (s175, [7.45, 18.16, 7.13])):
        validation.record(case=f"{v.name}: natural periods heave, roll, pitch (decoupled, from A(w))", reference=ref,
                          ours=_natural_periods(v),
                          error=float(np.max(np.abs(np.array(_natural_periods(v)) / ref - 1))),
                          tolerance=0.01, unit="s", source="anchors_marine.md")
    np.testing.assert_allclose(_natural_periods(supply), [6.36, 10.86, 6.04], rtol=0.01)
    np.testing.assert_allclose(_natural_periods(s175), [7.45, 18.16, 7.13], rtol=0.01)


def _eom_motion_error(v: vd.VesselData) -> np.ndarray:
    """Max error of heave (m/m) and pitch (per wave slope k) from the equation of motion
    [-w^2 (MRB + A) + i w (B + Bv) + C] x = F against the stored motion RAOs."""
    F, X = v.force_rao(), v.motion_rao()
    err = np.zeros(2)
    for wi in range(2, 34):
        w = v.omega[wi]
        k = w**2 / v.g
        Z = (-w**2 * (v.MRB + v.added_mass[:, :, wi])
             + 1j * w * (v.damping[:, :, wi] + v.viscous_damping[:, :, wi]) + v.restoring)
        for bi in range(0, 19):
            x = np.linalg.solve(Z, F[:, wi, bi])
            err = np.maximum(err, np.abs(x[[2, 4]] - X[[2, 4], wi, bi]) / [1.0, k])
    return err


def test_raos_moved_to_co_agree_with_equation_of_motion(supply, s175):
    """The file's RAOs refer to P = (x_g, 0, 0); moved to CO they satisfy the EOM about CO."""
    assert np.all(_eom_motion_error(supply) < 0.01)
    assert np.all(_eom_motion_error(s175) < 0.01)
    # taken as if they were about CO, they do not (heave 0.1+, pitch 200x the wave slope)
    raw = vd.read_mss(SUPPLY, rao_origin=(0.0, 0.0, 0.0))
    assert np.all(_eom_motion_error(raw) > 0.1)


def test_supply_wave_conventions(supply):
    """Low-frequency phases fix the heading / phase convention (module docstring)."""
    ph = np.degrees(supply.force_rao_phase[:, 0, :])   # lowest frequency
    mo = np.degrees(supply.motion_rao_phase[:, 0, :])
    assert ph[0, 0] == pytest.approx(90, abs=2)      # beta = 0, waves along +x: surge force leads 90
    assert ph[0, 18] == pytest.approx(-90, abs=2)    # head sea
    assert ph[1, 9] == pytest.approx(90, abs=2)      # beta = 90: waves travel to +y (starboard)
    assert abs(ph[2, 9]) == pytest.approx(180, abs=2)  # heave force (z down) opposes the crest
    assert mo[1, 9] == pytest.approx(-90, abs=2)     # sway displacement follows the orbit
    assert mo[4, 0] == pytest.approx(-90, abs=2)     # pitch = wave slope, bow up after the crest
    assert abs(mo[2, 9]) == pytest.approx(180, abs=1)  # heave = -zeta (z down)
    # rotational motion RAOs are in rad/m: pitch -> k at low frequency in head seas
    k0 = supply.omega[0] ** 2 / supply.g
    assert supply.motion_rao_amp[4, 0, 18] == pytest.approx(k0, rel=0.05)


def test_read_s175(s175):
    v = s175
    assert v.mass == pytest.approx(2.461e7, rel=1e-3)
    assert v.added_mass.shape == (6, 6, 36) and v.force_rao_amp.shape == (6, 36, 36)
    assert v.particulars["speed"] == 0.0
    np.testing.assert_allclose(v.cg, [-2.5475, 0.0, 0.0], atol=1e-3)
    assert vd.validate_vessel(v) == []
    fast = vd.read_mss(S175, velocity_index=2)
    assert fast.particulars["speed"] == pytest.approx(5.1444, abs=1e-3)
    assert not np.array_equal(fast.added_mass, v.added_mass)
    with pytest.raises(ValueError):
        vd.read_mss(S175, velocity_index=5)


# ----------------------------------------------------------------------------- NetCDF


def test_netcdf_round_trip_exact(supply, tmp_path):
    assert_same(vd.read_netcdf(vd.write_netcdf(supply, tmp_path / "s.nc")), supply)
    lean = replace(supply, viscous_damping=None, motion_rao_amp=None, motion_rao_phase=None,
                   particulars={}, name="lean é", source="unicode text: zeta, é")
    back = vd.read_netcdf(vd.write_netcdf(lean, tmp_path / "lean.nc"))
    assert_same(back, lean)


def test_netcdf_is_plain_netcdf3(supply, tmp_path):
    path = vd.write_netcdf(supply, tmp_path / "s.nc")
    assert path.read_bytes()[:4] == b"CDF\x01"
    xr = pytest.importorskip("xarray")
    with xr.open_dataset(path) as ds:
        assert ds.attrs["conventions"] == "marine-cosim vessel 1.0"
        assert ds["added_mass"].dims == ("dof", "dof_j", "omega")
        assert ds["force_rao_amplitude"].dims == ("dof", "omega", "heading")
        assert ds["omega"].attrs["units"] == "rad s-1"
        assert float(ds["mass"]) == supply.mass
        assert ds.attrs["particular_GM_T"] == 2.144
        np.testing.assert_array_equal(ds["MRB"].values, supply.MRB)


def test_read_netcdf_rejects_other_files(tmp_path):
    from scipy.io import netcdf_file

    p = tmp_path / "other.nc"
    with netcdf_file(str(p), "w") as f:
        f.title = b"something else"
    with pytest.raises(ValueError, match="not a marine-cosim vessel"):
        vd.read_netcdf(p)


@needs_data
def test_bundled_supply_equals_mss(supply):
    path = vd.default_vessel_path()
    assert path.name == "supply.nc" and path.exists()
    assert (path.parent / "LICENSE-MSS.txt").read_text().startswith("MIT License")
    assert_same(vd.read_netcdf(path), supply)
    assert_same(vd.load_vessel(path), supply)
    assert_same(vd.load_vessel(SUPPLY), supply)
    with pytest.raises(ValueError):
        vd.load_vessel(path.with_suffix(".txt"))


def test_bundled_supply_without_mss_data():
    v = vd.load_vessel(vd.default_vessel_path())
    assert v.name == "supply" and vd.validate_vessel(v) == []
    np.testing.assert_allclose(v.cg, [-5.386, 0.0, -1.3], atol=1e-3)


# ----------------------------------------------------------------------------- Capytaine

_T = {"forward-port-up": np.array([1.0, -1, -1, 1, -1, -1]),
      "aft-starboard-up": np.array([-1.0, 1, -1, -1, 1, -1])}
_CPT_DOFS = ["Surge", "Sway", "Heave", "Roll", "Pitch", "Yaw"]


def _to_capytaine_arrays(v: vd.VesselData, axes: str, rc: np.ndarray):
    """Our VesselData -> Capytaine-convention arrays (the inverse of from_capytaine's documented rules)."""
    T = _T[axes]
    TT = np.outer(T, T)
    beta_cpt = np.mod(-v.rao_headings if axes == "forward-port-up" else math.pi - v.rao_headings,
                      2 * math.pi)
    order = np.argsort(beta_cpt)
    beta_cpt = beta_cpt[order]
    k = v.omega**2 / v.g
    # phases relative to the wave at the mesh origin instead of the rotation centre rc
    shift = np.exp(-1j * k[:, None] * (rc[0] * np.cos(beta_cpt) + rc[1] * np.sin(beta_cpt))[None, :])

    def rao(H):                                 # (6, Nw, Nb) -> (Nw, Nb_cpt, 6)
        H = H[:, :, order] * shift[None] * T[:, None, None]
        return np.conj(np.transpose(H, (1, 2, 0)))

    def rad(M):                                 # (i, j, Nw) -> (Nw, radiating j, influenced i)
        return np.transpose(M * TT[:, :, None], (2, 1, 0))

    return dict(beta=beta_cpt, A=rad(v.added_mass), B=rad(v.damping), F=rao(v.force_rao()),
                X=None if v.motion_rao() is None else rao(v.motion_rao()), M=v.MRB * TT, C=v.restoring * TT,
                cg=_T[axes][0:3] * v.cg + rc)


class _Array:
    def __init__(self, dims, values):
        self.dims, self.values = tuple(dims), np.asarray(values)


class _DuckDataset:
    """The minimum from_capytaine needs: .coords[name], [var].dims/.values, .data_vars."""

    def __init__(self, coords, variables):
        self.coords = {k: _Array((k,), v) for k, v in coords.items()}
        self._vars = {k: _Array(*dv) for k, dv in variables.items()}
        self.data_vars = list(self._vars)
        self.attrs = {"body_name": "supply"}

    def __getitem__(self, key):
        return self._vars[key]


def _compare(got: vd.VesselData, want: vd.VesselData, motion: bool = True) -> None:
    np.testing.assert_allclose(got.omega, want.omega, rtol=0, atol=0)
    np.testing.assert_allclose(got.rao_headings, want.rao_headings, rtol=0, atol=1e-12)
    for name in ("MRB", "added_mass", "damping", "restoring"):
        np.testing.assert_allclose(getattr(got, name), getattr(want, name), rtol=1e-14, err_msg=name)
    np.testing.assert_allclose(got.cg, want.cg, atol=1e-12)
    assert got.mass == want.mass and got.rho == want.rho and got.g == want.g
    scale = np.max(np.abs(want.force_rao()), axis=(1, 2), keepdims=True)
    assert np.max(np.abs(got.force_rao() - want.force_rao()) / scale) < 1e-12
    if motion:
        scale = np.max(np.abs(want.motion_rao()), axis=(1, 2), keepdims=True)
        assert np.max(np.abs(got.motion_rao() - want.motion_rao()) / scale) < 1e-12
    assert vd.validate_vessel(got) == []


@pytest.mark.parametrize("axes", ["forward-port-up", "aft-starboard-up"])
@pytest.mark.parametrize("rc", [(0.0, 0.0, 0.0), (12.0, -3.0, 1.5)])
def test_from_capytaine_duck_typed(supply, axes, rc):
    """Supply -> Capytaine-convention dataset (no xarray) -> from_capytaine -> same numbers."""
    v = replace(supply, viscous_damping=None)
    # an asymmetric entry checks the radiating/influenced orientation: A[1,3] != A[3,1]
    A = v.added_mass.copy()
    A[1, 3, :] *= 1.01
    v = replace(v, added_mass=A)
    rc = np.array(rc)
    c = _to_capytaine_arrays(v, axes, rc)
    ds = _DuckDataset(
        coords={"omega": v.omega, "wave_direction": c["beta"], "radiating_dof": _CPT_DOFS,
                "influenced_dof": _CPT_DOFS, "g": v.g, "rho": v.rho},
        variables={
            "added_mass": (("omega", "radiating_dof", "influenced_dof"), c["A"]),
            "radiation_damping": (("omega", "radiating_dof", "influenced_dof"), c["B"]),
            "excitation_force": (("omega", "wave_direction", "influenced_dof"), c["F"]),
            "RAO": (("omega", "wave_direction", "radiating_dof"), c["X"]),
            "inertia_matrix": (("influenced_dof", "radiating_dof"), c["M"]),
            "hydrostatic_stiffness": (("influenced_dof", "radiating_dof"), c["C"]),
        })
    got = vd.from_capytaine(ds, v.mass, c["cg"], rotation_center=rc, axes=axes)
    assert got.name == "supply" and got.viscous_damping is None
    _compare(got, v)
    assert got.added_mass[1, 3, 0] != got.added_mass[3, 1, 0]


def _xarray_dataset(v: vd.VesselData, xr, split_complex: bool, swap_to_period: bool = False):
    c = _to_capytaine_arrays(v, "forward-port-up", np.zeros(3))
    ds = xr.Dataset(
        {
            "added_mass": (("omega", "radiating_dof", "influenced_dof"), c["A"]),
            "radiation_damping": (("omega", "radiating_dof", "influenced_dof"), c["B"]),
            # Capytaine >= 2 also stores the two parts; their sum is excitation_force
            "Froude_Krylov_force": (("omega", "wave_direction", "influenced_dof"), 0.25 * c["F"]),
            "diffraction_force": (("omega", "wave_direction", "influenced_dof"), 0.75 * c["F"]),
            "inertia_matrix": (("influenced_dof", "radiating_dof"), c["M"]),
            "hydrostatic_stiffness": (("influenced_dof", "radiating_dof"), c["C"]),
        },
        coords={"omega": v.omega, "wave_direction": c["beta"],
                "radiating_dof": _CPT_DOFS, "influenced_dof": _CPT_DOFS,
                "g": v.g, "rho": v.rho, "water_depth": np.inf, "body_name": "supply"},
    )
    ds = ds.isel(omega=slice(None, None, -1))          # unsorted frequencies are accepted
    if swap_to_period:
        ds = ds.assign_coords(period=("omega", 2 * np.pi / ds.omega.values)).swap_dims({"omega": "period"})
    if split_complex:                                   # capytaine.io.xarray.separate_complex_values
        for name in list(ds.data_vars):
            if np.iscomplexobj(ds[name].values):
                da = ds[name]
                ds[name] = xr.DataArray(np.asarray((da.values.real, da.values.imag)),
                                        dims=("complex",) + da.dims)
        ds = ds.assign_coords(complex=["re", "im"])
    return ds, c


def test_from_capytaine_xarray_and_netcdf_path(supply, tmp_path):
    xr = pytest.importorskip("xarray")
    v = replace(supply, viscous_damping=None, motion_rao_amp=None, motion_rao_phase=None)
    ds, c = _xarray_dataset(v, xr, split_complex=False, swap_to_period=True)
    _compare(vd.from_capytaine(ds, v.mass, c["cg"]), v, motion=False)
    ds, c = _xarray_dataset(v, xr, split_complex=True)
    _compare(vd.from_capytaine(ds, v.mass, c["cg"]), v, motion=False)
    path = tmp_path / "capy.nc"
    ds.to_netcdf(path, engine="scipy")
    got = vd.from_capytaine(path, v.mass, c["cg"])
    _compare(got, v, motion=False)
    assert "capy.nc" in got.source
    # explicit matrices override the dataset's
    got = vd.from_capytaine(ds.drop_vars(["inertia_matrix", "hydrostatic_stiffness"]), v.mass,
                            c["cg"], inertia_matrix=c["M"], restoring=c["C"])
    _compare(got, v, motion=False)
    with pytest.raises(ValueError, match="inertia_matrix"):
        vd.from_capytaine(ds.drop_vars(["inertia_matrix"]), v.mass, c["cg"])


# ----------------------------------------------------------------------------- validation


def _fields_named(issues):
    return {field for field, _, _ in issues}


def test_validate_finds_problems(supply):
    A = supply.added_mass.copy()
    A[2, 2, 5] = np.nan
    issues = vd.validate_vessel(replace(supply, added_mass=A))
    assert _fields_named(issues) == {"added_mass"}
    assert issues[0][1] == (2, 2, 5) and "NaN" in issues[0][2]

    M = supply.MRB.copy()
    M[3, 5] *= 1.5
    issues = vd.validate_vessel(replace(supply, MRB=M))
    assert _fields_named(issues) == {"MRB"} and "symmetric" in issues[0][2]

    w = supply.omega.copy()
    w[[10, 11]] = w[[11, 10]]
    issues = vd.validate_vessel(replace(supply, omega=w))
    assert _fields_named(issues) == {"omega"} and "increasing" in issues[0][2]

    A = supply.added_mass.copy()
    A[1, 3, :] *= 3.0
    issues = vd.validate_vessel(replace(supply, added_mass=A))
    assert _fields_named(issues) == {"added_mass"} and "symmetric" in issues[0][2]

    issues = vd.validate_vessel(replace(supply, mass=-1.0))
    assert "mass" in _fields_named(issues)

    issues = vd.validate_vessel(replace(supply, cg=supply.cg + [1.0, 0, 0]))
    assert _fields_named(issues) == {"MRB"} and "cg" in issues[0][2]

    issues = vd.validate_vessel(replace(supply, force_rao_amp=supply.force_rao_amp[:, :, :-1]))
    assert _fields_named(issues) == {"force_rao_amp"}

    issues = vd.validate_vessel(replace(supply, motion_rao_amp=None))
    assert _fields_named(issues) == {"motion_rao_amp"}

    C = supply.restoring.copy()
    C[3, 3] = -1.0
    assert "restoring" in _fields_named(vd.validate_vessel(replace(supply, restoring=C)))


def test_validate_never_raises(supply):
    broken = replace(supply, omega="not an array", MRB=None, particulars=None, name=3)
    issues = vd.validate_vessel(broken)
    assert {"omega", "MRB", "particulars", "name"} <= _fields_named(issues)
