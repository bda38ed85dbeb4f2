"""The reference scenarios: an offshore lift (the main job), its deck-landing variant and a moored
barge, each an SSP system in ``scenarios/<name>/`` run in-process through the one run path.

    from orchestration.runs.reference import run_reference
    out = run_reference("offshore_lift", "results/demo")     # -> the output folder

    marine-cosim demo [offshore_lift|deck_landing|moored_barge] [--out DIR] [--stop T]

A run builds the FMUs when they are missing or were built from other sources than this checkout's
(into ``build/fmus`` unless ``fmu_dir`` says otherwise), reads the system file and its timed
events, and runs them with :func:`orchestration.runs.run.run`, writing into the output folder:

* ``results.csv`` (+ ``results.parquet/``, ``metadata.json``): the recorded variables, one row per
  macro step;
* ``<name>.ssd``: the system file that was run (FMU sources pointing at the FMUs used);
* ``summary.json``: the key figures (static tensions, heave reduction, touchdown, pretensions...);
* PNG plots: ship motions, crane tip, wire tension, payload depth and winch power for the lift;
  contact force and touchdown velocity for the landing; fairlead tensions and offsets for the
  moored barge; and ``<name>.png``, all panels on one page.

The modules: :mod:`.lift`, :mod:`.landing`, :mod:`.barge` (scenario data, statics and the system
builders that generated the files), :mod:`.catalogue` (files and FMUs by scenario name),
:mod:`.summaries` (what is recorded and the key figures), :mod:`.plots`. docs/scenarios.md describes
the scenarios, the wiring and the figures. A system file edited by hand (e.g. a third-party ship FMU
in place of Ship.fmu) runs as it is; figures that need a variable the edited system no longer has
are left out with a note.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Sequence

import numpy as np

from orchestration.runs.reference.barge import catenary_fairlead_force, moored_barge_system, mooring_layout  # noqa: F401
from orchestration.runs.reference.catalogue import (BUILDERS, MODELS, NAMES, ensure_fmus, events_file,  # noqa: F401
                                                    load_reference, system_file, write_systems)
from orchestration.runs.reference.landing import deck_landing_system  # noqa: F401
from orchestration.runs.reference.lift import (CALM, CRANE_FILE, NUMERICS, PAYLOAD_SIZE, SEA,  # noqa: F401
                                               WEIGHT_AIR, WEIGHT_WATER, WIRE, WIRE_WEIGHT_WATER, G,
                                               lift_crane_data, offshore_lift_system)
from orchestration.runs.reference.paths import DEFAULT_FMU_DIR, ROOT  # noqa: F401
from orchestration.runs.reference.plots import plot_reference
from orchestration.runs.reference.summaries import RECORD, describe, summarize


def _available(system, names: Sequence[str], log=print) -> list[str]:
    """The recorded names that exist in the system's FMUs (a hand-edited system may lack some)."""
    from orchestration.system.fmu_info import NUMERIC, component_info, family

    known = {comp.name: {n for n, v in component_info(comp).variables.items() if family(v.type) in NUMERIC}
             for comp in system.components.values()}
    ok = [n for n in names if n.split(".", 1)[0] in known and n.split(".", 1)[1] in known[n.split(".", 1)[0]]]
    missing = [n for n in names if n not in ok]
    if missing:
        log(f"not recorded (not in this system): {', '.join(missing[:8])}{' ...' if len(missing) > 8 else ''}")
    return ok


def run_reference(name: str, out_dir: Path | str, stop_time: float | None = None, progress: bool = True,
                  fmu_dir: Path | str | None = None, variables: Sequence[str] | None = None, plots: bool = True,
                  step: float | None = None, log=None, replay: bool = False) -> Path:
    """Run reference scenario ``name`` ("offshore_lift", "deck_landing", "moored_barge") in this
    process and write results, summary and plots into ``out_dir``; returns ``out_dir``.

    Builds the FMUs first if needed (into ``fmu_dir``, default build/fmus).  ``stop_time``
    shortens (or lengthens) the run; ``variables`` replaces the recorded selection ("all" records
    every numeric output and input); ``step`` overrides the system file's macro step; ``replay``
    also writes the 3-D replay (``replay/replay.pvd``, a frame every 0.5 s, and ``replay.gif``, a
    frame per simulated second: :mod:`orchestration.runs.replay`)."""
    from orchestration.master.observers.results import default_observed
    from orchestration.runs.run import RunSettings, run

    say = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    system, scenario, path = load_reference(name, fmu_dir, out_dir, say)
    stop = stop_time if stop_time is not None else (scenario.end if scenario and scenario.end else system.stop_time)
    step = step or system.base_step
    if variables == "all":
        names = [f"{c}.{v}" for c, v in default_observed(system)]
    else:
        names = _available(system, list(variables) if variables else RECORD[name], say)
    say(f"[{name}] {path.name}: {len(system.components)} FMUs, {len(system.connections)} connections, "
        f"{stop:g} s at {step:g} s steps ({system.algorithm_options.get('method', 'jacobi')}); results in {out_dir}")
    events = events_file(name)
    settings = RunSettings(system=str(path), out=str(out_dir), stop=stop, step=step,
                           scenario=str(events) if events else None, variables=names, quiet=not progress, memory=True)
    report = run(settings, system=system, log=say)
    results = report.results
    info = {**report.timings(), "step_s": step}
    summary = {"scenario": name, "system_file": str(path), "events": str(events or ""), "run": info}
    try:
        summary.update(summarize(name, results))
    except Exception as exc:          # a hand-edited system may lack what a figure needs
        summary["summary_error"] = f"{type(exc).__name__}: {exc}"
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2, default=_jsonable))
    if plots:
        try:
            figures = plot_reference(name, results, out_dir)
        except Exception as exc:
            figures = []
            say(f"plots failed: {type(exc).__name__}: {exc}")
        summary["plots"] = [str(p) for p in figures]
        (out_dir / "summary.json").write_text(json.dumps(summary, indent=2, default=_jsonable))
    if replay:
        from orchestration.runs.replay import build_scene, render_gif, write_pvd

        try:
            scene = build_scene(system, results, {"payload": PAYLOAD_SIZE} if name != "moored_barge" else None)
            summary["replay"] = {"pvd": str(write_pvd(scene, out_dir / "replay", every=0.5)),
                                 "gif": str(render_gif(scene, out_dir / "replay.gif", every=1.0))}
            (out_dir / "summary.json").write_text(json.dumps(summary, indent=2, default=_jsonable))
        except Exception as exc:
            say(f"replay failed: {type(exc).__name__}: {exc}")
    say(f"[{name}] {info['simulated_s']:g} s simulated in {info['wall_s']:.1f} s wall "
        f"({info['real_time_factor_wall']:.1f}x real time; CPU {info['real_time_factor_cpu']:.1f}x); "
        f"results, summary.json and plots in {out_dir}")
    for line in describe(summary):
        say("  " + line)
    return out_dir


def _jsonable(x):
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)
