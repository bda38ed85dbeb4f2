"""Tests of components/line.py: lumped-mass line on MoorDyn's 50 m chain (anchors_marine.md 3a).

Deck (MoorDyn tests/Mooring/WD0050_Chain.txt, the same as tests/components/test_catenary.py's MOORDYN_DECK):
chain D = 0.252 m, 390 kg/m, EA = 1.674e9 N, BA = -1 (critical), Cdn/Cdt = 1.37/0.64, Can = 1,
L = 410 m, 41 segments, anchor 400 m from the fairlead and 50 m below it, kBot = 1e5, cBot = 1e4,
friction 0.5.  MoorDyn frame: z up, fairlead at the origin; ours NED with the same origin.
"""
from __future__ import annotations

import math
import os
import time

import numpy as np
import pytest

from components.catenary import solve_catenary
from components.line import Line, LineParams
from tests.components.test_catenary import CHAIN_D, CHAIN_W, MOORDYN_DECK

CHAIN = LineParams(length=410.0, diameter=0.252, mass_per_length=390.0, EA=1.674e9, damping=-1.0,
                   Cdn=1.37, Cdt=0.64, Can=1.0, Cat=0.0, kBot=1e5, cBot=1e4, friction=0.5)
ANCHOR = np.array([400.0, 0.0, 50.0])
FAIRLEAD = np.zeros(3)
UP = np.array([1.0, 1.0, -1.0])                      # NED <-> MoorDyn's z up


def make_line(**kw) -> Line:
    return Line(CHAIN, ANCHOR, FAIRLEAD, 41, 50.0, **kw)


def heave(t: float, amp: float = 1.0, period: float = 10.0, ramp: float = 20.0):
    """Upward fairlead heave (z up) and its rate, ramped in linearly over ``ramp`` s."""
    w = 2 * math.pi / period
    if t < ramp:
        return amp * t / ramp * math.sin(w * t), amp * (t / ramp * w * math.cos(w * t)
                                                        + math.sin(w * t) / ramp)
    return amp * math.sin(w * t), amp * w * math.cos(w * t)


def run_ours(t_end: float, dt: float = 0.1, **kw):
    line = make_line(**kw)
    T = []
    t0 = time.perf_counter()
    for k in range(int(round(t_end / dt))):
        z, zd = heave(k * dt)
        line.set_ends(ANCHOR, np.zeros(3), [0.0, 0.0, -z], [0.0, 0.0, -zd])
        line.step(dt)
        T.append(np.linalg.norm(line.fairlead_force()))
    return np.array(T), time.perf_counter() - t0, line


def run_moordyn(tmp_path, t_end: float | None, dt: float = 0.1):
    """MoorDyn 2.7.2 on the deck: static init, then (optionally) the heave; returns a dict."""
    moordyn = pytest.importorskip("moordyn")
    deck = tmp_path / "chain.txt"
    deck.write_text(MOORDYN_DECK)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        s = moordyn.Create(str(deck))
        assert moordyn.Init(s, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]) == 0
        line = moordyn.GetLine(s, 1)
        n = moordyn.GetLineN(line)
        out = {"ten_anchor": float(np.linalg.norm(moordyn.GetLineNodeTen(line, 0))),
               "ten_fair": float(np.linalg.norm(moordyn.GetLineNodeTen(line, n))),
               "fast": moordyn.GetFASTtens(s, 1)}
        # force on the coupled fairlead at rest: one 1 ms step at zero velocity
        out["F_fair0"] = np.array(moordyn.Step(s, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], 0.0, 1e-3))
        T, t = [], 1e-3
        t0 = time.perf_counter()
        if t_end:
            for k in range(int(round(t_end / dt))):
                z, zd = heave(k * dt)
                F = moordyn.Step(s, [0.0, 0.0, z], [0.0, 0.0, zd], t, dt)
                t += dt
                T.append(np.linalg.norm(F))
        out["wall"] = time.perf_counter() - t0
        out["T"] = np.array(T)
        moordyn.Close(s)
    finally:
        os.chdir(cwd)
    return out


# ------------------------------------------------------------------------------------- tests
def test_rest_from_catenary():
    """(1) At-rest start: < 1 cm drift in 10 s; fairlead tension within 1 % of the catenary.

    The catenary is solved over the seabed's equilibrium penetration w / (kBot d) = 0.132 m,
    the depth at which the grounded part of a spring seabed rests (see test_catenary).
    """
    line = make_line()
    r0 = line.node_positions()
    T0 = np.linalg.norm(line.fairlead_force())
    for _ in range(100):
        line.step(0.1)
    assert line.state_is_finite()
    assert np.max(np.linalg.norm(line.node_positions() - r0, axis=1)) < 0.01
    cat = solve_catenary(400.0, 50.0 + CHAIN_W / (1e5 * CHAIN_D), 410.0, CHAIN_W, CHAIN.EA)
    T1 = np.linalg.norm(line.fairlead_force())
    assert T1 == pytest.approx(cat.tension_fairlead, rel=0.01)
    assert T1 == pytest.approx(T0, rel=1e-6)


