"""contextfold for LangChain v1 agents: a middleware that shows the model the strategy's view.

Only the model call sees the view: the agent's state, and a checkpointer's copy of it, stay
whole (``pip install 'contextfold[langchain]'``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

from contextfold.core.experience import Experience
from contextfold.core.protocols import Store
from contextfold.core.tokens import TokenCounter
from contextfold.integrations.conversations import Conversations, missing_framework
from contextfold.session import Prepared
from contextfold.strategies.folding import FolderSource

try:
    from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
    from langchain_core.messages import (
        AnyMessage,
        SystemMessage,
        convert_to_messages,
        convert_to_openai_messages,
    )
    from langchain_core.tools import BaseTool, StructuredTool
    from langgraph.config import get_config
except ImportError as exc:  # pragma: no cover - what a user without the extra sees
    raise missing_framework(exc, "langchain", "langchain", "langchain") from exc

__all__ = ["ContextFoldMiddleware"]

OnPrepare = Callable[[str | None, Prepared], None]
"""Hears of each prepared view: the thread id (None outside a thread) and the result."""

_HINT = (
    "each conversation needs its own LangGraph thread: invoke the agent with "
    "config={'configurable': {'thread_id': ...}}"
)


class ContextFoldMiddleware(AgentMiddleware[Any, Any, Any]):
    """Shows the model the strategy's view of each thread's conversation.

    The options are :class:`~contextfold.session.Session`'s, applied to every
    thread's session; ``on_prepare`` hears of each view prepared (its tokens, folds and
    elisions); ``limit`` caps the sessions kept in memory
    (:class:`~contextfold.integrations.conversations.Conversations`).

    ::

        from langchain.agents import create_agent
        from contextfold.integrations.langchain import ContextFoldMiddleware

        agent = create_agent(model, tools, middleware=[ContextFoldMiddleware("refold")])

    Before every model call, ``wrap_model_call`` (``awrap_model_call`` in async runs) gives the
    conversation (the request's system message, then the agent's messages, in OpenAI format) to a
    Session and calls the model with the view instead. The middleware's ``tools`` are the
    strategy's own (``restore``, ``recall``), which the agent registers and the session answers.
    Each LangGraph thread (``config={"configurable": {"thread_id": ...}}``) is a conversation with
    a session of its own (kept under that id when a store is given); runs without a thread id are
    one conversation.
    """

    def __init__(
        self,
        strategy: str | Mapping[str, Any] = "refold",
        *,
        budget: int | None = None,
        store: Store | None = None,
        folder: str | FolderSource | None = None,
        experience: Experience | None = None,
        counter: TokenCounter | str | None = None,
        on_prepare: OnPrepare | None = None,
        limit: int = 1024,
    ) -> None:
        super().__init__()
        self.conversations = Conversations(
            strategy,
            budget=budget,
            store=store,
            folder=folder,
            experience=experience,
            counter=counter,
            limit=limit,
            hint=_HINT,
        )
        self.on_prepare = on_prepare
        self.tools: list[BaseTool] = [
            _tool(s, self.conversations) for s in self.conversations.tools
        ]

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> ModelResponse[Any]:
        return handler(self._view(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        # Folding may call a folder model: off the event loop (the context, and with it the
        # thread id, goes along).
        return await handler(await asyncio.to_thread(self._view, request))

    def end(self, thread_id: str | None = None) -> None:
        """The thread's conversation is over: a learning strategy learns from it."""
        self.conversations.end(thread_id)

    def _view(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        key = _thread_id()
        system = [request.system_message] if request.system_message is not None else []
        prepared = self.conversations.prepare(
            key, convert_to_openai_messages([*system, *request.messages])
        )
        if self.on_prepare is not None:
            self.on_prepare(key, prepared)
        view = cast(list[AnyMessage], convert_to_messages(prepared.messages))
        head = view[0] if view and isinstance(view[0], SystemMessage) else None
        return request.override(messages=view[1:] if head else view, system_message=head)


def _thread_id() -> str | None:
    """The LangGraph thread of the running call, if it has one."""
    try:
        config = get_config()
    except RuntimeError:  # not inside a graph run
        return None
    thread = (config.get("configurable") or {}).get("thread_id")
    return None if thread is None else str(thread)


def _tool(schema: Mapping[str, Any], conversations: Conversations) -> BaseTool:
    """One of the strategy's tools as a LangChain tool answered by the thread's session."""
    fn = schema["function"]
    name = fn["name"]

    def run(**arguments: Any) -> str:
        return conversations.call_tool(_thread_id(), name, arguments)

    async def arun(**arguments: Any) -> str:
        return await asyncio.to_thread(run, **arguments)

    return StructuredTool.from_function(
        func=run,
        coroutine=arun,
        name=name,
        description=fn.get("description", ""),
        args_schema=dict(fn.get("parameters") or {"type": "object", "properties": {}}),
        infer_schema=False,
    )
