"""contextfold inspect without a browser: the session JSON (diffs, cache breaks, elisions,
provenance), stored sessions as sent, the export, and the command's errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from benchmarks._fixtures import swe_trajectory
from contextfold.cli import app
from contextfold.core.meter import PRICE_TABLES, PROFILES
from contextfold.inspect import Setup, collect, export_site
from contextfold.testing.postgres import TempPostgres
from tests._inspect_data import stored_session

SETUP = Setup(PRICE_TABLES["default"], PROFILES["qwen3-8b"])


def views(run: dict[str, Any]) -> list[list[Any]]:
    """Every view of a run, rebuilt from its diffs as the page does."""
    out: list[list[Any]] = []
    previous: list[Any] = []
    for call in run["calls"]:
        previous = previous[: call["keep"]] + call["add"]
        out.append(previous)
    return out


def test_a_replayed_window_breaks_the_cache_where_its_view_first_differs(tmp_path: Path) -> None:
    path = swe_trajectory(tmp_path, 8)
    data = collect([path], ["full", "window keep=2"], SETUP, "approx").entries[0].data()
    full, window = data["runs"]
    assert [c["brk"] for c in full["calls"]] == [None] * 8  # append-only: never breaks
    assert all(not c["e"] for c in full["calls"])
    w = views(window)
    for i, call in enumerate(window["calls"][1:], start=1):
        ids = [item[0] for item in w[i]]
        previous = [item[0] for item in w[i - 1]]
        first_diff = next(
            (k for k, (a, b) in enumerate(zip(ids, previous, strict=False)) if a != b), None
        )
        assert call["brk"] == first_diff
    last = window["calls"][-1]
    elided = {s for e in last["e"] for s in data["els"][e][0]}
    shown = {s for item in w[-1] for s in item[3]}
    assert elided and not elided & shown
    assert {data["els"][e][1] for e in last["e"]} == {"window"}


def test_views_rebuilt_from_diffs_name_the_steps_they_render(tmp_path: Path) -> None:
    data = collect([swe_trajectory(tmp_path, 5)], ["full"], SETUP, "approx").entries[0].data()
    last = views(data["runs"][0])[-1]
    steps = [s for item in last for s in item[3]]
    assert steps == sorted(steps) and set(steps) == set(range(data["runs"][0]["calls"][-1]["step"]))
    assert last[0][0] == data["system"]


def test_a_stored_session_shows_the_prompts_sent_with_its_strategys_elisions(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    stored_session(db)
    catalog = collect([db], ["full"], SETUP, "approx")
    data = catalog.entries[0].data()
    sent, full = data["runs"]
    assert sent["name"] == "sent (window keep=2)" and full["name"] == "full"
    assert [c["step"] for c in sent["calls"]] == [c["step"] for c in full["calls"]]
    reasons = {data["els"][e][1] for c in sent["calls"] for e in c["e"]}
    assert reasons == {"window"}  # re-rendered: the strategy's own reasons, not guesses
    assert any(c["brk"] is not None for c in sent["calls"])


def test_a_session_whose_strategy_is_unknown_is_matched_against_its_history(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    stored_session(db, strategy="window keep=2")
    with __import__("sqlite3").connect(db) as conn:  # forget which strategy it ran
        conn.execute("UPDATE sessions SET meta = '{}'")
    data = collect([db], [], SETUP, "approx").entries[0].data()
    (sent,) = data["runs"]
    reasons = {data["els"][e][1] for c in sent["calls"] for e in c["e"]}
    assert reasons == {"not sent"}
    assert all(data["els"][e][3] is None for c in sent["calls"] for e in c["e"])


def test_export_writes_the_page_and_every_sessions_json(tmp_path: Path) -> None:
    catalog = collect([swe_trajectory(tmp_path, 4)], ["full"], SETUP, "approx")
    out = tmp_path / "site"
    export_site(catalog, out)
    names = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert names == {
        "index.html",
        "app.js",
        "plots.js",
        "style.css",
        "data.js",
        "data/index.json",
        "data/session-0.json",
    }
    assert json.loads((out / "data/session-0.json").read_text())["runs"][0]["name"] == "full"
    page = (out / "index.html").read_text() + (out / "app.js").read_text()
    assert "http://" not in page and "https://" not in page  # nothing fetched from elsewhere


def test_the_command_names_a_path_with_nothing_to_show(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    result = CliRunner().invoke(app, ["inspect", str(tmp_path / "empty.jsonl"), "--export", "x"])
    assert result.exit_code == 2
    assert "no session or trajectory found in" in result.output


def test_a_bad_strategy_fails_before_anything_is_served(tmp_path: Path) -> None:
    path = str(swe_trajectory(tmp_path, 3))
    result = CliRunner().invoke(app, ["inspect", path, "-s", "nosuch", "--port", "0"])
    assert result.exit_code == 2 and "nosuch" in result.output


def test_the_command_exports_a_store_as_sent_and_trajectories_replayed_with_full(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    stored_session(db)
    traj = swe_trajectory(tmp_path, 3)
    for paths, names in (([db], ["sent (window keep=2)"]), ([traj], ["full"])):
        out = tmp_path / f"site-{len(names)}-{names[0][:4]}"
        result = CliRunner().invoke(app, ["inspect", *map(str, paths), "--export", str(out)])
        assert result.exit_code == 0, result.output
        data = json.loads((out / "data/session-0.json").read_text())
        assert [r["name"] for r in data["runs"]] == names


def test_a_postgresql_store_shows_what_the_same_session_in_a_sqlite_file_shows(
    postgres: TempPostgres, tmp_path: Path
) -> None:
    url = postgres.new_database()
    db = tmp_path / "s.db"
    for target in (url, db):
        stored_session(target)
    from_url = collect([url], ["full"], SETUP, "approx")
    from_file = collect([db], ["full"], SETUP, "approx")
    assert [e.kind for e in from_url.entries] == ["store"]
    assert from_url.entries[0].label == f"{url}: live-1"  # the URL has no password to hide
    data, same = from_url.entries[0].data(), from_file.entries[0].data()
    assert data["source"] == url and same["source"] == str(db)
    assert [r["name"] for r in data["runs"]] == ["sent (window keep=2)", "full"]
    assert {**data, "source": None} == {**same, "source": None}  # calls, elisions, steps


def test_the_command_exports_a_postgresql_store_and_never_shows_its_password(
    postgres: TempPostgres, tmp_path: Path
) -> None:
    url = postgres.new_database().replace("@", ":hunter2@", 1)  # trust auth ignores it
    stored_session(url)
    out = tmp_path / "site"
    result = CliRunner().invoke(app, ["inspect", url, "--export", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads((out / "data/session-0.json").read_text())
    assert [r["name"] for r in data["runs"]] == ["sent (window keep=2)"]  # a store: as sent
    assert len(data["runs"][0]["calls"]) == 6
    index = (out / "data/index.json").read_text()
    assert "hunter2" not in result.output + index + json.dumps(data)
    empty = postgres.new_database().replace("@", ":hunter2@", 1)
    none = CliRunner().invoke(app, ["inspect", empty, "--export", str(tmp_path / "x")])
    assert none.exit_code == 2 and "no session or trajectory found in postgresql://" in none.output
    assert "hunter2" not in none.output


@pytest.mark.postgres
def test_the_command_names_an_unreachable_postgresql_store(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgresql://u:pw@127.0.0.1:{port}/x"
    result = CliRunner().invoke(app, ["inspect", url, "--export", str(tmp_path / "x")])
    assert result.exit_code == 2 and "cannot connect to the store" in result.output
    assert ":pw@" not in result.output and "Traceback" not in result.output
