"""Added-mass check of ship attachments before a run: will explicit coupling diverge?

A component (a crane, a platform, a rigid dummy mass) sits on a Ship hardpoint and is coupled
*explicitly*: its force and moment outputs drive the hardpoint's ``force``/``moment`` inputs while
it takes the hardpoint's ``acceleration``/``angular_acceleration``. Both directions are direct
feedthrough, so the coupling is an algebraic loop that the fixed-step and the adaptive masters
run with one sweep per macro step. ship_crane_digest.md section 7.3 ("How strong is the
crane-ship coupling?"):

* the attached subsystem has the apparent (articulated) mass ``M_a = X^T I_A X`` in ship
  coordinates, the ship the instantaneous inertia ``M_s = M_RB + A_inf`` (A-infinity, not A(w_p):
  the radiation memory adds no instantaneous inertia);
* exchanging acceleration and force explicitly propagates the interface error as
  ``a_n = -M_s^-1 M_a a_(n-1) + ...``, so the **mass ratio** is the spectral radius
  ``rho(M_s^-1 M_a)`` (the digest's stability condition ``rho(M_s^-1 M_a) < 1``);
* the digest's limits for that textbook scheme (the reaction from the *previous* acceleration,
  the force held or extrapolated to the step end): **1** with a zero-order hold, **1/3** with linear
  and **1/7** with quadratic extrapolation;
* the factor does **not depend on the macro step**: a smaller step or step-size control does not
  help (an adaptive master only shrinks h to its minimum), so the master must say so up front.

Our master differs from the digest's textbook scheme in two ways, and the limits follow from its
own update rule (:func:`stability_limit`, :func:`growth_factor`), measured with the FMUs by
benchmarks/bench_b2.py (docs/mass_aware.md):

* input extrapolation is evaluated at the *midpoint* of the step (orchestration/master/algorithms/fixed.py), so
  the weights are (1.5, -0.5) and (1.875, -1.25, 0.375) instead of (2, -1) and (3, -3, 1): limits
  1/2 and 2/7 instead of 1/3 and 1/7 (same characteristic-polynomial argument as the digest's,
  evaluated at z = -1);
* after every macro step the feedthrough outputs are refreshed once in source-first order
  (Execution.refresh_feedthrough), an extra sweep of the loop. With Gauss-Seidel in that same
  order each step is then two sweeps: the error grows (or decays) by rho^2 per step, and the
  extrapolated input of the first slave no longer matters (limit 1 for every extrapolation
  order); with Jacobi the growth is rho per step (ZOH).

The mass-aware interface (digest section 7.4, item 1) removes the loop: the attached component's
articulated inertia and bias wrench (Crane FMU ``base.inertia_*``, ``base.bias_*``) go to the
Ship's ``hardpoint1.inertia_*``/``bias_*`` inputs and the ship integrates
``(M_s + X^T I_A X) nu' = tau - X^T p_A``, with no force connection. Then nothing is reported;
both connected at once counts the attachment twice (an error).

:func:`check_added_mass` is a pure function of the system (and algorithm): it reads model
descriptions, the ship's port mobility from a temporary instance of the ship FMU (finite
differences: the FMU is the authority on its own inertia, whoever made it) and, for the attached
inertia, the attached component's initial outputs (from an initialized
:class:`~orchestration.master.execution.Execution`,
else from a temporary instance of that one FMU).
"""
from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from orchestration.system.validation import Problem

DOFS = ("surge", "sway", "heave", "roll", "pitch", "yaw")
SYM = ("0,0", "1,1", "2,2", "0,1", "0,2", "1,2")
FULL = ("0,0", "0,1", "0,2", "1,0", "1,1", "1,2", "2,0", "2,1", "2,2")
# the digest's textbook limits (section 7.3): reaction from the previous acceleration, extrapolated to the step end
DIGEST_LIMITS = {0: 1.0, 1: 1.0 / 3.0, 2: 1.0 / 7.0}
# the master's extrapolation polynomial through the last 1-3 communication points, evaluated at the
# step's midpoint t + h/2 (orchestration/master/execution.py _extrapolate), newest point first
MIDPOINT_WEIGHTS = {0: (1.0,), 1: (1.5, -0.5), 2: (1.875, -1.25, 0.375)}
END_WEIGHTS = {0: (1.0,), 1: (2.0, -1.0), 2: (3.0, -3.0, 1.0)}
NEAR = 0.8            # warn from this fraction of the limit on
INIT_SWEEPS = 200     # Execution.initialize's default max_sweeps (checked in tests/master/test_mass_aware.py) ...
INIT_TOLERANCE = 1e-10   # ... and tolerance


