"""Model-exchange FMUs as co-simulation components: the master integrates their states.

A ModelExchange FMU (FMI 2.0 or 3.0) gives derivatives, not steps. :class:`ModelExchangeStepper`
turns its calls into the communication step a co-simulation master takes, following the
integration loop of FMI 2.0 (section 3.1, "Model Exchange: simulation") and FMI 3.0 (section 3.1.2),
as FMPy's ``simulate_fmu`` runs it:

* continuous-time mode: ``setTime``, ``setContinuousStates``, ``getDerivatives``; an ODE solver
  steps to the communication point with the inputs held (zero-order hold, as a co-simulation FMU
  holds them): scipy's Dormand-Prince 5(4), and LSODA (Adams, BDF where stiff) for the rest of the
  run once the explicit method needed more than :data:`STIFF_STEPS` steps in one communication step
  (a third-party hull with fast fluid-memory poles). Relative tolerance: the FMU's
  DefaultExperiment tolerance, else 1e-6; absolute: that times each state's nominal value;
* after each accepted solver step the event indicators checked for a change of sign (a state event),
  located to about 1e-12 relative in time by Illinois' regula falsi, each trial state integrated
  afresh from the step's start (Dormand-Prince 5(4)); then ``completedIntegratorStep``;
* time events at the FMU's ``nextEventTime``; step events when ``completedIntegratorStep`` asks;
  an input the master changes that flips an indicator is an event at the step's start;
* at an event ``enterEventMode``, ``newDiscreteStates`` (FMI 3.0 ``updateDiscreteStates``) until no
  more are needed, ``enterContinuousTimeMode``, the states and indicators read again.

An FMU that asks for more than :data:`MAX_EVENTS_PER_STEP` events in one communication step, or for
more than :data:`MAX_EVENT_ITERATIONS` discrete-state updates at one event, is stopped with a
SlaveError naming it (chattering or an endless event iteration: never a hang). ``terminateSimulation``
ends the run as a co-simulation FMU's fmi2Terminated does (TerminateRequest).
"""
from __future__ import annotations

import ctypes
import math
from typing import Any, Callable

import numpy as np
from scipy.integrate import LSODA, RK45

from orchestration.errors import SlaveError

MAX_EVENTS_PER_STEP = 10_000
MAX_EVENT_ITERATIONS = 1_000
MAX_LOCATE_ITERATIONS = 200
STIFF_STEPS = 500           # explicit steps in one communication step that mark a model stiff
DEFAULT_TOLERANCE = 1e-6


class EventTermination(Exception):
    """The FMU set terminateSimulation at ``time``."""

    def __init__(self, time: float):
        super().__init__(time)
        self.time = time


def _doubles(n: int) -> tuple[np.ndarray, Any]:
    """A float64 buffer and its ctypes double pointer (made once: asking numpy for one costs)."""
    array = np.zeros(max(n, 1))
    return array, array.ctypes.data_as(ctypes.POINTER(ctypes.c_double))


