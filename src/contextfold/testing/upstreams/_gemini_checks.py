"""What the scripted Gemini upstream refuses, with the real API's messages (all 400
``INVALID_ARGUMENT``).

The checks a proxy can get wrong when it rewrites a conversation: unknown field names, roles
(``user`` or ``model``), non-empty parts each holding one datum, the turn order of function
calling (a call turn after a user turn; a response turn right after its call turn, with as many
responses as calls), function names, and thought signatures (on Gemini 3, the first call of each
model turn since the last user prompt carries one, which must be one this upstream issued).
"""

from __future__ import annotations

import re
from typing import Any

from contextfold.testing.upstreams._gemini_parts import DATA_FIELDS, decode_signature, verify

__all__ = ["camel", "check_body", "enforces_signatures", "normalize"]

REQUEST_FIELDS = {
    "model", "contents", "tools", "toolConfig", "safetySettings", "systemInstruction",
    "generationConfig", "cachedContent", "serviceTier", "store", "continuationToken",
}  # fmt: skip
PART_FIELDS = DATA_FIELDS | {
    "thought", "thoughtSignature", "videoMetadata", "mediaResolution", "partMetadata",
}  # fmt: skip
MODES = {"MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED"}
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:\-]{0,63}")
SIGNATURES_DOC = "https://ai.google.dev/gemini-api/docs/thought-signatures"


def camel(name: str) -> str:
    """A proto field name in lowerCamelCase (the JSON parser takes both spellings)."""
    head, *rest = name.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


NESTED: dict[str, tuple[str, ...]] = {
    "contents": ("parts",),
    "systemInstruction": ("parts",),
    "parts": ("functionCall", "functionResponse", "inlineData", "fileData"),
    "generationConfig": ("thinkingConfig",),
    "toolConfig": ("functionCallingConfig",),
    "tools": ("functionDeclarations",),
}
"""Where camelCase goes below the request's own fields (never into arguments or schemas)."""


