"""Module docstrings say what and why in a few lines (the detail is on the class or function it
describes, the history of how a rule was found on the docs' decisions pages); every module of
the package, ``serve/`` included, has one."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "contextfold"
MOST_LINES = 8
MODULES = sorted(SRC.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_a_module_docstring_is_a_few_lines(path: Path) -> None:
    doc = ast.get_docstring(ast.parse(path.read_text()))
    assert doc, f"{path.relative_to(SRC)} has no module docstring"
    lines = doc.strip().splitlines()
    assert len(lines) <= MOST_LINES, f"{len(lines)} lines: move the detail to the code it describes"
