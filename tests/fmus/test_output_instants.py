"""Every FMU's positions and velocities describe the same instant, the end of the step.

For each position/velocity output pair (``X.position[i]`` with ``X.velocity[i]``) the FMU is run
as a master runs it (outputs read after each step, before new inputs) and the positions' finite
difference over a step is compared with the trapezoidal mean of the velocities at its ends:
(p1 - p0)/h = (v0 + v1)/2 - h (a1 - a0)/12 + O(h^4) with the acceleration outputs where the FMU has
them (else O(h^2)).  A position one step behind its velocity gives (v_-1 + v0)/2 instead, off by
the velocity's change over a step (the Crane's attachments were, issue 22), so the residual is
compared with that change.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.fmus.test_feedthrough import CONFIGS, cases
from tests.support.fmu_runner import FmuUnderTest

H = 0.02
STEPS = 40
# inputs that make the bodies accelerate (the feedthrough configurations hold inputs constant)
MOTION = {"Crane": {"base.acceleration[0]": 0.5, "base.angular_acceleration[2]": 0.02},
          "Cable": {"end_b.velocity[1]": 0.2}}
# FMUs whose positions are not a state they integrate but a function of their inputs of the same
# instant (a measurement): they are of one instant when their inputs are (tests/fmus/test_feedthrough.py
# checks they answer the present inputs); the held inputs here (a base with a velocity but a fixed
# position) are not
MEASURED = {"TipCompensator"}


def pairs(md) -> list[tuple[str, str, str | None]]:
    """(position, velocity, acceleration or None) output triples."""
    outputs = {v.name for v in md.modelVariables if v.causality == "output"}
    found = []
    for name in sorted(outputs):
        m = re.fullmatch(r"(.*?)position(\[\d\])", name)
        if m and f"{m.group(1)}velocity{m.group(2)}" in outputs:
            acc = f"{m.group(1)}acceleration{m.group(2)}"
            found.append((name, f"{m.group(1)}velocity{m.group(2)}", acc if acc in outputs else None))
    return found


# known defects, failing today (strict)
KNOWN: dict[str, str] = {}


@pytest.mark.parametrize("model,index", cases(KNOWN))
def test_positions_and_velocities_are_of_the_same_instant(fmu_dir, model, index):
    if model in MEASURED:
        pytest.skip(f"{model}'s positions are functions of its inputs of the same instant")
    config = CONFIGS[model][index]
    fmu = FmuUnderTest(fmu_dir / f"{model}.fmu")
    try:
        found = pairs(fmu.md)
        if not found:
            pytest.skip(f"{model} has no position/velocity outputs")
        fmu.initialize({**config["params"], **config["inputs"], **MOTION.get(model, {})})
        p_names, v_names = [p for p, _, _ in found], [v for _, v, _ in found]
        a_names = [a or v for _, v, a in found]          # no acceleration: the correction below is 0
        _, rows = fmu.run(0.0, STEPS * H, H, p_names + v_names + a_names)
        assert not fmu.errors(), fmu.errors()
    finally:
        fmu.close()
    n = len(found)
    p, v, a = rows[:, :n], rows[:, n:2 * n], rows[:, 2 * n:]
    a = np.where([x is not None for _, _, x in found], a, 0.0)
    slope = np.diff(p, axis=0) / H
    mean = 0.5 * (v[1:] + v[:-1]) - H * np.diff(a, axis=0) / 12.0
    change = np.abs(np.diff(v, axis=0))
    residual = np.abs(slope - mean)
    # a step behind would leave a residual of about the velocity's change over a step
    bad = residual > 0.1 * change + 1e-6 * (1.0 + np.abs(v[1:]))
    worst = np.unravel_index(np.argmax(residual - 0.1 * change), residual.shape)
    assert not bad.any(), (f"{p_names[worst[1]]}: (p1 - p0)/h - (v0 + v1)/2 = {residual[worst]:.3g} at step "
                           f"{worst[0]}, velocity change {change[worst]:.3g}")
