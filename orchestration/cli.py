"""The ``marine-cosim`` command.

    marine-cosim run SYSTEM [--stop T] [--step H] [--algorithm fixed|ecco|error-control|iterative]
                     [--method jacobi|gauss-seidel] [--rtol R] [--atol A] [--extrapolation 0|1|2]
                     [--backend inprocess|process|ray] [--ray-address HOST:PORT] [--place COMP=OPTIONS]
                     [--checkpoint-every T] [--out DIR] [--scenario FILE]
    marine-cosim run --resume DIR [--stop T] [--backend ...]   continue from the last checkpoint
    marine-cosim sweep SYSTEM --grid COMP.VAR=V1,V2,... [--random N --range COMP.VAR=LO:HI --seed S]
                     --summary COMP.VAR:max [--backend ray|process|serial] [--address HOST:PORT] [--out DIR]
    marine-cosim validate SYSTEM
    marine-cosim info FMU|SYSTEM
    marine-cosim plot RESULTS [VARIABLE ...] [--out DIR]
    marine-cosim convert SYSTEM --to ssp|ssd|osp [--out PATH]
    marine-cosim build [--out DIR] [MODEL ...]          build the FMUs (build_fmus.py)
    marine-cosim simulate FMU [--stop-time T] [--step H] [--set NAME=VALUE ...] [--out DIR]
    marine-cosim demo [--out DIR]                        build the FMUs and run the reference scenario
    marine-cosim docs [--out docs/interfaces.md]         regenerate the FMU interface tables

Errors end with exit status 2 and one message; ``--debug`` shows the traceback.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class Progress:
    """One status line on stderr: simulated time, real-time factor, ETA. ``start`` None: the time
    of the first report (a resumed run)."""

    def __init__(self, start: float | None, stop: float | None = None, enabled: bool = True):
        self.start, self.stop, self.enabled = start, stop, enabled
        self.t0 = time.perf_counter()
        self.last = -1.0
        self.tty = sys.stderr.isatty()

    def __call__(self, t: float, stop: float) -> None:
        now = time.perf_counter()
        if self.start is None:
            self.start, self.t0 = t, now
            return
        if not self.enabled or (now - self.last < (0.25 if self.tty else 5.0) and t < stop):
            return
        self.last = now
        elapsed = now - self.t0
        done = (t - self.start) / max(stop - self.start, 1e-300)
        rtf = (t - self.start) / elapsed if elapsed > 0 else float("inf")
        eta = (stop - t) / rtf if rtf > 0 else float("inf")
        bar = "#" * int(30 * done) + "-" * (30 - int(30 * done))
        line = (f"[{bar}] t = {t:10.3f} / {stop:g} s  {100 * done:5.1f} %  {rtf:8.1f}x real time  "
                f"ETA {eta:7.1f} s")
        print(("\r" + line) if self.tty else line, end="" if self.tty else "\n", file=sys.stderr, flush=True)
        if t >= stop and self.tty:
            print(file=sys.stderr)


# ---------------------------------------------------------------------- system commands

def _load(path: Path):
    from orchestration.systemfile import load_system

    return load_system(path)


def _run(args) -> int:
    from orchestration.runner import RunSettings, resume_run, run_system
    from orchestration.backends import parse_place_arguments

    placement = parse_place_arguments(args.place)
    log = lambda message: print(message, file=sys.stderr)
    if args.resume is not None:
        if args.system is not None:
            raise CliError("give either SYSTEM or --resume DIR (the checkpoint knows its system file)")
        overrides = {"stop": args.stop, "backend": args.backend, "ray_address": args.ray_address,
                     "placement": placement or None, "call_timeout": args.call_timeout,
                     "workers": args.workers, "checkpoint_every": args.checkpoint_every, "quiet": args.quiet}
        report = resume_run(args.resume, overrides, log=log, progress=Progress(None, enabled=not args.quiet))
        print(report.line())
        return 0
    if args.system is None:
        raise CliError("give the system file to run (or --resume DIR)")
    options = {key: getattr(args, key) for key in ("method", "extrapolation", "rtol", "atol")
               if getattr(args, key, None) is not None}
    settings = RunSettings(system=str(args.system), out=str(args.out) if args.out else None, stop=args.stop,
                           step=args.step, algorithm=args.algorithm, options=options,
                           scenario=str(args.scenario) if args.scenario else None, variables=args.variables,
                           flush_every=args.flush_every, backend=args.backend, ray_address=args.ray_address,
                           placement=placement, call_timeout=args.call_timeout, workers=args.workers,
                           checkpoint_every=args.checkpoint_every, quiet=args.quiet)
    report = run_system(settings, log=log, progress=Progress(None, enabled=not args.quiet))
    print(report.line())
    return 0


def write_algorithm_log(path: Path, log: list[dict]) -> None:
    """Kept for callers of the former location (now orchestration.runner)."""
    from orchestration.runner import write_algorithm_log as write

    write(path, log)


def _sweep(args) -> int:
    from orchestration.sweep import SweepSpec, run_sweep

    spec = SweepSpec.from_arguments(args.grid, args.random, args.range, args.seed, args.summary,
                                    aggregate=args.aggregate)
    result = run_sweep(Path(args.system), spec, out=args.out, runner=args.backend, address=args.address,
                       jobs=args.jobs, stop=args.stop, step=args.step, algorithm=args.algorithm,
                       scenario=args.scenario, variables=args.variables, quiet=args.quiet,
                       log=lambda message: print(message, file=sys.stderr))
    print(f"sweep: {result.done} runs done, {result.failed} failed in {result.wall:.1f} s; "
          f"summary {result.summary_csv}" + "".join(f"; heat map {p}" for p in result.heatmaps))
    return 0 if result.failed == 0 else 1


def _validate(args) -> int:
    from orchestration.validation import validate_system

    system = _load(args.system)
    report = validate_system(system)
    print(report if report.problems else f"{args.system}: valid ({len(system.components)} components, "
                                         f"{len(system.connections)} connections)")
    return 0 if report.ok else 1


def _info(args) -> int:
    from fmpy import read_model_description

    path = args.target
    if path.suffix.lower() == ".fmu":
        md = read_model_description(str(path))
        print(f"{md.modelName} ({path.name}): FMI {md.fmiVersion}, generated by {md.generationTool}")
        if md.description:
            print(f"  {md.description}")
        cs = md.coSimulation
        if cs:
            caps = [k for k in ("canHandleVariableCommunicationStepSize", "canGetAndSetFMUstate",
                                "canSerializeFMUstate", "canInterpolateInputs", "providesDirectionalDerivative")
                    if getattr(cs, k, False)]
            print(f"  co-simulation: {', '.join(caps) or 'no optional capabilities'}")
        if md.defaultExperiment:
            de = md.defaultExperiment
            print(f"  default experiment: start {de.startTime}, stop {de.stopTime}, step {de.stepSize}")
        print(f"  {'variable':40s} {'causality':10s} {'type':8s} {'unit':10s} {'start':>12s}  description")
        for v in md.modelVariables:
            start = "" if v.start is None else str(v.start)
            unit = v.unit or (v.declaredType.unit if v.declaredType is not None else "") or ""
            print(f"  {v.name:40s} {v.causality or '':10s} {v.type:8s} {unit:10s} {start:>12s}  {v.description or ''}")
        return 0
    system = _load(path)
    print(f"system {system.name} ({path}): start {system.start_time}, stop {system.stop_time}, "
          f"base step {system.base_step}, algorithm {system.algorithm}")
    for c in system.components.values():
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


def _plot(args) -> int:
    from orchestration.observers import load_results
    from orchestration.plotting import plot_results

    results = load_results(args.results)
    out = args.out or (args.results if args.results.is_dir() else args.results.parent) / "plots"
    paths = plot_results(results, args.variables or None, out)
    for p in paths:
        print(p)
    return 0


def _convert(args) -> int:
    from orchestration.systemfile import save_system

    system = _load(args.system)
    out = args.out or args.system.with_name(f"{system.name}_{args.to}")
    print(save_system(system, args.to, out))
    return 0


# ---------------------------------------------------------------------- FMU commands

def _build(args) -> int:
    import build_fmus

    for path in build_fmus.build_all(args.out, args.models, portable=args.portable):
        print(path)
    return 0


def _simulate(args) -> int:
    from orchestration.standalone import parse_assignments, run_fmu

    csv_path = run_fmu(args.fmu, args.out, args.stop_time, args.step, parse_assignments(args.set),
                       args.output or None, plot=not args.no_plot)
    print(f"results: {csv_path}" + ("" if args.no_plot else f" and {csv_path.with_suffix('.png')}"))
    return 0


def _demo(args) -> int:
    """The README's main job: the offshore-lift reference scenario (or another one) in-process."""
    from orchestration.reference_scenarios import run_reference

    out = run_reference(args.scenario, args.out, stop_time=args.stop, fmu_dir=args.fmus)
    print(f"results, summary and plots: {out}")
    return 0


