"""A Gemini upstream (``--upstream gemini:URL``): the view written as a ``generateContent``
body, the model named in the path, replies read back whole or streamed (``?alt=sse``,
:mod:`._stream`).

A Gemini client's options, tools and safety settings go as it sent them, the strategy's tools
declared beside its own; another API's request is translated by way of Chat Completions'
options (:mod:`._translate`), so a Gemini upstream serves every API.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from contextfold.serve.apis.gemini._errors import read_usage
from contextfold.serve.apis.gemini._read import read_model
from contextfold.serve.apis.gemini._request import GeminiRequest
from contextfold.serve.apis.gemini._stream import GeminiReader, check_response, stop_of
from contextfold.serve.apis.gemini._translate import declarations, gemini_options
from contextfold.serve.apis.gemini._write import write_contents
from contextfold.serve.errors import ApiError, UpstreamError
from contextfold.serve.exchange import Call, HeaderFamily, Reply

__all__ = ["GEMINI_HEADERS", "MAX_MODEL", "GeminiWire", "model_of", "model_path"]

GEMINI_HEADERS = HeaderFamily(
    "gemini", ("x-goog-api-client", "x-goog-user-project"), key="x-goog-api-key"
)
"""Google's headers, and its clients' own key (``x-goog-api-key``, or ``?key=``)."""

_OWN = ("model", "contents", "systemInstruction", "tools")


MAX_MODEL = 1000
"""Characters a model name may have in a Gemini upstream's URL, once URL-encoded (Google's
are a few dozen; a URL of 65,536 characters is past what any client library builds)."""


def model_of(body: dict[str, Any]) -> str:
    """The model a call names, as Gemini's paths do (no ``models/``)."""
    return str(body.get("model", "")).removeprefix("models/")


def model_path(model: str, method: str) -> str:
    """``/models/{model}:{method}``, the model URL-encoded; a 400 naming ``model`` when it
    is too long to go in a URL."""
    quoted = quote(model.removeprefix("models/"), safe="")
    if len(quoted) > MAX_MODEL:
        problem = (
            f"a model name of {len(quoted):,} characters (URL-encoded) cannot name a Gemini "
            f"upstream's model, which goes in its URL (at most {MAX_MODEL:,})"
        )
        raise ApiError(400, problem, param="model")
    return f"/models/{quoted}:{method}"


class GeminiWire:
    """The Gemini API as an upstream's (for requests of every API)."""

    api = "gemini"
    family = GEMINI_HEADERS
    done = None

    def path(self, call: Call) -> str:
        method = "streamGenerateContent?alt=sse" if call.stream else "generateContent"
        return model_path(model_of(call.request.body), method)

    def body(self, call: Call) -> dict[str, Any]:
        request = call.request
        system, contents = write_contents(call.messages)
        own = declarations(call.own_tools)
        if isinstance(request, GeminiRequest):  # its tools as sent (not split)
            body = {k: v for k, v in request.body.items() if k not in _OWN}
            tools = [dict(t) for t in request.body.get("tools") or ()]
        else:
            from contextfold.serve.apis.chat.translate import chat_base, chat_tools

            body = gemini_options(chat_base(request))
            tools = [{"functionDeclarations": declarations(chat_tools(request))}]
        if own:
            _declare(tools, own)
        tools = [t for t in tools if t != {"functionDeclarations": []}]
        if system is not None:
            body["systemInstruction"] = system
        body["contents"] = contents
        if tools:
            body["tools"] = tools
        return body

    def reply(self, data: dict[str, Any], call: Call, where: str) -> Reply:
        candidate = check_response(data, where)
        message = _assistant((candidate.get("content") or {}).get("parts") or [], where)
        stop = stop_of(data, candidate, bool(message.tool_calls))
        return Reply(message, read_usage(data.get("usageMetadata")), stop, data)

    def reader(self, call: Call, where: str) -> GeminiReader:
        return GeminiReader(where)

    def headers(self, given: dict[str, str], key: str | None) -> dict[str, str]:
        if key and not any(k.lower() in ("authorization", "x-goog-api-key") for k in given):
            return {**given, "x-goog-api-key": key}
        return given


def _declare(tools: list[dict[str, Any]], own: list[dict[str, Any]]) -> None:
    """The strategy's declarations added to the first tool declaring functions (or a new one)."""
    for tool in tools:
        if "functionDeclarations" in tool:
            tool["functionDeclarations"] = [*tool["functionDeclarations"], *own]
            return
    tools.append({"functionDeclarations": own})


def _assistant(parts: Any, where: str) -> Any:
    try:
        return read_model(parts, "content.parts")
    except ApiError as exc:
        raise UpstreamError(502, f"upstream {where} answered a reply whose {exc.message}") from exc
