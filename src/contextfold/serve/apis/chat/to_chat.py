"""What the APIs' requests share when they are written for a Chat Completions upstream: the
options every API has (:func:`common_options`), ``tool_choice`` (:func:`chat_tool_choice`)
and a function tool (:func:`function_tool`). Each API's request says which of its options
and tools go (``chat_options``, ``chat_tool``: :class:`~.exchange.ClientRequest`)."""

from __future__ import annotations

from typing import Any

__all__ = ["chat_tool_choice", "common_options", "function_tool"]


def common_options(body: dict[str, Any], *, limit: str) -> dict[str, Any]:
    """The model, ``temperature``, ``top_p`` and the output limit (the body's ``limit``) as a
    Chat Completions body has them."""
    out: dict[str, Any] = {"model": body["model"]}
    for key in ("temperature", "top_p"):
        if key in body:
            out[key] = body[key]
    if body.get(limit) is not None:
        out["max_tokens"] = body[limit]
    return out


def chat_tool_choice(choice: Any) -> Any:
    """A ``tool_choice`` (a string, or an object with a ``type``: ``auto``, ``none``, ``any``
    or ``required``, or a named tool) as Chat Completions has it; None to send none."""
    if choice is None:
        return None
    if isinstance(choice, str):  # Responses: auto, required, none
        return choice
    kind = choice.get("type")
    if kind in ("auto", "none"):
        return kind
    if kind in ("any", "required"):
        return "required"
    name = choice.get("name")
    return {"type": "function", "function": {"name": name}} if name else None


def function_tool(
    name: str, parameters: Any, description: str | None = None, *, given: dict[str, Any]
) -> dict[str, Any]:
    """A Chat Completions function tool (the client's tool ``given``'s description, if any,
    over ``description``)."""
    fn: dict[str, Any] = {"name": name, "parameters": parameters}
    if description:
        fn["description"] = description
    if given.get("description"):
        fn["description"] = given["description"]
    return {"type": "function", "function": fn}
