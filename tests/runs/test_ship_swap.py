"""Issue 21: third-party ships of three interface families replace Ship.fmu by editing only the system
file, with port adapters doing every conversion (docs/ship_swap.md, tests/models/ship_swap.py):

* OsvSeakeeper.fmu (plain C, FMI 2.0): OSP-IS vessel ports, kN, degrees, a z-up vessel frame, a point
  of attack (scenarios/offshore_lift/offshore_lift_third_party_ship.ssd; the small crane-on-ship system
  tests/data/systems/ship_crane_third_party_ship.ssd);
* Vessel6Dof.fmu (pythonfmu3, FMI 3.0): a generalised force at its CG, ENU and z up, Euler angles in
  degrees, kN; heading 150 deg, the lift turned with it (offshore_lift_6dof_ship.ssd);
* ManoeuvringShip1.fmu (plain C, FMI 1.0): 3-DOF surge, sway and yaw, with Ship.fmu kept for heave,
  roll and pitch (offshore_lift_manoeuvring_ship.ssd).

Checks: the committed variants are the swap applied to the originals and change nothing else; they
validate; each runs the lift and is compared with Ship.fmu (what differs and why is in each test);
the crane base of the 6-DOF ship is its pose at the hardpoint to 1e-9 m; the power through every
adapter is the same on both sides in the runs; the whole lift runs to its end with each ship.
"""
from __future__ import annotations

import math
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from orchestration import simulate
from orchestration.master.manipulators.scenario import load_scenario
from orchestration.system.files import load_system
from orchestration.system.validation import validate_system
from tests.models import ship_swap as swap

