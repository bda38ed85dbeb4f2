"""Issue 11, item 4: a ship FMU this project did not build replaces Ship.fmu by editing only the
system file (docs/ship_swap.md).

The third-party ship is OsvSeakeeper (tests/models/c_fmu/third_party_ship.c, plain C built here with gcc):
OSP vessel-style names, kN and kN.m, degrees, a z-up vessel frame, points in AP/CL/BL coordinates,
its earth origin at its CG. The variants of the system files replace the ship's component and
connections only; every other component, parameter and connection stays:

* tests/data/systems/ship_crane.ssd -> ship_crane_third_party_ship.ssd: the knuckle-boom crane with
  a 10 t hook load on a level ship (the load acts from t = 0: a dynamic response to compare);
* scenarios/offshore_lift/offshore_lift.ssd -> offshore_lift_third_party_ship.ssd: the offshore
  lift (winch, crane, cable, payload), which starts at its static equilibrium.

Checks: the variants are exactly the mapping (tests/ship_swap.py) applied to the originals; they
validate; the swapped ship carries the crane like Ship.fmu (the crane's base inputs, the static
force balance, the heave and heel); a wrong mapping is caught by ``marine-cosim validate`` with its
message, and one validation cannot see (a forgotten constant load) by the comparison; libcosim runs
the swapped file and applies the same linear transformations.
"""
from __future__ import annotations

import math
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from orchestration.cli.main import main as cli
from orchestration import simulate
from orchestration.system.osp import read_osp
from orchestration.master.manipulators.scenario import load_scenario
from orchestration.system.files import load_system
from orchestration.system.validation import validate_system
from tests.models.c_fmu.build import build_third_party_ship_fmu
from tests.models.ship_swap import swap_ssd

