"""A rectangular box barge as vessel data (components.vessel_data.VesselData) from its main dimensions,
for cases whose source gives no hydrodynamic data (the motion-compensation thesis' barge, ship_crane_digest.md
§4.2: "barge ... not given"). A first-order, frequency-domain description good enough to carry a heavy
platform in a seaway; not a substitute for a panel code.

Frames and conventions are those of components/vessel_data.py: CO amidships, on the centreline, in the
calm waterline; x forward, y starboard, z down; zeta = a cos(w t - k (x cos beta + y sin beta)).

* **Mass**: m = rho L B T; CG at (0, 0, T - KG); radii of gyration k44, k55, k66 about the CG
  (defaults 0.35 B, 0.26 L, 0.27 L, the usual barge values).
* **Hydrostatics** (exact for a box, linear): C33 = rho g L B, C44 = rho g V GM_T, C55 = rho g V GM_L,
  GM = KB + BM - KG with KB = T/2, BM_T = B^2/(12 T), BM_L = L^2/(12 T); C35 = 0 (symmetric).
* **Wave excitation**: the Froude-Krylov force only (no diffraction), F = -int p n dS over the five
  wetted faces, p = rho g a exp(-k z) exp(-i k (x cos beta + y sin beta)) (deep water), integrated on
  panels. Diffraction matters for the horizontal forces of a box of this size; heave, roll and pitch
  excitation at wave periods long against the draught are Froude-Krylov dominated (Newman 1977, §6.13).
* **Radiation damping** from that excitation by the Haskind-Newman relation (Newman 1962; deep water):
  B_jj(w) = k w / (4 pi rho g^2) int_0^2pi |X_j(beta)|^2 d beta, diagonal only.
* **Added mass** consistent with that damping (Kramers-Kronig, the Ogilvie relations of
  components/radiation.py): K(t) = (2/pi) int_0^inf B(w) cos(w t) dw, A(w) = A_inf - (1/w) int_0^inf
  K(t) sin(w t) dt, with A_inf from two-dimensional strip values: heave rho pi B^2 L / 8 (a flat
  section's half-circle), sway rho pi T^2 L / 2, surge 5 % of the mass, roll rho pi B^4 L / 512 (about
  the waterline), pitch and yaw the heave and sway values times L^2 / 12.
* **Viscous damping**: none here (the Ship FMU's damping parameters add it).
"""
from __future__ import annotations

import math

import numpy as np

from components.vessel_data import VesselData

RHO = 1025.0
G = 9.81