def test_static_vs_moordyn(tmp_path, validation):
    """(2) Static fairlead / anchor tensions vs MoorDyn 2.7.2 within 3 % (measured: < 0.2 %)."""
    md = run_moordyn(tmp_path, None)
    line = make_line()
    T = line.tensions()
    F = line.fairlead_force()
    print(f"\nstatic: fairlead segment tension ours {T[-1]/1e3:.1f} kN, MoorDyn "
          f"{md['ten_fair']/1e3:.1f} kN; anchor {T[0]/1e3:.1f} / {md['ten_anchor']/1e3:.1f} kN; "
          f"fairlead force ours {F/1e3} kN, MoorDyn {md['F_fair0'] * UP / 1e3} kN")
    fh, fv, ah, av = md["fast"]
    for what, ref, ours in (("fairlead segment tension", md["ten_fair"], T[-1]),
                            ("anchor segment tension", md["ten_anchor"], T[0]),
                            ("fairlead force", np.linalg.norm(md["F_fair0"]), np.linalg.norm(F)),
                            ("horizontal fairlead force", abs(fh[0]), abs(F[0])),
                            ("horizontal anchor force", abs(ah[0]), abs(line.anchor_force()[0]))):
        validation.record(case=f"lumped-mass line at rest, 50 m chain: {what} vs MoorDyn", reference=ref / 1e3,
                          ours=ours / 1e3, tolerance=0.03, unit="kN",
                          source="MoorDyn 2.7.2 (python moordyn), 50 m chain deck")
    assert T[-1] == pytest.approx(md["ten_fair"], rel=0.03)
    assert T[0] == pytest.approx(md["ten_anchor"], rel=0.03)
    assert np.linalg.norm(F) == pytest.approx(np.linalg.norm(md["F_fair0"]), rel=0.03)
    # horizontal tension, both ends (MoorDyn's GetFASTtens fh / ah)
    fh, fv, ah, av = md["fast"]
    assert abs(F[0]) == pytest.approx(abs(fh[0]), rel=0.03)
    assert abs(line.anchor_force()[0]) == pytest.approx(abs(ah[0]), rel=0.03)


@pytest.mark.slow
def test_dynamic_heave_vs_moordyn(tmp_path, validation):
    """(3) 1 m / 10 s heave (20 s ramp): max fairlead force over 30 s within 5 % of MoorDyn's
    (measured ~0.1 %); also prints the wall time of the 60 s case at 0.1 s coupling steps."""
    md = run_moordyn(tmp_path, 60.0)
    T, wall, line = run_ours(60.0)
    assert line.state_is_finite()
    ours, theirs = T[:300].max(), md["T"][:300].max()
    print(f"\ndynamic heave: max fairlead force over 30 s ours {ours/1e3:.1f} kN, MoorDyn "
          f"{theirs/1e3:.1f} kN ({ours/theirs - 1:+.2%}); 60 s: ours {T.max()/1e3:.1f} kN, "
          f"MoorDyn {md['T'].max()/1e3:.1f} kN")
    print(f"wall time 60 s at 0.1 s coupling: ours {wall:.2f} s (RK2, sub-step "
          f"{line.substep*1e3:.2f} ms), MoorDyn {md['wall']:.2f} s (RK2, dtM 1 ms)")
    validation.record(case="50 m chain, 1 m / 10 s fairlead heave: max fairlead force over 30 s vs MoorDyn (explicit)",
                      reference=theirs / 1e3, ours=ours / 1e3, tolerance=0.05, unit="kN",
                      source="MoorDyn 2.7.2 (python moordyn), 50 m chain deck")
    validation.record(case="50 m chain, 1 m / 10 s fairlead heave: min fairlead force vs MoorDyn (explicit)",
                      reference=np.min(md["T"]) / 1e3, ours=np.min(T) / 1e3, tolerance=0.05, unit="kN",
                      source="MoorDyn 2.7.2 (python moordyn), 50 m chain deck")
    assert ours == pytest.approx(theirs, rel=0.05)
    assert np.min(T) == pytest.approx(np.min(md["T"]), rel=0.05)