pytestmark = [pytest.mark.gcc,
              pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build the C FMU")]

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "tests" / "data" / "systems" / "ship_crane.ssd"
SMALL_SWAP = SMALL.with_name("ship_crane_third_party_ship.ssd")
LIFT = ROOT / "scenarios" / "offshore_lift" / "offshore_lift.ssd"
LIFT_SWAP = LIFT.with_name("offshore_lift_third_party_ship.ssd")
EVENTS = LIFT.with_name("events.yaml")
needs_lift = pytest.mark.skipif(not LIFT.is_file(), reason="scenarios/offshore_lift/offshore_lift.ssd is not there")
BASE = [f"crane.base.{v}[{i}]" for v in ("position", "velocity", "acceleration", "angular_velocity",
                                          "angular_acceleration") for i in range(3)] + \
       [f"crane.base.quaternion[{i}]" for i in range(4)]
LOADS = [f"crane.base.{w}[{i}]" for w in ("force", "moment") for i in range(3)]
MEASURED: dict[str, str] = {}


@pytest.fixture(scope="module", autouse=True)
def report():
    yield
    if MEASURED:
        print("\nShip swap, measured:")
        for k, v in MEASURED.items():
            print(f"  {k}: {v}")


@pytest.fixture(scope="module")
def fmus(fmu_dir, tmp_path_factory) -> Path:
    """One folder with this checkout's FMUs and the third-party ship."""
    folder = tmp_path_factory.mktemp("swap_fmus")
    for fmu in Path(fmu_dir).glob("*.fmu"):
        (folder / fmu.name).symlink_to(fmu)
    build_third_party_ship_fmu(folder)
    return folder


def localized(path: Path, fmus: Path, folder: Path, text: str | None = None) -> Path:
    """``path`` (or ``text``) with its FMU sources (build/fmus, relative) pointing into ``fmus``, and the
    other files it names (relative to ``path``: the mechanism, the scenario) absolute."""
    text = path.read_text() if text is None else text
    for prefix in ("../../../build/fmus/", "../../build/fmus/"):
        text = text.replace(f'source="{prefix}', f'source="{fmus}/')
    text = re.sub(r'(<ssv:String value=")([^"/]+\.json)"', lambda m: f'{m[1]}{path.parent / m[2]}"', text)
    text = re.sub(r'(<mc:Scenario source=")([^"/]+)"', lambda m: f'{m[1]}{path.parent / m[2]}"', text)
    out = folder / path.name
    out.write_text(text)
    return out


def load(path: Path, fmus: Path, folder: Path, text: str | None = None):
    folder.mkdir(parents=True, exist_ok=True)
    return load_system(localized(path, fmus, folder, text))


# ---------------------------------------------------------------------- the files

@pytest.mark.parametrize("original, variant", [(SMALL, SMALL_SWAP), pytest.param(LIFT, LIFT_SWAP, marks=needs_lift)],
                         ids=["ship_crane", "offshore_lift"])
def test_the_variant_is_the_mapping_applied_to_the_original(original, variant, tmp_path):
    """The committed variant is what tests/ship_swap.py makes of the original now (if the original
    changes: ``python -m tests.models.ship_swap ORIGINAL VARIANT [SHIP_SOURCE]``)."""
    source = "../../../build/fmus/OsvSeakeeper.fmu" if original == SMALL else "../../build/fmus/OsvSeakeeper.fmu"
    fresh = swap_ssd(original, tmp_path / variant.name, ship_source=source)
    assert fresh.read_text() == variant.read_text(), \
        f"{variant} is stale: python -m tests.models.ship_swap {original} {variant} {source}"


@pytest.mark.parametrize("original, variant", [(SMALL, SMALL_SWAP), pytest.param(LIFT, LIFT_SWAP, marks=needs_lift)],
                         ids=["ship_crane", "offshore_lift"])
def test_only_the_ship_changes_and_the_variant_is_valid(original, variant, fmus, tmp_path):
    a = load(original, fmus, tmp_path / "a")
    b = load(variant, fmus, tmp_path / "b")
    assert Path(b.components["ship"].source).name == "OsvSeakeeper.fmu"
    assert list(a.components) == list(b.components)
    added = {("crane", "base.quaternion[0]"): 1.0, ("payload", "water.elevation"): 0.0}
    for name in a.components:
        if name == "ship":
            continue
        ca, cb = a.components[name], b.components[name]
        assert ca.source == cb.source and ca.step_multiple == cb.step_multiple
        extra = {k: v for k, v in cb.parameters.items() if k not in ca.parameters}
        assert all(added.get((name, k)) == v for k, v in extra.items()), extra
        assert {k: v for k, v in cb.parameters.items() if k in ca.parameters} == ca.parameters
    keep = lambda s: sorted((c.label(), c.factor, c.offset) for c in s.connections if "ship" not in (c.source[0],
                                                                                                     c.target[0]))
    assert keep(a) == keep(b)
    report = validate_system(b)
    assert report.ok, report
    assert not [p for p in report.warnings if "unit" in p.message or "carries" in p.message]


# ---------------------------------------------------------------------- the physics

@pytest.mark.slow
def test_the_swapped_ship_answers_the_crane_load_like_ours(fmus, tmp_path):
    """Level ship, 10 t on the hook: from t = 0 the crane's weight and load act. Both ships have the
    same M_RB + A_inf and hydrostatics, so the crane sees the same base acceleration at t = 0 (the
    third-party ship's mapped through kN, degrees, the z-up frame and the AP/CL/BL lever), and the
    same response while damping (fluid memory vs constant ratios) has not yet made a difference.
    Right sign: the ship sinks and heels to starboard (the crane works over the starboard side)."""
    ours = simulate(load(SMALL, fmus, tmp_path / "a"), 3.0, 0.05, method="gauss-seidel", variables=BASE + LOADS)
    theirs = simulate(load(SMALL_SWAP, fmus, tmp_path / "b"), 3.0, 0.05, method="gauss-seidel",
                      variables=BASE + LOADS)
    for name in [f"crane.base.{v}[{i}]" for v in ("acceleration", "angular_acceleration") for i in range(3)]:
        assert theirs[name][0] == pytest.approx(ours[name][0], rel=1e-6, abs=1e-9), name
    MEASURED["t = 0 base acceleration (z), ours / swapped"] = \
        f"{ours['crane.base.acceleration[2]'][0]:.6e} / {theirs['crane.base.acceleration[2]'][0]:.6e} m/s2"
    early = ours.time <= 1.0
    worst = {}
    for name in BASE:
        a, b = ours[name][early], theirs[name][early]
        scale = max(np.ptp(a), 1e-9)
        worst[name] = float(np.max(np.abs(a - b)) / scale)
    motion = {k: v for k, v in worst.items() if "acceleration" not in k and "quaternion[0]" not in k}
    rates = {k: v for k, v in worst.items() if "acceleration" in k}
    MEASURED["first second, largest difference / excursion of ours"] = (
        f"positions, velocities, attitude {max(motion.values()):.3f} ({max(motion, key=motion.get)}); accelerations "
        f"{max(rates.values()):.3f} ({max(rates, key=rates.get)}; yaw is a small by-product of the couplings)")
    # the crane rides on position, velocity and attitude: within 15 % of their excursion (measured
    # <= 10 %; surge, heave and pitch differ most: Ship.fmu's fluid memory builds up its damping in
    # the first second, the third-party ship damps with constant ratios from the start)
    assert max(motion.values()) < 0.15
    # sign and magnitude over 3 s: sinks (base z grows) and heels to starboard (roll > 0)
    for r in (ours, theirs):
        assert r["crane.base.position[2]"][-1] - r["crane.base.position[2]"][0] > 0.05
        assert r["crane.base.quaternion[1]"][-1] > 0.01
    sink = [r["crane.base.position[2]"][-1] - r["crane.base.position[2]"][0] for r in (ours, theirs)]
    heel = [2 * math.degrees(math.asin(r["crane.base.quaternion[1]"][-1])) for r in (ours, theirs)]
    MEASURED["at 3 s: hardpoint sinkage, heel (ours / swapped)"] = \
        f"{sink[0]:.4f} / {sink[1]:.4f} m, {heel[0]:.3f} / {heel[1]:.3f} deg"
    assert sink[1] == pytest.approx(sink[0], rel=0.1) and heel[1] == pytest.approx(heel[0], rel=0.1)


def calm_lift(path: Path, fmus: Path, folder: Path, text: str | None = None):
    s = load(path, fmus, folder, text)
    if "sea.spectrum" in s.components["ship"].parameters or Path(s.components["ship"].source).name == "Ship.fmu":
        s.components["ship"].parameters["sea.spectrum"] = 0
    if Path(s.components["ship"].source).name == "OsvSeakeeper.fmu":
        s.components["ship"].parameters["wave.height"] = 0.0
    return s


LIFT_VARS = BASE + LOADS + ["cable.end_b.tension", "payload.position[2]"]


@pytest.mark.slow
@needs_lift
def test_the_swapped_lift_keeps_the_static_balance(fmus, tmp_path):
    """Calm water, the lift at its static equilibrium (the crane, the hanging payload, the
    anti-heeling ballast at hardpoint 4 -- moved to the point of attack as offsets on the force and
    moment connections): over 5 s the swapped ship stays where Ship.fmu stays, and the crane, wire
    and payload balance the same loads."""
    ours = simulate(calm_lift(LIFT, fmus, tmp_path / "a"), 5.0, None, method="gauss-seidel", variables=LIFT_VARS,
                    manipulators=[load_scenario(EVENTS)])
    theirs = simulate(calm_lift(LIFT_SWAP, fmus, tmp_path / "b"), 5.0, None, method="gauss-seidel",
                      variables=LIFT_VARS, manipulators=[load_scenario(EVENTS)])
    diff = lambda n: float(np.max(np.abs(ours[n] - theirs[n])))
    rel = lambda n: diff(n) / float(np.max(np.abs(ours[n])))
    MEASURED["lift, 5 s calm: max |difference|"] = (
        f"hardpoint down {1e3 * diff('crane.base.position[2]'):.2f} mm, north "
        f"{1e3 * diff('crane.base.position[0]'):.1f} "
        f"mm, base force z {rel('crane.base.force[2]'):.1e}, base moment x {rel('crane.base.moment[0]'):.1e} relative, "
        f"wire tension {rel('cable.end_b.tension'):.1e} relative, quaternion x/y "
        f"{diff('crane.base.quaternion[1]'):.1e}/{diff('crane.base.quaternion[2]'):.1e}, payload depth "
        f"{1e3 * diff('payload.position[2]'):.2f} mm")
    assert diff("crane.base.position[2]") < 2e-3            # heave of the hardpoint: mm
    # 2.2 cm: its CG, not CO, is held in surge, and it takes the weights in body axes (W sin(trim))
    assert diff("crane.base.position[0]") < 0.03
    assert rel("crane.base.force[2]") < 1e-4 and rel("crane.base.moment[0]") < 1e-4
    assert rel("cable.end_b.tension") < 1e-3
    assert diff("crane.base.quaternion[1]") < 5e-5 and diff("crane.base.quaternion[2]") < 5e-5
    # and both hold still: the static balance is the one the scenario was set up with
    for r in (ours, theirs):
        assert np.ptp(r["crane.base.position[2]"]) < 2e-3
        assert abs(math.degrees(2 * math.asin(r["crane.base.quaternion[1]"][-1]))) < 0.01


@needs_lift
def test_a_forgotten_constant_load_is_caught_by_the_comparison(fmus, tmp_path):
    """Without the ballast offsets the file still validates (a constant is not a unit or a name),
    but the ship heels under the crane's 9.7 MN.m: what the comparison above is for."""
    text = LIFT_SWAP.read_text()
    for connector in ("additionalNedForce.force.down", "additionalNedForce.moment.north"):
        head = f'endConnector="{connector}"'
        start = text.index(head)
        line_end = text.index("/>", text.index("<ssc:LinearTransformation", start))
        chunk = text[start:line_end]
        text = text[:start] + chunk[:chunk.index(' offset="')] + text[line_end:]
    s = calm_lift(LIFT_SWAP, fmus, tmp_path / "c", text)
    assert validate_system(s).ok
    r = simulate(s, 3.0, None, method="gauss-seidel", variables=["crane.base.quaternion[1]"],
                 manipulators=[load_scenario(EVENTS)])
    heel = math.degrees(2 * math.asin(r["crane.base.quaternion[1]"][-1]))
    MEASURED["lift without the ballast offsets: heel after 3 s"] = f"{heel:.2f} deg"
    assert heel > 1.0


@needs_lift
def test_the_swapped_lift_runs_in_waves(fmus, tmp_path):
    """The variant as written: the vendor's regular wave (2.5 m, 8 s, from 345 deg for our sea
    travelling towards 165 deg); it runs, the ship moves, nothing blows up."""
    s = load(LIFT_SWAP, fmus, tmp_path / "w")
    assert s.components["ship"].parameters["wave.direction"] == pytest.approx(345.0)
    r = simulate(s, 4.0, None, method="gauss-seidel", variables=["crane.base.position[2]", "cable.end_b.tension"],
                 manipulators=[load_scenario(EVENTS)])
    assert np.all(np.isfinite(r["cable.end_b.tension"]))
    assert np.ptp(r["crane.base.position[2]"]) > 0.05


# ---------------------------------------------------------------------- validate catches a wrong mapping

def broken(text: str, connector: str, how: str) -> str:
    """The connection into ``connector`` without its LinearTransformation, or without the connection."""
    start = text.rindex("<ssd:Connection ", 0, text.index(f'endConnector="{connector}"'))
    end = text.index("</ssd:Connection>", start) + len("</ssd:Connection>")
    if how == "drop":
        return text[:start] + text[end:]
    chunk = text[start:end]
    t0 = chunk.index("<ssc:LinearTransformation")
    t1 = chunk.index("/>", t0) + 2
    return text[:start] + chunk[:t0] + chunk[t1:] + text[end:]


def test_validate_reports_a_wrong_mapping(fmus, tmp_path, capsys):
    good = localized(SMALL_SWAP, fmus, tmp_path)
    assert cli(["validate", str(good)]) == 0
    capsys.readouterr()
    cases = [
        ("degrees.ssd", broken(good.read_text(), "base.angular_velocity[0]", "transformation"),
         "(connection ship.cgShipMotion.angularVelocity.roll -> crane.base.angular_velocity[0]): source unit deg/s, "
         "target unit rad/s, factor 1.0, expected factor 0.017453292519943295 (deg/s -> rad/s; -0.017453292519943295 "
         "to flip the sign): the unit conversion is missing"),
        ("kilonewton.ssd", broken(good.read_text(), "additionalNedForce.force.down", "transformation"),
         "source unit N, target unit kN, factor 1.0, expected factor 0.001 (N -> kN; -0.001 to flip the sign): the "
         "unit conversion is missing"),
        ("down.ssd", broken(good.read_text(), "additionalNedForce.force.down", "drop"),
         "vector ship.additionalNedForce.force is mapped incompletely: north, east connected, down not"),
    ]
    for name, text, message in cases:
        path = tmp_path / name
        path.write_text(text)
        assert cli(["validate", str(path)]) == 1, name
        out = capsys.readouterr().out
        assert message in out, out
        assert f"{name}: ssd:Connection" in out or f"{name}: ssd:Component" in out, out
    # a misspelt vendor name is a read error with the close match
    path = tmp_path / "typo.ssd"
    path.write_text(good.read_text().replace('startConnector="pointOfAttackMotion.nedVelocity.east"',
                                             'startConnector="pointOfAttackMotion.nedVelocity.East"'))
    assert cli(["validate", str(path)]) != 0
    captured = capsys.readouterr()
    assert "has no variable 'pointOfAttackMotion.nedVelocity.East' (did you mean " \
           "'pointOfAttackMotion.nedVelocity.east'" in captured.out + captured.err


# ---------------------------------------------------------------------- OSP and libcosim

def test_osp_export_and_libcosim_apply_the_same_mapping(fmus, tmp_path):
    """``marine-cosim convert --to osp`` turns every transformation into an OSP LinearTransformation
    function; read back it is the same system; libcosim runs the OSP export and the .ssd variant
    itself and passes every mapped value through the same factor and offset as our master."""
    from tests.system.test_system_files import assert_follows, run_libcosim

    (tmp_path / "src").mkdir()
    variant = localized(SMALL_SWAP, fmus, tmp_path / "src")
    system = load_system(variant)
    assert cli(["convert", str(variant), "--to", "osp", "--out", str(tmp_path / "osp")]) == 0
    back = read_osp(tmp_path / "osp" / "OspSystemStructure.xml")
    table = lambda s: sorted((c.label(), round(c.factor, 15), round(c.offset, 12)) for c in s.connections)
    assert table(back) == table(system)
    checks = [("ship.pointOfAttackMotion.nedDisplacement.down", "crane.base.position[2]"),
              ("ship.cgShipMotion.angularDisplacement.roll", "crane.base.quaternion[1]"),
              ("ship.cgShipMotion.angularVelocity.pitch", "crane.base.angular_velocity[1]"),
              ("crane.base.force[2]", "ship.additionalNedForce.force.down"),
              ("crane.base.moment[0]", "ship.additionalNedForce.moment.north")]
    link = {c.label(): c for c in system.connections}
    names = sorted({n for pair in checks for n in pair})
    for kind, path in (("osp", tmp_path / "osp" / "OspSystemStructure.xml"), ("ssp", variant)):
        run = run_libcosim(kind, path, names, tmp_path, n_steps=20)
        for source, target in checks:
            c = link[f"{source} -> {target}"]
            assert_follows(run["values"][target], run["values"][source], c.factor, c.offset, f"{kind}: {target}")
    MEASURED["libcosim"] = "OSP export and .ssd variant: every checked input = factor * source + offset"
