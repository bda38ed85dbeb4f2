"""An FMU runs with the repository checkout out of reach, from the code in its resources/.

The FMU is run in a fresh Python started with -S and a site folder that links every installed
package except this project (so neither the checkout nor an installed copy of marine-cosim can be
imported). The run must succeed, import its components (under the FMU's private package name) from
inside the unzipped FMU, and give the same numbers as in this process.
"""
from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tests.support.fmu_runner import FmuUnderTest

PROJECT_ENTRIES = ("components", "fmus", "orchestration", "build_fmus", "marine_cosim", "__editable__")

DRIVER = textwrap.dedent("""
    import json, sys
    try:
        import components
        raise SystemExit("the checkout is reachable: " + components.__file__)
    except ImportError:
        pass
    sys.path.insert(0, {tests!r})
    from fmu_runner import FmuUnderTest
    fmu = FmuUnderTest({fmu!r}, unzip_dir={unzip!r})
    fmu.initialize({start!r})
    _, rows = fmu.run(0.0, 1.0, 0.01, {names!r})
    bundled = next(m.__file__ for n, m in sys.modules.items()
                   if n.startswith("_mc_") and n.endswith(".components.rigid_body"))
    fmu.close()
    print(json.dumps({{"rows": rows.tolist(), "components": bundled}}))
""")


def site_without_project(tmp_path: Path) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    for packages in site.getsitepackages():
        for entry in Path(packages).iterdir():
            if entry.name.startswith(PROJECT_ENTRIES) or entry.suffix == ".pth":
                continue
            link = folder / entry.name
            if not link.exists():
                link.symlink_to(entry)
    return folder


def test_payload_runs_from_its_resources_alone(payload_fmu, tmp_path):
    start = {"mass": 2000.0, "initial.velocity[0]": 1.0, "initial.angular_velocity[2]": 0.2}
    names = ["cg.position[0]", "cg.position[2]", "euler[2]"]
    unzip = tmp_path / "unzipped"
    script = DRIVER.format(tests=str(Path(__file__).resolve().parents[1] / "support"), fmu=str(payload_fmu),
                           unzip=str(unzip),
                           start=start, names=names)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "LD_PRELOAD")}
    env["PYTHONPATH"] = str(site_without_project(tmp_path))
    result = subprocess.run([sys.executable, "-S", "-c", script], capture_output=True, text=True, env=env,
                            cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:] + result.stdout[-2000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert Path(out["components"]).resolve().is_relative_to(unzip.resolve())

    here = FmuUnderTest(payload_fmu)
    try:
        here.initialize(start)
        _, rows = here.run(0.0, 1.0, 0.01, names)
    finally:
        here.close()
    assert np.array_equal(np.array(out["rows"]), rows)


SECOND_INSTANCE = r"""
import fmpy
# simulate_fmu unpacks into a temporary folder and deletes it at the end; the second run imports
# nothing new (components is in sys.modules from the first, deleted, folder)
for k in range(2):
    fmpy.simulate_fmu({fmu!r}, stop_time=0.02, step_size=0.01)
    print("run", k, "ok", flush=True)
"""


@pytest.mark.slow
@pytest.mark.parametrize("model", ["Ship", "Crane"])
def test_a_second_instance_after_the_first_is_freed_finds_its_bundled_data(fmu_dir, model, tmp_path):
    """Each instance unpacks the FMU into its own folder, but Python keeps the `components` package
    imported by the first one; once that instance is freed its folder is gone.  The bundled vessel
    file and crane presets must come from the instance's own resources (found by the third-party
    ship swap: the second Ship instance reported supply.nc not found).  Run without the project on
    the path, so `components` really comes from the FMU."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "LD_PRELOAD")}
    env["PYTHONPATH"] = str(site_without_project(tmp_path))
    script = SECOND_INSTANCE.format(fmu=str(Path(fmu_dir) / f"{model}.fmu"))
    result = subprocess.run([sys.executable, "-S", "-c", script], capture_output=True, text=True, env=env,
                            cwd=tmp_path, timeout=300)
    assert result.returncode == 0 and "run 1 ok" in result.stdout, result.stderr[-3000:] + result.stdout[-2000:]


SEVERAL_MODELS = r"""
import fmpy
# Every model in one Python process, the Winch first: all share one sys.modules, so the
# `components` and `fmus` packages are those of the first FMU loaded (which bundles only what the
# Winch needs, and whose folder simulate_fmu deletes at the end of its run).
for model in {models!r}:
    fmpy.simulate_fmu({fmu_dir!r} + "/" + model + ".fmu", stop_time=0.02, step_size=0.01)
    print(model, "ok", flush=True)
"""


@pytest.mark.slow
def test_several_of_our_fmus_share_one_process_without_the_checkout(fmu_dir, tmp_path):
    """An FMI host that loads several of our FMUs into one Python process (libcosim, FMPy, our
    in-process master) with the project out of reach: each FMU must find its own bundled modules
    even though the first FMU's `components` package (a different subset, in a deleted folder) is
    the one in sys.modules."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "LD_PRELOAD")}
    env["PYTHONPATH"] = str(site_without_project(tmp_path))
    models = ["Winch", "Payload", "Contact", "Cable", "Crane", "Ship"]
    script = SEVERAL_MODELS.format(models=models, fmu_dir=str(fmu_dir))
    result = subprocess.run([sys.executable, "-S", "-c", script], capture_output=True, text=True, env=env,
                            cwd=tmp_path, timeout=600)
    assert result.returncode == 0 and "Ship ok" in result.stdout, result.stderr[-3000:] + result.stdout[-2000:]
