"""The two ships of the ship swap made with other tool chains than ours (docs/ship_swap.md): the 6-DOF
Vessel6Dof (pythonfmu3, FMI 3.0, tests/models/fmi3/vessel_6dof.py) and the 3-DOF ManoeuvringShip1
(plain C, FMI 1.0, tests/models/c_fmu/manoeuvring_ship_fmi1.c). Their hull tables are the supply
vessel's (tests/models/c_fmu/third_party_ship_data.py), their statics are those of Ship.fmu's hull
(digest B2), and their conventions at the interface are what they document."""
from __future__ import annotations

import math
import shutil

import numpy as np
import pytest
from fmpy import read_model_description, simulate_fmu

from tests.models.c_fmu import third_party_ship_data as data

HERE_C = data.__file__.rsplit("/", 1)[0]


@pytest.fixture(scope="module")
def hull():
    return data.hull()


@pytest.fixture(scope="module")
def vessel(tmp_path_factory):
    from tests.models.fmi3.build import build_vessel_6dof_fmu

    return build_vessel_6dof_fmu(tmp_path_factory.mktemp("v6"))


@pytest.fixture(scope="module")
def manoeuvring(tmp_path_factory):
    if shutil.which("gcc") is None:
        pytest.skip("gcc is needed to build the C FMU")
    from tests.models.c_fmu.build_fmi1 import build_manoeuvring_ship_fmu

    return build_manoeuvring_ship_fmu(tmp_path_factory.mktemp("m3"))


def test_hull_tables_are_the_supply_vessels(hull):
    from pathlib import Path

    from tests.models.fmi3 import build as fmi3

    py = data.numbers(data.extract_block((fmi3.HERE / "vessel_6dof.py").read_text()))
    assert np.allclose(py, data.numbers(data.python_tables(hull)), rtol=1e-9, atol=1e-6) and len(py) == 45
    c = data.numbers(data.extract_block((Path(HERE_C) / "manoeuvring_ship_fmi1.c").read_text()))
    expected = data.numbers(data.manoeuvring_c_tables(hull))
    assert len(c) == len(expected) and np.allclose(c, expected, rtol=1e-9, atol=1e-6)


def test_vessel_6dof_interface(vessel):
    md = read_model_description(str(vessel))
    assert md.fmiVersion == "3.0"
    units = {v.name: v.unit for v in md.modelVariables}
    assert units["tau_Z"] == "kN" and units["tau_N"] == "kN.m" and units["eta_psi"] == "deg"
    assert units["nu_dot_r"] == "deg/s2"


@pytest.mark.slow
def test_vessel_6dof_statics_and_conventions(vessel, hull):
    """100 t down at its CG (tau_Z = -981 kN: z up) sinks it by the hydrostatics (C33, C35 about CO);
    a heeling moment to starboard (tau_K > 0, x forward) heels it to starboard (eta_phi > 0); the DP
    holds the heading it starts with (counter-clockwise from east, deg)."""
    weight = 100.0 * 9.81
    r = simulate_fmu(str(vessel), stop_time=120.0, step_size=0.05, output_interval=1.0,
                     start_values={"tau_Z": -weight, "initial.psi": -60.0, "damping.heave": 1.0,
                                   "damping.pitch": 1.0})
    C = np.array([[hull["c33"], hull["c35"]], [hull["c35"], hull["c55"]]])
    z_co, theta = np.linalg.solve(C, [weight * 1e3, -(hull["cg_x_rel_ap"] - hull["lpp"] / 2) * weight * 1e3])
    assert -r["eta_z"][-1] == pytest.approx(z_co - (hull["cg_x_rel_ap"] - hull["lpp"] / 2) * theta, rel=0.02)
    assert r["eta_psi"][-1] == pytest.approx(-60.0, abs=1e-6)
    heel = simulate_fmu(str(vessel), stop_time=60.0, step_size=0.05, output_interval=1.0,
                        start_values={"tau_K": weight * 5.0, "damping.roll": 1.0})
    expected = math.degrees(weight * 1e3 * 5.0 / hull["c44"])
    print(f"\nVessel6Dof: heel {heel['eta_phi'][-1]:.3f} deg per 100 t at 5 m (hydrostatics {expected:.3f})")
    assert heel["eta_phi"][-1] == pytest.approx(expected, rel=0.02)


def test_manoeuvring_ship_holds_station_against_a_force(manoeuvring, hull):
    """A constant sway force (starboard, N) moves it to starboard by F / k_DP, k_DP = m22 (2 pi / T)^2
    (less the coupling of the off-diagonal mass, which the spring does not see: 1 %), in NED at its
    heading; FMI 1.0, no heave, roll or pitch."""
    md = read_model_description(str(manoeuvring))
    assert md.fmiVersion == "1.0"
    assert not [v for v in md.modelVariables if v.name in ("z", "phi", "theta")]
    force, psi = 1.0e5, 0.5
    r = simulate_fmu(str(manoeuvring), stop_time=600.0, step_size=0.05, output_interval=5.0,
                     start_values={"tau_Y": force, "psi0": psi})
    m22 = np.asarray(hull["mass_cg"])[1, 1]
    k = m22 * (2 * math.pi / 120.0) ** 2
    offset = force / k
    assert r["y"][-1] == pytest.approx(offset * math.cos(psi), rel=0.05)
    assert r["x"][-1] == pytest.approx(-offset * math.sin(psi), rel=0.05)
