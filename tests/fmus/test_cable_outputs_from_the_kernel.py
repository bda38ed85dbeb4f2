"""The Cable FMU's outputs after a doStep written by the kernel call that took the step
(components/line.py Line.bind_step_outputs, line.c mc_line_advance) are, bit for bit, those of
the evaluation after the step they replace (Line.end_loads in update_outputs): a crane wire of the
offshore lift's (five elements, a winch at end B paying out and hauling in: splits and merges) with
a moving payload end, a feedthrough refresh after some steps (the current set between steps) and
an FMU state restored part-way (new output arrays: bound again), against the same FMU with the
kernel's outputs turned off."""
from __future__ import annotations

import math

import numpy as np
import pytest

from components import kernels
from fmus.cable import Cable

pytestmark = pytest.mark.gcc          # the line kernel is compiled once per source hash (user cache)

WIRE = {"diameter": 0.04, "mass_per_length": 6.7, "EA": 7.5e7, "damping": -0.1, "drag_normal": 1.2,
        "drag_tangential": 0.05, "seabed.depth": 500.0, "length": 14.5, "max_substep": 0.025,
        "end_a.position[0]": 0.0, "end_a.position[2]": -7.0, "end_b.position[2]": -21.5}


def _started(kernel_outputs: bool) -> Cable:
    slave = Cable(instance_name="kernel" if kernel_outputs else "evaluated")
    slave.setup_experiment(0.0)
    slave.enter_initialization_mode()
    for name, value in WIRE.items():
        slave.set_real([slave.info[name].value_reference], [float(value)])
    slave.set_integer([slave.info["winch.end"].value_reference, slave.info["n_segments"].value_reference], [2, 5])
    slave.exit_initialization_mode()
    assert slave.failure is None, slave.failure
    return slave


def _set(slave: Cable, values: dict) -> None:
    slave.set_real([slave.info[n].value_reference for n in values], list(values.values()))


def _bits(slave: Cable, vrs: list) -> list:
    return np.array(slave.get_real(vrs)).view(np.int64).tolist()


@pytest.mark.skipif(kernels.library() is None, reason="no compiled kernels")
def test_outputs_written_by_the_kernel_equal_the_evaluated_ones(monkeypatch):
    fast, slow = _started(True), _started(False)
    written = []
    step = type(fast.line).step

    def counted_step(line, *args, **kw):
        step(line, *args, **kw)
        if line is fast.line:
            written.append(line.step_outputs is not None)

    monkeypatch.setattr(type(fast.line), "step", counted_step)
    outputs = [n for n, i in fast.info.items() if i.causality == "output" and i.kind == "Real"]
    vrs = [fast.info[n].value_reference for n in outputs]
    assert vrs == [slow.info[n].value_reference for n in outputs]
    saved = None
    counts = set()
    t, h = 0.0, 0.025
    for k in range(800):
        if k == 400:
            saved = fast._get_fmu_state(), slow._get_fmu_state()
        if k == 600:         # back to 10 s: the restored values are new arrays, the kernel's too
            fast._set_fmu_state(saved[0])
            slow._set_fmu_state(saved[1])
            t = 10.0
        slow.line.bind_step_outputs = lambda *arrays: False      # the evaluation after each step
        for slave in (fast, slow):
            w = 2 * math.pi / 7.0
            _set(slave, {"end_a.position[0]": 0.5 * math.sin(w * t), "end_a.velocity[0]": 0.5 * w * math.cos(w * t),
                         "end_a.position[2]": -7.0 + 0.3 * math.sin(1.3 * w * t),
                         "end_a.velocity[2]": 0.3 * 1.3 * w * math.cos(1.3 * w * t),
                         # out ~3 m and in again: the winch element splits and merges
                         "winch.speed": 1.5 * math.sin(2 * math.pi * t / 8.0)})
            assert slave.do_step(t, h) and slave.failure is None
        assert _bits(fast, vrs) == _bits(slow, vrs), k
        counts.add(fast.line.N)
        if k % 7 == 3:       # a feedthrough refresh: the current set after the step
            for slave in (fast, slow):
                _set(slave, {"current.velocity[0]": 0.2 + 0.1 * math.sin(t)})
            assert _bits(fast, vrs) == _bits(slow, vrs), k
        t += h
    assert fast.line.N == slow.line.N and len(counts) > 1       # it split (and merged)
    assert sum(written) > 0.95 * len(written)      # the kernel wrote them nearly every step
    assert not all(written)                        # ... but not where a split or merge ended the step
