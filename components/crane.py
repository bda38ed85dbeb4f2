"""A serial crane on a moving base: articulated-body dynamics (components.articulated_body) with
joint actuation, penalty end stops and loads at attachment points.

Per joint (sms_api_digest §2.4, eqs. 67-72, errata applied):

* position control:  tau = kp (q_t - q) + ki z - kd qd,        z' = q_t - q
* velocity control:  tau = kp (qd_t - qd) + ki z,             z' = qd_t - qd
  (the report's D term on the joint acceleration is an algebraic loop; it is left out)
* passive:           tau = 0
* torque:            tau = setpoint (an external controller's command, e.g. the crane-tip compensation
  of components/tip_compensation.py), limited like the PID's output
* limits: |tau| <= torque_max always; tau qd <= power_max while the drive delivers power (motoring:
  tau and qd of one sign, |tau| <= P / |qd|).  Braking (tau qd < 0) and standstill are limited by
  torque_max alone: the power limit is the supply's (a hydraulic crane's pump, an electric drive's
  feed), and an overrunning load is held and braked without it -- by the counterbalance valves of a
  hydraulic boom (Bak & Hansen, "Analysis of offshore knuckle boom crane, part one", Modeling,
  Identification and Control 34(4), 2013, 157-174), by an electric drive braking in its second
  and fourth quadrants, where it absorbs power instead of drawing it (Mohan, Electric Drives: an
  Integrative Approach, 2003, four-quadrant operation).  The SMS report's limit |tau| <= P / |qd|
  (sms_api_digest §2.4) caps braking too: a load falling faster gets less holding torque and
  runs away (issue 24).  The two limits meet at qd = 0 (P / |qd| -> inf), so the torque is
  continuous across the motoring/braking switch and a rounding-level change of qd or of the
  controller's output moves it by rounding only.  The integrator stops while the actuator
  saturates (anti-windup); the integral is an ODE state, not a sum over accepted steps (robust
  under rollback)
* end stops (penalty): q < lower: tau += -K (q - lower) - D qd;  q > upper: tau += -K (q - upper) - D qd
  (the report prints the upper stop with the non-restoring sign, erratum 4)

The base moves as prescribed by the ship hardpoint: its pose, velocity and acceleration at the start
of a step, extrapolated with constant acceleration over the step (the acceleration is the input
held over the step, like every co-simulation input). State: q, qd, z; RK4 with sub-steps.

Stability of the sub-steps (``stability_limit``): linearised about a configuration, the joints obey

    H qdd = -(Kp_pos + Ks) q - (Kd_pos + Kp_vel + Ds) qd + Ki z,   z' = -q (position) or -qd (velocity)

(H the joint-space inertia, Kp_pos the position-controlled joints' P gains, Kp_vel the
velocity-controlled joints' (their P term acts on qd), Ks, Ds the end stops' penalty when
engaged); RK4 is stable while every eigenvalue of this system keeps |R(h lambda)| <= 1
(components/stability.py).  Torque and power limits only lower the effective gains.
``limit_substeps`` evaluates this at the present configuration, with the end stops free and with
them engaged; ``step`` then keeps its sub-steps within the first, and within the second in steps
where a joint is at a stop or reaches one at its present rate.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from components.articulated_body import ArticulatedBody
from components.mechanism import Mechanism
from components.rotations import quat_multiply, quat_normalize, quat_to_matrix
from components.stability import step_limit

MODES = ("passive", "position", "velocity", "torque")


@dataclass
class BaseMotion:
    """Base (ship hardpoint) kinematics in NED at the start of a step."""

    position: np.ndarray
    quaternion: np.ndarray          # base frame -> NED
    velocity: np.ndarray
    angular_velocity: np.ndarray
    acceleration: np.ndarray
    angular_acceleration: np.ndarray

    def at(self, s: float):
        """Pose, velocity and acceleration s seconds later, at constant acceleration.

        Written out in scalars (3-vectors: numpy's per-call overhead dominates); the operations
        and their order are those of the vector expressions in the comments, so the numbers are
        the same to the bit."""
        w0, al = self.angular_velocity.tolist(), self.angular_acceleration.tolist()
        w = [w0[0] + al[0] * s, w0[1] + al[1] * s, w0[2] + al[2] * s]         # w0 + alpha s
        hs = 0.5 * s
        rot = [hs * (w0[0] + w[0]), hs * (w0[1] + w[1]), hs * (w0[2] + w[2])]   # mean rotation vector, NED
        r = np.array(rot)
        angle = float(np.sqrt(r.dot(r)))                                      # np.linalg.norm(rot)
        if angle > 0.0:
            sh = math.sin(0.5 * angle)
            dq = [math.cos(0.5 * angle), sh * rot[0] / angle, sh * rot[1] / angle, sh * rot[2] / angle]
            q = quat_normalize(quat_multiply(dq, self.quaternion))    # NED-frame rotation applied on the left
        else:
            q = self.quaternion
        x0, v0, a = self.position.tolist(), self.velocity.tolist(), self.acceleration.tolist()
        # p = x0 + v0 s + 0.5 a s s,  v = v0 + a s
        p = [x0[k] + v0[k] * s + 0.5 * a[k] * s * s for k in range(3)]
        v = [v0[k] + a[k] * s for k in range(3)]
        return quat_to_matrix(q), np.array(p), np.array(v), np.array(w), self.acceleration, self.angular_acceleration


def still_base(position=(0.0, 0.0, 0.0)) -> BaseMotion:
    z = np.zeros(3)
    return BaseMotion(np.asarray(position, float), np.array([1.0, 0.0, 0.0, 0.0]), z, z.copy(), z.copy(), z.copy())


class Crane:
    """State x = [q (n), qd (n), z (n)] of a mechanism, with its setpoints and loads."""

    def __init__(self, mechanism: Mechanism, gravity: float = 9.81, compiled: bool | None = None):
        """compiled: None runs the compiled kernels (components/kernels) if they can be had, True
        requires them, False runs the numpy code, which is the reference."""
        self.mechanism = mechanism
        self.body = ArticulatedBody(mechanism, compiled)
        self.n = len(mechanism.links)
        self.gravity = np.array([0.0, 0.0, gravity])
        links = mechanism.links
        self.q = np.array([l.initial_position for l in links], float)
        self.qd = np.array([l.initial_rate for l in links], float)
        self.z = np.zeros(self.n)
        self.setpoint = self.q.copy()
        self.mode = [(l.control.mode if l.control else "passive") for l in links]
        for i, m in enumerate(self.mode):
            if m not in MODES:
                raise ValueError(f"joint {i + 1}: unknown control mode {m!r} (one of {MODES})")
            if m == "velocity":
                self.setpoint[i] = self.qd[i]
        self.base = still_base()
        self.loads: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []
        self.time = 0.0
        # (ABA result, actuator torques, z') at the current state and inputs, or None; _stale: the
        # base acceleration or the loads changed since (the rest of the inputs did not)
        self._last = None
        self._stale = False
        self._key = None          # the inputs in effect (set_inputs), None after a step moved the base
        self._substep_free = self._substep_stops = math.inf      # limit_substeps
        self._control_arrays()
        # step's RK4 in C (components/kernels/crane.c), with the compiled ABA, for these joint laws
        # (a subclass with its own, components/platform.py, keeps the Python RK4 around the ABA)
        self._compiled = None
        if self.body.compiled and all(getattr(type(self), law) is getattr(Crane, law)
                                      for law in ("actuator_torques", "end_stop_torques", "_evaluate")):
            from components import kernels
            from components.kernels.crane import CompiledCraneStep
            self._compiled = CompiledCraneStep(self, kernels.library())

    def _control_arrays(self) -> None:
        """The joint controllers and end stops as arrays (the torques of all joints at once)."""
        links = self.mechanism.links
        ctl = [l.control if (l.control is not None and m != "passive") else None for l, m in zip(links, self.mode)]
        self._pos = np.array([c is not None and m == "position" for c, m in zip(ctl, self.mode)])
        self._vel = np.array([c is not None and m == "velocity" for c, m in zip(ctl, self.mode)])
        self._torque = np.array([c is not None and m == "torque" for c, m in zip(ctl, self.mode)])
        self._any_torque = bool(self._torque.any())
        self._kp = np.array([c.kp if c is not None else 0.0 for c in ctl], float)
        self._ki = np.array([c.ki if c is not None else 0.0 for c in ctl], float)
        self._kd = np.array([c.kd if c is not None else 0.0 for c in ctl], float)
        self._kd0 = np.where(self._pos, self._kd, 0.0)          # the D term acts in position control only
        self._integrating = self._pos | self._vel
        self._no_torque = np.zeros(self.n)
        self._tmax = np.array([c.torque_max if c is not None and c.torque_max is not None and c.torque_max > 0
                               else math.inf for c in ctl], float)
        self._pmax = np.array([c.power_max if c is not None and c.power_max is not None and c.power_max > 0
                               else math.nan for c in ctl], float)
        lim = [l.limits for l in links]
        self._lo = np.array([x.lower if x else -math.inf for x in lim], float)
        self._hi = np.array([x.upper if x else math.inf for x in lim], float)
        self._Ks = np.array([x.stiffness if x else 0.0 for x in lim], float)
        self._Ds = np.array([x.damping if x else 0.0 for x in lim], float)
        self._lo0 = np.where(np.isfinite(self._lo), self._lo, 0.0)     # finite stand-ins for the arithmetic
        self._hi0 = np.where(np.isfinite(self._hi), self._hi, 0.0)

    # ------------------------------------------------------------------ stability
    def _linear_system(self, H: np.ndarray, joints=None) -> np.ndarray:
        """State matrix of the linearised joint dynamics (module docstring) for the joints listed
        (all by default), with inertia H of those joints."""
        idx = np.arange(self.n) if joints is None else np.asarray(joints)
        m = idx.size
        K = np.diag((np.where(self._pos, self._kp, 0.0) + self._Ks)[idx])
        C = np.diag((self._kd0 + np.where(self._vel, self._kp, 0.0) + self._Ds)[idx])
        Ki = np.diag(np.where(self._integrating, self._ki, 0.0)[idx])
        Hinv = np.linalg.inv(H)
        A = np.zeros((3 * m, 3 * m))
        A[0:m, m:2 * m] = np.eye(m)
        A[m:2 * m, 0:m] = -Hinv @ K
        A[m:2 * m, m:2 * m] = -Hinv @ C
        A[m:2 * m, 2 * m:] = Hinv @ Ki
        A[2 * m:, 0:m] = -np.diag(self._pos[idx].astype(float))
        A[2 * m:, m:2 * m] = -np.diag(self._vel[idx].astype(float))
        return A

    def stability_limit(self, stops: bool = True) -> tuple[float, int | None]:
        """(longest stable RK4 sub-step [s], the joint that sets it) at the present configuration
        (module docstring), with the end stops engaged or not.  The joint is the one whose own
        mode (the other joints held) is the fastest."""
        H = self.body.mass_matrix(self.q)
        kept = self._Ks, self._Ds
        if not stops:
            self._Ks, self._Ds = np.zeros(self.n), np.zeros(self.n)
        try:
            limit = step_limit(np.linalg.eigvals(self._linear_system(H)), "rk4")
            if not math.isfinite(limit):
                return limit, None
            own = [step_limit(np.linalg.eigvals(self._linear_system(H[i:i + 1, i:i + 1], [i])), "rk4")
                   for i in range(self.n)]
            return limit, int(np.argmin(own))
        finally:
            self._Ks, self._Ds = kept

    def limit_substeps(self, safety: float = 0.8) -> tuple[tuple[float, int | None], tuple[float, int | None]]:
        """Keep the sub-steps of ``step`` within ``safety`` times the stability limits at the present
        configuration (end stops free, and engaged for steps that reach a stop); returns both
        limits with the joints that set them (``stability_limit``)."""
        free, engaged = self.stability_limit(stops=False), self.stability_limit(stops=True)
        self._substep_free, self._substep_stops = safety * free[0], safety * engaged[0]
        return free, engaged

    def _at_a_stop(self, dt: float) -> bool:
        """A joint is beyond an end stop, or gets there within dt at its present rate:
        q + min(qd dt, 0) < lower or q + max(qd dt, 0) > upper for any joint (in floats, joint by
        joint: eight numpy calls on 7-vectors cost more than the loop; NaN compares false either way)."""
        for q, qd, lower, upper in zip(self.q.tolist(), self.qd.tolist(), self._lo.tolist(), self._hi.tolist()):
            x = qd * dt
            if q + min(x, 0.0) < lower or q + max(x, 0.0) > upper:
                return True
        return False

    def bind_points(self, points: list) -> bool:
        """Have evaluate() form the motion of these points, (link, r in J_link coordinates) each,
        with its evaluation: its results then carry ``points``, per point link and r, then
        AbaResult.point_motion's position, velocity and v_P (13 numbers). The compiled kernel does
        it, in the call that evaluates, where it gives numpy's bits; returns whether it does (the
        numpy reference does not: use point_motion)."""
        return self._compiled is not None and self._compiled.bind_points(points)

    def bind_outputs(self, arrays: list | None) -> bool:
        """Have the compiled evaluations also write an adapter's outputs into these arrays: the
        base's articulated inertia blocks and bias wrench and the bound points' position and
        velocity (CompiledCraneStep.bind_outputs; after bind_points). Their results then say
        ``outputs_written``; returns whether the arrays are bound (the numpy reference: never)."""
        return self._compiled is not None and self._compiled.bind_outputs(arrays)

    # ------------------------------------------------------------------ inputs

    def set_inputs(self, base: BaseMotion, setpoints: np.ndarray, loads) -> None:
        """Base motion at the step start, joint setpoints (position or rate by mode), and external
        loads: (link index, point in the link frame, force NED, moment NED).

        Inputs equal to the previous ones keep the last evaluation; a change of only the base
        acceleration and the loads (a master's feedthrough refresh) keeps its pass 1 (evaluate)."""
        setpoints = np.array(setpoints, float)
        loads = list(loads)
        # the values (not the arrays, which a caller may reuse and change in place), as lists:
        # comparing those is the test np.array_equal makes, far cheaper for 3- and 4-vectors
        key = ((base.position.tolist(), base.quaternion.tolist(), base.velocity.tolist(),
                base.angular_velocity.tolist(), setpoints.tolist()),
               (base.acceleration.tolist(), base.angular_acceleration.tolist(),
                [(int(i), _values(point), _values(force), _values(moment)) for i, point, force, moment in loads]))
        if self._last is not None:
            if self._key is None or key[0] != self._key[0]:     # None: evaluated for other inputs
                self._last = None
            elif key[1] != self._key[1]:
                self._stale = True
        self._key = key
        self.base = base
        self.setpoint = setpoints
        self.loads = loads

    # ------------------------------------------------------------------ actuation

    def actuator_torques(self, q: np.ndarray, qd: np.ndarray, z: np.ndarray):
        """(actuator torque, saturated flags) per joint, end stops not included."""
        # position control: kp (q_t - q) + ki z - kd qd; velocity control: kp (qd_t - qd) + ki z
        # (kd is 0 there); passive: all gains 0
        raw = self._kp * (self.setpoint - np.where(self._pos, q, qd)) + self._ki * z - self._kd0 * qd
        if self._any_torque:                 # torque control: the setpoint is the torque
            raw = np.where(self._torque, self.setpoint, raw)
        # motoring (raw qd > 0, so qd != 0): min(torque limit, power limit / |qd|), fmin skipping the
        # NaN of joints without a power limit; braking and standstill: the torque limit (module docstring)
        motoring = raw * qd > 0.0
        limit = np.where(motoring, np.fmin(self._tmax, self._pmax / np.where(motoring, np.abs(qd), 1.0)),
                         self._tmax)
        tau = np.maximum(-limit, np.minimum(limit, raw))
        return tau, tau != raw

    def end_stop_torques(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        lo, hi = q < self._lo, q > self._hi
        if not (lo.any() or hi.any()):
            return self._no_torque
        return np.where(lo, -self._Ks * (q - self._lo0) - self._Ds * qd,
                        np.where(hi, -self._Ks * (q - self._hi0) - self._Ds * qd, 0.0))

    # ------------------------------------------------------------------ dynamics

    def _evaluate(self, s: float, q: np.ndarray, qd: np.ndarray, z: np.ndarray, at=None):
        R, p, v, w, a, alpha = at if at is not None else self.base.at(s)
        act, saturated = self.actuator_torques(q, qd, z)
        stops = self.end_stop_torques(q, qd)
        tau = act if stops is self._no_torque else act + stops
        result = self.body.forward_dynamics(q, qd, tau, R, p, v, w, a, alpha, gravity=self.gravity,
                                            link_wrenches=self.loads)
        # z' = q_t - q (position) or qd_t - qd (velocity) while the actuator does not saturate
        z_dot = np.where(self._integrating & ~saturated, self.setpoint - np.where(self._pos, q, qd), 0.0)
        return result, act, z_dot

    def step(self, dt: float, max_substep: float) -> None:
        """RK4 on (q, qd, z) in ceil(dt / max_substep) sub-steps, inputs held over the step.

        The state is stacked as y = [q, qd, z] (elementwise the same arithmetic as three arrays).
        After ``limit_substeps`` the sub-steps also keep within the stability limits."""
        if max_substep > self._substep_free:
            max_substep = self._substep_free
        if self._compiled is not None:                 # the same steps in C (results equal to rounding)
            # the kernel chooses the sub-steps as below (the end-stop test in C costs nothing), and
            # makes evaluate()'s evaluation at the step's end in the same call (the outputs')
            self.q, self.qd, self.z, (quat, p, v, w), self._last = self._compiled.step(self, dt, max_substep,
                                                                                      self._substep_stops)
            self.base = BaseMotion(p, quat, v, w, self.base.acceleration, self.base.angular_acceleration)
            self.time += dt
            self._stale = False
            self._key = None
            return
        if max_substep > self._substep_stops and self._at_a_stop(dt):
            max_substep = self._substep_stops
        n = max(1, math.ceil(dt / max_substep - 1e-9))
        h = dt / n
        m = self.n
        y = np.concatenate((self.q, self.qd, self.z))
        s = 0.0
        base_at = {}                                   # the base at each stage time, formed once

        def at(t):
            b = base_at.get(t)
            if b is None:
                b = base_at[t] = self.base.at(t)
            return b

        def f(t, y, reuse=None):
            r, _, zd = reuse if reuse is not None else self._evaluate(t, y[:m], y[m:2 * m], y[2 * m:], at(t))
            return np.concatenate((y[m:2 * m], r.qdd, zd))     # (qd, qdd, z')

        for k in range(n):
            reuse = self._last if (k == 0 and self._last is not None and not self._stale) else None
            k1 = f(s, y, reuse)                        # reuse: the outputs' evaluation (first same as last)
            k2 = f(s + h / 2, y + h / 2 * k1)
            k3 = f(s + h / 2, y + h / 2 * k2)
            k4 = f(s + h, y + h * k3)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            s += h
        self.q, self.qd, self.z = y[:m].copy(), y[m:2 * m].copy(), y[2 * m:].copy()
        # the base moved over the step: the outputs refer to its end-of-step state
        R, p, v, w, a, alpha = at(dt)
        self.base = BaseMotion(p, _matrix_to_quat(R), v, w, a, alpha)
        self.time += dt
        self._last = None
        self._stale = False
        self._key = None

    def evaluate(self):
        """(ABA result, actuator torques) at the current state, base and loads (cached; after a
        change of only the base acceleration or the loads, passes 2 and 3 of the ABA are redone)."""
        if self._last is None:
            self._last = self._evaluate(0.0, self.q, self.qd, self.z) if self._compiled is None else \
                self._compiled.evaluate(self)
        elif self._stale:
            result, act, z_dot = self._last
            # base.at(0) returns the acceleration inputs themselves
            result = self.body.reevaluate(result, self.base.acceleration, self.base.angular_acceleration,
                                          link_wrenches=self.loads)
            self._last = (result, act, z_dot)
        self._stale = False
        return self._last[0], self._last[1]

    def get_state(self) -> dict:
        return {"q": self.q.copy(), "qd": self.qd.copy(), "z": self.z.copy(), "time": self.time,
                "setpoint": self.setpoint.copy(), "mode": list(self.mode),
                "base": [self.base.position.copy(), self.base.quaternion.copy(), self.base.velocity.copy(),
                         self.base.angular_velocity.copy(), self.base.acceleration.copy(),
                         self.base.angular_acceleration.copy()],
                "substeps": [self._substep_free, self._substep_stops]}

    def set_state(self, s: dict) -> None:
        self.q, self.qd, self.z = (np.array(s[k], float) for k in ("q", "qd", "z"))
        self.time = float(s["time"])
        self.setpoint = np.array(s["setpoint"], float)
        self.mode = list(s["mode"])
        self._control_arrays()
        self.base = BaseMotion(*(np.array(x, float) for x in s["base"]))
        if "substeps" in s:
            self._substep_free, self._substep_stops = (float(x) for x in s["substeps"])
        self._last = None
        self._stale = False
        self._key = None


def _values(x) -> list:
    """The values of a vector as a list (np.asarray(x, float).tolist(), without its call where x is
    an array already: an integer array's values compare equal to their floats)."""
    return x.tolist() if type(x) is np.ndarray else np.asarray(x, float).tolist()


def _matrix_to_quat(R: np.ndarray) -> np.ndarray:
    """Rotation matrix -> unit quaternion (w, x, y, z), Shepperd's method."""
    t = np.trace(R)
    if t > 0:
        s = math.sqrt(t + 1.0) * 2
        q = [0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s]
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = math.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2]) * 2
        q = [(R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s]
    elif R[1, 1] > R[2, 2]:
        s = math.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2]) * 2
        q = [(R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s]
    else:
        s = math.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1]) * 2
        q = [(R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s]
    return quat_normalize(np.array(q))
