"""Several instances and several FMU files live in one process; instantiate/free in a loop
neither crashes nor grows memory."""
from __future__ import annotations

import shutil

import numpy as np
from fmpy import extract

from tests.support.fmu_runner import FmuUnderTest


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_instances_are_independent(payload_fmu, tmp_path):
    # a second copy of the FMU in another folder is a second binary in the process, as two
    # different FMUs would be
    copy = tmp_path / "copy" / "Payload.fmu"
    copy.parent.mkdir()
    shutil.copy(payload_fmu, copy)
    a = FmuUnderTest(payload_fmu, "a")
    b = FmuUnderTest(payload_fmu, "b")
    c = FmuUnderTest(copy, "c")
    try:
        a.initialize({"mass": 10.0})
        b.initialize({"mass": 20.0, "gravity": 0.0})
        c.initialize({"mass": 5.0, "gravity": 1.0})
        for fmu in (a, b, c):
            fmu.set({"cg.force[0]": 10.0})
        t = 0.0
        for _ in range(100):   # interleaved, as a master steps them
            for fmu in (a, b, c):
                fmu.slave.doStep(t, 0.01)
            t += 0.01
        for fmu, mass, g in ((a, 10.0, 9.81), (b, 20.0, 0.0), (c, 5.0, 1.0)):
            x, z = fmu.get(["cg.position[0]", "cg.position[2]"])
            assert np.isclose(x, 0.5 * 10.0 / mass * t**2, rtol=1e-9)
            assert np.isclose(z, 0.5 * g * t**2, rtol=1e-9, atol=1e-12)
    finally:
        for fmu in (a, b, c):
            fmu.close()


def test_instantiate_free_loop_does_not_leak(payload_fmu, tmp_path):
    unzipped = extract(str(payload_fmu), unzipdir=str(tmp_path / "u"))

    def cycle():
        fmu = FmuUnderTest(payload_fmu, "loop", unzip_dir=unzipped)
        fmu.initialize({"mass": 100.0})
        for k in range(5):
            fmu.slave.doStep(k * 0.01, 0.01)
        fmu.close()

    for _ in range(20):   # warm-up: imports, caches, allocator pools
        cycle()
    before = rss_bytes()
    for _ in range(100):
        cycle()
    growth = rss_bytes() - before
    assert growth < 8 * 2**20, f"RSS grew by {growth / 2**20:.1f} MiB over 100 instantiate/free cycles"

