"""Crane-tip compensation (docs/tip_compensation.md): tip motion in the earth frame with and without
compensation, torque and power demand, the effect of one step of measurement delay, of a target that
follows the vessel's slow motion, and of the joints' power limits, on the offshore lift and on the B4 ship
+ heavy crane.

    python benchmarks/bench_tip_compensation.py [--seconds 60] [--fmus DIR]

Writes benchmarks/data/tip_compensation.json and docs/img/tip_compensation_{lift,heavy}.png.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from orchestration.master.algorithms.fixed import FixedStepAlgorithm  # noqa: E402
from orchestration.master.execution import ExecutionError  # noqa: E402
from orchestration import simulate  # noqa: E402
from tests.models import tip_compensation as tc  # noqa: E402

LIFT_CASES = {"held (mode 0)": {"mode": 0}, "compensated": {"mode": 1},
              "compensated, 1 step delay": {"mode": 1, "measurement_delay": 1},
              "compensated, target follows (T 30 s)": {"mode": 1, "target_time_constant": 30.0},
              "compensated, main boom 300 kW": ({"mode": 1}, {2: 3.0e5})}
HEAVY_CASES = {"held (mode 0)": {"mode": 0}, "compensated": {"mode": 1},
               "compensated, 1 step delay": {"mode": 1, "measurement_delay": 1},
               "compensated, target follows (T 20 s)": {"mode": 1, "target_time_constant": 20.0}}


def _summary(r, tip: str, joints, window: float, limits: dict) -> dict:
    sel = r.time >= window
    P = np.column_stack([r[f"{tip}[{i}]"] for i in range(3)])[sel]
    m = tc.TipMotion.of(P, dt=float(r.time[1] - r.time[0]))
    out = {"tip_rms_m": m.rms, "tip_wave_rms_m": m.wave_rms, "tip_std_m": m.std.tolist(), "tip_peak_m": m.peak}
    for k in joints:
        signed = r[f"crane.joint{k}.power"][sel]
        tau, power = np.abs(r[f"crane.joint{k}.torque"][sel]), np.abs(signed)
        q = r[f"crane.joint{k}.position"][sel]
        # the power limit binds on the power the drive delivers (> 0); braking (< 0) on the torque limit
        out[f"joint{k}"] = {"torque_max": float(tau.max()), "power_max": float(power.max()),
                            "power_delivered_max": float(max(signed.max(), 0.0)),
                            "power_braking_max": float(max(-signed.min(), 0.0)),
                            "power_mean": float(power.mean()), "travel_deg": float(np.degrees(np.ptp(q))),
                            **limits.get(k, {})}
    if "ship.euler[0]" in r:
        out["roll_std_deg"] = float(np.degrees(r["ship.euler[0]"][sel].std()))
        out["roll_mean_deg"] = float(np.degrees(r["ship.euler[0]"][sel].mean()))
    return out


def lift(fmu_dir: Path, seconds: float, tmp: Path) -> tuple[dict, dict]:
    joints = (1, 2, 3)
    names = [f"crane.attachment2.position[{i}]" for i in range(3)] + ["ship.euler[0]"] + \
        [f"crane.joint{k}.{x}" for k in joints for x in ("position", "torque", "power")]
    out, series = {}, {}
    for label, case in LIFT_CASES.items():
        controller, power = case if isinstance(case, tuple) else (case, {})
        data = tc.lift_mechanism()
        for k, p in power.items():
            data["links"][k - 1]["control"]["power_max"] = p
        limits = {k: {"torque_limit": data["links"][k - 1]["control"]["torque_max"],
                      "power_limit": data["links"][k - 1]["control"]["power_max"]} for k in joints}
        path = tmp / f"kb_{len(out)}.json"
        path.write_text(json.dumps(data))
        try:
            r = simulate(tc.lift_system(fmu_dir, controller=controller, mechanism=path, stop=seconds), seconds, 0.025,
                         variables=names, algorithm=FixedStepAlgorithm(method="gauss-seidel"))
        except ExecutionError as exc:          # the power-limited boom collapses (docs/tip_compensation.md)
            out[label] = {"failed": str(exc).splitlines()[0]}
            print(f"lift, {label}: failed: {out[label]['failed']}", flush=True)
            continue
        out[label] = _summary(r, "crane.attachment2.position", joints, 10.0, limits)
        series[label] = r
        print(f"lift, {label}: tip RMS {1e3 * out[label]['tip_rms_m']:.2f} mm, wave-frequency part "
              f"{1e3 * out[label]['tip_wave_rms_m']:.2f} mm", flush=True)
    return out, series


def heavy(fmu_dir: Path, seconds: float, tmp: Path) -> tuple[dict, dict]:
    joints = (1, 2, 3)
    names = [f"crane.attachment1.position[{i}]" for i in range(3)] + ["ship.euler[0]", "ship.position[1]"] + \
        [f"crane.joint{k}.{x}" for k in joints for x in ("position", "torque", "power")]
    out, series = {}, {}
    for label, controller in HEAVY_CASES.items():
        r = simulate(tc.heavy_system(fmu_dir, controller=controller, workdir=tmp), seconds, 0.01, variables=names,
                     algorithm=FixedStepAlgorithm())
        out[label] = _summary(r, "crane.attachment1.position", joints, 5.0, {})
        series[label] = r
        print(f"heavy, {label}: tip RMS {1e3 * out[label]['tip_rms_m']:.2f} mm, wave-frequency part "
              f"{1e3 * out[label]['tip_wave_rms_m']:.2f} mm", flush=True)
    return out, series


def plot(series: dict, tip: str, title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(4, 1, figsize=(9, 10), sharex=True)
    for label, r in series.items():
        P = np.column_stack([r[f"{tip}[{i}]"] for i in range(3)])
        d = np.linalg.norm(P - P[r.time >= 5.0].mean(axis=0), axis=1)
        axes[0].plot(r.time, d, label=label, lw=0.9)
        axes[1].plot(r.time, -(P[:, 2] - P[0, 2]), lw=0.9)
        axes[2].plot(r.time, r["crane.joint2.torque"] / 1e6, lw=0.9)
        axes[3].plot(r.time, r["crane.joint2.power"] / 1e3, lw=0.9)
    axes[0].set_yscale("log")
    axes[0].set_ylabel("m")
    axes[0].set_title("tip distance from its mean position (earth frame)", fontsize=9, loc="left")
    axes[1].set_ylabel("m")
    axes[1].set_title("tip height change (up)", fontsize=9, loc="left")
    axes[2].set_ylabel("MN m")
    axes[2].set_title("boom joint torque", fontsize=9, loc="left")
    axes[3].set_ylabel("kW")
    axes[3].set_title("boom joint power", fontsize=9, loc="left")
    axes[3].set_xlabel("time [s]")
    axes[0].legend(fontsize=7, loc="lower right")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--heavy-seconds", type=float, default=30.0)
    ap.add_argument("--fmus", type=Path)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "data" / "tip_compensation.json")
    args = ap.parse_args(argv)
    fmu_dir = args.fmus
    tmp = Path(tempfile.mkdtemp(prefix="bench_tip_"))
    if fmu_dir is None:
        import build_fmus

        fmu_dir = tmp / "fmus"
        build_fmus.build_all(fmu_dir, ["Ship", "Crane", "TipCompensator", "Winch", "Cable", "Payload"])
    lift_out, lift_series = lift(fmu_dir, args.seconds, tmp)
    heavy_out, heavy_series = heavy(fmu_dir, args.heavy_seconds, tmp)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"lift": {"seconds": args.seconds, "window_from": 10.0, "cases": lift_out},
                                    "heavy": {"seconds": args.heavy_seconds, "window_from": 5.0, "cases": heavy_out}},
                                   indent=1) + "\n")
    plot(lift_series, "crane.attachment2.position", "offshore lift's vessel, JONSWAP Hs 2.5 m, Tp 8 s: jib tip",
         ROOT / "docs" / "img" / "tip_compensation_lift.png")
    plot(heavy_series, "crane.attachment1.position", "B4 ship + heavy crane (250 t), JONSWAP Hs 4 m, wp 1.3 rad/s",
         ROOT / "docs" / "img" / "tip_compensation_heavy.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
