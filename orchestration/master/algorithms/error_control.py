"""Error-controlled adaptive co-simulation with rollback: step doubling (Richardson's error
estimate) on the coupling variables, using FMU state save/restore.

Sources: Schierz, Arnold, Clauss, "Co-simulation with communication step size control in an FMI
compatible master algorithm", 9th Modelica Conference 2012; Arnold, Clauss, Schierz, Arch. Mech.
Eng. 60(1) 2013 (anchors_cosim.md section 3); the scaled error norm of ODE solvers (Hairer,
Norsett, Wanner, Solving ODEs I, section II.4, with FMI's ``nominal`` as the scale).

From t, save every slave's state; one coupling step (cycle, step_control.py) of h gives the coupled
outputs y_1; restore; two of h/2 give y_2.  The local error of the (first-order, inputs held)
coupling is about y_2 - y_1, measured on the *coupling variables* -- the outputs that feed a
connection (``measure="all"`` adds the recorded ones) -- each against its own scale:

    e_k = |y_2,k - y_1,k| / (atol + rtol max(|y_2,k|, S_k)),    err = max_k e_k

S_k is the larger of the variable's ``nominal`` (from its modelDescription; FMI's default 1 where
none is declared: 1 m/s, 1 m, 1 rad/s) and the largest magnitude its *group* -- the vector or
matrix it belongs to, ``force[0..2]``, ``inertia_angular[0..5]`` -- has had so far in the run (a
wire tension of 1e5 N is measured against 1e5 N).  A component that crosses zero (a sideways wire force,
an off-diagonal inertia) is then measured against its vector's size, not against itself: measured
against itself (``norm: "self"``, the scaling before), the offshore lift's crane inertia
``base.inertia_angular[1,2]`` and the wire's sideways force set the step at every zero crossing.

err <= 1 accepts the step and keeps the two half steps (the better result); otherwise the master
restores and retries with a smaller step.  Next step: h * clamp(safety err^(-1/2), min, max) (order
p = 1 of the coupling error, exponent -1/(p+1)).  Cost: three coupling steps and one save/two
restores per accepted step.

**No stall.** Steps stay within [min_step, max_step] (defaults 1/100 of the run's cycle and the
cycle itself: larger steps only when asked for, since the file's step is the one known stable).  A
step at min_step whose error still misses the tolerance, or is above safety^2 where the controller
would shrink the step further, is accepted; the variables that missed it are named in a warning and
left out of the norm from then on: a difference that does not shrink with the step is no coupling
error the step can control.  This is what stalled the offshore lift (0.85 s in 24 minutes, steps of
2e-5 s): the Winch FMU, heave-compensating, differentiates its held ``hardpoint.velocity_down``
input inside each step (the reference acceleration (v_ref - v_prev_ref) / h_sub), so its
``motor.torque`` and ``motor.power`` -- recorded, connected nowhere -- jump by J dv / (r h) at the
start of every step, and one step and two half steps differ by 1 % whatever h is (1362 against
1375 N m at h = 2e-5 s); measured against itself, each such number made the step shrink further.

**Slow, not stalled.** A tolerance that a stiff coupling meets only with steps far below the file's
is met, at a price: when the last 500 accepted steps average below a tenth of the run's first cycle,
a SlowProgressWarning (once per run) names the variable that set most of them and, under
Gauss-Seidel, the end-of-step inputs its FMU is handed (the block turnover's floating crane: its base
force, fed the block's end-of-step hook force, sets 1-2 ms steps where Jacobi takes 5-10 ms).

**Gauss-Seidel and an FMU that carries its inputs.** With ``method="gauss-seidel"`` a slave stepped
after its source is given the source's outputs at the step's *end*.  The Cable FMU takes its end
positions as the values at the step's start and carries them with the end velocities over the step;
stepped after the crane it runs ahead of the crane tip by v h, and the end element (EA / l = 2.6e7
N/m on the offshore lift) turns that into a force error of about EA / l v h: first order in h, so
one step and two half steps differ by EA / l v h / 2 at any step (81 N at 0.25 ms, 199 N at 1 ms on
the lift at 0.12 s).  The estimate is right; the coupling is first order there, and the step
crawled at its minimum on ``cable.end_b.force[2]`` (836 steps for the lift's first second).  The
shipped lift systems therefore step the cable right after the winch (winch, cable, ship, crane,
payload: 41 steps for that second), and a minimum-step warning names the Gauss-Seidel order when it
hands the warned slave end-of-step outputs (:meth:`AdaptiveAlgorithm.order_hint`).

**A discarded step.** An FMU that cannot take a step that long says so with the status discard
(fmi2Discard: an internal solver that did not converge, an input outside what it can follow in one
step). With rollback the master restores every slave to the step's start and retries a quarter of the
step (at least min_step; ``discarded`` in the settings counts them), and the steps after stay below
half the discarded one (the cap doubles after every 100 accepted steps, for an FMU that refused only
there); a discard at min_step stops the run, naming the FMU and its log. Without rollback, and under
the other masters, a discarded step ends the run with a StepDiscarded error that says so.

**Hold check** (``hold_check=True``): also compare each slave's held inputs with those its sources
give at t + h (module text in :meth:`_hold_error`).

Before the first step every slave's rollback is tested, one slave at a time with its inputs held:
save, step, restore, step again -- the outputs must repeat bit for bit.  A slave that does not
restore exactly stops the run with a message naming it.

**Without rollback** (``rollback="auto"`` and a slave without state access: an FMI 1.0 FMU, or one
with canGetAndSetFMUstate false; ``rollback="never"`` for any system).  No step can be repeated, so
none is doubled: each step is taken once and the next one is set from the change of the coupling
variables over it, the error of holding them (the local error of zero-order hold, first order in
h; Schierz, Arnold, Clauss 2012, section 3, the estimate of order p = 0 from the extrapolation of the
coupling signals):

    e_k = |y_k(t + h) - y_k(t)| / (atol + rtol max(|y_k(t + h)|, S_k)),    err = max_k e_k,
    h_next = h * clamp(safety / err, min_change, max_change)

scaled as above.  Every step is accepted (as ECCO's), so the tolerance bounds how far a coupling
variable may move while it is held, not the error of the step just taken; the run says so in a
warning.  ``rollback="always"`` refuses such a system, naming the FMU.
"""
from __future__ import annotations

