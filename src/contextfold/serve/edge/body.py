"""Decoding JSON strictly, a client's body or an upstream's reply: what json.loads lets
through and no client could be sent again (``NaN``, ``Infinity``, ``1e999``, integers past
:data:`MAX_DIGITS` digits, nesting past :data:`MAX_DEPTH`, lone surrogates) is refused at the
edge (:func:`strict_json`), which says so in its terms: :func:`decode_body` a 400 naming the
field, the upstream a 502 naming the upstream. The walk is iterative, so its own depth is not
limited by the interpreter's recursion limit.
"""

from __future__ import annotations

import json
import math
from typing import Any

from contextfold.serve.errors import ApiError

__all__ = ["MAX_DEPTH", "MAX_DIGITS", "NotPortable", "decode_body", "field_name", "strict_json"]

MAX_DEPTH = 100
"""Nesting levels a JSON value may have (a tool's JSON schema nests a few dozen at most)."""
MAX_DIGITS = 100
"""Digits an integer literal may have."""


class NotPortable(ValueError):
    """JSON the proxy could not pass on: ``problem`` (``is nested more than 100 levels``),
    at the field ``where`` (None: the value as a whole)."""

    def __init__(self, problem: str, where: str | None = None) -> None:
        super().__init__(f"{where or 'the value'} {problem}")
        self.problem = problem
        self.where = where


def strict_json(data: bytes | str) -> Any:
    """The decoded value; :class:`NotPortable` for anything the proxy could not pass on.

    Python's ``json`` accepts ``NaN`` and ``Infinity``, turns ``1e999`` into infinity, raises
    past int()'s 4,300 digits and recurses once per nesting level; a text may also hold lone
    surrogates (``"\\ud800"``), which no UTF-8 encoder can write again. Each would fail
    later, deep inside the proxy (a 500, or a turn stored that the client never got)."""
    try:
        value = json.loads(data, parse_constant=_constant, parse_int=_int, parse_float=_float)
    except RecursionError as exc:
        raise NotPortable(f"is nested more than {MAX_DEPTH} levels") from exc
    except NotPortable:
        raise
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise NotPortable(f"is not valid JSON: {exc}") from exc
    _walk(value)
    return value


def decode_body(data: bytes) -> Any:
    """A client's decoded body; a 400 :class:`ApiError` for anything the proxy could not pass
    on (naming the field)."""
    try:
        return strict_json(data)
    except NotPortable as exc:
        if exc.where is None:
            raise ApiError(400, f"the request body {exc.problem}") from exc
        raise ApiError(400, f"{exc.where} {exc.problem}", param=exc.where) from exc


def field_name(path: tuple[str | int, ...]) -> str:
    """``messages[2].content`` for the path ``("messages", 2, "content")``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or "the body"


def _constant(name: str) -> Any:
    raise NotPortable(f"is not valid JSON: {name} is not a JSON number")


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise NotPortable(
            f"is not valid JSON: an integer of {len(text):,} digits (at most {MAX_DIGITS})"
        )
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NotPortable(f"is not valid JSON: the number {text[:40]} is out of range")
    return value


def _walk(value: Any) -> None:
    """Refuse nesting past :data:`MAX_DEPTH` and strings that are not valid Unicode."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if len(path) > MAX_DEPTH:
            raise NotPortable(f"is nested more than {MAX_DEPTH} levels")
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
        where = field_name(path) if path else None
        problem = f"holds a lone surrogate ({bad}), which is not valid Unicode"
        raise NotPortable(problem, where) from exc
