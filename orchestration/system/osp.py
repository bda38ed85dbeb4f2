"""Read and write OSP system structures (``OspSystemStructure.xml`` + ``*_OspModelDescription.xml``).

Public API::

    read_osp(path) -> System
    write_osp(system, folder, *, copy_fmus=True) -> Path
    osp_model_description(fmu) -> bytes          # the OspModelDescription.xml we generate for an FMU

Format: libcosim's ``OspSystemStructure.xsd`` (namespace
http://opensimulationplatform.com/MSMI/OSPSystemStructure, ``version="0.1"``); the OSP-IS
``OspModelDescription`` (namespace https://open-simulation-platform.com/OspModelDescription/1.0.0).
Every problem is a :class:`~orchestration.system.model.SystemFileError` naming the file, the element
(tag, name, line) and the value.

Reading
-------
``path`` is an ``OspSystemStructure.xml`` (any file name) or a folder holding one. OSP files have
no system name: ``System.name`` is the folder's name (for ``OspSystemStructure.xml``) or the stem.

* ``StartTime``, ``EndTime``, ``BaseStepSize`` -> ``start_time``, ``stop_time``, ``base_step``
  (libcosim itself silently uses 0.1 s when BaseStepSize is missing; we leave ``base_step`` None).
* ``Algorithm``: ``fixedStep`` -> ``"fixed"``, ``ecco`` -> ``"ecco"``; ``EccoConfiguration``
  children -> ``algorithm_options`` with snake_case keys (``SafetyFactor`` -> ``safety_factor``,
  ``StepSize`` -> ``step_size``, ..., ``AbsoluteTolerance`` -> ``absolute_tolerance``).
* ``Simulators/Simulator@name,@source,@stepSize``: ``source`` relative to the XML file (or a
  ``file:`` URI; ``proxyfmu://localhost?file=PATH``: the FMU at PATH, in a worker process of its own
  as libcosim's proxy runs it, ``Component.own_process``; a proxy on another host is refused);
  ``stepSize`` -> ``step_multiple =
  stepSize / BaseStepSize`` (an error unless an integer multiple); ``InitialValues`` (``Real``,
  ``Integer``, ``Boolean``, ``String``) -> ``parameters``; a String that names a file is resolved
  against the folder of the XML file (orchestration.system.file_values).
* ``VariableConnection`` (two ``Variable@simulator,@name``): the direction comes from the
  causalities in the FMUs' modelDescription.xml (one output, one input; an optional
  ``@causality`` must agree, except in a power-bond connection, where libcosim reads it as the
  variable's role in the bond and its own ECCO demo, the quarter truck, declares an FMU output
  "input"); ``@powerBond`` -> ``Connection.power_bond``.
* ``VariableGroupConnection``: both groups are looked up (at any nesting depth) in the
  simulator's ``<modelName>_OspModelDescription.xml`` or ``<fmu stem>_OspModelDescription.xml``,
  beside the FMU or beside the system file (libcosim looks for ``<modelName>_...`` in these two
  places) and joined as libcosim joins them: nested groups one by one in document order (their
  numbers must match), recursively, then the groups' own variables pairwise (their numbers must
  match); each pair's direction from the causalities.
* ``Functions/LinearTransformation@factor,@offset`` with exactly one ``SignalConnection`` into
  its ``in`` and one out of its ``out`` -> a Connection with that factor/offset; functions named
  ``unitConversion...`` give ``converts_units=True`` (that is how :func:`write_osp` marks unit
  conversions, which OSP cannot express otherwise).

* ``Functions/Sum@inputCount`` and ``Functions/VectorSum@inputCount,@dimension`` (libcosim's signals
  ``in[0]`` .. ``in[n-1]`` and ``out``; a Sum joined by ``SignalConnection``s, a VectorSum by
  ``SignalGroupConnection``s to variable groups of the OspModelDescription, element j to the group's
  j-th own variable) -> a ``sum`` port adapter of the function's name, connected by plain
  Connections. Each signal is joined exactly once.

* A ``Simulator`` whose ``source`` is ``marine-cosim-adapter:<kind>`` is a port adapter
  (orchestration.system.adapters): OSP has no element for one, so it is a simulator with a source
  only marine-cosim resolves (libcosim stops at the unknown URI scheme: such a file runs in
  marine-cosim only); its parameters are ``InitialValues``, its ports connect like an FMU's.

Not supported (SystemFileError): other functions, non-file URIs, connections that do not join an
output and an input.

Writing
-------
``write_osp(system, folder)`` writes ``folder/OspSystemStructure.xml``. With ``copy_fmus=True``
(default) every FMU is copied into ``folder`` (same-named different files get ``_2``...) so the
folder is self-contained, and so is every file a start value names (written as its name in
``folder``); with ``copy_fmus=False`` sources and files are paths relative to ``folder``. OSP has no
place for the scenario (give it to the run). A port adapter is written as a Simulator with
``source="marine-cosim-adapter:<kind>"`` (no FMU to copy, no OspModelDescription), except a scalar
``sum`` adapter joined to FMUs by identity connections, which is written as libcosim's ``Sum``.
For every FMU an ``<modelName>_OspModelDescription.xml`` is written into ``folder`` -- beside the
copied FMU, or, without copying, beside the system file, where libcosim also looks (and a
``<fmu stem>_...`` copy when the stem differs from the model name). Identity connections become
``VariableConnection``s (``Variable@causality`` always written: libcosim requires it for power
bonds) with ``powerBond`` when set (and libcosim can load them: see ``power_bonds`` of
:func:`write_osp`) -- one bond per output/input pair each way, as libcosim takes them: a bond of
vector ports, force[0..2] one way and velocity[0..2] back, becomes the bonds
``<bond>.0`` .. ``<bond>.2`` (force[k] with velocity[k]); others a ``LinearTransformation`` function plus two
``SignalConnection``s. A power-bond connection with a transformation cannot be exported (libcosim
bonds are VariableConnections only). The algorithm must be ``fixed`` or ``ecco`` (ECCO needs all
ten ``EccoConfiguration`` options) and ``base_step`` must be set. Lost in OSP: algorithm options of
the fixed-step algorithm.

Variable groups written to the OspModelDescription (from our naming scheme, see docs/interfaces.md;
only input/output vectors ``name[0..n-1]`` with one causality):

* ``P.force`` + ``P.velocity`` (opposite causalities, same length) -> ``LinearMechanicalPort P``
  with ``Force`` and ``LinearVelocity``;
* ``P.force`` + ``P.position`` -> ``LinearMechanicalQuasiPort`` (``P``, or ``P.quasi`` when ``P``
  is already a port) with ``Force`` and ``LinearDisplacement``;
* ``P.torque`` or ``P.moment`` + ``P.angular_velocity`` (or, failing that, the
  ``angular_velocity`` of the nearest enclosing prefix -- a rigid body's angular velocity is the
  same at every point) -> ``AngularMechanicalPort`` (``P`` or ``P.angular``) with ``Torque`` and
  ``AngularVelocity``; torque + ``P.angle``/``P.angular_position``/``P.angular_displacement`` ->
  ``AngularMechanicalQuasiPort``;
* every other vector -> a ``Generic`` group named after the vector.

A nested group is named after its vector (e.g. ``attachment1.force``) unless that name is
already used in the file, then ``<port>.<leaf>``; so every vector can be connected with a
``VariableGroupConnection`` by its own name.
"""
from __future__ import annotations

