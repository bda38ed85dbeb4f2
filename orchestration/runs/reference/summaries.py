"""What each reference scenario records and the key figures of a run (summary.json): static wire
tensions against the payload's weight, heave with and without compensation, touchdown, mooring
tensions and offsets."""
from __future__ import annotations

import math

import numpy as np

from orchestration.runs.reference.barge import (barge_equilibrium, catenary_fairlead_force, mooring_layout,
                                                mooring_offset)
from orchestration.runs.reference.lift import (HOIST, LIFT_EVENTS, PAYLOAD_SIZE, WEIGHT_AIR, WEIGHT_WATER, WIRE,
                                               WIRE_WEIGHT_WATER, G)
from orchestration.runs.reference.turnover import RECORD as TURNOVER_RECORD
from orchestration.runs.reference.turnover import describe_turnover, summarize_turnover

def _vectors(*groups) -> list[str]:
    out = []
    for g in groups:
        base, _, n = g.partition("*")
        out += [f"{base}[{i}]" for i in range(int(n))] if n else [base]
    return out


#: What a run records (fewer columns than "every output and input": the recording is a measurable
#: share of the run time, docs/scenarios.md).
RECORD = {
    "offshore_lift": _vectors("ship.position*3", "ship.euler*3", "ship.wave.elevation", f"crane.{HOIST}.position*3",
                              f"crane.{HOIST}.velocity*3", "cable.winch.tension", "cable.end_a.tension",
                              "cable.line_length", "cable.segment_count", "cable.max_tension", "payload.position*3",
                              "payload.velocity*3", "payload.euler*3", "ship.wave_probe.elevation",
                              "winch.motor.power", "winch.motor.torque", "winch.payout.speed",
                              "winch.payout.reference_speed", "winch.payout.line_length", "winch.speed_setpoint",
                              "winch.hardpoint.velocity_down", "crane.joint2.torque",
                              # Integer and Boolean: the winch's control mode and brake
                              "winch.mode", "winch.brake", "winch.brake.engaged", "winch.motor.saturated",
                              # the 3-D replay (replay.py): ship and payload attitude, the crane's base and
                              # joints, the wire's ends
                              "ship.quaternion*4", "payload.quaternion*4", "crane.base.position*3",
                              "crane.base.quaternion*4", *(f"crane.joint{k}.position" for k in range(1, 8)),
                              "payload.attachment1.position*3"),
    "deck_landing": _vectors("ship.position*3", "ship.euler*3", "barge.position*3", "barge.euler*3",
                             f"crane.{HOIST}.position*3", "cable.winch.tension", "cable.end_a.tension",
                             "cable.line_length", "payload.position*3", "payload.velocity*3", "payload.euler*3",
                             "barge.hardpoint1.position*3", "barge.hardpoint1.velocity*3", "contact.pair12.in_contact",
                             "contact.pair12.normal_force", "contact.pair12.penetration", "contact.body1.force*3",
                             "winch.motor.power", "winch.payout.speed", "winch.payout.line_length",
                             "winch.mode", "winch.brake", "winch.brake.engaged", "winch.motor.saturated",
                             "ship.quaternion*4", "barge.quaternion*4", "payload.quaternion*4",
                             "crane.base.position*3", "crane.base.quaternion*4",
                             *(f"crane.joint{k}.position" for k in range(1, 8)), "payload.attachment1.position*3"),
    "moored_barge": _vectors("barge.position*3", "barge.euler*3", "barge.velocity*3",
                             *(f"line{k}.end_b.force*3" for k in range(1, 5)),
                             *(f"line{k}.end_b.tension" for k in range(1, 5)),
                             *(f"line{k}.end_a.tension" for k in range(1, 5)), "barge.wave.elevation",
                             "barge.quaternion*4", *(f"line{k}.end_a.position*3" for k in range(1, 5)),
                             *(f"line{k}.end_b.position*3" for k in range(1, 5))),
    "block_turnover": TURNOVER_RECORD,
}


def _window(t: np.ndarray, a: float, b: float) -> np.ndarray:
    return (t >= a) & (t <= b)


def _std(x: np.ndarray) -> float:
    return float(np.std(x)) if len(x) else math.nan


