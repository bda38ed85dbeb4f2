"""Shared parts of the adaptive master algorithms (ecco.py, error_control.py, iterative.py): one
coupling step of every slave, the PI step-size controller, and the base class.

PI controller (Gustafsson; as libcosim's ``ecco_algorithm.cpp`` and Sadjina et al. 2017, eq. 22)::

    gain = safety * e_n^-(kI + kP) * e_{n-1}^kP,  clamped to [min_change, max_change]
    h_{n+1} = clamp(gain * h_n, h_min, h_max)

with e_n the step's error indicator (1 = on tolerance).  e_n = 0 keeps the step.
"""
from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from orchestration.master.algorithms.fixed import Algorithm, gauss_seidel_order

if TYPE_CHECKING:
    from orchestration.master.execution import Execution

_INDEX = re.compile(r"\[[^\]]*\]$")


@dataclass
class PIController:
    """Step-size controller (module docstring); parameter names as libcosim's EccoConfiguration.
    ``min_step``/``max_step`` None: set by :meth:`bound` from the run's first step (ECCO's
    defaults: 1/100 of it and itself -- ECCO never repeats a step, so a step grown past the stable
    one diverges before the controller can take it back)."""

    safety: float = 0.99
    min_step: float | None = None
    max_step: float | None = None
    min_change: float = 0.2
    max_change: float = 1.5
    kp: float = 0.2
    ki: float = 0.15

    def __post_init__(self) -> None:
        bad = [(n, getattr(self, n)) for n in ("safety", "min_change", "max_change")
               if not (math.isfinite(getattr(self, n)) and getattr(self, n) > 0.0)]
        bad += [(n, getattr(self, n)) for n in ("min_step", "max_step") if getattr(self, n) is not None
                and not (math.isfinite(getattr(self, n)) and getattr(self, n) > 0.0)]
        bad += [(n, getattr(self, n)) for n in ("kp", "ki") if not (math.isfinite(getattr(self, n))
                                                                   and getattr(self, n) >= 0.0)]
        if self.min_step is not None and self.max_step is not None and self.min_step > self.max_step:
            bad.append(("min_step", self.min_step))
        if self.min_change > 1.0 or self.max_change < 1.0:
            bad.append(("min_change/max_change", (self.min_change, self.max_change)))
        if bad:
            raise ValueError("step controller: " + ", ".join(f"{n} = {v!r}" for n, v in bad) +
                             " (positive steps with min_step <= max_step, min_change <= 1 <= max_change)")
        self._prev = None

    def bound(self, h0: float, min_fraction: float = 1e-2, max_factor: float = 1.0) -> None:
        """Fill in the step limits that were not given, from the first step h0."""
        if self.min_step is None:
            self.min_step = min_fraction * h0 if self.max_step is None else min(min_fraction * h0, self.max_step)
        if self.max_step is None:
            self.max_step = max(max_factor * h0, self.min_step)

    def next(self, h: float, error: float) -> float:
        """The next step after a step h with error indicator ``error``."""
        if not math.isfinite(error):
            gain = self.min_change
        elif error <= 0.0:
            gain = 1.0 if self._prev is None else self.max_change
        else:
            prev = self._prev if self._prev else error
            gain = self.safety * error ** -(self.ki + self.kp) * prev ** self.kp
            gain = min(max(gain, self.min_change), self.max_change)
        if math.isfinite(error) and error > 0.0:
            self._prev = error
        return min(max(gain * h, self.min_step), self.max_step)

    def settings(self) -> dict:
        return {k: getattr(self, k) for k in ("safety", "min_step", "max_step", "min_change", "max_change",
                                              "kp", "ki")}


