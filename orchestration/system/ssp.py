"""Read and write SSP 1.0 system structures (``.ssd`` files and zipped ``.ssp`` archives).

Public API::

    read_ssp(path, *, extract_dir=None) -> System
    write_ssp(system, path) -> Path

``path`` is a ``.ssd`` file, a ``.ssp`` archive, or a folder holding ``SystemStructure.ssd``.
Every problem is a :class:`~orchestration.system.model.SystemFileError` whose message names the file, the
element (tag and name, line number) and the offending value, e.g.
``sys.ssd: ssd:Connection a.position[2] -> b.water.elevation (line 40): incompatible units ...``.
Files inside an archive are named ``archive.ssp!/SystemStructure.ssd``.

Reading
-------
Namespaces (SSP 1.0): ``ssd`` http://ssp-standard.org/SSP1/SystemStructureDescription,
``ssc`` .../SystemStructureCommon, ``ssv`` .../SystemStructureParameterValues, ``ssm``
.../SystemStructureParameterMapping.

* ``ssd:System/ssd:Elements/ssd:Component``: ``source`` is a URI relative to the .ssd (or
  ``file:`` URI); the FMU must exist and is read (FMPy) for its variables, causalities and units.
  Connectors named on a component must be variables of the FMU.
* ``ssd:ParameterBindings/ssd:ParameterBinding`` on a component or on the system: inline
  ``ssd:ParameterValues/ssv:ParameterSet`` or ``source="x.ssv"`` (relative to the .ssd, or to the
  FMU with ``sourceBase="component"``), ``prefix``, and an optional ``ssd:ParameterMapping``
  (inline ``ssm:ParameterMapping`` or ``source="x.ssm"``) whose ``ssm:MappingEntry source -> target``
  renames parameters and may carry ``ssc:LinearTransformation`` (Real),
  ``ssc:BooleanMappingTransformation`` or ``ssc:IntegerMappingTransformation``. An ``ssv:Real`` with
  a ``unit`` is converted to the FMU variable's unit (units from the ParameterSet's ``ssv:Units``,
  the SSD's ``ssd:Units`` or the FMU's UnitDefinitions) unless the mapping entry has
  ``suppressUnitConversion="true"``. System-level names are ``<component>.<variable>``. Later
  bindings override earlier ones; system-level bindings override component-level ones. A String
  value that names a file (marked ``<mc:File/>`` in the ``ssv:Parameter``'s ``ssv:Annotations``,
  or, unmarked, one that names an existing file or looks like a file name) is resolved against
  the .ssd's folder, wherever it is written (orchestration.system.file_values).
* ``ssd:Connections/ssd:Connection``: ``startElement.startConnector -> endElement.endConnector``,
  optional ``ssc:LinearTransformation factor offset`` (``target = factor * source + offset``; the
  non-standard ``ssd:LinearTransformation`` that FMPy's reader looks for is accepted too). Unit
  conversion: a connector's unit is its ``ssc:Real unit`` (defined in ``ssd:Units`` or the FMU)
  or, if not declared, the FMU variable's unit; when the two ends' units differ the conversion
  ``target = (f1 / f2) * source + (o1 - o2) / f2`` (``BaseUnit`` factor/offset) is applied before
  the LinearTransformation (SSP order) and ``Connection.converts_units`` is set; units with
  different base-unit exponents are an error. ``suppressUnitConversion="true"`` turns this off.
  A connection written from an input to an output is turned round (only without a
  transformation). Connections through the system's own connectors are resolved into direct
  component-to-component connections (transformations composed); a system input that nothing
  drives is an error (a top-level system cannot be fed from outside), a system output only
  observed is ignored.
* ``ssd:DefaultExperiment startTime stopTime`` -> ``System.start_time`` / ``stop_time``.
* OSP annotations (libcosim): ``ssd:DefaultExperiment/ssd:Annotations/ssc:Annotation
  type="com.opensimulationplatform"`` holding ``osp:Algorithm/osp:FixedStepAlgorithm
  baseStepSize [numWorkerThreads]`` -> ``base_step`` (``numWorkerThreads`` ->
  ``algorithm_options["num_worker_threads"]``), and on a component ``osp:StepSizeHint value`` (in
  seconds) -> ``step_multiple = value / base_step`` (must be an integer multiple).
  ``osp`` = http://opensimulationplatform.com/SSP/OSPAnnotations.

* ``ssd:Component type="application/x-marine-cosim-adapter" source="<kind>"``: a port adapter the
  master evaluates (orchestration.system.adapters): its start values as ParameterBindings (read
  first for those that shape its interface), its ports as ssd:Connectors, connected like an FMU's.
  Only marine-cosim runs such a file (other SSP tools stop at the unknown component type).

``implementation`` is read as a request: "ModelExchange" for a model-exchange-only FMU (the master
integrates it: orchestration.master.model_exchange), "CoSimulation" for one with that interface;
an FMU with both runs through its CoSimulation interface, so "ModelExchange" is refused there.

Not supported (a SystemFileError says so): nested ``ssd:System`` elements, signal dictionaries,
components of other types, Enumeration/Binary parameters, mapping transformations on connections,
connections to parameters, non-``file`` URIs.

The marine-cosim annotation
---------------------------
Type ``org.marine-cosim``, namespace ``urn:marine-cosim:ssp:annotations:1`` (prefix ``mc``)::

    <ssd:DefaultExperiment startTime="0.0" stopTime="20.0">
      <ssd:Annotations>
        <ssc:Annotation type="org.marine-cosim">
          <mc:Algorithm name="fixed" baseStep="0.01">            <!-- System.algorithm, base_step -->
            <mc:Option name="extrapolation" type="Integer" value="1"/>   <!-- algorithm_options -->
          </mc:Algorithm>                                        <!-- type: Real|Integer|Boolean|String -->
          <mc:Backend name="process" workers="2"/>   <!-- System.backend: orchestration.system.backend_choice -->
          <mc:Scenario source="events.yaml"/>   <!-- System.scenario, relative to the .ssd -->
        </ssc:Annotation>
      </ssd:Annotations>
    </ssd:DefaultExperiment>

    <ssd:Component name="b" ...> ... <ssd:Annotations>
        <ssc:Annotation type="org.marine-cosim"><mc:Component stepMultiple="2"/></ssc:Annotation>
    </ssd:Annotations></ssd:Component>

    <ssd:Connection ...> <ssc:LinearTransformation .../> <ssd:Annotations>
        <ssc:Annotation type="org.marine-cosim">
          <mc:PowerBond name="hook"/>      <!-- Connection.power_bond -->
          <mc:UnitConversion/>   <!-- Connection.converts_units: the LinearTransformation is a unit conversion -->
        </ssc:Annotation>
    </ssd:Annotations></ssd:Connection>

Power bonds may also be listed on the system (``ssd:System/ssd:Annotations``)::

    <ssc:Annotation type="org.marine-cosim">
      <mc:PowerBond name="hook">
        <mc:Connection startElement="crane" startConnector="hook.velocity[2]" endElement="payload"
                       endConnector="attachment1.velocity[2]"/> ...
      </mc:PowerBond>
    </ssc:Annotation>

The reader takes ``mc:`` elements from every ``ssc:Annotation`` of the type, grouped as above or
not; the writer gives each its own ``ssc:Annotation``, as the SSP 1.0 schema (one element per
annotation) wants. Where both the OSP and the marine-cosim annotation give a base step or step
multiple they must agree. ``mc:Algorithm`` wins for the algorithm name (default ``fixed``).
``mc:Backend`` is read into ``System.backend`` (orchestration.system.backend_choice) and written
back from it, so ``marine-cosim convert`` keeps the backend choice.

Writing
-------
``write_ssp(system, "x.ssd")`` writes FMU sources, file values and the scenario relative to the
.ssd's folder; ``write_ssp(system, "x.ssp")`` writes a zip with ``SystemStructure.ssd`` and under
``resources/`` the FMUs, every other file the system refers to (file values, written as the
resource URI ``resources/<name>``, and the scenario) and one ``<component>.ssv`` per component with
start values (same-named different files get ``_2``, ``_3`` suffixes): the archive runs from any
folder. Components get ``ssd:Connectors`` for their connected variables (kind and type from the
FMU, as libcosim needs), parameters as an ``ssv:ParameterSet`` typed after the FMU variables
(inline in an .ssd, in the .ssv files of an .ssp; ``parameter_files=`` chooses), file values with
``<mc:File/>``, connections an
``ssc:LinearTransformation`` when not identity and ``suppressUnitConversion="true"`` when the FMU
variables' units differ (the System's factor/offset is the whole transformation), and the
marine-cosim annotation for algorithm, options, base step, step multiples, power bonds and unit
conversions. For the ``fixed`` algorithm the OSP annotations are written too, so libcosim runs the
file. ``read_ssp(write_ssp(s, p)) == s`` up to ``origin``, ``source_file`` and, for .ssp, the FMU
paths.

Where the FMUs of a .ssp go
---------------------------
``read_ssp("x.ssp")`` extracts the archive into a content-addressed cache folder,
``$MARINE_COSIM_CACHE/ssp/<stem>-<sha256 prefix>/`` (default cache ``$XDG_CACHE_HOME/marine-cosim``
or ``~/.cache/marine-cosim``). The folder is never deleted by this module, so the returned
``Component.source`` paths stay valid for as long as the System (or any copy or pickle of it)
lives; reading the same archive again reuses it. Pass ``extract_dir=`` to choose the folder.
"""
from __future__ import annotations

