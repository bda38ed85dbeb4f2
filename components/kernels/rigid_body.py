"""The compiled rigid-body derivative and RK4 steps (rigid_body.c) behind components.rigid_body.RigidBody.

The body's constants and held loads are packed into two float64 arrays in the layouts rigid_body.c
documents; ``derivative`` and ``step`` then reproduce RigidBody._derivative and the RK4 loop of
RigidBody.step to rounding.
"""
from __future__ import annotations

import numpy as np

from components import kernels

N_PARAMS = 53
N_LOADS = 19
N_STATE = 13


class CompiledRigidBody:
    """The kernel bound to one RigidBody (one per thread, like the body)."""

    def __init__(self, lib) -> None:
        self._P = np.zeros(N_PARAMS)
        self._L = np.zeros(N_LOADS)
        self._y = np.zeros(N_STATE)
        self._k1 = np.zeros(N_STATE)
        self._dy = np.zeros(N_STATE)
        P, L, y, k1, dy = (kernels.address(a) for a in (self._P, self._L, self._y, self._k1, self._dy))
        f, g = lib.mc_rigid_body_derivative, lib.mc_rigid_body_step
        self._derivative = lambda: f(P, L, y, dy)
        self._step = lambda n, h, first: g(P, L, y, n, h, k1 if first else None)

    def set_constants(self, body) -> None:
        """RigidBody._setup_constants's values, in rigid_body.c's order."""
        self._P[:] = (body._mass, body._mg, *body._I, *body._Iinv_dry, *body._Iinv_wet,
                      1.0 if body._has_hydro else 0.0, body._buoyancy_full, *body._arm_cb, *body._added,
                      *body._d_lin, *body._d_quad, body._splash)

    def set_loads(self, body) -> None:
        """RigidBody.set_loads's held values, in rigid_body.c's order."""
        self._L[:] = (*body._f_ned, *body._m_ned, *body._c_att, *body._v_water, body._water_elevation)

    def derivative(self, y: np.ndarray) -> np.ndarray:
        """dy/dt at y under the held loads (RigidBody._derivative)."""
        self._y[:] = y
        self._derivative()
        return self._dy.copy()

    def step(self, y: np.ndarray, n: int, h: float, k1: np.ndarray | None) -> np.ndarray:
        """n RK4 sub-steps of h from y (k1: the derivative at y, or None); the new state."""
        self._y[:] = y
        if k1 is not None:
            self._k1[:] = k1
        self._step(n, h, k1 is not None)
        return self._y.copy()