def test_dynamic_heave_vs_moordyn_implicit(tmp_path, validation):
    """(3b) The same heave with the implicit theta-method at its default 0.02 s sub-step (17x the
    explicit limit): max and min fairlead force within 1 % of MoorDyn's (measured -0.05 %/+0.06 %)."""
    md = run_moordyn(tmp_path, 60.0)
    T, wall, line = run_ours(60.0, scheme="implicit")
    assert line.substep == pytest.approx(0.02) and line.substep > 4 * line.dt_stable
    print(f"\nimplicit: max {T.max()/1e3:.1f} kN vs MoorDyn {md['T'].max()/1e3:.1f} kN "
          f"({T.max()/md['T'].max() - 1:+.3%}); wall {wall:.2f} s vs MoorDyn {md['wall']:.2f} s")
    validation.record(case="50 m chain, fairlead heave: max fairlead force vs MoorDyn (implicit, 0.02 s sub-step)",
                      reference=md["T"].max() / 1e3, ours=T.max() / 1e3, tolerance=0.01, unit="kN",
                      source="MoorDyn 2.7.2 (python moordyn), 50 m chain deck")
    validation.record(case="50 m chain, fairlead heave: min fairlead force vs MoorDyn (implicit, 0.02 s sub-step)",
                      reference=md["T"].min() / 1e3, ours=T.min() / 1e3, tolerance=0.01, unit="kN",
                      source="MoorDyn 2.7.2 (python moordyn), 50 m chain deck")
    assert T.max() == pytest.approx(md["T"].max(), rel=0.01)
    assert T.min() == pytest.approx(md["T"].min(), rel=0.01)


@pytest.mark.slow
def test_rk4_at_its_default_substep_matches_rk2():
    """Regression: RK4's stage velocities once aliased (k2v became k3v), +26 % max force on this
    heave at the default sub-step; now RK4 (4.8 ms) and RK2 (3.4 ms) agree within 0.1 %."""
    T2, _, _ = run_ours(30.0)
    T4, _, line = run_ours(30.0, scheme="rk4")
    assert line.substep == pytest.approx(line.dt_stable)
    assert T4.max() == pytest.approx(T2.max(), rel=1e-3)
    assert T4.min() == pytest.approx(T2.min(), rel=1e-3)


def test_slack_never_compresses():
    """(4) Fairlead driven 40 m toward the anchor and 20 m down in 4 s: slack, no compression."""
    line = make_line()
    v = np.array([10.0, 0.0, 5.0])
    seen_slack = False
    for k in range(100):
        line.set_ends(ANCHOR, np.zeros(3), line.node_positions()[-1],
                      v if k < 40 else np.zeros(3))
        line.step(0.1)
        T = line.tensions()
        assert np.all(np.isfinite(T)) and np.all(T >= 0.0)
        assert line.state_is_finite()
        seen_slack |= bool(np.any(T == 0.0))
    assert seen_slack


def test_snap_finite():
    """(5) A jerk: fairlead pulled 1.5 m away at 15 m/s in 0.1 s, then held: finite tensions."""
    line = make_line()
    T0 = line.tensions().max()
    peak = 0.0
    for k in range(50):
        vel = np.array([-15.0, 0.0, 0.0]) if k == 0 else np.zeros(3)
        line.set_ends(ANCHOR, np.zeros(3), line.node_positions()[-1], vel)
        line.step(0.1)
        assert line.state_is_finite()
        T = line.tensions()
        assert np.all(np.isfinite(T)) and np.all(T >= 0.0)
        peak = max(peak, T.max())
    assert T0 < peak < 1e9


def test_state_round_trip_bit_identical():
    """(6) get_state / set_state: copies, and a restored run repeats bit for bit."""
    line = make_line()
    for k in range(10):
        z, zd = heave(k * 0.1, amp=3.0, ramp=1.0)
        line.set_ends(ANCHOR, np.zeros(3), [0.0, 0.0, -z], [0.0, 0.0, -zd])
        line.step(0.1)
    s = line.get_state()

    def run():
        out = []
        for k in range(10, 20):
            z, zd = heave(k * 0.1, amp=3.0, ramp=1.0)
            line.set_ends(ANCHOR, np.zeros(3), [0.0, 0.0, -z], [0.0, 0.0, -zd])
            line.step(0.1)
            out.append(np.concatenate([line.node_positions().ravel(), line.tensions()]))
        return np.array(out)

    a = run()
    s_after = line.get_state()
    line.set_state(s)
    b = run()
    assert np.array_equal(a, b)
    s["r"][:] = np.nan                                       # the state handed out is a copy
    assert line.state_is_finite()
    assert all(np.array_equal(line.get_state()[k], s_after[k]) for k in ("r", "v", "rb"))


def test_rk4_and_substep_override():
    """RK4 and an explicit sub-step also keep the chain at rest; the stability figures."""
    line = make_line(scheme="rk4", substep=0.004)
    assert line.omega_max == pytest.approx(2 * math.sqrt(1.674e9 / (390.0 * 10.0 * 10.0)))
    assert make_line().substep == pytest.approx(0.7 * 2 / line.omega_max)
    r0 = line.node_positions()
    for _ in range(20):
        line.step(0.1)
    assert np.max(np.abs(line.node_positions() - r0)) < 0.01
    with pytest.raises(ValueError):
        make_line(scheme="euler")
