"""Model backends behind the :class:`~contextfold.core.protocols.Model` protocol.

- :class:`ScriptedModel`: replays scripted replies or asks a function; records every call.
- :class:`OpenAIModel`: any OpenAI-compatible server (vLLM, SGLang, llama.cpp, OpenAI), through
  the ``openai`` SDK (extra ``contextfold[openai]``).
- :class:`LocalModel`: the embedded SmolLM2-135M-Instruct, in-process with llama-cpp-python.

Backends whose library is missing import fine and raise :class:`ModelError` with an install hint
when constructed.
"""

from __future__ import annotations

from contextfold.models._tools import ModelError, Reply, tool_call
from contextfold.models.local import LocalModel
from contextfold.models.openai_model import OpenAIModel
from contextfold.models.scripted import ReplyFunction, ScriptedCall, ScriptedModel

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
