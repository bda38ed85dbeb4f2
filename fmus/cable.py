"""Cable FMU: a lumped-mass line (components.line) -- mooring chain, crane wire or umbilical -- with
bending, torsion, hydrodynamics, seabed contact, a winch end and an implicit integrator.

Ports ``end_a`` (the lower end: anchor, or the payload of a crane wire) and ``end_b`` (the upper
end: fairlead or crane tip) take position and velocity in NED and give the force and moment the
line exerts on that end (NED) and the tension there.  An end fixed to a body
(``end_a.body_attitude``) also takes the body's attitude and angular velocity: a clamped end then
bends with the body and a torsionally held end twists with it, whatever the line's direction.
End B can instead be ``free`` (a point mass with an external force; its position and velocity are
then outputs).  A winch at either end pays out with the ``winch.speed`` input (or follows
``winch.length``).  The line starts on its static shape (elastic catenary with seabed contact,
then the discrete static equilibrium) between the end positions present at the end of
initialisation, at rest or (``start_moving``) with the motion of its ends.

The ends' translation and the winch are part of the line's state: over a step the end nodes move
on with their velocities from the positions given at the step's start, and the winch pays out at
its speed (or to its commanded length), so the outputs after a step describe the end of the step
(positions and velocities of the same instant) and do not depend on end positions, velocities or
winch inputs set after it.  Declared as direct feedthrough, a master would form the forces of the
axially stiff line from its bodies' positions (or the winch's length) of the same instant and hold
them over the next step, an explicit coupling that gains energy every step (the offshore lift's
payload came off its wire at h = 0.025 s).  Everything else acts at once, so the loads are direct
feedthrough of it: the attitude of bodies the ends are fixed to (bending and torsion are soft
against the bodies' inertia, and a torsion moment from the twist of its own instant keeps a torsion
pendulum's energy), the twist and tangent of an end, the current and a free end's force.
"""
from __future__ import annotations

import math

import numpy as np

from components.line import Line, LineParams
from components.rotations import quat_to_matrix
from components.stability import MIN_SUBSTEP
from fmus._base import Fmi2Slave
from fmus._line_state import bounded_line_step, line_state_problem
from fmus._sea import build_sea, check_sea, declare_sea

SCHEMES = {0: "implicit", 1: "rk2", 2: "rk4"}
# sub-steps of the explicit schemes as a fraction of 2 / omega_max (components/line.py's defaults)
EXPLICIT_SAFETY = {"rk2": 0.7, "rk4": 1.0}
# inputs the end loads depend on within a step; the ends' positions and velocities and the winch
# are carried over the step as state (module docstring)
END_INPUTS = ("end_a.tangent", "end_b.tangent", "end_a.twist", "end_b.twist", "end_a.quaternion",
              "end_a.angular_velocity", "end_b.quaternion", "end_b.angular_velocity", "end_b.external_force",
              "current.velocity")
WINCH_ENDS = {0: None, 1: "a", 2: "b"}


