"""The block turnover of Lee (2020) §4.1: a 348 t hull block turned over 90 deg by one floating crane
(4 slings) and two crawler cranes (3 slings each), the slings wrapping the block's edges
(docs/block_turnover.md).  The system: the RiggedBlock FMU (block + 10 slings, one FMU because the
sling-block coupling is too stiff for a communication step, docs/rope_contact.md), three Crane
FMUs whose hooks drive the slings (the floating crane's hoist on the Ship FMU carrying a box barge
in regular beam waves, the crawlers' travel + hoist on fixed bases) and the events that run the
three phases.  ``scenarios/block_turnover/`` is generated from here (``python
scenarios/write_systems.py block_turnover``); the numbers' reasons are in the comments.

[Lee20] H.-W. Lee, Wire rope contact model and crane control method for the advanced simulation
and automation of block erection, PhD thesis, Seoul National University, 2020, §4.1.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from orchestration.runs.reference.lift import _connect_vec, _vec, declare_unconnected_inputs
from orchestration.runs.reference.paths import DEFAULT_FMU_DIR, SCENARIOS

G = 9.81
RHO = 1025.0
NAME = "block_turnover"
FOLDER = SCENARIOS / NAME

#: The block of [Lee20] §4.1: 348 t, 27 m (L) x 34 m (B) x 9 m (D); the thesis' CAD mesh is a box
#: here (its inertia that of a uniform box).  Body frame: x along the 27 m, y along the 34 m, z down.
BLOCK_MASS = 348e3
BLOCK_SIZE = (27.0, 34.0, 9.0)
BLOCK_INERTIA = tuple(BLOCK_MASS / 12 * (b * b + c * c) for b, c in
                      ((BLOCK_SIZE[1], BLOCK_SIZE[2]), (BLOCK_SIZE[0], BLOCK_SIZE[2]), (BLOCK_SIZE[0], BLOCK_SIZE[1])))
HALF = tuple(x / 2 for x in BLOCK_SIZE)
#: Lugs on the mid-depth line of the two 34 m end faces (the turnover axis is the body y axis): the
#: floating crane's four on the -x end (it lifts that end: after 90 deg it is on top, straight above
#: the CG, so the block hangs from the floating crane alone at 90 deg), the crawlers' three each on
#: the +x end (the pivot).  Spacing over the 34 m breadth, symmetric about the centreline.
#: The pad-eyes stand 0.3 m off the face (their pins are the lugs): a sling that leaves a lug along
#: the face it sits on, as the crawler slings do at 90 deg, would be a degenerate contact.
LUG_OUT = 0.3
FC_LUGS = tuple((-HALF[0] - LUG_OUT, y, 0.0) for y in (-12.0, -4.0, 4.0, 12.0))
CRAWLER_LUGS = (tuple((HALF[0] + LUG_OUT, y, 0.0) for y in (-15.0, -10.0, -5.0)),
                tuple((HALF[0] + LUG_OUT, y, 0.0) for y in (5.0, 10.0, 15.0)))
#: Wire-rope slings, 64 mm 6x36 IWRC (metallic area 0.58 pi d^2 / 4 = 1.87e-3 m2 at an effective
#: modulus of 1.0e11 Pa: EA 1.9e8 N, MBL about 2.7 MN, a safety factor of 6 on the 45 t of the most
#: loaded sling at rest).  Axial damping 2 % of EA per unit strain rate: the slings' own structural
#: damping, which settles the hook-sling-block modes (~20 rad/s) within a few seconds.
SLING_EA = 1.9e8
SLING_DAMPING = 0.02 * SLING_EA
#: The sling's vertical reach from lug to hook at the start (m) and the hooks' horizontal offset
#: outside the end faces (a lug on the face, the hook straight above it, would put the sling on the
#: face's edge; 1 m out it clears the top edge by 0.18 m).
SLING_REACH = 25.0
HOOK_OUT = 1.0
#: Crawler hooks spread over their three lugs (y = -10 and +10 m, the middle lug of each).
CRAWLER_HOOK_Y = (-10.0, 10.0)

#: The floating crane's barge ([Lee20] Table 4-1): 59 m x 22 m, depth 4.5 m, 3 805 t; a box barge
#: (components/box_barge.py, Froude-Krylov + Haskind, since the thesis gives no hydrodynamics)
#: at the draught of its weight, 2.86 m.  KG 2.5 m (the thesis gives neither KG nor GM; a
#: low CG for a barge whose ballast carries the sheerleg): with KG at the 4.5 m deck, the roll of
#: the barge carrying half the block hung from a 75 m boom tip came close to 10 s, and the 10 s
#: waves moved the block more than the 8 s ones, against the thesis' order (docs/block_turnover.md).
#: Heading north, the boom over the bow; the block lies north of the bow.
BARGE = {"length": 59.0, "beam": 22.0, "draught": round(3805e3 / (RHO * 59.0 * 22.0), 4), "kg": 2.5}
#: Wave headings of the barge file, every 90 deg: the scenario uses beam seas (90 deg) and calm
#: water, and every 15 deg made a 234 kB file
BARGE_HEADINGS_DEG = (0, 90, 180, 270)
BARGE_FILE = FOLDER / "barge.nc"
#: The boom tip, in the barge's body frame (CO amidships at the waterline): 12 m beyond the bow,
#: 75 m above the waterline (the hook rises 32 m, to 66 m, over the turnover).  The barge sits so
#: that the tip is 1 m (HOOK_OUT) off the block's -x face at the start: the hook hangs below it.
BOOM_TIP = (29.5 + 12.0, 0.0, -75.0)

#: The cranes' hoists as Crane FMUs (docs/crane_format.md): prismatic joints in rate (velocity)
#: mode, rate setpoints from the events.  The hoist rope is the prismatic link (the hook hangs
#: straight below the boom tip in the crane's base frame: no pendulum, docs/block_turnover.md);
#: its mass is the hook block's, 20 t on the floating crane, 10 t on a crawler.  The joint law
#: tau = kp (qd_t - qd) + ki int(qd_t - qd) is a position loop of stiffness ki on the hook path:
#: ki 1e9 N/m sags the hook by F / ki = 3.4 mm under the whole block (the winch and its brake hold
#: the rope), kp = 2 sqrt(ki m) damps it critically (poles at -sqrt(ki / m), -224 1/s on the
#: floating crane's hook: RK4 is stable to 12 ms).  The crawler's travel joint (the crane crawling
#: north; in reality its boom luffs) moves 300 t of crane.
FC_HOOK_MASS = 20e3
FC_BOOM_MASS = 30e3        # what the luff moves besides the hook (the boom's own weight is the barge's)
CRAWLER_HOOK_MASS = 10e3
CRAWLER_MASS = 300e3
JOINT_STIFFNESS = 1.0e9


def _gains(mass: float) -> dict:
    return {"kp": round(2.0 * math.sqrt(JOINT_STIFFNESS * mass), 1), "ki": JOINT_STIFFNESS}

#: Wave cases of [Lee20] Table 4-2: regular waves, heading 90 deg (beam seas on the barge).
WAVE_CASES = {1: {"period": 8.0, "height": 1.0}, 2: {"period": 10.0, "height": 1.0},
              3: {"period": 12.0, "height": 1.0}, 4: {"period": 10.0, "height": 0.5},
              5: {"period": 10.0, "height": 2.0}}
#: The thesis' maximum contact forces on the block, t ([Lee20] §4.1, quoted in the digest §2.13).
THESIS_CONTACT_T = {1: 55.0, 2: 33.0, 3: 27.0, 4: 24.0, 5: 108.0}
WAVE_DIRECTION = math.pi / 2          # travelling east: beam seas on the north-heading barge
CALM = {"sea.spectrum": 0}

#: The phases ([Lee20] §4.1): (1) all cranes hoist, (2) the crawlers stop and the floating crane
#: hoists to turn the block over, the crawlers travel under it, (3) the crawlers lower until they
#: carry nothing, the floating crane stops.  Times in s.
PHASES = {"settle": 2.0, "hoist": (2.0, 6.0), "turn": (6.0, 46.0), "lower": (47.0, 67.0), "end": 78.0}
#: "At rest" at the end: the block still swings slowly on the floating crane's slings and the barge
#: (about 10 s, little damped); the balance and the angle are means over this window.
REST_WINDOW = 10.0
HOIST_RATE = 0.25          # m/s, phase 1, all hooks
TURN_END = math.radians(90.0)
#: The floating crane luffs its hook 4 m back (toward the barge) over the turn, for the barge's
#: drift under the growing load (trim and surge on its moorings, 1.1 m measured) and to keep the
#: crawler hooks clear of the block's footprint at the end.  The crawler slings, bent over the
#: block's bottom edge and leaning out to their hooks, keep the block short of 90 deg while they
#: carry load (86 deg at the end of phase 2); phase 3 lowers them until they carry nothing.
FC_LUFF = -4.0
#: Phase 3: the crawlers lower 2 m at 0.1 m/s (47-67 s), until their slings carry nothing (from
#: about 1.4 m down): the block's bottom swings the last degrees under the floating crane's lugs
#: (1.9 m south from 86 deg) and the slack slings lie on the block's edge.  Slowly: lowered at
#: 0.3 m/s, the crawlers' 55 t went over to the floating crane in 5 s and set the block and the
#: barge swinging (2 % of the weight, 1.4 deg, a 10 s period, measured).
LOWER_RATE = 0.1
TURN_SEGMENT = 1.0         # s: the turning paths as rates held over 1 s intervals
#: The crawlers' hooks end 7 m beyond the lug (toward +x): the sling wraps the block's bottom edge
#: and clears its 9 m depth (4.5 m to the face) on the way up, the hook 2.5 m outside the block.
#: In 10-12 s waves the block's swing covers those 2.5 m and meets a hook block (HOOK_RADIUS below).
CRAWLER_END_OFFSET = 7.0

#: The hook blocks, as spheres the block pushes off (components/rope_bodies.py EndContact): in
#: waves the block swings against a crawler hook late in the turn (cases 2, 3, 5; the hook is
#: 2.5 m off the face the plan turns toward it).  1 m: a 10-20 t hook block with its sheaves.
#: 2e7 N/m stops the 348 t block arriving at 1 m/s within 13 cm; 5e5 N s/m damps it at 9 %.
HOOK_RADIUS = 1.0
HOOK_CONTACT_STIFFNESS = 2e7
HOOK_CONTACT_DAMPING = 5e5

#: The wave cases' comparison with the thesis is made over the first 34 s (70 deg into the turn),
#: where the bent crawler slings press on the block; later the crawlers let go and their slack
#: slings snatch on its edge, which the thesis' ropes (they cannot slacken) do not
#: (docs/block_turnover.md).
SHORT_STOP = 34.0

STEP = 0.02                # macro step (the hooks' 1e9 N/m loops step inside the Crane FMUs)
BLOCK_SUBSTEP = 0.01       # the block's RK4 and the slings' contact update (block on slings: 15 rad/s)


# ----------------------------------------------------------------------------------------- geometry

def block_start() -> np.ndarray:
    """CG of the block at the start (NED): level, its bottom 0.5 m above a quay at 3 m above the
    water (z -3)."""
    return np.array([0.0, 0.0, -3.0 - 0.5 - HALF[2]])


def hooks_start() -> list[np.ndarray]:
    """Hook positions (NED) at the start: floating crane, crawler A (-y), crawler B (+y)."""
    c = block_start()
    z = c[2] - SLING_REACH
    return [np.array([c[0] - HALF[0] - LUG_OUT - HOOK_OUT, 0.0, z])] + \
        [np.array([c[0] + HALF[0] + LUG_OUT + HOOK_OUT, y, z]) for y in CRAWLER_HOOK_Y]


def slings() -> list[tuple[int, tuple, float]]:
    """(hook 1..3, lug (body), unstretched length) of the ten slings: the lengths that hang the block
    level at the start with every sling of a hook carrying the same vertical load, half the weight on
    the floating crane and a quarter on each crawler (moment balance about the CG: the lugs are at
    equal arms)."""
    c = block_start()
    hooks = hooks_start()
    out = []
    for k, (lugs, share) in enumerate(((FC_LUGS, 0.5), (CRAWLER_LUGS[0], 0.25), (CRAWLER_LUGS[1], 0.25)), start=1):
        vertical = share * BLOCK_MASS * G / len(lugs)
        for lug in lugs:
            d = hooks[k - 1] - (c + np.asarray(lug))
            span = float(np.linalg.norm(d))
            tension = vertical * span / -d[2]
            out.append((k, lug, span / (1.0 + tension / SLING_EA)))
    return out


def _turn_angle(t: float) -> float:
    """Planned turnover angle (rad) at time t: a cosine ramp 0 -> TURN_END over the turning phase."""
    t0, t1 = PHASES["turn"]
    s = min(max((t - t0) / (t1 - t0), 0.0), 1.0)
    return TURN_END * 0.5 * (1.0 - math.cos(math.pi * s))


def _crawler_reach(phi: float, dx: float, length: float) -> float:
    """Height of a crawler hook above its lug (x-z plane of the plan) at turnover angle ``phi``: the
    sling of ``length`` to a hook ``dx`` north of the lug runs straight while it clears the +x end
    face, and over the face's top edge once it would cut the block."""
    n = (math.cos(phi), math.sin(phi))                           # the end face's outward normal (x, z)
    # the face's top edge, from the lug (which stands LUG_OUT off the face)
    edge = (HALF[2] * math.sin(phi) - LUG_OUT * n[0], -HALF[2] * math.cos(phi) - LUG_OUT * n[1])
    h = math.sqrt(max(length ** 2 - dx ** 2, 0.0))
    if dx * n[0] - h * n[1] >= 0.0:
        return h
    rest = length - math.hypot(*edge)
    return -edge[1] + math.sqrt(max(rest ** 2 - (dx - edge[0]) ** 2, 0.0))


