"""Render replay results as a rich table: a row per strategy, ratios to ``full``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from contextfold.bench.replay import ReplayResult

__all__ = ["cost_split", "money", "progress_bar", "replay_table", "short_count"]

_Fmt = Callable[[float], str]

WIDE = 140
"""Terminal width from which every measure may get its own column (if the table fits)."""
LABEL_WIDTH = 10
"""The strategy column's width when labels fold as far as a wide table needs."""
WIDE_FOLDED = 190
"""The same when strategies folded with a model (the folder's columns join)."""

# key, header, format, show ratio to full, shown in the narrow (80-column) layout
COLUMNS: list[tuple[str, str, _Fmt, bool, bool]] = [
    ("trajectories", "traj.", lambda v: f"{v:,.0f}", False, False),
    ("skipped", "skipped", lambda v: f"{v:,.0f}", False, False),
    ("prompt_tokens", "prompt tokens", lambda v: short_count(v), True, True),
    ("peak_context_tokens_mean", "peak ctx", lambda v: short_count(v), True, False),
    ("cost_usd", "cost $", lambda v: money(v), True, True),
    ("kv_bytes_peak_mean", "KV at peak", lambda v: _bytes(v), True, False),
    ("prefix_cache_reuse", "reuse", lambda v: f"{v:.1%}", False, True),
    ("render_ms_median", "ms med", lambda v: f"{v:.3f}", False, False),
    ("render_ms_p99", "ms p99", lambda v: f"{v:.3f}", False, False),
    ("removed_tokens", "removed", lambda v: short_count(v), False, True),
    ("unrecoverable_tokens", "unrecov.", lambda v: short_count(v), False, True),
    ("fold_calls", "folds", lambda v: f"{v:,.0f}", False, False),
    ("fold_rejected", "rejected", lambda v: f"{v:,.0f}", False, False),
    ("fold_ms_median", "fold ms", lambda v: f"{v:,.0f}", False, False),
    ("fold_cost_usd", "fold $", lambda v: money(v), False, False),
    ("total_cost_usd", "total $", lambda v: money(v), True, False),
    ("restores", "restores", lambda v: f"{v:,.0f}", False, True),
    ("restore_cost_usd", "restore $", lambda v: money(v), False, False),
    ("reruns", "reruns", lambda v: f"{v:,.0f}", False, True),
    ("rerun_cost_usd", "rerun $", lambda v: money(v), False, False),
    ("args_needed", "args", lambda v: short_count(v), False, False),
    ("args_in_view", "in view", lambda v: f"{v:.1%}", False, False),
    ("args_restorable", "restor.", lambda v: f"{v:.1%}", False, False),
    ("args_lost", "lost", lambda v: f"{v:.1%}", False, False),
]
_FOLDING = {"cost_usd": False, "total_cost_usd": True}
"""When a strategy folded with a model, the narrow layout shows total cost (agent plus
folder) instead of the agent's alone."""


def replay_table(
    result: ReplayResult, *, title: str = "replay", width: int = 80, caption: bool = True
) -> Table:
    """One row per strategy, one column per measure, ratios to ``full`` where it ran.

    Every measure when the table fits ``width`` that way (from :data:`WIDE` columns on);
    else only the main measures (prompt tokens and cost with their ratios, prefix-cache
    reuse, removed and unrecoverable tokens; restore calls instead of removed tokens when a
    strategy restored; re-run calls when one re-ran), so the table fits 80 columns. Without
    ``caption``, no line explains the ratios (a table below another that did)."""
    summaries = {label: res.summary() for label, res in result.strategies.items()}
    folded = any(v["fold_calls"] for v in summaries.values())
    if width >= (WIDE_FOLDED if folded else WIDE):
        folding = _table(summaries, title, width, caption, wide=True, label_width=LABEL_WIDTH)
        if _natural_width(folding) <= width:  # rich folds the labels as far as it must
            return _table(summaries, title, width, caption, wide=True)
    return _table(summaries, title, width, caption, wide=False)


