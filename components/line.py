"""Lumped-mass mooring line / cable (MoorDyn v1 style), both ends prescribed.  Pure numpy/scipy.

Sources
-------
[HG15] M. Hall & A. Goupee, "Validation of a lumped-mass mooring line model with DeepCwind
       semisubmersible model test data", Ocean Engineering 104 (2015) 590-603 (the model below).
[MD]   MoorDyn v2 documentation (moordyn.readthedocs.io, "Model Structure", "Input Files"):
       BA/-zeta damping option, seabed spring kBot / cBot per unit diameter, node tangents as the
       average of the adjacent segments, FrictionCoefficient / FricDamp seabed friction.
[CAT]  components/catenary.py: the static elastic catenary used for the at-rest initial state.

Conventions
-----------
SI units, world frame NED (z DOWN).  N segments of unstretched length l = L/N join N+1 nodes,
node 0 at the anchor (end A), node N at the fairlead (end B).  Both end nodes are prescribed
(``set_ends``); the N-1 interior nodes carry the state (positions r, velocities v).

Model [HG15]
------------
Segment i (nodes i -> i+1): chord d_i = r_{i+1} - r_i, stretched length λ_i = |d_i|,
tangent q_i = d_i / λ_i, strain ε_i = λ_i / l - 1, strain rate ε̇_i = (v_{i+1} - v_i)·q_i / l::

    T_i = max(EA ε_i + c ε̇_i, 0)  if ε_i > 0,   T_i = 0 otherwise (slack: no compression)

c is the internal damping [N s]; a negative input c = -ζ means c = ζ l sqrt(EA m') (MoorDyn's
"-zeta" option: ζ = 1 is critical damping of one segment's axial mode).

Node i (unstretched length share l_i = l for interior nodes), tangent q̂_i = unit(r_{i+1}-r_{i-1})::

    M_i a_i = T_i q_i - T_{i-1} q_{i-1} + W_i + D_i + B_i
    M_i  = m' l_i I + Ca_n ρ A l_i (I - q̂ q̂ᵀ) + Ca_t ρ A l_i q̂ q̂ᵀ,        A = π d²/4
    W_i  = (m' - ρ A) g l_i e_z                                          (weight - buoyancy)
    D_i  = ½ ρ Cd_n d λ̄_i |u_n| u_n + ½ ρ Cd_t π d λ̄_i |u_t| u_t       (Morison, quadratic)
    u    = U_current - v_i,  u_t = (u·q̂) q̂,  u_n = u - u_t,  λ̄_i = ½(λ_{i-1} + λ_i)

Seabed (horizontal plane z = seabed_depth), penetration p = z_i - seabed_depth > 0 [MD]::

    F_n  = max(kBot p + cBot v_z, 0) d l_i          (upward, i.e. -e_z in NED)
    F_f  = -min(c_f |v_h|, μ F_n) v_h/|v_h|          (regularised Coulomb, horizontal v_h)

with c_f = ``friction_damping`` [N s/m] (MoorDyn's FricDamp, default 200): linear damping at
low sliding speed up to the Coulomb limit μ F_n.

Time integration
----------------
Explicit RK2 (midpoint, as MoorDyn's default) or classic RK4 with internal sub-steps.  Within
``step(dt)`` the ends move as r_end(t0 + τ) = r_end(t0) + v_end τ (MoorDyn's coupling rule), from
the values given to ``set_ends``.  The highest axial mode of the chain of masses has
ω_max = 2 sqrt(EA / (m_seg l)), m_seg = m' l; explicit schemes need dt_sub < ~2/ω_max
(RK4 on the imaginary axis: 2.83/ω_max).  Default sub-step: ``safety * 2/ω_max`` with
safety = 0.7 for RK2 (3.4 ms for the 50 m chain, 41 segments, ω_max = 414 rad/s) and 1.0 for
RK4.  Measured on that chain (1 m heave): RK2 stable at 1.0 x 2/ω_max, unstable at 1.2; RK4
stable at 1.4.

Initial state: the elastic catenary [CAT] through the ends, nodes at equal unstretched arc
length, at rest.  With the anchor on the seabed the catenary is solved over the equilibrium
seabed penetration δ = w / (kBot d) (the grounded part rests δ into the spring seabed), then the
node positions are polished to the exact static equilibrium of the discrete model
(scipy ``root``, friction inactive at rest), so a mooring starts with no transient.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import root

from components.catenary import node_positions_3d, solve_catenary

__all__ = ["LineParams", "Line"]


@dataclass(frozen=True)
class LineParams:
    """Line type and environment (SI).  Defaults: none for the line, MoorDyn's for the seabed."""

    length: float                 # unstretched length L [m]
    diameter: float               # volume-equivalent diameter d [m]
    mass_per_length: float        # m' [kg/m]
    EA: float                     # axial stiffness [N]
    damping: float = -1.0         # internal damping c [N s]; negative = -zeta (MoorDyn BA/-zeta)
    Cdn: float = 1.2              # normal drag coefficient
    Cdt: float = 0.0              # tangential drag coefficient (on pi d)
    Can: float = 1.0              # normal added-mass coefficient
    Cat: float = 0.0              # tangential added-mass coefficient
    rho_water: float = 1025.0     # [kg/m^3]
    g: float = 9.81               # [m/s^2]
    kBot: float = 1.0e5           # seabed stiffness per unit diameter [Pa/m]
    cBot: float = 1.0e4           # seabed damping per unit diameter [Pa s/m]
    friction: float = 0.5         # Coulomb coefficient mu
    friction_damping: float = 200.0  # c_f, low-speed friction regularisation [N s/m]

    @property
    def weight_per_length(self) -> float:
        """Submerged weight per unstretched length w = (m' - rho pi d^2/4) g [N/m]."""
        return (self.mass_per_length - self.rho_water * math.pi / 4 * self.diameter**2) * self.g


