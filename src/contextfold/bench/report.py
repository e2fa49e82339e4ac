"""Render replay results as a rich table: strategies side by side, ratios to ``full``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from contextfold.bench.replay import ReplayResult

__all__ = ["progress_bar", "replay_table"]

_Fmt = Callable[[float], str]

ROWS: list[tuple[str, str, _Fmt, bool]] = [
    # key, label, format, show ratio to full
    ("trajectories", "trajectories", lambda v: f"{v:,.0f}", False),
    ("skipped", "skipped", lambda v: f"{v:,.0f}", False),
    ("prompt_tokens", "prompt tokens (cumulative)", lambda v: f"{v:,.0f}", True),
    ("peak_context_tokens_mean", "peak context (mean)", lambda v: f"{v:,.0f}", True),
    ("cost_usd", "cost USD", lambda v: f"{v:,.2f}", True),
    ("kv_bytes_peak_mean", "KV cache at peak (mean)", lambda v: _bytes(v), True),
    ("prefix_cache_reuse", "prefix-cache reuse", lambda v: f"{v:.1%}", False),
    ("render_ms_median", "render ms (median)", lambda v: f"{v:.3f}", False),
    ("render_ms_p99", "render ms (p99)", lambda v: f"{v:.3f}", False),
    ("removed_tokens", "removed tokens", lambda v: f"{v:,.0f}", False),
    ("unrecoverable_tokens", "unrecoverable tokens", lambda v: f"{v:,.0f}", False),
    ("args_needed", "args needed (from context)", lambda v: f"{v:,.0f}", False),
    ("args_in_view", "args in view", lambda v: f"{v:.1%}", False),
    ("args_restorable", "args restorable", lambda v: f"{v:.1%}", False),
    ("args_lost", "args lost", lambda v: f"{v:.1%}", False),
]


def replay_table(result: ReplayResult, *, title: str = "replay") -> Table:
    summaries = {label: res.summary() for label, res in result.strategies.items()}
    base = summaries.get("full")
    table = Table(title=title)
    table.add_column("measure", style="bold")
    for label in summaries:
        table.add_column(label, justify="right")
    for key, name, fmt, ratio in ROWS:
        table.add_row(name, *(_cell(s[key], base, key, fmt, ratio) for s in summaries.values()))
    bound = summaries.get("hindsight", {}).get("prompt_tokens")
    if bound:
        multiples = (f"{s['prompt_tokens'] / bound:.2f}x" for s in summaries.values())
        table.add_row("tokens / hindsight bound", *multiples)
    return table


def _cell(value: Any, base: dict[str, Any] | None, key: str, fmt: _Fmt, ratio: bool) -> str:
    text = fmt(value)
    if ratio and base is not None and base[key]:
        text += f" [dim]({value / base[key]:.2f}x)[/dim]"
    return text


def _bytes(value: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024:
            return f"{value:,.1f} {unit}"
        value /= 1024
    return f"{value:,.1f} TiB"


def progress_bar(console: Console) -> Progress:
    """The progress bar every batch command shows (on stderr, gone when done)."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