def hook_plan(t: float) -> dict[str, float]:
    """Planned hook coordinates at time t (m, NED): the floating-crane hook's depth, the crawler
    hooks' north and depth.  Phase 2 turns the block about its crawler lugs (the pivot line) by
    ``_turn_angle``: the floating-crane lug ends straight under its hook (which cannot move
    horizontally), the pivot moves under it as the crawlers travel, the crawler slings keep their
    length and wrap the top edge of the +x end near 90 deg."""
    c0 = block_start()
    hooks0 = hooks_start()
    t_h0, t_h1 = PHASES["hoist"]
    lift = HOIST_RATE * (min(max(t, t_h0), t_h1) - t_h0)
    phi = _turn_angle(t)
    length = math.hypot(SLING_REACH, HOOK_OUT)
    fc_hook_x = hooks0[0][0]
    fc_lug_x = fc_hook_x + HOOK_OUT * math.cos(phi)
    span = BLOCK_SIZE[0] + 2 * LUG_OUT             # lug to lug
    pivot_x = fc_lug_x + span * math.cos(phi)
    crawler_x = pivot_x + HOOK_OUT * math.cos(phi) + CRAWLER_END_OFFSET * math.sin(phi)
    crawler_z = hooks0[1][2] - lift
    pivot_z = crawler_z + _crawler_reach(phi, crawler_x - pivot_x, length)
    fc_lug_z = pivot_z - span * math.sin(phi)
    fc_hook_z = fc_lug_z - math.sqrt(length ** 2 - (HOOK_OUT * math.cos(phi)) ** 2)
    t_l0, t_l1 = PHASES["lower"]
    down = LOWER_RATE * (min(max(t, t_l0), t_l1) - t_l0)
    del c0
    luff = FC_LUFF * _turn_angle(t) / TURN_END
    return {"fc.hoist": fc_hook_z, "fc.luff": luff, "crawler.travel": crawler_x, "crawler.hoist": crawler_z + down}


