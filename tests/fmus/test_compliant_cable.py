"""The CompliantCable FMU (issue 28): the OSP compliant-constraint cable's interface on our line,
checked against the relations of the source document (compliant_cable_digest.md):

* per element, F = beta^2 / epsilon dL; globally E = beta^2 L / (epsilon N A);
* alpha = beta critically damped (no overshoot), alpha < beta under-damped, with the effective
  mass 1 / epsilon per element (a chain of N: a body of 1 / (epsilon N) on its end);
* L_cable = L_total - L_retracted_A - L_retracted_B, paid out at either end;
* an OSP system file written for that cable runs with ours, by the file alone.
"""
from __future__ import annotations

import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from orchestration import simulate
from orchestration.system.model import Component, System
from tests.support.fmu_runner import FmuUnderTest

INTERFACE = {"input": {f"{v}[{i}]" for v in ("posA", "posB", "velA", "velB") for i in range(3)}
             | {f"retracted{w}{e}" for w in ("Length", "Speed") for e in "AB"},
             "output": {f"force{e}[{i}]" for e in "AB" for i in range(3)},
             "parameter": {"Length", "numElements", "Weight", "Radius"}
             | {f"{x}{c}" for x in ("Alpha", "Beta", "Epsilon") for c in "NMT"}}
BETA, EPS, N, L = 20.0, 1e-4, 10, 10.0        # k = beta^2 / epsilon = 4e6 N/m per element of 1 m


@pytest.fixture(scope="module")
def cable_fmu(fmu_dir):
    return fmu_dir / "CompliantCable.fmu"


def straight(fmu_path, stretch: float, **extra) -> FmuUnderTest:
    """A gravity-free cable of L = 10 m, N = 10, between B at the origin and A at 10 m + stretch."""
    fmu = FmuUnderTest(fmu_path)
    fmu.initialize({"Length": L, "numElements": N, "BetaN": BETA, "EpsilonN": EPS, "AlphaN": BETA,
                    "Weight": 0.1, "Radius": 0.01, "gravity": 0.0, "posA[2]": L + stretch, **extra})
    return fmu


def test_interface_is_the_osp_cables(cable_fmu):
    fmu = FmuUnderTest(cable_fmu)
    try:
        by = {}
        for v in fmu.md.modelVariables:
            by.setdefault(v.causality, set()).add(v.name)
        assert by["input"] == INTERFACE["input"]
        assert by["output"] == INTERFACE["output"]
        assert INTERFACE["parameter"] <= by["parameter"]
        units = {v.name: v.unit for v in fmu.md.modelVariables}
        assert units["EpsilonN"] == "1/kg" and units["EpsilonM"] == "1/(kg.m2)" and units["BetaN"] == "1/s"
        assert units["posA[0]"] == "m" and units["forceB[2]"] == "N" and units["Weight"] == "kg/m"
        deps = {u.variable.name: {d.name for d in u.dependencies} for u in fmu.md.outputs}
        # the ends' translation and the retracted lengths are carried over a step as state, as in our
        # Cable (a stiff line's force answering them at once is an explicit coupling that gains energy)
        assert "posA[2]" not in deps["forceA[2]"] and "retractedLengthB" not in deps["forceB[2]"]
    finally:
        fmu.close()


def test_per_element_stretch_and_the_global_modulus(cable_fmu):
    """Stretched by 1 cm over its 10 elements: each carries beta^2 / epsilon x 1 mm = 4 kN, and the
    cable's modulus is beta^2 L / (epsilon N A)."""
    fmu = straight(cable_fmu, 0.01)
    try:
        F = fmu.get([f"forceA[{i}]" for i in range(3)])
        FB = fmu.get([f"forceB[{i}]" for i in range(3)])
    finally:
        fmu.close()
    assert F == pytest.approx([0.0, 0.0, -BETA ** 2 / EPS * 0.01 / N], rel=1e-9, abs=1e-6)
    assert FB == pytest.approx(-F, rel=1e-9)
    area = math.pi * 0.01 ** 2
    assert -F[2] * L / (area * 0.01) == pytest.approx(BETA ** 2 * L / (EPS * N * area), rel=1e-9)