def _report(args) -> int:
    """Every validation case (pytest -m validation) into docs/validation_report.md with plots."""
    from orchestration.validation_report import main as report_main

    argv = (["--out", str(args.out)] if args.out else []) + (["--quick"] if args.quick else [])
    argv += [x for n in args.note for x in ("--note", n)]
    return report_main(argv + (["--", *args.pytest_args] if args.pytest_args else []))


def _docs(args) -> int:
    from orchestration.interfaces_doc import main as docs_main

    return docs_main(["--out", str(args.out)] + (["--fmus", str(args.fmus)] if args.fmus else []))


class CliError(Exception):
    """A user-facing error: printed as one message."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="marine-cosim", description="FMI 2.0 co-simulation of ship mechanical systems")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
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
    p.add_argument("--variables", nargs="+", metavar="COMPONENT.VARIABLE", help="record only these")
    p.add_argument("--flush-every", type=int, default=1000, help="communication points per result flush")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_run)

    p = sub.add_parser("sweep", help="run a system over a grid or random samples of parameters (Ray tasks)")
    p.add_argument("system", type=Path)
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
    p.add_argument("--address", metavar="HOST:PORT", help="Ray cluster address (default: a local Ray instance)")
    p.add_argument("--jobs", type=int, help="cases at a time for --backend process (default: CPU count)")
    p.add_argument("--stop", type=float)
    p.add_argument("--step", type=float)
    p.add_argument("--algorithm", choices=["fixed", "ecco", "error-control", "iterative"])
    p.add_argument("--scenario", type=Path)
    p.add_argument("--variables", nargs="+", metavar="COMPONENT.VARIABLE", help="record only these (and the "
                                                                                "summary's)")
    p.add_argument("--out", type=Path, help="sweep folder (default results/<system>_sweep)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=_sweep)

    p = sub.add_parser("validate", help="check a system file against its FMUs")
    p.add_argument("system", type=Path)
    p.set_defaults(func=_validate)

    p = sub.add_parser("info", help="variables, units and capabilities of an FMU or a system")
    p.add_argument("target", type=Path)
    p.set_defaults(func=_info)

    p = sub.add_parser("plot", help="plot results (a result folder or CSV) to PNG files")
    p.add_argument("results", type=Path)
    p.add_argument("variables", nargs="*", help="columns or prefixes to plot (default: all, grouped by component)")
    p.add_argument("--out", type=Path)
    p.set_defaults(func=_plot)

    p = sub.add_parser("convert", help="convert a system file to SSP or OSP")
    p.add_argument("system", type=Path)
    p.add_argument("--to", required=True, choices=["ssp", "ssd", "osp"])
    p.add_argument("--out", type=Path)
    p.set_defaults(func=_convert)

    p = sub.add_parser("build", help="build one FMU per component into build/fmus")
    p.add_argument("--out", type=Path, default=Path("build/fmus"))
    p.add_argument("--portable", action="store_true", help="bundle a Python runtime (docs/fmu_runtime.md)")
    p.add_argument("models", nargs="*")
    p.set_defaults(func=_build)

    p = sub.add_parser("simulate", help="run one FMU on its own and write CSV and a plot")
    p.add_argument("fmu", type=Path)
    p.add_argument("--stop-time", type=float)
    p.add_argument("--step", type=float, help="communication step [s] (default: the FMU's DefaultExperiment)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="start value, repeatable")
    p.add_argument("--output", action="append", metavar="NAME", help="output to record (default: all)")
    p.add_argument("--out", type=Path, default=Path("results"))
    p.add_argument("--no-plot", action="store_true")
    p.set_defaults(func=_simulate)

    p = sub.add_parser("demo", help="build the FMUs and run a reference scenario (default: the offshore lift)")
    p.add_argument("scenario", nargs="?", default="offshore_lift",
                   choices=["offshore_lift", "deck_landing", "moored_barge"])
    p.add_argument("--out", type=Path, default=Path("results/demo"))
    p.add_argument("--stop", type=float, help="stop time [s] (default: the scenario's)")
    p.add_argument("--fmus", type=Path, help="FMU folder (default build/fmus; rebuilt when the sources changed)")
    p.set_defaults(func=_demo)

    p = sub.add_parser("report", help="run every validation case (pytest -m validation) and write "
                                      "docs/validation_report.md")
    p.add_argument("--out", type=Path, help="default docs/validation_report.md (plots in img/ beside it)")
    p.add_argument("--quick", action="store_true", help="component-level cases only (no FMU runs)")
    p.add_argument("--note", action="append", default=[], help="a note for the report, repeatable")
    p.add_argument("pytest_args", nargs="*", help="extra pytest arguments after --")
    p.set_defaults(func=_report)

    p = sub.add_parser("docs", help="regenerate docs/interfaces.md from the FMUs")
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "interfaces.md")
    p.add_argument("--fmus", type=Path, help="folder with built FMUs (default: build them)")
    p.set_defaults(func=_docs)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("marine-cosim: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if args.debug:
            raise
        print(f"marine-cosim {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
