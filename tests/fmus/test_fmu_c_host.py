"""Our FMUs load and simulate in a C host without Python and without LD_PRELOAD.

tests/models/c_host/fmi2_host.c is compiled with gcc against the FMI 2.0 headers that FMPy ships and
dlopen()s the FMU binary with RTLD_LOCAL, as real tools do. It runs in a process whose
environment has no LD_PRELOAD, PYTHONPATH or PYTHONHOME, and its outputs are compared with the
same run in FMPy.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from fmpy import extract, read_model_description

from tests.fmus.conftest import clean_env
from tests.support.fmu_runner import FmuUnderTest

pytestmark = pytest.mark.gcc          # builds plain-C FMUs or hosts with gcc

# per model: start values and the outputs compared
CASES = {
    "Payload": ({"mass": 500.0, "initial.position[2]": -1.0, "hydro.volume": 0.3, "hydro.splash_height": 0.5,
                 "initial.angular_velocity[1]": 0.4, "hydro.drag_quadratic[2]": 800.0},
                ["cg.position[2]", "cg.velocity[2]", "quaternion[0]", "quaternion[2]", "submerged_fraction"]),
    "Ship": ({"sea.hs": 3.0, "sea.period": 7.0, "hardpoint1.force[2]": 2e6},
             ["position[2]", "euler[0]", "euler[1]", "hardpoint1.acceleration[2]", "wave.elevation"]),
    "Crane": ({"joint1.setpoint": 0.2, "attachment3.force[2]": 2e4, "base.acceleration[2]": -0.5},
              ["joint1.position", "joint2.position", "base.force[2]", "attachment3.position[2]"]),
    "Cable": ({"end_b.velocity[2]": -0.5, "current.velocity[0]": 0.5},
              ["end_b.force[2]", "end_b.tension", "end_a.force[0]", "max_tension"]),
    "Contact": ({"body1.position[2]": 0.005, "body2.position[2]": 1.0, "body1.velocity[0]": 1e-3},
                ["body1.force[0]", "body1.force[2]", "pair12.volume", "pair12.penetration"]),
    "Winch": ({"speed_setpoint": -0.5, "line.tension": 4.9e5},
              ["payout.speed", "payout.length", "motor.torque", "motor.power"]),
}


def run_in_c_host(c_host: Path, fmu: Path, workdir: Path, start: dict, names: list[str], stop: float, step: float,
                  extra: list[str] = (), env: dict | None = None, wrap=lambda command: command
                  ) -> subprocess.CompletedProcess:
    """Run ``fmu`` in the C host from ``workdir`` (unzipped there); ``wrap`` may put the command in a
    namespace (conftest.without_python)."""
    md = read_model_description(str(fmu))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    unzipped = extract(str(fmu), unzipdir=str(workdir / f"{fmu.stem}_unzipped"))
    args = [str(c_host), unzipped, md.coSimulation.modelIdentifier, md.guid, repr(stop), repr(step),
            ",".join(str(vr[n]) for n in names), *(f"set:{vr[k]}={v!r}" for k, v in start.items()), *extra]
    return subprocess.run(wrap(args), capture_output=True, text=True, env=env or clean_env(), cwd=workdir,
                          timeout=300)


def fmpy_rows(fmu: Path, start: dict, names: list[str], stop: float, step: float) -> np.ndarray:
    """The outputs at t = 0, step, ..., stop of ``fmu`` run in this process with FMPy."""
    reference = FmuUnderTest(fmu)
    try:
        reference.initialize(start)
        first = reference.get(names)
        _, rows = reference.run(0.0, stop, step, names)
    finally:
        reference.close()
    return np.vstack([first, rows])


@pytest.mark.parametrize("model", sorted(CASES))
def test_fmu_runs_in_c_host_like_in_fmpy(c_host, fmu_dir, tmp_path, model):
    fmu = fmu_dir / f"{model}.fmu"
    start, names = CASES[model]
    stop, step = 2.0, 0.01
    result = run_in_c_host(c_host, fmu, tmp_path, start, names, stop, step)
    assert result.returncode == 0, f"C host failed ({result.returncode}):\n{result.stderr[-3000:]}"
    c_rows = np.loadtxt(result.stdout.splitlines())
    py_rows = fmpy_rows(fmu, start, names, stop, step)
    assert c_rows.shape == (py_rows.shape[0], 1 + len(names))
    assert np.allclose(c_rows[:, 0], np.arange(py_rows.shape[0]) * step)
    # same code, same numbers: equal to the last bit is expected, 1e-12 allows for printf round trip
    assert np.allclose(c_rows[:, 1:], py_rows, rtol=1e-12, atol=1e-12)
    assert np.ptp(c_rows[:, 1]) > 0.1, "nothing moved: the comparison would prove nothing"


def test_nan_input_returns_fmi2_error_in_c_host(c_host, payload_fmu, tmp_path):
    md = read_model_description(str(payload_fmu))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    result = run_in_c_host(c_host, payload_fmu, tmp_path, {}, ["cg.position[2]"], 0.1, 0.05,
                           extra=[f"nan:{vr['cg.force[2]']}"])
    assert result.returncode == 0, result.stderr[-3000:]
    assert "setReal-nan-status 3" in result.stdout
    assert "cg.force[2]" in result.stderr and "nan" in result.stderr


def test_clear_message_when_python_cannot_be_found(c_host, payload_fmu, tmp_path):
    env_override = {"MARINE_COSIM_LIBPYTHON": str(tmp_path / "no_such_libpython.so")}
    md = read_model_description(str(payload_fmu))
    unzipped = extract(str(payload_fmu), unzipdir=str(tmp_path / "u"))
    result = subprocess.run([str(c_host), unzipped, "Payload", md.guid, "0.1", "0.1", "0"],
                            capture_output=True, text=True, env={**clean_env(), **env_override}, timeout=60)
    assert result.returncode != 0
    assert "cannot load libpython" in result.stderr and "MARINE_COSIM_LIBPYTHON" in result.stderr


@pytest.mark.parametrize("version", ["3.10", "3.12", "3.13"])
def test_libpython_of_another_minor_version_is_refused_with_a_message(c_host, payload_fmu, tmp_path, version):
    """The default build's interpreter layout (PyConfig) is that of the Python it was built with:
    pointed at another minor version's libpython it must say so and return NULL, never crash
    (3.12 and 3.13 used to end in SIGSEGV, 3.10 in 'Python initialisation failed')."""
    found = sorted(Path("/root/.pyenv/versions").glob(f"{version}.*/lib/libpython{version}.so.1.0"))
    assert found, f"no pyenv Python {version} on this machine (the test machines have 3.10 to 3.13)"
    md = read_model_description(str(payload_fmu))
    unzipped = extract(str(payload_fmu), unzipdir=str(tmp_path / "u"))
    result = subprocess.run([str(c_host), unzipped, "Payload", md.guid, "0.1", "0.1", "0"], capture_output=True,
                            text=True, env=clean_env(MARINE_COSIM_LIBPYTHON=str(found[-1])), timeout=60)
    assert result.returncode == 3, f"expected a NULL instance, got exit {result.returncode}: {result.stderr[-2000:]}"
    assert "fmi2Instantiate returned NULL" in result.stderr
    assert f"is Python {version}" in result.stderr and "was built for Python 3." in result.stderr
