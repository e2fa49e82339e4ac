"""Gemini request field names as the proxy reads them (:func:`camelized`), and the 400 that
names one (:func:`bad`)."""

from __future__ import annotations

from typing import Any

from contextfold.serve.errors import ApiError

__all__ = ["bad", "camelized"]

_NESTED: dict[str, tuple[str, ...]] = {
    "contents": ("parts",),
    "systemInstruction": ("parts",),
    "parts": ("functionCall", "functionResponse", "inlineData", "fileData"),
    "generationConfig": ("thinkingConfig",),
    "toolConfig": ("functionCallingConfig",),
    "tools": ("functionDeclarations",),
    "generateContentRequest": ("contents", "systemInstruction", "tools", "generationConfig"),
}
"""Where field names are put in camelCase (never inside arguments or schemas)."""


def camelized(value: Any, nested: tuple[str, ...] = tuple(_NESTED)) -> Any:
    """``value`` with the request's field names in lowerCamelCase, as the API reads both
    spellings (the SDK sends some in snake_case: ``thinking_config.include_thoughts``)."""
    if isinstance(value, list):
        return [camelized(v, nested) for v in value]
    if not isinstance(value, dict):
        return value
    out = {_camel(k): v for k, v in value.items()}
    for key in nested:
        if key in out:
            out[key] = camelized(out[key], _NESTED.get(key, ()))
    return out


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def bad(where: str, problem: str) -> ApiError:
    return ApiError(400, f"{where}: {problem}", param=where)
