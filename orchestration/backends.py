"""Execution backends by name, and where each FMU instance runs.

=============  ==========================================================================
``inprocess``  (default) every FMU in the master's process (slaves.InProcessSlave)
``process``    local OS worker processes, by default one per FMU: Python FMUs step in parallel
               despite the GIL (process_backend.ProcessSlave); ``workers=N`` hosts the FMUs in N
               processes, round-robin (less overhead per macro step with many small FMUs)
``ray``        one Ray actor per FMU, on any node of a Ray cluster, placed by resources
               (ray_backend.RaySlave); ``pip install 'marine-cosim[distributed]'``
=============  ==========================================================================

Every master algorithm runs on every backend: they all implement orchestration.slaves.Slave.

Choosing it: ``marine-cosim run --backend ray [--ray-address HOST:PORT] [--place COMP=JSON]``,
or in an SSP system file, next to the algorithm (read here from the .ssd; other readers ignore
it)::

    <ssd:DefaultExperiment ...><ssd:Annotations>
      <ssc:Annotation type="org.marine-cosim">
        <mc:Backend name="ray" address="auto" callTimeout="120">
          <mc:Placement component="crane" numCpus="1">
            <mc:Resource name="windows" value="1"/>     <!-- a node started with {"windows": 1} -->
          </mc:Placement>
          <mc:Placement component="payload" group="light"/>   <!-- one actor for the group -->
          <mc:Placement component="winch" group="light"/>
        </mc:Backend>
        <!-- or: <mc:Backend name="process" workers="2"/>  (all FMUs in 2 worker processes) -->
      </ssc:Annotation>
    </ssd:Annotations></ssd:DefaultExperiment>

``component="*"`` applies to every component without its own placement. Systems without such an
annotation (OSP files) can give ``backend`` as an algorithm option (``mc:Option`` /
``algorithm_options``). The command line wins over the file.
"""
from __future__ import annotations

import json
import math
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable
from xml.etree import ElementTree

from orchestration.slaves import Slave
from orchestration.system import System, SystemFileError

BACKENDS = ("inprocess", "process", "ray")
MC_NS = "urn:marine-cosim:ssp:annotations:1"
_PLACEMENT_ATTRIBUTES = {"numCpus": ("num_cpus", float), "numGpus": ("num_gpus", float), "memory": ("memory", float)}


class BackendError(RuntimeError):
    """A backend that cannot be used as asked; the message says why and what to do."""


@dataclass
class BackendConfig:
    """Which backend, where its cluster is and where each component's FMU runs."""

    name: str = "inprocess"
    address: str | None = None                               # Ray cluster ("host:port", "auto"); None: local
    placement: dict[str, dict[str, Any]] = field(default_factory=dict)   # component or "*" -> actor options
    call_timeout: float | None = None                        # s without an answer before a worker counts as hung
    origin: str = "default"
    workers: int | None = None                               # process backend: worker processes (None: one per FMU)

    def __post_init__(self) -> None:
        if self.name not in BACKENDS:
            raise BackendError(f"unknown backend {self.name!r} ({self.origin}); choose one of {', '.join(BACKENDS)}")
        if self.call_timeout is not None and not (self.call_timeout > 0 and math.isfinite(self.call_timeout)):
            raise BackendError(f"call timeout must be a positive number of seconds, not {self.call_timeout!r}")
        if self.workers is not None:
            if isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1:
                raise BackendError(f"workers must be a whole number >= 1, not {self.workers!r} ({self.origin})")
            if self.name != "process":
                raise BackendError(f"workers (FMUs per worker process) needs the process backend, not "
                                   f"{self.name!r} ({self.origin})")

    def options_for(self, component: str) -> dict[str, Any]:
        return dict(self.placement.get(component, self.placement.get("*", {})))

    def describe(self) -> dict:
        described = {"backend": self.name, "address": self.address, "placement": self.placement,
                     "call_timeout": self.call_timeout}
        if self.workers is not None:
            described["workers"] = self.workers
        return described


