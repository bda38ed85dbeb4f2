"""FMI 1.0 co-simulation: a plain-C FMI 1.0 FMU runs in FMPy and in the co-simulation master,
alone and mixed with the FMI 2.0 Oscillator.

tests/models/c_fmu/oscillator_fmi1.c is the Oscillator mass-spring-damper (m a = F - c v - k x) as a
stand-alone FMI 1.0 co-simulation FMU, modelIdentifier "Oscillator1" (every function exported as
``Oscillator1_fmi...``). The tests check the FMU itself (archive, schema, exports, calling
sequence, error paths through ctypes), then FMPy's simulate_fmu and the master
(orchestration.simulate) against the analytic solution, and finally a mixed FMI 1.0 /
FMI 2.0 system against a monolithic reference with the coupling error predicted to first order.

Mixed system and its error budget
---------------------------------
o1 (FMI 1.0, k = 400) is free; o2 (FMI 2.0, defaults) is forced by F2 = 100 * x1. Gauss-Seidel
steps o1 first, so over [t_n, t_n + h] o2's input is held at 100 * x1(t_n + h). Against the
exact forcing 100 * x1(t) the held input is off by

    100 * (x1(t_n + h) - x1(t)) = 100 * x1'(t) * (t_n + h - t) + O(h^2),

whose mean over the step is (h/2) * 100 * x1'(t) and whose zero-mean (sawtooth) rest moves x2
only by O(h^2). o2 is linear, so the co-simulation error of x2 is

    e(t) = x2_cosim(t) - x2_ref(t) = (h/2) * d(t) + O(h^2),
    m2 d'' + c2 d' + k2 d = 100 * x1'(t),   d(0) = d'(0) = 0,

i.e. o2 sees its force h/2 early. d is integrated along with the monolithic reference (one
solve_ivp of x1, v1, x2, v2, d, d'; DOP853, rtol 1e-12). The test asserts
max|e| <= (1 + 5 %) * (h/2) * max|d| -- the 5 % covers the O(h^2) rest, which is of relative
size ~ omega * h = 1 % for omega = 10 rad/s, h = 1 ms -- and that e follows (h/2) d to within
2 % of its size, and that the error halves with h (first order). Measured at h = 1 ms:
max|e| = 7.02e-5 m, (h/2) max|d| = 7.02e-5 m, max|e - (h/2) d| = 1.7e-7 m.

The master's FMI 1.0 error path
-------------------------------
InProcessSlave runs FMI 1.0 FMUs through FMPy's FMU1Slave.initialize/doStep. FMPy 0.3.32
declares the C result of fmi1InitializeSlave, fmi1DoStep, fmi1CancelStep and fmi1Get*Status as
fmi1String (ctypes.c_char_p) instead of fmi1Status (c_int), so the status is never checked, and
any status other than fmiOK (1, 2, 3, 4) is read as a char* and dereferenced: the process dies
with SIGSEGV instead of raising SlaveError. FMU1Slave.instantiate does not check for a NULL
instance either, so a refused fmiInstantiateSlave (e.g. wrong GUID) crashes at the next call.
The master therefore calls these functions itself with a c_int result type and checks the status
and the instance; the two tests at the end run those failure cases in a subprocess (a regression
would kill the process, not just fail an assertion).
"""
from __future__ import annotations

import ctypes
import math
import subprocess
import sys
import textwrap
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from fmpy import calloc, extract, free, read_model_description, simulate_fmu
from fmpy.validation import validate_fmu
from scipy.integrate import solve_ivp

from orchestration import simulate
from orchestration.system.model import Component, System
from tests.models.c_fmu import build_fmi1
from tests.models.c_fmu.build import build_oscillator_fmu
from tests.models.c_fmu.build import FmuBuildError
from tests.models.c_fmu.build_fmi1 import build_oscillator_fmi1_fmu

pytestmark = pytest.mark.gcc          # builds plain-C FMUs or hosts with gcc

ROOT = Path(__file__).resolve().parents[2]
MODEL_IDENTIFIER = "Oscillator1"

