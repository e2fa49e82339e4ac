"""Shared by the tests of the proxy's Anthropic Messages and OpenAI Responses routes: a proxy
in front of a scripted upstream of either API (both real HTTP servers on 127.0.0.1), and the
official SDK clients pointed at it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anthropic
import openai

from contextfold.core.store import open_store
from contextfold.serve import ServeConfig
from contextfold.serve.runner import ProxyThread

TOKEN = "test-token-123"
CLIENT_KEY = "sk-client-key"


@contextmanager
def proxy_for(
    upstream: Any, kind: str, store: Path | str | None = None, **options: Any
) -> Iterator[ProxyThread]:
    """A proxy with ``--upstream KIND:URL`` (``kind`` ``chat``: the bare URL)."""
    url = upstream if isinstance(upstream, str) else str(upstream.url)
    spec = url if kind == "chat" else f"{kind}:{url}"
    config = ServeConfig(upstream=spec, store=store, **{"token": TOKEN, **options})
    with ProxyThread(config) as proxy:
        yield proxy


def root(proxy: ProxyThread) -> str:
    """The proxy's address without ``/v1`` (an Anthropic SDK's base URL)."""
    return str(proxy.url).removesuffix("/v1")


def anthropic_client(proxy: ProxyThread, **headers: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=root(proxy),
        api_key=CLIENT_KEY,
        max_retries=0,
        timeout=30,
        default_headers={"X-Contextfold-Token": TOKEN, **headers},
    )


def openai_client(proxy: ProxyThread, **headers: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=proxy.url,
        api_key=CLIENT_KEY,
        max_retries=0,
        timeout=30,
        default_headers={"X-Contextfold-Token": TOKEN, **headers},
    )


def sessions(path: Path) -> dict[str, list[Any]]:
    """Every stored session's steps (each a tuple of messages)."""
    with open_store(path) as store:
        return {
            sid: [s.messages for s in store.load_session(sid).steps]
            for sid in store.list_sessions()
        }


def strip_marks(value: Any) -> Any:
    """A body without its ``cache_control`` markers."""
    if isinstance(value, dict):
        return {k: strip_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_marks(v) for v in value]
    return value


def marked(body: dict[str, Any]) -> list[str]:
    """Where a Messages body carries breakpoints: ``system.i``, ``tools.i``, ``messages.i.j``."""
    out = [f"tools.{i}" for i, t in enumerate(body.get("tools") or []) if "cache_control" in t]
    system = body.get("system")
    if isinstance(system, list):
        out += [f"system.{i}" for i, b in enumerate(system) if "cache_control" in b]
    for i, message in enumerate(body["messages"]):
        content = message["content"]
        if isinstance(content, list):
            out += [f"messages.{i}.{j}" for j, b in enumerate(content) if "cache_control" in b]
    return out
