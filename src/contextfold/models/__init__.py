"""Model backends behind the :class:`~contextfold.core.protocols.Model` protocol.

- :class:`ScriptedModel`: replays scripted replies or asks a function; records every call.
- :class:`OpenAIModel`: any OpenAI-compatible server (vLLM, SGLang, llama.cpp, OpenAI), through
  the ``openai`` SDK (extra ``contextfold[openai]``).
- :class:`LocalModel`: the embedded SmolLM2-135M-Instruct, in-process with llama-cpp-python.

Backends whose library is missing import fine and raise :class:`ModelError` with an install hint
when constructed. :class:`LocalModel` (numpy, llama.cpp) is imported the first time it is
used, so building a strategy that folds with another model does not load it.
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
