"""The ``marine-cosim`` command.

    marine-cosim run SYSTEM [--stop T] [--step H] [--algorithm fixed|ecco|error-control|iterative]
                     [--method jacobi|gauss-seidel] [--rtol R] [--atol A] [--extrapolation 0|1|2]
                     [--option NAME=VALUE ...]
                     [--backend inprocess|process|ray] [--ray-address HOST:PORT] [--place COMP=OPTIONS]
                     [--set COMP.VAR=VALUE ...] [--variables COMP.VAR ...] [--record-every N]
                     [--checkpoint-every T] [--out DIR] [--scenario FILE]
    marine-cosim run --resume DIR [--stop T] [--backend ...]   continue from the last checkpoint
    marine-cosim sweep SYSTEM|SCENARIO --grid COMP.VAR=V1,V2,... [--random N --range COMP.VAR=LO:HI --seed S]
                     [--summary COMP.VAR:max] [--criteria FILE [--scatter FILE]]
                     [--backend ray|process|serial] [--ray-address HOST:PORT] [--out DIR]
    marine-cosim operability SWEEP_DIR --criteria FILE [--scatter FILE]   judge a sweep again
    marine-cosim validate SYSTEM
    marine-cosim info FMU|SYSTEM|adapter:KIND       (an FMU: with its ship interface profile, if any)
    marine-cosim plot RESULTS [VARIABLE ...] [--variables VARIABLE ...] [--out DIR]
    marine-cosim export RESULTS --to mat|netcdf [--out FILE]
    marine-cosim replay RESULTS [--system FILE] [--out DIR] [--every S] [--gif] [--fps N]
    marine-cosim convert SYSTEM --to ssp|ssd|osp [--out PATH] [--initial-inputs] [--power-bonds auto|write|omit]
    marine-cosim build [--out DIR] [MODEL ...]          build the FMUs (build_fmus.py)
    marine-cosim simulate FMU [--stop T] [--step H] [--set NAME=VALUE ...] [--variables NAME ...] [--out DIR]
    marine-cosim demo [NAME] [--out DIR] [--stop T] [--no-replay]   build the FMUs and run a reference scenario
    marine-cosim --version

Each option has one spelling across the verbs: ``--stop``, ``--step``, ``--out``, ``--set``,
``--variables``, ``--scenario``, ``--backend``, ``--ray-address``, ``--record-every``, ``--quiet``.

A user error (a system or scenario file, a value on the command line) ends with exit status 2 and
one line naming the file, element or key (orchestration.errors.MarineCosimError); anything else is
an internal error (exit status 3) and says so. ``--debug``, anywhere on the line, shows the
traceback.
"""
from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

from orchestration.errors import MarineCosimError, UsageError, one_line



# ---------------------------------------------------------------------- system commands

def _load(path: Path):
    from orchestration.runs.first_run import load_system

    return load_system(path, build=False)          # a missing FMU of ours: the message names the build command


def _run(args) -> int:
    from orchestration.backends import parse_place_arguments
    from orchestration.runs.run import RunSettings, resume_run, run

    placement = parse_place_arguments(args.place)
    log = lambda message: print(message, file=sys.stderr)
    if args.resume is not None:
        if args.system is not None:
            raise UsageError("give either SYSTEM or --resume DIR (the checkpoint knows its system file)")
        overrides = {"stop": args.stop, "backend": args.backend, "ray_address": args.ray_address,
                     "placement": placement or None, "call_timeout": args.call_timeout,
                     "workers": args.workers, "checkpoint_every": args.checkpoint_every, "quiet": args.quiet}
        report = resume_run(args.resume, overrides, log=log)
        print(report.line())
        return 0
    if args.system is None:
        raise UsageError("give the system file to run (or --resume DIR)")
    from orchestration.runs.single_fmu import parse_assignments

    options = {key: getattr(args, key) for key in ("method", "extrapolation", "rtol", "atol")
               if getattr(args, key, None) is not None}
    for item in args.option or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--option {item!r}: expected NAME=VALUE, e.g. --option conventions=libcosim")
        options[key.strip()] = value.strip()
    settings = RunSettings(system=str(args.system), out=str(args.out) if args.out else None, stop=args.stop,
                           step=args.step, algorithm=args.algorithm, options=options,
                           scenario=str(args.scenario) if args.scenario else None, variables=args.variables,
                           flush_every=args.flush_every, record_every=args.record_every, backend=args.backend,
                           ray_address=args.ray_address, placement=placement, call_timeout=args.call_timeout,
                           workers=args.workers, checkpoint_every=args.checkpoint_every,
                           parameters=parse_assignments(args.set), quiet=args.quiet)
    report = run(settings, log=log)
    print(report.line())
    return 0