def plan_events() -> list[dict]:
    """The scenario's rate setpoints: the planned hook paths (``hook_plan``) as rates held over 1 s
    intervals (phase 2) or over whole phases (1 and 3)."""
    times = sorted({0.0, *PHASES["hoist"], *PHASES["lower"],
                    *np.arange(PHASES["turn"][0], PHASES["turn"][1] + 1e-9, TURN_SEGMENT).tolist()})
    events, last = [], {}
    for a, b in zip(times[:-1], times[1:]):
        p0, p1 = hook_plan(a), hook_plan(b)
        rates = {key: round((p1[key] - p0[key]) / (b - a), 9) for key in p0}
        for key, rate in rates.items():
            if last.get(key) == rate:
                continue
            last[key] = rate
            if key == "fc.luff":
                targets = [("fc_crane", "joint1.setpoint", rate)]
            elif key == "fc.hoist":
                targets = [("fc_crane", "joint2.setpoint", rate)]
            elif key == "crawler.travel":
                targets = [(f"crawler{k}", "joint1.setpoint", rate) for k in (1, 2)]
            else:
                targets = [(f"crawler{k}", "joint2.setpoint", rate) for k in (1, 2)]
            for model, variable, value in targets:
                events.append({"time": round(a, 6), "model": model, "variable": variable, "action": "override",
                               "value": float(value)})
    t_end = times[-1]
    for model, n in (("fc_crane", 2), ("crawler1", 2), ("crawler2", 2)):
        for j in range(1, n + 1):
            events.append({"time": t_end, "model": model, "variable": f"joint{j}.setpoint", "action": "override",
                           "value": 0.0})
    return sorted(events, key=lambda e: e["time"])


