"""Quasi-static control of the heave-roll-pitch platform (components/platform.py): de Zeeuw's baseline
(thesis Ch. 3 and §4-6, setPos.m and meandiff.m; ship_crane_digest.md §3.1).

The controller regulates leg lengths towards those that would put the platform at its inertial set
point **if the ship stayed where it is**; the ship's answer to the control reaction is ignored:

    z_rel = (z_set - eta_3) / (cos phi_s cos theta_s),   phi_rel = phi_set - phi_s,   theta_rel = theta_set - theta_s
    ell_set = ell([z_rel, phi_rel, theta_rel]),           e = ell_set - ell                         (setPos.m)
    e_mean = mean(e),  e_diff = e - e_mean,   f = PID_mean(e_mean) [1, 1, 1] + PID_diff(e_diff)   (meandiff.m)

with the thesis' gains P_mean = 8e6, P_diff = 200e6, I_mean = 4e6, I_diff = 90e6, D_mean = 2e6,
D_diff = 60e6 (SI: N/m, N/(m s), N s/m; the thesis states no units). eta_3 is the ship's heave at the
deck origin (NED down) and z_set the platform origin's inertial NED height. The controller is sampled
at its period dt: the integral by forward Euler, the derivative as the error's backward difference
(e_k - e_{k-1}) / dt (0 at the first sample), so that it follows the ship's motion through ell_set
(a derivative on the measured leg rates alone lags the ship by D/P = 0.3 s: 0.6 deg of tower tilt
in the thesis' sea, measured). The integrators start at the static leg force of the start pose
(``precharge``), so that a run starts in equilibrium rather than with the platform dropping.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from components.platform import SarrusGeometry, inverse_kinematics

THESIS_GAINS = {"P_mean": 8e6, "P_diff": 200e6, "I_mean": 4e6, "I_diff": 90e6, "D_mean": 2e6, "D_diff": 60e6}


@dataclass
class QuasiStaticPID:
    geometry: SarrusGeometry
    P_mean: float = THESIS_GAINS["P_mean"]
    P_diff: float = THESIS_GAINS["P_diff"]
    I_mean: float = THESIS_GAINS["I_mean"]
    I_diff: float = THESIS_GAINS["I_diff"]
    D_mean: float = THESIS_GAINS["D_mean"]
    D_diff: float = THESIS_GAINS["D_diff"]

    def __post_init__(self):
        self.integral = np.zeros(3)         # integral of e (per leg): mean and differential parts are its split
        self.previous = None                # e of the previous sample

    def precharge(self, static_forces: np.ndarray) -> None:
        """Start the integrators so that the command with zero error is ``static_forces`` (N)."""
        f = np.asarray(static_forces, float)
        mean = f.mean()
        self.integral = mean / self.I_mean + (f - mean) / self.I_diff

    def leg_setpoints(self, ship_heave: float, ship_roll: float, ship_pitch: float, setpoint) -> np.ndarray:
        """ell_set of setPos.m: the legs that put the platform at ``setpoint`` (z_set NED, roll, pitch)
        on the ship's present heave, roll and pitch."""
        z_set, phi_set, theta_set = setpoint
        x_rel = np.array([(z_set - ship_heave) / (np.cos(ship_roll) * np.cos(ship_pitch)),
                          phi_set - ship_roll, theta_set - ship_pitch])
        return inverse_kinematics(x_rel, self.geometry).length[0]

    def forces(self, e: np.ndarray, e_integral: np.ndarray, e_rate: np.ndarray) -> np.ndarray:
        m, mi, md = e.mean(), e_integral.mean(), e_rate.mean()
        return ((self.P_mean * m + self.I_mean * mi + self.D_mean * md)
                + self.P_diff * (e - m) + self.I_diff * (e_integral - mi) + self.D_diff * (e_rate - md))

    def command(self, ship_heave: float, ship_roll: float, ship_pitch: float, setpoint, legs: np.ndarray,
                dt: float) -> np.ndarray:
        """Leg force commands (N) for the measurements of this sample; advances the integral and
        keeps the error for the next sample's derivative."""
        e = self.leg_setpoints(ship_heave, ship_roll, ship_pitch, setpoint) - np.asarray(legs, float)
        rate = np.zeros(3) if self.previous is None else (e - self.previous) / dt
        f = self.forces(e, self.integral, rate)
        self.integral = self.integral + e * dt
        self.previous = e
        return f
