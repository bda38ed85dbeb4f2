"""Payload FMU: a 6-DOF rigid body (components.rigid_body) behind FMI 2.0 co-simulation.

Ports: ``attachment<k>`` (k = 1..4) take a force in NED and give position, velocity and
acceleration in NED, so a cable, sling or crane hook can couple either way (position/force or
power bonds). ``cg`` takes an extra wrench at the CG. Unused attachments are left at zero force.
Every variable is listed in docs/interfaces.md.
"""
from __future__ import annotations

import numpy as np

from components.rigid_body import HydroParameters, RigidBody, RigidBodyParameters, validate_parameters
from components.rotations import quat_from_euler_zyx
from components.stability import MIN_SUBSTEP, step_limit
from fmus._base import Fmi2Slave

N_ATTACHMENTS = 4
INPUTS = ("cg.force", "cg.moment", "water.velocity", "water.elevation",
          *(f"attachment{k}.force" for k in range(1, N_ATTACHMENTS + 1)))
TENSOR_LABELS = ("0,0", "1,1", "2,2", "0,1", "0,2", "1,2")
_FORCES = tuple(f"attachment{k}.force" for k in range(1, N_ATTACHMENTS + 1))
_OUTPUTS = (("position", "position"), ("velocity", "velocity"), ("quaternion", "quaternion"), ("euler", "euler"),
            ("cg.position", "cg_position"), ("cg.velocity", "cg_velocity"),
            ("angular_velocity", "angular_velocity_ned"), ("angular_velocity_body", "angular_velocity_body"))
_ACCELERATION_OUTPUTS = (("cg.acceleration", "cg_acceleration"), ("angular_acceleration", "angular_acceleration_ned"))
SAFETY = 0.8          # sub-steps at most this fraction of the RK4 stability limit
_ATTACHMENT_OUTPUTS = tuple((f"attachment{k}.position", f"attachment{k}.velocity")
                            for k in range(1, N_ATTACHMENTS + 1))
_ATTACHMENT_ACCELERATIONS = tuple(f"attachment{k}.acceleration" for k in range(1, N_ATTACHMENTS + 1))


