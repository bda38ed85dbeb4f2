"""3-D replay (issue 27): ``marine-cosim demo`` writes a ParaView series and an animation; read back
with a small VTK XML reader, the bodies are where the run put them at three checked times."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from orchestration.runs.replay import (box_mesh, frame_indices, hull_mesh, quaternion_matrices, tube_points,
                                       wire_points)


def read_pvd(path: Path) -> list[tuple[float, Path]]:
    """(time, file) of every data set of a ParaView collection."""
    root = ET.parse(path).getroot()
    assert root.get("type") == "Collection"
    return [(float(d.get("timestep")), path.parent / d.get("file")) for d in root.iter("DataSet")]


def read_vtp(path: Path) -> dict:
    """Points, point array body_id, body names, lines and polygons of an ASCII VTK XML PolyData file."""
    root = ET.parse(path).getroot()
    assert root.get("type") == "PolyData"
    piece = root.find("PolyData/Piece")
    numbers = lambda e, kind=float: np.array(e.text.split(), dtype=kind) if e.text else np.array([], dtype=kind)
    points = numbers(piece.find("Points/DataArray")).reshape(-1, 3)
    assert len(points) == int(piece.get("NumberOfPoints"))
    ids = numbers(piece.find("PointData/DataArray[@Name='body_id']"), int)
    cell_ids = numbers(piece.find("CellData/DataArray[@Name='body_id']"), int)
    names = root.find("PolyData/FieldData/DataArray[@Name='body_names']").text.split()

    def cells(tag):
        conn = numbers(piece.find(f"{tag}/DataArray[@Name='connectivity']"), int)
        offs = numbers(piece.find(f"{tag}/DataArray[@Name='offsets']"), int)
        return [conn[a:b] for a, b in zip(np.r_[0, offs[:-1]], offs)]

    lines, polys = cells("Lines"), cells("Polys")
    assert len(cell_ids) == len(lines) + len(polys)
    return {"points": points, "ids": ids, "names": names, "lines": lines, "polys": polys, "cell_ids": cell_ids,
            "body": {n: points[ids == k] for k, n in enumerate(names)}}


def test_meshes_and_frames():
    v, faces = box_mesh((4, 3, 2), (1, 0, 0))
    assert np.allclose(v.mean(axis=0), (1, 0, 0)) and np.allclose(v.max(axis=0) - v.min(axis=0), (4, 3, 2))
    assert len(faces) == 6 and all(len(f) == 4 for f in faces)
    hull, faces = hull_mesh(80.0, 20.0, 6.0)
    assert hull[:, 0].max() == 40.0 and hull[:, 2].max() == 6.0 and len(faces) == 7
    tube = tube_points(np.zeros(3), np.array([0.0, 0.0, 10.0]), 1.0)
    assert np.allclose(tube[[0, 2, 4, 6]].mean(axis=0), 0) and np.allclose(tube[[1, 3, 5, 7]].mean(axis=0), (0, 0, 10))
    a, b = np.zeros(3), np.array([10.0, 0.0, 0.0])
    assert np.allclose(wire_points(a, b, 10.0)[:, 2], 0.0)                     # taut: straight
    sag = wire_points(a, b, 12.0)
    arc = np.sum(np.linalg.norm(np.diff(wire_points(a, b, 12.0, n=400), axis=0), axis=1))
    assert sag[:, 2].max() > 2.0 and arc == pytest.approx(12.0, rel=0.03)       # slack: sags to its length
    assert wire_points(a, b, 12.0, seabed=1.0)[:, 2].max() == 1.0
    q = np.array([[np.cos(0.25), 0.0, 0.0, np.sin(0.25)]])                      # 0.5 rad about z
    assert np.allclose(quaternion_matrices(q)[0] @ [1, 0, 0], [np.cos(0.5), np.sin(0.5), 0])
    assert frame_indices(np.arange(0, 10.01, 0.025), 0.5)[:3] == [0, 20, 40]


@pytest.mark.slow
def test_demo_writes_a_replay_with_the_bodies_in_place(tmp_path, fmu_dir, capsys):
    from orchestration.cli.main import main
    from orchestration.master.observers.results import load_results

    out = tmp_path / "demo"
    assert main(["demo", "offshore_lift", "--stop", "3", "--out", str(out), "--fmus", str(fmu_dir)]) == 0
    assert "replay" in capsys.readouterr().out
    from PIL import Image

    gif = Image.open(out / "replay.gif")
    assert gif.n_frames == 4 and gif.size[0] >= 400                              # 0, 1, 2, 3 s
    frames = read_pvd(out / "replay" / "replay.pvd")
    assert [t for t, _ in frames] == pytest.approx(np.arange(0.0, 3.01, 0.5))
    bodies = json.loads((out / "replay" / "bodies.json").read_text())["bodies"]
    names = [b["name"] for b in bodies]                   # in the system's component order, the sea last
    assert {"ship", "crane.slew", "cable", "payload"} <= set(names) and names[-1] == "sea"
    assert names.index("crane.slew") == names.index("ship") + 1                   # the crane's links follow its base
    r = load_results(out)
    vec = lambda name, k, n=3: np.array([r[f"{name}[{i}]"][k] for i in range(n)])
    hull, _ = hull_mesh(82.800003, 19.200001, 6.0)
    for t, path in (frames[0], frames[3], frames[-1]):                          # 0, 1.5 and 3 s
        k = int(np.argmin(np.abs(r.time - t)))
        vtp = read_vtp(path)
        body = vtp["body"]
        # the payload's box is centred on its reference origin; the wire runs from the jib tip to the
        # lifting point; the crane's telescope ends at the jib tip; the hull at the ship's pose
        assert np.allclose(body["payload"].mean(axis=0), vec("payload.position", k), atol=1e-6)
        assert np.allclose(body["cable"][0], vec("payload.attachment1.position", k), atol=1e-6)
        assert np.allclose(body["cable"][-1], vec("crane.attachment2.position", k), atol=1e-6)
        assert np.allclose(body["crane.telescope"][[1, 3, 5, 7]].mean(axis=0), vec("crane.attachment2.position", k),
                           atol=1e-6)
        R = quaternion_matrices(vec("ship.quaternion", k, 4)[None])[0]
        assert np.allclose(body["ship"], hull @ R.T + vec("ship.position", k), atol=1e-5)
        # the payload hangs below the jib tip, in the sea's plane z = 0 there is the mean surface
        assert body["payload"][:, 2].mean() > body["crane.telescope"][:, 2].mean() + 10.0
        assert np.allclose(body["sea"][:, 2], 0.0)
        assert len(vtp["lines"]) == 1 and vtp["cell_ids"][0] == vtp["names"].index("cable")