@dataclass
class CouplingWarning(Problem):
    """One finding; a :class:`~orchestration.system.validation.Problem` (severity, where, message) with the numbers."""

    ship: str = ""                  # ship component
    port: str = ""                  # ship port, e.g. "hardpoint1"
    attached: str = ""              # attached component
    attached_port: str = ""         # its port, e.g. "base"
    mass_ratio: float = math.nan    # rho(M_s^-1 M_a)
    limit: float = math.nan         # the largest stable mass ratio of the scheme
    growth: float = math.nan        # predicted error growth factor per macro step (> 1: diverges)
    scheme: str = ""
    modes: str = ""                 # ship DOFs of the dominant mode
    diverges: bool = False          # the explicit coupling will blow up (growth > 1 per step)
    kind: str = ""                  # diverges | near-limit | initialization | double-counted | incomplete


@dataclass(frozen=True)
class Scheme:
    """How the master runs the ship <-> attachment loop (see module docstring)."""

    method: str = "jacobi"          # "jacobi" | "gauss-seidel" | "iterative"
    extrapolation: int = 0
    ship_steps_first: bool = True   # Gauss-Seidel: the ship steps before the attachment
    ship_refreshed_first: bool = True   # feedthrough refresh order
    refresh: bool = True            # the master refreshes feedthrough outputs after each step
    weights: str = "midpoint"       # "midpoint" (our master) | "end" (the digest's textbook scheme)
    algorithm: str = "fixed"

    @property
    def explicit(self) -> bool:
        return self.method != "iterative"

    def label(self) -> str:
        if not self.explicit:
            return "iterative coupling"
        name = {"jacobi": "Jacobi", "gauss-seidel": "Gauss-Seidel"}[self.method]
        extra = f", extrapolation order {self.extrapolation}" if self.extrapolation else ""
        prefix = "" if self.algorithm == "fixed" else f"{self.algorithm} ("
        return f"{prefix}{name}{extra}{')' if prefix else ''}"


# ---------------------------------------------------------------------- the scheme's error recursion

def step_matrix(lam: complex, scheme: Scheme) -> np.ndarray:
    """One macro step of the interface-error recursion of the explicit loop, in the limit of a
    rigid attachment (the error passes through the algebraic loop; state feedback is O(h)).

    Modal coordinates: lam is an eigenvalue of M_s^-1 M_a; the ship's acceleration error is
    ``a = -y_in`` and the attachment's (scaled) force error ``y = lam a_in``. State: the last three
    recorded outputs of each, [a_n, a_n-1, a_n-2, y_n, y_n-1, y_n-2] (the history the master
    extrapolates from; the refreshed values replace the step's)."""
    weights = (MIDPOINT_WEIGHTS if scheme.weights == "midpoint" else END_WEIGHTS)[scheme.extrapolation]
    maps = (lambda u: -u, lambda u: lam * u)          # 0: ship, 1: attachment

    def one(state: np.ndarray) -> np.ndarray:
        hist = (state[0:3], state[3:6])
        ext = lambda j: sum(w * x for w, x in zip(weights, hist[j]))
        out: dict[int, complex] = {}
        if scheme.method == "jacobi":
            out = {0: maps[0](ext(1)), 1: maps[1](ext(0))}
        else:
            for i in ((0, 1) if scheme.ship_steps_first else (1, 0)):
                out[i] = maps[i](out[1 - i] if (1 - i) in out else ext(1 - i))
        if scheme.refresh:
            for i in ((0, 1) if scheme.ship_refreshed_first else (1, 0)):
                out[i] = maps[i](out[1 - i])
        return np.array([out[0], hist[0][0], hist[0][1], out[1], hist[1][0], hist[1][1]])

    return np.column_stack([one(e) for e in np.eye(6, dtype=complex)])


def growth_factor(mass_ratio: complex | float, scheme: Scheme) -> float:
    """Error growth per macro step at mass ratio (an eigenvalue of M_s^-1 M_a): > 1 diverges,
    independent of the step size."""
    if not scheme.explicit:
        return 0.0
    return float(np.max(np.abs(np.linalg.eigvals(step_matrix(mass_ratio, scheme)))))


