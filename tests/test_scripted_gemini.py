"""The scripted Gemini upstream against the official ``google-genai`` SDK over HTTP: what it
emits parses as the SDK's own types, streamed (SSE and the JSON-array framing) and not; a
function-calling round trip passes its thought signature back; it refuses what the real API
refuses, in Google's error shape; its implicit cache reports ``cachedContentTokenCount``."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from google import genai
from google.genai import errors, types

from contextfold.testing.upstreams.gemini import ScriptedGemini, function_call, text, thought

MODEL = "gemini-3-flash-preview"
"""A Gemini 3 model: the upstream requires its function calls' thought signatures."""
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
SYSTEM = "You are a careful coding agent. " * 40  # 320 tokens at 4 characters a token


def _client(up: ScriptedGemini, key: str = "gm-test") -> genai.Client:
    options = types.HttpOptions(base_url=up.url, retry_options=types.HttpRetryOptions(attempts=1))
    return genai.Client(api_key=key, http_options=options)


def _post(up: ScriptedGemini, route: str, body: Any, key: str = "gm-test", **kw: Any) -> Any:
    url = f"{up.url}/v1beta/models/{route}"
    return httpx.post(url, json=body, headers={"x-goog-api-key": key}, **kw)


def _ask(words: str) -> dict[str, Any]:
    return {"contents": [{"role": "user", "parts": [{"text": words}]}]}


def test_plain_and_streamed_replies_are_the_same_content_with_usage() -> None:
    reply = [text("Here is the weather report for Oslo, as asked.")]
    with ScriptedGemini([reply, reply]) as up:
        client = _client(up)
        plain = client.models.generate_content(model=MODEL, contents="Weather in Oslo?")
        streamed = client.models.generate_content_stream(model=MODEL, contents="Weather in Oslo?")
        chunks = list(streamed)
    assert plain.text == "".join(c.text or "" for c in chunks) == reply[0]["text"]
    assert len(chunks) > 1 and [c.candidates[0].finish_reason for c in chunks][-1] == "STOP"
    assert all(c.candidates[0].finish_reason is None for c in chunks[:-1])
    usage = plain.usage_metadata
    assert usage is not None and usage.prompt_token_count and usage.candidates_token_count
    assert usage.total_token_count == usage.prompt_token_count + usage.candidates_token_count
    assert chunks[-1].usage_metadata == usage  # the last chunk reports the whole call
    signed = plain.candidates[0].content.parts[-1]
    assert signed.thought_signature  # a text reply's last part is signed, as Gemini 3's is
    stream = up.requests[1]
    assert (stream.path, stream.query) == (f"/v1/models/{MODEL}:streamGenerateContent", "alt=sse")


def test_the_default_stream_is_one_json_array_of_the_same_chunks() -> None:
    with ScriptedGemini(["A reply long enough to need three chunks of text."] * 2) as up:
        events = _post(up, f"{MODEL}:streamGenerateContent?alt=sse", _ask("hi")).text
        array = _post(up, f"{MODEL}:streamGenerateContent", _ask("hi"))
    sse = [json.loads(e.removeprefix("data: ")) for e in events.split("\r\n\r\n") if e]
    chunks = array.json()
    assert array.headers["content-type"].startswith("application/json")
    assert len(chunks) == len(sse) == 4
    signed = ["thoughtSignature" in c["candidates"][0]["content"]["parts"][0] for c in sse]
    assert signed == [False, False, False, True]  # on the last piece of the signed part
    assert [_unsigned(c) for c in chunks] == [_unsigned(c) for c in sse]


def _unsigned(chunk: dict[str, Any]) -> dict[str, Any]:
    """A chunk without what differs between two calls: its id and its fresh signature."""
    parts = [
        {k: v for k, v in p.items() if k != "thoughtSignature"}
        for p in chunk["candidates"][0]["content"]["parts"]
    ]
    candidate = {**chunk["candidates"][0], "content": {"parts": parts, "role": "model"}}
    return {**chunk, "responseId": None, "candidates": [candidate]}


