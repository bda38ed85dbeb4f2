"""ECCO: energy-conservation-based co-simulation -- non-iterative step-size control from the power
exchanged through power bonds.

Sources: S. Sadjina, L. T. Kyllingstad, S. Skjong, E. Pedersen, "Energy conservation and power bonds
in co-simulations: non-iterative adaptive step size control and error estimation", Engineering with
Computers 33 (2017) 607-620; libcosim's ``ecco_algorithm.cpp`` (anchors_cosim.md section 3).

A power bond joins side a (input u_a, output y_a) and side b (u_b, y_b) with u_a = y_b and u_b = y_a
through connections, and u . y a power (force . velocity, torque . angular velocity).  After a step
of length h with inputs held, each side's power is P = sum_k u_k y_k over the bond's components
(vector ports count as one bond); an exact coupling would give P_a = P_b.  Per bond:

    dP = |P_a - P_b|,   dE = dP h   (the energy residual, logged per bond)
    e_n = sqrt( mean_bonds [ dE / (atol + rtol E_ref) ]^2 ),   E_ref = max(|P_a|, |P_b|) h

E_ref is the energy that went through the bond in the step, the paper's reference (libcosim uses
the largest dP; the paper's choice is kept).  The PI controller (step_control.py) sets the next
step; no step is repeated.  Parameters as libcosim's EccoConfiguration.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from orchestration.errors import AlgorithmError as EccoError
from orchestration.master.algorithms.step_control import AdaptiveAlgorithm, PIController

if TYPE_CHECKING:
    from orchestration.master.execution import Execution




@dataclass
class Bond:
    name: str
    sides: tuple[tuple[int, np.ndarray, np.ndarray], ...]     # (slave, input positions, output positions)


def power_bonds(execution: "Execution") -> list[Bond]:
    """The system's power bonds (Connection.power_bond) as slave index and paired input/output slots."""
    ex = execution
    groups: dict[str, list] = {}
    for c in ex.system.connections:
        if c.power_bond:
            groups.setdefault(c.power_bond, []).append(c)
    bonds = []
    for name, conns in groups.items():
        components = sorted({c.source[0] for c in conns} | {c.target[0] for c in conns})
        if len(components) != 2:
            raise EccoError(f"power bond {name!r} joins {components}; a bond joins exactly two components")
        sides = []
        for comp in components:
            i = ex.index[comp]
            ins = [c.target[1] for c in conns if c.target[0] == comp]
            outs = [c.source[1] for c in conns if c.source[0] == comp]
            if not ins or len(ins) != len(outs):
                raise EccoError(f"power bond {name!r}: {comp} has {len(ins)} input(s) {ins} and {len(outs)} "
                                f"output(s) {outs}; each input (e.g. a force) needs its output (the velocity)")
            sides.append((i, np.array([ex.in_names[i].index(v) for v in ins]),
                          np.array([ex.out_names[i].index(v) for v in outs])))
        bonds.append(Bond(name, tuple(sides)))
    return bonds


class EccoAlgorithm(AdaptiveAlgorithm):
    """ECCO step-size control over the system's power bonds (module docstring)."""

    name = "ecco"

    def __init__(self, rtol: float = 1e-4, atol: float = 1e-6, h0: float | None = None,
                 controller: PIController | None = None, method: str = "jacobi",
                 order: Sequence[str] | None = None, extrapolation: int = 0,
                 energy_reference: str = "bond") -> None:
        super().__init__(method, order, extrapolation)
        if energy_reference not in ("bond", "residual"):
            raise ValueError(f"ecco: energy_reference {energy_reference!r}: 'bond' (the paper's: the energy "
                             f"through the bond) or 'residual' (libcosim's: the largest residual)")
        self.energy_reference = energy_reference
        if not (rtol >= 0.0 and atol >= 0.0 and rtol + atol > 0.0):
            raise ValueError(f"ecco: rtol = {rtol!r}, atol = {atol!r} must be >= 0 and not both 0")
        self.rtol, self.atol = float(rtol), float(atol)
        self.controller = controller or PIController()
        if h0 is not None:
            self.next_step = float(h0)
        self.energy_residual: dict[str, float] = {}

    def setup(self, execution: "Execution") -> None:
        super().setup(execution)
        self.bonds = power_bonds(execution)
        if not self.bonds:
            raise EccoError("ecco needs power bonds: mark the connections of each port pair with a power bond "
                            "(SSP annotation <mc:PowerBond name=...>, OSP <PowerBond>); this system has none")
        self.energy_residual = {b.name: 0.0 for b in self.bonds}

    def settings(self) -> dict:
        return {"algorithm": self.name, "method": self.method, "rtol": self.rtol, "atol": self.atol,
                "extrapolation": self.extrapolation, "energy_reference": self.energy_reference,
                **self.controller.settings(), "bonds": [b.name for b in self.bonds]}

    def bond_powers(self) -> list[tuple[float, float]]:
        ex = self.execution
        out = []
        for b in self.bonds:
            pa, pb = (float(ex.inputs[i][ins] @ ex.outputs[i][outs]) for i, ins, outs in b.sides)
            out.append((pa, pb))
        return out

    def step(self, t: float, h: float) -> float:
        self.coupling_step(t, h)
        terms, row = [], {"time": t + h, "step": h}
        powers = self.bond_powers()
        level = max(abs(pa - pb) for pa, pb in powers) * h
        for b, (pa, pb) in zip(self.bonds, powers):
            dE = abs(pa - pb) * h
            self.energy_residual[b.name] += dE
            ref = max(abs(pa), abs(pb)) * h if self.energy_reference == "bond" else level
            terms.append(dE / (self.atol + self.rtol * ref))
            row[f"{b.name}.energy_residual"] = dE
        error = math.sqrt(float(np.mean(np.square(terms))))
        row["error"] = error
        self.log.append(row)
        self.next_step = self.controller.next(h, error)
        return h
