"""Build the FMI 3.0 test FMUs (feedthrough3.py, stair3.py, vessel_6dof.py) with pythonfmu3.

    python -m tests.models.fmi3.build OUT_DIR [vessel]
"""
from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent


def build_fmi3_fmus(out_dir: Path) -> dict[str, Path]:
    """``Feedthrough3.fmu`` and ``Stair3.fmu`` in ``out_dir``; model name -> path."""
    from pythonfmu3.builder import FmuBuilder

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return {name: Path(FmuBuilder.build_FMU(HERE / script, dest=out))
            for name, script in (("Feedthrough3", "feedthrough3.py"), ("Stair3", "stair3.py"))}


def build_vessel_6dof_fmu(out_dir: Path) -> Path:
    """``Vessel6Dof.fmu`` (vessel_6dof.py: a 6-DOF ship, generalised force in, Euler pose out, z up) in
    ``out_dir``; the third-party 6-DOF ship of the ship swap (docs/ship_swap.md)."""
    from pythonfmu3.builder import FmuBuilder

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return Path(FmuBuilder.build_FMU(HERE / "vessel_6dof.py", dest=out))


def main(argv: list[str] | None = None) -> int:
    import sys

    args = sys.argv[1:] if argv is None else argv
    usage = "usage: python -m tests.models.fmi3.build OUT_DIR [vessel]"
    if any(a in ("-h", "--help") for a in args):
        print(usage)
        return 0
    if len(args) not in (1, 2) or (len(args) == 2 and args[1] != "vessel") or any(a.startswith("-") for a in args):
        print(usage, file=sys.stderr)
        return 2
    if len(args) == 2:
        print(build_vessel_6dof_fmu(Path(args[0])))
    else:
        for path in build_fmi3_fmus(Path(args[0])).values():
            print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