import hashlib
import math
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Iterator
from urllib.parse import quote, unquote, urlparse
from urllib.request import url2pathname

from lxml import etree

from orchestration.errors import MissingFmuError, did_you_mean
from orchestration.system.adapters import ADAPTER_TYPE, AdapterError, KINDS as ADAPTER_KINDS, adapter_description
from orchestration.system.arrays import expand_array_connections, info_element_problem
from orchestration.system.backend_choice import PLACEMENT_ATTRIBUTES, read_backend_element
from orchestration.system.file_values import FileValue, names_a_file, resolve_file_value
from orchestration.system.fmu_info import (ModelInfo, Variable, component_info, info_from_description,  # noqa: F401
                                           is_output, model_info, no_co_simulation)
from orchestration.system.units import BASE_UNITS, Unit, unit_conversion  # noqa: F401  (re-exported)
from orchestration.system.model import Component, Connection, System, SystemFileError

__all__ = ["read_ssp", "write_ssp", "suggest", "SSD_NS", "SSC_NS", "SSV_NS", "SSM_NS", "OSP_ANNOTATIONS_NS", "MC_NS",
           "OSP_ANNOTATION_TYPE", "MC_ANNOTATION_TYPE"]

SSD_NS = "http://ssp-standard.org/SSP1/SystemStructureDescription"
SSC_NS = "http://ssp-standard.org/SSP1/SystemStructureCommon"
SSV_NS = "http://ssp-standard.org/SSP1/SystemStructureParameterValues"
SSM_NS = "http://ssp-standard.org/SSP1/SystemStructureParameterMapping"
OSP_ANNOTATIONS_NS = "http://opensimulationplatform.com/SSP/OSPAnnotations"
MC_NS = "urn:marine-cosim:ssp:annotations:1"
OSP_ANNOTATION_TYPE = "com.opensimulationplatform"
MC_ANNOTATION_TYPE = "org.marine-cosim"
FMU_TYPE = "application/x-fmu-sharedlibrary"
PARAMETER_SET_TYPE = "application/x-ssp-parameter-set"
PARAMETER_MAPPING_TYPE = "application/x-ssp-parameter-mapping"
SSD_IN_SSP = "SystemStructure.ssd"

# libcosim reads SSD files with boost::property_tree, which matches the literal prefixes
# "ssd:", "ssc:", "ssv:", "osp:" -- so the writer must use exactly these prefixes.
NSMAP = {"ssd": SSD_NS, "ssc": SSC_NS, "ssv": SSV_NS, "osp": OSP_ANNOTATIONS_NS, "mc": MC_NS}
_PREFIXES = {SSD_NS: "ssd", SSC_NS: "ssc", SSV_NS: "ssv", SSM_NS: "ssm", OSP_ANNOTATIONS_NS: "osp", MC_NS: "mc"}

_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
#: ssc type elements of a connector -> the variable family they declare
CONNECTOR_TYPES = {"Real": "Real", "Float32": "Real", "Float64": "Real", "Integer": "Integer", "Int8": "Integer",
                   "UInt8": "Integer", "Int16": "Integer", "UInt16": "Integer", "Int32": "Integer",
                   "UInt32": "Integer", "Int64": "Integer", "UInt64": "Integer", "Boolean": "Boolean",
                   "String": "String", "Enumeration": "Enumeration", "Binary": "Binary"}


# ================================================================================ shared helpers
# (also used by orchestration.system.osp)


def q(ns: str, local: str) -> str:
    """Clark notation ``{ns}local`` for lxml."""
    return f"{{{ns}}}{local}"


def describe(el) -> str:
    """``ssd:Component 'a' (line 12)``: the element's tag, its identifying attributes and line."""
    if el is None:
        return "document"
    qn = etree.QName(el)
    prefix = _PREFIXES.get(qn.namespace)
    tag = f"{prefix}:{qn.localname}" if prefix else qn.localname
    a = el.attrib
    if "startConnector" in a or "endConnector" in a:
        start = ".".join(x for x in (a.get("startElement"), a.get("startConnector")) if x is not None)
        end = ".".join(x for x in (a.get("endElement"), a.get("endConnector")) if x is not None)
        ident = f" {start} -> {end}"
    elif "simulator" in a:
        ident = f" {a.get('simulator')}.{a.get('name', '')}"
    elif "function" in a:
        ident = f" {a.get('function')}.{a.get('name', '')}"
    elif "source" in a and "target" in a:
        ident = f" {a.get('source')!r} -> {a.get('target')!r}"
    else:
        key = next((k for k in ("name", "variable", "ref", "type") if k in a), None)
        ident = f" {a[key]!r}" if key else ""
    line = f" (line {el.sourceline})" if getattr(el, "sourceline", None) else ""
    return f"{tag}{ident}{line}"


def error(file: str, el, message: str) -> SystemFileError:
    return SystemFileError(f"{file}: {describe(el)}: {message}")


def suggest(name: str, known) -> str:
    """The readers' tail of an unknown name: why it is no element of an FMI 3.0 array of ``known``
    (a ModelInfo's variables; orchestration.system.arrays), else the close matches of
    :func:`did_you_mean`."""
    if isinstance(known, dict) and any(isinstance(v, Variable) for v in known.values()):
        problem = info_element_problem(known, name)
        if problem:
            return f": {problem}"
    return did_you_mean(name, known)


def parse_xml(path: Path, display: str | None = None):
    """Parse an XML file; a missing file or malformed XML is a SystemFileError with file and line."""
    display = display or str(path)
    if not Path(path).is_file():
        raise SystemFileError(f"{display}: file not found")
    parser = etree.XMLParser(remove_comments=True, remove_pis=True, resolve_entities=False, no_network=True)
    try:
        return etree.parse(str(path), parser)
    except etree.XMLSyntaxError as exc:
        line, column = exc.position if exc.position else (exc.lineno, 0)
        raise SystemFileError(f"{display}: line {line}, column {column}: malformed XML: {exc.msg}") from None
    except OSError as exc:
        raise SystemFileError(f"{display}: cannot read: {exc}") from None


def elements(el) -> Iterator:
    """Child elements (no comments or processing instructions)."""
    for child in el:
        if isinstance(child.tag, str):
            yield child


def local(el) -> str:
    return etree.QName(el).localname