def test_a_function_call_round_trip_passes_the_thought_signature_back() -> None:
    replies = [[function_call("weather", {"city": "Oslo"})], "Sunny in Oslo."]
    config = types.GenerateContentConfig(tools=[WEATHER], automatic_function_calling=MANUAL)
    with ScriptedGemini(replies) as up:
        client = _client(up)
        history: list[Any] = [types.Content(role="user", parts=[types.Part(text="Oslo?")])]
        first = client.models.generate_content(model=MODEL, contents=history, config=config)
        call = first.function_calls[0] if first.function_calls else None
        assert call is not None and call.name == "weather" and call.args == {"city": "Oslo"}
        assert call.id is None  # the Gemini API gives a function call no id
        history.append(first.candidates[0].content)
        answer = types.Part.from_function_response(name="weather", response={"sky": "sun"})
        history.append(types.Content(role="user", parts=[answer]))
        second = client.models.generate_content(model=MODEL, contents=history, config=config)
    assert second.text == "Sunny in Oslo."
    sent = up.calls[1]["contents"][1]["parts"][0]
    assert sent["functionCall"] == {"name": "weather", "args": {"city": "Oslo"}}
    assert sent["thoughtSignature"]  # what the SDK kept and sent back, unchanged


def test_a_function_call_without_its_signature_is_refused_on_gemini_3_only() -> None:
    unsigned = {
        "contents": [
            {"role": "user", "parts": [{"text": "Oslo?"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "weather", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "weather", "response": {}}}]},
        ]
    }
    with ScriptedGemini(["ok"] * 3) as up:
        refused = _post(up, f"{MODEL}:generateContent", unsigned)
        older = _post(up, "gemini-2.5-flash:generateContent", unsigned)
        unsigned["contents"][1]["parts"][0]["thoughtSignature"] = "skip_thought_signature_validator"
        sentinel = _post(up, f"{MODEL}:generateContent", unsigned)
        unsigned["contents"][1]["parts"][0]["thoughtSignature"] = "bm90IG91cnM="
        forged = _post(up, "gemini-2.5-flash:generateContent", unsigned)
    error = refused.json()["error"]
    assert (refused.status_code, error["status"], error["code"]) == (400, "INVALID_ARGUMENT", 400)
    assert "missing a thought_signature" in error["message"]
    assert "`default_api:weather` , position 2" in error["message"]
    assert older.status_code == sentinel.status_code == 200
    assert forged.json()["error"]["message"] == "Corrupted thought signature."


def test_a_signature_from_another_model_does_not_verify() -> None:
    with ScriptedGemini([[function_call("weather", {})], "ok"]) as up:
        first = _post(up, f"{MODEL}:generateContent", _ask("Oslo?")).json()
        call = first["candidates"][0]["content"]
        answer = {
            "role": "user",
            "parts": [{"functionResponse": {"name": "weather", "response": {}}}],
        }
        body = {"contents": [*_ask("Oslo?")["contents"], call, answer]}
        moved = _post(up, "gemini-3-pro-preview:generateContent", body)
        kept = _post(up, f"{MODEL}:generateContent", body)
    assert moved.json()["error"]["message"] == "Corrupted thought signature."
    assert kept.status_code == 200


def test_function_calling_turn_order_is_checked_like_the_real_api() -> None:
    call = {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}] * 2}
    one = {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}
    user = _ask("go")["contents"]
    with ScriptedGemini() as up:
        short = _post(up, "gemini-2.5-flash:generateContent", {"contents": [*user, call, one]})
        stray = _post(up, "gemini-2.5-flash:generateContent", {"contents": [*user, one]})
        early = _post(up, "gemini-2.5-flash:generateContent", {"contents": [call]})
    assert "number of function response parts is equal" in short.json()["error"]["message"]
    assert "response turn comes immediately after a function call" in stray.text
    assert "call turn comes immediately after a user turn" in early.text
    assert up.bills == []  # each was refused before it was answered


