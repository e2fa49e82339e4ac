"""What the scripted upstreams bill: the prompt as the model reads it, and what it generates.

A provider bills the tokens its model reads and writes, not the request's JSON: a message is
its role and its text, a tool call its name and arguments; ids, statuses, key names and JSON
escapes cost nothing. So the upstreams count (4 characters a token) each part's text under a
short header, as a chat template renders it, and an image or other opaque part as its JSON.
"""

from __future__ import annotations

import json
from typing import Any

from contextfold.testing.upstreams._http import tokens

__all__ = [
    "anthropic_block_text",
    "anthropic_blocks",
    "generated_tokens",
    "response_item_text",
    "responses_prompt",
]

_UNBILLED = frozenset({"cache_control", "id", "status", "call_id", "tool_use_id", "citations"})


def _opaque(part: dict[str, Any]) -> str:
    """A part the model reads as a whole (an image, a document): its JSON, ids left out."""
    return json.dumps({k: v for k, v in part.items() if k not in _UNBILLED}, sort_keys=True)


def _texts(content: Any) -> str:
    """A content that is a string or a list of text parts (or other parts, then opaque)."""
    if isinstance(content, str):
        return content
    return "".join(anthropic_block_text(p) for p in content or [] if isinstance(p, dict))


def anthropic_block_text(block: dict[str, Any]) -> str:
    """One Messages content block as the model reads it."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "thinking":
        return str(block.get("thinking", ""))
    if kind in {"tool_use", "server_tool_use"}:
        return f"{block.get('name')}{json.dumps(block.get('input'), sort_keys=True)}"
    if kind == "tool_result":
        return _texts(block.get("content"))
    return _opaque(block)


def anthropic_blocks(body: dict[str, Any]) -> list[tuple[str, str | None]]:
    """The cacheable blocks of a Messages request in prompt order: each block as the model
    reads it under a short header (the role on a message's first block, the block's type), and
    the lifetime of its ``cache_control`` when it carries one (a breakpoint: ``5m``, the
    default, or ``1h``), else None."""
    out: list[tuple[str, str | None]] = []
    for tool in body.get("tools") or []:
        out.append((f"tool\n{_opaque(tool)}", _ttl(tool)))
    system = body.get("system")
    for block in [{"type": "text", "text": system}] if isinstance(system, str) else system or []:
        out.append((f"system\n{anthropic_block_text(block)}", _ttl(block)))
    for message in body.get("messages") or []:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for i, block in enumerate(blocks or []):
            head = f"{message.get('role')}\n" if i == 0 else ""
            text = f"{head}{block.get('type')}\n{anthropic_block_text(block)}"
            out.append((text, _ttl(block)))
    return out


def _ttl(block: dict[str, Any]) -> str | None:
    """The lifetime of a block's cache breakpoint (None: it has none)."""
    mark = block.get("cache_control")
    if not isinstance(mark, dict):
        return None
    return "1h" if mark.get("ttl") == "1h" else "5m"


def response_item_text(item: dict[str, Any]) -> str:
    """One Responses input or output item as the model reads it, under its role or type."""
    kind = item.get("type", "message")
    if kind == "message":
        content = item.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        text = "".join(
            str(p["text"]) if "text" in p else _opaque(p)
            for p in parts or []
            if isinstance(p, dict)
        )
        return f"{item.get('role')}\n{text}"
    if kind == "function_call":
        return f"{kind}\n{item.get('name')}{item.get('arguments', '')}"
    if kind == "custom_tool_call":
        return f"{kind}\n{item.get('name')}{item.get('input', '')}"
    if kind in {"function_call_output", "custom_tool_call_output"}:
        output = item.get("output")
        return f"{kind}\n{output if isinstance(output, str) else _texts(output)}"
    return f"{kind}\n{_opaque(item)}"


def responses_prompt(body: dict[str, Any], items: list[dict[str, Any]]) -> str:
    """The prompt as the cache sees it and bills it: tools, instructions, then each item.

    Ids and statuses are left out, so a client that resends the whole input statelessly hits
    the same prefix as a ``previous_response_id``.
    """
    parts = [json.dumps(body.get("tools") or [], sort_keys=True), str(body.get("instructions"))]
    return "\n".join(parts + [response_item_text(item) for item in items])


def generated_tokens(texts: list[str]) -> int:
    """The output tokens of a reply whose parts read as ``texts``."""
    return sum(tokens(t) for t in texts)
