"""Cable FMU (first version): a lumped-mass mooring line or wire (components.line) between two
ends driven by inputs.

Ports ``end_a`` (the lower end: anchor, or the payload of a crane wire) and ``end_b`` (the upper
end: fairlead or crane tip) take position and velocity in NED and give the force the line exerts
on that end point (NED) and the tension there. The line starts at rest on its static shape
(elastic catenary with seabed contact) between the end positions present at the end of
initialisation. Still to come (see docs/interfaces.md for what exists): bending and torsion,
variable length from a winch, wave kinematics.
"""
from __future__ import annotations

import numpy as np

from components.line import Line, LineParams
from fmus._base import Fmi2Slave

ENDS = ("end_a.position", "end_a.velocity", "end_b.position", "end_b.velocity", "current.velocity")


class Cable(Fmi2Slave):

    description = ("Lumped-mass cable or mooring line (tension only, Morison drag and added mass, buoyancy, "
                   "seabed contact with friction), at rest on its catenary at the start")
    default_stop_time = 60.0
    default_step_size = 0.1

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.line = None
        P, I, O = "parameter", "input", "output"
        # defaults: the 50 m studless chain of MoorDyn's test deck (anchors_marine.md §3a)
        self.real("length", P, 410.0, "m", "Unstretched length", minimum=0.0)
        self.real("diameter", P, 0.252, "m", "Volume-equivalent diameter", minimum=0.0)
        self.real("mass_per_length", P, 390.0, "kg/m", "Mass per unit length", minimum=0.0)
        self.real("EA", P, 1.674e9, "N", "Axial stiffness", minimum=0.0)
        self.real("damping", P, -1.0, "N.s", "Internal axial damping; a negative value is minus a damping ratio "
                                             "(MoorDyn's BA/-zeta)")
        self.real("drag_normal", P, 1.37, "1", "Normal drag coefficient", minimum=0.0)
        self.real("drag_tangential", P, 0.64, "1", "Tangential drag coefficient", minimum=0.0)
        self.real("added_mass_normal", P, 1.0, "1", "Normal added-mass coefficient", minimum=0.0)
        self.real("added_mass_tangential", P, 0.0, "1", "Tangential added-mass coefficient", minimum=0.0)
        self.real("water_density", P, 1025.0, "kg/m3", "Water density", minimum=0.0)
        self.real("gravity", P, 9.81, "m/s2", "Acceleration of gravity", minimum=0.0)
        self.integer("n_segments", P, 41, "Number of segments", minimum=1, maximum=2000)
        self.real("seabed.depth", P, 50.0, "m", "Depth of the flat seabed below the NED origin")
        self.real("seabed.stiffness", P, 1e5, "Pa", "Seabed stiffness per unit diameter (N/m2 per m)", minimum=0.0)
        self.real("seabed.damping", P, 1e4, "Pa", "Seabed damping per unit diameter, per m/s", minimum=0.0)
        self.real("seabed.friction", P, 0.5, "1", "Coulomb friction coefficient on the seabed", minimum=0.0)
        self.real("max_substep", P, 0.0, "s", "Largest internal sub-step (0: 0.7 x the explicit stability limit "
                                               "2/omega_max)", minimum=0.0)
        # inputs
        self.real("end_a.position", I, [400.0, 0.0, 50.0], "m", "Position of end A (anchor or lower end)",
                  frame="NED", size=3)
        self.real("end_a.velocity", I, [0.0] * 3, "m/s", "Velocity of end A", frame="NED", size=3)
        self.real("end_b.position", I, [0.0, 0.0, 0.0], "m", "Position of end B (fairlead or upper end)",
                  frame="NED", size=3)
        self.real("end_b.velocity", I, [0.0] * 3, "m/s", "Velocity of end B", frame="NED", size=3)
        self.real("current.velocity", I, [0.0] * 3, "m/s", "Uniform current velocity", frame="NED", size=3)
        # outputs (the end forces do not depend on the end inputs within a step: the line is a state)
        self.real("end_a.force", O, None, "N", "Force the line exerts on end A", frame="NED", size=3)
        self.real("end_b.force", O, None, "N", "Force the line exerts on end B", frame="NED", size=3)
        self.real("end_a.tension", O, None, "N", "Tension of the segment at end A")
        self.real("end_b.tension", O, None, "N", "Tension of the segment at end B")
        self.real("max_tension", O, None, "N", "Largest segment tension")
        self.real("slack_fraction", O, None, "1", "Fraction of segments carrying no tension")

    def _params(self) -> LineParams:
        v = self.v
        return LineParams(length=v["length"], diameter=v["diameter"], mass_per_length=v["mass_per_length"],
                          EA=v["EA"], damping=v["damping"], Cdn=v["drag_normal"], Cdt=v["drag_tangential"],
                          Can=v["added_mass_normal"], Cat=v["added_mass_tangential"], rho_water=v["water_density"],
                          g=v["gravity"], kBot=v["seabed.stiffness"], cBot=v["seabed.damping"],
                          friction=v["seabed.friction"])

    def check_parameters(self):
        v, problems = self.v, []
        for name in ("length", "diameter", "mass_per_length", "EA"):
            if not v[name] > 0.0:
                problems.append((name, v[name], "must be positive"))
        if problems:
            return problems
        if not self._params().weight_per_length > 0.0:
            problems.append(("mass_per_length", v["mass_per_length"], "the line floats (mass per length below the "
                                                                      "displaced water's); not supported yet"))
        span = float(np.linalg.norm(v["end_b.position"] - v["end_a.position"]))
        if span > v["length"] * (1.0 + 0.05):
            problems.append(("length", v["length"], f"is more than 5 % shorter than the {span:.3f} m between the ends"))
        return problems

    def initialize_model(self) -> None:
        v = self.v
        self.line = Line(self._params(), v["end_a.position"].copy(), v["end_b.position"].copy(),
                         int(v["n_segments"]), v["seabed.depth"], current=v["current.velocity"].copy(),
                         substep=v["max_substep"] or None)

    def step_model(self, t: float, h: float) -> None:
        v = self.v
        self.line.current = v["current.velocity"].copy()
        self.line.set_ends(v["end_a.position"].copy(), v["end_a.velocity"].copy(), v["end_b.position"].copy(),
                           v["end_b.velocity"].copy())
        self.line.step(h)

    def update_outputs(self) -> None:
        v, line = self.v, self.line
        v["end_a.force"][:] = line.anchor_force()
        v["end_b.force"][:] = line.fairlead_force()
        tensions = line.tensions()
        v["end_a.tension"] = float(tensions[0])
        v["end_b.tension"] = float(tensions[-1])
        v["max_tension"] = float(np.max(tensions))
        v["slack_fraction"] = float(np.mean(tensions <= 0.0))

    def get_model_state(self) -> dict:
        return {} if self.line is None else {"line": self.line.get_state()}

    def set_model_state(self, state: dict) -> None:
        if "line" in state:
            if self.line is None:
                self.initialize_model()
            self.line.set_state(state["line"])
        else:
            self.line = None
