"""Shared fixtures: the FMUs are built once per test session from this checkout."""
from __future__ import annotations

import os

# One BLAS/OpenMP thread per process, set before numpy (and any FMU's copy of it) loads OpenBLAS: the
# suite runs in two pytest-xdist workers on two cores, and OpenBLAS's own threads on the tiny matrices of
# the models (expm of a 3x3 in the B3 FMUs: 7.7 ms with the default threads, 0.04 ms with one) only
# compete with the other worker. Subprocesses (CLI, process backend, Ray workers) inherit it.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from pathlib import Path  # noqa: E402  (after the thread limits above)

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import build_fmus  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# the project's shared folder (reference digests, vessel data) sits beside the checkout, in CI too
SHARED = next((d for d in (ROOT.parent / "shared", Path("/work/shared")) if d.is_dir()), ROOT.parent / "shared")
VESSELS = SHARED / "data" / "vessels"


@pytest.fixture(scope="session")
def fmu_dir(tmp_path_factory) -> Path:
    """A folder with every FMU built by build_fmus.py from the current sources."""
    out = tmp_path_factory.mktemp("fmus")
    build_fmus.build_all(out)
    return out


@pytest.fixture(scope="session")
def payload_fmu(fmu_dir) -> Path:
    return fmu_dir / "Payload.fmu"


# ---------------------------------------------------------------------------- validation records
# the `validation` fixture records comparisons with published numbers for docs/validation_report.md
# (tests/support/validation_record.py); tests that use it carry the `validation` marker: pytest -m validation
from tests.support.validation_record import validation  # noqa: E402,F401  (the fixture)
from tests.support.ray_fixtures import ray_local  # noqa: E402,F401  (a local Ray on loopback, for the tests that ask)
from tests.support import validation_record as _validation_record  # noqa: E402
from tests.support import xdist_groups as _xdist_groups  # noqa: E402


def pytest_configure(config):
    _validation_record.configure(config)
    _xdist_groups.configure(config)


def pytest_unconfigure(config):
    _xdist_groups.unconfigure(config)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    # the xdist_group marks below as work units: pytest-xdist 3.8's own grouping is lost on pytest 9.2
    # (tests/support/xdist_groups.py)
    return _xdist_groups.make_scheduler(config, log)


def _module_fixtures(item) -> list[str]:
    """The module-scoped fixtures a test uses (built once per module, where its tests run)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    return [name for name, defs in info.name2fixturedefs.items() if defs and defs[-1].scope == "module"]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    _validation_record.mark_items(items, config)
    for item in items:
        # a test that runs on Ray asks for the ray_local fixture (or starts a cluster): mark it, so that
        # -m "not ray" leaves Ray out
        params = getattr(getattr(item, "callspec", None), "params", {})
        on_ray = any(isinstance(v, str) and v.startswith("ray") for v in params.values())
        if on_ray or "ray_local" in item.fixturenames or item.get_closest_marker("cluster"):
            item.add_marker(pytest.mark.ray)
            # one worker runs them all (pytest-xdist --dist loadgroup): two Ray instances or clusters
            # started at once on the 2-core machine compete for ports and CPUs
            item.add_marker(pytest.mark.xdist_group("ray"))
        elif _module_fixtures(item):
            # the tests of a module with a module-scoped fixture (portable FMUs built for the module,
            # a scenario run once) go to one worker, so that it is built once, not once per worker
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
    _xdist_groups.record(config, items)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    # a pytest-xdist worker sends each report to the controller through execnet, which cannot
    # serialise numpy scalars: record_property values become Python numbers
    outcome = yield
    report = outcome.get_result()
    report.user_properties = [(k, v.item() if isinstance(v, np.generic) else v) for k, v in report.user_properties]
