"""3-D replay of a run: the ship, the crane's links, the wires, the payload and the contact bodies
over time, as a VTK series for ParaView and as an animation.

    marine-cosim replay RESULTS [--system FILE] [--out DIR] [--every S] [--gif] [--fps N]

From a result folder (and the system file that was run: ``metadata.json`` names it) this writes

* ``replay/replay.pvd``: a ParaView collection, one ``replay/frame_NNNNN.vtp`` (VTK XML PolyData,
  ASCII) per frame, ``every`` seconds of simulated time apart (default 0.5 s). Each frame holds
  every body as polygons (hull, boxes, crane links, sea surface) or lines (wires) in the NED world
  frame (x north, y east, z down: in ParaView set the camera's view-up to (0, 0, -1)); the cell
  and point array ``body_id`` tells the bodies apart, the field array ``body_names`` names them
  (also in ``replay/bodies.json``);
* ``replay.gif`` (``--gif``): a headless matplotlib animation of the same frames (Pillow), z up.

The bodies come from the system's components (by the FMU's model name) and the recorded values;
a value that was not recorded is read through the connection that drives it (e.g. the crane's
base pose from the ship's hardpoint) or is the component's start value:

* **Ship**: a hull of the vessel data's Lpp, B and T (box with a pointed bow, 3 m freeboard) at
  ``position`` and ``quaternion`` (``euler`` when the quaternion was not recorded);
* **Crane**: each link as a square tube from the previous link's distal frame to its own, by forward
  kinematics of the mechanism file (components.articulated_body) at ``base.position``,
  ``base.quaternion`` and ``joint<k>.position``: the Crane FMU does not output its link poses;
* **Cable**: from ``end_b.position`` to ``end_a.position``, straight when taut, with a parabolic
  sag giving the unstretched length (``line_length``) when slack, clipped at the seabed: the Cable
  FMU does not output its node positions (docs/replay.md: what an FMU would add);
* **Payload**: a box (``sizes`` gives its extents; default a cube of its displaced volume)
  centred on ``position`` at ``quaternion``;
* **Contact**: each body with a shape (box, sphere, cylinder) at its input pose and offset;
* the mean sea surface (z = 0) around the ships.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from orchestration.errors import UsageError

FREEBOARD = 3.0        # m, hull side above the waterline (the vessel data have no depth)


@dataclass
class Body:
    """One body of the scene: a mesh in its own frame moved by a pose per frame, or (``lines``) a
    polyline given per frame in world coordinates."""

    name: str
    kind: str                                   # ship, crane_link, wire, payload, contact, sea
    vertices: np.ndarray | None = None          # (m, 3) body frame
    faces: list[list[int]] = field(default_factory=list)
    position: np.ndarray | None = None          # (N, 3) NED
    rotation: np.ndarray | None = None          # (N, 3, 3) body -> NED
    polyline: np.ndarray | None = None          # (N, m, 3) NED, for wires

    def points(self, k: int) -> np.ndarray:
        if self.polyline is not None:
            return self.polyline[k]
        return self.vertices @ self.rotation[k].T + self.position[k]


@dataclass
class Scene:
    time: np.ndarray
    bodies: list[Body]
    notes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------- values of the run

class Signals:
    """A variable's history: recorded, else through the connection that drives it, else its start value."""

    def __init__(self, system, results):
        self.system = system
        self.results = results
        self.n = len(results.time)
        self.drivers = {c.target: c for c in system.connections}

    def get(self, component: str, variable: str, default: float | None = None) -> np.ndarray:
        name = f"{component}.{variable}"
        if name in self.results:
            return np.asarray(self.results[name], float)
        c = self.drivers.get((component, variable))
        if c is not None:
            try:
                return c.factor * self.get(*c.source) + c.offset
            except KeyError:
                pass
        comp = self.system.components[component]
        if variable in comp.parameters and isinstance(comp.parameters[variable], (int, float)):
            return np.full(self.n, float(comp.parameters[variable]))
        start = _fmu_start(comp.source, variable)
        if start is not None:
            return np.full(self.n, start)
        if default is not None:
            return np.full(self.n, float(default))
        raise KeyError(name)

    def vector(self, component: str, base: str, n: int = 3) -> np.ndarray:
        return np.column_stack([self.get(component, f"{base}[{i}]") for i in range(n)])

    def parameter(self, component: str, name: str, default=None):
        comp = self.system.components[component]
        if name in comp.parameters:
            return comp.parameters[name]
        start = _fmu_start(comp.source, name, text=True)
        return default if start is None else start


