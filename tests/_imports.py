"""The modules a source file imports, read from its syntax tree (for the tests that check
which package may import which)."""

from __future__ import annotations

import ast
from pathlib import Path

__all__ = ["imports"]


def imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth of the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found