pytestmark = [pytest.mark.gcc,
              pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build the C FMUs")]

ROOT = Path(__file__).resolve().parents[2]
LIFT, SMALL = swap.LIFT, swap.SMALL
EVENTS = LIFT.with_name("events.yaml")
VARIANT = {name: swap.variant_path(LIFT, name) for name in swap.VARIANTS}
BASE = [f"crane.base.{v}[{i}]" for v in ("position", "velocity", "acceleration", "angular_velocity",
                                          "angular_acceleration") for i in range(3)] + \
       [f"crane.base.quaternion[{i}]" for i in range(4)]
LOADS = [f"crane.base.{w}[{i}]" for w in ("force", "moment") for i in range(3)]
LIFT_VARS = BASE + LOADS + ["cable.end_b.tension"] + [f"payload.position[{i}]" for i in range(3)]
MEASURED: dict[str, str] = {}
DEG = math.pi / 180.0


@pytest.fixture(scope="module", autouse=True)
def report():
    yield
    if MEASURED:
        print("\nShip swap, measured:")
        for k, v in MEASURED.items():
            print(f"  {k}: {v}")


@pytest.fixture(scope="module")
def fmus(fmu_dir, tmp_path_factory) -> Path:
    """One folder with this checkout's FMUs and the three third-party ships."""
    from tests.models.c_fmu.build import build_third_party_ship_fmu, build_third_party_ship_me_fmu
    from tests.models.c_fmu.build_fmi1 import build_manoeuvring_ship_fmu
    from tests.models.fmi3.build import build_vessel_6dof_fmu

    folder = tmp_path_factory.mktemp("swap_fmus")
    for fmu in Path(fmu_dir).glob("*.fmu"):
        (folder / fmu.name).symlink_to(fmu)
    build_third_party_ship_fmu(folder)
    build_third_party_ship_me_fmu(folder)
    build_manoeuvring_ship_fmu(folder)
    build_vessel_6dof_fmu(folder)
    return folder


def localized(path: Path, fmus: Path, folder: Path) -> Path:
    """``path`` with its FMU sources (build/fmus, relative) pointing into ``fmus`` and the other files
    it names (relative to ``path``: the mechanism, the scenario) absolute."""
    text = path.read_text()
    for prefix in ("../../../build/fmus/", "../../build/fmus/"):
        text = text.replace(f'source="{prefix}', f'source="{fmus}/')
    text = re.sub(r'(<ssv:String value=")([^"/]+\.json)"', lambda m: f'{m[1]}{path.parent / m[2]}"', text)
    text = re.sub(r'(<mc:Scenario source=")([^"/]+)"', lambda m: f'{m[1]}{path.parent / m[2]}"', text)
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / path.name
    out.write_text(text)
    return out


def load(path: Path, fmus: Path, folder: Path):
    return load_system(localized(path, fmus, folder))


def calm(system):
    """The same system in calm water (our Ship's sea off, the vendor's wave height 0)."""
    for comp in system.components.values():
        if comp.source is not None and Path(comp.source).name == "Ship.fmu":
            comp.parameters["sea.spectrum"] = 0
        if comp.source is not None and Path(comp.source).name == "OsvSeakeeper.fmu":
            comp.parameters["wave.height"] = 0.0
    return system


def run_lift(path: Path, fmus: Path, folder: Path, stop: float, variables, waves: bool = False):
    s = load(path, fmus, folder)
    return simulate(s if waves else calm(s), stop, None, method="gauss-seidel", variables=variables,
                    manipulators=[load_scenario(EVENTS)])


def vec(r, name: str, n: int = 3) -> np.ndarray:
    return np.column_stack([r[f"{name}[{i}]"] for i in range(n)])


def rot(axis: str, a: np.ndarray) -> np.ndarray:
    """Elementary rotations for an array of angles, written out here, independent of the adapters."""
    c, s, o, z = np.cos(a), np.sin(a), np.ones_like(a), np.zeros_like(a)
    m = {"x": [[o, z, z], [z, c, -s], [z, s, c]], "y": [[c, z, s], [z, o, z], [-s, z, c]],
         "z": [[c, -s, z], [s, c, z], [z, z, o]]}[axis]
    return np.moveaxis(np.array(m), -1, 0)


def quaternion_matrix(q: np.ndarray) -> np.ndarray:
    w, x, y, z = q.T
    return np.moveaxis(np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                                 [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                                 [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]), -1, 0)


# ---------------------------------------------------------------------- the files

@pytest.mark.parametrize("original, variant, folder", swap.COMMITTED,
                         ids=[f"{o.stem}-{v}" for o, v, _ in swap.COMMITTED])
def test_the_variants_are_the_swap_applied_to_the_originals(original, variant, folder, tmp_path):
    """The committed variant is what tests/models/ship_swap.py makes of the original now (if the
    original changes: ``python -m tests.models.ship_swap``)."""
    committed = swap.variant_path(original, variant)
    fresh = swap.swap_ssd(original, tmp_path / committed.name, variant, folder)
    assert fresh.read_text() == committed.read_text(), f"{committed} is stale: python -m tests.models.ship_swap"


@pytest.mark.parametrize("variant", list(swap.VARIANTS))
def test_only_the_ship_changes_and_the_variants_are_valid(variant, fmus, tmp_path):
    """Every component but the ship keeps its source, step and start values (the payload gets the
    mean free surface where no wave probe is left, and its start turned with a turned ship); every
    connection that does not touch the ship stays; the variant validates without unit, mapping or
    carrying warnings."""
    a = load(LIFT, fmus, tmp_path / "a")
    b = load(VARIANT[variant], fmus, tmp_path / "b")
    new = {"hull", "manoeuvring"} | ({"ship"} if variant != "manoeuvring" else set())
    assert set(b.components) - set(a.components) <= new
    for name in a.components:
        if name in new:
            continue
        ca, cb = a.components[name], b.components[name]
        assert ca.source == cb.source and ca.step_multiple == cb.step_multiple
        changed = {k for k in set(ca.parameters) | set(cb.parameters) if ca.parameters.get(k) != cb.parameters.get(k)}
        allowed = {("payload", "water.elevation")} if variant != "manoeuvring" else set()
        allowed |= {("payload", f"initial.position[{i}]") for i in range(2)} if variant == "six_dof" else set()
        allowed |= {("ship", f"hardpoint2.location[{i}]") for i in range(3)} if variant == "manoeuvring" else set()
        assert {(name, k) for k in changed} <= allowed, changed
    touches = lambda c: bool({c.source[0], c.target[0]} & (new | {"ship"}))
    keep = lambda s: sorted((c.label(), c.factor, c.offset) for c in s.connections if not touches(c))
    assert keep(a) == keep(b)
    assert all(c.is_identity for c in b.connections)          # the adapters do every conversion
    report = validate_system(b)
    assert report.ok, report
    assert not [p for p in report.warnings if "unit" in p.message or "carries" in p.message
                or "mapped incompletely" in p.message or "only in part" in p.message]
    # power bonds through the adapter (ECCO): the crane's load on the hull and the hull's on the ship
    assert not [p for p in report.warnings if "without a power bond" in p.message]
    bonds = {c.power_bond for c in b.connections if c.power_bond}
    assert {"crane_base", "crane_tip", "hook", "winch"} <= bonds
    assert bonds - {"crane_base", "crane_tip", "hook", "winch"} == (
        {"manoeuvring", "seakeeping"} if variant == "manoeuvring" else {"ship_base"})


# ---------------------------------------------------------------------- OSP-IS vessel (OsvSeakeeper)

@pytest.mark.slow
def test_the_osp_vessel_answers_the_crane_load_like_ours(fmus, tmp_path):
    """A level ship, the crane with 10 t on the hook: from t = 0 the crane's weight and load act. Both
    ships have the same M_RB + A_inf and hydrostatics, so the crane sees the same base acceleration at
    t = 0 (OsvSeakeeper's through the rigid_body adapter: kN, degrees, the z-up frame, its point of
    attack), and the same response while damping (fluid memory vs constant ratios) has not yet made a
    difference. Right sign: the ship sinks and heels to starboard."""
    variant = swap.variant_path(SMALL, "osp_vessel")
    ours = simulate(load(SMALL, fmus, tmp_path / "a"), 3.0, 0.05, method="gauss-seidel", variables=BASE + LOADS)
    theirs = simulate(load(variant, fmus, tmp_path / "b"), 3.0, 0.05, method="gauss-seidel", variables=BASE + LOADS)
    for name in [f"crane.base.{v}[{i}]" for v in ("acceleration", "angular_acceleration") for i in range(3)]:
        assert theirs[name][0] == pytest.approx(ours[name][0], rel=1e-6, abs=1e-9), name
    MEASURED["OSP vessel, t = 0 base acceleration (z), ours / swapped"] = \
        f"{ours['crane.base.acceleration[2]'][0]:.6e} / {theirs['crane.base.acceleration[2]'][0]:.6e} m/s2"
    early = ours.time <= 1.0
    worst = {n: float(np.max(np.abs(ours[n][early] - theirs[n][early])) / max(np.ptp(ours[n][early]), 1e-9))
             for n in BASE if "acceleration" not in n and "quaternion[0]" not in n}
    MEASURED["OSP vessel, first second: largest difference / excursion of ours"] = \
        f"{max(worst.values()):.3f} ({max(worst, key=worst.get)})"
    assert max(worst.values()) < 0.15      # measured <= 10 %: fluid memory vs constant damping ratios
    sink = [r["crane.base.position[2]"][-1] - r["crane.base.position[2]"][0] for r in (ours, theirs)]
    heel = [2 * math.degrees(math.asin(r["crane.base.quaternion[1]"][-1])) for r in (ours, theirs)]
    MEASURED["OSP vessel, at 3 s: hardpoint sinkage, heel (ours / swapped)"] = \
        f"{sink[0]:.4f} / {sink[1]:.4f} m, {heel[0]:.3f} / {heel[1]:.3f} deg"
    assert sink[0] > 0.05 and heel[0] > 1.0
    assert sink[1] == pytest.approx(sink[0], rel=0.1) and heel[1] == pytest.approx(heel[0], rel=0.1)


def lift_differences(ours, theirs, heading_deg: float = 0.0) -> dict[str, float]:
    """Differences of the lift in calm water, ours and swapped, the swapped turned back by its heading."""
    back = rot("z", np.full(len(ours.time), -math.radians(heading_deg)))
    turn = lambda r, name: np.einsum("nij,nj->ni", back, vec(r, name)) if heading_deg else vec(r, name)
    out = {}
    for name in ("crane.base.position", "payload.position"):
        d = np.abs(vec(ours, name) - turn(theirs, name))
        out[f"{name} north/east"] = float(np.max(d[:, :2]))
        out[f"{name} down"] = float(np.max(d[:, 2]))
    f_ours, f_theirs = vec(ours, "crane.base.force"), turn(theirs, "crane.base.force")
    m_ours, m_theirs = vec(ours, "crane.base.moment"), turn(theirs, "crane.base.moment")
    out["base force (relative)"] = float(np.max(np.abs(f_ours - f_theirs)) / np.max(np.abs(f_ours)))
    out["base moment (relative)"] = float(np.max(np.abs(m_ours - m_theirs)) / np.max(np.abs(m_ours)))
    out["wire tension (relative)"] = float(np.max(np.abs(ours["cable.end_b.tension"] - theirs["cable.end_b.tension"]))
                                           / np.max(ours["cable.end_b.tension"]))
    # heel and trim of the base in its own yaw frame
    tilt = lambda r, h: np.einsum("nij,njk->nik", rot("z", np.full(len(r.time), -math.radians(h))),
                                  quaternion_matrix(vec(r, "crane.base.quaternion", 4)))[:, 2, :2]
    out["base tilt (rad)"] = float(np.max(np.abs(tilt(ours, 0.0) - tilt(theirs, heading_deg))))
    return out


def _format(d: dict) -> str:
    return ", ".join(f"{k} {v:.2g}" for k, v in d.items())


@pytest.mark.slow
def test_the_osp_vessel_keeps_the_lift_in_balance(fmus, tmp_path):
    """Calm water, the lift at its static equilibrium (crane, hanging payload, the anti-heeling ballast
    at hardpoint 4 as the adapter's point 2): over 5 s OsvSeakeeper stays where Ship.fmu stays and
    crane, wire and payload balance the same loads. Expected differences: a tenth of a millimetre of
    heave (the same hydrostatics, the crane's load explicit instead of through the mass-aware
    interface) and centimetres in surge, growing: its buoyancy acts along its body z, so the weights
    on a trimmed hull leave W sin(trim) = 11 kN in surge until its station keeping holds it (Ship.fmu
    takes them in its seakeeping axes: docs/ship.md)."""
    ours = run_lift(LIFT, fmus, tmp_path / "a", 5.0, LIFT_VARS)
    theirs = run_lift(VARIANT["osp_vessel"], fmus, tmp_path / "b", 5.0, LIFT_VARS)
    d = lift_differences(ours, theirs)
    MEASURED["OSP vessel, lift 5 s calm: max |difference|"] = _format(d)
    assert d["crane.base.position down"] < 1e-3 and d["payload.position down"] < 1e-3
    assert d["crane.base.position north/east"] < 0.05
    assert d["base force (relative)"] < 1e-3 and d["wire tension (relative)"] < 1e-3
    assert d["base tilt (rad)"] < 1e-4


@pytest.mark.slow
def test_the_osp_vessel_exported_for_model_exchange_runs_the_lift_as_its_co_simulation_build(fmus, tmp_path):
    """The same vessel exported for model exchange only (OsvSeakeeperME.fmu: no CoSimulation
    interface, so the master integrates its 12 states, orchestration.master.model_exchange) in place of
    OsvSeakeeper.fmu, by the file name in the system file alone: 10 s of the lift in the vendor's
    regular wave agree with its co-simulation build (its own RK4 sub-steps) to 1e-8 m in the crane
    base's heave and the payload's depth and 1e-8 of the wire tension (measured 3.6e-10 m, 5.3e-10 m and
    2.0e-10 relative)."""
    runs = []
    for name in ("OsvSeakeeper.fmu", "OsvSeakeeperME.fmu"):
        s = load(VARIANT["osp_vessel"], fmus, tmp_path / name)
        hull = [c for c in s.components.values() if c.source is not None and Path(c.source).name == "OsvSeakeeper.fmu"]
        assert len(hull) == 1
        hull[0].source = fmus / name
        runs.append(simulate(s, 10.0, None, method="gauss-seidel", variables=LIFT_VARS,
                             manipulators=[load_scenario(EVENTS)]))
    cs, me = runs
    for name in ("crane.base.position[2]", "payload.position[2]"):
        assert np.max(np.abs(me[name] - cs[name])) < 1e-8, name
    tension = cs["cable.end_b.tension"]
    assert np.max(np.abs(me["cable.end_b.tension"] - tension)) < 1e-8 * np.max(np.abs(tension))
    assert np.max(np.abs(cs["crane.base.position[2]"] - cs["crane.base.position[2]"][0])) > 1e-3   # it moves


# ---------------------------------------------------------------------- 6-DOF, generalised force, z up

def six_dof_hardpoint_pose(r, system) -> tuple[np.ndarray, np.ndarray]:
    """The hardpoint's NED position and the body's attitude matrix (FRD -> NED) from Vessel6Dof's own
    outputs (ENU position of its CG, zyx Euler angles of FLU in ENU, deg), computed here with its
    documented conventions: x_NED = (y_ENU, x_ENU, -z_ENU), R = C R_ENU diag(1, -1, -1)."""
    hull = system.components["hull"].parameters
    origin = np.array([hull[f"origin[{i}]"] for i in range(3)])
    lever = np.array([hull[f"point1.lever[{i}]"] for i in range(3)])
    C = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]])
    phi, theta, psi = (np.radians(r[f"ship.eta_{a}"]) for a in ("phi", "theta", "psi"))
    R_enu = np.einsum("nij,njk,nkl->nil", rot("z", psi), rot("y", theta), rot("x", phi))
    R = np.einsum("ij,njk,kl->nil", C, R_enu, np.diag([1.0, -1.0, -1.0]))
    cg = origin + np.column_stack([r["ship.eta_y"], r["ship.eta_x"], -r["ship.eta_z"]])
    return cg + np.einsum("nij,j->ni", R, lever), R


