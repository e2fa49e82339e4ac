"""Which APIs a proxy serves (by its upstream's API), how it says so, and the session hint
headers agents send."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from contextfold.testing.upstreams.anthropic import ScriptedAnthropic
from contextfold.testing.upstreams.chat import ScriptedServer
from contextfold.testing.upstreams.gemini import ScriptedGemini
from contextfold.testing.upstreams.responses import ScriptedResponses
from tests._protocols import TOKEN, openai_client, proxy_for, sessions

AUTH = {"x-contextfold-token": TOKEN, "authorization": "Bearer sk-own"}


def test_a_chat_completions_upstream_serves_every_api() -> None:
    with ScriptedServer() as up, proxy_for(up, "chat") as proxy:
        models = httpx.get(f"{proxy.url}/models", headers=AUTH).json()
        missing = httpx.post(f"{proxy.url}/embeddings", json={}, headers=AUTH)
    assert models["contextfold"]["apis"] == [
        "OpenAI Chat Completions",
        "Anthropic Messages",
        "OpenAI Responses",
        "Gemini generateContent",
    ]
    assert models["data"]  # the upstream's own list
    assert missing.status_code == 404
    routes = missing.json()["routes"]
    assert {"POST /v1/chat/completions", "POST /v1/messages", "POST /v1/responses"} <= set(routes)
    assert "POST /v1beta/models/{model}:{method}" in routes


def test_a_gemini_upstream_serves_every_api() -> None:
    with ScriptedGemini() as up, proxy_for(up, "gemini") as proxy:
        missing = httpx.post(f"{proxy.url}/embeddings", json={}, headers=AUTH)
    routes = set(missing.json()["routes"])
    assert {"POST /v1/chat/completions", "POST /v1/messages", "POST /v1/responses"} <= routes
    assert "POST /v1beta/models/{model}:{method}" in routes


@pytest.mark.parametrize(
    ("upstream", "kind", "served", "unserved"),
    [
        (ScriptedAnthropic, "anthropic", "/v1/messages", "/v1/chat/completions"),
        (ScriptedResponses, "responses", "/v1/responses", "/v1/messages"),
    ],
)
def test_a_provider_upstream_serves_its_own_api_and_geminis(
    upstream: type, kind: str, served: str, unserved: str
) -> None:
    with upstream() as up, proxy_for(up, kind) as proxy:
        base = str(proxy.url).removesuffix("/v1")
        answer = httpx.post(f"{base}{unserved}", json={}, headers=AUTH)
        models = httpx.get(f"{base}/v1/models", headers=AUTH).json()
    assert answer.status_code == 404 and f"POST {served}" in answer.json()["routes"]
    assert f"POST {unserved}" not in answer.json()["routes"]
    assert models["contextfold"]["apis"][1:] == ["Gemini generateContent"]


def test_an_agents_session_header_seeds_the_session(tmp_path: Path) -> None:
    with ScriptedServer() as up, proxy_for(up, "chat", tmp_path / "s.db") as proxy:
        client = openai_client(proxy, **{"X-Claude-Code-Session-Id": "4b1d0c3e-1111"})
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        other = openai_client(proxy, **{"x-codex-window-id": "thread 7:0"})  # hashed: a space
        other.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    ids = set(sessions(tmp_path / "s.db"))
    assert "4b1d0c3e-1111" in ids and len(ids) == 2
