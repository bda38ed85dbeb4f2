"""Sea-state parameters shared by every FMU that sees the waves (Ship, Cable).

The same parameter names and the same ``make_sea`` call give the same seeded realisation in
each FMU, so a system file that sets the sea identically on the ship and on the cable puts
them in one sea (no wave variables need to be exchanged).
"""
from __future__ import annotations

from components.waves import Sea, make_sea

SPECTRA = {0: "none", 1: "jonswap", 2: "pm", 3: "regular"}


def declare_sea(slave, default_spectrum: int = 1) -> None:
    """Declare the ``sea.*`` parameters on an fmus._base.Fmi2Slave."""
    P = "parameter"
    slave.integer("sea.spectrum", P, default_spectrum, "Sea: 0 calm, 1 JONSWAP (period = Tp), 2 Pierson-Moskowitz/"
                                                       "ITTC (period = T1), 3 regular wave (period, amplitude)",
                  minimum=0, maximum=3)
    slave.real("sea.hs", P, 2.5, "m", "Significant wave height", minimum=0.0)
    slave.real("sea.period", P, 8.0, "s", "Peak period Tp (JONSWAP), mean period T1 (PM) or wave period "
                                          "(regular)", minimum=0.0)
    slave.real("sea.gamma", P, 3.3, "1", "JONSWAP peak enhancement factor", minimum=1.0)
    slave.real("sea.amplitude", P, 1.0, "m", "Amplitude of the regular wave", minimum=0.0)
    slave.real("sea.direction", P, 0.0, "rad", "Mean direction the waves travel towards, from north towards east")
    slave.real("sea.spreading", P, 0.0, "1", "Directional spreading exponent s of cos-2s (0: long-crested)",
               minimum=0.0)
    slave.integer("sea.n_frequencies", P, 60, "Number of wave frequencies", minimum=2, maximum=2000)
    slave.integer("sea.n_directions", P, 1, "Number of wave directions (short-crested seas)", minimum=1,
                  maximum=181)
    slave.integer("sea.seed", P, 1, "Seed of the random phases (same seed, same sea)", minimum=0,
                  maximum=2**31 - 1)
    slave.boolean("sea.random_frequencies", P, True, "Draw each frequency at random inside its bin (no repeat "
                                                     "period)")


def check_sea(v: dict) -> list[tuple[str, object, str]]:
    """Problems with the sea parameters, as (name, value, reason)."""
    problems = []
    spectrum = v["sea.spectrum"]
    if spectrum in (1, 2) and v["sea.hs"] > 0.0 and not v["sea.period"] > 0.0:
        problems.append(("sea.period", v["sea.period"], "must be positive for a wave spectrum"))
    if spectrum == 3 and not v["sea.period"] > 0.0:
        problems.append(("sea.period", v["sea.period"], "must be positive for a regular wave"))
    if spectrum in (1, 2) and v["sea.spreading"] > 0.0 and int(v["sea.n_directions"]) < 2:
        problems.append(("sea.spreading", v["sea.spreading"], "needs sea.n_directions >= 2 (one direction is a "
                                                              "long-crested sea)"))
    return problems


def build_sea(v: dict) -> Sea | None:
    """The seeded sea realisation the ``sea.*`` parameters describe (None when calm)."""
    spectrum = SPECTRA[int(v["sea.spectrum"])]
    if spectrum == "none" or (spectrum in ("jonswap", "pm") and not v["sea.hs"] > 0.0) or (
            spectrum == "regular" and not v["sea.amplitude"] > 0.0):
        return None                                   # calm
    return make_sea(spectrum, hs=v["sea.hs"], period=v["sea.period"], gamma=v["sea.gamma"],
                    mean_direction=v["sea.direction"], spreading_s=v["sea.spreading"],
                    n_frequencies=int(v["sea.n_frequencies"]), n_directions=int(v["sea.n_directions"]),
                    seed=int(v["sea.seed"]), random_frequencies=bool(v["sea.random_frequencies"]),
                    regular_amplitude=v["sea.amplitude"])
