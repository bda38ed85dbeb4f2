"""PNG plots of results: one figure per component, one panel per variable group."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

import numpy as np

from orchestration.errors import UsageError
from orchestration.master.observers.results import Results

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
        raise UsageError(f"no result column matches {list(patterns)}; columns start with "
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
                unit = (units or results.units).get(members[0])
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


# ---------------------------------------------------------------------------------------------
# Hand-made figures (orchestration.runs.reference): a list of panels, each a few curves


def plot_panels(time: np.ndarray, panels: Sequence[dict], out_path: Path, title: str = "",
                xlabel: str = "time [s]", marks: Sequence[tuple[float, str]] = (), width: float = 9.0) -> Path:
    """One PNG with the given panels stacked over a shared time axis.

    Each panel is a dict: ``title``; ``ylabel``; ``lines``: [(values, label) or (values, label,
    matplotlib kwargs)]; optional ``hlines``: [(value, label)] dashed reference levels; optional
    ``invert``: True to draw the y axis downwards (depths).  ``marks``: (time, label) vertical
    lines drawn on every panel (scenario events).  Empty panels are left out."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [p for p in panels if p.get("lines")]
    if not panels:
        raise ValueError("no panel has a curve to draw")
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    t = np.asarray(time)
    fig, axes = plt.subplots(len(panels), 1, figsize=(width, 2.0 * len(panels) + 0.9), sharex=True, squeeze=False)
    for ax, panel in zip(axes[:, 0], panels):
        for line in panel["lines"]:
            values, label = line[0], line[1]
            style = line[2] if len(line) > 2 else {}
            ax.plot(t, np.asarray(values), label=label, lw=1.0, **style)
        for value, label in panel.get("hlines", ()):
            ax.axhline(value, color="k", ls="--", lw=0.8, alpha=0.6, label=label)
        for when, _ in marks:
            ax.axvline(when, color="0.5", ls=":", lw=0.8)
        if panel.get("invert"):
            ax.invert_yaxis()
        ax.set_ylabel(panel.get("ylabel", ""))
        ax.set_title(panel.get("title", ""), fontsize=9, loc="left")
        ax.grid(True, alpha=0.3)
        if len(panel["lines"]) + len(panel.get("hlines", ())) > 1:
            ax.legend(fontsize=7, loc="best")
    top = axes[0, 0]
    for when, label in marks:
        top.annotate(label, (when, 1.0), xycoords=("data", "axes fraction"), fontsize=7, rotation=0,
                     ha="left", va="bottom", color="0.3")
    axes[-1, 0].set_xlabel(xlabel)
    if title:
        fig.suptitle(title[:120], fontsize=10)
    fig.tight_layout()
    fig.savefig(out_path, dpi=110)
    plt.close(fig)
    return out_path
