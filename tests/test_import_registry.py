"""The importers' registry: one object per format, told apart by content; the help and the docs
list what it holds, so a new format is one module and one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from contextfold.cli import app
from contextfold.core.errors import ImportFormatError
from contextfold.importers import iter_trajectories, load_file
from contextfold.importers.probe import Probe
from contextfold.importers.registry import FORMATS, SUFFIXES, claiming
from tests._claude_logs import Log
from tests.test_importers import write

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_names_are_unique_and_plain_jsonl_is_tried_last() -> None:
    names = [f.name for f in FORMATS]
    assert len(set(names)) == len(names) and names[-1] == "jsonl"
    assert all(f.summary and len(f"{f.name}: {f.summary}") <= 78 for f in FORMATS)
    assert set(SUFFIXES) == {s for f in FORMATS for s in f.suffixes}


def test_the_formats_page_has_a_section_for_every_format() -> None:
    page = (DOCS / "measure" / "formats.md").read_text()
    sections = re.findall(r"^## (\S+)$", page, re.MULTILINE)
    assert sections == [f.name for f in FORMATS] and "<!-- formats -->" in page


def test_replay_help_lists_every_format() -> None:
    shown = CliRunner().invoke(app, ["replay", "--help"], env={"COLUMNS": "80"}).output
    assert all(f"{f.name}: " in shown for f in FORMATS)


def test_a_claude_code_log_is_claimed_by_content_whatever_its_name(tmp_path: Path) -> None:
    log = Log()
    log.user("Hi.")
    log.block("m1", {"type": "text", "text": "Hello."}, stop="end_turn")
    path = log.write(tmp_path / "renamed.txt")
    found = claiming(Probe(path, explicit=True))
    assert found is not None and found.name == "claude-code"
    [t] = load_file(path)
    assert t.meta["format"] == "claude-code" and len(t.steps) == 2


def test_a_named_file_no_format_claims_lists_the_formats(tmp_path: Path) -> None:
    path = write(tmp_path / "config.json", {"model": "x"})
    [error] = list(iter_trajectories([path]))
    assert isinstance(error, ImportFormatError)
    assert all(f.name in error.problem for f in FORMATS)


def test_a_file_no_format_claims_in_a_folder_is_skipped(tmp_path: Path) -> None:
    write(tmp_path / "settings.json", {"theme": "dark"})
    (tmp_path / "notes.jsonl.bak").write_text(json.dumps({"a": 1}))
    assert list(iter_trajectories([tmp_path])) == []
