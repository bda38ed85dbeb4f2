"""Operability of a lift: in which sea states can it be done? DNV practice, from a sweep over sea states.

A sweep (:mod:`orchestration.runs.sweep`) runs the same co-simulation in every sea state of a grid
(Hs x Tp, optionally wave heading) with several wave seeds. This module judges every run against
criteria the user writes in a YAML file (docs/operability.md has the format and an example) and
combines the runs of a sea state:

* **Dynamic amplification factor** of each wire or sling tension (DNV-ST-N001 (2016) Sec. 16,
  lifting operations; DNV-RP-H103 (2011) Sec. 3.4, the characteristic total force
  F_total = F_static + F_hyd)::

      DAF = max_t T(t) / F_static

  with F_static the static tension the rigging is designed for (``static``, N: the static hook or
  sling load in air, F_static-max in RP-H103's words).
* **Slack wire / sling** (DNV-RP-H103 (2011) Sec. 3.4, slack sling criterion
  F_hyd <= 0.9 F_static-min: the dynamic part must never take away more than 90 % of the smallest
  static load, so the tension never drops below 10 % of it)::

      min_t T(t) >= f_slack * F_static-min,      f_slack = 0.10 by default

  with F_static-min the smallest static tension of the phase (``static_min``, N: the submerged
  weight once the object is under water; default ``static``).
* **Snap loads** (DNV-RP-H103 (2011) Sec. 3.7, snap forces in slings or hoist line, estimated there
  as F_snap = v_snap sqrt(K (M + A33)) for a hoisting stiffness K, mass M and added mass A33): a wire
  that went slack snaps taut again; here the snap load of every slack event is measured, the
  largest tension within ``snap_window`` seconds (default 2 s) after the tension rises back above
  the slack limit, and compared with ``max_snap`` (N).
* **Limits** on any recorded variable: payload motions (roll, pitch, heave speed, offset), crane
  limits (joint torques, slew), winch limits (motor power, a Boolean such as ``motor.saturated``
  that must stay false), each a statistic (max, min, absmax, range, std, any) against ``max``
  and/or ``min``.

A run passes when every check passes over the criteria's time ``window``; a run that failed (an
FMU error, a diverged step) does not pass. A sea state is a **go** when its seeds pass: by default
the worst value over the seeds is judged (``seeds: worst``: every seed must pass), or the mean of
the seeds' values (``seeds: mean``: the expected extreme). The **allowable Hs** of a peak period
(and heading) is the largest Hs of the grid with every smaller Hs also a go (the operational
limit OP_LIM of DNV-ST-N001 (2016) Sec. 2.6); multiplied by the forecast's alpha factor (``alpha``,
DNV-ST-N001 Sec. 2.6, default 1) it is the operational criterion OP_WF. Given a wave scatter
diagram (probability of each Hs-Tp class), the **operability** is the probability of the classes
whose Hs is within OP_WF at their Tp (allowable Hs interpolated linearly between the peak periods
of the grid; classes outside the grid's periods count as no-go and are reported).

Files written into the sweep folder: ``operability.csv`` (the go/no-go table: one row per sea
state, the worst value of every check, failed runs and the reasons), ``operability.json`` (the
criteria, the table, the allowable Hs per Tp, the operability) and ``allowable_hs.png`` (the
chart: go and no-go sea states, allowable Hs per Tp, OP_WF and the scatter diagram's classes).
``marine-cosim sweep ... --criteria FILE`` does it after the runs; ``marine-cosim operability
SWEEP_DIR --criteria FILE`` judges an existing sweep again with edited criteria (no new runs).
"""
from __future__ import annotations

import csv
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from components.data_files import load_yaml, read_text
from orchestration.errors import CriteriaError

#: statistics a limit can use (``any``: for Booleans and flags, 1 if the value was ever non-zero)
LIMIT_STATS = {
    "max": lambda x: float(np.max(x)),
    "min": lambda x: float(np.min(x)),
    "absmax": lambda x: float(np.max(np.abs(x))),
    "range": lambda x: float(np.max(x) - np.min(x)),
    "std": lambda x: float(np.std(x)),
    "mean": lambda x: float(np.mean(x)),
    "any": lambda x: float(np.any(np.asarray(x) != 0)),
}

HEADER = "Hs \\ Tp"          # the corner of the go/no-go table