def _fmu_start(source, variable: str, text: bool = False):
    from fmpy import read_model_description

    for v in read_model_description(str(source)).modelVariables:
        if v.name == variable and v.start is not None:
            if text:
                return v.start
            try:
                return float(v.start) if v.type != "Boolean" else float(str(v.start).lower() == "true")
            except ValueError:
                return None
    return None


def quaternion_matrices(q: np.ndarray) -> np.ndarray:
    """(N, 4) unit quaternions (w, x, y, z) -> (N, 3, 3) rotation matrices (body -> NED)."""
    q = np.asarray(q, float)
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    w, x, y, z = q.T
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
                     np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
                     np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], 1)


def euler_matrices(e: np.ndarray) -> np.ndarray:
    """(N, 3) zyx Euler angles (roll, pitch, yaw) -> (N, 3, 3), R = Rz(yaw) Ry(pitch) Rx(roll) (Fossen 2011
    eq. 2.18)."""
    phi, theta, psi = np.asarray(e, float).T
    cf, sf, ct, st, cp, sp = np.cos(phi), np.sin(phi), np.cos(theta), np.sin(theta), np.cos(psi), np.sin(psi)
    return np.stack([np.stack([cp * ct, -sp * cf + cp * st * sf, sp * sf + cp * cf * st], -1),
                     np.stack([sp * ct, cp * cf + sf * st * sp, -cp * sf + st * sp * cf], -1),
                     np.stack([-st, ct * sf, ct * cf], -1)], 1)


def _attitude(sig: Signals, component: str, base: str = "") -> np.ndarray:
    try:
        return quaternion_matrices(sig.vector(component, f"{base}quaternion", 4))
    except KeyError:
        return euler_matrices(sig.vector(component, f"{base}euler", 3))


# ---------------------------------------------------------------------- meshes

def box_mesh(size: Sequence[float], centre: Sequence[float] = (0.0, 0.0, 0.0)) -> tuple[np.ndarray, list]:
    """A box of extents ``size`` (x, y, z) centred at ``centre``: 8 vertices, 6 quadrilaterals."""
    hx, hy, hz = (0.5 * float(s) for s in size)
    v = np.array([[sx * hx, sy * hy, sz * hz] for sz in (-1, 1) for sy in (-1, 1) for sx in (-1, 1)]) + centre
    faces = [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]]
    return v, faces


def hull_mesh(length: float, beam: float, draught: float, freeboard: float = FREEBOARD) -> tuple[np.ndarray, list]:
    """A ship hull about the vessel origin (midships, centreline, waterline; body axes x forward,
    z down): vertical sides from the keel (z = T) to the deck (z = -freeboard), a square stern and a
    bow tapering over the forward quarter to a stem."""
    L2, B2 = length / 2, beam / 2
    outline = [(-L2, -B2), (-L2, B2), (0.25 * L2, B2), (L2, 0.0), (0.25 * L2, -B2)]
    v = np.array([(x, y, z) for z in (-freeboard, draught) for x, y in outline], float)
    n = len(outline)
    faces = [list(range(n)), list(range(2 * n - 1, n - 1, -1))]          # deck, bottom
    faces += [[k, (k + 1) % n, n + (k + 1) % n, n + k] for k in range(n)]   # sides
    return v, faces


