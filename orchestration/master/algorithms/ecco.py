"""ECCO: energy-conservation-based co-simulation -- non-iterative step-size control from the power
exchanged through power bonds.

Sources: S. Sadjina, L. T. Kyllingstad, S. Skjong, E. Pedersen, "Energy conservation and power bonds
in co-simulations: non-iterative adaptive step size control and error estimation", Engineering with
Computers 33 (2017) 607-620; libcosim's ``ecco_algorithm.cpp`` (anchors_cosim.md section 3).

A power bond joins side a (input u_a, output y_a) and side b (u_b, y_b) with u_a = y_b and u_b = y_a
through connections, and u . y a power (force . velocity, torque . angular velocity).  After a step
(a cycle of the step multiples, step_control.py) of length h with inputs held, each side's power
is P = sum_k u_k y_k over the bond's components (vector ports count as one bond); an exact coupling
would give P_a = P_b.  Per bond:

    dP = |P_a - P_b|,   dE = dP h   (the energy residual, logged per bond)
    e_n = sqrt( mean_bonds [ dE / (atol + rtol E_ref) ]^2 )

with the energy level E_ref (``energy_reference``):

* ``peak`` (default): E_ref = max(|P_a|, |P_b|, P_peak) h, P_peak the largest power the bond has
  carried so far: a bond whose power crosses zero (a crane tip moving up and down with the ship, a
  fairlead) is measured against the power it carries, not against the near-zero power of the
  crossing;
* ``bond`` (the paper's): E_ref = max(|P_a|, |P_b|) h, the energy through the bond in the step.  It
  has no lower bound where a bond's power crosses zero, so the residual of such a step is measured
  against nearly nothing (the moored barge's fairleads: down to the minimum step at every crossing);
* ``residual`` (libcosim's): E_ref = max over bonds of dP h, the largest residual itself.

The PI controller (step_control.py) sets the next step; no step is repeated.  Parameters as
libcosim's EccoConfiguration; the step limits default to 1/100 of the run's first step (its base
step, or cycle) and that step itself.

**At the minimum step.** A step at the minimum step whose error is still above 1 cannot be helped
by the controller: the bonds whose term is above 1 are named once each in a StepSizeWarning (with
the Gauss-Seidel order where it hands a slave its source's end-of-step outputs,
:meth:`AdaptiveAlgorithm.order_hint`) and the run goes on at the minimum step, never below it, for
as long as the tolerance asks for it (ECCO repeats no step, so a bond left out of the indicator would
be left uncontrolled for the rest of the run: on the quarter car of docs/algorithms_benchmark.md,
tight tolerances then lost their accuracy).  ``missed_at_minimum`` lists the bonds named.  Not with
``conventions="libcosim"``, which keeps libcosim's behaviour.

**A run that crawls.** Above the minimum step a tolerance can still hold the steps far below the
file's: when ``slow_window`` accepted steps in a row average under a tenth of the run's first step,
a SlowProgressWarning (once per run, step_control.py) names the bond that set most of them, with
the Gauss-Seidel order hint, and says how to trade accuracy for time.  Not with
``conventions="libcosim"``.

``conventions="libcosim"`` sets what libcosim's ecco_algorithm does, so that our master takes its
steps on the same system (docs/algorithms.md): energy level ``residual``; steps in whole
nanoseconds (the controller's gain h truncated, times n_ns / 1e9, a step (t_ns + h_ns) / 1e9 -
t_ns / 1e9); no step-size change after the first step, and none after a step whose error or whose
predecessor's error is 0 (the controller's memory, which starts at 1, then starts again); no
feedthrough refresh (its outputs are read as the step left them).  Each can also be set alone: ``energy_reference``,
``time_resolution`` (1e-9), ``refresh``.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from orchestration.errors import AlgorithmError as EccoError
from orchestration.master.algorithms.step_control import AdaptiveAlgorithm, PIController, StepSizeWarning

if TYPE_CHECKING:
    from orchestration.master.execution import Execution

ENERGY_REFERENCES = ("bond", "peak", "residual")
CONVENTIONS = ("paper", "libcosim")


@dataclass
class Bond:
    name: str
    sides: tuple[tuple[int, np.ndarray, np.ndarray], ...]     # (slave, input positions, output positions)
    #: per side, the factor and offset of the connections into its inputs: the power is formed with
    #: the input as its source gave it, (u - offset) / factor, so that both sides' powers are in the
    #: same units when a connection converts units (kN -> N) or flips a sign
    transforms: tuple[tuple[np.ndarray, np.ndarray], ...] = ()


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
        sides, transforms = [], []
        for comp in components:
            i = ex.index[comp]
            into = [c for c in conns if c.target[0] == comp]
            ins = [c.target[1] for c in into]
            outs = [c.source[1] for c in conns if c.source[0] == comp]
            if not ins or len(ins) != len(outs):
                raise EccoError(f"power bond {name!r}: {comp} has {len(ins)} input(s) {ins} and {len(outs)} "
                                f"output(s) {outs}; each input (e.g. a force) needs its output (the velocity)")
            if any(c.factor == 0.0 for c in into):
                raise EccoError(f"power bond {name!r}: a connection into {comp} has the factor 0")
            sides.append((i, np.array([ex.in_names[i].index(v) for v in ins]),
                          np.array([ex.out_names[i].index(v) for v in outs])))
            transforms.append((np.array([c.factor for c in into], float), np.array([c.offset for c in into], float)))
        bonds.append(Bond(name, tuple(sides), tuple(transforms)))
    return bonds


class EccoAlgorithm(AdaptiveAlgorithm):
    """ECCO step-size control over the system's power bonds (module docstring)."""

    name = "ecco"

    def __init__(self, rtol: float = 1e-2, atol: float = 1e-3, h0: float | None = None,
                 controller: PIController | None = None, method: str = "jacobi",
                 order: Sequence[str] | None = None, extrapolation: int = 0,
                 energy_reference: str | None = None, time_resolution: float | None = None,
                 refresh: bool | None = None, conventions: str = "paper") -> None:
        super().__init__(method, order, extrapolation)
        if conventions not in CONVENTIONS:
            raise ValueError(f"ecco: conventions {conventions!r}: 'paper' (ours) or 'libcosim' (libcosim's "
                             f"ecco_algorithm: residual energy level, nanosecond steps, its start rule)")
        libcosim = conventions == "libcosim"
        self.conventions = conventions
        energy_reference = energy_reference or ("residual" if libcosim else "peak")
        if energy_reference not in ENERGY_REFERENCES:
            raise ValueError(f"ecco: energy_reference {energy_reference!r}: 'peak' (the default: the largest "
                             f"power the bond has carried so far), 'bond' (the paper's: the energy through the "
                             f"bond in the step) or 'residual' (libcosim's: the largest residual)")
        self.energy_reference = energy_reference
        resolution = (1e-9 if libcosim else 0.0) if time_resolution is None else float(time_resolution)
        if resolution not in (0.0, 1e-9):
            raise ValueError(f"ecco: time_resolution {time_resolution!r}: 0 (none) or 1e-9 (whole nanoseconds, "
                             f"libcosim's clock)")
        self.time_resolution = resolution
        self.refresh = (not libcosim) if refresh is None else bool(refresh)
        self.land_evenly = not libcosim
        self.capture = True
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
            if execution.system.connections:
                raise EccoError("ecco needs power bonds: mark the connections of each port pair with a power bond "
                                "(SSP annotation <mc:PowerBond name=...>, OSP powerBond=...); this system has none")
            warnings.warn(f"ecco: {execution.system.name} has no connections, so no coupling error to control: "
                          "it steps at its first step size", stacklevel=2)
        self.energy_residual = {b.name: 0.0 for b in self.bonds}
        self._peak = np.zeros(len(self.bonds))
        self.missed_at_minimum: list[str] = []
        self._clock_ns = round(execution.time * 1e9)
        self._steps = 0
        self._prev_error = 1.0        # libcosim's ecco_algorithm starts its memory at 1

    @property
    def step_floor(self) -> float:
        return self.controller.min_step or 0.0

    def start(self, h0: float) -> None:
        super().start(h0)
        self.controller.bound(self.cycle * h0)
        if self.time_resolution:
            self.next_step = round(self.next_step * 1e9) / 1e9

    def settings(self) -> dict:
        return {"algorithm": self.name, "method": self.method, "rtol": self.rtol, "atol": self.atol,
                "extrapolation": self.extrapolation, "energy_reference": self.energy_reference,
                "conventions": self.conventions, "time_resolution": self.time_resolution, "refresh": self.refresh,
                "cycle": getattr(self, "cycle", 1), **self.controller.settings(),
                "bonds": [b.name for b in getattr(self, "bonds", [])],
                "missed_at_minimum": list(getattr(self, "missed_at_minimum", []))}

    def bond_powers(self) -> list[tuple[float, float]]:
        """Each bond's (P_a, P_b) after the step: each side's inputs as they were held over its step
        with its outputs at the end of the step as the master reads them there (after the
        feedthrough refresh).  Formed with the refreshed inputs, the two sides of a bond between two
        direct-feedthrough slaves (crane and wire) would agree by construction; with the outputs
        the step left before the refresh (libcosim's reading; ``conventions: libcosim`` has no
        refresh) ECCO Gauss-Seidel gets B3's weakly damped mode wrong (Re lambda +0.0024 1/s instead
        of -0.0020; tests/master/test_adaptive_algorithms.py)."""
        ex = self.execution
        out = []
        for b in self.bonds:
            pa, pb = (float(((self.held[i][0][ins] - offset) / factor) @ ex.outputs[i][outs])
                      for (i, ins, outs), (factor, offset) in zip(b.sides, b.transforms))
            out.append((pa, pb))
        return out

    def error(self, h: float) -> tuple[float, dict]:
        """The error indicator of the step just taken (module docstring) and the log's residuals."""
        powers = self.bond_powers()
        if not powers:
            return 0.0, {}
        residuals = np.array([abs(pa - pb) for pa, pb in powers])
        through = np.array([max(abs(pa), abs(pb)) for pa, pb in powers])
        if self.energy_reference == "residual":
            ref = np.full(len(powers), float(np.max(residuals)) * h)
        elif self.energy_reference == "peak":
            self._peak = np.maximum(self._peak, through)
            ref = self._peak * h
        else:
            ref = through * h
        row = {}
        for b, r in zip(self.bonds, residuals):
            dE = float(r) * h
            self.energy_residual[b.name] += dE
            row[f"{b.name}.energy_residual"] = dE
        terms = residuals * h / (self.atol + self.rtol * ref)
        self._terms = terms
        return math.sqrt(float(np.mean(np.square(terms)))), row

    def _at_floor(self, t: float, h: float, error: float) -> None:
        """A step at the minimum step above the tolerance: its bonds named, once each (module docstring)."""
        c = self.controller
        if self.conventions == "libcosim" or not (error > 1.0 and c.min_step and h <= c.min_step * (1 + 1e-9)):
            return
        missed = [k for k in np.flatnonzero(self._terms > 1.0) if self.bonds[k].name not in self.missed_at_minimum]
        if not missed:
            return
        self.missed_at_minimum.extend(self.bonds[k].name for k in missed)
        listed = ", ".join(f"{self.bonds[k].name} ({self._terms[k]:.3g})" for k in missed[:5])
        hint = "".join(dict.fromkeys(self.order_hint(i) for k in missed[:2] for (i, _, _) in self.bonds[k].sides))
        warnings.warn(
            f"ecco: at t = {t:.6g} s the energy residual of power bond {listed} (over its tolerance, in "
            f"brackets) is above the tolerance at the minimum step {h:.3g} s: a smaller step is not allowed, so "
            f"the run goes on at the minimum step while the tolerance is missed (set min_step or rtol/atol to "
            f"change this).{hint}", StepSizeWarning, stacklevel=3)

    def _watch(self, t: float, h: float) -> None:
        """The slow-progress watch (step_control.py) with the bond whose term was largest; not under
        libcosim's conventions, which keep libcosim's behaviour."""
        if self.conventions == "libcosim":
            return
        terms = getattr(self, "_terms", None)
        worst = self.bonds[int(np.argmax(terms))].name if terms is not None and len(terms) else ""
        self.watch_progress(t, h, worst)

    def slow_setter(self, name: str, count: int) -> tuple[str, str]:
        bond = next(b for b in self.bonds if b.name == name)
        hint = "".join(dict.fromkeys(self.order_hint(i) for (i, _, _) in bond.sides))
        return f"; power bond {name} set {count} of them (its energy residual reaches the tolerance there)", hint

    def slow_advice(self) -> str:
        return f"loosen the tolerance (--option rtol=..., now {self.rtol:g}) or use --algorithm fixed"

    def step(self, t: float, h: float) -> float:
        if self.time_resolution:
            return self._step_ns(h)
        self.coupling_step(t, h)
        error, residuals = self.error(h)
        self.log.append({"time": t + h, "step": h, **residuals, "error": error})
        self._at_floor(t + h, h, error)
        self._watch(t + h, h)
        self.next_step = self.controller.next(h, error)
        return h

    def _step_ns(self, h: float) -> float:
        """A step on libcosim's nanosecond clock, with its start rule (module docstring)."""
        c = self.controller
        h_ns = max(1, round(h * 1e9))
        t_d = self._clock_ns / 1e9
        h_d = (self._clock_ns + h_ns) / 1e9 - t_d
        self.coupling_step(t_d, h_d)
        error, residuals = self.error(h_d)
        self.log.append({"time": t_d + h_d, "step": h_d, **residuals, "error": error})
        self._watch(t_d + h_d, h_d)
        self._clock_ns += h_ns
        self._steps += 1
        k = h_ns
        if self.conventions != "libcosim":
            k = math.trunc(c.next(h_d, error) * 1e9)
        elif self._steps >= 2:
            if self._prev_error == 0.0 or error == 0.0:
                self._prev_error = error
            else:
                gain = c.safety * error ** (-c.ki - c.kp) * self._prev_error ** c.kp
                k = math.trunc(min(max(gain, c.min_change), c.max_change) * h_d * 1e9)
                self._prev_error = error
        k = min(max(k, round(c.min_step * 1e9)), round(c.max_step * 1e9))
        self.next_step = k / 1e9
        return h_d
