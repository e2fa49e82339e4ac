"""Checking an upstream reply's shape against the fields the proxy reads of it.

Each upstream API declares what the proxy reads of its replies and stream events as :class:`Shape`
models (:mod:`~contextfold.serve.apis.anthropic._shapes`,
:mod:`~contextfold.serve.apis.responses._shapes`; Chat Completions' in
:mod:`~contextfold.serve.apis.chat._replies`); :func:`check` validates a decoded reply (or event)
against one, so a value of the wrong type is a 502 naming the upstream and the field before anything
reads it. Fields the proxy does not read are let through as they are (``extra="allow"``)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from contextfold.serve.errors import UpstreamError

__all__ = ["Count", "Index", "Shape", "check"]

Count = Annotated[int, Field(ge=0)]
"""A count of tokens."""
Index = Annotated[int, Field(ge=0, lt=1024)]
"""A streamed block's index."""


class Shape(BaseModel):
    """What the proxy reads of one object of an upstream's reply (strict: no coercion)."""

    model_config = ConfigDict(strict=True, extra="allow")


_PROBLEMS = {
    "model_type": "is not an object",
    "dict_type": "is not an object",
    "model_attributes_type": "is not an object",
    "string_type": "is not a string",
    "int_type": "is not a whole number",
    "list_type": "is not an array",
    "greater_than_equal": "is negative",
    "less_than": "is too large",
    "missing": "is missing",
}


def check(shape: type[Shape], data: Any, where: str, what: str) -> None:
    """Raise a 502 naming the upstream ``where`` and the field unless ``data`` has
    ``shape``; ``what`` says what it is (``answered a reply``, ``streamed a message_start
    event``)."""
    try:
        shape.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "value"
        problem = _PROBLEMS.get(first["type"], first["msg"].lower())
        shown = repr(first.get("input"))[:200]
        raise UpstreamError(
            502, f"upstream {where} {what} whose {field} {problem}: {shown}"
        ) from None
