"""Small hand-made Claude Code logs, line by line as Claude Code writes them: each line names
the one before it (``parentUuid``), a reply is logged one content block a line under its message
id, with its usage; see tests/test_import_claude_code.py."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Log", "usage"]

MODEL = "claude-sonnet-4-5-20250929"


def usage(
    read: int = 0, written: int = 0, uncached: int = 3, output: int = 1, hour: int = 0
) -> dict[str, Any]:
    """A reply's ``usage`` as Claude Code logs it."""
    return {
        "input_tokens": uncached,
        "cache_creation_input_tokens": written + hour,
        "cache_read_input_tokens": read,
        "cache_creation": {"ephemeral_5m_input_tokens": written, "ephemeral_1h_input_tokens": hour},
        "output_tokens": output,
        "service_tier": "standard",
    }


@dataclass(slots=True)
class Log:
    """A log being written: :meth:`add` appends a line after ``parent`` (default: the last
    line), and returns its uuid."""

    session: str = "s-1"
    lines: list[str] = field(default_factory=list)
    last: str | None = None
    count: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def add(self, kind: str, parent: str | bool | None = True, **fields: Any) -> str:
        self.count += 1
        uuid = f"u{self.count}"
        data = {
            "parentUuid": self.last if parent is True else parent,
            "isSidechain": False,
            "type": kind,
            "uuid": uuid,
            "timestamp": f"2025-12-12T03:00:{self.count:02d}.000Z",
            "sessionId": self.session,
            "version": "2.0.67",
            "cwd": "/work",
            **self.extra,
            **fields,
        }
        self.lines.append(json.dumps(data))
        self.last = uuid
        return uuid

    def user(self, content: Any, **fields: Any) -> str:
        return self.add("user", message={"role": "user", "content": content}, **fields)

    def block(self, mid: str, block: dict[str, Any], *, stop: str | None = None,
              use: dict[str, Any] | None = None, **fields: Any) -> str:  # fmt: skip
        """One line of reply ``mid``: one content block."""
        message = {"model": MODEL, "id": mid, "type": "message", "role": "assistant",
                   "content": [block], "stop_reason": stop, "usage": use or usage()}  # fmt: skip
        return self.add("assistant", message=message, **fields)

    def result(self, call: str, content: Any = "ok", **fields: Any) -> str:
        block = {"tool_use_id": call, "type": "tool_result", "content": content}
        return self.user([block], **fields)

    def raw(self, data: dict[str, Any] | str) -> None:
        """A line that is not part of the chain (bookkeeping), or any text."""
        self.lines.append(data if isinstance(data, str) else json.dumps(data))

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"{line}\n" for line in self.lines), encoding="utf-8")
        return path


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def call(cid: str, name: str = "Bash", **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": cid, "name": name, "input": args or {"command": "ls"}}


def thinking(value: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": f"sig-{len(value)}"}