def _criteria(args):
    from orchestration.runs.operability import load_criteria, load_scatter

    if args.criteria is None:
        if args.scatter is not None:
            raise UsageError("--scatter needs --criteria FILE (the scatter diagram weights its go/no-go table)")
        return None
    criteria = load_criteria(args.criteria)
    if args.scatter is not None:
        criteria.scatter = load_scatter(args.scatter)
    return criteria


def _print_operability(judged) -> None:
    print(judged.table())
    print("operability: " + ", ".join(str(p) for p in judged.files))


def _sweep(args) -> int:
    from orchestration.runs.reference import NAMES, events_file, load_reference
    from orchestration.runs.sweep import SweepSpec, run_sweep

    spec = SweepSpec.from_arguments(args.grid, args.random, args.range, args.seed, args.summary,
                                    aggregate=args.aggregate)
    criteria = _criteria(args)
    log = lambda message: print(message, file=sys.stderr)
    system, scenario = Path(args.system), args.scenario
    out = args.out or Path("results") / f"{system.stem}_sweep"
    if not system.exists() and str(args.system) in NAMES:      # a reference scenario by name, with its events
        _, _, system = load_reference(str(args.system), None, out / "system", log)
        scenario = scenario or events_file(str(args.system))
    result = run_sweep(system, spec, out=out, runner=args.backend, address=args.ray_address,
                       jobs=args.jobs, stop=args.stop, step=args.step, algorithm=args.algorithm,
                       scenario=scenario, variables=args.variables, quiet=args.quiet, log=log, criteria=criteria,
                       record_every=args.record_every)
    print(f"sweep: {result.done} runs done, {result.failed} failed in {result.wall:.1f} s; "
          f"summary {result.summary_csv}" + "".join(f"; heat map {p}" for p in result.heatmaps))
    if result.operability is not None:
        _print_operability(result.operability)
    return 0 if result.failed == 0 else 1


def _operability(args) -> int:
    from orchestration.runs.operability import judge_sweep

    if args.criteria is None:
        raise UsageError("give the criteria file: --criteria FILE (docs/operability.md)")
    _print_operability(judge_sweep(args.sweep, _criteria(args)))
    return 0


def _validate(args) -> int:
    from orchestration.runs.run import RunSettings, check_run
    from orchestration.system.validation import validate_system

    system = _load(args.system)
    report = validate_system(system)
    if report.problems:
        print(report)
    size = f"{len(system.components)} components, {len(system.connections)} connections"
    warned = f", {len(report.warnings)} warning(s)" if report.warnings else ""
    errors = len(report.errors)
    if report.ok:
        # what run checks beyond the file against its FMUs (the file's scenario, algorithm and
        # options, backend): a file validate passes must not be refused by run
        try:
            check_run(RunSettings(system=str(args.system)), system, log=print, require_grid=False)
        except MarineCosimError as exc:
            print(f"error: {one_line(exc)}")
            errors += 1
    if not errors:
        print(f"OK: {args.system} is valid ({size}{warned})")
        return 0
    print(f"FAILED: {args.system}: {errors} error(s){warned}")
    return 1