@functools.lru_cache(maxsize=64)
def stability_limit(scheme: Scheme) -> float:
    """The largest mass ratio rho(M_s^-1 M_a) the explicit scheme runs without growth (inf for
    iterative coupling). The digest's textbook scheme, Scheme("gauss-seidel", k, weights="end",
    refresh=False) (the ship steps with the attachment's force held or extrapolated to the step end,
    the attachment answers the new acceleration): 1, 1/3, 1/7 for k = 0, 1, 2."""
    if not scheme.explicit:
        return math.inf
    grid = np.concatenate([np.linspace(1e-3, 2.0, 400), np.geomspace(2.0, 1e3, 200)[1:]])
    previous = 0.0
    for x in grid:
        if growth_factor(x, scheme) >= 1.0:
            lo, hi = previous, float(x)
            for _ in range(60):
                mid = 0.5 * (lo + hi)
                lo, hi = (lo, mid) if growth_factor(mid, scheme) >= 1.0 else (mid, hi)
            return round(hi, 9)
        previous = float(x)
    return math.inf


# ---------------------------------------------------------------------- the mass ratio

def transfer_matrix(r: Sequence[float]) -> np.ndarray:
    """X(r): body twist at CO -> twist at r (components.ship.transfer_matrix)."""
    x, y, z = r
    X = np.eye(6)
    X[0:3, 3:6] = -np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return X


def euler_to_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch), math.cos(yaw),
                              math.sin(yaw))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def mass_ratio(ship_inertia: np.ndarray, location: Sequence[float], attached_inertia: np.ndarray,
               euler: Sequence[float] = (0.0, 0.0, 0.0)) -> tuple[float, np.ndarray, np.ndarray]:
    """rho(M_s^-1 M_a) (digest 7.3) for an attachment with articulated inertia ``attached_inertia``
    (6x6, [linear; angular], NED axes at the hardpoint) at body ``location`` of a ship with
    instantaneous inertia ``ship_inertia`` (6x6 about CO, body axes: M_RB + A_inf), ship attitude
    ``euler`` (roll, pitch, yaw). Returns (ratio, eigenvalues, energy fraction per ship DOF of the
    dominant mode)."""
    R = euler_to_matrix(*euler)
    Rb = np.zeros((6, 6))
    Rb[0:3, 0:3] = Rb[3:6, 3:6] = R
    J = Rb @ transfer_matrix(location)                 # body nu' -> NED hardpoint acceleration
    Ma = J.T @ np.asarray(attached_inertia, float) @ J
    Ms = np.asarray(ship_inertia, float)
    values, vectors = np.linalg.eig(np.linalg.solve(Ms, Ma))
    k = int(np.argmax(np.abs(values)))
    v = np.real(vectors[:, k])
    energy = np.abs(v * (Ms @ v))
    return float(np.abs(values[k])), values, energy / max(float(energy.sum()), 1e-300)


def loop_ratio(mobility: np.ndarray, attached_inertia: np.ndarray) -> tuple[float, np.ndarray]:
    """The same ratio from the ship's mobility at the port, Y = d[a; alpha]/d[F; M] (what the digest
    calls X^T M_eff^-1 X): the eigenvalues of Y I_A equal those of M_s^-1 M_a."""
    values = np.linalg.eigvals(np.asarray(mobility, float) @ np.asarray(attached_inertia, float))
    return float(np.max(np.abs(values))), values


# ---------------------------------------------------------------------- finding the couplings

@dataclass
class Attachment:
    """A component on a ship port: which variables join them (connection lists by role)."""

    ship: str
    port: str
    attached: str
    attached_port: str
    force: list = field(default_factory=list)        # connections attached -> ship port force/moment
    motion: list = field(default_factory=list)       # connections ship port acceleration -> attached
    kinematics: list = field(default_factory=list)   # other ship port outputs -> attached
    inertia: list = field(default_factory=list)      # attached -> ship port inertia_* / bias_*


_PORT = re.compile(r"^(.*)\.(force|moment|acceleration|angular_acceleration|inertia_linear|inertia_coupling|"
                   r"inertia_angular|bias_force|bias_moment|position|quaternion|velocity|angular_velocity)"
                   r"\[([^\]]+)\]$")


@functools.lru_cache(maxsize=64)
def _description(path: str, mtime: int):
    from fmpy import read_model_description

    return read_model_description(path)


