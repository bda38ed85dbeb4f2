"""The native loader's two ways of entering the FMU's Python less often (fmus/native/fmi2_loader.c,
"Fewer calls into Python"): setReal calls kept back and handed over with the next call that enters
Python, and the getReal that follows a doStep answered from values read at the end of the step.
Neither may change what the host sees: the status and message of a bad value, the refusal of an
instance in the error state or terminated, the values read after an input changed."""
from __future__ import annotations

import math
import struct
from array import array

import numpy as np

from fmus._base import Fmi2Slave
from tests.support.fmu_runner import expect_error

PAIR = ["line.tension", "speed_setpoint"]
READ = ["motor.torque", "payout.speed", "payout.reference_speed"]


def started_winch(open_fmu):
    winch = open_fmu("Winch")
    winch.initialize({"initial_line_length": 50.0})
    winch.slave.doStep(0.0, 0.01)
    winch.slave.setReal([winch.vr[n] for n in PAIR], [1.0e4, 0.1])   # the slave's word on this list
    return winch


def test_a_kept_back_setreal_is_checked_as_the_slave_checks_it(open_fmu):
    """Once the slave has said a list may wait, its calls are kept in the loader: a value that is
    not finite or out of range must still give fmi2Error with the slave's message, and leave the
    input as it was."""
    winch = started_winch(open_fmu)
    vrs = [winch.vr[n] for n in PAIR]
    winch.slave.setReal(vrs, [2.0e4, 0.1])                         # kept back
    expect_error(winch, winch.slave.setReal, vrs, [-1.0, 0.1], says="outside its range")
    expect_error(winch, winch.slave.setReal, vrs, [math.nan, 0.1], says="not finite")
    expect_error(winch, winch.slave.setReal, vrs, [0.2, math.inf], says="not finite")
    winch.slave.setReal(vrs, [2.0e4, 0.1])
    winch.slave.setReal(vrs, [2.5e4, 0.2])
    got = winch.get(READ)
    # the same values given to an instance one call at a time, each followed by a read
    other = open_fmu("Winch")
    other.initialize({"initial_line_length": 50.0})
    other.slave.doStep(0.0, 0.01)
    for values in ([1.0e4, 0.1], [2.0e4, 0.1], [2.5e4, 0.2]):
        other.get(READ)
        other.slave.setReal(vrs, values)
    assert np.array_equal(got, other.get(READ))
    assert got[0] != 0.0


def test_a_kept_back_setreal_is_refused_in_the_error_state_and_when_terminated(open_fmu):
    winch = started_winch(open_fmu)
    vrs = [winch.vr[n] for n in PAIR]
    winch.slave.setReal(vrs, [2.0e4, 0.1])
    bad = winch.slave.deSerializeFMUstate(b"not a state")
    expect_error(winch, winch.slave.setFMUstate, bad, says="fmi2SetFMUstate failed")
    expect_error(winch, winch.slave.setReal, vrs, [2.0e4, 0.1], says="error state")
    expect_error(winch, winch.slave.setReal, vrs, [3.0e4, 0.1], says="error state")

    other = started_winch(open_fmu)
    other.slave.setReal(vrs, [2.0e4, 0.1])
    other.slave.terminate()
    expect_error(other, other.slave.setReal, vrs, [3.0e4, 0.1], says="terminated")


def test_kept_back_setreal_calls_reach_the_slave_before_the_next_call_in_their_order(open_fmu):
    """Many calls kept back (more than the loader keeps at once), then an FMU state taken: the state
    holds the last value; restored after other values were set, it brings that value back."""
    winch = started_winch(open_fmu)
    vrs = [winch.vr[n] for n in PAIR]
    for k in range(150):
        winch.slave.setReal(vrs, [1.0e4 + 100.0 * k, 0.1])
    state = winch.slave.getFMUstate()
    held = winch.get(READ)
    winch.slave.setReal(vrs, [3.0e4, 0.3])
    assert not np.array_equal(winch.get(READ), held)
    winch.slave.setReal(vrs, [3.5e4, 0.3])                          # kept back, then the restore
    winch.slave.setFMUstate(state)
    assert np.array_equal(winch.get(READ), held)
    other = open_fmu("Winch")
    other.initialize({"initial_line_length": 50.0})
    other.slave.doStep(0.0, 0.01)
    other.slave.setReal(vrs, [1.0e4 + 100.0 * 149, 0.1])
    assert np.array_equal(other.get(READ), held)
    winch.slave.freeFMUstate(state)


