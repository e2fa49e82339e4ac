"""ScriptedModel, the JSON tool-call helpers, and OpenAIModel against a real local HTTP server.

The server speaks the OpenAI chat-completions wire format from canned JSON, so the real
``openai`` SDK (retries, parsing, errors) runs against our client code; nothing is mocked.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from contextfold.core.errors import MessageFormatError
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
    to_openai,
)
from contextfold.core.protocols import Model
from contextfold.core.tokens import ApproxCounter, count_messages
from contextfold.models import ModelError, OpenAIModel, ScriptedModel, tool_call

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather of a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
CHAT: list[Message] = [SystemMessage("You help."), UserMessage("Weather in Paris?")]


# --------------------------------------------------------------------------- ScriptedModel


def test_scripted_replays_every_kind_of_reply_and_records_calls() -> None:
    model = ScriptedModel(
        [
            "plain text",
            {"content": None, "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]},
            AssistantMessage("done", reasoning="thought"),
        ]
    )
    assert isinstance(model, Model)
    first = model.complete(CHAT, [WEATHER], max_tokens=5)
    second = model.complete([*CHAT, first.message], [WEATHER])
    third = model.complete(CHAT)
    assert first.message == AssistantMessage("plain text")
    assert second.message.tool_calls == (ToolCall("call_1_0", "f", "{}"),)
    assert third.message.reasoning == "thought"
    assert [c.messages for c in model.calls] == [tuple(CHAT), (*CHAT, first.message), tuple(CHAT)]
    assert model.calls[0].tools == (WEATHER,)
    assert model.calls[0].max_tokens == 5
    assert model.calls[1].completion is second
    assert model.remaining == 0


def test_scripted_usage_counts_messages_and_the_shared_prefix() -> None:
    model = ScriptedModel(["a reply", "another", "third"])
    counts = count_messages(ApproxCounter(), CHAT)
    first = model.complete(CHAT).usage
    assert (first.prompt_tokens, first.cached_tokens) == (sum(counts), 0)
    assert first.completion_tokens == ApproxCounter().count("a reply")
    longer = [*CHAT, AssistantMessage("a reply"), UserMessage("and Rome?")]
    second = model.complete(longer).usage
    assert second.prompt_tokens == sum(count_messages(ApproxCounter(), longer))
    assert second.cached_tokens == sum(counts)
    third = model.complete([SystemMessage("Other."), *longer[1:]]).usage
    assert third.cached_tokens == 0


def test_scripted_uses_the_counter_it_is_given() -> None:
    class CharCounter:
        name = "chars"

        def count_batch(self, texts: Any) -> list[int]:
            return [len(t) for t in texts]

    usage = ScriptedModel(["abc"], counter=CharCounter()).complete([UserMessage("hello")]).usage
    assert usage.prompt_tokens == len("hello") + 4  # MESSAGE_OVERHEAD
    assert usage.completion_tokens == 3


def test_scripted_running_out_names_how_many_were_scripted() -> None:
    model = ScriptedModel(["one", "two"], name="agent")
    model.complete(CHAT)
    model.complete(CHAT)
    with pytest.raises(ModelError, match=r"'agent' was scripted with 2 replies.*call #3"):
        model.complete(CHAT)


def test_scripted_function_sees_messages_and_tools() -> None:
    def reply(messages: Any, tools: Any) -> str:
        return f"{len(messages)} messages, {len(tools)} tools"

    model = ScriptedModel(reply)
    assert model.complete(CHAT, [WEATHER]).message.content == "2 messages, 1 tools"
    assert model.remaining is None


def test_scripted_malformed_tool_calls_pass_through() -> None:
    model = ScriptedModel(
        [
            tool_call("get_weather", "{not json", call_id="c1"),
            {"tool_calls": [{"id": "c2", "function": {"name": "get_weather", "arguments": "[1,"}}]},
        ]
    )
    for _ in range(2):
        call = model.complete(CHAT, [WEATHER]).message.tool_calls[0]
        with pytest.raises(MessageFormatError, match="malformed JSON"):
            call.parsed_arguments()


def test_scripted_rejects_replies_that_are_not_assistant_messages() -> None:
    with pytest.raises(ModelError, match="reply #0 has role 'user'"):
        ScriptedModel([{"role": "user", "content": "hi"}]).complete(CHAT)
    with pytest.raises(ModelError, match="reply #0 is a int"):
        ScriptedModel([3]).complete(CHAT)  # type: ignore[list-item]


def test_tool_call_helper_serializes_mappings() -> None:
    message = tool_call("get_weather", {"city": "Zürich"})
    assert message.tool_calls[0].parsed_arguments() == {"city": "Zürich"}


# --------------------------------------------------------------------------- OpenAIModel


CALL = {"id": "call_9", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
MESSAGE = {
    "role": "assistant",
    "content": None,
    "reasoning_content": "Look it up.",
    "tool_calls": [CALL],
}
USAGE = {
    "prompt_tokens": 120,
    "completion_tokens": 9,
    "prompt_tokens_details": {"cached_tokens": 96},
}
CHOICE = {"index": 0, "finish_reason": "tool_calls", "message": MESSAGE}
REPLY = {"id": "c1", "object": "chat.completion", "created": 1, "model": "m", "choices": [CHOICE]}
REPLY["usage"] = {**USAGE, "total_tokens": 129}
FAST_RETRY = {"retry-after-ms": "1"}  # a header real servers send; keeps the test fast


class ChatServer:
    """An HTTP server answering ``/chat/completions`` with queued (status, body, headers)."""

    def __init__(self) -> None:
        self.responses: list[tuple[int, dict[str, Any], dict[str, str]]] = []
        self.requests: list[tuple[dict[str, str], dict[str, Any]]] = []
        self.delay = 0.0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                time.sleep(server.delay)
                status, reply, headers = server.responses.pop(0)
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)  # the timeout test's client hangs up first

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


@pytest.fixture
def server() -> Iterator[ChatServer]:
    chat = ChatServer()
    thread = threading.Thread(target=chat.httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield chat
    chat.httpd.shutdown()
    chat.httpd.server_close()


def test_openai_round_trip_with_tool_calls_reasoning_and_cached_tokens(
    server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.responses.append((200, REPLY, {}))
    model = OpenAIModel("m", base_url=server.url, temperature=0.0, extra_body={"top_k": 1})
    assert isinstance(model, Model)
    messages = [*CHAT, AssistantMessage("ok"), ToolMessage("sunny", "call_0", name="w")]
    completion = model.complete(messages, [WEATHER], max_tokens=32)
    assert completion.message == AssistantMessage(
        None,
        tool_calls=(ToolCall("call_9", "get_weather", "{}"),),
        reasoning="Look it up.",
    )
    assert (completion.usage.prompt_tokens, completion.usage.cached_tokens) == (120, 96)
    assert completion.usage.completion_tokens == 9
    headers, body = server.requests[0]
    assert headers["authorization"] == "Bearer EMPTY"
    assert body["messages"] == [to_openai(m) for m in messages]
    assert body["tools"] == [WEATHER]
    assert (body["model"], body["max_tokens"], body["temperature"], body["top_k"]) == (
        "m",
        32,
        0.0,
        1,
    )


def test_openai_usage_variants(server: ChatServer) -> None:
    usage = {"prompt_tokens": 10, "completion_tokens": 2, "prompt_cache_hit_tokens": 8}
    deepseek = {**REPLY, "usage": {**usage, "total_tokens": 12}}
    server.responses += [
        (200, deepseek, {}),
        (200, {k: v for k, v in REPLY.items() if k != "usage"}, {}),
    ]
    model = OpenAIModel(
        "m", base_url=server.url, api_key="k", max_tokens_field="max_completion_tokens"
    )
    assert model.complete(CHAT, max_tokens=4).usage.cached_tokens == 8
    assert model.complete(CHAT).usage.prompt_tokens == 0  # the server reported no usage
    assert server.requests[0][1]["max_completion_tokens"] == 4
    assert "tools" not in server.requests[0][1]


def test_openai_retries_a_500_then_succeeds(server: ChatServer) -> None:
    server.responses += [(500, {"error": {"message": "busy"}}, FAST_RETRY), (200, REPLY, {})]
    model = OpenAIModel("m", base_url=server.url, max_retries=2)
    assert model.complete(CHAT).message.tool_calls[0].name == "get_weather"
    assert len(server.requests) == 2
    assert server.requests[1][0]["x-stainless-retry-count"] == "1"


def test_openai_gives_up_with_a_clear_error(server: ChatServer) -> None:
    server.responses += [(429, {"error": {"message": "slow down"}}, FAST_RETRY)] * 2
    model = OpenAIModel("m", base_url=server.url, max_retries=1)
    with pytest.raises(ModelError, match=r"answered HTTP 429 after 1 retries"):
        model.complete(CHAT)
    assert len(server.requests) == 2


def test_openai_does_not_retry_a_bad_request(server: ChatServer) -> None:
    server.responses.append((400, {"error": {"message": "bad tools"}}, {}))
    with pytest.raises(ModelError, match=r"HTTP 400 \(not retried\).*bad tools"):
        OpenAIModel("m", base_url=server.url).complete(CHAT)
    assert len(server.requests) == 1


def test_openai_timeout_and_unreachable_server(server: ChatServer) -> None:
    server.delay = 1.0
    server.responses.append((200, REPLY, {}))
    slow = OpenAIModel("m", base_url=server.url, timeout=0.2, max_retries=0)
    with pytest.raises(ModelError, match="timed out"):
        slow.complete(CHAT)
    port = server.httpd.server_address[1]
    server.httpd.shutdown()
    server.httpd.server_close()
    gone = OpenAIModel("m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
    with pytest.raises(ModelError, match="cannot be reached"):
        gone.complete(CHAT)


def test_openai_without_a_key_or_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        OpenAIModel("gpt-4o-mini")
    monkeypatch.setitem(sys.modules, "openai", None)  # what an absent package looks like
    with pytest.raises(ModelError, match=r"pip install"):
        OpenAIModel("m", base_url="http://127.0.0.1:9/v1")


def test_tool_schemas_with_local_defs_are_inlined_for_the_grammar() -> None:
    from contextfold.core.errors import ModelError
    from contextfold.models._tools import json_reply_schema

    tool = {
        "type": "function",
        "function": {
            "name": "book",
            "parameters": {
                "type": "object",
                "properties": {"who": {"type": "array", "items": {"$ref": "#/$defs/Person"}}},
                "required": ["who"],
                "$defs": {"Person": {"type": "object", "properties": {"n": {"type": "string"}}}},
            },
        },
    }
    schema = json_reply_schema([tool])
    args = schema["anyOf"][0]["properties"]["arguments"]
    assert args["properties"]["who"]["items"] == {
        "type": "object",
        "properties": {"n": {"type": "string"}},
    }
    assert "$defs" not in args
    broken = {
        "name": "f",
        "parameters": {"type": "object", "properties": {"x": {"$ref": "#/$defs/Y"}}},
    }
    with pytest.raises(ModelError, match="does not define"):
        json_reply_schema([broken])
