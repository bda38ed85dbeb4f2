"""Servo-constraint inverse dynamics and its feedforward (components/servo_constraints.py,
components/suspended_load.py, components/crane_rigs.py; Lee 2020 §2.5.4 eqs. 107-109, §3.3;
digest §1.7, §2.12).

* statics: at rest the inverse dynamics' tensions carry the load exactly (the rope wrench equals
  the weight, to 1e-9 of it), in both rigs;
* the planned profile: with the trapezoid (jumps of c'') the trolley force the inverse dynamics
  asks grows as 1 / dt^2 (no limit), with the C4 SmoothProfile it stays put and under the 50 kN;
* §3.3 / §2.12 "the block tracks the target trajectory exactly" (figure only): the feedforward
  alone on the elastic-rope plant, through the 60 s transport and 90 deg turnover of the gantry.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from components.crane_rigs import FloatingCrane, GantryCrane, floating_plan, gantry_plan
from components.hybrid_control import run
from components.servo_constraints import InverseDynamics, rope_wrench
from components.trajectory import PlannedMotion, TrapezoidProfile

VALIDATION_COMPONENT = "crane trajectory control"
SOURCE = "wire_rope_mooring_digest.md §2.12 (Lee 2020 §3.3)"


@pytest.mark.parametrize("rig_plan", ["gantry", "floating"])
def test_statics_carry_the_weight(rig_plan):
    rig = GantryCrane() if rig_plan == "gantry" else FloatingCrane()
    plan = gantry_plan() if rig_plan == "gantry" else floating_plan(rig)
    guess = rig.initial_drives() if hasattr(rig, "initial_drives") else np.zeros(6)
    inv = InverseDynamics(rig, 0.01)
    first = inv.start(0.0, plan.at(0.0), p_guess=guess)
    pose = plan.at(0.0)
    A = pose["position"] + (pose["attitude"] @ rig.lugs.T).T
    W = rope_wrench(first.S, A, pose["position"], first.T)
    mg = rig.mass * 9.81
    assert np.allclose(W, [0.0, 0.0, -mg, 0.0, 0.0, 0.0], atol=1e-9 * mg)
    assert (first.T > 0.0).all()
    # inextensible ropes: the winch lengths are the distances (f4)
    assert np.allclose(first.p[rig.rope_drive], np.linalg.norm(A - first.S, axis=1), rtol=1e-12)


def _peak_trolley_force(profile_cls, dt, t_end=16.0):
    rig = GantryCrane()
    base = gantry_plan()
    plan = PlannedMotion(base.r0, base.rf, base.R_a, base.R_e, profile_cls(0.0, 60.0, 15.0))
    inv = InverseDynamics(rig, dt)
    inv.start(0.0, plan.at(0.0), p_guess=np.zeros(6))
    peak = 0.0
    for k in range(1, int(round(t_end / dt)) + 1):
        peak = max(peak, float(np.abs(inv.step(k * dt, plan.at(k * dt)).u[1:3]).max()))
    return peak


def test_the_smooth_profile_keeps_the_trolley_force_bounded():
    """The trapezoid's acceleration jump at t = 15 s: the trolley must jump to a new rope slope
    in one step, so the force it is asked for grows as 1 / dt^2 (measured 15 MN at dt 0.02 s, 61 MN
    at 0.01 s); the C4 profile's does not (15.7 kN at both)."""
    from components.trajectory import SmoothProfile
    trap = [_peak_trolley_force(TrapezoidProfile, dt) for dt in (0.02, 0.01)]
    smooth = [_peak_trolley_force(SmoothProfile, dt) for dt in (0.02, 0.01)]
    assert trap[1] > 3.5 * trap[0] and trap[1] > 1e6              # unbounded as dt -> 0
    assert smooth[1] == pytest.approx(smooth[0], rel=0.01)         # converged
    assert smooth[1] < 50e3                                        # the thesis' trolley limit


def test_feedforward_alone_tracks_the_gantry_transport_and_turnover(validation):
    """§3.3 (digest §2.12): "tracks exactly" (figure only).  Ours, 60 s, (0, 0, 20) -> (25, 10, 10)
    with 90 deg turnover: max position error 0.30 mm, attitude 0.011 mrad.  Tolerance: 1 mm and
    0.1 mrad (a few times ours: "exactly" at the scale of the figure)."""
    rig = GantryCrane()
    res = run(rig, gantry_plan(), 60.0)
    pos = np.abs(res.s[:, :3]).max()
    rot = np.abs(res.s[:, 3:]).max()
    print(f"feedforward alone: max position error {pos * 1e3:.3f} mm, attitude {rot * 1e3:.4f} mrad")
    validation.record(case="§3.3 gantry feedforward alone: max position error (thesis: tracks exactly)",
                      reference=0.0, ours=pos, tolerance=1e-3, tol_kind="abs", unit="m", source=SOURCE)
    validation.record(case="§3.3 gantry feedforward alone: max attitude error (thesis: tracks exactly)",
                      reference=0.0, ours=rot, tolerance=1e-4, tol_kind="abs", unit="rad", source=SOURCE)
    assert pos < 1e-3
    assert rot < 1e-4
    assert (res.T > 0.0).all()                                     # no rope goes slack
    assert np.abs(res.force[:, 1:3]).max() < 50e3                  # under the trolley limit
    # the plan really turned the block over
    assert math.degrees(math.acos((np.trace(gantry_plan().at(60.0)["attitude"]) - 1) / 2)) == pytest.approx(90.0)


def test_without_the_drive_servo_the_feedforward_diverges():
    """Why hybrid_control has a drive servo (a choice; the thesis has none): with the feedforward
    torques and forces alone nothing holds the drives' positions, and the load hung on constant-
    tension winches is statically unstable (hook 3's lug is below the CG).  Measured: 3.8 mm off at
    15 s, 0.11 m at 20 s, 1.4 m at 25 s (e-folding about 1.5 s).  Tolerance: > 5 cm by 22 s."""
    res = run(GantryCrane(), gantry_plan(), 22.0, servo_bandwidth=np.zeros(6))
    err = np.linalg.norm(res.s[:, :3], axis=1)
    assert err[res.t <= 10.0].max() < 5e-3          # it starts on the trajectory ...
    assert err[-1] > 0.05                             # ... and leaves it
