"""Crane-tip motion compensation in co-simulation (docs/tip_compensation.md): the TipCompensator FMU
driving the Crane FMU's slew, boom and jib torques on the Ship FMU.

Acceptance (issue 24): on the offshore lift's vessel in Hs 2.5 m the compensated tip moves at least
90 % less in the earth frame than the uncompensated one (the same crane holding its joints), with the
joints' torque, power and travel limits respected. Tip motion = RMS of the tip's 3-D distance from its
mean position over 10-40 s (tests/models/tip_compensation.py: TipMotion)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from orchestration.master.algorithms.fixed import FixedStepAlgorithm
from orchestration.master.execution import ExecutionError
from orchestration import simulate
from tests.models import tip_compensation as tc

pytestmark = pytest.mark.slow
STOP = 40.0
WINDOW = 10.0
JOINTS = (1, 2, 3)


def _lift(fmu_dir, tmp_path, controller, limits=None):
    data = tc.lift_mechanism()
    for k, power in (limits or {}).items():
        data["links"][k - 1]["control"]["power_max"] = power
    path = tmp_path / f"kb_{abs(hash(json.dumps(limits, sort_keys=True)))}.json"
    path.write_text(json.dumps(data))
    s = tc.lift_system(fmu_dir, controller=controller, mechanism=path, stop=STOP)
    names = [f"crane.attachment2.position[{i}]" for i in range(3)] + \
            [f"crane.joint{k}.{x}" for k in JOINTS for x in ("position", "torque", "power")]
    r = simulate(s, STOP, 0.025, variables=names, algorithm=FixedStepAlgorithm(method="gauss-seidel"))
    tip = np.column_stack([r[f"crane.attachment2.position[{i}]"] for i in range(3)])
    return r, tc.TipMotion.of(tip[r.time >= WINDOW]), data


@pytest.fixture(scope="module")
def lift_runs(fmu_dir, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lift")
    return {key: _lift(fmu_dir, tmp, controller) for key, controller in {
        "hold": {"mode": 0}, "compensated": {"mode": 1}, "delayed": {"mode": 1, "measurement_delay": 1}}.items()}


def test_compensated_tip_moves_90_percent_less(lift_runs):
    held = lift_runs["hold"][1]
    for key in ("compensated", "delayed"):
        moved = lift_runs[key][1]
        reduction = 1.0 - moved.rms / held.rms
        print(f"{key}: tip RMS {moved.rms * 1e3:.2f} mm vs {held.rms * 1e3:.1f} mm held: {100 * reduction:.2f} % less")
        assert held.rms > 0.3, held           # the uncompensated tip does move (pitch, heave, roll)
        assert reduction >= 0.90, (key, moved, held)


def test_joint_limits_respected(lift_runs):
    for key, (r, _, data) in lift_runs.items():
        for k in JOINTS:
            c, lim = data["links"][k - 1]["control"], data["links"][k - 1].get("limits")
            assert np.abs(r[f"crane.joint{k}.torque"]).max() <= c["torque_max"] * (1 + 1e-9), (key, k)
            # the power limit binds on the power the drive delivers (> 0); braking is torque-limited
            assert r[f"crane.joint{k}.power"].max() <= c["power_max"] * (1 + 1e-9), (key, k)
            if lim:
                q = np.degrees(r[f"crane.joint{k}.position"])
                assert lim["lower"] < q.min() and q.max() < lim["upper"], (key, k, q.min(), q.max())


def test_power_limit_below_the_demand_degrades_gracefully(fmu_dir, tmp_path, lift_runs):
    """The main boom limited to 300 kW (the compensation asks up to about 365 kW): the tip moves more
    than with the real 2 MW drive but stays compensated. The power limit binds on the power the drive
    delivers only; braking the falling boom is limited by its torque (issue 24: with the limit on
    both, the boom collapsed)."""
    try:
        r, moved, _ = _lift(fmu_dir, tmp_path, {"mode": 1}, limits={2: 3.0e5})
    except ExecutionError as exc:
        pytest.fail(f"the run failed: {exc}")
    power = r["crane.joint2.power"]
    print(f"300 kW boom: tip RMS {moved.rms * 1e3:.2f} mm (held {lift_runs['hold'][1].rms * 1e3:.1f} mm), "
          f"power {power.min() / 1e3:.1f} to {power.max() / 1e3:.1f} kW, "
          f"torque peak {np.abs(r['crane.joint2.torque']).max() / 1e6:.2f} MN m")
    assert power.max() <= 3.0e5 * (1 + 1e-9)              # motoring within the limit
    assert moved.rms < 0.5 * lift_runs["hold"][1].rms, moved


def test_heavy_crane_tip_held(fmu_dir, tmp_path):
    """B4 (250 t, the paper's Hs 4 m beam sea), 15 s: the compensated tip moves >= 90 % less than held."""
    out = {}
    for mode in (0, 1):
        s = tc.heavy_system(fmu_dir, controller={"mode": mode}, workdir=tmp_path)
        r = simulate(s, 15.0, 0.01, variables=[f"crane.attachment1.position[{i}]" for i in range(3)],
                     algorithm=FixedStepAlgorithm())
        tip = np.column_stack([r[f"crane.attachment1.position[{i}]"] for i in range(3)])
        out[mode] = tc.TipMotion.of(tip[r.time >= 3.0])
    assert out[0].rms > 0.3
    assert out[1].rms < 0.1 * out[0].rms, out
