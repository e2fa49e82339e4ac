"""One command line: every option and argument of every command has help; the options the
commands share are defined once (the same default and help wherever they appear); old
spellings still work, hidden, with a warning; ``bench/`` holds no CLI code."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.core import TyperArgument, TyperGroup, TyperOption
from typer.main import get_command
from typer.testing import CliRunner

from contextfold.cli import app
from contextfold.commands.options import ALIASES
from tests.test_replay import coding_session, write_jsonl

SRC = Path(__file__).resolve().parents[1] / "src" / "contextfold"
SHARED = (
    "--profile",
    "--prices",
    "--folder",
    "--tokenizer",
    "--base-url",
    "--threads",
    "--fold-cache",
    "--no-fold-cache",
    "--tool-schemas",
    "--ray",
)
"""Options whose default and help are the same on every command that takes them."""
SAME_DEFAULT = ("--json", "--learn", "--experience", "--save-experience")
"""Options with one default everywhere (their help may say what they do in that command)."""
runner = CliRunner()


def commands(group: Any = None, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every command of the CLI, by its full name (``bench sufficiency``), hidden ones too."""
    group = group or get_command(app)
    for name, command in group.commands.items():
        full = f"{prefix}{name}"
        if isinstance(command, TyperGroup):
            yield from commands(command, f"{full} ")
        else:
            yield full, command


def options(name: str) -> dict[str, TyperOption]:
    """A command's visible options, by their first name."""
    command = dict(commands())[name]
    return {p.opts[0]: p for p in command.params if isinstance(p, TyperOption) and not p.hidden}


ALL = dict(commands())


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_command_option_and_argument_has_help(name: str) -> None:
    command = ALL[name]
    assert (command.help or "").strip(), f"{name} has no help"
    for param in command.params:
        if isinstance(param, TyperOption | TyperArgument) and not getattr(param, "hidden", False):
            assert (param.help or "").strip(), f"{name} {param.opts[0]} has no help"


@pytest.mark.parametrize("option", SHARED + SAME_DEFAULT)
def test_a_shared_option_has_one_default_and_one_help(option: str) -> None:
    found = {name: options(name)[option] for name in ALL if option in options(name)}
    if option == "--json":  # a listing's --json is a flag (its own test)
        found = {name: p for name, p in found.items() if not p.is_flag}
    assert len(found) >= 2, f"{option} is on {sorted(found)} only"
    defaults = {name: repr(p.default) for name, p in found.items()}
    assert len(set(defaults.values())) == 1, defaults
    if option in SHARED:
        helps = {name: p.help for name, p in found.items()}
        assert len(set(helps.values())) == 1, helps


@pytest.mark.parametrize(
    ("option", "takers"),
    [
        ("--profile", {"replay", "demo", "inspect", "run", "bench sufficiency"}),
        ("--prices", {"replay", "inspect", "run", "bench sufficiency"}),
        ("--tokenizer", {"replay", "inspect", "run", "bench sufficiency", "serve"}),
        ("--folder", {"replay", "inspect", "run", "bench sufficiency", "serve"}),
        ("--json", {"replay", "run", "bench sufficiency", "bench cache"}),
        ("--save-experience", {"replay", "bench sufficiency", "serve"}),
    ],
)
def test_the_commands_that_measure_take_the_shared_options(option: str, takers: set[str]) -> None:
    assert takers <= {name for name in ALL if option in options(name)}


def test_json_takes_a_path_where_results_are_written_and_is_a_flag_on_listings() -> None:
    for name in ALL:
        json = options(name).get("--json")
        if json is not None:
            listing = name in ("strategies", "models", "profiles")
            assert json.is_flag == listing, name


def test_no_help_names_an_option_its_command_does_not_take() -> None:
    """An option of another command is named only after that command (``replay --learn``)."""
    for name, command in ALL.items():
        texts = [command.help or "", *(getattr(p, "help", None) or "" for p in command.params)]
        for text in texts:
            owner = name
            for word in text.replace("(", " ").replace("`", " ").split():
                word = word.strip(".,;:'\")")
                if word in ALL or f"bench {word}" in ALL:
                    owner = word if word in ALL else f"bench {word}"
                flag = word.split("=")[0]
                if flag.startswith("--") and len(flag) > 2 and flag not in ALIASES:
                    assert flag in _taken(owner) or flag in _taken(name), f"{name}: {text!r}"


def _taken(name: str) -> set[str]:
    return {o for p in ALL[name].params for o in (*p.opts, *p.secondary_opts)}


def test_old_spellings_work_hidden_with_a_warning(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "runs.jsonl", [coding_session(2)])
    new = runner.invoke(app, ["replay", str(data), "--profile", "qwen3-14b"])
    assert new.exit_code == 0, new.output
    for old in (
        ["--model-profile", "qwen3-14b"],
        ["-m", "qwen3-14b"],
        ["--model-profile=qwen3-14b"],
    ):
        res = runner.invoke(app, ["replay", str(data), *old])
        assert res.exit_code == 0, res.output
        assert "profile qwen3-14b" in res.output
        assert "is now --profile" in res.output
    shown = runner.invoke(app, ["replay", "--help"], env={"COLUMNS": "200"}).output
    assert "--model-profile" in shown  # named in --profile's help, not listed as an option
    assert "--model-profile" not in options("replay")


def test_cache_bench_is_bench_cache_and_the_old_name_still_answers() -> None:
    assert ALL["cache-bench"].hidden
    assert "four ways" in (ALL["bench cache"].help or "")
    assert "three" not in (ALL["bench cache"].help or "")
    res = runner.invoke(app, ["cache-bench", "--help"])
    assert res.exit_code == 0 and "bench cache" in res.output


def test_bench_holds_no_cli_code_and_imports_nothing_above_it() -> None:
    for path in (SRC / "bench").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for module in names:
                assert module.split(".")[0] not in ("typer", "click"), path
                assert not module.startswith(("contextfold.commands", "contextfold.cli")), path


def test_the_command_line_page_shows_every_command() -> None:
    page = (SRC.parents[1] / "docs" / "reference" / "cli.md").read_text()
    shown = {name for name, command in ALL.items() if not command.hidden}
    assert {name for name in shown if f"<!-- cli: {name} -->" not in page} == set()