def _md(system, name: str):
    if system.components[name].adapter:
        return None                     # a port adapter is no ship port and carries nothing
    source = Path(system.components[name].source)
    try:
        return _description(str(source), source.stat().st_mtime_ns)
    except Exception:
        return None


def _split(var: str):
    m = _PORT.match(var)
    return (m.group(1), m.group(2), m.group(3)) if m else (None, None, None)


def find_attachments(system) -> list[Attachment]:
    """Ship ports (a component with a ``P.force[i]`` input and a ``P.acceleration[i]`` output) and
    the components connected to them, grouped per (ship, port, attached, attached port)."""
    found: dict[tuple, Attachment] = {}

    def get(ship, port, other, other_port) -> Attachment:
        key = (ship, port, other, other_port)
        if key not in found:
            found[key] = Attachment(ship, port, other, other_port)
        return found[key]

    ship_ports: dict[str, set[str]] = {}
    for name in system.components:
        md = _md(system, name)
        if md is None:
            continue
        inputs = {v.name for v in md.modelVariables if v.causality == "input"}
        outputs = {v.name for v in md.modelVariables if v.causality == "output"}
        ports = {p for p, kind, _ in map(_split, inputs) if kind == "force"}
        ship_ports[name] = {p for p in ports if f"{p}.acceleration[0]" in outputs}
    for c in system.connections:
        (src, svar), (dst, dvar) = c.source, c.target
        dport, dkind, _ = _split(dvar)
        if dst in ship_ports and dport in ship_ports[dst]:           # into a ship port
            sport, _, _ = _split(svar)
            if dkind in ("force", "moment"):
                get(dst, dport, src, sport or svar).force.append(c)
            elif dkind and (dkind.startswith("inertia") or dkind.startswith("bias")):
                get(dst, dport, src, sport or svar).inertia.append(c)
        sport, skind, _ = _split(svar)
        if src in ship_ports and sport in ship_ports[src]:           # out of a ship port
            tport, _, _ = _split(dvar)
            if skind in ("acceleration", "angular_acceleration"):
                get(src, sport, dst, tport or dvar).motion.append(c)
            elif skind:
                get(src, sport, dst, tport or dvar).kinematics.append(c)
    # an attachment is what sends loads to the port; the motion it takes may come under another port name
    out = []
    for a in found.values():
        if not (a.force or a.inertia) or system.components[a.attached].adapter:
            continue            # a port adapter has no mass of its own (what it carries is not seen through it)
        for b in found.values():
            same = (b.ship, b.port, b.attached) == (a.ship, a.port, a.attached)
            if b is not a and same and not (b.force or b.inertia):
                a.motion += b.motion
                a.kinematics += b.kinematics
        out.append(a)
    return out


# ---------------------------------------------------------------------- reading the numbers

def _index(var: str) -> int | None:
    _, kind, idx = _split(var)
    if kind is None:
        return None
    if "," in idx:
        return None
    return int(idx) + (3 if kind in ("moment", "angular_acceleration", "bias_moment") else 0)


def _inertia_from_values(values: Mapping[str, float], prefix: str) -> np.ndarray:
    IA = np.zeros((6, 6))
    lin = [values[f"{prefix}.inertia_linear[{k}]"] for k in SYM]
    ang = [values[f"{prefix}.inertia_angular[{k}]"] for k in SYM]
    cpl = [values[f"{prefix}.inertia_coupling[{k}]"] for k in FULL]
    sym = lambda a: np.array([[a[0], a[3], a[4]], [a[3], a[1], a[5]], [a[4], a[5], a[2]]])
    IA[0:3, 0:3], IA[3:6, 3:6] = sym(lin), sym(ang)
    IA[0:3, 3:6] = np.reshape(cpl, (3, 3))
    IA[3:6, 0:3] = IA[0:3, 3:6].T
    return IA


def _temporary_slave(system, name: str):
    """A fresh, initialized instance of one component (start values from the system file; its
    inputs at their start values). The caller frees it."""
    from orchestration.master.slaves import InProcessSlave

    component = system.components[name]
    slave = InProcessSlave(f"{name}_coupling_check", Path(component.source))
    slave.instantiate()
    slave.setup(system.start_time, system.stop_time)
    slave.enter_initialization()
    if component.parameters:
        slave.set_values(component.parameters)
    slave.exit_initialization()
    return slave


