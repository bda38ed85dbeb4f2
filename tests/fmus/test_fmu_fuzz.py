"""Randomised bad input against every built FMU through its FMI binary (tests/fmus/fuzz_fmus.py):
no crash, no hang, and never a NaN or an infinity returned at fmi2OK.  A clean fmi2Error with a
message is the expected answer to bad input; docs/bad_input.md has the counts."""
from __future__ import annotations

import pytest

import build_fmus
from tests.fmus.fuzz_fmus import format_counts, run_trials


# FMUs still being built whose known defect the fuzzer finds; left out so that the rest is checked
# (the adapter list below still names them, so none is forgotten)
UNFINISHED: dict[str, str] = {}


@pytest.fixture(scope="module")
def extracted(tmp_path_factory):
    """Where the FMUs are extracted, once for both tests (with their Python sources' bytecode, which
    the first test's child writes and the second's reads)."""
    return tmp_path_factory.mktemp("fuzz_fmus")


def fuzz(fmu_dir, workdir, trials: int, seed: int) -> None:
    fmus = sorted(f for f in fmu_dir.glob("*.fmu") if f.stem not in UNFINISHED)
    assert {f.stem for f in fmus} | set(UNFINISHED) == set(build_fmus.find_adapters())   # none forgotten
    # a hang: no answer in 120 s of wall time (the slowest valid trials take ~30 s of CPU: a shared machine)
    counts, problems = run_trials(fmus, trials, seed=seed, timeout=120.0, workdir=workdir)
    table = format_counts(counts)
    print(f"\n{trials} trials per FMU, seed {seed}:\n{table}")
    assert all(sum(c.values()) == trials for c in counts.values()), table
    assert not problems, table + "\n" + "\n".join(problems)
    assert all(c["crash"] == c["hang"] == c["nan"] == 0 for c in counts.values()), table


def test_a_few_random_trials_per_fmu_end_cleanly(fmu_dir, extracted):
    fuzz(fmu_dir, extracted, trials=20, seed=1)


@pytest.mark.slow
def test_more_random_trials_per_fmu_end_cleanly(fmu_dir, extracted):
    """60 more per FMU in the suite (about 3 min of CPU); the 300-per-FMU campaign of
    docs/bad_input.md runs by ``python tests/fmus/fuzz_fmus.py --trials 300``."""
    fuzz(fmu_dir, extracted, trials=60, seed=2)