import os
import re
import shutil
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlparse

from lxml import etree

from orchestration.errors import MissingFmuError
from orchestration.system.adapters import AdapterError, KINDS as ADAPTER_KINDS, MAX_SUM_DIMENSION, MAX_SUM_INPUTS, \
    adapter_description, kind_of_osp_source, osp_source
from orchestration.system.arrays import expand_array_connections
from orchestration.system.fmu_info import info_from_description
from orchestration.system.file_values import names_a_file, resolve_file_value
from orchestration.system.ssp import (BASE_UNITS, parse_typed, ModelInfo, Variable, _resource_names, _typed_text,
                                      check_connections, referenced_files,
                               describe, elements, error, format_double, is_output, load_model_info, local,
                               model_info, parse_double, parse_xml, relative_uri, required, resolve_uri,
                               step_multiple, suggest, writer_model_info)
from orchestration.system.model import Component, Connection, System, SystemFileError

__all__ = ["read_osp", "write_osp", "ExportWarning", "LIBCOSIM_MAX_BONDS", "osp_model_description", "OSP_NS",
           "OSP_MD_NS", "CONFIG_NAME"]

OSP_NS = "http://opensimulationplatform.com/MSMI/OSPSystemStructure"
OSP_MD_NS = "https://open-simulation-platform.com/OspModelDescription/1.0.0"
CONFIG_NAME = "OspSystemStructure.xml"
MD_SUFFIX = "_OspModelDescription.xml"

ALGORITHMS = {"fixedStep": "fixed", "ecco": "ecco"}
ECCO_PARAMETERS = ("SafetyFactor", "StepSize", "MinimumStepSize", "MaximumStepSize", "MinimumChangeRate",
                   "MaximumChangeRate", "ProportionalGain", "IntegralGain", "RelativeTolerance", "AbsoluteTolerance")
UNIT_CONVERSION_PREFIX = "unitConversion"
TRANSFORMATION_PREFIX = "linearTransformation"


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


# ================================================================================ reading


@dataclass
class _Group:
    name: str
    type: str
    variables: list[str]           # the group's own Variable refs
    children: list["_Group"]       # nested groups, document order
    el: Any


@dataclass
class _Function:
    """An OSP function: LinearTransformation (factor, offset), Sum (inputs) or VectorSum (inputs,
    dimension)."""
    kind: str
    factor: float
    offset: float
    el: Any
    inputs: int = 1
    dimension: int = 1

    def signals(self) -> list[str]:
        """Its signals as libcosim names them: in, out; in[0] ... and out."""
        if self.kind == "LinearTransformation":
            return ["in", "out"]
        return [f"in[{i}]" for i in range(self.inputs)] + ["out"]