SIX_DOF_VARS = [f"ship.eta_{a}" for a in ("x", "y", "z", "phi", "theta", "psi")]


def check_six_dof_pose(r, system) -> tuple[float, float, float]:
    """(largest position difference, largest attitude difference, smallest heading in deg) of the
    crane base against the ship's pose at the hardpoint, over the run."""
    p, R = six_dof_hardpoint_pose(r, system)
    dp = float(np.max(np.abs(vec(r, "crane.base.position") - p)))
    dR = float(np.max(np.abs(quaternion_matrix(vec(r, "crane.base.quaternion", 4)) - R)))
    heading = np.degrees(np.arctan2(R[:, 1, 0], R[:, 0, 0]))
    return dp, dR, float(np.min(np.abs(heading)))


@pytest.mark.slow
def test_the_6dof_ship_carries_the_crane_at_its_pose_at_any_heading(fmus, tmp_path):
    """Acceptance (issue 21): with the 6-DOF ship yawed 150 deg, the crane base pose equals the ship's
    pose at the hardpoint to 1e-9 m (computed here from its ENU position and Euler angles in degrees).
    And the lift, turned with it, balances as with Ship.fmu: the same hull, hydrostatics and
    ballast, so the same heave and tilt to a tenth of a millimetre; horizontally it drifts by
    centimetres as OsvSeakeeper does (buoyancy along its body z: W sin(trim) in surge until its DP
    holds it)."""
    system = load(VARIANT["six_dof"], fmus, tmp_path / "b")
    theirs = simulate(system, 5.0, None, method="gauss-seidel", variables=LIFT_VARS + SIX_DOF_VARS,
                      manipulators=[load_scenario(EVENTS)])
    dp, dR, heading = check_six_dof_pose(theirs, system)
    MEASURED["6-DOF ship, 5 s: crane base vs its pose at the hardpoint"] = \
        f"position {dp:.1e} m, attitude {dR:.1e}, heading >= {heading:.1f} deg"
    assert heading >= 45.0
    assert dp < 1e-9 and dR < 1e-12
    ours = run_lift(LIFT, fmus, tmp_path / "a", 5.0, LIFT_VARS)
    d = lift_differences(ours, theirs, swap.SIX_DOF_HEADING)
    MEASURED["6-DOF ship, lift 5 s calm (turned back by 150 deg): max |difference|"] = _format(d)
    assert d["crane.base.position down"] < 1e-3 and d["payload.position down"] < 1e-3
    assert d["crane.base.position north/east"] < 0.05 and d["base tilt (rad)"] < 1e-4
    assert d["base force (relative)"] < 1e-3 and d["wire tension (relative)"] < 1e-3


