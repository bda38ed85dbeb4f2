"""Where a system asks to run: the backend named in its file and the placement of each component.

This is data read from the system file (SSP ``mc:Backend`` annotation, see orchestration.system.ssp)
and carried by :class:`~orchestration.system.model.System`; orchestration.backends turns it into
running slaves. The element::

    <mc:Backend name="ray" address="auto" callTimeout="120">
      <mc:Placement component="crane" numCpus="1">
        <mc:Resource name="windows" value="1"/>
      </mc:Placement>
      <mc:Placement component="payload" group="light"/>
    </mc:Backend>
    <mc:Backend name="process" workers="2"/>
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from orchestration.errors import BackendError, SystemFileError

BACKENDS = ("inprocess", "process", "ray")
#: mc:Placement attributes -> Ray actor option and type
PLACEMENT_ATTRIBUTES = {"numCpus": ("num_cpus", float), "numGpus": ("num_gpus", float), "memory": ("memory", float)}
#: a Ray cluster address Ray can parse: HOST:PORT, ray://HOST:PORT, [IPv6]:PORT
RAY_ADDRESS = re.compile(r"(ray://)?(\[[0-9A-Fa-f:.]+\]|[^\s:/\[\]]+):[0-9]{1,5}")


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
        # Ray's own answer to a malformed address is a bare ValueError from deep in ray.init
        if self.address not in (None, "", "auto", "local") and not (
                isinstance(self.address, str) and RAY_ADDRESS.fullmatch(self.address.strip())):
            raise BackendError(f"Ray address {self.address!r} is not HOST:PORT, ray://HOST:PORT, 'auto' (the "
                               f"cluster `ray start` runs here) or 'local' (backend from {self.origin})")
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


def _number(text: str, where: str) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        raise SystemFileError(f"{where}: {text!r} is not a number") from None


def read_backend_element(element, where: str) -> BackendConfig:
    """The backend of an SSP ``mc:Backend`` element (``where``: file and element, for messages)."""
    namespace = element.tag[:element.tag.index("}") + 1] if element.tag.startswith("{") else ""
    name = element.get("name")
    if not name:
        raise SystemFileError(f"{where}: the name attribute is missing ({', '.join(BACKENDS)})")
    placement: dict[str, dict[str, Any]] = {}
    for p in element.iter(f"{namespace}Placement"):
        component = p.get("component")
        if not component:
            raise SystemFileError(f"{where}/mc:Placement: the component attribute is missing")
        options: dict[str, Any] = {}
        for attribute, (key, kind) in PLACEMENT_ATTRIBUTES.items():
            if p.get(attribute) is not None:
                options[key] = kind(_number(p.get(attribute), f"{where}/mc:Placement[{component}] {attribute}"))
        resources = {}
        for r in p.iter(f"{namespace}Resource"):
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
