"""What the scripted Anthropic upstream refuses, with the real API's messages.

The checks a proxy can get wrong when it rewrites a conversation: required fields, message
roles and non-empty content, block types, every ``tool_use`` answered by a ``tool_result`` in
the next message and no ``tool_result`` without its ``tool_use``, at most four ``cache_control``
blocks, and thinking blocks passed back exactly as they were received (their signature checks).
Each problem names the field, as ``messages.3.content.0: ...``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Any

__all__ = ["MAX_BREAKPOINTS", "SYSTEM_MESSAGES_BETA", "check_body", "sign"]

MAX_BREAKPOINTS = 4
SYSTEM_MESSAGES_BETA = "per-turn-control-2026-07-01"
"""The ``anthropic-beta`` under which messages may also have the role ``system``."""
_SECRET = b"contextfold-scripted-anthropic"
BLOCK_TYPES = {
    "text", "image", "document", "search_result", "tool_use", "tool_result", "thinking",
    "redacted_thinking", "server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
    "code_execution_tool_result", "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result", "mcp_tool_use", "mcp_tool_result",
    "container_upload",
}  # fmt: skip


def sign(thinking: str) -> str:
    """The signature this upstream gives a thinking block's text."""
    mac = hmac.new(_SECRET, thinking.encode(), hashlib.sha256).digest()
    return base64.b64encode(mac).decode()


def check_body(
    body: dict[str, Any], *, count: bool = False, betas: frozenset[str] = frozenset()
) -> str | None:
    """The first problem of a Messages request body (``count``: of a count_tokens body;
    ``betas``: the request's ``anthropic-beta`` names)."""
    required = ("model", "messages") if count else ("model", "max_tokens", "messages")
    for name in required:
        if name not in body:
            return f"{name}: Field required"
    if not isinstance(body["model"], str):
        return "model: Input should be a valid string"
    if not count and (not isinstance(body["max_tokens"], int) or body["max_tokens"] < 1):
        return "max_tokens: Input should be a positive integer"
    messages = body["messages"]
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    return (
        _system(body.get("system"))
        or _messages(messages, system=SYSTEM_MESSAGES_BETA in betas)
        or _pairs(messages)
        or _tools(body)
        or _breakpoints(body)
    )


def _system(system: Any) -> str | None:
    if system is None or isinstance(system, str):
        return None
    if not isinstance(system, list):
        return "system: Input should be a valid string or a list of text blocks"
    for i, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text":
            return f"system.{i}.type: Input should be 'text'"
    return None


def _messages(messages: list[Any], *, system: bool) -> str | None:
    roles = {"user", "assistant", "system"} if system else {"user", "assistant"}
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in roles:
            return f"messages.{i}.role: Input should be " + " or ".join(
                f"'{r}'" for r in sorted(roles)
            )
        content = m.get("content")
        last_assistant = i == len(messages) - 1 and m["role"] == "assistant"
        if content in ("", []) and not last_assistant:
            return (
                f"messages.{i}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        if isinstance(content, str):
            continue
        if not isinstance(content, list):
            return f"messages.{i}.content: Input should be a valid string or list"
        for j, block in enumerate(content):
            problem = _block(block, f"messages.{i}.content.{j}")
            if problem is not None:
                return problem
    return None


def _block(block: Any, where: str) -> str | None:
    if not isinstance(block, dict) or block.get("type") not in BLOCK_TYPES:
        kind = block.get("type") if isinstance(block, dict) else None
        return f"{where}.type: Input tag '{kind}' does not match any of the expected tags"
    if block["type"] == "text" and not block.get("text"):
        return f"{where}: text content blocks must be non-empty"
    if block["type"] == "thinking" and block.get("signature") != sign(block.get("thinking", "")):
        return f"{where}: Invalid `signature` in `thinking` block"
    return None


def _ids(message: dict[str, Any], kind: str, key: str) -> list[str]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [str(b.get(key)) for b in content if b.get("type") == kind]


def _pairs(messages: list[dict[str, Any]]) -> str | None:
    for i, m in enumerate(messages):
        results = _ids(m, "tool_result", "tool_use_id")
        if results and m["role"] == "user":
            before = _ids(messages[i - 1], "tool_use", "id") if i > 0 else []
            stray = [r for r in results if r not in before]
            if stray:
                return (
                    f"messages.{i}.content: unexpected `tool_use_id` found in `tool_result` "
                    f"blocks: {stray[0]}. Each `tool_result` block must have a corresponding "
                    "`tool_use` block in the previous message."
                )
        calls = _ids(m, "tool_use", "id") if m["role"] == "assistant" else []
        following = messages[i + 1] if i + 1 < len(messages) else None
        answered = _ids(following, "tool_result", "tool_use_id") if following else []
        missing = [c for c in calls if c not in answered]
        if missing and following is not None:
            return (
                f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {missing[0]}. Each `tool_use` block must have a "
                "corresponding `tool_result` block in the next message."
            )
    return None


def _tools(body: dict[str, Any]) -> str | None:
    if body.get("tools"):
        return None
    for m in body["messages"]:
        if _ids(m, "tool_use", "id") or _ids(m, "tool_result", "tool_use_id"):
            return "Requests which include `tool_use` or `tool_result` blocks must define tools."
    return None


def _breakpoints(body: dict[str, Any]) -> str | None:
    system = body.get("system")
    blocks = list(body.get("tools") or []) + (system if isinstance(system, list) else [])
    for m in body["messages"]:
        blocks += m["content"] if isinstance(m["content"], list) else []
    found = sum(1 for b in blocks if isinstance(b, dict) and "cache_control" in b)
    if found > MAX_BREAKPOINTS:
        return (
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {found}."
        )
    return None
