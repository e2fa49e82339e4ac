"""contextfold for PydanticAI: a capability that sends the model the strategy's view.

Its ``before_model_request`` changes only the request's messages, so the run's history
(``result.all_messages()``) stays whole, where a PydanticAI 1 history processor's output became
the history (``pip install 'contextfold[pydantic-ai]'``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from contextfold.core.errors import MessageFormatError
from contextfold.core.experience import Experience
from contextfold.core.protocols import Store
from contextfold.core.tokens import TokenCounter
from contextfold.integrations.conversations import Conversations, missing_framework
from contextfold.session import Prepared
from contextfold.strategies.folding import FolderSource

try:
    from pydantic_ai import RunContext, Tool
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelRequestPart,
        ModelResponse,
        ModelResponsePart,
        RetryFeedbackPart,
        SystemPromptPart,
        TextPart,
        ThinkingPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
    from pydantic_ai.models import ModelRequestContext
    from pydantic_ai.toolsets import FunctionToolset
except ImportError as exc:  # pragma: no cover - what a user without the extra sees
    raise missing_framework(exc, "pydantic_ai", "pydantic-ai", "pydantic-ai") from exc

__all__ = ["ContextFold", "from_chat_messages", "to_chat_messages"]

OnPrepare = Callable[[str | None, Prepared], None]
"""Hears of each prepared view: the conversation id and the result."""

_HINT = (
    "each conversation needs its own conversation_id: start another with a new Agent.run "
    "(no message_history), continue one with message_history=result.all_messages()"
)


class ContextFold(AbstractCapability[Any]):
    """Sends the model the strategy's view of each conversation.
    The options are :class:`~contextfold.session.Session`'s, applied to every conversation's
    session; ``on_prepare`` hears of each view prepared; ``limit`` caps the sessions kept in
    memory (:class:`~contextfold.integrations.conversations.Conversations`).

    ::

        from pydantic_ai import Agent
        from contextfold.integrations.pydantic_ai import ContextFold

        agent = Agent(model, tools=[bash], capabilities=[ContextFold("refold", budget=32_000)])

    Before each model request the conversation (system prompts, user prompts, tool calls and
    returns, as OpenAI chat messages) goes to a Session and the view is sent instead; the agent's
    ``instructions`` travel beside the messages as PydanticAI sends them (not counted in the
    budget). Its toolset holds the strategy's own tools (``restore``, ``recall``), answered by the
    session. Each conversation (``conversation_id``, which a run takes from the ``message_history``
    it continues) has a session of its own, kept under that id when a store is given. A part with
    no chat form (images, files, hosted tools) is refused, naming it.
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
        self._toolset = FunctionToolset[Any]([_tool(s, self.conversations) for s in self.tools])

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The schemas of the strategy's own tools, which the capability's toolset offers."""
        return self.conversations.tools

    def get_toolset(self) -> FunctionToolset[Any]:
        return self._toolset

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        key = ctx.conversation_id
        messages = to_chat_messages(request_context.messages)
        # Folding may call a folder model: off the event loop.
        prepared = await asyncio.to_thread(self.conversations.prepare, key, messages)
        if self.on_prepare is not None:
            self.on_prepare(key, prepared)
        request_context.messages = from_chat_messages(prepared.messages)
        return request_context

    def end(self, conversation_id: str | None) -> None:
        """The conversation is over: a learning strategy learns from it."""
        self.conversations.end(conversation_id)


def to_chat_messages(messages: Sequence[ModelMessage]) -> list[dict[str, Any]]:
    """PydanticAI messages as OpenAI chat messages; a part with no chat form is refused with
    its place (``messages[3].parts[1]``)."""
    out: list[dict[str, Any]] = []
    for i, message in enumerate(messages):
        if isinstance(message, ModelResponse):
            out.append(_assistant(message, f"messages[{i}]"))
            continue
        for j, part in enumerate(message.parts):
            out.append(_request_part(part, f"messages[{i}].parts[{j}]"))
    return out


def _request_part(part: ModelRequestPart, at: str) -> dict[str, Any]:
    if isinstance(part, SystemPromptPart):
        return {"role": "system", "content": part.content}
    if isinstance(part, UserPromptPart):
        return {"role": "user", "content": _text(part, at)}
    if isinstance(part, ToolReturnPart):
        content = part.model_response_str()
        return {"role": "tool", "tool_call_id": part.tool_call_id, "content": content}
    if isinstance(part, RetryFeedbackPart):
        return {"role": "user", "content": part.model_response()}
    raise _unsupported(part, at)


def _assistant(message: ModelResponse, at: str) -> dict[str, Any]:
    texts, thinking, calls = [], [], []
    for j, part in enumerate(message.parts):
        if isinstance(part, TextPart):
            texts.append(part.content)
        elif isinstance(part, ThinkingPart):
            thinking.append(part.content)
        elif isinstance(part, ToolCallPart):
            fn = {"name": part.tool_name, "arguments": part.args_as_json_str()}
            calls.append({"id": part.tool_call_id, "type": "function", "function": fn})
        else:
            raise _unsupported(part, f"{at}.parts[{j}]")
    out: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
    if calls:
        out["tool_calls"] = calls
    if thinking:
        out["reasoning_content"] = "\n".join(thinking)
    return out


def _text(part: UserPromptPart, at: str) -> str:
    if isinstance(part.content, str):
        return part.content
    if all(isinstance(item, str) for item in part.content):
        return "\n".join(str(item) for item in part.content)
    kinds = sorted({type(item).__name__ for item in part.content if not isinstance(item, str)})
    raise MessageFormatError(
        f"a user prompt holding {', '.join(kinds)} has no text-only chat form, which "
        "contextfold's views need",
        at=at,
    )


def _unsupported(part: ModelRequestPart | ModelResponsePart, at: str) -> MessageFormatError:
    return MessageFormatError(
        f"a {type(part).__name__} has no chat form that contextfold's views can hold (they "
        "hold system and user prompts, text, thinking, tool calls and tool returns)",
        at=at,
    )


def from_chat_messages(messages: Sequence[Mapping[str, Any]]) -> list[ModelMessage]:
    """OpenAI chat messages as PydanticAI messages: the parts of consecutive system, user and
    tool messages in one request, each assistant message a response."""
    out: list[ModelMessage] = []
    pending: list[ModelRequestPart] = []
    names: dict[str, str] = {}  # tool call id -> tool name, for the tool returns
    for message in messages:
        if message["role"] == "assistant":
            if pending:
                out.append(ModelRequest(parts=pending))
                pending = []
            response = _response(message)
            calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
            names.update({p.tool_call_id: p.tool_name for p in calls})
            out.append(response)
        else:
            pending.append(_part(message, names))
    if pending:
        out.append(ModelRequest(parts=pending))
    return out


def _part(message: Mapping[str, Any], names: Mapping[str, str]) -> ModelRequestPart:
    role, content = message["role"], str(message.get("content") or "")
    if role == "system":
        return SystemPromptPart(content)
    if role == "tool":
        call_id = message["tool_call_id"]
        return ToolReturnPart(names.get(call_id, ""), content, tool_call_id=call_id)
    return UserPromptPart(content)


def _response(message: Mapping[str, Any]) -> ModelResponse:
    parts: list[ModelResponsePart] = []
    if message.get("reasoning_content"):
        parts.append(ThinkingPart(str(message["reasoning_content"])))
    if message.get("content"):
        parts.append(TextPart(str(message["content"])))
    for call in message.get("tool_calls") or ():
        fn = call["function"]
        parts.append(ToolCallPart(fn["name"], fn["arguments"], tool_call_id=call["id"]))
    return ModelResponse(parts=parts)


def _tool(schema: Mapping[str, Any], conversations: Conversations) -> Tool[Any]:
    """One of the strategy's tools, answered by the session of the run's conversation."""
    fn = schema["function"]
    name = fn["name"]

    async def run(ctx: RunContext[Any], **arguments: Any) -> str:
        call = conversations.call_tool
        return await asyncio.to_thread(call, ctx.conversation_id, name, arguments)

    return Tool.from_schema(
        run,
        name=name,
        description=fn.get("description", ""),
        json_schema=dict(fn.get("parameters") or {"type": "object", "properties": {}}),
        takes_ctx=True,
    )