def test_bodies_the_real_api_refuses_are_refused_in_its_shape() -> None:
    cases = {
        "contents is not specified": {"contents": []},
        "valid role: user, model": {"contents": [{"role": "assistant", "parts": [{"text": "x"}]}]},
        "parts must not be empty": {"contents": [{"role": "user", "parts": []}]},
        "required oneof field 'data'": {"contents": [{"role": "user", "parts": [{}]}]},
        "Oneof field 'data' is already set": {
            "contents": [{"role": "user", "parts": [{"text": "x", "inlineData": {}}]}]
        },
        'Unknown name "messages"': {**_ask("x"), "messages": []},
        'Unknown name "contents[0].parts[0].type"': {
            "contents": [{"role": "user", "parts": [{"type": "text", "text": "x"}]}]
        },
        "Invalid function name": {
            **_ask("x"),
            "tools": [{"functionDeclarations": [{"name": "has space"}]}],
        },
        "Base64 decoding failed": {
            "contents": [{"role": "user", "parts": [{"text": "x", "thoughtSignature": "#!"}]}]
        },
        "FunctionCallingConfig.Mode": {
            **_ask("x"),
            "toolConfig": {"functionCallingConfig": {"mode": "REQUIRED"}},
        },
    }
    with ScriptedGemini() as up:
        answers = {k: _post(up, "gemini-2.5-flash:generateContent", b) for k, b in cases.items()}
        snake = _post(
            up,
            "gemini-2.5-flash:generateContent",
            {"contents": _ask("x")["contents"], "generation_config": {}},
        )
    for needle, answer in answers.items():
        error = answer.json()["error"]
        assert (answer.status_code, error["status"]) == (400, "INVALID_ARGUMENT"), needle
        assert needle in error["message"], (needle, error["message"])
    assert snake.status_code == 200  # the JSON parser takes proto field names in snake_case too


def test_keys_come_in_a_header_or_the_query_and_are_checked_like_the_real_api() -> None:
    with ScriptedGemini(api_key="gm-right") as up:
        wrong_key = _client(up, "gm-wrong")
        with pytest.raises(errors.ClientError) as wrong:
            wrong_key.models.generate_content(model=MODEL, contents="x")
        route = f"{up.url}/v1beta/models/{MODEL}:generateContent"
        none = httpx.post(route, json=_ask("x"))
        bearer = httpx.post(route, json=_ask("x"), headers={"authorization": "Bearer gm-right"})
        query = httpx.post(f"{route}?key=gm-right", json=_ask("x"))
        missing = _post(up, "nowhere", _ask("x"), key="gm-right")
        listed = httpx.get(f"{up.url}/v1beta/models", headers={"x-goog-api-key": "gm-right"})
    assert (wrong.value.code, wrong.value.status) == (400, "INVALID_ARGUMENT")
    assert wrong.value.details["error"]["details"][0]["reason"] == "API_KEY_INVALID"
    assert (none.status_code, none.json()["error"]["status"]) == (403, "PERMISSION_DENIED")
    assert (bearer.status_code, bearer.json()["error"]["status"]) == (401, "UNAUTHENTICATED")
    assert query.status_code == 200
    assert (missing.status_code, missing.json()["error"]["status"]) == (404, "NOT_FOUND")
    assert listed.json()["models"][0]["supportedGenerationMethods"] == [
        "generateContent",
        "countTokens",
    ]


def test_an_unserved_model_is_a_404_naming_it() -> None:
    with ScriptedGemini(models=["gemini-2.5-flash"]) as up:
        client = _client(up)  # held: a client closes its connections when collected
        with pytest.raises(errors.ClientError, match="models/gemini-9 is not found"):
            client.models.generate_content(model="gemini-9", contents="x")
        served = client.models.generate_content(model="gemini-2.5-flash", contents="x")
    assert served.text == "ok: x"


def test_count_tokens_counts_what_a_call_is_billed_for() -> None:
    with ScriptedGemini() as up:
        client = _client(up)
        counted = client.models.count_tokens(model=MODEL, contents="How many tokens is this?")
        billed = client.models.generate_content(model=MODEL, contents="How many tokens is this?")
        wrapped = _post(up, f"{MODEL}:countTokens", {"generateContentRequest": {
            "model": f"models/{MODEL}", **_ask("How many tokens is this?")}})  # fmt: skip
    assert billed.usage_metadata is not None
    assert counted.total_tokens == billed.usage_metadata.prompt_token_count > 0
    assert wrapped.json()["totalTokens"] == counted.total_tokens


def test_the_implicit_cache_reports_the_prefix_seen_before() -> None:
    config = types.GenerateContentConfig(system_instruction=SYSTEM)
    with ScriptedGemini(min_cache_tokens=256, cache_step_tokens=32) as up:
        client = _client(up)
        first = client.models.generate_content(model=MODEL, contents="one", config=config)
        second = client.models.generate_content(model=MODEL, contents="two", config=config)
    cold, warm = first.usage_metadata, second.usage_metadata
    assert cold is not None and warm is not None
    assert cold.cached_content_token_count is None  # absent when nothing was read
    assert 256 <= (warm.cached_content_token_count or 0) < (warm.prompt_token_count or 0)
    assert warm.cache_tokens_details and warm.cache_tokens_details[0].token_count == (
        warm.cached_content_token_count
    )
    assert [b.cached.read for b in up.bills] == [0, warm.cached_content_token_count]
    assert all(b.cached.written == 0 for b in up.bills)  # implicit caching writes for free


