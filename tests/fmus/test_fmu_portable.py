"""FMUs built with ``build_fmus.py --portable`` need nothing on the target but Linux x86-64.

They carry their own Python runtime and run it as a child process (docs/fmu_runtime.md). Here they
run where no Python exists (a mount namespace in which every Python prefix, this venv and this
checkout are empty), in a C host and in libcosim driven from C, and in FMPy on other Python
minor versions; every result must equal, bit for bit, the default build's run in this process.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from ctypes import byref
from pathlib import Path

import numpy as np
import pytest
from fmpy import read_model_description
from fmpy.fmi2 import fmi2CoSimulation

import build_fmus
from tests.fmus.conftest import clean_env, without_python
from tests.fmus.test_fmu_c_host import CASES, fmpy_rows, run_in_c_host
from tests.support.fmu_runner import FmuUnderTest

pytestmark = [pytest.mark.slow, pytest.mark.gcc]

LIFT_MODELS = ("Ship", "Crane", "Cable", "Winch", "Payload")


def rows_of(result: subprocess.CompletedProcess) -> np.ndarray:
    assert result.returncode == 0, f"exit {result.returncode}:\n{result.stderr[-3000:]}"
    return np.loadtxt(result.stdout.splitlines())


@pytest.mark.parametrize("model", sorted(CASES))
def test_portable_fmu_in_a_c_host_without_python_equals_the_in_process_run(
        c_host, portable_fmu_dir, fmu_dir, tmp_path, model):
    start, names = CASES[model]
    stop, step = 1.0, 0.01
    env = clean_env(MARINE_COSIM_CACHE=str(tmp_path / "cache"))
    c_rows = rows_of(run_in_c_host(c_host, portable_fmu_dir / f"{model}.fmu", tmp_path, start, names, stop, step,
                                   env=env, wrap=without_python))
    reference = fmpy_rows(fmu_dir / f"{model}.fmu", start, names, stop, step)
    assert np.array_equal(c_rows[:, 1:], reference), "the portable FMU's numbers differ from the default build's"
    assert np.ptp(c_rows[:, 1]) > 0 or np.ptp(c_rows[:, -1]) > 0, "nothing moved: the comparison would prove nothing"


def test_the_namespace_really_has_no_python(tmp_path):
    """The wrapper's own check: a python started inside must fail (so the test above can fail)."""
    probe = subprocess.run(without_python(["sh", "-c", "python3 -c 1 || echo no-python"]), capture_output=True,
                           text=True, env=clean_env(), cwd=tmp_path, timeout=60)
    assert "no-python" in probe.stdout, probe.stderr
    for folder in python_free_listing():
        assert folder.endswith(": 0"), folder


def python_free_listing() -> list[str]:
    from tests.fmus.conftest import python_prefixes

    folders, _ = python_prefixes()
    script = "; ".join(f'echo "{f}: $(ls -A {f} | wc -l)"' for f in folders)
    return subprocess.run(without_python(["sh", "-c", script]), capture_output=True, text=True,
                          timeout=60).stdout.splitlines()


def lift_spec(fmu_dir: Path, workdir: Path, steps: int) -> tuple[Path, list[tuple[str, str]]]:
    """The offshore lift (its components, parameters and connections) as a cosim_host spec using the
    FMUs in ``fmu_dir``; returns the spec and the observed (component, variable) pairs."""
    from orchestration.runs.reference import offshore_lift_system

    system = offshore_lift_system(fmu_dir)
    index = {name: k for k, name in enumerate(system.components)}
    lines = [f"step_ns {round(system.base_step * 1e9)}", f"steps {steps}"]
    variables = {}
    for name, comp in system.components.items():
        lines.append(f"slave {name} {comp.source}")
        md = read_model_description(str(comp.source))
        variables[name] = {v.name: v for v in md.modelVariables}
    for name, comp in system.components.items():
        for key, value in comp.parameters.items():
            var = variables[name][key]
            if var.type == "String":
                path = build_fmus.ROOT / value
                if path.is_file():   # a file of the checkout (the crane's mechanism): hidden later
                    shutil.copy2(path, workdir / path.name)
                    value = str(workdir / path.name)
                lines.append(f"string {index[name]} {var.valueReference} {value}")
            elif var.type == "Boolean":
                lines.append(f"bool {index[name]} {var.valueReference} {int(bool(value))}")
            elif var.type in ("Integer", "Enumeration"):
                lines.append(f"int {index[name]} {var.valueReference} {int(value)}")
            else:
                lines.append(f"real {index[name]} {var.valueReference} {float(value)!r}")
    for c in system.connections:
        assert c.is_identity, f"{c}: libcosim connections carry no factor"
        (a, x), (b, y) = c.source, c.target
        lines.append(f"connect {index[a]} {variables[a][x].valueReference} {index[b]} {variables[b][y].valueReference}")
    observed = [("ship", "position[2]"), ("ship", "euler[1]"), ("crane", "joint1.position"),
                ("cable", "end_b.tension"), ("winch", "payout.length"), ("payload", "cg.position[2]"),
                ("payload", "cg.velocity[2]")]
    lines += [f"observe {index[a]} {variables[a][x].valueReference}" for a, x in observed]
    spec = workdir / f"{fmu_dir.name}.spec"
    spec.write_text("\n".join(lines) + "\n")
    return spec, observed