class Line:
    """One lumped-mass line between a prescribed anchor (node 0) and fairlead (node N)."""

    def __init__(self, params: LineParams, anchor: np.ndarray, fairlead: np.ndarray,
                 n_segments: int, seabed_depth: float,
                 current: np.ndarray = (0.0, 0.0, 0.0), scheme: str = "rk2",
                 substep: float | None = None, safety: float | None = None) -> None:
        """Build the line at rest on its static shape between ``anchor`` and ``fairlead`` (NED).

        n_segments: N (N+1 nodes).  seabed_depth: z of the seabed plane (NED, > 0 below the
        surface).  current: uniform water velocity (NED) [m/s].  scheme: "rk2" or "rk4".
        substep: maximum internal sub-step [s] (default ``safety * 2/omega_max``, safety 0.7
        for RK2, 1.0 for RK4).  The ends start at rest; call ``set_ends`` to move them.
        """
        p = params
        if n_segments < 2:
            raise ValueError("n_segments must be >= 2")
        if p.length <= 0 or p.diameter <= 0 or p.mass_per_length <= 0 or p.EA <= 0:
            raise ValueError("length, diameter, mass_per_length and EA must be > 0")
        if scheme not in ("rk2", "rk4"):
            raise ValueError("scheme must be 'rk2' or 'rk4'")
        self.p = p
        self.N = int(n_segments)
        self.seabed_depth = float(seabed_depth)
        self.current = np.asarray(current, dtype=float).reshape(3).copy()
        self.scheme = scheme
        N, l = self.N, p.length / self.N
        self.l = l
        A = math.pi / 4 * p.diameter**2
        self.c = -p.damping * l * math.sqrt(p.EA * p.mass_per_length) if p.damping < 0 else p.damping
        # node unstretched length shares (interior nodes only carry dynamics)
        self.l_node = np.full(N + 1, l)
        self.l_node[0] = self.l_node[-1] = 0.5 * l
        self._m = p.mass_per_length * self.l_node[1:-1]               # structural mass
        self._ma_n = p.Can * p.rho_water * A * self.l_node[1:-1]      # normal added mass
        self._ma_t = p.Cat * p.rho_water * A * self.l_node[1:-1]
        self._W = p.weight_per_length * self.l_node                   # N, +z (down)
        self._kdn = 0.5 * p.rho_water * p.Cdn * p.diameter
        self._kdt = 0.5 * p.rho_water * p.Cdt * math.pi * p.diameter
        # stability: omega_max = 2 sqrt(EA / (m_seg l)); dt_sub < ~2/omega_max
        self._rbuf, self._vbuf = np.empty((N + 1, 3)), np.empty((N + 1, 3))
        self.omega_max = 2.0 * math.sqrt(p.EA / (p.mass_per_length * l * l))
        self.dt_stable = 2.0 / self.omega_max
        if safety is None:
            safety = 0.7 if scheme == "rk2" else 1.0
        self.substep = float(substep) if substep is not None else safety * self.dt_stable

        a = np.asarray(anchor, dtype=float).reshape(3).copy()
        f = np.asarray(fairlead, dtype=float).reshape(3).copy()
        self.t = 0.0
        self.ra, self.va = a, np.zeros(3)
        self.rb, self.vb = f, np.zeros(3)
        self.r, self.v = self._initial_positions(a, f), np.zeros((N - 1, 3))

    # ------------------------------------------------------------------ initialisation
    def _initial_positions(self, a: np.ndarray, f: np.ndarray) -> np.ndarray:
        """Interior node positions at rest: catenary [CAT] then static polish (module docstring)."""
        p = self.p
        w = p.weight_per_length
        grounded_anchor = a[2] >= self.seabed_depth - 1e-9 and p.kBot > 0
        delta = w / (p.kBot * p.diameter) if grounded_anchor else 0.0
        a_eff = a + np.array([0.0, 0.0, delta])
        X = float(np.hypot(*(f - a_eff)[:2]))
        Z = float(a_eff[2] - f[2])
        try:
            if Z >= 0.0:
                cat = solve_catenary(X, Z, p.length, w, p.EA, 0.0, seabed=grounded_anchor)
                P = node_positions_3d(a_eff, f, cat, self.N + 1)
            else:  # fairlead below the anchor: mirror (free-hanging), swap ends
                cat = solve_catenary(X, -Z, p.length, w, p.EA, 0.0, seabed=False)
                P = node_positions_3d(f, a_eff, cat, self.N + 1)[::-1]
        except (ValueError, RuntimeError):
            P = a + np.linspace(0.0, 1.0, self.N + 1)[:, None] * (f - a)
        x0 = P[1:-1].copy()
        zeros = np.zeros((self.N + 1, 3))

        def resid(x: np.ndarray) -> np.ndarray:
            r = self._full(x.reshape(-1, 3), a, f)
            F, _ = self._forces(r, zeros)
            return (F / (self.p.EA / self.l * 1e-3)).ravel()   # scaled: 1 mm stretch ~ 1
        try:
            sol = root(resid, x0.ravel(), method="hybr", options={"xtol": 1e-13})
            x = sol.x.reshape(-1, 3)
            if np.all(np.isfinite(x)) and np.max(np.abs(resid(x.ravel()))) < \
                    np.max(np.abs(resid(x0.ravel()))):
                x0 = x
        except Exception:  # pragma: no cover - keep the catenary shape
            pass
        return x0

    # ------------------------------------------------------------------ kernel
    @staticmethod
    def _full(x: np.ndarray, ra: np.ndarray, rb: np.ndarray) -> np.ndarray:
        return np.vstack((ra[None, :], x, rb[None, :]))

    def _tensions(self, r: np.ndarray, v: np.ndarray) -> np.ndarray:
        d = r[1:] - r[:-1]
        lam = np.sqrt(np.einsum("ij,ij->i", d, d))
        q = d / np.maximum(lam, 1e-12)[:, None]
        eps = lam / self.l - 1.0
        epsd = np.einsum("ij,ij->i", v[1:] - v[:-1], q) / self.l
        return np.where(eps > 0.0, np.maximum(self.p.EA * eps + self.c * epsd, 0.0), 0.0)

    def _forces(self, r: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(net force on interior nodes (N-1,3) excluding inertia, node tangents q̂ (N-1,3))."""
        p = self.p
        d = r[1:] - r[:-1]
        lam = np.sqrt(np.einsum("ij,ij->i", d, d))
        q = d / np.maximum(lam, 1e-12)[:, None]
        eps = lam / self.l - 1.0
        epsd = np.einsum("ij,ij->i", v[1:] - v[:-1], q) / self.l
        T = np.where(eps > 0.0, np.maximum(p.EA * eps + self.c * epsd, 0.0), 0.0)
        Tq = T[:, None] * q
        F = Tq[1:] - Tq[:-1]
        F[:, 2] += self._W[1:-1]
        # node tangents and Morison drag on the relative velocity
        qh = r[2:] - r[:-2]
        qh /= np.maximum(np.sqrt(np.einsum("ij,ij->i", qh, qh)), 1e-12)[:, None]
        u = self.current - v[1:-1]
        ut = np.einsum("ij,ij->i", u, qh)[:, None] * qh
        un = u - ut
        lbar = 0.5 * (lam[:-1] + lam[1:])
        F += (self._kdn * lbar * np.sqrt(np.einsum("ij,ij->i", un, un)))[:, None] * un
        if self._kdt:
            F += (self._kdt * lbar * np.sqrt(np.einsum("ij,ij->i", ut, ut)))[:, None] * ut
        # seabed
        pen = r[1:-1, 2] - self.seabed_depth
        hit = pen > 0.0
        if np.any(hit):
            ln = self.l_node[1:-1][hit]
            vv = v[1:-1][hit]
            Fn = np.maximum(p.kBot * pen[hit] + p.cBot * vv[:, 2], 0.0) * p.diameter * ln
            Fb = np.zeros((Fn.size, 3))
            Fb[:, 2] = -Fn
            vh = vv[:, :2]
            vhm = np.sqrt(np.einsum("ij,ij->i", vh, vh))
            fmag = np.minimum(p.friction_damping * vhm, p.friction * Fn)
            Fb[:, :2] = -(fmag / np.maximum(vhm, 1e-300))[:, None] * vh
            F[hit] += Fb
        return F, qh

    def _accel(self, x: np.ndarray, xd: np.ndarray, ra: np.ndarray, va: np.ndarray,
               rb: np.ndarray, vb: np.ndarray) -> np.ndarray:
        r, v = self._rbuf, self._vbuf
        r[0], r[1:-1], r[-1] = ra, x, rb
        v[0], v[1:-1], v[-1] = va, xd, vb
        F, qh = self._forces(r, v)
        # M = m I + ma_n (I - q̂q̂ᵀ) + ma_t q̂q̂ᵀ: M⁻¹F = F_n/(m + ma_n) + F_t/(m + ma_t), exactly
        Fq = np.einsum("ij,ij->i", F, qh)[:, None] * qh
        return (F - Fq) / (self._m + self._ma_n)[:, None] + Fq / (self._m + self._ma_t)[:, None]

    # ------------------------------------------------------------------ public API
    def set_ends(self, anchor_pos: np.ndarray, anchor_vel: np.ndarray,
                 fairlead_pos: np.ndarray, fairlead_vel: np.ndarray) -> None:
        """Prescribe both ends (NED) at the current time; they move with these velocities in step()."""
        self.ra = np.asarray(anchor_pos, dtype=float).reshape(3).copy()
        self.va = np.asarray(anchor_vel, dtype=float).reshape(3).copy()
        self.rb = np.asarray(fairlead_pos, dtype=float).reshape(3).copy()
        self.vb = np.asarray(fairlead_vel, dtype=float).reshape(3).copy()

    def step(self, dt: float, substep: float | None = None) -> None:
        """Advance by dt [s] with n = ceil(dt / substep) equal explicit sub-steps."""
        h_max = self.substep if substep is None else float(substep)
        n = max(1, int(math.ceil(dt / h_max - 1e-9)))
        h = dt / n
        x, xd = self.r, self.v
        ra0, rb0, va, vb = self.ra, self.rb, self.va, self.vb
        acc = self._accel
        for k in range(n):
            t0 = k * h
            e0 = (ra0 + va * t0, va, rb0 + vb * t0, vb)
            if self.scheme == "rk2":
                a1 = acc(x, xd, *e0)
                hh = 0.5 * h
                em = (ra0 + va * (t0 + hh), va, rb0 + vb * (t0 + hh), vb)
                a2 = acc(x + hh * xd, xd + hh * a1, *em)
                x, xd = x + h * (xd + hh * a1), xd + h * a2
            else:
                hh = 0.5 * h
                em = (ra0 + va * (t0 + hh), va, rb0 + vb * (t0 + hh), vb)
                e1 = (ra0 + va * (t0 + h), va, rb0 + vb * (t0 + h), vb)
                k1v, k1a = xd, acc(x, xd, *e0)
                k2v = xd + hh * k1a
                k2a = acc(x + hh * k1v, k2v, *em)
                k3v = xd + hh * k2a
                k3a = acc(x + hh * k2v, k3v, *em)
                k4v = xd + h * k3a
                k4a = acc(x + h * k3v, k4v, *e1)
                x = x + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
                xd = xd + h / 6 * (k1a + 2 * k2a + 2 * k3a + k4a)
        self.r, self.v = x, xd
        self.ra, self.rb = ra0 + va * dt, rb0 + vb * dt
        self.t += dt

    def _end_force(self, end: int) -> np.ndarray:
        r = self._full(self.r, self.ra, self.rb)
        v = self._full(self.v, self.va, self.vb)
        T = self._tensions(r, v)
        i = 0 if end == 0 else self.N - 1
        d = r[i + 1] - r[i]
        q = d / max(float(np.linalg.norm(d)), 1e-12)
        # the end node's half-segment submerged weight acts on the end point, as in MoorDyn's
        # coupled-point force (agrees with moordyn.Step's force to 0.1 %, tests/test_line.py)
        Fw = np.array([0.0, 0.0, self._W[0 if end == 0 else -1]])
        return (T[i] * q if end == 0 else -T[i] * q) + Fw

    def fairlead_force(self) -> np.ndarray:
        """Force the line exerts ON the fairlead point [N], NED (end tension + half-segment weight)."""
        return self._end_force(1)

    def anchor_force(self) -> np.ndarray:
        """Force the line exerts ON the anchor point [N], NED (end tension + half-segment weight)."""
        return self._end_force(0)

    def tensions(self) -> np.ndarray:
        """Segment tensions (N,) [N], anchor segment first, >= 0."""
        return self._tensions(self._full(self.r, self.ra, self.rb),
                              self._full(self.v, self.va, self.vb))

    def node_positions(self) -> np.ndarray:
        """All N+1 node positions (NED), anchor first (a copy)."""
        return self._full(self.r, self.ra, self.rb)

    def node_velocities(self) -> np.ndarray:
        """All N+1 node velocities (NED), anchor first (a copy)."""
        return self._full(self.v, self.va, self.vb)

    def get_state(self) -> dict:
        """Copy of the full state (time, interior nodes, ends)."""
        return {"t": self.t, "r": self.r.copy(), "v": self.v.copy(), "ra": self.ra.copy(),
                "va": self.va.copy(), "rb": self.rb.copy(), "vb": self.vb.copy()}

    def set_state(self, state: dict) -> None:
        """Restore a state from get_state (copied in)."""
        self.t = float(state["t"])
        for k in ("r", "v", "ra", "va", "rb", "vb"):
            setattr(self, k, np.array(state[k], dtype=float, copy=True))

    def state_is_finite(self) -> bool:
        return bool(np.all(np.isfinite(self.r)) and np.all(np.isfinite(self.v))
                    and np.all(np.isfinite(self.ra)) and np.all(np.isfinite(self.rb)))