# name: (value reference, FMI 1.0 causality, FMI 1.0 variability, unit, start)
INTERFACE = {
    "m": (1, "internal", "parameter", "kg", 10.0),
    "k": (2, "internal", "parameter", "N/m", 1000.0),
    "c": (3, "internal", "parameter", "N.s/m", 5.0),
    "x0": (4, "internal", "parameter", "m", 0.1),
    "v0": (5, "internal", "parameter", "m/s", 0.0),
    "F": (100, "input", "continuous", "N", 0.0),
    "x": (200, "output", "continuous", "m", None),
    "v": (201, "output", "continuous", "m/s", None),
    "a": (202, "output", "continuous", "m/s2", None),
}
VR = {name: spec[0] for name, spec in INTERFACE.items()}

FMI1_CS_FUNCTIONS = """
fmiGetTypesPlatform fmiGetVersion fmiSetDebugLogging fmiInstantiateSlave fmiInitializeSlave
fmiTerminateSlave fmiResetSlave fmiFreeSlaveInstance fmiSetReal fmiSetInteger fmiSetBoolean
fmiSetString fmiGetReal fmiGetInteger fmiGetBoolean fmiGetString fmiSetRealInputDerivatives
fmiGetRealOutputDerivatives fmiCancelStep fmiDoStep fmiGetStatus fmiGetRealStatus
fmiGetIntegerStatus fmiGetBooleanStatus fmiGetStringStatus
""".split()

FMI_OK, FMI_WARNING, FMI_DISCARD, FMI_ERROR = 0, 1, 2, 3
FMI_LAST_SUCCESSFUL_TIME = 2

# measured errors, printed at the end of the module (pytest -s shows them)
MEASURED: dict[str, float] = {}


@pytest.fixture(scope="module", autouse=True)
def report_errors():
    yield
    if MEASURED:
        width = max(map(len, MEASURED))
        print("\nFMI 1.0 Oscillator1, measured errors:")
        for name, value in MEASURED.items():
            print(f"  {name:<{width}}  {value:.3e}")


@pytest.fixture(scope="module")
def fmi1_fmu(tmp_path_factory) -> Path:
    return build_oscillator_fmi1_fmu(tmp_path_factory.mktemp("c_fmu_fmi1"))


@pytest.fixture(scope="module")
def fmi2_fmu(tmp_path_factory) -> Path:
    return build_oscillator_fmu(tmp_path_factory.mktemp("c_fmu_fmi2"))


@pytest.fixture(scope="module")
def library_path(fmi1_fmu, tmp_path_factory) -> Path:
    unzipped = extract(str(fmi1_fmu), unzipdir=str(tmp_path_factory.mktemp("c_fmu_fmi1_unzipped")))
    return Path(unzipped) / "binaries" / "linux64" / f"{MODEL_IDENTIFIER}.so"


# ---------------------------------------------------------------------------------------------
# analytic solution
# ---------------------------------------------------------------------------------------------

def analytic(t, m=10.0, k=1000.0, c=5.0, x0=0.1, v0=0.0, F=0.0):
    """Exact x, v, a of m x'' + c x' + k x = F (constant F, underdamped)."""
    t = np.asarray(t, dtype=float)
    wn = math.sqrt(k / m)
    zeta = c / (2.0 * math.sqrt(k * m))
    assert zeta < 1.0
    wd = wn * math.sqrt(1.0 - zeta**2)
    sigma = zeta * wn
    y0 = x0 - F / k
    b = (v0 + sigma * y0) / wd
    decay, cos, sin = np.exp(-sigma * t), np.cos(wd * t), np.sin(wd * t)
    x = F / k + decay * (y0 * cos + b * sin)
    v = decay * ((wd * b - sigma * y0) * cos - (sigma * b + wd * y0) * sin)
    a = (F - c * v - k * x) / m
    return x, v, a


def relative_error(numeric, exact) -> float:
    numeric, exact = np.asarray(numeric), np.asarray(exact)
    return float(np.max(np.abs(numeric - exact)) / np.max(np.abs(exact)))