def step_response(fmu_dir, alpha: float) -> np.ndarray:
    """A body of 1 / (epsilon N) hanging on end A (the cable of 0.1 kg), let go 1 cm below its
    rest position: its displacement from there (the cable stays taut, so the dampers may push)."""
    m = 1.0 / (EPS * N)
    rest = L + m * 9.81 * N * EPS / BETA ** 2                  # stretched by m g / (k / N)
    s = System("step")
    s.add_component(Component("cable", fmu_dir / "CompliantCable.fmu", {
        "Length": L, "numElements": N, "BetaN": BETA, "EpsilonN": EPS, "AlphaN": alpha, "Weight": 0.01,
        "Radius": 0.01, "posA[2]": rest + 0.01}))
    s.add_component(Component("body", fmu_dir / "Payload.fmu", {
        "mass": m, "initial.position[2]": rest + 0.01, "max_substep": 1e-3}))
    for i in range(3):
        s.connect(f"body.position[{i}]", f"cable.posA[{i}]")
        s.connect(f"body.velocity[{i}]", f"cable.velA[{i}]")
        s.connect(f"cable.forceA[{i}]", f"body.cg.force[{i}]")
    r = simulate(s, 1.0, 1e-3, method="jacobi", variables=["body.position[2]"])
    return r["body.position[2]"] - rest


def test_alpha_equal_beta_is_critically_damped_and_below_it_overshoots(fmu_dir):
    """omega = beta: the body returns without crossing its rest position at alpha = beta; at
    alpha = 0.3 beta it overshoots by exp(-pi zeta / sqrt(1 - zeta^2)) = 37 % of the 1 cm."""
    critical = step_response(fmu_dir, BETA)
    assert critical.min() > -0.01 * 0.01          # (the coupling's hold adds 0.5 %)
    assert abs(critical[-1]) < 1e-3 * 0.01
    zeta = 0.3
    under = step_response(fmu_dir, zeta * BETA)
    # (the 1 ms hold of the coupling takes a little of the damping: 0.398 measured)
    assert -under.min() / 0.01 == pytest.approx(math.exp(-math.pi * zeta / math.sqrt(1 - zeta ** 2)), rel=0.1)


@pytest.mark.parametrize("end", ["A", "B"])
def test_paying_out_at_either_end_lengthens_the_cable_as_stated(cable_fmu, end):
    """L_cable = L_total - L_retracted_A - L_retracted_B: 12 m of cable with 1 m on each drum,
    between ends 10.5 m apart (gravity off, so the tension tells the length, T = EA (d / L_c - 1));
    paying 0.2 m out of one drum at 0.2 m/s makes it 10.2 m."""
    EA = BETA ** 2 / EPS * (12.0 / 12)
    fmu = FmuUnderTest(cable_fmu)
    try:
        fmu.initialize({"Length": 12.0, "numElements": 12, "BetaN": BETA, "EpsilonN": EPS, "AlphaN": BETA,
                        "Weight": 0.01, "Radius": 0.01, "gravity": 0.0, "posA[2]": 10.5,
                        "retractedLengthA": 1.0, "retractedLengthB": 1.0})
        tension = lambda: -fmu.get(["forceA[2]"])[0]
        assert 10.5 / (1.0 + tension() / EA) == pytest.approx(10.0, rel=1e-6)
        t, h = 0.0, 0.01
        for k in range(100):                           # 1 s at 0.2 m/s, then held
            fmu.set({f"retractedLength{end}": 1.0 - 0.2 * min(t, 1.0),
                     f"retractedSpeed{end}": -0.2 if t < 1.0 else 0.0})
            fmu.slave.doStep(t, h)
            t += h
        fmu.set({f"retractedLength{end}": 0.8, f"retractedSpeed{end}": 0.0})
        fmu.run(t, t + 2.0, h, ["forceA[2]"])
        assert not fmu.errors()
        assert 10.5 / (1.0 + tension() / EA) == pytest.approx(10.2, rel=1e-4)
    finally:
        fmu.close()


def test_z_up_world_frame(cable_fmu):
    """The same cable hanging 10 m under B in a z-up world: A at z = -10, forces along z flipped."""
    ned = straight(cable_fmu, 0.01, gravity=9.81, Weight=5.0)
    up = straight(cable_fmu, 0.0, gravity=9.81, Weight=5.0, zUp=True, **{"posA[2]": -(L + 0.01)})
    try:
        assert up.get(["forceA[2]", "forceB[2]"]) == pytest.approx(-ned.get(["forceA[2]", "forceB[2]"]), rel=1e-9)
    finally:
        ned.close()
        up.close()


