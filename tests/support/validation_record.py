"""Validation records: what a validation test compares, in a form the validation report can tabulate.

A test that checks the suite against a published or independent reference number takes the
``validation`` fixture (tests/conftest.py) and records each comparison next to its own assertion::

    def test_sms_4_1_1_beam_static_deflection(validation):
        delta = ...
        validation.record(case="SMS 4.1.1 beam tip deflection, 24 elements", reference=0.440014,
                          ours=delta, tolerance=1e-4, tol_kind="rel", unit="m",
                          source="sms_api_digest.md 4.1.1 (elastica)")
        assert delta == pytest.approx(0.440014, rel=1e-4)      # the test keeps its own assertion

Record before asserting, so that a failing comparison is still in the report. Recording never
fails a test and never replaces its assertions; the report marks a record FAIL when its error
exceeds its tolerance, and separately lists tests that failed.

* ``tol_kind="rel"``: error = |ours - reference| / |reference|; for arrays the largest difference
  over the largest reference component (max|ours - ref| / max|ref|).
* ``tol_kind="abs"``: error = |ours - reference| (arrays: the largest difference), in ``unit``.
* ``error=``: when the comparison is not a plain difference of two numbers (an RMS over a curve,
  a worst case over 1000 random states, a wrapped phase), pass the error the test computed; then
  ``reference`` and ``ours`` may be short descriptions ("pin.aba", "100 random states").
* ``component`` defaults from the test module (see COMPONENTS; a module may set
  ``VALIDATION_COMPONENT = "..."``); pass it to file a record elsewhere.

Any test using the fixture carries the ``validation`` marker (added at collection), so
``pytest -m validation`` runs exactly the validation cases. With the environment variable
``MARINE_COSIM_VALIDATION_OUT`` set to a file path, every record is appended to that file as one
JSON line (python docs/tools/validation_report.py sets it); otherwise records only stay on the
fixture (``validation.records``) and are printed with ``pytest -s``.
"""
from __future__ import annotations

import functools
import json
import math
import os
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest


ENV_OUT = "MARINE_COSIM_VALIDATION_OUT"
ROOT = Path(__file__).resolve().parents[2]
TOL_KINDS = ("rel", "abs")
# the report's order of the component tables; others follow alphabetically
ORDER = ("payload", "ship", "crane", "cable", "winch", "contact", "co-simulation", "reference scenarios",
         "B4 ship + heavy crane")
ENV_QUICK = "MARINE_COSIM_VALIDATION_QUICK"      # --quick: tests/support/validation_record.py leaves out FMU runs


# ---------------------------------------------------------------------------------- records

def as_numeric(x: Any) -> np.ndarray | None:
    """x as a float array, or None if it is not numbers (a description)."""
    if isinstance(x, (str, bytes)) or x is None:
        return None
    try:
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        return None


def compute_error(reference: Any, ours: Any, tol_kind: str) -> float:
    """The error of ``ours`` against ``reference`` (module docstring). Raises ValueError when they are
    not numbers of the same shape or a relative error has a zero reference."""
    if tol_kind not in TOL_KINDS:
        raise ValueError(f"tol_kind must be one of {TOL_KINDS}, not {tol_kind!r}")
    ref, our = as_numeric(reference), as_numeric(ours)
    if ref is None or our is None:
        raise ValueError("reference and ours must be numbers (or pass error=...)")
    if ref.shape != our.shape and ref.size != 1:
        raise ValueError(f"reference shape {ref.shape} and ours {our.shape} differ")
    diff = float(np.max(np.abs(our - ref))) if our.size else 0.0
    if tol_kind == "abs":
        return diff
    scale = float(np.max(np.abs(ref)))
    if scale == 0.0:
        raise ValueError("a relative error needs a non-zero reference (use tol_kind='abs')")
    return diff / scale


def _jsonable(x: Any) -> Any:
    if isinstance(x, (str, bool)) or x is None:
        return x
    a = as_numeric(x)
    if a is None:
        return str(x)
    if a.ndim == 0:
        v = float(a)
        return v if math.isfinite(v) else str(v)
    return [_jsonable(v) for v in a.tolist()]


@dataclass
class ValidationRecord:
    """One comparison with a reference number; ``passed`` is error <= tolerance."""
    case: str
    reference: Any
    ours: Any
    error: float
    tolerance: float
    tol_kind: str
    unit: str = ""
    source: str = ""
    component: str = "other"
    test: str = ""
    note: str = ""
    #: the checkout the record was made in (``git describe``-like short sha; '' unknown), so that a
    #: report rendered later from the records names the code that produced them, not its own checkout
    commit: str = ""
    passed: bool = field(init=False)

    def __post_init__(self):
        self.error = float(self.error)
        self.tolerance = float(self.tolerance)
        self.passed = bool(math.isfinite(self.error) and self.error <= self.tolerance)

    @property
    def ratio(self) -> float:
        """error / tolerance (0 for an exact match against a zero tolerance)."""
        if self.tolerance > 0.0:
            return self.error / self.tolerance
        return 0.0 if self.error == 0.0 else math.inf

    def to_json(self) -> dict:
        d = asdict(self)
        d["reference"], d["ours"] = _jsonable(self.reference), _jsonable(self.ours)
        d["error"] = self.error if math.isfinite(self.error) else str(self.error)
        return d

    @classmethod
    def from_json(cls, d: dict) -> "ValidationRecord":
        keys = ("case", "reference", "ours", "error", "tolerance", "tol_kind", "unit", "source", "component",
                "test", "note", "commit")
        return cls(**{k: d[k] for k in keys if k in d})