def _live_slave(execution, name: str):
    """The execution's own instance if the execution has been initialized (outputs are valid)."""
    if execution is None or name not in getattr(execution, "index", {}):
        return None
    i = execution.index[name]
    history = getattr(execution, "history", None)
    if not history or not history[i]:
        return None
    return execution.slaves[i]


def attached_inertia(system, attachment: Attachment, execution=None,
                     finite_differences: bool = False) -> tuple[np.ndarray, str]:
    """The attached component's articulated inertia as the ship port sees it (6x6, [force; moment]
    by [acceleration; angular acceleration], NED axes at the port), and where it came from:

    * its ``<port>.inertia_linear/_coupling/_angular`` outputs (the Crane FMU's ``base.*``), read
      from the initialized execution or a temporary instance; else
    * finite differences of its force/moment outputs over its acceleration inputs on a temporary
      instance (exact for the linear dependence of a rigid attachment).

    Rows of forces that do not reach the ship and columns of accelerations the attachment does not
    receive are zero; connection factors are applied. ``finite_differences`` forces the second way."""
    md = _md(system, attachment.attached)
    names = {v.name for v in md.modelVariables} if md is not None else set()
    prefix = attachment.attached_port
    wanted = [f"{prefix}.inertia_{b}[{k}]" for b, keys in (("linear", SYM), ("coupling", FULL), ("angular", SYM))
              for k in keys]
    row_scale, col_scale = np.zeros(6), np.zeros(6)
    f_src, a_dst = {}, {}
    for c in attachment.force:
        k = _index(c.target[1])
        if k is not None:
            row_scale[k], f_src[k] = c.factor, c.source[1]
    for c in attachment.motion:
        k = _index(c.source[1])
        if k is not None:
            col_scale[k], a_dst[k] = c.factor, c.target[1]
    live = _live_slave(execution, attachment.attached)
    slave = live
    try:
        if all(w in names for w in wanted) and not finite_differences:
            if slave is None:
                slave = _temporary_slave(system, attachment.attached)
            IA = _inertia_from_values(slave.get_values(wanted), prefix)
            how = f"{attachment.attached}.{prefix}.inertia_*"
        else:
            slave = _temporary_slave(system, attachment.attached)
            IA, how = _finite_difference(slave, f_src, a_dst), "finite differences"
    finally:
        if slave is not None and slave is not live:
            slave.terminate()
            slave.free()
    return row_scale[:, None] * IA * col_scale[None, :], how


def _finite_difference(slave, outputs: Mapping[int, str], inputs: Mapping[int, str], delta: float = 1.0) -> np.ndarray:
    """-d outputs / d inputs (6x6 by index) on an initialized slave; inputs restored afterwards.
    Typed references, so that an output or input that is an element of an FMI 3.0 array or of
    another numeric type is read and set as such."""
    out_names = [outputs.get(k) for k in range(6)]
    present = [k for k in range(6) if out_names[k]]
    vr_out = np.array([slave.variables[out_names[k]].reference for k in present], dtype=np.int64)
    D = np.zeros((6, 6))
    if not present:
        return D
    base = slave.get_reals(vr_out)
    for k, name in inputs.items():
        vr = np.array([slave.variables[name].reference], dtype=np.int64)
        u0 = float(slave.get_values([name])[name])
        slave.set_reals(vr, np.array([u0 + delta]))
        D[present, k] = -(slave.get_reals(vr_out) - base) / delta
        slave.set_reals(vr, np.array([u0]))
    return D


def _start(system, md, component: str, name: str, default=None):
    params = system.components[component].parameters
    if name in params:
        return params[name]
    for v in md.modelVariables:
        if v.name == name:
            return v.start if v.start is not None else default
    return default