class _OspReader:
    def __init__(self, path: Path):
        self.path = Path(os.path.abspath(path))
        self.base = self.path.parent
        self.file = str(path)

    def child(self, el, name: str):
        return el.find(f"{{{OSP_NS}}}{name}")

    def text_double(self, root, name: str) -> float | None:
        el = self.child(root, name)
        if el is None:
            return None
        return parse_double(self.file, el, name, el.text or "")

    def read(self) -> System:
        root = parse_xml(self.path, self.file).getroot()
        qn = etree.QName(root)
        if qn.localname != "OspSystemStructure" or qn.namespace != OSP_NS:
            raise error(self.file, root, f"the root element is {qn.localname!r} in namespace {qn.namespace!r}, "
                                         f"not OspSystemStructure ({OSP_NS})")
        system = System(name=self.path.parent.name if self.path.name == CONFIG_NAME else self.path.stem)
        start = self.text_double(root, "StartTime")
        if start is not None:
            system.start_time = start
        system.stop_time = self.text_double(root, "EndTime")
        if system.stop_time is not None and system.stop_time < system.start_time:
            raise error(self.file, self.child(root, "EndTime"), f"EndTime={system.stop_time!r} is before StartTime "
                                                                f"{system.start_time!r}")
        system.base_step = self.text_double(root, "BaseStepSize")
        if system.base_step is not None and not system.base_step > 0:
            raise error(self.file, self.child(root, "BaseStepSize"), f"BaseStepSize={system.base_step!r} must be "
                                                                     "positive")
        algorithm_el = self.child(root, "Algorithm")
        if algorithm_el is not None:
            text = (algorithm_el.text or "").strip()
            if text not in ALGORITHMS:
                raise error(self.file, algorithm_el, f"unknown algorithm {text!r} (fixedStep or ecco)")
            system.algorithm = ALGORITHMS[text]
        ecco = self.child(root, "EccoConfiguration")
        if ecco is not None:
            for p in elements(ecco):
                system.algorithm_options[_snake(local(p))] = parse_double(self.file, p, local(p), p.text or "")

        self.infos: dict[str, ModelInfo] = {}
        self.md_groups: dict[str, dict[str, _Group]] = {}
        simulators = self.child(root, "Simulators")
        if simulators is None:
            raise error(self.file, root, "no Simulators element")
        for sim in elements(simulators):
            if local(sim) == "Simulator":
                system.add_component(self._simulator(sim, system.base_step))

        functions = self._functions(self.child(root, "Functions"))
        for name, f in functions.items():
            if f.kind != "LinearTransformation":
                if name in system.components:
                    raise error(self.file, f.el, f"function name {name!r} is also a simulator's (marine-cosim makes "
                                                 "the function a component of that name)")
                # OSP's Sum and VectorSum: the master's sum adapter (orchestration.system.adapters)
                system.add_component(Component(name=name, source=None, adapter="sum",
                                               parameters={"inputs": f.inputs, "dimension": f.dimension},
                                               origin=f"{self.file}: {describe(f.el)}"))
        connections_el = self.child(root, "Connections")
        children = list(elements(connections_el)) if connections_el is not None else []
        signal_connections = [self._signal_connection(el, functions) for el in children
                              if local(el) in ("SignalConnection", "SignalGroupConnection")]
        used: dict[str, dict[str, list]] = {name: {} for name in functions}
        for sc in signal_connections:
            used[sc["function"]].setdefault(sc["signal"], []).append(sc)
        for name, f in functions.items():
            for signal in f.signals():
                found = len(used[name].get(signal, []))
                if found != 1:
                    raise error(self.file, f.el, f"{f.kind} {name!r} needs exactly one connection of its signal "
                                                 f"{signal!r} (found {found})")

        for el in children:
            kind = local(el)
            if kind == "VariableConnection":
                system.connections.append(self._variable_connection(el))
            elif kind == "VariableGroupConnection":
                system.connections.extend(self._group_connection(el))
            elif kind in ("SignalConnection", "SignalGroupConnection"):
                sc = next(s for s in signal_connections if s["el"] is el)
                f = functions[sc["function"]]
                if f.kind == "LinearTransformation":
                    if sc["signal"] == "out":
                        system.connections.append(self._transformation(el, sc, used[sc["function"]]["in"][0], f))
                else:
                    system.connections.extend(self._sum_connections(el, sc, f))
        expand_array_connections(system)
        system.check_single_drivers(str(self.file))
        return system

    # ---------------------------------------------------------------- simulators

    def _simulator(self, el, base_step: float | None) -> Component:
        name = required(self.file, el, "name")
        if "." in name:
            raise error(self.file, el, f"simulator name {name!r} contains a '.', which marine-cosim uses to "
                                       "separate component and variable")
        source = required(self.file, el, "source")
        kind = kind_of_osp_source(source)
        if kind is not None:
            return self._adapter(el, name, kind, base_step)
        own_process = source.startswith("proxyfmu:")
        path = self._proxy_file(el, source) if own_process else resolve_uri(self.file, el, source, self.base)
        if not path.is_file():
            raise MissingFmuError(str(error(self.file, el, f"FMU file not found: source={source!r} (resolved to "
                                                           f"{path})")), path)
        info = load_model_info(self.file, el, path)
        self.infos[name] = info
        component = Component(name=name, source=path, origin=f"{self.file}: {describe(el)}", own_process=own_process)
        if el.get("stepSize") is not None:
            component.step_multiple = step_multiple(self.file, el, parse_double(self.file, el, "stepSize"),
                                                    base_step, "stepSize")
        for var, value, variable in self._initial_values(el, name, info, path.name):
            # a String naming a file: relative to this file's folder (orchestration.system.file_values)
            component.parameters[var] = resolve_file_value(value, self.base) if variable.type == "String" else value
        return component

    def _initial_values(self, el, name: str, info: ModelInfo, what: str, lenient: bool = False):
        """Yield (variable, value, Variable) of a Simulator's InitialValues; ``lenient``: skip names
        ``info`` does not have (an adapter's first pass)."""
        initial = el.find(f"{{{OSP_NS}}}InitialValues")
        for iv in (elements(initial) if initial is not None else ()):
            var = required(self.file, iv, "variable")
            typed = list(elements(iv))
            if len(typed) != 1:
                raise error(self.file, iv, "expected one of Real, Integer, Boolean, String")
            t = typed[0]
            variable = info.variables.get(var)
            if variable is None:
                if lenient:
                    continue
                raise error(self.file, iv, f"{what} (simulator {name!r}) has no variable {var!r}"
                                           f"{suggest(var, info.variables)}")
            yield var, self._value(t, local(t), variable, what), variable

    def _adapter(self, el, name: str, kind: str, base_step: float | None) -> Component:
        """A port adapter (``source="marine-cosim-adapter:<kind>"``, orchestration.system.adapters): its
        initial values are read first for those that shape its interface, then with the interface."""
        if kind not in ADAPTER_KINDS:
            raise error(self.file, el, f"unknown adapter kind {kind!r}{suggest(kind, ADAPTER_KINDS)} (kinds: "
                                       f"{', '.join(ADAPTER_KINDS)})")

        def interface(values) -> ModelInfo:
            try:
                return info_from_description(adapter_description(kind, values), Path(f"{kind} adapter"))
            except AdapterError as exc:
                raise error(self.file, el, f"{kind} adapter: {exc}") from None

        component = Component(name=name, source=None, adapter=kind, origin=f"{self.file}: {describe(el)}")
        what = f"{kind} adapter"
        structural = {var: value for var, value, _ in self._initial_values(el, name, interface({}), what, True)}
        info = interface(structural)
        for var, value, _ in self._initial_values(el, name, info, what):
            component.parameters[var] = value
        self.infos[name] = interface(component.parameters)
        if el.get("stepSize") is not None:
            component.step_multiple = step_multiple(self.file, el, parse_double(self.file, el, "stepSize"),
                                                    base_step, "stepSize")
        return component

    def _value(self, el, kind: str, variable: Variable, fmu: str) -> Any:
        text = el.get("value")
        if text is None:
            raise error(self.file, el, "attribute 'value' is missing")
        # as strict as libcosim, which rejects the whole file for e.g. an Integer value of a Real variable
        expected = "Integer" if variable.type == "Enumeration" else variable.type
        if kind != expected:
            raise error(self.file, el, f"a {kind} value for {variable.name!r}, which is {variable.type} in {fmu} "
                                       f"(libcosim rejects this too)")
        return parse_typed(self.file, el, kind, text)

    # ---------------------------------------------------------------- connections

    def _variable(self, el, bond: bool = False) -> tuple[str, str, str]:
        """(simulator, variable, causality) of a Variable endpoint; ``bond``: in a power-bond
        connection, where libcosim reads ``@causality`` as the variable's role in the bond (input_a,
        output_b, ...), not as the FMU's causality, so it is not checked against the FMU."""
        sim = required(self.file, el, "simulator")
        name = required(self.file, el, "name")
        if sim not in self.infos:
            raise error(self.file, el, f"unknown simulator {sim!r} (simulators: {', '.join(self.infos) or 'none'})")
        variable = self.infos[sim].variables.get(name)
        if variable is None:
            raise error(self.file, el, f"{self.infos[sim].path.name} (simulator {sim!r}) has no variable {name!r}"
                                       f"{suggest(name, self.infos[sim].variables)}")
        declared = el.get("causality")
        if declared is not None and declared != variable.causality and not bond:
            raise error(self.file, el, f"causality={declared!r}, but {name!r} is {variable.causality} in "
                                       f"{self.infos[sim].path.name}")
        return sim, name, variable.causality

    def _pair(self, el, a: tuple[str, str, str], b: tuple[str, str, str], bond: str | None) -> Connection:
        if is_output(a[2]) and b[2] == "input":
            src, dst = a, b
        elif is_output(b[2]) and a[2] == "input":
            src, dst = b, a
        else:
            raise error(self.file, el, f"connects {a[0]}.{a[1]} ({a[2]}) and {b[0]}.{b[1]} ({b[2]}); a connection "
                                       "must join an output and an input")
        return Connection(source=(src[0], src[1]), target=(dst[0], dst[1]), power_bond=bond,
                          origin=f"{self.file}: {describe(el)}")

    def _variable_connection(self, el) -> Connection:
        variables = [v for v in elements(el) if local(v) == "Variable"]
        if len(variables) != 2:
            raise error(self.file, el, f"expected two Variable elements, found {len(variables)}")
        bond = el.get("powerBond")
        a, b = (self._variable(v, bond is not None) for v in variables)
        return self._pair(el, a, b, bond)

    def _proxy_file(self, el, source: str) -> Path:
        """The FMU of libcosim's ``proxyfmu://localhost?file=PATH`` (PATH relative to the system file, or a
        ``file:`` URI): libcosim's proxy-fmu runs it in a process of its own, which marine-cosim's in-process
        runs give it too (a worker process, orchestration.backends.process). A proxy server on another
        host (``proxyfmu://HOST:PORT?file=...``) is refused: ``--backend ray`` places FMUs on other machines."""
        parsed = urlparse(source)
        host = parsed.netloc or parsed.path.strip("/")        # proxyfmu:///localhost?file=... too
        if host != "localhost" or (parsed.netloc and parsed.path not in ("", "/")):
            raise error(self.file, el, f"source {source!r}: a proxyfmu server on {host or '(no host)'!r} "
                                       "(libcosim's remote proxy); marine-cosim runs FMUs on other machines with "
                                       "--backend ray, and proxyfmu://localhost?file=... in a process of its own")
        query = parse_qs(parsed.query)
        if len(query.get("file", [])) != 1 or set(query) != {"file"}:
            raise error(self.file, el, f"source {source!r}: proxyfmu://localhost takes one query, file=PATH")
        return resolve_uri(self.file, el, query["file"][0], self.base)

    def _functions(self, functions_el) -> dict[str, "_Function"]:
        functions: dict[str, _Function] = {}
        for f in (elements(functions_el) if functions_el is not None else ()):
            kind = local(f)
            name = required(self.file, f, "name")
            if kind not in ("LinearTransformation", "Sum", "VectorSum"):
                raise error(self.file, f, f"{kind} functions are not supported (LinearTransformation, Sum and "
                                          "VectorSum are)")
            if name in functions:
                raise error(self.file, f, f"function name {name!r} is used twice")
            if "." in name:
                raise error(self.file, f, f"function name {name!r} contains a '.', which marine-cosim uses to "
                                          "separate component and variable")
            factor = parse_double(self.file, f, "factor") if f.get("factor") is not None else 1.0
            offset = parse_double(self.file, f, "offset") if f.get("offset") is not None else 0.0
            inputs = dimension = 1
            if kind != "LinearTransformation":
                inputs = self._count(f, "inputCount", MAX_SUM_INPUTS)
                dimension = self._count(f, "dimension", MAX_SUM_DIMENSION) if kind == "VectorSum" else 1
            functions[name] = _Function(kind, factor, offset, f, inputs, dimension)
        return functions

    def _count(self, el, attribute: str, top: int) -> int:
        text = required(self.file, el, attribute).strip()
        if not text.isdigit() or not 1 <= int(text) <= top:
            raise error(self.file, el, f"{attribute}={text!r} must be a whole number from 1 to {top}")
        return int(text)

    def _signal_connection(self, el, functions) -> dict:
        """A SignalConnection (a Variable and a Signal) or SignalGroupConnection (a VariableGroup and a
        SignalGroup), the signal checked against its function's."""
        group = local(el) == "SignalGroupConnection"
        variable = [v for v in elements(el) if local(v) == ("VariableGroup" if group else "Variable")]
        signal = [s for s in elements(el) if local(s) == ("SignalGroup" if group else "Signal")]
        if len(variable) != 1 or len(signal) != 1:
            raise error(self.file, el, "expected one VariableGroup and one SignalGroup" if group else
                        "expected one Variable and one Signal")
        function = required(self.file, signal[0], "function")
        sig = required(self.file, signal[0], "name")
        if function not in functions:
            raise error(self.file, signal[0], f"unknown function {function!r}")
        f = functions[function]
        if group != (f.kind == "VectorSum"):
            raise error(self.file, el, f"a {f.kind} function is connected by "
                                       f"{'SignalGroupConnection' if f.kind == 'VectorSum' else 'SignalConnection'}")
        if sig not in f.signals():
            raise error(self.file, signal[0], f"{f.kind} {function!r} has the signals {', '.join(f.signals())}, "
                                              f"not {sig!r}")
        if group:
            sim = required(self.file, variable[0], "simulator")
            name = required(self.file, variable[0], "name")
            if sim not in self.infos:
                raise error(self.file, variable[0], f"unknown simulator {sim!r} (simulators: "
                                                    f"{', '.join(self.infos) or 'none'})")
            causality = None
        else:
            sim, name, causality = self._variable(variable[0])
        return {"el": el, "function": function, "signal": sig, "simulator": sim, "name": name,
                "causality": causality}

    def _transformation(self, el, out: dict, into: dict, f: "_Function") -> Connection:
        """The Connection of a LinearTransformation: its 'in' source to its 'out' target."""
        if not is_output(into["causality"]):
            raise error(self.file, into["el"], f"{into['simulator']}.{into['name']} is {into['causality']}, "
                                               "not an output")
        if out["causality"] != "input":
            raise error(self.file, el, f"{out['simulator']}.{out['name']} is {out['causality']}, not an input")
        return Connection(source=(into["simulator"], into["name"]), target=(out["simulator"], out["name"]),
                          factor=f.factor, offset=f.offset,
                          converts_units=out["function"].startswith(UNIT_CONVERSION_PREFIX),
                          origin=f"{self.file}: {describe(f.el)}")

    def _sum_connections(self, el, sc: dict, f: "_Function") -> list[Connection]:
        """A Sum's or VectorSum's signal joined to its variable (VectorSum: the variable group's own
        variables in order, the first ``dimension`` of them, as libcosim joins them)."""
        sim, fname, sig = sc["simulator"], sc["function"], sc["signal"]
        if f.kind == "VectorSum":
            group = self._groups(sim, el).get(sc["name"])
            if group is None:
                raise error(self.file, el, f"simulator {sim!r} has no variable group {sc['name']!r} in its "
                                           "OspModelDescription")
            if len(group.variables) < f.dimension:
                raise error(self.file, el, f"group {sim}.{group.name} has {len(group.variables)} variables; the "
                                           f"VectorSum {fname!r} has dimension {f.dimension}")
            names = group.variables[:f.dimension]
            ports = [f"{sig}[{j}]" for j in range(f.dimension)]
        else:
            names, ports = [sc["name"]], [sig]
        connections = []
        origin = f"{self.file}: {describe(el)}"
        for name, port in zip(names, ports):
            causality = self.infos[sim].variables[name].causality
            if sig == "out":
                if causality != "input":
                    raise error(self.file, el, f"{sim}.{name} is {causality}, not an input")
                connections.append(Connection(source=(fname, port), target=(sim, name), origin=origin))
            else:
                if not is_output(causality):
                    raise error(self.file, el, f"{sim}.{name} is {causality}, not an output")
                connections.append(Connection(source=(sim, name), target=(fname, port), origin=origin))
        return connections

    def _groups(self, sim: str, el) -> dict[str, _Group]:
        if sim in self.md_groups:
            return self.md_groups[sim]
        info = self.infos[sim]
        names = [f"{info.model_name}{MD_SUFFIX}", f"{info.path.stem}{MD_SUFFIX}"]
        candidates = [folder / n for folder in (info.path.parent, self.base) for n in names]
        path = next((c for c in candidates if c.is_file()), None)
        if path is None:
            raise error(self.file, el, f"simulator {sim!r}: no OspModelDescription found for the group connection "
                                       f"(looked for {', '.join(str(c) for c in dict.fromkeys(candidates))})")
        md_file = str(path)
        root = parse_xml(path, md_file).getroot()
        groups: dict[str, _Group] = {}
        container = next((c for c in elements(root) if local(c) == "VariableGroups"), None)
        if container is None:
            raise error(md_file, root, "no VariableGroups element")

        def build(g) -> _Group:
            gname = g.get("name")
            if not gname:
                raise error(md_file, g, "attribute 'name' is missing")
            own, nested = [], []
            for c in elements(g):
                if local(c) == "Variable":
                    ref = c.get("ref") or c.get("name")
                    if not ref:
                        raise error(md_file, c, "attribute 'ref' is missing")
                    if ref not in info.variables:
                        raise error(md_file, c, f"{info.path.name} has no variable {ref!r}")
                    own.append(ref)
                else:
                    nested.append(build(c))
            return _Group(gname, g.get("type") or local(g), own, nested, g)

        # breadth first: a top-level group wins over a nested one of the same name (as in libcosim)
        level = [build(g) for g in elements(container)]
        while level:
            for g in level:
                groups.setdefault(g.name, g)
            level = [child for g in level for child in g.children]
        self.md_groups[sim] = groups
        return groups

    def _pairs(self, el, sa: str, ga: _Group, sb: str, gb: _Group) -> list[tuple[str, str]]:
        """libcosim's rule: nested groups pairwise (recursively), then own variables pairwise."""
        if len(ga.children) != len(gb.children):
            raise error(self.file, el, f"group {sa}.{ga.name} has {len(ga.children)} nested groups and "
                                       f"{sb}.{gb.name} has {len(gb.children)}; groups are joined nested group by "
                                       "nested group")
        pairs = []
        for ca, cb in zip(ga.children, gb.children):
            pairs.extend(self._pairs(el, sa, ca, sb, cb))
        if len(ga.variables) != len(gb.variables):
            raise error(self.file, el, f"group {sa}.{ga.name} has {len(ga.variables)} variables and {sb}.{gb.name} "
                                       f"has {len(gb.variables)}")
        pairs.extend(zip(ga.variables, gb.variables))
        return pairs

    def _group_connection(self, el) -> list[Connection]:
        ends = [g for g in elements(el) if local(g) == "VariableGroup"]
        if len(ends) != 2:
            raise error(self.file, el, f"expected two VariableGroup elements, found {len(ends)}")
        flat = []
        for end in ends:
            sim = required(self.file, end, "simulator")
            name = required(self.file, end, "name")
            if sim not in self.infos:
                raise error(self.file, end, f"unknown simulator {sim!r} (simulators: {', '.join(self.infos)})")
            group = self._groups(sim, end).get(name)
            if group is None:
                raise error(self.file, end, f"simulator {sim!r} has no variable group {name!r} in its "
                                            "OspModelDescription")
            flat.append((sim, group))
        (sa, ga), (sb, gb) = flat
        bond = el.get("powerBond")
        connections = []
        for va, vb in self._pairs(el, sa, ga, sb, gb):
            a = (sa, va, self.infos[sa].variables[va].causality)
            b = (sb, vb, self.infos[sb].variables[vb].causality)
            connections.append(self._pair(el, a, b, bond))
        return connections