def froude_krylov(length: float, beam: float, draught: float, omega: np.ndarray, headings: np.ndarray,
                  rho: float = RHO, g: float = G, panels: int = 40) -> np.ndarray:
    """Complex Froude-Krylov force RAO (6, Nw, Nb) per metre of wave amplitude about CO (module
    docstring), by midpoint-rule integration over ``panels`` x ``panels`` panels per face."""
    L, B, T = length, beam, draught
    pts, normals, areas = [], [], []

    def face(u, v, fixed, axis, sign, du, dv):
        # panel centres on a face; n the outward normal (z down: the bottom's outward normal is +z)
        uu, vv = np.meshgrid(u, v, indexing="ij")
        p = np.zeros(uu.shape + (3,))
        free = [a for a in range(3) if a != axis]
        p[..., free[0]], p[..., free[1]], p[..., axis] = uu, vv, fixed
        n = np.zeros(3)
        n[axis] = sign
        pts.append(p.reshape(-1, 3))
        normals.append(np.tile(n, (p.shape[0] * p.shape[1], 1)))
        areas.append(np.full(p.shape[0] * p.shape[1], du * dv))

    def mids(a, b, n):
        e = np.linspace(a, b, n + 1)
        return 0.5 * (e[1:] + e[:-1]), (b - a) / n

    xs, dx = mids(-L / 2, L / 2, panels)
    ys, dy = mids(-B / 2, B / 2, panels)
    zs, dz = mids(0.0, T, max(4, panels // 4))
    face(xs, ys, T, 2, 1.0, dx, dy)                  # bottom, z = T
    face(ys, zs, L / 2, 0, 1.0, dy, dz)              # bow
    face(ys, zs, -L / 2, 0, -1.0, dy, dz)            # stern
    face(xs, zs, B / 2, 1, 1.0, dx, dz)              # starboard side
    face(xs, zs, -B / 2, 1, -1.0, dx, dz)            # port side
    P, N, A = np.concatenate(pts), np.concatenate(normals), np.concatenate(areas)
    gen = np.concatenate([N, np.cross(P, N)], axis=1) * A[:, None]        # (panels, 6): n dS and r x n dS
    k = np.asarray(omega, float) ** 2 / g
    beta = np.asarray(headings, float)
    out = np.empty((6, k.size, beta.size), complex)
    for j, b in enumerate(beta):
        phase = P[:, 0] * math.cos(b) + P[:, 1] * math.sin(b)
        p = rho * g * np.exp(-np.outer(k, P[:, 2]) - 1j * np.outer(k, phase))        # (Nw, panels)
        out[:, :, j] = -(p @ gen).T
    return out


def haskind_damping(omega: np.ndarray, headings: np.ndarray, X: np.ndarray, rho: float = RHO,
                    g: float = G) -> np.ndarray:
    """Diagonal radiation damping (6, Nw) from the excitation X (6, Nw, Nb) on a uniform heading grid
    covering the circle: B_jj = k w / (4 pi rho g^2) int |X_j|^2 d beta (deep water)."""
    k = omega ** 2 / g
    dbeta = 2 * math.pi / len(headings)
    return (k * omega / (4 * math.pi * rho * g * g))[None, :] * (np.abs(X) ** 2).sum(axis=2) * dbeta


def added_mass_from_damping(omega: np.ndarray, B: np.ndarray, A_inf: float, w_max: float = 12.0,
                            t_max: float = 300.0) -> np.ndarray:
    """A(w) from B(w) by the Ogilvie relations (module docstring), B extended by 0 beyond its grid
    (the Haskind damping has decayed there) and linearly to 0 at w = 0."""
    wf = np.linspace(0.0, w_max, 2401)
    Bf = np.interp(wf, np.concatenate([[0.0], omega]), np.concatenate([[0.0], B]), right=0.0)
    t = np.linspace(0.0, t_max, 3001)
    dw, dt = wf[1] - wf[0], t[1] - t[0]
    K = (2 / math.pi) * (np.cos(np.outer(t, wf)) * Bf).sum(axis=1) * dw
    K[0] *= 0.5                                   # trapezoid end weight in t
    return A_inf - (np.sin(np.outer(omega, t)) * K).sum(axis=1) * dt / omega


def box_barge(length: float, beam: float, draught: float, kg: float, radii: tuple | None = None,
              omega: np.ndarray | None = None, headings: np.ndarray | None = None, rho: float = RHO,
              g: float = G, name: str = "box barge") -> VesselData:
    """VesselData of the box barge of the module docstring. kg: CG height above the keel (m)."""
    L, B, T = float(length), float(beam), float(draught)
    if not all(math.isfinite(x) and x > 0 for x in (L, B, T)) or not 0.0 <= kg:
        raise ValueError(f"box barge dimensions must be positive (L {L}, B {B}, T {T}, KG {kg})")
    omega = np.linspace(0.05, 4.0, 80) if omega is None else np.asarray(omega, float)
    headings = np.radians(np.arange(0.0, 360.0, 15.0)) if headings is None else np.asarray(headings, float)
    V = L * B * T
    m = rho * V
    k44, k55, k66 = radii if radii is not None else (0.35 * B, 0.26 * L, 0.27 * L)
    zg = T - kg
    cg = np.array([0.0, 0.0, zg])
    Ig = m * np.diag([k44 ** 2, k55 ** 2, k66 ** 2])
    S = np.array([[0.0, -zg, 0.0], [zg, 0.0, 0.0], [0.0, 0.0, 0.0]])        # S(r_g)
    MRB = np.zeros((6, 6))
    MRB[:3, :3] = m * np.eye(3)
    MRB[:3, 3:] = -m * S
    MRB[3:, :3] = m * S
    MRB[3:, 3:] = Ig - m * S @ S
    kb = T / 2
    gm_t = kb + B * B / (12 * T) - kg
    gm_l = kb + L * L / (12 * T) - kg
    C = np.zeros((6, 6))
    C[2, 2] = rho * g * L * B
    C[3, 3] = rho * g * V * gm_t
    C[4, 4] = rho * g * V * gm_l
    X = froude_krylov(L, B, T, omega, headings, rho, g)
    full = np.radians(np.arange(0.0, 360.0, 5.0))
    Bd = haskind_damping(omega, full, froude_krylov(L, B, T, omega, full, rho, g, panels=24), rho, g)
    a33 = rho * math.pi * B * B * L / 8
    a22 = rho * math.pi * T * T * L / 2
    A_inf = np.array([0.05 * m, a22, a33, rho * math.pi * B ** 4 * L / 512, a33 * L * L / 12, a22 * L * L / 12])
    A = np.zeros((6, 6, omega.size))
    Bm = np.zeros((6, 6, omega.size))
    for j in range(6):
        Bm[j, j] = Bd[j]
        A[j, j] = added_mass_from_damping(omega, Bd[j], A_inf[j])
    return VesselData(
        name=name, rho=rho, g=g, mass=m, cg=cg, MRB=MRB, omega=omega, added_mass=A, damping=Bm, restoring=C,
        viscous_damping=None, rao_headings=headings, force_rao_amp=np.abs(X), force_rao_phase=np.angle(X),
        particulars={"Lpp": L, "B": B, "T": T, "nabla": V, "KG": kg, "GM_T": gm_t, "GM_L": gm_l},
        reference="CO amidships, centreline, calm waterline; x forward, y starboard, z down",
        source="components/box_barge.py: Froude-Krylov excitation, Haskind damping, Kramers-Kronig added mass")
