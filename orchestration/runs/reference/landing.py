"""The deck landing: the offshore lift's crane sets the structure down on the deck of a barge alongside
(a second Ship FMU) through the Contact FMU, multi-rate (docs/scenarios.md)."""
from __future__ import annotations

from pathlib import Path

from orchestration.runs.reference.lift import (LANDING_POSE, NUMERICS, PAYLOAD_SIZE, LIFT_POINT, SEA, _connect_vec,
                                               _lift_components, _vec, declare_unconnected_inputs, lift_geometry)
from orchestration.runs.reference.paths import DEFAULT_FMU_DIR

# ---------------------------------------------------------------------------------- deck landing
#: The barge: a second Ship FMU (the bundled supply vessel stands in for a barge: no barge data is
#: bundled), alongside to starboard, CO 27 m east of the crane vessel's, held by the Ship's
#: station-keeping spring (its moorings).  Landing area at its hardpoint 1, 2 m above the waterline
#: (deck level), under the jib tip: a 10 x 8 x 1 m grillage with rubber pads (E 2 MPa, B 0.2 MPa s:
#: normal contact 23 rad/s, omega h = 0.29 at 0.0125 s, damping rate 0.67 per step).  The
#: friction's stick spring reaches mu f_n after 2 cm of creep with a 0.05 s damping time (the Contact
#: FMU's 1 mm / 0.01 s defaults make a 70 rad/s, 100 1/s tangential mode that an explicit coupling
#: at 0.025 s cannot carry: the payload chattered on the deck at +-2 m/s, measured).
#: The sea: Hs 1.5 m (Tp 8 s, same direction and seed), a usual limit for deck landings: in the lift's
#: Hs 2.5 m the jib tip (30 m aft of the crane vessel's midship) and the barge deck move +-2 m
#: relative to each other and the payload is snatched off the deck again and again.
BARGE_EAST = 27.0
DECK_HEIGHT = 2.0
DECK_SIZE = (10.0, 8.0, 1.0)
PADS = {"E": 2.0e6, "B": 2.0e5}
LANDING_SEA = {**SEA, "sea.hs": 1.5}
#: Multi-rate: payload, barge and contact step at 0.0125 s (contact omega h = 0.29, damping rate
#: 0.67 per step: a contact force held over the payload's step is explicit Euler, which needs small
#: steps; the barge too, or the contact sees its deck move in 0.025 s stairs: a 40 Hz force ripple of
#: k v h, +-30 kN at 0.3 m/s of deck heave, measured), the rest every second base step (0.025 s, as
#: in the lift).
LANDING_MULTIPLE = 2
LANDING_CLEARANCE = 3.0        # payload bottom above the deck at the start
LANDING_EVENTS = {"lower": (2.0, 0.25), "stop": 26.0, "end": 45.0}


def landing_geometry(pose=LANDING_POSE, clearance: float = LANDING_CLEARANCE):
    """The crane vessel's start (lift_geometry) with the payload ``clearance`` m above the barge deck,
    and the barge's landing spot (body frame) under the jib tip."""
    attach_z = -DECK_HEIGHT - clearance - PAYLOAD_SIZE[2] / 2 - LIFT_POINT
    geo = lift_geometry(attach_z, pose)
    # the barge's midship under the jib tip (north), so its pitch does not heave the landing spot
    spot = (0.0, float(geo.tip[1] - BARGE_EAST), -DECK_HEIGHT)                    # barge body frame
    return geo, spot


def deck_landing_system(fmu_dir: Path = DEFAULT_FMU_DIR, sea: dict | None = None, numerics: dict | None = None,
                        clearance: float = LANDING_CLEARANCE, stop: float = LANDING_EVENTS["end"]):
    from orchestration.system.model import Component, System

    num = {**NUMERICS, **(numerics or {})}
    sea = LANDING_SEA if sea is None else sea
    geo, spot = landing_geometry(LANDING_POSE, clearance)
    barge = {**sea, "initial.position[0]": float(geo.tip[0]), "initial.position[1]": BARGE_EAST,
             **_vec("hardpoint1.location", spot),
             "max_substep": num["ship_substep"]}
    s = System("deck_landing", start_time=0.0, stop_time=stop, base_step=num["step"] / LANDING_MULTIPLE,
               algorithm="fixed", algorithm_options={"method": "gauss-seidel"})
    _lift_components(s, Path(fmu_dir), geo, sea, LANDING_POSE, num, barge=barge)
    s.components["cable"].parameters["max_substep"] = num.get("landing_cable_substep", 0.005)
    for comp in s.components.values():                 # multi-rate: the contact's bodies faster
        if comp.name not in ("payload", "barge"):
            comp.step_multiple = LANDING_MULTIPLE
    s.components["payload"].parameters.update(_vec("attachment2.location", (0.0, 0.0, 0.0)))
    contact = {"model": 0, "friction.static": 0.5, "friction.dynamic": 0.4, "friction.stick_distance": 0.02,
               "friction.stick_time": 0.05,
               "body1.shape": 1, **_vec("body1.size", PAYLOAD_SIZE), "body1.E": PADS["E"], "body1.B": PADS["B"],
               "body2.shape": 1, **_vec("body2.size", DECK_SIZE), "body2.offset[2]": DECK_SIZE[2] / 2,
               "body2.E": PADS["E"], "body2.B": PADS["B"]}
    s.add_component(Component("contact", Path(fmu_dir) / "Contact.fmu", contact, step_multiple=1))
    # body 1: the payload (reference origin = box centre); body 2: the barge deck at its hardpoint 1
    # power bonds: the payload's and the deck's wrench with the velocities they work on
    for var in ("position", "velocity", "angular_velocity"):
        moving = var != "position"
        _connect_vec(s, f"payload.{var}", f"contact.body1.{var}", bond="payload_contact" if moving else None)
        _connect_vec(s, f"barge.hardpoint1.{var}", f"contact.body2.{var}", bond="deck_contact" if moving else None)
    _connect_vec(s, "payload.quaternion", "contact.body1.quaternion", 4)
    _connect_vec(s, "barge.hardpoint1.quaternion", "contact.body2.quaternion", 4)
    # the contact force acts at the payload's reference point (attachment 2 sits there), its moment
    # about that point is a free moment
    _connect_vec(s, "contact.body1.force", "payload.attachment2.force", bond="payload_contact")
    _connect_vec(s, "contact.body1.moment", "payload.cg.moment", bond="payload_contact")
    _connect_vec(s, "contact.body2.force", "barge.hardpoint1.force", bond="deck_contact")
    _connect_vec(s, "contact.body2.moment", "barge.hardpoint1.moment", bond="deck_contact")
    declare_unconnected_inputs(s)
    return s


def deck_landing_events() -> dict:
    e = LANDING_EVENTS
    return {
        "description": "Deck landing (issue 11): the 10 t structure, hanging 3 m above the barge deck, is lowered at "
                       "0.25 m/s onto the deck of a second vessel alongside (Contact FMU) in JONSWAP Hs 1.5 m, Tp 8 s; "
                       "the winch pays out about 2.5 m of slack after touchdown. Run: marine-cosim demo "
                       "deck_landing.",
        "end": e["end"],
        "events": [
            {"time": 0.0, "model": "winch", "variable": "hardpoint.velocity_down", "action": "override", "value": 0.0},
            {"time": e["lower"][0], "model": "winch", "variable": "speed_setpoint", "action": "override",
             "value": e["lower"][1]},
            {"time": e["stop"], "model": "winch", "variable": "speed_setpoint", "action": "override", "value": 0.0},
        ]}
