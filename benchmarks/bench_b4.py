"""Benchmark B4 (ship_crane_digest.md 4.1, 7.3-7.5): the Tysse-Egeland ship + heavy crane, co-simulated
(Ship FMU + Crane FMU, tests/models/b4/cosim.py) against the monolithic reference (tests/models/b4/monolithic.py), with
the paper's timing; writes docs/img/b4_*.png and a JSON of every number (docs/b4_ship_heavy_crane.md).

    python benchmarks/bench_b4.py [--fmus DIR] [--out results/b4] [--quick]

Runs (default macro step 0.01 s, Jacobi with inputs held, mass-aware ship-crane interface):

* the scenarios (a) 250 t put on a level ship, (b) tip lift 0.5 m at 10 s and back at 15 s, (c) slewing from
  sway to surge over 10-30 s, (e) JONSWAP Hs 4 m wp 1.3 rad/s beam sea, (e') a milder Hs 2.5 m wp 0.7 rad/s
  sea: co-simulation vs reference, and one-way coupling (b, c, e);
* explicit force/acceleration coupling instead of the mass-aware interface (b, e);
* the macro step (b at 0.005, 0.01, 0.02, 0.05 s);
* the harness's setpoint handling (b): setpoints held without refreshing the crane's outputs, refreshed,
  refreshed with the servo torque of the step's midpoint (the default);
* the hoist split into its own FMU: the bare crane + the Cable FMU carrying the payload (b), against the
  reference with the same external wire.

``--quick``: the scenarios and one-way runs only.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.models.b4 import cosim, model as b4  # noqa: E402

IMG = ROOT / "docs" / "img"
SIGNALS = cosim.SIGNALS
LABELS = {"heave": "heave of CO [m]", "roll": "roll [deg]", "pitch": "pitch [deg]", "tip": "crane tip, down [m]",
          "tension": "hoist tension [kN]"}


def _scale(key: str, x: np.ndarray) -> np.ndarray:
    if key in ("roll", "pitch"):
        return np.degrees(x)
    if key == "tension":
        return x / 1e3
    if key == "tip":
        return x[:, 2]
    return x


def compare(co, ref) -> dict:
    return {"range": cosim.errors(co, ref), "std": cosim.errors(co, ref, norm="std")}


def fmt(errors: dict) -> str:
    return ", ".join(f"{k} {100 * v:.2f} %" for k, v in errors.items())


def plot(path: Path, title: str, co, ref, one=None) -> None:
    """Heave, roll, pitch, crane-tip height and hoist tension: as they are (left) and their change from the
    start (right), co-simulation vs reference vs one-way coupling."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(SIGNALS), 2, figsize=(12, 11), sharex=True)
    for row, key in zip(axes, SIGNALS):
        for ax, delta in zip(row, (False, True)):
            for run, style in ((ref, dict(color="k", lw=2.4, alpha=0.3, label="monolithic reference")),
                               (co, dict(color="C0", lw=1.0, label="co-simulation, two-way, 0.01 s")),
                               (one, dict(color="C3", lw=1.0, ls="--", label="one-way coupling"))):
                if run is None:
                    continue
                x = _scale(key, run[key])
                ax.plot(run.time, x - x[0] if delta else x, **style)
            ax.grid(alpha=0.3)
        row[0].set_ylabel(LABELS[key])
    axes[0, 0].set_title("as computed", fontsize=9)
    axes[0, 1].set_title("change from t = 0", fontsize=9)
    axes[0, 0].legend(loc="best", fontsize=7)
    axes[-1, 0].set_xlabel("time [s]")
    axes[-1, 1].set_xlabel("time [s]")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def plot_steps(path: Path, steps: list[float], errs: list[dict]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for key in SIGNALS:
        ax.loglog(steps, [100 * e[key] for e in errs], "o-", label=key)
    ax.loglog(steps, [2.0] * len(steps), "k--", lw=0.8, label="2 % goal")
    ax.set_xlabel("macro step [s]")
    ax.set_ylabel("RMS error / range of the reference [%]")
    ax.set_title("B4 (b) tip lift: co-simulation error vs macro step", fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


SCENARIO_DIR = ROOT / "scenarios" / "ship_heavy_crane"


def write_scenario(fmus: Path, folder: Path = SCENARIO_DIR, payload: float = 250e3) -> Path:
    """The user's version of B4 (scenarios/ship_heavy_crane): the Ship and Crane FMUs with the mass-aware
    interface, the paper's sea and a 250 t payload, at its static equilibrium; position servos holding
    the sag-compensated setpoints (start values), the compensation of the body-axis hydrostatics'
    horizontal force as constant hardpoint 2 and 3 forces, and lift.yaml: the tip up 0.5 m at 10 s and
    back at 15 s as setpoint steps. FMU paths point at build/fmus (marine-cosim build); the mechanism
    file and lift.yaml are named relative to the .ssd."""
    from orchestration.runs.reference.lift import declare_unconnected_inputs
    from orchestration.system.ssp import write_ssp
    from orchestration.system.model import Component, System

    folder.mkdir(parents=True, exist_ok=True)
    sc = b4.Scenario("ship_heavy_crane", payload, 30.0, sea=dict(b4.SEA_PAPER))
    init = b4.initial_state(sc)
    mech = folder / f"crane_{payload / 1e3:.0f}t.json"
    d = b4.mechanism(payload, servo="position")
    d["name"] = f"tysse_egeland_{payload / 1e3:.0f}t"
    d["description"] = ("scenarios/ship_heavy_crane: the B4 crane (components/data/cranes/tysse_egeland.json) with "
                        "its hook block (two passive joints), the hoist as a prismatic spring-damper joint (1e7 N/m, "
                        "5 % damping; tension = -joint6.torque) and the payload as its link. " + d["description"])
    mech.write_text(json.dumps(d, indent=1) + "\n")
    r0 = sc.position_setpoint(0.0)
    crane = {"mechanism": str(mech.resolve()), "gravity": b4.G, "max_substep": 0.01, "use_initial": True,
             **{f"joint{k + 1}.initial_position": float(init.q[k]) for k in range(6)},
             **{f"joint{k + 1}.setpoint": float(r0[k]) for k in (0, 1, 2, 5)}}
    ship = cosim.ship_values(sc)
    points, forces = sc.hardpoint_forces(0.0)
    for j in range(2):
        ship.update({f"hardpoint{j + 2}.force[{i}]": float(forces[j][i]) for i in range(3)})
    s = System("ship_heavy_crane")
    s.add_component(Component("ship", Path(fmus) / "Ship.fmu", ship))
    s.add_component(Component("crane", Path(fmus) / "Crane.fmu", crane))
    for var in cosim.MOTION:
        for i in range(3):
            s.connect(f"ship.hardpoint1.{var}[{i}]", f"crane.base.{var}[{i}]")
    for i in range(4):
        s.connect(f"ship.hardpoint1.quaternion[{i}]", f"crane.base.quaternion[{i}]")
    for block, keys in (("linear", cosim.SYM), ("coupling", cosim.FULL), ("angular", cosim.SYM)):
        for k in keys:
            s.connect(f"crane.base.inertia_{block}[{k}]", f"ship.hardpoint1.inertia_{block}[{k}]")
    for w in ("force", "moment"):
        for i in range(3):
            s.connect(f"crane.base.bias_{w}[{i}]", f"ship.hardpoint1.bias_{w}[{i}]")
    s.stop_time, s.base_step = sc.stop, b4.STEP
    s.algorithm, s.algorithm_options = "fixed", {"method": "jacobi"}
    s.scenario = folder / "lift.yaml"        # written below; the .ssd names it (mc:Scenario)
    path = folder / "ship_heavy_crane.ssd"
    declare_unconnected_inputs(s)          # unused on purpose: their start values, no validation warning
    write_ssp(s, path)
    text = path.read_text()
    for name in ("Ship", "Crane"):
        built = Path(fmus) / f"{name}.fmu"
        target = f'source="../../build/fmus/{name}.fmu"'
        text = text.replace(f'source="{built.as_posix()}"', target)
        text = text.replace(f'source="{Path(os.path.relpath(built, folder)).as_posix()}"', target)
    path.write_text(text)
    events = ["description: >",
              "  Benchmark B4 (docs/b4_ship_heavy_crane.md), user version: the crane tip lifted 0.5 m at 10 s and",
              "  lowered back at 15 s ([S4] 8.1): the boom and jib setpoints of the benchmark's minimum-jerk moves",
              "  (2 s each, sag-compensated), as overrides every 20 ms. ship_heavy_crane.ssd names this file:",
              "  marine-cosim run scenarios/ship_heavy_crane/ship_heavy_crane.ssd",
              f"end: {sc.stop:g}", "events:"]
    for t in np.arange(b4.LIFT_TIMES[0], b4.LIFT_TIMES[1] + b4.LIFT_RAMP + 1e-9, 0.02):
        if b4.LIFT_TIMES[0] + b4.LIFT_RAMP < t < b4.LIFT_TIMES[1] - 1e-9:
            continue
        u = b4.progress(t + 0.01, "lift")        # the value at the middle of the 20 ms hold
        r = b4.reference_positions(0.0, "lift", payload, u=u)
        for k in (1, 2):
            events.append(f"  - {{time: {t:.2f}, model: crane, variable: \"joint{k + 1}.setpoint\", "
                          f"action: override, value: {r[k]:.9f}}}")
    (folder / "lift.yaml").write_text("\n".join(events) + "\n")
    print(f"wrote {path}, {mech.name}, lift.yaml (hold setpoints {np.round(np.degrees(r0[:3]), 4)} deg)")
    return path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--fmus", type=Path, help="folder with Ship.fmu, Crane.fmu, Cable.fmu (default: build them)")
    p.add_argument("--out", type=Path, default=ROOT / "results" / "b4")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--no-figures", action="store_true")
    p.add_argument("--write-scenario", action="store_true", help="only (re)write scenarios/ship_heavy_crane")
    args = p.parse_args(argv)
    fmus = args.fmus
    if fmus is None:
        import build_fmus

        fmus = Path(tempfile.mkdtemp(prefix="b4_fmus_"))
        build_fmus.build_all(fmus, ["Ship", "Crane", "Cable"])
    if args.write_scenario:
        write_scenario(fmus)
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="b4_work_"))
    started = time.perf_counter()
    out: dict = {"step": b4.STEP, "scenarios": {}, "explicit": {}, "steps": {}, "harness": {}, "cable": {}}

    def log(text):
        print(text, flush=True)

    # ------------------------------------------------------------------ the scenarios, two-way and one-way
    refs = {}
    for key, sc in b4.SCENARIOS.items():
        co = cosim.run(fmus, sc, workdir=work)
        ref = b4.reference(sc, co.time, rtol=1e-9)
        refs[key] = ref
        entry = {"name": sc.name, "stop": sc.stop, "wall": co.wall, **compare(co, ref),
                 "static": {"heave": float(ref["heave"][0]), "roll_deg": math.degrees(ref["roll"][0]),
                            "pitch_deg": math.degrees(ref["pitch"][0])},
                 "range": compare(co, ref)["range"]}
        one = None
        if key in ("b", "c", "e"):
            one = cosim.run(fmus, sc, "one-way", workdir=work)
            r2, r1, rr = (np.degrees(x) for x in (co["roll"], one["roll"], ref["roll"]))
            entry["one_way"] = {"roll_change_two_way_deg": float(np.max(np.abs(r2 - r2[0]))),
                                "roll_change_reference_deg": float(np.max(np.abs(rr - rr[0]))),
                                "roll_change_one_way_deg": float(np.max(np.abs(r1 - r1[0]))),
                                "roll_rms_one_way_error_deg": float(np.sqrt(np.mean((r1 - rr) ** 2))),
                                "roll_std_reference_deg": float(np.std(rr)),
                                "heave_rms_one_way_error_m": float(np.sqrt(np.mean((one["heave"] - ref["heave"])
                                                                                    ** 2))),
                                "one_way": compare(one, ref)}
        out["scenarios"][key] = entry
        log(f"{sc.name} ({co.wall:.0f} s wall): {fmt(entry['range'])} [std: {fmt(entry['std'])}]"
            + (f"; one-way roll change {entry['one_way']['roll_change_one_way_deg']:.2g} deg vs two-way "
               f"{entry['one_way']['roll_change_two_way_deg']:.3f} (reference "
               f"{entry['one_way']['roll_change_reference_deg']:.3f})" if one is not None else ""))
        if not args.no_figures:
            plot(IMG / f"b4_{key}.png", sc.name, co, ref, one)
    if not args.quick:
        # -------------------------------------------------------------- explicit coupling
        for key in ("b", "e"):
            sc = b4.SCENARIOS[key]
            co = cosim.run(fmus, sc, "explicit", workdir=work)
            out["explicit"][key] = compare(co, refs[key])
            log(f"explicit coupling, {key}: {fmt(out['explicit'][key]['range'])}")
        # -------------------------------------------------------------- the macro step
        sc = b4.SCENARIOS["b"]
        steps, errs = [], []
        for h in (0.005, 0.01, 0.02, 0.05):
            co = cosim.run(fmus, sc, step=h, workdir=work)
            ref = b4.reference(sc, co.time, rtol=1e-9, step=h)
            e = compare(co, ref)
            out["steps"][str(h)] = {**e, "wall": co.wall}
            steps.append(h)
            errs.append(e["range"])
            log(f"step {h}: {fmt(e['range'])} ({co.wall:.0f} s wall)")
        if not args.no_figures:
            plot_steps(IMG / "b4_step.png", steps, errs)
        # -------------------------------------------------------------- setpoint handling
        for refresh in (False, True):
            co = cosim.run(fmus, sc, refresh=refresh, workdir=work)
            out["harness"][str(refresh)] = compare(co, refs["b"])
            log(f"setpoints refresh={refresh}: {fmt(out['harness'][str(refresh)]['range'])}")
        # -------------------------------------------------------------- the hoist as a Cable FMU
        co = cosim.run(fmus, sc, hoist="cable", workdir=work)
        ref = b4.cable_reference(sc, co.time, rtol=1e-9)
        out["cable"]["b"] = {**compare(co, ref), "wall": co.wall}
        log(f"hoist as a Cable FMU, b: {fmt(out['cable']['b']['range'])} [std: {fmt(out['cable']['b']['std'])}]")
    out["wall"] = time.perf_counter() - started
    (args.out / "b4.json").write_text(json.dumps(out, indent=1))
    log(f"wall time {out['wall']:.0f} s; numbers in {args.out / 'b4.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
