"""The offshore lift exported to SSP and OSP runs in FMPy's SSP simulator and in libcosim for 20 s
(issue 29); every difference from our run is measured here and explained in docs/system_files.md.

* The export: ``scenarios/offshore_lift/offshore_lift.ssd`` without its scenario (neither tool runs
  our events), with every connected input given its value after our initialisation as start value
  (orchestration.runs.initial_inputs: FMPy sets no input before initialising), at a base step of
  0.0125 s, half the file's: a plain Jacobi master (no feedthrough refresh) diverges at 0.025 s
  (measured: NaN in the crane's outputs at 5.6 s), and both tools step that way.
* FMPy 0.3.32's ``simulate_ssp`` with three additions, each a gap of FMPy, not of the file
  (:func:`fmpy_simulate_ssp`): it is given the .ssp's own parameter sets (it applies none of the
  file's bindings), it sets String variables (it raises on them), and its connectors start from the
  FMUs' values after initialisation (it starts them at 0.0 and feeds those to every input in the
  first step: a wire with both ends at the origin).
* libcosim (libcosimpy 0.0.6) runs the .ssp and the OSP export unchanged (the OSP export without the
  lift's 13 power bonds: libcosim loads one per file, and its fixed-step master uses none), from the
  folder they are extracted to (FMUs open a relative file path, here the crane's mechanism file, from the working
  directory).
* Both equal our master running the same plain Jacobi (:class:`PlainJacobi`) at the same step to
  1e-9, so the master algorithm and its step are the whole difference from our run of the file
  (Gauss-Seidel with the feedthrough refresh at 0.025 s). That difference is measured and bounded
  here; docs/system_files.md takes it apart (step, Jacobi or Gauss-Seidel, feedthrough refresh).
"""
from __future__ import annotations

import copy
import zipfile
from pathlib import Path

import numpy as np
import pytest

from orchestration import simulate
from orchestration.master.algorithms.fixed import FixedStepAlgorithm
from orchestration.runs.initial_inputs import with_initial_inputs
from orchestration.runs.reference import catalogue
from orchestration.system.osp import ExportWarning, write_osp
from orchestration.system.ssp import write_ssp
from tests.system.test_system_files import run_libcosim

pytestmark = pytest.mark.slow

STOP = 20.0
STEP = 0.0125
VARIABLES = ["payload.attachment1.position[2]", "cable.end_a.force[2]", "cable.end_b.force[2]",
             "crane.attachment2.position[2]", "ship.hardpoint1.position[2]", "winch.payout.line_length"]


class PlainJacobi(FixedStepAlgorithm):
    """FMPy's and libcosim's fixed-step master: every FMU steps with the inputs of the last
    communication point, no feedthrough refresh."""

    def __init__(self):
        super().__init__(method="jacobi")

    def step(self, t: float, h: float) -> float:
        ex = self.execution
        inputs = [ex.compute_inputs(i, t, h, 0, updated=()) for i in self._order]
        for i, u in zip(self._order, inputs):
            ex.advance(i, u, t, h)
        self._count += 1
        return h


def fmpy_simulate_ssp(ssp: Path, stop: float, step: float):
    """``fmpy.ssp.simulation.simulate_ssp`` with the three additions the module docstring names."""
    import fmpy.ssp.simulation as sim
    from fmpy.ssp.ssd import Parameter, ParameterSet, read_ssd

    ssd = read_ssd(str(ssp))
    parameters = ParameterSet(name="parameters")
    for component in ssd.system.elements:
        for binding in component.parameterBindings:
            for values in binding.parameterValues:
                for p in values.parameters:
                    full = Parameter(name=f"{component.name}.{p.name}")
                    full.type, full.value = p.type, ({"true": 1.0, "false": 0.0}[p.value] if p.type == "Boolean"
                                                     else p.value)
                    parameters.parameters.append(full)
    folder = {}

    def set_value(component, name, value):
        variable = component.variables[name]
        if variable.type != "String":
            return plain_set_value(component, name, value)
        resource = Path(folder["ssp"]) / value          # an SSP resource URI, relative to the archive's root
        component.fmu.setString([variable.valueReference], [str(resource) if resource.is_file() else value])

    def instantiate_fmu(component, ssp_unzipdir, *args, **kwargs):
        folder["ssp"] = ssp_unzipdir
        plain_instantiate(component, ssp_unzipdir, *args, **kwargs)
        for connector in component.connectors:
            connector.value = sim.get_value(component, connector.name)

    plain_set_value, plain_instantiate = sim.set_value, sim.instantiate_fmu
    sim.set_value, sim.instantiate_fmu = set_value, instantiate_fmu
    try:
        rows = sim.simulate_ssp(str(ssp), stop_time=stop - step / 2, step_size=step, parameter_set=parameters)
    finally:
        sim.set_value, sim.instantiate_fmu = plain_set_value, plain_instantiate
    return rows             # row k holds the values after the step from rows["time"][k]