def landing_step(h: float, remaining: float, eps: float, evenly: bool = True,
                 floor: float = 0.0) -> tuple[float, bool]:
    """The step toward a point ``remaining`` ahead (the stop time, an event) when ``h`` is proposed,
    and whether it reaches the point.  A proposal that reaches it (within ``eps``) is cut to it; one
    that would leave less than itself is, ``evenly``, halved to ``remaining / 2``, so the point is
    reached in two equal steps of at least h / 2 instead of h and a sliver far below the
    controller's minimum step (standard practice of ODE codes near the end of the interval, e.g.
    Hairer, Norsett & Wanner, Solving ODEs I, 2nd ed., section II.4); when a half would be below
    the algorithm's minimum step ``floor``, the point is reached in one step (at most 2 h)."""
    if h >= remaining - eps:
        return remaining, True
    if evenly and 2.0 * h > remaining:
        if 0.5 * remaining < floor:
            return remaining, True
        return 0.5 * remaining, False
    return h, False


class StepSizeWarning(UserWarning):
    """An adaptive algorithm could not meet its tolerance and went on (never a stall)."""


class SlowProgressWarning(UserWarning):
    """An adaptive algorithm meets its tolerance only with steps far below the run's step: the run
    goes on, slowly, and is told what sets the steps."""


#: a run whose accepted steps average below SLOW_FRACTION of the run's first cycle over SLOW_WINDOW
#: accepted steps is told once what sets them (:meth:`AdaptiveAlgorithm.watch_progress`): neither
#: adaptive algorithm stalls, but a strict tolerance on a stiff coupling can make a run crawl for
#: hours (the block turnover under error control in the file's Gauss-Seidel order: 1-2 ms steps
#: against the file's 20 ms, docs/algorithms_benchmark.md section 6)
SLOW_FRACTION = 0.1
SLOW_WINDOW = 500


def fixed_step_slaves(slaves) -> list[str]:
    """The slaves (``name (file)``) whose FMU cannot take a communication step of another size than
    its first: canHandleVariableCommunicationStepSize false, the FMI default when it is not declared."""
    found = []
    for s in slaves:
        md = getattr(s, "model_description", None)
        cs = getattr(md, "coSimulation", None)
        if cs is None:
            continue
        fmu = getattr(s, "fmu", None)
        if md.fmiVersion == "1.0":
            # FMPy does not read FMI 1.0's Capabilities: from the modelDescription itself
            variable = _fmi1_capability(fmu, "canHandleVariableCommunicationStepSize")
        else:
            variable = getattr(cs, "canHandleVariableCommunicationStepSize", True)
        if not variable:
            found.append(f"{s.name} ({getattr(fmu, 'name', '') or 'FMU'})")
    return found


def _fmi1_capability(fmu, name: str) -> bool:
    """An FMI 1.0 co-simulation capability (Implementation/CoSimulation_*/Capabilities), false when
    not declared (FMI 1.0's default); true when the FMU file cannot be read (nothing to refuse on)."""
    import zipfile
    import xml.etree.ElementTree as ET

    try:
        with zipfile.ZipFile(fmu) as zf:
            root = ET.fromstring(zf.read("modelDescription.xml"))
    except (OSError, KeyError, TypeError, ValueError, zipfile.BadZipFile, ET.ParseError):
        return True
    for caps in root.iter("Capabilities"):
        return caps.get(name, "false").strip().lower() == "true"
    return False


