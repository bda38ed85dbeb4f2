"""Model-exchange FMUs as components (orchestration/master/model_exchange.py): the master integrates
their states with events, as a third-party hull exported for model exchange only would need.

The FMUs are the Modelica Reference FMUs (vendored sources, compiled with gcc) with their
CoSimulation interface removed from the modelDescription. References: Dahlquist's x' = -k x is
exp(-k t); BouncingBall's flight and bounces are parabolas joined at h = 0 with v -> -e v (at rest
below v_min = 0.1 m/s), solved here in closed form; Stair's counter steps at each whole second (time
events). Before: every such FMU was refused ("has no CoSimulation interface").
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import orchestration.master.model_exchange as mx
from orchestration import simulate
from orchestration.cli.main import main
from orchestration.errors import ExecutionError, SlaveError
from orchestration.master.slaves import InProcessSlave
from orchestration.system.model import Component, Connection, System
from orchestration.system.ssp import read_ssp
from tests.models.reference_fmus.build import FmuBuildError, build_reference_fmu

pytestmark = pytest.mark.gcc


@pytest.fixture(scope="module")
def me(tmp_path_factory):
    out = tmp_path_factory.mktemp("me_fmus")
    try:
        return {(model, v): build_reference_fmu(model, v, out / f"fmi{v}", suffix="ME", model_exchange_only=True)
                for v in (2, 3) for model in ("Dahlquist", "BouncingBall", "Stair", "Feedthrough")}
    except FmuBuildError as exc:
        pytest.skip(str(exc))


def bouncing_ball(t: np.ndarray, h0: float = 1.0, g: float = 9.81, e: float = 0.7, v_min: float = 0.1) -> np.ndarray:
    """Height of the Reference FMU BouncingBall in closed form: free fall, bounces v -> -e v, at rest
    once the rebound speed is below v_min."""
    out = []
    for tt in t:
        h, v, t0 = h0, 0.0, 0.0
        while True:
            s = (v + math.sqrt(v * v + 2.0 * g * h)) / g          # time to the ground
            if t0 + s > tt:
                dt = tt - t0
                out.append(h + v * dt - 0.5 * g * dt * dt)
                break
            t0, h, v = t0 + s, 0.0, e * (g * s - v)
            if v < v_min:
                out.append(0.0)
                break
    return np.array(out)


def one(fmu, stop: float, step: float, name: str = "m") -> System:
    s = System("me", stop_time=stop, base_step=step)
    s.add_component(Component(name, fmu))
    return s


@pytest.mark.parametrize("v", [2, 3])
def test_dahlquist_follows_the_exponential_to_the_integrators_tolerance(me, v):
    """Default relative tolerance 1e-6 (no DefaultExperiment tolerance), Dormand-Prince restarted at
    every communication step: the largest error over 10 s of 0.1 s steps 1.3e-10 (LSODA's low-order
    restarts gave 1.6e-5); tolerance 1e-8."""
    r = simulate(one(me["Dahlquist", v], 10.0, 0.1), variables=["m.x"])
    assert r.time[-1] == pytest.approx(10.0)
    assert np.max(np.abs(r["m.x"] - np.exp(-r.time))) < 1e-8


@pytest.mark.parametrize("v", [2, 3])
def test_bouncing_ball_events_are_located(me, v):
    """State events (h crosses 0) located by regula falsi: the height within 1e-8 m of the closed form
    over 3 s with its bounces and the rest (measured 7e-12 m; 5e-4 m when LSODA's dense output located
    them); the first impact at sqrt(2 h0 / g) = 0.4515 s shows in the sign of v between 0.45 and 0.46 s,
    and the rebound speed e g t1 less the deceleration since to 1e-8 m/s."""
    r = simulate(one(me["BouncingBall", v], 3.0, 0.01), variables=["m.h", "m.v"])
    assert np.max(np.abs(r["m.h"] - bouncing_ball(r.time))) < 1e-8
    assert np.all(r["m.h"] > -1e-6)
    i = int(np.searchsorted(r.time, 0.45))
    assert r["m.v"][i] < 0 < r["m.v"][i + 1]
    t1 = math.sqrt(2.0 / 9.81)
    assert r["m.v"][i + 1] == pytest.approx(0.7 * 9.81 * t1 - 9.81 * (r.time[i + 1] - t1), abs=1e-8)


def test_a_stiff_model_goes_on_with_lsoda(me, monkeypatch):
    """Where the explicit method needs more than STIFF_STEPS steps in a communication step the stepper
    goes on with LSODA (here the threshold is lowered to 3 steps so that Dahlquist stands for a stiff
    hull): the run completes within LSODA's accuracy (1e-4 at this tolerance)."""
    monkeypatch.setattr(mx, "STIFF_STEPS", 3)
    r = simulate(one(me["Dahlquist", 2], 10.0, 1.0), variables=["m.x"])
    assert np.max(np.abs(r["m.x"] - np.exp(-r.time))) < 1e-4


