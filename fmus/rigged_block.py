"""RiggedBlock FMU: a box-shaped block and the slings that hold it, with the slings wrapping the
block's edges (components.rope_contact, components.rope_bodies, components.rigid_body).

The slings and the block they touch share this FMU because their coupling is too stiff for a
communication step (docs/rope_contact.md: pose-in / wrench-out ports gain 6 % energy in 10 s at a
1 ms step already).  The crane hooks are the ports: ``hook<k>.position`` and ``hook<k>.velocity``
come in (NED) and ``hook<k>.force``, the pull of the slings on the hook, goes out, the same instant
(direct feedthrough).  Between communication points a hook moves on at its velocity.
"""
from __future__ import annotations

import numpy as np

from components.convex import Box
from components.rigid_body import RigidBody, RigidBodyParameters
from components.rope_bodies import Body, EndContact, RopeBodies
from components.rope_contact import (MAX_STRAIN, PENETRATION_TOL, EdgeMesh, Rope, RopeEnd, RopeEndInsideBody,
                                     RopeOverstretched)
from components.rotations import quat_from_euler_zyx, quat_to_euler_zyx
from fmus._base import Fmi2Slave

N_HOOKS = 3
N_SLINGS = 10
# the contact work of one doStep: internal sub-steps times slings (one sling's contact update is
# ~0.1-0.5 ms of CPU, so this bounds a doStep to some seconds)
MAX_SLING_SUBSTEPS_PER_STEP = 20_000
HOOK_INPUTS = tuple(f"hook{k}.{w}" for k in range(1, N_HOOKS + 1) for w in ("position", "velocity"))
TENSOR_LABELS = ("0,0", "1,1", "2,2")


