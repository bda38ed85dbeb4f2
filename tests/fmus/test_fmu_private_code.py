"""An FMU runs exactly the Python it was built with (issue 18): its modules live under a private
package named after their content hash (build_fmus.stage_sources), so neither a process that
imported this checkout's ``components`` nor another FMU built from other sources can lend it theirs."""
from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

import build_fmus
from tests.support.fmu_runner import FmuUnderTest

FALL = {"mass": 100.0, "gravity": 9.81}


def fall(fmu: FmuUnderTest, seconds: float = 1.0) -> float:
    """Depth of the CG after a free fall of ``seconds`` from rest."""
    fmu.initialize(FALL)
    fmu.run(0.0, seconds, 0.01, ["cg.position[2]"])
    return float(fmu.get(["cg.position[2]"])[0])


def test_the_checkout_imported_in_the_process_does_not_run_in_the_fmu(payload_fmu, monkeypatch):
    """The reproduction of issue 18: import components.rigid_body from the checkout, then load
    Payload.fmu. Any use of the checkout's RigidBody would now raise."""
    import components.rigid_body as checkout

    def not_this_one(*args, **kwargs):
        raise AssertionError("the FMU ran the checkout's components.rigid_body")

    monkeypatch.setattr(checkout.RigidBody, "__init__", not_this_one)
    package = build_fmus.read_settings(payload_fmu, "loader.txt")["package"]
    fmu = FmuUnderTest(payload_fmu)
    try:
        depth = fall(fmu)
        assert not fmu.errors(), fmu.errors()
        # the FMU's own copy ran (an earlier FMU of the same hash may have imported it first:
        # same name, same bytes)
        ran = Path(sys.modules[f"{package}.components.rigid_body"].__file__)
        own = Path(fmu.dir) / "resources" / package / "components" / "rigid_body.py"
        assert not ran.exists() or ran.read_bytes() == own.read_bytes()
    finally:
        fmu.close()
    assert depth == pytest.approx(0.5 * 9.81, rel=1e-3)


@pytest.fixture(scope="module")
def other_version(tmp_path_factory) -> Path:
    """Payload.fmu built from a copy of the sources in which rigid_body.py applies gravity twice."""
    tree = tmp_path_factory.mktemp("other_sources")
    for package in build_fmus.BUNDLED_PACKAGES:
        shutil.copytree(build_fmus.ROOT / package, tree / package, ignore=shutil.ignore_patterns("__pycache__"))
    module = tree / "components" / "rigid_body.py"
    original = "self._mg = self._mass * float(p.gravity)"
    assert original in module.read_text(), "rigid_body.py changed: update this test's modification"
    module.write_text(module.read_text().replace(original, "self._mg = 2.0 * self._mass * float(p.gravity)"))
    out = tmp_path_factory.mktemp("other_fmu")
    with tempfile.TemporaryDirectory() as tmp:
        loader = build_fmus.compile_loader(Path(tmp))
        return build_fmus.build_fmu("Payload", tree / "fmus" / "payload.py", out, loader, Path(tmp), root=tree)


def test_two_fmus_built_from_different_sources_each_run_their_own(payload_fmu, other_version):
    ours, theirs = (build_fmus.read_settings(f, "loader.txt")["package"] for f in (payload_fmu, other_version))
    assert ours != theirs, "different sources must give different private packages"
    first, second = FmuUnderTest(payload_fmu, "current"), FmuUnderTest(other_version, "modified")
    try:
        for fmu in (first, second):
            fmu.initialize(FALL)
        t = 0.0
        for _ in range(100):   # interleaved in one process, as a master steps them
            for fmu in (first, second):
                fmu.slave.doStep(t, 0.01)
            t += 0.01
        depths = np.array([fmu.get(["cg.position[2]"])[0] for fmu in (first, second)])
        # and a second instance of the modified FMU, loaded after both, is still the modified one
        third = FmuUnderTest(other_version, "modified again")
        try:
            depth_third = fall(third)
        finally:
            third.close()
    finally:
        first.close()
        second.close()
    assert depths[0] == pytest.approx(0.5 * 9.81 * t ** 2, rel=1e-3)
    assert depths[1] == pytest.approx(2 * depths[0], rel=1e-9)
    assert depth_third == pytest.approx(depths[1], rel=1e-9)