import math
import re
import warnings
from typing import TYPE_CHECKING, Sequence

import numpy as np

from orchestration.errors import DISCARD_STATUS, RollbackError, SlaveError, StepDiscarded  # noqa: F401
from orchestration.master.algorithms.step_control import AdaptiveAlgorithm, StepSizeWarning

if TYPE_CHECKING:
    from orchestration.master.execution import Execution

#: defaults of min_step and max_step, as fractions of the run's first cycle (its base step): a step
#: larger than the one the system file was set up with may be unstable (the explicit coupling of a
#: wire in air diverges at twice the offshore lift's step), and one below 1/100 of it costs more than
#: a fixed-step run at the file's step could gain (docs/algorithms.md)
MIN_STEP_FRACTION = 1e-2
DISCARD_RELAX = 100          # accepted steps after which the cap of a discard doubles
MAX_STEP_FACTOR = 1.0
MEASURES = ("coupling", "all")
ROLLBACKS = ("auto", "always", "never")
NORMS = ("max", "rms", "self")

_INDEX = re.compile(r"\[[^\]]*\]$")


def variable_group(name: str) -> str:
    """The vector or matrix a scalar belongs to: ``force[2]`` -> ``force``, ``inertia[1,2]`` -> ``inertia``."""
    return _INDEX.sub("", name)


def declared_nominal(slave, name: str) -> float:
    """The ``nominal`` attribute of an FMU variable (its declared type's if not its own), or 1: FMI's
    default ("if not defined ... nominal = 1 is assumed", FMI 2.0 section 2.2.7)."""
    md = getattr(slave, "model_description", None)
    if md is None:
        return 1.0
    if not hasattr(slave, "_nominals"):
        table = {}
        for v in md.modelVariables:
            raw = v.nominal if v.nominal is not None else getattr(v.declaredType, "nominal", None)
            try:
                value = abs(float(raw)) if raw is not None else 1.0
            except (TypeError, ValueError):
                value = 1.0
            table[v.name] = value if math.isfinite(value) and value > 0.0 else 1.0
        try:
            slave._nominals = table
        except AttributeError:
            return table.get(name, 1.0)
    return slave._nominals.get(name, 1.0)