def format_double(value: float) -> str:
    """xs:double text that reads back to the same float."""
    value = float(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "INF" if value > 0 else "-INF"
    return repr(value)


def parse_double(file: str, el, attr: str, text: str | None = None) -> float:
    text = el.get(attr) if text is None else text
    try:
        return float(text.strip())
    except (ValueError, AttributeError):
        raise error(file, el, f"{attr}={text!r} is not a number") from None


def parse_bool(file: str, el, attr: str, default: bool | None = None) -> bool:
    text = el.get(attr)
    if text is None:
        if default is None:
            raise error(file, el, f"attribute {attr!r} is missing")
        return default
    value = text.strip().lower()
    if value in ("true", "1"):
        return True
    if value in ("false", "0"):
        return False
    raise error(file, el, f"{attr}={text!r} is not a boolean (true, false, 1, 0)")


def parse_typed(file: str, el, kind: str, text: str) -> Any:
    """A Real, Integer, Boolean or String value written as text, with an error naming the element."""
    if kind == "Real":
        return parse_double(file, el, "value", text)
    if kind == "Integer":
        try:
            return int(text.strip())
        except ValueError:
            raise error(file, el, f"value={text!r} is not an integer") from None
    if kind == "Boolean":
        if text.strip().lower() in ("true", "1"):
            return True
        if text.strip().lower() in ("false", "0"):
            return False
        raise error(file, el, f"value={text!r} is not a boolean")
    if kind == "String":
        return text
    raise error(file, el, f"type={kind!r} is not one of Real, Integer, Boolean, String")


def required(file: str, el, attr: str) -> str:
    value = el.get(attr)
    if value is None or value == "":
        raise error(file, el, f"attribute {attr!r} is missing")
    return value


def step_multiple(file: str, el, step: float, base_step: float | None, what: str) -> int:
    """``step / base_step`` as an integer >= 1, or a SystemFileError."""
    if base_step is None:
        raise error(file, el, f"{what}={format_double(step)} needs a base step size, and none is given")
    if not (step > 0 and math.isfinite(step)):
        raise error(file, el, f"{what}={format_double(step)} must be positive")
    ratio = step / base_step
    multiple = round(ratio)
    if multiple < 1 or abs(ratio - multiple) > 1e-9 * max(1.0, ratio):
        # libcosim takes max(1, floor(ratio)) base steps and only logs it; here the file says so
        floor = max(1, math.floor(ratio + 1e-9))
        raise error(file, el, f"{what}={format_double(step)} is not an integer multiple of the base step "
                              f"{format_double(base_step)} (ratio {ratio:.12g}); libcosim would step it every "
                              f"{floor} base step(s), {format_double(floor * base_step)} s: write that to run "
                              "it the same way")
    return int(multiple)


def resolve_uri(file: str, el, uri: str, base_dir: Path) -> Path:
    """A relative URI (against ``base_dir``) or ``file:`` URI -> absolute normalised path."""
    parsed = urlparse(uri)
    if parsed.scheme in ("", "file") or (len(parsed.scheme) == 1 and os.name == "nt"):
        if parsed.scheme == "file":
            path = Path(url2pathname(unquote(parsed.path)))
        elif len(parsed.scheme) == 1:   # a Windows drive letter
            path = Path(uri)
        else:
            path = Path(unquote(parsed.path))
        if not path.is_absolute():
            path = Path(base_dir) / path
        return Path(os.path.normpath(os.path.abspath(path)))
    raise error(file, el, f"source {uri!r}: URI scheme {parsed.scheme!r} is not supported (only relative paths "
                          "and file: URIs)")


def relative_uri(target: Path, base_dir: Path) -> str:
    """``target`` as a URI relative to ``base_dir`` (posix separators, percent-encoded)."""
    target = Path(os.path.abspath(target))
    try:
        rel = os.path.relpath(target, os.path.abspath(base_dir))
    except ValueError:   # another drive on Windows
        return target.as_uri()
    return quote(PurePosixPath(*Path(rel).parts).as_posix())


# -------------------------------------------------------------------------------- units


def parse_units(file: str, units_el) -> dict[str, Unit]:
    """``ssd:Units`` / ``ssv:Units`` (children ``ssc:Unit`` with ``ssc:BaseUnit``)."""
    units: dict[str, Unit] = {}
    if units_el is None:
        return units
    for unit_el in elements(units_el):
        if local(unit_el) != "Unit":
            continue
        name = required(file, unit_el, "name")
        base = next((c for c in elements(unit_el) if local(c) == "BaseUnit"), None)
        exps, factor, offset = [0] * 8, 1.0, 0.0
        if base is not None:
            for i, b in enumerate(BASE_UNITS):
                text = base.get(b)
                if text is not None:
                    try:
                        exps[i] = int(text)
                    except ValueError:
                        raise error(file, base, f"{b}={text!r} is not an integer exponent") from None
            factor = parse_double(file, base, "factor") if base.get("factor") is not None else 1.0
            offset = parse_double(file, base, "offset") if base.get("offset") is not None else 0.0
            if factor == 0.0:
                raise error(file, base, "factor='0' is not a valid unit factor")
        if name in units:
            raise error(file, unit_el, f"unit {name!r} is defined twice")
        units[name] = Unit(name, tuple(exps), factor, offset)
    return units


# -------------------------------------------------------------------------------- FMU model info


def load_model_info(file: str, el, path: Path) -> ModelInfo:
    try:
        return model_info(path)
    except Exception as exc:   # FMPy raises many kinds for a broken FMU
        raise error(file, el, f"cannot read the modelDescription.xml of {path}: {type(exc).__name__}: {exc}") \
            from None





# ================================================================================ reading


@dataclass
class _Endpoint:
    element: str | None          # None: a connector of the system itself
    connector: str
    unit: str | None = None
    causality: str | None = None   # FMU causality, or the system connector's kind


@dataclass
class _Leg:
    """One ssd:Connection before system connectors are resolved."""

    start: _Endpoint
    end: _Endpoint
    factor: float
    offset: float
    suppress_units: bool
    marked_unit_conversion: bool
    power_bond: str | None
    el: Any


@dataclass
class _ParameterEntry:
    name: str
    kind: str                    # Real, Integer, Boolean, String
    value: Any
    unit: str | None
    units: dict[str, Unit]       # the ParameterSet's own units
    file: str
    el: Any


@dataclass
class _Mapping:
    target: str
    transformation: Any          # the transformation element or None
    suppress_units: bool
    file: str
    el: Any


@dataclass
class _ComponentData:
    component: Component
    info: ModelInfo
    connectors: dict[str, tuple[str, str | None]] = field(default_factory=dict)   # name -> (kind, unit)
    el: Any = None
    lenient: bool = False      # an adapter's first pass over its bindings: only the names its interface has


class _SsdReader:
    def __init__(self, ssd: Path, display: str, display_dir: str, archive: bool = False):
        self.ssd = ssd
        self.base = ssd.parent
        self.file = display
        self.display_dir = display_dir     # how files next to the .ssd are named in messages
        self.archive = archive             # read from an extracted .ssp: its files are inside it

    def resolve(self, el, uri: str, base_dir: Path) -> Path:
        """resolve_uri, and inside an archive a relative path must stay inside the archive: one that
        climbs out (``../x``) would name a file beside the extraction folder, not in the archive."""
        path = resolve_uri(self.file, el, uri, base_dir)
        if self.archive and not urlparse(uri).scheme and not path.is_relative_to(self.base):
            raise error(self.file, el, f"source {uri!r} points outside the archive (SSP paths in an .ssp are "
                                       "relative to its root and stay inside it)")
        return path

    def display(self, path: Path) -> str:
        try:
            rel = Path(os.path.relpath(path, self.base))
        except ValueError:
            return str(path)
        if rel.parts and rel.parts[0] == "..":
            return str(path)
        return f"{self.display_dir}{rel.as_posix()}"

    # ---------------------------------------------------------------- top level

    def read(self) -> System:
        root = parse_xml(self.ssd, self.file).getroot()
        if root.tag != q(SSD_NS, "SystemStructureDescription"):
            raise error(self.file, root, f"the root element is {etree.QName(root).localname!r} in namespace "
                                         f"{etree.QName(root).namespace!r}, not ssd:SystemStructureDescription "
                                         f"({SSD_NS})")
        self.units = parse_units(self.file, root.find(q(SSD_NS, "Units")))
        system_el = root.find(q(SSD_NS, "System"))
        if system_el is None:
            raise error(self.file, root, "no ssd:System element")
        name = system_el.get("name") or root.get("name") or self.ssd.stem
        system = System(name=name)
        self._default_experiment(root.find(q(SSD_NS, "DefaultExperiment")), system)

        self.components: dict[str, _ComponentData] = {}
        elements_el = system_el.find(q(SSD_NS, "Elements"))
        for el in (elements(elements_el) if elements_el is not None else ()):
            kind = local(el)
            if el.tag != q(SSD_NS, kind):
                continue   # foreign content
            if kind == "Component":
                data = self._component(el, system.base_step)
                if data.component.name in self.components:
                    raise error(self.file, el, f"component name {data.component.name!r} is used twice")
                self.components[data.component.name] = data
                system.add_component(data.component)
            elif kind == "System":
                raise error(self.file, el, "nested systems (ssd:System inside ssd:Elements) are not supported; "
                                           "flatten the system")
            else:
                raise error(self.file, el, f"ssd:{kind} elements are not supported")

        self.system_connectors = self._connectors(system_el, None)
        # system-level bindings override component-level ones
        for name_, value, _ in self._bindings(system_el, None):
            comp_name, var = name_
            self.components[comp_name].component.parameters[var] = value
        for data in self.components.values():
            if data.component.adapter:          # its interface follows its start values, wherever set
                try:
                    info = info_from_description(adapter_description(data.component.adapter,
                                                                     data.component.parameters), data.info.path)
                except AdapterError as exc:
                    raise error(self.file, data.el, f"{data.component.adapter} adapter: {exc}") from None
                if set(info.variables) != set(data.info.variables):
                    data.info = info
                    data.connectors = self._connectors(data.el, data)
                data.info = info

        legs = self._connections(system_el)
        system.connections.extend(self._resolve(legs))
        self._system_annotations(system_el, system, legs)
        expand_array_connections(system)
        system.check_single_drivers(str(self.file))
        return system

    # ---------------------------------------------------------------- experiment and annotations

    def _annotations(self, owner, annotation_type: str) -> list:
        """Children of ``owner/ssd:Annotations/ssc:Annotation[@type=annotation_type]``."""
        found = []
        annotations = owner.find(q(SSD_NS, "Annotations"))
        if annotations is None:
            return found
        for ann in elements(annotations):
            if local(ann) == "Annotation" and ann.get("type") == annotation_type:
                found.extend(elements(ann))
        return found

    def _default_experiment(self, de, system: System) -> None:
        if de is None:
            return
        if de.get("startTime") is not None:
            system.start_time = parse_double(self.file, de, "startTime")
        if de.get("stopTime") is not None:
            system.stop_time = parse_double(self.file, de, "stopTime")
            if system.stop_time < system.start_time:
                raise error(self.file, de, f"stopTime={de.get('stopTime')!r} is before startTime "
                                           f"{format_double(system.start_time)}")
        osp_base = None
        for child in self._annotations(de, OSP_ANNOTATION_TYPE):
            if child.tag != q(OSP_ANNOTATIONS_NS, "Algorithm"):
                continue
            for algorithm in elements(child):
                if algorithm.tag == q(OSP_ANNOTATIONS_NS, "FixedStepAlgorithm"):
                    osp_base = parse_double(self.file, algorithm, "baseStepSize", required(
                        self.file, algorithm, "baseStepSize"))
                    if not osp_base > 0:
                        raise error(self.file, algorithm, f"baseStepSize={algorithm.get('baseStepSize')!r} "
                                                          "must be positive")
                    if algorithm.get("numWorkerThreads") is not None:
                        try:
                            system.algorithm_options["num_worker_threads"] = int(algorithm.get("numWorkerThreads"))
                        except ValueError:
                            raise error(self.file, algorithm, f"numWorkerThreads="
                                        f"{algorithm.get('numWorkerThreads')!r} is not an integer") from None
                else:
                    raise error(self.file, algorithm, f"unknown OSP algorithm {local(algorithm)!r} "
                                                      "(only osp:FixedStepAlgorithm)")
        system.base_step = osp_base
        for child in self._annotations(de, MC_ANNOTATION_TYPE):
            if child.tag == q(MC_NS, "Backend"):
                system.backend = read_backend_element(child, f"{self.file}: {describe(child)}")
                continue
            if child.tag == q(MC_NS, "Scenario"):
                system.scenario = self.resolve(child, required(self.file, child, "source"), self.base)
                continue
            if child.tag != q(MC_NS, "Algorithm"):
                continue
            system.algorithm = required(self.file, child, "name")
            if child.get("baseStep") is not None:
                base = parse_double(self.file, child, "baseStep")
                if not base > 0:
                    raise error(self.file, child, f"baseStep={child.get('baseStep')!r} must be positive")
                if osp_base is not None and not math.isclose(base, osp_base, rel_tol=1e-12):
                    raise error(self.file, child, f"baseStep={child.get('baseStep')!r} disagrees with the OSP "
                                                  f"annotation's baseStepSize={format_double(osp_base)}")
                system.base_step = base
            for option in elements(child):
                if option.tag != q(MC_NS, "Option"):
                    continue
                system.algorithm_options[required(self.file, option, "name")] = self._typed_value(
                    option, option.get("type", "String"), required(self.file, option, "value"))

    def _typed_value(self, el, kind: str, text: str) -> Any:
        return parse_typed(self.file, el, kind, text)

    # ---------------------------------------------------------------- components

    def _component(self, el, base_step: float | None) -> _ComponentData:
        name = required(self.file, el, "name")
        if "." in name:
            raise error(self.file, el, f"component name {name!r} contains a '.', which marine-cosim uses to "
                                       "separate component and variable")
        ctype = el.get("type", FMU_TYPE)
        if ctype == ADAPTER_TYPE:
            return self._annotated(el, self._adapter(el, name), base_step)
        if ctype != FMU_TYPE:
            raise error(self.file, el, f"type={ctype!r} is not supported (only {FMU_TYPE}, or {ADAPTER_TYPE} for a "
                                       "port adapter)")
        implementation = el.get("implementation", "any")
        source = required(self.file, el, "source")
        path = self.resolve(el, source, self.base)
        if not path.is_file():
            raise MissingFmuError(str(error(self.file, el, f"FMU file not found: source={source!r} (resolved to "
                                                           f"{path})")), path)
        info = load_model_info(self.file, el, path)
        if not info.runnable:
            raise error(self.file, el, no_co_simulation(path))
        if implementation == "ModelExchange" and info.co_simulation:
            # the master runs an FMU with both interfaces through its CoSimulation one
            raise error(self.file, el, f"implementation='ModelExchange': {path.name} has a CoSimulation interface "
                                       "too, which the master runs; model exchange is used for FMUs that have only "
                                       "that interface (remove the attribute, or use such an FMU)")
        if implementation == "CoSimulation" and not info.co_simulation:
            raise error(self.file, el, f"implementation='CoSimulation': {path.name} has a ModelExchange interface "
                                       "only (remove the attribute: the master integrates it)")
        component = Component(name=name, source=path, origin=f"{self.file}: {describe(el)}")
        data = _ComponentData(component, info, el=el)
        data.connectors = self._connectors(el, data)
        for (_, var), value, _ in self._bindings(el, data):
            component.parameters[var] = value
        return self._annotated(el, data, base_step)

    def _adapter(self, el, name: str) -> _ComponentData:
        """A port adapter (orchestration.system.adapters): ``source`` names its kind. Its start values
        are read first for the parameters that shape its interface, then with the interface."""
        kind = required(self.file, el, "source")
        if kind not in ADAPTER_KINDS:
            raise error(self.file, el, f"unknown adapter kind source={kind!r}{suggest(kind, ADAPTER_KINDS)} "
                                       f"(kinds: {', '.join(ADAPTER_KINDS)})")
        component = Component(name=name, source=None, adapter=kind, origin=f"{self.file}: {describe(el)}")

        def interface(values) -> ModelInfo:
            try:
                return info_from_description(adapter_description(kind, values), Path(f"{kind} adapter"))
            except AdapterError as exc:
                raise error(self.file, el, f"{kind} adapter: {exc}") from None

        data = _ComponentData(component, interface({}), el=el, lenient=True)
        structural = {}
        for (_, var), value, _ in self._bindings(el, data):
            structural[var] = value
        data.info, data.lenient = interface(structural), False
        data.connectors = self._connectors(el, data)
        for (_, var), value, _ in self._bindings(el, data):
            component.parameters[var] = value
        data.info = interface(component.parameters)
        return data

    def _annotated(self, el, data: _ComponentData, base_step: float | None) -> _ComponentData:
        """The step multiple of a component from its OSP and marine-cosim annotations."""
        component = data.component
        osp_hint = None
        for child in self._annotations(el, OSP_ANNOTATION_TYPE):
            if child.tag == q(OSP_ANNOTATIONS_NS, "StepSizeHint"):
                hint = parse_double(self.file, child, "value", required(self.file, child, "value"))
                osp_hint = step_multiple(self.file, child, hint, base_step, "StepSizeHint value")
                component.step_multiple = osp_hint
        for child in self._annotations(el, MC_ANNOTATION_TYPE):
            if child.tag == q(MC_NS, "Component") and child.get("stepMultiple") is not None:
                text = child.get("stepMultiple")
                try:
                    multiple = int(text)
                except ValueError:
                    raise error(self.file, child, f"stepMultiple={text!r} is not an integer") from None
                if multiple < 1:
                    raise error(self.file, child, f"stepMultiple={text!r} must be >= 1")
                if osp_hint is not None and osp_hint != multiple:
                    raise error(self.file, child, f"stepMultiple={text!r} disagrees with the OSP StepSizeHint "
                                                  f"(= {osp_hint} base steps)")
                component.step_multiple = multiple
        return data

    def _connectors(self, owner, data: _ComponentData | None) -> dict[str, tuple[str, str | None]]:
        connectors: dict[str, tuple[str, str | None]] = {}
        connectors_el = owner.find(q(SSD_NS, "Connectors"))
        if connectors_el is None:
            return connectors
        for c in elements(connectors_el):
            if c.tag != q(SSD_NS, "Connector"):
                continue
            name = required(self.file, c, "name")
            kind = required(self.file, c, "kind")
            unit = None
            declared = None
            for t in elements(c):
                if etree.QName(t).namespace == SSC_NS and local(t) in CONNECTOR_TYPES:
                    declared = local(t)
                if t.tag == q(SSC_NS, "Real"):
                    unit = t.get("unit") or None
            if unit is not None:
                self._unit(c, unit, data.info if data else None)   # must be defined
            if data is not None:
                variable = data.info.variables.get(name)
                if variable is None:
                    raise error(self.file, c, f"{data.component.display_source} has no variable {name!r}"
                                              f"{suggest(name, data.info.variables)}")
                if (kind == "input" and variable.causality != "input") or \
                        (kind == "output" and not is_output(variable.causality)):
                    raise error(self.file, c, f"kind={kind!r}, but {name!r} is {variable.causality} in "
                                              f"{data.component.display_source}")
                if declared is not None and CONNECTOR_TYPES[declared] != variable.type:
                    raise error(self.file, c, f"the connector is declared {declared}, but {name!r} is a "
                                              f"{variable.kind or variable.type} in {data.component.display_source}")
            if name in connectors:
                raise error(self.file, c, f"connector {name!r} is declared twice")
            connectors[name] = (kind, unit)
        return connectors

    def _unit(self, el, name: str, info: ModelInfo | None, extra: dict[str, Unit] | None = None,
              file: str | None = None) -> Unit:
        for table in (extra or {}, self.units, info.units if info else {}):
            if name in table:
                return table[name]
        raise error(file or self.file, el, f"unit {name!r} is not defined (not in ssd:Units"
                    + (" or the ParameterSet's ssv:Units" if extra is not None else "")
                    + (f" nor in the UnitDefinitions of {info.path.name})" if info else ")"))

    # ---------------------------------------------------------------- parameters

    def _bindings(self, owner, data: _ComponentData | None):
        """Yield ((component, variable), value, element) for every parameter bound on ``owner``."""
        bindings_el = owner.find(q(SSD_NS, "ParameterBindings"))
        if bindings_el is None:
            return
        for binding in elements(bindings_el):
            if binding.tag != q(SSD_NS, "ParameterBinding"):
                continue
            btype = binding.get("type", PARAMETER_SET_TYPE)
            if btype != PARAMETER_SET_TYPE:
                raise error(self.file, binding, f"type={btype!r} is not supported (only {PARAMETER_SET_TYPE})")
            prefix = binding.get("prefix", "")
            values_el = binding.find(q(SSD_NS, "ParameterValues"))
            inline = None
            if values_el is not None:
                inline = [c for c in elements(values_el) if c.tag == q(SSV_NS, "ParameterSet")]
                if len(inline) != 1:
                    raise error(self.file, values_el, f"expected one ssv:ParameterSet, found {len(inline)}")
            source = binding.get("source")
            if source and inline:
                raise error(self.file, binding, f"source={source!r} and inline ssd:ParameterValues are both given")
            if source:
                path = self._source_path(binding, source, data)
                display = self.display(path)
                set_el = parse_xml(path, display).getroot()
                set_file = display
            elif inline:
                set_el, set_file = inline[0], self.file
            else:
                raise error(self.file, binding, "neither source nor inline ssd:ParameterValues")
            entries = self._parameter_set(set_el, set_file)
            mapping = self._mapping(binding, data)
            for entry in entries:
                name = prefix + entry.name
                m = mapping.get(name)
                target = m.target if m else name
                if data is not None and data.lenient and target not in data.info.variables:
                    continue
                comp_data, var = self._parameter_target(entry, target, data, m)
                value = self._convert_parameter(entry, comp_data, var, m)
                if comp_data.info.variables[var].type == "String" and not comp_data.component.adapter:
                    value = resolve_file_value(value, self.base, marked=_marked_as_file(entry.el.getparent()))
                yield (comp_data.component.name, var), value, entry.el

    def _source_path(self, el, source: str, data: _ComponentData | None) -> Path:
        base = self.base
        if el.get("sourceBase", "SSD") == "component":
            if data is None or data.component.adapter:
                raise error(self.file, el, "sourceBase='component' on a system-level binding or a port adapter (no "
                                           "FMU to be relative to)")
            base = data.component.source.parent
        path = self.resolve(el, source, base)
        if not path.is_file():
            raise error(self.file, el, f"file not found: source={source!r} (resolved to {path})")
        return path

    def _parameter_set(self, set_el, file: str) -> list[_ParameterEntry]:
        if set_el.tag != q(SSV_NS, "ParameterSet"):
            raise error(file, set_el, f"expected ssv:ParameterSet ({SSV_NS}), found {etree.QName(set_el).text}")
        units = parse_units(file, set_el.find(q(SSV_NS, "Units")))
        entries = []
        params_el = set_el.find(q(SSV_NS, "Parameters"))
        for p in (elements(params_el) if params_el is not None else ()):
            if p.tag != q(SSV_NS, "Parameter"):
                continue
            name = required(file, p, "name")
            typed = [c for c in elements(p) if etree.QName(c).namespace == SSV_NS and local(c) != "Annotations"]
            if len(typed) != 1:
                raise error(file, p, "expected exactly one of ssv:Real, ssv:Integer, ssv:Boolean, ssv:String")
            t = typed[0]
            kind = local(t)
            if kind not in ("Real", "Integer", "Boolean", "String"):
                raise error(file, t, f"ssv:{kind} parameters are not supported (Real, Integer, Boolean, String)")
            text = t.get("value")
            if text is None:
                raise error(file, t, "attribute 'value' is missing")
            saved, self.file = self.file, file
            try:
                value = self._typed_value(t, kind, text)
            finally:
                self.file = saved
            unit = t.get("unit") if kind == "Real" else None
            entries.append(_ParameterEntry(name, kind, value, unit or None, units, file, t))
        return entries

    def _mapping(self, binding, data: _ComponentData | None) -> dict[str, _Mapping]:
        mapping_el = binding.find(q(SSD_NS, "ParameterMapping"))
        if mapping_el is None:
            return {}
        mtype = mapping_el.get("type", PARAMETER_MAPPING_TYPE)
        if mtype != PARAMETER_MAPPING_TYPE:
            raise error(self.file, mapping_el, f"type={mtype!r} is not supported (only {PARAMETER_MAPPING_TYPE})")
        source = mapping_el.get("source")
        inline = [c for c in elements(mapping_el) if c.tag == q(SSM_NS, "ParameterMapping")]
        if source and inline:
            raise error(self.file, mapping_el, f"source={source!r} and an inline ssm:ParameterMapping are both given")
        if source:
            path = self._source_path(mapping_el, source, data)
            file = self.display(path)
            root = parse_xml(path, file).getroot()
        elif inline:
            root, file = inline[0], self.file
        else:
            raise error(self.file, mapping_el, "neither source nor an inline ssm:ParameterMapping")
        if root.tag != q(SSM_NS, "ParameterMapping"):
            raise error(file, root, f"expected ssm:ParameterMapping ({SSM_NS}), found {etree.QName(root).text}")
        result: dict[str, _Mapping] = {}
        for entry in elements(root):
            if entry.tag != q(SSM_NS, "MappingEntry"):
                continue
            src = required(file, entry, "source")
            tgt = required(file, entry, "target")
            transformation = None
            for t in elements(entry):
                if etree.QName(t).namespace in (SSC_NS, SSM_NS) and local(t).endswith("Transformation"):
                    transformation = t
            if src in result:
                raise error(file, entry, f"source {src!r} is mapped twice")
            suppress = parse_bool(file, entry, "suppressUnitConversion", False)
            result[src] = _Mapping(tgt, transformation, suppress, file, entry)
        return result

    def _parameter_target(self, entry: _ParameterEntry, target: str, data: _ComponentData | None,
                          m: _Mapping | None) -> tuple[_ComponentData, str]:
        where_file, where_el = (m.file, m.el) if m else (entry.file, entry.el)
        if data is None:   # system level: "<component>.<variable>"
            comp_name, _, var = target.partition(".")
            if comp_name not in self.components or not var:
                raise error(where_file, where_el, f"system-level parameter {target!r} does not name a component "
                            f"('<component>.<variable>'; components: {', '.join(self.components) or 'none'})")
            data = self.components[comp_name]
        else:
            var = target
        if var not in data.info.variables:
            raise error(where_file, where_el, f"parameter {var!r}: {data.component.display_source} (component "
                                              f"{data.component.name!r}) has no such variable"
                                              f"{suggest(var, data.info.variables)}")
        return data, var

    def _convert_parameter(self, entry: _ParameterEntry, data: _ComponentData, var: str, m: _Mapping | None) -> Any:
        variable = data.info.variables[var]
        value, kind = entry.value, entry.kind
        vtype = variable.type
        compatible = {"Real": ("Real", "Integer"), "Integer": ("Integer",), "Enumeration": ("Integer",),
                      "Boolean": ("Boolean",), "String": ("String",)}.get(vtype, ())
        if kind not in compatible:
            raise error(entry.file, entry.el, f"parameter {entry.name!r} is ssv:{kind} but variable {var!r} of "
                                              f"{data.component.display_source} is {vtype}")
        if vtype == "Real":
            value = float(value)
            if entry.unit and variable.unit and entry.unit != variable.unit and not (m and m.suppress_units):
                src = self._unit(entry.el, entry.unit, data.info, entry.units, entry.file)
                dst = self._unit(entry.el, variable.unit, data.info, entry.units, entry.file)
                conv = unit_conversion(src, dst)
                if conv is None:
                    raise error(entry.file, entry.el, f"parameter {entry.name!r}: unit {entry.unit!r} "
                                f"({src.dimension()}) cannot be converted to {variable.unit!r} ({dst.dimension()}) "
                                f"of variable {var!r}")
                value = conv[0] * value + conv[1]
        if m is not None and m.transformation is not None:
            value = self._apply_mapping_transformation(m, value, vtype)
        return value

    def _apply_mapping_transformation(self, m: _Mapping, value: Any, vtype: str) -> Any:
        t = m.transformation
        kind = local(t)
        if kind == "LinearTransformation":
            if vtype != "Real":
                raise error(m.file, t, f"a LinearTransformation needs a Real parameter, the target is {vtype}")
            factor = parse_double(m.file, t, "factor") if t.get("factor") is not None else 1.0
            offset = parse_double(m.file, t, "offset") if t.get("offset") is not None else 0.0
            return factor * value + offset
        if kind in ("BooleanMappingTransformation", "IntegerMappingTransformation"):
            table = {}
            for entry in elements(t):
                if local(entry) != "MapEntry":
                    continue
                if kind == "BooleanMappingTransformation":
                    table[parse_bool(m.file, entry, "source")] = parse_bool(m.file, entry, "target")
                else:
                    try:
                        table[int(required(m.file, entry, "source"))] = int(required(m.file, entry, "target"))
                    except ValueError:
                        raise error(m.file, entry, "source and target must be integers") from None
            return table.get(value, value)
        raise error(m.file, t, f"ssc:{kind} is not supported for parameters")

    # ---------------------------------------------------------------- connections

    def _endpoint(self, el, element: str | None, connector: str) -> _Endpoint:
        if element is None or element == "":
            if connector not in self.system_connectors:
                raise error(self.file, el, f"the system has no connector {connector!r} (no startElement/endElement "
                                           "means a connector of the system itself)")
            kind, unit = self.system_connectors[connector]
            return _Endpoint(None, connector, unit, kind)
        if element not in self.components:
            raise error(self.file, el, f"unknown element {element!r}{suggest(element, self.components)} (components: "
                                       f"{', '.join(sorted(self.components)) or 'none'})")
        data = self.components[element]
        variable = data.info.variables.get(connector)
        if variable is None:
            raise error(self.file, el, f"component {element!r} ({data.component.display_source}) has no variable "
                                       f"{connector!r}{suggest(connector, data.info.variables)}")
        declared = data.connectors.get(connector)
        unit = declared[1] if declared and declared[1] else variable.unit
        return _Endpoint(element, connector, unit, variable.causality)

    def _connections(self, system_el) -> list[_Leg]:
        legs: list[_Leg] = []
        connections_el = system_el.find(q(SSD_NS, "Connections"))
        for el in (elements(connections_el) if connections_el is not None else ()):
            if el.tag != q(SSD_NS, "Connection"):
                continue
            start = self._endpoint(el, el.get("startElement"), required(self.file, el, "startConnector"))
            end = self._endpoint(el, el.get("endElement"), required(self.file, el, "endConnector"))
            factor, offset = 1.0, 0.0
            for t in elements(el):
                if etree.QName(t).namespace not in (SSC_NS, SSD_NS):
                    continue
                if local(t) == "LinearTransformation":
                    factor = parse_double(self.file, t, "factor") if t.get("factor") is not None else 1.0
                    offset = parse_double(self.file, t, "offset") if t.get("offset") is not None else 0.0
                elif local(t).endswith("Transformation"):
                    raise error(self.file, t, f"{local(t)} on a connection is not supported "
                                              "(only LinearTransformation)")
            suppress = parse_bool(self.file, el, "suppressUnitConversion", False)
            power_bond, marked = None, False
            for child in self._annotations(el, MC_ANNOTATION_TYPE):
                if child.tag == q(MC_NS, "PowerBond"):
                    power_bond = required(self.file, child, "name")
                elif child.tag == q(MC_NS, "UnitConversion"):
                    marked = True
            leg = _Leg(start, end, factor, offset, suppress, marked, power_bond, el)
            for ep in (start, end):
                if ep.element is not None and ep.causality not in ("input", "output", "calculatedParameter"):
                    raise error(self.file, el, f"{ep.element}.{ep.connector} has causality {ep.causality!r}; only "
                                               "outputs can be connected to inputs (connections to parameters are "
                                               "not supported)")
            if start.element is not None and end.element is not None:
                if start.causality == "input" and is_output(end.causality):
                    if factor != 1.0 or offset != 0.0:
                        raise error(self.file, el, f"the connection runs from input {start.connector!r} to output "
                                                   f"{end.connector!r} and has a LinearTransformation; write it from "
                                                   "the output (start) to the input (end)")
                    leg.start, leg.end = end, start
                elif not (is_output(start.causality) and end.causality == "input"):
                    raise error(self.file, el, f"connects {start.element}.{start.connector} ({start.causality}) to "
                                               f"{end.element}.{end.connector} ({end.causality}); a connection must "
                                               "join an output and an input")
            legs.append(leg)
        return legs

    def _leg_transform(self, leg: _Leg, src_unit: str | None, dst_unit: str | None,
                       src_info: ModelInfo | None, dst_info: ModelInfo | None) -> tuple[float, float, bool]:
        """(factor, offset, converts_units) of one leg: unit conversion, then the LinearTransformation."""
        cf, co = 1.0, 0.0
        if not leg.suppress_units and src_unit and dst_unit and src_unit != dst_unit:
            src = self._unit(leg.el, src_unit, src_info)
            dst = self._unit(leg.el, dst_unit, dst_info)
            conv = unit_conversion(src, dst)
            if conv is None:
                start = f"{leg.start.element}.{leg.start.connector}" if leg.start.element else leg.start.connector
                end = f"{leg.end.element}.{leg.end.connector}" if leg.end.element else leg.end.connector
                raise error(self.file, leg.el, f"incompatible units: {src_unit!r} ({src.dimension()}) of {start} and "
                                               f"{dst_unit!r} ({dst.dimension()}) of {end} have different base-unit "
                                               "exponents (use suppressUnitConversion=\"true\" if intended)")
            cf, co = conv
        converts = (cf, co) != (1.0, 0.0)
        return leg.factor * cf, leg.factor * co + leg.offset, converts or leg.marked_unit_conversion

    def _info(self, ep: _Endpoint) -> ModelInfo | None:
        return self.components[ep.element].info if ep.element is not None else None

    def _resolve(self, legs: list[_Leg]) -> list[Connection]:
        connections = []
        into: dict[str, list[_Leg]] = {}
        out_of: dict[str, list[_Leg]] = {}
        for leg in legs:
            if leg.start.element is None and leg.end.element is None:
                raise error(self.file, leg.el, "a connection between two connectors of the system itself is not "
                                               "supported")
            if leg.start.element is None:
                out_of.setdefault(leg.start.connector, []).append(leg)
            elif leg.end.element is None:
                into.setdefault(leg.end.connector, []).append(leg)
            else:
                f, o, conv = self._leg_transform(leg, leg.start.unit, leg.end.unit, self._info(leg.start),
                                                 self._info(leg.end))
                connections.append(self._connection(leg, leg.start, leg.end, f, o, conv, leg.power_bond))
        for name, outgoing in out_of.items():
            incoming = into.get(name, [])
            if not incoming:
                raise error(self.file, outgoing[0].el, f"system connector {name!r} feeds "
                            f"{outgoing[0].end.element}.{outgoing[0].end.connector} but nothing drives it: inputs of "
                            "the top-level system cannot be set from outside; connect a component output instead")
            if len(incoming) > 1:
                raise error(self.file, incoming[1].el, f"system connector {name!r} is driven by more than one "
                                                       "connection")
            first = incoming[0]
            if not is_output(first.start.causality or ""):
                raise error(self.file, first.el, f"{first.start.element}.{first.start.connector} is not an output")
            relay_unit = self.system_connectors[name][1] or first.start.unit
            f1, o1, c1 = self._leg_transform(first, first.start.unit, relay_unit, self._info(first.start), None)
            for second in outgoing:
                if second.end.causality != "input":
                    raise error(self.file, second.el, f"{second.end.element}.{second.end.connector} is not an input")
                f2, o2, c2 = self._leg_transform(second, relay_unit, second.end.unit, None, self._info(second.end))
                bond = second.power_bond or first.power_bond
                connections.append(self._connection(second, first.start, second.end, f2 * f1, f2 * o1 + o2,
                                                    c1 or c2, bond))
        return connections

    def _connection(self, leg: _Leg, src: _Endpoint, dst: _Endpoint, factor: float, offset: float,
                    converts: bool, bond: str | None) -> Connection:
        return Connection(source=(src.element, src.connector), target=(dst.element, dst.connector),
                          factor=factor, offset=offset, converts_units=converts, power_bond=bond,
                          origin=f"{self.file}: {describe(leg.el)}")

    def _system_annotations(self, system_el, system: System, legs: list[_Leg]) -> None:
        by_endpoints = {}
        for c in system.connections:
            by_endpoints[(c.source, c.target)] = c
        for bond in self._annotations(system_el, MC_ANNOTATION_TYPE):
            if bond.tag != q(MC_NS, "PowerBond"):
                continue
            name = required(self.file, bond, "name")
            for ref in elements(bond):
                if ref.tag != q(MC_NS, "Connection"):
                    continue
                src = (required(self.file, ref, "startElement"), required(self.file, ref, "startConnector"))
                dst = (required(self.file, ref, "endElement"), required(self.file, ref, "endConnector"))
                c = by_endpoints.get((src, dst)) or by_endpoints.get((dst, src))
                if c is None:
                    raise error(self.file, ref, f"power bond {name!r} names a connection that is not in "
                                                "ssd:Connections")
                if c.power_bond not in (None, name):
                    raise error(self.file, ref, f"the connection already belongs to power bond {c.power_bond!r}")
                c.power_bond = name


def _marked_as_file(parameter_el) -> bool:
    """``ssv:Parameter/ssv:Annotations/ssc:Annotation[@type=org.marine-cosim]/mc:File``."""
    annotations = parameter_el.find(q(SSV_NS, "Annotations")) if parameter_el is not None else None
    if annotations is None:
        return False
    return any(ann.get("type") == MC_ANNOTATION_TYPE and ann.find(q(MC_NS, "File")) is not None
               for ann in elements(annotations))


# -------------------------------------------------------------------------------- archive extraction


def _cache_root() -> Path:
    if os.environ.get("MARINE_COSIM_CACHE"):
        return Path(os.environ["MARINE_COSIM_CACHE"])
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "marine-cosim"


def _safe_members(ssp: Path, zf: zipfile.ZipFile) -> None:
    for info in zf.infolist():
        p = PurePosixPath(info.filename.replace("\\", "/"))
        if p.is_absolute() or ".." in p.parts or (p.parts and ":" in p.parts[0]):
            raise SystemFileError(f"{ssp}: archive member {info.filename!r} would be extracted outside the "
                                  "archive's folder")


def _extract(ssp: Path, extract_dir: Path | None) -> Path:
    try:
        zf = zipfile.ZipFile(ssp)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SystemFileError(f"{ssp}: not a readable SSP (zip) archive: {exc}") from None
    with zf:
        _safe_members(ssp, zf)
        names = zf.namelist()
        if SSD_IN_SSP not in names:
            found = [n for n in names if n.endswith(".ssd")]
            raise SystemFileError(f"{ssp}: the archive has no {SSD_IN_SSP} at its root"
                                  + (f" (found {', '.join(found)})" if found else ""))
        if extract_dir is not None:
            extract_dir = Path(extract_dir)
            extract_dir.mkdir(parents=True, exist_ok=True)
            zf.extractall(extract_dir)
            return extract_dir.absolute()
        digest = hashlib.sha256(ssp.read_bytes()).hexdigest()[:24]
        user = os.getuid() if hasattr(os, "getuid") else "user"
        for root in (_cache_root(), Path(tempfile.gettempdir()) / f"marine-cosim-{user}"):
            target = root / "ssp" / f"{ssp.stem}-{digest}"
            if (target / ".complete").is_file():
                return target.absolute()
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=".extracting-"))
            except OSError:
                continue   # cache not writable: fall back to the temp folder
            try:
                zf.extractall(tmp)
                (tmp / ".complete").write_text(f"{ssp.absolute()}\n")
                os.replace(tmp, target)
            except OSError:
                shutil.rmtree(tmp, ignore_errors=True)
                if not (target / ".complete").is_file():   # not a lost race with another reader
                    raise
            return target.absolute()
        raise SystemFileError(f"{ssp}: no writable folder to extract the archive to (tried {_cache_root()})")


