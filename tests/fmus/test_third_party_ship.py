"""The third-party ship FMU (tests/models/c_fmu/third_party_ship.c, OsvSeakeeper.fmu): a plain-C FMI 2.0
offshore supply vessel with OSP vessel-style names, kN and degrees and a z-up vessel frame, built
here with gcc. These tests pin its physics and its conventions, so that the ship swap
(tests/test_ship_swap.py, docs/ship_swap.md) is checked against a model that is right on its own.
"""
from __future__ import annotations

import math
import shutil
import zipfile

import numpy as np
import pytest
from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave
from fmpy.validation import validate_fmu

from orchestration import simulate
from orchestration.system.model import Component, System
from tests.models.c_fmu import third_party_ship_data as data
from tests.models.c_fmu.build import SHIP_SOURCE, build_third_party_ship_fmu

pytestmark = [pytest.mark.gcc,
              pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build the C FMU")]

POA = "additionalNedForce.pointOfAttackRel2APAndBL"
CALM_SETTLE = {"dampingRatio.heave": 0.7, "dampingRatio.roll": 0.7, "dampingRatio.pitch": 0.7}


@pytest.fixture(scope="module")
def ship_fmu(tmp_path_factory):
    return build_third_party_ship_fmu(tmp_path_factory.mktemp("osv"))


@pytest.fixture(scope="module")
def hull():
    return data.hull()


def run(fmu, start: dict, stop: float, variables: list[str], step: float = 0.05):
    s = System("osv")
    s.add_component(Component("ship", fmu, dict(start)))
    r = simulate(s, stop, step, variables=[f"ship.{v}" for v in variables])
    return {v: r[f"ship.{v}"] for v in variables} | {"time": r.time}


def test_archive_and_modelDescription(ship_fmu):
    with zipfile.ZipFile(ship_fmu) as zf:
        assert sorted(zf.namelist()) == ["binaries/linux64/OsvSeakeeper.so", "modelDescription.xml",
                                         "sources/third_party_ship.c"]
    assert validate_fmu(str(ship_fmu)) == []
    md = read_model_description(str(ship_fmu))
    units = {v.name: v.unit for v in md.modelVariables}
    # the conventions a user has to map: kN, kN.m, deg, a z-up vessel frame, AP/CL/BL points
    assert units["additionalNedForce.force.down"] == "kN"
    assert units["additionalNedForce.moment.north"] == "kN.m"
    assert units["cgShipMotion.angularDisplacement.pitch"] == "deg"
    assert units["cgShipMotion.angularVelocity.yaw"] == "deg/s"
    assert "UP" in next(v.description for v in md.modelVariables if v.name == "cgShipMotion.linearVelocity.heave")
    assert "BOW DOWN" in next(v.description for v in md.modelVariables if v.name == "initial.pitch")
    deps = {u.variable.name: sorted(d.name for d in u.dependencies) for u in md.outputs}
    assert deps["cgShipMotion.nedDisplacement.down"] == []
    assert deps["pointOfAttackMotion.nedDisplacement.down"] == [f"{POA}.{a}" for a in ("xpos", "ypos", "zpos")]
    assert len(deps["pointOfAttackMotion.nedAcceleration.down"]) == 9


def test_hull_tables_are_the_supply_vessels(hull):
    """The C file's tables are M_RB + A_inf of the MSS supply vessel moved to the CG (Ship.fmu's
    radiation fit) and its hydrostatics about CO (relative 1e-9: the fit moves in the last digits
    between numpy/scipy builds)."""
    in_c = data.numbers(data.extract_block(SHIP_SOURCE.read_text()))
    expected = data.numbers(data.c_tables(hull))
    assert len(in_c) == len(expected) == 47
    assert np.allclose(in_c, expected, rtol=1e-9, atol=1e-6)
    # the CG: 5.386 m aft of amidships, 1.3 m above the waterline of the 6 m draught
    assert hull["cg_x_rel_ap"] == pytest.approx(82.8 / 2 - 5.38592, abs=1e-4)
    assert hull["cg_z_rel_bl"] == pytest.approx(7.3, abs=1e-6)


def test_static_heel_and_sinkage_are_digest_B2(ship_fmu, hull):
    """100 t 5 m to starboard heels the ship 2.1 deg (starboard down: positive roll) and 100 t at the
    centre of flotation sinks it 0.0705 m (digest B2, as Ship.fmu); the load enters in kN and the
    point of attack in AP/CL/BL coordinates (y to port, so starboard is negative)."""
    weight_kn = 100.0 * 9.81
    x_cf = -hull["c35"] / hull["c33"]                          # centre of flotation, relative to CO
    heel = run(ship_fmu, {**CALM_SETTLE, "additionalNedForce.force.down": weight_kn, f"{POA}.ypos": -5.0}, 90.0,
               ["cgShipMotion.angularDisplacement.roll"])
    sink = run(ship_fmu, {**CALM_SETTLE, "additionalNedForce.force.down": weight_kn,
                          f"{POA}.xpos": hull["lpp"] / 2 + x_cf, f"{POA}.zpos": hull["draught"]}, 90.0,
               ["pointOfAttackMotion.nedDisplacement.down", "cgShipMotion.angularDisplacement.pitch"])
    # the point's position is relative to the CG's equilibrium: the waterline is 1.3 m below it
    point = sink["pointOfAttackMotion.nedDisplacement.down"]
    assert point[0] == pytest.approx(hull["cg_z_rel_bl"] - hull["draught"], abs=1e-9)
    print(f"\nOsvSeakeeper statics: heel {heel['cgShipMotion.angularDisplacement.roll'][-1]:.4f} deg per 100 t at "
          f"5 m, sinkage at the CF {point[-1] - point[0]:.5f} m per 100 t")
    assert heel["cgShipMotion.angularDisplacement.roll"][-1] == pytest.approx(2.1, abs=0.01)
    assert point[-1] - point[0] == pytest.approx(0.0705, abs=2e-4)
    assert abs(sink["cgShipMotion.angularDisplacement.pitch"][-1]) < 1e-3       # no trim at the CF


def test_signs_of_the_vessel_frame(ship_fmu, hull):
    """A load forward of the CF trims the bow down (pitch positive in the vendor's frame), the ship
    sinks (NED down grows, heave velocity negative: it is positive up), and a moment about north
    (starboard down in NED) rolls it positively."""
    r = run(ship_fmu, {"additionalNedForce.force.down": 500.0, f"{POA}.xpos": hull["lpp"] - 5.0,
                       "additionalNedForce.moment.north": 5000.0}, 1.5,
            ["cgShipMotion.angularDisplacement.pitch", "cgShipMotion.nedDisplacement.down",
             "cgShipMotion.linearVelocity.heave", "cgShipMotion.angularDisplacement.roll",
             "cgShipMotion.angularAcceleration.roll", "cgShipMotion.angularVelocity.pitch"])
    assert r["cgShipMotion.angularDisplacement.pitch"][-1] > 0.01
    assert r["cgShipMotion.angularVelocity.pitch"][-1] > 0.0
    assert r["cgShipMotion.nedDisplacement.down"][-1] > 1e-3
    assert r["cgShipMotion.linearVelocity.heave"][-1] < -1e-3
    assert r["cgShipMotion.angularDisplacement.roll"][-1] > 0.01
    assert r["cgShipMotion.angularAcceleration.roll"][0] > 0.0


def test_initial_displacement_and_equilibrium(ship_fmu):
    """initial.heave (up), initial.roll and initial.pitch (deg, bow down) displace the CG from the
    calm-water equilibrium (the earth frame's origin), and it comes back."""
    r = run(ship_fmu, {**CALM_SETTLE, "initial.heave": 0.2, "initial.roll": 3.0, "initial.pitch": -0.5}, 60.0,
            ["cgShipMotion.nedDisplacement.down", "cgShipMotion.angularDisplacement.roll",
             "cgShipMotion.angularDisplacement.pitch"])
    assert r["cgShipMotion.nedDisplacement.down"][0] == pytest.approx(-0.2)
    assert r["cgShipMotion.angularDisplacement.roll"][0] == pytest.approx(3.0)
    assert r["cgShipMotion.angularDisplacement.pitch"][0] == pytest.approx(-0.5)
    for k in ("cgShipMotion.nedDisplacement.down", "cgShipMotion.angularDisplacement.roll",
              "cgShipMotion.angularDisplacement.pitch"):
        assert abs(r[k][-1]) < 2e-3 * max(1.0, abs(r[k][0])), k


def test_long_wave_heave_follows_the_surface(ship_fmu, hull):
    """A 30 s regular wave (1400 m long, 17 x the ship) from the north: the ship heaves with the
    surface, attenuated by exp(-k T/2) of the Froude-Krylov pressure at half draught and amplified
    by 1/(1 - (w/w3)^2) below the heave resonance, in phase with the elevation (heave up = elevation
    up), and pitches with the wave slope (damping acts on the motion relative to the surface: on the
    absolute motion it lags the heave and the C35 coupling takes 30 % off the pitch)."""
    H, T = 2.0, 30.0
    r = run(ship_fmu, {"wave.height": H, "wave.period": T, "wave.direction": 0.0}, 240.0,
            ["waveElevation", "cgShipMotion.nedDisplacement.down", "cgShipMotion.angularDisplacement.pitch"])
    late = r["time"] > 120.0
    zeta, heave = r["waveElevation"][late], -r["cgShipMotion.nedDisplacement.down"][late]
    w = 2 * math.pi / T
    k = w * w / hull["g"]
    w3 = math.sqrt(hull["c33"] / hull["mass_cg"][2, 2])
    expected = H / 2 * math.exp(-k * hull["draught"] / 2) / (1 - (w / w3) ** 2)
    amp = 0.5 * (heave.max() - heave.min())
    print(f"\nOsvSeakeeper 30 s wave: heave amplitude {amp:.4f} m, quasi-static long-wave value {expected:.4f} m")
    assert amp == pytest.approx(expected, rel=0.02)
    assert np.corrcoef(zeta, heave)[0, 1] > 0.98
    pitch = r["cgShipMotion.angularDisplacement.pitch"][late]
    w5 = math.sqrt(hull["c55"] / hull["mass_cg"][4, 4])
    slope = H / 2 * k * math.exp(-k * hull["draught"] / 2) / (1 - (w / w5) ** 2)
    print(f"  pitch amplitude {0.5 * (pitch.max() - pitch.min()):.4f} deg, quasi-static slope "
          f"{math.degrees(slope):.4f} deg")
    assert 0.5 * (pitch.max() - pitch.min()) == pytest.approx(math.degrees(slope), rel=0.03)
    # waves from the north travel south: while the elevation at the CG rises, the crest is ahead of
    # the bow and lifts it, i.e. the pitch is negative in the vendor's bow-down frame
    assert np.corrcoef(pitch, np.gradient(zeta))[0, 1] < -0.98


def test_state_save_restore_and_serialization(ship_fmu, tmp_path):
    """The rollback algorithms need it: a saved (and a serialized) state gives the same step again."""
    md = read_model_description(str(ship_fmu))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    fmu = FMU2Slave(guid=md.guid, unzipDirectory=extract(str(ship_fmu), unzipdir=str(tmp_path)),
                    modelIdentifier="OsvSeakeeper", instanceName="s")
    fmu.instantiate()
    try:
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
        fmu.exitInitializationMode()
        fmu.setReal([vr["additionalNedForce.force.down"]], [2000.0])
        fmu.doStep(0.0, 0.5)
        state = fmu.getFMUstate()
        blob = fmu.serializeFMUstate(state)
        out = [vr["cgShipMotion.angularDisplacement.pitch"], vr["pointOfAttackMotion.nedAcceleration.down"]]
        fmu.doStep(0.5, 0.5)
        first = fmu.getReal(out)
        fmu.setFMUstate(state)
        fmu.doStep(0.5, 0.5)
        assert fmu.getReal(out) == first
        restored = fmu.deSerializeFMUstate(blob)
        fmu.setFMUstate(restored)
        fmu.doStep(0.5, 0.5)
        assert fmu.getReal(out) == first
        fmu.freeFMUstate(state)
        fmu.freeFMUstate(restored)
    finally:
        fmu.terminate()
        fmu.freeInstance()
