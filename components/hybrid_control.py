"""Hybrid trajectory control of a crane-load system: feedforward from the servo-constraint inverse
dynamics plus a PID feedback on the load's tracking error (Lee 2020, §2.5.4(2), eqs. 110-111;
digest §1.7, §2.15, §2.16).

Feedforward: the inverse dynamics (components/servo_constraints.py) runs open loop along the planned
pose gamma(t) and its inputs u_ff drive the plant (components/suspended_load.py).

Feedback: the stabilised servo constraint (eq. 110), s = x_plant - gamma,

    s'' + alpha s' + beta s + chi int s dt = 0,

enters the inverse dynamics by replacing gamma'' in f3 (the load's equation) by
gamma'' - alpha s' - beta s - chi int s dt (eq. 111; components/trajectory.py ServoFeedback).
For the rotation s is the rotation vector of R_plant R_plan^T and s' = w_plant - w_plan (world).
CHOICE (the thesis does not say how f3's change reaches u): it reaches u through the rope forces
on the drives only, u = u_ff - (Q(gamma'' + da) - Q(gamma'')) / B, both at the model's drive state;
the model's drive coordinates themselves stay on the feedforward solution.  Letting the feedback
move them instead would put it through f1-f2's second difference of p, i.e. differentiate it twice:
a 1 m error at the start would ask the trolleys for an infinite force in the first step.
CHOICE (gap): the gains, poles of eq. 110 at 0.2 1/s (alpha 0.6, beta 0.12, chi 0.008): the
gantry's trolley force limit of 50 kN against a 300 t block 1 m off (m beta s = 36 kN).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from components.servo_constraints import InverseDynamics
from components.suspended_load import SuspendedLoad
from components.trajectory import PlannedMotion, ServoFeedback, axis_angle

__all__ = ["tracking_error", "run", "RunResult"]


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
