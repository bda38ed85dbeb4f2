"""Solve time of the platform NMPC (components/nmpc.py) per 50 Hz control step, against the thesis'
20 ms budget (de Zeeuw §4-5: "the MPC runs at 50 Hz"; ship_crane_digest.md §3.2).

    python benchmarks/bench_nmpc.py [--seconds 20] [--out benchmarks/data/nmpc.json]

1. Runs scenarios/motion_platform's system (Ship FMU with the box barge, MotionPlatform, PlatformController
   with the NMPC; PM Hs 4 m, T1 6.5 s) for ``--seconds`` and records the controller's measurements.
2. Replays the NMPC on those measurements, step after step with its hot start (the same problems in
   the same order as in the run), timing each solve in CPU time of this thread (time.thread_time, so
   that other processes on the shared machine count less); once more without the hot start; and once
   as a real-time iteration (one unverified Gauss-Newton step per sample), with the largest difference
   of its commands from the converged ones.

Prints and writes the distribution of the solve time (median, 95th percentile, maximum, share of
steps within 20 ms), the Gauss-Newton iterations and the trajectories simulated per step, with and
without the hot start (the thesis: "converges from a bad guess in about 5 iterations; hot starting
halves the number of iterations"). One core: numpy's BLAS is limited to one thread here.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BUDGET = 0.020     # s: 50 Hz


def record(fmu_dir: Path, seconds: float) -> dict:
    from orchestration.master.algorithms.fixed import FixedStepAlgorithm
    from orchestration import simulate
    from tests.models import motion_platform as mp

    names = ([f"ship.{v}[{i}]" for v in ("position", "euler", "velocity_body", "angular_velocity_body")
              for i in range(3)] + [f"platform.x[{i}]" for i in range(3)] + [f"platform.x_rate[{i}]" for i in range(3)]
             + [f"controller.leg{k}.force_command" for k in (1, 2, 3)])
    r = simulate(mp.system(fmu_dir, method=1), seconds, mp.STEP, variables=names,
                 algorithm=FixedStepAlgorithm(method="gauss-seidel"))
    states = np.column_stack([r[n] for n in names[:18]])
    forces = np.column_stack([r[n] for n in names[18:]])
    return {"time": r.time, "states": states, "forces": forces}


def controller():
    """The NMPC as the PlatformController FMU builds it (the scenario's parameters)."""
    from components.nmpc import NMPC, MPCSettings, ShipPlatformModel
    from components.platform import SarrusGeometry, platform_inertia
    from components.radiation import fit_radiation
    from components.vessel_data import load_vessel
    from tests.models import motion_platform as mp

    vessel = load_vessel(mp.barge_path())
    rad = fit_radiation(vessel.omega, vessel.added_mass, vessel.damping, max_order=4)
    model = ShipPlatformModel(vessel.MRB + rad.A_inf, vessel.MRB, vessel.restoring, np.array(mp.DECK),
                              platform_inertia(mp.PLATFORM_MASS), SarrusGeometry())
    return lambda hot, single=False: NMPC(model, MPCSettings(hot_start=hot, single_iteration=single))


def replay(make, run: dict, hot: bool, single: bool = False, reference: list | None = None) -> dict:
    from components.nmpc import platform_hrp
    from tests.models import motion_platform as mp

    mpc = make(hot, single)
    states, forces = run["states"], run["forces"]
    setpoint = platform_hrp(states[:1], np.array(mp.DECK))[0] * np.array([1.0, 0.0, 0.0])
    times, iterations, evaluations, alphas, commands = [], [], [], [], []
    for k in range(len(states) - 1):
        t0 = time.thread_time()
        sol = mpc.solve(states[k], forces[k], setpoint)
        times.append(time.thread_time() - t0)
        iterations.append(sol.iterations)
        evaluations.append(sol.evaluations)
        alphas.append(sol.alpha)
        commands.append(sol.forces)
    t = np.array(times)
    deviation = (float(np.abs(np.array(commands) - np.array(reference)).max()) / 1e6 if reference is not None
                 else 0.0)
    return {"hot_start": hot, "single_iteration": single, "commands": commands,
            "max_deviation_MN": deviation, "steps": len(t), "median_ms": 1e3 * float(np.median(t)),
            "p95_ms": 1e3 * float(np.percentile(t, 95)), "max_ms": 1e3 * float(t.max()),
            "mean_ms": 1e3 * float(t.mean()), "within_budget": float((t <= BUDGET).mean()),
            "mean_iterations": float(np.mean(iterations)), "max_iterations": int(np.max(iterations)),
            "mean_trajectories": float(np.mean(evaluations)), "alpha_positive": float(np.mean(np.array(alphas) > 0))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="simulated seconds recorded (default 20)")
    ap.add_argument("--fmus", type=Path, help="FMU folder (default: build them into a temporary folder)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "data" / "nmpc.json")
    args = ap.parse_args(argv)
    fmu_dir = args.fmus
    if fmu_dir is None:
        import build_fmus

        fmu_dir = Path(tempfile.mkdtemp(prefix="bench_nmpc_"))
        build_fmus.build_all(fmu_dir, ["Ship", "MotionPlatform", "PlatformController"])
    run = record(fmu_dir, args.seconds)
    make = controller()
    full = replay(make, run, True)
    results = [full, replay(make, run, False, reference=full["commands"]),
               replay(make, run, True, single=True, reference=full["commands"])]
    for r in results:
        r.pop("commands")
        kind = "real-time iteration" if r["single_iteration"] else f"hot start {str(r['hot_start']):5}"
        print(f"{kind}: {r['steps']} steps, solve time median {r['median_ms']:.1f} ms, "
              f"95 % {r['p95_ms']:.1f} ms, max {r['max_ms']:.1f} ms; within 20 ms: {100 * r['within_budget']:.0f} %; "
              f"Gauss-Newton iterations mean {r['mean_iterations']:.2f} (max {r['max_iterations']}), "
              f"{r['mean_trajectories']:.0f} trajectories per step; alpha > 0 in {100 * r['alpha_positive']:.0f} %; "
              f"largest difference from the hot-started solves {r['max_deviation_MN']:.3f} MN")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"seconds": args.seconds, "budget_ms": 1e3 * BUDGET, "results": results,
                                    "date": time.strftime("%Y-%m-%d")}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