#: the sweep parameters read as sea-state axes when the criteria file does not name them (Ship FMU names)
SEA_STATE_SUFFIXES = {"hs": (".sea.hs",), "tp": (".sea.period", ".sea.tp"), "heading": (".sea.direction",),
                      "seed": (".sea.seed",)}


# ---------------------------------------------------------------------- criteria

@dataclass
class TensionCriterion:
    """DAF, slack and snap criteria of one wire or sling tension (module docstring)."""

    variable: str
    label: str
    static: float | None = None              # N, F_static(-max): the DAF's reference
    static_window: tuple[float, float] | None = None   # or the mean tension over this window of each run
    static_min: float | None = None          # N, F_static-min: the slack criterion's reference (default static)
    max_daf: float | None = None
    slack_fraction: float = 0.10
    max_snap: float | None = None            # N
    snap_window: float = 2.0                 # s


@dataclass
class Limit:
    """A statistic of one recorded variable against a maximum and/or a minimum."""

    variable: str
    stat: str
    label: str
    max: float | None = None
    min: float | None = None


@dataclass
class Scatter:
    """A wave scatter diagram: probability (any scale: counts, parts per thousand) of each Hs x Tp
    class, ``probability[i][j]`` for ``hs[i]`` and ``tp[j]``."""

    hs: list[float]
    tp: list[float]
    probability: list[list[float]]
    source: str = ""


@dataclass
class Criteria:
    tensions: list[TensionCriterion] = field(default_factory=list)
    limits: list[Limit] = field(default_factory=list)
    window: tuple[float, float] | None = None
    seeds: str = "worst"
    alpha: float = 1.0
    sea_state: dict[str, str] = field(default_factory=dict)   # hs, tp, heading, seed -> sweep parameter
    scatter: Scatter | None = None
    source: str = ""

    @property
    def variables(self) -> list[str]:
        """Every recorded variable the criteria read."""
        return list(dict.fromkeys([t.variable for t in self.tensions] + [lim.variable for lim in self.limits]))

    def to_dict(self) -> dict:
        return asdict(self)


def _number(value: Any, where: str, positive: bool = False) -> float:
    if isinstance(value, str):          # YAML 1.1 reads 99.05e3 (no sign in the exponent) as text
        try:
            value = float(value)
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise CriteriaError(f"{where}: {value!r} is not a finite number")
    if positive and not value > 0:
        raise CriteriaError(f"{where}: {value!r} must be positive")
    return float(value)


def _window(value: Any, where: str) -> tuple[float, float] | None:
    if value is None:
        return None
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise CriteriaError(f"{where}: expected [START, END] in s")
    a, b = (_number(v, where) for v in value)
    if not b > a:
        raise CriteriaError(f"{where}: END must be after START")
    return a, b


def _keys(entry: dict, allowed: Sequence[str], where: str) -> None:
    from orchestration.errors import did_you_mean

    for key in entry:
        if key not in allowed:
            raise CriteriaError(f"{where}: unknown key {key!r}{did_you_mean(str(key), allowed)} "
                                f"(keys: {', '.join(allowed)})")


