"""The FMUs load and run in OSP libcosim (through libcosimpy) and agree with FMPy.

libcosim is a C++ co-simulation host with no Python of its own. Here it is driven through
libcosimpy, so Python is already in the process (a separate test covers a pure C host); what this
test shows is that libcosim's own FMU loading (FMI Library, its own unzip folder, FMI calls made from
libcosim's worker threads) works with our FMUs, and that the numbers are FMPy's.

Every libcosim run happens in a child Python process (``_LIBCOSIM_RUNNER`` below):

* libcosim turns an FMU error into a ``cosim::error`` thrown on a worker thread, which ends in
  ``std::terminate`` -- SIGABRT for the whole process. In a child, a broken FMU fails one test with
  the FMU's message instead of killing the pytest session.
* libcosim's log level is process-global and its log goes to stdout; the child keeps both away.
* The child runs without LD_PRELOAD (removed from its environment if set): the FMU must find
  libpython by itself.

libcosimpy is a declared test dependency: if it cannot be imported or its native library cannot be
loaded, the tests fail (they never skip).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fmpy import read_model_description, simulate_fmu

STEP = 0.01  # s
STEP_NS = 10_000_000  # libcosim time is integer nanoseconds
N_STEPS = 200  # 2 s
STOP = N_STEPS * STEP
G = 9.81
FMPY_TOL = 1e-9  # relative and absolute
ANALYTIC_TOL = 1e-6

OUTPUTS = ("cg.position[0]", "cg.position[1]", "cg.position[2]",
           "cg.velocity[0]", "cg.velocity[1]", "cg.velocity[2]")

# Runs one libcosim execution described by a JSON spec (argv[1]) and writes a JSON result (argv[2]).
# Exit code 3: libcosimpy cannot be imported or libcosimc cannot be loaded.
_LIBCOSIM_RUNNER = r'''
import json, os, sys
spec = json.load(open(sys.argv[1]))
try:
    from libcosimpy._internal import libcosimc, get_last_error_message
    libcosimc()  # load the native library now, so that a broken install is reported as such
    from libcosimpy.CosimEnums import CosimErrorCode, CosimExecutionState
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    from libcosimpy.CosimManipulator import CosimManipulator
    from libcosimpy.CosimObserver import CosimObserver
    from libcosimpy.CosimSlave import CosimLocalSlave
except Exception as exc:  # ImportError, OSError from ctypes
    sys.stderr.write(f"LIBCOSIMPY-UNAVAILABLE: {type(exc).__name__}: {exc}\n")
    sys.exit(3)

def fail(what):
    status = execution.status() if "execution" in globals() else None
    raise SystemExit(f"libcosim: {what}: {get_last_error_message()} (status: {status!r})")

log_output_level(getattr(CosimLogLevel, spec["log_level"]))  # default is DEBUG, very chatty
execution = CosimExecution.from_step_size(step_size=spec["step_ns"])
observer = CosimObserver.create_last_value()
if not execution.add_observer(observer):
    fail("add_observer")
manipulator = CosimManipulator.create_override()
if not execution.add_manipulator(manipulator):
    fail("add_manipulator")

slaves, indices = [], {}
for inst in spec["instances"]:
    slave = CosimLocalSlave(fmu_path=spec["fmu"], instance_name=inst["name"])
    if not slave.ptr():
        fail(f"cannot create local slave {inst['name']!r} from {spec['fmu']}")
    slaves.append(slave)  # keep alive: libcosimpy frees the C object with the Python one
    index = execution.add_local_slave(slave)
    if index < 0:
        fail(f"add_local_slave {inst['name']!r}")
    indices[inst["name"]] = index
    for vr, value in inst.get("initial", {}).items():
        if not execution.real_initial_value(index, int(vr), float(value)):
            fail(f"real_initial_value {inst['name']}:{vr}={value}")
    if inst.get("override"):
        vrs = [int(vr) for vr in inst["override"]]
        if not manipulator.slave_real_values(index, vrs, [float(v) for v in inst["override"].values()]):
            fail(f"override {inst['name']}:{vrs}")

result = {
    "ld_preload": os.environ.get("LD_PRELOAD"),
    "slaves": {info.name.decode(): info.index for info in execution.slave_infos()},
    "variables": {name: {v.name.decode(): v.reference for v in execution.slave_variables(i)}
                  for name, i in indices.items()},
    "times_ns": [],
    "values": {name: [] for name in indices},
}
for _ in range(spec["n_steps"]):
    if not execution.step(1):
        fail("step")
    status = execution.status()
    if CosimErrorCode(status.error_code) != CosimErrorCode.SUCCESS or \
            CosimExecutionState(status.state) == CosimExecutionState.ERROR:
        fail("bad status after step")
    result["times_ns"].append(status.current_time)
    for name, index in indices.items():
        result["values"][name].append(observer.last_real_values(index, spec["outputs"]))
json.dump(result, open(sys.argv[2], "w"))
'''


def child_environment() -> dict[str, str]:
    """This process's environment without LD_PRELOAD: the FMU must find libpython on its own."""
    return {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}


