"""Draws overview.svg, the picture of the README and the docs' home page: the append-only
history, a strategy rendering a view of it, and what the view left out with its way back.

    .venv/bin/python docs/assets/overview.py
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

OUT = Path(__file__).with_name("overview.svg")
STEPS = ["task", "read a.py", "grep foo", "read a.py", "edit a.py", "run tests"]
VIEW = ["task", "[stub: restore(step=1)]", "grep foo", "[repeat of step 1]", "edit a.py"]
VIEW += ["run tests"]


def box(ax, x, y, w, text, *, color, dashed=False):
    ax.add_patch(
        FancyBboxPatch(
            (x, y),
            w,
            0.32,
            boxstyle="round,pad=0.04",
            facecolor=color,
            edgecolor="#444",
            linestyle="--" if dashed else "-",
            linewidth=0.8,
        )
    )
    ax.text(x + w / 2, y + 0.16, text, ha="center", va="center", fontsize=8)


def arrow(ax, start, end, text=""):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=10, color="#444"))
    if text:
        mid = ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2 + 0.15)
        ax.text(*mid, text, ha="center", fontsize=8, style="italic")


def main() -> None:
    plt.rcParams["svg.hashsalt"] = "contextfold"
    fig, ax = plt.subplots(figsize=(9, 3.4))
    ax.set_xlim(0, 9)
    ax.set_ylim(0, 3.4)
    ax.axis("off")
    ax.text(0.1, 3.1, "history (append-only, whole)", fontsize=9, weight="bold")
    for i, step in enumerate(STEPS):
        box(ax, 0.1, 2.5 - i * 0.42, 2.0, f"{i}  {step}", color="#e8eef7")
    box(ax, 3.4, 1.5, 1.8, "strategy\nrender(history, budget)", color="#fdf1d6")
    ax.text(6.3, 3.1, "view (sent to the model)", fontsize=9, weight="bold")
    for i, part in enumerate(VIEW):
        stub = part.startswith("[")
        box(ax, 6.3, 2.5 - i * 0.42, 2.6, part, color="#f3f3f3" if stub else "#e8f4e8", dashed=stub)
    arrow(ax, (2.2, 1.75), (3.35, 1.75), "observe")
    arrow(ax, (5.25, 1.75), (6.25, 1.75), "view")
    ax.text(
        4.5,
        0.12,
        "every part left out is an elision: why, how many tokens, how to restore it",
        ha="center",
        fontsize=8,
    )
    fig.savefig(OUT, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)


if __name__ == "__main__":
    main()
