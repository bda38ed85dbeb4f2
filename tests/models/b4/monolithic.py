"""Benchmark B4 (ship_crane_digest.md 7.5): a monolithic reference for the ship + heavy crane + hoist +
payload, written for the tests -- one ODE, integrated with a tight-tolerance Runge-Kutta (DOP853).

What it shares with the co-simulation, and what it does not
-----------------------------------------------------------
* **Ship hydrodynamics** are components.ship's (``Ship.derivative`` with no hardpoint loads): radiation
  state space, linear restoring, force-RAO waves in the same seeded sea (components.waves.make_sea with
  the Ship FMU's sea.* values), viscous damping and station keeping, built from the same vessel data
  and fit as fmus/ship.py does. The generalised hydrodynamic force is recovered as
  tau_ship = (M_RB + A_inf) nu' from that derivative.
* **Crane dynamics are written here**, independently of components/articulated_body.py (no ABA): the
  mechanism file is read with ``json``, Paul's DH chain is walked joint by joint, and the ship's 6 DOF
  and the joints are coupled in one mass matrix -- the composite-rigid-body inertia and Newton-Euler
  bias forces of the links, in the ship's body axes about its origin CO (Kane's projection of [S4]
  section 2 in spatial-vector form). With generalised speeds u = [v; omega; qd] (the ship's body
  velocity at CO and the joint rates), joint axes s_k (Featherstone's [angular; linear] order, body
  axes, about CO) and link twists V_i = V_0 + w_i, w_i = sum_{k<=i} s_k qd_k::

      H(q) u' = [tau_ship; tau_joint] - [sum_i f_i ; s_k . sum_{i>=k} f_i] + (external wire, if any)
      H = [[M0 + sum_i I_i,  (sum_{i>=k} I_i) s_k], [.., s_j . (sum_{i>=max(j,k)} I_i) s_k]]
      f_i = I_i (c_i + V_0 x V_i - a_g) + V_i x* I_i V_i,   c_i = sum_{k<=i} (w_{k-1} x s_k) qd_k

  (I_i: link i's spatial inertia about CO in body axes; a_g = [0; R^T g]; M0 = M_RB + A_inf; the term
  V_0 x V_i turns the ship-frame derivative into the inertial one.) A test checks it against the ABA to
  1e-14 at random states.
* **Joints**: the Crane FMU's PD law tau = kp (q_set(t) - q) - kd qd (ki = 0, no limits), setpoints a
  continuous function of time; passive joints (no control) tau = 0; revolute and prismatic joints.
  The benchmark's hoist is part of the mechanism (tests/models/b4/model.py): two passive hook joints and a
  prismatic joint whose PD law is the hoist's spring-damper, the payload its last link.
* **Optional external wire** (the Cable FMU variant of the benchmark, for the split study): a massless
  Kelvin-Voigt element T = EA (lambda/L - 1) + c lambda'/L (taut only) between the crane's first
  attachment and a point-mass payload, the Cable FMU's 2-element lumping of the wire's own mass (half an
  element at each end node, one element at the inner node, whose weight the elements share).

* **Attached loads** follow components.ship's mass-aware equations: the crane's bias wrench p_A (its
  weight, the wire's pull and the velocity-dependent reactions of the moving crane and its swinging
  load: the joints eliminated, what the crane's generalised forces leave on the ship) and the hardpoint
  forces reach the ship's equations in its seakeeping axes (the roll-pitch tilt Q = R_psi^T R applied
  to their body-axis wrench), the crane's inertia (the Schur complement of the joints, J^T I_A J) in
  body axes.  (Tilting only the weights and the wire's pull, as before, kept the swinging load's
  reactions in body axes where the Ship FMU turns them: 9 % of heave range apart in B4 (d).)

State: [ship y (components.ship layout: p, quaternion, nu, low-pass, radiation), q, qd (+ r_p, v_p with
an external wire)] (+ the integral of the hydrodynamic power -- and of the power of the turn of the
attached loads into the seakeeping axes -- when ``energy=True``).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import fsolve

from components.radiation import fit_radiation
from components.rotations import quat_from_euler_zyx, quat_to_euler_zyx, quat_to_matrix
from components.ship import Ship, ShipParameters, seakeeping_tilt
from components.vessel_data import default_vessel_path, load_vessel
from components.waves import ForceRAO, make_sea

G = 9.81


def _seakeeping(R: np.ndarray) -> np.ndarray:
    """Body [force; moment] -> the ship's seakeeping axes (components.ship.seakeeping_tilt, both halves)."""
    Q = np.array(seakeeping_tilt(R))
    return np.block([[Q, np.zeros((3, 3))], [np.zeros((3, 3)), Q]])


