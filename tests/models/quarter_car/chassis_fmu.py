"""Quarter-car chassis FMU: the sprung mass with the suspension spring and damper.

    m_c z_c'' = -k_s (z_c - z_w) - c_s (z_c' - v_w),      z_w' = v_w

z_c, z_w are heights above the static equilibrium (m, up positive; gravity is balanced by the static
deflection and left out).  The wheel velocity v_w is the input (one side of the force/velocity power
bond); the chassis integrates it to the wheel position z_w its spring needs.  Output ``force`` is the
suspension force on the wheel, F = k_s (z_c - z_w) + c_s (z_c' - v_w) (up positive), so the power the
chassis gives the wheel is F v_w = input x output.

With ``wheel_position_input`` = 1 the chassis also takes the wheel height from input
``wheel_position_in`` at the start of every step (a plain connection beside the bond), so the height it
integrates cannot drift: held over steps of varying length, the velocity's integral drifts from the
wheel's height (with a fixed step the hold errors telescope), see docs/algorithms_benchmark.md.

F is evaluated with the wheel velocity held over the last step (the input value of that doStep):
no direct feedthrough is declared, so every master (ours, libcosim) reads the same value.  The
3-state linear ODE is integrated exactly with the input held (matrix exponential of the augmented
matrix), so the only error of a co-simulation is the coupling's.
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import expm

from fmus._base import Fmi2Slave


class QuarterCarChassis(Fmi2Slave):

    description = ("Quarter car: chassis (sprung mass) with suspension spring and damper; input wheel "
                   "velocity, output suspension force on the wheel")
    default_stop_time = 2.0
    default_step_size = 0.001

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.x: np.ndarray | None = None          # [z_c, v_c, z_w]
        self._A = np.zeros((3, 3))
        self._B = np.zeros((3, 1))
        self._steps: dict[float, tuple[np.ndarray, np.ndarray]] = {}
        P, I, O = "parameter", "input", "output"
        self.real("mass", P, 400.0, "kg", "Chassis (sprung) mass m_c", minimum=0.0)
        self.real("suspension.stiffness", P, 15.0e3, "N/m", "Suspension spring stiffness k_s", minimum=0.0)
        self.real("suspension.damping", P, 1.0e3, "N.s/m", "Suspension damping c_s", minimum=0.0)
        self.real("initial.position", P, 0.0, "m", "Initial chassis height above equilibrium")
        self.real("initial.velocity", P, 0.0, "m/s", "Initial chassis vertical velocity")
        self.real("initial.wheel_position", P, 0.0, "m", "Initial wheel height above equilibrium")
        self.integer("wheel_position_input", P, 0,
                     "1: at the start of every step take the wheel height from input wheel_position (then "
                     "integrate wheel_velocity over the step); 0: integrate wheel_velocity only",
                     minimum=0, maximum=1)
        self.real("wheel_velocity", I, 0.0, "m/s", "Wheel vertical velocity v_w (power bond with force)")
        self.real("wheel_position_in", I, 0.0, "m",
                  "Wheel height z_w, used when wheel_position_input = 1 (a plain connection, not in the bond)")
        self.real("force", O, None, "N", "Suspension force on the wheel, up positive (power bond with "
                  "wheel_velocity)")
        self.real("position", O, None, "m", "Chassis height z_c above equilibrium")
        self.real("velocity", O, None, "m/s", "Chassis vertical velocity")
        self.real("wheel_position", O, None, "m", "Wheel height as integrated by the chassis")

    def check_parameters(self):
        if not self.v["mass"] > 0.0:
            return [("mass", self.v["mass"], "must be positive")]
        return []

    def initialize_model(self) -> None:
        v = self.v
        m, k, c = v["mass"], v["suspension.stiffness"], v["suspension.damping"]
        self._A = np.array([[0.0, 1.0, 0.0], [-k / m, -c / m, k / m], [0.0, 0.0, 0.0]])
        self._B = np.array([[0.0], [c / m], [1.0]])
        self._steps = {}
        self.x = np.array([v["initial.position"], v["initial.velocity"], v["initial.wheel_position"]])

    def _step_matrices(self, h: float) -> tuple[np.ndarray, np.ndarray]:
        if h not in self._steps:
            if len(self._steps) > 64:
                self._steps.clear()
            aug = np.zeros((4, 4))
            aug[:3, :3], aug[:3, 3:] = self._A, self._B
            E = expm(aug * h)
            self._steps[h] = (E[:3, :3].copy(), E[:3, 3:].copy())
        return self._steps[h]

    def step_model(self, t: float, h: float) -> None:
        if self.v["wheel_position_input"]:
            self.x[2] = self.v["wheel_position_in"]
        Phi, Gamma = self._step_matrices(h)
        self.x = Phi @ self.x + Gamma @ np.array([self.v["wheel_velocity"]])

    def update_outputs(self) -> None:
        v, x = self.v, self.x
        v["position"], v["velocity"], v["wheel_position"] = float(x[0]), float(x[1]), float(x[2])
        v["force"] = float(v["suspension.stiffness"] * (x[0] - x[2])
                           + v["suspension.damping"] * (x[1] - v["wheel_velocity"]))

    def get_model_state(self) -> dict:
        return {} if self.x is None else {"x": self.x.copy()}

    def set_model_state(self, state: dict) -> None:
        if "x" in state:
            self.initialize_model()
            self.x = np.array(state["x"], dtype=float)
        else:
            self.x = None