def test_thoughts_are_returned_only_when_asked_for_and_counted_either_way() -> None:
    reply = [thought("The user wants a greeting."), text("Hello.")]
    asked = types.GenerateContentConfig(thinking_config=types.ThinkingConfig(include_thoughts=True))
    with ScriptedGemini([reply, reply]) as up:
        client = _client(up)
        hidden = client.models.generate_content(model=MODEL, contents="hi")
        shown = client.models.generate_content(model=MODEL, contents="hi", config=asked)
    assert [p.thought for p in hidden.candidates[0].content.parts] == [None]
    assert [p.thought for p in shown.candidates[0].content.parts] == [True, None]
    assert hidden.usage_metadata.thoughts_token_count == shown.usage_metadata.thoughts_token_count
    assert hidden.usage_metadata.thoughts_token_count == 7


def test_max_output_tokens_cuts_the_reply_with_finish_reason_max_tokens() -> None:
    config = types.GenerateContentConfig(max_output_tokens=3)
    with ScriptedGemini(["A reply that is longer than twelve characters."]) as up:
        client = _client(up)
        cut = client.models.generate_content(model=MODEL, contents="x", config=config)
    assert cut.text == "A reply that"
    assert cut.candidates[0].finish_reason == "MAX_TOKENS"


def test_failures_reach_the_sdk_as_its_errors_and_the_script_runs_out_loudly() -> None:
    with ScriptedGemini(["first", "second"]) as up:
        client = _client(up)
        up.stream_error = (503, "The model is overloaded. Please try again later.")
        with pytest.raises(errors.ServerError, match="overloaded") as broken:
            list(client.models.generate_content_stream(model=MODEL, contents="x"))
        up.stream_error, up.fail = None, (429, "Resource has been exhausted")
        with pytest.raises(errors.ClientError) as limited:
            client.models.generate_content(model=MODEL, contents="x")
        up.fail = None
        assert client.models.generate_content(model=MODEL, contents="x").text == "second"
        with pytest.raises(errors.ServerError, match="no reply left"):
            client.models.generate_content(model=MODEL, contents="x")
    assert broken.value.status == "UNAVAILABLE"
    assert (limited.value.code, limited.value.status) == (429, "RESOURCE_EXHAUSTED")


def test_ids_are_given_to_function_calls_only_when_asked_and_kept_by_the_sdk() -> None:
    config = types.GenerateContentConfig(tools=[WEATHER], automatic_function_calling=MANUAL)
    calls = [function_call("weather", {"city": c}) for c in ("Oslo", "Rome")]
    with ScriptedGemini([calls], call_ids=True) as up:
        client = _client(up)
        reply = client.models.generate_content(model=MODEL, contents="x", config=config)
    parts = reply.candidates[0].content.parts
    assert [p.function_call.id for p in parts] == ["call_scripted1", "call_scripted2"]
    assert parts[0].thought_signature and parts[1].thought_signature is None  # the first only


def test_an_image_in_a_function_response_or_a_user_turn_is_accepted_and_billed() -> None:
    image = {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    call = {"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {}}}]}

    def answered(extra: list[dict[str, Any]], **response: Any) -> dict[str, Any]:
        result = {"functionResponse": {"name": "read_file", "response": {}, **response}}
        turn = {"role": "user", "parts": [result, *extra]}
        return {"contents": [*_ask("Look at a.png")["contents"], call, turn]}

    with ScriptedGemini() as up:
        route = "gemini-2.5-flash:countTokens"
        bare = _post(up, route, answered([])).json()["totalTokens"]
        nested = _post(up, route, answered([], parts=[image])).json()["totalTokens"]
        sibling = _post(up, route, answered([image])).json()["totalTokens"]
        generated = _post(up, "gemini-2.5-flash:generateContent", answered([], parts=[image]))
    assert bare < nested and bare < sibling  # Gemini 3 nests it, older models get a sibling
    assert generated.status_code == 200
