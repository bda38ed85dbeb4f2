"""Error control tells a run that crawls what sets its steps (orchestration/master/algorithms/
step_control.py, ``watch_progress``): it never stalls, but a tolerance a stiff coupling cannot meet
at the file's step can make a run take hours without a word."""
from __future__ import annotations

import warnings

from orchestration import simulate
from orchestration.master.algorithms.error_control import ErrorControlAlgorithm
from orchestration.master.algorithms.step_control import SLOW_FRACTION, SlowProgressWarning
from tests.master.test_step_control import _pendulum

FILE_STEP = 0.01      # _pendulum's base step


def _slow_warnings(alg: ErrorControlAlgorithm, system) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        simulate(system, algorithm=alg)
    return [str(w.message) for w in caught if issubclass(w.category, SlowProgressWarning)]


def _mean_step(alg: ErrorControlAlgorithm, first: int) -> float:
    steps = [r["step"] for r in alg.log[:first]]
    assert len(steps) == first
    return sum(steps) / first


def test_a_crawling_run_is_told_once_what_sets_its_steps_and_the_order_that_does(fmu_dir):
    """The cable stepped after the payload it hangs from is handed the payload's end-of-step position
    and runs a step ahead (error_control.py, "Gauss-Seidel and an FMU that carries its inputs"):
    its first steps sit at the 1e-4 s minimum against the file's 0.01 s.  The warning names the
    cable's variable that set them and the order that hands the cable those inputs."""
    alg = ErrorControlAlgorithm(method="gauss-seidel", order=["payload", "cable"])
    alg.slow_window = 20
    told = _slow_warnings(alg, _pendulum(fmu_dir, stop=0.03))
    assert _mean_step(alg, 20) < SLOW_FRACTION * FILE_STEP
    assert len(told) == 1, told
    assert "x shorter than the run's step 0.01 s; cable." in told[0]
    assert "cable steps after payload (end_b.position, end_b.velocity)" in told[0]
    assert "--option rtol=..., now 0.001" in told[0]


def test_a_run_that_crawls_throughout_is_told_once(fmu_dir):
    """A tolerance far below what the coupling gives at the file's step (rtol 1e-5, Jacobi): steps
    of about 0.7 ms all along, seven windows of 20, one warning."""
    alg = ErrorControlAlgorithm(method="jacobi", rtol=1e-5)
    alg.slow_window = 20
    told = _slow_warnings(alg, _pendulum(fmu_dir, stop=0.1))
    assert len(alg.log) >= 100 and _mean_step(alg, len(alg.log)) < SLOW_FRACTION * FILE_STEP
    assert len(told) == 1, told
    assert "--option rtol=..., now 1e-05" in told[0] and "Gauss-Seidel" not in told[0]


def test_a_run_near_the_files_step_is_not_told(fmu_dir):
    """At rtol 3e-2 the pendulum's steps grow from 1 ms to the file's step over the first 0.1 s of
    its swing (about 36 steps) and stay there: no warning over windows of 70 steps."""
    alg = ErrorControlAlgorithm(method="jacobi", rtol=3e-2)
    alg.slow_window = 70
    assert _slow_warnings(alg, _pendulum(fmu_dir, stop=0.6)) == []
    assert _mean_step(alg, 70) >= SLOW_FRACTION * FILE_STEP


def test_ecco_tells_a_crawl_once_and_names_the_bond(fmu_dir):
    """ECCO (the same watch, step_control.py): a tolerance of 1e-9 J holds the pendulum's steps at
    about its 1e-4 s floor, a hundredth of the file's; told once, naming the power bond, not under
    libcosim's conventions (which keep libcosim's behaviour)."""
    from orchestration.master.algorithms.ecco import EccoAlgorithm

    def run(alg):
        alg.slow_window = 20
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            simulate(_pendulum(fmu_dir, bond=True, stop=0.05), algorithm=alg)
        return [str(w.message) for w in caught if issubclass(w.category, SlowProgressWarning)]

    alg = EccoAlgorithm(rtol=1e-9, atol=1e-9)
    told = run(alg)
    assert _mean_step(alg, 100) < SLOW_FRACTION * FILE_STEP
    assert len(told) == 1, told
    assert told[0].startswith("ecco: the 20 steps") and "power bond hook set" in told[0]
    assert "--option rtol=..., now 1e-09" in told[0]
    assert run(EccoAlgorithm(rtol=1e-9, atol=1e-9, conventions="libcosim")) == []