# ------------------------------------------------------------------------------- cranes and barge

def _prismatic(name: str, theta: float, alpha: float, mass: float, q0: float, gains: dict) -> dict:
    return {"name": name, "joint": "prismatic", "a": 0.0, "alpha": alpha, "d": 0.0, "theta": theta,
            "initial_position": q0, "initial_rate": 0.0, "mass": mass, "cg": [0.0, 0.0, 0.0],
            # a prismatic chain cannot rotate: the inertia only has to be valid
            "inertia": [mass, mass, mass], "control": {"mode": "velocity", **gains, "kd": 0.0}}


def floating_crane_data() -> dict:
    """The floating crane: the hook's luff along the barge's x (frame 0 pitched 90 deg: z0 forward),
    then the hoist along the boom tip's z (theta 90, alpha -90 turn z1 down), the hook at its end."""
    return {"format": "marine-cosim crane 1.0", "name": "turnover_floating_crane",
            "description": "Floating crane of the block turnover (Lee 2020, sec. 4.1): the hook's luff (along the "
                           "barge) and hoist below the boom tip, rate-controlled prismatic joints "
                           "(orchestration/runs/reference/turnover.py).",
            "source": "marine-cosim docs/block_turnover.md", "angle_unit": "deg",
            "base_offset": {"position": [0.0, 0.0, 0.0], "euler_zyx": [0.0, 90.0, 0.0]},
            "links": [_prismatic("luff", 90.0, -90.0, FC_BOOM_MASS, 0.0, _gains(FC_BOOM_MASS + FC_HOOK_MASS)),
                      _prismatic("hoist", 0.0, 0.0, FC_HOOK_MASS, 10.0, _gains(FC_HOOK_MASS))],
            "attachments": [{"name": "hook", "link": 1, "point": [0.0, 0.0, 0.0]}]}