# ---------------------------------------------------------------------- 3-DOF manoeuvring + Ship.fmu

@pytest.mark.slow
def test_the_manoeuvring_ship_with_our_seakeeping_keeps_the_lift(fmus, tmp_path):
    """ManoeuvringShip1 gives surge, sway and yaw, Ship.fmu heave, roll and pitch, the crane's load
    split by generalised forces. In calm water the lift stays as with Ship.fmu alone: heave, roll and
    pitch are Ship.fmu's own; surge, sway and yaw come from a model with the same mass and station
    keeping. Expected differences: micrometres to a millimetre (the couplings between the two groups
    of DOF -- sway-roll added mass, the roll of a hardpoint 8 m above the waterline -- each model keeps
    only within itself; explicit coupling of the crane instead of the mass-aware interface)."""
    ours = run_lift(LIFT, fmus, tmp_path / "a", 5.0, LIFT_VARS)
    theirs = run_lift(VARIANT["manoeuvring"], fmus, tmp_path / "b", 5.0, LIFT_VARS)
    d = lift_differences(ours, theirs)
    MEASURED["manoeuvring + seakeeping, lift 5 s calm: max |difference|"] = _format(d)
    assert d["crane.base.position down"] < 1e-4 and d["crane.base.position north/east"] < 1e-3
    assert d["base tilt (rad)"] < 1e-5 and d["wire tension (relative)"] < 1e-4


