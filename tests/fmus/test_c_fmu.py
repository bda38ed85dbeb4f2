"""A plain-C FMI 2.0 co-simulation FMU that this project did not generate runs correctly.

tests/models/c_fmu/oscillator.c is a hand-written mass-spring-damper FMU (no pythonfmu, no Python) built
here with gcc against the FMI 2.0 headers that FMPy ships. It stands in for a third-party FMU:
these tests pin its interface and check it against the analytic solution, so that the
co-simulation master can later be shown to run FMUs it did not build.
"""
from __future__ import annotations

import ctypes
import math
import shutil
import subprocess
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from fmpy import calloc, extract, free, read_model_description, simulate_fmu
from fmpy.fmi1 import FMICallException
from fmpy.fmi2 import (FMU2Slave, fmi2CallbackAllocateMemoryTYPE, fmi2CallbackFreeMemoryTYPE,
                       fmi2CallbackFunctions, fmi2CallbackLoggerTYPE, fmi2Error)
from fmpy.validation import validate_fmu

from tests.models.c_fmu import build as c_fmu_build
from tests.models.c_fmu.build import FmuBuildError, build_oscillator_fmu

pytestmark = pytest.mark.gcc          # builds plain-C FMUs or hosts with gcc

# name: (value reference, causality, variability, unit, start) -- value references are frozen
INTERFACE = {
    "time": (0, "independent", "continuous", "s", None),
    "m": (1, "parameter", "fixed", "kg", 10.0),
    "k": (2, "parameter", "fixed", "N/m", 1000.0),
    "c": (3, "parameter", "fixed", "N.s/m", 5.0),
    "x0": (4, "parameter", "fixed", "m", 0.1),
    "v0": (5, "parameter", "fixed", "m/s", 0.0),
    "F": (100, "input", "continuous", "N", 0.0),
    "x": (200, "output", "continuous", "m", None),
    "v": (201, "output", "continuous", "m/s", None),
    "a": (202, "output", "continuous", "m/s2", None),
}
VR = {name: spec[0] for name, spec in INTERFACE.items()}
DEFAULTS = {name: spec[4] for name, spec in INTERFACE.items() if spec[1] == "parameter"}

FMI2_FUNCTIONS = """
fmi2GetTypesPlatform fmi2GetVersion fmi2SetDebugLogging fmi2Instantiate fmi2FreeInstance
fmi2SetupExperiment fmi2EnterInitializationMode fmi2ExitInitializationMode fmi2Terminate fmi2Reset
fmi2GetReal fmi2GetInteger fmi2GetBoolean fmi2GetString fmi2SetReal fmi2SetInteger fmi2SetBoolean
fmi2SetString fmi2GetFMUstate fmi2SetFMUstate fmi2FreeFMUstate fmi2SerializedFMUstateSize
fmi2SerializeFMUstate fmi2DeSerializeFMUstate fmi2GetDirectionalDerivative
fmi2EnterEventMode fmi2NewDiscreteStates fmi2EnterContinuousTimeMode fmi2CompletedIntegratorStep
fmi2SetTime fmi2SetContinuousStates fmi2GetDerivatives fmi2GetEventIndicators
fmi2GetContinuousStates fmi2GetNominalsOfContinuousStates
fmi2SetRealInputDerivatives fmi2GetRealOutputDerivatives fmi2DoStep fmi2CancelStep fmi2GetStatus
fmi2GetRealStatus fmi2GetIntegerStatus fmi2GetBooleanStatus fmi2GetStringStatus
""".split()

# measured errors, reported at the end of the module
MEASURED: dict[str, float] = {}


@pytest.fixture(scope="module", autouse=True)
def report_errors():
    yield
    if MEASURED:
        width = max(map(len, MEASURED))
        print("\nOscillator FMU, measured errors:")
        for name, value in MEASURED.items():
            print(f"  {name:<{width}}  {value:.3e}")


@pytest.fixture(scope="module")
def oscillator_fmu(tmp_path_factory) -> Path:
    return build_oscillator_fmu(tmp_path_factory.mktemp("c_fmu"))


