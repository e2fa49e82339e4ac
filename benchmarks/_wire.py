"""Recorded OpenAI chat conversations as Anthropic Messages and OpenAI Responses requests.

What benchmarks/protocol_cost.py sends: a conversation so far (OpenAI message dicts, as
:func:`contextfold.core.messages.to_openai` gives them) becomes one request body of either API,
shaped the way the agent CLIs shape theirs (docs/serve/clients-notes.md): for Messages, the
system prompt as a text block and the tools every call, with Claude Code's breakpoints (the
system prompt and the last block of the newest message); for Responses, Codex's stateless
whole input every call (``store: false``). The recorded assistant turn that answered the call
becomes the scripted upstream's reply in the API's own terms.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from contextfold.testing.upstreams.anthropic import AnthropicReply
from contextfold.testing.upstreams.responses import ResponsesReply

__all__ = [
    "EMPTY",
    "anthropic_reply",
    "messages_body",
    "responses_body",
    "responses_reply",
    "tool_names",
]

CACHED = {"type": "ephemeral"}
EMPTY = "(no content)"
"""What an assistant turn with neither text nor calls is sent as (Claude Code does the same)."""


def tool_names(conversation: Sequence[dict[str, Any]]) -> list[str]:
    """Every tool a recorded session called (offered on every call, as the CLIs do)."""
    names = {c["function"]["name"] for m in conversation for c in m.get("tool_calls") or []}
    return sorted(names)


def _arguments(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return {"raw": raw}
    return value if isinstance(value, dict) else {"value": value}


def _text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def anthropic_reply(message: dict[str, Any]) -> AnthropicReply:
    """A recorded assistant message as content blocks (tool calls keep their ids)."""
    blocks: list[dict[str, Any]] = []
    if _text(message):
        blocks.append({"type": "text", "text": _text(message)})
    for call in message.get("tool_calls") or []:
        fn = call["function"]
        use = {"type": "tool_use", "id": call["id"], "name": fn["name"]}
        blocks.append({**use, "input": _arguments(fn["arguments"])})
    return blocks or EMPTY


def _anthropic_messages(conversation: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in conversation:
        if m["role"] == "assistant":
            reply = anthropic_reply(m)
            out.append(
                {
                    "role": "assistant",
                    "content": reply
                    if isinstance(reply, list)
                    else [{"type": "text", "text": reply}],
                }
            )
            continue
        if m["role"] == "tool":
            block = {"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": _text(m)}
        elif m["role"] == "user":
            block = {"type": "text", "text": _text(m) or EMPTY}
        else:
            continue  # the system prompt is sent apart
        if out and out[-1]["role"] == "user":
            out[-1]["content"].append(block)  # tool results, then a user's words: one turn
        else:
            out.append({"role": "user", "content": [block]})
    return out


def messages_body(
    system: str | None,
    conversation: Sequence[dict[str, Any]],
    tools: Sequence[str],
    *,
    stream: bool = False,
) -> dict[str, Any]:
    """A Messages request for the call after ``conversation``, with Claude Code's breakpoints."""
    messages = _anthropic_messages(conversation)
    last = messages[-1]
    last["content"][-1] = {**last["content"][-1], "cache_control": CACHED}
    body: dict[str, Any] = {"model": "claude-bench", "max_tokens": 4096, "messages": messages}
    if system:
        body["system"] = [{"type": "text", "text": system, "cache_control": CACHED}]
    if tools:
        schema = {"type": "object"}
        body["tools"] = [{"name": n, "description": n, "input_schema": schema} for n in tools]
    return {**body, "stream": stream}


def responses_reply(message: dict[str, Any]) -> ResponsesReply:
    """A recorded assistant message as output items (tool calls keep their ids)."""
    items: list[dict[str, Any]] = []
    if _text(message):
        part = {"type": "output_text", "text": _text(message), "annotations": []}
        items.append({"type": "message", "role": "assistant", "content": [part]})
    for call in message.get("tool_calls") or []:
        fn = call["function"]
        items.append(
            {
                "type": "function_call",
                "call_id": call["id"],
                "name": fn["name"],
                "arguments": fn["arguments"],
            }
        )
    return items or EMPTY


def _items(conversation: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in conversation:
        if m["role"] == "assistant":
            reply = responses_reply(m)
            out += (
                reply
                if isinstance(reply, list)
                else [
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": reply}],
                    }
                ]
            )
        elif m["role"] == "tool":
            out.append(
                {"type": "function_call_output", "call_id": m["tool_call_id"], "output": _text(m)}
            )
        elif m["role"] == "user":
            out.append({"role": "user", "content": [{"type": "input_text", "text": _text(m)}]})
    return out


def responses_body(
    system: str | None,
    conversation: Sequence[dict[str, Any]],
    tools: Sequence[str],
    *,
    stream: bool = False,
) -> dict[str, Any]:
    """A stateless Responses request for the call after ``conversation``, as Codex sends."""
    body: dict[str, Any] = {"model": "gpt-bench", "input": _items(conversation), "store": False}
    if system:
        body["instructions"] = system
    if tools:
        schema = {"type": "object"}
        body["tools"] = [{"type": "function", "name": n, "parameters": schema} for n in tools]
    return {**body, "stream": stream}
