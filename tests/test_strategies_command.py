"""``contextfold strategies``: every registered strategy with a one-line description, whether
it needs a folder, whether it is reversible and its options with their defaults, all read from
the registry and the strategies' configs; reversibility agrees with what the views do; the
table fits 80 columns; ``--json``; a bad spec is one line."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from contextfold.cli import app
from contextfold.commands.listings import catalog_table, options_table
from contextfold.core.errors import ContextBudgetError
from contextfold.session import Session
from contextfold.strategies.catalog import StrategyInfo, catalog, describe
from contextfold.strategies.registry import STRATEGIES, needs_folder

CATALOG = catalog()


def coding_session(steps: int = 30) -> list[dict[str, Any]]:
    """File reads (some of the same file again) with comment, blank and license lines."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "fix the bug"},
    ]
    body = "\n".join(f"def f{i}():  # comment {i}\n    return {i}\n" for i in range(60))
    for k in range(steps):
        path = f"src/mod{k % 12}.py"
        fn = {"name": "bash", "arguments": json.dumps({"command": f"cat {path}"})}
        call = {"id": f"c{k}", "type": "function", "function": fn}
        messages.append({"role": "assistant", "content": f"reading {path}", "tool_calls": [call]})
        content = f"# Copyright (c) {k}, license header\n\n{body}"
        messages.append({"role": "tool", "tool_call_id": f"c{k}", "content": content})
    return messages


def test_every_registered_strategy_is_described_and_every_option_documented() -> None:
    assert [i.name for i in CATALOG] == list(STRATEGIES)
    for info in CATALOG:
        assert info.description.endswith(".") and "\n" not in info.description, info.name
        assert info.path == STRATEGIES[info.name]
        for option in info.options:
            assert option.description, f"{info.name}.{option.name} has no description"
            assert option.value == option.default


def test_the_folder_need_is_the_registrys() -> None:
    for info in CATALOG:
        assert (info.folder != "no") == needs_folder(info.name), info.name
    assert {i.name for i in CATALOG if i.folder == "optional"} == {"ufold"}


@pytest.mark.parametrize("info", CATALOG, ids=lambda i: i.name)
def test_reversible_is_what_the_views_do(info: StrategyInfo) -> None:
    """A reversible strategy's elisions all have a restore path; another's do not (on a
    session long enough for it to leave things out); the lossless one leaves nothing out."""
    for budget in (6_000, None):  # the budget if the strategy fits it, else none
        try:
            prepared = Session(info.name, budget=budget, folder="scripted").prepare(
                coding_session()
            )
            break
        except ContextBudgetError:
            continue
    elisions = prepared.view.elisions
    if info.lossless:
        assert not elisions
    elif info.reversible:
        assert all(e.recoverable for e in elisions)
    else:
        assert any(not e.recoverable for e in elisions)


def test_a_spec_is_described_with_the_values_it_gives() -> None:
    info = describe("mask keep=3 reversible=true")
    assert info.reversible and info.tools == ("restore",)
    values = {o.name: (o.value, o.default) for o in info.options}
    assert values["keep"] == (3, 10) and values["reversible"] == (True, False)
    assert describe("ufold folder=none").folder == "optional"  # described without a model


def _render(table: Any, width: int = 80) -> str:
    console = Console(width=width, record=True)
    console.print(table)
    return console.export_text()


def test_the_tables_fit_80_columns_and_hold_everything() -> None:
    text = _render(catalog_table(CATALOG))
    assert max(len(line) for line in text.splitlines()) <= 80 and "…" not in text
    for info in CATALOG:
        assert info.name in text
    assert 'placeholder="[output of' in text  # text, not markup
    assert "yes (restore)" in text and "yes (lossless)" in text and "optional" in text
    one = _render(options_table(describe("refold cut=0")))
    assert max(len(line) for line in one.splitlines()) <= 80
    assert "value" in one and "STALE" in one


def test_the_command_prints_the_table_the_json_and_one_line_for_a_bad_spec() -> None:
    runner = CliRunner()
    listed = runner.invoke(app, ["strategies"])
    assert listed.exit_code == 0 and "refold" in listed.stdout
    data = json.loads(runner.invoke(app, ["strategies", "--json"]).stdout)
    assert data == [i.to_json() for i in CATALOG]
    one = json.loads(runner.invoke(app, ["strategies", "window keep=4", "--json"]).stdout)
    assert one["options"] == [
        {
            "name": "keep",
            "type": "int",
            "default": 10,
            "value": 4,
            "description": "Most recent steps kept whole (N).",
        }
    ]
    bad = runner.invoke(app, ["strategies", "refodl"])
    assert bad.exit_code == 2 and "did you mean 'refold'" in bad.output
    twice = runner.invoke(app, ["strategies", "window keep=0 keep=2"])
    assert twice.exit_code == 2 and len(twice.output.strip().splitlines()) == 1
