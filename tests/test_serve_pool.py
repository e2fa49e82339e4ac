"""The upstream connection pool (``--max-upstream-connections``): all sessions share it; a
request that finds it exhausted past a short wait gets a clear 503 in OpenAI's shape, and
``/metrics`` shows the pool's size and use. Real HTTP on 127.0.0.1: a scripted upstream
whose ``slow`` session takes its time."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import httpx
from typer.testing import CliRunner

from contextfold.cli import app
from contextfold.testing.upstreams.chat import ScriptedServer, echo_reply
from tests._serve import TOKEN, metric, serving, stored

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _slow_when_asked(body: dict[str, Any]) -> dict[str, Any]:
    if body["messages"][-1]["content"].startswith("slow"):
        time.sleep(3.0)
    return echo_reply(body)


def _ask(proxy: Any, text: str) -> httpx.Response:
    body = {"model": "m", "messages": [{"role": "user", "content": text}]}
    return httpx.post(f"{proxy.url}/chat/completions", json=body, headers=AUTH, timeout=30)


def _metric(proxy: Any, name: str) -> float:
    return metric(httpx.get(f"{proxy.url.removesuffix('/v1')}/metrics", headers=AUTH).text, name)


def test_an_exhausted_pool_is_a_clear_503_after_a_short_wait(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    options = {"max_upstream_connections": 2, "pool_wait": 0.5, "strategy": "full"}
    with ScriptedServer(_slow_when_asked) as up, serving(up, db, **options) as proxy:
        assert _metric(proxy, "upstream_connections_limit") == 2
        slow = [threading.Thread(target=_ask, args=(proxy, f"slow {i}")) for i in range(2)]
        for thread in slow:
            thread.start()
        deadline = time.monotonic() + 10
        while len(up.requests) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert _metric(proxy, "upstream_connections_in_use") == 2
        started = time.monotonic()
        refused = _ask(proxy, "fast")
        waited = time.monotonic() - started
        assert refused.status_code == 503, refused.text
        error = refused.json()["error"]
        assert "--max-upstream-connections" in error["message"] and "2" in error["message"]
        assert error["type"] == "server_error" and error["code"] == "upstream_pool_exhausted"
        assert waited < 2.5  # the short wait, not the slow requests' 3 s (nor the 600 s timeout)
        assert _metric(proxy, "upstream_pool_timeouts_total") == 1
        for thread in slow:
            thread.join(timeout=30)
        assert _ask(proxy, "fast").status_code == 200  # connections came back
        assert _metric(proxy, "upstream_connections_in_use") == 0
    assert len(stored(db)) == 3  # the two slow sessions and the fast one, stored once


def test_the_flag_is_documented() -> None:
    result = CliRunner().invoke(app, ["serve", "--help"], env={"COLUMNS": "200"})
    assert "--max-upstream-connections" in result.output
    assert "503" in result.output