def _cross(a, b) -> np.ndarray:
    """a x b for 3-vectors (np.cross costs ~20x more on 3-vectors)."""
    a0, a1, a2 = a
    b0, b1, b2 = b
    return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])


def _skew(a: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def _rz(t: float) -> np.ndarray:
    c, s = math.cos(t), math.sin(t)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _rx(t: float) -> np.ndarray:
    c, s = math.cos(t), math.sin(t)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _euler_zyx(roll: float, pitch: float, yaw: float) -> np.ndarray:
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch), math.cos(yaw),
                              math.sin(yaw))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


# ============================================================================ the crane

@dataclass
class _Link:
    joint: str
    a: float
    alpha: float
    d: float
    theta: float
    mass: float
    cg: np.ndarray           # in the joint-moved frame J_i
    inertia: np.ndarray      # about the CG, J_i axes
    kp: float
    kd: float
    q0: float
    mode: str = "position"
    ki: float = 0.0


class SerialCrane:
    """A serial crane (revolute and prismatic joints, PD or passive) from a "marine-cosim crane 1.0" file,
    placed on the ship with its base mounting point B at ``base`` (ship body frame, m)."""

    def __init__(self, path: Path | str | dict, base):
        data = path if isinstance(path, dict) else json.loads(Path(path).read_text())
        k = math.pi / 180.0 if data.get("angle_unit", "rad") == "deg" else 1.0
        self.links: list[_Link] = []
        for ld in data["links"]:
            joint = ld.get("joint", "revolute")
            if joint not in ("revolute", "prismatic"):
                raise ValueError(f"unknown joint {joint!r}")
            if any(ld.get("cg_orientation", [0, 0, 0])):
                raise ValueError("the B4 reference expects CG frames aligned with J_i")
            c = ld.get("control") or {}
            mode = c.get("mode", "passive")
            if mode not in ("position", "velocity", "passive"):
                raise ValueError(f"unknown control mode {mode!r}")
            if c.get("torque_max") or c.get("power_max") or ld.get("limits"):
                raise ValueError("the B4 reference models servos without torque, power or end-stop limits")
            passive = mode == "passive"
            jk = k if joint == "revolute" else 1.0
            inertia = np.asarray(ld["inertia"], float)
            self.links.append(_Link(joint, float(ld["a"]), float(ld["alpha"]) * k, float(ld["d"]),
                                    float(ld["theta"]) * k, float(ld["mass"]), np.asarray(ld["cg"], float),
                                    np.diag(inertia) if inertia.shape == (3,) else inertia,
                                    0.0 if passive else float(c.get("kp", 0.0)),
                                    0.0 if passive else float(c.get("kd", 0.0)),
                                    float(ld.get("initial_position", 0.0)) * jk, mode,
                                    0.0 if passive else float(c.get("ki", 0.0))))
        self.n = len(self.links)
        bo = data.get("base_offset", {})
        e = [float(x) * k for x in bo.get("euler_zyx", [0, 0, 0])]
        self.R0 = _euler_zyx(*e)                                      # frame 0 in B (B is ship-aligned)
        self.p0 = np.asarray(base, float) + np.asarray(bo.get("position", [0, 0, 0]), float)
        self.attachments = [(int(a["link"]), np.asarray(a["point"], float)) for a in data["attachments"]]
        self.kp = np.array([l.kp for l in self.links])
        self.kd = np.array([l.kd for l in self.links])
        self.ki = np.array([l.ki for l in self.links])
        self.velocity = np.array([l.mode == "velocity" for l in self.links])
        self.position = np.array([l.mode == "position" for l in self.links])
        self.q0 = np.array([l.q0 for l in self.links])
        self.masses = np.array([l.mass for l in self.links])

    def kinematics(self, q: np.ndarray, qd: np.ndarray) -> dict:
        """Spatial quantities in the ship's body axes about CO, Featherstone's [angular; linear] order:
        joint axes S (6 x n; revolute s_k = [z_k; o_k x z_k], prismatic [0; z_k]), per link its spatial
        inertia about CO, its twist relative to the ship w_i = sum_{k<=i} s_k qd_k and the velocity-product
        term c_i = sum_{k<=i} (w_{k-1} x s_k) qd_k (d/dt of w_i at qdd = 0, in the ship frame); the CGs
        and the attachment points (body frame)."""
        n = self.n
        R, o = self.R0, self.p0
        S = np.zeros((6, n))
        rel = np.zeros(6)
        acc = np.zeros(6)
        links, frames = [], []
        for i, L in enumerate(self.links):
            z = R[:, 2]
            if L.joint == "revolute":
                s = np.concatenate([z, _cross(o, z)])
                Rj, oj = R @ _rz(L.theta + q[i]), o
                Rd = Rj @ _rx(L.alpha)
                od = oj + Rj @ np.array([L.a, 0.0, L.d])
            else:
                s = np.concatenate([np.zeros(3), z])
                Rj, oj = R, o + z * (L.d + q[i])
                Rd = Rj @ _rz(L.theta) @ _rx(L.alpha)
                od = oj + Rj @ np.array([L.a * math.cos(L.theta), L.a * math.sin(L.theta), 0.0])
            S[:, i] = s
            acc = acc + _mcross(rel, s) * qd[i]
            rel = rel + s * qd[i]
            c = oj + Rj @ L.cg
            links.append({"m": L.mass, "c": c, "I6": _spatial_inertia(L.mass, c, Rj @ L.inertia @ Rj.T),
                          "w": rel.copy(), "c_acc": acc.copy()})
            frames.append((Rd, od))
            R, o = Rd, od
        points = [frames[link][1] + frames[link][0] @ p for link, p in self.attachments]
        return {"S": S, "links": links, "points": points}

    def static_torques(self, q: np.ndarray, gravity_body: np.ndarray, tip_force_body: np.ndarray,
                       upto: int | None = None) -> np.ndarray:
        """Actuator torques that hold the crane still at q on a ship at rest, with a force at the first
        attachment: tau_k = -s_k . (gravity and attachment wrenches outboard of joint k). ``upto``: count
        the links before that index only (the rest hangs from the attachment as its force)."""
        kin = self.kinematics(q, np.zeros(self.n))
        ag = np.concatenate([np.zeros(3), gravity_body])
        m = self.n if upto is None else upto
        f = np.zeros(6)
        tau = np.zeros(self.n)
        link, _ = self.attachments[0]
        p = kin["points"][0]
        for i in range(m - 1, -1, -1):
            f = f + kin["links"][i]["I6"] @ ag
            if i == link:
                f = f + np.concatenate([_cross(p, tip_force_body), tip_force_body])
            tau[i] = -kin["S"][:, i] @ f
        return tau

    def point(self, q: np.ndarray, k: int = 0) -> np.ndarray:
        """Attachment k's position in the ship's body frame."""
        return self.kinematics(q, np.zeros(self.n))["points"][k]


