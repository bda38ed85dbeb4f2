"""The quarter car as one ODE (the monolithic reference of the co-simulations) and the system of the
two FMUs (chassis_fmu.py, wheel_fmu.py).

    m_c z_c'' = -k_s (z_c - z_w) - c_s (z_c' - z_w')
    m_w z_w'' =  k_s (z_c - z_w) + c_s (z_c' - z_w') + k_t (r - z_w) + c_t (r' - z_w')

Default parameters: the masses of libcosim's quarter_truck example (m_c 400 kg, m_w 40 kg) and the
springs of the smoke test in anchors_cosim.md section 3 (k_s 15 kN/m, c_s 1 kN s/m, k_t 150 kN/m):
body mode 0.93 Hz, wheel hop 10.2 Hz.  Road: a (1 - cos) bump of 5 cm crossed in 50 ms (1 m at
72 km/h) from t0 = 0 (a system at rest carries no power through the bond, and ECCO keeps its first
step until power flows: with the bump at 0.25 s it spends 2 500 steps of 0.1 ms waiting).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp

from orchestration.system.model import Component, System


@dataclass(frozen=True)
class QuarterCar:
    m_c: float = 400.0
    m_w: float = 40.0
    k_s: float = 15.0e3
    c_s: float = 1.0e3
    k_t: float = 150.0e3
    c_t: float = 0.0
    bump_height: float = 0.05
    bump_start: float = 0.0
    bump_duration: float = 0.05

    def bump(self, t: float) -> tuple[float, float]:
        """Road height and rate at t (the wheel FMU's built-in bump)."""
        H, t0, T = self.bump_height, self.bump_start, self.bump_duration
        if H == 0.0 or not t0 <= t <= t0 + T:
            return 0.0, 0.0
        w = 2.0 * math.pi / T
        return 0.5 * H * (1.0 - math.cos(w * (t - t0))), 0.5 * H * w * math.sin(w * (t - t0))

    def road(self, t: float) -> float:
        return self.bump(t)[0]

    def chassis_parameters(self) -> dict[str, float]:
        return {"mass": self.m_c, "suspension.stiffness": self.k_s, "suspension.damping": self.c_s}

    def wheel_parameters(self, builtin_bump: bool) -> dict[str, float]:
        p = {"mass": self.m_w, "tire.stiffness": self.k_t, "tire.damping": self.c_t}
        if builtin_bump:
            p.update({"bump.height": self.bump_height, "bump.start": self.bump_start,
                      "bump.duration": self.bump_duration})
        return p

    def eigenfrequencies(self) -> np.ndarray:
        """Undamped natural frequencies (Hz), body and wheel hop."""
        M = np.diag([self.m_c, self.m_w])
        K = np.array([[self.k_s, -self.k_s], [-self.k_s, self.k_s + self.k_t]])
        return np.sqrt(np.sort(np.linalg.eigvals(np.linalg.solve(M, K)).real)) / (2 * math.pi)


def monolithic(car: QuarterCar, stop_time: float, rtol: float = 1e-12, atol: float = 1e-15):
    """Dense solution t -> [z_c, v_c, z_w, v_w] of the monolithic ODE (DOP853, integrated piecewise
    across the bump's corners where r'' jumps)."""

    def rhs(t, x):
        zc, vc, zw, vw = x
        r, dr = car.bump(t)
        fs = car.k_s * (zc - zw) + car.c_s * (vc - vw)
        return [vc, -fs / car.m_c, vw, (fs + car.k_t * (r - zw) + car.c_t * (dr - vw)) / car.m_w]

    cuts = [0.0] + [c for c in (car.bump_start, car.bump_start + car.bump_duration) if 0.0 < c < stop_time] \
        + [stop_time]
    pieces, x0 = [], np.zeros(4)
    for a, b in zip(cuts[:-1], cuts[1:]):
        sol = solve_ivp(rhs, (a, b), x0, method="DOP853", rtol=rtol, atol=atol, dense_output=True)
        if not sol.success:
            raise RuntimeError(sol.message)
        pieces.append((a, b, sol.sol))
        x0 = sol.y[:, -1]

    def evaluate(t) -> np.ndarray:
        t = np.atleast_1d(np.asarray(t, dtype=float))
        out = np.empty((4, len(t)))
        for k, (a, b, f) in enumerate(pieces):
            last = k == len(pieces) - 1
            mask = (t >= a) & ((t < b) | last)
            if mask.any():
                out[:, mask] = f(np.clip(t[mask], a, b))
        return out

    return evaluate


def quarter_car_system(fmus: dict[str, Path], car: QuarterCar = QuarterCar(), builtin_bump: bool = True,
                       bond: str = "suspension", wheel_position: bool = False) -> System:
    """Chassis + wheel joined by the force/velocity power bond ``bond``.  With ``builtin_bump`` the
    wheel FMU makes the bump itself; otherwise drive ``wheel.road`` (TimeSignals, libcosim override).
    ``wheel_position``: also connect wheel.position to the chassis (outside the bond), which then
    resets its integrated wheel height to it at every step."""
    s = System("quarter_car")
    chassis = car.chassis_parameters()
    if wheel_position:
        chassis["wheel_position_input"] = 1
    s.add_component(Component("chassis", fmus["QuarterCarChassis"], chassis))
    s.add_component(Component("wheel", fmus["QuarterCarWheel"], car.wheel_parameters(builtin_bump)))
    s.connect("wheel.velocity", "chassis.wheel_velocity", power_bond=bond)
    s.connect("chassis.force", "wheel.force", power_bond=bond)
    if wheel_position:
        s.connect("wheel.position", "chassis.wheel_position_in")
    return s

