"""The few message forms the oracle and the scripted user exchange, and how asks are matched.

Asks are matched to the user's facts by shared words, so an ask must be worded to bring back the
very sentence that holds the value (:func:`label_for`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from contextfold.bench.sufficiency.plan import Fact
from contextfold.core.verbatim import Leaf, pattern

__all__ = ["ASK", "INSTRUCT", "content_words", "label_for", "pick_facts"]

ASK = "Could you please tell me: "
INSTRUCT = "Please do the following on your phone, in this order, and tell me what you see:"

_WORD = re.compile(r"[A-Za-z]+")
_STOP_TEXT = (
    "a an and are as at be but by do for from have i if in is it me my of on or so that the "
    "this to was will with you your"
)
_STOPWORDS = frozenset(_STOP_TEXT.split())


def content_words(text: str) -> list[str]:
    """The words of ``text`` that can identify it (lower case, stop words left out)."""
    return [w for w in (m.lower() for m in _WORD.findall(text)) if w not in _STOPWORDS]


def pick_facts(label: str, facts: Sequence[Fact]) -> list[Fact]:
    """The fact answering ``label``: most shared words, first on ties; all known facts when
    none shares a word.

    An ask is ``ASK`` followed by labels separated by ``"; "`` and a final ``?``; each label is a
    few words from the user's own fact, those nearest the value wanted (``"user id"``).
    Instructions are ``INSTRUCT`` followed by one ``- tool_name {json arguments}`` line per action
    the user must take on their phone.
    """
    words = set(content_words(label))
    scores = [len(words & set(content_words(f.text))) for f in facts]
    best = max(scores, default=0)
    if best == 0:
        return [f for f in facts if f.section == "known"]
    return [facts[scores.index(best)]]


def label_for(value: Leaf, fact: Fact, facts: Sequence[Fact]) -> str:
    """The fewest (at least two) of the fact's words around ``value`` (nearest first, before it,
    then after it) that make :func:`pick_facts` answer with ``fact``."""
    match = pattern(value).search(fact.text)
    if match is None:
        return " ".join(content_words(fact.text)[:6])
    before = content_words(fact.text[: match.start()])[::-1]
    after = content_words(fact.text[match.end() :])
    order = list(dict.fromkeys(before + after))
    for size in range(min(2, len(order)), len(order) + 1):  # two words read better than one
        picked = order[:size]
        if pick_facts(" ".join(picked), facts) == [fact]:
            return _in_text_order(picked, fact.text)
    return _in_text_order(order, fact.text) or "the details you have"


def _in_text_order(words: list[str], text: str) -> str:
    chosen = set(words)
    return " ".join(dict.fromkeys(w for w in content_words(text) if w in chosen))
