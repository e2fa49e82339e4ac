"""Typed restore paths: an elision is recoverable only if the agent is offered its tool."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from contextfold.core.errors import ViewError
from contextfold.core.folds import FoldCall, FoldRecord
from contextfold.core.history import History
from contextfold.core.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.core.pipeline import render_checked
from contextfold.core.store import MemoryStore, SQLiteStore
from contextfold.core.view import Elision, RestorePath, View, check_view
from contextfold.strategies.full import FullStrategy
from contextfold.strategies.registry import build_strategy


def session(n: int = 14) -> History:
    history = History(SystemMessage("sys"))
    history.append(UserMessage("task"))
    for i in range(1, n):
        call = ToolCall(f"c{i}", "read", json.dumps({"path": "same.py"}))
        output = f"out {i}\n" + "a line of the file\n" * 20
        history.append(AssistantMessage(None, tool_calls=(call,)), ToolMessage(output, f"c{i}"))
    return history


def test_restore_path_is_typed_and_prints_as_a_call() -> None:
    path = RestorePath.step(12)
    assert (path.tool, path.as_dict(), str(path)) == ("restore", {"step": 12}, "restore(step=12)")
    assert str(RestorePath("recall", (("query", "x y"),))) == "recall(query='x y')"


class _Lying(FullStrategy):
    """Claims its stubs can be restored, and offers no tool."""

    def render(self, history: History, budget: int | None) -> View:
        view = super().render(history, budget)
        lie = Elision((1,), "mask", 10, RestorePath.step(1))
        return View(view.messages, view.tokens, view.provenance, (lie,), strategy="lying")


def test_the_view_check_refuses_a_restore_tool_nobody_offers() -> None:
    history = session(3)
    with pytest.raises(ViewError, match=r"restore tool\(s\) \['restore'\].*offers: none"):
        render_checked(_Lying(), history, None)
    view = _Lying().render(history, None)
    check_view(view, history, strategy="lying", tools={"restore"})  # offered: fine


@pytest.mark.parametrize(
    "spec",
    [
        "mask keep=2 reversible=true",
        "supersede",
        {"type": "chain", "strategies": ["supersede", "mask keep=2 reversible=true"]},
        {"type": "chain", "strategies": ["supersede", "refold"]},
    ],
)
def test_reversible_stubs_come_with_the_restore_tool(spec: object) -> None:
    history = session()
    strategy = build_strategy(spec)  # type: ignore[arg-type]
    view = render_checked(strategy, history, None)
    assert view.removed_tokens > 0 and view.unrecoverable_tokens == 0
    names = [t["function"]["name"] for t in strategy.tools()]  # type: ignore[attr-defined]
    assert names == ["restore"]
    answer = strategy.call_tool("restore", {"step": 2}, history)  # type: ignore[attr-defined]
    assert answer == history[2].results[0].content


def test_irreversible_mask_offers_nothing_and_counts_its_stubs_as_lost() -> None:
    history = session()
    strategy = build_strategy("mask keep=2")
    view = render_checked(strategy, history, None)
    assert strategy.tools() == []  # type: ignore[attr-defined]
    assert view.unrecoverable_tokens == view.removed_tokens > 0


RECORD = FoldRecord(
    "compact",
    "compact",
    0,
    2,
    3,
    True,
    {"summary": "s"},
    None,
    (FoldCall(100, 40, 20, 12.5),),
)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_fold_records_round_trip_through_both_stores(kind: str, tmp_path: Path) -> None:
    store = MemoryStore() if kind == "memory" else SQLiteStore(tmp_path / "s.db")
    history = History(SystemMessage("sys"), store=store, session_id="s")
    history.append(UserMessage("a"))
    history.append(UserMessage("b"))
    history.record_fold(RECORD)
    rejected = FoldRecord("compact", "compact", 0, 2, 3, False, {"raw": "x"}, "bad", ())
    history.record_fold(rejected)
    assert History.open(store, "s").folds == [RECORD, rejected]


def test_a_fold_record_outside_the_history_is_refused(tmp_path: Path) -> None:
    history = History(SystemMessage("sys"), store=SQLiteStore(tmp_path / "s.db"), session_id="s")
    history.append(UserMessage("a"))
    with pytest.raises(Exception, match="outside the history"):
        history.record_fold(RECORD)
    assert history.folds == []


def test_a_version_1_store_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    store = SQLiteStore(path)
    History(SystemMessage("sys"), store=store, session_id="s").append(UserMessage("hi"))
    store.close()
    with sqlite3.connect(path) as conn:  # make it look like a store from before fold logs
        conn.execute("DROP TABLE folds")
        conn.execute("DROP TABLE replies")  # kept replies came later still
        conn.execute("DROP TABLE ledger")  # and serve's ledger after them
        conn.execute("PRAGMA user_version = 1")
    reopened = History.open(SQLiteStore(path), "s")
    assert [s.message.content for s in reopened] == ["hi"]
    reopened.append(UserMessage("again"))
    reopened.record_fold(RECORD)
    assert History.open(SQLiteStore(path), "s").folds == [RECORD]
