"""The validation report: run every validation case of the test suite and tabulate it.

    python docs/tools/validation_report.py [--out docs/validation_report.md] [--quick]

runs ``pytest -m validation`` (the tests that compare with a published or reference number, see
tests/support/validation_record.py) in a subprocess with MARINE_COSIM_VALIDATION_OUT pointing at a
JSON-lines file, then writes a Markdown report: a summary, one table per component (case,
reference, ours, error, tolerance, pass, source) and bar charts of error / tolerance per case
(``validation_<component>.png`` beside the report, in ``img/``). ``--records FILE`` renders the
report from records written earlier instead of running the tests. The exit status is 0 when every
recorded case is within its tolerance and no validation test failed.

A record's error is |ours - reference| (``abs``) or |ours - reference| / |reference| (``rel``; for
arrays the largest difference over the largest reference component) unless the test computed it
(an RMS over a curve, a worst case over random states); it passes when error <= tolerance.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:          # run as a script from a checkout: python docs/tools/validation_report.py
    sys.path.insert(0, str(ROOT))

from tests.support.validation_record import (ENV_OUT, ENV_QUICK, ORDER, ValidationRecord, as_numeric,  # noqa: E402
                                             checkout_commit, read_records)

# ---------------------------------------------------------------------------------- test outcomes

@dataclass
class TestOutcome:
    nodeid: str
    outcome: str            # passed | failed | error | skipped
    message: str = ""
    seconds: float = 0.0


def nodeid_from_junit(classname: str, name: str) -> str:
    """pytest's junit names back to a node id:
    ('tests.components.test_ship', 'test_x[a]') -> 'tests/components/test_ship.py::test_x[a]'."""
    parts = classname.split(".")
    # the module is the last part that starts with "test" (classes follow it)
    idx = max((i for i, p in enumerate(parts) if p.startswith("test")), default=len(parts) - 1)
    if idx + 1 < len(parts) and parts[idx + 1].startswith("test"):
        idx += 1
    module = "/".join(parts[:idx + 1]) + ".py"
    return "::".join([module, *parts[idx + 1:], name])


def read_junit(path: str | os.PathLike) -> list[TestOutcome]:
    path = Path(path)
    if not path.exists():
        return []
    out = []
    for case in ET.parse(path).getroot().iter("testcase"):
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            el = case.find(tag)
            if el is not None:
                outcome = {"failure": "failed"}.get(tag, tag)
                message = (el.get("message") or "").strip()
                break
        out.append(TestOutcome(nodeid_from_junit(case.get("classname", ""), case.get("name", "")), outcome,
                               message, float(case.get("time", 0.0) or 0.0)))
    return out


# ---------------------------------------------------------------------------------- formatting

def fmt_value(x: Any) -> str:
    if x is None:
        return ""
    if isinstance(x, str):
        return x
    a = as_numeric(x)
    if a is None:
        return str(x)
    if a.ndim == 0:
        return f"{float(a):.6g}"
    flat = a.ravel()
    if flat.size <= 3:
        return "[" + ", ".join(f"{v:.6g}" for v in flat) + "]"
    return "[" + ", ".join(f"{v:.6g}" for v in flat[:2]) + f", ... ({flat.size} values)]"


def fmt_number(x: float) -> str:
    if not math.isfinite(x):
        return str(x)
    if x == 0.0:
        return "0"
    return f"{x:.2e}" if (abs(x) < 1e-3 or abs(x) >= 1e4) else f"{x:.4g}"


def fmt_tolerance(r: ValidationRecord) -> str:
    if r.tol_kind == "rel":
        return f"{fmt_number(r.tolerance)} rel"
    return f"{fmt_number(r.tolerance)} {r.unit}".strip()


def fmt_error(r: ValidationRecord) -> str:
    if r.tol_kind == "rel":
        return fmt_number(r.error)
    return f"{fmt_number(r.error)} {r.unit}".strip()


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def component_order(components: Iterable[str]) -> list[str]:
    names = set(components)
    return [c for c in ORDER if c in names] + sorted(names - set(ORDER))


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "other"


# ---------------------------------------------------------------------------------- plots

def plot_component(records: Sequence[ValidationRecord], title: str, path: Path) -> Path:
    """Horizontal bars of error / tolerance per case (log scale; 1 is the tolerance)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    floor, ceil = 1e-10, 1e3
    ratios = np.array([min(max(r.ratio, floor), ceil) for r in records])
    labels = [(r.case if len(r.case) <= 75 else r.case[:72] + "...") for r in records]
    colours = ["tab:green" if r.passed else "tab:red" for r in records]
    height = max(2.0, 0.6 + 0.24 * len(records))
    fig, ax = plt.subplots(figsize=(12.0, height))
    y = np.arange(len(records))[::-1]
    ax.barh(y, ratios - floor, left=floor, color=colours, height=0.7)      # from the floor to the ratio
    ax.set_xscale("log")
    ax.set_xlim(floor, ceil)
    ax.axvline(1.0, color="k", lw=1.0, ls="--")
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_ylim(-0.7, len(records) - 0.3)
    ax.set_xlabel("error / tolerance (log; < 1 passes; below 1e-10, e.g. exact, no bar)")
    passed = sum(r.passed for r in records)
    ax.set_title(f"{title}: {passed} of {len(records)} cases within tolerance", fontsize=10)
    ax.grid(axis="x", which="major", alpha=0.3)
    fig.subplots_adjust(left=0.42, right=0.98, bottom=0.55 / height, top=1.0 - 0.35 / height)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def plot_summary(records: Sequence[ValidationRecord], path: Path) -> Path:
    """One dot per case, error / tolerance, grouped by component."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    floor, ceil = 1e-10, 1e3
    comps = component_order(r.component for r in records)
    fig, ax = plt.subplots(figsize=(9.0, 0.9 + 0.45 * len(comps)))
    rng = np.random.default_rng(0)
    for k, comp in enumerate(comps):
        rs = [r for r in records if r.component == comp]
        x = np.array([min(max(r.ratio, floor), ceil) for r in rs])
        yk = len(comps) - 1 - k + rng.uniform(-0.18, 0.18, len(rs))
        ax.scatter(x, yk, s=14, c=["tab:green" if r.passed else "tab:red" for r in rs], alpha=0.8,
                   edgecolors="none")
    ax.set_xscale("log")
    ax.set_xlim(floor / 2, ceil)
    ax.axvline(1.0, color="k", lw=1.0, ls="--")
    ax.set_yticks(range(len(comps)))
    ax.set_yticklabels([f"{c} ({sum(r.component == c for r in records)})" for c in comps[::-1]])
    ax.set_xlabel("error / tolerance (log; < 1 passes)")
    ax.set_title(f"{sum(r.passed for r in records)} of {len(records)} validation cases within tolerance", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


# ---------------------------------------------------------------------------------- report

def git_commit() -> str:
    """This checkout's commit, as the records name theirs (tests/support/validation_record.py)."""
    sha = checkout_commit()
    if not sha:
        return "unknown"
    return sha.rstrip("+") + (" (with uncommitted changes)" if sha.endswith("+") else "")