def read_osp(path: str | os.PathLike) -> System:
    """Read an ``OspSystemStructure.xml`` (or a folder holding one) into a System."""
    path = Path(path)
    if path.is_dir():
        path = path / CONFIG_NAME
    system = _OspReader(path).read()
    system.source_file = Path(os.path.abspath(path))
    return system


# ================================================================================ OspModelDescription


_VECTOR = re.compile(r"^(?P<base>.+)\[(?P<index>\d+)\]$")


@dataclass
class _PortGroup:
    type: str                      # Generic, LinearMechanicalPort, ...
    name: str
    variables: list[Variable] = field(default_factory=list)
    children: list["_PortGroup"] = field(default_factory=list)


# schema order of the VariableGroups sequence (OspModelDescription 1.0.x)
_GROUP_ORDER = ("Generic", "LinearMechanicalPort", "AngularMechanicalPort", "LinearMechanicalQuasiPort",
                "AngularMechanicalQuasiPort")


def _vectors(info: ModelInfo) -> dict[str, list[Variable]]:
    """Input/output vectors ``name[0..n-1]`` with one causality, in modelDescription order."""
    found: dict[str, dict[int, Variable]] = {}
    for v in info.variables.values():
        m = _VECTOR.match(v.name)
        if m and v.causality in ("input", "output"):
            found.setdefault(m["base"], {})[int(m["index"])] = v
    vectors = {}
    for base, items in found.items():
        causalities = {v.causality for v in items.values()}
        if sorted(items) == list(range(len(items))) and len(causalities) == 1:
            vectors[base] = [items[i] for i in range(len(items))]
    return vectors


