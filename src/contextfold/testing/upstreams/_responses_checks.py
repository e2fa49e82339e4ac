"""What the scripted Responses upstream refuses, with the real API's messages.

The checks are those a proxy can get wrong when it rewrites a conversation (:func:`check_body`,
:func:`check_input`), each problem an :class:`Problem` naming the parameter
(``input[3].content[0]``), as OpenAI does.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass
from typing import Any

__all__ = ["Problem", "check_body", "check_input", "seal"]

_SECRET = b"contextfold-scripted-responses"
ITEM_TYPES = {
    "message", "function_call", "function_call_output", "reasoning", "custom_tool_call",
    "custom_tool_call_output", "local_shell_call", "local_shell_call_output", "item_reference",
    "web_search_call", "file_search_call", "computer_call", "computer_call_output",
    "image_generation_call", "code_interpreter_call", "mcp_call", "mcp_list_tools", "compaction",
}  # fmt: skip
CALLS = {
    "function_call": ("function_call_output", "function call"),
    "custom_tool_call": ("custom_tool_call_output", "custom tool call"),
    "local_shell_call": ("local_shell_call_output", "local shell call"),
}
USER_PARTS = {"input_text", "input_image", "input_file"}
ASSISTANT_PARTS = {"output_text", "refusal"}


@dataclass(frozen=True, slots=True)
class Problem:
    """An OpenAI error: message, the parameter it names, a code; 400 unless ``status`` says."""

    message: str
    param: str | None = None
    code: str | None = None
    status: int = 400


def seal(payload: str) -> str:
    """The ``encrypted_content`` this upstream gives a reasoning item: ``payload`` and its MAC."""
    mac = hmac.new(_SECRET, payload.encode(), hashlib.sha256).digest()
    return f"{base64.b64encode(payload.encode()).decode()}.{base64.b64encode(mac).decode()}"


def _sealed(content: Any) -> bool:
    head, _, _ = str(content).partition(".")
    try:
        payload = base64.b64decode(head, validate=True).decode()
    except (ValueError, UnicodeDecodeError):
        return False
    return hmac.compare_digest(seal(payload), str(content))


def check_body(body: dict[str, Any]) -> Problem | None:
    """The first problem of a request body's own fields (before its input is resolved)."""
    if "model" not in body:
        return Problem(
            "Missing required parameter: 'model'.", "model", "missing_required_parameter"
        )
    source = body.get("input")
    if source is not None and not isinstance(source, str | list):
        return Problem(
            "Invalid type for 'input': expected one of a string or array of input items.",
            "input",
            "invalid_type",
        )
    for i, tool in enumerate(body.get("tools") or []):
        if not isinstance(tool, dict) or "type" not in tool:
            return Problem(f"Missing required parameter: 'tools[{i}].type'.", f"tools[{i}].type")
        if tool["type"] in {"function", "custom"} and "name" not in tool:
            return Problem(f"Missing required parameter: 'tools[{i}].name'.", f"tools[{i}].name")
    return None


def check_input(items: list[Any]) -> Problem | None:
    """The first problem of the whole input (earlier responses' items included).

    The checks a proxy can get wrong when it rewrites a conversation: item and content-part
    types (an assistant message holds ``output_text`` or ``refusal``), every function or custom
    tool call answered by its output and no output without its call, and reasoning items passed
    back exactly as received (their ``encrypted_content`` checks); the model and the input's
    shape are :func:`check_body`'s.
    """
    for i, item in enumerate(items):
        problem = _item(item, f"input[{i}]")
        if problem is not None:
            return problem
    return _pairs(items)


def _item(item: Any, where: str) -> Problem | None:
    if not isinstance(item, dict):
        return Problem(f"Invalid type for '{where}': expected an object.", where, "invalid_type")
    kind = item.get("type", "message")
    if kind not in ITEM_TYPES:
        return Problem(f"Invalid value: '{kind}'.", f"{where}.type", "invalid_value")
    if kind == "message":
        return _message(item, where)
    sealed = item.get("encrypted_content") if kind == "reasoning" else None
    if sealed is not None and not _sealed(sealed):
        return Problem(
            f"The encrypted content for item {item.get('id')} could not be verified.",
            None,
            "invalid_encrypted_content",
        )
    return None


def _message(item: dict[str, Any], where: str) -> Problem | None:
    role = item.get("role")
    if role not in {"user", "assistant", "system", "developer"}:
        return Problem(f"Invalid value: '{role}'.", f"{where}.role", "invalid_value")
    content = item.get("content")
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return Problem(f"Invalid type for '{where}.content'.", f"{where}.content", "invalid_type")
    allowed = ASSISTANT_PARTS if role == "assistant" else USER_PARTS
    for j, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in allowed:
            return Problem(
                f"Invalid value: '{kind}'. Supported values are: "
                + " and ".join(f"'{a}'" for a in sorted(allowed))
                + ".",
                f"{where}.content[{j}]",
                "invalid_value",
            )
    return None


def _pairs(items: list[dict[str, Any]]) -> Problem | None:
    calls = {
        (kind, str(i.get("call_id"))) for i in items if (kind := i.get("type", "message")) in CALLS
    }
    answers = {(i.get("type"), str(i.get("call_id"))) for i in items}
    for kind, call_id in sorted(calls):
        output, name = CALLS[kind]
        if (output, call_id) not in answers:
            return Problem(f"No tool output found for {name} {call_id}.", "input")
    outputs = {out: kind for kind, (out, _) in CALLS.items()}
    for item in items:
        kind = outputs.get(item.get("type", "message"))
        if kind is not None and (kind, str(item.get("call_id"))) not in calls:
            return Problem(
                f"No tool call found for {CALLS[kind][1]} output with call_id "
                f"{item.get('call_id')}.",
                "input",
            )
    return None