@pytest.mark.parametrize("v", [2, 3])
def test_time_events_step_the_stair_on_each_second(me, v):
    """Stair has no continuous state: its counter steps at the time events the FMU announces (1, 2, ...
    s), also inside a communication step of 0.3 s."""
    r = simulate(one(me["Stair", v], 5.0, 0.3), variables=["m.counter"])
    expected = np.floor(r.time + 1e-9) + 1.0
    np.testing.assert_array_equal(r["m.counter"], expected)


@pytest.mark.parametrize("v", [2, 3])
def test_continuous_and_discrete_inputs_pass_through(me, v, tmp_path):
    """A model-exchange Feedthrough between co-simulation FMUs: a Stair's counter into its Int32 input and
    a Dahlquist's x into its continuous and its discrete Float64 inputs (the discrete ones set in event
    mode, as FMI allows them only there). Its outputs are the co-simulation Feedthrough's, bit for bit."""
    got = []
    for feedthrough in (build_reference_fmu("Feedthrough", v, tmp_path / "cs"), me["Feedthrough", v]):
        s = System("mix", stop_time=3.0, base_step=0.5)
        s.add_component(Component("st", build_reference_fmu("Stair", v, tmp_path / "cs")))
        s.add_component(Component("dq", build_reference_fmu("Dahlquist", v, tmp_path / "cs")))
        s.add_component(Component("ft", feedthrough))
        s.connections.append(Connection(("st", "counter"), ("ft", "Int32_input")))
        s.connections.append(Connection(("dq", "x"), ("ft", "Float64_continuous_input")))
        s.connections.append(Connection(("dq", "x"), ("ft", "Float64_discrete_input")))
        names = ["ft.Int32_output", "ft.Float64_continuous_output", "ft.Float64_discrete_output"]
        r = simulate(s, variables=names)
        got.append([r[n] for n in names])
    for cs, model_exchange in zip(*got):
        np.testing.assert_array_equal(model_exchange, cs)
    assert list(got[1][0]) == [1, 1, 2, 2, 3, 3, 4]
    assert got[1][1][1] == pytest.approx(0.9 ** 5)        # Dahlquist's own explicit Euler, 0.1 s steps


def test_states_restore_the_integration_exactly(me):
    """getFMUstate/setFMUstate with the integrator's own time, states and next event: a step repeated
    after a restore gives the same bits, over a bounce (serialised too, as a checkpoint keeps it)."""
    slave = InProcessSlave("m", me["BouncingBall", 2])
    slave.instantiate()
    slave.setup(0.0, 3.0)
    slave.enter_initialization()
    slave.exit_initialization()
    vrs = np.array([slave.variables[n].reference for n in ("h", "v")])
    for k in range(40):
        slave.do_step(0.01 * k, 0.01)
    state = slave.get_state()
    blob = slave.serialize_state(state)

    def steps_from_0_4_s() -> np.ndarray:
        return np.array([(slave.do_step(0.01 * k, 0.01), slave.get_reals(vrs))[1] for k in range(40, 60)])

    path = steps_from_0_4_s()
    slave.set_state(state)
    np.testing.assert_array_equal(steps_from_0_4_s(), path)
    restored = slave.deserialize_state(blob)
    slave.set_state(restored)
    np.testing.assert_array_equal(steps_from_0_4_s(), path)
    assert np.any(path[:, 1] > 0) and np.any(path[:, 1] < 0)      # a bounce lies in between
    for st in (state, restored):
        slave.free_state(st)
    slave.terminate()
    slave.free()