# ---------------------------------------------------------------------------------------------
# the FMU through ctypes with the FMI 1.0 signatures (status results checked by the test)
# ---------------------------------------------------------------------------------------------

LOGGER = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p)
ALLOCATE = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)
FREE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class Callbacks(ctypes.Structure):
    _fields_ = [("logger", LOGGER), ("allocateMemory", ALLOCATE), ("freeMemory", FREE),
                ("stepFinished", ctypes.c_void_p)]


def load_library(path: Path) -> ctypes.CDLL:
    lib = ctypes.CDLL(str(path))
    c, vr_p, size = ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint), ctypes.c_size_t
    real_p, b, r, s, st = ctypes.POINTER(ctypes.c_double), ctypes.c_char, ctypes.c_double, ctypes.c_char_p, ctypes.c_int
    signatures = {
        "fmiGetTypesPlatform": (ctypes.c_char_p, []),
        "fmiGetVersion": (ctypes.c_char_p, []),
        "fmiSetDebugLogging": (st, [c, b]),
        "fmiInstantiateSlave": (c, [s, s, s, s, r, b, b, Callbacks, b]),
        "fmiInitializeSlave": (st, [c, r, b, r]),
        "fmiTerminateSlave": (st, [c]),
        "fmiResetSlave": (st, [c]),
        "fmiFreeSlaveInstance": (None, [c]),
        "fmiSetReal": (st, [c, vr_p, size, real_p]),
        "fmiGetReal": (st, [c, vr_p, size, real_p]),
        "fmiGetInteger": (st, [c, vr_p, size, ctypes.POINTER(ctypes.c_int)]),
        "fmiSetRealInputDerivatives": (st, [c, vr_p, size, ctypes.POINTER(ctypes.c_int), real_p]),
        "fmiGetRealOutputDerivatives": (st, [c, vr_p, size, ctypes.POINTER(ctypes.c_int), real_p]),
        "fmiCancelStep": (st, [c]),
        "fmiDoStep": (st, [c, r, r, b]),
        "fmiGetStatus": (st, [c, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]),
        "fmiGetRealStatus": (st, [c, ctypes.c_int, real_p]),
        "fmiGetBooleanStatus": (st, [c, ctypes.c_int, ctypes.POINTER(ctypes.c_char)]),
    }
    for name, (restype, argtypes) in signatures.items():
        f = getattr(lib, f"{MODEL_IDENTIFIER}_{name}")
        f.restype, f.argtypes = restype, argtypes
    return lib


class Slave1:
    """One instance of Oscillator1 with its log collected; calls return the fmiStatus."""

    def __init__(self, lib: ctypes.CDLL, guid: str, name: str = "osc1", logging_on: bool = False):
        self.lib = lib
        self.messages: list[tuple[int, str, str]] = []

        def logger(component, instance_name, status, category, message):
            self.messages.append((status, category.decode(), message.decode()))

        # the ctypes callbacks must stay referenced while the instance lives
        self.callbacks = Callbacks(LOGGER(logger), ALLOCATE(calloc), FREE(free), None)
        self.c = self.fn("fmiInstantiateSlave")(name.encode(), guid.encode(), b"file:///unused",
                                                 b"application/x-fmu-sharedlibrary", 0.0, b"\x00", b"\x00",
                                                 self.callbacks, b"\x01" if logging_on else b"\x00")

    def fn(self, name: str):
        return getattr(self.lib, f"{MODEL_IDENTIFIER}_{name}")

    def call(self, name: str, *args) -> int:
        return self.fn(name)(self.c, *args)

    def set(self, **values: float) -> int:
        vrs = (ctypes.c_uint * len(values))(*[VR[n] for n in values])
        vals = (ctypes.c_double * len(values))(*values.values())
        return self.call("fmiSetReal", vrs, len(values), vals)

    def get(self, *names: str) -> list[float]:
        vrs = (ctypes.c_uint * len(names))(*[VR[n] for n in names])
        vals = (ctypes.c_double * len(names))()
        assert self.call("fmiGetReal", vrs, len(names), vals) == FMI_OK, self.messages
        return list(vals)

    def initialize(self, t_start: float = 0.0, t_stop: float | None = None) -> int:
        return self.call("fmiInitializeSlave", t_start, b"\x01" if t_stop is not None else b"\x00",
                         t_stop if t_stop is not None else 0.0)

    def step(self, t: float, h: float, new_step: bool = True) -> int:
        return self.call("fmiDoStep", t, h, b"\x01" if new_step else b"\x00")

    def errors(self) -> str:
        return " | ".join(m for s, _, m in self.messages if s >= FMI_ERROR)

    def free(self) -> None:
        if self.c:
            self.fn("fmiFreeSlaveInstance")(self.c)
            self.c = None