def read_ssp(path: str | os.PathLike, *, extract_dir: str | os.PathLike | None = None) -> System:
    """Read a ``.ssd`` file, a zipped ``.ssp`` archive or a folder with ``SystemStructure.ssd``.

    FMU sources resolve to absolute paths of existing files. For a ``.ssp`` the archive is
    extracted to ``extract_dir`` or, by default, a content-addressed cache folder that is never
    deleted (see the module docstring)."""
    path = Path(path)
    archive = False
    if path.is_dir():
        ssd, display, display_dir = path / SSD_IN_SSP, str(path / SSD_IN_SSP), f"{path}/"
    elif path.suffix.lower() == ".ssp" or (path.is_file() and zipfile.is_zipfile(path)):
        if not path.is_file():
            raise SystemFileError(f"{path}: file not found")
        folder = _extract(path, Path(extract_dir) if extract_dir is not None else None)
        ssd, display, display_dir = folder / SSD_IN_SSP, f"{path}!/{SSD_IN_SSP}", f"{path}!/"
        archive = True
    else:
        ssd, display = path, str(path)
        display_dir = f"{path.parent}/" if str(path.parent) not in ("", ".") else ""
    system = _SsdReader(Path(os.path.abspath(ssd)), display, display_dir, archive=archive).read()
    system.source_file = Path(os.path.abspath(path))
    return system