def ship_mobility(system, attachment: Attachment, ship_inertia=None,
                  finite_differences: bool = False) -> tuple[np.ndarray | None, np.ndarray, str]:
    """(M_s about CO or None, the port mobility Y = d[a; alpha]/d[F; M] in NED at the port, source).

    The ship FMU itself is asked: finite differences of its port accelerations over the port's
    loads on a temporary instance at the start values (the response is linear in the load at rest,
    so this is exact to rounding). ``ship_inertia`` (6x6 about CO, body axes, or a dict by component,
    or a callable(component name) -> 6x6) gives M_s instead, with the port's ``location`` and
    ``initial.euler`` start values (``finite_differences`` forces the FMU path even then)."""
    ship, port = attachment.ship, attachment.port
    md = _md(system, ship)
    names = {v.name for v in md.modelVariables}
    Ms = None
    if ship_inertia is not None and not finite_differences:
        Ms = (ship_inertia(ship) if callable(ship_inertia) else
              ship_inertia.get(ship) if isinstance(ship_inertia, Mapping) else ship_inertia)
    if Ms is not None and f"{port}.location[0]" in names:
        r = [float(_start(system, md, ship, f"{port}.location[{i}]", 0.0)) for i in range(3)]
        euler = [float(_start(system, md, ship, f"initial.euler[{i}]", 0.0)) for i in range(3)]
        R = euler_to_matrix(*euler)
        Rb = np.zeros((6, 6))
        Rb[0:3, 0:3] = Rb[3:6, 3:6] = R
        J = Rb @ transfer_matrix(r)
        return np.asarray(Ms, float), J @ np.linalg.solve(np.asarray(Ms, float), J.T), "given"
    outputs = {k: f"{port}.{kind}[{i}]" for k, (kind, i) in
               enumerate([("acceleration", i) for i in range(3)] + [("angular_acceleration", i) for i in range(3)])}
    inputs = {k: f"{port}.{kind}[{i}]" for k, (kind, i) in
              enumerate([("force", i) for i in range(3)] + [("moment", i) for i in range(3)])}
    inputs = {k: v for k, v in inputs.items() if v in names}
    slave = _temporary_slave(system, ship)
    try:
        Y = -_finite_difference(slave, {k: v for k, v in outputs.items() if v in names}, inputs, delta=1e3)
    finally:
        slave.terminate()
        slave.free()
    return None, Y, "finite differences of the port accelerations"


def port_modes(mobility: np.ndarray, attached_inertia: np.ndarray) -> np.ndarray:
    """Energy fraction per port DOF (NED axes at the port: surge, sway, heave, roll, pitch, yaw for a
    ship on its heading) of the dominant mode of the loop Y I_A: the eigenvector v of port
    accelerations and the ship's effective inertia at the port, Y^-1."""
    Y = np.asarray(mobility, float)
    values, vectors = np.linalg.eig(Y @ np.asarray(attached_inertia, float))
    v = np.real(vectors[:, int(np.argmax(np.abs(values)))])
    energy = np.abs(v * np.linalg.lstsq(Y, v, rcond=None)[0])
    return energy / max(float(energy.sum()), 1e-300)


# ---------------------------------------------------------------------- the scheme in use

def scheme_of(system, algorithm=None, method: str | None = None, extrapolation: int | None = None,
              order: Sequence[str] | None = None, ship: str | None = None, attached: str | None = None) -> Scheme:
    """The coupling scheme of an Algorithm instance, else of the arguments, else of the system's
    ``algorithm``/``algorithm_options`` (defaults: fixed-step Jacobi, no extrapolation)."""
    from orchestration.master.algorithms.fixed import gauss_seidel_order

    options = dict(getattr(system, "algorithm_options", {}) or {})
    name = getattr(system, "algorithm", None) or "fixed"
    if isinstance(algorithm, str):
        name, algorithm = algorithm, None
    if algorithm is not None:
        name = getattr(algorithm, "name", "fixed")
        method = method or getattr(algorithm, "method", None)
        if extrapolation is None:
            extrapolation = getattr(algorithm, "extrapolation", 0)
        order = order or getattr(algorithm, "order", None)
    method = method or options.get("method") or "jacobi"
    if extrapolation is None:
        extrapolation = int(options.get("extrapolation", 0) or 0)
    if name == "iterative":
        return Scheme(method="iterative", algorithm=name)
    if name != "fixed":
        extrapolation = 0          # the adaptive algorithms hold inputs (step_control.AdaptiveAlgorithm)
    names = list(system.components)
    index = {n: i for i, n in enumerate(names)}
    edges = {(index[c.source[0]], index[c.target[0]]) for c in system.connections
             if c.source[0] in index and c.target[0] in index}
    refresh = gauss_seidel_order(len(names), edges, names)
    step = [index[n] for n in order] if order else (refresh if method == "gauss-seidel" else list(range(len(names))))
    first = lambda seq: (seq.index(index[ship]) < seq.index(index[attached])) if ship in index and attached in index \
        else True
    return Scheme(method=method, extrapolation=int(extrapolation), ship_steps_first=first(step),
                  ship_refreshed_first=first(refresh), algorithm=name)


# ---------------------------------------------------------------------- the check

