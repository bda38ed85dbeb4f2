"""Quarter-car wheel FMU: the unsprung mass on the tyre spring, driven by the road and the
suspension force.

    m_w z_w'' = F + k_t (r(t) - z_w) + c_t (r'(t) - z_w')

z_w is the wheel height above the static equilibrium (m, up positive).  ``force`` F (the suspension
force on the wheel, up positive) is the input of the force/velocity power bond; ``velocity`` z_w' its
output.  The road height r(t) = ``road`` (an input, e.g. driven by the master's TimeSignals and held
over each step) + a built-in bump

    b(t) = H/2 (1 - cos(2 pi (t - t0)/T))   for t0 <= t <= t0 + T,   0 otherwise

(``bump.height`` H, ``bump.start`` t0, ``bump.duration`` T; H = 0 by default), which the FMU
evaluates itself at every internal substep, so a master's step size does not sample it.

Integration: classical Runge-Kutta with substeps of at most ``max_substep`` that also stop at the
bump's two corners (b'' jumps there), with F and ``road`` held; the integration error is far below
any coupling error of interest (1e-9 relative at the default 1e-4 s).
"""
from __future__ import annotations

import math

import numpy as np

from fmus._base import Fmi2Slave


class QuarterCarWheel(Fmi2Slave):

    description = ("Quarter car: wheel (unsprung mass) on the tyre spring over a road with a bump; input "
                   "suspension force, output wheel velocity")
    default_stop_time = 2.0
    default_step_size = 0.001

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.x: np.ndarray | None = None          # [z_w, v_w]
        P, I, O = "parameter", "input", "output"
        self.real("mass", P, 40.0, "kg", "Wheel (unsprung) mass m_w", minimum=0.0)
        self.real("tire.stiffness", P, 150.0e3, "N/m", "Tyre stiffness k_t", minimum=0.0)
        self.real("tire.damping", P, 0.0, "N.s/m", "Tyre damping c_t", minimum=0.0)
        self.real("bump.height", P, 0.0, "m", "Height H of the built-in road bump (0: no bump)")
        self.real("bump.start", P, 0.25, "s", "Time t0 the wheel reaches the bump")
        self.real("bump.duration", P, 0.05, "s", "Time T the wheel takes to cross the bump", minimum=0.0)
        self.real("max_substep", P, 1.0e-4, "s", "Largest internal Runge-Kutta substep", minimum=0.0)
        self.real("initial.position", P, 0.0, "m", "Initial wheel height above equilibrium")
        self.real("initial.velocity", P, 0.0, "m/s", "Initial wheel vertical velocity")
        self.real("force", I, 0.0, "N", "Suspension force on the wheel, up positive (power bond with velocity)")
        self.real("road", I, 0.0, "m", "Road height under the tyre (added to the built-in bump)")
        self.real("velocity", O, None, "m/s", "Wheel vertical velocity (power bond with force)")
        self.real("position", O, None, "m", "Wheel height z_w above equilibrium")
        self.real("road_height", O, None, "m", "Road height r under the tyre at the end of the step")

    def check_parameters(self):
        bad = [(n, self.v[n], "must be positive") for n in ("mass", "max_substep") if not self.v[n] > 0.0]
        if self.v["bump.height"] != 0.0 and not self.v["bump.duration"] > 0.0:
            bad.append(("bump.duration", self.v["bump.duration"], "must be positive for a bump"))
        return bad

    def initialize_model(self) -> None:
        self.x = np.array([self.v["initial.position"], self.v["initial.velocity"]])

    def bump(self, t: float) -> tuple[float, float]:
        """Built-in bump height and its rate at time t."""
        v = self.v
        H, t0, T = v["bump.height"], v["bump.start"], v["bump.duration"]
        if H == 0.0 or not t0 <= t <= t0 + T:
            return 0.0, 0.0
        w = 2.0 * math.pi / T
        return 0.5 * H * (1.0 - math.cos(w * (t - t0))), 0.5 * H * w * math.sin(w * (t - t0))

    def _rhs(self, t: float, z: float, vz: float) -> tuple[float, float]:
        v = self.v
        b, db = self.bump(t)
        r = v["road"] + b
        acc = (v["force"] + v["tire.stiffness"] * (r - z) + v["tire.damping"] * (db - vz)) / v["mass"]
        return vz, acc

    def step_model(self, t: float, h: float) -> None:
        v = self.v
        t_end = t + h
        cuts = sorted(c for c in (v["bump.start"], v["bump.start"] + v["bump.duration"]) if t < c < t_end
                      and v["bump.height"] != 0.0)
        z, vz = float(self.x[0]), float(self.x[1])
        for a, b in zip([t] + cuts, cuts + [t_end]):
            n = max(1, math.ceil((b - a) / v["max_substep"] - 1e-9))
            dt = (b - a) / n
            for k in range(n):
                s = a + k * dt
                k1 = self._rhs(s, z, vz)
                k2 = self._rhs(s + 0.5 * dt, z + 0.5 * dt * k1[0], vz + 0.5 * dt * k1[1])
                k3 = self._rhs(s + 0.5 * dt, z + 0.5 * dt * k2[0], vz + 0.5 * dt * k2[1])
                k4 = self._rhs(s + dt, z + dt * k3[0], vz + dt * k3[1])
                z += dt / 6.0 * (k1[0] + 2.0 * k2[0] + 2.0 * k3[0] + k4[0])
                vz += dt / 6.0 * (k1[1] + 2.0 * k2[1] + 2.0 * k3[1] + k4[1])
        self.x = np.array([z, vz])

    def update_outputs(self) -> None:
        self.v["position"], self.v["velocity"] = float(self.x[0]), float(self.x[1])
        self.v["road_height"] = float(self.v["road"] + self.bump(self.time)[0])

    def get_model_state(self) -> dict:
        return {} if self.x is None else {"x": self.x.copy()}

    def set_model_state(self, state: dict) -> None:
        if "x" in state:
            self.x = np.array(state["x"], dtype=float)
        else:
            self.x = None