@pytest.fixture(scope="module")
def vrs(payload_fmu) -> dict[str, int]:
    """Variable name -> value reference of the Payload FMU (from FMPy's reading of modelDescription)."""
    return {v.name: v.valueReference for v in read_model_description(str(payload_fmu)).modelVariables}


def run_libcosim(fmu: Path, instances: list[dict], vrs: dict[str, int], tmp_path: Path,
                 outputs=OUTPUTS, n_steps: int = N_STEPS, log_level: str = "WARNING") -> dict:
    """Run ``instances`` (dicts with name, and optional initial / override: {variable name: value})
    in one libcosim execution; return times (s) and, per instance, {output name: array over steps 1..n}."""
    spec = {
        "fmu": str(fmu), "step_ns": STEP_NS, "n_steps": n_steps, "log_level": log_level,
        "outputs": [vrs[name] for name in outputs],
        "instances": [{"name": inst["name"],
                       "initial": {vrs[k]: v for k, v in inst.get("initial", {}).items()},
                       "override": {vrs[k]: v for k, v in inst.get("override", {}).items()}}
                      for inst in instances],
    }
    spec_file, result_file = tmp_path / "libcosim_spec.json", tmp_path / "libcosim_result.json"
    spec_file.write_text(json.dumps(spec))
    result_file.unlink(missing_ok=True)
    proc = subprocess.run([sys.executable, "-c", _LIBCOSIM_RUNNER, str(spec_file), str(result_file)],
                          env=child_environment(), cwd=tmp_path, capture_output=True, text=True, timeout=120)
    output = f"exit code {proc.returncode}\n--- stdout:\n{proc.stdout[-4000:]}\n--- stderr:\n{proc.stderr[-4000:]}"
    if proc.returncode == 3 and "LIBCOSIMPY-UNAVAILABLE" in proc.stderr:
        pytest.fail("libcosimpy (a declared test dependency) cannot be used: " + proc.stderr.strip(), pytrace=False)
    if proc.returncode != 0 or not result_file.is_file():
        pytest.fail(f"libcosim run of {fmu.name} failed ({instances}):\n{output}", pytrace=False)
    raw = json.loads(result_file.read_text())
    assert raw["ld_preload"] is None, "the libcosim child must run without LD_PRELOAD"
    assert raw["slaves"] == {inst["name"]: i for i, inst in enumerate(instances)}, raw["slaves"]
    for inst in instances:  # libcosim reads the same value references from modelDescription.xml as FMPy
        seen = raw["variables"][inst["name"]]
        assert {name: seen.get(name) for name in outputs} == {name: vrs[name] for name in outputs}
    values = {name: dict(zip(outputs, np.array(rows).T)) for name, rows in raw["values"].items()}
    return {"time": np.array(raw["times_ns"]) * 1e-9, "times_ns": raw["times_ns"], "values": values}


def run_fmpy(fmu: Path, start_values: dict[str, float], outputs=OUTPUTS):
    return simulate_fmu(str(fmu), fmi_type="CoSimulation", start_time=0.0, stop_time=STOP, step_size=STEP,
                        output_interval=STEP, start_values=start_values, output=list(outputs))


def assert_matches_fmpy(lc: dict, values: dict[str, np.ndarray], fmpy_result, label: str) -> dict[str, float]:
    """libcosim's values after steps 1..N equal FMPy's rows 1..N (row 0 is t = 0); returns max |diff|."""
    assert len(fmpy_result) == N_STEPS + 1
    np.testing.assert_allclose(lc["time"], fmpy_result["time"][1:], rtol=0, atol=1e-12)
    diffs = {}
    for name, series in values.items():
        reference = fmpy_result[name][1:]
        np.testing.assert_allclose(series, reference, rtol=FMPY_TOL, atol=FMPY_TOL,
                                   err_msg=f"{label}: libcosim vs FMPy, {name}")
        diffs[name] = float(np.max(np.abs(series - reference)))
    print(f"{label}: max |libcosim - FMPy| = {max(diffs.values()):.3g} ({diffs})")
    return diffs


def assert_analytic(t: np.ndarray, values: dict[str, np.ndarray], accel: tuple[float, float, float],
                    label: str) -> None:
    """Constant acceleration from rest at the origin: x = a t^2 / 2, v = a t."""
    for axis, a in enumerate(accel):
        np.testing.assert_allclose(values[f"cg.position[{axis}]"], 0.5 * a * t ** 2, rtol=0, atol=ANALYTIC_TOL,
                                   err_msg=f"{label}: cg.position[{axis}] vs analytic")
        np.testing.assert_allclose(values[f"cg.velocity[{axis}]"], a * t, rtol=0, atol=ANALYTIC_TOL,
                                   err_msg=f"{label}: cg.velocity[{axis}] vs analytic")


