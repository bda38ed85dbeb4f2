"""Speed of the Payload component and FMU (figures go in docs/performance.md, not in tests).

    python benchmarks/bench_payload.py

Measures: RK4 sub-step cost of components.rigid_body, one macro step of the offshore lift's
payload (0.025 s, its parameters: set_loads, step and motion_outputs of the component; setReal,
doStep and getReal of the adapter in-process), and FMU macro steps per second through FMPy (set 4
attachment forces, doStep, get all outputs - what a master does every step), with the real-time
factor at a 10 ms macro step.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import build_fmus  # noqa: E402
from components.rigid_body import HydroParameters, RigidBody, RigidBodyParameters  # noqa: E402
from tests.support.fmu_runner import FmuUnderTest  # noqa: E402


def bench_component(n: int = 20000) -> float:
    hydro = HydroParameters(volume=4.0, added_mass=np.full(6, 1000.0), drag_quadratic=np.full(6, 500.0))
    body = RigidBody(RigidBodyParameters(mass=1e4, inertia=np.diag([1e4, 2e4, 3e4]), hydro=hydro,
                                         attachments=np.zeros((4, 3))), position=(0, 0, 10))
    body.set_loads(np.zeros((4, 3)))
    t0 = time.perf_counter()
    for _ in range(n):
        body.step(0.01, 0.01)
    return (time.perf_counter() - t0) / n


def bench_outputs(n: int = 5000) -> tuple[float, float]:
    """Seconds per evaluation of every output: RigidBody.outputs() (one pass) and the properties
    one by one (what the Payload FMU did before outputs() existed)."""
    hydro = HydroParameters(volume=4.0, added_mass=np.full(6, 1000.0), drag_quadratic=np.full(6, 500.0))
    body = RigidBody(RigidBodyParameters(mass=1e4, inertia=np.diag([1e4, 2e4, 3e4]), hydro=hydro,
                                         attachments=np.ones((4, 3))), position=(0, 0, 0.2),
                     angular_velocity=(0.1, -0.2, 0.05))
    body.set_loads(np.full((4, 3), 100.0))

    def one_by_one():
        body.set_loads(np.full((4, 3), 100.0))   # the rates are recomputed in both variants
        (body.position, body.velocity, body.quaternion, body.euler, body.cg_position, body.cg_velocity,
         body.cg_acceleration, body.angular_velocity_ned, body.angular_velocity_body,
         body.angular_acceleration_ned, body.submerged_fraction,
         [(body.attachment_position(i), body.attachment_velocity(i), body.attachment_acceleration(i))
          for i in range(4)])

    def one_pass():
        body.set_loads(np.full((4, 3), 100.0))
        body.outputs()

    times = []
    for f in (one_pass, one_by_one):
        t0 = time.process_time()
        for _ in range(n):
            f()
        times.append((time.process_time() - t0) / n)
    return times[0], times[1]


# the offshore lift's payload (scenarios/offshore_lift/offshore_lift.ssd), just under the water line
LIFT = {"mass": 1e4, "inertia[0,0]": 10833.0, "inertia[1,1]": 16667.0, "inertia[2,2]": 20833.0,
        "cg.location[2]": 0.2, "hydro.volume": 4.0, "hydro.added_mass[0]": 6000.0, "hydro.added_mass[1]": 6500.0,
        "hydro.added_mass[2]": 8000.0, "hydro.added_inertia[0]": 3000.0, "hydro.added_inertia[1]": 5000.0,
        "hydro.added_inertia[2]": 6000.0, "hydro.drag_quadratic[0]": 1500.0, "hydro.drag_quadratic[1]": 2000.0,
        "hydro.drag_quadratic[2]": 6000.0, "hydro.drag_quadratic_rotation[0]": 5000.0,
        "hydro.drag_quadratic_rotation[1]": 8000.0, "hydro.drag_quadratic_rotation[2]": 8000.0,
        "hydro.drag_linear_rotation[0]": 2e4, "hydro.drag_linear_rotation[1]": 2e4,
        "hydro.drag_linear_rotation[2]": 2e4, "hydro.splash_height": 2.0, "attachment1.location[2]": -1.0,
        "initial.position[0]": -30.2, "initial.position[1]": 20.75, "initial.position[2]": 0.5, "max_substep": 0.025}


def bench_lift_step(n: int = 3000, repeat: int = 5) -> tuple[float, float]:
    """CPU seconds per 0.025 s macro step of the lift's payload, best of ``repeat`` blocks of n:
    the component's set_loads + step + motion_outputs, and the adapter's setReal (attachment 1's
    force, the water elevation) + doStep + getReal (attachment 1's position and velocity, the
    position) in-process, as the lift's master calls them."""
    import math

    from fmus.payload import Payload

    slave = Payload(instance_name="bench")
    slave.setup_experiment(0.0)
    slave.enter_initialization_mode()
    for name, value in LIFT.items():
        slave.set_real([slave.info[name].value_reference], [value])
    slave.exit_initialization_mode()
    body, forces, zero = slave.body, np.zeros((4, 3)), np.zeros(3)
    vr = [slave.info[f"attachment1.force[{i}]"].value_reference for i in range(3)] + \
        [slave.info["water.elevation"].value_reference]
    out = [slave.info[name].value_reference for name in ("position[0]", "position[1]", *(
        f"attachment1.{q}[{i}]" for q in ("position", "velocity") for i in range(3)))]
    component, adapter = [], []
    for _ in range(repeat):
        t0 = time.process_time()
        for k in range(n):
            forces[0, 2] = -9e4 - k
            body.set_loads(forces, zero, zero, zero, 0.01 * math.sin(k))
            body.step(0.025, 0.025)
            body.motion_outputs()
        component.append((time.process_time() - t0) / n)
        t0 = time.process_time()
        for k in range(n):
            slave.set_real(vr, [10.0, -5.0, -9e4 - k, 0.01 * math.sin(k)])
            slave.do_step(slave.time, 0.025)
            slave.get_real(out)
        adapter.append((time.process_time() - t0) / n)
    return min(component), min(adapter)


