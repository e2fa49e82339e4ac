"""What strangers reach through contextfold serve: ``--no-auth`` refuses what a web page (or a
DNS-rebinding one) can send, and the upstream URL's credentials are shown to no one. Real
HTTP on 127.0.0.1: a proxy, a scripted upstream, httpx with forged headers."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from contextfold.serve import ServeConfig
from contextfold.serve.runner import ProxyThread
from contextfold.serve.scripted import ScriptedServer

BODY = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}'


def _open(up: ScriptedServer, **options: Any) -> ProxyThread:
    config = ServeConfig(upstream=up.url, no_auth=True, upstream_key="server-key", **options)
    return ProxyThread(config)


@pytest.mark.parametrize(
    ("headers", "status", "needle"),
    [
        ({"Content-Type": "text/plain"}, 415, "application/json"),
        ({"Content-Type": "application/x-www-form-urlencoded"}, 415, "application/json"),
        ({"Host": "evil.example:{port}"}, 403, "Host"),
        ({"Host": "evil.example"}, 403, "Host"),
        ({"Host": "127.0.0.1:1"}, 403, "Host"),  # the loopback address, another port
        ({"Origin": "http://evil.example"}, 403, "Origin"),
        ({"Origin": "null"}, 403, "Origin"),
        ({"Origin": "http://localhost:1"}, 403, "Origin"),
    ],
)
def test_no_auth_refuses_what_a_web_page_can_send(
    headers: dict[str, str], status: int, needle: str
) -> None:
    with ScriptedServer() as up, _open(up) as proxy:
        sent = {"Content-Type": "application/json", **headers}
        sent = {k: v.format(port=proxy.port) for k, v in sent.items()}
        reply = httpx.post(f"{proxy.url}/chat/completions", content=BODY, headers=sent)
        assert reply.status_code == status, reply.text
        error = reply.json()["error"]
        assert needle in error["message"]
        assert up.requests == []  # the server's key never went anywhere


def test_no_auth_refuses_a_body_without_a_content_type() -> None:
    with ScriptedServer() as up, _open(up) as proxy:
        request = httpx.Request("POST", f"{proxy.url}/chat/completions", content=BODY)
        assert "content-type" not in request.headers
        with httpx.Client() as http:
            assert http.send(request).status_code == 415
        assert up.requests == []


@pytest.mark.parametrize("path", ["/metrics", "/health", "/v1/models"])
def test_no_auth_reads_answer_only_a_loopback_host(path: str) -> None:
    with ScriptedServer() as up, _open(up) as proxy:
        base = f"http://127.0.0.1:{proxy.port}"
        rebound = httpx.get(f"{base}{path}", headers={"Host": f"attacker.example:{proxy.port}"})
        assert rebound.status_code == 403 and "Host" in rebound.json()["error"]["message"]
        foreign = httpx.get(f"{base}{path}", headers={"Origin": "https://attacker.example"})
        assert foreign.status_code == 403
        for host in (f"localhost:{proxy.port}", f"127.0.0.1:{proxy.port}"):
            same = {"Host": host, "Origin": f"http://{host}"}
            assert httpx.get(f"{base}{path}", headers=same).status_code == 200, host


def test_no_auth_serves_a_local_client() -> None:
    with ScriptedServer() as up, _open(up) as proxy:
        for host in (f"localhost:{proxy.port}", f"127.0.0.1:{proxy.port}"):
            headers = {"Host": host, "Content-Type": "application/json; charset=utf-8"}
            reply = httpx.post(f"{proxy.url}/chat/completions", content=BODY, headers=headers)
            assert reply.status_code == 200, reply.text
        assert up.requests[-1][0]["authorization"] == "Bearer server-key"