def make_record(case: str, reference: Any, ours: Any, tolerance: float, tol_kind: str = "rel", unit: str = "",
                source: str = "", error: float | None = None, component: str = "other", test: str = "",
                note: str = "", commit: str = "") -> ValidationRecord:
    """A record with its error computed from reference and ours (or the given ``error``)."""
    if tol_kind not in TOL_KINDS:
        raise ValueError(f"tol_kind must be one of {TOL_KINDS}, not {tol_kind!r}")
    if not tolerance >= 0.0:
        raise ValueError(f"tolerance must be >= 0, not {tolerance!r}")
    err = compute_error(reference, ours, tol_kind) if error is None else float(error)
    return ValidationRecord(case=case, reference=reference, ours=ours, error=err, tolerance=tolerance,
                            tol_kind=tol_kind, unit=unit, source=source, component=component, test=test,
                            note=note, commit=commit)


def append_record(path: str | os.PathLike, record: ValidationRecord) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record.to_json()) + "\n")


def read_records(path: str | os.PathLike) -> list[ValidationRecord]:
    """The records of a JSON-lines file (a missing file: none)."""
    path = Path(path)
    if not path.exists():
        return []
    return [ValidationRecord.from_json(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


MARKER = "validation"
# fixtures (in a test's closure) that build or run FMUs: the tests --quick leaves out
FMU_FIXTURES = {"fmu_dir", "payload_fmu", "b3_fmus", "fmus"}

# component of each validation test module (the report groups its tables by these names)
COMPONENTS = {
    "test_rigid_body": "payload",
    "test_payload_fmu_validation": "payload",
    "test_ship": "ship",
    "test_ship_fmu": "ship",
    "test_waves": "ship",
    "test_radiation": "ship",
    "test_vessel_data": "ship",
    "test_crane_sms": "crane",
    "test_crane": "crane",
    "test_articulated_body": "crane",
    "test_crane_cable_sms": "crane",
    "test_cable_payload_sms": "cable",
    "test_catenary": "cable",
    "test_line": "cable",
    "test_line_features": "cable",
    "test_cable_fmu": "cable",
    "test_winch": "winch",
    "test_contact": "contact",
    "test_convex": "contact",
    "test_b3_roll": "co-simulation",
    "test_mass_aware": "co-simulation",
    "test_deck_landing_benchmark": "co-simulation",
    "test_libcosim_agreement": "co-simulation",
    "test_algorithms_benchmark": "co-simulation",
    "test_adaptive_algorithms": "co-simulation",
    "test_reference_scenarios": "reference scenarios",
    "test_b4_ship_heavy_crane": "B4 ship + heavy crane",
}


@functools.lru_cache(maxsize=1)
def checkout_commit(root: Path = ROOT) -> str:
    """The commit of the checkout the tests run in (12 hex digits, "+" when tracked files differ
    from it), '' when git cannot tell (an exported tree)."""
    try:
        sha = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True, text=True,
                             check=True, timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, check=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return sha + ("+" if dirty else "")


class Recorder:
    """What the ``validation`` fixture gives a test: ``record(...)`` appends one record."""

    def __init__(self, test: str = "", component: str = "other", out: str | os.PathLike | None = None):
        self.test = test
        self.component = component
        self.out = Path(out) if out else (Path(os.environ[ENV_OUT]) if os.environ.get(ENV_OUT) else None)
        self.records: list[ValidationRecord] = []

    def record(self, case: str, reference: Any, ours: Any, tolerance: float, tol_kind: str = "rel", unit: str = "",
               source: str = "", error: float | None = None, component: str | None = None,
               note: str = "") -> ValidationRecord:
        rec = make_record(case, reference, ours, tolerance, tol_kind, unit, source, error,
                          component or self.component, self.test, note,
                          checkout_commit() if self.out is not None else "")
        self.records.append(rec)
        if self.out is not None:
            append_record(self.out, rec)
        print(f"\n[validation] {'PASS' if rec.passed else 'FAIL'} {rec.component}: {rec.case}: "
              f"error {rec.error:.3g} ({rec.tol_kind}) <= {rec.tolerance:.3g}")
        return rec


def component_for(module) -> str:
    """The component a test module's records belong to."""
    explicit = getattr(module, "VALIDATION_COMPONENT", None)
    if explicit:
        return str(explicit)
    name = getattr(module, "__name__", "").rsplit(".", 1)[-1]
    return COMPONENTS.get(name, "other")


# ---------------------------------------------------------------------------------- pytest glue
# tests/conftest.py imports the fixture and calls these two from its hooks


@pytest.fixture
def validation(request) -> Recorder:
    """Record a comparison with a published or reference number (tests/support/validation_record.py)."""
    return Recorder(test=request.node.nodeid, component=component_for(request.module))


def configure(config) -> None:
    config.addinivalue_line("markers", f"{MARKER}: compares with a published or reference number "
                            "(records it for docs/validation_report.md; added to every test using the "
                            "`validation` fixture)")


def mark_items(items, config=None) -> None:
    """Give every test that uses the ``validation`` fixture the ``validation`` marker. With
    MARINE_COSIM_VALIDATION_QUICK=1 (``validation_report --quick``) drop the validation tests that need
    FMUs (built FMUs or co-simulation runs: the slow part), keeping the component-level cases."""
    for item in items:
        if "validation" in getattr(item, "fixturenames", ()) and item.get_closest_marker(MARKER) is None:
            item.add_marker(MARKER)
    if os.environ.get(ENV_QUICK) == "1":
        slow = [item for item in items if item.get_closest_marker(MARKER) is not None
                and FMU_FIXTURES & set(getattr(item, "fixturenames", ()))]
        if slow:
            items[:] = [item for item in items if item not in slow]
            if config is not None:
                config.hook.pytest_deselected(items=slow)