def sphere_mesh(radius: float, centre=(0.0, 0.0, 0.0), n: int = 8) -> tuple[np.ndarray, list]:
    lat = np.linspace(0, math.pi, n + 1)
    lon = np.linspace(0, 2 * math.pi, 2 * n, endpoint=False)
    v = np.array([(radius * math.sin(a) * math.cos(b), radius * math.sin(a) * math.sin(b), radius * math.cos(a))
                  for a in lat for b in lon]) + centre
    m = len(lon)
    faces = [[i * m + j, i * m + (j + 1) % m, (i + 1) * m + (j + 1) % m, (i + 1) * m + j]
             for i in range(n) for j in range(m)]
    return v, faces


def cylinder_mesh(radius: float, length: float, centre=(0.0, 0.0, 0.0), n: int = 16) -> tuple[np.ndarray, list]:
    """Along body z (the Contact FMU's cylinder)."""
    ang = np.linspace(0, 2 * math.pi, n, endpoint=False)
    v = np.array([(radius * math.cos(a), radius * math.sin(a), z) for z in (-length / 2, length / 2) for a in ang])
    faces = [list(range(n)), list(range(2 * n - 1, n - 1, -1))] + \
        [[k, (k + 1) % n, n + (k + 1) % n, n + k] for k in range(n)]
    return v + centre, faces


