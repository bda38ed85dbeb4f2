"""The reference scenarios by name: their system and events files, the FMUs they need (built when
missing or stale), and the copy of the system file a run uses (FMUs redirected to the build folder)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from orchestration.runs.reference.barge import moored_barge_events, moored_barge_system
from orchestration.runs.reference.landing import deck_landing_events, deck_landing_system
from orchestration.runs.reference.lift import CRANE_FILE, lift_crane_data, offshore_lift_events, offshore_lift_system
from orchestration.runs.reference.paths import DEFAULT_FMU_DIR, ROOT, SCENARIOS
from orchestration.runs.reference.turnover import block_turnover_events, block_turnover_system, write_turnover_files

NAMES = ("offshore_lift", "deck_landing", "moored_barge", "block_turnover")
MODELS = {"offshore_lift": ("Ship", "Crane", "Cable", "Winch", "Payload"),
          "deck_landing": ("Ship", "Crane", "Cable", "Winch", "Payload", "Contact"),
          "moored_barge": ("Ship", "Cable"),
          "block_turnover": ("Ship", "Crane", "RiggedBlock")}


def system_file(name: str) -> Path:
    return SCENARIOS / name / f"{name}.ssd"


def events_file(name: str) -> Path | None:
    path = SCENARIOS / name / "events.yaml"
    return path if path.is_file() else None


BUILDERS = {"offshore_lift": (offshore_lift_system, offshore_lift_events),
            "deck_landing": (deck_landing_system, deck_landing_events),
            "moored_barge": (moored_barge_system, moored_barge_events),
            "block_turnover": (block_turnover_system, block_turnover_events)}


def write_systems(names: Sequence[str] = NAMES, fmu_dir: Path = DEFAULT_FMU_DIR) -> list[Path]:
    """Regenerate ``scenarios/<name>/<name>.ssd`` and ``events.yaml`` from the builders (FMU sources
    relative to the .ssd, pointing at build/fmus)."""
    import yaml

    from orchestration.system.ssp import write_ssp

    ensure_fmus(sorted({m for n in names for m in MODELS[n]}), fmu_dir)
    crane = ROOT / CRANE_FILE
    crane.parent.mkdir(parents=True, exist_ok=True)
    crane.write_text(json.dumps(lift_crane_data(), indent=2) + "\n")
    written = [crane]
    if "block_turnover" in names:
        written += write_turnover_files()
    for name in names:
        build, events = BUILDERS[name]
        path = system_file(name)
        ev = path.parent / "events.yaml"
        ev.write_text(yaml.safe_dump(events(), sort_keys=False, width=100))
        system = build(fmu_dir)
        system.scenario = ev               # the file names its events (mc:Scenario): an .ssp carries them
        write_ssp(system, path)
        written += [path, ev]
    return written


def fmu_is_current(fmu: Path) -> bool:
    """True if ``fmu`` was built by build_fmus.py from exactly this checkout's sources for this Python."""
    import build_fmus

    return build_fmus.is_current(fmu)


def ensure_fmus(models: Sequence[str], fmu_dir: Path | None = None, log=print) -> Path:
    """Build the ``models`` (e.g. "Ship") into ``fmu_dir`` (default build/fmus) unless they are
    there and current; returns the folder."""
    import build_fmus

    return build_fmus.ensure_built(list(models), Path(fmu_dir or DEFAULT_FMU_DIR), log=log)


def _our_models() -> set[str]:
    import build_fmus

    return set(build_fmus.find_adapters())


def _our_fmu(path: Path) -> bool:
    """A build/fmus/<Model>.fmu of one of our adapters (the runner builds and redirects those)."""
    return path.parent.resolve() == DEFAULT_FMU_DIR.resolve() and path.stem in _our_models()


def prepare_system_file(name: str, fmu_dir: Path, out_dir: Path, source: Path | None = None) -> Path:
    """Copy the scenario's system file into ``out_dir``: components that point at our
    build/fmus/<Model>.fmu are redirected to ``fmu_dir`` (others, e.g. a third-party FMU, keep
    their file), and every other file it refers to (file-valued start values, the scenario) is
    written relative to the copy; returns the copy."""
    from lxml import etree

    from orchestration.system.file_values import FileValue, resolve_file_value
    from orchestration.system.ssp import MC_NS, SSD_NS, SSV_NS, relative_uri, resolve_uri

    source = Path(source or system_file(name))
    out_dir = Path(out_dir)
    tree = etree.parse(str(source))
    for comp in tree.iter(f"{{{SSD_NS}}}Component"):
        uri = comp.get("source")
        if not uri:
            continue
        try:
            path = resolve_uri(str(source), comp, uri, source.parent)
        except Exception:
            path = (source.parent / uri).resolve()
        if _our_fmu(path):
            path = Path(fmu_dir) / path.name
        comp.set("source", relative_uri(Path(path).resolve(), out_dir.resolve()))
    for value in tree.iter(f"{{{SSV_NS}}}String"):
        resolved = resolve_file_value(value.get("value", ""), source.parent)
        if isinstance(resolved, FileValue):
            value.set("value", relative_uri(resolved.path, out_dir.resolve()))
    for scenario in tree.iter(f"{{{MC_NS}}}Scenario"):
        scenario.set("source", relative_uri((source.parent / scenario.get("source", "")).resolve(), out_dir.resolve()))
    target = out_dir / source.name
    target.parent.mkdir(parents=True, exist_ok=True)
    tree.write(str(target), xml_declaration=True, encoding="UTF-8", pretty_print=True)
    return target


def _models_of(path: Path) -> list[str]:
    """Our models a system file refers to in build/fmus (what ensure_fmus must provide)."""
    from lxml import etree

    from orchestration.system.ssp import SSD_NS

    models = []
    ours = _our_models()
    for comp in etree.parse(str(path)).iter(f"{{{SSD_NS}}}Component"):
        stem = Path(comp.get("source", "")).stem
        if stem in ours and stem not in models:
            models.append(stem)
    return models


def load_reference(name: str, fmu_dir: Path | None = None, out_dir: Path | None = None, log=print):
    """(System, Scenario or None, system file run) of a reference scenario, FMUs ensured."""
    from orchestration.master.manipulators.scenario import load_scenario
    from orchestration.system.files import load_system

    if name not in NAMES:
        raise ValueError(f"unknown reference scenario {name!r}; choose one of {', '.join(NAMES)}")
    fmu_dir = ensure_fmus(_models_of(system_file(name)), fmu_dir, log)
    out_dir = Path(out_dir) if out_dir is not None else Path(fmu_dir).parent / "systems"
    path = prepare_system_file(name, fmu_dir, out_dir)
    system = load_system(path)
    events = events_file(name)
    scenario = load_scenario(events) if events else None
    return system, scenario, path
