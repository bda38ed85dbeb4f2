"""The NMPC's compiled prediction model (components/kernels/nmpc.c) against the numpy reference of
components/nmpc.py.

The kernel computes the reference's equations in the same order, each row on its own. Stated
tolerances, and what was measured (2026-11-29, x86-64 with FMA, numpy 2.4 on OpenBLAS):

* one derivative: relative 1e-12 of the row's largest magnitude (measured 6e-15 to 2.3e-14); the platform's
  inertial heave, roll and pitch: 1e-12 of the heave, 1e-13 rad (measured 3e-17 rad). For this the
  leg lengths behind the leg Jacobian are numpy's to the bit (nmpc.c's leg_lengths says why), which
  needs numpy's matmul to fuse its multiply-adds (OpenBLAS on a CPU with FMA); where it does not,
  the derivatives agree to 1e-7 (the reference's own jump for an ulp of the pose, 3e-8);
* one RK4 step: relative 1e-8 (measured 1e-10). Its later stages start from states that differ by
  rounding, and the reference's three-point leg Jacobian (h = 1e-6) jumps by 1e-9 when a pose moves
  by an ulp: the reference's own RK4 step moves by 5e-10 when its states move by one ulp;
* the rollouts of a Gauss-Newton cost batch (3N + 1 = 16 trajectories of 5 steps): heave 1e-7 m,
  roll and pitch 1e-10 rad (measured 4e-9 m and 3e-12 rad; the reference with its state one ulp
  off: 5e-9 m);
* a whole NMPC solve (damped Gauss-Newton, Armijo halving): the same iterations and trajectories,
  forces within 10 N of ~3.6 MN and the cost within 1e-5 relative (measured 0.12 N and 1.4e-7 here,
  0.27 N and 4e-7 in ten such solves; the reference itself with its state one ulp off: 0.84 N and
  5e-7). A Gauss-Newton or Armijo test that falls within rounding of its threshold could branch
  differently; it did not in these cases;
* a closed loop of 40 samples at 50 Hz (the numpy model as the plant, the ship given a roll rate):
  the same iterations, forces within 50 N of 12 MN, the plant's states within 1e-7 relative
  (measured 0.20 N and 1.1e-9; the reference with its start state one ulp off: 0.22 N and 1.9e-9).

And: the fallback to numpy when the kernels are disabled; the rollouts' row-skipping equals
simulating every row (the kernel's own numbers, to the bit).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from components import kernels
from components.box_barge import box_barge
from components.nmpc import NMPC, MPCSettings, ShipPlatformModel, platform_hrp
from components.platform import SarrusGeometry, platform_inertia

pytestmark = pytest.mark.gcc          # the kernels are compiled once per source hash (user cache)

DEG = math.pi / 180.0
REL = 1e-12


@pytest.fixture(scope="module")
def models():
    """The barge and 1000 t platform of tests/components/test_platform.py, as numpy reference and kernel."""
    assert kernels.library() is not None, kernels.status()
    v = box_barge(100, 30, 4, 5.95, omega=np.linspace(0.05, 4.0, 40), headings=np.radians(np.arange(0, 360, 30)))
    A_inf = np.diag([v.added_mass[j, j, -1] for j in range(6)])
    args = (v.MRB + A_inf, v.MRB, v.restoring, np.array([0.0, 0.0, -4.0]), platform_inertia(1e6), SarrusGeometry())
    ref, ker = ShipPlatformModel(*args, compiled=False), ShipPlatformModel(*args, compiled=True)
    assert ref._kernel is None and ker._kernel is not None
    return ref, ker


def _states(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Random states about the platform's working pose (heave 8 m above the deck +- 0.3 m, +-1.7 deg)
    and leg forces about the static ones."""
    s = np.zeros((n, 18))
    s[:, :3] = rng.standard_normal((n, 3))
    s[:, 3:6] = 0.05 * rng.standard_normal((n, 3))
    s[:, 6:12] = 0.2 * rng.standard_normal((n, 6))
    s[:, 12:15] = [-8.0, 0.0, 0.0] + np.array([0.3, 0.03, 0.03]) * rng.uniform(-1, 1, (n, 3))
    s[:, 15:18] = 0.2 * rng.standard_normal((n, 3))
    return s, 3.6e6 + 1e6 * rng.standard_normal((n, 3))


