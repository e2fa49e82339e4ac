"""Provider parts: what a message carries that no strategy reads (thinking blocks with their
signatures, reasoning items, server tool blocks, images, a client's block layout), kept
verbatim so that the proxy can speak Anthropic Messages and OpenAI Responses without losing
any of it. Each is a :class:`Part` of the message it belongs to; only its own API's edge
(``contextfold.serve``) reads ``data``. What survives a strategy: see :class:`Part`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contextfold.core.errors import MessageFormatError

__all__ = ["PARTS_KEY", "Part", "decode_parts", "encode_parts"]

PARTS_KEY = "contextfold_parts"
"""The key of an OpenAI chat dict that holds a message's parts (never sent to a model)."""


@dataclass(frozen=True, slots=True)
class Part:
    """One provider part of a message: counted (``text`` as the message's text, ``tokens``
    added) and hashed with it, through the store and ``to_openai`` / ``from_openai`` unchanged,
    written back only to a client or upstream of its own API.

    What survives a strategy (the one rule, applied by
    :func:`~contextfold.core.pipeline.prepare_view`):

    - a message the view shows verbatim keeps all its parts;
    - a tool result the view rewrites (labelled, cut, stubbed: the same call answered) keeps
      the parts of the result it stands for: an image in it is passed on, never edited;
    - every other message a strategy writes (a fold's note, a summary, a runtime note, an
      assistant message standing for a folded step) carries none: the parts of the steps it
      stands for are left out with them, as the view's elisions say, and the history keeps
      them whole.
    """

    kind: str
    """``api:what``, e.g. ``anthropic:layout`` or ``responses:layout``."""
    data: str
    """The part as JSON text, read only by its API's edge."""
    text: str = ""
    """Text it adds to its message's text: counted as tokens and hashed with it."""
    tokens: int = 0
    """Tokens it adds beyond its text (an image's estimate)."""

    @property
    def api(self) -> str:
        return self.kind.partition(":")[0]

    def value(self) -> Any:
        """``data`` decoded."""
        return json.loads(self.data)

    @classmethod
    def of(cls, kind: str, value: Any, *, text: str = "", tokens: int = 0) -> Part:
        """A part holding ``value`` as compact JSON."""
        data = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return cls(kind, data, text, tokens)


def encode_parts(parts: Sequence[Part]) -> list[dict[str, Any]]:
    """Parts as the JSON objects :data:`PARTS_KEY` holds."""
    out = []
    for p in parts:
        item: dict[str, Any] = {"kind": p.kind, "data": p.data}
        if p.text:
            item["text"] = p.text
        if p.tokens:
            item["tokens"] = p.tokens
        out.append(item)
    return out


def decode_parts(raw: Any) -> tuple[Part, ...]:
    """The parts of :data:`PARTS_KEY`; raises :class:`MessageFormatError` naming the field."""
    if raw is None:
        return ()
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        raise MessageFormatError("must be an array of parts", at=PARTS_KEY)
    return tuple(_part(item, f"{PARTS_KEY}[{i}]") for i, item in enumerate(raw))


def _part(item: Any, at: str) -> Part:
    if not isinstance(item, Mapping):
        raise MessageFormatError("a part must be an object", at=at)
    kind, data = item.get("kind"), item.get("data")
    text, tokens = item.get("text", ""), item.get("tokens", 0)
    if not isinstance(kind, str) or ":" not in kind:
        raise MessageFormatError("a part needs a kind such as 'anthropic:layout'", at=f"{at}.kind")
    if not isinstance(data, str):
        raise MessageFormatError("a part's data must be JSON text", at=f"{at}.data")
    if not isinstance(text, str):
        raise MessageFormatError("must be a string", at=f"{at}.text")
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
        raise MessageFormatError("must be a whole number of tokens", at=f"{at}.tokens")
    return Part(kind, data, text, tokens)
