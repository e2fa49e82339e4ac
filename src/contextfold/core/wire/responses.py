"""OpenAI Responses items read into the conversation's messages: what serve's Responses API
reads from a client and the Codex CLI importer reads from its rollouts, in one representation.

Strategies see only the four message kinds; everything they have no field for (reasoning with
its ``encrypted_content``, an item's id and status, images) stays in the message's layout
(:mod:`~contextfold.core.wire.layout`). Anything malformed is a
:class:`~contextfold.core.errors.MessageFormatError` naming the field (serve answers a 400).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from contextfold.core.errors import MessageFormatError
from contextfold.core.grouping import Labeled
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.core.parts import Part
from contextfold.core.tokens import approx_tokens
from contextfold.core.wire.layout import layout_part, raw, template_of
from contextfold.core.wire.media import media_tokens

__all__ = ["API", "OUTPUT_ITEMS", "read_input", "read_output"]

API = "responses"
_CALLS = {"function_call": "arguments", "custom_tool_call": "input", "local_shell_call": "action"}
_OUTPUTS = {"function_call_output", "custom_tool_call_output", "local_shell_call_output"}
OUTPUT_ITEMS = {
    "reasoning",
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "web_search_call",
    "file_search_call",
    "computer_call",
    "image_generation_call",
    "code_interpreter_call",
    "mcp_call",
    "mcp_list_tools",
    "mcp_approval_request",
}
"""Item types the model produces (besides its message): they belong to its turn."""
_TEXTS = {"input_text", "output_text"}
_MEDIA = {"input_image", "input_file", "input_audio"}


@dataclass(slots=True)
class _Run:
    kind: str  # "user", "system", "tool" or "assistant"
    label: str
    template: list[Any] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    call_id: str = ""
    shown: list[str] = field(default_factory=list)
    tokens: int = 0


def read_input(raw: Any, where: str = "input", *, system_first: bool = False) -> list[Labeled]:
    """``input`` (a string, or items) as labelled messages for the grouper; a
    :class:`MessageFormatError` naming the field for anything malformed. With ``system_first``
    (a request without ``instructions``), a leading system or developer message of text alone is a
    :class:`~contextfold.core.messages.SystemMessage`, which the grouper takes for the system
    prompt (LangChain sends its prompt so), written back as it came.

    A ``message`` item of the user (or of the developer or system, inside the input) is a
    :class:`~contextfold.core.messages.UserMessage`; the items the model produced in one turn
    (``reasoning``, its ``message``, ``function_call``, ``custom_tool_call`` and
    ``local_shell_call`` as Codex sends them, server tool calls) are one
    :class:`~contextfold.core.messages.AssistantMessage` whose calls are the function, custom
    and shell calls; each ``*_call_output`` is a :class:`~contextfold.core.messages.ToolMessage`.
    Everything the message kinds have no field for (reasoning with its ``encrypted_content``,
    an item's id and status, images, a developer role) stays in the message's layout
    (:mod:`~contextfold.core.wire.layout`), so serve writes it back as it came. A request's
    ``instructions`` is its system message.
    """
    if isinstance(raw, str):
        return [(where, UserMessage(raw))]
    if not isinstance(raw, list):
        raise _bad(where, "must be a string or an array of input items")
    runs: list[_Run] = []
    for i, item in enumerate(raw):
        _item(runs, item, f"{where}[{i}]")
    if system_first and runs and _plain_system(runs[0]):
        runs[0].kind = "system"
    return [(run.label, _message(run)) for run in runs]


def _plain_system(run: _Run) -> bool:
    """A run of one system or developer message item with text parts alone."""
    if run.kind != "user" or len(run.template) != 1 or not "".join(run.texts):
        return False
    item = run.template[0]
    content = item.get("content")
    parts = content if isinstance(content, list) else []
    return item.get("role") in ("system", "developer") and not any("$raw" in p for p in parts)


def read_output(items: list[Any], where: str) -> AssistantMessage:
    """A response's ``output`` items as the one assistant message they are."""
    runs: list[_Run] = [_Run("assistant", where)]
    for i, item in enumerate(items):
        _item(runs, item, f"{where}[{i}]")
    messages = [_message(run) for run in runs]
    if len(messages) != 1 or not isinstance(messages[0], AssistantMessage):
        raise _bad(where, "a response's output must be items of the model's own turn")
    return messages[0]


def _item(runs: list[_Run], item: Any, at: str) -> None:
    if not isinstance(item, dict):
        raise _bad(at, "an input item must be an object")
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "message":
        _message_item(runs, item, at)
    elif kind in _CALLS:
        run = _assistant(runs, at)
        taken = ("call_id", "name", _CALLS[kind])
        run.template.append(template_of(item, *taken, call=len(run.calls)))
        run.calls.append(_call(item, kind, at))
    elif kind in _OUTPUTS:
        runs.append(_output(item, kind, at))
    elif kind in OUTPUT_ITEMS:
        _raw(_assistant(runs, at), item)
    elif isinstance(kind, str):
        if not runs:
            runs.append(_Run("user", at))
        _raw(runs[-1], item)
    else:
        raise _bad(f"{at}.type", "an input item needs a type")


def _message_item(runs: list[_Run], item: dict[str, Any], at: str) -> None:
    role = item.get("role")
    if role not in ("user", "assistant", "system", "developer"):
        raise _bad(f"{at}.role", f"must be user, assistant, system or developer, got {role!r}")
    run = _assistant(runs, at) if role == "assistant" else _Run("user", at)
    if role != "assistant":
        runs.append(run)
    content = item.get("content")
    if isinstance(content, str):
        run.texts.append(content)
        place: int | list[Any] = len(content)
    elif isinstance(content, list):
        place = [_content_part(run, p, f"{at}.content[{k}]") for k, p in enumerate(content)]
    else:
        raise _bad(f"{at}.content", "must be a string or an array of content parts")
    run.template.append(template_of(item, content=place))


def _content_part(run: _Run, part: Any, at: str) -> Any:
    if not isinstance(part, dict) or not isinstance(part.get("type"), str):
        raise _bad(at, "a content part must be an object with a type")
    if part["type"] in _TEXTS:
        text = part.get("text")
        if not isinstance(text, str):
            raise _bad(f"{at}.text", "must be a string")
        run.texts.append(text)
        return template_of(part, text=len(text))
    _shown(run, part)
    return raw(part)


def _output(item: dict[str, Any], kind: str, at: str) -> _Run:
    call_id = item.get("call_id", item.get("id") if kind == "local_shell_call_output" else None)
    if not isinstance(call_id, str) or not call_id:
        raise _bad(f"{at}.call_id", "a call's output needs the call_id of the call it answers")
    run = _Run("tool", at, call_id=call_id)
    output = item.get("output", "")
    if isinstance(output, str):
        run.texts.append(output)
        place: int | list[Any] = len(output)
    elif isinstance(output, list):
        place = [_content_part(run, p, f"{at}.output[{k}]") for k, p in enumerate(output)]
    else:
        raise _bad(f"{at}.output", "must be a string or an array of content parts")
    run.template.append(template_of(item, "call_id", output=place))
    return run


def _assistant(runs: list[_Run], at: str) -> _Run:
    if not runs or runs[-1].kind != "assistant":
        runs.append(_Run("assistant", at))
    return runs[-1]


def _call(item: dict[str, Any], kind: str, at: str) -> ToolCall:
    call_id = item.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        raise _bad(f"{at}.call_id", "a call needs a string call_id")
    if kind == "local_shell_call":
        action = item.get("action")
        if not isinstance(action, dict):
            raise _bad(f"{at}.action", "must be an object")
        return ToolCall(call_id, "local_shell", json.dumps(action, ensure_ascii=False))
    name, value = item.get("name"), item.get(_CALLS[kind], "")
    if not isinstance(name, str) or not name:
        raise _bad(f"{at}.name", "a call needs the tool's name")
    if not isinstance(value, str):
        raise _bad(f"{at}.{_CALLS[kind]}", "must be a string")
    return ToolCall(call_id, name, value)


def _raw(run: _Run, item: dict[str, Any]) -> None:
    run.template.append(raw(item))
    _shown(run, item)


def _shown(run: _Run, item: dict[str, Any]) -> None:
    kind = item["type"]
    if kind in _MEDIA:
        data = item.get("image_url") or item.get("file_data")
        encoded = data.partition(",")[2] if isinstance(data, str) else None
        run.tokens += media_tokens(encoded)
        run.shown.append(f"[{kind}]")
    elif kind == "reasoning":
        summary = item.get("summary") or []
        texts = [s.get("text", "") for s in summary if isinstance(s, dict)]
        run.shown.append("\n".join(t for t in texts if isinstance(t, str)) or "[reasoning]")
        secret = item.get("encrypted_content")
        run.tokens += approx_tokens(len(secret)) if isinstance(secret, str) else 0
    else:
        run.shown.append(json.dumps(item, ensure_ascii=False, sort_keys=True))


def _message(run: _Run) -> Message:
    text = "".join(run.texts)
    parts: tuple[Part, ...] = ()
    if run.template != _canonical(run, text):
        shown = "\n".join(run.shown)
        parts = (layout_part(API, run.template, text, shown=shown, tokens=run.tokens),)
    if run.kind == "assistant":
        return AssistantMessage(text, tool_calls=tuple(run.calls), parts=parts)
    if run.kind == "tool":
        return ToolMessage(text, run.call_id, parts=parts)
    if run.kind == "system":
        return SystemMessage(text, parts=parts)
    return UserMessage(text, parts=parts)


def _canonical(run: _Run, text: str) -> list[Any]:
    """The template the writer makes of a message with no layout (a system message has none:
    without a layout it is written as ``instructions``)."""
    if run.kind == "system":
        return []
    if run.kind == "tool":
        return [{"type": "function_call_output", "output": len(text)}]
    if run.kind == "user":
        part = {"type": "input_text", "text": len(text)}
        return [{"type": "message", "role": "user", "content": [part]}]
    part = {"type": "output_text", "text": len(text), "annotations": []}
    head: list[Any] = [{"type": "message", "role": "assistant", "content": [part]}] if text else []
    return head + [{"type": "function_call", "$call": k} for k in range(len(run.calls))]


def _bad(where: str, problem: str) -> MessageFormatError:
    return MessageFormatError(problem, at=where)
