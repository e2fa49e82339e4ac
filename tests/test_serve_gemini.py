"""The proxy's Gemini API, driven by the official ``google-genai`` SDK, in front of a scripted
Gemini upstream (a real HTTP server that checks bodies and Gemini 3 thought signatures as the
API does) and of a Chat Completions one; and a Chat Completions client in front of a Gemini
upstream."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import anthropic
import httpx
import pytest
from google import genai
from google.genai import errors, types

from contextfold.serve.apis.gemini._write import SKIP_SIGNATURE
from contextfold.testing.upstreams.anthropic import ScriptedAnthropic, tool_use
from contextfold.testing.upstreams.chat import ScriptedServer
from contextfold.testing.upstreams.gemini import ScriptedGemini, function_call, text, thought
from contextfold.testing.upstreams.responses import ScriptedResponses, message
from contextfold.testing.upstreams.responses import function_call as responses_call
from tests._clis import MARKS
from tests._protocols import TOKEN, anthropic_client, openai_client, proxy_for, root, sessions

MODEL = "gemini-3-flash-preview"
"""A Gemini 3 model: the upstream refuses a function call sent back without its signature."""
KEY = "gm-client-key"
WEATHER = types.Tool(
    function_declarations=[
        types.FunctionDeclaration(
            name="weather",
            description="The weather in a city.",
            parameters_json_schema={"type": "object", "properties": {"city": {"type": "string"}}},
        )
    ]
)
MANUAL = types.AutomaticFunctionCallingConfig(disable=True)
SKIPS = {SKIP_SIGNATURE, "context_engineering_is_the_way_to_go"}
"""The dummy signatures Gemini accepts in place of a real one."""


def _signature(value: str) -> bytes:
    """A ``thoughtSignature``'s bytes (the SDK writes URL-safe base64)."""
    return base64.urlsafe_b64decode(value.replace("+", "-").replace("/", "_") + "==")


def _client(proxy: Any) -> genai.Client:
    options = types.HttpOptions(
        base_url=root(proxy),
        headers={"X-Contextfold-Token": TOKEN},
        retry_options=types.HttpRetryOptions(attempts=1),
    )
    return genai.Client(api_key=KEY, http_options=options)


def _upstream(replies: Any) -> ScriptedGemini:
    return ScriptedGemini(replies, api_key=KEY)


def test_generate_content_is_answered_through_the_view_with_the_clients_key(
    tmp_path: Path,
) -> None:
    with _upstream(["Hello there."]) as up, proxy_for(up, "gemini", tmp_path / "s.db") as proxy:
        config = types.GenerateContentConfig(system_instruction="Be terse.", max_output_tokens=64)
        client = _client(proxy)  # held: the SDK closes its connections when it is collected
        reply = client.models.generate_content(model=MODEL, contents="Say hello.", config=config)
    assert reply.text == "Hello there." and reply.candidates[0].finish_reason == "STOP"
    assert reply.usage_metadata is not None and reply.usage_metadata.prompt_token_count
    (sent,) = up.requests
    assert sent.path == f"/v1beta/models/{MODEL}:generateContent"
    assert sent.headers["x-goog-api-key"] == KEY and TOKEN not in json.dumps(sent.headers)
    assert sent.body["contents"] == [{"role": "user", "parts": [{"text": "Say hello."}]}]
    assert sent.body["systemInstruction"]["parts"] == [{"text": "Be terse."}]
    assert sent.body["generationConfig"]["maxOutputTokens"] == 64
    declared = [d["name"] for t in sent.body["tools"] for d in t["functionDeclarations"]]
    assert declared == ["restore"]  # the strategy's own tool
    assert len(sessions(tmp_path / "s.db")) == 1


def test_a_streamed_reply_is_server_sent_events_with_the_signature_last() -> None:
    words = "A reply long enough to come in several chunks of text.\nAnd a second line."
    with _upstream([words]) as up, proxy_for(up, "gemini") as proxy:
        client = _client(proxy)
        chunks = list(client.models.generate_content_stream(model=MODEL, contents="Hi"))
    assert "".join(c.text or "" for c in chunks) == words
    assert chunks[-1].candidates[0].finish_reason == "STOP" and chunks[-1].usage_metadata
    assert chunks[-1].candidates[0].content.parts[-1].thought_signature  # the upstream's
    assert up.requests[0].query == "alt=sse"