def crawler_crane_data() -> dict:
    """A crawler crane: travel along world north (frame 0 pitched 90 deg: z0 north), then the hoist
    along world down (theta 90, alpha -90 turn z1 down), the hook at the hoist's end."""
    return {"format": "marine-cosim crane 1.0", "name": "turnover_crawler_crane",
            "description": "Crawler crane of the block turnover (Lee 2020, sec. 4.1): travel along north and "
                           "hoist, both rate-controlled prismatic joints (orchestration/runs/reference/turnover.py).",
            "source": "marine-cosim docs/block_turnover.md", "angle_unit": "deg",
            "base_offset": {"position": [0.0, 0.0, 0.0], "euler_zyx": [0.0, 90.0, 0.0]},
            "links": [_prismatic("travel", 90.0, -90.0, CRAWLER_MASS, 0.0, _gains(CRAWLER_MASS + CRAWLER_HOOK_MASS)),
                      _prismatic("hoist", 0.0, 0.0, CRAWLER_HOOK_MASS, 10.0, _gains(CRAWLER_HOOK_MASS))],
            "attachments": [{"name": "hook", "link": 1, "point": [0.0, 0.0, 0.0]}]}


CRANE_FILES = {"fc_crane": FOLDER / "floating_crane.json", "crawler": FOLDER / "crawler_crane.json"}
#: Crawler boom tips (the cranes' bases), NED: 80 m up, north of the block at the start position of
#: the hooks (the travel joint starts at 0).
CRAWLER_BASE_Z = -80.0


def write_turnover_files() -> list[Path]:
    """The scenario's data files: the two crane mechanisms and the barge's hydrodynamics."""
    import json

    from components.box_barge import box_barge
    from components.vessel_data import write_netcdf

    FOLDER.mkdir(parents=True, exist_ok=True)
    CRANE_FILES["fc_crane"].write_text(json.dumps(floating_crane_data(), indent=2) + "\n")
    CRANE_FILES["crawler"].write_text(json.dumps(crawler_crane_data(), indent=2) + "\n")
    write_netcdf(box_barge(**BARGE, headings=np.radians(BARGE_HEADINGS_DEG),
                           name="block turnover floating crane barge, Lee 2020 Table 4-1 (components/box_barge.py)"),
                 BARGE_FILE)
    return [CRANE_FILES["fc_crane"], CRANE_FILES["crawler"], BARGE_FILE]


def barge_equilibrium(hook_load: float) -> tuple[float, float]:
    """Heave (NED down of CO) and pitch (rad) of the box barge at rest with ``hook_load`` (N, down)
    at the boom tip: linear hydrostatics of the box (C33 = rho g L B, C55 = rho g V GM_L,
    components/box_barge.py), the tip's arm taken at zero trim."""
    L, B, T, kg = BARGE["length"], BARGE["beam"], BARGE["draught"], BARGE["kg"]
    V = L * B * T
    c33 = RHO * G * L * B
    c55 = RHO * G * V * (T / 2 + L * L / (12 * T) - kg)
    return hook_load / c33, -BOOM_TIP[0] * hook_load / c55


def _tip_world(co: np.ndarray, pitch: float) -> np.ndarray:
    c, s = math.cos(pitch), math.sin(pitch)
    x, _, z = BOOM_TIP
    return co + np.array([c * x + s * z, 0.0, -s * x + c * z])


def barge_start() -> tuple[np.ndarray, float, float]:
    """(CO position NED, pitch, initial hoist length) of the floating crane at the start: the barge
    trimmed under its half of the block, the hook block and the luff's moving mass, placed so that
    the boom tip is straight above the floating-crane hook."""
    load = (0.5 * BLOCK_MASS + FC_HOOK_MASS + FC_BOOM_MASS) * G
    heave, pitch = barge_equilibrium(load)
    hook = hooks_start()[0]
    tip0 = _tip_world(np.array([0.0, 0.0, heave]), pitch)
    # the hoist runs along the boom tip's z, which the trim tilts: hook = tip + q (sin pitch, 0, cos pitch)
    q = float(hook[2] - tip0[2]) / math.cos(pitch)
    co = np.array([hook[0] - tip0[0] - q * math.sin(pitch), 0.0, heave])
    return co, pitch, q


#: The barge's moorings to the quay and the seabed ([Lee20]: massless springs, stiffness not given):
#: the Ship FMU's station keeping about its start position, 30 s natural period in surge, sway and
#: yaw (surge 1.8e5 N/m).  They start pretensioned against the slings' horizontal pull on the boom
#: tip (``fc_pull_north``, hardpoint 2 at the tip), so that the barge starts at rest.
MOORING_PERIOD = (30.0, 30.0, 30.0)


