"""Typed chat messages that round-trip losslessly to and from OpenAI chat dicts.

Four frozen dataclasses with a ``role`` literal (:class:`SystemMessage`, :class:`UserMessage`,
:class:`AssistantMessage`, :class:`ToolMessage`): strategies work on types, and whatever a
client sent comes back as it was. Each kind may carry provider parts
(:class:`~contextfold.core.parts.Part`: a thinking block, an image, a client's block layout).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from contextfold.core.errors import MessageFormatError
from contextfold.core.parts import PARTS_KEY, Part, decode_parts, encode_parts

__all__ = [
    "AssistantMessage",
    "Message",
    "Part",
    "SystemMessage",
    "ToolCall",
    "ToolMessage",
    "UserMessage",
    "common_prefix",
    "from_openai",
    "message_text",
    "to_openai",
]


@dataclass(frozen=True, slots=True, init=False)
class ToolCall:
    """One function call requested by the assistant.

    ``arguments`` is kept as the JSON text the model produced, so nothing is re-serialized
    (text that is not valid JSON is kept too: a model's malformed call is the agent's to
    answer); a mapping given instead is written as JSON once, here. :meth:`parsed_arguments`
    decodes it.
    """

    id: str
    name: str
    arguments: str

    def __init__(self, id: str, name: str, arguments: str | Mapping[str, Any] = "{}") -> None:
        if not isinstance(id, str):
            raise MessageFormatError(f"must be a string, got {type(id).__name__}", at="id")
        if not isinstance(name, str) or not name:
            raise MessageFormatError("a tool call needs a function name", at="function.name")
        if isinstance(arguments, Mapping):
            arguments = json.dumps(dict(arguments), ensure_ascii=False)
        elif not isinstance(arguments, str):
            raise MessageFormatError(
                f"must be a JSON string or an object, got {type(arguments).__name__}",
                at="function.arguments",
            )
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "arguments", arguments)

    def parsed_arguments(self) -> Any:
        """The decoded arguments; raises :class:`MessageFormatError` on malformed JSON (or
        JSON nested deeper than the decoder goes)."""
        try:
            return json.loads(self.arguments)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise MessageFormatError(
                f"tool call {self.id!r} ({self.name}) has malformed JSON arguments: {exc}"
            ) from exc


@dataclass(frozen=True, slots=True)
class SystemMessage:
    content: str
    parts: tuple[Part, ...] = field(default=(), kw_only=True)
    """Provider parts carried verbatim (:mod:`contextfold.core.parts`)."""
    role: Literal["system"] = field(default="system", init=False)


@dataclass(frozen=True, slots=True)
class UserMessage:
    content: str
    name: str | None = field(default=None, kw_only=True)
    """Optional participant name (OpenAI ``name``)."""
    parts: tuple[Part, ...] = field(default=(), kw_only=True)
    """Provider parts carried verbatim (:mod:`contextfold.core.parts`)."""
    role: Literal["user"] = field(default="user", init=False)


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = field(default=(), kw_only=True)
    """Calls to run; each must be answered by a :class:`ToolMessage` with its id."""
    reasoning: str | None = field(default=None, kw_only=True)
    """Reasoning text the model returned apart from its reply, if any."""
    parts: tuple[Part, ...] = field(default=(), kw_only=True)
    """Provider parts carried verbatim (:mod:`contextfold.core.parts`)."""
    role: Literal["assistant"] = field(default="assistant", init=False)


@dataclass(frozen=True, slots=True)
class ToolMessage:
    content: str
    tool_call_id: str
    name: str | None = field(default=None, kw_only=True)
    """Name of the tool that produced the result (optional in the OpenAI format)."""
    parts: tuple[Part, ...] = field(default=(), kw_only=True)
    """Provider parts carried verbatim (:mod:`contextfold.core.parts`)."""
    role: Literal["tool"] = field(default="tool", init=False)


Message: TypeAlias = SystemMessage | UserMessage | AssistantMessage | ToolMessage


def message_text(message: Message) -> str:
    """All the text a message carries, as one string (what its token count is taken from):
    its content, reasoning and calls, and the text of its parts."""
    if isinstance(message, AssistantMessage):
        texts = [message.reasoning or "", message.content or ""]
        texts.extend(f"{c.name}({c.arguments})" for c in message.tool_calls)
    else:
        texts = [message.content]
    texts.extend(p.text for p in message.parts)
    return "\n".join(t for t in texts if t) if len(texts) > 1 else texts[0]


def to_openai(message: Message, *, parts: bool = True) -> dict[str, Any]:
    """The message as an OpenAI chat-completions dict (canonical form); its provider parts
    under ``contextfold_parts`` unless ``parts`` is false (what a Chat Completions server is sent).

    ``from_openai(to_openai(m)) == m`` for every message, and ``to_openai(from_openai(d)) == d``
    for every dict in this canonical form: an assistant message that calls no tool has string
    content (an empty reply is written ``""``, which every API accepts where it refuses ``null``,
    so ``AssistantMessage(None)`` comes back as ``AssistantMessage("")``); reasoning is written as
    ``reasoning_content`` (vLLM, SGLang, DeepSeek), and ``reasoning`` (OpenRouter) is accepted on
    input.
    """
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if isinstance(message, AssistantMessage):
        if message.content is None and not message.tool_calls:
            out["content"] = ""
        if message.tool_calls:
            out["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in message.tool_calls
            ]
        if message.reasoning is not None:
            out["reasoning_content"] = message.reasoning
    elif isinstance(message, ToolMessage):
        out["tool_call_id"] = message.tool_call_id
    if isinstance(message, UserMessage | ToolMessage) and message.name is not None:
        out["name"] = message.name
    if parts and message.parts:
        out[PARTS_KEY] = encode_parts(message.parts)
    return out


def from_openai(data: Mapping[str, Any]) -> Message:
    """Parse an OpenAI chat dict; raises :class:`MessageFormatError` naming what is wrong and
    where in the message (its ``at``: ``tool_calls[0].function.name``)."""
    if not isinstance(data, Mapping):
        raise MessageFormatError(f"a message must be a JSON object, got {type(data).__name__}")
    role = data.get("role")
    parts = decode_parts(data.get(PARTS_KEY))
    if role == "system" or role == "developer":
        return SystemMessage(_text(data, role), parts=parts)
    if role == "user":
        return UserMessage(_text(data, role), name=_opt_str(data, "name"), parts=parts)
    if role == "assistant":
        content = data.get("content")
        if content is not None:
            content = _text(data, role)
        reasoning = data.get("reasoning_content", data.get("reasoning"))
        if reasoning is not None and not isinstance(reasoning, str):
            raise MessageFormatError("must be a string", at="reasoning_content")
        raw_calls = data.get("tool_calls") or ()
        if not isinstance(raw_calls, Sequence) or isinstance(raw_calls, str):
            raise MessageFormatError("must be an array of tool calls", at="tool_calls")
        calls = tuple(_tool_call(c, i) for i, c in enumerate(raw_calls))
        return AssistantMessage(content, tool_calls=calls, reasoning=reasoning, parts=parts)
    if role == "tool":
        call_id = data.get("tool_call_id")
        if not isinstance(call_id, str):
            raise MessageFormatError(
                "a tool message has no string 'tool_call_id'", at="tool_call_id"
            )
        return ToolMessage(_text(data, role), call_id, name=_opt_str(data, "name"), parts=parts)
    raise MessageFormatError(
        f"unknown message role {role!r}; expected system, user, assistant or tool", at="role"
    )


def _text(data: Mapping[str, Any], role: str) -> str:
    """Content as a string; a list of text parts is joined (non-text parts are refused)."""
    content = data.get("content")
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, list):
        texts = []
        for i, part in enumerate(content):
            if not (isinstance(part, Mapping) and part.get("type") == "text"):
                raise MessageFormatError(
                    f"{role} message has a non-text content part: {part!r:.80}",
                    at=f"content[{i}]",
                )
            texts.append(str(part.get("text", "")))
        return "".join(texts)
    raise MessageFormatError(
        f"{role} message content must be a string, got {type(content).__name__}", at="content"
    )


def _opt_str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None or isinstance(value, str):
        return value
    raise MessageFormatError(f"message field {key!r} must be a string", at=key)


def _tool_call(raw: Any, position: int) -> ToolCall:
    at = f"tool_calls[{position}]"
    if not isinstance(raw, Mapping):
        raise MessageFormatError("a tool call must be an object", at=at)
    kind = raw.get("type", "function")
    if kind != "function":
        raise MessageFormatError(
            f"a {kind!r} tool call; only function tool calls are supported", at=f"{at}.type"
        )
    fn = raw.get("function", raw)
    name = fn.get("name") if isinstance(fn, Mapping) else None
    if not isinstance(name, str) or not name:
        raise MessageFormatError("the tool call has no function name", at=f"{at}.function.name")
    call_id = raw.get("id")
    if not isinstance(call_id, str):
        raise MessageFormatError(f"the tool call ({name}) has no string 'id'", at=f"{at}.id")
    try:
        return ToolCall(call_id, name, fn.get("arguments", "{}"))
    except MessageFormatError as exc:
        raise exc.under(at) from None


def common_prefix(a: Sequence[Message], b: Sequence[Message]) -> int:
    """How many leading messages ``a`` and ``b`` share.

    Found by bisection over tuple comparisons, which run in C and compare by identity first,
    so it costs O(n log n) C-level work instead of a Python loop over every message.
    """
    x, y = tuple(a), tuple(b)
    n = min(len(x), len(y))
    if x[:n] == y[:n]:
        return n
    lo, hi = 0, n  # x[:lo] == y[:lo]; x[:hi] != y[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if x[:mid] == y[:mid] else (lo, mid)
    return lo
