"""The RiggedBlock FMU (issue 25): the block of Lee (2020) section 4.1 (348 t, 27 x 34 x 9 m) on
four slings from one hook, built and run as an FMU, rigged two ways: lugs on the top corners
(straight slings), and lugs on the bottom edges with the slings wrapped over the top edges.

At rest the pull of the slings on the hook balances the block's weight within 0.5 % (the static
acceptance of the block turnover), no sling passes through the block at any step, and a saved FMU
state replays to the same outputs.
"""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

from tests.support.fmu_runner import FmuUnderTest

MASS, G = 348000.0, 9.81
HOOK = (0.0, 0.0, -30.0)
RIGGINGS = {
    # top corners (body frame), straight slings
    "straight": ([(sx * 13.5, sy * 17.0, -4.5) for sx in (-1, 1) for sy in (-1, 1)],
                 math.dist(HOOK, (13.5, 17.0, -4.5)) * (1.0 - 1.3 * MASS * G / 4 / 1e9), 2e7, 0),
    # lugs on the bottom edges x = +-13.5: each sling bends over a top edge and runs down a face
    "wrapped": ([(sx * 13.5, sy * 8.0, 4.5) for sx in (-1, 1) for sy in (-1, 1)],
                (math.hypot(math.hypot(13.5, 25.5), 8.0) + 9.0) * (1.0 - 0.0015), 2e8, 1),
}


def start_values(rigging: str) -> dict:
    lugs, length, damping, _ = RIGGINGS[rigging]
    values = {"mass": MASS, "hook1.position[2]": HOOK[2]}
    for j, lug in enumerate(lugs, start=1):
        values[f"sling{j}.hook"] = 1
        values[f"sling{j}.length"] = length
        values[f"sling{j}.damping"] = damping
        for i in range(3):
            values[f"sling{j}.lug[{i}]"] = lug[i]
    return values


@pytest.mark.slow
@pytest.mark.parametrize("rigging", sorted(RIGGINGS))
def test_block_on_four_slings_balances_its_weight(fmu_dir, validation, rigging):
    fmu = FmuUnderTest(fmu_dir / "RiggedBlock.fmu")
    try:
        fmu.initialize(start_values(rigging))
        names = ["hook1.force[0]", "hook1.force[1]", "hook1.force[2]", "contact.penetration",
                 *(f"sling{j}.tension" for j in range(1, 5)), "sling5.tension",
                 *(f"sling{j}.contact_nodes" for j in range(1, 5)), "contact.force"]
        _, rows = fmu.run(0.0, 3.0, 0.01, names)
        assert not fmu.errors()
        pull = rows[-1, 2]
        validation.record(case=f"348 t block on four slings ({rigging}): vertical sling pull at rest vs weight",
                          reference=MASS * G, ours=pull, tolerance=0.005, tol_kind="rel", unit="N",
                          source="wire_rope_mooring_digest.md 2.13 (block 348 t); statics")
        assert pull == pytest.approx(MASS * G, rel=0.005)
        assert abs(rows[-1, 0]) < 1e-6 * pull and abs(rows[-1, 1]) < 1e-6 * pull
        assert np.max(rows[:, 3]) <= 1e-6                          # no sling inside the block, any step
        assert np.ptp(rows[-1, 4:8]) < 1e-6 * pull                  # symmetric: one tension
        assert rows[-1, 8] == 0.0                                   # an unused sling carries nothing
        nodes = RIGGINGS[rigging][3]
        assert np.all(rows[-1, 9:13] == nodes)                      # wrapped: one edge per sling
        assert (rows[-1, 13] > 0.1 * MASS * G / 4) == bool(nodes)   # the edge carries the bend
        # a saved state replays
        state = fmu.slave.getFMUstate()
        _, a = fmu.run(3.0, 3.2, 0.01, names)
        fmu.slave.setFMUstate(state)
        _, b = fmu.run(3.0, 3.2, 0.01, names)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-9 * MASS * G)
    finally:
        fmu.close()


# bad hook inputs on the straight rigging at rest: each ends in a clean fmi2Error naming the cause
# within a few steps, never a hang or a NaN (the fuzzer, tests/fmus/test_fmu_fuzz.py, tries them at
# random; these are the ones that once hung it)
BAD_HOOKS = {
    "into the block": ({"hook1.position[2]": 0.0}, r"crane hook 1 \(hook1.position = \[0.0, 0.0, 0.0\] m.*inside "
                                                   r"the block"),
    "far away": ({"hook1.position[0]": 1e6}, r"sling1 would be stretched 2.9\d+e\+04 times its length .* by crane "
                                             r"hook 1 \(hook1.position = \[1000000.0, 0.0, -30.0\] m"),
    "huge velocity": ({"hook1.velocity[0]": 1e30}, r"sling1 would be stretched .* by crane hook 1 .*hook1.velocity "
                                                   r"= \[1e\+30, 0.0, 0.0\] m/s"),
}


@pytest.mark.parametrize("case", sorted(BAD_HOOKS))
def test_bad_hook_inputs_end_in_a_clean_error(fmu_dir, case):
    from fmpy.fmi1 import FMICallException
    inputs, message = BAD_HOOKS[case]
    fmu = FmuUnderTest(fmu_dir / "RiggedBlock.fmu")
    try:
        fmu.initialize(start_values("straight"))
        fmu.slave.doStep(0.0, 0.01)
        fmu.set(inputs)
        with pytest.raises(FMICallException):
            for k in range(1, 6):
                fmu.slave.doStep(0.01 * k, 0.01)
                assert np.all(np.isfinite(fmu.get(["position[2]", "hook1.force[2]"])))
        assert any(re.search(message, m) for m in fmu.errors()), fmu.errors()
    finally:
        fmu.close()


def test_lug_inside_the_block_and_a_step_too_long_are_refused(fmu_dir):
    from fmpy.fmi1 import FMICallException
    fmu = FmuUnderTest(fmu_dir / "RiggedBlock.fmu")
    try:
        with pytest.raises(FMICallException):
            fmu.initialize({**start_values("straight"), "sling1.lug[0]": 0.0, "sling1.lug[1]": 0.0,
                            "sling1.lug[2]": -4.0})
        assert any("sling1.lug" in m and "0.5 m inside the block" in m for m in fmu.errors()), fmu.errors()
    finally:
        fmu.close()
    fmu = FmuUnderTest(fmu_dir / "RiggedBlock.fmu")
    try:
        fmu.initialize(start_values("straight"))
        # four slings: 20000 / 4 = 5000 sub-steps of 1 ms at most in one doStep
        with pytest.raises(FMICallException):
            fmu.slave.doStep(0.0, 5.001)
        assert any("more than the 5000 one doStep may take" in m for m in fmu.errors()), fmu.errors()
        fmu.slave.doStep(0.0, 0.01)                   # the state is unchanged and steps on
    finally:
        fmu.close()
