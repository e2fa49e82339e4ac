"""``serve --control`` and ``contextfold savings``: a stable control group served unfolded,
its arm kept in the store; the ledger per session and in total, in 80 columns, as JSON and as
a plot, from a store or a replay's JSON; and ``--compare``, end to end through the proxy with
scripted agents: arms that differ in a known way are told apart, identical arms are not."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from contextfold.cli import app
from contextfold.core.store import open_store
from contextfold.savings import load_source
from contextfold.savings.compare import compare
from contextfold.serve.ledger.arms import draw
from contextfold.testing.upstreams.chat import ScriptedServer
from tests._savings import needed, run_agents
from tests._serve import client, serving

runner = CliRunner()
SAMPLE = Path(__file__).parent.parent / "src" / "contextfold" / "data" / "sample__stats-1.traj.json"


@pytest.fixture(scope="module")
def differing(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store whose treated agents (refold offers them ``restore``) read 3 more files."""
    db = tmp_path_factory.mktemp("differing") / "s.db"
    run_agents(db, sessions=30, strategy="refold", extra=3, control=0.5)
    return db


def test_the_arm_is_a_stable_hash_of_the_unit_in_the_share_asked() -> None:
    drawn = [draw(f"session-{i}", 0.1) for i in range(20_000)]
    assert drawn == [draw(f"session-{i}", 0.1) for i in range(20_000)]  # the same every time
    assert 0.09 < drawn.count("control") / len(drawn) < 0.11
    assert {draw("x", 0.0), draw("y", 0.0)} == {"treated"}
    assert {draw("x", 1.0), draw("y", 1.0)} == {"control"}


def test_arms_differing_in_a_known_way_are_told_apart(differing: Path) -> None:
    with open_store(differing) as store:
        entries = store.load_ledger()
        sessions = {sid: store.load_session(sid).meta["serve"] for sid in store.list_sessions()}
    assert {m["arm"] for m in sessions.values()} == {"treated", "control"}  # kept in the store
    for entry in entries:
        assert entry.arm == sessions[entry.session_id]["arm"] and entry.unit == entry.session_id
    calls = {sid: sum(e.session_id == sid for e in entries) for sid in sessions}
    for sid, meta in sessions.items():  # the control group was served unfolded: no restore
        task = int(sid.removeprefix("run-"))
        assert calls[sid] == needed(task) + 1 + (3 if meta["arm"] == "treated" else 0)
    rows = {r.name: r for r in compare(entries, margin=0.25, seed=7)}
    assert rows["calls per session"].verdict == "different"
    assert rows["calls per session"].low > 0.2  # about 3 of 6 calls more
    assert rows["early stops (share)"].verdict == "equivalent"  # none in either arm