class RiggedBlock(Fmi2Slave):

    description = ("A box-shaped block on up to 10 slings from up to 3 crane hooks; the slings wrap the block's edges "
                   "and slide along them and along themselves with Coulomb friction")
    default_stop_time = 20.0
    default_step_size = 0.01
    # the search for sling points inside the block is a check for people and tests, about as
    # costly as the contact update itself: formed only when read, once per step and input change
    lazy_outputs = {"contact.penetration": "update_penetration"}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.model: RopeBodies | None = None
        P, I, O = "parameter", "input", "output"
        self.real("mass", P, 348000.0, "kg", "Mass of the block", minimum=0.0)
        self.real("inertia", P, [2.5e7, 2.1e7, 3.8e7], "kg.m2", "Principal moments of inertia about the CG",
                  frame="body", size=3, labels=TENSOR_LABELS, minimum=0.0)
        self.real("size", P, [27.0, 34.0, 9.0], "m", "Length, breadth and depth of the block (a box centred on the CG)",
                  frame="body", size=3, minimum=0.0)
        self.real("gravity", P, 9.81, "m/s2", "Acceleration of gravity (acts along +down in NED)", minimum=0.0)
        self.real("friction.edge", P, 0.0, "1", "Coulomb coefficient of a sling sliding along a block edge",
                  minimum=0.0, maximum=0.99)
        self.real("friction.rope", P, 0.0, "1", "Coulomb coefficient of a sling sliding along itself over an edge",
                  minimum=0.0, maximum=0.99)
        self.real("substep", P, 1e-3, "s", "Internal step of the block and slings", minimum=0.0)
        for j in range(1, N_SLINGS + 1):
            s = f"sling{j}"
            self.integer(f"{s}.hook", P, 0, "Hook the sling hangs from (1..3; 0: no sling)", minimum=0,
                         maximum=N_HOOKS)
            self.real(f"{s}.lug", P, [0.0, 0.0, 0.0], "m", "Lug of the sling relative to the CG", frame="body", size=3)
            self.real(f"{s}.length", P, 30.0, "m", "Unstretched length of the sling", minimum=0.0)
            self.real(f"{s}.ea", P, 1e9, "N", "Axial stiffness EA of the sling", minimum=0.0)
            self.real(f"{s}.damping", P, 0.0, "N.s", "Axial damping of the sling (per unit strain rate)", minimum=0.0)
        self.real("initial.position", P, [0.0, 0.0, 0.0], "m", "Initial position of the CG", frame="NED", size=3)
        self.real("initial.euler", P, [0.0, 0.0, 0.0], "rad",
                  "Initial attitude as zyx Euler angles (roll, pitch, yaw) of the body frame relative to NED", size=3)
        self.real("hook_contact.stiffness", P, 2e7, "N/m",
                  "Stiffness of a hook block pressed against the block (hook<k>.radius > 0)", minimum=0.0)
        self.real("hook_contact.damping", P, 5e5, "N.s/m",
                  "Damping of a hook block pressed against the block (hook<k>.radius > 0)", minimum=0.0)
        for k in range(1, N_HOOKS + 1):
            self.real(f"hook{k}.radius", P, 0.0, "m",
                      f"Radius of crane hook {k}'s block, which the block pushes off (0: a point the block refuses "
                      "to reach)", minimum=0.0)
            self.real(f"hook{k}.position", I, [0.0, 0.0, 0.0], "m", f"Position of crane hook {k}", frame="NED", size=3)
            self.real(f"hook{k}.velocity", I, [0.0, 0.0, 0.0], "m/s", f"Velocity of crane hook {k}", frame="NED",
                      size=3)
            self.real(f"hook{k}.force", O, None, "N",
                      f"Force of the slings and of the block's contact on crane hook {k}", frame="NED", size=3,
                      depends_on=HOOK_INPUTS)
        self.real("position", O, None, "m", "Position of the CG", frame="NED", size=3)
        self.real("velocity", O, None, "m/s", "Velocity of the CG", frame="NED", size=3)
        self.real("acceleration", O, None, "m/s2", "Acceleration of the CG", frame="NED", size=3,
                  depends_on=HOOK_INPUTS)
        self.real("quaternion", O, None, "1", "Attitude quaternion (w, x, y, z) rotating body vectors into NED", size=4)
        self.real("euler", O, None, "rad", "Attitude as zyx Euler angles (roll, pitch, yaw), for humans", size=3)
        self.real("angular_velocity", O, None, "rad/s", "Angular velocity", frame="NED", size=3)
        self.real("angular_acceleration", O, None, "rad/s2", "Angular acceleration", frame="NED", size=3,
                  depends_on=HOOK_INPUTS)
        for j in range(1, N_SLINGS + 1):
            self.real(f"sling{j}.tension", O, None, "N", f"Largest segment tension of sling {j}",
                      depends_on=HOOK_INPUTS)
            self.real(f"sling{j}.contact_nodes", O, None, "1", f"Edges of the block sling {j} bends over",
                      depends_on=HOOK_INPUTS)
        self.real("contact.force", O, None, "N", "Largest force of one sling contact node on the block",
                  depends_on=HOOK_INPUTS)
        self.real("contact.hook_force", O, None, "N", "Largest force of the block pressing on a crane hook",
                  depends_on=HOOK_INPUTS)
        self.real("contact.penetration", O, None, "m",
                  "Deepest point of any sling inside the block (<= 1e-6: no sling passes through)",
                  depends_on=HOOK_INPUTS)

    def _slings(self) -> list[int]:
        return [j for j in range(1, N_SLINGS + 1) if self.v[f"sling{j}.hook"] > 0]

    def check_parameters(self):
        v = self.v
        problems = []
        for name in ("mass", "substep"):
            if not v[name] > 0.0:
                problems.append((name, v[name], "must be positive"))
        for i in range(3):
            if not v["size"][i] > 0.0:
                problems.append((f"size[{i}]", v["size"][i], "must be positive"))
            if not v["inertia"][i] > 0.0:
                problems.append((f"inertia[{TENSOR_LABELS[i]}]", v["inertia"][i], "must be positive"))
        half = 0.5 * v["size"]
        for j in self._slings():
            for w in ("length", "ea"):
                if not v[f"sling{j}.{w}"] > 0.0:
                    problems.append((f"sling{j}.{w}", v[f"sling{j}.{w}"], "must be positive"))
            depth = float(np.min(half - np.abs(v[f"sling{j}.lug"])))
            if depth > PENETRATION_TOL:
                # the sling would leave the lug through the block: no rope path exists
                problems.append((f"sling{j}.lug", v[f"sling{j}.lug"].tolist(),
                                 f"is {depth:.4g} m inside the block; a lug is on the block's surface or outside it"))
        return problems

    def internal_substep(self) -> float | None:
        return self.v["substep"] if self.v["substep"] > 0.0 else None

    def initialize_model(self) -> None:
        v = self.v
        body = RigidBody(RigidBodyParameters(mass=v["mass"], inertia=np.diag(v["inertia"]), gravity=v["gravity"]),
                         position=v["initial.position"].copy(), quaternion=quat_from_euler_zyx(*v["initial.euler"]))
        mu_e, mu_r = float(v["friction.edge"]), float(v["friction.rope"])
        self._rope_hook = []
        ropes = []
        contacts: dict[int, EndContact] = {}        # one per hook, driven through its first sling
        for j in self._slings():
            k = int(v[f"sling{j}.hook"])
            if v[f"hook{k}.radius"] > 0.0 and k not in contacts:
                contacts[k] = EndContact(len(ropes), 0, float(v[f"hook{k}.radius"]),
                                         float(v["hook_contact.stiffness"]), float(v["hook_contact.damping"]))
            ropes.append(Rope(RopeEnd(v[f"hook{k}.position"].copy()), RopeEnd(v[f"sling{j}.lug"].copy(), 0),
                              v[f"sling{j}.length"], v[f"sling{j}.ea"], mu_edge=(mu_e, mu_e), mu_rope=(mu_r, mu_r),
                              damping=v[f"sling{j}.damping"]))
            self._rope_hook.append((j, k))
        # a cost-aware bound on one doStep's work (the base class refuses longer steps, saying so)
        self.max_substeps_per_step = max(1, MAX_SLING_SUBSTEPS_PER_STEP // max(1, len(ropes)))
        mesh = EdgeMesh.from_shape(Box(0.5 * v["size"]))
        self._contact_hook = list(contacts)
        self.model = self._guard(lambda: RopeBodies([Body(mesh, body)], ropes, substep=v["substep"],
                                                    end_contacts=list(contacts.values())))
        self.model.time = self.time
        self._drive_hooks()

    def _guard(self, call):
        """Run a model call; a hook inside the block is reported with the inputs that put it there."""
        try:
            return call()
        except RopeEndInsideBody as exc:
            j, k = self._rope_hook[exc.rope]
            p, u = self.v[f"hook{k}.position"].tolist(), self.v[f"hook{k}.velocity"].tolist()
            raise ValueError(f"crane hook {k} (hook{k}.position = {p} m, hook{k}.velocity = {u} m/s) is "
                             f"{exc.depth:.4g} m inside the block, which sling{j} cannot wrap; a hook stays "
                             f"outside the block it lifts") from None
        except RopeOverstretched as exc:
            j, k = self._rope_hook[exc.rope]
            p, u = self.v[f"hook{k}.position"].tolist(), self.v[f"hook{k}.velocity"].tolist()
            raise ValueError(f"sling{j} would be stretched {exc.distance / exc.length - 1.0:.4g} times its length "
                             f"{exc.length:g} m (more than {MAX_STRAIN:g}; a wire rope parts at a few percent) by "
                             f"crane hook {k} (hook{k}.position = {p} m, hook{k}.velocity = {u} m/s)") from None

    def _drive_hooks(self) -> None:
        for r, (_, k) in enumerate(self._rope_hook):
            self.model.set_end_motion(r, 0, self.v[f"hook{k}.position"], self.v[f"hook{k}.velocity"])

    def step_model(self, t: float, h: float) -> None:
        self._drive_hooks()
        self._guard(lambda: self.model.step(h))

    def update_outputs(self) -> None:
        v = self.v
        self._drive_hooks()
        res = self._guard(self.model.evaluate_now)
        rb = self.model.bodies[0].rigid
        v["position"][:] = rb.cg_position
        v["velocity"][:] = rb.cg_velocity
        v["quaternion"][:] = rb.quaternion
        v["euler"][:] = quat_to_euler_zyx(rb.quaternion)
        v["angular_velocity"][:] = rb.angular_velocity_ned
        # of the step's end like the pose: the rope loads at the present state and hook inputs
        v["acceleration"][:], v["angular_acceleration"][:] = self.model.accelerations(res)[0]
        for k in range(1, N_HOOKS + 1):
            v[f"hook{k}.force"][:] = 0.0
        for j in range(1, N_SLINGS + 1):
            v[f"sling{j}.tension"] = 0.0
            v[f"sling{j}.contact_nodes"] = 0.0
        fmax = 0.0
        for r, (j, k) in enumerate(self._rope_hook):
            v[f"hook{k}.force"] += res.end_force[r][0]
            v[f"sling{j}.tension"] = float(res.tension[r].max())
            v[f"sling{j}.contact_nodes"] = float(len(self.model.ropes[r].nodes))
            if len(res.contact_force[r]):
                fmax = max(fmax, float(np.linalg.norm(res.contact_force[r], axis=1).max()))
        v["contact.force"] = fmax
        v["contact.hook_force"] = 0.0
        for k, f in zip(self._contact_hook, self.model.end_contact_force):
            v[f"hook{k}.force"] += f
            v["contact.hook_force"] = max(v["contact.hook_force"], float(np.linalg.norm(f)))

    def update_penetration(self) -> None:
        """Deepest sling point inside the block at the present state and hook inputs."""
        if self._inputs_changed:
            # the slings' paths follow the hooks: bring them to the inputs first
            self._inputs_changed = False
            self.update_outputs()
        self.v["contact.penetration"] = max(0.0, self.model.contact.max_penetration())

    def get_model_state(self) -> dict:
        return {} if self.model is None else {"model": self.model.get_state()}

    def set_model_state(self, state: dict) -> None:
        if "model" in state:
            if self.model is None or not self.same_parameters:
                self.initialize_model()
            self.model.set_state(state["model"])
        else:
            self.model = None
