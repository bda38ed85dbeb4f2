"""The compiled rigid body (rigid_body.c) behind components.rigid_body.RigidBody: the derivative
and RK4 steps, the held loads from set_loads' inputs and the motion and acceleration outputs.

The body's constants and held loads are packed into two float64 arrays in the layouts rigid_body.c
documents; ``derivative`` and ``step`` then reproduce RigidBody._derivative and the RK4 loop of
RigidBody.step to rounding; ``loads``, ``motion`` and ``accelerations`` RigidBody.set_loads' held
values, RigidBody.motion_outputs and RigidBody.acceleration_outputs (the same bits where the
RigidBody's check at first use finds them so).
"""
from __future__ import annotations

import numpy as np

from components import kernels

N_PARAMS = 53
N_LOADS = 19
N_STATE = 13
N_MOTION = 25   # doubles of the motion outputs before the attachment points' (6 a point)
N_ACCELERATION = 7   # doubles of the acceleration outputs before the attachment points' (3 a point)


class CompiledRigidBody:
    """The kernel bound to one RigidBody (one per thread, like the body)."""

    def __init__(self, lib) -> None:
        self.lib = lib
        self._P = np.zeros(N_PARAMS)
        self._L = np.zeros(N_LOADS)
        self._y = np.zeros(N_STATE)
        self._k1 = np.zeros(N_STATE)
        self._dy = np.zeros(N_STATE)
        self._rates = np.zeros(N_STATE)     # the accelerations' input
        P, L, y, k1, dy = (kernels.address(a) for a in (self._P, self._L, self._y, self._k1, self._dy))
        f, g = lib.mc_rigid_body_derivative, lib.mc_rigid_body_step
        self._derivative = lambda: f(P, L, y, dy)
        self._step = lambda n, h, first: g(P, L, y, n, h, k1 if first else None)

    def set_constants(self, body) -> None:
        """RigidBody._setup_constants's values, in rigid_body.c's order; the arrays of the loads'
        inputs (``forces``, ``cg_force``, ``cg_moment``, ``water_velocity``: views of one array
        the kernel reads) and of the motion and acceleration outputs (``body._motion`` and
        ``body._accelerations``, which the kernel writes)."""
        self._P[:] = (body._mass, body._mg, *body._I, *body._Iinv_dry, *body._Iinv_wet,
                      1.0 if body._has_hydro else 0.0, body._buoyancy_full, *body._arm_cb, *body._added,
                      *body._d_lin, *body._d_quad, body._splash)
        n = body.n_attachments
        self._arms = np.ascontiguousarray(body._arms, dtype=float).copy()
        self._cg = np.array(body._cg, dtype=float)
        self._in = np.zeros(3 * n + 10)
        self.forces = self._in[:3 * n].reshape(n, 3)
        self.cg_force, self.cg_moment, self.water_velocity = (self._in[3 * n + 3 * k:3 * n + 3 * k + 3]
                                                              for k in range(3))
        motion, accelerations = body._motion, body._accelerations
        for a, size in ((motion, N_MOTION + 6 * n), (accelerations, N_ACCELERATION + 3 * n)):
            if not (a.shape == (size,) and a.flags.c_contiguous and a.dtype == np.float64):
                raise ValueError(f"an outputs' array must be C-contiguous float64 of {size}")
        # the body's arrays (motion_array's, acceleration_array's) and scratch ones for the fresh
        # arrays of motion_outputs and acceleration_outputs, which leave the body's alone
        self._outputs = {True: (motion, accelerations), False: (np.empty_like(motion), np.empty_like(accelerations))}
        A, cg, inputs, P, L, y, d = (kernels.address(a) for a in (
            self._arms, self._cg, self._in, self._P, self._L, self._y, self._rates))
        lib = self.lib
        loads, move, accelerate = lib.mc_rigid_body_loads, lib.mc_rigid_body_motion, lib.mc_rigid_body_accelerations
        self._loads = lambda: loads(A, n, inputs, L)
        self._motion, self._accelerations = {}, {}
        for own, (out, acc) in self._outputs.items():
            out, acc = kernels.address(out), kernels.address(acc)
            self._motion[own] = lambda out=out: move(cg, A, n, y, out)
            self._accelerations[own] = lambda acc=acc: accelerate(P, L, A, n, y, d, acc)

    def set_loads(self, body) -> None:
        """RigidBody.set_loads's held values, in rigid_body.c's order (the loads formed in Python)."""
        self._L[:] = (*body._f_ned, *body._m_ned, *body._c_att, *body._v_water, body._water_elevation)

    def loads(self, forces, cg_force, cg_moment, water_velocity, water_elevation: float) -> None:
        """The held loads formed here from set_loads' (checked) inputs, which are copied into
        ``forces``, ``cg_force``, ``cg_moment`` and ``water_velocity``."""
        self.forces[...] = forces
        self.cg_force[...] = cg_force
        self.cg_moment[...] = cg_moment
        self.water_velocity[...] = water_velocity
        self._in[-1] = water_elevation
        self._loads()

    def held_loads(self) -> tuple[float, ...]:
        """The 19 held values (rigid_body.c's loads layout)."""
        return tuple(self._L.tolist())

    def motion(self, y: np.ndarray, own: bool = True) -> np.ndarray:
        """The motion outputs at state y (rigid_body.c's layout) in the body's array ``_motion``
        (own) or a scratch array (not own), overwritten by the next such call."""
        self._y[:] = y
        self._motion[own]()
        return self._outputs[own][0]

    def accelerations(self, y: np.ndarray, rates: np.ndarray, own: bool = True) -> np.ndarray:
        """The acceleration outputs at state y with its derivative ``rates`` (rigid_body.c's layout)
        in the body's array ``_accelerations`` (own) or a scratch array (not own), overwritten by
        the next such call."""
        self._y[:] = y
        self._rates[:] = rates
        self._accelerations[own]()
        return self._outputs[own][1]

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


def loads_of(lib, arms: np.ndarray, inputs: np.ndarray) -> np.ndarray:
    """mc_rigid_body_loads on given arrays (arms (n, 3); inputs (3 n + 10)): the 19 held values.
    For the checks and tests (the addresses are taken at each call)."""
    arms = np.ascontiguousarray(arms, dtype=float).reshape(-1, 3)
    inputs = np.ascontiguousarray(inputs, dtype=float)
    if inputs.shape != (3 * len(arms) + 10,):
        raise ValueError(f"inputs must have {3 * len(arms) + 10} values, got {inputs.shape}")
    out = np.zeros(N_LOADS)
    lib.mc_rigid_body_loads(kernels.address(arms), len(arms), kernels.address(inputs), kernels.address(out))
    return out


def motion_of(lib, cg: np.ndarray, arms: np.ndarray, y: np.ndarray) -> np.ndarray:
    """mc_rigid_body_motion on given arrays: the motion outputs (N_MOTION + 6 n). For the checks
    and tests."""
    cg, y = (np.ascontiguousarray(a, dtype=float) for a in (cg, y))
    arms = np.ascontiguousarray(arms, dtype=float).reshape(-1, 3)
    if cg.shape != (3,) or y.shape != (N_STATE,):
        raise ValueError(f"cg must have 3 values and y {N_STATE}, got {cg.shape} and {y.shape}")
    out = np.zeros(N_MOTION + 6 * len(arms))
    lib.mc_rigid_body_motion(kernels.address(cg), kernels.address(arms), len(arms), kernels.address(y),
                             kernels.address(out))
    return out
