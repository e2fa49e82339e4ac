"""One Claude Code conversation put back together as the Anthropic messages it sent.

Claude Code logs a reply one content block a line, each with the reply's message id; the
blocks of one id are one assistant message (:func:`replies`), wherever its lines are (a parallel
call's block may hang off the path). Each call's result is put right after the message that
made it, as the API requires, wherever its line is; a result whose call is not in the
conversation (a retried reply's, left behind on its branch) is dropped and counted. Consecutive
user lines are one user message, as Claude Code sends them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextfold.importers.claude_code.lines import Line
from contextfold.importers.claude_code.threads import Thread

__all__ = ["SYNTHETIC", "Conversation", "Reply", "conversation"]

SYNTHETIC = "<synthetic>"
"""The model Claude Code names on replies it wrote itself (an API error shown as a reply):
never sent, never billed."""


@dataclass(frozen=True, slots=True)
class Reply:
    """One assistant message: its content blocks and the lines they came from."""

    lines: tuple[Line, ...]
    content: tuple[Any, ...]
    """Its blocks as logged (the reader checks them: a malformed one is an error naming it)."""

    @property
    def synthetic(self) -> bool:
        return self.lines[0].message.get("model") == SYNTHETIC

    @property
    def calls(self) -> list[str]:
        return [str(b.get("id")) for b in self.content if _kind(b) == "tool_use"]


@dataclass(slots=True)
class Conversation:
    """The messages as the API took them (role and content), the line each began at, the
    reply behind each assistant message, and the attachments met after each message."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    origins: list[int] = field(default_factory=list)
    replies: list[Reply] = field(default_factory=list)
    attachments: list[tuple[int, Line]] = field(default_factory=list)
    """Each attachment with the index of the message before it (-1: before any)."""
    orphans: int = 0
    """Tool results whose call is not in the conversation, dropped."""
    synthetic: int = 0
    """Replies Claude Code wrote itself (:data:`SYNTHETIC`), left out."""

    def add(self, role: str, blocks: list[Any], line: int) -> None:
        self.messages.append({"role": role, "content": blocks})
        self.origins.append(line)


def replies(thread: Thread) -> dict[str, Reply]:
    """Each message id's reply, its blocks in the order they were written (a block logged
    twice, as a reply both streamed and sent whole, once)."""
    grouped: dict[str, list[Line]] = {}
    for line in thread.lines:
        if line.kind == "assistant":
            grouped.setdefault(_message_id(line), []).append(line)
    out = {}
    for key, lines in grouped.items():
        blocks: list[Any] = []
        for line in lines:
            for block in _blocks(line.message.get("content")):
                if block not in blocks:
                    blocks.append(block)
        out[key] = Reply(tuple(lines), tuple(blocks))
    return out


def conversation(thread: Thread) -> Conversation:
    """The thread's path as messages, each reply followed by its calls' results."""
    found = replies(thread)
    results = _results(thread)
    out = Conversation()
    done: set[str] = set()
    answered: set[str] = set()
    for line in thread.path:
        if line.kind == "assistant":
            _reply(out, found[_message_id(line)], done, results, answered)
        elif line.kind == "user":
            _user(out, line, answered)
        elif line.kind == "attachment":
            out.attachments.append((len(out.messages) - 1, line))
    if out.messages and out.messages[-1] == {"role": "user", "content": []}:
        out.messages.pop()
        out.origins.pop()
    return out


def _reply(
    out: Conversation,
    reply: Reply,
    done: set[str],
    results: Mapping[str, Mapping[str, Any]],
    answered: set[str],
) -> None:
    key = _message_id(reply.lines[0])
    if key in done:
        return
    done.add(key)
    if reply.synthetic:
        out.synthetic += 1
        return
    if out.messages and out.messages[-1] == {"role": "user", "content": []}:
        out.messages.pop()  # the previous reply called nothing and nobody spoke since
        out.origins.pop()
    out.add("assistant", list(reply.content), reply.lines[0].number)
    out.replies.append(reply)
    blocks = [results[c] for c in reply.calls if c in results]
    answered.update(c for c in reply.calls if c in results)
    out.add("user", blocks, reply.lines[-1].number)


def _user(out: Conversation, line: Line, answered: set[str]) -> None:
    blocks = []
    for block in _blocks(line.message.get("content")):
        if _kind(block) != "tool_result":
            blocks.append(block)
        elif block.get("tool_use_id") not in answered:
            out.orphans += 1
    if not blocks:
        return
    if out.messages and out.messages[-1]["role"] == "user":
        if not out.messages[-1]["content"]:
            out.origins[-1] = line.number
        out.messages[-1]["content"].extend(blocks)
    else:
        out.add("user", blocks, line.number)


def _results(thread: Thread) -> dict[str, Mapping[str, Any]]:
    """Each call's result, by its call's id: the one on the path where there are several."""
    out: dict[str, Mapping[str, Any]] = {}
    on_path = {line.number for line in thread.path}
    for line in sorted(thread.lines, key=lambda x: (x.number in on_path, x.number)):
        if line.kind == "user":
            for block in _blocks(line.message.get("content")):
                if _kind(block) == "tool_result" and isinstance(block.get("tool_use_id"), str):
                    out[block["tool_use_id"]] = block
    return out


def _message_id(line: Line) -> str:
    value = line.message.get("id")
    return value if isinstance(value, str) else f"line-{line.number}"


def _blocks(content: Any) -> Sequence[Any]:
    """A message's content as blocks (a string is one text block, as the API reads it;
    anything else is passed on for the reader to refuse, naming it)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else [content]


def _kind(block: Any) -> Any:
    return block.get("type") if isinstance(block, Mapping) else None
