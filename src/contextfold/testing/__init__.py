"""What you need to test your own agent offline: fake models and servers, never mocks.

:class:`ScriptedModel` replays scripted replies and records every call (pydantic-ai's
``TestModel``; it lives in :mod:`contextfold.models`, where ``--model scripted`` builds it).
The scripted upstreams (:mod:`contextfold.testing.upstreams`) are real HTTP servers an SDK or
agent CLI reaches by base URL, one per API: :class:`ScriptedServer` (Chat Completions),
:class:`ScriptedResponses`, :class:`ScriptedAnthropic`, :class:`ScriptedGemini`.
:class:`TempPostgres` is a throwaway PostgreSQL server. Guide: ``docs/library/testing.md``.
"""

from __future__ import annotations

from contextfold.models import ReplyFunction, ScriptedCall, ScriptedModel, tool_call
from contextfold.testing.postgres import TempPostgres
from contextfold.testing.upstreams.anthropic import AnthropicReply, ScriptedAnthropic
from contextfold.testing.upstreams.chat import ScriptedServer, echo_reply
from contextfold.testing.upstreams.gemini import GeminiReply, ScriptedGemini
from contextfold.testing.upstreams.responses import ResponsesReply, ScriptedResponses

__all__ = [
    "AnthropicReply",
    "GeminiReply",
    "ReplyFunction",
    "ResponsesReply",
    "ScriptedAnthropic",
    "ScriptedCall",
    "ScriptedGemini",
    "ScriptedModel",
    "ScriptedResponses",
    "ScriptedServer",
    "TempPostgres",
    "echo_reply",
    "tool_call",
]