# ---------------------------------------------------------------------- system file

def _ssd_root(path: Path):
    """The parsed SystemStructure.ssd of a .ssd file, .ssp archive or folder (None for other files)."""
    path = Path(path)
    try:
        if path.is_dir() and (path / "SystemStructure.ssd").is_file():
            return ElementTree.parse(path / "SystemStructure.ssd").getroot()
        if path.suffix.lower() == ".ssd":
            return ElementTree.parse(path).getroot()
        if path.suffix.lower() == ".ssp" or (path.is_file() and zipfile.is_zipfile(path)):
            with zipfile.ZipFile(path) as zf:
                return ElementTree.fromstring(zf.read("SystemStructure.ssd"))
    except (OSError, KeyError, zipfile.BadZipFile, ElementTree.ParseError):
        return None
    return None


def _number(text: str, where: str) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        raise SystemFileError(f"{where}: {text!r} is not a number") from None


def backend_from_system(system: System) -> BackendConfig | None:
    """The backend the system file asks for (mc:Backend annotation, else the ``backend``
    algorithm option), or None."""
    config = backend_annotation(system)
    if config is None:
        name = system.algorithm_options.get("backend")
        if not name:
            return None
        placement = {}
        for key, value in system.algorithm_options.items():
            if key.startswith("placement."):
                placement[key.split(".", 1)[1]] = parse_placement_value(str(value), f"option {key}")
        return BackendConfig(str(name), system.algorithm_options.get("ray_address"), placement,
                             origin=f"{system.source_file}: algorithm option backend")
    return config


def backend_annotation(system: System) -> BackendConfig | None:
    """The backend of the system file's mc:Backend annotation, or None (no such annotation:
    what the SSP writer carries over)."""
    root = _ssd_root(system.source_file) if system.source_file else None
    element = None if root is None else next(root.iter(f"{{{MC_NS}}}Backend"), None)
    if element is None:
        return None
    where = f"{system.source_file}: mc:Backend"
    name = element.get("name")
    if not name:
        raise SystemFileError(f"{where}: the name attribute is missing ({', '.join(BACKENDS)})")
    placement: dict[str, dict[str, Any]] = {}
    for p in element.iter(f"{{{MC_NS}}}Placement"):
        component = p.get("component")
        if not component:
            raise SystemFileError(f"{where}/mc:Placement: the component attribute is missing")
        options: dict[str, Any] = {}
        for attribute, (key, kind) in _PLACEMENT_ATTRIBUTES.items():
            if p.get(attribute) is not None:
                options[key] = kind(_number(p.get(attribute), f"{where}/mc:Placement[{component}] {attribute}"))
        resources = {}
        for r in p.iter(f"{{{MC_NS}}}Resource"):
            if not r.get("name"):
                raise SystemFileError(f"{where}/mc:Placement[{component}]/mc:Resource: the name attribute is missing")
            resources[r.get("name")] = _number(r.get("value", "1"), f"{where}/mc:Placement[{component}]/mc:Resource")
        if resources:
            options["resources"] = resources
        if p.get("group"):
            options["group"] = p.get("group")
        placement[component] = options
    timeout = element.get("callTimeout")
    workers = element.get("workers")
    if workers is not None:
        count = _number(workers, f"{where} workers")
        if count != int(count) or count < 1:
            raise SystemFileError(f"{where} workers: {workers!r} is not a whole number >= 1")
        workers = int(count)
    try:
        return BackendConfig(name, element.get("address"), placement,
                             _number(timeout, f"{where} callTimeout") if timeout is not None else None, origin=where,
                             workers=workers)
    except BackendError as exc:
        raise SystemFileError(str(exc)) from None


