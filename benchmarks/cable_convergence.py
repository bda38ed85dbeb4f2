"""Mesh convergence of the line component (components.line): a mooring chain and a cantilever rod.

    python benchmarks/cable_convergence.py [--png PATH] [--markdown PATH]

(a) The 50 m chain of tests/test_line.py and benchmarks/bench_cable.py, N = 10, 20, 41, 80, 160
    segments, implicit scheme:
    * static: the force the line exerts on the fairlead and on the anchor (|F|, the end tension)
      after Line()'s static equilibrium, against the elastic catenary (components.catenary)
      solved over the seabed's equilibrium penetration w / (kBot d), as in tests/components/test_catenary.py,
      and against the finest mesh.  The catenary has a rigid seabed 0.132 m below the anchor; the
      line has a spring seabed through the anchor, so the two differ by a model difference that
      no mesh removes (the converged difference is printed).
    * dynamic: the ramped 1 m / 10 s fairlead heave for 60 s at a 0.1 s coupling step, 5 ms
      sub-step: max and min of |F| at the fairlead and the RMS of |F|(t) - |F|_finest(t) in
      percent of the finest run's standard deviation.  The axial damping is held at the
      41-segment value of MoorDyn's BA = -1 (c = 10 m x sqrt(EA m') = 8.08e6 N s) for every N:
      with BA = -zeta the damping coefficient is proportional to the element length, so the
      model itself would change with N.
(b) SMS API 4.1.1 cantilever (sms_api_digest.md section 4.1.1): L = 3 m, EI = 1e6 N m2, d = 0.1 m,
    1000 kg/m3 (7.854 kg/m), EA = 1e9 N, compression = 1 (a rod), in air, no gravity; root clamped
    along +x, free end B.  N = 3, 6, 12, 24, 48 elements:
    * static tip deflection under a 5e4 N tip force along +z, against the linear F L^3 / (3 EI)
      = 0.45 m, the inextensible elastica EI theta'' = -P cos theta (0.440014 m) and the elastica
      with the axial stretch P sin theta / EA (EA = 1e9 N) that the line also has;
    * first bending period: 1e3 N tip pre-load, static equilibrium, release, theta = 0.6 with
      1e-4 s sub-steps and 2e-4 s steps for 0.5 s; after 0.2 s the mean spacing of the upward
      (z increasing) zero crossings of the tip z, linearly interpolated.  References: the
      digest's 0.045022 s (coefficient 3.52) and 2 pi / (3.5160 sqrt(EI / (m' L^4))) = 0.045073 s
      (the exact Euler-Bernoulli coefficient (1.87510)^2).

Prints the tables (Markdown with --markdown) and saves a log-log plot of the errors against N
(default docs/img/cable_convergence.png).
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402
from scipy.optimize import brentq  # noqa: E402

from components.catenary import solve_catenary  # noqa: E402
from components.line import Line, LineParams  # noqa: E402

# ------------------------------------------------------------------ (a) the 50 m chain
CHAIN = LineParams(length=410.0, diameter=0.252, mass_per_length=390.0, EA=1.674e9, damping=-1.0,
                   Cdn=1.37, Cdt=0.64, Can=1.0, Cat=0.0, kBot=1e5, cBot=1e4, friction=0.5)
ANCHOR = np.array([400.0, 0.0, 50.0])        # NED
FAIRLEAD = np.zeros(3)
DEPTH = 50.0
CHAIN_MESHES = (10, 20, 41, 80, 160)
C41 = 10.0 * math.sqrt(CHAIN.EA * CHAIN.mass_per_length)   # BA = -1 on a 10 m segment [N s]
CHAIN_DYN = dataclasses.replace(CHAIN, damping=C41)
T_END, DT, SUBSTEP = 60.0, 0.1, 0.005

# ------------------------------------------------------------------ (b) SMS 4.1.1 cantilever
BEAM_L, BEAM_EI, BEAM_LOAD, BEAM_EA = 3.0, 1.0e6, 5.0e4, 1.0e9
BEAM = LineParams(length=BEAM_L, diameter=0.1, mass_per_length=1000.0 * math.pi / 4 * 0.1**2, EA=BEAM_EA,
                  EI=BEAM_EI, compression=1.0, rho_water=0.0, g=0.0)
BEAM_MESHES = (3, 6, 12, 24, 48)
PERIOD_DIGEST = 0.045022
PERIOD_EB = 2 * math.pi / (1.8751040687119611**2 * math.sqrt(BEAM_EI / (BEAM.mass_per_length * BEAM_L**4)))
STATIC_TOL = 1e-4   # residual [N]; the round-off floor at 48 elements (EA/l = 1.6e10 N/m) is ~1e-5 N


def heave(t: float, amp: float = 1.0, period: float = 10.0, ramp: float = 20.0) -> tuple[float, float]:
    """Upward fairlead heave (z up) and its rate, ramped in over ``ramp`` s (tests/test_line.py)."""
    w = 2 * math.pi / period
    if t < ramp:
        return amp * t / ramp * math.sin(w * t), amp * (t / ramp * w * math.cos(w * t) + math.sin(w * t) / ramp)
    return amp * math.sin(w * t), amp * w * math.cos(w * t)


def chain_static(n: int) -> tuple[float, float]:
    """|force on the fairlead|, |force on the anchor| [N] at the static equilibrium with n segments."""
    line = Line(CHAIN, ANCHOR, FAIRLEAD, n, DEPTH, scheme="implicit")
    return float(np.linalg.norm(line.fairlead_force())), float(np.linalg.norm(line.anchor_force()))


def chain_dynamic(n: int) -> tuple[np.ndarray, float]:
    """|force on the fairlead| after each 0.1 s step of the heave (fixed damping C41), wall time [s]."""
    line = Line(CHAIN_DYN, ANCHOR, FAIRLEAD, n, DEPTH, scheme="implicit", substep=SUBSTEP)
    steps = int(round(T_END / DT))
    out = np.empty(steps)
    t0 = time.perf_counter()
    for k in range(steps):
        z, zd = heave(k * DT)
        line.set_ends(ANCHOR, np.zeros(3), [0.0, 0.0, -z], [0.0, 0.0, -zd])
        line.step(DT)
        out[k] = np.linalg.norm(line.fairlead_force())
    return out, time.perf_counter() - t0


def catenary_reference() -> tuple[float, float]:
    """Fairlead and anchor tension [N] of the elastic catenary over the seabed penetration."""
    w = CHAIN.weight_per_length
    cat = solve_catenary(400.0, DEPTH + w / (CHAIN.kBot * CHAIN.diameter), CHAIN.length, w, CHAIN.EA, 0.0)
    return cat.tension_fairlead, cat.tension_anchor


def elastica_tip(EA: float = math.inf) -> float:
    """Tip deflection [m] of the cantilever elastica by shooting on theta'(0):
    EI theta'' = -P (1 + eps) cos theta, z' = (1 + eps) sin theta, eps = P sin theta / EA,
    theta(0) = 0, theta'(L) = 0 (inextensible for EA = inf)."""
    P, EI, L = BEAM_LOAD, BEAM_EI, BEAM_L

    def rhs(_s: float, y: list[float]) -> list[float]:
        eps = 0.0 if math.isinf(EA) else P * math.sin(y[0]) / EA
        return [y[1], -P / EI * (1.0 + eps) * math.cos(y[0]), (1.0 + eps) * math.sin(y[0])]

    def end(k0: float) -> np.ndarray:
        return solve_ivp(rhs, (0.0, L), [0.0, k0, 0.0], rtol=1e-12, atol=1e-14).y[:, -1]

    k0 = brentq(lambda k: end(k)[1], 1e-9, 1.01 * P * L / EI, xtol=1e-15)
    return float(end(k0)[2])


