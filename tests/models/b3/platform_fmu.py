"""B3 platform FMU (digest §7.5, FMU-P): the Ampelmann top plate as a roll inertia m1 with the motion
controller (k_P, c_D, reference x_R = 0) and the serial spring/damper (k_S, c_S) to the boat.

    m1 x1'' = -(k_P + k_S) x1 - (c_D + c_S) x1' + k_S x2 + c_S x2'

x1 = ``angle``, x2 = ``boat_angle`` (input). Outputs the torque the platform puts on the boat,
``torque`` = (k_P + k_S) x1 - k_S x2 + (c_D + c_S) x1' - c_S x2' (direct feedthrough of the boat
inputs), and, for the state-exchange split, ``coupling_torque`` = (k_P + k_S) x1 + (c_D + c_S) x1' (the
part of it that depends on the platform only, no feedthrough; the boat FMU then carries -k_S x2 - c_S x2'
itself through its ``coupling.*`` parameters). Angles are small roll angles in rad,
positive the same way for platform and boat.

The 2-state linear ODE is integrated exactly over a doStep with the inputs held constant (matrix
exponential of the augmented matrix, cached per step size), so a co-simulation of this FMU equals the
discrete reference map of tests/models/b3/model.py up to round-off. Start values: Table 3-3 of the thesis.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.linalg import expm

from fmus._base import Fmi2Slave

DEG = math.pi / 180.0
INPUTS = ("boat_angle", "boat_rate")


class B3Platform(Fmi2Slave):

    description = ("B3 benchmark: Ampelmann platform roll inertia with PD motion control to the inertial "
                   "reference and a serial spring/damper to the boat (thesis eq. (3-8), x_R = 0)")
    default_stop_time = 30.0
    default_step_size = 0.01

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.x: np.ndarray | None = None          # [angle, rate]
        self._A = np.zeros((2, 2))
        self._B = np.zeros((2, 2))
        self._steps: dict[float, tuple[np.ndarray, np.ndarray]] = {}
        P, I, O = "parameter", "input", "output"
        self.real("inertia", P, 20.0, "kg.m2", "Roll inertia of the platform m1", minimum=0.0)
        self.real("control.stiffness", P, 755.63, "N.m/rad",
                  "Proportional control stiffness k_P to the inertial reference", minimum=0.0)
        self.real("control.damping", P, 3.37, "N.m.s/rad",
                  "Derivative control damping c_D to the inertial reference", minimum=0.0)
        self.real("serial.stiffness", P, 0.0, "N.m/rad", "Serial stiffness k_S between platform and boat",
                  minimum=0.0)
        self.real("serial.damping", P, 63.0, "N.m.s/rad", "Serial damping c_S between platform and boat",
                  minimum=0.0)
        self.real("initial.angle", P, -0.37 * DEG, "rad", "Initial platform roll angle")
        self.real("initial.rate", P, 23.25 * DEG, "rad/s", "Initial platform roll rate")
        self.real("boat_angle", I, 0.0, "rad", "Boat roll angle x2")
        self.real("boat_rate", I, 0.0, "rad/s", "Boat roll rate x2'")
        self.real("angle", O, None, "rad", "Platform roll angle x1")
        self.real("rate", O, None, "rad/s", "Platform roll rate x1'")
        self.real("torque", O, None, "N.m",
                  "Torque of the platform on the boat, (k_P+k_S) x1 - k_S x2 + (c_D+c_S) x1' - c_S x2'",
                  depends_on=INPUTS)
        self.real("coupling_torque", O, None, "N.m",
                  "Platform-side part of the torque on the boat, (k_P+k_S) x1 + (c_D+c_S) x1' "
                  "(for the state-exchange split, where the boat carries -k_S x2 - c_S x2' itself)")

    def check_parameters(self):
        if not self.v["inertia"] > 0.0:
            return [("inertia", self.v["inertia"], "must be positive")]
        return []

    def initialize_model(self) -> None:
        v = self.v
        m, k, c = v["inertia"], v["control.stiffness"] + v["serial.stiffness"], \
            v["control.damping"] + v["serial.damping"]
        self._A = np.array([[0.0, 1.0], [-k / m, -c / m]])
        self._B = np.array([[0.0, 0.0], [v["serial.stiffness"] / m, v["serial.damping"] / m]])
        self._steps = {}
        self.x = np.array([v["initial.angle"], v["initial.rate"]])

    def _step_matrices(self, h: float) -> tuple[np.ndarray, np.ndarray]:
        """x(t+h) = Phi x(t) + Gamma u with u constant: expm([[A, B], [0, 0]] h) = [[Phi, Gamma], [0, I]]."""
        if h not in self._steps:
            if len(self._steps) > 16:
                self._steps.clear()
            aug = np.zeros((4, 4))
            aug[:2, :2], aug[:2, 2:] = self._A, self._B
            E = expm(aug * h)
            self._steps[h] = (E[:2, :2].copy(), E[:2, 2:].copy())
        return self._steps[h]

    def step_model(self, t: float, h: float) -> None:
        Phi, Gamma = self._step_matrices(h)
        u = np.array([self.v["boat_angle"], self.v["boat_rate"]])
        self.x = Phi @ self.x + Gamma @ u

    def update_outputs(self) -> None:
        v, x = self.v, self.x
        k, c = v["control.stiffness"] + v["serial.stiffness"], v["control.damping"] + v["serial.damping"]
        v["angle"], v["rate"] = float(x[0]), float(x[1])
        v["coupling_torque"] = float(k * x[0] + c * x[1])
        v["torque"] = float(v["coupling_torque"] - v["serial.stiffness"] * v["boat_angle"]
                            - v["serial.damping"] * v["boat_rate"])

    def get_model_state(self) -> dict:
        return {} if self.x is None else {"x": self.x.copy()}

    def set_model_state(self, state: dict) -> None:
        if "x" in state:
            self.initialize_model()      # the restored parameters may differ from this instance's
            self.x = np.array(state["x"], dtype=float)
        else:
            self.x = None