@pytest.fixture(scope="module")
def lift(fmu_dir, tmp_path_factory):
    """The offshore lift as shipped (FMUs from this checkout), no scenario."""
    system, _, _ = catalogue.load_reference("offshore_lift", fmu_dir, tmp_path_factory.mktemp("lift"),
                                            log=lambda m: None)
    system.scenario = None
    return system


@pytest.fixture(scope="module")
def exported(lift):
    system = with_initial_inputs(lift)
    system.base_step = STEP
    return system


@pytest.fixture(scope="module")
def ours(lift):
    """Our runs: the plain Jacobi of the other tools at 0.0125 s, and the file's own master."""
    plain = simulate(lift, STOP, STEP, algorithm=PlainJacobi(), variables=VARIABLES)
    own = simulate(lift, STOP, None, variables=VARIABLES)
    return plain, own


def _differences(label: str, theirs: dict, ours_plain, ours_own) -> None:
    """theirs[name][k]: after k + 1 steps of 0.0125 s. Equal to our plain Jacobi; against our own
    master the lift's figures agree within the stated tolerances."""
    own_t = ours_own.time
    for name in VARIABLES:
        values = np.asarray(theirs[name])
        assert values.shape == (round(STOP / STEP),) and np.all(np.isfinite(values)), name
        plain = ours_plain[name][1:]
        scale = max(1.0, float(np.max(np.abs(plain))))
        assert np.max(np.abs(values - plain)) <= 1e-9 * scale, (label, name, np.max(np.abs(values - plain)))
    t = ours_plain.time[1:]
    on_own_grid = {name: np.interp(own_t, t, np.asarray(theirs[name])) for name in VARIABLES}
    late = own_t >= 5.0
    depth = np.max(np.abs(on_own_grid["payload.attachment1.position[2]"] - ours_own["payload.attachment1.position[2]"]))
    tension = on_own_grid["cable.end_b.force[2]"][late]
    own_tension = ours_own["cable.end_b.force[2]"][late]
    mean = abs(np.mean(tension) - np.mean(own_tension)) / abs(np.mean(own_tension))
    spread, own_spread = np.ptp(tension), np.ptp(own_tension)
    motion = np.ptp(ours_own["payload.attachment1.position[2]"])
    print(f"\n{label} vs our master (Gauss-Seidel + feedthrough refresh, 0.025 s), 20 s: payload hook-point depth "
          f"within {depth * 1e3:.1f} mm (it moves {motion * 1e3:.0f} mm); wire tension at the crane after 5 s: mean "
          f"{mean * 100:.2f} % apart, range {spread / 1e3:.1f} kN vs {own_spread / 1e3:.1f} kN")
    assert depth < 0.06              # measured 41.5 mm: the payload moves with the ship as in ours
    assert mean < 0.005              # the static tension is the same
    # the coupling at the file's longer step, Gauss-Seidel, damps the payload's bounce on the wire more
    assert own_spread < spread


def test_fmpy_simulate_ssp_runs_the_exported_lift(exported, ours, tmp_path):
    ssp = write_ssp(exported, tmp_path / "offshore_lift.ssp")
    with zipfile.ZipFile(ssp) as z:
        assert "resources/knuckle_boom_lift.json" in z.namelist() and "resources/crane.ssv" in z.namelist()
    rows = fmpy_simulate_ssp(ssp, STOP, STEP)
    _differences("FMPy simulate_ssp", {name: rows[name] for name in VARIABLES}, *ours)


def test_libcosim_runs_the_exported_lift_ssp_and_osp(exported, ours, tmp_path):
    ssp = write_ssp(exported, tmp_path / "offshore_lift.ssp")
    folder = tmp_path / "ssp"
    with zipfile.ZipFile(ssp) as z:
        z.extractall(folder)
    n = round(STOP / STEP)
    from_ssp = run_libcosim("ssp", folder, VARIABLES, folder, n_steps=n)
    # libcosim loads one power bond per file; the lift has 13 and its fixed-step algorithm uses none
    with pytest.warns(ExportWarning, match="power bonds left out"):
        osp = write_osp(copy.deepcopy(exported), tmp_path / "osp")
    from_osp = run_libcosim("osp", osp, VARIABLES, osp.parent, n_steps=n)
    for label, run in (("libcosim (SSP)", from_ssp), ("libcosim (OSP)", from_osp)):
        assert run["times_ns"][-1] == round(STOP * 1e9)
        _differences(label, run["values"], *ours)