# ---------------------------------------------------------------------- power through the adapters

def reference_power(variant: str, r, system) -> np.ndarray:
    """The power of the adapter's resultant at the other model's port, computed here from the recorded
    port values in that model's documented conventions (SI)."""
    f = lambda name: vec(r, f"hull.reference.{name}")
    if variant == "osp_vessel":      # NED velocity and load; body rates FLU in deg/s with NWU angles
        phi, theta, psi = (np.radians(r[f"hull.reference.euler[{i}]"]) for i in range(3))
        R_nwu = np.einsum("nij,njk,nkl->nil", rot("z", psi), rot("y", theta), rot("x", phi))
        D = np.diag([1.0, -1.0, -1.0])
        w = np.einsum("ij,njk,nk->ni", D, R_nwu, f("angular_velocity") * DEG)     # w_NED = D R_NWU w_FLU
        return 1e3 * np.einsum("ni,ni->n", f("force"), f("velocity")) + 1e3 * np.einsum("ni,ni->n", f("moment"), w)
    # Vessel6Dof: body FLU force and velocity, kN and kN.m, rates in deg/s
    return 1e3 * np.einsum("ni,ni->n", f("force"), f("velocity")) + 1e3 * DEG * np.einsum(
        "ni,ni->n", f("moment"), f("angular_velocity"))