def criteria_from_dict(data: dict, source: str = "criteria") -> Criteria:
    """Criteria from the parsed YAML/JSON (docs/operability.md); every mistake names the file and key."""
    if not isinstance(data, dict):
        raise CriteriaError(f"{source}: expected a mapping with 'tensions' and/or 'limits'")
    _keys(data, ("description", "window", "seeds", "alpha", "sea_state", "tensions", "limits", "scatter"), source)
    crit = Criteria(window=_window(data.get("window"), f"{source}: window"), source=source)
    crit.seeds = str(data.get("seeds", "worst"))
    if crit.seeds not in ("worst", "mean"):
        raise CriteriaError(f"{source}: seeds: {crit.seeds!r}, expected worst or mean")
    crit.alpha = _number(data.get("alpha", 1.0), f"{source}: alpha", positive=True)
    sea = data.get("sea_state") or {}
    if not isinstance(sea, dict):
        raise CriteriaError(f"{source}: sea_state: expected a mapping hs/tp/heading/seed -> COMPONENT.VARIABLE")
    _keys(sea, tuple(SEA_STATE_SUFFIXES), f"{source}: sea_state")
    crit.sea_state = {k: str(v) for k, v in sea.items()}
    labels: set[str] = set()
    for k, entry in enumerate(data.get("tensions") or []):
        where = f"{source}: tensions[{k}]"
        if not isinstance(entry, dict) or "variable" not in entry:
            raise CriteriaError(f"{where}: expected a mapping with 'variable' (e.g. cable.winch.tension)")
        _keys(entry, ("variable", "label", "static", "static_window", "static_min", "max_daf", "slack_fraction",
                      "max_snap", "snap_window"), where)
        t = TensionCriterion(variable=str(entry["variable"]), label=str(entry.get("label", entry["variable"])))
        if entry.get("static") is not None:
            t.static = _number(entry["static"], f"{where}: static", positive=True)
        t.static_window = _window(entry.get("static_window"), f"{where}: static_window")
        if (t.static is None) == (t.static_window is None):
            raise CriteriaError(f"{where}: give the static tension as 'static' (N) or 'static_window' ([START, END]: "
                                "its mean over that part of each run), one of them")
        if entry.get("static_min") is not None:
            t.static_min = _number(entry["static_min"], f"{where}: static_min", positive=True)
        for key in ("max_daf", "max_snap"):
            if entry.get(key) is not None:
                setattr(t, key, _number(entry[key], f"{where}: {key}", positive=True))
        t.slack_fraction = _number(entry.get("slack_fraction", 0.10), f"{where}: slack_fraction")
        if not 0.0 <= t.slack_fraction < 1.0:
            raise CriteriaError(f"{where}: slack_fraction {t.slack_fraction!r} must be in [0, 1)")
        t.snap_window = _number(entry.get("snap_window", 2.0), f"{where}: snap_window", positive=True)
        if t.label in labels:
            raise CriteriaError(f"{where}: label {t.label!r} is used twice")
        labels.add(t.label)
        crit.tensions.append(t)
    for k, entry in enumerate(data.get("limits") or []):
        where = f"{source}: limits[{k}]"
        if not isinstance(entry, dict) or "variable" not in entry:
            raise CriteriaError(f"{where}: expected a mapping with 'variable', 'stat' and 'max' and/or 'min'")
        _keys(entry, ("variable", "stat", "label", "max", "min"), where)
        stat = str(entry.get("stat", "max"))
        if stat not in LIMIT_STATS:
            raise CriteriaError(f"{where}: stat {stat!r}, expected one of {', '.join(LIMIT_STATS)}")
        lim = Limit(variable=str(entry["variable"]), stat=stat,
                    label=str(entry.get("label", f"{entry['variable']}:{stat}")))
        for key in ("max", "min"):
            if entry.get(key) is not None:
                setattr(lim, key, _number(entry[key], f"{where}: {key}"))
        if lim.max is None and lim.min is None:
            raise CriteriaError(f"{where}: give 'max' and/or 'min'")
        if lim.label in labels:
            raise CriteriaError(f"{where}: label {lim.label!r} is used twice")
        labels.add(lim.label)
        crit.limits.append(lim)
    if not crit.tensions and not crit.limits:
        raise CriteriaError(f"{source}: no criteria: give 'tensions' and/or 'limits'")
    if data.get("scatter") is not None:
        crit.scatter = load_scatter(data["scatter"], f"{source}: scatter", base=Path(source).parent)
    return crit