# ================================================================================ writing


def _sub(parent, ns: str, tag: str, attrib: dict[str, str] | None = None):
    return etree.SubElement(parent, q(ns, tag), {k: v for k, v in (attrib or {}).items() if v is not None})


def _typed_text(kind: str, value: Any, where: str) -> str:
    try:
        if kind == "Real":
            if isinstance(value, str):
                raise TypeError("a string")
            return format_double(float(value))
        if kind in ("Integer", "Enumeration"):
            if isinstance(value, float) and not value.is_integer():
                raise TypeError(f"the non-integer {value!r}")
            if isinstance(value, str):
                raise TypeError("a string")
            return str(int(value))
        if kind == "Boolean":
            if not isinstance(value, (bool, int)):
                raise TypeError(f"{type(value).__name__}")
            return "true" if value else "false"
        return str(value)
    except (TypeError, ValueError) as exc:
        raise SystemFileError(f"{where}: value {value!r} cannot be written as {kind} ({exc})") from None


def python_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "Boolean"
    if isinstance(value, int):
        return "Integer"
    if isinstance(value, float):
        return "Real"
    if isinstance(value, str):
        return "String"
    raise TypeError(type(value).__name__)


def writer_model_info(system: System, name: str) -> ModelInfo:
    comp = system.components[name]
    where = f"write {system.name}: component {name!r}"
    if comp.adapter:
        try:
            return component_info(comp)
        except AdapterError as exc:
            raise SystemFileError(f"{where}: {comp.adapter} adapter: {exc}") from None
    if not Path(comp.source).is_file():
        raise SystemFileError(f"{where}: FMU file not found: {comp.source}")
    try:
        return model_info(Path(comp.source))
    except Exception as exc:
        raise SystemFileError(f"{where}: cannot read the modelDescription.xml of {comp.source}: "
                              f"{type(exc).__name__}: {exc}") from None


