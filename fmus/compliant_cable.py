"""CompliantCable FMU: the interface of the Open Simulation Platform's compliant-constraint cable
(a chain of rigid cylinders held by AGX-style compliant constraints, virtual winches at both ends)
on our lumped-mass line (components.line); see docs/compliant_cable.md.

The interface is the OSP cable's, name for name: ``posA``, ``posB``, ``velA``, ``velB`` (the end
connection points), ``retractedLengthA/B`` and ``retractedSpeedA/B`` (the winches) in; ``forceA``,
``forceB`` out; ``Length``, ``numElements``, the (alpha, beta, epsilon) triples of the axial (N),
bending (M) and torsion (T) constraints, ``Weight`` and ``Radius``.  The triples become stiffness and
damping of the line by the document's relations, per element of length l = Length / numElements:

    axial:   k = beta_N^2 / epsilon_N [N/m],  EA = k l;           c = 2 alpha_N / epsilon_N [N s/m]
    bending: M = beta_M^2 / epsilon_M sin(theta / 2) ~ beta_M^2 / (2 epsilon_M) theta:  EI = beta_M^2 l / (2 epsilon_M)
    torsion: GJ = beta_T^2 l / (2 epsilon_T)

(E = beta^2 L / (epsilon N A), with 2 I and 2 J for bending and torsion, as the document writes
them).  The axial constraint between rigid cylinders could push as well as pull; the line goes
slack instead, as a wire paid out faster than its load falls does.  epsilon is an inverse mass
(1/kg, 1/(kg m^2)): the constraint is a spring beta^2 m_c and a
damper 2 alpha m_c on the effective mass m_c = 1/epsilon, damping ratio alpha / beta (alpha = beta
critical).  The bending damping is alpha_M l / epsilon_M [N m^2 s] (our spline's rate term); torsion
is quasi-static here, so alpha_T has no effect.

The free length is L_cable = Length - retractedLengthA - retractedLengthB: each winch's element
grows or shrinks at its end (split and merged at 1.6 and 0.4 nominal elements).  A retracted length
set since the last step is reached at the end of the step (as our Cable's ``winch.length``); a winch
driven by its speed alone (the length not set since) hauls in retractedSpeed h per step.

Frame: the platform's world frame, NED (x north, y east, z down, gravity +z) as the OSP marine
models (VesselFmu, PalfingerCrane) and ours; with ``zUp`` the world is x, y, z up (gravity -z), taken
to NED by a half turn about x: (x, y, z) -> (x, -y, -z), forces back the same way.  Beyond the
interface, defaulted so that a system file written for the OSP cable needs none of them: the
fluid (``waterDensity`` 0: in air), drag and added-mass coefficients, ``seabedDepth`` and
``gravity``.  ``forceA`` and ``forceB`` are the forces the cable exerts on the bodies at its ends.
The end motion and the winches are state, as in our Cable: over a step the ends move on with their
velocities and the winches with their speeds from the values given at the step's start, and the
outputs describe the end of the step (no direct feedthrough: fixed-step masters keep a stiff cable
and its bodies stable).
"""
from __future__ import annotations


import numpy as np

from components.line import Line, LineParams
from components.stability import MIN_SUBSTEP
from fmus._base import Fmi2Slave
from fmus._line_state import bounded_line_step, line_state_problem

_FLIP = np.array([1.0, -1.0, -1.0])         # z up <-> NED, a half turn about x


