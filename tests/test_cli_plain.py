"""The command line speaks plainly (issue 45): what a user reads is text as written (install
hints keep their extra's name, paths and specs their brackets), and its words are explained."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from contextfold.cli import app

runner = CliRunner()


@pytest.mark.parametrize(
    ("blocked", "argv", "hint"),
    [
        ("uvicorn", ["serve", "--upstream", "local"], "pip install 'contextfold[serve]'"),
        ("contextfold.inspect", ["inspect", "{tmp}"], "pip install 'contextfold[serve]'"),
        (
            "openai",
            ["run", "--env", "tutorial:budget", "--model", "openai:m", "--base-url", "http://x"],
            "pip install 'contextfold[openai]'",
        ),
        ("loguru", ["tasks", "airline"], "pip install 'contextfold[tau2]'"),
    ],
)
def test_an_install_hint_keeps_the_extras_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, blocked: str, argv: list[str], hint: str
) -> None:
    monkeypatch.setitem(sys.modules, blocked, None)  # what `import` meets when it is absent
    res = runner.invoke(app, [a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert res.exit_code == 2, res.output
    assert hint in res.output, res.output


def test_a_path_or_spec_with_brackets_is_shown_as_given(tmp_path: Path) -> None:
    missing = tmp_path / "runs[serve]" / "x.jsonl"
    res = runner.invoke(app, ["replay", str(missing)])
    assert res.exit_code == 2 and f"{missing} does not exist" in res.output
    res = runner.invoke(app, ["replay", str(tmp_path), "-s", "nosuch[bold]x"])
    assert "nosuch[bold]x" in res.output, res.output
