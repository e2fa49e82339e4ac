"""A Gemini upstream that answers what it should not: each reply the proxy cannot use becomes
a 502 (or, once a stream has begun, a last chunk holding ``error``) in Google's shape naming
what was wrong; an error it streams keeps its code and status; nothing is stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests._hostile import HostileServer, Raw, whole
from tests._protocols import TOKEN, proxy_for, root, sessions


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