def test_the_default_stream_is_one_json_array() -> None:
    with _upstream(["First line of it.\nSecond line of it."]) as up, proxy_for(up, "gemini") as p:
        url = f"{root(p)}/v1beta/models/{MODEL}:streamGenerateContent?key={KEY}"
        body = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
        answer = httpx.post(url, json=body, headers={"X-Contextfold-Token": TOKEN}, timeout=30)
    assert answer.headers["content-type"].startswith("application/json")
    chunks = answer.json()
    said = [p.get("text", "") for c in chunks for p in c["candidates"][0]["content"]["parts"]]
    assert "".join(said) == "First line of it.\nSecond line of it."
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert up.requests[0].headers["x-goog-api-key"] == KEY  # ?key= passed on as the header


def test_count_tokens_is_the_upstreams_own_count_or_the_proxys() -> None:
    with _upstream([]) as up, proxy_for(up, "gemini") as proxy:
        client = _client(proxy)
        counted = client.models.count_tokens(model=MODEL, contents="Count these words.")
    assert counted.total_tokens and up.requests[0].path.endswith(":countTokens")
    with ScriptedServer() as chat, proxy_for(chat, "chat") as proxy:
        client = _client(proxy)
        ours = client.models.count_tokens(model=MODEL, contents="Count these words.")
    assert ours.total_tokens and chat.requests == []


def test_the_models_are_the_upstreams_in_geminis_listing() -> None:
    with _upstream([]) as up, proxy_for(up, "gemini") as proxy:
        client = _client(proxy)
        names = [m.name for m in client.models.list()]
    assert names == ["models/gemini-scripted"]  # the Gemini upstream's own
    with ScriptedServer() as chat, proxy_for(chat, "chat") as proxy:
        client = _client(proxy)
        listed = [m.name for m in client.models.list()]  # its /v1/models, in Gemini's shape too
        url = f"{root(proxy)}/v1beta/models?key={KEY}"
        beta = httpx.get(url, headers={"X-Contextfold-Token": TOKEN}, timeout=30).json()
    assert listed == [m["name"] for m in beta["models"]] == ["models/scripted"]


def test_a_function_call_round_trip_sends_its_thought_signature_back(tmp_path: Path) -> None:
    script = [[text("Checking."), function_call("weather", {"city": "Oslo"})], "It is sunny."]
    with _upstream(script) as up, proxy_for(up, "gemini", tmp_path / "s.db") as proxy:
        client = _client(proxy)
        config = types.GenerateContentConfig(tools=[WEATHER], automatic_function_calling=MANUAL)
        asked = types.Content(role="user", parts=[types.Part(text="Weather in Oslo?")])
        first = client.models.generate_content(model=MODEL, contents=[asked], config=config)
        (call,) = first.function_calls or []
        assert call.name == "weather" and call.args == {"city": "Oslo"}
        answer = types.Part.from_function_response(name="weather", response={"output": "sunny"})
        answer.function_response.id = call.id
        turn = [asked, first.candidates[0].content, types.Content(role="user", parts=[answer])]
        second = client.models.generate_content(model=MODEL, contents=turn, config=config)
    assert second.text == "It is sunny."  # the upstream verified the call's signature
    model_turn = up.calls[1]["contents"][1]
    signed = next(p for p in model_turn["parts"] if "functionCall" in p)
    assert signed["thoughtSignature"] != SKIP_SIGNATURE and "id" not in signed["functionCall"]
    assert up.calls[1]["contents"][2]["parts"][0]["functionResponse"]["name"] == "weather"
    assert len(sessions(tmp_path / "s.db")) == 1