def test_a_read_ahead_is_not_the_answer_once_an_input_changed(open_fmu):
    """The getReal after a doStep is answered from the values the slave read at the step's end;
    an input set in between (a feedthrough refresh) must give the values with the new input. The
    same calls with a getBoolean after each doStep (so that nothing is read ahead) give the same
    bits."""
    runs = []
    for interrupt in (False, True):
        winch = started_winch(open_fmu)
        tension = [winch.vr["line.tension"]]
        rows, t = [], 0.01
        for k in range(6):
            winch.slave.setReal(tension, [1.0e4 + 1.0e3 * k])
            winch.slave.doStep(t, 0.01)
            t += 0.01
            if interrupt:
                winch.slave.getBoolean([winch.vr["motor.saturated"]])
            rows.append(winch.get(READ))
            winch.slave.setReal(tension, [4.0e4 + 1.0e3 * k])      # the refresh: a new tension at once
            rows.append(winch.get(READ))
        runs.append(np.array(rows))
    assert np.array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0][0::2, 0], runs[0][1::2, 0]), "the torque must answer the tension"


# ------------------------------------------------------------------ the bridge's side, without C

class LoudLazy(Fmi2Slave):
    """A lazy output whose computation warns when the input is large."""

    lazy_outputs = {"y": "update_y"}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.real("x", "input", 0.0, "1", "input")
        self.real("y", "output", None, "1", "twice the input, computed when read")

    def step_model(self, t, h):
        """No state: y is formed from x when read."""

    def update_y(self):
        self.v["y"] = 2.0 * self.v["x"]
        if self.v["x"] > 1.0:
            self.warning(f"x = {self.v['x']} is large")


def _request(op: int, *parts: bytes) -> bytes:
    return struct.pack("<I", op) + b"".join(parts)


def _vrs(vrs: list[int]) -> bytes:
    return struct.pack("<I", len(vrs)) + array("I", vrs).tobytes()


def _status(reply: bytes) -> tuple[int, int]:
    return struct.unpack_from("<iI", reply, 0)


def test_a_read_ahead_that_gave_a_message_is_answered_at_its_getreal_or_reported_with_the_next_call():
    from fmus.native import fmi_bridge as b

    instance = b.Instance(__name__, "LoudLazy", "loud", "", False)
    slave = instance.slave
    x, y = (slave.info[n].value_reference for n in ("x", "y"))
    for op in (b.ENTER_INIT, b.EXIT_INIT):
        assert _status(instance.call(_request(op))) == (b.OK, 0)

    def step(t: float) -> bytes:
        return instance.call(_request(b.DO_STEP, struct.pack("<ddi", t, 0.1, 1), _vrs([y])))

    def set_x(value: float) -> bytes:
        return instance.call(_request(b.SET_REAL, _vrs([x]), struct.pack("<d", value)))

    # a quiet read: its values come with the step
    assert _status(set_x(0.5)) == (b.OK, 0)
    reply = step(0.0)
    assert _status(reply) == (b.OK, 0) and struct.unpack_from("<Id", reply, 8) == (1, 1.0)
    # a read that warns: nothing comes with the step; the getReal gets the warning and the values
    set_x(3.0)
    reply = step(0.1)
    assert _status(reply) == (b.OK, 0) and reply[8:] == struct.pack("<I", 0)
    reply = instance.call(_request(b.GET_REAL, _vrs([y])))
    assert _status(reply)[0] == b.WARNING and b"x = 3.0 is large" in reply
    assert struct.unpack_from("<d", reply, len(reply) - 8) == (6.0,)
    # ... or the call that comes instead of that getReal reports it
    reply = step(0.2)
    assert reply[8:] == struct.pack("<I", 0)
    reply = set_x(4.0)
    assert _status(reply)[0] == b.WARNING and b"x = 3.0 is large" in reply
    # setReal calls kept back by the loader reach the slave in order, before the request they precede
    sets = b"".join(_vrs([x]) + struct.pack("<d", value) for value in (5.0, 0.25))
    reply = instance.call(_request(b.WITH_SETS, struct.pack("<I", 2), sets, _request(b.GET_REAL, _vrs([y]))))
    assert _status(reply) == (b.OK, 0) and struct.unpack_from("<d", reply, 8) == (0.5,)
