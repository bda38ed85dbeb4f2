"""Rigid bodies hung on, and wrapped by, massless wire ropes: the rope contact of
components/rope_contact.py stepped together with components/rigid_body.py bodies.

The ropes are massless, so they have no state of their own but the contact nodes; the bodies carry
all inertia.  A step of length h: (1) give the body poses to the rope contact, which inserts,
slides and removes nodes and returns the rope wrench on each body ([Lee20] eq. 64, moments about
the body origin); (2) hold that wrench over h (zero-order hold) and advance each body with its RK4
(components/rigid_body.py).  ``coupling_step`` sets how often (1) is done: equal to ``substep``
it is the shared (one FMU) coupling; larger, it is exactly what FMU port coupling does when the
body and the rope are separate FMUs exchanging pose and wrench every communication step (Jacobi,
zero-order hold), which is how docs/rope_contact.md measures the coupling decision.

[Lee20] H.-W. Lee, PhD thesis, Seoul National University, 2020, sections 2.3 and 3.1.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from components.contact import rotate_small
from components.rigid_body import RigidBody
from components.rotations import cross
from components.rope_contact import ContactNode, EdgeMesh, Rope, RopeContact, RopeContactResult

__all__ = ["Body", "EndContact", "RopeBodies"]


@dataclass
class Body:
    """A contact body: a RigidBody, or a fixed pose (``rigid`` None), with an optional EdgeMesh
    (ropes only attach to bodies without one)."""
    mesh: Optional[EdgeMesh]
    rigid: Optional[RigidBody] = None
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))   # fixed pose (rigid None)
    rotation: np.ndarray = field(default_factory=lambda: np.eye(3))

    def pose(self) -> tuple[np.ndarray, np.ndarray]:
        if self.rigid is None:
            return np.asarray(self.position, dtype=float), np.asarray(self.rotation, dtype=float)
        return self.rigid.position, self.rigid.rotation_matrix


@dataclass
class EndContact:
    """The hook block at a world-point rope end, a sphere of ``radius`` [m] about the end that the
    bodies push off with a linear spring-damper (penalty contact; stiffness [N/m], damping [N s/m]):

        delta = radius - max_f (n_f . x_b + d_f),    F_end = max(0, k delta + c delta') n

    with x_b the end in the body frame, (n_f, d_f) the body's face planes and n the normal of the
    nearest one, delta' = -n . (v_end - v_body(point)).  The largest face distance is the distance
    to the body inside it and over a face; off an edge or a corner it is less, so the hook meets an
    edge a little early (the body grown by the radius with sharp corners, not rounded ones).  The
    body takes -F_end at the foot of the end on that face.  A crane hook swung against the block it
    lifts (Lee 2020 sec. 4.1's turnover in waves) is pushed off instead of ending the run; an end
    that still reaches inside a body is refused (RopeEndInsideBody), since its ropes have no path.
    """
    rope: int
    end: int
    radius: float
    stiffness: float
    damping: float

    def load(self, x: np.ndarray, u: np.ndarray, pose: tuple[np.ndarray, np.ndarray],
             velocity: tuple[np.ndarray, np.ndarray], halfspaces: np.ndarray
             ) -> Optional[tuple[np.ndarray, np.ndarray]]:
        """(force on the end, NED [N]; contact point, NED [m]) against one body, or None."""
        p, R = pose
        xb = (np.asarray(x, dtype=float) - p) @ R
        dist = halfspaces[:, :3] @ xb + halfspaces[:, 3]
        f = int(np.argmax(dist))
        delta = self.radius - float(dist[f])
        if delta <= 0.0:
            return None
        n = R @ halfspaces[f, :3]
        point = p + R @ (xb - dist[f] * halfspaces[f, :3])
        v_body = velocity[0] + cross(velocity[1], point - p)
        rate = -float(n @ (np.asarray(u, dtype=float) - v_body))
        magnitude = max(0.0, self.stiffness * delta + self.damping * rate)
        return magnitude * n, point


class _NoEdges:
    """Stand-in mesh of a body the ropes cannot touch (no edges, no faces)."""
    edges: list = []
    halfspaces = np.zeros((0, 4))
    size = 1.0

    def incident(self, p):
        return []


class RopeBodies:
    """Bodies + ropes advanced together (module docstring).

    substep [s]: the body integration step; coupling_step [s] (>= substep, a multiple of it): how
    often the rope wrench is re-evaluated from fresh poses.  end_contacts: world-point ends whose
    hook block the bodies push (``EndContact``); their loads join the rope wrench.
    """

    def __init__(self, bodies: Sequence[Body], ropes: Sequence[Rope], substep: float = 1e-3,
                 coupling_step: Optional[float] = None, midpoint: bool = True,
                 end_contacts: Sequence[EndContact] = ()) -> None:
        self.bodies = list(bodies)
        self.end_contacts = list(end_contacts)
        #: force of each end contact on its end (the hook), NED [N], at the last evaluation
        self.end_contact_force = [np.zeros(3) for _ in self.end_contacts]
        for r in ropes:
            if r.bodies is None:
                r.bodies = [i for i, b in enumerate(self.bodies) if b.mesh is not None]
        self.contact = RopeContact([b.mesh if b.mesh is not None else _NoEdges() for b in self.bodies], ropes)
        self.substep = float(substep)
        self.coupling_step = float(coupling_step or substep)
        self.n_hold = max(1, round(self.coupling_step / self.substep))
        self._h = self.substep                   # the present step's sub-step (step())
        self.midpoint = midpoint
        self.time = 0.0
        self._k = 0
        self._fresh = True            # the rope wrench was evaluated at the current poses
        # world-point ends that move (crane hooks): rope index -> [(x, v) of end A or None, of B]
        self._moving_ends: dict[int, list] = {}
        self._end_stack: Optional[tuple] = None       # _ends' arrays of the driven ends
        self.result: RopeContactResult = self._evaluate()

    @property
    def ropes(self) -> list[Rope]:
        return self.contact.ropes

    def _poses(self, ahead: float, velocities: Optional[list] = None) -> list[tuple[np.ndarray, np.ndarray]]:
        """Body poses extrapolated ``ahead`` [s] with the current velocities (``_velocities()``,
        if already at hand)."""
        out = []
        for b, (v, w) in zip(self.bodies, self._velocities() if velocities is None else velocities):
            p, R = b.pose()
            if b.rigid is not None and ahead > 0.0:
                p = p + ahead * v
                if not math.isfinite(float(np.linalg.norm(ahead * w))):
                    raise ValueError(f"the angular velocity of body {len(out)} is {w.tolist()} rad/s: the motion "
                                     f"blew up under rope forces too large for the integration step")
                R = rotate_small(R, w, ahead)
            out.append((p, R))
        return out

    def set_end_motion(self, rope: int, end: int, position: np.ndarray, velocity: np.ndarray) -> None:
        """Drive world-point end ``end`` (0 = A, 1 = B) of rope ``rope``: at ``position`` now,
        moving on at ``velocity`` (NED) until set again (a crane hook between communication points).
        The wrench is evaluated afresh at the next step."""
        slot = self._moving_ends.setdefault(rope, [None, None])
        slot[end] = (np.asarray(position, dtype=float).copy(), np.asarray(velocity, dtype=float).copy(), self.time)
        self._end_stack = None
        self._fresh = False
        self._k -= self._k % self.n_hold          # a new hold interval starts here

    def _ends(self, ahead: float) -> Optional[list]:
        """The driven ends ``ahead`` [s] from now, x = x0 + (t - t0) v, per rope (A, B) (None: not
        driven); all ends in one array expression, the stack of (x0, v, t0) kept until an end is
        set again."""
        if not self._moving_ends:
            return None
        if self._end_stack is None:
            keys = [(r, k) for r in range(len(self.ropes))
                    for k, e in enumerate(self._moving_ends.get(r, (None, None))) if e is not None]
            slots = [self._moving_ends[r][k] for r, k in keys]
            self._end_stack = (keys, np.array([e[0] for e in slots]), np.array([e[1] for e in slots]),
                               np.array([e[2] for e in slots]))
        keys, x0, v, t0 = self._end_stack
        x = x0 + ((self.time + ahead) - t0)[:, None] * v
        out = [[None, None] for _ in self.ropes]
        for (r, k), xk in zip(keys, x):
            out[r][k] = xk
        return [tuple(o) for o in out]

    def _velocities(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(velocity of the body origin, angular velocity), NED, per body (zero for a fixed one)."""
        return [(np.zeros(3), np.zeros(3)) if b.rigid is None else (b.rigid.velocity, b.rigid.angular_velocity_ned)
                for b in self.bodies]

    def _end_velocities(self) -> Optional[list]:
        if not self._moving_ends:
            return None
        return [tuple(None if e is None else e[1] for e in self._moving_ends.get(r, [None, None]))
                for r in range(len(self.ropes))]

    def _check_motion(self) -> None:
        """Stop at the first sub-step whose body state is not finite (or whose attitude quaternion
        collapsed): rope forces far beyond what the sub-step can integrate (a hook thrown a
        kilometre away) blow the motion up, and nothing after that is meaningful."""
        for i, b in enumerate(self.bodies):
            rb = b.rigid
            if rb is None:
                continue
            q = rb.quaternion
            if not (np.all(np.isfinite(q)) and float(q @ q) > 0.5 and np.all(np.isfinite(rb.cg_position))
                    and np.all(np.isfinite(rb.angular_velocity_body)) and np.all(np.isfinite(rb.cg_velocity))):
                raise ValueError(f"the motion of body {i} is no longer finite at t = {self.time + self._h:.6g} s "
                                 f"(position {rb.cg_position.tolist()}): it blew up under rope forces too large "
                                 f"for the integration step")

    def evaluate_now(self) -> RopeContactResult:
        """The rope and end-contact loads at the current state (no prediction), e.g. for outputs."""
        # the bodies' velocities and the ends' once per evaluation (each is a few rotations)
        velocities, end_v = self._velocities(), self._end_velocities()
        poses, ends = self._poses(0.0, velocities), self._ends(0.0)
        res = self.contact.update(poses, ends=ends, velocities=velocities, end_velocities=end_v)
        return self._add_end_contacts(res, poses, ends, velocities, end_v)

    def accelerations(self, res: RopeContactResult) -> list[Optional[tuple[np.ndarray, np.ndarray]]]:
        """(CG acceleration, angular acceleration), NED, of each rigid body (None for a fixed one)
        under the rope loads ``res`` of the current state (``evaluate_now``) and gravity:
        Newton-Euler about the CG, m a = F + m g e_z and I w' = M - w x I w in body axes (the
        bodies carry no other load)."""
        out: list[Optional[tuple[np.ndarray, np.ndarray]]] = []
        for i, b in enumerate(self.bodies):
            rb = b.rigid
            if rb is None:
                out.append(None)
                continue
            R = rb.rotation_matrix
            f = res.body_force[i]
            m_cg = R.T @ (res.body_moment[i] - cross(R @ np.asarray(rb.params.cg, dtype=float), f))
            inertia = np.asarray(rb.params.inertia, dtype=float)
            w = rb.angular_velocity_body
            w_dot = np.linalg.solve(inertia, m_cg - cross(w, inertia @ w))
            a = f / rb.params.mass + np.array([0.0, 0.0, rb.params.gravity])
            out.append((a, R @ w_dot))
        return out

    def _add_end_contacts(self, res: RopeContactResult, poses: list, ends: Optional[list], velocities: list,
                          end_v: Optional[list]) -> RopeContactResult:
        """The rope loads ``res`` with the end contacts' loads added to the bodies' (the result's
        arrays are fresh from each update, so they are added in place); each contact's force on its
        end goes to ``end_contact_force``.  velocities, end_v: ``_velocities()``,
        ``_end_velocities()``."""
        if not self.end_contacts:
            return res
        for c, ec in enumerate(self.end_contacts):
            f_end = np.zeros(3)
            if ends is not None and ends[ec.rope][ec.end] is not None:
                x, u = ends[ec.rope][ec.end], end_v[ec.rope][ec.end]
                for i, b in enumerate(self.bodies):
                    if b.mesh is None or not len(b.mesh.halfspaces):
                        continue
                    hit = ec.load(x, u, poses[i], velocities[i], b.mesh.halfspaces)
                    if hit is None:
                        continue
                    force, point = hit
                    f_end += force
                    res.body_force[i] -= force
                    res.body_moment[i] -= cross(point - poses[i][0], force)
            self.end_contact_force[c] = f_end
        return res

    def _evaluate(self) -> RopeContactResult:
        # midpoint: the wrench held over the hold interval is evaluated at the poses predicted for
        # its middle, which makes the explicit coupling second order (energy error O(h^2) instead
        # of the O(h) drift of a wrench taken at the start of the interval)
        h = self._h                              # this step's sub-step (dt / n, at most substep)
        ahead = 0.5 * self.n_hold * h if self.midpoint else 0.0
        velocities, end_v = self._velocities(), self._end_velocities()
        poses, ends = self._poses(ahead, velocities), self._ends(ahead)
        res = self.contact.update(poses, ends=ends, velocities=velocities, end_velocities=end_v)
        res = self._add_end_contacts(res, poses, ends, velocities, end_v)
        for i, b in enumerate(self.bodies):
            if b.rigid is None:
                continue
            # moment about the CG = moment about the origin - (cg - origin) x F
            arm = poses[i][1] @ np.asarray(b.rigid.params.cg, dtype=float)
            m_cg = res.body_moment[i] - cross(arm, res.body_force[i])
            b.rigid.set_loads(None, cg_force=res.body_force[i], cg_moment=m_cg)
        return res

    def step(self, dt: float) -> None:
        """Advance by dt [s] in n = ceil(dt / substep) equal sub-steps of dt / n (a step shorter than
        substep is one sub-step of its own length: the bodies never run ahead of the caller's time)."""
        n = max(1, math.ceil(dt / self.substep - 1e-9))
        self._h = dt / n
        for _ in range(n):
            if self._k % self.n_hold == 0 and not self._fresh:
                self.result = self._evaluate()
            for b in self.bodies:
                if b.rigid is not None:
                    b.rigid.step(self._h, self._h)
            self._check_motion()
            self._fresh = False
            self._k += 1
            self.time += self._h

    def get_state(self) -> dict:
        """The complete state: bodies, contact nodes (plain numbers), time and the end motion."""
        return {"time": self.time, "k": self._k,
                "bodies": [None if b.rigid is None else b.rigid.get_state() for b in self.bodies],
                "nodes": [[[n.body, n.edge, n.s, n.sigma, int(n.stick_edge), int(n.stick_rope)] for n in r.nodes]
                          for r in self.ropes],
                "ends": {str(r): [None if e is None else [e[0].tolist(), e[1].tolist(), e[2]] for e in slot]
                         for r, slot in self._moving_ends.items()}}

    def set_state(self, state: dict) -> None:
        self.time, self._k = float(state["time"]), int(state["k"])
        for b, s in zip(self.bodies, state["bodies"]):
            if b.rigid is not None:
                b.rigid.set_state(s)
        for r, nodes in zip(self.ropes, state["nodes"]):
            r.nodes = [ContactNode(int(n[0]), int(n[1]), float(n[2]), float(n[3]), bool(n[4]), bool(n[5]))
                       for n in nodes]
        self._moving_ends = {int(r): [None if e is None else (np.array(e[0]), np.array(e[1]), float(e[2]))
                                      for e in slot] for r, slot in state["ends"].items()}
        self._end_stack = None
        self._fresh = False
        self._k -= self._k % self.n_hold

    def energy(self) -> float:
        """Kinetic + gravity potential (z down) + rope elastic energy [J]."""
        e = self.contact.elastic_energy([b.pose() for b in self.bodies])
        for b in self.bodies:
            rb = b.rigid
            if rb is None:
                continue
            v = rb.cg_velocity
            w = rb.angular_velocity_body
            e += 0.5 * rb.params.mass * float(v @ v) + 0.5 * float(w @ (np.asarray(rb.params.inertia) @ w))
            e -= rb.params.mass * rb.params.gravity * float(rb.cg_position[2])
        return e