def variable_groups(info: ModelInfo) -> list[_PortGroup]:
    """The OSP-IS variable groups derived from our naming scheme (see the module docstring)."""
    vectors = _vectors(info)
    by_prefix: dict[str, dict[str, str]] = {}
    for name in vectors:
        prefix, _, leaf = name.rpartition(".")
        by_prefix.setdefault(prefix, {})[leaf] = name
    taken: set[str] = set()
    covered: set[str] = set()
    groups: list[_PortGroup] = []

    def unique(name: str, fallback: str) -> str:
        result = name if name not in taken else fallback
        n = 2
        while result in taken:
            result, n = f"{fallback}{n}", n + 1
        taken.add(result)
        return result

    def pair(effort: str | None, flow: str | None) -> bool:
        if effort is None or flow is None:
            return False
        a, b = vectors[effort], vectors[flow]
        return len(a) == len(b) and {a[0].causality, b[0].causality} == {"input", "output"}

    def port(ptype: str, prefix: str, suffix: str, roles: tuple[tuple[str, str, str], ...]) -> None:
        base = prefix or "port"
        pname = unique(base, f"{base}.{suffix}")
        group = _PortGroup(ptype, pname)
        for child_type, leaf, vector in roles:
            group.children.append(_PortGroup(child_type, unique(vector, f"{pname}.{leaf}"), list(vectors[vector])))
            covered.add(vector)
        groups.append(group)

    def ancestor_angular_velocity(prefix: str) -> str | None:
        while True:
            name = by_prefix.get(prefix, {}).get("angular_velocity")
            if name:
                return name
            if not prefix:
                return None
            prefix = prefix.rpartition(".")[0]

    for prefix, leaves in by_prefix.items():
        force = leaves.get("force")
        if pair(force, leaves.get("velocity")):
            port("LinearMechanicalPort", prefix, "linear",
                 (("Force", "force", force), ("LinearVelocity", "velocity", leaves["velocity"])))
        if pair(force, leaves.get("position")):
            port("LinearMechanicalQuasiPort", prefix, "quasi",
                 (("Force", "force", force), ("LinearDisplacement", "position", leaves["position"])))
        torque = leaves.get("torque") or leaves.get("moment")
        if torque:
            omega = ancestor_angular_velocity(prefix)
            if pair(torque, omega):
                port("AngularMechanicalPort", prefix, "angular",
                     (("Torque", "torque", torque), ("AngularVelocity", "angular_velocity", omega)))
            angle = next((leaves[k] for k in ("angular_displacement", "angular_position", "angle") if k in leaves),
                         None)
            if pair(torque, angle):
                port("AngularMechanicalQuasiPort", prefix, "angular_quasi",
                     (("Torque", "torque", torque), ("AngularDisplacement", "angle", angle)))
    for name, variables in vectors.items():
        if name not in covered:
            groups.append(_PortGroup("Generic", unique(name, f"{name}.generic"), list(variables)))
    return sorted(groups, key=lambda g: _GROUP_ORDER.index(g.type))