class Payload(Fmi2Slave):

    description = ("6-DOF rigid-body payload: quaternion attitude, forces at 4 attachment points, gravity, "
                   "optional buoyancy, added mass and drag switching smoothly through the free surface")
    default_stop_time = 20.0
    default_step_size = 0.01
    # the outputs that depend on the inputs (the body's derivative, the water line) are formed on
    # first read after a step or an input change (fmus/_base.py): a master that reads the motion
    # only, as a cable coupling does, does not pay for the derivative at every step
    lazy_outputs = {group: "update_accelerations" for group in (
        "cg.acceleration", "angular_acceleration", "submerged_fraction", *_ATTACHMENT_ACCELERATIONS)}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.body: RigidBody | None = None
        self._applied_version: int | None = None   # input_version the body's loads come from
        P, I, O = "parameter", "input", "output"
        # --- parameters
        self.real("mass", P, 10000.0, "kg", "Mass of the payload", minimum=0.0)
        self.real("inertia", P, [16666.7, 16666.7, 16666.7, 0.0, 0.0, 0.0], "kg.m2",
                  "Inertia tensor about the CG in body axes; entries (0,0),(1,1),(2,2),(0,1),(0,2),(1,2) of the "
                  "symmetric tensor (products of inertia as tensor entries, i.e. -integral of x*y dm)",
                  frame="body", size=6, labels=TENSOR_LABELS)
        self.real("cg.location", P, [0.0, 0.0, 0.0], "m", "Centre of gravity relative to the body reference origin",
                  frame="body", size=3)
        self.real("gravity", P, 9.81, "m/s2", "Acceleration of gravity (acts along +down in NED)", minimum=0.0)
        for k in range(1, N_ATTACHMENTS + 1):
            self.real(f"attachment{k}.location", P, [0.0, 0.0, 0.0], "m",
                      f"Location of attachment point {k} relative to the body reference origin", frame="body", size=3)
        self.real("hydro.volume", P, 0.0, "m3", "Displaced volume when fully submerged (0: no buoyancy)", minimum=0.0)
        self.real("hydro.cb", P, [0.0, 0.0, 0.0], "m", "Centre of buoyancy relative to the body reference origin",
                  frame="body", size=3)
        self.real("hydro.water_density", P, 1025.0, "kg/m3", "Density of the water", minimum=0.0)
        self.real("hydro.added_mass", P, [0.0, 0.0, 0.0], "kg",
                  "Diagonal added mass in surge, sway, heave at the CG when fully submerged", frame="body", size=3,
                  minimum=0.0)
        self.real("hydro.added_inertia", P, [0.0, 0.0, 0.0], "kg.m2",
                  "Diagonal added inertia in roll, pitch, yaw about the CG when fully submerged", frame="body", size=3,
                  minimum=0.0)
        self.real("hydro.drag_linear", P, [0.0, 0.0, 0.0], "N.s/m",
                  "Linear drag coefficients of the velocity relative to the water at the CG", frame="body", size=3,
                  minimum=0.0)
        self.real("hydro.drag_linear_rotation", P, [0.0, 0.0, 0.0], "N.m.s/rad",
                  "Linear rotational damping coefficients about the CG", frame="body", size=3, minimum=0.0)
        self.real("hydro.drag_quadratic", P, [0.0, 0.0, 0.0], "N.s2/m2",
                  "Quadratic drag coefficients of the velocity relative to the water at the CG", frame="body", size=3,
                  minimum=0.0)
        self.real("hydro.drag_quadratic_rotation", P, [0.0, 0.0, 0.0], "N.m.s2/rad2",
                  "Quadratic rotational damping coefficients about the CG", frame="body", size=3, minimum=0.0)
        self.real("hydro.splash_height", P, 1.0, "m",
                  "Height of the zone over which buoyancy, added mass and drag fade in at the free surface",
                  minimum=0.0)
        self.real("initial.position", P, [0.0, 0.0, 0.0], "m", "Initial position of the body reference origin",
                  frame="NED", size=3)
        self.real("initial.euler", P, [0.0, 0.0, 0.0], "rad",
                  "Initial attitude as zyx Euler angles (roll, pitch, yaw) of the body frame relative to NED", size=3)
        self.real("initial.velocity", P, [0.0, 0.0, 0.0], "m/s", "Initial velocity of the body reference origin",
                  frame="NED", size=3)
        self.real("initial.angular_velocity", P, [0.0, 0.0, 0.0], "rad/s", "Initial angular velocity",
                  frame="body", size=3)
        self.real("max_substep", P, 0.01, "s",
                  "Largest internal RK4 sub-step (shorter ones are taken where the linear drag or the splash "
                  "zone's buoyancy stiffness need them for stability)", minimum=MIN_SUBSTEP)
        # --- inputs
        for k in range(1, N_ATTACHMENTS + 1):
            self.real(f"attachment{k}.force", I, [0.0, 0.0, 0.0], "N",
                      f"Force applied at attachment point {k}", frame="NED", size=3)
        self.real("cg.force", I, [0.0, 0.0, 0.0], "N", "External force applied at the CG", frame="NED", size=3)
        self.real("cg.moment", I, [0.0, 0.0, 0.0], "N.m", "External moment applied about the CG", frame="NED", size=3)
        self.real("water.velocity", I, [0.0, 0.0, 0.0], "m/s",
                  "Water particle velocity (current and waves) at the payload", frame="NED", size=3)
        self.real("water.elevation", I, 0.0, "m", "Free-surface elevation above the NED origin (positive up)")
        # --- outputs
        self.real("position", O, None, "m", "Position of the body reference origin", frame="NED", size=3)
        self.real("velocity", O, None, "m/s", "Velocity of the body reference origin", frame="NED", size=3)
        self.real("quaternion", O, None, "1", "Attitude quaternion (w, x, y, z) rotating body vectors into NED", size=4)
        self.real("euler", O, None, "rad", "Attitude as zyx Euler angles (roll, pitch, yaw), for humans", size=3)
        self.real("cg.position", O, None, "m", "Position of the CG", frame="NED", size=3)
        self.real("cg.velocity", O, None, "m/s", "Velocity of the CG", frame="NED", size=3)
        self.real("cg.acceleration", O, None, "m/s2", "Acceleration of the CG", frame="NED", size=3, depends_on=INPUTS)
        self.real("angular_velocity", O, None, "rad/s", "Angular velocity", frame="NED", size=3)
        self.real("angular_velocity_body", O, None, "rad/s", "Angular velocity (p, q, r)", frame="body", size=3)
        self.real("angular_acceleration", O, None, "rad/s2", "Angular acceleration", frame="NED", size=3,
                  depends_on=INPUTS)
        for k in range(1, N_ATTACHMENTS + 1):
            self.real(f"attachment{k}.position", O, None, "m", f"Position of attachment point {k}", frame="NED", size=3)
            self.real(f"attachment{k}.velocity", O, None, "m/s", f"Velocity of attachment point {k}", frame="NED",
                      size=3)
            self.real(f"attachment{k}.acceleration", O, None, "m/s2", f"Acceleration of attachment point {k}",
                      frame="NED", size=3, depends_on=INPUTS)
        self.real("submerged_fraction", O, None, "1",
                  "Fraction of buoyancy, added mass and drag in effect (0 dry, 1 fully submerged)",
                  depends_on=("water.elevation",))

    # ------------------------------------------------------------------ parameters -> component

    def _parameters(self) -> RigidBodyParameters:
        v = self.v
        i = v["inertia"]
        inertia = np.array([[i[0], i[3], i[4]], [i[3], i[1], i[5]], [i[4], i[5], i[2]]])
        hydro = None
        coefficients = [v["hydro.added_mass"], v["hydro.added_inertia"], v["hydro.drag_linear"],
                        v["hydro.drag_linear_rotation"], v["hydro.drag_quadratic"], v["hydro.drag_quadratic_rotation"]]
        if v["hydro.volume"] > 0.0 or any(np.any(c != 0.0) for c in coefficients):
            hydro = HydroParameters(
                volume=v["hydro.volume"], cb=v["hydro.cb"].copy(), water_density=v["hydro.water_density"],
                added_mass=np.concatenate(coefficients[0:2]),
                drag_linear=np.concatenate(coefficients[2:4]),
                drag_quadratic=np.concatenate(coefficients[4:6]),
                splash_height=v["hydro.splash_height"])
        attachments = np.array([v[f"attachment{k}.location"] for k in range(1, N_ATTACHMENTS + 1)])
        return RigidBodyParameters(mass=v["mass"], inertia=inertia, cg=v["cg.location"].copy(), attachments=attachments,
                                   gravity=v["gravity"], hydro=hydro)

    # the component's 6-vectors (linear then angular) are two FMI vectors here
    _RENAME = {"cg": "cg.location",
               **{f"hydro.{c}[{3 + i}]": f"hydro.{f}[{i}]" for i in range(3)
                  for c, f in (("added_mass", "added_inertia"), ("drag_linear", "drag_linear_rotation"),
                               ("drag_quadratic", "drag_quadratic_rotation"))}}

    def check_parameters(self):
        problems = [(self._RENAME.get(name, name.replace("cg[", "cg.location[")), value, reason)
                    for name, value, reason in validate_parameters(self._parameters())]
        if self.v["hydro.volume"] > 0.0 and not self.v["hydro.water_density"] > 0.0:
            problems.append(("hydro.water_density", self.v["hydro.water_density"], "must be positive with buoyancy"))
        if not problems:
            # modes no sub-step we take keeps stable, by the parameter that sets them
            body = RigidBody(self._parameters())
            for lam, name in body.linear_modes():
                limit = step_limit([lam], "rk4")
                if SAFETY * limit < MIN_SUBSTEP:
                    problems.append((name, self._value(name), f"needs RK4 sub-steps below {limit:.3g} s (stability), "
                                                              f"shorter than {MIN_SUBSTEP:g} s"))
        return problems

    def _value(self, name: str) -> float:
        group, _, index = name.partition("[")
        return float(self.v[group][int(index[:-1])]) if index else float(self.v[group])

    def initialize_model(self) -> None:
        v = self.v
        q = quat_from_euler_zyx(*v["initial.euler"])
        self.body = RigidBody(self._parameters(), position=v["initial.position"].copy(), quaternion=q,
                              velocity=v["initial.velocity"].copy(),
                              angular_velocity=v["initial.angular_velocity"].copy())
        self.body.time = self.time
        self._applied_version = None
        # the motion outputs are views of the body's motion_array, which update_outputs forms in place
        views = self.body.motion_views()
        self._motion_views = {name: views[key] for name, key in _OUTPUTS}
        for (position, velocity), p, w in zip(_ATTACHMENT_OUTPUTS, views["attachment_positions"],
                                              views["attachment_velocities"]):
            self._motion_views[position] = p
            self._motion_views[velocity] = w
        views = self.body.acceleration_views()     # and the accelerations of acceleration_array
        self._acceleration_views = {name: views[key] for name, key in _ACCELERATION_OUTPUTS}
        self._acceleration_views.update(zip(_ATTACHMENT_ACCELERATIONS, views["attachment_accelerations"]))
        modes = self.body.linear_modes()
        limit = step_limit([lam for lam, _ in modes], "rk4")
        cause = min(modes, key=lambda m: step_limit([m[0]], "rk4"))[1] if modes else ""
        self._substep = self.stable_substep(self.v["max_substep"], limit, SAFETY, f"{cause} (RK4)")

    # ------------------------------------------------------------------ stepping and outputs

    def _apply_inputs(self) -> None:
        if self._applied_version == self.input_version:
            return    # the body holds these loads already (set_loads would drop its cached rates)
        self._applied_version = self.input_version
        v = self.v
        forces = np.array([v[name] for name in _FORCES])
        self.body.set_loads(forces, v["cg.force"], v["cg.moment"], v["water.velocity"], v["water.elevation"])

    def step_model(self, t: float, h: float) -> None:
        self._apply_inputs()
        self.body.step(h, self._substep)

    def update_outputs(self) -> None:
        # every motion output in one pass (one compiled call with the kernels) into the body's
        # array, of which the outputs are views; they are put back in v at each step because a
        # state restore puts copies there (fmus/_base reads v[group] at every access, and copies
        # the values into a state it takes)
        self.body.motion_array()
        self.v.update(self._motion_views)

    def update_accelerations(self) -> None:
        """The accelerations and the submerged fraction (lazy outputs: formed when first read)."""
        self._apply_inputs()
        # one pass (one compiled call with the kernels): R, the rates and omega x v formed once
        accelerations = self.body.acceleration_array()
        self.v.update(self._acceleration_views)     # views of it, as the motion outputs are
        self.v["submerged_fraction"] = float(accelerations[6])

    def get_model_state(self) -> dict:
        return {} if self.body is None else {"body": self.body.get_state()}

    def set_model_state(self, state: dict) -> None:
        if "body" in state:
            # the parameters were restored with the variables: rebuild the body from them where
            # they differ from those it was built with (a state may come from another instance)
            if self.body is None or not self.same_parameters:
                self.initialize_model()
            self._applied_version = None
            self.body.set_state(state["body"])
        else:
            self.body = None
