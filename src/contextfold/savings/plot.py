"""``savings --plot FILE.png``: each session's bill beside its direct estimate, and (from a
store) the dollars of every call added up in the order they were made. matplotlib (the
``plot`` extra) is imported lazily and draws off-screen (Agg)."""

from __future__ import annotations

from itertools import accumulate
from pathlib import Path
from typing import Any

from contextfold.core.errors import ConfigError
from contextfold.savings.sources import Source

__all__ = ["SESSIONS_DRAWN", "plot_savings"]

SESSIONS_DRAWN = 30
"""Sessions drawn at most (those that cost most direct)."""


def plot_savings(source: Source, path: Path) -> Path:
    """Draw ``source`` to ``path`` (PNG); returns the path."""
    plt = _pyplot()
    panels = 2 if source.entries else 1
    fig, axes = plt.subplots(1, panels, figsize=(6.5 * panels, 4.2), squeeze=False)
    _sessions(axes[0][0], source)
    if source.entries:
        _cumulative(axes[0][1], source)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _sessions(ax: Any, source: Source) -> None:
    sessions = sorted(source.sessions, key=lambda s: -s.direct_usd)[:SESSIONS_DRAWN]
    places = range(len(sessions))
    ax.bar([x - 0.2 for x in places], [s.direct_usd for s in sessions], 0.4, label="direct")
    ax.bar([x + 0.2 for x in places], [s.billed_usd for s in sessions], 0.4, label="billed")
    ax.set_xticks(list(places), [s.session_id[:10] for s in sessions], rotation=60, fontsize=6)
    ax.set_ylabel("dollars")
    ax.set_title(f"per session ({len(sessions)} costing most direct)", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")


def _cumulative(ax: Any, source: Source) -> None:
    entries = source.entries
    calls = range(1, len(entries) + 1)
    ax.plot(calls, list(accumulate(e.direct_usd for e in entries)), label="direct (estimate)")
    ax.plot(calls, list(accumulate(e.billed_usd for e in entries)), label="billed")
    ax.set_xlabel("upstream call")
    ax.set_ylabel("dollars, added up")
    ax.set_title("every call, in order", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ConfigError(
            f"--plot needs matplotlib: pip install 'contextfold[plot]' ({exc})"
        ) from exc
    return plt
