"""Contact FMU: contact forces between up to three convex bodies (components.contact and
components.convex): the SMS API volume-of-interference normal force or Hunt-Crossley point
contact, and stick-slip friction.

Each body's pose and velocity come in as inputs (e.g. the Payload's ``position``, ``quaternion``,
``velocity``, ``angular_velocity``; a deck from a Ship hardpoint); the force and moment on each body
about its reference point go out (NED), to be connected to e.g. the Payload's ``cg.force`` and
``cg.moment`` when its reference point is its CG.  The loads depend on the poses of the same
instant (direct feedthrough); only the friction spring is a state.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from components.contact import ContactMaterial, ContactPair, ContactParams
from components.convex import Box, ConvexMesh, Cylinder, Sphere
from components.rotations import quat_to_matrix
from fmus._base import Fmi2Slave

N_BODIES = 3
PAIRS = tuple(itertools.combinations(range(1, N_BODIES + 1), 2))      # (1, 2), (1, 3), (2, 3)
SHAPES = {0: "none", 1: "box", 2: "sphere", 3: "cylinder", 4: "mesh"}
BODY_INPUTS = tuple(f"body{k}.{w}" for k in range(1, N_BODIES + 1)
                    for w in ("position", "quaternion", "velocity", "angular_velocity"))


class Contact(Fmi2Slave):

    description = ("Contact between convex bodies (boxes, spheres, cylinders, convex meshes): GJK/EPA, interference "
                   "volume, SMS volumetric normal force or Hunt-Crossley, stick-slip friction")
    default_stop_time = 10.0
    default_step_size = 0.01

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.pairs: dict[tuple[int, int], ContactPair] = {}
        self.results = {}
        self._used: list[int] = []                 # bodies of the enabled pairs
        self._inputs_used: list[str] = []
        self._bodies: dict = {}
        self._bodies_key: bytes | None = None
        # the names the hot path uses, formed once
        self._body_names = {k: tuple(f"body{k}.{w}" for w in ("position", "quaternion", "velocity",
                                                               "angular_velocity", "offset"))
                            for k in range(1, N_BODIES + 1)}
        self._load_names = {k: (f"body{k}.force", f"body{k}.moment") for k in range(1, N_BODIES + 1)}
        self._pair_names = {(i, j): tuple(f"pair{i}{j}.{w}" for w in ("in_contact", "distance", "penetration",
                                                                      "volume", "normal_force", "point"))
                            for i, j in PAIRS}
        P, I, O = "parameter", "input", "output"
        self.integer("model", P, 0, "Normal force: 0 SMS volume of interference, 1 Hunt-Crossley point contact",
                     minimum=0, maximum=1)
        self.real("friction.static", P, 0.3, "1", "Static friction coefficient", minimum=0.0, maximum=10.0)
        self.real("friction.dynamic", P, 0.3, "1", "Dynamic (sliding) friction coefficient", minimum=0.0,
                  maximum=10.0)
        self.real("friction.stick_distance", P, 1e-3, "m", "Creep at which the stick spring reaches the static "
                                                           "limit", minimum=0.0)
        self.real("friction.stick_time", P, 0.01, "s", "Damping of the stick spring as a time constant", minimum=0.0)
        self.real("hunt_crossley.stiffness", P, 1e9, "1", "K of f = K d^n (N/m^n)", minimum=0.0,
                  maximum=1e13)
        self.real("hunt_crossley.exponent", P, 1.5, "1", "n of f = K d^n", minimum=0.0, maximum=3.0)
        self.real("hunt_crossley.restitution", P, 0.5, "1", "Coefficient of restitution e", minimum=0.0, maximum=1.0)
        for k in range(1, N_BODIES + 1):
            b = f"body{k}"
            self.integer(f"{b}.shape", P, 1 if k <= 2 else 0, "Shape: " + ", ".join(f"{i} {s}" for i, s in
                                                                                   SHAPES.items()),
                         minimum=0, maximum=4)
            self.real(f"{b}.size", P, [1.0, 1.0, 1.0], "m", "Extent along the body axes -- box: length, width, "
                                                            "height; sphere: radius, -, -; cylinder: radius, -, "
                                                            "length (along z)", frame="body", size=3)
            self.string(f"{b}.mesh_file", P, "", "Convex mesh (.obj or ASCII .stl, body frame, m) for shape 4")
            self.real(f"{b}.offset", P, [0.0, 0.0, 0.0], "m", "Shape centre relative to the body reference point",
                      frame="body", size=3)
            self.real(f"{b}.E", P, 950e6, "Pa", "Young's modulus of the contact material", minimum=0.0)
            self.real(f"{b}.B", P, 50e6, "Pa.s", "Material damping of the contact material", minimum=0.0)
            self.real(f"{b}.position", I, [0.0, 0.0, 0.0], "m", "Position of the body reference point", frame="NED",
                      size=3)
            self.real(f"{b}.quaternion", I, [1.0, 0.0, 0.0, 0.0], "1", "Attitude (w, x, y, z) rotating body vectors "
                                                                    "into NED", size=4)
            self.real(f"{b}.velocity", I, [0.0, 0.0, 0.0], "m/s", "Velocity of the body reference point",
                      frame="NED", size=3)
            self.real(f"{b}.angular_velocity", I, [0.0, 0.0, 0.0], "rad/s", "Angular velocity", frame="NED", size=3)
            self.real(f"{b}.force", O, None, "N", "Contact force on the body", frame="NED", size=3,
                      depends_on=BODY_INPUTS)
            self.real(f"{b}.moment", O, None, "N.m", "Contact moment on the body about its reference point",
                      frame="NED", size=3, depends_on=BODY_INPUTS)
        for i, j in PAIRS:
            q = f"pair{i}{j}"
            self.boolean(f"{q}.enabled", P, (i, j) == (1, 2), f"Resolve contact between bodies {i} and {j}")
            self.real(f"{q}.in_contact", O, None, "1", "1 while the bodies touch, else 0", depends_on=BODY_INPUTS)
            self.real(f"{q}.penetration", O, None, "m", "Penetration depth (0 when apart)", depends_on=BODY_INPUTS)
            self.real(f"{q}.distance", O, None, "m", "Signed distance (negative: penetration)",
                      depends_on=BODY_INPUTS)
            self.real(f"{q}.volume", O, None, "m3", "Volume of interference", depends_on=BODY_INPUTS)
            self.real(f"{q}.normal_force", O, None, "N", "Normal contact force", depends_on=BODY_INPUTS)
            self.real(f"{q}.point", O, None, "m", "Contact point (interference centroid)", frame="NED", size=3,
                      depends_on=BODY_INPUTS)

    # ------------------------------------------------------------------ set-up
    def _shape(self, k: int):
        v = self.v
        kind, size = SHAPES[int(v[f"body{k}.shape"])], v[f"body{k}.size"]
        if kind == "box":
            return Box(0.5 * np.asarray(size, dtype=float))
        if kind == "sphere":
            return Sphere(float(size[0]))
        if kind == "cylinder":
            return Cylinder(float(size[0]), 0.5 * float(size[2]))
        if kind == "mesh":
            path = self.resolve_path(v[f"body{k}.mesh_file"]) if hasattr(self, "resolve_path") else \
                v[f"body{k}.mesh_file"]
            return ConvexMesh.from_file(path)
        return None

    def _params(self) -> ContactParams:
        v = self.v
        return ContactParams(model="volume" if int(v["model"]) == 0 else "hunt_crossley",
                             hc_stiffness=v["hunt_crossley.stiffness"], hc_exponent=v["hunt_crossley.exponent"],
                             restitution=v["hunt_crossley.restitution"], mu_static=v["friction.static"],
                             mu_dynamic=v["friction.dynamic"], stick_distance=v["friction.stick_distance"],
                             stick_time=v["friction.stick_time"])

    def check_parameters(self):
        v, problems = self.v, []
        for name, value, why in self._params().check():
            problems.append((name, value, why))
        for k in range(1, N_BODIES + 1):
            kind = SHAPES[int(v[f"body{k}.shape"])]
            size = v[f"body{k}.size"]
            needed = {"box": (0, 1, 2), "sphere": (0,), "cylinder": (0, 2)}.get(kind, ())
            for i in needed:
                if not size[i] > 0.0:
                    problems.append((f"body{k}.size[{i}]", float(size[i]), f"must be positive for a {kind}"))
            if kind == "mesh":
                try:
                    self._shape(k)
                except Exception as exc:
                    problems.append((f"body{k}.mesh_file", v[f"body{k}.mesh_file"], f"cannot be used: {exc}"))
            if kind != "none" and not v[f"body{k}.E"] > 0.0:
                problems.append((f"body{k}.E", v[f"body{k}.E"], "must be positive"))
        for i, j in PAIRS:
            if v[f"pair{i}{j}.enabled"] and "none" in (SHAPES[int(v[f"body{i}.shape"])],
                                                     SHAPES[int(v[f"body{j}.shape"])]):
                problems.append((f"pair{i}{j}.enabled", True, f"body{i} and body{j} both need a shape"))
        return problems

    def initialize_model(self) -> None:
        v, params = self.v, self._params()
        shapes = {k: self._shape(k) for k in range(1, N_BODIES + 1)}
        self.pairs = {}
        for i, j in PAIRS:
            if v[f"pair{i}{j}.enabled"]:
                self.pairs[(i, j)] = ContactPair(
                    shapes[i], shapes[j], ContactMaterial(v[f"body{i}.E"], v[f"body{i}.B"]),
                    ContactMaterial(v[f"body{j}.E"], v[f"body{j}.B"]), params)
        self.results = {}
        self._used = sorted({k for pair in self.pairs for k in pair})
        self._inputs_used = [f"body{k}.{w}" for k in self._used
                             for w in ("position", "quaternion", "velocity", "angular_velocity")]
        self._bodies, self._bodies_key = {}, None

    # ------------------------------------------------------------------ kinematics
    def _body(self, k: int):
        """(shape-centre position, R, shape-centre velocity, omega, reference position) in NED, and
        the centre and reference position as lists of floats.  The arithmetic is numpy's
        (np.linalg.norm is sqrt(q . q); R @ offset stays numpy's matrix product), written out on
        floats where numpy's overhead on 3-vectors would dominate."""
        v = self.v
        position, quaternion, velocity, angular_velocity, offset = self._body_names[k]
        q = v[quaternion]
        n = math.sqrt(float(q.dot(q)))      # np.linalg.norm's arithmetic, without its ~5 us of checks
        R = quat_to_matrix(q / n if n > 0 else np.array([1.0, 0.0, 0.0, 0.0]))
        a0, a1, a2 = (R @ v[offset]).tolist()
        r0, r1, r2 = ref = v[position].tolist()
        w0, w1, w2 = w = v[angular_velocity].tolist()
        v0, v1, v2 = v[velocity].tolist()
        centre = [r0 + a0, r1 + a1, r2 + a2]
        # velocity + omega x arm (cross3's formula)
        u = (v0 + (w1 * a2 - w2 * a1), v1 + (w2 * a0 - w0 * a2), v2 + (w0 * a1 - w1 * a0))
        return np.array(centre), R, np.array(u), np.array(w), np.array(ref), centre, ref

    def _evaluate(self) -> None:
        v = self.v
        # the bodies of the enabled pairs, formed once per set of their inputs (a step and the
        # outputs after it read the same)
        key = b"".join([v[name].tobytes() for name in self._inputs_used])
        if key != self._bodies_key:
            self._bodies = {k: self._body(k) for k in self._used}
            self._bodies_key = key
        elif self.results and not any(res.in_contact for res in self.results.values()):
            # the same inputs and every pair apart: the results depend on the inputs alone (the
            # friction state acts only in contact), so they are those of the last call
            return
        bodies = self._bodies
        # the pairs' own cache of their normal loads, keyed by these inputs (no need to key by
        # the poses' bytes again)
        key = ("inputs", key)
        self.results = {}
        for (i, j), pair in self.pairs.items():
            pa, Ra, va, wa = bodies[i][:4]
            pb, Rb, vb, wb = bodies[j][:4]
            self.results[(i, j)] = pair.evaluate(pa, Ra, va, wa, pb, Rb, vb, wb, key=key)

    # ------------------------------------------------------------------ stepping and outputs
    def step_model(self, t: float, h: float) -> None:
        self._evaluate()
        for (i, j), res in self.results.items():
            pa, _, va, wa = self._bodies[i][:4]
            pb, _, vb, wb = self._bodies[j][:4]
            self.pairs[(i, j)].advance(res, va, wa, pa, vb, wb, pb, h)

    def update_outputs(self) -> None:
        v = self.v
        self._evaluate()
        # the loads summed on floats as the vectors were (0.0 + F + ..., 0.0 + (M + arm x F) + ...)
        loads = {k: ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0]) for k in range(1, N_BODIES + 1)}
        for (i, j), res in self.results.items():
            in_contact, distance, penetration, volume, normal_force, point = self._pair_names[(i, j)]
            # the pair gives moments about the shape centres; move them to the reference points.
            # Apart the loads are +0.0, and adding +0.0 to a sum that starts at +0.0 changes no bit
            for k, F, M in ((i, res.force_a, res.moment_a), (j, res.force_b, res.moment_b)):
                if not res.in_contact:
                    break
                centre, ref = self._bodies[k][5:7]
                F, M = F.tolist(), M.tolist()
                a0, a1, a2 = centre[0] - ref[0], centre[1] - ref[1], centre[2] - ref[2]
                c = (a1 * F[2] - a2 * F[1], a2 * F[0] - a0 * F[2], a0 * F[1] - a1 * F[0])   # cross3
                f, m = loads[k]
                for x in range(3):
                    f[x] = f[x] + F[x]
                    m[x] = m[x] + (M[x] + c[x])
            finite = math.isfinite(res.distance)
            v[in_contact] = 1.0 if res.in_contact else 0.0
            v[distance] = float(res.distance) if finite else 1e9
            v[penetration] = max(-float(res.distance), 0.0) if finite else 0.0
            v[volume] = float(res.volume)
            v[normal_force] = float(res.normal_force)
            v[point][:] = res.point
        for k, (f, m) in loads.items():
            force, moment = self._load_names[k]
            v[force][:] = f
            v[moment][:] = m

    def get_model_state(self) -> dict:
        return {f"{i}{j}": pair.get_state() for (i, j), pair in self.pairs.items()}

    def set_model_state(self, state: dict) -> None:
        if not self.pairs and state:
            self.initialize_model()
        for (i, j), pair in self.pairs.items():
            if f"{i}{j}" in state:
                pair.set_state(state[f"{i}{j}"])