class ErrorControlAlgorithm(AdaptiveAlgorithm):
    """Step doubling with rollback (module docstring)."""

    name = "error-control"

    def __init__(self, rtol: float = 1e-3, atol: float = 1e-6, h0: float | None = None,
                 min_step: float | None = None, max_step: float | None = None, safety: float = 0.9,
                 min_change: float = 0.2, max_change: float = 2.0, method: str = "jacobi",
                 order: Sequence[str] | None = None, extrapolation: int = 0, hold_check: bool = False,
                 measure: str = "coupling", norm: str = "max", rollback: str = "auto") -> None:
        super().__init__(method, order, extrapolation)
        if rollback not in ROLLBACKS:
            raise ValueError(f"error-control: rollback {rollback!r}: 'auto' (step doubling where every FMU can save "
                             f"its state, the hold error otherwise), 'always' or 'never'")
        self.rollback = rollback
        self.doubling = rollback != "never"
        self.hold_check = bool(hold_check)
        if not (rtol >= 0.0 and atol >= 0.0 and rtol + atol > 0.0):
            raise ValueError(f"error-control: rtol = {rtol!r}, atol = {atol!r} must be >= 0 and not both 0")
        if min_step is not None and max_step is not None and not 0.0 < min_step <= max_step:
            raise ValueError(f"error-control: need 0 < min_step <= max_step ({min_step!r}, {max_step!r})")
        for label, value in (("min_step", min_step), ("max_step", max_step)):
            if value is not None and not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"error-control: {label} = {value!r} must be a positive number of seconds")
        if measure not in MEASURES:
            raise ValueError(f"error-control: measure {measure!r}: 'coupling' (the outputs that feed connections) "
                             f"or 'all' (and the recorded ones)")
        if norm not in NORMS:
            raise ValueError(f"error-control: norm {norm!r}: 'max' (the largest scaled error), 'rms' (their root "
                             f"mean square) or 'self' (rms, each variable against its own magnitude)")
        self.rtol, self.atol = float(rtol), float(atol)
        self.min_step, self.max_step = min_step, max_step
        self.safety, self.min_change, self.max_change = safety, min_change, max_change
        self.measure, self.norm = measure, norm
        if h0 is not None:
            self.next_step = float(h0)
        self.rejected = 0
        self.discarded = 0                    # steps an FMU discarded (retried shorter; in rejected too)
        self._discard_cap, self._since_discard = math.inf, 0
        self.below_tolerance = 0              # steps accepted at min_step above the tolerance
        self.uncontrolled: list[str] = []     # variables left out of the norm (module docstring)
        self._tested = False

    def settings(self) -> dict:
        return {"algorithm": self.name, "method": self.method, "rtol": self.rtol, "atol": self.atol,
                "min_step": self.min_step, "max_step": self.max_step, "safety": self.safety,
                "extrapolation": self.extrapolation, "hold_check": self.hold_check, "measure": self.measure,
                "norm": self.norm, "rollback": self.rollback, "doubling": self.doubling,
                "cycle": getattr(self, "cycle", 1), "rejected": self.rejected, "discarded": self.discarded,
                "below_tolerance": self.below_tolerance, "uncontrolled": list(self.uncontrolled)}

    def setup(self, execution: "Execution") -> None:
        super().setup(execution)
        stateless = [f"{s.name} ({getattr(getattr(s, 'fmu', None), 'name', '')})" for s in execution.slaves
                     if not s.can_get_and_set_state]
        if stateless and self.rollback == "always":
            raise RollbackError(f"error-control rolls steps back, but {', '.join(stateless)} cannot save and "
                                "restore its state (canGetAndSetFMUstate is false, or FMI 1.0); use "
                                "rollback=auto (steps from the hold error), --algorithm fixed or ecco for this system")
        if stateless and self.doubling:
            self.doubling = False
            warnings.warn(f"error-control: {', '.join(stateless)} cannot save and restore its state, so no step "
                          "can be repeated: the steps follow the change of the coupling variables over each step "
                          "(the hold error) and every step is accepted (docs/algorithms.md)", StepSizeWarning,
                          stacklevel=2)
        self._select(execution)
        if not self._names and not self.hold_check:
            warnings.warn(f"error-control: {execution.system.name} has no connections, so no coupling error to "
                          "control: it steps at its first step size, without step doubling", stacklevel=2)

    @property
    def step_floor(self) -> float:
        return self.min_step or 0.0

    def start(self, h0: float) -> None:
        super().start(h0)
        H0 = self.cycle * h0
        if self.min_step is None:
            self.min_step = MIN_STEP_FRACTION * H0
        if self.max_step is None:
            self.max_step = max(MAX_STEP_FACTOR * H0, self.min_step)
        if not 0.0 < self.min_step <= self.max_step:
            raise ValueError(f"error-control: need 0 < min_step <= max_step ({self.min_step!r}, {self.max_step!r})")
        self.next_step = min(max(self.next_step, self.min_step), self.max_step)

    # ------------------------------------------------------------------ what is measured

    def _select(self, ex: "Execution") -> None:
        """Positions of the measured outputs per slave, their names, groups and declared scales."""
        used: list[set[int]] = [set() for _ in ex.slaves]
        for groups in ex.links:
            for g in groups:
                used[g.source].update(int(p) for p in g.src_pos)
        if self.measure == "all":
            used = [set(range(len(names))) for names in ex.out_names]
        self._positions = [np.array(sorted(u), dtype=np.int64) for u in used]
        names, groups, nominal, owner = [], [], [], []
        group_index: dict[tuple[int, str], int] = {}
        for i, positions in enumerate(self._positions):
            for p in positions:
                name = ex.out_names[i][p]
                key = (i, variable_group(name))
                names.append(f"{ex.slaves[i].name}.{name}")
                owner.append(i)
                groups.append(group_index.setdefault(key, len(group_index)))
                nominal.append(declared_nominal(ex.slaves[i], name))
        self._names = names
        self._owner = owner
        self._group = np.array(groups, dtype=np.int64)
        n_groups = len(group_index)
        self._declared = np.zeros(n_groups)
        if len(names):
            np.maximum.at(self._declared, self._group, np.array(nominal))
        self._learnt = np.zeros(n_groups)
        self._active = np.ones(len(names), dtype=bool)
        self._learn(self._measured())

    def _measured(self) -> np.ndarray:
        ex = self.execution
        parts = [np.asarray(ex.outputs[i])[p] for i, p in enumerate(self._positions) if len(p)]
        return np.concatenate(parts) if parts else np.zeros(0)

    def _learn(self, y: np.ndarray) -> None:
        """The groups' largest magnitudes so far (the learnt scales)."""
        if y.size:
            finite = np.where(np.isfinite(y), np.abs(y), 0.0)
            np.maximum.at(self._learnt, self._group, finite)

    def _scaled(self, y1: np.ndarray, y2: np.ndarray) -> np.ndarray:
        """Each measured variable's difference over its tolerance (module docstring)."""
        if self.norm == "self":
            ref = np.abs(y2)
        else:
            ref = np.maximum(np.abs(y2), np.maximum(self._declared, self._learnt)[self._group])
        return np.abs(y2 - y1) / (self.atol + self.rtol * ref)

    def _norm(self, scaled: np.ndarray) -> float:
        active = scaled[self._active]
        if not active.size:
            return 0.0
        if self.norm == "max":
            return float(np.max(active))
        return float(np.sqrt(np.mean(np.square(active))))

    def _hold_error(self, t_end: float) -> float:
        """Input-hold error (``hold_check=True``): each slave's inputs held over the last half step
        against those its sources give at t + h (feedthrough refreshed), scaled as the outputs are.
        Step doubling cannot see an input that starts to change inside the step (a contact force when
        the bodies touch in the second half: both runs held it at 0); this can, and it also keeps each
        held input within rtol of its end value, which contact transients need (positions measured
        against rtol |y| are too coarse there).  First order in h, so off by default: on a smooth
        coupling at tight tolerance it sets the step (B3 at rtol 1e-4: steps of 1e-5 s)."""
        ex = self.execution
        worst = 0.0
        for i in range(len(ex.slaves)):
            if not ex.links[i]:
                continue
            held = ex.inputs[i]
            now = ex.compute_inputs(i, t_end, 0.0, 0, updated=())
            scale = self.atol + self.rtol * np.maximum(np.abs(now), np.abs(held))
            worst = max(worst, float(np.sqrt(np.mean(np.square((now - held) / scale)))))
        return worst

    def self_test(self, t: float, h: float) -> None:
        """Each slave alone, inputs held: save, step, restore, step again -- the outputs must repeat
        bit for bit (testing the slaves one by one names the one that does not restore)."""
        ex = self.execution
        for i, slave in enumerate(ex.slaves):
            H = h * self._multiples[i] / self.cycle
            u = ex.compute_inputs(i, t, H, 0, updated=())
            state = slave.get_state()
            try:
                while True:
                    try:
                        first = slave.exchange(ex.in_vrs[i], u, t, H, ex.out_vrs[i]).copy()
                        break
                    except SlaveError as exc:
                        # too long a step for it: the test is of the restore, at a step it takes
                        if DISCARD_STATUS not in str(exc):
                            raise
                        slave.set_state(state)
                        H = self._after_discard(t, H, StepDiscarded(str(exc)))
                slave.set_state(state)
                try:
                    again = slave.exchange(ex.in_vrs[i], u, t, H, ex.out_vrs[i])
                except SlaveError as exc:
                    # an FMU that checks its time (ours, the Reference FMUs) refuses to repeat a step
                    # its restore did not take it back to
                    raise RollbackError(f"{slave.name} does not restore its state: the step repeated after a "
                                        f"rollback failed ({exc}); error-control cannot run with it (use "
                                        "--algorithm fixed or ecco)") from None
                slave.set_state(state)
            finally:
                slave.free_state(state)
            if not np.array_equal(first, again):
                k = int(np.argmax(np.abs(first - again)))
                raise RollbackError(
                    f"{slave.name} does not restore its state exactly: after a rollback its output "
                    f"{ex.out_names[i][k]!r} was {again[k]!r} instead of {first[k]!r}; error-control would give "
                    "wrong results with it (use --algorithm fixed or ecco)")
        self._tested = True

    def _step_once(self, t: float, h: float) -> float:
        """A step without rollback: taken once, the next one from its hold error (module docstring)."""
        before = self._measured()
        self.coupling_step(t, h)
        after = self._measured()
        scaled = self._scaled(before, after)
        err = self._norm(scaled)
        if h <= self.min_step * (1 + 1e-12) and err > 1.0:
            self.below_tolerance += 1
            self._give_up_on(t, h, scaled)
        active = np.flatnonzero(self._active)
        worst = self._names[active[np.argmax(scaled[active])]] if active.size else ""
        self.log.append({"time": t + h, "step": h, "error": err, "rejected": 0, "worst": worst})
        self.watch_progress(t + h, h, worst)
        self._learn(after)
        factor = self.safety / err if err > 0.0 else self.max_change
        if not math.isfinite(err):
            factor = self.min_change
        self.next_step = min(max(h * min(max(factor, self.min_change), self.max_change), self.min_step),
                             self.max_step)
        return h

    def _after_discard(self, t: float, h: float, exc: StepDiscarded) -> float:
        """The step to retry after an FMU discarded one of h (module docstring): a quarter of it, at
        least min_step; at min_step the run stops, naming the FMU."""
        if h <= self.min_step * (1 + 1e-12):
            raise StepDiscarded(f"error-control: at t = {t:.6g} s a step of the minimum step {h:.3g} s was "
                                f"discarded: {exc} (lower min_step, or check the FMU's inputs there)") from None
        self.rejected += 1
        self.discarded += 1
        # the steps that follow stay below half the discarded one (each discard costs a rollback);
        # the cap doubles after every DISCARD_RELAX accepted steps, for an FMU that refused only there
        self._discard_cap = min(self._discard_cap, 0.5 * h)
        self._since_discard = 0
        return max(0.25 * h, self.min_step)

    def _capped(self, h: float) -> float:
        """The next step within the cap that discarded steps set (_after_discard)."""
        if self._discard_cap == math.inf:
            return h
        self._since_discard += 1
        if self._since_discard >= DISCARD_RELAX:
            self._since_discard = 0
            self._discard_cap *= 2.0
        return max(min(h, self._discard_cap), self.min_step)

    def _give_up_on(self, t: float, h: float, scaled: np.ndarray, level: float = 1.0) -> None:
        """At min_step and still above the tolerance (or above ``level``, where the controller would
        shrink the step further): leave those variables out of the norm from now on, and say so
        (module docstring)."""
        missed = np.flatnonzero(self._active & (scaled > level))
        if not missed.size:
            return
        self._active[missed] = False
        names = [self._names[k] for k in missed]
        self.uncontrolled.extend(names)
        worst = missed[np.argsort(scaled[missed])[::-1]]
        listed = ", ".join(f"{self._names[k]} ({scaled[k]:.3g})" for k in worst[:5])
        more = f" and {len(missed) - 5} more" if len(missed) > 5 else ""
        where = ("still above the tolerance" if float(np.max(scaled[missed])) > 1.0 else
                 f"within the tolerance but above {level:.3g} of it, where the step would shrink further,")
        what = "step-doubling difference" if self.doubling else "change over the step (hold error)"
        warnings.warn(
            f"error-control: at t = {t:.6g} s the {what} of {listed}{more} is {where} "
            f"(scaled error in brackets) at the minimum step {h:.3g} s: a difference that does not "
            f"shrink with the step is no coupling error the step can control; these are left out of the error "
            f"norm from now on (set min_step or rtol/atol to change this).{self.order_hint(self._owner[worst[0]])}",
            StepSizeWarning, stacklevel=2)

    def slow_setter(self, name: str, count: int) -> tuple[str, str]:
        what = "step-doubling difference" if self.doubling else "change over the step (hold error)"
        hint = self.order_hint(self._owner[self._names.index(name)]) if name in self._names else ""
        return f"; {name} set {count} of them (its {what} reaches the tolerance there)", hint

    def slow_advice(self) -> str:
        return f"loosen the tolerance (--option rtol=..., now {self.rtol:g}) or use --algorithm ecco or fixed"

    def step(self, t: float, h: float) -> float:
        if not self._names and not self.hold_check:
            # nothing coupled, nothing to measure: step doubling would triple the cost for an error of 0
            self.coupling_step(t, h)
            self.log.append({"time": t + h, "step": h, "error": 0.0, "rejected": self.rejected, "worst": ""})
            self.next_step = h
            return h
        if not self.doubling:
            return self._step_once(t, h)
        if not self._tested:
            self.self_test(t, h)
        ex = self.execution
        snap = ex.save()
        try:
            while True:
                try:
                    self.coupling_step(t, h)
                    y1 = self._measured()
                    ex.restore(snap)
                    self.coupling_step(t, 0.5 * h)
                    self.coupling_step(t + 0.5 * h, 0.5 * h)
                except StepDiscarded as exc:
                    # an FMU could not take a step this long: from the step's start again, shorter
                    h = self._after_discard(t, h, exc)
                    ex.restore(snap)
                    continue
                y2 = self._measured()
                scaled = self._scaled(y1, y2)
                err = self._norm(scaled)
                if self.hold_check:
                    err = max(err, self._hold_error(t + h))
                at_min = h <= self.min_step * (1 + 1e-12)
                if at_min and err > self.safety ** 2:
                    # at the bottom and still wanting smaller steps (or missing the tolerance):
                    # no smaller step is allowed, so those variables leave the norm
                    self.below_tolerance += err > 1.0
                    self._give_up_on(t, h, scaled, self.safety ** 2)
                factor = self.safety * err ** -0.5 if err > 0.0 else self.max_change
                if not math.isfinite(err):
                    factor = self.min_change
                if err <= 1.0 or at_min:
                    active = np.flatnonzero(self._active)
                    worst = self._names[active[np.argmax(scaled[active])]] if active.size else ""
                    self.log.append({"time": t + h, "step": h, "error": err, "rejected": self.rejected,
                                     "worst": worst})
                    self.watch_progress(t + h, h, worst)
                    self._learn(y2)
                    self.next_step = self._capped(min(max(h * min(max(factor, self.min_change), self.max_change),
                                                          self.min_step), self.max_step))
                    return h
                self.rejected += 1
                ex.restore(snap)
                h = max(h * min(max(factor, self.min_change), 1.0), self.min_step)
        finally:
            ex.discard(snap)
