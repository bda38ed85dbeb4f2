"""Fixtures of the component tests."""
from __future__ import annotations

import pytest

from components import kernels


@pytest.fixture(params=[pytest.param("compiled", marks=pytest.mark.gcc), "numpy"])
def implementation(request, monkeypatch) -> str:
    """Runs a test twice: with the compiled kernels (components/kernels, which must be available)
    and with the numpy reference (MARINE_COSIM_KERNELS=0). Modules that test both say
    ``pytestmark = pytest.mark.usefixtures("implementation")``."""
    if request.param == "numpy":
        monkeypatch.setenv("MARINE_COSIM_KERNELS", "0")
    else:
        monkeypatch.delenv("MARINE_COSIM_KERNELS", raising=False)
        assert kernels.library() is not None, kernels.status()
    return request.param
