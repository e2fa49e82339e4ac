"""What ``contextfold savings`` reads: serve's (or wrap's) store, whose ledger holds every
upstream call as billed (:func:`read_ledger`), or a replay's ``--json`` output, whose strategies
were metered on recorded sessions (:func:`read_replay`); both as :class:`SessionSavings` rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contextfold.core.errors import ConfigError, ContextFoldError
from contextfold.core.ledger import Arm, LedgerEntry
from contextfold.core.store import display_store, is_postgres_url, open_store

__all__ = ["FINAL_STOP", "SessionSavings", "Source", "by_session", "load_source", "read_ledger"]

FINAL_STOP = "stop"
"""How a call that ended with a final answer ended (not a length limit, a filter, a tool call
the client never answered, or an error)."""
_SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass(slots=True)
class SessionSavings:
    """One session's bill beside its direct estimate."""

    session_id: str
    arm: Arm = "treated"
    unit: str = ""
    model: str = ""
    calls: int = 0
    """The client's calls (restore rounds apart)."""
    billed_usd: float = 0.0
    direct_usd: float = 0.0
    billed_tokens: int = 0
    """Prompt tokens sent upstream, billed (every call, restore rounds included)."""
    direct_tokens: int = 0
    """Prompt tokens the client's calls would have sent direct (the estimate)."""
    restores: int = 0
    restore_usd: float = 0.0
    errors: int = 0
    early_stop: bool = False
    """Whether its last call ended without a final answer (:data:`FINAL_STOP`) or failed."""
    logged_usd: float | None = None
    """From a replay of logs that record their bill: what the session cost as billed (full,
    at its model's prices); None otherwise."""

    @property
    def saved_usd(self) -> float:
        return self.direct_usd - self.billed_usd

    @property
    def saved_tokens(self) -> int:
        return self.direct_tokens - self.billed_tokens

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session_id,
            "arm": self.arm,
            "unit": self.unit,
            "model": self.model,
            "calls": self.calls,
            "billed_usd": self.billed_usd,
            "direct_usd": self.direct_usd,
            "saved_usd": self.saved_usd,
            "billed_prompt_tokens": self.billed_tokens,
            "direct_prompt_tokens": self.direct_tokens,
            "saved_prompt_tokens": self.saved_tokens,
            "restores": self.restores,
            "restore_usd": self.restore_usd,
            "errors": self.errors,
            "early_stop": self.early_stop,
            "logged_usd": self.logged_usd,
        }


@dataclass(slots=True)
class Source:
    """What was read: each session's savings, and the ledger's entries (none from a replay)."""

    name: str
    kind: str
    """``store`` or ``replay``."""
    sessions: list[SessionSavings]
    entries: list[LedgerEntry] = field(default_factory=list)
    detail: str = ""
    """For a replay: which strategy stands for the proxy, against ``full``."""


def load_source(target: str, *, strategy: str | None = None) -> Source:
    """Read ``target``: a ``postgresql://`` URL or an SQLite file is a store; a JSON file is a
    replay's output (``strategy``: the one to set against ``full``; by default the only one
    besides it). A ConfigError saying what was expected otherwise."""
    if is_postgres_url(target):
        return read_ledger(target)
    path = Path(target)
    if path.is_dir():
        raise ConfigError(
            f"{target} is a folder: give a sessions.db, a postgresql:// URL or a JSON file"
        )
    if not path.is_file():
        raise ConfigError(
            f"{target} does not exist: give a sessions.db, a postgresql:// URL or a JSON file"
        )
    with path.open("rb") as handle:
        head = handle.read(len(_SQLITE_MAGIC))
    if head == _SQLITE_MAGIC:
        return read_ledger(target)
    return read_replay(path, strategy)


def read_ledger(target: str) -> Source:
    """A store's ledger, as sessions (a StoreError, a ContextFoldError, names what is wrong)."""
    name = display_store(target)
    try:
        with open_store(target) as store:
            entries = store.load_ledger()
    except ContextFoldError as exc:
        raise ConfigError(f"cannot read the ledger of {name}: {exc}") from exc
    return Source(name, "store", by_session(entries), entries)


