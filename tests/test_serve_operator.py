"""What ``contextfold serve`` tells the person running it (issue 45): a busy port is the only
thing said (no "serving" line first), ``/health?upstream=1`` says whether the upstream can be
reached, and every error the upstream causes is logged, over HTTP through the OpenAI SDK."""

from __future__ import annotations

import logging
import socket

import httpx
import openai
import pytest
from typer.testing import CliRunner

from contextfold.cli import app
from contextfold.serve import ServeConfig
from contextfold.serve.runner import ProxyThread
from contextfold.testing.upstreams.chat import ScriptedServer
from tests._serve import TOKEN, client, serving

runner = CliRunner()
MESSAGES = [{"role": "user", "content": "hi"}]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_busy_port_is_said_before_anything_says_serving() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        argv = ["serve", "--upstream", "http://127.0.0.1:9/v1", "--port", str(port), "--no-auth"]
        res = runner.invoke(app, argv)
    assert res.exit_code == 2, res.output
    assert f"cannot listen on 127.0.0.1:{port}" in res.output
    assert "contextfold serve: http" not in res.output and "serving" not in res.output


def test_health_says_whether_the_upstream_can_be_reached() -> None:
    down = ServeConfig(upstream=f"http://127.0.0.1:{_closed_port()}/v1", token=TOKEN)
    with ProxyThread(down) as proxy:
        base = proxy.url.removesuffix("/v1")
        alive = httpx.get(f"{base}/health")
        assert alive.status_code == 200 and alive.json() == {"status": "ok"}  # the proxy is up
        asked = httpx.get(f"{base}/health?upstream=1")
        assert asked.status_code == 503
        assert asked.json() == {"status": "upstream unreachable", "upstream_reachable": False}
        told = httpx.get(f"{base}/health?upstream=1", headers={"Authorization": f"Bearer {TOKEN}"})
        assert told.status_code == 503 and "unreachable" in told.json()["upstream_error"]
        assert told.json()["upstream"] == down.upstream
    with ScriptedServer() as up, serving(up, None) as proxy:
        base = proxy.url.removesuffix("/v1")
        asked = httpx.get(f"{base}/health?upstream=1")
        assert asked.status_code == 200
        assert asked.json() == {"status": "ok", "upstream_reachable": True}


def test_an_error_the_upstream_causes_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="contextfold.serve")
    down = ServeConfig(upstream=f"http://127.0.0.1:{_closed_port()}/v1", token=TOKEN)
    with ProxyThread(down) as proxy:
        with pytest.raises(openai.APIStatusError) as info:
            client(proxy).chat.completions.create(model="m", messages=MESSAGES)
        assert info.value.status_code == 502
    [line] = [r.getMessage() for r in caplog.records if "answered" in r.getMessage()]
    assert line.startswith("contextfold serve: answered 502: upstream http://127.0.0.1:")
    assert "unreachable" in line
    caplog.clear()
    with ScriptedServer() as up, serving(up, None) as proxy:
        up.fail = (429, "slow down")
        with pytest.raises(openai.APIStatusError) as info:
            client(proxy).chat.completions.create(model="m", messages=MESSAGES)
        assert info.value.status_code == 429
        client(proxy).models.list()  # a request that goes well logs nothing
    logged = [r.getMessage() for r in caplog.records if "answered" in r.getMessage()]
    assert len(logged) == 1 and "answered 429" in logged[0] and "slow down" in logged[0]