def _model_description_xml(info: ModelInfo) -> bytes:
    root = etree.Element(f"{{{OSP_MD_NS}}}OspModelDescription", nsmap={None: OSP_MD_NS})
    root.set("version", "1.0")
    units_el = etree.SubElement(root, f"{{{OSP_MD_NS}}}UnitDefinitions")
    for unit in info.units.values():
        u = etree.SubElement(units_el, f"{{{OSP_MD_NS}}}Unit", name=unit.name)
        attrib = {b: str(e) for b, e in zip(BASE_UNITS, unit.exponents) if e}
        if unit.factor != 1.0:
            attrib["factor"] = format_double(unit.factor)
        if unit.offset != 0.0:
            attrib["offset"] = format_double(unit.offset)
        etree.SubElement(u, f"{{{OSP_MD_NS}}}BaseUnit", attrib)
    groups_el = etree.SubElement(root, f"{{{OSP_MD_NS}}}VariableGroups")   # always present: libcosim needs it

    def emit(parent, group: _PortGroup) -> None:
        g = etree.SubElement(parent, f"{{{OSP_MD_NS}}}{group.type}", name=group.name)
        for child in group.children:
            emit(g, child)
        for v in group.variables:
            attrib = {"ref": v.name}
            if v.unit:
                attrib["unit"] = v.unit
            etree.SubElement(g, f"{{{OSP_MD_NS}}}Variable", attrib)

    for group in variable_groups(info):
        emit(groups_el, group)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def osp_model_description(fmu: str | os.PathLike) -> bytes:
    """The ``OspModelDescription.xml`` text that :func:`write_osp` writes for ``fmu``."""
    try:
        info = model_info(Path(fmu))
    except Exception as exc:
        raise SystemFileError(f"{fmu}: cannot read the modelDescription.xml: {type(exc).__name__}: {exc}") from None
    return _model_description_xml(info)


# ================================================================================ writing


def _sub(parent, tag: str, attrib: dict[str, str | None] | None = None, text: str | None = None):
    el = etree.SubElement(parent, f"{{{OSP_NS}}}{tag}", {k: v for k, v in (attrib or {}).items() if v is not None})
    if text is not None:
        el.text = text
    return el


