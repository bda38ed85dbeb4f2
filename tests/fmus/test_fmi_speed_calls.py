"""The compiled getReal/setReal of fmus/_base.py behave exactly like pythonfmu's per-variable loop
(values, order, feedthrough and lazy recomputation, rejection of bad values), and re-setting an
input to the value it already has invalidates nothing.

The adapters are driven in this process as Python objects (what pythonfmu's native loader calls),
so no FMU is built here; tests/test_fmu_bad_input.py checks the same messages through FMI."""
from __future__ import annotations

import math

import numpy as np
import pytest
from pythonfmu import Fmi2Slave as PythonFmuSlave
from pythonfmu.enums import Fmi2Status

from fmus._base import Fmi2Slave
from fmus.payload import Payload


class Toy(Fmi2Slave):
    """Parameters, vector and scalar inputs, plain, feedthrough and lazy outputs; counts the
    recomputations."""

    lazy_outputs = {"expensive": "update_expensive"}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.updates = self.expensive_updates = 0
        self.real("gain", "parameter", 2.0, "1", "Gain", minimum=0.0, maximum=10.0)
        self.real("u", "input", [1.0, 2.0, 3.0], "m", "Input vector", size=3)
        self.real("s", "input", 0.5, "m", "Scalar input", minimum=-1.0)
        self.real("x", "output", None, "m", "State copy", size=3)
        self.real("y", "output", None, "m", "gain * u", size=3, depends_on=("u",))
        self.real("z", "output", None, "m", "gain * s", depends_on=("s",))
        self.real("expensive", "output", None, "m", "Sum of u, lazy", size=2)
        self.state = np.array([0.1, 0.2, 0.3])

    def step_model(self, t, h):
        self.state = self.state + h * self.v["u"]

    def update_outputs(self):
        self.updates += 1
        v = self.v
        v["x"][:] = self.state
        v["y"][:] = v["gain"] * v["u"]
        v["z"] = v["gain"] * v["s"]

    def update_expensive(self):
        self.expensive_updates += 1
        self.v["expensive"][:] = [self.v["u"].sum(), -self.v["u"].sum()]


def started(cls=Toy, **start):
    slave = cls(instance_name="t")
    slave.setup_experiment(0.0)
    slave.enter_initialization_mode()
    for name, value in start.items():
        slave.set_real([slave.info[name].value_reference], [value])
    slave.exit_initialization_mode()
    return slave


def vr(slave, *names):
    return [slave.info[n].value_reference for n in names]


def errors(slave):
    return [m.msg for m in slave.log_queue if m.status == Fmi2Status.error]


def reference_get(slave, vrs):
    """pythonfmu's own getReal: one getter closure per value reference."""
    return PythonFmuSlave.get_real(slave, vrs)


@pytest.mark.parametrize("seed", range(6))
def test_get_real_returns_what_the_per_variable_loop_returns(seed):
    rng = np.random.default_rng(seed)
    fast, slow = started(), started()
    names = [n for n, i in fast.info.items() if i.kind == "Real"]
    for step in range(4):
        order = list(rng.permutation(names))[: rng.integers(1, len(names) + 1)]
        u = rng.normal(size=3).tolist()
        for slave in (fast, slow):
            slave.set_real(vr(slave, "u[0]", "u[1]", "u[2]"), u)
        got, want = fast.get_real(vr(fast, *order)), reference_get(slow, vr(slow, *order))
        assert got == want and all(type(x) is float for x in got), order
        # recomputed as often as the per-variable getters recompute
        assert (fast.updates, fast.expensive_updates) == (slow.updates, slow.expensive_updates)
        for slave in (fast, slow):
            slave.do_step(float(step), 0.1)


def test_vector_slices_and_repeats():
    slave = started()
    slave.set_real(vr(slave, "u[0]", "u[1]", "u[2]"), [4.0, 5.0, 6.0])
    names = ["y[2]", "y[0]", "y[1]", "y[2]", "x[1]", "x[2]", "z", "u[0]", "expensive[1]", "expensive[0]", "gain"]
    assert slave.get_real(vr(slave, *names)) == [12.0, 8.0, 10.0, 12.0, 0.2, 0.3, 1.0, 4.0, -15.0, 15.0, 2.0]


