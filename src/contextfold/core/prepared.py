"""Texts prepared once for the verbatim test, for code that looks many values up in them.

:func:`contextfold.core.verbatim.found` compiles a value's regex and searches (and
JSON-unescapes) the whole text on each call. A :class:`PreparedText` is lowercased, unescaped
and split into its ASCII alphanumeric runs once; :meth:`PreparedText.holds` then answers as
``found`` does, looking with the regex only in texts that hold all of the value's runs
(:func:`value_runs`), at the places a plain search finds.
"""

from __future__ import annotations

from functools import lru_cache

from contextfold.core.verbatim import Leaf, pattern, unescaped

__all__ = ["PreparedText", "value_runs"]

_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_TABLE = bytes(c if chr(c) in _ALNUM else 32 for c in range(256))


class PreparedText:
    """A text prepared once for the verbatim test: lowercased (its JSON-unescaped form
    appended when it has escapes) and split into its ASCII alphanumeric runs."""

    __slots__ = ("low", "runs")

    def __init__(self, text: str) -> None:
        low = text.lower()
        if "\\" in text:
            low += "\n" + unescaped(text).lower()
        self.low = low
        self.runs = _runs(low)

    def holds(self, value: Leaf, runs: frozenset[bytes]) -> bool:
        """:func:`~contextfold.core.verbatim.found` (``runs``: :func:`value_runs`), faster:
        only where all the value's runs are, and the regex only at the places a plain search
        finds (strings: a plain search of the lowercased text with the same word boundaries)."""
        if not runs <= self.runs:
            return False
        if isinstance(value, str):
            return _bounded(value.lower(), self.low, value[:1].isalnum(), value[-1:].isalnum())
        regex, text = pattern(value), self.low
        start = text.find(_digits(value))
        while start >= 0:
            if regex.match(text, start):
                return True
            start = text.find(_digits(value), start + 1)
        return False


def _bounded(needle: str, text: str, head: bool, tail: bool) -> bool:
    """Whether ``needle`` occurs in ``text`` not preceded (``head``) nor followed (``tail``)
    by an ASCII letter or digit."""
    start = text.find(needle)
    while start >= 0:
        end = start + len(needle)
        if not (head and start and text[start - 1] in _ALNUM) and not (
            tail and end < len(text) and text[end] in _ALNUM
        ):
            return True
        start = text.find(needle, start + 1)
    return False


def _runs(low: str) -> frozenset[bytes]:
    """The maximal runs of ASCII letters and digits of a lowercased text."""
    return frozenset(low.encode("ascii", "replace").translate(_TABLE).split())


def _digits(value: int | float) -> str:
    """How a number's verbatim form starts (see the verbatim rule)."""
    if isinstance(value, float) and not value.is_integer():
        return repr(value)
    return str(int(value))


@lru_cache(maxsize=8192)
def value_runs(value: Leaf) -> frozenset[bytes]:
    """Runs every text holding ``value`` verbatim must have. None for a number: the verbatim
    rule lets a letter touch it (``530`` is found in ``sed -n '510,530p'``), so its digits need
    not be a run of their own."""
    if isinstance(value, str):
        return _runs(value.lower())
    return frozenset()
