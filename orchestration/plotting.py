"""PNG plots of results: one figure per component, one panel per variable group."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

import numpy as np

from orchestration.execution import Results

MAX_PANELS = 8


def _group(column: str) -> tuple[str, str]:
    """"ship.cg.position[2]" -> ("ship", "cg.position"); "x" -> ("", "x")."""
    component, _, variable = column.partition(".") if "." in column else ("", "", column)
    return component, re.sub(r"\[[^\]]*\]$", "", variable or column)


def select(columns: Sequence[str], patterns: Sequence[str] | None) -> list[str]:
    """Columns equal to, or starting with, one of ``patterns`` (all columns if none)."""
    if not patterns:
        return list(columns)
    chosen = [c for c in columns if any(c == p or c.startswith(p.rstrip("*")) for p in patterns)]
    if not chosen:
        raise ValueError(f"no result column matches {list(patterns)}; columns start with "
                         f"{sorted({_group(c)[0] for c in columns})}")
    return chosen


def plot_results(results: Results, variables: Sequence[str] | None, out_dir: Path,
                 units: dict[str, str] | None = None, title: str = "") -> list[Path]:
    """Write ``<component>.png`` (split into several files beyond MAX_PANELS groups)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    columns = select(list(results.columns), variables)
    by_component: dict[str, dict[str, list[str]]] = {}
    for column in columns:
        component, group = _group(column)
        by_component.setdefault(component or "results", {}).setdefault(group, []).append(column)
    paths = []
    t = np.asarray(results.time)
    for component, groups in by_component.items():
        items = list(groups.items())
        for page in range(0, len(items), MAX_PANELS):
            chunk = items[page:page + MAX_PANELS]
            fig, axes = plt.subplots(len(chunk), 1, figsize=(9, 2.1 * len(chunk) + 0.8), sharex=True, squeeze=False)
            for ax, (group, members) in zip(axes[:, 0], chunk):
                for name in members:
                    ax.plot(t, results[name], label=name.split(".", 1)[-1] if component != "results" else name)
                unit = (units or {}).get(members[0])
                ax.set_ylabel(f"[{unit}]" if unit else "")
                label = members[0].split(".", 1)[-1] if component != "results" else members[0]
                ax.set_title(group if len(members) > 1 else label, fontsize=9, loc="left")
                ax.grid(True, alpha=0.3)
                if len(members) > 1:
                    ax.legend(fontsize=7, loc="best")
            axes[-1, 0].set_xlabel("time [s]")
            fig.suptitle((title or component)[:100], fontsize=10)
            fig.tight_layout()
            suffix = f"_{page // MAX_PANELS + 1}" if len(items) > MAX_PANELS else ""
            path = out_dir / f"{component}{suffix}.png"
            fig.savefig(path, dpi=110)
            plt.close(fig)
            paths.append(path)
    return paths
