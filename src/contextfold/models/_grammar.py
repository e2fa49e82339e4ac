"""The grammars the embedded engine decodes JSON replies with (llama.cpp's JSON-schema
converter), built once per schema. A client's tool schema the converter refuses must not fail
the call: that tool's arguments are bound to any JSON object, or else the reply is left
unbound (free text); each is said once in the log. A ``response_schema`` is the caller's own
contract: it fails loudly (:meth:`Grammars.for_schema`)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from contextfold.models._tools import ModelError, json_reply_schema, tool_name

__all__ = ["Grammars", "SchemaRefused"]

_log = logging.getLogger(__name__)

_REFUSALS = (AssertionError, ValueError, KeyError, TypeError, RecursionError)
"""What llama-cpp-python's converter and grammar parser raise on a schema they cannot take."""

ANY_OBJECT: dict[str, Any] = {"type": "object"}


class SchemaRefused(ModelError):
    """llama.cpp cannot turn a reply's JSON schema into a grammar."""


class Grammars:
    """Grammars for one engine (``llama_cpp``, the module); ``model`` names it in the log."""

    def __init__(self, llama_cpp: Any, *, model: str) -> None:
        self._llama_cpp = llama_cpp
        self._model = model
        self._built: dict[str, Any] = {}
        self._said: set[str] = set()

    def for_schema(self, schema: Mapping[str, Any]) -> Any:
        """The grammar of replies of ``schema``; a :class:`ModelError` if it cannot be built."""
        try:
            return self._build(schema)
        except _REFUSALS as exc:
            raise SchemaRefused(
                f"llama.cpp cannot turn this JSON schema into a grammar ({exc!r}); "
                "simplify the schema"
            ) from exc

    def for_tools(self, tools: Sequence[Mapping[str, Any]], *, allow_message: bool) -> Any | None:
        """The grammar of a reply calling one of ``tools`` (or, if allowed, a message); a tool
        whose arguments cannot be bound takes any JSON object; None: no grammar at all."""
        try:
            return self._build(json_reply_schema(tools, allow_message=allow_message))
        except (ModelError, *_REFUSALS):
            pass
        bound = [self._bindable(tool) for tool in tools]
        try:
            return self._build(json_reply_schema(bound, allow_message=allow_message))
        except _REFUSALS as exc:
            names = ", ".join(tool_name(t) for t in tools)
            self._once(
                f"tools:{names}",
                "%s: llama.cpp cannot build a grammar for the replies calling %s (%r); "
                "its replies are free text",
                self._model,
                names,
                exc,
            )
            return None

    def _bindable(self, tool: Mapping[str, Any]) -> Mapping[str, Any]:
        """``tool``, or the same tool taking any JSON object if its arguments cannot be bound."""
        convert = self._llama_cpp.llama_grammar.json_schema_to_gbnf
        try:
            convert(json.dumps(json_reply_schema([tool], allow_message=False)))
        except (ModelError, *_REFUSALS) as exc:
            name = tool_name(tool)
            self._once(
                f"tool:{name}",
                "%s: llama.cpp cannot bind the arguments of tool %r to its schema (%s); "
                "they are bound to any JSON object",
                self._model,
                name,
                _short(exc),
            )
            fn = dict(tool.get("function", tool))
            return {"type": "function", "function": {**fn, "parameters": ANY_OBJECT}}
        return tool

    def _build(self, schema: Mapping[str, Any]) -> Any:
        key = json.dumps(schema, sort_keys=False)
        if key not in self._built:
            grammar = self._llama_cpp.LlamaGrammar.from_json_schema(key, verbose=False)
            self._built[key] = grammar
        return self._built[key]

    def _once(self, key: str, message: str, *args: object) -> None:
        if key not in self._said:
            self._said.add(key)
            _log.warning(message, *args)


def _short(exc: BaseException) -> str:
    """An exception in one line of at most ~200 characters (a refused schema can be long)."""
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return text if len(text) <= 200 else text[:199] + "…"