def _adapter_info(kind: str) -> int:
    from orchestration.system.adapters import AdapterError, KINDS, adapter_description, parameters

    try:
        params = parameters(kind)
    except AdapterError as exc:
        raise UsageError(f"info adapter:{kind}: {exc}") from None
    md = adapter_description(kind)
    print(f"{kind} port adapter: {KINDS[kind].summary}")
    print(f"  {'parameter':32s} {'type':8s} {'default':>12s}  description")
    for p in params:
        default = "" if p.default is None else str(p.default)
        choices = f" ({' | '.join(repr(c) for c in p.choices)})" if p.choices else ""
        shape = " [shapes the interface]" if p.structural else ""
        print(f"  {p.name:32s} {p.type:8s} {default:>12s}  {p.description}{choices}{shape}")
    print(f"  {'port (with the default parameters)':40s} {'causality':10s} {'unit':8s}  description")
    for v in md.modelVariables:
        if v.causality in ("input", "output"):
            print(f"  {v.name:40s} {v.causality:10s} {v.unit or '':8s}  {v.description or ''}")
    return 0


def _array_text(md, variable) -> tuple[str, str]:
    """("Float64[3x3]", "A[0][0] .. A[2][2]") for an FMI 3.0 array variable; the shape's problem in
    place of the range when it cannot be resolved."""
    import math

    from orchestration.errors import SystemFileError
    from orchestration.system.arrays import MAX_ELEMENTS, array_shape, element_name, shape_text

    try:
        shape = array_shape(md, variable)
    except SystemFileError as exc:
        return f"{variable.type}[?]", one_line(exc)
    if variable.type in ("String", "Binary", "Clock") or 0 in shape:
        return f"{variable.type}[{shape_text(shape)}]", ""
    if math.prod(shape) > MAX_ELEMENTS:
        return (f"{variable.type}[{shape_text(shape)}]",
                f"{variable.name}: {math.prod(shape)} elements, more than {MAX_ELEMENTS}: not addressed by element")
    last = tuple(n - 1 for n in shape)
    return (f"{variable.type}[{shape_text(shape)}]",
            f"{element_name(variable.name, (0,) * len(shape))} .. {element_name(variable.name, last)}")


def _info(args) -> int:
    from fmpy import read_model_description

    path = args.target
    if str(path).startswith("adapter:"):
        return _adapter_info(str(path).split(":", 1)[1])
    if path.suffix.lower() == ".fmu":
        if not path.is_file():
            raise UsageError(f"FMU file not found: {path}")
        try:
            md = read_model_description(str(path))
        except Exception as exc:             # FMPy raises many kinds for a file that is no FMU
            raise UsageError(f"{path}: cannot read its modelDescription.xml: {type(exc).__name__}: "
                             f"{one_line(exc)}") from None
        print(f"{md.modelName} ({path.name}): FMI {md.fmiVersion}, generated by {md.generationTool}")
        if md.description:
            print(f"  {md.description}")
        cs = md.coSimulation
        if cs:
            caps = [k for k in ("canHandleVariableCommunicationStepSize", "canGetAndSetFMUstate",
                                "canSerializeFMUstate", "canInterpolateInputs", "providesDirectionalDerivative")
                    if getattr(cs, k, False)]
            print(f"  co-simulation: {', '.join(caps) or 'no optional capabilities'}")
        elif md.modelExchange is not None and md.fmiVersion in ("2.0", "3.0"):
            nx = len(md.derivatives or [])
            print(f"  model exchange only: the master integrates its {nx} continuous state(s) and "
                  f"{md.numberOfEventIndicators or 0} event indicator(s) (docs/cosimulation.md)")
        else:
            print("  no CoSimulation or FMI 2.0/3.0 ModelExchange interface: the master cannot run it")
        if md.defaultExperiment:
            de = md.defaultExperiment
            print(f"  default experiment: start {de.startTime}, stop {de.stopTime}, step {de.stepSize}")
        print(f"  {'variable':40s} {'causality':10s} {'type':8s} {'unit':10s} {'start':>12s}  description")
        arrays = []
        for v in md.modelVariables:
            start = "" if v.start is None else str(v.start)
            unit = v.unit or (v.declaredType.unit if v.declaredType is not None else "") or ""
            kind = v.type
            if getattr(v, "dimensions", None):          # an FMI 3.0 array: its shape, and its elements below
                kind, first_last = _array_text(md, v)
                if first_last:
                    arrays.append(first_last)
            print(f"  {v.name:40s} {v.causality or '':10s} {kind:8s} {unit:10s} {start:>12s}  {v.description or ''}")
        if arrays:
            print("  array elements, each a variable of its own (one bracket per dimension, 0-based, row-major):")
            for text in arrays:
                print(f"    {text}")
        _print_profile(md)
        return 0
    system = _load(path)
    print(f"system {system.name} ({path}): start {system.start_time}, stop {system.stop_time}, "
          f"base step {system.base_step}, algorithm {system.algorithm}")
    for c in system.components.values():
        if c.adapter:
            print(f"  component {c.name}: {c.adapter} port adapter, step x{c.step_multiple}, {len(c.parameters)} start "
                  "values")
            continue
        try:
            md = read_model_description(str(c.source))
            what = f"{md.modelName}, FMI {md.fmiVersion}"
        except Exception as exc:
            what = f"unreadable: {exc}"
        print(f"  component {c.name}: {c.source} ({what}), step x{c.step_multiple}, {len(c.parameters)} start values")
    for c in system.connections:
        transform = "" if c.is_identity else f"  (x {c.factor:g} + {c.offset:g})"
        print(f"  {c.label()}{transform}")
    return 0