def test_resetting_the_same_inputs_recomputes_nothing():
    slave = started()
    everything = vr(slave, "x[0]", "y[0]", "y[1]", "y[2]", "z", "expensive[0]")
    slave.do_step(0.0, 0.1)
    slave.get_real(everything)
    version, updates, expensive = slave.input_version, slave.updates, slave.expensive_updates
    inputs = vr(slave, "u[0]", "u[1]", "u[2]", "s")
    values = slave.get_real(inputs)
    for _ in range(3):
        slave.set_real(inputs, values)
        slave.get_real(everything)
    assert (slave.input_version, slave.updates, slave.expensive_updates) == (version, updates, expensive)
    # one changed element is a change: feedthrough and lazy outputs are recomputed once
    slave.set_real(inputs, values[:3] + [values[3] + 0.25])
    assert slave.get_real(vr(slave, "z", "expensive[0]")) == [1.5, sum(values[:3])]
    slave.get_real(everything)
    assert slave.input_version == version + 1
    assert (slave.updates, slave.expensive_updates) == (updates + 1, expensive + 1)


def test_minus_zero_is_a_change():
    slave = started(s=0.0)
    version = slave.input_version
    slave.set_real(vr(slave, "s"), [-0.0])
    assert slave.input_version == version + 1
    assert math.copysign(1.0, slave.v["s"]) == -1.0
    slave.set_real(vr(slave, "u[1]"), [0.0])
    slave.set_real(vr(slave, "u[0]", "u[1]"), [1.0, -0.0])
    assert math.copysign(1.0, slave.v["u"][1]) == -1.0 and slave.input_version == version + 3


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_non_finite_value_is_rejected_alone(bad):
    slave = started()
    slave.set_real(vr(slave, "u[0]", "u[1]", "u[2]", "s"), [7.0, bad, 9.0, 0.75])
    assert slave.v["u"].tolist() == [7.0, 2.0, 9.0] and slave.v["s"] == 0.75
    assert errors(slave) == [f"input 'u[1]' = {bad!r} is not finite; the value is rejected and 'u[1]' keeps 2.0"]


def test_out_of_range_and_fixed_parameters_are_rejected_with_their_messages():
    slave = Toy(instance_name="t")
    slave.setup_experiment(0.0)
    slave.enter_initialization_mode()
    slave.set_real(vr(slave, "gain", "s"), [11.0, -2.0])
    assert errors(slave) == ["parameter 'gain' = 11.0 is outside its range [0.0, 10.0] (1); the value is rejected",
                             "input 's' = -2.0 is outside its range [-1.0, None] (m); the value is rejected"]
    slave.set_real(vr(slave, "gain"), [3.0])
    slave.exit_initialization_mode()
    slave.log_queue.clear()
    slave.set_real(vr(slave, "gain", "s"), [3.0, 0.0])
    assert errors(slave) == ["parameter 'gain' is fixed and cannot be set after initialisation"]
    assert slave.v["gain"] == 3.0 and slave.v["s"] == 0.0


def test_wrong_references_are_errors_not_crashes():
    slave = started()
    out = slave.get_real([9999])
    assert len(out) == 1 and math.isnan(out[0]) and errors(slave)
    slave.log_queue.clear()
    slave.set_real(vr(slave, "u[0]") + [9999], [1.0, 2.0])
    assert errors(slave)


def test_non_real_references_are_refused_by_the_real_calls():
    slave = Payload(instance_name="p")
    slave.integer("extra", "input", 3, "An Integer among the Reals")
    out = slave.get_real(vr(slave, "mass", "extra"))
    assert math.isnan(out[1]) and any("not of type Real" in m for m in errors(slave))


def test_plans_stay_bounded():
    slave = started()
    names = [n for n, i in slave.info.items() if i.kind == "Real"]
    for a in names:
        for b in names:
            for c in names:
                slave.get_real(vr(slave, a, b, c))
    assert 0 < len(slave._get_plans) <= 257


def test_payload_outputs_match_the_per_variable_loop():
    fast, slow = (started(Payload, **{"hydro.volume": 4.0, "initial.position[2]": -0.2}) for _ in range(2))
    outputs = [i.value_reference for i in fast.info.values() if i.causality == "output" and i.kind == "Real"]
    forces = vr(fast, "attachment1.force[0]", "attachment1.force[1]", "attachment1.force[2]", "water.elevation")
    for k in range(5):
        for slave in (fast, slow):
            slave.set_real(forces, [10.0 * k, -5.0, -2e4 - k, 0.1 * k])
        assert fast.get_real(outputs) == reference_get(slow, outputs)
        for slave in (fast, slow):
            slave.do_step(0.025 * k, 0.025)


class ToyNaN(Toy):
    def update_expensive(self):
        super().update_expensive()
        self.v["expensive"][1] = math.nan if self.v["u"][0] > 100.0 else self.v["expensive"][1]