@pytest.mark.slow
@pytest.mark.parametrize("variant", list(swap.VARIANTS))
def test_power_through_the_adapter_in_the_lift(variant, fmus, tmp_path):
    """At every communication point of the lift (2 s, the variant as written: in waves where it has
    them), the power of the loads at the adapter's points equals the power of what it gives the other
    model(s), to rounding: the adapter creates and loses no energy."""
    system = load(VARIANT[variant], fmus, tmp_path)
    n_points = int(system.components["hull"].parameters.get("points", 1))
    point = [f"hull.point{k}.{w}[{i}]" for k in range(1, n_points + 1)
             for w in ("force", "moment", "velocity", "angular_velocity") for i in range(3)]
    if variant == "manoeuvring":
        other = ([f"hull.manoeuvring.{w}[{i}]" for w in ("force", "velocity") for i in range(2)]
                 + ["hull.manoeuvring.moment", "hull.manoeuvring.yaw_rate"]
                 + [f"hull.seakeeping.{w}[{i}]" for w in ("force", "moment", "velocity", "angular_velocity")
                    for i in range(3)])
    else:
        other = [f"hull.reference.{w}[{i}]" for w in ("force", "moment", "velocity", "angular_velocity", "euler")
                 for i in range(3)]
    r = simulate(system, 2.0, None, method="gauss-seidel", variables=point + other,
                 manipulators=[load_scenario(EVENTS)])
    at_points = sum(np.einsum("ni,ni->n", vec(r, f"hull.point{k}.force"), vec(r, f"hull.point{k}.velocity"))
                    + np.einsum("ni,ni->n", vec(r, f"hull.point{k}.moment"), vec(r, f"hull.point{k}.angular_velocity"))
                    for k in range(1, n_points + 1))
    if variant == "manoeuvring":
        m = lambda name, n=3: vec(r, f"hull.manoeuvring.{name}", n)
        given = (np.einsum("ni,ni->n", m("force", 2), m("velocity", 2))
                 + r["hull.manoeuvring.moment"] * r["hull.manoeuvring.yaw_rate"]
                 + np.einsum("ni,ni->n", vec(r, "hull.seakeeping.force"), vec(r, "hull.seakeeping.velocity"))
                 + np.einsum("ni,ni->n", vec(r, "hull.seakeeping.moment"), vec(r, "hull.seakeeping.angular_velocity")))
    else:
        given = reference_power(variant, r, system)
    scale = max(float(np.max(np.abs(at_points))), 1.0)
    worst = float(np.max(np.abs(at_points - given)))
    MEASURED[f"{variant}: power through the adapter, 2 s"] = \
        f"largest |P_points - P_model| {worst:.2e} W (largest |P| {scale:.3g} W)"
    assert worst <= 1e-9 * scale + 1e-9


