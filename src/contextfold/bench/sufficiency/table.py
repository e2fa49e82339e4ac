"""The sufficiency benchmark's table: a row per setting, every measure from 140 columns on
(more when a strategy folded), else the few that fit 80 columns."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.markup import escape
from rich.table import Table

from contextfold.bench.report import WIDE, WIDE_FOLDED

if TYPE_CHECKING:
    from contextfold.bench.sufficiency.runner import RunResult

__all__ = ["FOLDED_WIDE", "NARROW", "sufficiency_table"]

FOLDED_WIDE = WIDE_FOLDED + 10
"""Width from which the table shows every measure when strategies folded (and the width of
logs): the replay table's, plus the lost-value columns."""
NARROW = ("strategy", "budget", "mode", "reward", "redundant", "prompt tok", "total $")
"""The columns that fit 80 columns; a terminal of :data:`~contextfold.bench.report.WIDE`
columns or more shows them all."""


def sufficiency_table(
    rows: list[dict[str, object]], results: list[RunResult], *, title: str, width: int = 80
) -> Table:
    """A row per setting; below :data:`~contextfold.bench.report.WIDE` columns (more when a
    strategy folded with a model) only the :data:`NARROW` columns, so it fits ``width``."""
    wide = _wide_table(rows, results, title=title)
    folded = any(float(str(row.get("fold_calls", 0))) for row in rows)
    if width >= (FOLDED_WIDE if folded else WIDE):
        return wide
    keep = [i for i, column in enumerate(wide.columns) if column.header in NARROW]
    table = Table(title=title, box=box.SIMPLE_HEAD, collapse_padding=True)
    table.caption = f"a terminal of {FOLDED_WIDE if folded else WIDE}+ columns shows every measure"
    for i in keep:
        header = str(wide.columns[i].header)
        if header == "strategy":
            table.add_column(header, overflow="fold")
        else:
            table.add_column(header, justify="right", no_wrap=True)
    cells = [list(wide.columns[i].cells) for i in keep]
    for row in zip(*cells, strict=True):
        table.add_row(*row)
    return table


def _wide_table(rows: list[dict[str, object]], results: list[RunResult], *, title: str) -> Table:
    table = Table(title=title, box=box.SIMPLE_HEAD, collapse_padding=True)
    heads = ["strategy", "budget", "mode", "tasks", "reward", "redundant"]
    heads += ["lost\nuser", "lost\ntool", "re-\nfetch", "steps"]
    heads += ["prompt tok", "peak ctx", "forced", "cost $", "fold $", "total $", "rejected"]
    heads += ["over budget", "skipped"]
    for head in heads:
        table.add_column(head, justify="left" if head == "strategy" else "right")
    for row in rows:
        runs = [
            r
            for r in results
            if (r.setting.strategy, r.setting.budget, r.setting.noisy)
            == (row["strategy"], row["budget"], row["noisy"])
        ]
        table.add_row(
            escape(str(row["strategy"])),
            str(row["budget"] or "-"),
            "noisy" if row["noisy"] else "normal",
            str(row["tasks"]),
            f"{row['reward_mean']:.3f}",
            f"{row['redundant_calls']:.2f}",
            f"{row['lost_user_values']:.2f}",
            f"{row['lost_tool_values']:.2f}",
            f"{row['refetched_values']:.2f}",
            f"{row['steps']:.1f}",
            f"{row['prompt_tokens']:,.0f}",
            f"{row['peak_context_tokens']:,.0f}",
            f"{row['forced_compactions']:.2f}",
            f"{row['cost_usd']:.4f}",
            f"{row['fold_cost_usd']:.4f}",
            f"{row['total_cost_usd']:.4f}",
            f"{row['fold_rejected']:.2f}",
            str(sum(r.error is not None for r in runs)),
            str(sum(len(r.skipped) for r in runs)),
        )
    return table
