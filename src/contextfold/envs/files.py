"""A small in-memory workspace environment: list, read, write and grep files.

It exists for scripted agents, tests and short demos: reads return numbered lines like a real
file viewer, so re-reading a file after an edit repeats most of its lines.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["FilesEnv", "function_tool", "numbered"]


def function_tool(name: str, description: str, **params: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {k: {"type": "string", "description": v} for k, v in params.items()},
                "required": list(params),
            },
        },
    }


def numbered(text: str) -> str:
    """``text`` with line numbers, as ``read_file`` shows a file."""
    return "\n".join(f"{i + 1:4d}  {line}" for i, line in enumerate(text.splitlines()))


_TOOLS = [
    function_tool("list_files", "List the files in the workspace."),
    function_tool("read_file", "Show a file with line numbers.", path="File path."),
    function_tool(
        "write_file", "Replace a file's content.", path="File path.", content="New content."
    ),
    function_tool("grep", "Lines containing a text, as path:line:text.", pattern="Text to find."),
]


class FilesEnv:
    """Files kept in a dict; every tool returns text, errors included (it never raises)."""

    def __init__(self, files: Mapping[str, str]) -> None:
        self.files = dict(files)

    def tools(self) -> list[dict[str, Any]]:
        return _TOOLS

    def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        if name == "list_files":
            return "\n".join(sorted(self.files)) or "(no files)"
        if name == "grep":
            return self._grep(str(arguments.get("pattern", "")))
        path = arguments.get("path")
        if not isinstance(path, str):
            return f"error: {name} needs a string 'path'"
        if name == "write_file":
            self.files[path] = str(arguments.get("content", ""))
            return f"wrote {path} ({len(self.files[path].splitlines())} lines)"
        if name == "read_file":
            if path not in self.files:
                return f"error: no file {path!r}; files: {', '.join(sorted(self.files))}"
            return numbered(self.files[path])
        return f"error: unknown tool {name!r}"

    def _grep(self, pattern: str) -> str:
        if not pattern:
            return "error: grep needs a non-empty 'pattern'"
        hits = [
            f"{path}:{no + 1}:{line}"
            for path, text in sorted(self.files.items())
            for no, line in enumerate(text.splitlines())
            if pattern in line
        ]
        return "\n".join(hits) or "(no matches)"