def load_criteria(path: Path | str) -> Criteria:
    """Read a criteria file (YAML or JSON, docs/operability.md)."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise CriteriaError(f"criteria file not found: {path}")
    try:
        text = read_text(path)
    except (OSError, ValueError) as exc:     # not UTF-8, or replaced by a pipe since the check
        raise CriteriaError(f"cannot read criteria file {path}: {exc}") from None
    try:
        data = load_yaml(text)      # a key given twice is refused
    except yaml.YAMLError as exc:
        raise CriteriaError(f"{path}: not valid YAML: {str(exc).splitlines()[0]}") from None
    return criteria_from_dict(data, str(path))


def load_scatter(spec: Any, where: str = "scatter", base: Path | None = None) -> Scatter:
    """A scatter diagram inline (``{hs: [...], tp: [...], probability: [[...], ...]}``) or a CSV
    file: first row ``hs\\tp,TP1,TP2,...``, then one row per Hs class ``HS,P1,P2,...``."""
    if isinstance(spec, (str, Path)):
        path = Path(spec)
        if not path.is_absolute() and base is not None and (base / path).is_file():
            path = base / path
        if not path.is_file():
            raise CriteriaError(f"{where}: scatter diagram file not found: {path}")
        with open(path, newline="") as f:
            rows = [r for r in csv.reader(f) if r and not r[0].lstrip().startswith("#")]
        try:
            tp = [float(x) for x in rows[0][1:]]
            hs = [float(r[0]) for r in rows[1:]]
            prob = [[float(x) for x in r[1:]] for r in rows[1:]]
        except (ValueError, IndexError):
            raise CriteriaError(f"{path}: expected a header 'hs\\tp,TP1,TP2,...' and rows 'HS,P1,P2,...' of "
                                "numbers") from None
        spec, where = {"hs": hs, "tp": tp, "probability": prob}, str(path)
    if not isinstance(spec, dict) or not all(k in spec for k in ("hs", "tp", "probability")):
        raise CriteriaError(f"{where}: expected 'hs', 'tp' and 'probability' (rows Hs, columns Tp), or a CSV file")
    hs = [_number(v, f"{where}: hs") for v in spec["hs"]]
    tp = [_number(v, f"{where}: tp", positive=True) for v in spec["tp"]]
    prob = spec["probability"]
    if len(prob) != len(hs) or any(len(row) != len(tp) for row in prob):
        raise CriteriaError(f"{where}: probability must have {len(hs)} rows (hs) of {len(tp)} values (tp)")
    prob = [[_number(p, f"{where}: probability") for p in row] for row in prob]
    if any(p < 0 for row in prob for p in row) or not sum(map(sum, prob)) > 0:
        raise CriteriaError(f"{where}: probabilities must be >= 0 and not all zero")
    return Scatter(hs, tp, prob, str(spec.get("source", where)))


# ---------------------------------------------------------------------- one run

def tension_checks(time: np.ndarray, tension: np.ndarray, crit: TensionCriterion) -> dict:
    """DAF, slack and snap figures of one tension history (already cut to the criteria window).

    Returns ``static`` and ``static_min`` (N), ``daf`` (max T / static), ``min_ratio``
    (min T / static_min), ``snaps`` (number of slack events: the tension fell below the slack
    limit f_slack static_min and rose above it again), ``snap_max`` (N, the largest tension within
    ``snap_window`` after such an event; 0 without one) and the pass/fail of each criterion given."""
    t = np.asarray(time, float)
    T = np.asarray(tension, float)
    if crit.static is not None:
        static = crit.static
    else:
        a, b = crit.static_window
        inside = (t >= a) & (t <= b)
        if not inside.any():
            raise CriteriaError(f"{crit.label}: static_window [{a:g}, {b:g}] s holds no recorded point")
        static = float(np.mean(T[inside]))
    static_min = crit.static_min if crit.static_min is not None else static
    limit = crit.slack_fraction * static_min
    out: dict[str, Any] = {"static": static, "static_min": static_min, "daf": float(np.max(T)) / static,
                           "min_ratio": float(np.min(T)) / static_min}
    # a slack event: below the limit, then back above it; its snap load is the peak right after
    below = T < limit
    rises = np.flatnonzero(below[:-1] & ~below[1:]) + 1
    peaks = [float(np.max(T[k:np.searchsorted(t, t[k] + crit.snap_window, side="right")])) for k in rises]
    out["snaps"] = len(peaks)
    out["snap_max"] = max(peaks) if peaks else 0.0
    out["daf_ok"] = crit.max_daf is None or out["daf"] <= crit.max_daf
    out["slack_ok"] = out["min_ratio"] >= crit.slack_fraction
    out["snap_ok"] = crit.max_snap is None or out["snap_max"] <= crit.max_snap
    return out


def limit_value(values: np.ndarray, lim: Limit) -> float:
    return LIMIT_STATS[lim.stat](np.asarray(values, dtype=float))


def limit_ok(value: float, lim: Limit) -> bool:
    return (lim.max is None or value <= lim.max) and (lim.min is None or value >= lim.min)


def evaluate_run(results, crit: Criteria) -> dict:
    """Every check of ``crit`` on one run's :class:`~orchestration.master.observers.results.Results`:
    ``{"values": {name: value}, "fails": [reason, ...], "go": bool}`` with names
    ``<label>:daf``, ``<label>:min_ratio``, ``<label>:snap_max``, ``<label>:snaps`` per tension and
    the label of each limit."""
    t = np.asarray(results.time, float)
    inside = np.ones(len(t), bool) if crit.window is None else (t >= crit.window[0]) & (t <= crit.window[1])
    if not inside.any():
        raise CriteriaError(f"{crit.source}: window [{crit.window[0]:g}, {crit.window[1]:g}] s holds no recorded "
                            f"point (the run covers {t[0]:g}..{t[-1]:g} s)")
    values: dict[str, float] = {}
    fails: list[str] = []
    for tc in crit.tensions:
        r = tension_checks(t[inside], np.asarray(results[tc.variable], float)[inside], tc) \
            if tc.static_window is None else _with_static_window(t, np.asarray(results[tc.variable], float),
                                                                  inside, tc)
        for key in ("daf", "min_ratio", "snap_max", "snaps"):
            values[f"{tc.label}:{key}"] = r[key]
        fails += _tension_fails(tc, r)
    for lim in crit.limits:
        v = limit_value(np.asarray(results[lim.variable])[inside], lim)
        values[lim.label] = v
        if not limit_ok(v, lim):
            fails.append(_limit_reason(lim, v))
    return {"values": values, "fails": fails, "go": not fails}


def _with_static_window(t, T, inside, tc: TensionCriterion) -> dict:
    """The static tension from its window (anywhere in the run), the checks over the criteria window."""
    a, b = tc.static_window
    ref = (t >= a) & (t <= b)
    if not ref.any():
        raise CriteriaError(f"{tc.label}: static_window [{a:g}, {b:g}] s holds no recorded point")
    fixed = TensionCriterion(**{**asdict(tc), "static": float(np.mean(T[ref])), "static_window": None})
    return tension_checks(t[inside], T[inside], fixed)


def _tension_fails(tc: TensionCriterion, r: dict) -> list[str]:
    fails = []
    if not r["daf_ok"]:
        fails.append(f"{tc.label}: DAF {r['daf']:.3f} > {tc.max_daf:g}")
    if not r["slack_ok"]:
        fails.append(f"{tc.label}: slack, min tension {r['min_ratio']:.1%} of static < {tc.slack_fraction:.0%}")
    if not r["snap_ok"]:
        fails.append(f"{tc.label}: snap load {r['snap_max'] / 1e3:.1f} kN > {tc.max_snap / 1e3:.1f} kN")
    return fails


def _limit_reason(lim: Limit, v: float) -> str:
    if lim.max is not None and v > lim.max:
        return f"{lim.label}: {v:.4g} > {lim.max:g}"
    return f"{lim.label}: {v:.4g} < {lim.min:g}"


# ---------------------------------------------------------------------- sea states

@dataclass
class SeaState:
    key: dict[str, Any]                    # the sweep parameters but the seed
    runs: int
    failed_runs: int
    values: dict[str, float]
    fails: list[str]

    @property
    def go(self) -> bool:
        return not self.fails


@dataclass
class OperabilityResult:
    axes: dict[str, str | None]            # hs, tp, heading, seed -> sweep parameter
    states: list[SeaState]
    allowable: list[dict]                  # per heading and Tp: allowable Hs (OP_LIM) and OP_WF
    operability: list[dict]                # per heading: percent of the scatter diagram (when given)
    files: list[Path] = field(default_factory=list)

    def table(self) -> str:
        """The go/no-go matrix as text: Hs rows (largest first) by Tp columns, per heading."""
        hs_key, tp_key, hd_key = self.axes["hs"], self.axes["tp"], self.axes["heading"]
        if hs_key is None or tp_key is None:
            return "\n".join(f"{_key_label(s.key)}: {'GO' if s.go else 'NO-GO'}" for s in self.states)
        lines = []
        for heading in sorted({s.key.get(hd_key) for s in self.states}, key=_sort_key):
            group = [s for s in self.states if s.key.get(hd_key) == heading]
            tps = sorted({s.key[tp_key] for s in group})
            hss = sorted({s.key[hs_key] for s in group}, reverse=True)
            if hd_key:
                lines.append(f"heading {hd_key} = {heading:g}" if isinstance(heading, (int, float)) else
                             f"heading {hd_key} = {heading}")
            lines.append(f"{HEADER:>9s} " + " ".join(f"{tp:>7g}" for tp in tps))
            for hs in hss:
                cells = []
                for tp in tps:
                    found = [s for s in group if s.key[hs_key] == hs and s.key[tp_key] == tp]
                    cells.append(f"{('GO' if found[0].go else 'NO-GO') if found else '-':>7s}")
                lines.append(f"{hs:>9g} " + " ".join(cells))
            allowed = {a["tp"]: a["allowable_hs"] for a in self.allowable if a["heading"] == heading}
            lines.append(f"{'allow. Hs':>9s} " + " ".join(f"{allowed.get(tp, 0.0):>7g}" for tp in tps))
        for op in self.operability:
            lines.append(f"operability {op['percent']:.1f} % of the scatter diagram"
                         + (f" (heading {op['heading']:g})" if op["heading"] is not None else "")
                         + (f"; {op['uncovered_percent']:.1f} % outside the simulated periods counted no-go"
                            if op["uncovered_percent"] > 0 else ""))
        return "\n".join(lines)


def _sort_key(v):
    return (0, v) if isinstance(v, (int, float)) else (1, str(v))


def _key_label(key: dict) -> str:
    return " ".join(f"{k.split('.')[-1]}={v:g}" if isinstance(v, float) else f"{k.split('.')[-1]}={v}"
                    for k, v in key.items())


def sea_state_axes(parameters: Sequence[str], crit: Criteria) -> dict[str, str | None]:
    """Which sweep parameter is Hs, Tp, heading and seed: the criteria's ``sea_state``, else by name."""
    axes: dict[str, str | None] = {}
    for axis, suffixes in SEA_STATE_SUFFIXES.items():
        if axis in crit.sea_state:
            if crit.sea_state[axis] not in parameters:
                raise CriteriaError(f"{crit.source}: sea_state: {axis} = {crit.sea_state[axis]!r} is not a parameter "
                                    f"of the sweep ({', '.join(parameters)})")
            axes[axis] = crit.sea_state[axis]
        else:
            found = [p for p in parameters if p.endswith(suffixes)]
            axes[axis] = found[0] if len(found) == 1 else None
    return axes


