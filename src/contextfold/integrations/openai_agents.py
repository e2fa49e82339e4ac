"""contextfold for the OpenAI Agents SDK: a model-input filter that sends the strategy's view.

The run's items (``result.new_items``, ``to_input_list()``, a session memory) stay whole; only
the model call sees the view (``pip install 'contextfold[openai-agents]'``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from contextfold.core.errors import ConfigError, HistoryError
from contextfold.core.experience import Experience
from contextfold.core.protocols import Store
from contextfold.core.tokens import TokenCounter
from contextfold.integrations.conversations import missing_framework
from contextfold.session import Prepared, Session
from contextfold.strategies.folding import FolderSource

try:
    from agents import FunctionTool, TResponseInputItem
    from agents.models.chatcmpl_converter import Converter
    from agents.models.fake_id import FAKE_RESPONSES_ID
    from agents.run_config import CallModelData, ModelInputData
    from agents.tool_context import ToolContext
except ImportError as exc:  # pragma: no cover - what a user without the extra sees
    raise missing_framework(exc, "openai_agents", "openai-agents", "openai-agents") from exc

__all__ = ["ContextFoldFilter", "to_chat_messages", "to_input_items"]

OnPrepare = Callable[[Prepared], None]
"""Hears of each prepared view."""

_HINT = "a ContextFoldFilter is one conversation: give another conversation a filter of its own"


class ContextFoldFilter:
    """A ``RunConfig.call_model_input_filter`` for one conversation.

    ``strategy`` and the options are :class:`~contextfold.session.Session`'s; or
    pass a Session as ``strategy``. ``on_prepare`` hears of each view prepared.

    ::

        from agents import Agent, RunConfig, Runner
        from contextfold.integrations.openai_agents import ContextFoldFilter

        fold = ContextFoldFilter("refold", budget=32_000)  # one conversation
        agent = Agent(name="coder", tools=[bash, *fold.tools])
        result = Runner.run_sync(agent, task, run_config=RunConfig(call_model_input_filter=fold))

    The SDK calls the filter before every model call with the run's whole input (its Responses
    items and the instructions); the filter gives them, as OpenAI chat messages (the instructions
    first, as the system message), to a Session and returns the view as Responses items, which the
    SDK sends instead. ``fold.tools`` are the strategy's own tools (``restore``, ``recall``),
    answered by the filter. Give the next turn's run the same filter, and another conversation a
    filter of its own. Reasoning items are left out of the view; items with no chat form (images,
    hosted tools) are refused by the conversion, with the SDK's error.
    """

    def __init__(
        self,
        strategy: str | Mapping[str, Any] | Session = "refold",
        *,
        budget: int | None = None,
        store: Store | None = None,
        session_id: str | None = None,
        folder: str | FolderSource | None = None,
        experience: Experience | None = None,
        counter: TokenCounter | str | None = None,
        on_prepare: OnPrepare | None = None,
    ) -> None:
        if isinstance(strategy, Session):
            given = (budget, store, session_id, folder, experience, counter)
            if any(option is not None for option in given):
                raise ConfigError("give the options to the Session, not beside it")
            self.session = strategy
        else:
            self.session = Session(
                strategy,
                budget=budget,
                store=store,
                session_id=session_id,
                folder=folder,
                experience=experience,
                counter=counter,
            )
        self.on_prepare = on_prepare
        self.tools: list[FunctionTool] = [_tool(s, self) for s in self.session.own_tools]
        """The strategy's own tools, for the agent's ``tools``."""

    async def __call__(self, data: CallModelData[Any]) -> ModelInputData:
        messages = to_chat_messages(data.model_data)
        try:  # folding may call a folder model: off the event loop
            prepared = await asyncio.to_thread(self.session.prepare, messages)
        except HistoryError as exc:
            raise HistoryError(f"{exc}; {_HINT}") from None
        if self.on_prepare is not None:
            self.on_prepare(prepared)
        instructions, items = to_input_items(prepared.messages)
        return ModelInputData(input=items, instructions=instructions)


def to_chat_messages(data: ModelInputData) -> list[dict[str, Any]]:
    """The model's input as OpenAI chat messages, the instructions first (the SDK's own
    conversion, which its Chat Completions model uses)."""
    messages = [dict(m) for m in Converter.items_to_messages(data.input)]
    if data.instructions:
        return [{"role": "system", "content": data.instructions}, *messages]
    return messages


def to_input_items(
    messages: Sequence[Mapping[str, Any]],
) -> tuple[str | None, list[TResponseInputItem]]:
    """OpenAI chat messages as the SDK's instructions (a leading system message) and Responses
    input items: an assistant's text as an output message, each tool call a ``function_call``,
    each tool result a ``function_call_output``."""
    instructions = None
    if messages and messages[0]["role"] == "system":
        instructions, messages = str(messages[0]["content"]), messages[1:]
    items: list[dict[str, Any]] = []
    for message in messages:
        items.extend(_items(message))
    return instructions, cast(list[TResponseInputItem], items)


def _items(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    role, content = message["role"], message.get("content")
    if role == "tool":
        return [
            {"type": "function_call_output", "call_id": message["tool_call_id"], "output": content}
        ]
    if role != "assistant":
        return [{"role": role, "content": content or ""}]
    out: list[dict[str, Any]] = []
    if content:
        text = {"type": "output_text", "text": content, "annotations": []}
        out.append(
            {
                "type": "message",
                "id": FAKE_RESPONSES_ID,  # the SDK's own id for a message no provider named
                "role": "assistant",
                "status": "completed",
                "content": [text],
            }
        )
    for call in message.get("tool_calls") or ():
        fn = call["function"]
        out.append(
            {
                "type": "function_call",
                "call_id": call["id"],
                "name": fn["name"],
                "arguments": fn["arguments"],
            }
        )
    return out


def _tool(schema: Mapping[str, Any], owner: ContextFoldFilter) -> FunctionTool:
    """One of the strategy's tools, answered by the session of the run's filter (the one
    that made it when the run's filter is not a ContextFoldFilter)."""
    fn = schema["function"]
    name = fn["name"]

    async def invoke(context: ToolContext[Any], arguments: str) -> str:
        run_filter = context.run_config.call_model_input_filter if context.run_config else None
        target = run_filter if isinstance(run_filter, ContextFoldFilter) else owner
        answer = await asyncio.to_thread(target.session.call_tool, name, arguments)
        return answer if answer is not None else f"error: {name!r} is not a tool of the strategy"

    return FunctionTool(
        name=name,
        description=fn.get("description", ""),
        params_json_schema=dict(fn.get("parameters") or {"type": "object", "properties": {}}),
        on_invoke_tool=invoke,
        strict_json_schema=False,
    )