def scalar_bonds(system: System, where: str) -> dict[int, str]:
    """libcosim's power bond names per connection (``id(connection)``): libcosim takes exactly two
    connections per bond, one output/input pair each way, so a bond of vector ports is written as
    one bond per pair -- the k-th connection one way with the k-th the other way (force[k] with
    velocity[k]), named ``<bond>.<k>`` (the bond's own name when it has one pair)."""
    groups: dict[str, list[Connection]] = {}
    for c in system.connections:
        if c.power_bond is not None:
            groups.setdefault(c.power_bond, []).append(c)
    names: dict[int, str] = {}
    taken = set(groups)
    for bond, conns in groups.items():
        first = conns[0].source[0], conns[0].target[0]
        forth = [c for c in conns if (c.source[0], c.target[0]) == first]
        back = [c for c in conns if (c.source[0], c.target[0]) == first[::-1]]
        if len(forth) + len(back) != len(conns) or len(forth) != len(back):
            raise SystemFileError(f"{where}: power bond {bond!r} has {len(forth)} connection(s) from {first[0]} to "
                                  f"{first[1]} and {len(back)} back (and {len(conns) - len(forth) - len(back)} between "
                                  "other components): libcosim needs the same number each way between two components, "
                                  "paired in order (force[k] with velocity[k])")
        for k, (a, b) in enumerate(zip(forth, back)):
            name = bond if len(forth) == 1 else f"{bond}.{k}"
            if len(forth) > 1 and name in taken:
                raise SystemFileError(f"{where}: power bond {bond!r} would be split into {name!r}, which is also the "
                                      "name of another bond; rename one")
            names[id(a)] = names[id(b)] = name
    return names


class ExportWarning(UserWarning):
    """Something of the system that the written file leaves out, and why."""


#: libcosim (libcosimpy 0.0.6, and upstream at 52cc825) compares the number of bonds with the number of
#: bond names inside the loop that adds the bonds (osp_config_parser.cpp, add_power_bonds): a file with
#: a second bond fails that check after the first bond, so it loads at most this many.
LIBCOSIM_MAX_BONDS = 1


def _libcosim_bonds(system: System, where: str, power_bonds: bool | None) -> dict[int, str]:
    """The bond names to write (:func:`scalar_bonds`), or none when libcosim could not load them
    (``power_bonds`` None, see :func:`write_osp`)."""
    names = scalar_bonds(system, where)
    count = len(set(names.values()))
    if power_bonds is None and count > LIBCOSIM_MAX_BONDS:
        why = (f"libcosim loads at most {LIBCOSIM_MAX_BONDS} power bond per OspSystemStructure (it checks the "
               "bond names inside the loop that adds the bonds, so a second bond fails the check) and this "
               f"system has {count} ({', '.join(sorted(set(names.values())))})")
        if system.algorithm == "ecco":
            raise SystemFileError(f"{where}: {why}; its ECCO algorithm needs them: run ECCO with marine-cosim, or "
                                  "write the bonds anyway (power_bonds=True) for a tool that reads them")
        warnings.warn(f"{where}: power bonds left out: {why}; the fixed-step algorithm does not use them "
                      "(power_bonds=True writes them)", ExportWarning, stacklevel=3)
        return {}
    for c in system.connections:
        if not c.is_identity and c.power_bond is not None:
            raise SystemFileError(f"{where}: cannot export connection {c.label()} with a linear transformation "
                                  f"(factor {c.factor!r}, offset {c.offset!r}) in power bond {c.power_bond!r} to OSP: "
                                  "libcosim power bonds are plain VariableConnections")
    return names


def _native_sums(system: System) -> dict[str, int]:
    """The sum adapters an OSP ``Sum`` function can stand for (name -> inputs): scalar ones, each input
    and the output joined once, by identity connections to FMUs (OSP joins no function to another and
    no transformation to a Sum). Others are written as adapter simulators (marine-cosim only)."""
    found = {}
    for name, comp in system.components.items():
        if comp.adapter != "sum" or int(comp.parameters.get("dimension", 1)) != 1:
            continue
        inputs = int(comp.parameters.get("inputs", 2))
        touching = [c for c in system.connections if name in (c.source[0], c.target[0])]
        ends = sorted(c.target[1] if c.target[0] == name else c.source[1] for c in touching)
        others = [c.target[0] if c.source[0] == name else c.source[0] for c in touching]
        if ends == sorted([f"in[{i}]" for i in range(inputs)] + ["out"]) and all(c.is_identity for c in touching) \
                and not any(system.components[o].adapter for o in others):
            found[name] = inputs
    return found