@pytest.fixture
def make_slave(library_path, fmi1_fmu):
    lib = load_library(library_path)
    guid = read_model_description(str(fmi1_fmu)).guid
    made: list[Slave1] = []

    def make(**kwargs) -> Slave1:
        slave = Slave1(lib, guid, **kwargs)
        assert slave.c, slave.messages
        made.append(slave)
        return slave

    yield make
    for slave in made:
        slave.free()


# ---------------------------------------------------------------------------------------------
# the FMU: archive, model description, exports
# ---------------------------------------------------------------------------------------------

def test_fmu_archive_layout(fmi1_fmu):
    with zipfile.ZipFile(fmi1_fmu) as zf:
        assert sorted(zf.namelist()) == ["binaries/linux64/Oscillator1.so", "modelDescription.xml",
                                         "sources/oscillator_fmi1.c"]


def test_validates_with_zero_problems(fmi1_fmu):
    assert validate_fmu(str(fmi1_fmu)) == []


def test_model_description_is_fmi1_cosimulation_standalone(fmi1_fmu):
    md = read_model_description(str(fmi1_fmu), validate=True)
    assert md.fmiVersion == "1.0"
    assert md.coSimulation is not None and md.modelExchange is None
    assert md.coSimulation.modelIdentifier == MODEL_IDENTIFIER
    with zipfile.ZipFile(fmi1_fmu) as zf:
        xml = zf.read("modelDescription.xml").decode()
    assert "<CoSimulation_StandAlone>" in xml and 'fmiVersion="1.0"' in xml


def test_interface_and_value_references(fmi1_fmu):
    from lxml import etree

    with zipfile.ZipFile(fmi1_fmu) as zf:
        root = etree.fromstring(zf.read("modelDescription.xml"))
    found = {}
    for sv in root.iter("ScalarVariable"):
        real = sv.find("Real")
        start = real.get("start")
        found[sv.get("name")] = (int(sv.get("valueReference")), sv.get("causality"), sv.get("variability"),
                                 real.get("unit"), float(start) if start is not None else None)
    assert found == INTERFACE
    # FMPy maps internal + parameter to causality "parameter"; the master relies on input/output
    md = read_model_description(str(fmi1_fmu))
    causality = {v.name: v.causality for v in md.modelVariables}
    assert causality == {"m": "parameter", "k": "parameter", "c": "parameter", "x0": "parameter",
                         "v0": "parameter", "F": "input", "x": "output", "v": "output", "a": "output"}


def test_guid_in_source_matches_model_description(fmi1_fmu):
    guid = read_model_description(str(fmi1_fmu)).guid
    assert f'#define MODEL_GUID "{guid}"' in build_fmi1.SOURCE.read_text()


