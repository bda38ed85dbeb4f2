"""The moored barge: the supply vessel on four catenary chains (Cable FMUs) in waves and current
(docs/scenarios.md), with its static equilibrium and the quasi-static offset under the current."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from orchestration.runs.reference.lift import (CALM, G, RHO, SEA, _connect_vec, _hardpoint_pose, _vec,
                                               declare_unconnected_inputs, ship_equilibrium)
from orchestration.runs.reference.paths import DEFAULT_FMU_DIR

#: The bundled MSS supply vessel stands in for the barge (no barge data is bundled: docs/scenarios.md),
#: station keeping off, on four catenary chains in a symmetric spread: fairleads at the four
#: "corners" (+-35 m, +-8 m, at the waterline), lines 45 deg off the ship's axes.  Chain 76 mm
#: studless (MoorPy's rules: 0.0199 d^2 = 114.9 kg/m, volume diameter 1.8 d, EA 0.854e11 d^2 =
#: 4.93e8 N), 300 m long in 30 elements, in 50 m of water; anchors placed for 150 kN of horizontal
#: pretension (199 kN at the fairlead).  Current 1 m/s towards 60 deg at the surface (1/7
#: power profile on the chains; the Ship feels it through its linear viscous damping), waves SEA.
WATER_DEPTH = 50.0
CHAIN = {"diameter": 1.8 * 0.076, "mass_per_length": 0.0199 * 76.0 ** 2, "EA": 0.854e11 * 0.076 ** 2,
         "damping": -1.0, "drag_normal": 1.37, "drag_tangential": 0.64, "added_mass_normal": 1.0,
         "water_density": RHO, "gravity": G, "seabed.depth": WATER_DEPTH, "seabed.friction": 0.5,
         "n_segments": 30, "length": 300.0, "current.profile_exponent": 1.0 / 7.0}
CHAIN_WEIGHT_WATER = (CHAIN["mass_per_length"] - RHO * math.pi * CHAIN["diameter"] ** 2 / 4) * G
FAIRLEADS = ((35.0, 8.0, 0.0), (35.0, -8.0, 0.0), (-35.0, -8.0, 0.0), (-35.0, 8.0, 0.0))   # body frame
LINE_HEADINGS = (45.0, -45.0, -135.0, 135.0)          # deg from north, ship heading north
PRETENSION_H = 150e3
CURRENT = (round(math.cos(math.radians(60.0)), 6), round(math.sin(math.radians(60.0)), 6), 0.0)
MOORING_EVENTS = {"end": 400.0}
BARGE_STEP = 0.05


def anchor_span(H: float = PRETENSION_H) -> float:
    """Horizontal fairlead-anchor distance that gives the chain horizontal tension ``H`` at rest."""
    from scipy.optimize import brentq

    from components.catenary import solve_catenary

    L, w, EA = CHAIN["length"], CHAIN_WEIGHT_WATER, CHAIN["EA"]
    f = lambda x: solve_catenary(x, WATER_DEPTH, L, w, EA, CHAIN["seabed.friction"]).H - H
    return float(brentq(f, 0.6 * L, L * 1.05))


def mooring_layout(span: float | None = None, ship=(0.0, 0.0, 0.0)):
    """Anchors (NED) and fairleads (NED at the given ship heave, roll, pitch) of the four lines."""
    span = anchor_span() if span is None else span
    anchors, fairleads = [], []
    for r, heading in zip(FAIRLEADS, LINE_HEADINGS):
        p, _ = _hardpoint_pose(ship[0], ship[1], ship[2], r)
        a = math.radians(heading)
        fairleads.append(p)
        anchors.append(np.array([r[0] + span * math.cos(a), r[1] + span * math.sin(a), WATER_DEPTH]))
    return anchors, fairleads


def catenary_fairlead_force(anchor, fairlead):
    """Static force of one chain on its fairlead (NED), from the elastic catenary with seabed friction."""
    from components.catenary import solve_catenary

    d = np.asarray(fairlead, float) - np.asarray(anchor, float)
    span = float(np.hypot(d[0], d[1]))
    res = solve_catenary(span, -d[2], CHAIN["length"], CHAIN_WEIGHT_WATER, CHAIN["EA"], CHAIN["seabed.friction"])
    e = d[:2] / span
    return np.array([-res.H * e[0], -res.H * e[1], res.V_fairlead]), res


def barge_equilibrium(span: float | None = None):
    """Heave, roll, pitch of the moored vessel at rest (calm, no current) under the chains' weight."""
    z = roll = pitch = 0.0
    for _ in range(50):
        anchors, fairleads = mooring_layout(span, (z, roll, pitch))
        loads = [(r, np.concatenate([catenary_fairlead_force(a, f)[0], np.zeros(3)]))
                 for r, a, f in zip(FAIRLEADS, anchors, fairleads)]
        new = ship_equilibrium(loads)
        done = max(abs(a - b) for a, b in zip(new, (z, roll, pitch))) < 1e-12
        z, roll, pitch = new
        if done:
            break
    return z, roll, pitch


