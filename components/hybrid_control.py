"""Hybrid trajectory control of a crane-load system: feedforward from the servo-constraint inverse
dynamics plus a PID feedback on the load's tracking error (Lee 2020, §2.5.4(2), eqs. 110-111;
digest §1.7, §2.15, §2.16).

Feedforward: the inverse dynamics (components/servo_constraints.py) runs along the planned pose
gamma(t) and gives the drive trajectory p_model(t) and the inputs u_ff that drive the plant
(components/suspended_load.py).

Feedback: the stabilised servo constraint (eq. 110), s = x_plant - gamma,

    s'' + alpha s' + beta s + chi int s dt = 0,

enters the inverse dynamics by replacing gamma'' in f3 (the load's equation) by
gamma'' - alpha s' - beta s - chi int s dt (eq. 111; components/trajectory.py ServoFeedback).
For the rotation s is the rotation vector of R_plant R_plan^T and s' = w_plant - w_plan (world).
The model starts from the feedback's first demand (solved as statics), so that a start off the
trajectory (§4.3.1 case 1) does not make its drives jump in the first step.

Drive servo (CHOICE, not in the thesis):

    B u = B u_ff + M_p (omega^2 (p_model - p) + 2 zeta omega (p_model' - p'))

Why: with torque and force inputs alone nothing holds a drive's position.  A winch driven by its
feedforward torque is a constant-tension source, and a load hung on constant-tension ropes with a
lug below its CG (the gantry's hook 3 during the turnover) or on luffing booms is statically
unstable: run open loop, the feedforward of both cranes diverged (the gantry's load 3.8 mm off at
15 s, 0.11 m at 20 s, 1.4 m at 25 s, e-folding in about 1.5 s: tests/components/
test_servo_constraints.py; the floating crane's, in calm water, 1.3 mm off at 15 s, 16 mm at 20 s,
0.19 m at 25 s), and with the feedback only on
the load, eq. 110's slow poles could not catch it.  The thesis' plant may not
have had the instability (hooks and equalizer slings, not modelled here), or the digest does not
say how its drives were held.  Bandwidths omega: a rig's ``servo_bandwidth`` (gantry girder and
trolleys 3 rad/s, winches 20 rad/s; floating crane booms 5, winches 20), zeta 1.

Gains of eq. 110 (gap): a triple pole at 0.4 1/s (alpha 1.2, beta 0.48, chi 0.064), which brings
the gantry's 1 m start error within 1 cm by 40 s with the trolley force saturating at 50 kN at the
start (§4.3.1 case 1); the same gains serve the floating crane.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from components.servo_constraints import InverseDynamics
from components.suspended_load import SuspendedLoad
from components.trajectory import PlannedMotion, ServoFeedback, axis_angle

__all__ = ["tracking_error", "run", "RunResult", "POLES", "thesis_feedback"]

POLES = (0.4, 0.4, 0.4)        # eq. 110's poles [1/s] (module docstring; the thesis gives no gains)


def thesis_feedback() -> ServoFeedback:
    """The PID of eq. 110 with the poles chosen here (alpha 1.2, beta 0.48, chi 0.064)."""
    return ServoFeedback.from_poles(POLES)


def tracking_error(plant: SuspendedLoad, pose: dict) -> tuple[np.ndarray, np.ndarray]:
    """(s, s') (6,) of eq. 110: position and rotation-vector error, and their rates (world)."""
    R_err = plant.attitude @ pose["attitude"].T
    axis, angle = axis_angle(R_err)
    s = np.concatenate((plant.position - pose["position"], axis * angle))
    s_d = np.concatenate((plant.body.velocity - pose["velocity"],
                          plant.body.angular_velocity_ned - pose["angular_velocity"]))
    return s, s_d


@dataclass
class RunResult:
    """Time series of a run: t (N,), error s (N, 6) [m, rad], tensions T (N, n), applied drive forces
    B sat(u) (N, n_p), plant drive coordinates p (N, n_p), the ropes' upward resultant on the load
    lift (N,) [N], and the load's weight [N]."""
    t: np.ndarray
    s: np.ndarray
    T: np.ndarray
    force: np.ndarray
    p: np.ndarray
    lift: np.ndarray
    weight: float

    def daf(self) -> tuple[float, float]:
        """(max, min) of lift / weight: the dynamic amplification factor of §4.3.2 (the thesis: the
        maximum total rope tension over the weight, its ropes hanging about vertical; here the
        vertical resultant, which does not grow with the ropes' slope)."""
        return float(self.lift.max() / self.weight), float(self.lift.min() / self.weight)


def run(rig: Any, plan: PlannedMotion, t_end: float, dt: float = 0.01,
        feedback: ServoFeedback | None = None, start_offset: np.ndarray | None = None,
        plant_options: dict | None = None, servo_bandwidth: np.ndarray | None = None,
        servo_damping: float = 1.0, measured_drives: bool = False) -> RunResult:
    """Drive the plant along the plan for t_end seconds with the feedforward (and the feedback if
    given).  The model starts at the planned start pose at rest; the plant in static equilibrium at
    that pose moved by start_offset (3,) (its crane under the moved load: §4.3.1 case 1).

    The drives follow the model's drive trajectory through a servo (module docstring):
    B u = B u_ff + M_p (omega^2 (p_model - p) + 2 zeta omega (v_model - v)), omega =
    servo_bandwidth (n_p,) [rad/s] (default: the rig's), zeta = servo_damping.
    measured_drives: instead of the servo, start each inverse-dynamics step from the plant's
    measured drive state (a one-step, deadbeat drive loop)."""
    t0 = plan.profile.t0
    opts = dict(plant_options or {})
    EA = opts.setdefault("axial_stiffness", 2e8)
    inverse = InverseDynamics(rig, dt, axial_stiffness=EA)
    p_guess = rig.initial_drives() if hasattr(rig, "initial_drives") else np.zeros(rig.n_drives)
    pose0 = plan.at(t0)
    r0 = pose0["position"] + (np.zeros(3) if start_offset is None else np.asarray(start_offset, float))
    first = inverse.start(t0, pose0, p_guess=p_guess)
    p_plant, T_plant = first.p, first.T
    if start_offset is not None:
        rest = InverseDynamics(rig, dt, axial_stiffness=EA).start(t0, dict(pose0, position=r0), p_guess=first.p,
                                                                  T_guess=first.T)
        p_plant, T_plant = rest.p, rest.T
    plant = SuspendedLoad.at_rest(rig, r0, pose0["attitude"], p_plant, T_plant, t0=t0, **opts)
    if feedback is not None:
        # the model starts from the feedback's first demand: no jump of its drives in the first step
        s, s_d = tracking_error(plant, pose0)
        inverse.start(t0, pose0, p_guess=first.p, T_guess=first.T,
                      extra_acceleration=feedback.command(np.zeros(6), s, s_d))
    omega = np.asarray(rig.servo_bandwidth if servo_bandwidth is None else servo_bandwidth, float)
    Kp = rig.mass_matrix * omega ** 2
    Kd = rig.mass_matrix * 2.0 * servo_damping * omega
    n = int(round((t_end - t0) / dt))
    out_t, out_s, out_T, out_f, out_p, out_l = [], [], [], [], [], []
    for k in range(n):
        t = t0 + k * dt
        s, s_d = tracking_error(plant, plan.at(t))
        out_t.append(t)
        out_s.append(s)
        out_T.append(plant.T.copy())
        out_p.append(plant.p.copy())
        out_l.append(-plant.rope_force[2])
        da = None
        if feedback is not None:
            da = feedback.command(np.zeros(6), s, s_d)             # -alpha s' - beta s - chi int s
            feedback.update(s, dt)
        if measured_drives:
            u = inverse.step(t + dt, plan.at(t + dt), da, (plant.p, plant.v)).u
        else:
            p_m, v_m = inverse.p.copy(), inverse.v.copy()      # the model's drive state at t
            u = inverse.step(t + dt, plan.at(t + dt), da).u
            u = u + (Kp * (p_m - plant.p) + Kd * (v_m - plant.v)) / rig.input_gain
        plant.step(dt, u)
        out_f.append(plant.applied.copy())
    out_f.append(out_f[-1])
    s, s_d = tracking_error(plant, plan.at(t0 + n * dt))
    out_t.append(t0 + n * dt)
    out_s.append(s)
    out_T.append(plant.T.copy())
    out_p.append(plant.p.copy())
    out_l.append(-plant.rope_force[2])
    return RunResult(np.array(out_t), np.array(out_s), np.array(out_T), np.array(out_f), np.array(out_p),
                     np.array(out_l), rig.mass * 9.81)