def check_connections(system: System, infos: dict[str, ModelInfo]) -> None:
    """The connections name existing components and variables (writers need their types)."""
    for c in system.connections:
        for (comp, var), role in ((c.source, "source"), (c.target, "target")):
            if comp not in system.components:
                raise SystemFileError(f"write {system.name}: connection {c.label()}: unknown {role} component "
                                      f"{comp!r}")
            if var not in infos[comp].variables:
                raise SystemFileError(f"write {system.name}: connection {c.label()}: {infos[comp].path.name} "
                                      f"(component {comp!r}) has no variable {var!r}")


def _backend_element(parent, backend, system_name: str) -> None:
    """``mc:Backend`` as :func:`read_backend_element` reads it (name, address, callTimeout, workers,
    placements with numCpus/numGpus/memory, group and mc:Resource children)."""
    attributes = {"name": backend.name, "address": backend.address,
                  "callTimeout": format_double(backend.call_timeout) if backend.call_timeout is not None else None,
                  "workers": str(int(backend.workers)) if backend.workers is not None else None}
    element = _sub(parent, MC_NS, "Backend", attributes)
    by_key = {key: attribute for attribute, (key, _) in PLACEMENT_ATTRIBUTES.items()}
    for component, options in backend.placement.items():
        unknown = sorted(set(options) - set(by_key) - {"resources", "group"})
        if unknown:
            raise SystemFileError(f"write {system_name}: backend placement of {component!r}: {unknown} cannot be "
                                  f"written to mc:Placement (only {sorted(by_key)}, resources and group)")
        placement = _sub(element, MC_NS, "Placement", {
            "component": component, "group": options.get("group"),
            **{by_key[k]: format_double(float(v)) for k, v in options.items() if k in by_key}})
        for resource, amount in (options.get("resources") or {}).items():
            _sub(placement, MC_NS, "Resource", {"name": str(resource), "value": format_double(float(amount))})