PIXEL = (  # a 1x1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def test_thoughts_signatures_and_images_travel_verbatim() -> None:
    script = [[thought("Weather needs a lookup."), function_call("weather", {"city": "Oslo"})],
              "Sunny."]  # fmt: skip
    with _upstream(script) as up, proxy_for(up, "gemini") as proxy:
        client = _client(proxy)
        config = types.GenerateContentConfig(
            tools=[WEATHER],
            automatic_function_calling=MANUAL,
            thinking_config=types.ThinkingConfig(include_thoughts=True),
        )
        image = types.Part.from_bytes(data=base64.b64decode(PIXEL), mime_type="image/png")
        asked = types.Content(role="user", parts=[types.Part(text="Weather here?"), image])
        first = client.models.generate_content(model=MODEL, contents=[asked], config=config)
        parts = first.candidates[0].content.parts
        assert [bool(p.thought) for p in parts] == [True, False] and parts[0].text
        (call,) = first.function_calls or []
        answer = types.Part.from_function_response(name="weather", response={"output": "sunny"})
        answer.function_response.id = call.id
        turn = [asked, first.candidates[0].content, types.Content(role="user", parts=[answer])]
        second = client.models.generate_content(model=MODEL, contents=turn, config=config)
    assert second.text == "Sunny."
    sent_first, sent_second = up.calls
    assert sent_second["contents"][0] == sent_first["contents"][0]  # the image as it came
    assert sent_second["contents"][0]["parts"][1]["inlineData"]["mimeType"] == "image/png"
    model_turn = sent_second["contents"][1]["parts"]
    assert model_turn[0]["thought"] is True and model_turn[0]["text"] == "Weather needs a lookup."
    given = first.candidates[0].content.parts[1].thought_signature  # what the client got
    assert _signature(model_turn[1]["thoughtSignature"]) == given


@pytest.mark.parametrize("stream", [False, True])
def test_a_restore_round_is_answered_by_the_proxy_and_the_client_sees_its_words(
    stream: bool,
) -> None:
    script = [
        [text("Looking again." + MARKS), function_call("restore", {"step": 0})],
        "You said hello." + MARKS,
    ]
    with _upstream(script) as up, proxy_for(up, "gemini") as proxy:
        client = _client(proxy)
        if stream:
            chunks = list(client.models.generate_content_stream(model=MODEL, contents="hello"))
            said = "".join(c.text or "" for c in chunks)
            calls = [c for ch in chunks for c in ch.function_calls or []]
        else:
            reply = client.models.generate_content(model=MODEL, contents="hello")
            said, calls = reply.text or "", reply.function_calls or []
    assert said == "Looking again.\n\nYou said hello."  # both rounds, no marker line
    assert calls == []  # the client never sees the strategy's tool
    restored = up.calls[1]["contents"]
    assert restored[-1]["parts"][0]["functionResponse"]["name"] == "restore"
    assert "hello" in json.dumps(restored[-1])


_SAID = [{"role": "user", "parts": [{"text": "hi"}]}]
_ANSWER = {"functionResponse": {"name": "weather", "response": {"output": "sunny"}}}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"contents": [{"role": "assistant", "parts": [{"text": "hi"}]}]}, "contents[0].role"),
        ({"contents": [{"role": "user", "parts": []}]}, "contents[0].parts"),
        (
            {"contents": [{"role": "user", "parts": [_ANSWER]}]},
            "contents[0].parts[0].functionResponse",
        ),
        (
            {"contents": _SAID, "generationConfig": {"candidateCount": 2}},
            "generationConfig.candidateCount",
        ),
        (
            {"contents": _SAID, "tools": [{"functionDeclarations": [{}]}]},
            "tools[0].functionDeclarations[0].name",
        ),
    ],
)
def test_bad_requests_get_googles_errors_naming_the_field(body: Any, field: str) -> None:
    with _upstream([]) as up, proxy_for(up, "gemini") as proxy:
        url = f"{root(proxy)}/v1beta/models/{MODEL}:generateContent?key={KEY}"
        answer = httpx.post(url, json=body, headers={"X-Contextfold-Token": TOKEN}, timeout=30)
    error = answer.json()["error"]
    assert (answer.status_code, error["status"]) == (400, "INVALID_ARGUMENT")
    assert error["message"].startswith(f"{field}: ") and up.requests == []


