"""Anthropic Messages content read into the conversation's messages (the reading itself is
:mod:`contextfold.core.wire.anthropic`, shared with the Claude Code importer): a malformed field is
a 400 naming it, and the ``cache_control`` markers go to the request's :class:`Marks`.
"""

from __future__ import annotations

from typing import Any

from contextfold.core.errors import MessageFormatError
from contextfold.core.grouping import Labeled
from contextfold.core.messages import AssistantMessage, SystemMessage
from contextfold.core.wire import anthropic
from contextfold.core.wire.anthropic import API, Markers
from contextfold.serve.apis.anthropic._cache import Marks
from contextfold.serve.errors import ApiError

__all__ = ["API", "Marks", "read_assistant", "read_messages", "read_system"]


def read_system(raw: Any, marks: Marks) -> SystemMessage | None:
    """The ``system`` parameter (a string or text blocks) as one system message."""
    found = Markers()
    try:
        system = anthropic.read_system(raw, found)
    except MessageFormatError as exc:
        raise _bad(exc) from None
    marks.system.extend(found.system)
    return system


def read_messages(raw: Any, marks: Marks) -> list[Labeled]:
    """The ``messages`` parameter as labelled messages for the grouper
    (:func:`contextfold.core.wire.anthropic.read_messages`); a 400 naming the field for anything
    malformed."""
    found = Markers()
    try:
        labeled = anthropic.read_messages(raw, found)
    except MessageFormatError as exc:
        raise _bad(exc) from None
    marks.read.update(found.messages)
    return labeled


def read_assistant(blocks: Any, where: str) -> AssistantMessage:
    """An assistant message's content blocks (a reply's ``content``) as one message."""
    try:
        return anthropic.read_assistant(blocks, where)
    except MessageFormatError as exc:
        raise _bad(exc) from None


def _bad(exc: MessageFormatError) -> ApiError:
    return ApiError(400, f"{exc.at}: {exc.problem}", param=exc.at)
