"""An OpenAI Responses upstream: the view written as a Responses body (stateless: the whole
input each time, with the client's options and tools as it sent them); replies, whole or
streamed as Responses events, read back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from contextfold.serve.apis.chat.wire import OPENAI_HEADERS, bearer
from contextfold.serve.apis.responses._read import read_output
from contextfold.serve.apis.responses._request import ResponsesRequest
from contextfold.serve.apis.responses._shapes import check_event, check_response
from contextfold.serve.apis.responses._stops import from_responses
from contextfold.serve.apis.responses._write import write_input
from contextfold.serve.errors import ApiError, UpstreamError, event_status
from contextfold.serve.exchange import Call, ClientRequest, Delta, Reply

__all__ = ["ResponsesReader", "ResponsesWire", "read_response"]

_OWN = ("input", "instructions", "previous_response_id", "stream", "tools")
_MODEL_ITEMS = ("message", "function_call", "custom_tool_call", "local_shell_call")


class ResponsesWire:
    """The OpenAI Responses API as an upstream's (for Responses requests, and those of an
    API whose requests go to every upstream, translated: :func:`_translated`)."""

    api = "responses"
    family = OPENAI_HEADERS
    done = None

    def path(self, call: Call) -> str:
        return "/responses"

    def body(self, call: Call) -> dict[str, Any]:
        request = call.request
        if isinstance(request, ResponsesRequest):
            body = {k: v for k, v in request.body.items() if k not in _OWN}
            given, kinds = list(request.tools), request.call_kinds
        else:  # another API's request, by way of Chat Completions' options and tools
            (body, given), kinds = _translated(request), {}
        instructions, items = write_input(call.messages, kinds)
        if instructions is not None:
            body["instructions"] = instructions
        body["input"] = items
        tools = [*given, *(_tool(t) for t in call.own_tools)]
        if tools:
            body["tools"] = tools
        if call.stream:
            body["stream"] = True
        return body

    def reply(self, data: dict[str, Any], call: Call, where: str) -> Reply:
        return read_response(data, where)

    def reader(self, call: Call, where: str) -> ResponsesReader:
        return ResponsesReader(where)

    def headers(self, given: dict[str, str], key: str | None) -> dict[str, str]:
        return bearer(given, key)


def _translated(request: ClientRequest) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The options and tools of another API's request as a stateless Responses body's."""
    from contextfold.serve.apis.chat.translate import chat_base, chat_tools

    chat = chat_base(request)
    body: dict[str, Any] = {"model": chat["model"], "store": False}
    for key in ("temperature", "top_p"):
        if chat.get(key) is not None:
            body[key] = chat[key]
    if chat.get("max_tokens") is not None:
        body["max_output_tokens"] = chat["max_tokens"]
    fmt = chat.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        body["text"] = {"format": {"type": "json_schema", **fmt.get("json_schema", {})}}
    choice = chat.get("tool_choice")
    if isinstance(choice, dict):
        body["tool_choice"] = {"type": "function", "name": choice["function"]["name"]}
    elif choice is not None:
        body["tool_choice"] = choice
    return body, [_tool(t) for t in chat_tools(request)]


def _tool(schema: dict[str, Any]) -> dict[str, Any]:
    fn = schema["function"]
    tool = {
        "type": "function",
        "name": fn["name"],
        "parameters": fn.get("parameters") or {"type": "object"},
        "strict": False,
    }
    return {**tool, "description": fn["description"]} if fn.get("description") else tool


def read_response(data: dict[str, Any], where: str) -> Reply:
    """A response object as a reply: its output as the assistant message, its usage, why it
    ended."""
    check_response(data, where)
    if data.get("status") == "failed" or data.get("error"):
        raise _failed(data, where)
    try:
        message = read_output(data.get("output") or [], "output")
    except ApiError as exc:
        raise UpstreamError(
            502, f"upstream {where} answered a response whose {exc.message}"
        ) from exc
    usage = data.get("usage") or {}  # counts, checked
    counts = {
        "prompt_tokens": usage.get("input_tokens") or 0,
        "cached_tokens": (usage.get("input_tokens_details") or {}).get("cached_tokens") or 0,
        "completion_tokens": usage.get("output_tokens") or 0,
    }
    incomplete = (data.get("incomplete_details") or {}).get("reason")
    stop = from_responses(data.get("status"), incomplete, bool(message.tool_calls))
    return Reply(message, counts, stop, data)


def _failed(response: dict[str, Any], where: str) -> UpstreamError:
    """A failed response (checked) as the upstream's error, its code kept (Codex reads
    ``server_is_overloaded``, ``rate_limit_exceeded``, ``context_length_exceeded``)."""
    error = response.get("error") or {}
    code = error.get("code") if isinstance(error.get("code"), str) else None
    kind = error.get("type")
    status = event_status(kind, code)
    message = f"upstream {where} failed the response: {error.get('message') or error}"
    return UpstreamError(status, message, code=code, api="responses", error_type=kind)


@dataclass(slots=True)
class ResponsesReader:
    """One streamed response: text deltas passed on, other items whole as they finish, the
    reply from the final ``response.completed`` (or ``incomplete``) event."""

    where: str
    final: dict[str, Any] | None = None

    def add(self, event: str, data: dict[str, Any]) -> list[Delta]:
        kind = data.get("type", event)
        check_event(str(kind), data, self.where)
        if kind == "response.output_text.delta":
            text = data.get("delta")
            return [("text", text)] if isinstance(text, str) and text else []
        if kind == "response.output_item.done":
            item = data.get("item")
            kind = item.get("type") if isinstance(item, dict) else None
            if kind == "message":
                return [("break", None)]
            if kind in _MODEL_ITEMS:
                return [("call", None)]
            if isinstance(item, dict):
                return [("block", item)]
        elif kind in ("response.completed", "response.incomplete"):
            response = data.get("response")
            if not isinstance(response, dict):
                raise UpstreamError(
                    502, f"upstream {self.where} streamed {kind} without a response"
                )
            self.final = response
        elif kind == "response.failed":
            raise _failed(data["response"], self.where)
        return []

    def reply(self) -> Reply:
        if self.final is None:
            raise UpstreamError(
                502, f"upstream {self.where} ended its stream before response.completed"
            )
        return read_response(self.final, self.where)