# ---------------------------------------------------------------------- the whole lift

@pytest.mark.slow
@pytest.mark.parametrize("variant", list(swap.VARIANTS))
def test_the_whole_lift_runs_with_each_ship(variant, fmus, tmp_path):
    """Acceptance (issue 21): each swapped lift, as written (its events, its sea: the vendor's 2.5 m
    regular wave for OsvSeakeeper, calm water for Vessel6Dof, which has no sea, our JONSWAP sea through
    Ship.fmu for the manoeuvring ship), runs to its end at 175 s and lowers the payload to 50 m; with
    the 6-DOF ship the crane base stays at its pose at the hardpoint to 1e-9 m all the way."""
    system = load(VARIANT[variant], fmus, tmp_path)
    names = LIFT_VARS + (SIX_DOF_VARS if variant == "six_dof" else [])
    r = simulate(system, None, None, variables=names)
    assert r.time[-1] == pytest.approx(175.0)
    assert all(np.all(np.isfinite(r[n])) for n in names)
    depth = r["payload.position[2]"]
    MEASURED[f"{variant}: whole lift"] = (f"to t = {r.time[-1]:g} s, payload at {depth[-1]:.2f} m, wire tension "
                                          f"{np.min(r['cable.end_b.tension']) / 1e3:.0f}..."
                                          f"{np.max(r['cable.end_b.tension']) / 1e3:.0f} kN")
    assert 45.0 < depth[-1] < 62.0
    if variant == "six_dof":
        dp, dR, heading = check_six_dof_pose(r, system)
        MEASURED["6-DOF ship, whole lift: crane base vs its pose at the hardpoint"] = \
            f"position {dp:.1e} m, attitude {dR:.1e}, heading >= {heading:.1f} deg"
        assert heading >= 45.0 and dp < 1e-9 and dR < 1e-12