@pytest.fixture(scope="module")
def unzipped(oscillator_fmu, tmp_path_factory) -> str:
    return extract(str(oscillator_fmu), unzipdir=str(tmp_path_factory.mktemp("c_fmu_unzipped")))


@pytest.fixture(scope="module")
def model_description(oscillator_fmu):
    return read_model_description(str(oscillator_fmu))


# ---------------------------------------------------------------------------------------------
# analytic solution and a thin FMPy wrapper with a capturing logger
# ---------------------------------------------------------------------------------------------

def analytic(t, m=10.0, k=1000.0, c=5.0, x0=0.1, v0=0.0, F=0.0):
    """Exact x, v, a of m x'' + c x' + k x = F (constant F, underdamped) for the given start values:
    x(t) = F/k + e^{-zeta wn t} (y0 cos(wd t) + (v0 + zeta wn y0)/wd sin(wd t)), y0 = x0 - F/k."""
    t = np.asarray(t, dtype=float)
    wn = math.sqrt(k / m)
    zeta = c / (2.0 * math.sqrt(k * m))
    assert zeta < 1.0, "the analytic solution below is for the underdamped case"
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
    """max |numeric - exact| over the run, relative to the largest |exact|."""
    numeric, exact = np.asarray(numeric), np.asarray(exact)
    return float(np.max(np.abs(numeric - exact)) / np.max(np.abs(exact)))


class Oscillator:
    """One FMU instance through FMPy's FMU2Slave, with the FMU's log messages collected."""

    def __init__(self, unzipped: str, guid: str, name: str = "oscillator", logging_on: bool = False):
        self.messages: list[tuple[int, str, str]] = []  # (status, category, message)

        def logger(env, instance_name, status, category, message):
            self.messages.append((status, category.decode(), message.decode()))

        # the ctypes callbacks must stay referenced while the instance lives
        self.callbacks = fmi2CallbackFunctions()
        self.callbacks.logger = fmi2CallbackLoggerTYPE(logger)
        self.callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
        self.callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
        self.fmu = FMU2Slave(guid=guid, unzipDirectory=unzipped, modelIdentifier="Oscillator", instanceName=name)
        self.fmu.instantiate(callbacks=self.callbacks, loggingOn=logging_on)
        self.time = 0.0

    def initialize(self, start_time: float = 0.0, stop_time: float | None = None, **values: float) -> "Oscillator":
        self.fmu.setupExperiment(startTime=start_time, stopTime=stop_time)
        self.set(**values)
        self.fmu.enterInitializationMode()
        self.fmu.exitInitializationMode()
        self.time = start_time
        return self

    def set(self, **values: float) -> None:
        if values:
            self.fmu.setReal([VR[n] for n in values], list(values.values()))

    def get(self, *names: str) -> list[float]:
        return self.fmu.getReal([VR[n] for n in names])

    def step(self, h: float) -> None:
        self.fmu.doStep(currentCommunicationPoint=self.time, communicationStepSize=h)
        self.time += h

    def errors(self) -> list[str]:
        return [msg for status, _, msg in self.messages if status == fmi2Error]

    def close(self) -> None:
        self.fmu.freeInstance()


@pytest.fixture
def make_instance(unzipped, model_description):
    made: list[Oscillator] = []

    def make(name: str = "oscillator", **kwargs) -> Oscillator:
        inst = Oscillator(unzipped, model_description.guid, name=name, **kwargs)
        made.append(inst)
        return inst

    yield make
    for inst in made:
        inst.close()


# ---------------------------------------------------------------------------------------------
# build, packaging, interface
# ---------------------------------------------------------------------------------------------

def test_fmu_archive_layout(oscillator_fmu):
    with zipfile.ZipFile(oscillator_fmu) as zf:
        assert sorted(zf.namelist()) == ["binaries/linux64/Oscillator.so", "modelDescription.xml",
                                         "sources/oscillator.c"]


def test_validates_with_zero_problems(oscillator_fmu):
    assert validate_fmu(str(oscillator_fmu)) == []


