"""A Gemini client's body as the proxy reads it (:func:`camelized`): the one place its JSON
objects are read, so a field the proxy reads as an object that is not one is a 400 naming it
(:func:`bad`), never an error deep inside the proxy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from contextfold.serve.errors import ApiError

__all__ = ["bad", "camelized"]

_NESTED: dict[str, tuple[str, ...]] = {
    "contents": ("parts",),
    "systemInstruction": ("parts",),
    "parts": ("text", "functionCall", "functionResponse", "inlineData", "fileData"),
    "generationConfig": ("thinkingConfig",),
    "toolConfig": ("functionCallingConfig",),
    "functionCallingConfig": ("mode", "allowedFunctionNames"),
    "tools": ("functionDeclarations",),
    "generateContentRequest": ("contents", "systemInstruction", "tools", "generationConfig",
                               "toolConfig"),
}  # fmt: skip
"""Where field names are put in camelCase (never inside arguments or schemas)."""


def _is_object(value: Any) -> bool:
    return isinstance(value, dict)


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


def _is_names(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(n, str) for n in value)


_OBJECTS = ("generationConfig", "thinkingConfig", "toolConfig", "functionCallingConfig",
            "functionCall", "functionResponse", "inlineData", "fileData",
            "generateContentRequest")  # fmt: skip
_SHAPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    **dict.fromkeys(_OBJECTS, (_is_object, "an object")),
    "text": (_is_text, "a string"),
    "mode": (_is_text, "a string"),
    "allowedFunctionNames": (_is_names, "an array of function names"),
}
"""What each field the proxy reads must be, when present and not null (the arrays it walks
are checked where they are read, with messages of their own)."""


def camelized(value: Any, nested: tuple[str, ...] = tuple(_NESTED), where: str = "") -> Any:
    """``value`` with the request's field names in lowerCamelCase, as the API reads both
    spellings (the SDK sends some in snake_case: ``thinking_config.include_thoughts``); a 400
    naming a field of the wrong kind (``toolConfig: must be an object``)."""
    if isinstance(value, list):
        return [camelized(v, nested, f"{where}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, dict):
        return value
    out = {_camel(k): v for k, v in value.items()}
    for key in nested:
        if key not in out:
            continue
        at = f"{where}.{key}" if where else key
        fits, kind = _SHAPES.get(key, (None, ""))
        if fits is not None and out[key] is not None and not fits(out[key]):
            raise bad(at, f"must be {kind}, got {_shown(out[key])}")
        out[key] = camelized(out[key], _NESTED.get(key, ()), at)
    return out


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def bad(where: str, problem: str) -> ApiError:
    return ApiError(400, f"{where}: {problem}", param=where)