def combine(rows: list[dict], parameters: Sequence[str], crit: Criteria) -> OperabilityResult:
    """The sea states of a sweep from its judged runs: ``rows`` hold the parameters, ``status`` and
    ``checks`` (:func:`evaluate_run`, or None for a failed run)."""
    axes = sea_state_axes(parameters, crit)
    group_by = [p for p in parameters if p != axes["seed"]]
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault(tuple(row[p] for p in group_by), []).append(row)
    states = []
    for key, members in groups.items():
        judged = [m["checks"] for m in members if m.get("checks") is not None]
        failed = len(members) - len(judged)
        values: dict[str, float] = {}
        fails: list[str] = []
        if failed:
            fails.append(f"{failed} of {len(members)} runs failed")
        if judged:
            values, more = _aggregate(judged, crit)
            fails += more
        states.append(SeaState(dict(zip(group_by, key)), len(members), failed, values, fails))
    result = OperabilityResult(axes, states, [], [])
    result.allowable = allowable_hs(result, crit.alpha)
    if crit.scatter is not None:
        result.operability = operability(result, crit.scatter)
    return result


def _aggregate(judged: list[dict], crit: Criteria) -> tuple[dict, list[str]]:
    """The sea state's value of each check over its seeds (worst, or mean) and what fails."""
    pick_max = lambda xs: float(np.max(xs)) if crit.seeds == "worst" else float(np.mean(xs))
    pick_min = lambda xs: float(np.min(xs)) if crit.seeds == "worst" else float(np.mean(xs))
    values: dict[str, float] = {}
    fails: list[str] = []
    for tc in crit.tensions:
        col = lambda k: [j["values"][f"{tc.label}:{k}"] for j in judged]
        r = {"daf": pick_max(col("daf")), "min_ratio": pick_min(col("min_ratio")),
             "snap_max": pick_max(col("snap_max")), "snaps": float(np.max(col("snaps")))}
        r["daf_ok"] = tc.max_daf is None or r["daf"] <= tc.max_daf
        r["slack_ok"] = r["min_ratio"] >= tc.slack_fraction
        r["snap_ok"] = tc.max_snap is None or r["snap_max"] <= tc.max_snap
        values.update({f"{tc.label}:{k}": r[k] for k in ("daf", "min_ratio", "snap_max", "snaps")})
        fails += _tension_fails(tc, r)
    for lim in crit.limits:
        xs = [j["values"][lim.label] for j in judged]
        # the worst seed is the one nearest to (or beyond) the limit given
        v = pick_max(xs) if lim.max is not None else pick_min(xs)
        if lim.max is not None and lim.min is not None and crit.seeds == "worst":
            v = max(xs, key=lambda x: max(x - lim.max, lim.min - x))
        values[lim.label] = v
        if not limit_ok(v, lim):
            fails.append(_limit_reason(lim, v))
    return values, fails


