"""A check of a components.line.Line state given to fmi2SetFMUstate (Cable, CompliantCable)."""
from __future__ import annotations

import numpy as np


def line_state_problem(line: dict) -> str | None:
    """The arrays of a Line's state (components.line.Line.get_state) agree in their numbers of
    nodes and elements: n + 1 node positions and velocities of 3 components, n element lengths."""
    r, v, lengths = (np.asarray(line.get(k)) for k in ("r", "v", "l"))
    if r.ndim != 2 or r.shape[1] != 3 or v.shape != r.shape or lengths.shape != (r.shape[0] - 1,) or r.shape[0] < 2:
        return f"the line's arrays disagree: r {r.shape}, v {v.shape}, l {lengths.shape}"
    return None