def check_added_mass(target, *, algorithm=None, method: str | None = None, extrapolation: int | None = None,
                     order: Sequence[str] | None = None, ship_inertia=None,
                     attached_inertia_override: Callable[[Attachment], np.ndarray] | np.ndarray | None = None,
                     near: float = NEAR) -> list[CouplingWarning]:
    """Findings about the ship attachments of a System or an Execution, before it runs.

    For every component whose force/moment outputs drive a ship port's ``force``/``moment`` inputs
    while it takes that port's acceleration (explicit acceleration-force coupling): the mass ratio
    rho(M_s^-1 M_a) (digest 7.3) against the limit of the coupling scheme (:func:`stability_limit`),
    a "warning" with ``diverges=True`` above the limit ("it will diverge", predicted growth per
    macro step), a "warning" with ``diverges=False`` from ``near`` x limit on. Nothing for a
    mass-aware connection (inertia and bias, no force) or iterative coupling; an "error" when the
    force *and* the inertia are connected (the attachment counted twice), a "warning" for an
    incomplete mass-aware connection.

    ``target``: a System, or an Execution (its algorithm gives the scheme; once initialized, its
    own instance gives the attached inertia). ``algorithm``: an Algorithm instance or a name
    ("fixed", "ecco", "error-control", "iterative"); ``method``/``extrapolation``/``order`` as for
    FixedStepAlgorithm. ``ship_inertia``: M_s (6x6 about CO) to use instead of asking the ship FMU.
    ``attached_inertia_override``: I_A (6x6, NED at the port) or a callable(Attachment) -> I_A.
    """
    execution = target if hasattr(target, "slaves") and hasattr(target, "system") else None
    system = execution.system if execution is not None else target
    if algorithm is None and execution is not None:
        algorithm = getattr(execution, "algorithm", None)
    findings: list[CouplingWarning] = []
    for att in find_attachments(system):
        where = f"{att.attached} -> {att.ship}.{att.port}"
        common = dict(ship=att.ship, port=att.port, attached=att.attached, attached_port=att.attached_port)
        if att.inertia:
            got = {c.target[1] for c in att.inertia}
            expected = {f"{att.port}.inertia_{b}[{k}]" for b, keys in (("linear", SYM), ("coupling", FULL),
                                                                        ("angular", SYM)) for k in keys}
            expected |= {f"{att.port}.bias_{b}[{i}]" for b in ("force", "moment") for i in range(3)}
            if att.force:
                findings.append(CouplingWarning(
                    "error", where, f"{att.attached} drives both {att.ship}.{att.port}.force/moment and "
                                    f"{att.ship}.{att.port}.inertia_*/bias_*: the ship adds its reaction twice (the "
                                    f"mass-aware interface replaces the force connection; remove "
                                    f"{att.attached}.{att.attached_port}.force/moment -> {att.ship}.{att.port}."
                                    f"force/moment)", kind="double-counted", **common))
            elif got != expected:
                missing = sorted(expected - got)
                findings.append(CouplingWarning(
                    "warning", where, f"incomplete mass-aware interface: {len(missing)} of {len(expected)} "
                                      f"inertia/bias inputs of {att.ship}.{att.port} are not connected "
                                      f"({', '.join(missing[:4])}{', ...' if len(missing) > 4 else ''}); they "
                                      f"keep their start values", kind="incomplete", **common))
            continue
        if not (att.force and att.motion):
            continue            # loads only, or motion through position/velocity: no algebraic loop
        if not _force_depends_on_motion(system, att):
            continue
        scheme = scheme_of(system, algorithm, method, extrapolation, order, att.ship, att.attached)
        Ms, Y, ship_source = ship_mobility(system, att, ship_inertia)
        if attached_inertia_override is not None:
            IA = attached_inertia_override(att) if callable(attached_inertia_override) else attached_inertia_override
            IA, attached_source = np.asarray(IA, float), "given"
        else:
            IA, attached_source = attached_inertia(system, att, execution)
        ratio, eigenvalues = loop_ratio(Y, IA)
        limit = stability_limit(scheme)
        growth = max([growth_factor(complex(v), scheme) for v in eigenvalues] or [0.0])
        if Ms is not None:
            md = _md(system, att.ship)
            r = [float(_start(system, md, att.ship, f"{att.port}.location[{i}]", 0.0)) for i in range(3)]
            euler = [float(_start(system, md, att.ship, f"initial.euler[{i}]", 0.0)) for i in range(3)]
            _, _, energy = mass_ratio(Ms, r, IA, euler)
        else:
            energy = port_modes(Y, IA)
        modes = "/".join(DOFS[i] for i in np.argsort(-energy) if energy[i] >= 0.1)
        diverges = scheme.explicit and growth > 1.0 + 1e-9
        values = dict(mass_ratio=ratio, limit=limit, growth=growth, scheme=scheme.label(), modes=modes, **common)
        fix = _fix(system, att)
        if scheme.explicit and (diverges or ratio >= near * limit):
            findings.append(CouplingWarning("warning", where, _message(att, ratio, limit, growth, scheme, modes,
                                                                       diverges, ship_source, attached_source, fix),
                                            diverges=diverges, kind="diverges" if diverges else "near-limit",
                                            **values))
        sweeps = initial_sweeps(ratio)
        if not diverges and sweeps > INIT_SWEEPS:
            findings.append(CouplingWarning(
                "warning", where, f"the initial values of the algebraic loop {att.attached} <-> {att.ship}.{att.port} "
                                  f"(mass ratio {ratio:.3g}) contract only x{math.sqrt(ratio):.2f} per sweep: "
                                  f"Execution.initialize needs about {sweeps:.0f} sweeps to settle them to "
                                  f"{INIT_TOLERANCE:g} and stops at {INIT_SWEEPS} ('initial values did not settle'), "
                                  f"whatever the algorithm; {fix} (no loop) [ship_crane_digest.md 7.3]",
                kind="initialization", **values))
    return findings