def test_exports_every_fmi1_cosimulation_function_and_nothing_else(library_path):
    result = subprocess.run(["nm", "-D", "--defined-only", str(library_path)], capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip(f"nm is not available: {result.stderr.strip()}")
    exported = {line.split()[-1] for line in result.stdout.splitlines() if line.split()[1:2] == ["T"]}
    assert exported == {f"{MODEL_IDENTIFIER}_{name}" for name in FMI1_CS_FUNCTIONS}


def test_compiles_without_warnings(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        build_oscillator_fmi1_fmu(tmp_path)


def test_missing_gcc_gives_a_clear_error(tmp_path, monkeypatch):
    import tests.models.c_fmu.build as c_fmu_build

    monkeypatch.setattr(c_fmu_build.shutil, "which", lambda name: None)
    with pytest.raises(FmuBuildError, match="gcc was not found"):
        build_oscillator_fmi1_fmu(tmp_path)


# ---------------------------------------------------------------------------------------------
# the FMU through ctypes: calling sequence and error paths
# ---------------------------------------------------------------------------------------------

def test_types_platform_and_version(make_slave):
    slave = make_slave()
    assert slave.fn("fmiGetTypesPlatform")() == b"standard32"
    assert slave.fn("fmiGetVersion")() == b"1.0"


def test_wrong_guid_gives_null_and_a_message(library_path):
    lib = load_library(library_path)
    slave = Slave1(lib, "{00000000-0000-0000-0000-000000000000}")
    assert not slave.c
    assert "wrong GUID" in slave.errors()


def test_start_values_before_and_after_initialization(make_slave):
    slave = make_slave()
    assert slave.get("m", "k", "c", "x0", "v0", "F", "x", "v") == [10.0, 1000.0, 5.0, 0.1, 0.0, 0.0, 0.1, 0.0]
    assert slave.set(x0=0.2, v0=-1.0, F=3.0) == FMI_OK
    assert slave.get("x", "v") == [0.2, -1.0]
    assert slave.initialize() == FMI_OK
    x, v, a = slave.get("x", "v", "a")
    assert (x, v) == (0.2, -1.0)
    assert a == pytest.approx((3.0 - 5.0 * -1.0 - 1000.0 * 0.2) / 10.0, rel=1e-15)


def test_free_oscillation_matches_analytic(make_slave):
    slave = make_slave()
    assert slave.set(k=400.0) == FMI_OK
    assert slave.initialize(0.0, 2.0) == FMI_OK
    t, rows = [0.0], [slave.get("x", "v", "a")]
    for n in range(2000):
        assert slave.step(n * 1e-3, 1e-3) == FMI_OK, slave.errors()
        t.append((n + 1) * 1e-3)
        rows.append(slave.get("x", "v", "a"))
    rows = np.array(rows)
    exact = analytic(np.array(t), k=400.0)
    for column, name in enumerate("xva"):
        err = relative_error(rows[:, column], exact[column])
        MEASURED[f"ctypes, k = 400: {name}"] = err
        assert err < 1e-6, name
    status = ctypes.c_double()
    assert slave.call("fmiGetRealStatus", FMI_LAST_SUCCESSFUL_TIME, ctypes.byref(status)) == FMI_OK
    assert status.value == pytest.approx(2.0, abs=1e-12)
    assert slave.call("fmiTerminateSlave") == FMI_OK


def test_repeated_step_with_new_step_false(make_slave):
    """newStep = fmiFalse goes back to the start of the previous step and repeats it with the
    inputs as they are now; the result equals a first attempt with those inputs."""
    a, b = make_slave(name="a"), make_slave(name="b")
    for s in (a, b):
        assert s.initialize() == FMI_OK
        assert s.step(0.0, 0.01) == FMI_OK
    assert a.set(F=50.0) == FMI_OK and a.step(0.01, 0.02) == FMI_OK
    assert a.set(F=20.0) == FMI_OK and a.step(0.01, 0.005, new_step=False) == FMI_OK
    assert b.set(F=20.0) == FMI_OK and b.step(0.01, 0.005) == FMI_OK
    assert a.get("x", "v", "a") == b.get("x", "v", "a")
    status = ctypes.c_double()
    assert a.call("fmiGetRealStatus", FMI_LAST_SUCCESSFUL_TIME, ctypes.byref(status)) == FMI_OK
    assert status.value == pytest.approx(0.015, abs=1e-15)


@pytest.mark.parametrize("name, value, text", [("m", 0.0, "must be >"), ("k", -1.0, "must be >="),
                                               ("c", float("nan"), "NaN"), ("F", float("inf"), "set to inf"),
                                               ("x", 1.0, "cannot be set")])
def test_illegal_values_are_refused(make_slave, name, value, text):
    slave = make_slave()
    assert slave.set(**{name: value}) == FMI_ERROR
    assert text in slave.errors() and f"'{name}'" in slave.errors()


def test_illegal_calls_are_errors(make_slave):
    slave = make_slave()
    assert slave.step(0.0, 1e-3) == FMI_ERROR and "not allowed in state 'instantiated'" in slave.errors()
    assert slave.call("fmiResetSlave") == FMI_OK

    assert slave.initialize(0.0, 0.01) == FMI_OK
    assert slave.set(k=1.0) == FMI_ERROR and "only be set before fmiInitializeSlave" in slave.errors()
    assert slave.call("fmiResetSlave") == FMI_OK
    assert slave.get("k") == [1000.0]

    assert slave.initialize(0.0, 0.01) == FMI_OK
    assert slave.step(0.5, 1e-3) == FMI_ERROR and "the FMU is at t = 0" in slave.errors()
    assert slave.call("fmiResetSlave") == FMI_OK and slave.initialize(0.0, 0.01) == FMI_OK
    assert slave.step(0.0, 0.02) == FMI_ERROR and "past tStop" in slave.errors()
    assert slave.call("fmiResetSlave") == FMI_OK and slave.initialize() == FMI_OK
    assert slave.step(0.0, 1e-3, new_step=False) == FMI_ERROR and "no previous step" in slave.errors()
    # in the error state only reading, terminating, resetting and freeing are accepted
    assert slave.get("x") == [0.1]
    assert slave.set(F=1.0) == FMI_ERROR
    assert slave.call("fmiTerminateSlave") == FMI_OK

    for call, args, text in [("fmiCancelStep", (), "never returns fmiPending"),
                             ("fmiSetRealInputDerivatives", (None, 0, None, None), "canInterpolateInputs"),
                             ("fmiGetRealOutputDerivatives", (None, 0, None, None), "maxOutputDerivativeOrder")]:
        assert slave.call("fmiResetSlave") == FMI_OK and slave.initialize() == FMI_OK
        assert slave.call(call, *args) == FMI_ERROR and text in slave.errors()
    status = ctypes.c_int(-1)
    assert slave.call("fmiGetStatus", 0, ctypes.byref(status)) == FMI_DISCARD
    assert slave.fn("fmiDoStep")(None, 0.0, 1e-3, b"\x01") == FMI_ERROR


def test_divergence_is_reported(make_slave):
    slave = make_slave()
    assert slave.set(m=1e-3, k=1e14) == FMI_OK and slave.initialize() == FMI_OK
    statuses = [slave.step(n * 1e-3, 1e-3) for n in range(100)]
    assert FMI_ERROR in statuses and "diverged" in slave.errors()


def test_call_logging_can_be_switched_on(make_slave):
    slave = make_slave(logging_on=True)
    assert slave.initialize() == FMI_OK
    assert ("call" in {c for _, c, _ in slave.messages}
            and "fmiInitializeSlave" in [m for _, _, m in slave.messages])
    assert slave.call("fmiSetDebugLogging", b"\x00") == FMI_OK
    slave.messages.clear()
    slave.get("x")
    assert slave.messages == []


def test_two_instances_are_independent(make_slave):
    a, b = make_slave(name="a"), make_slave(name="b")
    assert a.set(x0=0.3) == FMI_OK
    assert a.initialize() == FMI_OK and b.initialize() == FMI_OK
    assert a.step(0.0, 0.1) == FMI_OK and b.step(0.0, 0.1) == FMI_OK
    assert a.get("x")[0] == pytest.approx(3.0 * b.get("x")[0], rel=1e-12)


# ---------------------------------------------------------------------------------------------
# FMPy's own FMI 1.0 co-simulation
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("start_values", [{}, {"k": 400.0, "c": 2.0, "x0": -0.05, "v0": 0.3}])
def test_simulate_fmu_matches_analytic(fmi1_fmu, start_values):
    result = simulate_fmu(str(fmi1_fmu), stop_time=2.0, output_interval=1e-3, start_values=start_values,
                          output=["x", "v", "a"])
    assert result["time"][-1] == pytest.approx(2.0)
    exact = analytic(result["time"], **start_values)
    for column, name in enumerate("xva"):
        err = relative_error(result[name], exact[column])
        MEASURED[f"simulate_fmu {sorted(start_values) or 'defaults'}: {name}"] = err
        assert err < 1e-6, name


def test_simulate_fmu_with_constant_force(fmi1_fmu):
    result = simulate_fmu(str(fmi1_fmu), stop_time=2.0, output_interval=1e-3, output=["x"],
                          input=np.array([(0.0, 40.0)], dtype=[("time", float), ("F", float)]))
    err = relative_error(result["x"], analytic(result["time"], F=40.0)[0])
    MEASURED["simulate_fmu F = 40 N: x"] = err
    assert err < 1e-6


# ---------------------------------------------------------------------------------------------
# the co-simulation master
# ---------------------------------------------------------------------------------------------

def test_master_runs_the_fmi1_fmu_alone(fmi1_fmu):
    s = System("alone")
    s.add_component(Component("o1", fmi1_fmu, {"k": 400.0}))
    r = simulate(s, stop_time=2.0, step=1e-3, method="gauss-seidel")
    assert len(r.time) == 2001 and r.time[-1] == pytest.approx(2.0)
    exact = analytic(r.time, k=400.0)
    for column, name in enumerate("xva"):
        err = relative_error(r[f"o1.{name}"], exact[column])
        MEASURED[f"master, o1 alone: {name}"] = err
        assert err < 1e-6, name
    assert np.all(r["o1.F"] == 0.0)


def mixed_reference(t: np.ndarray):
    """Monolithic x1, x2 and the first-order coupling-error shape d (see the module docstring)."""
    m1, k1, c1 = 10.0, 400.0, 5.0
    m2, k2, c2 = 10.0, 1000.0, 5.0
    gain = 100.0

    def rhs(_, y):
        x1, v1, x2, v2, d, dv = y
        return [v1, (-c1 * v1 - k1 * x1) / m1,
                v2, (gain * x1 - c2 * v2 - k2 * x2) / m2,
                dv, (gain * v1 - c2 * dv - k2 * d) / m2]

    sol = solve_ivp(rhs, (t[0], t[-1]), [0.1, 0.0, 0.1, 0.0, 0.0, 0.0], method="DOP853",
                    rtol=1e-12, atol=1e-14, t_eval=t)
    assert sol.success, sol.message
    return sol.y[0], sol.y[2], sol.y[4]


def run_mixed(fmi1_fmu: Path, fmi2_fmu: Path, h: float):
    s = System("mixed")
    s.add_component(Component("o1", fmi1_fmu, {"k": 400.0}))
    s.add_component(Component("o2", fmi2_fmu))
    s.connect("o1.x", "o2.F", factor=100.0)
    return simulate(s, stop_time=2.0, step=h, method="gauss-seidel")


def test_master_runs_fmi1_mixed_with_fmi2(fmi1_fmu, fmi2_fmu):
    h = 1e-3
    r = run_mixed(fmi1_fmu, fmi2_fmu, h)
    t = r.time
    assert len(t) == 2001 and t[-1] == pytest.approx(2.0)
    x1_ref, x2_ref, d = mixed_reference(t)
    # the reference itself: x1 from solve_ivp agrees with the closed form
    assert relative_error(x1_ref, analytic(t, k=400.0)[0]) < 1e-9

    # o1 is not forced: exact to RK4 accuracy, as when it runs alone
    err_o1 = relative_error(r["o1.x"], analytic(t, k=400.0)[0])
    MEASURED["master mixed, o1.x vs analytic (relative)"] = err_o1
    assert err_o1 < 1e-6

    # Gauss-Seidel: o2's input over [t, t+h] is 100 * x1(t + h), as recorded with the step
    np.testing.assert_allclose(r["o2.F"][1:], 100.0 * r["o1.x"][1:], rtol=0, atol=1e-12)

    e = r["o2.x"] - x2_ref
    predicted = 0.5 * h * d
    bound = 1.05 * np.max(np.abs(predicted))
    MEASURED["master mixed, max|o2.x - reference| [m]"] = float(np.max(np.abs(e)))
    MEASURED["master mixed, (h/2) max|d| [m]"] = float(np.max(np.abs(predicted)))
    MEASURED["master mixed, max|e - (h/2) d| [m]"] = float(np.max(np.abs(e - predicted)))
    assert np.max(np.abs(e)) <= bound
    # the error is the predicted first-order coupling error, not something else
    assert np.max(np.abs(e - predicted)) <= 0.02 * np.max(np.abs(predicted))


def test_mixed_coupling_error_is_first_order(fmi1_fmu, fmi2_fmu):
    errors = {}
    for h in (1e-3, 2e-3):
        r = run_mixed(fmi1_fmu, fmi2_fmu, h)
        errors[h] = float(np.max(np.abs(r["o2.x"] - mixed_reference(r.time)[1])))
    ratio = errors[2e-3] / errors[1e-3]
    MEASURED["master mixed, error(2 ms) / error(1 ms)"] = ratio
    assert ratio == pytest.approx(2.0, abs=0.1)


# ---------------------------------------------------------------------------------------------
# the master's FMI 1.0 error path (known bug, see the module docstring)
# ---------------------------------------------------------------------------------------------

FMPY_FMI1_STATUS_BUG = (
    "orchestration/master/slaves.py InProcessSlave (FMI 1.0) calls FMPy 0.3.32 FMU1Slave.initialize()/doStep(), "
    "whose ctypes restype for fmi1InitializeSlave/fmi1DoStep is c_char_p instead of c_int: the status is never "
    "checked and a non-OK status is dereferenced as a pointer (SIGSEGV) instead of raising SlaveError; "
    "a NULL instance from fmiInstantiateSlave is not detected either")


def run_master_in_subprocess(script: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          cwd=str(ROOT), timeout=120)


def test_master_reports_a_failing_fmi1_do_step(fmi1_fmu):
    """The FMU's fmiDoStep returns fmiError (the solution diverges): the master must raise
    ExecutionError naming doStep; today the process is killed by SIGSEGV."""
    proc = run_master_in_subprocess(f"""
        from pathlib import Path
        from orchestration.master.execution import ExecutionError
        from orchestration import simulate
        from orchestration.system.model import Component, System
        s = System("diverging")
        s.add_component(Component("o1", Path({str(fmi1_fmu)!r}), {{"m": 1e-3, "k": 1e14}}))
        try:
            simulate(s, stop_time=0.1, step=1e-3)
        except ExecutionError as exc:
            print("ExecutionError:", exc)
        else:
            print("no error")
        """)
    assert proc.returncode == 0, f"master process died (return code {proc.returncode}): {proc.stderr[-500:]}"
    assert "ExecutionError" in proc.stdout and "dostep" in proc.stdout.lower()


def test_master_reports_a_refused_fmi1_instantiation(fmi1_fmu):
    """fmiInstantiateSlave returns NULL (wrong GUID): the slave must raise SlaveError; today
    FMPy keeps the NULL instance and fmiInitializeSlave's fmiError crashes the process."""
    proc = run_master_in_subprocess(f"""
        from pathlib import Path
        from orchestration.master.slaves import InProcessSlave, SlaveError
        slave = InProcessSlave("o1", Path({str(fmi1_fmu)!r}))
        slave.model_description.guid = "{{00000000-0000-0000-0000-000000000000}}"
        try:
            slave.instantiate()
            slave.setup(0.0, None)
            slave.enter_initialization()
            slave.exit_initialization()
        except SlaveError as exc:
            print("SlaveError:", exc)
        else:
            print("no error")
        """)
    assert proc.returncode == 0, f"master process died (return code {proc.returncode}): {proc.stderr[-500:]}"
    assert "SlaveError" in proc.stdout