def tube_points(a: np.ndarray, b: np.ndarray, width: float) -> np.ndarray:
    """The 8 corners of a square tube of ``width`` from ``a`` to ``b`` (box_mesh's vertex order along
    the tube's axis)."""
    axis = b - a
    length = float(np.linalg.norm(axis))
    u = axis / length if length > 1e-9 else np.array([0.0, 0.0, 1.0])
    helper = np.array([0.0, 0.0, 1.0]) if abs(u[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    e1 = np.cross(u, helper)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(u, e1)
    h = width / 2
    return np.array([p + sy * h * e1 + sz * h * e2 for sz in (-1, 1) for sy in (-1, 1) for p in (a, b)])


def wire_points(a: np.ndarray, b: np.ndarray, length: float, n: int = 16, seabed: float | None = None) -> np.ndarray:
    """A wire from ``a`` to ``b``: straight when the chord is at least ``length``, else a parabola
    sagging downwards (NED +z) whose arc length is about ``length`` (s = sqrt(3 c (L - c) / 8)),
    not below the seabed."""
    s = np.linspace(0.0, 1.0, n)[:, None]
    pts = a + s * (b - a)
    chord = float(np.linalg.norm(b - a))
    if length > chord > 0:
        sag = math.sqrt(3.0 * chord * (length - chord) / 8.0)
        pts[:, 2] += 4.0 * sag * (s[:, 0] * (1 - s[:, 0]))
    if seabed is not None:
        pts[:, 2] = np.minimum(pts[:, 2], seabed)
    return pts


# ---------------------------------------------------------------------- the scene of a run

def _model(component) -> str:
    from orchestration.system.fmu_info import model_info

    return model_info(Path(component.source)).model_name


def _mechanism(value: str, system):
    from components.mechanism import load_mechanism, preset

    path = Path(str(value))
    if path.suffix.lower() in (".json", ".yaml", ".yml"):
        roots = [Path.cwd()]
        if system.source_file:
            roots.append(Path(system.source_file).parent)
        roots.append(Path(__file__).resolve().parents[2])      # a checkout: paths relative to its root
        for candidate in ([path] if path.is_absolute() else [r / path for r in roots]):
            if candidate.is_file():
                return load_mechanism(candidate)
        raise UsageError(f"replay: crane mechanism file {value} not found (relative to {', '.join(map(str, roots))})")
    return preset(str(value))


def build_scene(system, results, sizes: dict[str, Sequence[float]] | None = None) -> Scene:
    """Every body of ``system`` over the recorded times of ``results`` (module docstring)."""
    from components.articulated_body import ArticulatedBody

    sig = Signals(system, results)
    t = np.asarray(results.time, float)
    scene = Scene(t, [])
    sizes = dict(sizes or {})
    ships = []
    for comp in system.components.values():
        model = _model(comp)
        try:
            if model == "Ship":
                scene.bodies.append(_ship_body(comp, sig))
                ships.append(scene.bodies[-1])
            elif model == "Crane":
                mech = _mechanism(sig.parameter(comp.name, "mechanism", "knuckle_boom"), system)
                body = ArticulatedBody(mech)
                base_p = sig.vector(comp.name, "base.position")
                base_R = quaternion_matrices(sig.vector(comp.name, "base.quaternion", 4))
                q = np.column_stack([sig.get(comp.name, f"joint{k + 1}.position") for k in range(mech.n)])
                # each link from the previous link's distal frame (the base for the first) to its own
                distal = [[p for _, p in body.link_poses(q[k], base_R[k], base_p[k])] for k in range(len(t))]
                ends = [list(zip([base_p[k], *d[:-1]], d)) for k, d in enumerate(distal)]
                reach = max(abs(link.a) + abs(link.d) for link in mech.links)
                width = max(0.3, 0.04 * reach)
                box_v, box_f = box_mesh((1, 1, 1))
                for k, link in enumerate(mech.links):
                    poly = np.stack([tube_points(ends[j][k][0], ends[j][k][1], width)
                                     for j in range(len(t))])
                    scene.bodies.append(Body(f"{comp.name}.{link.name}", "crane_link", box_v, box_f,
                                             polyline=poly))
            elif model == "Cable":
                a, b = sig.vector(comp.name, "end_a.position"), sig.vector(comp.name, "end_b.position")
                try:
                    length = sig.get(comp.name, "line_length")
                except KeyError:
                    length = np.full(len(t), float(sig.parameter(comp.name, "length", 0.0)))
                seabed = float(sig.parameter(comp.name, "seabed.depth", 1e9))
                poly = np.stack([wire_points(a[j], b[j], float(length[j]), seabed=seabed) for j in range(len(t))])
                scene.bodies.append(Body(comp.name, "wire", polyline=poly))
            elif model == "Payload":
                size = sizes.get(comp.name)
                if size is None:
                    side = float(sig.parameter(comp.name, "hydro.volume", 1.0)) ** (1 / 3) or 1.0
                    size = (side, side, side)
                v, f = box_mesh(size)
                scene.bodies.append(Body(comp.name, "payload", v, f, sig.vector(comp.name, "position"),
                                         _attitude(sig, comp.name)))
            elif model == "Contact":
                for k in (1, 2, 3):
                    shape = int(float(sig.parameter(comp.name, f"body{k}.shape", 0)))
                    if shape not in (1, 2, 3):
                        continue
                    try:
                        pos = sig.vector(comp.name, f"body{k}.position")
                        rot = quaternion_matrices(sig.vector(comp.name, f"body{k}.quaternion", 4))
                    except KeyError:
                        continue
                    size = [float(sig.parameter(comp.name, f"body{k}.size[{i}]", 1.0)) for i in range(3)]
                    off = [float(sig.parameter(comp.name, f"body{k}.offset[{i}]", 0.0)) for i in range(3)]
                    v, f = (box_mesh(size, off) if shape == 1 else sphere_mesh(size[0], off) if shape == 2
                            else cylinder_mesh(size[0], size[2], off))
                    scene.bodies.append(Body(f"{comp.name}.body{k}", "contact", v, f, pos, rot))
        except KeyError as exc:
            scene.notes.append(f"{comp.name} ({model}) left out: {exc.args[0]} was neither recorded nor driven")
    extent = 120.0
    centre = np.mean([s.position[0] for s in ships], axis=0) if ships else np.zeros(3)
    v = np.array([[centre[0] + sx * extent, centre[1] + sy * extent, 0.0] for sx, sy in
                  ((-1, -1), (1, -1), (1, 1), (-1, 1))])
    scene.bodies.append(Body("sea", "sea", v, [[0, 1, 2, 3]], np.zeros((len(t), 3)),
                             np.repeat(np.eye(3)[None], len(t), axis=0)))
    return scene


def _ship_body(comp, sig: Signals) -> Body:
    from components.vessel_data import default_vessel_path, load_vessel

    path = str(sig.parameter(comp.name, "vessel_file", "") or "")
    try:
        vessel = load_vessel(Path(path) if path else default_vessel_path())
        p = vessel.particulars
        dims = (p.get("Lpp", 80.0), p.get("B", 20.0), p.get("T", 6.0))
    except Exception:                  # a vessel file we cannot read here: a generic hull
        dims = (80.0, 20.0, 6.0)
    v, f = hull_mesh(*dims)
    return Body(comp.name, "ship", v, f, sig.vector(comp.name, "position"), _attitude(sig, comp.name))


# ---------------------------------------------------------------------- VTK files

def frame_indices(time: np.ndarray, every: float) -> list[int]:
    """Indices of the recorded points nearest to 0, every, 2 every, ... (the first and the last kept)."""
    t = np.asarray(time, float)
    if math.isnan(every):
        raise UsageError("--every nan: the simulated seconds between frames must be a number")
    # far more wanted times than recorded points (every = 1e-9 s) would be an array of billions:
    # every recorded point is a frame then anyway
    if every <= 0 or (len(t) and (t[-1] - t[0]) / every > 10 * len(t)):
        return list(range(len(t)))
    wanted = np.arange(t[0], t[-1] + 1e-9, every)
    idx = sorted({int(np.argmin(np.abs(t - w))) for w in wanted} | {len(t) - 1})
    return idx


def _ascii(values, fmt: str = "{:.6g}") -> str:
    return " ".join(fmt.format(v) for v in values)


def write_vtp(path: Path, scene: Scene, k: int) -> None:
    """One frame as VTK XML PolyData (ASCII): every body's points; wires as lines, the rest as polygons;
    ``body_id`` per point and per cell (lines first, then polygons: VTK's cell order)."""
    points, point_ids, lines, line_ids, polys, poly_ids = [], [], [], [], [], []
    offset = 0
    for b_id, body in enumerate(scene.bodies):
        pts = body.points(k)
        points.append(pts)
        point_ids += [b_id] * len(pts)
        if body.kind == "wire":
            lines.append(list(range(offset, offset + len(pts))))
            line_ids.append(b_id)
        else:
            for face in body.faces:
                polys.append([offset + i for i in face])
                poly_ids.append(b_id)
        offset += len(pts)
    pts = np.vstack(points) if points else np.zeros((0, 3))

    def cells(tag: str, items: list[list[int]]) -> str:
        conn = [i for item in items for i in item]
        offs = np.cumsum([len(item) for item in items]).tolist()
        return (f'      <{tag}>\n        <DataArray type="Int64" Name="connectivity" format="ascii">'
                f'{_ascii(conn, "{}")}</DataArray>\n'
                f'        <DataArray type="Int64" Name="offsets" format="ascii">{_ascii(offs, "{}")}</DataArray>\n'
                f"      </{tag}>\n")

    names = " ".join(b.name for b in scene.bodies)
    text = ('<?xml version="1.0"?>\n<VTKFile type="PolyData" version="1.0" byte_order="LittleEndian" '
            'header_type="UInt64">\n  <PolyData>\n'
            f'    <FieldData>\n      <DataArray type="String" Name="body_names" NumberOfTuples="{len(scene.bodies)}" '
            f'format="ascii">{names}</DataArray>\n'
            f'      <DataArray type="Float64" Name="TimeValue" NumberOfTuples="1" format="ascii">'
            f'{scene.time[k]:.9g}</DataArray>\n    </FieldData>\n'
            f'    <Piece NumberOfPoints="{len(pts)}" NumberOfVerts="0" NumberOfLines="{len(lines)}" '
            f'NumberOfStrips="0" NumberOfPolys="{len(polys)}">\n'
            '      <Points>\n        <DataArray type="Float64" NumberOfComponents="3" format="ascii">'
            f'{_ascii(pts.ravel(), "{:.9g}")}</DataArray>\n      </Points>\n'
            '      <PointData Scalars="body_id">\n        <DataArray type="Int32" Name="body_id" format="ascii">'
            f'{_ascii(point_ids, "{}")}</DataArray>\n      </PointData>\n'
            '      <CellData Scalars="body_id">\n        <DataArray type="Int32" Name="body_id" format="ascii">'
            f'{_ascii(line_ids + poly_ids, "{}")}</DataArray>\n      </CellData>\n'
            + cells("Lines", lines) + cells("Polys", polys) +
            '    </Piece>\n  </PolyData>\n</VTKFile>\n')
    path.write_text(text)


def write_pvd(scene: Scene, out_dir: Path, every: float = 0.5) -> Path:
    """The frames and the ParaView collection ``out_dir/replay.pvd``; returns its path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("frame_*.vtp"):
        old.unlink()
    entries = []
    for n, k in enumerate(frame_indices(scene.time, every)):
        name = f"frame_{n:05d}.vtp"
        write_vtp(out_dir / name, scene, k)
        entries.append(f'    <DataSet timestep="{scene.time[k]:.9g}" group="" part="0" file="{name}"/>')
    pvd = out_dir / "replay.pvd"
    pvd.write_text('<?xml version="1.0"?>\n<VTKFile type="Collection" version="0.1" byte_order="LittleEndian">\n'
                   "  <Collection>\n" + "\n".join(entries) + "\n  </Collection>\n</VTKFile>\n")
    (out_dir / "bodies.json").write_text(json.dumps(
        {"frame": "NED (x north, y east, z down), m", "bodies": [{"id": i, "name": b.name, "kind": b.kind}
                                                                  for i, b in enumerate(scene.bodies)],
         "notes": scene.notes}, indent=2))
    return pvd


# ---------------------------------------------------------------------- animation

COLOURS = {"ship": "#8c8c8c", "crane_link": "#f0a020", "wire": "#202020", "payload": "#d04040",
           "contact": "#4060c0", "sea": "#9ec9e8"}


def render_gif(scene: Scene, path: Path, every: float = 0.5, fps: int = 10, max_frames: int = 150,
               focus: str | None = None, progress: Callable[[int, int], None] | None = None) -> Path:
    """A headless animation (matplotlib 3-D, Pillow GIF) of the frames ``every`` s apart (at most
    ``max_frames``, thinned evenly), z up; the view follows ``focus`` (a body name, default the first
    crane link or ship)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.animation import FuncAnimation, PillowWriter
    from mpl_toolkits.mplot3d.art3d import Line3DCollection, Poly3DCollection

    frames = frame_indices(scene.time, every)
    if len(frames) > max_frames:
        frames = [frames[int(i)] for i in np.linspace(0, len(frames) - 1, max_frames)]
    up = np.array([1.0, -1.0, -1.0])             # NED -> (north, west, up): a right-handed view with z up
    everything = np.vstack([b.points(k) * up for b in scene.bodies if b.kind != "sea" for k in (frames[0],
                                                                                                 frames[-1])])
    lo, hi = everything.min(axis=0), everything.max(axis=0)
    half = 0.55 * float(np.max(hi - lo))
    mid = (lo + hi) / 2
    fig = plt.figure(figsize=(6.4, 4.8))
    ax = fig.add_subplot(projection="3d")
    ax.computed_zorder = False                   # drawn in this order: sea, ship, crane, payload, wires
    order = ("sea", "ship", "contact", "crane_link", "payload")
    groups = {kind: [b for b in scene.bodies if b.kind == kind] for kind in order}
    wires = [b for b in scene.bodies if b.kind == "wire"]
    dummy = [np.zeros((3, 3))]                   # matplotlib wants something to start from
    collections = {}
    for z, kind in enumerate(order):
        if groups[kind]:
            c = Poly3DCollection(dummy, linewidths=0.3, edgecolors="#303030", facecolors=COLOURS[kind],
                                 alpha=0.3 if kind == "sea" else 0.9, zorder=z)
            ax.add_collection3d(c)
            collections[kind] = c
    lines = Line3DCollection(dummy, colors=COLOURS["wire"], linewidths=1.5, zorder=len(order))
    ax.add_collection3d(lines)
    ax.set_xlim(mid[0] - half, mid[0] + half)
    ax.set_ylim(mid[1] - half, mid[1] + half)
    ax.set_zlim(mid[2] - half, mid[2] + half)
    ax.set_xlabel("north [m]")
    ax.set_ylabel("west [m]")
    ax.set_zlabel("up [m]")
    ax.view_init(elev=15, azim=-135)             # from the starboard quarter
    title = ax.set_title("")

    def clip(pts: np.ndarray) -> np.ndarray:     # the sea surface within the view
        return np.column_stack([np.clip(pts[:, 0], mid[0] - half, mid[0] + half),
                                np.clip(pts[:, 1], mid[1] - half, mid[1] + half), pts[:, 2]])

    def draw(n: int):
        k = frames[n]
        for kind, c in collections.items():
            c.set_verts([clip(b.points(k) * up)[f] if kind == "sea" else (b.points(k) * up)[f]
                         for b in groups[kind] for f in b.faces])
        lines.set_segments([b.points(k) * up for b in wires])
        title.set_text(f"t = {scene.time[k]:.1f} s")
        if progress is not None:
            progress(n + 1, len(frames))
        return (*collections.values(), lines, title)

    animation = FuncAnimation(fig, draw, frames=len(frames), blit=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    animation.save(str(path), writer=PillowWriter(fps=fps), dpi=80)
    plt.close(fig)
    return path


# ---------------------------------------------------------------------- a result folder

def replay(results_dir: Path | str, system_file: Path | str | None = None, out: Path | str | None = None,
           every: float = 0.5, gif: bool = False, fps: int = 10, sizes: dict | None = None,
           results=None, system=None) -> dict[str, Path]:
    """The replay of a result folder: ``out/replay/replay.pvd`` (+ frames) and, with ``gif``,
    ``out/replay.gif``; ``out`` defaults to the result folder. The system file defaults to the one
    metadata.json names."""
    from orchestration.master.observers.results import load_results
    from orchestration.system.files import load_system

    results_dir = Path(results_dir)
    if math.isnan(every):
        raise UsageError("--every nan: the simulated seconds between frames must be a number")
    if gif and (isinstance(fps, bool) or not isinstance(fps, int) or fps < 1):
        raise UsageError(f"--fps {fps!r}: the frames per second of the GIF must be a whole number >= 1")
    if results is None:
        results = load_results(results_dir)
    results.require_rows(results_dir, "replay")
    if system is None:
        if system_file is None:
            system_file = (results.metadata.get("system") or {}).get("file")
            if not system_file:
                raise UsageError(f"{results_dir}: metadata.json names no system file; give --system FILE")
        if not Path(system_file).is_file():
            raise UsageError(f"replay: system file not found: {system_file} (give --system FILE)")
        system = load_system(Path(system_file))
    out = Path(out) if out is not None else (results_dir if results_dir.is_dir() else results_dir.parent)
    scene = build_scene(system, results, sizes)
    written = {"pvd": write_pvd(scene, out / "replay", every)}
    if gif:
        written["gif"] = render_gif(scene, out / "replay.gif", every=every, fps=fps)
    return written
