"""Deck landing: a 10 t box lowered onto a fixed deck through the Contact FMU -- the transient case of
the master-algorithm benchmark (issue 9, item 5c), with its monolithic reference.

The box (3 x 3 x 2 m, Payload FMU, dry) comes down at the lowering speed v0 = 1 m/s, its bottom
0.3 m above the deck top, and lands on rubber pads (E = 20 MPa, B = 0.2 MPa s on both bodies; the
Contact FMU's volumetric law, components/contact.py [SMS eqs. 90-93]: springs E_eff d and dashpots
B_eff d' bounded by the springs at each point of the footprint).  Flat on flat, so the interference
is the box's footprint A = 9 m2 times the penetration p, and the motion stays vertical (no moment,
no tangential slip):

    m z'' = m g - A (E_eff p + min(max(B_eff p', -E_eff p), E_eff p)),   p = z + 1 - z_top  (> 0 in contact)

E_eff = E_a E_b / (h_b E_a + h_a E_b) with the equivalent-sphere bed depths h (ContactPair):
contact stiffness k = E_eff A = 2.44 MN/m, 49 rad/s, damping ratio 0.25 where the dashpots are
within their bound (B_eff p' below E_eff p: at the 2.6 m/s touchdown the first 2.6 cm of the 4 cm
penetration meet the bound instead, the force rising from zero).  The reference integrates this ODE
with DOP853 (rtol 1e-12) piecewise between the kinks (touchdown, lift-off, the dashpots reaching
their bound from either side), located as events; ``check_force_law`` verifies it against
ContactPair itself.

The co-simulation: payload.position/velocity/angular_velocity/quaternion -> contact.body1.*, and
contact.body1.force/moment -> payload.cg.force/moment.  The force/velocity pairs form the power bond
``landing`` (ECCO); the positions are plain connections.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp

from orchestration.system.model import Component, System

G = 9.81


@dataclass(frozen=True)
class DeckLanding:
    mass: float = 1.0e4
    size: tuple[float, float, float] = (3.0, 3.0, 2.0)
    deck_size: tuple[float, float, float] = (20.0, 20.0, 2.0)
    deck_z: float = 5.0                   # deck centre (NED z): its top at deck_z - 1
    drop: float = 0.3                     # box bottom above the deck top at t = 0 [m]
    speed: float = 1.0                    # downward speed at t = 0 [m/s]
    E: float = 2.0e7
    B: float = 2.0e5

    @property
    def deck_top(self) -> float:
        return self.deck_z - 0.5 * self.deck_size[2]

    @property
    def z0(self) -> float:
        """Initial position of the box centre."""
        return self.deck_top - self.drop - 0.5 * self.size[2]

    @property
    def area(self) -> float:
        return self.size[0] * self.size[1]

    def bed_depths(self) -> tuple[float, float]:
        vol = lambda s: s[0] * s[1] * s[2]
        return tuple((3.0 * vol(s) / (4.0 * math.pi)) ** (1.0 / 3.0) for s in (self.size, self.deck_size))

    def effective(self) -> tuple[float, float]:
        """(E_eff, B_eff) as components.contact.ContactPair forms them."""
        ha, hb = self.bed_depths()
        return self.E * self.E / (hb * self.E + ha * self.E), self.B * self.B / (hb * self.B + ha * self.B)

    def normal_force(self, z: float, v: float) -> float:
        p, dp = z + 0.5 * self.size[2] - self.deck_top, v
        if p <= 0.0:
            return 0.0
        E, B = self.effective()
        return self.area * (E * p + min(max(B * dp, -E * p), E * p))

    def payload_parameters(self) -> dict[str, float]:
        a, b, c = self.size
        m = self.mass
        return {"mass": m, "inertia[0,0]": m * (b * b + c * c) / 12, "inertia[1,1]": m * (a * a + c * c) / 12,
                "inertia[2,2]": m * (a * a + b * b) / 12, "gravity": G, "hydro.volume": 0.0,
                "initial.position[2]": self.z0, "initial.velocity[2]": self.speed, "max_substep": 1e-3}

    def contact_parameters(self) -> dict[str, float]:
        p = {"friction.static": 0.0, "friction.dynamic": 0.0, "body2.position[2]": self.deck_z}
        for k in range(3):
            p[f"body1.size[{k}]"] = self.size[k]
            p[f"body2.size[{k}]"] = self.deck_size[k]
        for body in ("body1", "body2"):
            p[f"{body}.E"], p[f"{body}.B"] = self.E, self.B
        return p


def deck_landing_system(fmu_dir: Path, case: DeckLanding = DeckLanding()) -> System:
    """Payload + Contact FMUs (from build_fmus.build_all) joined as the module docstring says."""
    s = System("deck_landing")
    s.add_component(Component("payload", Path(fmu_dir) / "Payload.fmu", case.payload_parameters()))
    s.add_component(Component("contact", Path(fmu_dir) / "Contact.fmu", case.contact_parameters()))
    for i in range(3):
        s.connect(f"payload.position[{i}]", f"contact.body1.position[{i}]")
        s.connect(f"payload.velocity[{i}]", f"contact.body1.velocity[{i}]", power_bond="landing")
        s.connect(f"payload.angular_velocity[{i}]", f"contact.body1.angular_velocity[{i}]", power_bond="landing")
        s.connect(f"contact.body1.force[{i}]", f"payload.cg.force[{i}]", power_bond="landing")
        s.connect(f"contact.body1.moment[{i}]", f"payload.cg.moment[{i}]", power_bond="landing")
    for i in range(4):
        s.connect(f"payload.quaternion[{i}]", f"contact.body1.quaternion[{i}]")
    return s


class Reference:
    """The monolithic solution z(t), v(t) (module docstring): DOP853 between the kinks."""

    def __init__(self, case: DeckLanding = DeckLanding(), stop: float = 2.0) -> None:
        self.case = case
        E, B = case.effective()
        m = case.mass
        bottom = lambda z: z + 0.5 * case.size[2] - case.deck_top

        def rhs(t, y):
            return [y[1], G - case.normal_force(y[0], y[1]) / m]

        # the kinks: touchdown / lift-off (p = 0) and the dashpots reaching their bound (B p' = -+E p
        # while p > 0)
        touch = lambda t, y: bottom(y[0])
        pulls = lambda t, y: E * bottom(y[0]) + B * y[1] if bottom(y[0]) > 0 else 1.0
        pushes = lambda t, y: E * bottom(y[0]) - B * y[1] if bottom(y[0]) > 0 else 1.0
        for ev in (touch, pulls, pushes):
            ev.terminal = True
        self.pieces: list = []
        t, y = 0.0, np.array([case.z0, case.speed])
        while t < stop:
            sol = solve_ivp(rhs, (t, stop), y, method="DOP853", rtol=1e-12, atol=1e-14, dense_output=True,
                            events=(touch, pulls, pushes))
            self.pieces.append((t, sol.t[-1], sol.sol))
            if sol.status != 1:
                break
            # step just past the event so it does not fire again at once
            t = sol.t[-1]
            y = sol.y[:, -1]
            t_next = t + 1e-9
            y = y + 1e-9 * np.array(rhs(t, y))
            t = t_next
        self.stop = stop
        grid = np.linspace(0.0, stop, 20001)
        z, v = self(grid)
        self.peak_penetration = float(np.max(bottom(z)))
        self.impact_speed = math.sqrt(case.speed ** 2 + 2 * G * case.drop)
        self.touchdown = next(p[1] for p in self.pieces)

    def __call__(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        t = np.atleast_1d(np.asarray(t, dtype=float))
        z, v = np.empty_like(t), np.empty_like(t)
        for k, tk in enumerate(t):
            for a, b, sol in self.pieces:
                if tk <= b + 1e-12 or (a, b, sol) == self.pieces[-1]:
                    z[k], v[k] = sol(min(max(tk, a), b))
                    break
        return z, v

    def errors(self, t: np.ndarray, z: np.ndarray, v: np.ndarray) -> tuple[float, float]:
        """Largest |z - z_ref| over the peak penetration, largest |v - v_ref| over the impact speed."""
        zr, vr = self(t)
        return (float(np.max(np.abs(z - zr))) / self.peak_penetration,
                float(np.max(np.abs(v - vr))) / self.impact_speed)


def check_force_law(case: DeckLanding = DeckLanding()) -> float:
    """Largest relative difference between ``DeckLanding.normal_force`` and ContactPair.evaluate over
    a few penetrations and speeds (the reference must use the Contact FMU's own law)."""
    from components.contact import ContactMaterial, ContactPair, ContactParams
    from components.convex import Box

    pair = ContactPair(Box(0.5 * np.array(case.size)), Box(0.5 * np.array(case.deck_size)),
                       ContactMaterial(case.E, case.B),
                       ContactMaterial(case.E, case.B), ContactParams(mu_static=0.0, mu_dynamic=0.0))
    worst = 0.0
    for p in (1e-3, 5e-3, 2e-2):
        for v in (-0.5, 0.0, 0.3, 1.2):
            z = case.deck_top - 0.5 * case.size[2] + p
            res = pair.evaluate(np.array([0.0, 0.0, z]), np.eye(3), np.array([0.0, 0.0, v]), np.zeros(3),
                                np.array([0.0, 0.0, case.deck_z]), np.eye(3), np.zeros(3), np.zeros(3))
            ours = case.normal_force(z, v)
            fz = -float(res.force_a[2])
            worst = max(worst, abs(fz - ours) / max(abs(ours), 1.0))
    return worst