def fc_pull_north() -> float:
    """North force of the floating crane's slings on its hook at the start (N): its half of the
    weight, each sling inclined HOOK_OUT over SLING_REACH."""
    return 0.5 * BLOCK_MASS * G * HOOK_OUT / SLING_REACH


def wave_parameters(case: int | None) -> dict:
    """The barge's sea for wave case ``case`` of Table 4-2 (None: calm water)."""
    if case is None:
        return dict(CALM)
    w = WAVE_CASES[case]
    return {"sea.spectrum": 3, "sea.period": w["period"], "sea.amplitude": w["height"] / 2,
            "sea.direction": round(WAVE_DIRECTION, 6)}


# ----------------------------------------------------------------------------------------- system

def block_turnover_system(fmu_dir: Path = DEFAULT_FMU_DIR, case: int | None = None, stop: float = PHASES["end"],
                          step: float = STEP):
    """Barge (Ship), the floating crane's hoist on it, two crawler cranes and the rigged block;
    ``case`` the wave case of Table 4-2 (None: calm)."""
    from orchestration.system.model import Component, System

    fmu_dir = Path(fmu_dir)
    s = System(NAME, start_time=0.0, stop_time=stop, base_step=step, algorithm="fixed",
               algorithm_options={"method": "gauss-seidel"})
    # the block first in the Gauss-Seidel order: it steps from the hooks' motion at the start of the
    # step (moving them on at their velocity), the cranes then take the slings' new pull.  Behind
    # the cranes it would start from their end-of-step hooks and run a step (v h, 8 mm at the
    # turning speed) ahead of them: 7 % more pull than the recorded outputs show.
    hooks = hooks_start()
    block = {"mass": BLOCK_MASS, **{f"inertia[{i},{i}]": v for i, v in enumerate(BLOCK_INERTIA)},
             **_vec("size", BLOCK_SIZE), "gravity": G, "substep": BLOCK_SUBSTEP,
             **_vec("initial.position", block_start())}
    for j, (k, lug, length) in enumerate(slings(), start=1):
        block.update({f"sling{j}.hook": k, **_vec(f"sling{j}.lug", lug), f"sling{j}.length": round(length, 9),
                      f"sling{j}.ea": SLING_EA, f"sling{j}.damping": SLING_DAMPING})
    for k, hook in enumerate(hooks, start=1):
        block.update({**_vec(f"hook{k}.position", hook), f"hook{k}.radius": HOOK_RADIUS})
    block.update({"hook_contact.stiffness": HOOK_CONTACT_STIFFNESS, "hook_contact.damping": HOOK_CONTACT_DAMPING})
    s.add_component(Component("block", fmu_dir / "RiggedBlock.fmu", block))
    co, pitch, hoist0 = barge_start()
    s.add_component(Component("barge", fmu_dir / "Ship.fmu", {
        "vessel_file": str(BARGE_FILE), **wave_parameters(case), **_vec("hardpoint1.location", BOOM_TIP),
        **_vec("initial.position", co), "initial.euler[1]": pitch, **_vec("station_keeping.period", MOORING_PERIOD),
        **_vec("hardpoint2.location", BOOM_TIP), "hardpoint2.force[0]": -fc_pull_north(), "max_substep": step}))
    s.add_component(Component("fc_crane", fmu_dir / "Crane.fmu", {
        "mechanism": str(CRANE_FILES["fc_crane"]), "gravity": G, "max_substep": step, "use_initial": True,
        "joint1.initial_position": 0.0, "joint2.initial_position": hoist0}))
    for k in (1, 2):
        base = (hooks[k][0], hooks[k][1], CRAWLER_BASE_Z)
        s.add_component(Component(f"crawler{k}", fmu_dir / "Crane.fmu", {
            "mechanism": str(CRANE_FILES["crawler"]), "gravity": G, "max_substep": step, "use_initial": True,
            "joint1.initial_position": 0.0, "joint2.initial_position": float(hooks[k][2] - CRAWLER_BASE_Z),
            **_vec("base.position", base)}))
    for var in ("position", "velocity", "angular_velocity", "acceleration", "angular_acceleration"):
        bond = "crane_base" if var in ("velocity", "angular_velocity") else None
        _connect_vec(s, f"barge.hardpoint1.{var}", f"fc_crane.base.{var}", bond=bond)
    _connect_vec(s, "barge.hardpoint1.quaternion", "fc_crane.base.quaternion", 4)
    for part, keys in (("linear", ("0,0", "1,1", "2,2", "0,1", "0,2", "1,2")),
                       ("coupling", ("0,0", "0,1", "0,2", "1,0", "1,1", "1,2", "2,0", "2,1", "2,2")),
                       ("angular", ("0,0", "1,1", "2,2", "0,1", "0,2", "1,2"))):
        for key in keys:
            s.connect(f"fc_crane.base.inertia_{part}[{key}]", f"barge.hardpoint1.inertia_{part}[{key}]")
    _connect_vec(s, "fc_crane.base.bias_force", "barge.hardpoint1.bias_force", bond="crane_base")
    _connect_vec(s, "fc_crane.base.bias_moment", "barge.hardpoint1.bias_moment", bond="crane_base")
    for k, crane in enumerate(("fc_crane", "crawler1", "crawler2"), start=1):
        _connect_vec(s, f"{crane}.attachment1.position", f"block.hook{k}.position")
        _connect_vec(s, f"{crane}.attachment1.velocity", f"block.hook{k}.velocity", bond=f"hook{k}")
        _connect_vec(s, f"block.hook{k}.force", f"{crane}.attachment1.force", bond=f"hook{k}")
    declare_unconnected_inputs(s)
    return s