def _mcross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Spatial motion cross product a x b = crm(a) b, [angular; linear]."""
    w = _cross(a[0:3], b[0:3])
    v = _cross(a[0:3], b[3:6]) + _cross(a[3:6], b[0:3])
    return np.concatenate([w, v])


def _fcross(a: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Spatial force cross product a x* f = crf(a) f = -crm(a)^T f, [angular; linear]."""
    n = _cross(a[0:3], f[0:3]) + _cross(a[3:6], f[3:6])
    return np.concatenate([n, _cross(a[0:3], f[3:6])])


def _crm(v: np.ndarray) -> np.ndarray:
    """Spatial motion cross product matrix, [angular; linear]."""
    w, u = _skew(v[0:3]), _skew(v[3:6])
    out = np.zeros((6, 6))
    out[0:3, 0:3] = w
    out[3:6, 3:6] = w
    out[3:6, 0:3] = u
    return out


def _spatial_inertia(m: float, c: np.ndarray, Ic: np.ndarray) -> np.ndarray:
    """Spatial inertia about the origin of a body of mass m, CG c and inertia Ic about the CG."""
    C = _skew(c)
    out = np.empty((6, 6))
    out[0:3, 0:3] = Ic + m * C @ C.T
    out[0:3, 3:6] = m * C
    out[3:6, 0:3] = m * C.T
    out[3:6, 3:6] = m * np.eye(3)
    return out


# ============================================================================ the ship

def viscous_diagonal(vessel, M: np.ndarray) -> np.ndarray:
    """The Ship FMU's rule: each diagonal of B_v(w) at the undamped natural frequency of that DOF where it
    has restoring, else at the lowest data frequency."""
    out = np.zeros(6)
    for i in range(6):
        bv = vessel.viscous_damping[i, i, :]
        if vessel.restoring[i, i] > 0.0:
            out[i] = float(np.interp(math.sqrt(vessel.restoring[i, i] / M[i, i]), vessel.omega, bv))
        else:
            out[i] = float(bv[0])
    return out


