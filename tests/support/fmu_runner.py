"""A small FMPy-based driver used by the FMU tests: run an FMU step by step with a log capture."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
from fmpy import extract, read_model_description
from fmpy import calloc, free
from fmpy.fmi2 import (FMU2Slave, fmi2CallbackAllocateMemoryTYPE, fmi2CallbackFreeMemoryTYPE,
                       fmi2CallbackFunctions, fmi2CallbackLoggerTYPE)


class FmuUnderTest:
    """One instance of an FMU, driven through FMPy's low-level FMU2Slave with every log kept."""

    def __init__(self, fmu: Path, instance_name: str = "instance", unzip_dir: str | None = None):
        self.md = read_model_description(str(fmu))
        self.vr = {v.name: v.valueReference for v in self.md.modelVariables}
        self.own_dir = unzip_dir is None
        if unzip_dir is not None and (Path(unzip_dir) / "modelDescription.xml").is_file():
            # already unzipped: extracting again would overwrite a shared library this process has mapped
            self.dir = str(unzip_dir)
        else:
            self.dir = extract(str(fmu), unzipdir=unzip_dir)
        self.messages: list[tuple[int, str]] = []
        self.slave = FMU2Slave(guid=self.md.guid, unzipDirectory=self.dir,
                               modelIdentifier=self.md.coSimulation.modelIdentifier, instanceName=instance_name)
        self.callbacks = fmi2CallbackFunctions()
        self.callbacks.logger = fmi2CallbackLoggerTYPE(self._log)
        self.callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
        self.callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
        self.slave.instantiate(callbacks=self.callbacks, loggingOn=True)

    def _log(self, component, instance, status, category, message):
        self.messages.append((int(status), message.decode() if isinstance(message, bytes) else str(message)))

    def set(self, values: dict[str, float]) -> None:
        """Set variables by name, each with the setter of its FMI type."""
        types = {v.name: v.type for v in self.md.modelVariables}
        for kind, setter, convert in (("Real", self.slave.setReal, float), ("Integer", self.slave.setInteger, int),
                                      ("Boolean", self.slave.setBoolean, bool), ("String", self.slave.setString, str)):
            chosen = {n: x for n, x in values.items() if types[n] == kind}
            if chosen:
                setter([self.vr[n] for n in chosen], [convert(x) for x in chosen.values()])

    def get(self, names: list[str]) -> np.ndarray:
        return np.array(self.slave.getReal([self.vr[n] for n in names]))

    def initialize(self, start_values: dict[str, float] | None = None, start_time: float = 0.0) -> None:
        self.slave.setupExperiment(startTime=start_time)
        self.slave.enterInitializationMode()
        self.set(start_values or {})
        self.slave.exitInitializationMode()

    def run(self, t0: float, t1: float, h: float, names: list[str]) -> tuple[float, np.ndarray]:
        """Step from t0 to t1 with step h; returns the end time and outputs at every step end."""
        n = int(round((t1 - t0) / h))
        rows = []
        t = t0
        for k in range(n):
            self.slave.doStep(t, h)
            t = t0 + (k + 1) * h
            rows.append(self.get(names))
        return t, np.array(rows)

    def errors(self) -> list[str]:
        return [m for s, m in self.messages if s >= 3]

    def close(self) -> None:
        try:
            self.slave.terminate()
        except Exception:
            pass
        self.slave.freeInstance()
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)


FMI2_ERROR = 3


def expect_error(fmu: FmuUnderTest, call, *args, says: str = "") -> str:
    """``call`` returns fmi2Error (not fatal, not a crash) with a message containing ``says``; the
    message."""
    import pytest
    from fmpy.fmi1 import FMICallException

    before = len(fmu.errors())
    with pytest.raises(FMICallException) as info:
        call(*args)
    assert f"status {FMI2_ERROR}" in str(info.value), str(info.value)
    new = fmu.errors()[before:]
    assert new and any(says in m for m in new), (says, new)
    return new[-1]
