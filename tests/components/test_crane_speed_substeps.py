"""The compiled crane step chooses its sub-steps itself (crane.c, sub-steps 0): the choice is
Crane.step's, n = max(1, ceil(dt / h - 1e-9)) with h the stability limit with the end stops free,
or engaged where a joint is beyond a stop or reaches one within the step (Crane._at_a_stop), and
the states agree with the numpy reference over steps that go into and out of an end stop."""
from __future__ import annotations

import math

import numpy as np
import pytest

from components import kernels
from components.crane import BaseMotion, Crane
from components.mechanism import JointControl, JointLimits, preset
from components.rotations import quat_normalize

pytestmark = pytest.mark.gcc


def _mechanism():
    """The knuckle boom with a stiff end stop its boom is driven into, and a saturating joint."""
    m = preset("knuckle_boom")
    m.links[4].control = JointControl("position", kp=1e7, ki=1e5, kd=1e5, torque_max=2e4, power_max=5e3)
    m.links[1].limits = JointLimits(lower=-0.1, upper=math.radians(61.0), stiffness=5e9, damping=5e8)
    return m


def _expected_substeps(crane: Crane, dt: float, max_substep: float) -> int:
    """Crane.step's choice, as the numpy path makes it."""
    if max_substep > crane._substep_free:
        max_substep = crane._substep_free
    if max_substep > crane._substep_stops and crane._at_a_stop(dt):
        max_substep = crane._substep_stops
    return max(1, math.ceil(dt / max_substep - 1e-9))


def test_the_kernel_chooses_the_sub_steps_of_the_numpy_step_and_agrees_with_it():
    assert kernels.library() is not None, kernels.status()
    m = _mechanism()
    a, b = Crane(m, compiled=False), Crane(m, compiled=True)
    assert b._compiled is not None and a._compiled is None
    for crane in (a, b):
        crane.limit_substeps(0.8)
    assert b._substep_stops < b._substep_free < 0.05
    rng = np.random.default_rng(11)
    base = BaseMotion(rng.normal(size=3), quat_normalize(np.array([1.0, *(0.02 * rng.normal(size=3))])),
                      rng.normal(size=3) * 0.3, 0.01 * rng.normal(size=3), rng.normal(size=3) * 0.3,
                      0.01 * rng.normal(size=3))
    loads = [(att.link, np.asarray(att.point, float), np.array([0.0, 0.0, 2e4]), np.zeros(3))
             for att in m.attachments[:1]]
    setpoint = a.setpoint.copy()
    seen, worst, stopped = set(), 0.0, False
    for k in range(150):
        # the boom's setpoint beyond its upper stop for a while, then back: into the stop and out
        setpoint[1] = math.radians(75.0) if 20 <= k < 80 else math.radians(40.0)
        for crane in (a, b):
            crane.set_inputs(base if k == 0 else crane.base, setpoint, loads)
        dt, max_substep = (0.05, 0.05) if k % 3 else (0.025, 0.01)
        expected = _expected_substeps(b, dt, max_substep)      # on the compiled crane's own state
        stopped = stopped or b._at_a_stop(dt)
        for crane in (a, b):
            crane.step(dt, max_substep)
        cr = b._compiled._cr
        assert cr[0] == expected, (k, cr[0], expected)
        assert cr[1] == dt / expected
        seen.add(expected)
        worst = max(worst, float(np.abs(b.q - a.q).max()), float(np.abs(b.qd - a.qd).max() / 10.0))
    assert len(seen) >= 3, seen                       # free, engaged and the max_substep's own choice
    assert stopped, "no step was taken with the end stops' sub-step"
    assert worst < 1e-9, worst


@pytest.mark.parametrize("compiled", [False, True])
def test_a_sub_step_that_is_not_a_number_is_refused(compiled):
    if compiled:
        assert kernels.library() is not None, kernels.status()
    crane = Crane(preset("knuckle_boom"), compiled=compiled)
    with pytest.raises(ValueError):
        crane.step(0.025, math.nan)