class ModelExchangeStepper:
    """doStep(t, h) for one instantiated FMPy FMU2Model or FMU3Model ``fmu`` with ``nx`` continuous
    states and ``nz`` event indicators. ``name`` is the component's, for messages."""

    def __init__(self, fmu: Any, fmi_version: str, nx: int, nz: int, tolerance: float | None, name: str):
        self.fmu, self.v3, self.nx, self.nz, self.name = fmu, fmi_version == "3.0", nx, nz, name
        self.rtol = float(tolerance) if tolerance and tolerance > 0.0 else DEFAULT_TOLERANCE
        self._x, self._x_ptr = _doubles(nx)
        self._dx, self._dx_ptr = _doubles(nx)
        self._z, self._z_ptr = _doubles(nz)
        self.time = 0.0
        self.x = np.zeros(nx)
        self.z = np.zeros(nz)
        self.next_event = math.inf
        self.last_step: float | None = None
        self.atol = np.full(nx, self.rtol)
        self.stiff = False

    # -- the FMI calls, one name for both versions ------------------------------------------------

    def _set_time(self, t: float) -> None:
        self.fmu.setTime(t)

    def _set_states(self, x: np.ndarray) -> None:
        if self.nx:
            self._x[:self.nx] = x
            self.fmu.setContinuousStates(self._x_ptr, self.nx)

    def _states(self) -> np.ndarray:
        if not self.nx:
            return np.zeros(0)
        self.fmu.getContinuousStates(self._x_ptr, self.nx)
        return self._x[:self.nx].copy()

    def _derivatives(self) -> np.ndarray:
        if self.v3:
            self.fmu.getContinuousStateDerivatives(self._dx_ptr, self.nx)
        else:
            self.fmu.getDerivatives(self._dx_ptr, self.nx)
        return self._dx[:self.nx].copy()

    def _indicators(self) -> np.ndarray:
        if not self.nz:
            return np.zeros(0)
        self.fmu.getEventIndicators(self._z_ptr, self.nz)
        return self._z[:self.nz].copy()

    def _nominals(self) -> np.ndarray:
        if not self.nx:
            return np.zeros(0)
        self.fmu.getNominalsOfContinuousStates(self._x_ptr, self.nx)
        nominal = np.abs(self._x[:self.nx].copy())
        return np.where(np.isfinite(nominal) & (nominal > 0.0), nominal, 1.0)

    def _update_discrete_states(self) -> tuple[bool, bool, bool, float | None]:
        """(more needed, terminate, nominals changed, next event time or None)."""
        if self.v3:
            more, terminate, nominals, _, defined, at = self.fmu.updateDiscreteStates()
        else:
            more, terminate, nominals, _, defined, at = self.fmu.newDiscreteStates()
        return bool(more), bool(terminate), bool(nominals), float(at) if defined else None

    # -- modes --------------------------------------------------------------------------------------

    def after_initialization(self, t: float) -> None:
        """exitInitializationMode leaves an ME FMU in event mode: the event iteration, then
        continuous-time mode at the start time ``t``."""
        self.time = t
        self._event_iteration(enter=False)

    def _event_iteration(self, enter: bool = True) -> None:
        """An event at self.time with the FMU's states and inputs as they are (module docstring)."""
        if enter:
            self.fmu.enterEventMode()
        for _ in range(MAX_EVENT_ITERATIONS):
            more, terminate, nominals_changed, at = self._update_discrete_states()
            if terminate:
                raise EventTermination(self.time)
            if not more:
                break
        else:
            raise SlaveError(f"{self.name}: the FMU asked for more than {MAX_EVENT_ITERATIONS} discrete-state "
                             f"updates at the event at t = {self.time!r} s (an endless event iteration)")
        self.next_event = at if at is not None else math.inf
        self.fmu.enterContinuousTimeMode()
        self.x = self._states()
        self.z = self._indicators()
        self.atol = self.rtol * self._nominals()

    def in_event_mode(self, action: Callable[[], None]) -> None:
        """Run ``action`` (setting discrete inputs, which FMI allows in event mode only) as an event."""
        self.fmu.enterEventMode()
        action()
        self._event_iteration(enter=False)

    # -- the step ------------------------------------------------------------------------------------

    def _crossed(self, z: np.ndarray) -> bool:
        return bool(np.any((z > 0.0) != (self.z > 0.0)))

    def _rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        self._set_time(t)
        self._set_states(x)
        return self._derivatives()

    def _at(self, t: float, x: np.ndarray) -> np.ndarray:
        """Put the FMU at (t, x); its event indicators there."""
        self._set_time(t)
        self._set_states(x)
        return self._indicators()

    def _completed(self) -> bool:
        """completedIntegratorStep; True if the FMU asks for an event (a step event)."""
        enter, terminate = self.fmu.completedIntegratorStep(False)   # a master may restore earlier states
        if terminate:
            raise EventTermination(self.time)
        return bool(enter)

    def step(self, t: float, h: float) -> None:
        """Integrate from t to t + h with the inputs as set (module docstring)."""
        # an overflow inside the solver ends in its failure, reported with the component's name
        with np.errstate(all="ignore"):
            self._step(t, h)
        if not np.all(np.isfinite(self.x)):
            bad = int(np.flatnonzero(~np.isfinite(self.x))[0])
            raise SlaveError(f"{self.name}: continuous state {bad} became {self.x[bad]!r} at t = {self.time!r} s "
                             "(check its parameters and inputs, or smaller steps)")

    def _step(self, t: float, h: float) -> None:
        target = t + h
        self.time = t
        # the master may have changed inputs since the last step: an indicator they flip is an
        # event now, before any integration
        z = self._at(t, self.x)
        if self._crossed(z):
            self._event_iteration()
        events = 0
        while self.time < target:
            if self.next_event <= self.time:          # a time event now (at the step's start, or reached)
                self._event_iteration()
                events += 1
            end = min(target, self.next_event)
            if end <= self.time:
                continue
            if self.nx == 0:
                z = self._at(end, self.x)
                self.time = end
                if self._crossed(z) or self._completed():
                    self._event_iteration()
                    events += 1
                elif end == self.next_event:
                    self._event_iteration()
                    events += 1
                if events > MAX_EVENTS_PER_STEP:
                    self._too_many(t, h)
                continue
            event = self._integrate(end)
            if event or self.time == self.next_event:
                self._event_iteration()
                events += 1
            if events > MAX_EVENTS_PER_STEP:
                self._too_many(t, h)
        self.time = target

    def _too_many(self, t: float, h: float) -> None:
        raise SlaveError(f"{self.name}: more than {MAX_EVENTS_PER_STEP} events in the step from t = {t!r} s "
                         f"(h = {h!r} s): the model chatters at t = {self.time!r} s (a ball at rest bouncing "
                         "ever faster, a switch that flips back); check its parameters or smaller steps")

    def _integrate(self, end: float) -> bool:
        """Solver steps from self.time towards ``end``; returns True where a state or step event stops
        it first (self.time, self.x there), False on reaching ``end``."""
        solver = self._solver(end)
        steps = 0
        while True:
            t0, x0, z0 = solver.t, self.x, self.z
            message = solver.step()
            if solver.status == "failed":
                raise SlaveError(f"{self.name}: the ODE solver failed at t = {solver.t!r} s: {message}")
            t1 = solver.t
            steps += 1
            if t1 > t0 and not self.stiff:
                self.last_step = t1 - t0
            z = self._at(t1, solver.y)
            if self.nz and self._crossed(z):
                self._locate(t0, x0, z0, t1, solver.y, z)
                self._completed()
                return True
            self.time, self.x, self.z = t1, solver.y.copy(), z
            if self._completed():
                return True
            if solver.status == "finished" or t1 >= end:
                self.time = end
                return False
            if steps == STIFF_STEPS and not self.stiff:
                # an explicit method held to tiny steps by stability, not accuracy: go on with LSODA
                # (BDF where the model is stiff), for the rest of the run
                self.stiff = True
                solver = self._solver(end)

    def _solver(self, end: float):
        """Dormand-Prince 5(4) from (self.time, self.x) to ``end`` (its error estimate holds from the
        first step, so restarting it at every communication point costs no accuracy: 1e-10 on
        Dahlquist and the bouncing ball where LSODA's low-order restarts gave 1e-5 and 1e-4); LSODA
        once the model has shown itself stiff."""
        if self.stiff:
            return LSODA(self._rhs, self.time, self.x, end, rtol=self.rtol, atol=self.atol)
        first = min(self.last_step, end - self.time) if self.last_step else None
        return RK45(self._rhs, self.time, self.x, end, rtol=self.rtol, atol=self.atol, first_step=first)

    def _advance(self, t0: float, x0: np.ndarray, t: float) -> np.ndarray:
        """The states at t from (t0, x0), integrated afresh (Dormand-Prince 5(4) at the tolerances):
        where an event is located the solver's dense output is not used, since LSODA's interpolant
        after a restart is of low order (a millimetre off in a ball's height at a bounce)."""
        if t <= t0:
            return x0.copy()
        solver = RK45(self._rhs, t0, x0, t, rtol=self.rtol, atol=self.atol)
        while solver.status == "running":
            message = solver.step()
            if solver.status == "failed":
                raise SlaveError(f"{self.name}: the ODE solver failed locating an event at t = {solver.t!r} s: "
                                 f"{message}")
        return solver.y.copy()

    def _locate(self, t0: float, x0: np.ndarray, z0: np.ndarray, t1: float, x1: np.ndarray,
                z1: np.ndarray) -> None:
        """The time in (t0, t1] where an indicator first changes sign (Illinois' regula falsi on the
        smallest indicator signed by its side at t0, each trial from (t0, x0) integrated afresh), to
        about 1e-12 relative; the FMU, self.time and self.x are left just after it."""
        side = np.where(z0 > 0.0, 1.0, -1.0)
        a, ga = t0, float(np.min(side * z0))
        b, gb, xb = t1, float(np.min(side * z1)), np.array(x1, dtype=float)
        kept = 0
        for _ in range(MAX_LOCATE_ITERATIONS):
            if b - a <= 1e-12 * max(1.0, abs(b)):
                break
            m = b - gb * (b - a) / (gb - ga) if ga != gb else 0.5 * (a + b)
            if not a < m < b:
                m = 0.5 * (a + b)
            xm = self._advance(t0, x0, m)
            zm = self._at(m, xm)
            gm = float(np.min(side * zm))
            if np.any((zm > 0.0) != (z0 > 0.0)):
                b, gb, xb = m, gm, xm
                ga = 0.5 * ga if kept == -1 else ga       # Illinois: halve the end kept twice
                kept = -1
            else:
                a, ga = m, gm
                gb = 0.5 * gb if kept == 1 else gb
                kept = 1
        self._at(b, xb)
        self.time, self.x = b, xb

    # -- state that is the master's, not the FMU's -------------------------------------------------

    def snapshot(self) -> tuple:
        """What a restored FMU state needs of the stepper to go on as it would have (bit for bit)."""
        return (self.time, self.x.copy(), self.z.copy(), self.next_event, self.last_step, self.atol.copy(), self.stiff)

    def restore(self, kept: tuple) -> None:
        self.time, x, z, self.next_event, self.last_step, atol, self.stiff = kept
        self.x, self.z, self.atol = x.copy(), z.copy(), atol.copy()
