"""Every FMU repeats a step bit for bit after fmi2SetFMUstate, the first step after initialisation
included, in the order error control's rollback self-test and its step doubling use
(orchestration/master/algorithms/error_control.py): inputs iterated during initialisation, outputs
read, new inputs set, the state saved, a step, the state restored, the same inputs, the same step.

What this catches: a state that leaves out something an adapter keeps beside it (Ship.fmu kept the
loads it had last handed to the ship; after a restore it compared the next inputs with the
restored ones instead of with the loads the restored ship holds, skipped them as unchanged, and
stepped with older loads: a 1e-15 difference on the compensated crane, error control refused it)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import build_fmus
from tests.support.fmu_runner import FmuUnderTest

#: FMUs left out, with why (the list below must name every adapter, so that none is forgotten)
LEFT_OUT: dict[str, str] = {}
BARGE = Path(__file__).resolve().parents[2] / "scenarios" / "motion_platform" / "barge.nc"
#: start values an FMU needs to initialise (the controller: both of its methods)
CASES = {m: {} for m in sorted(set(build_fmus.find_adapters()) - set(LEFT_OUT))}
CASES["PlatformController"] = {"method": 0}
CASES["PlatformController-nmpc"] = {"method": 1, "vessel_file": str(BARGE)}
TIP = BARGE.parents[1] / "crane_tip_compensation"
CASES["TipCompensator"] = {"mechanism": str(TIP / "knuckle_boom_torque.json"), "actuated_joints": "1,2,3",
                           "tip_attachment": 2, "load_attachment": 2, "mode": 1}   # as in the scenario there
# a 1 t cube (2 m) hanging 5 m below hook 1 on a straight sling and one bent over its top edge, the
# hook with a 0.5 m block: contact nodes and the hook contact in the state
CASES["RiggedBlock"] = {"mass": 1000.0, **{f"inertia[{i},{i}]": 667.0 for i in range(3)},
                        **{f"size[{i}]": 2.0 for i in range(3)}, "initial.position[2]": 5.0, "hook1.radius": 0.5,
                        "sling1.hook": 1, "sling1.lug[2]": -1.0, "sling1.length": 3.9,
                        "sling2.hook": 1, "sling2.lug[0]": 1.0, "sling2.lug[2]": 1.0, "sling2.length": 6.1}
H = 0.01


def real_inputs(fmu: FmuUnderTest) -> list:
    return [v for v in fmu.md.modelVariables if v.causality == "input" and v.type == "Real"]


def nudged(inputs: list, k: int) -> dict[str, float]:
    """Each input a little off its start value (a different amount for each input and each ``k``),
    inside its declared range."""
    out = {}
    for n, v in enumerate(inputs):
        start = float(v.start) if v.start is not None else 0.0
        delta = 1e-3 * max(abs(start), 1.0) * (1.0 + 0.1 * n) * (1.0 + 0.37 * k)
        value = start + delta
        if v.max is not None and value > float(v.max):
            value = start - delta
        if v.min is not None and value < float(v.min):
            value = start
        out[v.name] = value
    return out


def outputs(fmu: FmuUnderTest) -> list[str]:
    return [v.name for v in fmu.md.modelVariables if v.causality == "output" and v.type == "Real"]


#: the NMPC solves an optimisation per step: seconds, so in the slow suite
SLOW = {"PlatformController-nmpc"}


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.slow) if c in SLOW else c for c in sorted(CASES)])
def test_a_restored_fmu_repeats_its_steps_bit_for_bit(fmu_dir, case):
    model = case.split("-")[0]
    fmu = FmuUnderTest(fmu_dir / f"{model}.fmu", instance_name=f"restore_{model}")
    try:
        inputs, names = real_inputs(fmu), outputs(fmu)
        fmu.slave.setupExperiment(startTime=0.0)
        fmu.slave.enterInitializationMode()
        fmu.set(CASES[case])
        for k in range(3):      # a master iterating the start values to a fixed point
            fmu.set(nudged(inputs, k))
            fmu.get(names)
        try:
            fmu.slave.exitInitializationMode()
        except Exception as exc:
            raise AssertionError(f"{case}: {exc}: {fmu.errors()}") from None
        fmu.get(names)          # the outputs at the start, computed with the last inputs
        u = [nudged(inputs, k) for k in (3, 4, 5)]
        fmu.set(u[0])
        saved = fmu.slave.getFMUstate()        # first step after initialisation

        def two_steps(t0: float, first: dict, second: dict) -> np.ndarray:
            fmu.set(first)
            fmu.slave.doStep(t0, H)
            a = fmu.get(names)
            fmu.set(second)
            fmu.slave.doStep(t0 + H, H)
            return np.concatenate([a, fmu.get(names)])

        first = two_steps(0.0, u[0], u[1])
        fmu.slave.setFMUstate(saved)
        again = two_steps(0.0, u[0], u[1])
        differ = [names[k % len(names)] for k in np.flatnonzero(first != again)]
        assert not differ, f"{model}: after a restore at the start these outputs differ: {differ[:5]}"

        # and later: saved after a step, with the outputs read and new inputs set
        later = fmu.slave.getFMUstate()
        first = two_steps(2 * H, u[2], u[0])
        fmu.slave.setFMUstate(later)
        again = two_steps(2 * H, u[2], u[0])
        differ = [names[k % len(names)] for k in np.flatnonzero(first != again)]
        assert not differ, f"{model}: after a restore at t = {2 * H} s these outputs differ: {differ[:5]}"
        assert not fmu.errors(), fmu.errors()
        fmu.slave.freeFMUstate(saved)
        fmu.slave.freeFMUstate(later)
    finally:
        fmu.close()


def test_every_adapter_is_checked_or_left_out_with_a_reason():
    assert {c.split("-")[0] for c in CASES} | set(LEFT_OUT) == set(build_fmus.find_adapters())