def summarize(name: str, r) -> dict:
    """Key figures of a run (floats in SI units; the docs and tests quote them)."""
    t = np.asarray(r.time)
    finite = all(bool(np.all(np.isfinite(v))) for v in r.columns.values())
    out: dict = {"all_finite": finite, "end_time": float(t[-1]) if len(t) else 0.0}
    if name in ("offshore_lift", "deck_landing"):
        heave = -r["ship.position[2]"]
        out["ship"] = {"heave_std_m": _std(heave), "roll_std_deg": _std(np.degrees(r["ship.euler[0]"])),
                       "pitch_std_deg": _std(np.degrees(r["ship.euler[1]"])),
                       "roll_mean_deg": float(np.degrees(np.mean(r["ship.euler[0]"]))),
                       "heave_max_m": float(np.max(np.abs(heave - np.mean(heave))))}
    if name == "block_turnover":
        out["turnover"] = summarize_turnover(r)
    if name == "offshore_lift":
        e = LIFT_EVENTS
        T = r["cable.winch.tension"]
        z = r["payload.position[2]"]
        tip_z = r[f"crane.{HOIST}.position[2]"]
        L = r["cable.line_length"]
        air = _window(t, 1.0, e["speed_slow"][0])
        deep_on = _window(t, e["stop"] + 14.0, e["ahc_off"])
        deep_off = _window(t, e["ahc_off"] + 5.0, t[-1])
        w_air = WIRE["mass_per_length"] * G
        fig = {
            "payload_start_depth_m": float(z[0]),
            "payload_final_depth_m": float(np.mean(z[deep_on])) if deep_on.any() else float(z[-1]),
            "payload_max_depth_m": float(np.max(z)),
            "tension_max_kN": float(np.max(T)) / 1e3, "tension_min_kN": float(np.min(T)) / 1e3,
            "weight_air_kN": WEIGHT_AIR / 1e3, "weight_water_kN": WEIGHT_WATER / 1e3,
        }
        if air.any():
            expected = WEIGHT_AIR + w_air * float(np.mean(L[air]))
            fig["tension_air_mean_kN"] = float(np.mean(T[air])) / 1e3
            fig["tension_air_expected_kN"] = expected / 1e3
            fig["tension_air_error_pct"] = 100 * (float(np.mean(T[air])) / expected - 1)
        if deep_on.any():
            # the wire in water: its submerged weight below the surface, its weight in air above
            top = -float(np.mean(tip_z[deep_on]))
            length = float(np.mean(L[deep_on]))
            expected = WEIGHT_WATER + WIRE_WEIGHT_WATER * (length - top) + w_air * top
            fig["tension_water_mean_kN"] = float(np.mean(T[deep_on])) / 1e3
            fig["tension_water_expected_kN"] = expected / 1e3
            fig["tension_water_error_pct"] = 100 * (float(np.mean(T[deep_on])) / expected - 1)
        heave_fig = {}
        for label, win in (("with_ahc", deep_on), ("without_ahc", deep_off)):
            if win.sum() > 10:
                sp, st = _std(z[win]), _std(tip_z[win])
                heave_fig[label] = {"window_s": [float(t[win][0]), float(t[win][-1])], "payload_heave_std_m": sp,
                                    "tip_heave_std_m": st, "compensation_ratio": 1 - sp / st if st > 0 else math.nan}
        if "with_ahc" in heave_fig and "without_ahc" in heave_fig:
            heave_fig["payload_heave_reduction"] = 1 - (heave_fig["with_ahc"]["payload_heave_std_m"] /
                                                        heave_fig["without_ahc"]["payload_heave_std_m"])
        fig["heave"] = heave_fig
        P = r["winch.motor.power"]
        fig["winch"] = {"power_max_kW": float(np.max(P)) / 1e3, "power_min_kW": float(np.min(P)) / 1e3,
                        "energy_kWh": float(np.trapezoid(P, t)) / 3.6e6,
                        "line_paid_out_m": float(L[-1] - L[0])}
        entry = np.flatnonzero(z + PAYLOAD_SIZE[2] / 2 > -r["ship.wave_probe.elevation"])
        if len(entry):
            k = int(entry[0])
            fig["water_entry_s"] = float(t[k])
            splash = _window(t, t[k], t[k] + 25.0)
            fig["splash_zone_tension_min_kN"] = float(np.min(T[splash])) / 1e3
            fig["splash_zone_tension_max_kN"] = float(np.max(T[splash])) / 1e3
        out["lift"] = fig
    elif name == "deck_landing":
        inc = r["contact.pair12.in_contact"] > 0.5
        Fn = r["contact.pair12.normal_force"]
        fig = {"weight_kN": WEIGHT_AIR / 1e3, "touched_down": bool(inc.any())}
        if inc.any():
            k = int(np.argmax(inc))
            rel = r["payload.velocity[2]"] - r["barge.hardpoint1.velocity[2]"]
            late = _window(t, t[-1] - 10.0, t[-1])
            fig.update({
                "touchdown_s": float(t[k]),
                "touchdown_velocity_m_s": float(rel[max(k - 1, 0)]),
                "contact_force_peak_kN": float(np.max(Fn)) / 1e3,
                "impact_factor": float(np.max(Fn)) / WEIGHT_AIR,
                "contact_force_late_mean_kN": float(np.mean(Fn[late])) / 1e3,
                "contact_force_late_error_pct": 100 * (float(np.mean(Fn[late])) / WEIGHT_AIR - 1),
                "contact_fraction_late": float(np.mean(inc[late])),
                "wire_tension_late_mean_kN": float(np.mean(r["cable.winch.tension"][late])) / 1e3,
                "payload_rel_speed_late_max_m_s": float(np.max(np.abs(rel[late]))),
                "penetration_max_m": float(np.max(r["contact.pair12.penetration"])),
                "lift_offs_after_touchdown": int(np.sum(np.diff(inc[k:].astype(int)) < 0)),
            })
        out["landing"] = fig
    elif name == "moored_barge":
        late = _window(t, t[-1] / 2, t[-1])
        forces = {k: np.linalg.norm(np.column_stack([r[f"line{k}.end_b.force[{i}]"] for i in range(3)]), axis=1)
                  for k in range(1, 5)}
        anchors, fairleads = mooring_layout(None, barge_equilibrium())
        reference = [catenary_fairlead_force(a, f)[1].tension_fairlead for a, f in zip(anchors, fairleads)]
        x, load = mooring_offset()
        fig = {"pretension_kN": [float(forces[k][0]) / 1e3 for k in range(1, 5)],
               "pretension_catenary_kN": [v / 1e3 for v in reference],
               "tension_mean_kN": [float(np.mean(forces[k][late])) / 1e3 for k in range(1, 5)],
               "tension_max_kN": [float(np.max(forces[k])) / 1e3 for k in range(1, 5)],
               "tension_min_kN": [float(np.min(forces[k])) / 1e3 for k in range(1, 5)],
               "tension_std_kN": [_std(forces[k][late]) / 1e3 for k in range(1, 5)],
               "offset_mean_m": [float(np.mean(r["barge.position[0]"][late])),
                                 float(np.mean(r["barge.position[1]"][late]))],
               "offset_quasi_static_m": [float(x[0]), float(x[1])],
               "current_load_kN": [float(v) / 1e3 for v in load],
               "offset_max_m": float(np.max(np.hypot(r["barge.position[0]"], r["barge.position[1]"]))),
               "yaw_std_deg": _std(np.degrees(r["barge.euler[2]"][late])),
               "heave_std_m": _std(r["barge.position[2]"][late]),
               "roll_std_deg": _std(np.degrees(r["barge.euler[0]"][late])),
               "pitch_std_deg": _std(np.degrees(r["barge.euler[1]"][late]))}
        out["mooring"] = fig
    return out


