"""Speed of the articulated-body algorithm (components/articulated_body.py) against Pinocchio.

    python benchmarks/bench_aba.py [--calls N]

For the 7-DOF presets knuckle_boom and sms_palfinger, in one run: our numpy reference, our compiled
kernel (components/kernels/aba.c, the default where it can be built) and Pinocchio's pin.aba
(C++, its best setting: the model's Data allocated once, fixed base), cost per call of each.
Ours: fixed base (the same problem as pin.aba); moving base with all base inputs; moving base plus
reading the base wrench, I_A and p_A as the crane FMU does at a communication point; and
ArticulatedBody.reevaluate (passes 2-3 only, for a new base acceleration and load, as in the crane
FMU's output refresh after a co-simulation step) plus the base outputs. Also the crane's compiled
RK4 step (components/kernels/crane.c: four ABA evaluations with the joint controllers and the base
extrapolation per sub-step) against the numpy one. Best of 5 repeats (CPU time); random states.
Needs ``pin`` (PyPI) for the reference column. The goal of issue 26: compiled fixed base <= 2x pin.aba.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from components.articulated_body import ArticulatedBody  # noqa: E402
from components.crane import BaseMotion, Crane  # noqa: E402
from components.mechanism import preset  # noqa: E402
from components.spatial import euler_zyx  # noqa: E402


def best_time(fn, calls: int, repeats: int = 5) -> float:
    """Best mean CPU time per call over `repeats` runs of `calls` calls (s); CPU time of this
    thread, not wall time, so that other processes on a shared machine count less."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.thread_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.thread_time() - t0) / calls)
    return best


def pin_model(m):
    """The mechanism as a fixed-base pin.Model: the tests' construction, so both compare the same."""
    import pinocchio as pin

    from tests.components.test_articulated_body import pin_model as build

    model = build(m)
    model.gravity = pin.Motion(np.array([0.0, 0.0, 9.81]), np.zeros(3))   # NED: gravity along +z
    return model


def our_timings(ab: ArticulatedBody, m, q, qd, tau, calls: int) -> dict[str, float]:
    R = euler_zyx(0.05, -0.03, 1.0)
    p, v, w = np.array([10.0, 2.0, -5.0]), np.array([0.3, 0.1, 0.2]), np.array([0.02, -0.01, 0.005])
    a, al = np.array([0.1, -0.2, 0.5]), np.array([0.01, 0.02, -0.005])
    out = {"fixed": best_time(lambda: ab.forward_dynamics(q, qd, tau).qdd, calls),
           "moving": best_time(lambda: ab.forward_dynamics(q, qd, tau, R, p, v, w, a, al).qdd, calls)}

    def with_outputs():
        r = ab.forward_dynamics(q, qd, tau, R, p, v, w, a, al)
        return r.base_wrench, r.articulated_inertia, r.bias
    out["outputs"] = best_time(with_outputs, calls)
    load = [(m.n - 1, np.zeros(3), np.array([1e3, -2e3, 5e4]), np.zeros(3))]
    first = ab.forward_dynamics(q, qd, tau, R, p, v, w, a, al, link_wrenches=load)

    def refresh():
        r = ab.reevaluate(first, a, al, link_wrenches=load)
        return r.base_wrench, r.articulated_inertia, r.bias
    out["reevaluate"] = best_time(refresh, calls)
    return out