def _print_profile(md) -> None:
    """The ship interface family of an FMU and the port adapter block to paste (orchestration.system.profiles)."""
    from orchestration.system.profiles import recognise

    profile = recognise(md)
    if profile is None:
        return
    print(f"\ninterface profile: {profile.title}")
    for text in profile.read:
        print(f"  read from the FMU: {text}")
    for text in profile.guessed:
        print(f"  a guess, check it: {text}")
    print(f"the {profile.kind} port adapter to paste into the .ssd (the FMU as component 'ship'; docs/ship_swap.md):")
    print(profile.block())


def _plot(args) -> int:
    from orchestration.master.observers.results import load_results
    from orchestration.runs.plotting import plot_results

    results = load_results(args.results)
    results.require_rows(args.results, "plot")
    out = args.out or (args.results if args.results.is_dir() else args.results.parent) / "plots"
    variables = [*args.variables, *(args.variables_option or ())]
    paths = plot_results(results, variables or None, out)
    for p in paths:
        print(p)
    return 0


def _export(args) -> int:
    from orchestration.runs.export import export_results

    print(export_results(args.results, args.to, args.out))
    return 0


def _replay(args) -> int:
    from orchestration.runs.replay import replay

    written = replay(args.results, args.system, args.out, every=args.every, gif=args.gif, fps=args.fps)
    for path in written.values():
        print(path)
    return 0


def _convert(args) -> int:
    from orchestration.system.files import save_system

    system = _load(args.system)
    if args.initial_inputs:
        from orchestration.runs.initial_inputs import with_initial_inputs

        system = with_initial_inputs(system)
    out = args.out or args.system.with_name(f"{system.name}_{args.to}")
    bonds = {"auto": None, "write": True, "omit": False}[args.power_bonds]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        written = save_system(system, args.to, out, power_bonds=bonds)
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    print(written)
    return 0


# ---------------------------------------------------------------------- FMU commands

def _build(args) -> int:
    import build_fmus

    for path in build_fmus.build_all(args.out, args.models, portable=args.portable):
        print(path)
    return 0


def _simulate(args) -> int:
    from orchestration.runs.single_fmu import parse_assignments, run_fmu

    report = run_fmu(args.fmu, args.out, args.stop, args.step, parse_assignments(args.set), args.variables or None,
                     plot=not args.no_plot, progress=not args.quiet)
    print(report.line() + ("" if args.no_plot else " (with plots)"))
    return 0


