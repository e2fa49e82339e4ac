"""OpenAI's Chat Completions API: its routes (``POST /v1/chat/completions``), its requests read
into a :class:`._read.ChatRequest` (``stream_options`` kept apart), the answer written back
whole or streamed, errors in OpenAI's shape, and the wire to a Chat Completions upstream (the
API every other is translated to: :mod:`.wire`, :mod:`.media`, OpenAI's headers).
"""

from __future__ import annotations

from contextfold.serve.apis.chat._routes import chat_endpoints
from contextfold.serve.apis.chat.wire import ChatWire
from contextfold.serve.apis.spec import ApiSpec

__all__ = ["CHAT"]

CHAT = ApiSpec(
    "chat",
    "OpenAI Chat Completions",
    chat_endpoints,
    ChatWire,
    example_url="http://localhost:8000/v1",
)
