"""The TipCompensator FMU initialises and steps from its defaults alone (before: tip attachment 1,
the knuckle pin, which joint 3 does not move -- a singular tip Jacobian -- refused in
initialisation), and its joint commands declare an FMI nominal for error control."""
from __future__ import annotations

import numpy as np
from fmpy import read_model_description

COMMANDS = [f"joint{k}.command" for k in range(1, 8)]


def test_tip_compensator_runs_from_its_defaults(open_fmu):
    fmu = open_fmu("TipCompensator")
    fmu.initialize()
    assert not fmu.errors(), fmu.errors()
    _, rows = fmu.run(0.0, 0.1, 0.025, COMMANDS + ["tip.error[0]", "tip.error[1]", "tip.error[2]"])
    assert not fmu.errors(), fmu.errors()
    assert np.all(np.isfinite(rows))
    # mode 0 by default: the joints are held, the target is the tip itself
    assert np.allclose(rows[:, 7:], 0.0)


def test_joint_commands_declare_a_nominal_of_1e6(fmu_dir):
    md = read_model_description(str(fmu_dir / "TipCompensator.fmu"))
    nominal = {v.name: v.nominal for v in md.modelVariables}
    for name in COMMANDS:
        assert float(nominal[name]) == 1e6, name
    assert nominal["tip.position[0]"] is None      # only where declared
