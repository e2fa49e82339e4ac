"""A Gemini upstream that answers what it should not: each reply the proxy cannot use becomes
a 502 (or, once a stream has begun, a last chunk holding ``error``) in Google's shape naming
what was wrong; an error it streams keeps its code and status; nothing is stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from google import genai
from google.genai import errors, types

from tests._hostile import HostileServer, Raw, whole
from tests._protocols import TOKEN, openai_client, proxy_for, root, sessions


def _chunks(*chunks: dict[str, Any]) -> Raw:
    data = [f"data: {json.dumps(c)}\r\n\r\n".encode() for c in chunks]
    return Raw(data, content_type="text/event-stream", length=False)


def _said(text: str, finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate]}


_BAD_ARGS = {"functionCall": {"name": "f", "args": "not an object"}}
_QUOTA = {"error": {"code": 429, "message": "Quota exceeded.", "status": "RESOURCE_EXHAUSTED"}}


@pytest.mark.parametrize(
    ("reply", "needle", "status"),
    [
        (whole({"candidates": "none"}), "without candidates", "UNAVAILABLE"),
        (whole({"candidates": [{"content": {"parts": [_BAD_ARGS]}}]}), "args", "UNAVAILABLE"),
        (
            whole({**_said("hi", "STOP"), "usageMetadata": {"promptTokenCount": -1}}),
            "usage",
            "UNAVAILABLE",
        ),
        (whole("[1, 2]"), "no JSON object", "UNAVAILABLE"),
        (_chunks(_said("Hello, "), _said("world.")), "finishReason", "UNAVAILABLE"),
        (_chunks(_said("Hello, "), _QUOTA), "Quota exceeded.", "RESOURCE_EXHAUSTED"),
    ],
)
def test_gemini_replies_the_proxy_cannot_use(
    tmp_path: Path, reply: Raw, needle: str, status: str
) -> None:
    store = tmp_path / "s.db"
    stream = reply.content_type == "text/event-stream"
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    headers = {"x-goog-api-key": "gm-own", "x-contextfold-token": TOKEN}
    with HostileServer(lambda b: reply) as up, proxy_for(up, "gemini", store) as proxy:
        url = f"{root(proxy)}/v1beta/models/gemini-3-flash-preview:{method}"
        answer = httpx.post(url, json=body, headers=headers, timeout=30)
    if answer.status_code == 200:  # the stream had begun: its last chunk is the error
        assert stream
        error = json.loads(answer.text.strip().split("\r\n\r\n")[-1].removeprefix("data: "))
    else:
        assert answer.status_code == 502
        error = answer.json()
    assert error["error"]["status"] == status and needle in error["error"]["message"]
    assert sessions(store) == {}


def _client(proxy: Any) -> genai.Client:
    options = types.HttpOptions(
        base_url=root(proxy),
        headers={"X-Contextfold-Token": TOKEN},
        retry_options=types.HttpRetryOptions(attempts=1),
    )
    return genai.Client(api_key="gm-own", http_options=options)


def _ask(proxy: Any, stream: bool) -> list[types.GenerateContentResponse]:
    client = _client(proxy)
    if stream:
        return list(client.models.generate_content_stream(model=MODEL, contents="hi"))
    return [client.models.generate_content(model=MODEL, contents="hi")]


MODEL = "gemini-3-flash-preview"
_USAGE = {"promptTokenCount": 4, "totalTokenCount": 4}


@pytest.mark.parametrize("feedback", ["blocked", ["SAFETY"]])
@pytest.mark.parametrize("stream", [False, True])
def test_a_prompt_feedback_that_is_no_object_is_a_502(
    tmp_path: Path, feedback: Any, stream: bool
) -> None:
    data = {"promptFeedback": feedback, "usageMetadata": _USAGE}
    reply = _chunks(data) if stream else whole(data)
    with (
        HostileServer(lambda b: reply) as up,
        proxy_for(up, "gemini", tmp_path / "s.db") as proxy,
        pytest.raises(errors.ServerError) as raised,
    ):
        _ask(proxy, stream)
    assert raised.value.code == 502 and raised.value.status == "UNAVAILABLE"
    assert "promptFeedback is not an object" in str(raised.value.message)
    assert sessions(tmp_path / "s.db") == {}


@pytest.mark.parametrize("stream", [False, True])
def test_a_blocked_prompt_reaches_the_client_streamed_or_not(stream: bool) -> None:
    feedback = {"blockReason": "PROHIBITED_CONTENT", "safetyRatings": []}
    data = {"promptFeedback": feedback, "usageMetadata": _USAGE, "modelVersion": MODEL}
    reply = _chunks(data) if stream else whole(data)
    with HostileServer(lambda b: reply) as up, proxy_for(up, "gemini") as proxy:
        answers = _ask(proxy, stream)
    last = answers[-1]
    assert last.prompt_feedback is not None
    assert last.prompt_feedback.block_reason == "PROHIBITED_CONTENT"
    assert last.candidates and last.candidates[0].finish_reason == "PROHIBITED_CONTENT"
    assert not "".join(a.text or "" for a in answers)


def test_a_quotas_details_reach_the_gemini_client() -> None:
    details = [
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure",
         "violations": [{"quotaMetric": "generate_content_free_tier_requests",
                         "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]},
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "13s"},
    ]  # fmt: skip
    error = {**_QUOTA["error"], "details": details}
    refused = whole({"error": error}, status=429)
    streamed = _chunks(_said("Hello, "), {"error": error})
    answers = []
    for reply, stream in ((refused, False), (streamed, True)):
        with (
            HostileServer(lambda b, reply=reply: reply) as up,
            proxy_for(up, "gemini") as proxy,
            pytest.raises(errors.ClientError) as raised,
        ):
            _ask(proxy, stream)
        answers.append(raised)
    for raised in answers:
        assert raised.value.code == 429 and raised.value.status == "RESOURCE_EXHAUSTED"
        assert raised.value.details["error"]["details"] == details


@pytest.mark.parametrize("stream", [False, True])
def test_a_part_holding_text_and_a_call_keeps_both(stream: bool) -> None:
    call = {"name": "weather", "args": {"city": "Oslo"}}
    part = {"text": "Checking.", "functionCall": call, "thoughtSignature": "c2ln"}
    candidate = {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}
    data = {"candidates": [candidate], "usageMetadata": _USAGE}
    reply = _chunks(data) if stream else whole(data)
    with HostileServer(lambda b: reply) as up, proxy_for(up, "gemini") as proxy:
        answers = _ask(proxy, stream)
        chat = openai_client(proxy).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "hi"}], stream=stream
        )
        chunks = list(chat) if stream else []
    assert "".join(a.text or "" for a in answers) == "Checking."
    calls = [c for a in answers for c in a.function_calls or []]
    assert [(c.name, c.args) for c in calls] == [("weather", {"city": "Oslo"})]
    if stream:
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        named = [
            t.function.name
            for c in chunks
            if c.choices
            for t in c.choices[0].delta.tool_calls or []
        ]
    else:
        message = chat.choices[0].message  # type: ignore[union-attr]
        text, named = message.content or "", [t.function.name for t in message.tool_calls or []]
    assert (text, named) == ("Checking.", ["weather"])
