"""Contact-pair evaluations per second (components/contact.py): box-box and mesh-mesh, apart and in
contact, for the SMS volumetric model and Hunt-Crossley.  `python benchmarks/bench_contact.py`.

An evaluation is what the Contact FMU does per pair per output update: GJK/EPA (closest), and in
contact the interference polyhedron (volume, centroid) and the friction law.  Best of 3 repeats.
Each evaluation moves A by 1 nm (a pair forms its geometry once per set of poses and velocities).
Two boxes under the volume model run compiled (components/kernels/contact.c) where the kernels
can be had; the "numpy" rows ask for the reference.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from components.contact import ContactMaterial, ContactPair, ContactParams  # noqa: E402
from components.convex import Box, ConvexMesh  # noqa: E402


def random_mesh(n: int, seed: int) -> ConvexMesh:
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, 3))
    return ConvexMesh(v / np.linalg.norm(v, axis=1)[:, None] * np.array([1.5, 1.0, 0.7]))


def rate(pair: ContactPair, pa: np.ndarray, pb: np.ndarray, n: int = 300, repeats: int = 3) -> float:
    I3, z = np.eye(3), np.zeros(3)
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        for k in range(n):
            pair.evaluate(pa + 1e-9 * k, I3, z, z, pb, I3, z, z)
        best = min(best, time.perf_counter() - t0)
    return n / best


def main() -> None:
    cases = []
    for model in ("volume", "hunt_crossley"):
        params = ContactParams(model=model)
        box = ContactPair(Box([1.0, 1.0, 0.5]), Box([5.0, 5.0, 1.0]), ContactMaterial(), ContactMaterial(), params)
        cases.append((f"box-box apart ({model})", box, np.array([0.0, 0.0, 0.0]), np.array([0.0, 0.0, 2.0])))
        cases.append((f"box-box contact ({model})", box, np.array([0.1, 0.2, 0.0]), np.array([0.0, 0.0, 1.49])))
        if model == "volume":
            ref = ContactPair(Box([1.0, 1.0, 0.5]), Box([5.0, 5.0, 1.0]), ContactMaterial(), ContactMaterial(), params,
                              compiled=False)
            cases.append((f"box-box apart ({model}, numpy)", ref, np.array([0.0, 0.0, 0.0]), np.array([0.0, 0.0, 2.0])))
            cases.append((f"box-box contact ({model}, numpy)", ref, np.array([0.1, 0.2, 0.0]),
                          np.array([0.0, 0.0, 1.49])))
        mesh = ContactPair(random_mesh(100, 1), random_mesh(100, 2), ContactMaterial(), ContactMaterial(), params)
        cases.append((f"mesh-mesh 100 v apart ({model})", mesh, np.zeros(3), np.array([0.0, 0.0, 2.0])))
        cases.append((f"mesh-mesh 100 v contact ({model})", mesh, np.zeros(3), np.array([0.0, 0.0, 1.3])))
    print(f"{'case':40s} {'evaluations/s':>14s} {'us/evaluation':>14s}")
    for name, pair, pa, pb in cases:
        r = rate(pair, pa, pb)
        print(f"{name:40s} {r:14.0f} {1e6 / r:14.1f}")


if __name__ == "__main__":
    main()