class Cable(Fmi2Slave):

    description = ("Lumped-mass cable or mooring line: axial (optionally non-linear), bending and torsion stiffness, "
                   "Morison drag and added mass, buoyancy with wet/dry splash zone, current profile and optional wave "
                   "kinematics, seabed contact with friction, winch pay-out, implicit integrator; at rest on its "
                   "catenary at the start")
    default_stop_time = 60.0
    default_step_size = 0.1
    state_rows_vary = True     # a winch adds and removes elements
    # the step turns the bodies the ends are fixed to with their angular velocities: an attitude set
    # after the step, even to the value it had at the step's start, is in force again
    carried_inputs = frozenset(("end_a.quaternion", "end_b.quaternion"))

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.line = None
        self._applied_version = None      # input_version the line's ends were last given
        self._limit_warned = False
        P, I, O = "parameter", "input", "output"
        # defaults: the 50 m studless chain of MoorDyn's test deck (anchors_marine.md §3a)
        self.real("length", P, 410.0, "m", "Unstretched length at the start", minimum=0.0)
        self.real("diameter", P, 0.252, "m", "Volume-equivalent diameter", minimum=0.0)
        self.real("mass_per_length", P, 390.0, "kg/m", "Mass per unit length", minimum=0.0)
        self.real("EA", P, 1.674e9, "N", "Axial stiffness", minimum=0.0)
        self.real("damping", P, -1.0, "N.s", "Internal axial damping; a negative value is minus a damping ratio "
                                             "(MoorDyn's BA/-zeta)")
        self.string("tension_strain", P, "", "Non-linear axial stiffness: 'strain tension; strain tension; ...' "
                                             "[1, N] from 0 0 (empty: linear EA)")
        self.real("EI", P, 0.0, "N.m2", "Bending stiffness (0: none, a chain)", minimum=0.0)
        self.real("GJ", P, 0.0, "N.m2", "Torsional stiffness (acts when neither end is a swivel)", minimum=0.0)
        self.real("bending_damping", P, 0.0, "N.m2.s", "Bending damping coefficient", minimum=0.0)
        self.real("compression", P, 0.0, "1", "Compressive stiffness as a fraction of EA (0: a cable goes slack; "
                                              "1: a rod)", minimum=0.0)
        self.real("drag_normal", P, 1.37, "1", "Normal drag coefficient", minimum=0.0)
        self.real("drag_tangential", P, 0.64, "1", "Tangential drag coefficient", minimum=0.0)
        self.real("added_mass_normal", P, 1.0, "1", "Normal added-mass coefficient", minimum=0.0)
        self.real("added_mass_tangential", P, 0.0, "1", "Tangential added-mass coefficient", minimum=0.0)
        self.real("water_density", P, 1025.0, "kg/m3", "Water density (0: the line is in air)", minimum=0.0)
        self.real("gravity", P, 9.81, "m/s2", "Acceleration of gravity", minimum=0.0)
        self.integer("n_segments", P, 41, "Number of elements at the start", minimum=2, maximum=2000)
        self.real("seabed.depth", P, 50.0, "m", "Depth of the flat seabed below the NED origin (mean free surface)")
        self.real("seabed.stiffness", P, 1e5, "Pa", "Seabed stiffness per unit diameter (N/m2 per m)", minimum=0.0)
        self.real("seabed.damping", P, 1e4, "Pa", "Seabed damping per unit diameter, per m/s", minimum=0.0)
        self.real("seabed.friction", P, 0.5, "1", "Coulomb friction coefficient on the seabed", minimum=0.0)
        self.integer("solver.scheme", P, 0, "Integrator: 0 linearly implicit theta-method (stable for stiff wire), "
                                           "1 explicit RK2 (MoorDyn's), 2 explicit RK4", minimum=0, maximum=2)
        self.real("solver.theta", P, 0.6, "1", "Implicitness of the theta-method (0.5 trapezoidal .. 1 backward "
                                              "Euler)", minimum=0.5, maximum=1.0)
        self.real("max_substep", P, 0.0, "s", "Largest internal sub-step (0: 0.02 s implicit; 0.7 x the explicit "
                                               "stability limit for RK2, 1.0 x for RK4; an explicit scheme never takes "
                                               "more than that)", minimum=0.0)
        self.boolean("end_a.clamped", P, False, "End A is clamped in bending (tangent from end_a.tangent)")
        self.boolean("end_b.clamped", P, False, "End B is clamped in bending (tangent from end_b.tangent)")
        self.boolean("end_a.swivel", P, True, "End A turns freely about the line axis (no torsion)")
        self.boolean("end_b.swivel", P, True, "End B turns freely about the line axis (no torsion)")
        self.boolean("end_a.body_attitude", P, False, "End A is fixed to a body whose attitude comes from "
                     "end_a.quaternion: a clamped end takes its tangent from the body, a torsionally held end its "
                     "twist (end_a.tangent and end_a.twist are then not used)")
        self.boolean("end_b.body_attitude", P, False, "End B is fixed to a body whose attitude comes from "
                     "end_b.quaternion (as end_a.body_attitude)")
        self.boolean("start_moving", P, False, "The line starts with the motion of its ends (node velocities "
                     "interpolated between the end velocities; ends moving alike: the steady shape in their "
                     "frame) instead of at rest")
        self.boolean("end_b.free", P, False, "End B is a free point mass driven by end_b.external_force (its "
                                             "position and velocity become outputs) instead of following inputs")
        self.real("end_b.mass", P, 0.0, "kg", "Point mass at a free end B", minimum=0.0)
        self.integer("winch.end", P, 0, "End at which a winch pays out: 0 none, 1 end A, 2 end B", minimum=0,
                     maximum=2)
        self.integer("winch.mode", P, 0, "Winch input used: 0 winch.speed, 1 winch.length", minimum=0, maximum=1)
        self.real("current.profile_exponent", P, 0.0, "1", "Current profile U(z) = U (1 - z/depth)^a below the "
                                                           "surface (0: uniform; 1/7: the usual power law)",
                  minimum=0.0)
        declare_sea(self, default_spectrum=0)
        # inputs
        self.real("end_a.position", I, [400.0, 0.0, 50.0], "m", "Position of end A (anchor or lower end)",
                  frame="NED", size=3)
        self.real("end_a.velocity", I, [0.0] * 3, "m/s", "Velocity of end A", frame="NED", size=3)
        self.real("end_b.position", I, [0.0, 0.0, 0.0], "m", "Position of end B (fairlead or upper end); initial "
                                                             "position of a free end", frame="NED", size=3)
        self.real("end_b.velocity", I, [0.0] * 3, "m/s", "Velocity of end B", frame="NED", size=3)
        self.real("end_a.tangent", I, [0.0, 0.0, 0.0], "1", "Line direction at a clamped end A (from A towards B); "
                                                           "zero: the initial shape's", frame="NED", size=3)
        self.real("end_b.tangent", I, [0.0, 0.0, 0.0], "1", "Line direction at a clamped end B (from A towards B); "
                                                           "zero: the initial shape's", frame="NED", size=3)
        self.real("end_a.twist", I, 0.0, "rad", "Rotation of end A's fitting about the line axis")
        self.real("end_b.twist", I, 0.0, "rad", "Rotation of end B's fitting about the line axis")
        for end in ("a", "b"):
            self.real(f"end_{end}.quaternion", I, [1.0, 0.0, 0.0, 0.0], "1",
                      f"Attitude (w, x, y, z) of the body end {end.upper()} is fixed to, body axes to NED "
                      f"(end_{end}.body_attitude); all zero: level", size=4)
            self.real(f"end_{end}.angular_velocity", I, [0.0] * 3, "rad/s",
                      f"Angular velocity of the body end {end.upper()} is fixed to (end_{end}.body_attitude)",
                      frame="NED", size=3)
        self.real("end_b.external_force", I, [0.0] * 3, "N", "Force on a free end B", frame="NED", size=3)
        self.real("winch.speed", I, 0.0, "m/s", "Winch pay-out speed (> 0 pays out, < 0 hauls in)")
        self.real("winch.length", I, 0.0, "m", "Unstretched line length commanded by the winch (winch.mode 1)",
                  minimum=0.0)
        self.real("current.velocity", I, [0.0] * 3, "m/s", "Current velocity at the surface", frame="NED", size=3)
        # outputs: the end loads depend on the end inputs within a step (the end nodes follow them)
        ft = END_INPUTS
        self.real("end_a.force", O, None, "N", "Force the line exerts on end A", frame="NED", size=3, depends_on=ft)
        self.real("end_b.force", O, None, "N", "Force the line exerts on end B", frame="NED", size=3, depends_on=ft)
        self.real("end_a.moment", O, None, "N.m", "Moment the line exerts on end A (clamped bending, torsion)",
                  frame="NED", size=3, depends_on=ft)
        self.real("end_b.moment", O, None, "N.m", "Moment the line exerts on end B (clamped bending, torsion)",
                  frame="NED", size=3, depends_on=ft)
        self.real("end_a.tension", O, None, "N", "Tension of the element at end A", depends_on=ft)
        self.real("end_b.tension", O, None, "N", "Tension of the element at end B", depends_on=ft)
        self.real("tip.position", O, None, "m", "Position of end B (moves on its own when end B is free)",
                  frame="NED", size=3)
        self.real("tip.velocity", O, None, "m/s", "Velocity of end B", frame="NED", size=3)
        self.real("winch.tension", O, None, "N", "Magnitude of the force the line exerts on the winch end (a load "
                                                  "cell's reading; 0 without a winch)", depends_on=ft)
        self.real("line_length", O, None, "m", "Present unstretched length")
        self.real("line_mass", O, None, "kg", "Present mass of the line (mass per length x unstretched length)")
        self.real("segment_count", O, None, "1", "Present number of elements (changes with the winch)")
        self.real("twist_rate", O, None, "rad/m", "Uniform twist rate (0 unless both ends hold the twist)",
                  depends_on=ft)
        self.real("max_tension", O, None, "N", "Largest element tension", depends_on=ft)
        self.real("slack_fraction", O, None, "1", "Fraction of elements carrying no tension", depends_on=ft)

    # ------------------------------------------------------------------ set-up
    def _table(self) -> tuple:
        text = str(self.v["tension_strain"]).strip()
        if not text:
            return ()
        rows = [r.replace(",", " ").split() for r in text.split(";") if r.strip()]
        if any(len(r) != 2 for r in rows):
            raise ValueError("each row needs a strain and a tension")
        return tuple(tuple(float(x) for x in r) for r in rows)

    def _params(self) -> LineParams:
        v = self.v
        return LineParams(tension_strain=self._table(), length=v["length"], diameter=v["diameter"],
                          mass_per_length=v["mass_per_length"],
                          EA=v["EA"], damping=v["damping"], EI=v["EI"], GJ=v["GJ"],
                          bending_damping=v["bending_damping"], compression=v["compression"],
                          Cdn=v["drag_normal"], Cdt=v["drag_tangential"], Can=v["added_mass_normal"],
                          Cat=v["added_mass_tangential"], rho_water=v["water_density"], g=v["gravity"],
                          kBot=v["seabed.stiffness"], cBot=v["seabed.damping"], friction=v["seabed.friction"])

    def check_parameters(self):
        v, problems = self.v, []
        for name in ("length", "diameter", "mass_per_length", "EA"):
            if not v[name] > 0.0:
                problems.append((name, v[name], "must be positive"))
        if problems:
            return problems
        try:
            self._table()
        except ValueError:
            return [("tension_strain", self.v["tension_strain"], "must be 'strain tension; strain tension; ...'")]
        problems += [(name, value, why) for name, value, why in self._params().check()]
        problems += check_sea(v)
        span = float(np.linalg.norm(v["end_b.position"] - v["end_a.position"]))
        if not v["end_b.free"] and span > v["length"] * 1.05:
            problems.append(("length", v["length"], f"is more than 5 % shorter than the {span:.3f} m between the ends"))
        if v["end_b.free"] and int(v["winch.end"]) == 2:
            problems.append(("winch.end", 2, "a free end B cannot carry the winch; put it at end A (1)"))
        if int(v["winch.end"]) and int(v["winch.mode"]) == 1 and not v["winch.length"] > 0.0:
            problems.append(("winch.length", v["winch.length"], "must be positive when the winch commands the length"))
        if 0.0 < v["max_substep"] < MIN_SUBSTEP:
            problems.append(("max_substep", v["max_substep"], f"must be 0 (the default) or at least {MIN_SUBSTEP:g} s"))
        scheme = SCHEMES[int(v["solver.scheme"])]
        if scheme != "implicit":
            # the explicit schemes' limit, one element's axial mode: 2 / omega = l sqrt(m' / EA)
            limit = v["length"] / int(v["n_segments"]) * math.sqrt(v["mass_per_length"] / v["EA"])
            if EXPLICIT_SAFETY[scheme] * limit < MIN_SUBSTEP:
                problems.append(("solver.scheme", int(v["solver.scheme"]), f"explicit: this line needs sub-steps below "
                                 f"{limit:.3g} s (stability); use the implicit scheme (0) or fewer n_segments"))
        return problems

    def _current_profile(self):
        a, depth = self.v["current.profile_exponent"], self.v["seabed.depth"]
        if a == 0.0 or not math.isfinite(depth) or depth <= 0.0:
            return None
        z = np.linspace(0.0, depth, 21)
        return np.column_stack([z, np.outer(np.maximum(1.0 - z / depth, 0.0) ** a, self.v["current.velocity"])])

    def initialize_model(self) -> None:
        v = self.v
        free = bool(v["end_b.free"])
        self.line = Line(self._params(), v["end_a.position"].copy(), v["end_b.position"].copy(),
                         int(v["n_segments"]), v["seabed.depth"], current=v["current.velocity"].copy(),
                         scheme=SCHEMES[int(v["solver.scheme"])], substep=v["max_substep"] or None,
                         theta=v["solver.theta"], clamped_a=bool(v["end_a.clamped"]),
                         clamped_b=bool(v["end_b.clamped"]), swivel_a=bool(v["end_a.swivel"]),
                         swivel_b=bool(v["end_b.swivel"]), free_b=free, tip_mass=v["end_b.mass"],
                         winch_end=WINCH_ENDS[int(v["winch.end"])], current_profile=self._current_profile(),
                         sea=build_sea(v), static_init=False, attitude_a=bool(v["end_a.body_attitude"]),
                         attitude_b=bool(v["end_b.body_attitude"]))
        if self.line.scheme != "implicit" and v["max_substep"] > 0.0:
            self.line.substep = self.stable_substep(v["max_substep"], self.line.dt_stable,
                                                    EXPLICIT_SAFETY[self.line.scheme],
                                                    "the line's highest axial and bending mode (explicit scheme)")
        self._apply_inputs(0.0)
        self.line.static_equilibrium()
        self.line.reset_twist()
        if v["start_moving"]:
            self.line.start_moving()
        self._applied_version = self.input_version

    def _apply_inputs(self, h: float, changed: set[str] | None = None, translation: bool = True) -> None:
        """Hand the inputs to the line.  ``changed``: the input groups set since the last step;
        the ends' positions and the bodies' attitudes, which the step carried on with their
        velocities, are taken from the inputs only if set since (None: all inputs).
        ``translation`` False: not the ends' positions and velocities nor the winch (between steps:
        state)."""
        v, line = self.v, self.line

        def given(name):
            return changed is None or name in changed

        line.current = v["current.velocity"].copy()
        if line.current_profile is not None:
            line.current_profile = self._current_profile()
        if translation:
            line.set_ends(v["end_a.position"] if given("end_a.position") else line.r[0], v["end_a.velocity"],
                          v["end_b.position"] if given("end_b.position") else line.r[-1],
                          v["end_b.velocity"])   # copies
        line.set_end_tangents(v["end_a.tangent"], v["end_b.tangent"])
        line.set_end_twist(v["end_a.twist"], v["end_b.twist"])
        if v["end_a.body_attitude"] or v["end_b.body_attitude"]:
            line.set_end_attitudes(_matrix(v["end_a.quaternion"]) if given("end_a.quaternion") else line._R["a"],
                                   v["end_a.angular_velocity"],
                                   _matrix(v["end_b.quaternion"]) if given("end_b.quaternion") else line._R["b"],
                                   v["end_b.angular_velocity"])
        if line.free_b:
            line.set_tip_force(v["end_b.external_force"])
        if line.winch_end is not None and translation:
            if int(v["winch.mode"]) == 1:
                if h > 0.0:
                    line.set_payout((v["winch.length"] - line.length) / h)
            else:
                line.set_payout(v["winch.speed"])

    # ------------------------------------------------------------------ stepping and outputs
    def _work_drivers(self) -> str:
        """The parameters the work of a step grows with (for the bound on it)."""
        v, line = self.v, self.line
        named = [f"n_segments = {int(v['n_segments'])} ({line.N} now)",
                 f"{line.scheme} sub-steps of {line.substep:.3g} s (max_substep = {v['max_substep']:g} s)"]
        named += [f"{name} = {v[name]:g}" for name in ("EI", "bending_damping", "GJ") if v[name] > 0.0]
        return ", ".join(named)

    def step_model(self, t: float, h: float) -> None:
        v, line = self.v, self.line
        line.t = t
        # the kernel that takes the step writes its end loads straight into the outputs (bound
        # again when a restored state brought new arrays)
        line.bind_step_outputs(v["end_a.force"], v["end_b.force"], v["tip.position"], v["tip.velocity"])
        self._apply_inputs(h, self.changed_inputs)
        bounded_line_step(self.line, h, self._work_drivers)
        self._applied_version = self.input_version
        if self.line.length_limited and not self._limit_warned:
            self._limit_warned = True
            self.warning(f"winch: line length held at {self.line.length:.3f} m (limit of the discretisation)")

    def update_outputs(self) -> None:
        v, line = self.v, self.line
        if self._applied_version != self.input_version:
            # inputs set since the step (a master's feedthrough refresh) act now, but the ends'
            # translation and the winch, which the step carried (module docstring)
            self._apply_inputs(0.0, self.changed_inputs, translation=False)
            self._applied_version = self.input_version
            line.step_outputs = None        # the step's loads are not those of these inputs
        summary = line.step_outputs
        if summary is not None:
            # the step's kernel call wrote the loads of the state it ended in (forces, end B's
            # motion) into the outputs; nothing has changed since (a line it steps has no bending:
            # no moments, no twist)
            line.step_outputs = None
            Fa, Fb = v["end_a.force"], v["end_b.force"]
            v["end_a.moment"][:] = 0.0
            v["end_b.moment"][:] = 0.0
            v["end_a.tension"], v["end_b.tension"], v["max_tension"], v["slack_fraction"] = summary.tolist()
            tau = 0.0
        else:
            # one evaluation for forces, moments, twist and tensions (without bending only the end
            # nodes besides the tensions): the outputs are the end loads, not every node's force
            Fa, Fb, ma, mb, tau, tensions = line.end_loads()
            v["end_a.force"][:] = Fa
            v["end_b.force"][:] = Fb
            v["end_a.moment"][:] = ma
            v["end_b.moment"][:] = mb
            v["end_a.tension"] = float(tensions[0])
            v["end_b.tension"] = float(tensions[-1])
            v["tip.position"][:] = line.r[-1]
            v["tip.velocity"][:] = line.v[-1]
            v["max_tension"] = float(tensions.max())
            v["slack_fraction"] = np.count_nonzero(tensions <= 0.0) / tensions.size
        we = line.winch_end
        # what a load cell at the winch reads: the line's force on the winch end (end element
        # tension plus the end node's share of weight, drag, ...)
        if we is None:
            v["winch.tension"] = 0.0
        else:
            Fw = Fa if we == "a" else Fb
            v["winch.tension"] = math.sqrt(float(Fw.dot(Fw)))     # np.linalg.norm's arithmetic, less overhead
        v["line_length"] = line.length
        v["line_mass"] = line.mass
        v["segment_count"] = float(line.N)
        v["twist_rate"] = tau

    def internal_substep(self) -> float | None:
        return None if self.line is None else self.line.substep

    def model_state_problem(self, model: dict) -> str | None:
        return line_state_problem(model["line"]) if "line" in model else None

    def get_model_state(self) -> dict:
        return {} if self.line is None else {"line": self.line.get_state()}

    def set_model_state(self, state: dict) -> None:
        if "line" in state:
            if self.line is None:
                self.initialize_model()
            self.line.set_state(state["line"])
            # the restored line holds the restored inputs' ends: nothing to re-apply
            self._applied_version = self.input_version
        else:
            self.line = None



def _matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrix of a quaternion input; all zero (a source with no output yet): level."""
    n = float(np.dot(q, q))
    return quat_to_matrix(q / math.sqrt(n)) if n > 1e-12 else np.eye(3)