def _table(
    summaries: dict[str, dict[str, Any]],
    title: str,
    width: int,
    caption: bool,
    *,
    wide: bool,
    label_width: int | None = None,
) -> Table:
    base = summaries.get("full")
    folded = any(v["fold_calls"] for v in summaries.values())
    restored = any(v["restores"] for v in summaries.values())
    reran = any(v["reruns"] for v in summaries.values())
    columns = [c for c in COLUMNS if _shown(c, folded, restored, wide, reran)]
    table = Table(
        title=title,
        box=box.SIMPLE_HEAD,
        caption=_caption(base, width, wide) if caption else None,
        collapse_padding=True,
    )
    table.add_column("strategy", style="bold", overflow="fold", max_width=label_width)
    for _key, header, _fmt, _ratio, _narrow in columns:
        table.add_column(header, justify="right", no_wrap=True)
    bound = summaries.get("hindsight", {}).get("prompt_tokens")
    if bound:
        table.add_column("x bound", justify="right", no_wrap=True)
    for label, s in summaries.items():
        cells = [_cell(s[key], base, key, fmt, ratio) for key, _h, fmt, ratio, _n in columns]
        if bound:
            cells.append(f"{s['prompt_tokens'] / bound:.2f}x")
        table.add_row(escape(label), *cells)
    return table


def _natural_width(table: Table) -> int:
    """The columns ``table`` takes with no cell cut."""
    console = Console(width=10_000)
    return Measurement.get(console, console.options, table).maximum


def _shown(
    column: tuple[str, str, _Fmt, bool, bool],
    folded: bool,
    restored: bool,
    wide: bool,
    reran: bool = False,
) -> bool:
    """Folder columns only when a strategy folded; then total cost replaces the agent's cost
    in the narrow layout. Restore columns only when a strategy restored; then the narrow
    layout shows the restore calls instead of the removed tokens. Re-run columns only when
    a strategy re-ran a call."""
    key, narrow = column[0], column[4]
    if key.startswith(("fold_", "total_")) and not folded:
        return False
    if key.startswith("restore") and not restored:
        return False
    if key.startswith("rerun") and not reran:
        return False
    if key == "removed_tokens" and restored and not wide:
        return False  # the restore calls take its place
    return wide or (_FOLDING.get(key, narrow) if folded else narrow)


def _caption(base: dict[str, Any] | None, width: int, wide: bool) -> str | None:
    parts = ["Nx: ratio to full"] if base is not None else []
    if not wide:
        parts.append("a wider terminal shows every measure")
    lines = ["; ".join(parts)] if parts else []
    if base is not None and base["cost_usd"]:
        lines.append(cost_split(base))
    return "\n".join(lines) or None


SPLIT_NAMES = {
    "cost_output_usd": "output",
    "cost_read_usd": "cache reads",
    "cost_write_usd": "cache writes",
    "cost_input_usd": "uncached input",
}
"""How :func:`cost_split` names each part of the cost."""


def cost_split(summary: dict[str, Any], label: str = "full") -> str:
    """``label``'s cost as shares of what it paid for (full's output share is what no context
    strategy moves)."""
    total = summary["cost_usd"]
    shares = ", ".join(f"{name} {summary[key] / total:.1%}" for key, name in SPLIT_NAMES.items())
    return f"{label}'s cost: {shares}"


def _cell(value: Any, base: dict[str, Any] | None, key: str, fmt: _Fmt, ratio: bool) -> str:
    text = fmt(value)
    if ratio and base is not None and base[key]:
        text += f" [dim]{value / base[key]:.2f}x[/dim]"
    return text


def money(value: float) -> str:
    """Dollars with about four significant digits: 1,234, 12.34, 0.0512."""
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.2f}" if abs(value) >= 1 else f"{value:.4f}"


def short_count(value: float) -> str:
    """A count in at most 6 characters: 987, 31.7k, 1.23M, 4.56G."""
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= size:
            digits = 2 if abs(value) < 10 * size else 1 if abs(value) < 100 * size else 0
            return f"{value / size:.{digits}f}{unit}"
    return f"{value:,.0f}"


def _bytes(value: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024:
            return f"{value:,.1f} {unit}"
        value /= 1024
    return f"{value:,.1f} TiB"


def progress_bar(console: Console) -> Progress:
    """The progress bar every batch command shows (on stderr, gone when done); none where
    stderr is no terminal (a log would only get the blank line it leaves)."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    )