def _numpy_matmul_fuses() -> bool:
    """Whether numpy's matmul of _linkage's shape rounds a . b once (fused multiply-adds): the second
    product x * x = 1 + 2^-29 + 2^-60 keeps its 2^-60 only when fused."""
    x = 1.0 + 2.0 ** -30
    R = np.zeros((1, 3, 3))
    R[0, 0, :2] = -(1.0 + 2.0 ** -29), x
    a = np.zeros((3, 3))                        # the legs' points a, used as _linkage does: R a^T
    a[0, :2] = 1.0, x
    return float(np.matmul(R, a.T)[0, 0, 0]) == 2.0 ** -60


def _row_rel(x: np.ndarray, ref: np.ndarray) -> np.ndarray:
    return np.abs(x - ref).max(axis=1) / np.abs(ref).max(axis=1)


def _equilibrium() -> tuple[np.ndarray, np.ndarray]:
    s0 = np.zeros(18)
    s0[12] = -8.0
    s0[2] = 1e6 / (1025.0 * 3000.0)                       # sinkage under the platform
    return s0, np.full(3, 9.81e6 / 3 / 0.9)


def _pushed(rng: np.random.Generator) -> np.ndarray:
    s, _ = _equilibrium()
    s[9] = rng.normal() * DEG
    s[3:6] += 0.01 * rng.normal(size=3)
    s[15:18] = 0.05 * rng.normal(size=3)
    return s


def test_derivative_and_hrp_equal_the_numpy_reference(models):
    ref, ker = models
    s, f = _states(np.random.default_rng(0), 300)
    a, b = ref.derivative(s, f), ker.derivative(s, f)
    worst = _row_rel(b, a).max()
    fused = _numpy_matmul_fuses()
    print(f"derivative: worst relative difference {worst:.2e} (numpy's matmul fuses: {fused})")
    rel = REL if fused else 1e-7
    assert worst < rel, worst
    for row in (0, 17, 299):                                     # one row alone gives that row's numbers
        np.testing.assert_array_equal(ker.derivative(s[row:row + 1], f[row:row + 1])[0], b[row])
    h0, h1 = ref.hrp(s), ker.hrp(s)
    assert np.abs(h1[:, 0] - h0[:, 0]).max() <= REL * np.abs(h0[:, 0]).max()
    assert np.abs(h1[:, 1:] - h0[:, 1:]).max() <= 1e-13
    # a wilder ship: 0.5 rad of roll, pitch and yaw, fast
    s[:, 3:6] *= 10.0
    s[:, 6:12] *= 5.0
    assert _row_rel(ker.derivative(s, f), ref.derivative(s, f)).max() < rel


def test_rk4_step_equals_the_numpy_reference_to_its_rounding(models):
    ref, ker = models
    s, f = _states(np.random.default_rng(1), 200)
    a, b = ref.rk4(s, f, 0.5), ker.rk4(s, f, 0.5)
    worst = _row_rel(b, a).max()
    own = _row_rel(ref.rk4(np.nextafter(s, np.inf), f, 0.5), a).max()
    print(f"RK4 step: worst relative difference {worst:.2e}; the reference with its states one ulp up {own:.2e}")
    assert worst < 1e-8, worst