def beam_line(n: int, **kw) -> Line:
    line = Line(BEAM, [0.0, 0.0, 0.0], [BEAM_L, 0.0, 0.0], n, math.inf, scheme="implicit", clamped_a=True,
                free_b=True, **kw)
    line.set_end_tangents([1.0, 0.0, 0.0])
    return line


def beam_static(n: int) -> tuple[float, float]:
    """Tip deflection z [m] under the 5e4 N tip force with n elements, and the residual [N]."""
    line = beam_line(n)
    line.set_tip_force([0.0, 0.0, BEAM_LOAD])
    residual = line.static_equilibrium(tol=STATIC_TOL)
    return float(line.r[-1, 2]), residual


def beam_period(n: int) -> tuple[float, float]:
    """First bending period [s] from free vibration after a 1e3 N tip pre-load, and wall time [s]."""
    line = beam_line(n, substep=1e-4, theta=0.6)
    line.set_tip_force([0.0, 0.0, 1.0e3])
    line.static_equilibrium(tol=STATIC_TOL)
    line.set_tip_force([0.0, 0.0, 0.0])
    h, steps = 2e-4, int(round(0.5 / 2e-4))
    t = h * np.arange(1, steps + 1)
    z = np.empty(steps)
    t0 = time.perf_counter()
    for k in range(steps):
        line.step(h)
        z[k] = line.r[-1, 2]
    wall = time.perf_counter() - t0
    keep = t > 0.2
    t, z = t[keep], z[keep]
    i = np.nonzero((z[:-1] < 0.0) & (z[1:] >= 0.0))[0]
    crossings = t[i] - z[i] * (t[i + 1] - t[i]) / (z[i + 1] - z[i])
    return float((crossings[-1] - crossings[0]) / (len(crossings) - 1)), wall