def allowable_hs(result: OperabilityResult, alpha: float = 1.0) -> list[dict]:
    """Per heading and peak period: the largest Hs with it and every smaller Hs of the grid a go
    (OP_LIM; 0 when the smallest is a no-go) and OP_WF = alpha OP_LIM."""
    hs_key, tp_key, hd_key = result.axes["hs"], result.axes["tp"], result.axes["heading"]
    if hs_key is None or tp_key is None:
        return []
    out = []
    for heading in sorted({s.key.get(hd_key) for s in result.states}, key=_sort_key):
        group = [s for s in result.states if s.key.get(hd_key) == heading]
        for tp in sorted({s.key[tp_key] for s in group}):
            allowed = 0.0
            for s in sorted((s for s in group if s.key[tp_key] == tp), key=lambda s: s.key[hs_key]):
                if not s.go:
                    break
                allowed = float(s.key[hs_key])
            out.append({"heading": heading, "tp": tp, "allowable_hs": allowed, "op_wf": alpha * allowed})
    return out


def operability(result: OperabilityResult, scatter: Scatter) -> list[dict]:
    """Per heading: the share (percent) of the scatter diagram's probability in classes with Hs <=
    OP_WF at their Tp (interpolated between the grid's periods); classes outside them count no-go."""
    p = np.asarray(scatter.probability, float)
    total = float(p.sum())
    out = []
    for heading in sorted({a["heading"] for a in result.allowable}, key=_sort_key):
        rows = [a for a in result.allowable if a["heading"] == heading]
        tps = np.array([a["tp"] for a in rows], float)
        limit = np.array([a["op_wf"] for a in rows], float)
        go = uncovered = 0.0
        for j, tp in enumerate(scatter.tp):
            if tp < tps.min() - 1e-9 or tp > tps.max() + 1e-9:
                uncovered += float(p[:, j].sum())
                continue
            allowed = float(np.interp(tp, tps, limit))
            go += float(sum(p[i, j] for i, hs in enumerate(scatter.hs) if hs <= allowed + 1e-9))
        out.append({"heading": heading, "percent": 100.0 * go / total, "uncovered_percent": 100.0 * uncovered / total})
    return out