def test_identical_arms_are_not_told_apart(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    run_agents(db, sessions=30, strategy="full", extra=3, control=0.5)  # full: no restore tool
    with open_store(db) as store:
        entries = store.load_ledger()
    for seed in (0, 1, 2):
        rows = {r.name: r for r in compare(entries, margin=0.25, seed=seed)}
        assert rows["calls per session"].verdict == "equivalent"
        assert rows["calls per session"].low < 0 < rows["calls per session"].high
        assert rows["cost per call"].verdict == "unclear"


def test_a_restarted_proxy_keeps_each_sessions_arm_and_a_branch_its_parents(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    first = [{"role": "user", "content": "Task 1: begin."}]
    with ScriptedServer() as up:
        for control in (1.0, 0.0):  # all control at first; after the restart, none would be
            with serving(up, db, control=control) as proxy:
                sdk = client(proxy)
                reply = sdk.chat.completions.create(model="m", messages=first)  # type: ignore[arg-type]
                more = [*first, reply.choices[0].message.model_dump(exclude_none=True)]
                sdk.chat.completions.create(
                    model="m",
                    messages=[*more, {"role": "user", "content": f"again {control}"}],  # type: ignore[list-item]
                )
    with open_store(db) as store:
        metas = [store.load_session(sid).meta["serve"] for sid in store.list_sessions()]
        entries = store.load_ledger()
    assert {m["arm"] for m in metas} == {"control"}  # the branches too
    assert any(m["parent"] for m in metas) and len(metas) > 1
    roots = [sid for sid in store_ids(db) if not _meta(db, sid)["parent"]]
    assert {m["unit"] for m in metas} == set(roots)  # a branch is its parent's unit
    assert [e.arm for e in entries] == ["control"] * 4
    tools = [body.get("tools") for _, body in up.requests]
    assert tools == [None] * 4  # served as full: the strategy's restore never offered


def _meta(db: Path, sid: str) -> dict[str, Any]:
    with open_store(db) as store:
        return dict(store.load_session(sid).meta["serve"])


def store_ids(db: Path) -> list[str]:
    with open_store(db) as store:
        return store.list_sessions()


def _lines_fit(output: str, width: int = 80) -> None:
    """Every line of the tables fits (a ``wrote PATH`` line is as long as its path)."""
    lines = [line for line in output.splitlines() if not line.startswith("wrote ")]
    assert [line for line in lines if len(line) > width] == []


def test_savings_shows_the_ledger_in_80_columns_as_json_and_a_plot(
    differing: Path, tmp_path: Path
) -> None:
    out, png = tmp_path / "s.json", tmp_path / "s.png"
    shown = runner.invoke(
        app,
        ["savings", str(differing), "--json", str(out), "--plot", str(png)],
        env={"COLUMNS": "80"},
    )
    assert shown.exit_code == 0, shown.output
    _lines_fit(shown.output)
    assert "run-" in shown.output and "treated" in shown.output and "*" in shown.output
    data = json.loads(out.read_text())
    with open_store(differing) as store:
        entries = store.load_ledger()
    assert data["total"]["billed_usd"] == pytest.approx(sum(e.billed_usd for e in entries))
    assert data["total"]["direct_usd"] == pytest.approx(sum(e.direct_usd for e in entries))
    assert len(data["sessions"]) == 30 and set(data["arms"]) == {"treated", "control"}
    assert png.read_bytes().startswith(b"\x89PNG")


def test_savings_compare_says_what_the_verdict_means(differing: Path, tmp_path: Path) -> None:
    out = tmp_path / "c.json"
    shown = runner.invoke(
        app,
        ["savings", str(differing), "--compare", "--margin", "0.25", "--json", str(out)],
        env={"COLUMNS": "80"},
    )
    assert shown.exit_code == 0, shown.output
    _lines_fit(shown.output)
    words = " ".join(shown.output.split())
    assert "Folding changed how the agents behave on your traffic (calls per session" in words
    assert re.search(
        r"calls per session +[\d.]+ +[\d.]+ +\+\d+% \(\+\d+%, \+\d+%\) +different", shown.output
    )
    measures = {m["measure"]: m for m in json.loads(out.read_text())["compare"]["measures"]}
    assert measures["calls per session"]["verdict"] == "different"


def _replayed(tmp_path: Path) -> Path:
    out = tmp_path / "replay.json"
    done = runner.invoke(
        app, ["replay", str(SAMPLE), "-s", "full", "-s", "refold", "--json", str(out)]
    )
    assert done.exit_code == 0, done.output
    return out


def test_savings_reads_a_replays_json(tmp_path: Path) -> None:
    out = _replayed(tmp_path)
    found = load_source(str(out))
    replayed = json.loads(out.read_text())
    assert found.kind == "replay" and found.detail == "refold" and len(found.sessions) == 1
    (session,) = found.sessions
    assert session.billed_usd == replayed["refold"]["rows"][0]["total_cost_usd"]
    assert session.direct_usd == replayed["full"]["rows"][0]["total_cost_usd"]
    shown = runner.invoke(app, ["savings", str(out)], env={"COLUMNS": "80"})
    assert shown.exit_code == 0 and "refold against full" in shown.output
    _lines_fit(shown.output)
    refused = runner.invoke(app, ["savings", str(out), "--compare"])
    assert refused.exit_code == 2 and "a replay has no arms" in refused.output


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p, "is a folder"),
        (lambda p: p / "none.db", "does not exist"),
        (lambda p: _write(p / "x.json", "[1, 2]"), "not the output of contextfold replay --json"),
        (lambda p: _write(p / "x.txt", "\x00\xff not json"), "neither a store (SQLite) nor JSON"),
        (lambda p: _foreign_sqlite(p / "other.db"), "not a contextfold store"),
    ],
)
def test_bad_input_is_one_line(tmp_path: Path, make: Any, message: str) -> None:
    shown = runner.invoke(app, ["savings", str(make(tmp_path))], env={"COLUMNS": "200"})
    assert shown.exit_code == 2 and message in shown.output
    assert shown.output.startswith("error: ") and shown.output.count("\n") == 1


def test_compare_needs_both_arms(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    run_agents(db, sessions=2, strategy="refold", extra=0, control=0.0)
    shown = runner.invoke(app, ["savings", str(db), "--compare"], env={"COLUMNS": "200"})
    assert shown.exit_code == 2
    assert (
        "needs at least 2 sessions in each arm; the ledger has 2 treated and 0 control"
        in shown.output
    )


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="latin-1")
    return path


def _foreign_sqlite(path: Path) -> Path:
    import sqlite3

    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x)")
    return path
