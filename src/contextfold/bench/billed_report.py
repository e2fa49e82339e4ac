"""The table replay prints for sessions whose logs record their bill: the bill beside the
simulated ``full``, measure by measure, with the per-session spread of the error."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.markup import escape
from rich.table import Table

from contextfold.bench.billed import MEASURES, billed_json
from contextfold.bench.output import plural
from contextfold.bench.replay import ReplayResult
from contextfold.bench.report import money, short_count

__all__ = ["billed_table"]


def billed_table(result: ReplayResult) -> Table:
    """The bills of ``result`` in total, beside ``full``'s simulated figures and the error
    (simulated / billed - 1) where ``full`` was replayed; fits 80 columns."""
    data = billed_json(result)
    compared = "full" in data and data.get("compared")
    sessions = plural(int(data.get("compared") or data["trajectories"]), "session", "sessions")
    table = Table(
        title=f"full as billed: {sessions} (each at its model's prices)",
        box=box.SIMPLE_HEAD,
        collapse_padding=True,
        caption=_caption(data, bool(compared)),
    )
    table.add_column("measure")
    table.add_column("billed", justify="right")
    if compared:
        table.add_column("full (sim.)", justify="right")
        table.add_column("error", justify="right")
        table.add_column(escape("per session [range]"), justify="right")
    for key, name in MEASURES:
        cells = [_fmt(key, data["billed"][key])]
        if compared:
            spread = data["spread"][key]
            cells += [_fmt(key, data["full"][key]), _pct(data["error"][key]), _spread(spread)]
        table.add_row(name, *cells)
    return table


def _caption(data: dict[str, Any], compared: bool) -> str:
    final, calls = data["final_outputs"], data["calls"]
    lines = [
        "error: simulated / billed - 1; per session: its median and range",
        f"output: the log's final count for {final:,} of {calls:,} calls, the others\n"
        "counted by the calibrated counter (the same for every strategy)",
    ]
    if not compared:
        lines.append("replay with -s full to set the simulator beside the bill")
    return "\n".join(lines)


def _fmt(key: str, value: float) -> str:
    return money(value) if key == "cost_usd" else short_count(value)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1%}"


def _spread(spread: dict[str, float] | None) -> str:
    if spread is None:
        return "-"
    return escape(f"{_pct(spread['median'])} [{_pct(spread['min'])}, {_pct(spread['max'])}]")
