"""Model backends behind the :class:`~contextfold.core.protocols.Model` protocol.

:class:`ScriptedModel` (scripted replies, every call recorded), :class:`OpenAIModel` (any
OpenAI-compatible server) and :class:`LocalModel` (the embedded SmolLM2-135M). A backend whose
library is missing imports fine and raises :class:`ModelError` with an install hint when built;
:class:`LocalModel` loads nothing until it is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contextfold.models._tools import ModelError, Reply, tool_call
from contextfold.models.openai_model import OpenAIModel
from contextfold.models.scripted import ReplyFunction, ScriptedCall, ScriptedModel

if TYPE_CHECKING:
    from contextfold.models.local import LocalModel

__all__ = [
    "LocalModel",
    "ModelError",
    "OpenAIModel",
    "Reply",
    "ReplyFunction",
    "ScriptedCall",
    "ScriptedModel",
    "tool_call",
]


def __getattr__(name: str) -> Any:
    """:class:`LocalModel`, imported when first used."""
    if name != "LocalModel":
        raise AttributeError(f"module 'contextfold.models' has no attribute {name!r}")
    from contextfold.models.local import LocalModel

    globals()["LocalModel"] = LocalModel
    return LocalModel
