"""The compiled RK4 steps of a crane (crane.c) behind components.crane.Crane.step.

``CompiledCraneStep.step`` takes a Crane and the step's partition into sub-steps and returns the
new joint state and the base at the step's end, as the numpy reference in Crane.step computes them
(to rounding): the joint controllers, end stops and base extrapolation of every RK4 stage and the
articulated-body algorithm of the crane's compiled ArticulatedBody, in one call. ``evaluate`` is
Crane._evaluate at the step start (the outputs' evaluation) in one call too; ``step`` makes that
evaluation at the step's end in the call that takes the step (what a Crane evaluates next, for its
outputs).
"""
from __future__ import annotations

import numpy as np

import ctypes
from types import SimpleNamespace

from components import kernels
from components.kernels.aba import CompiledAbaResult, offsets

HEAD = 40            # MC_CRANE_HEAD
EVALUATE = 39        # 1: the step call evaluates at the step's end
JOINT = 14           # MC_CRANE_JOINT
SP = 12              # the setpoint's place in a joint's block
MODE_CODES = {"position": 1.0, "velocity": 2.0, "torque": 3.0}
POINT = 13           # MC_ABA_POINT: link, r (3), position (3), velocity (3), v_P (3)
MAX_POINTS = 8       # the points an evaluation forms the motion of (bind_points)

_POINTS_EXACT: dict = {}


def points_reproduce_numpy(lib) -> bool:
    """Whether aba.c's mc_aba_points gives the bits of CompiledAbaResult._point_motion (numpy's
    R.dot(x), a BLAS dgemv, which the kernel forms as OpenBLAS's Haswell-family kernels do; another
    BLAS may round otherwise, and then numpy forms the points' motion). Checked once per process
    and library on random frames, velocities and points, zeros and signed zeros among them."""
    key = id(lib)
    if key not in _POINTS_EXACT:
        lib.mc_aba_points.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
        lib.mc_aba_points.restype = None
        rng = np.random.default_rng(26)
        n = 3
        o = offsets(n)
        exact = True
        for k in range(24):
            work = rng.normal(size=o["size"]) * 10.0 ** rng.integers(-3, 4, o["size"])
            if k % 4 == 0:
                work[o["V"]:o["V"] + 6 * n] = -0.0 if k % 8 else 0.0      # links at rest
            points = np.zeros((n, POINT))
            points[:, 0] = np.arange(n)
            points[:, 1:4] = rng.normal(size=(n, 3)) * 10.0 ** rng.integers(-2, 2, (n, 3))
            if k % 3 == 0:
                points[0, 1:4] = 0.0                                         # a point at a joint
            lib.mc_aba_points(n, kernels.address(work), kernels.address(points), n)
            result = SimpleNamespace(_work=work, _o=o)
            for i in range(n):
                pos, vel, vP = CompiledAbaResult._point_motion(result, i, points[i, 1:4].copy())
                exact = exact and np.concatenate((pos, vel, vP)).tobytes() == points[i, 4:].tobytes()
        _POINTS_EXACT[key] = exact
    return _POINTS_EXACT[key]


