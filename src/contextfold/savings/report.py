"""``contextfold savings``'s report: each session's bill beside its direct estimate and the
total, as a rich table that fits 80 columns (:func:`savings_table`) and as JSON
(:func:`savings_json`)."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.markup import escape
from rich.table import Table

from contextfold.bench.output import plural
from contextfold.bench.report import money, short_count
from contextfold.savings.sources import SessionSavings, Source

__all__ = ["ROWS_SHOWN", "savings_json", "savings_table", "total"]

ROWS_SHOWN = 20
"""Sessions the table lists at most (those that cost most direct); the JSON has them all."""
_ID_WIDTH = 14


def total(sessions: list[SessionSavings], label: str = "total") -> SessionSavings:
    """Every session summed (its arm: the first session's)."""
    out = SessionSavings(label, sessions[0].arm if sessions else "treated")
    for s in sessions:
        out.calls += s.calls
        out.billed_usd += s.billed_usd
        out.direct_usd += s.direct_usd
        out.billed_tokens += s.billed_tokens
        out.direct_tokens += s.direct_tokens
        out.restores += s.restores
        out.restore_usd += s.restore_usd
        out.errors += s.errors
        out.early_stop |= s.early_stop
        if s.logged_usd is not None:
            out.logged_usd = (out.logged_usd or 0.0) + s.logged_usd
    return out


def savings_json(source: Source) -> dict[str, Any]:
    """Every session and the total (and each arm's, when there is a control group)."""
    out: dict[str, Any] = {"source": source.name, "kind": source.kind}
    if source.detail:
        out["strategy"] = source.detail
    out["sessions"] = [s.to_json() for s in source.sessions]
    out["total"] = total(source.sessions).to_json()
    arms = {s.arm for s in source.sessions}
    if len(arms) > 1:
        out["arms"] = {
            arm: total([s for s in source.sessions if s.arm == arm], arm).to_json()
            for arm in sorted(arms)
        }
    return out


def savings_table(source: Source) -> Table:
    """A row per session (at most :data:`ROWS_SHOWN`, those that cost most direct), then the
    total; with a control group, the control sessions marked ``*`` and each arm's total."""
    sessions = sorted(source.sessions, key=lambda s: -s.direct_usd)
    arms = len({s.arm for s in sessions}) > 1
    table = Table(
        title=_title(source),
        box=box.SIMPLE_HEAD,
        collapse_padding=True,
        pad_edge=False,
        show_footer=True,
        caption=_caption(source, len(sessions), arms),
    )
    table.add_column("session", footer="total", max_width=_ID_WIDTH, no_wrap=True)
    for header, value in _columns(total(sessions)):
        table.add_column(header, justify="right", no_wrap=True, footer=value)
    for s in sessions[:ROWS_SHOWN]:
        mark = "*" if arms and s.arm == "control" else ""
        table.add_row(escape(_short(s.session_id, mark)), *(v for _, v in _columns(s)))
    if arms:
        table.add_section()
        for arm in ("treated", "control"):
            mine = total([s for s in sessions if s.arm == arm], arm)
            table.add_row(arm, *(v for _, v in _columns(mine)))
    return table


def _columns(s: SessionSavings) -> list[tuple[str, str]]:
    share = f"{s.saved_usd / s.direct_usd:.0%}" if s.direct_usd else "-"
    return [
        ("calls", f"{s.calls:,}"),
        ("billed $", money(s.billed_usd)),
        ("direct $", money(s.direct_usd)),
        ("saved $", money(s.saved_usd)),
        ("%", share),
        ("tokens", short_count(s.saved_tokens)),
        ("rest.", f"{s.restores:,}"),
        ("rest. $", money(s.restore_usd)),
    ]


def _short(session_id: str, mark: str) -> str:
    room = _ID_WIDTH - len(mark)
    cut = session_id if len(session_id) <= room else session_id[: room - 1] + "…"
    return cut + mark


def _title(source: Source) -> str:
    if source.kind == "replay":
        return f"savings: {source.detail} against full, replayed ({source.name})"
    return f"savings: the ledger of {source.name}"


def _caption(source: Source, sessions: int, arms: bool) -> str:
    lines = ["*: the control group's (served unfolded)"] if arms else []
    if sessions > ROWS_SHOWN:
        lines.append(
            f"the {ROWS_SHOWN} sessions that cost most direct of {sessions} (all in --json)"
        )
    if source.kind == "store":
        lines.append(
            "billed: the upstream's reported usage at the model's prices; direct: the same "
            "conversations unfolded, estimated at each session's token scale; saved: direct "
            "less billed; tokens: prompt tokens saved; rest.: restore rounds the proxy "
            "answered itself, and what they cost"
        )
    else:
        lines.append(
            f"billed: {source.detail}'s simulated cost; direct: full's; saved: direct less "
            "billed; tokens: prompt tokens saved; rest.: calls of the strategy's restore "
            "tool, and what they cost"
        )
        lines.extend(_logged(source.sessions))
    return "\n".join(lines)


def _logged(sessions: list[SessionSavings]) -> list[str]:
    """For sessions whose logs record their bill: what they cost as billed, beside full's
    simulated cost of the same sessions."""
    known = [s for s in sessions if s.logged_usd is not None]
    if not known:
        return []
    billed = sum(s.logged_usd or 0.0 for s in known)
    direct = sum(s.direct_usd for s in known)
    error = f" ({direct / billed - 1:+.1%})" if billed else ""
    return [
        f"as billed in the logs: {plural(len(known), 'session')} cost ${money(billed)}; "
        f"full simulated ${money(direct)}{error}"
    ]
