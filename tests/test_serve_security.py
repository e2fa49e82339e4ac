"""What strangers reach through contextfold serve: ``--no-auth`` refuses what a web page (or a
DNS-rebinding one) can send, and the upstream URL's credentials are shown to no one. Real
HTTP on 127.0.0.1: a proxy, a scripted upstream, httpx with forged headers."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from contextfold.serve import ServeConfig
from contextfold.serve.runner import ProxyThread
from contextfold.testing.upstreams.chat import ScriptedServer
from tests._serve import TOKEN

BODY = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}'
_AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}


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


SECRET = "PASS-s3cret"


def _with_credentials(url: str) -> str:
    return url.replace("http://", f"http://user:{SECRET}@")


def test_credentials_in_the_upstream_url_are_shown_to_no_one(tmp_path: Path) -> None:
    with ScriptedServer() as up:
        config = ServeConfig(upstream=_with_credentials(up.url), token=TOKEN)
        with ProxyThread(config) as proxy:
            base = proxy.url.removesuffix("/v1")
            anonymous = httpx.get(f"{base}/health")
            assert anonymous.status_code == 200
            assert anonymous.json() == {"status": "ok"}  # no upstream address without a token
            known = httpx.get(f"{base}/health", headers={"Authorization": f"Bearer {TOKEN}"})
            assert known.json()["upstream"] == _redacted(up.url)
            up.fail = (500, "the GPU caught fire")
            failed = httpx.post(f"{proxy.url}/chat/completions", content=BODY, headers=_AUTH)
            assert failed.status_code == 500 and "GPU caught fire" in failed.text
            assert SECRET not in failed.text and _redacted(up.url) in failed.text
            assert SECRET not in httpx.get(f"{base}/metrics", headers=_AUTH).text
    closed = _with_credentials(f"http://127.0.0.1:{_free_port()}/v1")
    gone = ServeConfig(upstream=closed, token=TOKEN)
    with ProxyThread(gone) as proxy:
        down = httpx.post(f"{proxy.url}/chat/completions", content=BODY, headers=_AUTH)
        assert down.status_code == 502 and "unreachable" in down.text
        assert SECRET not in down.text and "user:***@" in down.text


def test_the_start_up_line_shows_the_upstream_redacted() -> None:
    """The line ``contextfold serve`` starts with, read from the running command."""
    argv = ["serve", "--upstream", "http://user:PASS-s3cret@127.0.0.1:9/v1", "--no-auth"]
    argv += ["--port", str(_free_port()), "-s", "full"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    main = "import sys; from contextfold.cli import app; sys.argv[0] = 'contextfold'; app()"
    served = subprocess.Popen(
        [sys.executable, "-c", main, *argv], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert served.stdout is not None
        line = served.stdout.readline()
    finally:
        served.terminate()
        served.wait(timeout=30)
    assert line.startswith("contextfold serve: http://127.0.0.1:"), line
    assert "-> http://user:***@127.0.0.1:9/v1" in line and SECRET not in line


def _redacted(url: str) -> str:
    return url.replace("http://", "http://user:***@")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
