"""Serial crane mechanisms described by Denavit-Hartenberg parameters, the SMS API way.

A crane is a serial chain of links, each with one joint (revolute or prismatic) about/along the
z axis of its proximal frame. Geometry follows the SMS API report (DRDC Atlantic CR 2010-256,
Sec. 2.4; digest /work/shared/reference/sms_api_digest.md Sec. 2.4):

* **Paul's (standard) DH convention** (report eqs. 28-32). Frame i is fixed at the distal end of
  link i and
      A_{i-1 -> i} = Trans_z(d_i) Rot_z(theta_i) Trans_x(a_i) Rot_x(alpha_i).
  The joint variable q_i **adds** to theta_i (revolute) or to d_i (prismatic); the table value
  is a constant offset. Frame 0 is the proximal frame of link 1 (index 0 here).
* **Joint-moved proximal frame J_i** ("link frame p moving with the joint", report eqs. 38-44):
      revolute:   J_i = F_{i-1} Rot_z(theta_i + q_i)       (P' = R_theta P, no d offset)
      prismatic:  J_i = F_{i-1} Trans_z(d_i + q_i)         (P' = P + [0, 0, eps], not rotated by theta)
  Link i's CG location ``cg`` and CG-frame orientation ``cg_orientation`` are given in J_i,
  and ``inertia`` is the 3x3 inertia about the CG in CG-frame axes - exactly as the SMS tables
  print them (report Table 4 keys LinkCGLocation, LinkCGOrientation, LinkMomentOfInertia).
  The distal frame is rigidly attached: F_i = J_i C_i with the constant
      revolute:   C_i = Trans_z(d_i) Trans_x(a_i) Rot_x(alpha_i)
      prismatic:  C_i = Rot_z(theta_i) Trans_x(a_i) Rot_x(alpha_i).
* **Base.** ``base_offset`` places frame 0 relative to the base mounting point B (the crane's
  hard point on the ship): F_0 = B * base_offset. The base pose, velocity and acceleration are
  inputs of components/articulated_body.py.
* **Link frame for points.** Attachment points (and the link-wrench points of
  ArticulatedBody.forward_dynamics) are given in the link's **distal DH frame F_i**: the tip of
  the last link is simply [0, 0, 0] in F_{n-1}. (SMS puts cable points in the CG frame; the distal
  frame is chosen here because crane tips and sheaves are where DH frames are.)
* Link and joint indices start at 0 (as SMS joint ids).

Joint limits are SMS penalty end stops (report eqs. 71-72, with the erratum on the upper-stop
sign corrected so that both stops are restoring):
      q < lower:  tau = -K (q - lower) - D qd,      q > upper:  tau = -K (q - upper) - D qd.
Control data (mode position | velocity | passive | torque, PID gains, torque and power limits,
report eqs. 67-70; torque: the setpoint is the actuator torque itself, for an external controller such
as the crane-tip compensation of components/tip_compensation.py) are carried for the crane
controller; the dynamics here do not apply them.

JSON format ("marine-cosim crane 1.0", documented in docs/crane_format.md)::

    {
      "format": "marine-cosim crane 1.0",
      "name": "sms_revolute", "description": "...", "source": "...",
      "angle_unit": "deg",                    # "deg" or "rad" (default "rad"); see below
      "base_offset": {"position": [0, 0, 0], "euler_zyx": [0, 0, 0]},   # or {"matrix": 4x4}
      "links": [
        {"name": "boom", "joint": "revolute",          # or "prismatic"
         "a": 2.0, "alpha": 0.0, "d": 0.0, "theta": 0.0,   # DH constants (m, angle unit)
         "initial_position": -89.9, "initial_rate": 0.0,   # q(0), qd(0)
         "mass": 10.0,
         "cg": [1.0, 0.0, 0.0],                         # in J_i (m)
         "cg_orientation": [0, 0, 0],                   # [roll, pitch, yaw] of the CG frame in J_i
         "inertia": [0.001, 3.334, 3.334],              # about the CG, CG axes: diagonal or 3x3 (kg m^2)
         "limits": {"lower": -45, "upper": 90, "stiffness": 1e7, "damping": 1e7},   # optional
         "control": {"mode": "position", "kp": 1e9, "ki": 1.0, "kd": 1e8,
                     "torque_max": null, "power_max": 5e5}                          # optional
        }
      ],
      "attachments": [{"name": "tip", "link": 0, "point": [0, 0, 0]}]   # point in distal frame F_link
    }

``angle_unit`` applies to alpha, theta, cg_orientation, the base_offset Euler angles and, for
revolute joints, to initial_position, initial_rate and the limits lower/upper. Gains, stiffness,
damping and torque limits are always SI per radian (N m/rad, N m s/rad, ...). Euler angles are
[roll, pitch, yaw] with R = Rz(yaw) Ry(pitch) Rx(roll) (the SMS Z-Y'-X'' sequence). Inside the
dataclasses everything is SI with angles in radians.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence, Union

import numpy as np

from components.data_files import load_json, load_yaml, read_text
from components.spatial import euler_zyx, homogeneous, rx, rz

FORMAT = "marine-cosim crane 1.0"
JOINT_TYPES = ("revolute", "prismatic")
CONTROL_MODES = ("position", "velocity", "passive", "torque")
PRESET_DIR = Path(__file__).resolve().parent / "data" / "cranes"


@dataclass
class JointLimits:
    """Penalty end stops (SMS eqs. 71-72, upper-stop sign corrected): lower/upper in rad or m,
    stiffness K in N m/rad or N/m, damping D in N m s/rad or N s/m."""

    lower: float = -math.inf
    upper: float = math.inf
    stiffness: float = 0.0
    damping: float = 0.0


@dataclass
class JointControl:
    """SMS joint controller data (eqs. 67-70). mode: "position" | "velocity" | "passive" | "torque"
    (the setpoint is the actuator torque, limited like the PID's output);
    kp, ki, kd in SI per rad (or per m); torque_max (N m or N) and power_max (W) optional."""

    mode: str = "passive"
    kp: float = 0.0
    ki: float = 0.0
    kd: float = 0.0
    torque_max: Optional[float] = None
    power_max: Optional[float] = None


@dataclass
class Link:
    """One link of the serial chain and the joint at its proximal end (see the module docstring).

    a, d in m; alpha, theta in rad; the joint variable adds to theta (revolute) or d (prismatic).
    cg (m), cg_orientation ([roll, pitch, yaw], rad) and inertia (3x3 about the CG, CG-frame
    axes, kg m^2) are given in the joint-moved proximal frame J_i, as the SMS tables print them.
    """

    name: str
    joint: str
    a: float
    alpha: float
    d: float
    theta: float
    mass: float
    cg: Any = field(default_factory=lambda: np.zeros(3))
    inertia: Any = field(default_factory=lambda: np.zeros((3, 3)))
    cg_orientation: Any = field(default_factory=lambda: np.zeros(3))
    limits: Optional[JointLimits] = None
    control: Optional[JointControl] = None
    initial_position: float = 0.0
    initial_rate: float = 0.0

    def cg_rotation(self) -> np.ndarray:
        """R_{J -> CG}: maps CG-frame vectors into J_i (Z-Y'-X'' Euler angles)."""
        r, p, y = (float(e) for e in self.cg_orientation)
        return euler_zyx(r, p, y)

    def inertia_in_joint_frame(self) -> np.ndarray:
        """Rotational inertia about the CG in J_i axes: R I_cg R^T (SMS eq. 46, first term)."""
        R = self.cg_rotation()
        return R @ np.asarray(self.inertia, dtype=float) @ R.T

    def distal_transform(self) -> np.ndarray:
        """Constant 4x4 C_i with F_i = J_i C_i (see the module docstring)."""
        if self.joint == "prismatic":
            R = rz(self.theta) @ rx(self.alpha)
            p = [self.a * math.cos(self.theta), self.a * math.sin(self.theta), 0.0]
        else:
            R = rx(self.alpha)
            p = [self.a, 0.0, self.d]
        return homogeneous(R, p)

    def joint_transform(self, q: float) -> np.ndarray:
        """4x4 transform F_{i-1} -> J_i for joint position q (Rot_z(theta+q) or Trans_z(d+q))."""
        if self.joint == "prismatic":
            return homogeneous(np.eye(3), [0.0, 0.0, self.d + q])
        return homogeneous(rz(self.theta + q), np.zeros(3))


@dataclass
class Attachment:
    """A named point on a link (cable or payload attachment), in the link's distal DH frame F_link."""

    name: str
    link: int
    point: Any = field(default_factory=lambda: np.zeros(3))


BaseOffset = Union[np.ndarray, Sequence]


@dataclass
class Mechanism:
    """A serial crane: links (proximal to distal), base_offset = pose of DH frame 0 relative to the
    base mounting point B (a 4x4 homogeneous matrix, or (position, [roll, pitch, yaw]) in m, rad),
    and named attachment points."""

    name: str
    links: list[Link]
    base_offset: BaseOffset = field(default_factory=lambda: np.eye(4))
    attachments: list[Attachment] = field(default_factory=list)
    description: str = ""

    def __post_init__(self) -> None:
        self.attachments = [a if isinstance(a, Attachment) else Attachment(*a) for a in self.attachments]

    @property
    def n(self) -> int:
        """Number of joints (= links)."""
        return len(self.links)

    def base_offset_matrix(self) -> np.ndarray:
        """4x4 pose of frame 0 in the base-mounting-point frame B."""
        return base_offset_matrix(self.base_offset)

    def initial_state(self) -> tuple[np.ndarray, np.ndarray]:
        """(q0, qd0) from the links' initial_position and initial_rate."""
        return (np.array([float(l.initial_position) for l in self.links]),
                np.array([float(l.initial_rate) for l in self.links]))

    def attachment(self, name: str) -> Attachment:
        """The attachment called name (KeyError if there is none)."""
        for a in self.attachments:
            if a.name == name:
                return a
        raise KeyError(name)

    def total_mass(self) -> float:
        return float(sum(l.mass for l in self.links))


def base_offset_matrix(base_offset: BaseOffset) -> np.ndarray:
    """Normalise a base offset (4x4, or (position, [roll, pitch, yaw])) to a 4x4 matrix."""
    arr = np.asarray(base_offset, dtype=object)
    if arr.shape == (4, 4):
        return np.asarray(base_offset, dtype=float)
    pos, eul = base_offset
    return homogeneous(euler_zyx(*(float(e) for e in eul)), np.asarray(pos, dtype=float))


def dh_transform(a: float, alpha: float, d: float, theta: float) -> np.ndarray:
    """Paul's DH transform A = Trans_z(d) Rot_z(theta) Trans_x(a) Rot_x(alpha) (SMS eqs. 28-32):

        [[c_t, -s_t c_a,  s_t s_a, a c_t],
         [s_t,  c_t c_a, -c_t s_a, a s_t],
         [0,    s_a,      c_a,     d    ],
         [0,    0,        0,       1    ]].
    """
    ct, st, ca, sa = math.cos(theta), math.sin(theta), math.cos(alpha), math.sin(alpha)
    return np.array([
        [ct, -st * ca, st * sa, a * ct],
        [st, ct * ca, -ct * sa, a * st],
        [0.0, sa, ca, d],
        [0.0, 0.0, 0.0, 1.0],
    ])


# ----------------------------------------------------------------------------------------------
# loading


def _angle_scale(unit: str) -> float:
    if unit in ("rad", "radian", "radians"):
        return 1.0
    if unit in ("deg", "degree", "degrees"):
        return math.pi / 180.0
    raise ValueError(f"angle_unit must be 'deg' or 'rad', got {unit!r}")


def _num(v: Any) -> Any:
    """float(v) where possible (None and 'inf' strings allowed); the raw value otherwise, so that
    validate_mechanism can report it."""
    if v is None:
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return v


def _vec(v: Any, shape: tuple[int, ...]) -> Any:
    try:
        arr = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        return v
    return arr if arr.shape == shape else v


def _inertia(v: Any) -> Any:
    try:
        arr = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        return v
    if arr.shape == (3,):
        return np.diag(arr)
    return arr


def mechanism_from_dict(data: dict) -> Mechanism:
    """Build a Mechanism from the JSON/YAML structure described in the module docstring.

    Angles are converted to radians with ``angle_unit``. Raises ValueError only for a structure
    it cannot read at all (missing keys, unknown angle unit); physically bad values are kept and
    reported by validate_mechanism.
    """
    try:
        k = _angle_scale(str(data.get("angle_unit", "rad")))
        links = []
        for i, ld in enumerate(data["links"]):
            joint = str(ld.get("joint", "revolute")).lower()
            jk = k if joint == "revolute" else 1.0   # unit of the joint variable
            lim = ld.get("limits")
            limits = None
            if lim is not None:
                limits = JointLimits(
                    lower=_scaled(lim.get("lower", -math.inf), jk),
                    upper=_scaled(lim.get("upper", math.inf), jk),
                    stiffness=_num(lim.get("stiffness", 0.0)),
                    damping=_num(lim.get("damping", 0.0)),
                )
            ctl = ld.get("control")
            control = None
            if ctl is not None:
                control = JointControl(
                    mode=str(ctl.get("mode", "passive")).lower(),
                    kp=_num(ctl.get("kp", 0.0)), ki=_num(ctl.get("ki", 0.0)), kd=_num(ctl.get("kd", 0.0)),
                    torque_max=_num(ctl.get("torque_max")), power_max=_num(ctl.get("power_max")),
                )
            cgo = _vec(ld.get("cg_orientation", [0.0, 0.0, 0.0]), (3,))
            if isinstance(cgo, np.ndarray):
                cgo = cgo * k
            links.append(Link(
                name=str(ld.get("name", f"link{i}")),
                joint=joint,
                a=_num(ld.get("a", 0.0)),
                alpha=_scaled(ld.get("alpha", 0.0), k),
                d=_num(ld.get("d", 0.0)),
                theta=_scaled(ld.get("theta", 0.0), k),
                mass=_num(ld["mass"]),
                cg=_vec(ld.get("cg", [0.0, 0.0, 0.0]), (3,)),
                inertia=_inertia(ld.get("inertia", [0.0, 0.0, 0.0])),
                cg_orientation=cgo,
                limits=limits,
                control=control,
                initial_position=_scaled(ld.get("initial_position", 0.0), jk),
                initial_rate=_scaled(ld.get("initial_rate", 0.0), jk),
            ))
        bo = data.get("base_offset")
        if bo is None:
            base = np.eye(4)
        elif "matrix" in bo:
            base = np.asarray(bo["matrix"], dtype=float)
        else:
            base = (np.asarray(bo.get("position", [0.0, 0.0, 0.0]), dtype=float),
                    np.asarray(bo.get("euler_zyx", [0.0, 0.0, 0.0]), dtype=float) * k)
        atts = [Attachment(str(a["name"]), int(a["link"]), _vec(a.get("point", [0.0, 0.0, 0.0]), (3,)))
                for a in data.get("attachments", [])]
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"not a crane mechanism description: {exc!r}") from exc
    return Mechanism(name=str(data.get("name", "crane")), links=links, base_offset=base,
                     attachments=atts, description=str(data.get("description", "")))


def _scaled(v: Any, k: float) -> Any:
    v = _num(v)
    return v * k if isinstance(v, float) else v


def load_mechanism(path: Union[str, Path]) -> Mechanism:
    """Read a crane file: JSON (``.json``), or YAML (``.yaml``/``.yml``, needs pyyaml)."""
    path = Path(path)
    text = read_text(path)      # a FIFO or /dev/zero named *.json would hang the read
    # a key given twice (two masses for one link) is refused, not the last one kept
    data = load_yaml(text) if path.suffix.lower() in (".yaml", ".yml") else load_json(text)
    return mechanism_from_dict(data)


def preset_names() -> list[str]:
    """Names of the bundled crane files in components/data/cranes/."""
    return sorted(p.stem for p in PRESET_DIR.glob("*.json"))


def preset(name: str) -> Mechanism:
    """A bundled crane: sms_revolute, sms_prismatic, sms_double_pendulum, sms_centripetal,
    sms_palfinger, knuckle_boom (see preset_names())."""
    path = PRESET_DIR / f"{name}.json"
    if not path.is_file():
        raise KeyError(f"no crane preset {name!r}; have {preset_names()}")
    return load_mechanism(path)


def mechanism_to_dict(m: Mechanism, angle_unit: str = "rad") -> dict:
    """The inverse of mechanism_from_dict (base_offset written as a 4x4 matrix)."""
    k = 1.0 / _angle_scale(angle_unit)

    def opt(x: Optional[float]) -> Optional[float]:
        return None if x is None else float(x)

    links = []
    for l in m.links:
        jk = k if l.joint == "revolute" else 1.0
        d: dict[str, Any] = {
            "name": l.name, "joint": l.joint, "a": float(l.a), "alpha": float(l.alpha) * k,
            "d": float(l.d), "theta": float(l.theta) * k,
            "initial_position": float(l.initial_position) * jk, "initial_rate": float(l.initial_rate) * jk,
            "mass": float(l.mass), "cg": np.asarray(l.cg, dtype=float).tolist(),
            "cg_orientation": (np.asarray(l.cg_orientation, dtype=float) * k).tolist(),
            "inertia": np.asarray(l.inertia, dtype=float).tolist(),
        }
        if l.limits is not None:
            d["limits"] = {"lower": float(l.limits.lower) * jk, "upper": float(l.limits.upper) * jk,
                           "stiffness": float(l.limits.stiffness), "damping": float(l.limits.damping)}
        if l.control is not None:
            c = l.control
            d["control"] = {"mode": c.mode, "kp": float(c.kp), "ki": float(c.ki), "kd": float(c.kd),
                            "torque_max": opt(c.torque_max), "power_max": opt(c.power_max)}
        links.append(d)
    return {
        "format": FORMAT, "name": m.name, "description": m.description, "angle_unit": angle_unit,
        "base_offset": {"matrix": m.base_offset_matrix().tolist()},
        "links": links,
        "attachments": [{"name": a.name, "link": int(a.link), "point": np.asarray(a.point, dtype=float).tolist()}
                        for a in m.attachments],
    }


# ----------------------------------------------------------------------------------------------
# validation


def _finite(x: Any) -> bool:
    try:
        return bool(np.all(np.isfinite(np.asarray(x, dtype=float))))
    except (TypeError, ValueError):
        return False


def _is_real(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


def validate_mechanism(m: Any) -> list[tuple[str, Any, str]]:
    """Check a Mechanism; return a list of (field, value, reason), empty if it is usable.

    Checks: at least one link; known joint types; finite DH constants; positive finite mass;
    cg and cg_orientation finite 3-vectors; inertia a finite symmetric 3x3 matrix that is
    positive semi-definite with principal moments obeying the triangle inequalities
    (I1 + I2 >= I3, ...; a point mass, inertia 0, is allowed); limits lower < upper, stiffness
    and damping >= 0; known control mode, gains >= 0, torque_max and power_max > 0 when given;
    finite initial state; base_offset a proper rigid transform; attachments on existing links
    with finite points. Never raises.
    """
    out: list[tuple[str, Any, str]] = []
    try:
        links = list(m.links)
    except Exception as exc:  # noqa: BLE001 - never raise
        return [("links", None, f"cannot read links: {exc!r}")]
    if not links:
        out.append(("links", links, "a mechanism needs at least one link"))
    for i, l in enumerate(links):
        p = f"links[{i}]"
        try:
            _validate_link(l, p, out)
        except Exception as exc:  # noqa: BLE001
            out.append((p, l, f"cannot check link: {exc!r}"))
    try:
        T = base_offset_matrix(m.base_offset)
        if not _finite(T):
            out.append(("base_offset", m.base_offset, "not finite"))
        else:
            R = T[:3, :3]
            if (np.abs(R @ R.T - np.eye(3)).max() > 1e-9 or abs(np.linalg.det(R) - 1.0) > 1e-9
                    or np.abs(T[3] - [0, 0, 0, 1]).max() > 0):
                out.append(("base_offset", m.base_offset, "not a proper rigid transform"))
    except Exception as exc:  # noqa: BLE001
        out.append(("base_offset", getattr(m, "base_offset", None), f"cannot read: {exc!r}"))
    try:
        for j, a in enumerate(m.attachments):
            p = f"attachments[{j}]"
            if not (isinstance(a.link, (int, np.integer)) and 0 <= a.link < len(links)):
                out.append((p + ".link", a.link, f"no link with this index (0..{len(links) - 1})"))
            if not (_finite(a.point) and np.shape(np.asarray(a.point, dtype=float)) == (3,)):
                out.append((p + ".point", a.point, "must be a finite 3-vector"))
    except Exception as exc:  # noqa: BLE001
        out.append(("attachments", getattr(m, "attachments", None), f"cannot read: {exc!r}"))
    return out


def _validate_link(l: Link, p: str, out: list) -> None:
    if l.joint not in JOINT_TYPES:
        out.append((p + ".joint", l.joint, f"unknown joint type (use one of {JOINT_TYPES})"))
    for f in ("a", "alpha", "d", "theta", "initial_position", "initial_rate"):
        v = getattr(l, f)
        if not (_is_real(v) and math.isfinite(v)):
            out.append((f"{p}.{f}", v, "must be a finite number"))
    if not (_is_real(l.mass) and math.isfinite(l.mass) and l.mass > 0):
        out.append((p + ".mass", l.mass, "must be a positive finite number"))
    for f in ("cg", "cg_orientation"):
        v = getattr(l, f)
        if not (_finite(v) and np.shape(np.asarray(v, dtype=float)) == (3,)):
            out.append((f"{p}.{f}", v, "must be a finite 3-vector"))
    _validate_inertia(l.inertia, p + ".inertia", out)
    if l.limits is not None:
        lim = l.limits
        if not all(_is_real(x) and not math.isnan(x) for x in (lim.lower, lim.upper)):
            out.append((p + ".limits", lim, "lower and upper must be numbers"))
        elif not lim.lower < lim.upper:
            out.append((p + ".limits", (lim.lower, lim.upper), "lower must be < upper"))
        for f in ("stiffness", "damping"):
            v = getattr(lim, f)
            if not (_is_real(v) and math.isfinite(v) and v >= 0):
                out.append((f"{p}.limits.{f}", v, "must be a finite number >= 0"))
    if l.control is not None:
        c = l.control
        if c.mode not in CONTROL_MODES:
            out.append((p + ".control.mode", c.mode, f"unknown mode (use one of {CONTROL_MODES})"))
        for f in ("kp", "ki", "kd"):
            v = getattr(c, f)
            if not (_is_real(v) and math.isfinite(v) and v >= 0):
                out.append((f"{p}.control.{f}", v, "must be a finite number >= 0"))
        for f in ("torque_max", "power_max"):
            v = getattr(c, f)
            if v is not None and not (_is_real(v) and v > 0 and not math.isnan(v)):
                out.append((f"{p}.control.{f}", v, "must be > 0 or null"))


def _validate_inertia(I: Any, f: str, out: list) -> None:
    try:
        A = np.asarray(I, dtype=float)
    except (TypeError, ValueError):
        out.append((f, I, "must be a 3x3 matrix or 3 diagonal values"))
        return
    if A.shape == (3,):
        A = np.diag(A)
    if A.shape != (3, 3):
        out.append((f, I, "must be a 3x3 matrix or 3 diagonal values"))
        return
    if not np.all(np.isfinite(A)):
        out.append((f, I, "must be finite"))
        return
    scale = max(float(np.abs(A).max()), 1e-300)
    if np.abs(A - A.T).max() > 1e-9 * scale:
        out.append((f, I, "must be symmetric"))
        return
    ev = np.linalg.eigvalsh(A)
    tol = 1e-9 * scale
    if ev[0] < -tol:
        out.append((f, I, f"not positive semi-definite (principal moments {ev.tolist()})"))
        return
    if ev[0] + ev[1] < ev[2] - tol:
        out.append((f, I, f"principal moments {ev.tolist()} violate the triangle inequality I1 + I2 >= I3"))