def bench_fmu(fmu: Path, steps: int = 2000, h: float = 0.01) -> float:
    runner = FmuUnderTest(fmu)
    outputs = [v.valueReference for v in runner.md.modelVariables if v.causality == "output"]
    forces = [runner.vr[f"attachment{k}.force[{i}]"] for k in range(1, 5) for i in range(3)]
    runner.initialize({"hydro.volume": 4.0, "initial.position[2]": 10.0})
    slave = runner.slave
    t0 = time.perf_counter()
    for k in range(steps):
        slave.setReal(forces, [100.0] * len(forces))
        slave.doStep(k * h, h)
        slave.getReal(outputs)
    elapsed = time.perf_counter() - t0
    runner.close()
    return elapsed / steps


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()   # --help; no options
    sub = bench_component()
    print(f"rigid body RK4 sub-step (wet, 4 attachments): {sub * 1e6:7.1f} us")
    fast, slow = bench_outputs()
    print(f"all outputs incl. set_loads: outputs() {fast * 1e6:7.1f} us, properties one by one {slow * 1e6:7.1f} us")
    component, adapter = bench_lift_step()
    print(f"the lift's payload, one 0.025 s macro step: set_loads + step + motion_outputs {component * 1e6:7.1f} us, "
          f"the adapter's setReal + doStep + getReal in-process {adapter * 1e6:7.1f} us")
    with tempfile.TemporaryDirectory() as tmp:
        fmu = build_fmus.build_all(Path(tmp), ["Payload"])[0]
        macro = bench_fmu(fmu)
    print(f"Payload FMU macro step (setReal 12, doStep 10 ms, getReal all): {macro * 1e6:7.1f} us "
          f"-> {1 / macro:8.0f} steps/s, {0.01 / macro:6.1f}x real time at 10 ms")


if __name__ == "__main__":
    main()