class CompiledCraneStep:
    """The kernel bound to one Crane (whose ArticulatedBody runs the compiled ABA)."""

    def __init__(self, crane, lib) -> None:
        aba = crane.body._compiled
        if aba is None:
            raise ValueError("the compiled crane step needs the compiled articulated-body algorithm")
        n = self.n = crane.n
        self._aba = aba
        # + the sub-step with the end stops engaged, the number of points and the points
        self._cr = np.zeros(HEAD + JOINT * n + 8 * n + 2 + POINT * MAX_POINTS)
        self._joints = self._cr[HEAD:HEAD + JOINT * n].reshape(n, JOINT)
        self._setpoints = self._joints[:, SP]
        self._base = self._cr[7:26]
        self._y = self._cr[HEAD + JOINT * n:HEAD + JOINT * n + 3 * n]
        self._k1 = self._cr[HEAD + JOINT * n + 3 * n:HEAD + JOINT * n + 6 * n]
        self._act = self._cr[HEAD + JOINT * n + 6 * n:HEAD + JOINT * n + 7 * n]
        self._z_dot = self._cr[HEAD + JOINT * n + 7 * n:HEAD + JOINT * n + 8 * n]
        self._stops_at = HEAD + JOINT * n + 8 * n
        self._outputs = self._cr[HEAD + JOINT * n + 6 * n:HEAD + JOINT * n + 8 * n]      # act, z'
        self._points_at = self._stops_at + 1
        self._base_out = self._cr[26:39]
        self._fn, self._evaluate = lib.mc_crane_step, lib.mc_crane_evaluate
        self._lib = lib
        self._packed = None
        self._in = None
        self._outs = None            # the bound outputs' addresses (bind_outputs), kept with their arrays
        self._outs_address = 0

    def bind_points(self, points: list) -> bool:
        """Have every evaluation form the motion of these points, (link, r in J_link coordinates)
        each (AbaResult.point_motion), into its result's ``points``: per point 13 numbers, link
        and r, then the position, the velocity and v_P. Returns whether it does (not where the
        kernel would round otherwise than numpy, nor for more than MAX_POINTS points; then
        nothing is formed)."""
        cr, at, n = self._cr, self._points_at, self.n
        bound = 0 < len(points) <= MAX_POINTS and points_reproduce_numpy(self._lib)
        m = len(points) if bound else 0
        cr[at] = m
        for k, (link, r) in enumerate(points[:m]):
            cr[at + 1 + POINT * k] = link
            cr[at + 2 + POINT * k:at + 5 + POINT * k] = r
        # what an evaluation copies out: the actuator torques, z' and (from 2 n + 2 on) the points
        start = HEAD + JOINT * n + 6 * n
        self._outputs = cr[start:at + 1 + POINT * m] if m else cr[start:start + 2 * n]
        return bound

    def bind_outputs(self, arrays: list | None) -> bool:
        """Have every evaluation also write what an adapter shows of it into these float64 arrays
        (kept until others are bound; None unbinds): the base's articulated inertia blocks (6, 9
        and 6 numbers, fmus/crane.py's order), the bias force and moment (3 each), then the
        position and velocity (3 each) of each point bound (bind_points, which must come first).
        Its results then say ``outputs_written``. Returns whether the arrays are bound."""
        m = int(self._cr[self._points_at])
        sizes = (6, 9, 6, 3, 3) + (3, 3) * m
        if arrays is None or len(arrays) != len(sizes) or not all(
                type(a) is np.ndarray and a.dtype == np.float64 and a.ndim == 1 and a.size == size
                and a.flags.c_contiguous and a.flags.writeable for a, size in zip(arrays, sizes)):
            self._outs, self._outs_address = None, 0
        else:
            self._outs = (np.array([m, *(kernels.address(a) for a in arrays)], dtype=np.int64), list(arrays))
            self._outs_address = kernels.address(self._outs[0])
        if self._in is not None:
            self._ctx[5] = self._outs_address
        return self._outs is not None

    def _pack_controls(self, crane) -> None:
        """The joint controllers and end stops (Crane._control_arrays) into the kernel's array."""
        J = self._joints
        J[:, 0] = np.where(crane._pos, 1.0, np.where(crane._vel, 2.0, np.where(crane._torque, 3.0, 0.0)))
        J[:, 1], J[:, 2], J[:, 3] = crane._kp, crane._ki, crane._kd0
        J[:, 4], J[:, 5] = crane._tmax, crane._pmax
        J[:, 6], J[:, 7], J[:, 8], J[:, 9] = crane._lo, crane._hi, crane._Ks, crane._Ds
        J[:, 10], J[:, 11] = crane._lo0, crane._hi0
        J[:, 13] = crane._integrating
        self._packed = crane._kp

    def _inputs(self, crane) -> None:
        """The crane's controllers, setpoints, base, state and loads into the kernel's arrays."""
        cr, aba = self._cr, self._aba
        if crane._kp is not self._packed:            # Crane._control_arrays made new ones
            self._pack_controls(crane)
        cr[4:7] = crane.gravity
        self._setpoints[:] = crane.setpoint
        b = crane.base
        np.concatenate((b.position, b.quaternion, b.velocity, b.angular_velocity, b.acceleration,
                        b.angular_acceleration), out=self._base)
        np.concatenate((crane.q, crane.qd, crane.z), out=self._y)
        loads = crane.loads
        if aba._wrenches_of is not loads:
            # the evaluation right after a step finds the step's loads in the buffer (the same list:
            # Crane.set_inputs makes a new one, and every _set_wrenches forgets whose they are)
            aba._set_wrenches(loads)
        aba._wrenches_of = loads
        if aba._in is not self._in:                   # the ABA's input buffer was (re)allocated
            self._in = aba._in
            self._ctx = np.array([self.n, *aba._ctx[1:4], kernels.address(cr), self._outs_address], dtype=np.int64)
            self._ctx_address = kernels.address(self._ctx)

    def evaluate(self, crane) -> tuple:
        """(ABA result, actuator torques, z') at the crane's state and inputs (Crane._evaluate at
        the step start, the base as given)."""
        self._inputs(crane)
        self._aba._wrenches_of = None        # a step packs them afresh (only the evaluation after a step skips it)
        if self._evaluate(self._ctx_address):
            raise ValueError(f"the compiled crane evaluation refused {self.n} joints")
        b = crane.base
        return self._evaluation(crane.q, (b.position, b.velocity, b.angular_velocity, b.acceleration,
                                          b.angular_acceleration, crane.gravity))

    def _evaluation(self, q: np.ndarray, base: tuple) -> tuple:
        """The kernel's last evaluation (ABA result, actuator torques, z') from its buffers, at
        joint positions q and the base (p, v, w, a, alpha, gravity) it was made for."""
        aba = self._aba
        R = aba._in[2:11].reshape(3, 3).copy()         # the base's rotation, as the kernel formed it
        result = CompiledAbaResult(aba, q, aba._work.copy(), (R, *base), None, True)
        n = self.n
        out = self._outputs.copy()                    # [actuator torques, z', (points)] with one copy
        if out.size > 2 * n:
            result.points = out[2 * n + 2:]
        if self._outs is not None:
            result.outputs_written = True
        return result, out[:n], out[n:2 * n]

    def step(self, crane, dt: float, max_substep: float, stops_substep: float) -> tuple:
        """RK4 over dt, the inputs held (Crane.step), in sub-steps of at most max_substep, or of
        stops_substep where a joint is at an end stop or reaches one within dt (Crane._at_a_stop;
        the kernel makes that test and chooses the sub-steps as Crane.step does). Returns
        (q, qd, z, (quaternion, position, velocity, angular velocity) of the base at dt, evaluation):
        the evaluation is what ``evaluate`` gives at the step's end (the new state, the base a
        BaseMotion of these arrays and the held accelerations), made in the same call."""
        n, cr = self.n, self._cr
        self._inputs(crane)
        cr[0], cr[1], cr[3], cr[self._stops_at], cr[EVALUATE] = 0.0, max_substep, dt, stops_substep, 1.0
        reuse = crane._last if (crane._last is not None and not crane._stale) else None
        if reuse is not None:                         # first same as last: the outputs' evaluation
            result, _, z_dot = reuse
            np.concatenate((crane.qd, result.qdd, z_dot), out=self._k1)
            cr[2] = 1.0
        else:
            cr[2] = 0.0
        code = self._fn(self._ctx_address)
        if code == -2:
            raise ValueError(f"no number of sub-steps of at most {cr[1]!r} s makes a step of {dt!r} s")
        if code:
            raise ValueError(f"the compiled crane step refused {n} joints")
        y, b = self._y.copy(), self._base_out.copy()   # one copy each, handed on as views
        # the wrench buffer holds the step's loads, which the evaluation used; the next call packs
        # them afresh (as after evaluate)
        self._aba._wrenches_of = None
        q, p, v, w, held = y[:n], b[4:7], b[7:10], b[10:13], crane.base
        evaluation = self._evaluation(q, (p, v, w, held.acceleration, held.angular_acceleration, crane.gravity))
        return q, y[n:2 * n], y[2 * n:], (b[0:4], p, v, w), evaluation