def records_commit(records: Sequence[ValidationRecord]) -> str:
    """The commit the records were made at (several: all of them, a mixed file), or this checkout's
    when they carry none (records of an older recorder)."""
    made = sorted({r.commit for r in records if r.commit})
    if not made:
        return f"{git_commit()} (this checkout; the records do not name theirs)"
    return ", ".join(made) + ("" if len(made) == 1 else " (records of several checkouts)")


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{cpu}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}")


def write_report(records: Sequence[ValidationRecord], out: str | os.PathLike, outcomes: Sequence[TestOutcome] = (),
                 img_dir: str | os.PathLike | None = None, meta: dict | None = None) -> Path:
    """Write the Markdown report (and its plots into ``img_dir``, default ``<out dir>/img``)."""
    out = Path(out)
    img_dir = Path(img_dir) if img_dir is not None else out.parent / "img"
    meta = dict(meta or {})
    records = list(records)
    comps = component_order(r.component for r in records)
    by_test = {o.nodeid: o for o in outcomes}
    failed_tests = [o for o in outcomes if o.outcome in ("failed", "error")]
    skipped_tests = [o for o in outcomes if o.outcome == "skipped"]
    n_pass = sum(r.passed for r in records)
    recorded_tests = {r.test for r in records}
    silent = [o for o in outcomes if o.outcome == "passed" and o.nodeid not in recorded_tests]

    for old in img_dir.glob("validation_*.png") if img_dir.exists() else ():
        old.unlink()                         # plots of components that are gone
    images = {}
    if records:
        images["summary"] = plot_summary(records, img_dir / "validation_summary.png")
        for comp in comps:
            images[comp] = plot_component([r for r in records if r.component == comp], comp,
                                          img_dir / f"validation_{slug(comp)}.png")

    def rel(p: Path) -> str:
        return os.path.relpath(p, out.parent).replace(os.sep, "/")

    L: list[str] = ["# Validation report", ""]
    L += ["Every case where the suite compares its physics with a published or independent reference number, "
          "run by `python docs/tools/validation_report.py` (which runs `pytest -m validation`) and "
          "regenerated, not edited by hand.", ""]
    L += [f"* date: {meta.get('date', _dt.datetime.now(_dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC'))}",
          f"* git commit: {meta.get('commit', git_commit())}",
          f"* machine: {meta.get('machine', machine())}"]
    if meta.get("command"):
        L.append(f"* command: `{meta['command']}`" + (f" ({meta['seconds']:.0f} s)" if "seconds" in meta else ""))
    if meta.get("quick"):
        L.append("* **quick run**: component-level cases only (no FMU or co-simulation cases)")
    L.append("")

    L += ["## Summary", ""]
    verdict = "all within tolerance" if n_pass == len(records) else f"**{len(records) - n_pass} outside tolerance**"
    L.append(f"**{len(records)} validation cases** from {len(recorded_tests)} tests: {n_pass} pass, {verdict}.")
    if outcomes:
        counts = Counter(o.outcome for o in outcomes)
        L.append(f"Validation tests run: {len(outcomes)}; passed {counts.get('passed', 0)}, failed "
                 f"{counts.get('failed', 0) + counts.get('error', 0)}, skipped {counts.get('skipped', 0)}.")
    L.append("")
    L += ["| component | cases | pass | fail | largest error / tolerance |", "|---|---:|---:|---:|---:|"]
    for comp in comps:
        rs = [r for r in records if r.component == comp]
        worst = max(r.ratio for r in rs)
        L.append(f"| [{comp}](#{slug(comp).replace('_', '-')}) | {len(rs)} | {sum(r.passed for r in rs)} | "
                 f"{sum(not r.passed for r in rs)} | {fmt_number(worst)} |")
    L.append("")
    if "summary" in images:
        L += [f"![error / tolerance of every case]({rel(images['summary'])})", ""]
    L += ["Error: |ours - reference| (absolute, in the unit shown) or |ours - reference| / |reference| "
          "(relative; for vectors the largest difference over the largest reference component), unless the "
          "case says it is a worst case, an RMS or a drift, which its test computes. A case passes when "
          "error <= tolerance; the tolerances are the tests' own assertions. Sources name the digests in "
          "`../shared/reference/` and their sections.", ""]

    if meta.get("notes"):
        L += ["## Notes", ""]
        L += [f"* {note}" for note in meta["notes"]]
        L.append("")

    if failed_tests:
        L += ["## Failed tests", ""]
        for o in failed_tests:
            L.append(f"* `{o.nodeid}`: {_cell(o.message[:300])}")
        L.append("")

    for comp in comps:
        rs = [r for r in records if r.component == comp]
        L += [f"## {comp}", ""]
        if comp in images:
            L += [f"![{comp}: error / tolerance per case]({rel(images[comp])})", ""]
        L += ["| case | reference | ours | error | tolerance | pass | source |", "|---|---|---|---|---|---|---|"]
        for r in rs:
            unit = f" {r.unit}" if r.unit and as_numeric(r.reference) is not None else ""
            verdict = "pass" if r.passed else "**FAIL**"
            o = by_test.get(r.test)
            if o is not None and o.outcome in ("failed", "error"):
                verdict += " (test failed)"
            source = r.source + (f"; {r.note}" if r.note else "")
            L.append(f"| {_cell(r.case)} | {_cell(fmt_value(r.reference) + unit)} | "
                     f"{_cell(fmt_value(r.ours) + (unit if as_numeric(r.ours) is not None else ''))} | "
                     f"{_cell(fmt_error(r))} | {_cell(fmt_tolerance(r))} | {verdict} | {_cell(source)} |")
        tests = sorted({r.test for r in rs})
        L += ["", f"<details><summary>{len(tests)} tests</summary>", ""]
        L += [f"* `{t}`" for t in tests]
        L += ["", "</details>", ""]

    if skipped_tests:
        L += ["## Skipped", ""]
        L += [f"* `{o.nodeid}`: {_cell(o.message[:200])}" for o in skipped_tests]
        L.append("")
    if silent:
        L += ["## Validation tests without records", "",
              "These carry the `validation` marker but recorded nothing:", ""]
        L += [f"* `{o.nodeid}`" for o in silent]
        L.append("")

    L += ["## Adding a case", "",
          "Take the `validation` fixture in the test and record each comparison before asserting it "
          "(tests/support/validation_record.py):", "", "```python",
          "def test_something(validation):",
          "    ours = ...",
          "    validation.record(case=\"B4 crane tip heave at 60 s\", reference=1.234, ours=ours, tolerance=0.02,",
          "                      tol_kind=\"rel\", unit=\"m\", source=\"ship_crane_digest.md 4.1\")",
          "    assert ours == pytest.approx(1.234, rel=0.02)", "```", "",
          "The fixture gives the test the `validation` marker; its records land in the table of its module's "
          "component (tests/support/validation_record.py `COMPONENTS`, or `VALIDATION_COMPONENT = \"...\"` in the "
          "module, or `component=` on the call).", ""]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(L), encoding="utf-8")
    return out


