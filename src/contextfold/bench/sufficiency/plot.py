"""The plot of a sufficiency run: context tokens per step, one line per strategy.

One panel per mode (rows: normal, noisy) and budget (columns); in each, for every strategy, the
mean context (prompt) tokens at each model call over the tasks that reached that call. matplotlib is
imported lazily (``pip install matplotlib`` when missing) and drawn off-screen (Agg).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from contextfold.bench.sufficiency.runner import RunResult
from contextfold.core.errors import ConfigError

__all__ = ["context_curves", "plot_context"]


def context_curves(
    results: Sequence[RunResult], *, min_share: float = 0.25
) -> dict[tuple[bool, int | None, str], list[float]]:
    """Mean context tokens per model call, by (noisy, budget, strategy); a curve stops where
    fewer than ``min_share`` of its tasks are still running (a few long tasks make noise)."""
    sums: dict[tuple[bool, int | None, str], list[list[float]]] = {}
    runs: dict[tuple[bool, int | None, str], int] = {}
    for r in results:
        key = (r.setting.noisy, r.setting.budget, r.setting.strategy)
        runs[key] = runs.get(key, 0) + 1
        curve = sums.setdefault(key, [])
        curve += [[0.0, 0] for _ in range(len(r.context) - len(curve))]
        for point, tokens in zip(curve, r.context, strict=False):
            point[0] += tokens
            point[1] += 1
    return {
        key: [total / count for total, count in curve if count >= min_share * runs[key]]
        for key, curve in sums.items()
    }


def plot_context(results: Sequence[RunResult], path: Path, *, title: str = "") -> Path:
    """Draw :func:`context_curves` to ``path`` (PNG), a panel per mode (row) and budget
    (column); returns the path."""
    plt = _pyplot()
    curves = context_curves(results)
    modes = sorted({noisy for noisy, _, _ in curves})
    budgets = sorted({budget for _, budget, _ in curves}, key=lambda b: b or 0)
    fig, axes = plt.subplots(
        len(modes), len(budgets), figsize=(5 * len(budgets), 3.6 * len(modes)), squeeze=False
    )
    for (noisy, budget, strategy), curve in curves.items():
        ax = axes[modes.index(noisy)][budgets.index(budget)]
        ax.plot(range(1, len(curve) + 1), curve, label=strategy, linewidth=1.4)
        ax.set_title(f"{'noisy' if noisy else 'normal'}, budget {budget or 'none'}", fontsize=10)
    for ax in axes.flat:
        ax.set_xlabel("model call")
        ax.set_ylabel("context tokens (mean over tasks)")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ConfigError(f"--plot needs matplotlib: pip install matplotlib ({exc})") from exc
    return plt