def test_a_lazy_output_that_is_not_finite_fails_the_read_by_name():
    """Lazy outputs are formed on the first read, after doStep's output check: they are checked
    then, so a NaN is an error naming the output (through both the compiled path and the
    per-variable getter), never a silent value."""
    slave = started(ToyNaN)
    vr = [slave.info["expensive[0]"].value_reference, slave.info["expensive[1]"].value_reference]
    slave.do_step(0.0, 0.1)
    assert slave.get_real(vr) == [6.0, -6.0] and not errors(slave)
    slave.set_real([slave.info["u[0]"].value_reference], [200.0])
    slave.get_real(vr)
    assert any("output 'expensive[1]' became nan" in m and "computed on read" in m for m in errors(slave))
    assert slave.failure


class Overflowing(Toy):
    """Overflows in numpy in its step and in its lazy output, and records numpy's error state there."""

    def step_model(self, t, h):
        self.seen_in_step = np.geterr()
        np.array([1e308]) * 10.0        # raises under the host's "raise" unless the step ignores it
        super().step_model(t, h)

    def update_expensive(self):
        self.seen_in_lazy = np.geterr()
        np.array([1e308]) * 10.0
        super().update_expensive()


def test_step_and_lazy_read_ignore_floating_point_errors_and_leave_the_hosts_error_state_alone():
    ignoring = {"divide": "ignore", "over": "ignore", "under": "ignore", "invalid": "ignore"}
    with np.errstate(all="ignore"):
        slave = started(Overflowing)
    for host in ({"all": "raise"}, {"over": "warn", "divide": "raise"}, {"all": "raise"}):
        with np.errstate(**host):
            before = np.geterr()
            assert slave.do_step(slave.time, 0.1)
            slave.get_real(vr(slave, "expensive[0]"))
            assert np.geterr() == before
        assert not errors(slave) and slave.failure is None
        assert slave.seen_in_step == ignoring and slave.seen_in_lazy == ignoring


class Carrying(Toy):
    """Its step carries the input ``u`` on (like a position moved on with its velocity)."""

    carried_inputs = frozenset({"u"})


@pytest.mark.parametrize("call", ["set_real", "take_real"])
def test_a_carried_input_set_to_its_value_is_in_force_again_once_per_step(call):
    slave = started(Carrying)
    u, s = vr(slave, "u[0]", "u[1]", "u[2]"), vr(slave, "s")
    both = tuple(u + s)
    slave.set_real(both, slave.get_real(both))     # compiles the plan (take_real needs one)
    for step in range(3):
        slave.do_step(slave.time, 0.1)
        assert slave.changed_inputs == set()
        version = slave.input_version
        getattr(slave, call)(tuple(s), slave.get_real(s))      # not carried: nothing changes
        assert slave.changed_inputs == {"s"} and slave.input_version == version
        getattr(slave, call)(both, slave.get_real(both))       # u carried: in force again, once
        assert slave.changed_inputs == {"u", "s"} and slave.input_version == version + 1
        getattr(slave, call)(both, slave.get_real(both))
        assert slave.input_version == version + 1


class Exploding(Toy):
    def update_outputs(self):
        super().update_outputs()
        if self.time > 0.15:
            self.v["x"][1] = math.inf


def test_a_non_finite_output_after_a_step_is_named_with_the_time():
    slave = started(Exploding)
    assert slave.do_step(0.0, 0.1) and slave.failure is None
    slave.do_step(0.1, 0.1)
    assert slave.failure == f"output 'x[1]' became inf at t = {0.1 + 0.1} s"
    assert any(slave.failure in m for m in errors(slave))


@pytest.mark.parametrize("t, h, says", [
    (0.0, math.nan, "communication step size"), (0.0, math.inf, "communication step size"),
    (0.0, 0.0, "communication step size"), (0.0, -0.1, "communication step size"),
    (math.nan, 0.1, "the time must be finite"), (math.inf, 0.1, "the time must be finite"),
    (-2e9, 0.1, "the time must be finite"), (1e8, 1e-9, "advance by the step"),
    (0.5, 0.1, "but the instance is at t = 0.0 s"), (math.nan, math.nan, "communication step size")])
def test_a_step_the_checks_refuse_is_refused_with_its_reason_and_changes_nothing(t, h, says):
    slave = started()
    state = slave.state.copy()
    assert slave.do_step(t, h)
    assert any(says in m for m in errors(slave)) and slave.time == 0.0
    assert np.array_equal(slave.state, state) and slave.failure is None


def test_a_step_outside_step_mode_is_refused_with_its_reason():
    slave = Toy(instance_name="t")
    assert slave.do_step(0.0, 0.1) and any("before initialisation ended" in m for m in errors(slave))
    slave = started()
    slave.terminate()
    assert slave.do_step(0.0, 0.1) and any("not allowed in terminated" in m for m in errors(slave))
    slave = started()
    slave.failure = "broken"
    assert slave.do_step(0.0, 0.1) and any("cannot step: broken" in m for m in errors(slave))
    slave = started()
    assert slave.do_step(0.0, 0.1) and not errors(slave) and slave.time == 0.1