def test_errors_come_back_in_googles_shape() -> None:
    with _upstream(["unused"]) as up, proxy_for(up, "gemini") as proxy:
        url = f"{root(proxy)}/v1beta/models/{MODEL}:generateContent"
        headers = {"X-Contextfold-Token": TOKEN, "x-goog-api-key": KEY}
        bad = httpx.post(url, json={"contents": []}, headers=headers, timeout=30)
        up.fail = (429, "Resource has been exhausted (e.g. check quota).")
        client = _client(proxy)
        with pytest.raises(errors.ClientError) as raised:
            client.models.generate_content(model=MODEL, contents="hi")
        up.fail, up.stream_error = None, (503, "The model is overloaded.")
        with pytest.raises(errors.ServerError) as midway:  # after the stream began
            list(client.models.generate_content_stream(model=MODEL, contents="hi"))
    assert bad.status_code == 400
    error = bad.json()["error"]
    assert error["status"] == "INVALID_ARGUMENT" and error["code"] == 400
    assert error["message"].startswith("contents: must be a non-empty array")
    assert raised.value.code == 429 and raised.value.status == "RESOURCE_EXHAUSTED"
    assert "Resource has been exhausted" in str(raised.value.message)
    assert midway.value.code == 503 and midway.value.status == "UNAVAILABLE"


def _chat_reply(body: dict[str, Any]) -> dict[str, Any]:
    if body["messages"][-1]["role"] == "tool":
        return {"role": "assistant", "content": "Sunny in Oslo."}
    call = {"id": "call_1", "type": "function",
            "function": {"name": "weather", "arguments": '{"city": "Oslo"}'}}  # fmt: skip
    return {"role": "assistant", "content": None, "tool_calls": [call]}


@pytest.mark.parametrize("stream", [False, True])
def test_a_gemini_client_is_served_by_a_chat_completions_upstream(stream: bool) -> None:
    with ScriptedServer(_chat_reply) as up, proxy_for(up, "chat") as proxy:
        client = _client(proxy)
        config = types.GenerateContentConfig(
            tools=[WEATHER],
            automatic_function_calling=MANUAL,
            system_instruction="Be brief.",
            max_output_tokens=32,
        )
        asked = types.Content(role="user", parts=[types.Part(text="Weather in Oslo?")])
        if stream:
            chunks = list(client.models.generate_content_stream(
                model="m", contents=[asked], config=config))  # fmt: skip
            calls = [c for ch in chunks for c in ch.function_calls or []]
            model_turn = types.Content(role="model", parts=[types.Part(function_call=calls[0])])
        else:
            first = client.models.generate_content(model="m", contents=[asked], config=config)
            calls, model_turn = first.function_calls or [], first.candidates[0].content
        assert [(c.id, c.name, c.args) for c in calls] == [("call_1", "weather", {"city": "Oslo"})]
        answer = types.Part.from_function_response(name="weather", response={"output": "sunny"})
        answer.function_response.id = "call_1"
        turn = [asked, model_turn, types.Content(role="user", parts=[answer])]
        second = client.models.generate_content(model="m", contents=turn, config=config)
    assert second.text == "Sunny in Oslo."
    sent = up.requests[-1][1]
    assert sent["messages"][0] == {"role": "system", "content": "Be brief."}
    assert sent["messages"][-1] == {"role": "tool", "content": "sunny", "tool_call_id": "call_1"}
    assert sent["max_tokens"] == 32
    assert {t["function"]["name"] for t in sent["tools"]} == {"weather", "restore"}
    assert "x-goog-api-key" not in up.requests[-1][0]  # the client's Google key stays home


def _weather_round_trip(proxy: Any, model: str) -> str:
    """A Gemini client's function-call round trip: the second reply's text."""
    client = _client(proxy)
    config = types.GenerateContentConfig(
        tools=[WEATHER], automatic_function_calling=MANUAL, max_output_tokens=50
    )
    asked = types.Content(role="user", parts=[types.Part(text="Weather in Oslo?")])
    first = client.models.generate_content(model=model, contents=[asked], config=config)
    (call,) = first.function_calls or []
    assert (call.name, call.args) == ("weather", {"city": "Oslo"})
    answer = types.Part.from_function_response(name="weather", response={"output": "sunny"})
    answer.function_response.id = call.id
    turn = [asked, first.candidates[0].content, types.Content(role="user", parts=[answer])]
    return client.models.generate_content(model=model, contents=turn, config=config).text or ""