def crane_step_time(name: str, compiled: bool, steps: int) -> float:
    """CPU time of one Crane.step of 0.01 s in one RK4 sub-step, moving base, a load at the tip."""
    m = preset(name)
    crane = Crane(m, compiled=compiled)
    base = BaseMotion(np.array([10.0, 2.0, -5.0]), np.array([0.999, 0.02, -0.03, 0.01]) / np.linalg.norm(
        [0.999, 0.02, -0.03, 0.01]), np.array([0.3, 0.1, 0.2]), np.array([0.02, -0.01, 0.005]),
        np.array([0.1, -0.2, 0.5]), np.array([0.01, 0.02, -0.005]))
    loads = [(att.link, np.asarray(att.point, float), np.array([0.0, 0.0, 5e4]), np.zeros(3))
             for att in m.attachments[-1:]]
    crane.set_inputs(base, crane.setpoint, loads)
    return best_time(lambda: crane.step(0.01, 0.01), steps)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=5000)
    args = ap.parse_args()
    try:
        import pinocchio as pin
    except ImportError:
        pin = None
    from components import kernels

    rng = np.random.default_rng(0)
    rows = []
    for name in ("knuckle_boom", "sms_palfinger"):
        m = preset(name)
        q, qd = rng.uniform(-1, 1, m.n), rng.uniform(-0.5, 0.5, m.n)
        tau = rng.normal(size=m.n) * 1e4
        ref, ker = ArticulatedBody(m, compiled=False), ArticulatedBody(m)
        t_ref = our_timings(ref, m, q, qd, tau, max(args.calls // 10, 100))
        t_ker = our_timings(ker, m, q, qd, tau, args.calls) if ker.compiled else None
        t_pin = float("nan")
        if pin is not None:
            model = pin_model(m)
            data = model.createData()
            assert np.allclose(pin.aba(model, data, q, qd, tau), ker.forward_dynamics(q, qd, tau).qdd, rtol=1e-9)
            t_pin = best_time(lambda: pin.aba(model, data, q, qd, tau), args.calls * 2)
        rows.append((name, m.n, t_ref, t_ker, t_pin))
    steps = max(args.calls // 20, 50)
    # the lift's crane (the SMS Palfinger preset is not meant to hold itself on a moving base)
    t_step = (crane_step_time("knuckle_boom", False, steps), crane_step_time("knuckle_boom", True, steps)
              if ArticulatedBody(preset("knuckle_boom")).compiled else None)

    version = getattr(pin, "__version__", "not installed") if pin is not None else "not installed"
    print(f"ABA cost per call (evaluations per second), best of 5, {time.strftime('%Y-%m-%d')}; "
          f"Pinocchio {version}; kernels: {kernels.status()}")
    cell = lambda t: f"{t * 1e6:7.1f} us ({1 / t:7.0f}/s)" if t == t else f"{'-':>22s}"
    print(f"{'mechanism':14s} {'DOF':>3s} {'implementation':18s} | {'fixed base':>22s} | {'moving base':>22s} | "
          f"{'moving + base outputs':>22s} | {'reevaluate + outputs':>22s}")
    for name, n, t_ref, t_ker, t_pin in rows:
        for label, t in (("ours, numpy", t_ref), ("ours, compiled", t_ker)):
            if t is None:
                print(f"{name:14s} {n:3d} {label:18s} | {'(not available)':>22s} |")
                continue
            print(f"{name:14s} {n:3d} {label:18s} | {cell(t['fixed'])} | {cell(t['moving'])} | {cell(t['outputs'])} | "
                  f"{cell(t['reevaluate'])}")
        print(f"{name:14s} {n:3d} {'pin.aba':18s} | {cell(t_pin)} |")
    for name, n, t_ref, t_ker, t_pin in rows:
        if t_ker is not None:
            print(f"{name}: compiled fixed base / pin.aba = {t_ker['fixed'] / t_pin:.2f} (goal <= 2); "
                  f"numpy / compiled = {t_ref['fixed'] / t_ker['fixed']:.0f}x")
    s_ref, s_ker = t_step
    ker = f", compiled {s_ker * 1e6:.1f} us ({1e-2 / s_ker:.0f}x real time)" if s_ker else ""
    print(f"knuckle_boom: Crane.step of 0.01 s in one RK4 sub-step (4 ABA, controllers, moving base): numpy "
          f"{s_ref * 1e6:.0f} us ({1e-2 / s_ref:.0f}x real time){ker}")


if __name__ == "__main__":
    main()
