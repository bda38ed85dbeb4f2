"""Shared fixtures: the FMUs are built once per test session from this checkout."""
from __future__ import annotations

from pathlib import Path

import pytest

import build_fmus


@pytest.fixture(scope="session")
def fmu_dir(tmp_path_factory) -> Path:
    """A folder with every FMU built by build_fmus.py from the current sources."""
    out = tmp_path_factory.mktemp("fmus")
    build_fmus.build_all(out)
    return out


@pytest.fixture(scope="session")
def payload_fmu(fmu_dir) -> Path:
    return fmu_dir / "Payload.fmu"