def test_error_control_and_worker_processes_run_it(me):
    """The error-control master (which rolls back with states) and the process backend (the slave in a
    worker) run a model-exchange FMU; the process backend gives the in-process bits."""
    s = one(me["BouncingBall", 2], 2.0, 0.01)
    ref = simulate(s, variables=["m.h"])
    workers = simulate(s, backend="process", variables=["m.h"])
    np.testing.assert_array_equal(ref["m.h"], workers["m.h"])
    coupled = one(me["BouncingBall", 2], 2.0, 0.01)
    coupled.add_component(Component("ft", me["Feedthrough", 2]))
    coupled.connections.append(Connection(("m", "h"), ("ft", "Float64_continuous_input")))
    adaptive = simulate(coupled, algorithm="error-control", variables=["m.h", "ft.Float64_continuous_output"])
    assert np.max(np.abs(adaptive["m.h"] - bouncing_ball(adaptive.time))) < 1e-8
    np.testing.assert_array_equal(adaptive["ft.Float64_continuous_output"], adaptive["m.h"])


def test_chattering_is_stopped_with_a_message_not_a_hang(me, monkeypatch):
    """More events in one communication step than MAX_EVENTS_PER_STEP: a SlaveError naming the
    component and the time (here the limit is lowered to 2 so that the ball's bounces stand for it)."""
    monkeypatch.setattr(mx, "MAX_EVENTS_PER_STEP", 2)
    with pytest.raises((SlaveError, ExecutionError), match=r"more than 2 events in the step.*chatters"):
        simulate(one(me["BouncingBall", 2], 3.0, 3.0), variables=["m.h"])


def test_system_files_take_a_model_exchange_fmu(me, tmp_path, capsys):
    """`marine-cosim validate` and SSP's implementation attribute: implementation="ModelExchange" is
    taken for a model-exchange-only FMU, and refused (saying why) for one that has CoSimulation too;
    an FMU with neither interface is refused naming what it has."""
    import re
    import zipfile

    def ssd(source: str, implementation: str = "") -> str:
        attr = f' implementation="{implementation}"' if implementation else ""
        path = tmp_path / f"s{len(list(tmp_path.iterdir()))}.ssd"
        path.write_text('<ssd:SystemStructureDescription '
                        'xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription" '
                        'version="1.0" name="me"><ssd:System name="me"><ssd:Elements>'
                        f'<ssd:Component name="ball" source="{source}"{attr}/></ssd:Elements></ssd:System>'
                        '</ssd:SystemStructureDescription>')
        return str(path)

    ball = me["BouncingBall", 2]
    assert main(["validate", ssd(str(ball), "ModelExchange")]) == 0
    assert read_ssp(ssd(str(ball))).components["ball"].source == ball
    cs = build_reference_fmu("BouncingBall", 2, tmp_path / "cs")
    capsys.readouterr()
    assert main(["validate", ssd(str(cs), "ModelExchange")]) != 0
    said = capsys.readouterr()
    assert "has a CoSimulation interface too" in said.out + said.err
    neither = tmp_path / "Neither.fmu"
    with zipfile.ZipFile(ball) as src, zipfile.ZipFile(neither, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "modelDescription.xml":
                data = re.sub(rb"<ModelExchange\b.*?</ModelExchange>", b"", data, flags=re.S)
            dst.writestr(item, data)
    capsys.readouterr()
    assert main(["validate", ssd(str(neither))]) != 0
    said = capsys.readouterr()
    assert "Neither.fmu has no CoSimulation interface" in said.out + said.err


def test_a_diverging_model_stops_with_its_name_and_no_warnings(me):
    """Dahlquist with k = -1e308 (the derivative overflows at once): the run stops with an error naming
    the component and the solver's failure, in well under a second and without numpy's overflow
    warnings on the way; k = 1e6 (stiff for 0.1 s steps) goes on with LSODA and decays to ~0."""
    import warnings

    s = System("me", stop_time=2.0, base_step=0.1)
    s.add_component(Component("m", me["Dahlquist", 2], {"k": -1e308}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ExecutionError, match=r"m: the ODE solver failed at t = 0.0 s"):
            simulate(s, variables=["m.x"])
    stiff = System("me", stop_time=2.0, base_step=0.1)
    stiff.add_component(Component("m", me["Dahlquist", 2], {"k": 1e6}))
    r = simulate(stiff, variables=["m.x"])
    assert np.all(np.abs(r["m.x"][1:]) < 1e-6)
