"""A system exported to OspSystemStructure.xml runs in libcosim and agrees with our fixed-step
master (Jacobi, inputs held) to 1e-9."""
from __future__ import annotations

import numpy as np

from orchestration import simulate
from orchestration.system.osp import write_osp
from orchestration.system.model import Component, System
from tests.system.test_system_files import run_libcosim

VARIABLES = ["a.cg.position[2]", "a.cg.velocity[2]", "b.cg.position[0]", "b.cg.velocity[0]", "b.cg.force[0]",
             "a.water.velocity[0]", "b.angular_velocity[2]"]


def coupled(payload_fmu) -> System:
    s = System("agreement", stop_time=1.0, base_step=0.01)
    s.add_component(Component("a", payload_fmu, {"mass": 50.0, "initial.velocity[2]": -2.0}))
    s.add_component(Component("b", payload_fmu, {"mass": 20.0, "gravity": 0.0, "cg.location[1]": 0.5,
                                                 "attachment1.location[1]": 1.0, "attachment1.force[0]": 3.0}))
    # a's depth pushes b (a linear transformation), b's velocity is a's current (identity)
    s.connect("a.cg.position[2]", "b.cg.force[0]", factor=40.0, offset=1.0, converts_units=True)
    s.connect("b.cg.velocity[0]", "a.water.velocity[0]")
    return s


def test_osp_export_agrees_with_our_master(payload_fmu, tmp_path, validation):
    system = coupled(payload_fmu)
    steps = 100
    theirs = run_libcosim("osp", write_osp(system, tmp_path / "osp"), VARIABLES, tmp_path, n_steps=steps)
    ours = simulate(system, steps * 0.01, 0.01, method="jacobi", variables=VARIABLES)
    assert np.allclose(np.array(theirs["times_ns"]) * 1e-9, ours.time[1:], rtol=0, atol=1e-12)
    for name in VARIABLES:
        libcosim, master = theirs["values"][name], ours[name][1:]
        scale = max(1.0, float(np.max(np.abs(master))))
        validation.record(case=f"OSP export in libcosim vs our master (Jacobi), 100 steps: {name}",
                          reference="libcosim", ours=f"max diff {np.max(np.abs(libcosim - master)) / scale:.1e}",
                          error=float(np.max(np.abs(libcosim - master))) / scale, tolerance=1e-9,
                          source="OSP libcosim (libcosimpy)", note="error relative to max(1, max|value|)")
        assert np.max(np.abs(libcosim - master)) <= 1e-9 * scale, (name, np.max(np.abs(libcosim - master)))
    # the coupling is really exercised: b is pushed and turns (force off its CG)
    assert np.ptp(ours["b.cg.force[0]"]) > 10.0 and abs(ours["b.angular_velocity[2]"][-1]) > 1e-5
