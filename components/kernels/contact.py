"""The compiled volumetric contact of two boxes (contact.c) behind components.contact.ContactPair.

``normal_loads`` returns what ContactPair._normal_loads does (the signed distance, the
interference centroid, the normal, the normal force, the dashpots' share and moments, the
volume), or None where the numpy reference decides (near the zero-volume or zero-distance
tolerance).  Apart the distance is GJK's bit for bit; in contact the values agree with the
reference to rounding (contact.c says where the dashpots' quadrature differs).
"""
from __future__ import annotations

import numpy as np

from components import kernels

N_IN = 46
N_OUT = 18
APART, LOADS, NONE = 0, 1, 2


class CompiledContact:
    """The kernel bound to one pair of boxes and their materials."""

    def __init__(self, lib, half_a: np.ndarray, half_b: np.ndarray, E_eff: float, B_eff: float,
                 tolerance: float, min_radius: float) -> None:
        self._in = np.zeros(N_IN)
        self._out = np.zeros(N_OUT)
        self._in[0:3] = half_a
        self._in[15:18] = half_b
        self._in[42:46] = (E_eff, B_eff, tolerance, min_radius)
        f, i, o = lib.mc_contact_box_box, kernels.address(self._in), kernels.address(self._out)
        self._call = lambda: f(i, o)

    def normal_loads(self, pa, Ra, va, wa, pb, Rb, vb, wb) -> tuple | None:
        x = self._in
        try:
            # the method, not np.reshape (its dispatch costs more than the copy)
            x[3:6], x[6:15] = pa, np.asarray(Ra, dtype=float).reshape(9)
            x[18:21], x[21:30] = pb, np.asarray(Rb, dtype=float).reshape(9)
            x[30:33], x[33:36], x[36:39], x[39:42] = va, wa, vb, wb
        except ValueError:             # a rotation given otherwise (a quaternion): the reference
            return None
        state = self._call()
        out = self._out
        if state == APART or state == NONE:
            return float(out[0]), None, None, 0.0, 0.0, None, None, 0.0
        if state != LOADS:
            return None
        damping = out[17] != 0.0
        return (float(out[0]), out[2:5].copy(), out[5:8].copy(), float(out[8]), float(out[9]),
                out[10:13].copy() if damping else None, out[13:16].copy() if damping else None, float(out[16]))