def test_interface_and_value_references_are_stable(model_description):
    md = model_description
    assert md.fmiVersion == "2.0"
    assert md.variableNamingConvention == "structured"
    assert md.modelExchange is None
    cs = md.coSimulation
    assert cs.modelIdentifier == "Oscillator"
    assert cs.canGetAndSetFMUstate and cs.canSerializeFMUstate
    assert cs.canHandleVariableCommunicationStepSize
    assert not cs.canInterpolateInputs and not cs.providesDirectionalDerivative
    assert float(md.defaultExperiment.startTime) == 0.0 and float(md.defaultExperiment.stopTime) == 2.0

    actual = {v.name: (v.valueReference, v.causality, v.variability, v.unit,
                       None if v.start is None else float(v.start)) for v in md.modelVariables}
    assert actual == INTERFACE
    units = {u.name: u for u in md.unitDefinitions}
    assert {spec[3] for spec in INTERFACE.values()} <= set(units)
    newton = units["N"].baseUnit
    assert (newton.kg, newton.m, newton.s) == (1, 1, -2)

    by_index = {i + 1: v for i, v in enumerate(md.modelVariables)}
    outputs = {u.variable.name: sorted(d.name for d in (u.dependencies or [])) for u in md.outputs}
    assert outputs == {"x": [], "v": [], "a": ["F"]}  # only a has direct feedthrough from F
    assert by_index[7].name == "F"


def test_guid_in_source_matches_model_description(model_description):
    source = Path(c_fmu_build.SOURCE).read_text()
    assert f'#define MODEL_GUID "{model_description.guid}"' in source


def test_exports_every_fmi2_function_and_nothing_else(unzipped):
    lib = Path(unzipped) / "binaries" / "linux64" / "Oscillator.so"
    dll = ctypes.CDLL(str(lib))
    missing = [name for name in FMI2_FUNCTIONS if not hasattr(dll, name)]
    assert not missing, f"not exported: {missing}"
    assert len(FMI2_FUNCTIONS) == 44
    dll.fmi2GetVersion.restype = ctypes.c_char_p
    dll.fmi2GetTypesPlatform.restype = ctypes.c_char_p
    assert dll.fmi2GetVersion() == b"2.0" and dll.fmi2GetTypesPlatform() == b"default"
    nm = shutil.which("nm")
    if nm:
        listed = subprocess.run([nm, "-D", "--defined-only", str(lib)], capture_output=True, text=True, check=True)
        exported = {line.split()[-1] for line in listed.stdout.splitlines() if line.split()[1:2] == ["T"]}
        assert exported == set(FMI2_FUNCTIONS)


