"""contextfold's own store read back as trajectories: a ``sessions.db`` that ``contextfold serve``
wrote in the test (and the same sessions in PostgreSQL, given as a URL), every stored session
with its steps as the history holds them and each call's billed usage from serve's ledger."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from contextfold.cli import app
from contextfold.core.billing import BilledUsage
from contextfold.core.errors import ImportFormatError
from contextfold.core.messages import AssistantMessage, ToolMessage, UserMessage
from contextfold.core.store import open_store
from contextfold.importers import Trajectory, iter_trajectories
from contextfold.testing.postgres import TempPostgres
from contextfold.testing.upstreams._cache import Bill
from contextfold.testing.upstreams.anthropic import ScriptedAnthropic, tool_use
from tests._protocols import anthropic_client, proxy_for

SYSTEM = "You read files before you answer. " * 60


def _bill(bill: Bill) -> BilledUsage:
    c = bill.cached
    return BilledUsage(c.uncached, c.read, c.written - c.written_1h, c.written_1h, bill.output)


def _serve(store: str | Path) -> list[Bill]:
    """One conversation through serve into ``store``: a call of a tool, its result, an answer."""
    replies = [[tool_use("read", {"path": "README"}, id="t1")], "It describes the tool."]
    with (
        ScriptedAnthropic(replies, min_cache_tokens=0) as up,
        proxy_for(up, "anthropic", store) as proxy,
    ):
        client = anthropic_client(proxy)
        messages: list[dict[str, object]] = [{"role": "user", "content": "What is in README?"}]
        first = client.messages.create(model="claude-sonnet-4-5", max_tokens=100, system=SYSTEM,
                                       messages=messages)  # type: ignore[arg-type]  # fmt: skip
        messages.append({"role": "assistant", "content": [b.model_dump() for b in first.content]})
        result = {"type": "tool_result", "tool_use_id": "t1", "content": "A tool."}
        messages.append({"role": "user", "content": [result]})
        client.messages.create(model="claude-sonnet-4-5", max_tokens=100, system=SYSTEM,
                               messages=messages)  # type: ignore[arg-type]  # fmt: skip
        return list(up.bills)


def _check(items: list[Trajectory | ImportFormatError], bills: list[Bill]) -> Trajectory:
    [t] = items
    assert isinstance(t, Trajectory), t
    assert t.system is not None and t.system.content == SYSTEM
    [ask], [call, result] = t.steps
    assert isinstance(ask, UserMessage) and ask.content == "What is in README?"
    assert isinstance(call, AssistantMessage) and call.tool_calls[0].name == "read"
    assert isinstance(result, ToolMessage) and result.content == "A tool."
    assert t.meta["format"] == "store" and t.meta["arm"] == "treated"
    # the second call's reply is not a step yet (the client has not sent it back): one call
    assert [c.usage for c in t.calls] == [_bill(bills[0])]
    assert t.model == "claude-sonnet-4-5"
    return t


def test_a_store_serve_wrote_reads_as_its_sessions(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    bills = _serve(db)
    _check(list(iter_trajectories([db])), bills)
    _check(list(iter_trajectories([tmp_path])), bills)  # found in a folder too
    with open_store(db) as store:
        assert len(store.list_sessions()) == 1


def test_replay_reads_a_store(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    _serve(db)
    out = tmp_path / "r.json"
    result = CliRunner().invoke(app, ["replay", str(db), "-s", "full", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["full"]["trajectories"] == 1


def test_an_sqlite_file_of_another_program_is_named_or_skipped(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    conn.close()
    [error] = list(iter_trajectories([other]))
    assert isinstance(error, ImportFormatError) and "not a contextfold store" in error.problem
    assert list(iter_trajectories([tmp_path])) == []  # in a folder: not ours, skipped


@pytest.mark.postgres
def test_a_postgresql_store_is_read_from_its_url(postgres: TempPostgres) -> None:
    url = postgres.new_database()
    bills = _serve(url)
    _check(list(iter_trajectories([url])), bills)
    result = CliRunner().invoke(app, ["replay", url, "-s", "full"])
    assert result.exit_code == 0, result.output
    assert "1 trajectory" in result.output
