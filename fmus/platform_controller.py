"""PlatformController FMU: the two controllers of de Zeeuw's motion-compensation platform, selectable by
``method``: 0 the quasi-static PID (components.platform_control), 1 the NMPC (components.nmpc).

It measures the ship's motion (the Ship FMU's ``position``, ``euler``, ``velocity_body``,
``angular_velocity_body``) and the legs (the MotionPlatform FMU's ``leg<k>.length`` and ``leg<k>.rate``; the
platform's pose by forward kinematics, Newton-Raphson warm-started from the last one) and commands
the three cylinder forces (``leg<k>.force_command`` to the MotionPlatform FMU). It is a sampled controller
with its own clock: it samples the measurements every ``sample_period`` (the thesis' 50 Hz) from the
start time, and each command, with the estimates and NMPC figures it came with, is output one sample
period later (the period is the computation delay), whatever the master's communication step; a
sample within a communication step takes the inputs at the step's start. No output depends on an
input at once (no direct feedthrough): set between steps, an input is sampled at the next sample
instant, and its command comes out a period after that. With the communication step equal to the
period, the command computed from the measurements at a communication point is output at the next.
The NMPC's model needs the ship's data (``vessel_file``, the Ship FMU's) and the platform's (the same
``linkage.*``, ``cylinder.*``, ``platform.mass`` as the MotionPlatform FMU). Every variable is in
docs/interfaces.md.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from components.nmpc import NMPC, MPCSettings, ShipPlatformModel, euler_matrix, platform_hrp
from components.platform import forward_kinematics_jacobian, leg_jacobian
from components.platform_control import QuasiStaticPID
from components.radiation import fit_radiation
from components.vessel_data import load_vessel
from fmus._base import MAX_SUBSTEPS_PER_STEP, Fmi2Slave
from fmus._platform import check_platform, declare_platform, geometry, inertia

PID_GAINS = ("P_mean", "P_diff", "I_mean", "I_diff", "D_mean", "D_diff")
GAIN_UNITS = {"P": "N/m", "I": "N/m", "D": "N.s/m"}
# The vessel data and its radiation fit (A_inf), by file and order, as the Ship FMU keeps them: the fit
# takes 1.3 s (the motion platform's barge), and an NMPC instance built the model three times (twice for
# the outputs read in initialisation mode, once at exitInitializationMode), every instance in a process anew
_SHIP_MODELS: dict = {}


def _ship_model(path: Path, max_order: int):
    key = (str(path.resolve()), path.stat().st_mtime_ns, max_order)
    if key not in _SHIP_MODELS:
        vessel = load_vessel(path)
        _SHIP_MODELS[key] = vessel, fit_radiation(vessel.omega, vessel.added_mass, vessel.damping,
                                                  max_order=max_order)
    return _SHIP_MODELS[key]


class PlatformController(Fmi2Slave):

    description = ("Controller of the heave-roll-pitch platform: the thesis' quasi-static PID or its NMPC "
                   "(nonlinear ship + platform prediction model, RK4, damped Gauss-Newton)")
    default_stop_time = 60.0
    default_step_size = 0.02

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        P, I, O = "parameter", "input", "output"
        self.integer("method", P, 1, "0: quasi-static PID (thesis 3.1), 1: NMPC (thesis 3.2)", minimum=0, maximum=1)
        declare_platform(self)
        self.string("vessel_file", P, "", "The ship's vessel data (.nc), as given to the Ship FMU: the NMPC's "
                                          "prediction model")
        self.integer("radiation.max_order", P, 4, "As the Ship FMU's (A_inf of the fit)", minimum=1, maximum=10)
        self.real("deck.location", P, [0.0, 0.0, -4.0], "m", "The deck origin (the platform's base, the Ship's "
                  "hardpoint carrying it) relative to the ship's CO", frame="body", size=3)
        self.real("gravity", P, 9.81, "m/s2", "Acceleration of gravity", minimum=0.0)
        self.real("sample_period", P, 0.02, "s", "The controller's sample period (the thesis' 50 Hz): measurements "
                  "sampled every period from the start time, each command output one period later", minimum=0.0)
        for g in PID_GAINS:
            self.real(f"pid.{g}", P, getattr(QuasiStaticPID, g), GAIN_UNITS[g[0]],
                      f"Quasi-static PID gain {g} (the thesis' value; per leg, on leg-length errors)", minimum=0.0)
        d = MPCSettings()
        self.integer("nmpc.horizon", P, d.horizon, "Prediction steps N", minimum=1, maximum=50)
        self.real("nmpc.dt", P, d.dt, "s", "Prediction step (RK4)", minimum=0.0)
        self.real("nmpc.P", P, d.P, "1", "Weights of the platform's inertial heave (1/m2), roll and pitch "
                                         "(1/rad2) errors", size=3, minimum=0.0)
        self.real("nmpc.Q", P, d.Q, "1", "Weight of the force increments (1/MN2)", minimum=0.0)
        self.real("nmpc.lambda_gn", P, d.lambda_gn, "1", "Damping of the Gauss-Newton steps", minimum=0.0)
        self.real("nmpc.tolerance", P, d.tol, "1", "Gauss-Newton stops when |J^T r| falls below this", minimum=0.0)
        self.integer("nmpc.max_iterations", P, d.max_iter, "Gauss-Newton iterations per control step",
                     minimum=1, maximum=100)
        self.boolean("nmpc.hot_start", P, d.hot_start, "Start from the previous solution shifted by one step")
        # inputs
        self.real("ship.position", I, [0.0] * 3, "m", "Measured position of the ship's CO", frame="NED", size=3)
        self.real("ship.euler", I, [0.0] * 3, "rad", "Measured roll, pitch, yaw (zyx) of the ship", size=3)
        self.real("ship.velocity_body", I, [0.0] * 3, "m/s", "Measured velocity of CO", frame="body", size=3)
        self.real("ship.angular_velocity_body", I, [0.0] * 3, "rad/s", "Measured angular velocity", frame="body",
                  size=3)
        for k in (1, 2, 3):
            self.real(f"leg{k}.length", I, 6.0, "m", f"Measured length of leg {k}")
            self.real(f"leg{k}.rate", I, 0.0, "m/s", f"Measured extension rate of leg {k}")
        self.real("setpoint", I, [0.0] * 3, "1", "What to hold: the platform origin's inertial heave relative to "
                  "where it is at the start (m, NED down), and the platform's inertial roll and pitch (rad; 0: the "
                  "tower upright)", size=3)
        # outputs
        for k in (1, 2, 3):
            self.real(f"leg{k}.force_command", O, None, "N", f"Force command of cylinder {k}")
        self.real("platform.hrp", O, None, "1", "Estimated inertial heave (m, NED down), roll and pitch (rad) of the "
                  "platform", size=3)
        self.real("platform.x", O, None, "1", "Estimated heave (m), roll, pitch (rad) relative to the deck (forward "
                  "kinematics)", size=3)
        self.real("nmpc.alpha", O, None, "1", "Suboptimality estimate alpha = 1 - l_N / l_1 of the last solution "
                  "(NMPC; 1 for the PID)")
        self.real("nmpc.iterations", O, None, "1", "Gauss-Newton iterations of the last solution (NMPC)")
        self.real("nmpc.cost", O, None, "1", "Cost of the last solution (NMPC)")

    # ------------------------------------------------------------------ build

    def _vessel_path(self) -> Path:
        path = Path(self.v["vessel_file"])
        if not path.is_absolute() and self.resources and (Path(self.resources) / path).exists():
            path = Path(self.resources) / path
        return path

    def check_parameters(self):
        v = self.v
        problems = check_platform(v)
        if not v["sample_period"] > 0.0:
            problems.append(("sample_period", v["sample_period"], "must be positive"))
        if v["method"] == 1:
            path = self._vessel_path()
            if not v["vessel_file"] or not path.is_file():
                problems.append(("vessel_file", v["vessel_file"], "the NMPC needs the ship's vessel data file"))
            if not v["nmpc.dt"] > 0.0:
                problems.append(("nmpc.dt", v["nmpc.dt"], "must be positive"))
        return problems

    def initialize_model(self) -> None:
        v = self.v
        self.geo, self.inertia = geometry(v), inertia(v)
        self.x = np.asarray(v["initial.x"], float).copy()
        self.hardpoint = np.asarray(v["deck.location"], float).copy()
        self.pid = QuasiStaticPID(self.geo, **{g: v[f"pid.{g}"] for g in PID_GAINS})
        self.mpc = None
        if v["method"] == 1:
            vessel, rad = _ship_model(self._vessel_path(), int(v["radiation.max_order"]))
            model = ShipPlatformModel(vessel.MRB + rad.A_inf, vessel.MRB, vessel.restoring, self.hardpoint,
                                      self.inertia, self.geo, v["gravity"])
            settings = MPCSettings(horizon=int(v["nmpc.horizon"]), dt=v["nmpc.dt"], P=v["nmpc.P"].copy(),
                                   Q=v["nmpc.Q"], lambda_gn=v["nmpc.lambda_gn"], tol=v["nmpc.tolerance"],
                                   max_iter=int(v["nmpc.max_iterations"]), hot_start=bool(v["nmpc.hot_start"]),
                                   f_min=v["cylinder.force_min"], f_max=v["cylinder.force_max"])
            self.mpc = NMPC(model, settings)
        state = self._state()
        self.setpoint = self._hrp(state) * np.array([1.0, 0.0, 0.0])    # the start heave; upright
        self.command = self._static_forces(self.x)       # the last command computed
        self.pid.precharge(self.command)
        self.alpha, self.iterations, self.cost = 1.0, 0.0, 0.0
        self.samples = 0                # samples taken; the next is at start + samples * sample_period
        self.start = self.time
        self.pending: list[list] = []   # [release time, outputs] of the commands computed, not out yet
        self.shown = self._sampled(state)
        self._outputs()

    def _static_forces(self, x: np.ndarray) -> np.ndarray:
        """Leg forces that hold the platform at x on a level ship at rest: J^T f = -tau_gravity."""
        m, g = self.inertia.mass, self.v["gravity"]
        rho = np.array([[1, 0, 0], [0, math.cos(x[1]), -math.sin(x[1])], [0, math.sin(x[1]), math.cos(x[1])]]) @ \
            np.array([[math.cos(x[2]), 0, math.sin(x[2])], [0, 1, 0], [-math.sin(x[2]), 0, math.cos(x[2])]]) @ \
            self.inertia.cg
        e2 = np.array([0.0, math.cos(x[1]), math.sin(x[1])])
        grav = m * g * np.array([0.0, 0.0, 1.0])
        tau = np.array([grav[2], np.cross([1.0, 0.0, 0.0], rho) @ grav, np.cross(e2, rho) @ grav])
        return np.linalg.solve(leg_jacobian(x, self.geo).T, -tau)

    # ------------------------------------------------------------------ measurements

    def _state(self) -> np.ndarray:
        """The NMPC's state from the measurements: ship pose and body velocity, the platform's pose
        (forward kinematics) and rates (J^-1 ell')."""
        v = self.v
        self.x, _, J = forward_kinematics_jacobian(self._legs("length"), self.geo, self.x, max_iter=20, tol=1e-9)
        xd = np.linalg.solve(J, self._legs("rate"))
        return np.concatenate([v["ship.position"], v["ship.euler"], v["ship.velocity_body"],
                               v["ship.angular_velocity_body"], self.x, xd])

    def _legs(self, what: str) -> np.ndarray:
        return np.array([self.v[f"leg{k}.{what}"] for k in (1, 2, 3)])

    def _hrp(self, state: np.ndarray) -> np.ndarray:
        return platform_hrp(state[None], self.hardpoint)[0]

    def _deck_heave(self, state: np.ndarray) -> float:
        R = euler_matrix(state[None, 3:6])[0]
        return float(state[2] + R[2].dot(self.hardpoint))

    # ------------------------------------------------------------------ stepping and outputs

    def internal_substep(self) -> float | None:
        # a sample is the unit of a step's work (for the bound on one doStep's, fmus/_base.py)
        return self.v["sample_period"]

    @property
    def max_substeps_per_step(self) -> int:
        # an NMPC sample solves an optimal control problem (tens of ms): 100 (2 s at 50 Hz)
        return 100 if self.v.get("method") == 1 else MAX_SUBSTEPS_PER_STEP

    def step_model(self, t: float, h: float) -> None:
        period = self.v["sample_period"]
        end = t + h
        tol = 1e-9 * max(1.0, abs(end))      # a sample at a communication point belongs to the step it starts
        while self.start + self.samples * period < end - tol:
            self.samples += 1
            state = self._state()            # the inputs at the step's start, held over the step
            self._control(state, period)
            self.pending.append([self.start + self.samples * period, self._sampled(state)])
        while self.pending and self.pending[0][0] <= end + tol:
            self.shown = self.pending.pop(0)[1]
        self._outputs()

    def _control(self, state: np.ndarray, period: float) -> None:
        """One sample: the command from the measured ``state``."""
        v = self.v
        setpoint = self.setpoint + v["setpoint"]
        if v["method"] == 0:
            self.command = self.pid.command(self._deck_heave(state), state[3], state[4], setpoint, self._legs("length"),
                                            period)
            self.alpha, self.iterations, self.cost = 1.0, 0.0, 0.0
        else:
            sol = self.mpc.solve(state, self.command, setpoint)
            self.command = sol.forces
            self.alpha, self.iterations, self.cost = sol.alpha, float(sol.iterations), sol.cost

    def _sampled(self, state: np.ndarray) -> list[float]:
        """The outputs of one sample: command, estimates, NMPC figures (as output, in order)."""
        return [*self.command.tolist(), *self._hrp(state).tolist(), *self.x.tolist(), float(self.alpha),
                float(self.iterations), float(self.cost)]

    def _outputs(self) -> None:
        v, out = self.v, self.shown
        for k in range(3):
            v[f"leg{k + 1}.force_command"] = out[k]
        v["platform.hrp"][:] = out[3:6]
        v["platform.x"][:] = out[6:9]
        v["nmpc.alpha"], v["nmpc.iterations"], v["nmpc.cost"] = out[9:12]

    def update_outputs(self) -> None:
        pass                     # outputs are written by doStep (a sampled controller, no feedthrough)

    def get_model_state(self) -> dict:
        if not hasattr(self, "pid"):
            return {}
        return {"x": self.x.copy(), "command": self.command.copy(), "setpoint": self.setpoint.copy(),
                "integral": self.pid.integral.copy(),
                "previous": None if self.pid.previous is None else self.pid.previous.copy(), "alpha": self.alpha,
                "iterations": self.iterations,
                "cost": self.cost, "delta": None if self.mpc is None else self.mpc.delta.copy(),
                "samples": self.samples, "start": self.start, "pending": [[t, list(o)] for t, o in self.pending],
                "shown": list(self.shown)}

    def set_model_state(self, state: dict) -> None:
        if not state:
            return
        if not hasattr(self, "pid"):
            self.check_parameters()
            self.initialize_model()
        self.x, self.command = np.array(state["x"], float), np.array(state["command"], float)
        self.setpoint, self.pid.integral = np.array(state["setpoint"], float), np.array(state["integral"], float)
        self.pid.previous = None if state["previous"] is None else np.array(state["previous"], float)
        self.alpha, self.iterations, self.cost = state["alpha"], state["iterations"], state["cost"]
        if self.mpc is not None and state["delta"] is not None:
            self.mpc.delta = np.array(state["delta"], float)
        self.samples, self.start = int(state["samples"]), float(state["start"])
        self.pending = [[float(t), [float(x) for x in o]] for t, o in state["pending"]]
        self.shown = [float(x) for x in state["shown"]]
