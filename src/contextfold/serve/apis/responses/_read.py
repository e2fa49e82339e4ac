"""OpenAI Responses input items read into the conversation's messages (the reading itself is
:mod:`contextfold.core.wire.responses`, shared with the Codex CLI importer): a malformed field
is a 400 naming it."""

from __future__ import annotations

from typing import Any

from contextfold.core.errors import MessageFormatError
from contextfold.core.grouping import Labeled
from contextfold.core.messages import AssistantMessage
from contextfold.core.wire import responses
from contextfold.core.wire.responses import API, OUTPUT_ITEMS
from contextfold.serve.errors import ApiError

__all__ = ["API", "OUTPUT_ITEMS", "read_input", "read_output"]


def read_input(raw: Any, where: str = "input", *, system_first: bool = False) -> list[Labeled]:
    """``input`` as labelled messages (:func:`contextfold.core.wire.responses.read_input`);
    a 400 naming the field for anything malformed."""
    try:
        return responses.read_input(raw, where, system_first=system_first)
    except MessageFormatError as exc:
        raise _bad(exc) from None


def read_output(items: list[Any], where: str) -> AssistantMessage:
    """A response's ``output`` items as the one assistant message they are."""
    try:
        return responses.read_output(items, where)
    except MessageFormatError as exc:
        raise _bad(exc) from None


def _bad(exc: MessageFormatError) -> ApiError:
    return ApiError(400, f"{exc.at}: {exc.problem}", param=exc.at)
