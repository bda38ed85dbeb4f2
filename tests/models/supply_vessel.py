"""The bundled MSS supply vessel as the Ship FMU builds it: its instantaneous inertia about CO.

The master asks a ship FMU for its port mobility (orchestration.master.coupling_check); models that
need the number without an FMU (the B2 dummy mass scaled to a mass ratio, the third-party ship's
hull) compute it here from the same vessel data and radiation fit.
"""
from __future__ import annotations

import functools

import numpy as np


@functools.lru_cache(maxsize=4)
def vessel_inertia(max_order: int = 4) -> np.ndarray:
    """M_s = M_RB + A_inf (6x6 about CO, body axes) of the bundled supply vessel with its radiation
    fit of order ``max_order`` (the Ship FMU's default 4)."""
    from components.radiation import fit_radiation
    from components.vessel_data import default_vessel_path, load_vessel

    vessel = load_vessel(default_vessel_path())
    radiation = fit_radiation(vessel.omega, vessel.added_mass, vessel.damping, max_order=max_order)
    return np.asarray(vessel.MRB + radiation.A_inf, float)
