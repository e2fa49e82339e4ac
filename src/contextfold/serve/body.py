"""Decoding a client's JSON body strictly: what json.loads lets through, refused at the edge.

Python's ``json`` accepts ``NaN`` and ``Infinity``, turns ``1e999`` into infinity, raises past
int()'s 4,300 digits and recurses once per nesting level; a body may also hold lone surrogates
(``"\\ud800"``), which no UTF-8 encoder can write again. Each would fail later, deep inside
the proxy (a 500 with a traceback), so :func:`decode_body` refuses them with a 400 naming the
field. The walk over the decoded value is iterative, so its own depth is not limited by the
interpreter's recursion limit.
"""

from __future__ import annotations

import json
import math
from typing import Any

from contextfold.serve.errors import ApiError

__all__ = ["MAX_DEPTH", "MAX_DIGITS", "decode_body", "field_name"]

MAX_DEPTH = 100
"""Nesting levels a body may have (a tool's JSON schema nests a few dozen at most)."""
MAX_DIGITS = 100
"""Digits an integer literal may have."""


def decode_body(data: bytes) -> Any:
    """The decoded body; a 400 :class:`ApiError` for anything the proxy could not pass on."""
    try:
        value = json.loads(data, parse_constant=_constant, parse_int=_int, parse_float=_float)
    except RecursionError as exc:
        raise ApiError(400, f"the request body is nested more than {MAX_DEPTH} levels") from exc
    except _Refused as exc:
        raise ApiError(400, f"the request body is not valid JSON: {exc}") from exc
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise ApiError(400, f"the request body is not valid JSON: {exc}") from exc
    _walk(value)
    return value


def field_name(path: tuple[str | int, ...]) -> str:
    """``messages[2].content`` for the path ``("messages", 2, "content")``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or "the body"


class _Refused(ValueError):
    pass


def _constant(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON number")


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise _Refused(f"an integer of {len(text):,} digits (at most {MAX_DIGITS})")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {text[:40]} is out of range")
    return value


def _walk(value: Any) -> None:
    """Refuse nesting past :data:`MAX_DEPTH` and strings that are not valid Unicode."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if len(path) > MAX_DEPTH:
            raise ApiError(400, f"the request body is nested more than {MAX_DEPTH} levels")
        if isinstance(item, dict):
            for key, child in item.items():
                _check_text(key, path)
                stack.append((child, (*path, key)))
        elif isinstance(item, list):
            stack.extend((child, (*path, i)) for i, child in enumerate(item))
        elif isinstance(item, str):
            _check_text(item, path)


def _check_text(text: str, path: tuple[str | int, ...]) -> None:
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start : exc.end].encode("unicode_escape").decode()
        name = field_name(path)
        raise ApiError(
            400,
            f"{name} holds a lone surrogate ({bad}), which is not valid Unicode",
            param=name if path else None,
        ) from exc
