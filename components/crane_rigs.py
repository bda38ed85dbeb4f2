"""The two cranes of the trajectory-control study of Lee 2020 (§2.5.3, case studies §3.3, §4.3.1,
§4.3.2; digest §1.7, §2.12, §2.15, §2.16, §3): their drive coordinates, where the ropes hang from,
and the parameters the thesis gives; the ones it does not give are chosen here and marked CHOICE.

A rig is what the inverse dynamics (components/servo_constraints.py) and the plant
(components/suspended_load.py) need of a crane:

* drive coordinates p (n_p) with the diagonal mass matrix M_p and input matrix B of eq. 97/105,
  ``M_p p'' = f_p + B u + Q``, Q the generalised rope force on the drives;
* ``suspension(p, t)``: the world positions S_i of the rope ends on the crane and dS_i/dp;
* ``rope_drive[i]``: the drive that is rope i's paid-out length p_ci (the winch, eq. 88);
* ``shape_drives``: the drives that move the suspension points (girder/trolleys, booms);
* ``lugs``: where the ropes end on the load (body frame, about the CG).

Frames: NED (z down), as all of marine-cosim.  The thesis' frame has z up; its heights are our -z,
and its (x, y) are kept, so our case is the thesis' mirrored in y (gravity is along z, so the
mirror image of a feasible motion is feasible and has the same tensions and errors).

**Gantry crane** (§2.5.3(1), eqs. 88-97): a girder travelling on rails (y, p_g0), an upper trolley
with hooks 1 and 2 (x, p_g1(2)), a lower trolley with hook 3 (x, p_g3), three winches (p_c1..3),
``M_p = diag(m0, m1(2), m3, J1/r1^2, J2/r2^2, J3/r3^2)``, ``B = diag(1, 1, 1, 1/r1, 1/r2, 1/r3)``.
The crane frame is fixed and the trolleys do not rotate (as in the thesis).  The hooks and the
equalizer slings (eqs. 92-96) are not modelled: each hoist rope ends at a lug on the block, as the
thesis does for the floating crane ("hooks ignored"); the digest notes the thesis does not show
how the hook coordinates enter its inverse dynamics either.

**Floating crane** (§2.5.3(2), eqs. 100-106): a barge in heave z and pitch theta (an exogenous
input, components/wave_motion.py), two booms hinged to it about y (p_b1, p_b2, luffing angles
above the deck), four ropes from sheaves on the booms (Y_i = [0, 0, l_i] along boom j, eq. 102) to
the block, ``M_p = diag(I_b1 + (l/2)^2 m_b1, I_b2 + (l/2)^2 m_b2, J1/r1^2 .. J4/r4^2)`` (the digest
reads eq. 100's J/r as a typo for J/r^2).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from components.trajectory import PlannedMotion, SmoothProfile, rotation

__all__ = ["GantryCrane", "FloatingCrane", "box_inertia", "gantry_plan", "floating_plan", "GRAVITY"]

GRAVITY = 9.81


def box_inertia(mass: float, lx: float, ly: float, lz: float) -> np.ndarray:
    """Inertia of a uniform box about its centre [kg m2].  CHOICE: the thesis gives no block
    inertia; a hull block is a shell, so this understates it by a factor of order 1-2."""
    return mass / 12.0 * np.diag([ly * ly + lz * lz, lx * lx + lz * lz, lx * lx + ly * ly])


@dataclass
class GantryCrane:
    """The gantry crane of §3.3 / §4.3.1 (module docstring).  p = [y_girder, x_trolley1, x_trolley3,
    l1, l2, l3].  Thesis values: block 300 t, trolley force limit 50 kN; the rest is CHOICE."""
    mass: float = 300e3                                   # [kg] 300 t (digest §2.15, quoted)
    size: tuple[float, float, float] = (20.0, 16.0, 8.0)  # CHOICE: L x B x H [m] (Fig. 4-12 only, gap)
    girder_height: float = 45.0                           # CHOICE: sheaves 45 m above ground [m]
    hook_spread: float = 6.0                              # CHOICE: hooks 1, 2 at x = +-6 m on trolley 1
    girder_mass: float = 1000e3                           # CHOICE [kg]
    trolley_masses: tuple[float, float] = (60e3, 40e3)    # CHOICE: upper, lower trolley [kg]
    winch_inertia: float = 20e3                           # CHOICE: J / r^2 of each winch [kg]
    drum_radius: float = 0.5                              # CHOICE: r [m]
    trolley_force_limit: float = 50e3                     # [N] 50 kN (digest §2.15, quoted)
    inertia: np.ndarray = field(init=False)
    lugs: np.ndarray = field(init=False)

    n_drives = 6
    rope_drive = np.array([3, 4, 5])
    shape_drives = np.array([0, 1, 2])

    def __post_init__(self) -> None:
        L, B, H = self.size
        self.inertia = box_inertia(self.mass, L, B, H)
        a = self.hook_spread
        # CHOICE: hooks 1, 2 at the top of the +y side, hook 3 at the bottom of the -y side, so that
        # every rope stays in tension through the 90 deg turnover about x (the -y side rises): a lug
        # on the top face of the -y side would pass under the girder and its rope would have to push
        self.lugs = np.array([[a, B / 2, -H / 2], [-a, B / 2, -H / 2], [0.0, -B / 2, H / 2]])

    @property
    def mass_matrix(self) -> np.ndarray:
        m1, m3 = self.trolley_masses
        return np.array([self.girder_mass, m1, m3] + [self.winch_inertia] * 3)

    @property
    def input_gain(self) -> np.ndarray:
        return np.array([1.0, 1.0, 1.0] + [1.0 / self.drum_radius] * 3)

    # CHOICE: the drive servo's bandwidth [rad/s] (components/hybrid_control.py): girder, trolleys, winches
    servo_bandwidth = np.array([3.0, 3.0, 3.0, 20.0, 20.0, 20.0])

    @property
    def input_limit(self) -> np.ndarray:
        """|B u| limits: the trolley forces saturate at 50 kN (the girder and winches: none given)."""
        f = self.trolley_force_limit
        return np.array([np.inf, f, f, np.inf, np.inf, np.inf])

    def suspension(self, p: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
        """S_i (3, 3) and dS_i/dp (3, 3, 6) (eq. 89 with a fixed crane frame and trolley sheaves
        on the girder line)."""
        y, x1, x3 = p[0], p[1], p[2]
        z = -self.girder_height
        a = self.hook_spread
        S = np.array([[x1 + a, y, z], [x1 - a, y, z], [x3, y, z]])
        dS = np.zeros((3, 3, 6))
        dS[:, 1, 0] = 1.0                 # the girder carries every sheave in y
        dS[0, 0, 1] = dS[1, 0, 1] = 1.0   # trolley 1 carries hooks 1, 2 in x
        dS[2, 0, 2] = 1.0                 # trolley 3 carries hook 3
        return S, dS

    def suspension_velocity(self, p: np.ndarray, v: np.ndarray, t: float) -> np.ndarray:
        """dS_i/dt (the crane frame is fixed)."""
        return np.einsum("ikj,j->ik", self.suspension(p, t)[1], v)

    def drive_forces(self, p: np.ndarray, v: np.ndarray, t: float) -> np.ndarray:
        """f_p: none (horizontal rails, no friction given)."""
        return np.zeros(6)


def gantry_plan(duration: float = 60.0, ramp: float = 15.0) -> PlannedMotion:
    """§4.3.1: (0, 0, 20) -> (25, 10, 10) with a 90 deg turnover (thesis frame; NED z = -height).
    CHOICE: the duration and ramp (the thesis' are in figures only); the turnover is about the
    block's x axis, lifting its -y side (the hook-3 side)."""
    return PlannedMotion(np.array([0.0, 0.0, -20.0]), np.array([25.0, 10.0, -10.0]), np.eye(3),
                         rotation([1.0, 0.0, 0.0], math.pi / 2), SmoothProfile(0.0, duration, ramp))


@dataclass
class FloatingCrane:
    """The floating crane of §4.3.2 (module docstring).  p = [beta1, beta2, l1, l2, l3, l4], beta the
    boom angle above the deck [rad].  Quoted: block 23 x 43 x 11 m, 300 t; barge 110 x 46 x 7.5 m,
    18 851 t (the barge's mass only sets its draught here: its motion is prescribed)."""
    mass: float = 300e3                                   # [kg] (digest §2.16, quoted)
    size: tuple[float, float, float] = (23.0, 43.0, 11.0)  # L x B x H [m] (quoted)
    barge: tuple[float, float, float, float] = (110.0, 46.0, 7.5, 18851e3)  # L, B, D [m], mass [kg] (quoted)
    hinge: tuple[float, float, float] = (40.0, 12.0, -6.0)  # CHOICE: hinges at x 40, y +-12, 6 m above water
    boom_length: float = 70.0                             # CHOICE [m]
    boom_mass: float = 150e3                              # CHOICE [kg] per boom
    sheaves: tuple[float, float] = (68.0, 52.0)           # CHOICE: l_i of the two ropes on each boom [m]
    lug_offsets: tuple[float, float] = (6.0, 16.0)        # CHOICE: lugs at x +-6, y +-16 on the block top
    winch_inertia: float = 20e3                           # CHOICE: J / r^2 [kg]
    drum_radius: float = 0.5                              # CHOICE [m]
    motion: Callable[[float], np.ndarray] | None = None   # t -> [z, z', z'', theta, theta', theta'']
    inertia: np.ndarray = field(init=False)
    lugs: np.ndarray = field(init=False)

    n_drives = 6
    rope_drive = np.array([2, 3, 4, 5])
    shape_drives = np.array([0, 1])
    boom_of_rope = np.array([0, 0, 1, 1])                 # ropes 1, 2 on boom 1 (y > 0), 3, 4 on boom 2

    def __post_init__(self) -> None:
        L, B, H = self.size
        self.inertia = box_inertia(self.mass, L, B, H)
        ax, ay = self.lug_offsets
        # rope 1 (outer sheave) to the front lug, rope 2 (inner sheave) to the back lug, each boom
        self.lugs = np.array([[ax, ay, -H / 2], [-ax, ay, -H / 2], [ax, -ay, -H / 2], [-ax, -ay, -H / 2]])

    @property
    def draught(self) -> float:
        L, B, _, m = self.barge
        return m / (1025.0 * L * B)                        # [m] 3.63 m: a box floating at its weight

    @property
    def hinge_inertia(self) -> float:
        """I_b + (l/2)^2 m_b of eq. 100, the boom a uniform rod (I_b = m l^2 / 12)."""
        return self.boom_mass * self.boom_length ** 2 / 3.0

    @property
    def mass_matrix(self) -> np.ndarray:
        return np.array([self.hinge_inertia] * 2 + [self.winch_inertia] * 4)

    @property
    def input_gain(self) -> np.ndarray:
        return np.array([1.0, 1.0] + [1.0 / self.drum_radius] * 4)

    # CHOICE: the drive servo's bandwidth [rad/s]: booms, winches
    servo_bandwidth = np.array([5.0, 5.0, 20.0, 20.0, 20.0, 20.0])

    @property
    def input_limit(self) -> np.ndarray:
        return np.full(6, np.inf)

    def initial_drives(self) -> np.ndarray:
        """A starting guess for the statics: booms at 55 deg."""
        return np.array([math.radians(55.0), math.radians(55.0), 30.0, 20.0, 30.0, 20.0])

    def barge_state(self, t: float) -> np.ndarray:
        """[z, z', z'', theta, theta', theta''] of the barge (heave down, pitch bow up) at t."""
        return np.zeros(6) if self.motion is None else np.asarray(self.motion(t), float)

    # The three functions below are the barge-borne kinematics of every rope evaluation (the inverse
    # dynamics' Newton residuals and the plant's sub-steps ask for them ~20 000 times a minute of
    # simulation): written out over the non-zero entries of R_y(theta) and its derivatives, in floats.

    def suspension(self, p: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
        """S_i = r_crane + R_crane (Z_j + R_Jj Y_i) (eq. 102), Y_i = l_i along boom j: a boom at
        angle beta above the deck points along R_y(theta) (cos beta, 0, -sin beta) =
        (cos phi, 0, -sin phi), phi = theta + beta; the hinge Z_j = (h_x, +-h_y, h_z) turns with the
        barge's pitch, R_y(theta) Z_j + (0, 0, z)."""
        z, _, _, th, _, _ = self.barge_state(t).tolist()
        hx, hy, hz = self.hinge
        c, s = math.cos(th), math.sin(th)
        x0, z0 = c * hx + s * hz, -s * hx + c * hz + z           # both hinges' x and z
        beta = p.tolist()
        rows = []
        dS = np.zeros((4, 3, 6))
        for i, j in enumerate(self.boom_of_rope.tolist()):
            l = self.sheaves[i % 2]
            phi = th + beta[j]
            cp, sp = math.cos(phi), math.sin(phi)
            rows.append((x0 + l * cp, hy if j == 0 else -hy, z0 - l * sp))
            dS[i, 0, j], dS[i, 2, j] = -l * sp, -l * cp
        return np.array(rows), dS

    def suspension_velocity(self, p: np.ndarray, v: np.ndarray, t: float) -> np.ndarray:
        """dS_i/dt: the hinge's velocity (heave, and pitch about the barge origin,
        theta' dR_y/dtheta Z) plus the sheave's l_i phi' (-sin phi, 0, -cos phi), phi' = theta' + beta'."""
        z, zd, _, th, thd, _ = self.barge_state(t).tolist()
        hx, _, hz = self.hinge
        c, s = math.cos(th), math.sin(th)
        vx, vz = thd * (-s * hx + c * hz), zd + thd * (-c * hx - s * hz)
        beta, rate = p.tolist(), v.tolist()
        rows = []
        for i, j in enumerate(self.boom_of_rope.tolist()):
            phi = th + beta[j]
            w = self.sheaves[i % 2] * (thd + rate[j])
            rows.append((vx - w * math.sin(phi), 0.0, vz - w * math.cos(phi)))
        return np.array(rows)

    def drive_forces(self, p: np.ndarray, v: np.ndarray, t: float) -> np.ndarray:
        """f_p of the booms on the moving barge (our reading of the lost eq. 106): about the hinge,
        I_h (beta'' + theta'') = u + m_b (g e_z - a_hinge) . dr_cg/dbeta + rope moments, so
        f_p = m_b (g e_z - a_hinge) . dr_cg/dbeta - I_h theta''; the winches: none. The hinge's
        acceleration a_hinge = (0, 0, z'') + (theta'' dR_y/dtheta + theta'^2 d2R_y/dtheta2) Z."""
        z, zd, zdd, th, thd, thdd = self.barge_state(t).tolist()
        hx, _, hz = self.hinge
        c, s = math.cos(th), math.sin(th)
        w2 = thd * thd
        ax = (-thdd * s - w2 * c) * hx + (thdd * c - w2 * s) * hz
        az = zdd + (-thdd * c + w2 * s) * hx + (-thdd * s - w2 * c) * hz
        beta = p.tolist()
        f = np.zeros(6)
        half = 0.5 * self.boom_length
        for j in range(2):
            phi = th + beta[j]
            # (g e_z - a_hinge) . dr_cg/dbeta, dr_cg/dbeta = l/2 (-sin phi, 0, -cos phi)
            f[j] = self.boom_mass * (ax * half * math.sin(phi) - (GRAVITY - az) * half * math.cos(phi)) \
                - self.hinge_inertia * thdd
        return f


def floating_plan(crane: FloatingCrane, duration: float = 60.0, ramp: float = 20.0,
                  start: tuple[float, float, float] = (73.0, 0.0, -22.0)) -> PlannedMotion:
    """§4.3.2: lift 10 m and move 1 m in x (back toward the barge: the booms rise), no rotation.
    CHOICE: the start point, duration and ramp (not given)."""
    r0 = np.array(start, float)
    return PlannedMotion(r0, r0 + np.array([-1.0, 0.0, -10.0]), np.eye(3), np.eye(3),
                         SmoothProfile(0.0, duration, ramp))