def normalize(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with its field names in camelCase: the request's, and those of the messages,
    parts, configs and declarations under it (:data:`NESTED`); the SDK sends some in
    snake_case (``thinkingConfig.include_thoughts``)."""
    out: dict[str, Any] = _camelized(body, tuple(NESTED))
    return out


def _camelized(value: Any, nested: tuple[str, ...]) -> Any:
    if isinstance(value, list):
        return [_camelized(v, nested) for v in value]
    if not isinstance(value, dict):
        return value
    out = {camel(k): v for k, v in value.items()}
    for key in nested:
        if key in out:
            out[key] = _camelized(out[key], NESTED.get(key, ()))
    return out


def enforces_signatures(model: str) -> bool:
    """Whether the API refuses a function call without its signature: Gemini 3 and later."""
    found = re.search(r"gemini-(\d+)", model)
    return found is not None and int(found.group(1)) >= 3


def _unknown(name: str) -> str:
    return f'Invalid JSON payload received. Unknown name "{name}": Cannot find field.'


def check_body(body: dict[str, Any], model: str, *, signatures: bool = True) -> str | None:
    """The first problem of a normalized ``generateContent`` body for ``model``
    (``signatures``: its thought signatures checked too; countTokens does not)."""
    for name in body:
        if name not in REQUEST_FIELDS:
            return _unknown(name)
    contents = body.get("contents")
    if not contents:
        return "* GenerateContentRequest.contents: contents is not specified\n"
    if not isinstance(contents, list):
        return "Invalid JSON payload received. Expected an array of Content for 'contents'."
    system = body.get("systemInstruction")
    if system is not None and not isinstance(system, dict):
        return (
            "Invalid value at 'system_instruction' "
            f"(type.googleapis.com/google.ai.generativelanguage.v1beta.Content), {system!r}"
        )
    return (
        _contents(contents)
        or _turns(contents)
        or (_signatures(contents, model) if signatures else None)
        or _tools(body.get("tools"))
        or _mode(body.get("toolConfig"))
    )


def _contents(contents: list[Any]) -> str | None:
    for i, content in enumerate(contents):
        if not isinstance(content, dict):
            return f"Invalid JSON payload received. Expected an object for 'contents[{i}]'."
        for name in content:
            if name not in {"role", "parts"}:
                return _unknown(f"contents[{i}].{name}")
        if content.get("role", "user") not in {"user", "model"}:
            return "Please use a valid role: user, model."
        parts = content.get("parts")
        if not parts or not isinstance(parts, list):
            return (
                f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty.\n"
            )
        for j, part in enumerate(parts):
            problem = _part(part, f"contents[{i}].parts[{j}]")
            if problem is not None:
                return problem
    return None


def _part(part: Any, where: str) -> str | None:
    if not isinstance(part, dict):
        return f"Invalid JSON payload received. Expected an object for '{where}'."
    for name in part:
        if name not in PART_FIELDS:
            return _unknown(f"{where}.{name}")
    data = [name for name in part if name in DATA_FIELDS]
    if not data:
        return (
            f"* GenerateContentRequest.{where}.data: required oneof field 'data' must have one "
            "initialized field\n"
        )
    if len(data) > 1:
        return (
            "Invalid JSON payload received. Oneof field 'data' is already set. "
            f"Cannot set '{data[1]}'"
        )
    for key in ("functionCall", "functionResponse"):
        inner = part.get(key)
        if key in part and (not isinstance(inner, dict) or not inner.get("name")):
            field = "function_call" if key == "functionCall" else "function_response"
            return f"* GenerateContentRequest.{where}.{field}.name: Name cannot be empty.\n"
    signature = part.get("thoughtSignature")
    if signature is not None and decode_signature(signature) is None:
        return (
            f"Invalid value at '{where}.thought_signature' (TYPE_BYTES), Base64 decoding "
            f'failed for "{signature}"'
        )
    return None


def _count(content: dict[str, Any], key: str) -> int:
    return sum(1 for p in content["parts"] if key in p)


def _turns(contents: list[dict[str, Any]]) -> str | None:
    for i, content in enumerate(contents):
        before = contents[i - 1] if i > 0 else None
        calls = _count(content, "functionCall") if content.get("role") == "model" else 0
        if calls and (before is None or before.get("role", "user") != "user"):
            return (
                "Please ensure that function call turn comes immediately after a user turn or "
                "after a function response turn."
            )
        answers = _count(content, "functionResponse")
        if not answers:
            continue
        asked = _count(before, "functionCall") if before and before.get("role") == "model" else 0
        if not asked:
            return (
                "Please ensure that function response turn comes immediately after a function "
                "call turn."
            )
        if answers != asked:
            return (
                "Please ensure that the number of function response parts is equal to the "
                "number of function call parts of the function call turn."
            )
    return None


def _signatures(contents: list[dict[str, Any]], model: str) -> str | None:
    for content in contents:
        for part in content["parts"]:
            signature = part.get("thoughtSignature")
            if signature is not None and not verify(signature, model):
                return "Corrupted thought signature."
    if not enforces_signatures(model):
        return None
    prompts = [i for i, c in enumerate(contents) if c.get("role", "user") == "user"
               and not _count(c, "functionResponse")]  # fmt: skip
    start = prompts[-1] + 1 if prompts else 0
    for i in range(start, len(contents)):
        calls = [p for p in contents[i]["parts"] if "functionCall" in p]
        if contents[i].get("role") == "model" and calls and "thoughtSignature" not in calls[0]:
            return (
                "Function call is missing a thought_signature in functionCall parts. This is "
                "required for tools to work correctly, and missing thought_signature may lead "
                "to degraded model performance. Additional data, function call "
                f"`default_api:{calls[0]['functionCall']['name']}` , position {i + 1}. Please "
                f"refer to {SIGNATURES_DOC} for more details."
            )
    return None


def _tools(tools: Any) -> str | None:
    for i, tool in enumerate(tools or []):
        if not isinstance(tool, dict):
            return f"Invalid JSON payload received. Expected an object for 'tools[{i}]'."
        declarations = tool.get("functionDeclarations")
        for j, declaration in enumerate(declarations or []):
            name = declaration.get("name") if isinstance(declaration, dict) else None
            if not isinstance(name, str) or not NAME.fullmatch(name):
                return (
                    f"* GenerateContentRequest.tools[{i}].function_declarations[{j}].name: "
                    "Invalid function name. Must start with a letter or an underscore. Must be "
                    "alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes "
                    "(-), with a maximum length of 64.\n"
                )
    return None


def _mode(config: Any) -> str | None:
    calling = (config or {}).get("functionCallingConfig") if isinstance(config, dict) else None
    mode = calling.get("mode") if isinstance(calling, dict) else None
    if mode is not None and mode not in MODES:
        return (
            "Invalid value at 'tool_config.function_calling_config.mode' "
            "(type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionCallingConfig.Mode)"
            f', "{mode}"'
        )
    return None
