"""A Gemini request's options and tools for an upstream of another API, and another API's
for a Gemini upstream, by way of Chat Completions' (:mod:`~contextfold.serve.apis.chat.translate`).

``generationConfig`` and ``toolConfig`` map to Chat Completions' options one for one; function
declarations are function tools (a ``parameters`` schema's upper-case OpenAPI types in lower case).
Tools that run on Google's servers (``googleSearch``) are not given to another API's upstream, as
:func:`~contextfold.serve.apis.chat.translate.chat_tools` does with others'."""

from __future__ import annotations

from typing import Any

from contextfold.serve.apis.chat.to_chat import function_tool

__all__ = ["chat_options", "chat_tool_of", "declarations", "gemini_options"]

_TO_CHAT = {"temperature": "temperature", "topP": "top_p", "maxOutputTokens": "max_tokens",
            "stopSequences": "stop", "seed": "seed", "presencePenalty": "presence_penalty",
            "frequencyPenalty": "frequency_penalty"}  # fmt: skip
_FROM_CHAT = {v: k for k, v in _TO_CHAT.items()} | {"max_completion_tokens": "maxOutputTokens"}


def chat_options(body: dict[str, Any]) -> dict[str, Any]:
    """A Gemini body's options as a Chat Completions body's (no messages, tools or stream)."""
    out: dict[str, Any] = {"model": body["model"]}
    config = body.get("generationConfig") or {}
    for key, name in _TO_CHAT.items():
        if key in config:
            out[name] = config[key]
    schema = config.get("responseJsonSchema", config.get("responseSchema"))
    if config.get("responseMimeType") == "application/json" and isinstance(schema, dict):
        # Gemini accepts OpenAPI's spelling of types in either field (Gemini CLI sends it)
        named = {"name": "response", "schema": _lower(schema)}
        out["response_format"] = {"type": "json_schema", "json_schema": named}
    calling = (body.get("toolConfig") or {}).get("functionCallingConfig") or {}
    mode, allowed = calling.get("mode"), calling.get("allowedFunctionNames") or []
    if mode == "NONE":
        out["tool_choice"] = "none"
    elif mode in ("ANY", "VALIDATED") and len(allowed) == 1:
        out["tool_choice"] = {"type": "function", "function": {"name": allowed[0]}}
    elif mode in ("ANY", "VALIDATED"):
        out["tool_choice"] = "required"
    return out


def chat_tool_of(tool: dict[str, Any]) -> dict[str, Any] | None:
    """A tool of one function declaration (:func:`~._request.split_tools`) as a Chat
    Completions function tool; None for one declaring none (it runs on Google's servers)."""
    declared: list[dict[str, Any]] = tool.get("functionDeclarations") or []
    if len(declared) != 1:
        return None
    fn = declared[0]
    schema = fn.get("parametersJsonSchema")
    if schema is None:
        schema = _lower(fn.get("parameters") or {"type": "object"})
    return function_tool(fn["name"], schema, given=fn)


def _lower(schema: Any) -> Any:
    """An OpenAPI schema with its types in JSON Schema's spelling (``OBJECT``: ``object``)."""
    if isinstance(schema, list):
        return [_lower(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _lower(v) for k, v in schema.items()}
    if isinstance(out.get("type"), str):
        out["type"] = out["type"].lower()
    return out


def declarations(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat Completions function tools as Gemini function declarations."""
    out = []
    for tool in tools:
        fn = tool["function"]
        declared = {"name": fn["name"], "parametersJsonSchema": fn.get("parameters") or
                    {"type": "object"}}  # fmt: skip
        if fn.get("description"):
            declared["description"] = fn["description"]
        out.append(declared)
    return out


def gemini_options(chat: dict[str, Any]) -> dict[str, Any]:
    """A Chat Completions body's options (:func:`~contextfold.serve.apis.chat.translate.chat_base`)
    as
    a Gemini body's ``generationConfig`` and ``toolConfig``."""
    config: dict[str, Any] = {}
    for name, key in _FROM_CHAT.items():
        if chat.get(name) is not None:
            config[key] = chat[name]
    if isinstance(config.get("stopSequences"), str):
        config["stopSequences"] = [config["stopSequences"]]
    fmt = chat.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        config["responseMimeType"] = "application/json"
        config["responseJsonSchema"] = (fmt.get("json_schema") or {}).get("schema") or {}
    elif fmt.get("type") == "json_object":
        config["responseMimeType"] = "application/json"
    out: dict[str, Any] = {"generationConfig": config} if config else {}
    choice = chat.get("tool_choice")
    if choice is not None:
        out["toolConfig"] = {"functionCallingConfig": _calling(choice)}
    return out


def _calling(choice: Any) -> dict[str, Any]:
    if choice == "none":
        return {"mode": "NONE"}
    if choice == "required":
        return {"mode": "ANY"}
    if isinstance(choice, dict) and (choice.get("function") or {}).get("name"):
        return {"mode": "ANY", "allowedFunctionNames": [choice["function"]["name"]]}
    return {"mode": "AUTO"}
