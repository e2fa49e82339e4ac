"""The Python blocks of the documentation, found as MkDocs renders them (:func:`blocks`): every
fenced ``python`` block of every page under docs/, with ``--8<--`` includes resolved (a file,
or a file's ``[start:NAME]``/``[end:NAME]`` section), and whether the page marks it as not run
(``<!-- docs: not run: WHY -->`` on the line before its fence). :func:`run_blocks` runs a
page's blocks in order in one fresh interpreter, each after the preamble that defines what
the page leaves to the reader, as a reader would paste them one after another."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DOCS", "ROOT", "Block", "blocks", "page_blocks", "run_blocks"]

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
_INCLUDE = re.compile(r'^--8<-- "([^":]+)(?::([\w-]+))?"$')
_NOT_RUN = re.compile(r"^<!-- docs: not run: (.+) -->$")


@dataclass(frozen=True, slots=True)
class Block:
    page: str
    """The page's path under docs/ (``serve/openai-sdk.md``)."""
    index: int
    """Its place among the page's Python blocks, from 0."""
    code: str
    not_run: str | None
    """Why the page says it is not run, or None."""
    before: str
    """The page's text before the block (where another test's markers would be)."""


def _included(target: str, section: str | None) -> str:
    path = DOCS / target
    text = path.read_text(encoding="utf-8") if path.exists() else (ROOT / target).read_text()
    if section is None:
        return text
    start, end = f"--8<-- [start:{section}]", f"--8<-- [end:{section}]"
    body = text[text.index(start) + len(start) : text.index(end)]
    return body.split("\n", 1)[1].rsplit("\n", 1)[0]  # without the markers' own lines


def _expanded(lines: list[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        found = _INCLUDE.match(line.strip())
        out += _included(*found.groups()).splitlines() if found else [line]
    return out


def page_blocks(page: str, text: str) -> list[Block]:
    """The Python blocks of one page's text, includes resolved."""
    lines = _expanded(text.splitlines())
    found: list[Block] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```python":
            i += 1
            continue
        end = lines.index("```", i + 1)
        marked = _NOT_RUN.match(lines[i - 1].strip()) if i else None
        code = "\n".join(lines[i + 1 : end]) + "\n"
        before = "\n".join(lines[:i])
        found.append(Block(page, len(found), code, marked and marked[1], before))
        i = end + 1
    return found


def blocks() -> list[Block]:
    """Every Python block of every page under docs/, in page order."""
    found: list[Block] = []
    for path in sorted(DOCS.rglob("*.md")):
        found += page_blocks(str(path.relative_to(DOCS)), path.read_text(encoding="utf-8"))
    return found


_DRIVER = """
import json, sys
for name, code in json.load(open(sys.argv[1])):
    exec(compile(code, name, "exec"), globals())
"""


def run_blocks(
    pieces: list[tuple[str, str]], *, env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """Run ``pieces`` (a name for tracebacks, the code) one after another in one fresh
    interpreter's ``__main__``, each compiled alone (so a block may open with ``from
    __future__``), with this checkout importable."""
    script = cwd / "blocks.json"
    script.write_text(json.dumps(pieces))
    path = os.pathsep.join([str(ROOT / "src"), str(ROOT), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-c", _DRIVER, str(script)],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": path.rstrip(os.pathsep)},
        cwd=cwd,
        timeout=180,
        check=False,
    )