def initial_sweeps(ratio: float, tolerance: float = INIT_TOLERANCE) -> float:
    """Sweeps Execution.initialize needs to settle the explicit loop: each sweep (all outputs read,
    then all inputs set) maps (a, F) -> (F, a), so the error contracts by sqrt(rho) per sweep, from
    a relative error of order one: n = 2 ln(tol) / ln(rho) (measured: 31 at rho = 0.2, 65 at 0.5)."""
    if ratio <= 0.0:
        return 1.0
    if ratio >= 1.0:
        return math.inf
    return 2.0 * math.log(tolerance) / math.log(ratio)


def _force_depends_on_motion(system, att: Attachment) -> bool:
    """Does a force output of the attachment depend directly on an acceleration it receives? (True
    when undeclared.)"""
    md = _md(system, att.attached)
    if md is None:
        return True
    declared = {u.variable.name: u.dependencies for u in (md.outputs or [])}
    received = {c.target[1] for c in att.motion}
    for c in att.force:
        deps = declared.get(c.source[1])
        if deps is None or any(d.name in received for d in deps):
            return True
    return False


def _fix(system, att: Attachment) -> str:
    md = _md(system, att.ship)
    names = {v.name for v in md.modelVariables} if md is not None else set()
    if f"{att.port}.inertia_linear[0,0]" in names:
        return (f"connect {att.attached}.{att.attached_port}.inertia_* / bias_* to {att.ship}.{att.port}.inertia_* / "
                f"bias_* instead of the force and moment (mass-aware interface, docs/mass_aware.md)")
    ports = sorted({v.name.split(".")[0] for v in md.modelVariables if v.name.endswith(".inertia_linear[0,0]")}) \
        if md is not None else []
    where = f"{att.ship}.{ports[0]}" if ports else "a ship port with inertia_* / bias_* inputs"
    return f"move it to {where} and use the mass-aware interface (docs/mass_aware.md)"


def _message(att: Attachment, ratio: float, limit: float, growth: float, scheme: Scheme, modes: str,
             diverges: bool, ship_source: str, attached_source: str, fix: str) -> str:
    what = (f"explicit coupling of {att.attached} -> {att.ship}.{att.port} has attached mass ratio {ratio:.3g}"
            f"{f' ({modes})' if modes else ''}")
    if diverges:
        text = (f"{what} above the limit {limit:.3g} for {scheme.label()}: it will diverge (the coupling error "
                f"grows x{growth:.3g} per macro step whatever the step size"
                f"{'; the initial values do not settle either' if ratio >= 1.0 else ''}); {fix}")
    else:
        text = (f"{what}, close to the limit {limit:.3g} for {scheme.label()}: the coupling error decays only "
                f"x{growth:.3g} per macro step (ringing); {fix}")
    return text + f" [M_s: {ship_source}; I_A: {attached_source}; ship_crane_digest.md 7.3]"
