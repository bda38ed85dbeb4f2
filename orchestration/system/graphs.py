"""Graph algorithms the master and the validator share."""
from __future__ import annotations

from typing import Callable, Hashable, Iterable, TypeVar

N = TypeVar("N", bound=Hashable)


def strongly_connected_components(nodes: Iterable[N], successors: Callable[[N], Iterable[N]]) -> list[list[N]]:
    """Tarjan's algorithm (Tarjan 1972). Components come out in reverse topological order (a
    component before the components that feed it); nodes are visited in the given order and
    successors in sorted order, so the result is deterministic. Recursion depth is bounded by the
    size of the graph (systems have at most a few thousand connected variables)."""
    index: dict = {}
    low: dict = {}
    on_stack: set = set()
    stack: list = []
    components: list[list[N]] = []
    counter = [0]

    def visit(v) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(successors(v)):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            components.append(component)

    for v in nodes:
        if v not in index:
            visit(v)
    return components