def _mc_annotation(annotations) -> Any:
    """A new ``ssc:Annotation`` of type org.marine-cosim in ``annotations``: the SSP 1.0 schema allows
    one element in each, so every ``mc:`` element gets its own (the reader takes them all)."""
    return _sub(annotations, SSC_NS, "Annotation", {"type": MC_ANNOTATION_TYPE})


def _parameter_set(system: System, name: str, info: ModelInfo, file_text, parent=None) -> Any:
    """The component's start values as an ``ssv:ParameterSet`` (in ``parent``, or the root of an .ssv
    file) typed after the FMU's variables; file values (orchestration.system.file_values) as
    ``file_text(value)`` with ``<mc:File/>``."""
    attributes = {"version": "1.0", "name": f"{name}.parameters"}
    pset = (etree.Element(q(SSV_NS, "ParameterSet"), attributes, nsmap=NSMAP) if parent is None
            else _sub(parent, SSV_NS, "ParameterSet", attributes))
    params = _sub(pset, SSV_NS, "Parameters")
    for var, value in system.components[name].parameters.items():
        where = f"write {system.name}: component {name!r} parameter {var!r}"
        variable = info.variables.get(var)
        if variable is None:
            raise SystemFileError(f"{where}: {info.path.name} has no such variable")
        kind = "Integer" if variable.type == "Enumeration" else variable.type
        if kind not in ("Real", "Integer", "Boolean", "String"):
            raise SystemFileError(f"{where}: variables of type {variable.type} are not supported")
        p_el = _sub(params, SSV_NS, "Parameter", {"name": var})
        is_file = kind == "String" and names_a_file(value) and not system.components[name].adapter
        _sub(p_el, SSV_NS, kind, {"value": file_text(value) if is_file else _typed_text(kind, value, where)})
        if is_file:
            _sub(_mc_annotation(_sub(p_el, SSV_NS, "Annotations")), MC_NS, "File")
    return pset


