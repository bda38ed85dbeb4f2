"""Ray for the tests: a local Ray instance on a loopback address, shared by the tests of a module.

tests/conftest.py provides the fixture to every test module that asks for ``ray_local``. Ray is a
test dependency (the ``test`` extra pulls in ``distributed``), so a missing Ray fails the tests
instead of skipping them. Ray shuts down after the module (so the rest of the suite does not run
beside an idle Ray), and anyway with the interpreter: ray.init registers that, and the processes
it starts share the driver's fate.
"""
from __future__ import annotations

import os

import pytest

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")


@pytest.fixture(scope="module")
def ray_local():
    from orchestration.backends import ray as ray_backend

    ray = ray_backend.connect(None, num_cpus=2)
    yield ray
    ray.shutdown()

