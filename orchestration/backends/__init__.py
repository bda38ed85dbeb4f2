"""Execution backends by name, and where each FMU instance runs.

=============  ==========================================================================
``inprocess``  (default) every FMU in the master's process (slaves.InProcessSlave)
``process``    local OS worker processes, by default one per FMU: Python FMUs step in parallel
               despite the GIL (process_backend.ProcessSlave); ``workers=N`` hosts the FMUs in N
               processes, round-robin (less overhead per macro step with many small FMUs)
``ray``        one Ray actor per FMU, on any node of a Ray cluster, placed by resources
               (ray_backend.RaySlave); ``pip install 'marine-cosim[distributed]'``
=============  ==========================================================================

Every master algorithm runs on every backend: they all implement orchestration.master.slaves.Slave.

Choosing it: ``marine-cosim run --backend ray [--ray-address HOST:PORT] [--place COMP=JSON]``,
or in an SSP system file, next to the algorithm (read into ``System.backend`` by
orchestration.system.ssp)::

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

import dataclasses
import json
from pathlib import Path
from typing import Any, Callable

from orchestration.errors import BackendError  # noqa: F401  (re-exported)
from orchestration.master.slaves import Slave
from orchestration.system.backend_choice import BACKENDS, BackendConfig  # noqa: F401  (re-exported)
from orchestration.system.model import System





# ---------------------------------------------------------------------- system file

def backend_from_system(system: System) -> BackendConfig | None:
    """The backend the system file asks for (mc:Backend annotation, else the ``backend``
    algorithm option), or None."""
    config = system.backend
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
    # a copy: the system's own choice stays as the file says
    chosen = backend_from_system(system)
    config = dataclasses.replace(chosen, placement=dict(chosen.placement)) if chosen else BackendConfig()
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


def make_slave_factory(config: BackendConfig, system: System | None = None) -> Callable[[str, Path], Slave] | None:
    """A factory ``(name, fmu path) -> Slave`` for :class:`orchestration.master.execution.Execution`;
    None for in-process (the execution's default). In-process, the components of ``system`` that ask
    for a process of their own (OSP's ``proxyfmu://localhost``) get a worker process each."""
    if config.name == "inprocess":
        own = {c.name for c in system.components.values() if c.own_process} if system is not None else set()
        if not own:
            return None
        from orchestration.backends.process import ProcessSlave
        from orchestration.master.slaves import InProcessSlave

        return lambda name, path: ProcessSlave(name, path) if name in own else InProcessSlave(name, path)
    if config.name == "process":
        from orchestration.backends.process import ProcessPool

        return ProcessPool(config.workers, call_timeout=config.call_timeout).slave
    from orchestration.backends import ray as ray_backend

    ray_backend.connect(config.address)
    for component, options in config.placement.items():
        ray_backend.check_placement(options, component)
    store, groups = ray_backend.FmuStore(), ray_backend.RayGroups()
    return lambda name, path: ray_backend.RaySlave(name, path, actor_options=config.options_for(name),
                                                   call_timeout=config.call_timeout, fmu_ref=store.ref(path),
                                                   groups=groups)
