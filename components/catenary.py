"""Static elastic catenary with seabed contact and seabed friction (one mooring line at rest).

Used to initialise a lumped-mass mooring line at rest (no start-up transient) and as a
validation reference for the cable/mooring FMU.  Pure numpy/scipy, no FMI.

Sources
-------
[J07] J. M. Jonkman, "Dynamics Modeling and Loads Analysis of an Offshore Floating Wind Turbine",
      NREL/TP-500-41958 (2007), section 4.2 (the quasi-static elastic catenary with seabed
      contact and seabed friction, and its Jacobian), as implemented in MAP++ (Masciola et al.,
      "Implementation of a multisegmented, quasi-static cable model", ISOPE 2013) and in
      MoorPy's ``catenary``.
[PG79] A. Peyrot & A. Goulois, "Analysis of cable structures", Computers & Structures 10 (1979)
      805-813: the initial guess (as used by MAP++ and FAST's quasi-static module).
[Lee] H.-W. Lee, PhD thesis SNU 2020 (/work/shared/reference/wire_rope_mooring_digest.md
      sections 1.4-1.5, 2.8-2.9): catenary initial shape of an ANCF mooring line, nodes at equal
      unstretched arc length (eq. 49, printed sign reversed [typo]); Table 3-3 reference values.

Conventions (SI units)
----------------------
2-D line plane: ``x`` horizontal from the anchor towards the fairlead, ``z`` vertical **positive
up**, measured from the anchor, so the fairlead sits at (horizontal_span, vertical_span).  The
anchor is the lower end "A", the fairlead the upper end "F".  With ``seabed=True`` the seabed is
the horizontal plane z = 0 through the anchor; the line can rest on it (touchdown).
``node_positions_3d`` maps the plane into the world frame NED (z down): z_ned = z_anchor - z.

Symbols: H horizontal tension (constant along the suspended part), V_F vertical tension at the
fairlead, w = weight per unstretched length in water [N/m], L unstretched length, EA axial
stiffness, C_B seabed friction coefficient, s unstretched arc length from the anchor.

Equations [J07 section 4.2] (1/EA = 0 gives the inextensible catenary)
--------------------------------------------------------------------
Fully suspended (no seabed, or V_A = V_F - w L >= 0), V(s) = V_A + w s::

    x(s) = H/w [asinh(V(s)/H) - asinh(V_A/H)] + H s/EA
    z(s) = H/w [sqrt(1+(V(s)/H)^2) - sqrt(1+(V_A/H)^2)] + (V_A s + w s^2/2)/EA

Touchdown (seabed and V_F < w L): grounded length L_B = L - V_F/w, V_anchor = 0.  On the seabed
Coulomb friction, fully mobilised towards the anchor (the static assumption of [J07], MAP++,
MoorPy), makes the tension T(s) = max(H - C_B w (L_B - s), 0) for 0 <= s <= L_B, so the horizontal
force at the anchor is H_A = max(H - C_B w L_B, 0).  Then::

    x(s) = s + G(s)/EA,   z = 0,                         s <= L_B
    x(s) = L_B + G(L_B)/EA + H/w asinh(w σ/H) + H σ/EA,  σ = s - L_B > 0
    z(s) = H/w [sqrt(1+(w σ/H)^2) - 1] + w σ^2/(2 EA)
    G(s) = int_0^s T ds'

and at s = L this is J07's closed form
``X_F = L_B + H/w asinh(V_F/H) + H L/EA + C_B w/(2EA) [-L_B^2 + (L_B - H/(C_B w)) max(L_B - H/(C_B w), 0)]``,
``Z_F = H/w [sqrt(1+(V_F/H)^2) - 1] + V_F^2/(2 EA w)``.

The two end conditions X_F(H, V_F) = horizontal_span, Z_F(H, V_F) = vertical_span are solved by
Newton's method with the analytic Jacobian and the [PG79] initial guess; if Newton fails, a
bracketed (always convergent) nested root search takes over: for fixed H, Z_F is strictly
increasing in V_F (one root V_F(H)), and g(H) = X_F(H, V_F(H)) - horizontal_span is < 0 as
H -> 0 (otherwise H = 0, below) and > 0 for large H (the H L/EA term), so brentq brackets it.

H = 0 regimes: a vertical line (horizontal_span = 0), and a slack line whose grounded part is
longer than the room left on the seabed (X_F at H -> 0 >= horizontal_span).  The slack grounded
part is then placed with zero tension, uniformly compressed along the seabed (a lumped-mass line
carries no compression, so it starts at rest).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

__all__ = ["CatenaryResult", "solve_catenary", "node_positions_3d"]


# --------------------------------------------------------------------------- profile kernel
def _h_asinh(H: float, V: np.ndarray | float) -> np.ndarray | float:
    """H asinh(V/H), with its limit 0 at H = 0."""
    if H <= 0.0:
        return 0.0 * np.asarray(V, dtype=float)
    return H * np.arcsinh(np.asarray(V, dtype=float) / H)


def _grounded_integral(s: np.ndarray, H: float, LB: float, cbw: float) -> np.ndarray:
    """G(s) = int_0^s max(H - C_B w (L_B - s'), 0) ds' for 0 <= s <= L_B (grounded stretch of [J07])."""
    s = np.asarray(s, dtype=float)
    if cbw <= 0.0:
        return H * s
    s0 = max(LB - H / cbw, 0.0)                      # start of the tensioned grounded part
    sc = np.maximum(s, s0)
    return (H - cbw * LB) * (sc - s0) + 0.5 * cbw * (sc * sc - s0 * s0)


def _xz(s: np.ndarray, H: float, VF: float, L: float, w: float, inv_EA: float, cb: float,
        seabed: bool) -> tuple[np.ndarray, np.ndarray]:
    """x(s), z(s) of the 2-D profile (module docstring equations); s in [0, L]."""
    s = np.asarray(s, dtype=float)
    if seabed and VF < w * L:                        # touchdown
        LB = L - VF / w
        sig = np.maximum(s - LB, 0.0)
        Vs = w * sig                                 # vertical tension along the suspended part
        xg = np.minimum(s, LB) + _grounded_integral(np.minimum(s, LB), H, LB, cb * w) * inv_EA
        x = xg + _h_asinh(H, Vs) / w + H * sig * inv_EA
        # H/w [sqrt(1+(V/H)^2) - 1] written as V^2/(w (hypot(H,V) + H)): no cancellation
        den = np.hypot(H, Vs) + H
        z = np.divide(Vs * Vs, w * den, out=np.zeros_like(Vs), where=den > 0) \
            + 0.5 * w * sig * sig * inv_EA
        return x, z
    VA = VF - w * L
    Vs = VA + w * s
    x = (_h_asinh(H, Vs) - _h_asinh(H, VA)) / w + H * s * inv_EA
    # H/w [sqrt(1+(V/H)^2) - sqrt(1+(VA/H)^2)] = (V^2 - VA^2) / (w (hypot(H,V) + hypot(H,VA)))
    den = np.hypot(H, Vs) + math.hypot(H, VA)
    z = np.divide((Vs - VA) * (Vs + VA), w * den, out=np.zeros_like(Vs), where=den > 0) \
        + (VA * s + 0.5 * w * s * s) * inv_EA
    return x, z


def _ends(H: float, VF: float, L: float, w: float, inv_EA: float, cb: float,
          seabed: bool) -> tuple[float, float]:
    """(X_F, Z_F) = (x(L), z(L)): the fairlead position for given (H, V_F)."""
    x, z = _xz(np.array([L]), H, VF, L, w, inv_EA, cb, seabed)
    return float(x[0]), float(z[0])


def _jacobian(H: float, VF: float, L: float, w: float, inv_EA: float, cb: float,
              seabed: bool) -> np.ndarray:
    """d(X_F, Z_F)/d(H, V_F), analytic (J07's Jacobian, derived here in our notation), H > 0."""
    hF = math.hypot(H, VF)
    if seabed and VF < w * L:
        LB = L - VF / w
        cbw = cb * w
        if cbw > 0.0 and LB - H / cbw > 0.0:         # part of the grounded line is slack
            dC_dH, dC_dV = -LB * inv_EA + H / cbw * inv_EA, H / w * inv_EA
        else:
            dC_dH, dC_dV = 0.0, cb * LB * inv_EA
        dX_dH = (math.asinh(VF / H) - VF / hF) / w + L * inv_EA + dC_dH
        dX_dV = (H / hF - 1.0) / w + dC_dV
        dZ_dH = (H / hF - 1.0) / w
        dZ_dV = VF / (w * hF) + VF / w * inv_EA
    else:
        VA = VF - w * L
        hA = math.hypot(H, VA)
        dX_dH = (math.asinh(VF / H) - math.asinh(VA / H) - VF / hF + VA / hA) / w + L * inv_EA
        dX_dV = (H / hF - H / hA) / w
        dZ_dH = dX_dV
        dZ_dV = (VF / hF - VA / hA) / w + L * inv_EA
    return np.array([[dX_dH, dX_dV], [dZ_dH, dZ_dV]])


# --------------------------------------------------------------------------- solvers
def _vf_for_h(H: float, ZF: float, L: float, w: float, inv_EA: float, cb: float,
              seabed: bool) -> float:
    """V_F with Z_F(H, V_F) = ZF (Z_F strictly increasing in V_F; bracketed root)."""
    def f(v: float) -> float:
        return _ends(H, v, L, w, inv_EA, cb, seabed)[1] - ZF

    lo = 0.0 if seabed else -w * L
    if seabed and ZF <= 0.0:
        return 0.0
    step = w * L + abs(ZF) * w + H
    while f(lo) > 0.0:                               # only when seabed=False
        lo -= step
        step *= 2.0
    hi = max(lo, 0.0) + step
    while f(hi) < 0.0:
        lo, hi = hi, hi + step
        step *= 2.0
    return brentq(f, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=400)


def _solve_bracketed(XF: float, ZF: float, L: float, w: float, inv_EA: float, cb: float,
                     seabed: bool, H_min: float = 0.0) -> tuple[float, float]:
    """Fallback: nested bracketed solve of g(H) = X_F(H, V_F(H)) - XF; needs g(H_min) < 0."""
    def g(H: float) -> float:
        return _ends(H, _vf_for_h(H, ZF, L, w, inv_EA, cb, seabed), L, w, inv_EA, cb, seabed)[0] - XF

    lo, hi = H_min, max(w * L, H_min * 10.0)
    while g(hi) < 0.0:
        lo, hi = hi, hi * 4.0
    H = brentq(g, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=400)
    return H, _vf_for_h(H, ZF, L, w, inv_EA, cb, seabed)


def _initial_guess(XF: float, ZF: float, L: float, w: float) -> tuple[float, float]:
    """[PG79] / MAP++ initial guess for (H, V_F), inextensible shape assumption."""
    if XF <= 0.0:
        lam = 1.0e6
    elif math.hypot(XF, ZF) >= L:
        lam = 0.2
    else:
        lam = math.sqrt(3.0 * ((L * L - ZF * ZF) / (XF * XF) - 1.0))
    H0 = max(abs(w * XF / (2.0 * lam)), 1e-6 * w * L)
    V0 = 0.5 * w * (ZF / math.tanh(lam) + L)
    return H0, V0


def _solve_newton(XF: float, ZF: float, L: float, w: float, inv_EA: float, cb: float,
                  seabed: bool, tol: float, max_iter: int = 100) -> tuple[float, float] | None:
    """Damped Newton on (H, V_F) from the [PG79] guess; None if it does not converge."""
    H, VF = _initial_guess(XF, ZF, L, w)
    if seabed:
        VF = max(VF, 0.0)

    def resid(H: float, VF: float) -> np.ndarray:
        x, z = _ends(H, VF, L, w, inv_EA, cb, seabed)
        return np.array([x - XF, z - ZF])

    r = resid(H, VF)
    for _ in range(max_iter):
        if np.max(np.abs(r)) <= tol:
            return H, VF
        try:
            dH, dV = np.linalg.solve(_jacobian(H, VF, L, w, inv_EA, cb, seabed), -r)
        except np.linalg.LinAlgError:
            return None
        if not (math.isfinite(dH) and math.isfinite(dV)):
            return None
        t = 1.0                                      # backtracking: keep H > 0, reduce |r|
        while t > 1e-6:
            Hn, Vn = H + t * dH, VF + t * dV
            if seabed:
                Vn = max(Vn, 0.0)
            if Hn > 0.0:
                rn = resid(Hn, Vn)
                if np.all(np.isfinite(rn)) and np.max(np.abs(rn)) < np.max(np.abs(r)):
                    break
            t *= 0.5
        else:
            return None
        H, VF, r = Hn, Vn, rn
    return (H, VF) if np.max(np.abs(r)) <= tol else None


# --------------------------------------------------------------------------- public API
@dataclass(frozen=True)
class CatenaryResult:
    """Static solution of one line; forces in N, lengths in m (see the module docstring)."""

    H: float                 # horizontal tension of the suspended part [N]
    V_fairlead: float        # vertical tension at the fairlead (upper end) [N]
    V_anchor: float          # vertical force at the anchor [N] (0 with touchdown)
    tension_fairlead: float  # sqrt(H^2 + V_F^2) [N]
    tension_anchor: float    # sqrt(H_A^2 + V_A^2) [N]
    grounded_length: float   # unstretched length resting on the seabed, L_B [m]
    H_anchor: float          # horizontal force at the anchor, max(H - C_B w L_B, 0) with touchdown [N]
    horizontal_span: float   # the inputs the solution belongs to [m]
    vertical_span: float
    length: float
    weight_per_length: float
    EA: float
    seabed_friction: float
    seabed: bool

    def profile(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(s, x, z) at n points evenly spaced in unstretched arc length s from the anchor.

        x is horizontal from the anchor towards the fairlead, z vertical positive UP from the
        anchor; (x, z) = (0, 0) at s = 0 and (horizontal_span, vertical_span) at s = L.
        """
        n = int(n)
        if n < 2:
            raise ValueError(f"n must be >= 2, got {n}")
        L, w = self.length, self.weight_per_length
        inv_EA = 0.0 if math.isinf(self.EA) else 1.0 / self.EA
        s = np.linspace(0.0, L, n)
        x, z = _xz(s, self.H, self.V_fairlead, L, w, inv_EA, self.seabed_friction, self.seabed)
        LB = self.grounded_length
        if self.H == 0.0 and LB > 0.0:               # slack grounded part: zero tension, compressed
            x = np.where(s <= LB, s * (self.horizontal_span / LB), self.horizontal_span)
        return s, x, z


def _check_finite(name: str, value: float) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {value!r}") from None
    if math.isnan(v):
        raise ValueError(f"{name} is NaN")
    return v


def solve_catenary(horizontal_span: float, vertical_span: float, length: float,
                   weight_per_length: float, EA: float, seabed_friction: float = 0.0,
                   seabed: bool = True) -> CatenaryResult:
    """Elastic catenary of one line between an anchor and a fairlead, at rest.

    horizontal_span: X_F >= 0, horizontal distance anchor -> fairlead [m].
    vertical_span: Z_F, height of the fairlead above the anchor [m] (NED: z_anchor - z_fairlead);
        must be >= 0 with ``seabed=True`` (the seabed is the horizontal plane through the anchor).
    length: unstretched length L > 0 [m].
    weight_per_length: w > 0, weight in water per unstretched length [N/m]
        (w = (m' - rho pi d^2/4) g for a line of mass m' [kg/m] and volume diameter d).
    EA: axial stiffness > 0 [N]; ``math.inf`` gives the inextensible catenary.
    seabed_friction: Coulomb coefficient C_B >= 0 of the grounded part [J07].
    seabed: True if the line may rest on the seabed through the anchor (touchdown).

    Raises ValueError (naming the parameter) for NaN, non-positive length / weight / EA, negative
    span or friction, a fairlead below the seabed, or an inextensible line that cannot reach.
    """
    XF = _check_finite("horizontal_span", horizontal_span)
    ZF = _check_finite("vertical_span", vertical_span)
    L = _check_finite("length", length)
    w = _check_finite("weight_per_length", weight_per_length)
    EA = _check_finite("EA", EA)
    cb = _check_finite("seabed_friction", seabed_friction)
    for name, v in (("horizontal_span", XF), ("vertical_span", ZF), ("length", L),
                    ("weight_per_length", w), ("seabed_friction", cb)):
        if math.isinf(v):
            raise ValueError(f"{name} must be finite, got {v}")
    if XF < 0.0:
        raise ValueError(f"horizontal_span must be >= 0, got {XF}")
    if L <= 0.0:
        raise ValueError(f"length must be > 0, got {L}")
    if w <= 0.0:
        raise ValueError(f"weight_per_length must be > 0 (line heavier than water), got {w}")
    if EA <= 0.0:
        raise ValueError(f"EA must be > 0, got {EA}")
    if cb < 0.0:
        raise ValueError(f"seabed_friction must be >= 0, got {cb}")
    seabed = bool(seabed)
    if seabed and ZF < 0.0:
        raise ValueError(f"vertical_span = {ZF} < 0 puts the fairlead below the seabed "
                         "(seabed=True); use seabed=False for a free-hanging line")
    inv_EA = 0.0 if math.isinf(EA) else 1.0 / EA
    chord = math.hypot(XF, ZF)
    if inv_EA == 0.0 and chord >= L * (1.0 - 1e-14):
        raise ValueError(f"length = {L} m is not longer than the straight distance {chord} m "
                         "between the ends, which an inextensible line (EA = inf) cannot span")

    scale = max(L, chord)
    tol = 1e-12 * scale
    # H -> 0 limit: X_F(0, V_F(0)) >= XF means no tension is needed (vertical or slack line)
    VF0 = _vf_for_h(0.0, ZF, L, w, inv_EA, cb, seabed)
    X0 = _ends(0.0, VF0, L, w, inv_EA, cb, seabed)[0]
    if XF <= X0 + tol:
        H, VF = 0.0, VF0
    else:
        # Z_F = 0 on the seabed: V_F = 0 exactly, where dZ_F/dV_F = 0 (Newton would crawl)
        sol = None if (seabed and ZF == 0.0) else _solve_newton(XF, ZF, L, w, inv_EA, cb, seabed, tol)
        if sol is None:
            sol = _solve_bracketed(XF, ZF, L, w, inv_EA, cb, seabed)   # g(0) = X0 - XF < 0
        H, VF = sol
        xe, ze = _ends(H, VF, L, w, inv_EA, cb, seabed)
        if not (math.isfinite(H) and math.isfinite(VF)) or max(abs(xe - XF), abs(ze - ZF)) > 1e3 * tol:
            raise RuntimeError(f"catenary did not converge: H={H}, V_F={VF}, end error "
                               f"({xe - XF:.3e}, {ze - ZF:.3e}) m")
    return _make_result(H, VF, XF, ZF, L, w, EA, cb, seabed)


def _make_result(H: float, VF: float, XF: float, ZF: float, L: float, w: float, EA: float,
                 cb: float, seabed: bool) -> CatenaryResult:
    if seabed and VF < w * L:
        LB = L - VF / w
        VA = 0.0
        HA = max(H - cb * w * LB, 0.0)
    else:
        LB, VA, HA = 0.0, VF - w * L, H
    return CatenaryResult(
        H=float(H), V_fairlead=float(VF), V_anchor=float(VA),
        tension_fairlead=math.hypot(H, VF), tension_anchor=math.hypot(HA, VA),
        grounded_length=float(LB), H_anchor=float(HA),
        horizontal_span=XF, vertical_span=ZF, length=L, weight_per_length=w, EA=EA,
        seabed_friction=cb, seabed=seabed)


def node_positions_3d(anchor: np.ndarray, fairlead: np.ndarray, result: CatenaryResult,
                      n_nodes: int) -> np.ndarray:
    """Node positions (n_nodes, 3) in NED of the line at rest, anchor first, fairlead last.

    Nodes are evenly spaced in UNSTRETCHED arc length ([Lee] eq. 49, sign corrected).  The 2-D
    profile is placed in the vertical plane through both ends:
    ``p(s) = anchor + x(s) e_h - z(s) e_down``, e_h the horizontal unit vector anchor -> fairlead
    (north if the ends are vertically aligned).  ``result`` must have been solved for these ends
    (spans checked to 1e-6 relative); the residual of the solution (<= 1e-12 L) is removed by a
    correction proportional to s, so the ends are exactly ``anchor`` and ``fairlead``.
    """
    a = np.asarray(anchor, dtype=float).reshape(3)
    f = np.asarray(fairlead, dtype=float).reshape(3)
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(f))):
        raise ValueError("anchor and fairlead must be finite 3-vectors")
    n = int(n_nodes)
    if n < 2:
        raise ValueError(f"n_nodes must be >= 2, got {n_nodes}")
    dh = f[:2] - a[:2]
    span_h = float(np.hypot(dh[0], dh[1]))
    span_v = float(a[2] - f[2])
    tol = 1e-6 * max(result.length, 1.0)
    if abs(span_h - result.horizontal_span) > tol or abs(span_v - result.vertical_span) > tol:
        raise ValueError(
            f"result was solved for spans ({result.horizontal_span}, {result.vertical_span}) m "
            f"but anchor/fairlead give ({span_h}, {span_v}) m")
    e = dh / span_h if span_h > 0.0 else np.array([1.0, 0.0])
    s, x, z = result.profile(n)
    frac = s / result.length
    x = x + (span_h - x[-1]) * frac
    z = z + (span_v - z[-1]) * frac
    p = np.empty((n, 3))
    p[:, 0] = a[0] + x * e[0]
    p[:, 1] = a[1] + x * e[1]
    p[:, 2] = a[2] - z
    p[0], p[-1] = a, f
    return p
