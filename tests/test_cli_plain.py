"""The command line speaks plainly (issue 45): what a user reads is text as written (install
hints keep their extra's name, paths and specs their brackets), and its words are explained."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.core import TyperGroup
from typer.main import get_command
from typer.testing import CliRunner

from contextfold.cli import app

runner = CliRunner()
MAIN = "import sys; from contextfold.cli import app; sys.argv[0] = 'contextfold'; app()"
"""``contextfold ARGS...`` in a fresh interpreter of this checkout."""


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
        ("psycopg", ["savings", "postgresql://u@127.0.0.1:9/db"], "'contextfold[cluster]'"),
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


# --- help a person reads at 80 columns --------------------------------------------------------


def _screens(group: Any = None, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """The argv of every help screen: the app's, each group's and each command's (hidden
    ones too: their --help still answers)."""
    group = group or get_command(app)
    yield prefix
    for name, command in group.commands.items():
        if isinstance(command, TyperGroup):
            yield from _screens(command, (*prefix, name))
        else:
            yield (*prefix, name)


SCREENS = list(_screens())
TYPE_LABEL = re.compile(r"<(?:list\[)?(?:str|int|float|path|Path|bool)\b[^>]*>")


@pytest.mark.parametrize("argv", SCREENS, ids=lambda argv: " ".join(argv) or "contextfold")
def test_every_help_screen_fits_80_columns_untruncated(argv: tuple[str, ...]) -> None:
    res = runner.invoke(app, [*argv, "--help"], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert "…" not in res.output, res.output
    assert max(len(line) for line in lines) <= 80, res.output
    assert not TYPE_LABEL.search(res.output), res.output  # values named by their metavars
    usage = next(line for line in lines if "Usage:" in line)
    assert "{" not in usage and "<" not in usage, usage


def test_the_help_screens_are_all_there() -> None:
    names = {" ".join(argv) for argv in SCREENS}
    assert {"", "replay", "savings", "serve", "wrap", "bench", "bench sufficiency"} <= names


def test_replay_help_is_a_screen_or_two_with_its_details_after_the_options() -> None:
    out = runner.invoke(app, ["replay", "--help"], env={"COLUMNS": "80"}).output
    assert len(out.splitlines()) <= 100
    assert "replay [OPTIONS] PATH..." in out
    for value in (
        "--strategy   -s      SPEC",
        "--tokenizer             NAME",
        "--no-restore-pricing",
    ):
        assert value in out, value
    assert out.index("Restores and re-runs") < out.index("approx-4cpt: an estimate")
    from contextfold.importers.registry import FORMATS

    lines = [line.strip() for line in out.splitlines()]
    assert all(f"{f.name}: {f.summary}" in lines for f in FORMATS)  # a line each, unwrapped


def test_wrap_help_says_the_clis_options_follow_its_name_with_no_dashes() -> None:
    out = runner.invoke(app, ["wrap", "--help"], env={"COLUMNS": "80"}).output
    said = " ".join(out.split())
    assert "everything after it goes to the CLI as typed, its options too" in said
    assert "contextfold wrap claude -p hi runs claude -p hi. No -- is needed there" in said


@pytest.mark.npm("claude")
def test_an_option_after_the_clis_name_is_the_clis(tmp_path: Path) -> None:
    """``wrap claude --version`` is Claude Code's ``--version``, through the proxy wrap starts
    (the pinned CLI, sealed off and offline: it calls no model)."""
    from tests._clis import Tripwire, claude_env
    from tests._wrap import wrap_argv, wrap_env

    with Tripwire() as wire:
        env = wrap_env(claude_env(tmp_path / "home", wire), "claude")
        argv = wrap_argv("--upstream", "anthropic:http://127.0.0.1:9", "claude", "--version")
        done = subprocess.run(
            argv, env=env, capture_output=True, text=True, timeout=180, check=False
        )
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"\d+\.\d+\.\d+ \(Claude Code\)\n", done.stdout), done.stdout
    assert "no request was answered" in done.stderr and wire.seen == []


def test_version() -> None:
    from importlib.metadata import version

    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output == f"contextfold {version('contextfold')}\n"
    assert "--version" in runner.invoke(app, ["--help"], env={"COLUMNS": "80"}).output


def test_demo_and_run_cap_steps_by_one_name_and_demo_steps_still_parses() -> None:
    for argv in (["demo"], ["run"]):
        shown = runner.invoke(app, [*argv, "--help"], env={"COLUMNS": "80"}).output
        assert "--max-steps" in shown and "--steps " not in shown
    res = runner.invoke(app, ["demo", "--no-live", "--steps", "3"])
    assert res.exit_code == 0, res.output
    assert "--steps is now --max-steps" in res.output


# --- long work shows progress -----------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.tau2
def test_bench_sufficiency_says_what_the_first_wait_is_and_counts_tasks_as_they_end() -> None:
    """On a terminal (rich's TTY_COMPATIBLE stands in for one) the bar names the first wait,
    each process loading tau2, then counts the tasks as they end."""
    argv = ["bench", "sufficiency", "--domain", "telecom", "-s", "full", "--tasks", "2"]
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "TTY_COMPATIBLE": "1", "COLUMNS": "80", "PYTHONPATH": src}
    done = subprocess.run(
        [sys.executable, "-c", MAIN, *argv, "--workers", "2"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "telecom: first tasks, loading tau2" in done.stderr
    assert re.search(r"telecom\b[^\r\n]*2/2", done.stderr)


# --- the demo ends saying what to try next ----------------------------------------------------


def test_the_demo_ends_with_what_to_try_next() -> None:
    res = runner.invoke(app, ["demo", "--no-live"], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    tail = res.output[res.output.rindex("\nNext\n") :]
    commands = ("replay ", "serve ", "wrap ", "savings ", "inspect ")
    for command in [f"contextfold {c}" for c in commands] + ["make docs"]:
        assert f"\n  {command}" in tail, command
    assert res.output.rstrip().endswith(tail.rstrip())  # the last thing it says
    assert len(tail.strip().splitlines()) == 8  # a line each, none wrapped at 80 columns


# --- words used before they are explained -----------------------------------------------------


def test_the_estimated_tokenizer_is_explained_where_its_name_is_shown() -> None:
    from contextfold.core.tokens import ApproxCounter

    sample = str(Path(__file__).resolve().parents[1] / "src" / "contextfold" / "data")
    for argv in (["replay", sample], ["demo", "--no-live"]):
        out = runner.invoke(app, argv, env={"COLUMNS": "80"}).output
        assert f"tokenizer {ApproxCounter.name}" in out  # the header names it...
        assert f"tokenizer {ApproxCounter.name}: an estimate, 4 ASCII characters" in out  # ...
    assert "approx-4cpt: an estimate" in runner.invoke(app, ["replay", "--help"]).output


def test_the_demo_names_its_price_table_as_everything_else_does() -> None:
    out = runner.invoke(app, ["demo", "--no-live"], env={"COLUMNS": "80"}).output
    assert "CarryOn's" not in out
    assert "cost $         prompts and replies at the default prices" in out


def test_an_empty_file_is_said_to_be_empty(tmp_path: Path) -> None:
    empty, blank = tmp_path / "runs.jsonl", tmp_path / "more.jsonl"
    empty.write_text("")
    blank.write_text("\n  \n")
    res = runner.invoke(app, ["replay", str(empty)])
    assert res.exit_code == 1
    assert res.output.strip() == f"error: {empty} is empty: no trajectories to replay"
    res = runner.invoke(app, ["replay", str(empty), str(blank)])
    assert f"{empty}, {blank} are empty" in res.output
    folder = tmp_path / "runs"
    folder.mkdir()
    res = runner.invoke(app, ["replay", str(folder), str(empty)], env={"COLUMNS": "200"})
    assert f"({empty} is empty; {folder} holds no file in a format replay reads)" in res.output


def test_words_are_defined_before_the_cli_uses_them() -> None:
    """refold's words (boundary, stub, settled) are in the architecture's vocabulary, and the
    strategies listing describes refold without "settled"."""
    root = Path(__file__).resolve().parents[1]
    page = (root / "docs" / "architecture.md").read_text()
    vocabulary = page[page.index("## Vocabulary") : page.index("## Layers")]
    for word in ("**Stub**", "**Boundary**", "**settled prefix**", "*settled*"):
        assert word in vocabulary, word
    for argv in (["strategies"], ["strategies", "refold"]):
        out = runner.invoke(app, argv, env={"COLUMNS": "200"}).output
        assert "settled" not in out and "stub" in out


def test_gemini_is_named_wherever_serve_says_what_it_serves() -> None:
    top = runner.invoke(app, ["--help"], env={"COLUMNS": "80"}).output
    assert "Gemini" in top[top.index("│ serve") :].split("│ inspect")[0]
    serve = runner.invoke(app, ["serve", "--help"], env={"COLUMNS": "80"}).output
    assert "generateContent" in serve and "gemini:URL" in serve
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    layout = readme[readme.index("## Layout") :]
    [line] = [line for line in layout.splitlines() if line.strip().startswith("serve/")]
    assert "Gemini" in line