def block_turnover_events() -> dict:
    return {"description": "Block turnover (Lee 2020 sec. 4.1, issue 25): a 348 t block turned over 90 deg by a "
                           "floating crane (4 slings) and two crawler cranes (3 slings each). Phase 1 (2-6 s) all "
                           "hooks hoist 1 m; phase 2 (6-46 s) the floating crane hoists 32 m and luffs 4 m back, the "
                           "crawlers travel 23 m under it, the block turns about its crawler lugs; phase 3 (47-67 s) "
                           "the crawlers lower 2 m, until their slings carry nothing. Calm water; the wave cases of "
                           "Table 4-2 by parameters (docs/block_turnover.md). Run: marine-cosim demo block_turnover.",
            "end": PHASES["end"], "events": plan_events()}


# ------------------------------------------------------------------------------- results

def _vectors(*groups: str) -> list[str]:
    out = []
    for g in groups:
        base, _, n = g.partition("*")
        out += [f"{base}[{i}]" for i in range(int(n))] if n else [base]
    return out


#: What a run records (docs/block_turnover.md): the block's pose, the hooks and their loads, every
#: sling's tension and contact nodes, the contact force and penetration, the barge's motions.
RECORD = _vectors("block.position*3", "block.quaternion*4", "block.euler*3", "block.velocity*3",
                  *(f"block.hook{k}.force*3" for k in (1, 2, 3)),
                  *(f"block.sling{j}.tension" for j in range(1, 11)),
                  *(f"block.sling{j}.contact_nodes" for j in range(1, 11)),
                  "block.contact.force", "block.contact.hook_force", "block.contact.penetration",
                  *(f"{c}.attachment1.position*3" for c in ("fc_crane", "crawler1", "crawler2")),
                  "barge.position*3", "barge.euler*3", "barge.wave.elevation")


def turn_angle(r) -> np.ndarray:
    """Turnover angle (rad): how far the block's -x end has risen, the angle of the body x axis
    below north in the north-down plane, atan2(R[2,0], R[0,0]) with R[2,0] = 2 (x z - w y) and
    R[0,0] = 1 - 2 (y^2 + z^2) of the quaternion (w, x, y, z).  Past 90 deg it goes on growing (an
    arcsine of R[2,0] alone folds a swing about 90 deg back below it)."""
    w, x, y, z = (np.asarray(r[f"block.quaternion[{i}]"], float) for i in range(4))
    return np.arctan2(2.0 * (x * z - w * y), 1.0 - 2.0 * (y * y + z * z))


def vertical_support(r) -> np.ndarray:
    """Sum of the slings' vertical pull on the block (N, up +): minus the hooks' down forces."""
    return sum(np.asarray(r[f"block.hook{k}.force[2]"], float) for k in (1, 2, 3))


def _window(t: np.ndarray, a: float, b: float) -> np.ndarray:
    return (t >= a - 1e-9) & (t <= b + 1e-9)