def test_compiles_without_warnings(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        build_oscillator_fmu(tmp_path)


def test_missing_gcc_gives_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(c_fmu_build.shutil, "which", lambda name: None)
    with pytest.raises(FmuBuildError, match="gcc was not found"):
        build_oscillator_fmu(tmp_path)
    assert not (tmp_path / "Oscillator.fmu").exists()


# ---------------------------------------------------------------------------------------------
# numerics against the analytic solution (FMPy's simulate_fmu as the master)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("interval", [1e-3, 0.01, 0.0137, 0.25])
def test_free_oscillation_matches_analytic(oscillator_fmu, interval):
    """F = 0 over 2 s; 0.25 s communication steps still meet 1e-6 only because the FMU sub-steps
    (one RK4 step of 0.25 s, wn*h = 2.5, would be off by tens of percent)."""
    result = simulate_fmu(str(oscillator_fmu), stop_time=2.0, output_interval=interval, output=["x", "v", "a"])
    t = result["time"]
    assert t[0] == 0.0 and t[-1] == pytest.approx(2.0, abs=1e-12)
    x, v, a = analytic(t)
    errors = {name: relative_error(result[name], exact) for name, exact in (("x", x), ("v", v), ("a", a))}
    for name, err in errors.items():
        MEASURED[f"free oscillation, h={interval:g}, {name}"] = err
    assert max(errors.values()) < 1e-6, errors


def test_substep_does_not_depend_on_the_communication_step(oscillator_fmu):
    """1 ms, 10 ms and 250 ms communication steps all integrate with the same 1 ms RK4 sub-steps,
    so they agree to round-off at the common points."""
    runs = {h: simulate_fmu(str(oscillator_fmu), stop_time=2.0, output_interval=h, output=["x"]) for h in (1e-3, 0.01,
                                                                                                           0.25)}
    coarse = runs[0.25]
    for h in (1e-3, 0.01):
        fine = runs[h]
        idx = np.searchsorted(fine["time"], coarse["time"] - 1e-9)
        assert np.allclose(fine["time"][idx], coarse["time"], rtol=0, atol=1e-12)
        diff = float(np.max(np.abs(fine["x"][idx] - coarse["x"])))
        MEASURED[f"max |x(h={h:g}) - x(h=0.25)| [m]"] = diff
        assert diff < 1e-13


def test_free_oscillation_with_other_parameters(oscillator_fmu):
    params = dict(m=2.5, k=400.0, c=3.0, x0=-0.02, v0=0.7)
    result = simulate_fmu(str(oscillator_fmu), stop_time=2.0, output_interval=0.02, start_values=params,
                          output=["x", "v"])
    x, v, _ = analytic(result["time"], **params)
    err = max(relative_error(result["x"], x), relative_error(result["v"], v))
    MEASURED["free oscillation, other parameters, x/v"] = err
    assert err < 1e-6


def test_constant_force_gives_static_deflection(oscillator_fmu):
    """F = 50 N through the input; with c = 100 N.s/m (zeta = 0.5) the transient is gone after
    a few seconds and x settles at F/k = 0.05 m with v = a = 0."""
    F, k, c = 50.0, 1000.0, 100.0
    signal = np.array([(0.0, F), (8.0, F)], dtype=[("time", float), ("F", float)])
    result = simulate_fmu(str(oscillator_fmu), stop_time=8.0, output_interval=0.01, input=signal,
                          start_values={"c": c}, output=["x", "v", "a"])
    x, v, a = analytic(result["time"], c=c, F=F)
    err = relative_error(result["x"], x)
    MEASURED["constant force, trajectory x"] = err
    assert err < 1e-6
    deflection = result["x"][-1]
    MEASURED["constant force, |x(8 s) - F/k| / (F/k)"] = abs(deflection - F / k) / (F / k)
    assert deflection == pytest.approx(F / k, rel=1e-9)
    assert abs(result["v"][-1]) < 1e-9 and abs(result["a"][-1]) < 1e-6


def test_acceleration_has_direct_feedthrough(make_instance):
    osc = make_instance().initialize()
    osc.step(0.1)
    x, v, a0 = osc.get("x", "v", "a")
    osc.set(F=30.0)  # no step in between
    x1, v1, a1 = osc.get("x", "v", "a")
    assert (x1, v1) == (x, v)
    assert a1 == pytest.approx((30.0 - 5.0 * v - 1000.0 * x) / 10.0, rel=1e-15)
    assert a1 - a0 == pytest.approx(3.0, rel=1e-12)


def test_initial_values_visible_in_initialization_mode(make_instance):
    osc = make_instance()
    osc.fmu.setupExperiment(startTime=0.0)
    osc.set(x0=0.3, v0=-1.0, F=2.0)
    osc.fmu.enterInitializationMode()
    assert osc.get("x", "v", "a") == [0.3, -1.0, (2.0 - 5.0 * -1.0 - 1000.0 * 0.3) / 10.0]
    osc.fmu.exitInitializationMode()
    assert osc.get("time", "x", "v") == [0.0, 0.3, -1.0]


# ---------------------------------------------------------------------------------------------
# FMU state
# ---------------------------------------------------------------------------------------------

def test_state_round_trip_is_bit_for_bit(make_instance):
    osc = make_instance().initialize(F=4.0)
    for _ in range(50):
        osc.step(0.01)
    saved_time, saved = osc.time, osc.get("time", "x", "v", "a", "F")
    state = osc.fmu.getFMUstate()
    serialized = osc.fmu.serializeFMUstate(state)

    def run_on() -> list[float]:
        osc.set(F=-7.5)
        for _ in range(37):
            osc.step(0.013)
        return osc.get("time", "x", "v", "a")

    reference = run_on()
    assert reference != saved[:4]

    osc.fmu.setFMUstate(state)
    osc.time = saved_time
    assert osc.get("time", "x", "v", "a", "F") == saved  # exact, including the held input
    assert run_on() == reference

    # serialized and de-serialized (into a fresh state and into the existing one)
    osc.fmu.freeFMUstate(state)
    for reuse in (None, osc.fmu.getFMUstate()):
        restored = osc.fmu.deSerializeFMUstate(serialized, reuse)
        osc.fmu.setFMUstate(restored)
        osc.time = saved_time
        assert osc.get("time", "x", "v", "a", "F") == saved
        assert run_on() == reference
        assert osc.fmu.serializeFMUstate(restored) == serialized
        osc.fmu.freeFMUstate(restored)


def test_serialized_state_moves_to_another_instance(make_instance):
    first = make_instance("first").initialize(m=3.0, x0=0.2)
    for _ in range(10):
        first.step(0.05)
    state = first.fmu.getFMUstate()
    blob = first.fmu.serializeFMUstate(state)
    first.fmu.freeFMUstate(state)

    second = make_instance("second").initialize()
    restored = second.fmu.deSerializeFMUstate(blob)
    second.fmu.setFMUstate(restored)
    second.fmu.freeFMUstate(restored)
    second.time = first.time
    first.step(0.1)
    second.step(0.1)
    assert second.get("time", "x", "v", "a") == first.get("time", "x", "v", "a")


def test_corrupt_serialized_state_is_refused(make_instance):
    osc = make_instance().initialize()
    state = osc.fmu.getFMUstate()
    blob = osc.fmu.serializeFMUstate(state)
    osc.fmu.freeFMUstate(state)
    with pytest.raises(FMICallException) as info:
        osc.fmu.deSerializeFMUstate(b"X" + blob[1:])
    assert info.value.status == fmi2Error
    assert any("not a serialized Oscillator state" in m for m in osc.errors())


# ---------------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------------

def test_nan_input_is_an_error_naming_the_variable(make_instance):
    osc = make_instance().initialize()
    osc.step(0.01)
    good = osc.fmu.getFMUstate()
    before = osc.get("x", "v", "F")
    with pytest.raises(FMICallException) as info:
        osc.set(F=float("nan"))
    assert info.value.status == fmi2Error
    assert any("'F'" in m and "NaN" in m for m in osc.errors()), osc.messages
    assert osc.get("x", "v", "F") == before  # the refused value was not taken
    # after fmi2Error the instance refuses to step until it is restored
    with pytest.raises(FMICallException):
        osc.step(0.01)
    osc.fmu.setFMUstate(good)
    osc.fmu.freeFMUstate(good)
    osc.step(0.01)


def test_nan_parameter_is_an_error_naming_the_variable(make_instance):
    osc = make_instance()
    with pytest.raises(FMICallException):
        osc.set(k=float("nan"))
    assert any("'k'" in m and "NaN" in m for m in osc.errors())
    osc.fmu.reset()  # fmi2Reset recovers an instance in the error state
    osc.initialize()
    osc.step(0.01)


@pytest.mark.parametrize("name, value, text", [("m", 0.0, "'m' (vr 1) = 0 must be > 0"),
                                               ("c", -1.0, "'c' (vr 3) = -1 must be >= 0"),
                                               ("F", math.inf, "'F' (vr 100) set to inf")])
def test_illegal_values_are_refused(make_instance, name, value, text):
    osc = make_instance()
    with pytest.raises(FMICallException):
        osc.set(**{name: value})
    assert any(text in m for m in osc.errors()), osc.messages


def test_illegal_calls_are_errors(make_instance, unzipped, model_description):
    osc = make_instance()
    with pytest.raises(FMICallException):
        osc.step(0.01)  # before initialization
    assert any("fmi2DoStep: not allowed in state 'instantiated'" in m for m in osc.errors())

    def fresh() -> Oscillator:
        return make_instance().initialize(stop_time=1.0)

    calls = {
        "fixed parameter after initialization": lambda o: o.set(m=20.0),
        "output": lambda o: o.set(x=1.0),
        "unknown value reference": lambda o: o.fmu.getReal([999]),
        "Integer variable": lambda o: o.fmu.getInteger([0]),
        "wrong communication point": lambda o: o.fmu.doStep(currentCommunicationPoint=0.5, communicationStepSize=0.01),
        "zero step": lambda o: o.fmu.doStep(currentCommunicationPoint=0.0, communicationStepSize=0.0),
        "past stop time": lambda o: o.fmu.doStep(currentCommunicationPoint=0.0, communicationStepSize=1.5),
        "input derivatives": lambda o: o.fmu.setRealInputDerivatives([VR["F"]], [1], [0.0]),
        "directional derivative": lambda o: o.fmu.getDirectionalDerivative([VR["a"]], [VR["F"]], [1.0]),
        "second initialization": lambda o: o.fmu.enterInitializationMode(),
    }
    for what, call in calls.items():
        o = fresh()
        with pytest.raises(FMICallException) as info:
            call(o)
        assert info.value.status == fmi2Error, what
        assert o.errors(), f"{what}: no log message"

    # model-exchange functions are exported but refuse (FMPy's FMU2Slave does not wrap them)
    o = fresh()
    assert o.fmu.dll.fmi2SetTime(ctypes.c_void_p(o.fmu.component), ctypes.c_double(0.0)) == fmi2Error
    assert any("fmi2SetTime: not supported" in m for m in o.errors())

    # empty requests are fine; the FMU has no Integer/Boolean/String variables
    o = fresh()
    assert o.fmu.getInteger([]) == [] and o.fmu.getBoolean([]) == []
    o.fmu.terminate()
    with pytest.raises(FMICallException):
        o.step(0.01)

    # fmi2Instantiate refuses a wrong GUID (FMPy raises when it returns NULL)
    with pytest.raises(Exception, match="Failed to instantiate"):
        Oscillator(unzipped, "{00000000-0000-0000-0000-000000000000}")


def test_call_logging_can_be_switched_on(make_instance):
    osc = make_instance(logging_on=True).initialize()
    osc.step(0.01)
    assert ("logCalls", "fmi2DoStep") in {(cat, msg) for _, cat, msg in osc.messages}
    osc.fmu.setDebugLogging(True, ["logStatusError"])  # calls no longer logged
    n = len(osc.messages)
    osc.step(0.01)
    assert len(osc.messages) == n
    with pytest.raises(FMICallException):
        osc.fmu.setDebugLogging(True, ["noSuchCategory"])


# ---------------------------------------------------------------------------------------------
# several instances in one process
# ---------------------------------------------------------------------------------------------

def test_two_instances_are_independent(make_instance):
    """Two instances of the same loaded library, different parameters and inputs, stepped in
    lock-step, give bit for bit what each gives when run alone."""
    setups = {"light": dict(m=10.0, x0=0.1), "heavy": dict(m=40.0, k=250.0, x0=-0.3, v0=1.0)}
    forces = {"light": lambda t: 10.0 * math.sin(3.0 * t), "heavy": lambda t: -20.0}

    def run(names: list[str]) -> dict[str, list[list[float]]]:
        instances = {n: make_instance(n).initialize(**setups[n]) for n in names}
        out: dict[str, list[list[float]]] = {n: [] for n in names}
        for _ in range(200):
            for n, inst in instances.items():
                inst.set(F=forces[n](inst.time))
                inst.step(0.01)
                out[n].append(inst.get("time", "x", "v", "a"))
        return out

    together = run(["light", "heavy"])
    for name in ("light", "heavy"):
        assert together[name] == run([name])[name]
    assert together["light"][-1][1:] != together["heavy"][-1][1:]