def by_session(entries: Iterable[LedgerEntry]) -> list[SessionSavings]:
    """The ledger's entries summed by session, in the order the sessions began."""
    out: dict[str, SessionSavings] = {}
    for e in entries:
        s = out.setdefault(e.session_id, SessionSavings(e.session_id, e.arm, e.unit, e.model))
        s.calls += not e.restore
        s.billed_usd += e.billed_usd
        s.direct_usd += e.direct_usd
        s.billed_tokens += e.billed.prompt_tokens
        s.direct_tokens += e.direct.prompt_tokens
        s.restores += e.restore
        s.restore_usd += e.billed_usd if e.restore else 0.0
        s.errors += e.error is not None
        s.early_stop = e.error is not None or e.stop != FINAL_STOP
    return list(out.values())


def read_replay(path: Path, strategy: str | None) -> Source:
    """A replay's ``--json`` output: each trajectory's ``strategy`` row as billed, its
    ``full`` row as direct."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(
            f"{path} is neither a store (SQLite) nor JSON ({exc}): give a sessions.db, a "
            "postgresql:// URL or the output of contextfold replay --json"
        ) from exc
    labels = (
        [k for k, v in data.items() if isinstance(v, dict) and "rows" in v and k != "billed"]
        if isinstance(data, dict)
        else []
    )
    if "full" not in labels:
        raise ConfigError(
            f"{path} is not the output of contextfold replay --json with full among its "
            "strategies: replay with -s full -s STRATEGY --json FILE"
        )
    chosen = _chosen(path, labels, strategy)
    sessions = _replayed(data[chosen]["rows"], data["full"]["rows"], _bills(data))
    return Source(str(path), "replay", sessions, detail=chosen)


def _bills(data: Mapping[str, Any]) -> dict[tuple[Any, Any], float]:
    """Each replayed session's cost as its log billed it (``billed`` of a replay's JSON)."""
    billed = data.get("billed")
    rows = billed.get("sessions") if isinstance(billed, Mapping) else None
    out = {}
    for row in rows if isinstance(rows, list) else []:
        cost = row.get("billed", {}).get("cost_usd") if isinstance(row, Mapping) else None
        if isinstance(cost, int | float):
            out[(row.get("source"), row.get("id"))] = float(cost)
    return out


def _chosen(path: Path, labels: list[str], strategy: str | None) -> str:
    others = [label for label in labels if label != "full"]
    if strategy is not None:
        if strategy not in others:
            raise ConfigError(
                f"{path} has no strategy {strategy!r}: it has {', '.join(others) or 'only full'}"
            )
        return strategy
    if len(others) != 1:
        listed = ", ".join(others) or "none"
        raise ConfigError(
            f"{path}: choose the strategy to set against full with --strategy ({listed})"
        )
    return others[0]


def _replayed(
    rows: list[Mapping[str, Any]],
    full: list[Mapping[str, Any]],
    bills: Mapping[tuple[Any, Any], float],
) -> list[SessionSavings]:
    direct = {(r.get("source"), r.get("id")): r for r in full}
    out = []
    for row in rows:
        base = direct.get((row.get("source"), row.get("id")))
        if base is None:
            continue
        out.append(
            SessionSavings(
                session_id=str(row.get("id")),
                unit=str(row.get("id")),
                calls=int(row.get("calls", 0)),
                billed_usd=float(row.get("total_cost_usd", 0.0)),
                direct_usd=float(base.get("total_cost_usd", 0.0)),
                billed_tokens=int(row.get("prompt_tokens", 0)),
                direct_tokens=int(base.get("prompt_tokens", 0)),
                restores=int(row.get("restores", 0)),
                restore_usd=float(row.get("restore_cost_usd", 0.0)),
                logged_usd=bills.get((row.get("source"), row.get("id"))),
            )
        )
    return out
