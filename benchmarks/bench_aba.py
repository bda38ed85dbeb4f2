"""Speed of the articulated-body algorithm (components/articulated_body.py) against Pinocchio.

    python benchmarks/bench_aba.py [--calls N]

For the 7-DOF presets knuckle_boom and sms_palfinger, prints ABA evaluations per second and the
cost per call of ours (fixed base; moving base with all base inputs; moving base plus reading the
base wrench, I_A and p_A as the crane FMU does at a communication point) side by side with
pin.aba (C++, fixed base), and what that means for an RK4 crane loop (4 ABA calls per sub-step).
Last column: ArticulatedBody.reevaluate (passes 2-3 only, for a new base acceleration and a new
load, as in the crane FMU's output refresh after a co-simulation step) plus the base outputs.
Best of 5 repeats (CPU time); random states. Needs ``pin`` (PyPI) for the reference column.
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=5000)
    args = ap.parse_args()
    try:
        import pinocchio as pin
    except ImportError:
        pin = None
    rng = np.random.default_rng(0)
    rows = []
    for name in ("knuckle_boom", "sms_palfinger"):
        m = preset(name)
        ab = ArticulatedBody(m)
        q, qd = rng.uniform(-1, 1, m.n), rng.uniform(-0.5, 0.5, m.n)
        tau = rng.normal(size=m.n) * 1e4
        R = euler_zyx(0.05, -0.03, 1.0)
        p, v, w = np.array([10.0, 2.0, -5.0]), np.array([0.3, 0.1, 0.2]), np.array([0.02, -0.01, 0.005])
        a, al = np.array([0.1, -0.2, 0.5]), np.array([0.01, 0.02, -0.005])
        t_fixed = best_time(lambda: ab.forward_dynamics(q, qd, tau), args.calls)
        t_moving = best_time(lambda: ab.forward_dynamics(q, qd, tau, R, p, v, w, a, al), args.calls)

        def with_outputs():
            r = ab.forward_dynamics(q, qd, tau, R, p, v, w, a, al)
            return r.base_wrench, r.articulated_inertia, r.bias
        t_out = best_time(with_outputs, args.calls)
        load = [(m.n - 1, np.zeros(3), np.array([1e3, -2e3, 5e4]), np.zeros(3))]
        first = ab.forward_dynamics(q, qd, tau, R, p, v, w, a, al, link_wrenches=load)

        def refresh():
            r = ab.reevaluate(first, a, al, link_wrenches=load)
            return r.base_wrench, r.articulated_inertia, r.bias
        t_re = best_time(refresh, args.calls)
        t_pin = float("nan")
        if pin is not None:
            model = pin_model(m)
            data = model.createData()
            assert np.allclose(pin.aba(model, data, q, qd, tau), ab.forward_dynamics(q, qd, tau).qdd, rtol=1e-9)
            t_pin = best_time(lambda: pin.aba(model, data, q, qd, tau), args.calls * 10)
        rows.append((name, m.n, t_fixed, t_moving, t_out, t_pin, t_re))

    print(f"ABA evaluations per second (cost per call), best of 5 x {args.calls} calls, {time.strftime('%Y-%m-%d')}")
    print(f"{'mechanism':15s} {'DOF':>3s} | {'ours fixed base':>22s} | {'ours moving base':>22s} | "
          f"{'moving + base outputs':>22s} | {'pin.aba (fixed)':>22s} | ratio | {'reevaluate + outputs':>22s}")
    for name, n, tf, tm, to, tp, tr in rows:
        cell = lambda t: f"{1 / t:9.0f}/s ({t * 1e6:6.1f} us)"
        pin_cell = cell(tp) if tp == tp else f"{'pin not installed':>22s}"
        print(f"{name:15s} {n:3d} | {cell(tf)} | {cell(tm)} | {cell(to)} | {pin_cell} | {tm / tp:5.0f}x | {cell(tr)}")
    for name, n, tf, tm, to, tp, tr in rows:
        step = 4 * tm
        print(f"{name}: one RK4 sub-step = 4 moving-base ABA calls = {step * 1e6:.0f} us -> "
              f"{1e-3 / step:.1f}x real time at 1 kHz, {1e-4 / step:.2f}x at 10 kHz (ABA only)")


if __name__ == "__main__":
    main()
