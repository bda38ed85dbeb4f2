"""The reference scenarios' plots: one PNG per topic and one page with all panels."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from orchestration.runs.reference.barge import mooring_offset
from orchestration.runs.reference.landing import LANDING_EVENTS
from orchestration.runs.reference.lift import HOIST, LIFT_EVENTS, PAYLOAD_SIZE, WEIGHT_AIR, WEIGHT_WATER
from orchestration.runs.reference.turnover import plot_turnover_panels

def _have(r, *names: str) -> bool:
    return all(n in r.columns for n in names)


def plot_reference(name: str, r, out_dir: Path) -> list[Path]:
    """The scenario's PNGs (one per topic and one page with all of them)."""
    from orchestration.runs.plotting import plot_panels

    out_dir = Path(out_dir)
    t = r.time
    deg = np.degrees
    panels: dict[str, dict] = {}
    marks: list[tuple[float, str]] = []
    if name in ("offshore_lift", "deck_landing") and _have(r, "ship.position[2]", "ship.euler[0]", "ship.euler[1]"):
        panels["ship_motions"] = {"title": "crane vessel motions", "ylabel": "m, deg", "lines": [
            (-r["ship.position[2]"], "heave up [m]"), (deg(r["ship.euler[0]"]), "roll [deg]"),
            (deg(r["ship.euler[1]"]), "pitch [deg]")]}
    if name in ("offshore_lift", "deck_landing") and _have(r, *(f"crane.{HOIST}.position[{i}]" for i in range(3))):
        p = [r[f"crane.{HOIST}.position[{i}]"] for i in range(3)]
        panels["crane_tip"] = {"title": "crane (jib) tip, relative to its start", "ylabel": "m", "lines": [
            (p[0] - p[0][0], "north"), (p[1] - p[1][0], "east"), (-(p[2] - p[2][0]), "up")]}
    if name == "offshore_lift":
        e = LIFT_EVENTS
        marks = [(e["speed_slow"][0], "lower 0.5 m/s"), (e["ahc_on"], "AHC on, 1 m/s"), (e["stop"], "stop"),
                 (e["ahc_off"], "AHC off")]
        if _have(r, "cable.winch.tension"):
            lines = [(r["cable.winch.tension"] / 1e3, "at the winch (jib tip)")]
            if _have(r, "cable.end_a.tension"):
                lines.append((r["cable.end_a.tension"] / 1e3, "at the payload", {"alpha": 0.7}))
            panels["wire_tension"] = {"title": "wire tension", "ylabel": "kN", "lines": lines, "hlines": [
                (WEIGHT_AIR / 1e3, "payload weight in air"), (WEIGHT_WATER / 1e3, "in water")]}
        if _have(r, "payload.position[2]"):
            lines = [(r["payload.position[2]"], "payload (box centre)")]
            if _have(r, f"crane.{HOIST}.position[2]"):
                lines.append((r[f"crane.{HOIST}.position[2]"], "jib tip"))
            if _have(r, "ship.wave_probe.elevation"):
                lines.append((-r["ship.wave_probe.elevation"], "sea surface at the payload", {"alpha": 0.6}))
            panels["payload_depth"] = {"title": "payload depth (NED z, down +)", "ylabel": "m", "lines": lines,
                                       "invert": True}
        if _have(r, "winch.motor.power"):
            lines = [(r["winch.motor.power"] / 1e3, "motor power [kW] (> 0 hoisting, < 0 regenerating)")]
            panels["winch_power"] = {"title": "winch", "ylabel": "kW", "lines": lines}
            if _have(r, "winch.payout.speed"):
                panels["winch_speed"] = {"title": "winch pay-out speed", "ylabel": "m/s", "lines": [
                    (r["winch.payout.speed"], "pay-out speed"),
                    (r["winch.speed_setpoint"], "operator setpoint", {"alpha": 0.7})]
                    if _have(r, "winch.speed_setpoint") else [(r["winch.payout.speed"], "pay-out speed")]}
    elif name == "deck_landing":
        e = LANDING_EVENTS
        marks = [(e["lower"][0], "lower 0.25 m/s"), (e["stop"], "stop")]
        if _have(r, "contact.pair12.normal_force"):
            lines = [(r["contact.pair12.normal_force"] / 1e3, "deck contact force")]
            if _have(r, "cable.winch.tension"):
                lines.append((r["cable.winch.tension"] / 1e3, "wire tension"))
            panels["contact_force"] = {"title": "contact force and wire tension", "ylabel": "kN", "lines": lines,
                                       "hlines": [(WEIGHT_AIR / 1e3, "payload weight")]}
        if _have(r, "payload.velocity[2]", "barge.hardpoint1.velocity[2]"):
            panels["touchdown_velocity"] = {"title": "payload velocity relative to the deck (down +)",
                                            "ylabel": "m/s", "lines": [
                                                (r["payload.velocity[2]"] - r["barge.hardpoint1.velocity[2]"],
                                                 "vertical")]}
        if _have(r, "payload.position[2]", "barge.hardpoint1.position[2]"):
            gap = r["barge.hardpoint1.position[2]"] - (r["payload.position[2]"] + PAYLOAD_SIZE[2] / 2)
            panels["deck_gap"] = {"title": "payload bottom above the landing spot (deck level at the barge's "
                                           "hardpoint 1)", "ylabel": "m", "lines": [(gap, "gap")]}
        if _have(r, "barge.position[2]", "barge.euler[0]"):
            panels["barge_motions"] = {"title": "barge motions", "ylabel": "m, deg", "lines": [
                (-r["barge.position[2]"], "heave up [m]"), (deg(r["barge.euler[0]"]), "roll [deg]"),
                (deg(r["barge.euler[1]"]), "pitch [deg]")]}
    elif name == "block_turnover":
        panels, marks = plot_turnover_panels(r)
    elif name == "moored_barge":
        labels = ("1 bow stbd", "2 bow port", "3 stern port", "4 stern stbd")
        lines = []
        for k in range(1, 5):
            if _have(r, *(f"line{k}.end_b.force[{i}]" for i in range(3))):
                f = np.linalg.norm(np.column_stack([r[f"line{k}.end_b.force[{i}]"] for i in range(3)]), axis=1)
                lines.append((f / 1e3, f"line {labels[k - 1]}"))
        panels["fairlead_tensions"] = {"title": "fairlead tensions", "ylabel": "kN", "lines": lines}
        if _have(r, "barge.position[0]", "barge.position[1]"):
            x, _ = mooring_offset()
            panels["barge_offsets"] = {"title": "barge offset (vessel origin)", "ylabel": "m", "lines": [
                (r["barge.position[0]"], "north"), (r["barge.position[1]"], "east")],
                "hlines": [(x[0], "quasi-static north"), (x[1], "quasi-static east")]}
        if _have(r, "barge.position[2]", "barge.euler[0]", "barge.euler[1]", "barge.euler[2]"):
            panels["barge_motions"] = {"title": "barge motions", "ylabel": "m, deg", "lines": [
                (-r["barge.position[2]"], "heave up [m]"), (deg(r["barge.euler[0]"]), "roll [deg]"),
                (deg(r["barge.euler[1]"]), "pitch [deg]"), (deg(r["barge.euler[2]"]), "yaw [deg]")]}
    paths = []
    titles = {"offshore_lift": "Offshore lift: 10 t through the splash zone to 50 m, JONSWAP Hs 2.5 m Tp 8 s",
              "deck_landing": "Deck landing: 10 t onto a barge deck alongside, JONSWAP Hs 1.5 m Tp 8 s",
              "moored_barge": "Moored barge: four catenary chains, JONSWAP Hs 2.5 m Tp 8 s, current 1 m/s",
              "block_turnover": "Block turnover (Lee 2020 sec. 4.1): 348 t, a floating crane and two crawler cranes"}
    for key, panel in panels.items():
        if panel.get("lines"):
            paths.append(plot_panels(t, [panel], out_dir / f"{key}.png", titles[name], marks=marks))
    if panels:
        paths.append(plot_panels(t, list(panels.values()), out_dir / f"{name}.png", titles[name], marks=marks))
    return paths
