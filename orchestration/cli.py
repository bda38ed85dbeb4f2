"""The ``marine-cosim`` command.

    marine-cosim build [--out DIR] [MODEL ...]          build the FMUs (build_fmus.py)
    marine-cosim simulate FMU [--stop-time T] [--step H] [--set NAME=VALUE ...] [--out DIR]
    marine-cosim demo [--out DIR]                        build the FMUs and run scenarios/payload_drop.json
    marine-cosim docs [--out docs/interfaces.md]         regenerate the FMU interface tables
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "scenarios" / "payload_drop.json"


def _build(args) -> int:
    import build_fmus

    for path in build_fmus.build_all(args.out, args.models):
        print(path)
    return 0


def _simulate(args) -> int:
    from orchestration.standalone import parse_assignments, run_fmu

    csv_path = run_fmu(args.fmu, args.out, args.stop_time, args.step, parse_assignments(args.set),
                       args.output or None, plot=not args.no_plot)
    print(f"results: {csv_path}" + ("" if args.no_plot else f" and {csv_path.with_suffix('.png')}"))
    return 0


def _demo(args) -> int:
    import build_fmus
    from orchestration.standalone import run_fmu

    scenario = json.loads(DEMO.read_text())
    fmu_dir = args.out / "fmus"
    print(f"building FMUs into {fmu_dir} ...", file=sys.stderr)
    build_fmus.build_all(fmu_dir)
    print(f"scenario {DEMO.name}: {scenario['description']}", file=sys.stderr)
    csv_path = run_fmu(fmu_dir / f"{scenario['fmu']}.fmu", args.out, scenario["stop_time"], scenario["step_size"],
                       scenario["start_values"], scenario["outputs"],
                       title=f"{scenario['fmu']}: {DEMO.stem.replace('_', ' ')}")
    print(f"results: {csv_path} and {csv_path.with_suffix('.png')}")
    return 0


def _docs(args) -> int:
    from orchestration.interfaces_doc import main as docs_main

    return docs_main(["--out", str(args.out)] + (["--fmus", str(args.fmus)] if args.fmus else []))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="marine-cosim", description="FMI 2.0 co-simulation of ship mechanical systems")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("build", help="build one FMU per component into build/fmus")
    p.add_argument("--out", type=Path, default=Path("build/fmus"))
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

    p = sub.add_parser("demo", help="build the FMUs and run the reference scenario (scenarios/payload_drop.json)")
    p.add_argument("--out", type=Path, default=Path("results/demo"))
    p.set_defaults(func=_demo)

    p = sub.add_parser("docs", help="regenerate docs/interfaces.md from the FMUs")
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "interfaces.md")
    p.add_argument("--fmus", type=Path, help="folder with built FMUs (default: build them)")
    p.set_defaults(func=_docs)

    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, FileNotFoundError) as exc:
        print(f"marine-cosim {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
