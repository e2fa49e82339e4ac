"""Checking what the upstream answers: a completion's message, its usage, a stream's chunks.

The upstream may be any server (or something in front of one) and may answer anything. What
the proxy uses of a reply is checked here, once, and a reply it cannot use is an
:class:`~contextfold.serve.errors.UpstreamError` (a 502) naming the field the upstream got
wrong, so nothing deeper meets a malformed value. Tool-call arguments sent as a JSON value
instead of its text are accepted and written as text.
"""

from __future__ import annotations

import json
from typing import Any

from contextfold.serve.errors import UpstreamError

__all__ = ["check_chunk", "check_message", "reply_message", "usage_numbers"]

_COUNTS = ("prompt_tokens", "completion_tokens")


def reply_message(reply: dict[str, Any], where: str) -> dict[str, Any]:
    """``choices[0].message`` of a completion, checked (see :func:`check_message`)."""
    choices = reply.get("choices")
    if not (isinstance(choices, list) and choices and isinstance(choices[0], dict)):
        raise _wrong(where, "choices[0].message", "is missing", str(reply)[:200])
    return check_message(choices[0].get("message"), where, "choices[0].message")


def check_message(message: Any, where: str, field: str) -> dict[str, Any]:
    """An assistant message as the proxy uses it: string (or null) content and reasoning, and
    tool calls each with a string id, a function name and arguments as text."""
    if not isinstance(message, dict):
        raise _wrong(where, field, "is not an object", message)
    out = {**message, "role": "assistant"}
    for key in ("content", "reasoning_content", "reasoning"):
        if not isinstance(message.get(key), str | None):
            raise _wrong(where, f"{field}.{key}", "is not a string", message[key])
    calls = message.get("tool_calls")
    if calls is None:
        out.pop("tool_calls", None)
        return out
    if not isinstance(calls, list):
        raise _wrong(where, f"{field}.tool_calls", "is not an array", calls)
    out["tool_calls"] = [_call(c, where, f"{field}.tool_calls[{i}]") for i, c in enumerate(calls)]
    return out


def _call(call: Any, where: str, field: str) -> dict[str, Any]:
    if not isinstance(call, dict):
        raise _wrong(where, field, "is not an object", call)
    if not isinstance(call.get("id"), str) or not call["id"]:
        raise _wrong(where, f"{field}.id", "is missing", call.get("id"))
    fn = call.get("function")
    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
        raise _wrong(where, f"{field}.function.name", "is missing", fn)
    arguments = fn.get("arguments", "{}")
    if isinstance(arguments, dict | list):
        arguments = json.dumps(arguments, ensure_ascii=False)
    if not isinstance(arguments, str):
        raise _wrong(where, f"{field}.function.arguments", "is not JSON text", arguments)
    return {**call, "type": "function", "function": {**fn, "arguments": arguments}}


def usage_numbers(usage: Any, where: str) -> dict[str, int]:
    """prompt, cached and completion tokens from an OpenAI-style usage object (vLLM, SGLang,
    llama.cpp, OpenAI and DeepSeek spell the cached count differently); 0 when absent, a 502
    when present but not a count."""
    if not isinstance(usage, dict):
        return {"prompt_tokens": 0, "cached_tokens": 0, "completion_tokens": 0}
    out = {key: _count(usage.get(key), where, f"usage.{key}") for key in _COUNTS}
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    field = "usage.prompt_tokens_details.cached_tokens"
    if cached is None:
        cached, field = usage.get("prompt_cache_hit_tokens"), "usage.prompt_cache_hit_tokens"
    out["cached_tokens"] = _count(cached, where, field)
    return out


def _count(value: Any, where: str, field: str) -> int:
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _wrong(where, field, "is not a count of tokens", value)
    return value


def check_chunk(chunk: dict[str, Any], where: str) -> None:
    """Raise unless a ``chat.completion.chunk`` has the shapes the proxy reads."""
    choices = chunk.get("choices")
    if choices is None:
        return
    if not isinstance(choices, list):
        raise _streamed(where, "choices", "is not an array", choices)
    for i, choice in enumerate(choices):
        if not isinstance(choice, dict):
            raise _streamed(where, f"choices[{i}]", "is not an object", choice)
        if not isinstance(choice.get("finish_reason"), str | None):
            raise _streamed(where, f"choices[{i}].finish_reason", "is not a string", choice)
        delta = choice.get("delta")
        if delta is not None:
            _check_delta(delta, where, f"choices[{i}].delta")


def _check_delta(delta: Any, where: str, field: str) -> None:
    if not isinstance(delta, dict):
        raise _streamed(where, field, "is not an object", delta)
    for key in ("content", "reasoning_content", "reasoning"):
        if not isinstance(delta.get(key), str | None):
            raise _streamed(where, f"{field}.{key}", "is not a string", delta[key])
    calls = delta.get("tool_calls")
    if calls is None:
        return
    if not isinstance(calls, list):
        raise _streamed(where, f"{field}.tool_calls", "is not an array", calls)
    for i, call in enumerate(calls):
        _check_call_delta(call, where, f"{field}.tool_calls[{i}]")


def _check_call_delta(call: Any, where: str, field: str) -> None:
    if not isinstance(call, dict):
        raise _streamed(where, field, "is not an object", call)
    index = call.get("index", 0)
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < 1024:
        raise _streamed(where, f"{field}.index", "is not a small whole number", index)
    fn = call.get("function")
    if fn is not None and not isinstance(fn, dict):
        raise _streamed(where, f"{field}.function", "is not an object", fn)
    for key, value in (("id", call.get("id")), *((k, (fn or {}).get(k)) for k in _FN_KEYS)):
        if not isinstance(value, str | None):
            raise _streamed(where, f"{field}.{key}", "is not a string", value)


_FN_KEYS = ("name", "arguments")


def _wrong(where: str, field: str, problem: str, value: Any) -> UpstreamError:
    text = f"upstream {where} answered a reply whose {field} {problem}: {_show(value)}"
    return UpstreamError(502, text)


def _streamed(where: str, field: str, problem: str, value: Any) -> UpstreamError:
    text = f"upstream {where} streamed a chunk whose {field} {problem}: {_show(value)}"
    return UpstreamError(502, text)


def _show(value: Any) -> str:
    return repr(value)[:200]