_VESSEL: dict = {}


def vessel_and_radiation(max_order: int = 4):
    if max_order not in _VESSEL:
        vessel = load_vessel(default_vessel_path())
        _VESSEL[max_order] = (vessel, fit_radiation(vessel.omega, vessel.added_mass, vessel.damping,
                                                    max_order=max_order))
    return _VESSEL[max_order]


def make_ship_sea(sea: dict | None):
    """The seeded sea of the Ship FMU's sea.* values (fmus/_sea.py: same make_sea arguments)."""
    spectra = {0: "none", 1: "jonswap", 2: "pm", 3: "regular"}
    v = {"sea.spectrum": 0, "sea.hs": 2.5, "sea.period": 8.0, "sea.gamma": 3.3, "sea.amplitude": 1.0,
         "sea.direction": 0.0, "sea.spreading": 0.0, "sea.n_frequencies": 60, "sea.n_directions": 1,
         "sea.seed": 1, "sea.random_frequencies": True}
    v.update(sea or {})
    spectrum = spectra[int(v["sea.spectrum"])]
    if spectrum == "none" or (spectrum in ("jonswap", "pm") and not v["sea.hs"] > 0.0):
        return None
    return make_sea(spectrum, hs=v["sea.hs"], period=v["sea.period"], gamma=v["sea.gamma"],
                    mean_direction=v["sea.direction"], spreading_s=v["sea.spreading"],
                    n_frequencies=int(v["sea.n_frequencies"]), n_directions=int(v["sea.n_directions"]),
                    seed=int(v["sea.seed"]), random_frequencies=bool(v["sea.random_frequencies"]),
                    regular_amplitude=v["sea.amplitude"])


def build_ship(sea: dict | None, position, euler, viscous_scale: float = 1.0,
               station_period=(120.0, 120.0, 120.0), station_zeta: float = 0.7, max_order: int = 4,
               radiation: bool = True) -> Ship:
    """components.ship.Ship as fmus/ship.py builds it (same vessel data, fit, damping, station keeping)."""
    vessel, rad = vessel_and_radiation(max_order)
    M = vessel.MRB + rad.A_inf
    viscous = viscous_scale * viscous_diagonal(vessel, M) if vessel.viscous_damping is not None else np.zeros(6)
    k_sk, c_sk = np.zeros(3), np.zeros(3)
    for n, dof in enumerate((0, 1, 5)):
        if station_period[n] > 0.0:
            wn = 2 * math.pi / station_period[n]
            k_sk[n] = M[dof, dof] * wn * wn
            c_sk[n] = 2.0 * station_zeta * M[dof, dof] * wn
    Ar, Br, Cr = (rad.Ar, rad.Br, rad.Cr) if radiation else (np.zeros((0, 0)), np.zeros((0, 6)), np.zeros((6, 0)))
    params = ShipParameters(MRB=vessel.MRB, A_inf=rad.A_inf, B_inf=rad.B_inf, Ar=Ar, Br=Br, Cr=Cr,
                            G=vessel.restoring, cg=vessel.cg, hardpoints=np.zeros((1, 3)), viscous=viscous,
                            station_stiffness=k_sk, station_damping=c_sk)
    rao = ForceRAO(omega=vessel.omega, heading=vessel.rao_headings, amplitude=vessel.force_rao_amp,
                   phase=vessel.force_rao_phase, convention=vessel.reference)
    ship = Ship(params, sea=make_ship_sea(sea), rao=rao, position=np.asarray(position, float),
                quaternion=quat_from_euler_zyx(*euler))
    if ship.sea is not None:
        ship.sea = _ContinuousHeading(ship.sea)
    return ship


class _ContinuousHeading:
    """The sea with its force-RAO table re-interpolated at every heading: components.ship asks for it only
    when the seakeeping frame's heading has moved by 1e-4 rad, which makes the excitation a step function
    of the (slowly drifting) heading -- harmless in an FMU's RK4 step, but each step stalls a tight-
    tolerance adaptive integrator (53612 right-hand sides for 30 s of scenario (e) instead of ~8000).
    The two differ by the RAOs' change over 1e-4 rad of heading."""

    def __init__(self, sea):
        self._sea = sea

    def excitation(self, t, north, east, heading, rao, heading_tol: float = 0.0):
        return self._sea.excitation(t, north, east, heading, rao, heading_tol=0.0)

    def __getattr__(self, name):
        return getattr(self._sea, name)


# ============================================================================ the coupled system

