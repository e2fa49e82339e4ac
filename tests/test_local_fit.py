"""``--upstream local`` on an agent CLI's requests, with the embedded model: a tool schema
llama.cpp cannot turn into a grammar does not fail the call (said once in the log), a request
larger than the window is fitted to it (tools, then older messages, then long texts), and a
reply that must follow a JSON schema does, even with a strategy's tools on the request."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from contextfold.core.messages import AssistantMessage, SystemMessage, ToolCall, UserMessage
from contextfold.models import LocalModel
from contextfold.models._grammar import Grammars
from contextfold.serve.apis.chat.wire import ChatWire
from contextfold.serve.apis.gemini._translate import chat_options
from contextfold.serve.upstream.local import LocalUpstream, reply_schema
from contextfold.serve.upstream.local_fit import fit_window

pytestmark = pytest.mark.embedded

RESTORE = {
    "type": "function",
    "function": {"name": "restore", "parameters": {"type": "object", "properties": {}}},
}
REFUSED = {"type": "object", "properties": {"path": {"description": "a file, no type"}}}
"""A schema llama-cpp-python's converter refuses ('Unrecognized schema')."""


def _tool(name: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


@pytest.fixture(scope="module")
def model() -> LocalModel:
    return LocalModel(max_tokens=24)


def test_a_tool_schema_the_grammar_cannot_take_binds_any_object_said_once(
    model: LocalModel, caplog: pytest.LogCaptureFixture
) -> None:
    import llama_cpp

    grammars = Grammars(llama_cpp, model="m")
    tools = [_tool("read", REFUSED), _tool("ls", {"type": "object", "properties": {}})]
    with caplog.at_level(logging.WARNING, logger="contextfold"):
        assert grammars.for_tools(tools, allow_message=True) is not None
        assert grammars.for_tools(tools[:1], allow_message=False) is not None
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and "'read'" in said[0] and "any JSON object" in said[0]
    reply = model.complete([UserMessage("List the files.")], tools)
    assert reply.message.content is not None or reply.message.tool_calls


def test_a_request_over_the_window_loses_tools_then_old_messages_then_long_texts(
    model: LocalModel,
) -> None:
    system = SystemMessage("You are a coding agent.")
    old = [UserMessage(f"Step {i}: " + "details of the earlier work. " * 40) for i in range(12)]
    call = AssistantMessage(None, tool_calls=(ToolCall("c1", "ls", "{}"),))
    last = UserMessage("Now say hello.")
    messages = [system, *old, call, last]
    tools = [_tool(f"t{i}", {"type": "object", "properties": {}}) for i in range(40)]
    fitted = fit_window(messages, tools, model, 1024)
    assert fitted.prompt_tokens <= 1024
    assert fitted.prompt_tokens == model.prompt_tokens(fitted.messages)
    assert fitted.tools == ()
    assert fitted.messages[0] == system and fitted.messages[-1] == last  # short: kept whole
    assert any("tokens left out here" in (m.content or "") for m in fitted.messages)
    assert set(fitted.reductions) == {"tools", "messages", "cut"}
    assert len(fitted.messages) < len(messages)
    small = fit_window([system, last], (), model, 1024)
    assert small.messages == [system, last] and small.reductions == {}


def test_a_reply_that_must_be_json_is_json_even_beside_a_strategys_tools(
    model: LocalModel,
) -> None:
    """Gemini CLI's router asks for JSON with OpenAPI's type names in ``responseJsonSchema``;
    the proxy's strategy adds its ``restore`` tool to every request."""
    schema = {
        "type": "OBJECT",
        "properties": {"score": {"type": "INTEGER"}, "why": {"type": "STRING"}},
        "required": ["score", "why"],
    }
    config = {"responseMimeType": "application/json", "responseJsonSchema": schema}
    body = chat_options({"model": "gemini-x", "generationConfig": config})
    assert body["response_format"]["json_schema"]["schema"]["type"] == "object"
    assert reply_schema({"response_format": {"type": "json_object"}}) == {"type": "object"}
    assert reply_schema({}) is None
    body |= {
        "messages": [{"role": "user", "content": "Rate: say hello."}],
        "tools": [
            _tool("restore", {"type": "object", "properties": {"step": {"type": "integer"}}})
        ],
    }
    completion = LocalUpstream(lambda: model, wire=ChatWire())._complete(body)
    data = json.loads(completion.message.content or "")
    assert set(data) == {"score", "why"} and isinstance(data["score"], int)
