"""Shared by the serve tests: a proxy in front of a scripted upstream, both on 127.0.0.1."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import openai

from contextfold.core.messages import to_openai
from contextfold.core.store import open_store
from contextfold.serve import ServeConfig
from contextfold.serve.runner import ProxyThread
from contextfold.testing.upstreams.chat import ScriptedServer

TOKEN = "test-token-123"


@contextmanager
def serving(
    upstream: ScriptedServer, store: Path | str | None, **options: Any
) -> Iterator[ProxyThread]:
    config = ServeConfig(upstream=upstream.url, store=store, **{"token": TOKEN, **options})
    with ProxyThread(config) as proxy:
        yield proxy


def client(proxy: ProxyThread, **headers: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=proxy.url, api_key=TOKEN, max_retries=0, timeout=30, default_headers=headers
    )


def stored(path: Path | str) -> dict[str, list[dict[str, Any]]]:
    """Every session in a store (a file or a URL): its whole conversation as OpenAI dicts."""
    with open_store(path) as store:
        out = {}
        for sid in store.list_sessions():
            record = store.load_session(sid)
            messages = [to_openai(record.system)] if record.system else []
            for step in record.steps:
                messages += [to_openai(m) for m in step.messages]
            out[sid] = messages
        return out


def idle(proxy: ProxyThread, timeout: float = 10.0) -> None:
    """Wait until no request holds a session (hang-ups are cleaned up asynchronously)."""
    deadline = time.monotonic() + timeout
    manager = proxy.proxy.manager
    while proxy.proxy.thread.call(manager.in_flight):  # on the session thread, after clean-ups
        assert time.monotonic() < deadline, "a session stayed busy"
        time.sleep(0.02)


def metric(text: str, name: str, **labels: str) -> float:
    """The value of one series of a ``/metrics`` page (read with prometheus_client's own
    parser), 0 when the page has no such series."""
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == f"contextfold_{name}" and sample.labels == labels:
                return float(sample.value)
    return 0.0


def tool_call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def canonical(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from contextfold.core.messages import from_openai

    return [to_openai(from_openai(m)) for m in messages]