def test_offshore_lift_in_libcosim_from_c_without_python_equals_the_default_build(
        cosim_host, portable_fmu_dir, fmu_dir, tmp_path):
    """The acceptance run: all the offshore lift's portable FMUs in libcosim driven from C inside a
    Python-free namespace, against the same C program running the default build with Python present."""
    steps = 80   # 2 s at the lift's 0.025 s base step
    results = {}
    for label, folder, wrap in (("default", fmu_dir, lambda c: c), ("portable", portable_fmu_dir, without_python)):
        spec, observed = lift_spec(folder, tmp_path, steps)
        out = tmp_path / f"{label}.txt"
        run = subprocess.run(wrap([str(cosim_host), str(spec), str(out)]), capture_output=True, text=True,
                             env=clean_env(MARINE_COSIM_CACHE=str(tmp_path / "cache")), cwd=tmp_path, timeout=900)
        assert run.returncode == 0, f"{label}: exit {run.returncode}\n{run.stderr[-3000:]}\n{run.stdout[-2000:]}"
        results[label] = np.loadtxt(out)
    assert results["portable"].shape == (steps, 1 + len(observed))
    assert np.array_equal(results["portable"], results["default"])
    assert np.ptp(results["portable"][:, 1]) > 0, "the ship did not move: the comparison would prove nothing"


FMPY_DRIVER = r"""
import json, sys
from fmpy import read_model_description, extract
from fmpy.fmi2 import FMU2Slave
fmu, start, names = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
stop, step = float(sys.argv[4]), float(sys.argv[5])
md = read_model_description(fmu)
vr = {v.name: v.valueReference for v in md.modelVariables}
s = FMU2Slave(guid=md.guid, unzipDirectory=extract(fmu), modelIdentifier=md.coSimulation.modelIdentifier,
              instanceName="x")
s.instantiate(); s.setupExperiment(startTime=0.0); s.enterInitializationMode()
s.setReal([vr[k] for k in start], list(start.values())); s.exitInitializationMode()
rows, t = [s.getReal([vr[n] for n in names])], 0.0
for k in range(round(stop / step)):
    s.doStep(t, step); t = (k + 1) * step
    rows.append(s.getReal([vr[n] for n in names]))
s.terminate(); s.freeInstance()
print(json.dumps({"python": sys.version, "rows": rows}))
"""


def fmpy_venv(version: str) -> Path:
    """A venv of pyenv's Python ``version`` with FMPy (the version installed here), made once and kept
    in ~/.cache/marine-cosim-tests."""
    import fmpy

    found = sorted(Path("/root/.pyenv/versions").glob(f"{version}.*/bin/python{version}"))
    assert found, f"no pyenv Python {version} on this machine (the test machines have 3.10 to 3.13)"
    venv = Path.home() / ".cache" / "marine-cosim-tests" / f"fmpy-{fmpy.__version__}-py{version}"
    python = venv / "bin" / "python"
    if not (venv / ".complete").exists():
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([str(found[-1]), "-m", "venv", str(venv)], check=True, timeout=300)
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"fmpy=={fmpy.__version__}"], check=True,
                       timeout=900)
        (venv / ".complete").touch()
    return python


