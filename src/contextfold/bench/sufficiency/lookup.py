"""Where a real agent would look a value up: read calls built from what it already has.

A value the ground truth needs and no earlier output holds is found the way an agent finds it,
by a read whose arguments come from texts the agent has seen (:class:`CallFinder`).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from typing import Any

from contextfold.core.verbatim import available
from contextfold.envs.tau2 import Tau2Env, load_tau2

__all__ = ["Call", "CallFinder", "arguments_key", "json_pairs"]

Call = tuple[str, dict[str, Any]]
"""A tool name and its arguments."""

_MAX_COMBOS = 200
_TOKEN = re.compile(r"[\w@#+.-]+")


class CallFinder:
    """Lists the read calls an agent can make from given texts.

    A call counts when every argument comes from those texts: a value under a matching key in a
    JSON output (``reservations`` feeds ``reservation_id``, ``line_ids`` feeds ``line_id``, any
    ``..._id`` feeds telecom's ``id``, ``origin`` and ``destination`` feed each other), a value the
    ground truth passes under that name, or a plain-text token (of the user's facts or of a
    non-JSON output) shaped like the domain's ground-truth values for it (``"#W9348897"`` has the
    shape ``#A9``; a token of any shape when the domain never passes that name and it is the tool's
    only argument).
    """

    def __init__(self, env: Tau2Env, gold: Sequence[Any]) -> None:
        kit = env.tau2_env.tools
        self.reads = [
            t["function"]
            for t in env.tools()
            if str(kit.tool_type(t["function"]["name"]).value) == "read"
        ]
        self.gold_values: dict[str, list[Any]] = {}
        for action in gold:
            for key, value in _pairs(action.arguments):
                self.gold_values.setdefault(key, []).append(value)
        self.shapes = _shapes(env.domain)

    def candidates(self, texts: Sequence[str], done: set[str]) -> Iterator[Call]:
        """Read calls whose every argument comes from ``texts``, in tool order, leaving out
        those in ``done`` (by :func:`arguments_key`)."""
        pairs = [p for t in texts for p in json_pairs(t)]
        tokens = list(dict.fromkeys(w for t in texts for w in _tokens(t)))
        for schema in self.reads:
            params = list(schema["parameters"].get("required") or [])
            pools = [self._values(p, pairs, tokens, texts, len(params) == 1) for p in params]
            for combo in itertools.islice(itertools.product(*pools), _MAX_COMBOS):
                arguments = dict(zip(params, combo, strict=True))
                if arguments_key(schema["name"], arguments) not in done:
                    yield schema["name"], arguments

    def _values(
        self,
        param: str,
        pairs: Sequence[tuple[str, Any]],
        tokens: Sequence[str],
        texts: Sequence[str],
        single: bool,
    ) -> list[Any]:
        """Values for one parameter, in order: the ground truth's, the outputs', tokens."""
        gold = [v for v in self.gold_values.get(param, []) if available(v, texts)]
        seen = [v for k, v in pairs if _matches(param, k)]
        shapes = self.shapes.get(param)
        words = [w for w in tokens if _shape(w) in shapes] if shapes else []
        if not shapes and single:
            words = list(tokens)
        return list(dict.fromkeys(v for v in [*gold, *seen, *words] if isinstance(v, str)))


def arguments_key(name: str, arguments: Mapping[str, Any]) -> str:
    """A call's identity: tool name and canonical arguments."""
    return f"{name}:{json.dumps(dict(arguments), sort_keys=True)}"


@cache
def _shapes(domain: str) -> dict[str, frozenset[str]]:
    """The shapes of the string values the domain's ground truth passes under each name."""
    module = load_tau2(f"tau2.domains.{domain.split('-')[0]}.environment")
    out: dict[str, set[str]] = {}
    for task in module.get_tasks("base"):
        for action in task.evaluation_criteria.actions or []:
            for key, value in _pairs(action.arguments):
                if isinstance(value, str):
                    out.setdefault(key, set()).add(_shape(value))
    return {k: frozenset(v) for k, v in out.items()}


def _shape(word: str) -> str:
    """A word's character classes, runs collapsed: ``"#W93488"`` -> ``"#A9"``."""
    classes = (
        "9" if c.isdigit() else "A" if c.isupper() else "a" if c.isalpha() else c for c in word
    )
    return "".join(k for k, _ in itertools.groupby(classes))


@cache
def _tokens(text: str) -> tuple[str, ...]:
    """Words of a plain-text output or fact (JSON outputs give their values as pairs)."""
    if json_pairs(text):
        return ()
    words = (w.rstrip(".,;:") for w in _TOKEN.findall(text))
    return tuple(dict.fromkeys(w for w in words if len(w) >= 3))


def _pairs(value: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    """(key, scalar) pairs of a JSON value at any depth; list items take their list's key and
    the keys of a dict of records (``payment_methods: {id: {...}}``) count as its values."""
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, dict) and v and all(isinstance(x, dict) for x in v.values()):
                yield from ((k, name) for name in v)
            yield from _pairs(v, k)
    elif isinstance(value, list):
        for item in value:
            yield from _pairs(item, key)
    elif key and isinstance(value, str | int | float) and not isinstance(value, bool):
        yield key, value


@cache
def json_pairs(text: str) -> tuple[tuple[str, Any], ...]:
    """The (key, scalar) pairs of a JSON text (none when it is not JSON)."""
    try:
        return tuple(_pairs(json.loads(text)))
    except (json.JSONDecodeError, RecursionError):
        return ()


_ALIASES = {"origin": "destination", "destination": "origin"}


def _stem(key: str) -> str:
    k = key.lower()
    for suffix in ("_ids", "_id", "_numbers", "_number", "ids", "s"):
        if k.endswith(suffix) and len(k) > len(suffix) + 1:
            return k[: -len(suffix)]
    return k


def _matches(param: str, key: str) -> bool:
    if param == "id":
        return key.lower().endswith(("id", "ids"))
    return _stem(param) == _stem(key) or _ALIASES.get(param) == key
