"""What the Cable and CompliantCable adapters share about their components.line.Line: the check of
a state given to fmi2SetFMUstate, and the bound on the work of one doStep."""
from __future__ import annotations

from typing import Callable

import numpy as np

from components.line import Line, LineWorkExceeded


def line_state_problem(line: dict) -> str | None:
    """The arrays of a Line's state (components.line.Line.get_state) agree in their numbers of
    nodes and elements: n + 1 node positions and velocities of 3 components, n element lengths."""
    r, v, lengths = (np.asarray(line.get(k)) for k in ("r", "v", "l"))
    if r.ndim != 2 or r.shape[1] != 3 or v.shape != r.shape or lengths.shape != (r.shape[0] - 1,) or r.shape[0] < 2:
        return f"the line's arrays disagree: r {r.shape}, v {v.shape}, l {lengths.shape}"
    return None


# estimated seconds of work one doStep may do (components.line.Line.step_cost, one solve a sub-step),
# and the factor its implicit iterations (elements snapping taut or slack) may add on top: a
# doStep either ends in seconds or is refused
STEP_WORK = 2.0
ITERATION_FACTOR = 8.0


def bounded_line_step(line: Line, h: float, drivers: Callable[[], str]) -> None:
    """``line.step(h)`` within the bound on one doStep's work: refused up front when its estimate
    (sub-steps x the cost of one over the line's nodes, components.line.Line.step_cost) is over
    STEP_WORK, stopped when its iterations take ITERATION_FACTOR times the estimate (at least
    STEP_WORK).  ``drivers()``: the parameters and inputs the work grows with, for the message
    (formed only for one: the text costs more than a step of a short line)."""
    n, cost = line.step_cost(h)
    if cost > STEP_WORK:
        raise ValueError(f"a doStep of {h:g} s would take {n} sub-steps of {h / n:.3g} s over {line.N} "
                         f"elements, about {cost:.3g} s of work, more than the {STEP_WORK:g} s one doStep may do "
                         f"({drivers()}): use communication steps of at most {h * STEP_WORK / cost:.3g} s, or fewer "
                         f"elements")
    line.work_limit = max(ITERATION_FACTOR * cost, STEP_WORK)
    try:
        line.step(h)
    except LineWorkExceeded as exc:
        raise ValueError(f"{exc} ({drivers()}): use shorter communication steps or sub-steps") from None
    finally:
        line.work_limit = None
