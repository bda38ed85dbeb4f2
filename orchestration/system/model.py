"""The system model every system-file format is read into and written from.

A system is a set of FMU instances (components) with start values, and connections from an
output of one component to an input of another, each with an optional linear transformation
``target = factor * source + offset`` (SSP LinearTransformation, OSP LinearTransformation, unit
conversion). Readers (ssp.py, osp.py) fill it, validation.py checks it against the FMUs, and the
master runs it. Paths to FMUs, to the scenario and to files given as String start values are
resolved against the system file's folder when read (orchestration.system.file_values).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestration.errors import SystemFileError  # noqa: F401  (re-exported)
from orchestration.system.backend_choice import BackendConfig




@dataclass
class Component:
    """One FMU instance, or a port adapter the master evaluates itself (orchestration.system.adapters)."""

    name: str
    source: Path | None                            # the .fmu (absolute after reading); None for an adapter
    parameters: dict[str, Any] = field(default_factory=dict)   # start values by variable name
    step_multiple: int = 1                         # multi-rate: steps every step_multiple base steps
    origin: str = ""                               # "file: element" for messages
    adapter: str | None = None                     # the adapter kind (rigid_motion, wrench, ...) instead of an FMU
    own_process: bool = False                      # OSP proxyfmu://localhost: in a worker process of its own

    @property
    def display_source(self) -> str:
        """What the component is, for messages: the FMU's file name or ``<kind> adapter``."""
        return f"{self.adapter} adapter" if self.adapter else Path(self.source).name


@dataclass
class Connection:
    """``target input = factor * source output + offset``."""

    source: tuple[str, str]                        # (component, output variable)
    target: tuple[str, str]                        # (component, input variable)
    factor: float = 1.0
    offset: float = 0.0
    converts_units: bool = False                   # factor/offset stand for a declared unit conversion
    power_bond: str | None = None                  # name of the power bond this connection belongs to
    origin: str = ""

    @property
    def is_identity(self) -> bool:
        return self.factor == 1.0 and self.offset == 0.0

    def label(self) -> str:
        return f"{self.source[0]}.{self.source[1]} -> {self.target[0]}.{self.target[1]}"


@dataclass
class System:
    """A co-simulation system: components, connections and run settings."""

    name: str
    components: dict[str, Component] = field(default_factory=dict)
    connections: list[Connection] = field(default_factory=list)
    start_time: float = 0.0
    stop_time: float | None = None
    base_step: float | None = None
    algorithm: str = "fixed"
    algorithm_options: dict[str, Any] = field(default_factory=dict)
    source_file: Path | None = None
    #: where the file asks to run (SSP mc:Backend annotation), or None: orchestration.backends decides
    backend: BackendConfig | None = None
    #: the timed events that belong to the system (SSP mc:Scenario; a run without a scenario of its own uses it)
    scenario: Path | None = None

    def add_component(self, component: Component) -> Component:
        if component.name in self.components:
            raise SystemFileError(f"{component.origin or self.name}: component {component.name!r} is defined twice")
        self.components[component.name] = component
        return component

    def connect(self, source: str, target: str, factor: float = 1.0, offset: float = 0.0, **kwargs) -> Connection:
        """Convenience for code and tests: ``connect("a.y", "b.u")`` (component name up to the first dot).
        Two whole FMI 3.0 arrays of components already added are connected element by element, as a
        system file's are (orchestration.system.arrays.expand_array_connections); the connection
        returned is then the array's."""
        src = tuple(source.split(".", 1))
        dst = tuple(target.split(".", 1))
        connection = Connection(src, dst, factor, offset, **kwargs)   # type: ignore[arg-type]
        self.connections.append(connection)
        if src[0] in self.components and dst[0] in self.components:
            from orchestration.system.arrays import expand_array_connections

            kept, self.connections = self.connections[:-1], [connection]
            try:
                expand_array_connections(self)
            except SystemFileError:
                self.connections = kept
                raise
            self.connections = kept + self.connections
        return connection

    def check_single_drivers(self, where: str) -> None:
        """Raise SystemFileError if an input is the target of two connections."""
        seen: dict[tuple[str, str], Connection] = {}
        for c in self.connections:
            if c.target in seen:
                raise SystemFileError(f"{where}: input {c.target[0]}.{c.target[1]} is driven by two connections: "
                                      f"{seen[c.target].origin.split(': ', 1)[-1]} and {c.origin.split(': ', 1)[-1]}")
            seen[c.target] = c

    def file_hash(self) -> str | None:
        """SHA-256 of the system file (for result metadata), if it came from one."""
        if self.source_file and Path(self.source_file).is_file():
            return hashlib.sha256(Path(self.source_file).read_bytes()).hexdigest()
        return None