class CompliantCable(Fmi2Slave):

    description = ("Cable with the OSP compliant-constraint cable's interface (posA/posB in, forceA/forceB out, "
                   "(alpha, beta, epsilon) triples, virtual winches at both ends) on the lumped-mass line")
    default_stop_time = 60.0
    default_step_size = 0.01
    state_rows_vary = True     # the winches add and remove elements

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.line = None
        P, I, O = "parameter", "input", "output"
        self.real("Length", P, 100.0, "m", "Total length of the cable, winch drums included", minimum=0.0)
        self.integer("numElements", P, 50, "Number of cylinders over Length (element length Length / "
                                            "numElements)", minimum=2, maximum=2000)
        for c, what, unit in (("N", "axial", "1/kg"), ("M", "bending", "1/(kg.m2)"), ("T", "torsion", "1/(kg.m2)")):
            self.real(f"Alpha{c}", P, 20.0 if c == "N" else 0.0, "1/s",
                      f"Damping factor of the {what} constraint (alpha = beta: critical)", minimum=0.0)
            self.real(f"Beta{c}", P, 20.0 if c == "N" else 0.0, "1/s",
                      f"Rate of the {what} constraint towards equilibrium", minimum=0.0)
            self.real(f"Epsilon{c}", P, 1e-5 if c == "N" else 1.0, unit,
                      f"Compliance of the {what} constraint (the inverse of its effective "
                      f"{'mass' if c == 'N' else 'inertia'})", minimum=0.0)
        self.real("Weight", P, 10.0, "kg/m", "Mass per unit length", minimum=0.0)
        self.real("Radius", P, 0.02, "m", "Radius of the cylinders", minimum=0.0)
        # beyond the OSP interface
        self.boolean("zUp", P, False, "The world frame of posA/posB/velA/velB/forceA/forceB is z up (x, y, z up; "
                                      "gravity -z) instead of NED")
        self.real("gravity", P, 9.81, "m/s2", "Acceleration of gravity", minimum=0.0)
        self.real("waterDensity", P, 0.0, "kg/m3", "Density of the water the cable is in (0: in air)", minimum=0.0)
        self.real("dragNormal", P, 1.2, "1", "Normal drag coefficient (in water)", minimum=0.0)
        self.real("dragTangential", P, 0.0, "1", "Tangential drag coefficient (in water)", minimum=0.0)
        self.real("addedMassNormal", P, 1.0, "1", "Normal added-mass coefficient (in water)", minimum=0.0)
        self.real("seabedDepth", P, 1e6, "m", "Depth of a flat seabed below the origin (NED)")
        self.real("maxSubstep", P, 0.02, "s", "Largest internal sub-step of the line's implicit integrator",
                  minimum=MIN_SUBSTEP)
        # inputs (the OSP cable's)
        world = "the world frame (z up with zUp)"
        self.real("posA", I, [0.0, 0.0, 10.0], "m", f"Position of end connection A, {world}", size=3, frame="NED")
        self.real("posB", I, [0.0, 0.0, 0.0], "m", f"Position of end connection B, {world}", size=3, frame="NED")
        self.real("velA", I, [0.0] * 3, "m/s", f"Velocity of end connection A, {world}", size=3, frame="NED")
        self.real("velB", I, [0.0] * 3, "m/s", f"Velocity of end connection B, {world}", size=3, frame="NED")
        for e in "AB":
            self.real(f"retractedLength{e}", I, 0.0, "m", f"Length held by the virtual winch at end {e}",
                      minimum=0.0)
            self.real(f"retractedSpeed{e}", I, 0.0, "m/s", f"Retraction speed of the winch at end {e} (> 0 hauls in)")
        # outputs
        for e in "AB":
            self.real(f"force{e}", O, None, "N", f"Force the cable exerts on the body at end {e}, {world}", size=3,
                      frame="NED")

    # ------------------------------------------------------------------ the mapping
    def element_length(self) -> float:
        return self.v["Length"] / int(self.v["numElements"])

    def line_params(self, free_length: float) -> LineParams:
        """The document's relations (module docstring) as our line's stiffness and damping."""
        v, l = self.v, self.element_length()
        k_n = v["BetaN"] ** 2 / v["EpsilonN"]
        return LineParams(length=free_length, diameter=2.0 * v["Radius"], mass_per_length=v["Weight"], EA=k_n * l,
                          damping=2.0 * v["AlphaN"] / v["EpsilonN"] * l,
                          EI=v["BetaM"] ** 2 * l / (2.0 * v["EpsilonM"]),
                          GJ=v["BetaT"] ** 2 * l / (2.0 * v["EpsilonT"]),
                          bending_damping=v["AlphaM"] * l / v["EpsilonM"],
                          Cdn=v["dragNormal"], Cdt=v["dragTangential"], Can=v["addedMassNormal"], Cat=0.0,
                          rho_water=v["waterDensity"], g=v["gravity"], kBot=1e5, cBot=1e4, friction=0.5)

    def internal_substep(self) -> float | None:
        return self.v["maxSubstep"]

    def model_state_problem(self, model: dict) -> str | None:
        return line_state_problem(model["line"]) if "line" in model else None

    def check_parameters(self):
        v, problems = self.v, []
        for name in ("Length", "Weight", "Radius", "BetaN", "EpsilonN", "EpsilonM", "EpsilonT", "maxSubstep"):
            if not v[name] > 0.0:
                problems.append((name, v[name], "must be positive"))
        free = v["Length"] - v["retractedLengthA"] - v["retractedLengthB"]
        if not problems and not free > 0.0:
            problems.append(("Length", v["Length"], f"leaves no cable out of the winches (retracted "
                                                    f"{v['retractedLengthA'] + v['retractedLengthB']:g} m)"))
        if not problems:
            span = float(np.linalg.norm(v["posB"] - v["posA"]))
            if span > 1.05 * free:
                problems.append(("Length", v["Length"], f"leaves {free:.3f} m out of the winches, more than 5 % "
                                                        f"shorter than the {span:.3f} m between the ends"))
            problems += [(name, value, why) for name, value, why in self.line_params(free).check()]
        return problems

    # ------------------------------------------------------------------ model
    def _ned(self, name: str) -> np.ndarray:
        x = self.v[name]
        return x * _FLIP if self.v["zUp"] else x.copy()

    def initialize_model(self) -> None:
        v = self.v
        free = v["Length"] - v["retractedLengthA"] - v["retractedLengthB"]
        n = max(2, int(round(free / self.element_length())))
        # The constraints' dampers act on the effective mass 1 / epsilon; where that is far above the
        # elements' own mass their modes are far faster than a sub-step and must die in it (theta =
        # 1, backward Euler, as the SPOOK stepper of compliant constraints does), not ring at
        # -(1 - theta) / theta per sub-step; otherwise our Cable's theta = 0.6
        rate = 2.0 * v["AlphaN"] / v["EpsilonN"] / (v["Weight"] * self.element_length())
        theta = 1.0 if rate * v["maxSubstep"] > 10.0 else 0.6
        self.line = Line(self.line_params(free), self._ned("posA"), self._ned("posB"), n, v["seabedDepth"],
                         scheme="implicit", substep=v["maxSubstep"], theta=theta, winch_end="both",
                         static_init=False)
        # what the line's winches hold, as the inputs count it
        self._retracted = {"a": float(v["retractedLengthA"]), "b": float(v["retractedLengthB"])}
        self._apply(0.0, None)
        self.line.static_equilibrium()

    def _apply(self, h: float, changed: set[str] | None) -> None:
        """Hand the inputs to the line: the ends' positions set since the last step (all with
        ``changed`` None; the others where the step carried them), their velocities, and each
        winch's pay-out over the step of h (module docstring)."""
        v, line = self.v, self.line

        def given(name):
            return changed is None or name in changed

        line.set_ends(self._ned("posA") if given("posA") else line.r[0], self._ned("velA"),
                      self._ned("posB") if given("posB") else line.r[-1], self._ned("velB"))
        for end, e in (("a", "A"), ("b", "B")):
            speed = float(v[f"retractedSpeed{e}"])
            if h > 0.0:
                target = float(v[f"retractedLength{e}"]) if given(f"retractedLength{e}") else \
                    self._retracted[end] + speed * h
                line.set_payout((self._retracted[end] - target) / h, end)
            else:
                line.set_payout(-speed, end)

    def _work_drivers(self) -> str:
        """The parameters the work of a step grows with (for the bound on it)."""
        v = self.v
        named = [f"numElements = {int(v['numElements'])} ({self.line.N} out of the winches)",
                 f"maxSubstep = {v['maxSubstep']:g} s"]
        named += [f"{what} {name} = {v[name]:g}" for name, what in (("BetaM", "bending"), ("AlphaM", "bending damping"),
                                                                     ("BetaT", "torsion")) if v[name] > 0.0]
        return ", ".join(named)

    def step_model(self, t: float, h: float) -> None:
        self.line.t = t
        self._apply(h, self.changed_inputs)
        before = self.line.l.sum()
        paid = {end: self.line.payout[end] * h for end in ("a", "b")}
        bounded_line_step(self.line, h, self._work_drivers)
        # what the winches hold now (a length limit of the line holds back some of the pay-out)
        short = (before + sum(paid.values())) - self.line.l.sum()
        for end in ("a", "b"):
            self._retracted[end] -= paid[end] - (short * 0.5 if short else 0.0)

    def update_outputs(self) -> None:
        v, line = self.v, self.line
        loads = line.end_loads()
        flip = _FLIP if v["zUp"] else 1.0
        v["forceA"][:] = loads.force_a * flip
        v["forceB"][:] = loads.force_b * flip

    def get_model_state(self) -> dict:
        return {} if self.line is None else {"line": self.line.get_state(),
                                             "retracted": [self._retracted["a"], self._retracted["b"]]}

    def set_model_state(self, state: dict) -> None:
        if "line" in state:
            if self.line is None:
                self.initialize_model()
            self.line.set_state(state["line"])
            self._retracted = {"a": float(state["retracted"][0]), "b": float(state["retracted"][1])}
        else:
            self.line = None