class AdaptiveAlgorithm(Algorithm):
    """An algorithm that proposes its own steps (Execution.run calls :meth:`start`, then steps with
    ``next_step`` until the stop time).

    One coupling step of length H is a *cycle* of the step multiples: with multiples m_i (OSP's
    decimation factors) and M their least common multiple, the cycle has M base steps of H / M and
    slave i steps every m_i of them, with steps of m_i H / M, Jacobi or Gauss-Seidel, inputs held or
    extrapolated, as the fixed-step algorithm does; every slave is at t + H at its end, where the
    step size changes and the error is measured.  Without multiples (M = 1) a cycle is one step of
    every slave.  The controlled step is the cycle: the run's base step h gives H0 = M h."""

    adaptive = True

    def __init__(self, method: str = "jacobi", order: Sequence[str] | None = None, extrapolation: int = 0) -> None:
        if method not in ("jacobi", "gauss-seidel"):
            raise ValueError(f"unknown coupling method {method!r} (jacobi or gauss-seidel)")
        if extrapolation not in (0, 1, 2):
            raise ValueError(f"extrapolation order {extrapolation!r}: 0 (hold), 1 (linear) or 2 (quadratic)")
        self.method, self.order = method, list(order) if order else None
        self.extrapolation = int(extrapolation)
        self.next_step = math.nan
        self.log: list[dict] = []          # one row per accepted step, for results and plots
        #: make direct-feedthrough outputs consistent after each step (Execution.refresh_feedthrough);
        #: libcosim does not, which ECCO's libcosim conventions reproduce
        self.refresh = True
        #: keep each slave's inputs held over its last step, before the feedthrough refresh replaces
        #: them (``held[i] = (inputs, outputs of that step)``; ECCO's powers are formed with them)
        self.capture = False
        self.held: dict[int, tuple] = {}
        #: approach the stop time and events in two equal steps rather than a full step and a sliver
        #: (see :func:`landing_step`); libcosim does not, which ECCO's libcosim conventions reproduce
        self.land_evenly = True
        self.slow_window = SLOW_WINDOW
        self._recent: list[tuple[float, str]] = []   # (step, what set it) since the last look
        self._slow_told = False
        self._base_step = 0.0

    def setup(self, execution: "Execution") -> None:
        super().setup(execution)
        fixed = fixed_step_slaves(execution.slaves)
        if fixed:
            # FMI reads a missing flag as false, and generators write false by default (pythonfmu3
            # does): most such FMUs take any step, and one that cannot says so by its doStep status,
            # which stops the run with its name; refusing them all would refuse working swaps
            warnings.warn(f"{self.name} changes the communication step, but {', '.join(fixed)} declares that it "
                          "can only be stepped with one step size (canHandleVariableCommunicationStepSize false or "
                          "not declared, which FMI reads as false); stepping it with varying steps. If it refuses "
                          "them, use --algorithm fixed or iterative for this system", StepSizeWarning, stacklevel=2)
        n = len(execution.slaves)
        self._multiples = [int(m) for m in execution.step_multiple]
        self.cycle = math.lcm(*self._multiples) if self._multiples else 1
        if self.order:
            self._order = [execution.index[name] for name in self.order]
        elif self.method == "gauss-seidel":
            self._order = gauss_seidel_order(n, execution.slave_edges(), [s.name for s in execution.slaves])
        else:
            self._order = list(range(n))
        self._refresh_order = gauss_seidel_order(n, execution.slave_edges(), [s.name for s in execution.slaves])

    @property
    def step_floor(self) -> float:
        """The smallest step the algorithm chooses (0: none); Execution.run lands on the stop time
        and on events without going below it (:func:`landing_step`)."""
        return 0.0

    def start(self, h0: float) -> None:
        """Called by Execution.run with the run's base step: the first cycle (unless set explicitly)."""
        self._base_step = self.cycle * h0
        if not math.isfinite(self.next_step):
            self.next_step = self.cycle * h0

    def watch_progress(self, t: float, h: float, setter: str) -> None:
        """Once per run: when the last ``slow_window`` accepted steps average below SLOW_FRACTION of
        the run's first cycle, say how short they are, what set most of them (``setter``: a variable
        or a bond, named by :meth:`slow_setter`) and how to trade accuracy for time (:meth:`slow_advice`)."""
        if self._slow_told:
            return
        self._recent.append((h, setter))
        if len(self._recent) < self.slow_window:
            return
        steps, setters = zip(*self._recent)
        self._recent.clear()
        mean = sum(steps) / len(steps)
        base = self._base_step
        if not base or mean >= SLOW_FRACTION * base:
            return
        self._slow_told = True
        counts: dict[str, int] = {}
        for name in setters:
            if name:
                counts[name] = counts.get(name, 0) + 1
        what = hint = ""
        if counts:
            name = max(counts, key=counts.get)
            what, hint = self.slow_setter(name, counts[name])
        warnings.warn(
            f"{self.name}: the {len(steps)} steps up to t = {t:.6g} s averaged {mean:.3g} s, {base / mean:.0f}x "
            f"shorter than the run's step {base:g} s{what}. The run goes on at this pace; to trade accuracy for "
            f"time {self.slow_advice()}.{hint}", SlowProgressWarning, stacklevel=3)

    def slow_setter(self, name: str, count: int) -> tuple[str, str]:
        """(clause naming what set ``count`` of the slow steps, Gauss-Seidel order hint) for the warning."""
        return f"; {name} set {count} of them", ""

    def slow_advice(self) -> str:
        """How a slow run trades accuracy for time, as the end of a sentence."""
        return "loosen the tolerance or use --algorithm fixed"

    def coupling_step(self, t: float, H: float) -> None:
        """One cycle [t, t + H] (class docstring); manipulators act once, at t."""
        ex = self.execution
        ex.before_step(t, H)
        M = self.cycle
        if M == 1:
            self._substep(t, {i: H for i in self._order}, H)
            return
        hb = H / M
        end = t + H
        for j in range(M):
            tj = t if j == 0 else t + j * hb
            due = {}
            for i in self._order:
                m = self._multiples[i]
                if j % m == 0:
                    due[i] = (end if j + m >= M else t + (j + m) * hb) - tj
            t_next = end if j == M - 1 else t + (j + 1) * hb
            self._substep(tj, due, t_next - tj)

    def _substep(self, t: float, due: dict[int, float], h: float) -> None:
        """The due slaves step from t (slave i by due[i]); feedthrough refreshed at t + h."""
        ex = self.execution
        if self.method == "jacobi":
            inputs = [(i, ex.compute_inputs(i, t, H, self.extrapolation, updated=())) for i, H in due.items()]
            for i, u in inputs:
                ex.advance(i, u, t, due[i])
        else:
            updated: set[int] = set()
            for i, H in due.items():
                ex.advance(i, ex.compute_inputs(i, t, H, self.extrapolation, updated=updated), t, H)
                updated.add(i)
        if self.capture:
            ex.sync()
            for i in due:
                self.held[i] = (np.array(ex.inputs[i], dtype=float), np.array(ex.outputs[i], dtype=float))
        if self.refresh:
            ex.refresh_feedthrough(t + h, self._refresh_order)

    def order_hint(self, slave: int) -> str:
        """Under Gauss-Seidel, which inputs slave ``slave`` takes from slaves stepped before it in the
        same step, as a sentence for a warning ('' otherwise).  FMI inputs are the values at the
        step's start (FMI 2.0 section 4.2.4); a slave stepped after its source is handed the source's
        end-of-step outputs, and an FMU that carries such an input over the step (a position moved on
        with its velocity) then runs a step ahead: a first-order coupling error that no step size
        removes (the offshore lift's wire, error_control.py)."""
        if self.method != "gauss-seidel":
            return ""
        ex = self.execution
        rank = {i: k for k, i in enumerate(self._order)}
        early: dict[int, list[str]] = {}
        for g in ex.links[slave]:
            if g.source != slave and rank.get(g.source, -1) < rank.get(slave, -1):
                names = early.setdefault(g.source, [])
                for p in g.dst_pos:
                    group = _INDEX.sub("", ex.in_names[slave][int(p)])
                    if group not in names:
                        names.append(group)
        if not early:
            return ""
        parts = "; ".join(f"{ex.slaves[j].name} ({', '.join(v[:3])}{', ...' if len(v) > 3 else ''})"
                          for j, v in early.items())
        name = ex.slaves[slave].name
        return (f" Under Gauss-Seidel {name} steps after {parts}, so it is handed their end-of-step outputs; "
                f"if {name} carries these inputs over its step, declare it before them in the system file "
                f"(the order of the components) or use --method jacobi.")

    def step(self, t: float, h: float) -> float:
        raise NotImplementedError