def rel(x: float, ref: float) -> float:
    """Relative error [%]."""
    return 100.0 * (x / ref - 1.0)


def table(head: list[str], rows: list[list[str]]) -> tuple[str, str]:
    """The rows as aligned text and as Markdown."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    fmt = "  ".join("{:>%d}" % w for w in widths)
    text = "\n".join([fmt.format(*head)] + [fmt.format(*r) for r in rows])
    md = "\n".join(["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
                   + ["| " + " | ".join(r) + " |" for r in rows])
    return text, md


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--png", type=Path, default=ROOT / "docs" / "img" / "cable_convergence.png")
    ap.add_argument("--markdown", type=Path, default=None, help="also write the tables as Markdown here")
    args = ap.parse_args()
    t_start = time.perf_counter()
    md_parts: list[str] = []

    # (a) chain
    Tf_cat, Ta_cat = catenary_reference()
    static = {n: chain_static(n) for n in CHAIN_MESHES}
    dyn = {n: chain_dynamic(n) for n in CHAIN_MESHES}
    n_fine = CHAIN_MESHES[-1]
    Tf_fine, Ta_fine = static[n_fine]
    ref = dyn[n_fine][0]
    rows = []
    chain_err: dict[str, list[float]] = {k: [] for k in ("fair_cat", "anch_cat", "fair_fine", "anch_fine",
                                                         "max_fine", "min_fine", "rms_fine")}
    for n in CHAIN_MESHES:
        Tf, Ta = static[n]
        T, wall = dyn[n]
        e = {"fair_cat": rel(Tf, Tf_cat), "anch_cat": rel(Ta, Ta_cat), "fair_fine": rel(Tf, Tf_fine),
             "anch_fine": rel(Ta, Ta_fine), "max_fine": rel(T.max(), ref.max()), "min_fine": rel(T.min(), ref.min()),
             "rms_fine": 100.0 * float(np.sqrt(np.mean((T - ref) ** 2)) / np.std(ref))}
        for k, v in e.items():
            chain_err[k].append(v)
        rows.append([str(n), f"{Tf / 1e3:.2f}", f"{e['fair_cat']:+.3f}", f"{e['fair_fine']:+.3f}", f"{Ta / 1e3:.2f}",
                     f"{e['anch_cat']:+.3f}", f"{e['anch_fine']:+.3f}", f"{T.max() / 1e3:.2f}", f"{e['max_fine']:+.3f}",
                     f"{T.min() / 1e3:.2f}", f"{e['min_fine']:+.3f}", f"{e['rms_fine']:.2f}", f"{wall:.1f}"])
    head = ["N", "fairlead kN", "vs cat %", "vs fine %", "anchor kN", "vs cat %", "vs fine %", "dyn max kN",
            "vs fine %", "dyn min kN", "vs fine %", "rms vs fine %", "dyn wall s"]
    text, md = table(head, rows)
    title = (f"(a) 50 m chain, implicit: static end forces vs the elastic catenary (fairlead {Tf_cat / 1e3:.2f} kN, "
             f"anchor {Ta_cat / 1e3:.2f} kN) and vs N = {n_fine}; 60 s heave at {SUBSTEP * 1e3:g} ms sub-steps, "
             f"damping {C41:.3g} N s for every N")
    print(title)
    print(text)
    md_parts += [title, "", md, ""]

    # (b) cantilever
    tip_inext, tip_ext = elastica_tip(), elastica_tip(BEAM_EA)
    tip_lin = BEAM_LOAD * BEAM_L**3 / (3 * BEAM_EI)
    rows = []
    beam_err: dict[str, list[float]] = {"tip_inext": [], "tip_ext": [], "period": []}
    for n in BEAM_MESHES:
        tip, residual = beam_static(n)
        per, wall = beam_period(n)
        beam_err["tip_inext"].append(rel(tip, tip_inext))
        beam_err["tip_ext"].append(rel(tip, tip_ext))
        beam_err["period"].append(rel(per, PERIOD_EB))
        rows.append([str(n), f"{tip:.6f}", f"{rel(tip, tip_lin):+.3f}", f"{rel(tip, tip_inext):+.4f}",
                     f"{rel(tip, tip_ext):+.4f}", f"{residual:.1e}", f"{per:.6f}", f"{rel(per, PERIOD_DIGEST):+.3f}",
                     f"{rel(per, PERIOD_EB):+.3f}", f"{wall:.1f}"])
    head = ["N", "tip m", "vs linear %", "vs elastica %", "vs ext. elastica %", "residual N", "period s",
            "vs 0.045022 %", "vs EB %", "period wall s"]
    text, md = table(head, rows)
    title = (f"(b) SMS 4.1.1 cantilever: tip deflection vs linear {tip_lin:.4f} m, elastica {tip_inext:.6f} m, "
             f"extensible elastica (EA = {BEAM_EA:.0e} N) {tip_ext:.6f} m; period vs the digest {PERIOD_DIGEST} s "
             f"and Euler-Bernoulli {PERIOD_EB:.6f} s")
    print(title)
    print(text)
    md_parts += [title, "", md, ""]
    print(f"total {time.perf_counter() - t_start:.0f} s")

    if args.markdown is not None:
        args.markdown.write_text("\n".join(md_parts))
        print(f"Markdown tables written to {args.markdown}")
    plot(chain_err, beam_err, args.png)
    print(f"plot saved to {args.png}")


def plot(chain_err: dict[str, list[float]], beam_err: dict[str, list[float]], path: Path) -> None:
    """Log-log |error| vs N: the chain against the finest mesh and the catenary; the beam."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    n = np.array(CHAIN_MESHES[:-1], dtype=float)
    for key, label, style in (("fair_fine", "static fairlead force vs N=160", "o-"),
                              ("anch_fine", "static anchor force vs N=160", "s-"),
                              ("max_fine", "dynamic max force vs N=160", "^-"),
                              ("rms_fine", "dynamic RMS difference vs N=160 (% of std)", "v-")):
        ax1.loglog(n, np.abs(chain_err[key][:-1]), style, label=label)
    nn = np.array(CHAIN_MESHES, dtype=float)
    ax1.loglog(nn, np.abs(chain_err["fair_cat"]), "o:", color="grey", label="static fairlead force vs catenary")
    ax1.loglog(n, abs(chain_err["fair_fine"][0]) * (n / n[0]) ** -2, "k--", lw=0.8, label="N^-2")
    ax1.set_xlabel("segments N")
    ax1.set_ylabel("|error| [%]")
    ax1.set_title("(a) 50 m chain (implicit)")
    ax1.legend(fontsize=7)
    ax1.grid(True, which="both", alpha=0.3)

    nb = np.array(BEAM_MESHES, dtype=float)
    ax2.loglog(nb, np.abs(beam_err["tip_ext"]), "o-", label="static tip vs extensible elastica")
    ax2.loglog(nb, np.abs(beam_err["tip_inext"]), "o:", color="grey", label="static tip vs inextensible elastica")
    ax2.loglog(nb, np.abs(beam_err["period"]), "s-", label="period vs Euler-Bernoulli 0.045073 s")
    ax2.loglog(nb, abs(beam_err["period"][0]) * (nb / nb[0]) ** -2, "k--", lw=0.8, label="N^-2")
    ax2.set_xlabel("elements N")
    ax2.set_ylabel("|error| [%]")
    ax2.set_title("(b) SMS 4.1.1 cantilever")
    ax2.legend(fontsize=7)
    ax2.grid(True, which="both", alpha=0.3)
    for ax, meshes in ((ax1, CHAIN_MESHES), (ax2, BEAM_MESHES)):
        ax.set_xticks(meshes)
        ax.set_xticklabels([str(m) for m in meshes])
        ax.xaxis.set_minor_formatter(NullFormatter())
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
