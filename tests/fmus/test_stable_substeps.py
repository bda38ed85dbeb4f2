"""FMUs with an internal integrator check its stability limit at initialisation and keep their
sub-steps within it, or refuse by naming the parameter (issue 22). The crane's joint gains are in
test_crane.py; here the payload's linear drag, the winch's drum friction and the cable's explicit
schemes, each with a max_substep that would have diverged."""
from __future__ import annotations

import numpy as np
import pytest

from components.stability import step_limit
from tests.support.fmu_runner import FmuUnderTest


def test_rk4_and_euler_limits_are_the_textbook_ones():
    assert step_limit([-1.0], "rk4") == pytest.approx(2.7853, rel=1e-4)
    assert step_limit([1j], "rk4") == pytest.approx(2.0 * np.sqrt(2.0), rel=1e-5)
    assert step_limit([-1.0], "euler") == pytest.approx(2.0, rel=1e-5)
    assert step_limit([0.0, 0.5], "rk4") == np.inf             # modes at rest or growing set no limit


def test_payload_with_stiff_drag_reaches_its_terminal_speed(fmu_dir):
    """1 t with 1e6 N s/m of heave drag: the drag mode -1000 /s allows RK4 sub-steps of 2.8 ms; at
    the default 10 ms the body would blow up. It sinks at (m g - rho g V) / c."""
    fmu = FmuUnderTest(fmu_dir / "Payload.fmu")
    try:
        fmu.initialize({"mass": 1000.0, "hydro.volume": 0.5, "hydro.drag_linear[2]": 1e6,
                        "initial.position[2]": 20.0})
        assert any("max_substep" in m and "hydro.drag_linear[2]" in m for s, m in fmu.messages if s == 1)
        _, rows = fmu.run(0.0, 1.0, 0.05, ["cg.velocity[2]"])
        assert not fmu.errors()
    finally:
        fmu.close()
    assert rows[-1, 0] == pytest.approx((1000.0 - 1025.0 * 0.5) * 9.81 / 1e6, rel=1e-6)


def test_payload_drag_beyond_any_sub_step_is_refused_by_name(fmu_dir):
    fmu = FmuUnderTest(fmu_dir / "Payload.fmu")
    try:
        with pytest.raises(Exception):
            fmu.initialize({"mass": 1.0, "hydro.volume": 0.0005, "hydro.drag_linear[0]": 1e7})
        assert any("hydro.drag_linear[0]" in m for m in fmu.errors()), fmu.errors()
    finally:
        fmu.close()


def test_winch_drum_friction_sets_the_sub_step(fmu_dir):
    """Viscous friction 2e7 N m s on the drum's 1.6e5 + 173^2 x 2 kg m2: explicit Euler is stable
    below 2 J / c = 22 ms; with max_substep 50 ms the drum speed would flip sign and grow."""
    fmu = FmuUnderTest(fmu_dir / "Winch.fmu")
    try:
        fmu.initialize({"drum.viscous_friction": 2e7, "max_substep": 0.05, "line.tension": 1e5,
                        "brake.max_torque": 0.0, "mode": 3})
        assert any("drum.viscous_friction" in m for s, m in fmu.messages if s == 1)
        _, rows = fmu.run(0.0, 5.0, 0.05, ["drum.speed"])
        assert not fmu.errors()
    finally:
        fmu.close()
    # no motor torque (mode 3, brake released): the tension drives the drum against its friction
    assert rows[-1, 0] == pytest.approx(1e5 * 2.18 / 2e7, rel=1e-6)
    assert np.all(np.diff(np.abs(rows[:, 0] - rows[-1, 0])) <= 1e-12)      # it settles, never grows


def test_cable_explicit_scheme_keeps_within_its_limit(fmu_dir):
    """RK2 on MoorDyn's chain (3.4 ms limit at 0.7) asked for 20 ms sub-steps: the FMU takes its
    stable sub-step and says so; the line stays at rest on its catenary."""
    fmu = FmuUnderTest(fmu_dir / "Cable.fmu")
    try:
        fmu.initialize({"solver.scheme": 1, "max_substep": 0.02})
        assert any("max_substep" in m and "explicit" in m for s, m in fmu.messages if s == 1)
        _, rows = fmu.run(0.0, 2.0, 0.1, ["end_b.tension"])
        assert not fmu.errors()
    finally:
        fmu.close()
    assert np.ptp(rows[:, 0]) < 1e-3 * rows[0, 0]