def test_a_gemini_client_is_served_by_an_anthropic_upstream() -> None:
    script = [[tool_use("weather", {"city": "Oslo"})], "Sunny in Oslo."]
    with ScriptedAnthropic(script) as up, proxy_for(up, "anthropic", upstream_key="sk-a") as p:
        assert _weather_round_trip(p, "claude-test") == "Sunny in Oslo."
    first, second = up.calls
    assert first["max_tokens"] == 50 and first["model"] == "claude-test"
    assert {t["name"] for t in first["tools"]} == {"weather", "restore"}
    result = second["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["content"] == "sunny"
    assert up.requests[0].headers["x-api-key"] == "sk-a"  # the proxy's key, not the client's


def test_a_gemini_client_is_served_by_a_responses_upstream() -> None:
    script = [[responses_call("weather", {"city": "Oslo"})], [message("Sunny in Oslo.")]]
    with ScriptedResponses(script) as up, proxy_for(up, "responses", upstream_key="sk-r") as p:
        assert _weather_round_trip(p, "gpt-test") == "Sunny in Oslo."
    first, second = up.calls
    assert first["max_output_tokens"] == 50 and first["store"] is False
    assert {t["name"] for t in first["tools"]} == {"weather", "restore"}
    output = second["input"][-1]
    assert output["type"] == "function_call_output" and output["output"] == "sunny"


CHAT_WEATHER = {"type": "function", "function": {
    "name": "weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}}  # fmt: skip


def test_a_chat_client_is_served_by_a_gemini_upstream_its_signatures_kept() -> None:
    script = [[function_call("weather", {"city": "Oslo"})], "Sunny in Oslo."]
    with _upstream(script) as up, proxy_for(up, "gemini", upstream_key=KEY) as proxy:
        client = openai_client(proxy)
        messages: list[Any] = [{"role": "user", "content": "Weather in Oslo?"}]
        first = client.chat.completions.create(
            model=MODEL,
            messages=messages,
            tools=[CHAT_WEATHER],
            max_tokens=40,
        )
        (call,) = first.choices[0].message.tool_calls or []
        assert call.function.name == "weather" and json.loads(call.function.arguments) == {
            "city": "Oslo"
        }
        messages += [first.choices[0].message.model_dump(exclude_none=True),
                     {"role": "tool", "tool_call_id": call.id, "content": "sunny"}]  # fmt: skip
        second = client.chat.completions.create(
            model=MODEL,
            messages=messages,
            tools=[CHAT_WEATHER],
        )
    assert second.choices[0].message.content == "Sunny in Oslo."
    first_call, second_call = up.calls
    assert first_call["generationConfig"] == {"maxOutputTokens": 40}
    assert up.requests[0].headers["x-goog-api-key"] == KEY  # the proxy's key, not the client's
    assert "authorization" not in up.requests[0].headers  # the client's OpenAI key stays home
    (signed,) = [p for p in second_call["contents"][1]["parts"] if "functionCall" in p]
    # the signature the upstream issued, kept in the proxy's history: not the skip value
    assert signed["thoughtSignature"] not in SKIPS  # the upstream's, which it accepted
    assert second_call["contents"][2]["parts"][0]["functionResponse"]["response"] == {
        "output": "sunny"
    }


def test_a_call_the_proxy_never_served_gets_the_documented_skip_signature() -> None:
    with _upstream(["Noted."]) as up, proxy_for(up, "gemini", upstream_key=KEY) as proxy:
        history: list[Any] = [
            {"role": "user", "content": "Weather in Oslo?"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function",
                 "function": {"name": "weather", "arguments": '{"city": "Oslo"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        ]  # fmt: skip
        reply = openai_client(proxy).chat.completions.create(
            model=MODEL,
            messages=history,
            tools=[CHAT_WEATHER],
        )
    assert reply.choices[0].message.content == "Noted."
    (signed,) = [p for p in up.calls[0]["contents"][1]["parts"] if "functionCall" in p]
    assert signed["thoughtSignature"] == SKIP_SIGNATURE


def test_an_anthropic_clients_images_reach_a_gemini_upstream_inline() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": PIXEL}}  # fmt: skip
    by_url = {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}
    asked = [{"type": "text", "text": "What is this?"}, image]
    with _upstream(["A pixel."]) as up, proxy_for(up, "gemini", upstream_key=KEY) as proxy:
        client = anthropic_client(proxy)
        reply = client.messages.create(
            model=MODEL, max_tokens=20, messages=[{"role": "user", "content": asked}]
        )
        with pytest.raises(anthropic.BadRequestError) as refused:
            client.messages.create(
                model=MODEL, max_tokens=20, messages=[{"role": "user", "content": [by_url]}]
            )
    assert reply.content[0].text == "A pixel."  # type: ignore[union-attr]
    (sent,) = up.calls
    inline = {"inlineData": {"mimeType": "image/png", "data": PIXEL}}
    assert sent["contents"][0]["parts"] == [{"text": "What is this?"}, inline]
    assert "cannot be sent to a Gemini upstream" in str(refused.value)


def test_a_tool_of_two_declarations_is_two_functions_and_google_search_stays_with_google() -> None:
    declared = [
        {"name": "weather", "parametersJsonSchema": {"type": "object"}},
        {
            "name": "time",
            "parameters": {"type": "OBJECT", "properties": {"zone": {"type": "STRING"}}},
        },
    ]
    tools = [{"functionDeclarations": declared}, {"googleSearch": {}}]
    body = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}], "tools": tools}
    headers = {"X-Contextfold-Token": TOKEN, "x-goog-api-key": KEY}
    with ScriptedServer() as chat, proxy_for(chat, "chat") as proxy:
        url = f"{root(proxy)}/v1beta/models/m:generateContent"
        assert httpx.post(url, json=body, headers=headers, timeout=30).status_code == 200
    functions = {t["function"]["name"]: t["function"] for t in chat.requests[0][1]["tools"]}
    assert set(functions) == {"weather", "time", "restore"}  # no googleSearch
    assert functions["time"]["parameters"]["properties"]["zone"] == {"type": "string"}
    with _upstream([[text("Hello.")]]) as up, proxy_for(up, "gemini") as proxy:
        url = f"{root(proxy)}/v1beta/models/{MODEL}:generateContent"
        assert httpx.post(url, json=body, headers=headers, timeout=30).status_code == 200
    sent = up.calls[0]["tools"]  # as the client sent them, the strategy's declared beside
    assert [d["name"] for d in sent[0]["functionDeclarations"]] == ["weather", "time", "restore"]
    assert sent[1:] == [{"googleSearch": {}}]


def test_the_proxy_token_is_needed_and_may_come_as_the_clients_key() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
    replies = [[text("Hello.")], [text("Hello.")]]
    with _upstream(replies) as up, proxy_for(up, "gemini", upstream_key=KEY) as p:
        url = f"{root(p)}/v1beta/models/{MODEL}:generateContent"
        refused = httpx.post(url, json=body, headers={"x-goog-api-key": KEY}, timeout=30)
        listed = httpx.get(f"{root(p)}/v1beta/models?key=wrong", timeout=30)
        as_header = httpx.post(url, json=body, headers={"x-goog-api-key": TOKEN}, timeout=30)
        as_query = httpx.post(f"{url}?key={TOKEN}", json=body, timeout=30)
    assert refused.status_code == listed.status_code == 401
    assert refused.json()["error"]["status"] == "UNAUTHENTICATED"
    assert as_header.status_code == as_query.status_code == 200
    assert len(up.requests) == 2 and all(TOKEN not in str(r.headers) for r in up.requests)


def test_a_gemini_clients_image_reaches_a_chat_completions_upstream_as_an_image_url() -> None:
    with ScriptedServer() as up, proxy_for(up, "chat") as proxy:
        client = _client(proxy)
        image = types.Part.from_bytes(data=base64.b64decode(PIXEL), mime_type="image/png")
        asked = types.Content(role="user", parts=[types.Part(text="What is this?"), image])
        client.models.generate_content(model="m", contents=[asked])
        pdf = types.Part.from_bytes(data=b"%PDF-1.4", mime_type="application/pdf")
        with pytest.raises(errors.ClientError) as refused:
            client.models.generate_content(model="m", contents=[asked.model_copy(update={
                "parts": [types.Part(text="Read it."), pdf]})])  # fmt: skip
    (question,) = [m for m in up.requests[0][1]["messages"] if m["role"] == "user"]
    url = {"url": f"data:image/png;base64,{PIXEL}"}
    assert question["content"] == [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": url},
    ]
    assert refused.value.code == 400 and "cannot be sent to a Chat Completions" in str(
        refused.value
    )