def test_cost_batch_rollouts_equal_the_numpy_reference(models):
    ref, ker = models
    rng = np.random.default_rng(1)
    N = MPCSettings().horizon
    _, u0 = _equilibrium()
    heave = angles = 0.0
    for _ in range(6):
        s = _pushed(rng)
        z = rng.normal(size=(N, 3)) * 0.3
        batch = np.concatenate([z.reshape(1, -1), z.reshape(1, -1) + np.eye(3 * N) * 1e-2]).reshape(-1, N, 3)
        a, ua = NMPC(ref)._simulate(s, u0, batch)
        b, ub = NMPC(ker)._simulate(s, u0, batch)
        np.testing.assert_array_equal(ua, ub)
        heave = max(heave, float(np.abs(b[..., 0] - a[..., 0]).max()))
        angles = max(angles, float(np.abs(b[..., 1:] - a[..., 1:]).max()))
        # the kernel's row-skipping gives its own every-row simulation, to the bit
        every = np.repeat(s[None], len(batch), axis=0)
        for i in range(N):
            every = ker.rk4(every, ub[:, i], 0.5)
            np.testing.assert_array_equal(b[:, i], ker.hrp(every))
    print(f"rollouts: heave {heave:.2e} m, roll and pitch {angles:.2e} rad")
    assert heave < 1e-7 and angles < 1e-10


def test_nmpc_solves_equal_the_numpy_reference(models):
    ref, ker = models
    rng = np.random.default_rng(1)
    s0, u0 = _equilibrium()
    setpoint = platform_hrp(s0[None], ref.hardpoint)[0]
    forces = cost = 0.0
    for _ in range(6):
        s = _pushed(rng)
        a, b = NMPC(ref).solve(s, u0, setpoint), NMPC(ker).solve(s, u0, setpoint)
        assert (a.iterations, a.evaluations) == (b.iterations, b.evaluations)
        forces = max(forces, float(np.abs(b.forces - a.forces).max()))
        cost = max(cost, abs(b.cost - a.cost) / a.cost)
        np.testing.assert_allclose(b.delta, a.delta, rtol=0, atol=1e-5)     # MN
        assert abs(b.alpha - a.alpha) < 1e-5
    print(f"solves: forces {forces:.3g} N, cost {cost:.2e} relative")
    assert forces < 10.0 and cost < 1e-5


def test_closed_loop_equals_the_numpy_reference(models):
    """40 samples at 50 Hz, hot-started, the numpy model as the plant (RK4 at the sample period) with
    the ship rolling at 1 deg/s at the start: the two controllers' commands and plants stay together."""
    ref, ker = models
    s0, u0 = _equilibrium()
    setpoint = platform_hrp(s0[None], ref.hardpoint)[0]
    s0[9] = 1.0 * DEG
    runs = []
    for model in (ref, ker):
        mpc, s, u = NMPC(model), s0.copy(), u0.copy()
        forces, states, iterations = [], [], []
        for _ in range(40):
            sol = mpc.solve(s, u, setpoint)
            u = sol.forces
            s = ref.rk4(s[None], u[None], 0.02)[0]
            forces.append(u)
            states.append(s)
            iterations.append(sol.iterations)
        runs.append((np.array(forces), np.array(states), iterations))
    (fa, sa, ia), (fb, sb, ib) = runs
    df = float(np.abs(fb - fa).max())
    ds = float(_row_rel(sb, sa).max())
    print(f"closed loop: forces {df:.3g} N (of {np.abs(fa).max():.3g}), states {ds:.2e} relative; "
          f"iterations {sum(ia)} and {sum(ib)}")
    assert ia == ib
    assert df < 50.0 and ds < 1e-7
    assert np.abs(fa - u0).max() > 1e4, "the controller did not answer the push"


def test_the_numpy_reference_runs_without_the_kernels(models, monkeypatch):
    ref, _ = models
    monkeypatch.setenv("MARINE_COSIM_KERNELS", "0")
    args = (ref.M_ship, ref.MRB, ref.G, ref.hardpoint, ref.platform, ref.geometry)
    assert ShipPlatformModel(*args)._kernel is None
    with pytest.raises(RuntimeError, match="no compiled NMPC kernel"):
        ShipPlatformModel(*args, compiled=True)