def _demo(args) -> int:
    """The README's main job: the offshore-lift reference scenario (or another one) in-process."""
    from orchestration.runs.reference import run_reference

    out = run_reference(args.scenario, args.out, stop_time=args.stop, fmu_dir=args.fmus, replay=not args.no_replay)
    print(f"results, summary, plots{'' if args.no_replay else ', replay/replay.pvd and replay.gif'}: {out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from orchestration import __version__

    parser = argparse.ArgumentParser(prog="marine-cosim", description="FMI co-simulation of ship mechanical systems")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error (accepted anywhere on "
                                                             "the line)")
    parser.add_argument("--version", action="version", version=f"marine-cosim {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("run", help="run a system file (SSP .ssd/.ssp or OspSystemStructure.xml)")
    p.add_argument("system", type=Path, nargs="?", help="the system file (not with --resume)")
    p.add_argument("--stop", type=float, help="stop time [s] (default: the system file's)")
    p.add_argument("--step", type=float, help="base macro step [s] (default: the system file's)")
    p.add_argument("--algorithm", choices=["fixed", "ecco", "error-control", "iterative"],
                   help="master algorithm (default: the system file's, else fixed); adaptive ones write "
                        "algorithm.csv (steps, error indicator, ECCO's per-bond energy residuals)")
    p.add_argument("--rtol", type=float, help="relative tolerance of ecco / error-control / iterative")
    p.add_argument("--atol", type=float, help="absolute tolerance of ecco / error-control / iterative")
    p.add_argument("--option", action="append", metavar="NAME=VALUE",
                   help="an algorithm option, as mc:Option in a system file (repeatable), e.g. min_step=1e-4, "
                        "conventions=libcosim (ecco), energy_reference=bond (ecco), rollback=never (error-control) "
                        "(docs/algorithms.md)")
    p.add_argument("--method", choices=["jacobi", "gauss-seidel"], help="fixed-step coupling (default jacobi)")
    p.add_argument("--extrapolation", type=int, choices=[0, 1, 2], help="input extrapolation order (default 0)")
    p.add_argument("--backend", choices=["inprocess", "process", "ray"],
                   help="where the FMUs run: in this process (default), one local process per FMU, or one Ray "
                        "actor per FMU (default: the system file's mc:Backend, else inprocess)")
    p.add_argument("--ray-address", metavar="HOST:PORT",
                   help="Ray cluster to use with --backend ray ('auto': the one `ray start` runs here; default: "
                        "start a local Ray instance)")
    p.add_argument("--place", action="append", metavar="COMPONENT=OPTIONS",
                   help="Ray placement of a component ('*' for all): windows=1 (custom resources), group=NAME "
                        "(components of a group share one actor: one call per macro step) or a JSON object of "
                        "actor options, e.g. '{\"num_cpus\": 1, \"resources\": {\"windows\": 1}}'; repeatable")
    p.add_argument("--call-timeout", type=float, metavar="S",
                   help="stop the run when a worker or actor does not answer within S seconds after "
                        "initialisation (a hung FMU)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="process backend: host the FMUs in N worker processes, round-robin (default: one per "
                        "FMU; fewer workers cost less per macro step, see docs/distributed.md)")
    p.add_argument("--checkpoint-every", type=float, metavar="T",
                   help="write a checkpoint (every FMU state + the master's) every T s of simulated time into "
                        "<out>/checkpoints/")
    p.add_argument("--resume", type=Path, metavar="DIR",
                   help="continue a run from its last checkpoint (result folder, checkpoints/ or one checkpoint)")
    p.add_argument("--out", type=Path, help="result folder (default results/<system name>)")
    p.add_argument("--scenario", type=Path, help="scenario file (JSON or YAML) with timed events")
    p.add_argument("--set", action="append", default=[], metavar="COMPONENT.VARIABLE=VALUE",
                   help="start value of a parameter or input over the system file's, repeatable (names checked)")
    p.add_argument("--variables", nargs="+", metavar="COMPONENT.VARIABLE", help="record only these")
    p.add_argument("--record-every", type=int, default=1, metavar="N",
                   help="record the start and every N-th macro step (default 1: every step)")
    p.add_argument("--flush-every", type=int, default=1000, help="recorded points per result flush")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_run)

    p = sub.add_parser("sweep", help="run a system over a grid or random samples of parameters (Ray tasks)")
    p.add_argument("system", type=Path, help="the system file, or a reference scenario's name (offshore_lift, "
                                             "deck_landing, moored_barge: its events file is the default scenario)")
    p.add_argument("--grid", action="append", default=[], metavar="COMP.VAR=V1,V2,...",
                   help="grid values of a parameter (or START:STOP:STEP); repeat for more parameters")
    p.add_argument("--random", type=int, default=0, metavar="N", help="N random samples (per grid point)")
    p.add_argument("--range", action="append", default=[], metavar="COMP.VAR=LO:HI",
                   help="uniform range of a random parameter; int:LO:HI for integers (e.g. wave seeds)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random samples")
    p.add_argument("--summary", action="append", default=[], metavar="COMP.VAR:STAT",
                   help="a result to tabulate per run, STAT one of max, min, absmax, mean, rms, std, final; "
                        "repeatable")
    p.add_argument("--aggregate", default="max", choices=["max", "min", "mean"],
                   help="how the heat map combines random samples of one grid cell (default max)")
    p.add_argument("--backend", default="ray", choices=["ray", "process", "serial"],
                   help="run the cases as Ray tasks (default), in local processes, or one after another here")
    p.add_argument("--ray-address", metavar="HOST:PORT",
                   help="Ray cluster address (default: a local Ray instance)")
    p.add_argument("--jobs", type=int, help="cases at a time for --backend process (default: CPU count)")
    p.add_argument("--stop", type=float)
    p.add_argument("--step", type=float)
    p.add_argument("--algorithm", choices=["fixed", "ecco", "error-control", "iterative"])
    p.add_argument("--scenario", type=Path)
    p.add_argument("--variables", nargs="+", metavar="COMPONENT.VARIABLE",
                   help="record only these (and what the summary and the criteria read)")
    p.add_argument("--record-every", type=int, default=1, metavar="N",
                   help="record the start and every N-th macro step of each run")
    p.add_argument("--criteria", type=Path, metavar="FILE",
                   help="operability criteria (YAML, docs/operability.md): the go/no-go table and the allowable-Hs "
                        "chart after the runs")
    p.add_argument("--scatter", type=Path, metavar="FILE",
                   help="wave scatter diagram (CSV) over the criteria file's: the operability in percent")
    p.add_argument("--out", type=Path, help="sweep folder (default results/<system>_sweep)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=_sweep)

    p = sub.add_parser("operability", help="judge the runs of a sweep against operability criteria (no new runs)")
    p.add_argument("sweep", type=Path, help="the sweep folder (sweep.json, summary.csv, runs/)")
    p.add_argument("--criteria", type=Path, metavar="FILE", help="operability criteria (YAML, docs/operability.md)")
    p.add_argument("--scatter", type=Path, metavar="FILE", help="wave scatter diagram (CSV) over the criteria file's")
    p.set_defaults(func=_operability)

    p = sub.add_parser("validate", help="check a system file against its FMUs")
    p.add_argument("system", type=Path)
    p.set_defaults(func=_validate)

    p = sub.add_parser("info", help="variables, units and capabilities of an FMU (and the port adapter a ship "
                                    "FMU needs), a system, or a port adapter kind (adapter:rigid_body)")
    p.add_argument("target", type=Path)
    p.set_defaults(func=_info)

    p = sub.add_parser("plot", help="plot results (a result folder or CSV) to PNG files")
    p.add_argument("results", type=Path)
    p.add_argument("variables", nargs="*", help="columns or prefixes to plot (default: all, grouped by component)")
    # the spelling run, sweep and simulate use for choosing variables: one spelling across the verbs
    p.add_argument("--variables", dest="variables_option", nargs="+", metavar="PREFIX",
                   help="the same as the positional prefixes (joined with them)")
    p.add_argument("--out", type=Path)
    p.set_defaults(func=_plot)

    p = sub.add_parser("export", help="write results as MATLAB .mat or netCDF-4/HDF5 (units and types kept)")
    p.add_argument("results", type=Path, help="a result folder (or results CSV)")
    p.add_argument("--to", required=True, choices=["mat", "netcdf"])
    p.add_argument("--out", type=Path, help="the file, or a folder for results.mat / results.nc in it (default: in "
                                            "the result folder)")
    p.set_defaults(func=_export)

    p = sub.add_parser("replay", help="3-D replay of a run: a ParaView .pvd series and an animated GIF")
    p.add_argument("results", type=Path, help="a result folder")
    p.add_argument("--system", type=Path, help="the system file that was run (default: the one metadata.json names)")
    p.add_argument("--out", type=Path, help="where replay/ and replay.gif go (default the result folder)")
    p.add_argument("--every", type=float, default=0.5, metavar="S", help="simulated seconds between frames")
    p.add_argument("--gif", action="store_true", help="also render replay.gif (matplotlib, headless)")
    p.add_argument("--fps", type=int, default=10, help="frames per second of the GIF")
    p.set_defaults(func=_replay)

    p = sub.add_parser("convert", help="convert a system file to SSP or OSP")
    p.add_argument("system", type=Path)
    p.add_argument("--to", required=True, choices=["ssp", "ssd", "osp"])
    p.add_argument("--out", type=Path)
    p.add_argument("--initial-inputs", action="store_true",
                   help="give every connected input the value it has after initialisation as its start value, for "
                        "masters that set no inputs before initialising (FMPy's simulate_ssp)")
    p.add_argument("--power-bonds", choices=["auto", "write", "omit"], default="auto",
                   help="OSP only: write the powerBond attributes when libcosim can load them (auto: at most one "
                        "bond), always, or never")
    p.set_defaults(func=_convert)

    p = sub.add_parser("build", help="build one FMU per component into build/fmus")
    p.add_argument("--out", type=Path, default=Path("build/fmus"))
    p.add_argument("--portable", action="store_true", help="bundle a Python runtime (docs/fmu_runtime.md)")
    p.add_argument("models", nargs="*")
    p.set_defaults(func=_build)

    p = sub.add_parser("simulate", help="run one FMU on its own and write CSV and a plot")
    p.add_argument("fmu", type=Path)
    p.add_argument("--stop", type=float, help="stop time [s] (default: the FMU's DefaultExperiment, else 10 s)")
    p.add_argument("--step", type=float, help="communication step [s] (default: the FMU's DefaultExperiment, else "
                                              "1/500 of the run)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="start value, repeatable")
    p.add_argument("--variables", nargs="+", metavar="NAME", help="outputs to record (default: all)")
    p.add_argument("--out", type=Path, default=Path("results"))
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_simulate)

    p = sub.add_parser("demo", help="build the FMUs and run a reference scenario (default: the offshore lift)")
    p.add_argument("scenario", nargs="?", default="offshore_lift",
                   choices=["offshore_lift", "deck_landing", "moored_barge", "block_turnover"])
    p.add_argument("--out", type=Path, default=Path("results/demo"))
    p.add_argument("--stop", type=float, help="stop time [s] (default: the scenario's)")
    p.add_argument("--fmus", type=Path, help="FMU folder (default build/fmus; rebuilt when the sources changed)")
    p.add_argument("--no-replay", action="store_true", help="no 3-D replay (replay/replay.pvd, replay.gif)")
    p.set_defaults(func=_demo)

    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    args = build_parser().parse_args(argv)
    verb = f"marine-cosim {args.command}"
    try:
        with warnings.catch_warnings():
            if not debug:
                # one line per warning, as errors are, not Python's "file:line: Category: ..." and source line
                warnings.showwarning = lambda message, category, *_, **__: print(
                    f"{verb}: warning: {one_line(message)}", file=sys.stderr)
            status = args.func(args)
            sys.stdout.flush()               # a closed pipe shows here, not at the interpreter's exit
            return status
    except BrokenPipeError:
        # the reader of our output went away (`marine-cosim info X | head`): nothing is wrong with
        # the command; exit as a process killed by SIGPIPE would, and keep the interpreter's final
        # flush of the dead pipe from raising again
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):        # stdout is no file (captured): nothing left to flush
            pass
        return 141
    except KeyboardInterrupt:
        print(f"{verb}: interrupted", file=sys.stderr)
        return 130
    except MarineCosimError as exc:
        if debug:
            raise
        print(f"{verb}: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:
        if debug:
            raise
        print(f"{verb}: internal error: {type(exc).__name__}: {one_line(exc)} (a bug: run again with --debug to "
              "see the traceback, and report it)", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