def describe(summary: dict) -> list[str]:
    """A few human lines from a summary."""
    lines = []
    lift, landing, mooring = summary.get("lift"), summary.get("landing"), summary.get("mooring")
    if lift:
        if "tension_air_mean_kN" in lift:
            lines.append(f"wire tension in air {lift['tension_air_mean_kN']:.2f} kN (payload + wire "
                         f"{lift['tension_air_expected_kN']:.2f} kN, {lift['tension_air_error_pct']:+.2f} %)")
        if "tension_water_mean_kN" in lift:
            lines.append(f"wire tension at depth {lift['tension_water_mean_kN']:.2f} kN (submerged payload + wire "
                         f"{lift['tension_water_expected_kN']:.2f} kN, {lift['tension_water_error_pct']:+.2f} %), "
                         f"max {lift['tension_max_kN']:.1f} kN, min {lift['tension_min_kN']:.1f} kN")
        lines.append(f"payload from {lift['payload_start_depth_m']:.2f} m to {lift['payload_final_depth_m']:.2f} m "
                     f"depth; "
                     f"winch power {lift['winch']['power_min_kW']:.0f}..{lift['winch']['power_max_kW']:.0f} kW")
        h = lift.get("heave", {})
        if "with_ahc" in h and "without_ahc" in h:
            lines.append(f"payload heave std {h['with_ahc']['payload_heave_std_m']:.3f} m with heave compensation, "
                         f"{h['without_ahc']['payload_heave_std_m']:.3f} m without "
                         f"(jib tip {h['with_ahc']['tip_heave_std_m']:.3f} / "
                         f"{h['without_ahc']['tip_heave_std_m']:.3f} m)")
    if landing and landing.get("touched_down"):
        lines.append(f"touchdown at {landing['touchdown_s']:.2f} s at {landing['touchdown_velocity_m_s']:+.3f} m/s "
                     f"relative to the deck; peak contact force {landing['contact_force_peak_kN']:.1f} kN "
                     f"({landing['impact_factor']:.2f} x weight); last 10 s "
                     f"{landing['contact_force_late_mean_kN']:.1f} kN "
                     f"({landing['contact_force_late_error_pct']:+.2f} % of the weight)")
    if mooring:
        lines.append("pretension " + ", ".join(f"{v:.1f}" for v in mooring["pretension_kN"]) + " kN (catenary "
                     + ", ".join(f"{v:.1f}" for v in mooring["pretension_catenary_kN"]) + " kN)")
        lines.append(f"mean offset ({mooring['offset_mean_m'][0]:.2f}, {mooring['offset_mean_m'][1]:.2f}) m "
                     f"(quasi-static {mooring['offset_quasi_static_m'][0]:.2f}, "
                     f"{mooring['offset_quasi_static_m'][1]:.2f}); "
                     "max tension " + ", ".join(f"{v:.0f}" for v in mooring["tension_max_kN"]) + " kN")
    if summary.get("turnover"):
        lines += describe_turnover(summary["turnover"])
    if "all_finite" in summary and not summary["all_finite"]:
        lines.append("WARNING: non-finite values in the results")
    return lines