# ---------------------------------------------------------------------- a sweep folder

def judge_sweep(sweep_dir: Path | str, crit: Criteria, log=None) -> OperabilityResult:
    """Judge every run of a sweep folder (``sweep.json``, ``summary.csv``, ``runs/``) against
    ``crit`` and write operability.csv, operability.json and allowable_hs.png into it."""
    from orchestration.master.observers.results import load_results
    from orchestration.runs.sweep import load_sweep_folder

    sweep_dir = Path(sweep_dir)
    sweep, summary = load_sweep_folder(sweep_dir)
    spec = sweep["spec"]
    parameters = list(spec.get("grid", {})) + list(spec.get("ranges", {}))
    cases = {c["name"]: c for c in sweep["cases"]}          # the parameters as given (summary.csv has floats)
    rows = []
    for row in summary:
        row = {**row, **{p: cases[row["run"]][p] for p in parameters if row["run"] in cases}}
        row["checks"] = None
        if row["status"] == "ok":
            results = load_results(sweep_dir / "runs" / row["run"])
            missing = [v for v in crit.variables if v not in results]
            if missing:
                raise CriteriaError(f"{crit.source}: {row['run']} did not record {', '.join(missing)} (run the sweep "
                                    "with --criteria, which records what the criteria read)")
            row["checks"] = evaluate_run(results, crit)
        rows.append(row)
    result = combine(rows, parameters, crit)
    result.files = write_operability(result, crit, sweep_dir, rows)
    return result