def _build_ssd(system: System, sources: dict[str, str], backend=None, file_text=None,
               ssv_names: dict[str, str] | None = None) -> tuple[bytes, dict[str, bytes]]:
    """The SystemStructure.ssd and, with ``ssv_names`` (component -> URI), the .ssv files of the
    components' start values by URI (else they are written inline). ``file_text`` turns a file
    reference (a file-valued start value, the scenario) into the text written."""
    ssv_files: dict[str, bytes] = {}
    infos = {name: writer_model_info(system, name) for name in system.components}
    check_connections(system, infos)
    root = etree.Element(q(SSD_NS, "SystemStructureDescription"), nsmap=NSMAP)
    root.set("version", "1.0")
    root.set("name", system.name)
    root.set("generationTool", "marine-cosim orchestration.system.ssp")
    sys_el = _sub(root, SSD_NS, "System", {"name": system.name})

    used: dict[str, dict[str, str]] = {name: {} for name in system.components}   # component -> var -> kind
    for c in system.connections:
        used[c.source[0]].setdefault(c.source[1], "output")
        used[c.target[0]].setdefault(c.target[1], "input")

    elements_el = _sub(sys_el, SSD_NS, "Elements")
    for name, comp in system.components.items():
        info = infos[name]
        if comp.adapter:
            comp_el = _sub(elements_el, SSD_NS, "Component", {"name": name, "type": ADAPTER_TYPE,
                                                               "source": comp.adapter})
        else:
            comp_el = _sub(elements_el, SSD_NS, "Component", {"name": name, "type": FMU_TYPE, "source": sources[name],
                                                               "implementation": "CoSimulation"})
        if used[name]:
            connectors = _sub(comp_el, SSD_NS, "Connectors")
            for var in sorted(used[name], key=list(info.variables).index):
                c_el = _sub(connectors, SSD_NS, "Connector", {"name": var, "kind": used[name][var]})
                vtype = info.variables[var].type
                if vtype in ("Real", "Integer", "Boolean", "String"):
                    _sub(c_el, SSC_NS, vtype)
        if comp.parameters:
            binding = _sub(_sub(comp_el, SSD_NS, "ParameterBindings"), SSD_NS, "ParameterBinding")
            if ssv_names is not None:
                binding.set("source", ssv_names[name])
                ssv_files[ssv_names[name]] = etree.tostring(_parameter_set(system, name, info, file_text),
                                                            xml_declaration=True, encoding="UTF-8", pretty_print=True)
            else:
                _parameter_set(system, name, info, file_text, _sub(binding, SSD_NS, "ParameterValues"))
        if comp.step_multiple != 1:
            if comp.step_multiple < 1 or int(comp.step_multiple) != comp.step_multiple:
                raise SystemFileError(f"write {system.name}: component {name!r}: step_multiple "
                                      f"{comp.step_multiple!r} must be an integer >= 1")
            annotations = _sub(comp_el, SSD_NS, "Annotations")
            if system.base_step is not None and system.algorithm == "fixed":
                osp = _sub(annotations, SSC_NS, "Annotation", {"type": OSP_ANNOTATION_TYPE})
                _sub(osp, OSP_ANNOTATIONS_NS, "StepSizeHint",
                     {"value": format_double(comp.step_multiple * system.base_step)})
            mc = _sub(annotations, SSC_NS, "Annotation", {"type": MC_ANNOTATION_TYPE})
            _sub(mc, MC_NS, "Component", {"stepMultiple": str(int(comp.step_multiple))})

    if system.connections:
        connections_el = _sub(sys_el, SSD_NS, "Connections")
        for c in system.connections:
            src_unit = infos[c.source[0]].variables[c.source[1]].unit
            dst_unit = infos[c.target[0]].variables[c.target[1]].unit
            attrib = {"startElement": c.source[0], "startConnector": c.source[1],
                      "endElement": c.target[0], "endConnector": c.target[1]}
            if src_unit and dst_unit and src_unit != dst_unit:
                attrib["suppressUnitConversion"] = "true"   # factor/offset already hold any conversion
            c_el = _sub(connections_el, SSD_NS, "Connection", attrib)
            if not c.is_identity:
                _sub(c_el, SSC_NS, "LinearTransformation", {"factor": format_double(c.factor),
                                                            "offset": format_double(c.offset)})
            if c.power_bond is not None or c.converts_units:
                c_annotations = _sub(c_el, SSD_NS, "Annotations")
                if c.power_bond is not None:
                    _sub(_mc_annotation(c_annotations), MC_NS, "PowerBond", {"name": c.power_bond})
                if c.converts_units:
                    _sub(_mc_annotation(c_annotations), MC_NS, "UnitConversion")

    de = _sub(root, SSD_NS, "DefaultExperiment", {
        "startTime": format_double(system.start_time),
        "stopTime": format_double(system.stop_time) if system.stop_time is not None else None})
    annotations = _sub(de, SSD_NS, "Annotations")
    if system.base_step is not None and system.algorithm == "fixed":
        osp = _sub(annotations, SSC_NS, "Annotation", {"type": OSP_ANNOTATION_TYPE})
        threads = system.algorithm_options.get("num_worker_threads")
        _sub(_sub(osp, OSP_ANNOTATIONS_NS, "Algorithm"), OSP_ANNOTATIONS_NS, "FixedStepAlgorithm",
             {"baseStepSize": format_double(system.base_step),
              "numWorkerThreads": str(int(threads)) if threads is not None else None})
    algorithm = _sub(_mc_annotation(annotations), MC_NS, "Algorithm", {
        "name": system.algorithm,
        "baseStep": format_double(system.base_step) if system.base_step is not None else None})
    for key, value in system.algorithm_options.items():
        if key == "num_worker_threads" and system.base_step is not None and system.algorithm == "fixed":
            continue   # carried by osp:FixedStepAlgorithm
        try:
            kind = python_kind(value)
        except TypeError as exc:
            raise SystemFileError(f"write {system.name}: algorithm option {key!r}={value!r}: only Real, Integer, "
                                  f"Boolean and String values can be written, not {exc}") from None
        _sub(algorithm, MC_NS, "Option", {"name": str(key), "type": kind,
                                          "value": _typed_text(kind, value, f"option {key!r}")})
    if system.scenario is not None:
        _sub(_mc_annotation(annotations), MC_NS, "Scenario", {"source": file_text(FileValue(system.scenario))})
    if backend is not None:
        _backend_element(_mc_annotation(annotations), backend, system.name)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True), ssv_files


_FROM_SOURCE = object()     # write_ssp's default backend: the mc:Backend of the system's own file


def _resource_names(system: System, files: Any = ()) -> dict[Path, str]:
    """One ``resources/<name>`` per distinct FMU file, then per distinct other file (``files``);
    same-named different files get a suffix."""
    names: dict[Path, str] = {}
    taken: set[str] = set()
    paths = [Path(os.path.abspath(comp.source)) for comp in system.components.values() if not comp.adapter]
    for path in paths + [Path(os.path.abspath(f)) for f in files]:
        if path in names:
            continue
        stem, suffix = path.stem, path.suffix or (".fmu" if path in paths else "")
        candidate, n = f"{stem}{suffix}", 1
        while candidate.lower() in taken:
            n += 1
            candidate = f"{stem}_{n}{suffix}"
        taken.add(candidate.lower())
        names[path] = candidate
    return names


def referenced_files(system: System) -> list[tuple[str, Path]]:
    """(where, path) of every file the system refers to besides its FMUs: file-valued start values
    (orchestration.system.file_values) and the scenario."""
    found = [(f"component {name!r} parameter {var!r}", Path(os.path.abspath(value)))
             for name, comp in system.components.items() for var, value in comp.parameters.items()
             if names_a_file(value) and not comp.adapter]
    if system.scenario is not None:
        found.append(("scenario", Path(os.path.abspath(system.scenario))))
    return found


def write_ssp(system: System, path: str | os.PathLike, backend: Any = _FROM_SOURCE,
              parameter_files: bool | None = None) -> Path:
    """Write ``system`` as a ``.ssd`` (FMU sources and other files relative to its folder) or a
    ``.ssp`` archive (``SystemStructure.ssd`` + ``resources/``: the FMUs, every file the system
    refers to, and the start values). Returns the path written.

    ``parameter_files``: start values in one ``.ssv`` file per component (``resources/<component>.ssv``
    in a ``.ssp``, ``<stem>.<component>.ssv`` beside a ``.ssd``) instead of inline; default: in
    files for a ``.ssp``, inline for a ``.ssd``.

    ``backend`` (a :class:`~orchestration.system.backend_choice.BackendConfig`, or None for none) is
    written as the ``mc:Backend`` annotation; by default ``system.backend``, so converting a system
    keeps its backend choice."""
    path = Path(path)
    if backend is _FROM_SOURCE:
        backend = system.backend
    suffix = path.suffix.lower()
    if suffix not in (".ssd", ".ssp"):
        raise SystemFileError(f"{path}: write_ssp writes .ssd or .ssp files, not {path.suffix or 'no suffix'!r}")
    for name, comp in system.components.items():
        if not comp.adapter and not Path(comp.source).is_file():
            raise SystemFileError(f"write {path}: component {name!r}: FMU file not found: {comp.source}")
    if parameter_files is None:
        parameter_files = suffix == ".ssp"
    with_parameters = [name for name, comp in system.components.items() if comp.parameters]
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".ssd":
        sources = {name: relative_uri(Path(comp.source), path.parent) for name, comp in system.components.items()
                   if not comp.adapter}
        ssv_names = {name: quote(f"{path.stem}.{name}.ssv") for name in with_parameters} if parameter_files else None
        ssd, ssv_files = _build_ssd(system, sources, backend, lambda value: relative_uri(Path(value), path.parent),
                                    ssv_names)
        for uri, data in ssv_files.items():
            (path.parent / unquote(uri)).write_bytes(data)
        path.write_bytes(ssd)
        return path
    files = referenced_files(system)
    for where, file in files:
        if not file.is_file():
            raise SystemFileError(f"write {path}: {where}: file not found: {file} (an .ssp carries every file "
                                  "its system refers to)")
    # names only (inside the archive's own path, so no real file can share them)
    ssv_paths = [Path(os.path.abspath(path)) / "ssv" / f"{name}.ssv" for name in with_parameters]
    resources = _resource_names(system, [file for _, file in files] + (ssv_paths if parameter_files else []))
    sources = {name: f"resources/{quote(resources[Path(os.path.abspath(comp.source))])}"
               for name, comp in system.components.items() if not comp.adapter}
    ssv_names = ({name: f"resources/{quote(resources[p])}" for name, p in zip(with_parameters, ssv_paths)}
                 if parameter_files else None)
    ssd, ssv_files = _build_ssd(system, sources, backend,
                                lambda value: f"resources/{quote(resources[Path(os.path.abspath(value))])}", ssv_names)
    packed = {p: n for p, n in resources.items() if p not in ssv_paths}
    tmp = path.with_name(f".{path.name}.tmp")
    with zipfile.ZipFile(tmp, "w") as zf:
        zf.writestr(zipfile.ZipInfo(SSD_IN_SSP, _ZIP_DATE), ssd, compress_type=zipfile.ZIP_DEFLATED)
        for file, name in packed.items():
            info = zipfile.ZipInfo(f"resources/{name}", _ZIP_DATE)
            info.external_attr = 0o644 << 16
            zf.writestr(info, file.read_bytes(), compress_type=zipfile.ZIP_STORED)
        for uri, data in ssv_files.items():
            info = zipfile.ZipInfo(unquote(uri), _ZIP_DATE)
            info.external_attr = 0o644 << 16
            zf.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)
    os.replace(tmp, path)
    return path