def moored_barge_system(fmu_dir: Path = DEFAULT_FMU_DIR, sea: dict | None = None, current=CURRENT,
                        stop: float = MOORING_EVENTS["end"], step: float = BARGE_STEP, chain_waves: bool = True):
    from orchestration.system.model import Component, System

    sea = SEA if sea is None else sea
    span = anchor_span()
    z, roll, pitch = barge_equilibrium(span)
    anchors, _ = mooring_layout(span)
    s = System("moored_barge", start_time=0.0, stop_time=stop, base_step=step, algorithm="fixed",
               algorithm_options={"method": "gauss-seidel"})
    # lines before the barge in the Gauss-Seidel order: each chain steps from the fairlead's motion
    # at the start of the step, the barge then takes the new fairlead forces
    for k, anchor in enumerate(anchors, start=1):
        s.add_component(Component(f"line{k}", Path(fmu_dir) / "Cable.fmu", {
            **CHAIN, **(sea if chain_waves else CALM), **_vec("end_a.position", anchor),
            **_vec("current.velocity", current)}))
    barge = {**sea, "initial.position[2]": z, "initial.euler[0]": roll, "initial.euler[1]": pitch,
             **_vec("station_keeping.period", (0.0, 0.0, 0.0)), **_vec("current.velocity", current)}
    for k, r in enumerate(FAIRLEADS, start=1):
        barge.update(_vec(f"hardpoint{k}.location", r))
    s.add_component(Component("barge", Path(fmu_dir) / "Ship.fmu", barge))
    for k in range(1, 5):
        _connect_vec(s, f"barge.hardpoint{k}.position", f"line{k}.end_b.position")
        _connect_vec(s, f"barge.hardpoint{k}.velocity", f"line{k}.end_b.velocity", bond=f"fairlead{k}")
        _connect_vec(s, f"line{k}.end_b.force", f"barge.hardpoint{k}.force", bond=f"fairlead{k}")
    declare_unconnected_inputs(s)
    return s


def mooring_offset(current=CURRENT, span: float | None = None):
    """Quasi-static mean offset (north, east) of the moored vessel under the current: the Ship's
    current load (its linear viscous damping times the current, surge and sway) balanced by the
    four catenaries; Newton on the horizontal offset, heave/roll/pitch at rest."""
    from components.vessel_data import default_vessel_path, load_vessel
    from components.radiation import fit_radiation
    from fmus.ship import _viscous_diagonal

    vessel = load_vessel(default_vessel_path())
    rad = fit_radiation(vessel.omega, vessel.added_mass, vessel.damping, max_order=4)
    b = _viscous_diagonal(vessel, vessel.MRB + rad.A_inf)
    load = np.array([b[0] * current[0], b[1] * current[1]])
    span = anchor_span() if span is None else span
    z, roll, pitch = barge_equilibrium(span)
    anchors, fair0 = mooring_layout(span, (z, roll, pitch))

    def residual(x):
        total = load.copy()
        for a, f in zip(anchors, fair0):
            total += catenary_fairlead_force(a, f + np.array([x[0], x[1], 0.0]))[0][:2]
        return total

    x = np.zeros(2)
    for _ in range(30):
        r = residual(x)
        J = np.column_stack([(residual(x + d) - r) / 1e-3 for d in (np.array([1e-3, 0]), np.array([0, 1e-3]))])
        dx = np.linalg.solve(J, -r)
        x += dx
        if np.max(np.abs(dx)) < 1e-8:
            break
    return x, load


def moored_barge_events() -> dict:
    return {"description": "Moored barge (issue 11): four catenary chains in waves (JONSWAP Hs 2.5 m, Tp 8 s) and a "
                           "1 m/s current. No events: the run starts at rest on the pretensioned lines.",
            "end": MOORING_EVENTS["end"], "events": []}
