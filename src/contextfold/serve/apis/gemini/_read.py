"""Gemini ``contents`` read into the conversation's messages (the reading itself is
:mod:`contextfold.core.wire.gemini`, shared with the Gemini CLI importer): a malformed field is
a 400 naming it."""

from __future__ import annotations

from typing import Any

from contextfold.core.errors import MessageFormatError
from contextfold.core.grouping import Labeled
from contextfold.core.messages import AssistantMessage, SystemMessage
from contextfold.core.wire import gemini
from contextfold.core.wire.gemini import API, MINTED
from contextfold.serve.apis.gemini._names import bad

__all__ = ["API", "MINTED", "read_contents", "read_model", "read_system"]


def read_system(raw_value: Any) -> SystemMessage | None:
    """``systemInstruction`` (a Content of text parts, or a string) as one system message."""
    try:
        return gemini.read_system(raw_value)
    except MessageFormatError as exc:
        raise bad(exc.at, exc.problem) from None


def read_contents(raw_value: Any) -> list[Labeled]:
    """``contents`` as labelled messages (:func:`contextfold.core.wire.gemini.read_contents`);
    a 400 naming the field for anything malformed."""
    try:
        return gemini.read_contents(raw_value)
    except MessageFormatError as exc:
        raise bad(exc.at, exc.problem) from None


def read_model(parts: Any, where: str) -> AssistantMessage:
    """A model content's parts (a reply's) as one message; calls without an id get a new one."""
    try:
        return gemini.read_model(parts, where)
    except MessageFormatError as exc:
        raise bad(exc.at, exc.problem) from None