OSP_LIFT = """<?xml version="1.0" encoding="UTF-8"?>
<OspSystemStructure xmlns="http://opensimulationplatform.com/MSMI/OSPSystemStructure" version="0.1">
  <StartTime>0.0</StartTime>
  <EndTime>20.0</EndTime>
  <BaseStepSize>0.01</BaseStepSize>
  <Algorithm>fixedStep</Algorithm>
  <Simulators>
    <Simulator name="cable" source="fmus/CompliantCable.fmu">
      <InitialValues>
        <InitialValue variable="Length"><Real value="60"/></InitialValue>
        <InitialValue variable="numElements"><Integer value="30"/></InitialValue>
        <InitialValue variable="AlphaN"><Real value="10"/></InitialValue>
        <InitialValue variable="BetaN"><Real value="50"/></InitialValue>
        <InitialValue variable="EpsilonN"><Real value="1e-3"/></InitialValue>
        <InitialValue variable="Weight"><Real value="8"/></InitialValue>
        <InitialValue variable="Radius"><Real value="0.02"/></InitialValue>
        <InitialValue variable="posA[2]"><Real value="20"/></InitialValue>
        <InitialValue variable="retractedLengthB"><Real value="40"/></InitialValue>
      </InitialValues>
    </Simulator>
    <Simulator name="load" source="fmus/Payload.fmu">
      <InitialValues>
        <InitialValue variable="mass"><Real value="2000"/></InitialValue>
        <InitialValue variable="initial.position[2]"><Real value="20"/></InitialValue>
      </InitialValues>
    </Simulator>
    <Simulator name="winch" source="fmus/Winch.fmu">
      <InitialValues>
        <InitialValue variable="initial_line_length"><Real value="20"/></InitialValue>
        <InitialValue variable="speed_setpoint"><Real value="0.5"/></InitialValue>
      </InitialValues>
    </Simulator>
  </Simulators>
  <Functions>
    <LinearTransformation name="drumA" factor="-1" offset="60"/>
    <LinearTransformation name="speedA" factor="-1" offset="0"/>
  </Functions>
  <Connections>
    {position}
    <SignalConnection>
      <Signal function="drumA" name="out"/>
      <Variable simulator="cable" name="retractedLengthB"/>
    </SignalConnection>
    <SignalConnection>
      <Variable simulator="winch" name="payout.line_length"/>
      <Signal function="drumA" name="in"/>
    </SignalConnection>
    <SignalConnection>
      <Signal function="speedA" name="out"/>
      <Variable simulator="cable" name="retractedSpeedB"/>
    </SignalConnection>
    <SignalConnection>
      <Variable simulator="winch" name="payout.speed"/>
      <Signal function="speedA" name="in"/>
    </SignalConnection>
    <VariableConnection>
      <Variable simulator="cable" name="forceB[2]"/>
      <Variable simulator="winch" name="line.tension"/>
    </VariableConnection>
  </Connections>
</OspSystemStructure>
"""


def test_an_osp_lift_runs_with_ours_by_its_system_file_alone(fmu_dir, tmp_path):
    """A 2 t load lowered 8.75 m by a winch on the OSP cable's interface, as an OSP user writes it:
    marine-cosim runs the file; the load goes down with the winch and hangs on its weight."""
    (tmp_path / "fmus").mkdir()
    for name in ("CompliantCable", "Payload", "Winch"):
        shutil.copy(fmu_dir / f"{name}.fmu", tmp_path / "fmus" / f"{name}.fmu")
    links = "\n    ".join(
        f'<VariableConnection><Variable simulator="{a}" name="{x}"/><Variable simulator="{b}" name="{y}"/>'
        f'</VariableConnection>'
        for i in range(3) for a, x, b, y in (("load", f"attachment1.position[{i}]", "cable", f"posA[{i}]"),
                                             ("load", f"attachment1.velocity[{i}]", "cable", f"velA[{i}]"),
                                             ("cable", f"forceA[{i}]", "load", f"attachment1.force[{i}]")))
    system = tmp_path / "OspSystemStructure.xml"
    system.write_text(OSP_LIFT.replace("{position}", links))
    out = tmp_path / "run"
    cli = Path(sys.executable).with_name("marine-cosim")
    done = subprocess.run([str(cli), "run", str(system), "--out", str(out), "--quiet"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    import pyarrow.parquet as pq
    table = pq.read_table(out / "results.parquet").to_pandas()
    depth = table["load.position[2]"].to_numpy()
    force = table["cable.forceA[2]"].to_numpy()
    # paid out 0.5 m/s x 20 s less the 0.1 m/s2 ramp's 1.25 m, stretched by m g L / EA (EA 5e6 N)
    assert depth[-1] == pytest.approx(20.0 + 8.75 + 2000 * 9.81 * 28.75 / 5e6, abs=0.05)
    # the load, dropped on the slack wire at the start, still bounces (period ~2.2 s, +-2 % at 20 s):
    # its mean over the last 6 s (whole bounces) is its weight
    last = table["time"].to_numpy() >= 14.0
    assert -force[last].mean() == pytest.approx(2000 * 9.81, rel=0.01)
