"""B3 boat FMU (digest §7.5, FMU-B): the boat as a roll inertia m2 on a hydrostatic spring k_H with
hydrodynamic damping c_H, driven by the torque of the platform.

    m2 x2'' = torque - (k_H + k_C) x2 - (c_H + c_C) x2'

x2 = ``angle``. Torque split (the default, k_C = c_C = 0): ``torque`` <- the platform's ``torque``.
State-exchange split: ``torque`` <- the platform's ``coupling_torque`` = (k_P + k_S) x1 + (c_D + c_S) x1'
and k_C = k_S, c_C = c_S (``coupling.*``), so the boat keeps the serial element's own-state terms
-k_S x2 - c_S x2' inside its integration (the block split of A_s, see tests/models/b3/model.py).

The outputs have no direct feedthrough. The 2-state linear ODE is integrated exactly over a doStep with
the input held constant (matrix exponential of the augmented matrix, cached per step size), so a
co-simulation of this FMU equals the discrete reference map of tests/models/b3/model.py up to round-off. Start
values: Table 3-3 of the thesis.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.linalg import expm

from fmus._base import Fmi2Slave

DEG = math.pi / 180.0


class B3Boat(Fmi2Slave):

    description = ("B3 benchmark: boat roll inertia with hydrostatic stiffness and hydrodynamic damping, "
                   "driven by the torque of the Ampelmann platform (thesis eq. (3-8))")
    default_stop_time = 30.0
    default_step_size = 0.01

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.x: np.ndarray | None = None          # [angle, rate]
        self._A = np.zeros((2, 2))
        self._B = np.zeros((2, 1))
        self._steps: dict[float, tuple[np.ndarray, np.ndarray]] = {}
        P, I, O = "parameter", "input", "output"
        self.real("inertia", P, 72.97, "kg.m2", "Roll inertia of the boat m2", minimum=0.0)
        self.real("hydrostatic.stiffness", P, 2068.72, "N.m/rad", "Hydrostatic roll stiffness k_H",
                  minimum=0.0)
        self.real("hydrodynamic.damping", P, 35.39, "N.m.s/rad", "Hydrodynamic roll damping c_H", minimum=0.0)
        self.real("coupling.stiffness", P, 0.0, "N.m/rad",
                  "Own-state part k_C of the serial stiffness, N.m per rad: k_S for the state-exchange split "
                  "(input torque = platform coupling_torque), 0 for the torque split", minimum=0.0)
        self.real("coupling.damping", P, 0.0, "N.m.s/rad",
                  "Own-state part c_C of the serial damping: c_S for the state-exchange split, 0 for the "
                  "torque split", minimum=0.0)
        self.real("initial.angle", P, -3.09 * DEG, "rad", "Initial boat roll angle")
        self.real("initial.rate", P, -1.64 * DEG, "rad/s", "Initial boat roll rate")
        self.real("torque", I, 0.0, "N.m", "Roll torque of the platform on the boat")
        self.real("angle", O, None, "rad", "Boat roll angle x2")
        self.real("rate", O, None, "rad/s", "Boat roll rate x2'")

    def check_parameters(self):
        if not self.v["inertia"] > 0.0:
            return [("inertia", self.v["inertia"], "must be positive")]
        return []

    def initialize_model(self) -> None:
        v = self.v
        m = v["inertia"]
        k = v["hydrostatic.stiffness"] + v["coupling.stiffness"]
        c = v["hydrodynamic.damping"] + v["coupling.damping"]
        self._A = np.array([[0.0, 1.0], [-k / m, -c / m]])
        self._B = np.array([[0.0], [1.0 / m]])
        self._steps = {}
        self.x = np.array([v["initial.angle"], v["initial.rate"]])

    def _step_matrices(self, h: float) -> tuple[np.ndarray, np.ndarray]:
        """x(t+h) = Phi x(t) + Gamma u with u constant: expm([[A, B], [0, 0]] h) = [[Phi, Gamma], [0, I]]."""
        if h not in self._steps:
            if len(self._steps) > 16:
                self._steps.clear()
            aug = np.zeros((3, 3))
            aug[:2, :2], aug[:2, 2:] = self._A, self._B
            E = expm(aug * h)
            self._steps[h] = (E[:2, :2].copy(), E[:2, 2:].copy())
        return self._steps[h]

    def step_model(self, t: float, h: float) -> None:
        Phi, Gamma = self._step_matrices(h)
        self.x = Phi @ self.x + Gamma @ np.array([self.v["torque"]])

    def update_outputs(self) -> None:
        self.v["angle"], self.v["rate"] = float(self.x[0]), float(self.x[1])

    def get_model_state(self) -> dict:
        return {} if self.x is None else {"x": self.x.copy()}

    def set_model_state(self, state: dict) -> None:
        if "x" in state:
            self.initialize_model()      # the restored parameters may differ from this instance's
            self.x = np.array(state["x"], dtype=float)
        else:
            self.x = None