@dataclass
class Wire:
    length: float               # unstretched L [m]
    EA: float                   # [N]
    damping: float              # c [N s]: T = EA eps + c eps'
    mass_per_length: float      # [kg/m], lumped as the 2-element Cable FMU lumps it
    segments: int = 2

    @property
    def element(self) -> float:
        return self.length / self.segments


@dataclass
class Monolithic:
    """Ship + crane (+ an optional external wire and point-mass payload) as one ODE. ``setpoint(t)`` gives
    the joint setpoints (all joints; passive joints ignore theirs). ``wire_joint``: the index of the
    joint whose PD force is the hoist tension (tension = -tau), for the signals."""

    ship: Ship
    crane: SerialCrane
    setpoint: Callable[[float], np.ndarray]
    wire: Wire | None = None
    payload_mass: float = 0.0
    wire_joint: int | None = None
    gravity: float = G
    energy: bool = False
    ship_fixed: bool = False          # the crane on a ship held still (checks)
    # extra loads on the ship, as the Ship FMU's hardpoints take them: t -> (body points (k, 3), NED forces (k, 3))
    hardpoint_forces: Callable[[float], tuple] | None = None
    _n_ship: int = field(init=False)

    def __post_init__(self):
        self._n_ship = len(self.ship.y)
        self.M0 = self.ship.p.MRB + self.ship.p.A_inf
        n, ns = self.crane.n, self._n_ship
        self.layout = {"ship": slice(0, ns), "q": slice(ns, ns + n), "qd": slice(ns + n, ns + 2 * n),
                       "z": slice(ns + 2 * n, ns + 3 * n)}
        if self.wire is not None:
            self.layout.update({"rp": slice(ns + 3 * n, ns + 3 * n + 3), "vp": slice(ns + 3 * n + 3, ns + 3 * n + 6)})
            le, mw = self.wire.element, self.wire.mass_per_length
            self.m_end = self.payload_mass + mw * le / 2      # the free end node: payload + half an element
            self.w_inner = mw * le * self.gravity * (self.wire.segments - 1)   # inner node weight, shared
            self.w_top = mw * le / 2 * self.gravity            # the driven node at the tip
        self._size = ns + 3 * n + (6 if self.wire is not None else 0)

    # ------------------------------------------------------------------ pieces

    def initial_state(self, q, qd=None, rp=None, vp=None, z=None) -> np.ndarray:
        n = self.crane.n
        parts = [self.ship.y, np.asarray(q, float), np.zeros(n) if qd is None else np.asarray(qd, float),
                 np.zeros(n) if z is None else np.asarray(z, float)]
        if self.wire is not None:
            parts += [np.asarray(rp, float), np.zeros(3) if vp is None else np.asarray(vp, float)]
        Y = np.concatenate(parts)
        return np.append(Y, 0.0) if self.energy else Y

    def _wire(self, tip_w, vtip_w, rp, vp):
        """Tension of the lumped wire (the massless Kelvin-Voigt element), and the forces on the tip and on
        the payload (NED)."""
        d = rp - tip_w
        lam = float(np.linalg.norm(d))
        u = d / lam
        L = self.wire.length
        eps = lam / L - 1.0
        T = self.wire.EA * eps + self.wire.damping * float((vp - vtip_w) @ u) / L
        T = T if (eps > 0.0 and T > 0.0) else 0.0
        half = 0.5 * self.w_inner
        e_z = np.array([0.0, 0.0, self.gravity])
        f_tip = (T + half) * u + self.w_top / self.gravity * e_z
        f_pay = -(T - half) * u + self.m_end * e_z
        return T, f_tip, f_pay

    def joint_torques(self, t: float, q: np.ndarray, qd: np.ndarray, z: np.ndarray | None = None) -> np.ndarray:
        """The Crane FMU's servo laws (components/crane.py, no limits): position kp (q_t - q) + ki z - kd qd,
        velocity kp (qd_t - qd) + ki z, passive 0; z the integral of the setpoint error."""
        c = self.crane
        sp = self.setpoint(t)
        zi = c.ki * z if z is not None else 0.0
        return np.where(c.velocity, c.kp * (sp - qd), c.kp * (sp - q) - c.kd * qd) + zi

    def integral_rates(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        c = self.crane
        sp = self.setpoint(t)
        return np.where(c.velocity, sp - qd, np.where(c.position, sp - q, 0.0))

    def generalized(self, t: float, Y: np.ndarray, tau_ship: np.ndarray | None = None):
        """Mass matrix H and generalised force in u = [v; omega; qd] (the ship's marine [linear; angular]
        order), and the pieces (kinematics, wire) at state Y."""
        lay = self.layout
        ys, q, qd = Y[lay["ship"]], Y[lay["q"]], Y[lay["qd"]]
        R = quat_to_matrix(ys[3:7] / np.linalg.norm(ys[3:7]))
        nu = ys[7:13]
        V0 = np.concatenate([nu[3:6], nu[0:3]])                   # [omega; v]
        n = self.crane.n
        kin = self.crane.kinematics(q, qd)
        S = kin["S"]
        ag = np.concatenate([np.zeros(3), R.T @ np.array([0.0, 0.0, self.gravity])])
        fb = []
        for L in kin["links"]:
            Vi = V0 + L["w"]
            fb.append(L["I6"] @ (L["c_acc"] + _mcross(V0, Vi) - ag) + _fcross(Vi, L["I6"] @ Vi))
        parts = {"R": R, "kin": kin}
        ext_link, f_ext = None, None
        if self.wire is not None:
            link = self.crane.attachments[0][0]
            p_t = kin["points"][0]
            Vt = V0 + kin["links"][link]["w"]
            tip_w = ys[0:3] + R @ p_t
            vtip_w = R @ (Vt[3:6] + _cross(Vt[0:3], p_t))
            T, f_tip, f_pay = self._wire(tip_w, vtip_w, Y[lay["rp"]], Y[lay["vp"]])
            F_b = R.T @ f_tip
            ext_link, f_ext = link, np.concatenate([_cross(p_t, F_b), F_b])
            parts.update(T=T, f_pay=f_pay)
        N = 6 + n
        H = np.zeros((N, N))
        rhs = np.zeros(N)
        Ic = np.zeros((6, 6))
        fc = np.zeros(6)
        for i in range(n - 1, -1, -1):
            Ic = Ic + kin["links"][i]["I6"]
            fc = fc + fb[i]
            if i == ext_link:
                fc = fc - f_ext
            si = S[:, i]
            F = Ic @ si
            H[6 + i, 6 + i] = si @ F
            for j in range(i):
                H[6 + i, 6 + j] = H[6 + j, 6 + i] = S[:, j] @ F
            H[6 + i, 0:6] = np.concatenate([F[3:6], F[0:3]])     # [linear; angular] base order
            H[0:6, 6 + i] = H[6 + i, 0:6]
            rhs[6 + i] = -si @ fc
        H[0:3, 0:3] = self.M0[0:3, 0:3] + Ic[3:6, 3:6]
        H[0:3, 3:6] = self.M0[0:3, 3:6] + Ic[3:6, 0:3]
        H[3:6, 0:3] = self.M0[3:6, 0:3] + Ic[0:3, 3:6]
        H[3:6, 3:6] = self.M0[3:6, 3:6] + Ic[0:3, 0:3]
        rhs[0:3] = -fc[3:6]
        rhs[3:6] = -fc[0:3]
        rhs[6:] += self.joint_torques(t, q, qd, Y[lay["z"]])
        # the crane's reaction on the ship as components.ship takes it from the mass-aware interface
        # (attached loads): its inertia (the Schur complement of the joints, J^T I_A J) in body axes,
        # its bias p_A -- the weights, the wire's pull and the velocity-dependent reactions of the
        # moving crane and swinging load, whatever its joints' torques leave -- in the seakeeping axes
        bias = rhs[0:6] - H[0:6, 6:] @ np.linalg.solve(H[6:, 6:], rhs[6:])
        parts["seakeeping"] = _seakeeping(R) @ bias - bias
        rhs[0:6] += parts["seakeeping"]
        if tau_ship is not None:
            rhs[0:6] += tau_ship
        return H, rhs, parts

    def hardpoint_wrench(self, t: float, ys: np.ndarray) -> np.ndarray:
        """Body-frame generalised force at CO of the NED hardpoint forces (components.ship's W_k)."""
        points, forces = self.hardpoint_forces(t)
        R = quat_to_matrix(ys[3:7] / np.linalg.norm(ys[3:7]))
        out = np.zeros(6)
        for r, F in zip(points, forces):
            Fb = R.T @ np.asarray(F, float)
            out[0:3] += Fb
            out[3:6] += _cross(np.asarray(r, float), Fb)
        return _seakeeping(R) @ out

    def rhs(self, t: float, Y: np.ndarray) -> np.ndarray:
        lay = self.layout
        ys = Y[lay["ship"]]
        dys = self.ship.derivative(t, ys)
        tau_ship = self.M0 @ dys[7:13]
        if self.hardpoint_forces is not None:
            tau_ship = tau_ship + self.hardpoint_wrench(t, ys)
        H, f, parts = self.generalized(t, Y, tau_ship)
        out = np.empty_like(Y)
        if self.ship_fixed:
            ud = np.concatenate([np.zeros(6), np.linalg.solve(H[6:, 6:], f[6:])])
            dys = np.zeros_like(dys)
        else:
            ud = np.linalg.solve(H, f)
        out[lay["ship"]] = dys
        out[lay["ship"]][7:13] = ud[:6]
        n = self.crane.n
        out[lay["q"]] = Y[lay["qd"]]
        out[lay["qd"]] = ud[6:6 + n]
        out[lay["z"]] = self.integral_rates(t, Y[lay["q"]], Y[lay["qd"]])
        if self.wire is not None:
            out[lay["rp"]] = Y[lay["vp"]]
            out[lay["vp"]] = parts["f_pay"] / self.m_end
        if self.energy:       # the work of the ship's forces, and of the loads' turn into seakeeping axes
            out[-1] = float(ys[7:13] @ (tau_ship + parts["seakeeping"]))
        return out

    # ------------------------------------------------------------------ running

    def run(self, Y0: np.ndarray, t_eval: np.ndarray, rtol: float = 1e-9, atol: float = 1e-9,
            method: str = "DOP853", held: tuple | None = None) -> "MonolithicResult":
        """Integrate from t_eval[0] with Y0 and return the states on t_eval. ``held = (t_end, h, value)``:
        until t_end the setpoints are held over the steps [t_k, t_k + h] of a grid from t_eval[0], at
        value(t_k, h) (a digital command), and the integration restarts at every grid point."""
        t_eval = np.asarray(t_eval, float)
        t0, t1 = float(t_eval[0]), float(t_eval[-1])
        times, states, nfev = [], [], 0
        Y = np.asarray(Y0, float)
        start = t0
        if held is not None:
            t_end, h, value = held
            continuous = self.setpoint
            try:
                k = 0
                while start < min(t_end, t1) - 1e-12:
                    stop = min(t0 + (k + 1) * h, t1)
                    fixed = np.asarray(value(start, stop - start), float)
                    self.setpoint = lambda t, fixed=fixed: fixed
                    inside = t_eval[(t_eval >= start - 1e-12) & (t_eval < stop - 1e-12)]
                    sol = solve_ivp(self.rhs, (start, stop), Y, method=method, t_eval=np.append(inside, stop),
                                    rtol=rtol, atol=atol)
                    if not sol.success:
                        raise RuntimeError(f"monolithic B4 reference: {sol.message}")
                    nfev += sol.nfev
                    times += list(sol.t[:-1])
                    states += list(sol.y.T[:-1])
                    Y = sol.y[:, -1]
                    start = stop
                    k += 1
            finally:
                self.setpoint = continuous
        rest = t_eval[t_eval >= start - 1e-12]
        if len(rest):
            sol = solve_ivp(self.rhs, (start, t1), Y, method=method, t_eval=rest, rtol=rtol, atol=atol)
            if not sol.success:
                raise RuntimeError(f"monolithic B4 reference: {sol.message}")
            nfev += sol.nfev
            times += list(sol.t)
            states += list(sol.y.T)
        return MonolithicResult(self, np.array(times), np.array(states), nfev)

    # ------------------------------------------------------------------ signals

    def signals(self, t: float, Y: np.ndarray) -> dict[str, float | np.ndarray]:
        lay = self.layout
        ys, q, qd = Y[lay["ship"]], Y[lay["q"]], Y[lay["qd"]]
        R = quat_to_matrix(ys[3:7] / np.linalg.norm(ys[3:7]))
        roll, pitch, yaw = quat_to_euler_zyx(ys[3:7] / np.linalg.norm(ys[3:7]))
        points = self.crane.kinematics(q, qd)["points"]
        out = {"position": ys[0:3].copy(), "heave": float(ys[2]), "roll": roll, "pitch": pitch, "yaw": yaw,
               "tip": ys[0:3] + R @ points[0], "q": q.copy()}
        if self.wire is not None:
            _, _, parts = self.generalized(t, Y)
            out["payload"] = Y[lay["rp"]].copy()
            # the Cable FMU's end_a.tension is the tension of the element at the tip
            out["tension"] = parts["T"] + 0.5 * self.w_inner if parts["T"] > 0 else 0.0
        else:
            out["payload"] = ys[0:3] + R @ points[-1]
            out["tension"] = -float(self.joint_torques(t, q, qd, Y[lay["z"]])[self.wire_joint]) \
                if self.wire_joint is not None else 0.0
        return out

    def mechanical_energy(self, Y: np.ndarray) -> float:
        """Kinetic energy (ship with A_inf, links, external payload) + gravity and servo-spring potentials
        (for damping-free checks: kd = 0, no external wire damping, setpoints fixed at their t = 0 values)."""
        lay = self.layout
        ys, q, qd = Y[lay["ship"]], Y[lay["q"]], Y[lay["qd"]]
        R = quat_to_matrix(ys[3:7] / np.linalg.norm(ys[3:7]))
        nu = ys[7:13]
        E = 0.5 * nu @ self.M0 @ nu
        kin = self.crane.kinematics(q, qd)
        V0 = np.concatenate([nu[3:6], nu[0:3]])
        for L in kin["links"]:
            Vi = V0 + L["w"]
            E += 0.5 * Vi @ L["I6"] @ Vi
            E -= L["m"] * self.gravity * (ys[2] + (R @ L["c"])[2])
        E += 0.5 * float(np.sum(np.where(self.crane.position, self.crane.kp * (self.setpoint(0.0) - q) ** 2, 0.0)))
        if self.wire is not None:
            rp, vp = Y[lay["rp"]], Y[lay["vp"]]
            E += 0.5 * self.m_end * vp @ vp - self.m_end * self.gravity * rp[2]
            tip_w = ys[0:3] + R @ kin["points"][0]
            eps = np.linalg.norm(rp - tip_w) / self.wire.length - 1.0
            E += 0.5 * self.wire.EA * self.wire.length * max(eps, 0.0) ** 2
        return float(E)


@dataclass
class MonolithicResult:
    model: Monolithic
    time: np.ndarray
    states: np.ndarray
    nfev: int

    def __post_init__(self):
        rows = [self.model.signals(t, Y) for t, Y in zip(self.time, self.states)]
        self.data = {k: np.array([r[k] for r in rows]) for k in rows[0]}

    def __getitem__(self, key):
        return self.data[key]


# ============================================================================ statics

def static_equilibrium(model: Monolithic, q_guess, t: float = 0.0, ship: bool = True):
    """Ship heave/roll/pitch (NED down of CO, roll, pitch), joint positions (and the external payload's
    position) at which the generalised forces of heave, roll, pitch, the joints (and the payload) vanish
    with everything at rest. Surge, sway and yaw are held at zero; what is left of their forces is
    returned (~0 since attached loads enter in the seakeeping axes: docs/b4_ship_heavy_crane.md). ``ship=False``: the
    ship held level at z = 0 (only the crane settles). Returns (z, roll, pitch,
    q, r_p or None, the unbalanced surge force, sway force, yaw moment)."""
    free_ship = ship
    ship = model.ship
    y0 = ship.y.copy()
    n = model.crane.n
    lay = model.layout
    wire = model.wire is not None

    def state(x):
        ys = y0.copy()
        ys[2] = x[0]
        ys[3:7] = quat_from_euler_zyx(x[1], x[2], 0.0)
        ys[7:] = 0.0
        Y = model.initial_state(x[3:3 + n], rp=x[3 + n:6 + n] if wire else None)
        Y[lay["ship"]] = ys
        return Y

    def forces(x):
        Y = state(x)
        tau = model.M0 @ ship.derivative(t, Y[lay["ship"]])[7:13]
        _, f, parts = model.generalized(t, Y, tau)
        return f, parts

    def residual(x):
        f, parts = forces(x)
        r = [f[[2, 3, 4]] / 1e6 if free_ship else x[0:3], f[6:6 + n] / 1e6]
        if wire:
            r.append(parts["f_pay"] / 1e4)
        return np.concatenate(r)

    x0 = [np.zeros(3), np.asarray(q_guess, float)]
    if wire:
        tip0 = model.crane.point(np.asarray(q_guess, float))
        x0.append(tip0 + np.array([0.0, 0.0, model.wire.length * (1.0 + model.payload_mass * model.gravity
                                                                    / model.wire.EA)]))
    x, info, ier, msg = fsolve(residual, np.concatenate(x0), full_output=True, xtol=1e-13)
    if ier != 1 or np.max(np.abs(residual(x))) > 1e-6:
        raise RuntimeError(f"static equilibrium not found: {msg}")
    f, _ = forces(x)
    return x[0], x[1], x[2], x[3:3 + n], (x[3 + n:6 + n] if wire else None), f[[0, 1, 5]]