def summarize_turnover(r) -> dict:
    """Key figures of a turnover run: the static balance at rest (before the hoist, and at the end in
    calm water), the angle reached, the largest contact force, contact nodes and penetration."""
    t = np.asarray(r.time, float)
    weight = BLOCK_MASS * G
    support = vertical_support(r)
    out = {"weight_N": weight}
    rest = _window(t, PHASES["settle"] - 0.5, PHASES["settle"])
    if rest.any():
        out["balance_start"] = float(support[rest].mean() / weight - 1.0)
    end = _window(t, PHASES["end"] - REST_WINDOW, PHASES["end"])
    if end.any() and t[-1] >= PHASES["end"] - 1e-6:
        out["balance_end"] = float(support[end].mean() / weight - 1.0)
    phi = turn_angle(r)
    out["turn_angle_end_deg"] = float(np.degrees(phi[end].mean())) if end.any() else float(np.degrees(phi[-1]))
    out["turn_angle_end_swing_deg"] = float(np.degrees(np.ptp(phi[end]))) if end.any() else None
    out["turn_angle_max_deg"] = float(np.degrees(phi.max()))
    f = np.asarray(r["block.contact.force"], float)
    k = int(np.argmax(f))
    out["contact_force_max_t"] = float(f[k] / 1e3 / G)
    out["contact_force_max_time_s"] = float(t[k])
    turning = t <= SHORT_STOP
    out[f"contact_force_max_to_{SHORT_STOP:g}s_t"] = float(f[turning].max() / 1e3 / G) if turning.any() else None
    hook = np.asarray(r["block.contact.hook_force"], float) if "block.contact.hook_force" in r else np.zeros(1)
    out["hook_contact_force_max_t"] = float(hook.max() / 1e3 / G)
    out["hook_contact_time_s"] = float(t[np.flatnonzero(hook > 0.0)[0]]) if np.any(hook > 0.0) else None
    nodes = sum(np.asarray(r[f"block.sling{j}.contact_nodes"], float) for j in range(1, 11))
    out["contact_nodes_max"] = int(nodes.max())
    touching = np.nonzero(nodes > 0)[0]
    out["contact_start_s"] = float(t[touching[0]]) if touching.size else None
    out["penetration_max_m"] = float(np.asarray(r["block.contact.penetration"], float).max())
    out["sling_tension_max_t"] = float(max(np.asarray(r[f"block.sling{j}.tension"], float).max()
                                           for j in range(1, 11)) / 1e3 / G)
    return out


def describe_turnover(summary: dict) -> list[str]:
    out = []
    if "balance_start" in summary:
        out.append(f"at rest before the hoist, slings carry the weight to {summary['balance_start']:+.2e}")
    if "balance_end" in summary:
        out.append(f"at rest at the end: {summary['balance_end']:+.2e}")
    if "turn_angle_end_deg" in summary:
        out.append(f"turned over {summary['turn_angle_end_deg']:.1f} deg (max {summary['turn_angle_max_deg']:.1f})")
    if "contact_force_max_t" in summary:
        out.append(f"largest contact force {summary['contact_force_max_t']:.1f} t at "
                   f"{summary['contact_force_max_time_s']:.2f} s, {summary['contact_nodes_max']} contact nodes at "
                   f"most, deepest sling point inside the block {summary['penetration_max_m']:.1e} m")
    return out


def plot_turnover_panels(r) -> tuple[dict, list]:
    """Plot panels (orchestration.runs.plotting.plot_panels) and phase marks of a turnover run."""
    panels = {}
    fc = [(np.asarray(r[f"block.sling{j}.tension"]) / 1e3 / G, f"sling {j}") for j in range(1, 5)]
    panels["sling_tensions_floating"] = {"title": "floating-crane sling tensions", "ylabel": "t", "lines": fc}
    cr = [(np.asarray(r[f"block.sling{j}.tension"]) / 1e3 / G, f"sling {j} (crawler {1 if j < 8 else 2})")
          for j in range(5, 11)]
    panels["sling_tensions_crawlers"] = {"title": "crawler sling tensions", "ylabel": "t", "lines": cr}
    loads = [(-np.asarray(r[f"block.hook{k}.force[2]"]) / 1e3 / G, name)
             for k, name in ((1, "floating crane"), (2, "crawler 1"), (3, "crawler 2"))]
    panels["hook_loads"] = {"title": "vertical hook loads", "ylabel": "t", "lines": loads,
                            "hlines": [(BLOCK_MASS / 1e3, "block weight")]}
    nodes = sum(np.asarray(r[f"block.sling{j}.contact_nodes"], float) for j in range(1, 11))
    panels["contact_force"] = {"title": "contact force on the block (largest node) and contact nodes",
                               "ylabel": "t, count", "lines": [
                                   (np.asarray(r["block.contact.force"]) / 1e3 / G, "largest node force [t]"),
                                   (nodes, "contact nodes")]}
    panels["block_attitude"] = {"title": "block attitude", "ylabel": "deg", "lines": [
        (np.degrees(turn_angle(r)), "turnover angle"), (np.degrees(np.asarray(r["block.euler[0]"])), "roll"),
        (np.degrees(np.asarray(r["block.euler[2]"])), "yaw")], "hlines": [(90.0, "90 deg")]}
    panels["barge_motions"] = {"title": "floating crane barge", "ylabel": "m, deg", "lines": [
        (-np.asarray(r["barge.position[2]"]), "heave up [m]"),
        (np.degrees(np.asarray(r["barge.euler[0]"])), "roll [deg]"),
        (np.degrees(np.asarray(r["barge.euler[1]"])), "pitch [deg]")]}
    marks = [(PHASES["hoist"][0], "1: all hoist"), (PHASES["turn"][0], "2: turn"),
             (PHASES["lower"][0], "3: crawlers lower")]
    return panels, marks