def write_operability(result: OperabilityResult, crit: Criteria, out: Path, runs: list[dict] | None = None) \
        -> list[Path]:
    names = [f"{tc.label}:{k}" for tc in crit.tensions for k in ("daf", "min_ratio", "snap_max", "snaps")] + \
        [lim.label for lim in crit.limits]
    params = list(result.states[0].key) if result.states else []
    table = out / "operability.csv"
    with open(table, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([*params, "runs", "failed_runs", "go", *names, "reasons"])
        for s in result.states:
            w.writerow([*(s.key[p] for p in params), s.runs, s.failed_runs, "GO" if s.go else "NO-GO",
                        *(repr(s.values[n]) if n in s.values else "" for n in names), "; ".join(s.fails)])
    doc = {"criteria": crit.to_dict(), "axes": result.axes,
           "sea_states": [{**s.key, "runs": s.runs, "failed_runs": s.failed_runs, "go": s.go, "values": s.values,
                           "reasons": s.fails} for s in result.states],
           "allowable_hs": result.allowable, "operability": result.operability,
           "runs": [{"run": r["run"], "go": (r["checks"] or {}).get("go", False),
                     "reasons": (r["checks"] or {}).get("fails", ["run failed"])} for r in runs or []]}
    path = out / "operability.json"
    path.write_text(json.dumps(doc, indent=2, default=_jsonable))
    files = [table, path]
    if result.allowable:
        files.append(plot_allowable(result, crit, out / "allowable_hs.png"))
    return files


def _jsonable(x):
    if isinstance(x, (np.floating, np.integer, np.bool_)):
        return x.item()
    return str(x)


def plot_allowable(result: OperabilityResult, crit: Criteria, path: Path) -> Path:
    """The chart: go (o) and no-go (x) sea states over Tp and Hs, the allowable Hs per Tp (OP_LIM) and
    OP_WF = alpha OP_LIM per heading, the scatter diagram's probabilities as grey numbers."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    hs_key, tp_key, hd_key = result.axes["hs"], result.axes["tp"], result.axes["heading"]
    fig, ax = plt.subplots(figsize=(7.0, 4.8))
    headings = sorted({a["heading"] for a in result.allowable}, key=_sort_key)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    top = max(float(s.key[hs_key]) for s in result.states)
    if crit.scatter is not None:
        sc = crit.scatter
        p = np.asarray(sc.probability, float)
        share = 100.0 * p / p.sum()
        dx = 0.04 * (max(sc.tp) - min(sc.tp) or 1.0)
        for i, hs in enumerate(sc.hs):
            for j, tp in enumerate(sc.tp):
                if share[i, j] >= 0.05:        # beside the class's corner, clear of the markers
                    ax.text(tp + dx, hs - 0.04 * max(sc.hs), f"{share[i, j]:.0f}%", color="0.5", fontsize=6,
                            ha="left", va="top")
        top = max(top, max(sc.hs))
        ax.plot([], [], " ", label="grey: scatter diagram, % per class")
    for k, heading in enumerate(headings):
        c = colours[k % len(colours)]
        where = f" ({hd_key.split('.')[-1]} {heading:g})" if hd_key and isinstance(heading, (int, float)) else ""
        group = [s for s in result.states if s.key.get(hd_key) == heading]
        ok = [s for s in group if s.go]
        bad = [s for s in group if not s.go]
        off = 0.06 * k
        ax.scatter([s.key[tp_key] + off for s in ok], [s.key[hs_key] for s in ok], marker="o", color="tab:green",
                   s=42, zorder=3, label="go" if k == 0 else None)
        ax.scatter([s.key[tp_key] + off for s in bad], [s.key[hs_key] for s in bad], marker="x", color="tab:red",
                   s=48, zorder=3, label="no-go" if k == 0 else None)
        rows = [a for a in result.allowable if a["heading"] == heading]
        ax.plot([a["tp"] for a in rows], [a["allowable_hs"] for a in rows], "-", color=c, lw=2,
                label=f"allowable Hs (OP_LIM){where}")
        if crit.alpha != 1.0:
            ax.plot([a["tp"] for a in rows], [a["op_wf"] for a in rows], "--", color=c, lw=1.2,
                    label=f"OP_WF = {crit.alpha:g} x OP_LIM{where}")
    for op in result.operability:
        ax.plot([], [], " ", label=f"operability {op['percent']:.1f} %"
                + (f" ({hd_key.split('.')[-1]} {op['heading']:g})" if op["heading"] is not None else ""))
    ax.set_xlabel(f"peak period Tp [s] ({tp_key})")
    ax.set_ylabel(f"significant wave height Hs [m] ({hs_key})")
    ax.set_ylim(0.0, 1.08 * top)
    ax.grid(alpha=0.3)
    seeds = max((s.runs for s in result.states), default=1)
    ax.set_title(f"Operability: {seeds} seed(s) per sea state, {crit.seeds} of the seeds judged", fontsize=10)
    ax.legend(fontsize=7, loc="upper left")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path