def parse_placement_value(text: str, where: str) -> dict[str, Any]:
    """Actor options from JSON (``{"num_cpus": 1, "resources": {"windows": 1}}``) or the short form
    ``windows=1,licence=2`` (custom resources), where ``group=NAME`` puts the component into a
    actor group (one actor for all its members)."""
    text = text.strip()
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BackendError(f"{where}: {text!r} is not valid JSON: {exc}") from None
        if not isinstance(value, dict):
            raise BackendError(f"{where}: expected a JSON object of Ray actor options, got {text!r}")
        return value
    resources, options = {}, {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, number = item.partition("=")
        if key.strip() == "group":
            if not number.strip():
                raise BackendError(f"{where}: group needs a name (group=NAME)")
            options["group"] = number.strip()
            continue
        try:
            resources[key.strip()] = float(number) if sep else 1.0
        except ValueError:
            raise BackendError(f"{where}: {item!r}: the amount of resource {key!r} is not a number") from None
    if resources:
        options["resources"] = resources
    if not options:
        raise BackendError(f"{where}: no placement given (e.g. windows=1, group=light or a JSON object)")
    return options


def parse_place_arguments(items: list[str] | None) -> dict[str, dict[str, Any]]:
    """``--place COMPONENT=OPTIONS`` arguments (see :func:`parse_placement_value`)."""
    placement = {}
    for item in items or []:
        component, sep, value = item.partition("=")
        if not sep or not component.strip():
            raise BackendError(f"--place {item!r}: expected COMPONENT=OPTIONS, e.g. crane=windows=1 or "
                               "crane='{\"num_cpus\": 1, \"resources\": {\"windows\": 1}}'")
        placement[component.strip()] = parse_placement_value(value, f"--place {item!r}")
    return placement


def resolve_backend(system: System, name: str | None = None, address: str | None = None,
                    placement: dict[str, dict] | None = None, call_timeout: float | None = None,
                    workers: int | None = None) -> BackendConfig:
    """The backend for a run: the command line's choices over the system file's over the default."""
    config = backend_from_system(system) or BackendConfig()
    if name is not None and name != config.name:
        # the file's placement (workers) belongs to its own backend choice: it only applies if
        # that is ray (process) too
        config = BackendConfig(name, config.address, config.placement if name == "ray" else {},
                               config.call_timeout, origin="--backend",
                               workers=config.workers if name == "process" else None)
    if address is not None:
        config.address = address
    if placement:
        if config.name != "ray":
            raise BackendError(f"placement (--place) needs the ray backend, not {config.name!r}")
        config.placement = {**config.placement, **placement}
    if call_timeout is not None:
        config.call_timeout = call_timeout
    if workers is not None:
        config.workers = workers
    BackendConfig.__post_init__(config)
    unknown = sorted(set(config.placement) - set(system.components) - {"*"})
    if unknown:
        raise BackendError(f"placement for unknown component(s) {unknown}; the system has {sorted(system.components)}")
    if config.placement and config.name != "ray":
        raise BackendError(f"{config.origin}: placement (resources per component) needs the ray backend, not "
                           f"{config.name!r}")
    return config


def make_slave_factory(config: BackendConfig) -> Callable[[str, Path], Slave] | None:
    """A factory ``(name, fmu path) -> Slave`` for :class:`orchestration.execution.Execution`;
    None for in-process (the execution's default)."""
    if config.name == "inprocess":
        return None
    if config.name == "process":
        from orchestration.process_backend import ProcessPool

        return ProcessPool(config.workers, call_timeout=config.call_timeout).slave
    from orchestration import ray_backend

    ray_backend.connect(config.address)
    for component, options in config.placement.items():
        ray_backend.check_placement(options, component)
    store, groups = ray_backend.FmuStore(), ray_backend.RayGroups()
    return lambda name, path: ray_backend.RaySlave(name, path, actor_options=config.options_for(name),
                                                   call_timeout=config.call_timeout, fmu_ref=store.ref(path),
                                                   groups=groups)