# ---------------------------------------------------------------------------------- running

def run_validation_tests(records: Path, junit: Path, quick: bool = False, pytest_args: Sequence[str] = (),
                         root: Path = ROOT) -> tuple[int, float, list[str]]:
    """``pytest -m validation`` in a subprocess; returns (exit code, seconds, command)."""
    if not (root / "tests").is_dir():
        raise FileNotFoundError(f"{root / 'tests'} not found: the validation report runs from a source checkout")
    cmd = [sys.executable, "-m", "pytest", "-m", "validation", "-q", "-p", "no:cacheprovider",
           f"--junitxml={junit}", "-o", "junit_family=xunit1"]
    cmd += list(pytest_args)
    env = dict(os.environ, **{ENV_OUT: str(records), ENV_QUICK: "1" if quick else "0"})
    records.unlink(missing_ok=True)
    started = time.perf_counter()
    code = subprocess.run(cmd, cwd=root, env=env).returncode
    return code, time.perf_counter() - started, cmd


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python docs/tools/validation_report.py",
                                 description="Run every validation case (pytest -m validation) and write the "
                                             "validation report (Markdown with plots).")
    ap.add_argument("--out", default=str(ROOT / "docs" / "validation_report.md"),
                    help="report file (default docs/validation_report.md); plots go to img/ beside it")
    ap.add_argument("--img-dir", default=None, help="folder for the plots (default: img/ beside --out)")
    ap.add_argument("--quick", action="store_true",
                    help="component-level cases only (no FMU builds or co-simulation runs): minutes less")
    ap.add_argument("--records", default=None,
                    help="render from this JSON-lines file of records instead of running the tests")
    ap.add_argument("--junit", default=None, help="with --records: pytest's junit XML of that run (test outcomes)")
    ap.add_argument("--keep", default=None, help="also copy the records (JSON lines) to this file")
    ap.add_argument("--note", action="append", default=[],
                    help="a note for the report, e.g. why a test was deselected (repeatable)")
    ap.add_argument("pytest_args", nargs="*",
                    help="extra pytest arguments (after --), e.g. -- -x tests/components/test_ship.py")
    args = ap.parse_args(argv)

    meta: dict = {"notes": list(args.note)}
    if args.records:
        records = read_records(args.records)
        outcomes = read_junit(args.junit) if args.junit else []
        code = 0
        meta["commit"] = records_commit(records)
    else:
        with tempfile.TemporaryDirectory(prefix="validation_") as tmp:
            rec_path, junit = Path(tmp) / "records.jsonl", Path(tmp) / "junit.xml"
            code, seconds, cmd = run_validation_tests(rec_path, junit, args.quick, args.pytest_args)
            records, outcomes = read_records(rec_path), read_junit(junit)
            if args.keep:
                Path(args.keep).write_text(rec_path.read_text() if rec_path.exists() else "")
        shown = ["pytest", "-m", "validation"] + list(args.pytest_args)
        meta.update(command="python docs/tools/validation_report.py" + (" --quick" if args.quick else "")
                    + " -> " + " ".join(shown).replace(str(ROOT) + os.sep, ""), seconds=seconds, quick=args.quick)
        if code not in (0, 1) and not records:
            print(f"pytest exited with {code} and recorded nothing", file=sys.stderr)
            return code
    path = write_report(records, args.out, outcomes, args.img_dir, meta)
    bad = [r for r in records if not r.passed]
    failed = [o for o in outcomes if o.outcome in ("failed", "error")]
    print(f"{path}: {len(records)} validation cases, {len(records) - len(bad)} pass"
          + (f", {len(bad)} outside tolerance" if bad else "") + (f"; {len(failed)} tests failed" if failed else ""))
    for r in bad:
        print(f"  FAIL {r.component}: {r.case}: error {r.error:.3g} > {r.tolerance:.3g} ({r.test})")
    for o in failed:
        print(f"  test failed: {o.nodeid}")
    return 0 if not bad and not failed and code in (0, 5) else 1


if __name__ == "__main__":
    sys.exit(main())