def write_osp(system: System, folder: str | os.PathLike, *, copy_fmus: bool = True,
              power_bonds: bool | None = None) -> Path:
    """Write ``folder/OspSystemStructure.xml`` and an ``<modelName>_OspModelDescription.xml`` per
    FMU; returns the path of the system file. See the module docstring.

    ``power_bonds``: write the ``powerBond`` attributes (True), leave them out (False), or (None)
    write them when libcosim can load the file with them -- at most :data:`LIBCOSIM_MAX_BONDS`
    scalar bond -- and otherwise leave them out with an :class:`ExportWarning` when the algorithm
    is ``fixed`` (which does not use them), or refuse when it is ``ecco`` (which needs them)."""
    folder = Path(folder)
    where = f"write {folder / CONFIG_NAME}"
    infos = {name: writer_model_info(system, name) for name in system.components}
    check_connections(system, infos)
    if system.base_step is None:
        raise SystemFileError(f"{where}: system {system.name!r} has no base step; OSP needs a BaseStepSize")
    osp_algorithm = {v: k for k, v in ALGORITHMS.items()}.get(system.algorithm)
    if osp_algorithm is None:
        raise SystemFileError(f"{where}: algorithm {system.algorithm!r} cannot be exported to OSP (only "
                              f"{', '.join(ALGORITHMS.values())})")
    ecco_values = {}
    if system.algorithm == "ecco":
        missing = [p for p in ECCO_PARAMETERS if _snake(p) not in system.algorithm_options]
        if missing:
            raise SystemFileError(f"{where}: the ecco algorithm needs the options "
                                  f"{', '.join(_snake(p) for p in missing)} (OSP EccoConfiguration has no defaults)")
        ecco_values = {p: system.algorithm_options[_snake(p)] for p in ECCO_PARAMETERS}
    bond_names = {} if power_bonds is False else _libcosim_bonds(system, where, power_bonds)

    folder.mkdir(parents=True, exist_ok=True)
    # ---------------------------------------------------------------- FMUs, files and OspModelDescriptions
    sources: dict[str, str] = {}
    files = [(w, f) for w, f in referenced_files(system) if w != "scenario"]     # OSP has no place for a scenario
    copies = _resource_names(system, [f for _, f in files]) if copy_fmus else {}
    for w, file in files:
        if copy_fmus:
            if not file.is_file():
                raise SystemFileError(f"{where}: {w}: file not found: {file} (the folder carries every file its "
                                      "system refers to)")
            dest = folder / copies[file]
            if not (dest.exists() and os.path.samefile(dest, file)):
                shutil.copyfile(file, dest)
    file_text = ((lambda value: quote(copies[Path(os.path.abspath(value))])) if copy_fmus
                 else (lambda value: relative_uri(Path(value), folder)))
    descriptions: dict[str, tuple[bytes, Path]] = {}   # file name -> (content, FMU)
    for name, comp in system.components.items():
        if comp.adapter:        # evaluated by marine-cosim: nothing to copy, no OspModelDescription
            sources[name] = osp_source(comp.adapter)
            continue
        fmu = Path(os.path.abspath(comp.source))
        if copy_fmus:
            dest = folder / copies[fmu]
            if not (dest.exists() and os.path.samefile(dest, fmu)):
                shutil.copyfile(fmu, dest)
            sources[name] = quote(copies[fmu])
        else:
            sources[name] = relative_uri(fmu, folder)
        info = infos[name]
        content = _model_description_xml(info)
        for md_name in dict.fromkeys((f"{info.model_name}{MD_SUFFIX}", f"{fmu.stem}{MD_SUFFIX}")):
            previous = descriptions.get(md_name)
            if previous is not None and previous[0] != content:
                raise SystemFileError(f"{where}: FMUs {previous[1]} and {fmu} both need {md_name} but describe "
                                      "different variables; give them different model names")
            descriptions[md_name] = (content, fmu)
    for md_name, (content, _) in descriptions.items():
        (folder / md_name).write_bytes(content)

    # ---------------------------------------------------------------- OspSystemStructure.xml
    root = etree.Element(f"{{{OSP_NS}}}OspSystemStructure", nsmap={None: OSP_NS})
    root.set("version", "0.1")
    _sub(root, "StartTime", text=format_double(system.start_time))
    if system.stop_time is not None:
        _sub(root, "EndTime", text=format_double(system.stop_time))
    _sub(root, "BaseStepSize", text=format_double(system.base_step))
    _sub(root, "Algorithm", text=osp_algorithm)
    sums = _native_sums(system)
    simulators = _sub(root, "Simulators")
    for name, comp in system.components.items():
        if name in sums:
            continue                 # an OSP Sum function (below)
        if comp.step_multiple < 1 or int(comp.step_multiple) != comp.step_multiple:
            raise SystemFileError(f"{where}: component {name!r}: step_multiple {comp.step_multiple!r} must be an "
                                  "integer >= 1")
        sim = _sub(simulators, "Simulator", {
            "name": name, "source": f"proxyfmu://localhost?file={sources[name]}" if comp.own_process else sources[name],
            "stepSize": format_double(comp.step_multiple * system.base_step) if comp.step_multiple != 1 else None})
        if comp.parameters:
            initial = _sub(sim, "InitialValues")
            for var, value in comp.parameters.items():
                pwhere = f"{where}: component {name!r} initial value {var!r}"
                variable = infos[name].variables.get(var)
                if variable is None:
                    raise SystemFileError(f"{pwhere}: {infos[name].path.name} has no such variable")
                kind = "Integer" if variable.type == "Enumeration" else variable.type
                if kind not in ("Real", "Integer", "Boolean", "String"):
                    raise SystemFileError(f"{pwhere}: variables of type {variable.type} are not supported")
                is_file = kind == "String" and names_a_file(value) and not comp.adapter
                text = file_text(value) if is_file else _typed_text(kind, value, pwhere)
                _sub(_sub(initial, "InitialValue", {"variable": var}), kind, {"value": text})

    transformed = [c for c in system.connections if not c.is_identity]
    function_names: dict[int, str] = {}
    if transformed or sums:
        functions = _sub(root, "Functions")
        for name, inputs in sums.items():
            _sub(functions, "Sum", {"name": name, "inputCount": str(inputs)})
        for k, c in enumerate(transformed, 1):
            fname = f"{UNIT_CONVERSION_PREFIX if c.converts_units else TRANSFORMATION_PREFIX}{k}"
            function_names[id(c)] = fname
            _sub(functions, "LinearTransformation", {"name": fname, "factor": format_double(c.factor),
                                                     "offset": format_double(c.offset)})
    if system.connections:
        connections = _sub(root, "Connections")
        for c in system.connections:
            if c.source[0] in sums:
                sc = _sub(connections, "SignalConnection")
                _sub(sc, "Signal", {"function": c.source[0], "name": c.source[1]})
                _sub(sc, "Variable", {"simulator": c.target[0], "name": c.target[1], "causality": "input"})
            elif c.target[0] in sums:
                sc = _sub(connections, "SignalConnection")
                _sub(sc, "Variable", {"simulator": c.source[0], "name": c.source[1], "causality": "output"})
                _sub(sc, "Signal", {"function": c.target[0], "name": c.target[1]})
            elif c.is_identity:
                vc = _sub(connections, "VariableConnection", {"powerBond": bond_names.get(id(c))})
                _sub(vc, "Variable", {"simulator": c.source[0], "name": c.source[1], "causality": "output"})
                _sub(vc, "Variable", {"simulator": c.target[0], "name": c.target[1], "causality": "input"})
            else:
                fname = function_names[id(c)]
                sc = _sub(connections, "SignalConnection")
                _sub(sc, "Variable", {"simulator": c.source[0], "name": c.source[1], "causality": "output"})
                _sub(sc, "Signal", {"function": fname, "name": "in"})
                sc = _sub(connections, "SignalConnection")
                _sub(sc, "Signal", {"function": fname, "name": "out"})
                _sub(sc, "Variable", {"simulator": c.target[0], "name": c.target[1], "causality": "input"})
    if ecco_values:
        ecco = _sub(root, "EccoConfiguration")
        for p, value in ecco_values.items():
            try:
                _sub(ecco, p, text=format_double(float(value)))
            except (TypeError, ValueError):
                raise SystemFileError(f"{where}: ecco option {_snake(p)}={value!r} is not a number") from None
    path = folder / CONFIG_NAME
    path.write_bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True))
    return path
