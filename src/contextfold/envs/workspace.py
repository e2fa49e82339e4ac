"""A workspace on disk: a temporary directory with tools to list, read, write and run files.

The files are real (unlike :class:`~contextfold.envs.files.FilesEnv`, a dict), so what an agent
produces can be opened by a scorer afterwards, or checked during the run by CarryOn's grounder.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from contextfold.core.documents import DocumentError, document_text, is_container
from contextfold.envs.files import function_tool, numbered

__all__ = ["WorkspaceEnv"]

_TOOLS = [
    function_tool("list_files", "List the workspace's files with their sizes."),
    function_tool(
        "read_file", "Show a file (text with line numbers; docx/xlsx/pptx as text).", path="Path."
    ),
    function_tool(
        "write_file", "Create or replace a text file.", path="Path.", content="Its content."
    ),
    function_tool(
        "run_python", "Run a Python file in the workspace; shows its output.", path="Path."
    ),
]
OUTPUT_LIMIT = 12000
"""Characters of stdout (and of stderr) ``run_python`` shows at most."""


class WorkspaceEnv:
    """Files under ``root`` (a new temporary directory when None), seeded with ``seed``.

    Tools: ``list_files`` (every file with its size), ``read_file(path)`` (a text file with line
    numbers; a docx, xlsx or pptx as its text: :func:`~contextfold.core.documents.document_text`),
    ``write_file(path, content)`` (folders are made) and ``run_python(path)`` (the root as working
    directory, the same interpreter as contextfold so python-docx, openpyxl and python-pptx are
    there, a timeout; exit status, stdout and stderr, each cut to a limit). Paths are relative to
    the root; one that leaves it is refused. Every tool returns text, errors included (it never
    raises). :meth:`close` removes the directory.
    """

    def __init__(
        self,
        seed: Mapping[str, str] | None = None,
        *,
        root: Path | None = None,
        timeout_s: float = 60.0,
    ) -> None:
        self._owned = root is None
        self.root = Path(tempfile.mkdtemp(prefix="cf-workspace-") if root is None else root)
        self.root = self.root.resolve()
        self.timeout_s = timeout_s
        for name, text in (seed or {}).items():
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")

    def tools(self) -> list[dict[str, Any]]:
        return _TOOLS

    def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        if name == "list_files":
            return self._list()
        if name not in ("read_file", "write_file", "run_python"):
            known = ", ".join(t["function"]["name"] for t in _TOOLS)
            return f"error: unknown tool {name!r}; tools: {known}"
        given = arguments.get("path")
        if not isinstance(given, str) or not given.strip():
            return f"error: {name} needs a non-empty string 'path'"
        path = self.resolve(given)
        if path is None:
            return f"error: {given!r} is outside the workspace; use a path relative to it"
        if name == "write_file":
            return self._write(path, arguments.get("content"))
        if not path.is_file():
            return f"error: no file {given!r}; list_files shows what there is"
        return self._read(path) if name == "read_file" else self._run(path)

    def resolve(self, given: str) -> Path | None:
        """The path under the root, or None when it would leave the root."""
        path = (self.root / given.strip()).resolve()
        return path if path.is_relative_to(self.root) and path != self.root else None

    def close(self) -> None:
        """Remove the workspace directory (only one this environment made)."""
        if self._owned:
            shutil.rmtree(self.root, ignore_errors=True)

    def _list(self) -> str:
        files = sorted(p for p in self.root.rglob("*") if p.is_file())
        lines = [f"{p.relative_to(self.root)}  {p.stat().st_size} bytes" for p in files]
        return "\n".join(lines) or "(no files)"

    def _write(self, path: Path, content: object) -> str:
        if not isinstance(content, str):
            return "error: write_file needs a string 'content'"
        if is_container(path):
            return f"error: {path.suffix} is a binary document; write a script that makes it"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        return f"wrote {path.relative_to(self.root)} ({len(content.splitlines())} lines)"

    def _read(self, path: Path) -> str:
        if is_container(path):
            try:
                return document_text(path)
            except DocumentError as exc:
                return f"error: {exc}"
        return numbered(path.read_bytes().decode("utf-8", errors="replace"))

    def _run(self, path: Path) -> str:
        if path.suffix != ".py":
            return f"error: run_python runs .py files, not {path.name}"
        try:
            done = subprocess.run(
                [sys.executable, str(path)],
                cwd=self.root,
                capture_output=True,
                text=True,
                timeout=self.timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return f"error: {path.name} ran past {self.timeout_s:g} s and was stopped"
        parts = [f"exit status {done.returncode}"]
        for label, text in (("stdout", done.stdout), ("stderr", done.stderr)):
            if text:
                parts.append(f"{label}:\n{_cut(text)}")
        return "\n".join(parts)


def _cut(text: str) -> str:
    if len(text) <= OUTPUT_LIMIT:
        return text.rstrip("\n")
    return f"{text[:OUTPUT_LIMIT]}\n[... {len(text) - OUTPUT_LIMIT} more characters]"