# ---------------------------------------------------------------------------------------------------- tests


def test_libcosim_timing_is_integer_nanoseconds(payload_fmu, vrs, tmp_path):
    """A short smoke run: the FMU loads in libcosim and the clock advances by exactly STEP_NS per step."""
    lc = run_libcosim(payload_fmu, [{"name": "payload"}], vrs, tmp_path, n_steps=3)
    assert lc["times_ns"] == [STEP_NS, 2 * STEP_NS, 3 * STEP_NS]


def test_a_free_fall_matches_fmpy_and_analytic(payload_fmu, vrs, tmp_path):
    """Payload alone (gravity 9.81, no loads) for 2 s at 0.01 s: libcosim == FMPy == g t^2 / 2."""
    start = {"gravity": G}
    lc = run_libcosim(payload_fmu, [{"name": "payload", "initial": start}], vrs, tmp_path)
    values = lc["values"]["payload"]
    assert lc["times_ns"][-1] == N_STEPS * STEP_NS

    assert_matches_fmpy(lc, values, run_fmpy(payload_fmu, start), "free fall")
    assert_analytic(lc["time"], values, (0.0, 0.0, G), "free fall")
    assert values["cg.position[2]"][-1] == pytest.approx(0.5 * G * STOP ** 2, abs=ANALYTIC_TOL)  # 19.62 m
    assert values["cg.velocity[2]"][-1] == pytest.approx(G * STOP, abs=ANALYTIC_TOL)  # 19.62 m/s


@pytest.mark.parametrize("force_via", ["initial_value", "override_manipulator"])
def test_b_parameter_and_input_set_through_libcosim(payload_fmu, vrs, tmp_path, force_via):
    """mass = 50 kg (parameter, libcosim initial value) and cg.force[0] = 100 N (input, as initial value or
    through the override manipulator): a_x = 2 m/s^2, same as FMPy with the same start values."""
    mass, force = 50.0, 100.0
    instance = {"name": "payload", "initial": {"mass": mass}}
    if force_via == "initial_value":
        instance["initial"]["cg.force[0]"] = force
    else:
        instance["override"] = {"cg.force[0]": force}
    lc = run_libcosim(payload_fmu, [instance], vrs, tmp_path)
    values = lc["values"]["payload"]

    assert_matches_fmpy(lc, values, run_fmpy(payload_fmu, {"mass": mass, "cg.force[0]": force}),
                        f"force via {force_via}")
    assert_analytic(lc["time"], values, (force / mass, 0.0, G), f"force via {force_via}")
    assert values["cg.position[0]"][-1] == pytest.approx(4.0, abs=ANALYTIC_TOL)  # the default 10 t would give 0.2


def test_c_two_instances_are_independent(payload_fmu, vrs, tmp_path):
    """Two Payload instances in one execution, each with its own mass, force and gravity, give each its
    own result (the same as a lone FMPy run with its start values)."""
    cases = {
        "heavy": {"start": {"mass": 50.0, "cg.force[0]": 100.0}, "accel": (2.0, 0.0, G)},
        "moon": {"start": {"mass": 200.0, "gravity": 1.62, "cg.force[1]": -300.0}, "accel": (0.0, -1.5, 1.62)},
    }
    instances = [{"name": name, "initial": case["start"]} for name, case in cases.items()]
    lc = run_libcosim(payload_fmu, instances, vrs, tmp_path)

    for name, case in cases.items():
        values = lc["values"][name]
        assert_matches_fmpy(lc, values, run_fmpy(payload_fmu, case["start"]), f"instance {name}")
        assert_analytic(lc["time"], values, case["accel"], f"instance {name}")
    assert not np.allclose(lc["values"]["heavy"]["cg.position[2]"], lc["values"]["moon"]["cg.position[2]"])


def test_fmu_error_reaches_libcosim(payload_fmu, vrs, tmp_path):
    """An invalid parameter set through libcosim is rejected by the FMU and libcosim reports the FMU's message
    (libcosim 0.0.6 aborts the process from a worker thread, hence the child process)."""
    spec_instances = [{"name": "payload", "initial": {"mass": -1.0}}]
    with pytest.raises(pytest.fail.Exception) as failure:
        run_libcosim(payload_fmu, spec_instances, vrs, tmp_path, n_steps=1, log_level="ERROR")
    assert "'mass'" in str(failure.value), str(failure.value)  # the FMU's own message names the parameter