@pytest.mark.parametrize("version", ["3.10", "3.12", "3.13"])
def test_portable_fmu_in_fmpy_on_another_python_minor_version(portable_fmu_dir, fmu_dir, tmp_path, version):
    python = fmpy_venv(version)
    model = "Payload"
    start, names = CASES[model]
    stop, step = 1.0, 0.01
    run = subprocess.run([str(python), "-c", FMPY_DRIVER, str(portable_fmu_dir / f"{model}.fmu"), json.dumps(start),
                          json.dumps(names), repr(stop), repr(step)], capture_output=True, text=True,
                         env=clean_env(MARINE_COSIM_CACHE=str(tmp_path / "cache")), cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["python"].startswith(version)
    assert np.array_equal(np.array(out["rows"]), fmpy_rows(fmu_dir / f"{model}.fmu", start, names, stop, step))


def test_default_build_in_fmpy_on_python_312_runs_in_the_hosts_python(fmu_dir, tmp_path):
    """No crash on a host of another minor version with the default build either: the binary calls
    only Python's stable ABI, so the model runs in the host's 3.12 (with that venv's numpy)."""
    python = fmpy_venv("3.12")
    start, names = CASES["Payload"]
    run = subprocess.run([str(python), "-c", FMPY_DRIVER, str(fmu_dir / "Payload.fmu"), json.dumps(start),
                          json.dumps(names), "1.0", "0.01"], capture_output=True, text=True, env=clean_env(),
                         cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["python"].startswith("3.12")
    reference = fmpy_rows(fmu_dir / "Payload.fmu", start, names, 1.0, 0.01)
    assert np.allclose(np.array(out["rows"]), reference, rtol=1e-12, atol=1e-12)


def test_several_portable_fmus_and_instances_in_one_process(portable_fmu_dir, fmu_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("MARINE_COSIM_CACHE", str(tmp_path / "cache"))
    cases = [("Payload", "a"), ("Payload", "b"), ("Winch", "w"), ("Crane", "c")]
    fmus = [FmuUnderTest(portable_fmu_dir / f"{m}.fmu", name) for m, name in cases]
    try:
        for (model, _), fmu in zip(cases, fmus):
            fmu.initialize(CASES[model][0] if fmu.slave.instanceName != "b" else {"mass": 1234.0})
        rows = {name: [] for _, name in cases}
        t = 0.0
        for _ in range(50):   # interleaved, as a master steps them
            for (model, name), fmu in zip(cases, fmus):
                fmu.slave.doStep(t, 0.01)
                rows[name].append(fmu.get(CASES[model][1]))
            t += 0.01
        assert not any(f.errors() for f in fmus)
    finally:
        for fmu in fmus:
            fmu.close()
    for model, name in cases:
        start = CASES[model][0] if name != "b" else {"mass": 1234.0}
        reference = fmpy_rows(fmu_dir / f"{model}.fmu", start, CASES[model][1], 0.5, 0.01)[1:]
        assert np.array_equal(np.array(rows[name]), reference), name


def test_instances_survive_the_host_deleting_its_unzip_folder(portable_fmu_dir, tmp_path, monkeypatch):
    """The runtime and the model's files are copied once into the FMU's cache: an instance keeps
    stepping after the host deletes the unzip folder, and a new instance can still be made."""
    monkeypatch.setenv("MARINE_COSIM_CACHE", str(tmp_path / "cache"))
    unzip = tmp_path / "unzipped"
    first = FmuUnderTest(portable_fmu_dir / "Ship.fmu", "first", unzip_dir=str(unzip))
    try:
        first.initialize({"sea.hs": 2.0})
        resource_uri = (unzip / "resources").as_uri().encode()
        guid = first.md.guid.encode()
        shutil.rmtree(unzip)
        first.run(0.0, 0.2, 0.05, ["position[2]"])
        second = first.slave.fmi2Instantiate(b"second", fmi2CoSimulation, guid, resource_uri,
                                             byref(first.callbacks), 0, 1)
        assert second, first.messages[-3:]
        first.slave.fmi2SetupExperiment(second, 0, 0.0, 0.0, 0, 0.0)
        first.slave.fmi2EnterInitializationMode(second)
        first.slave.fmi2ExitInitializationMode(second)
        assert first.slave.fmi2DoStep(second, 0.0, 0.05, 1) == 0
        first.slave.fmi2FreeInstance(second)
        assert not first.errors(), first.errors()
        assert len(list((tmp_path / "cache").iterdir())) == 1, "the runtime is unpacked once per content hash"
    finally:
        first.own_dir = False
        first.close()


def test_a_runtime_that_cannot_start_gives_a_message_and_no_instance(c_host, portable_fmu_dir, tmp_path):
    """A broken runtime in the cache (here: its Python deleted) must give a message and a NULL
    instance, never a crash or a hang."""
    cache = tmp_path / "cache"
    env = clean_env(MARINE_COSIM_CACHE=str(cache))
    start, names = CASES["Payload"]
    assert rows_of(run_in_c_host(c_host, portable_fmu_dir / "Payload.fmu", tmp_path, start, names, 0.02, 0.01,
                                 env=env)).shape[0] == 3
    for python in cache.glob("*/runtime/bin/python*"):
        python.unlink()
    result = run_in_c_host(c_host, portable_fmu_dir / "Payload.fmu", tmp_path, start, names, 0.02, 0.01, env=env)
    assert result.returncode == 3 and "fmi2Instantiate returned NULL" in result.stderr, result.stderr[-2000:]
    assert "Python process exited with status 127" in result.stderr


def test_portable_fmus_are_small_and_have_a_low_glibc_floor(portable_fmu_dir):
    """The size goals of issue 19 for the FMUs without scipy, and the floor docs/fmu_runtime.md states."""
    for model in ("Payload", "Crane", "Winch"):
        assert (portable_fmu_dir / f"{model}.fmu").stat().st_size <= 20 * 2**20, model
    import zipfile

    with zipfile.ZipFile(portable_fmu_dir / "Payload.fmu") as archive:
        names = archive.namelist()
        assert not [n for n in names if n.endswith(".py") and "/runtime/" in n], "the runtime is .pyc only"
        assert not [n for n in names if "/tests/" in n or n.endswith(".h")]
        loader = archive.read("binaries/linux64/Payload.so")
        assert b'needsExecutionTool="false"' in archive.read("modelDescription.xml")
    assert build_fmus.glibc_floor([loader]) <= (2, 3)
