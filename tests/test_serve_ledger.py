"""serve's ledger is the bill: over a scripted session whose upstream reports its cache reads
and writes, the ledger's billed total is what the upstream reported, token by token and in
the model's dollars, through each API's official SDK (anthropic, openai's Chat Completions and
Responses, google-genai) as the client; the ledger survives a restart, a failed call is
entered with its error, and ``/metrics`` shows the same cache writes and dollars."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from google import genai
from google.genai import types

from contextfold.core.billing import BilledUsage, native_prices
from contextfold.core.ledger import LedgerEntry
from contextfold.core.store import open_store
from contextfold.testing.upstreams._cache import Bill
from contextfold.testing.upstreams.anthropic import ScriptedAnthropic, tool_use
from contextfold.testing.upstreams.chat import ScriptedServer
from contextfold.testing.upstreams.gemini import ScriptedGemini
from contextfold.testing.upstreams.gemini import function_call as gemini_call
from contextfold.testing.upstreams.responses import ScriptedResponses
from contextfold.testing.upstreams.responses import function_call as responses_call
from tests._protocols import TOKEN, anthropic_client, openai_client, proxy_for, root
from tests._serve import metric, tool_call

SYSTEM = "You are a careful agent; read every file before you change it. " * 120
"""About 1,900 tokens: long enough to be cached by every scripted upstream."""
QUESTIONS = ("What is in README?", "And in setup.py?", "Summarize both.")
ANSWERS = ("It describes the tool.", "It installs the package.", "A packaged tool.")
RESTORE = {"step": 0}
"""The strategy's tool, called once before the second answer: a restore round."""
GEMINI_KEY = "gm-client-key"


def _bill(bill: Bill) -> BilledUsage:
    c = bill.cached
    return BilledUsage(c.uncached, c.read, c.written - c.written_1h, c.written_1h, bill.output)


def _check_ledger(db: Path, bills: list[Bill], model: str) -> list[LedgerEntry]:
    """The store's ledger holds one entry per call the upstream billed, each exactly its bill."""
    with open_store(db) as store:  # a new connection: what the proxy wrote survives it
        entries = store.load_ledger()
    assert [e.round_idx for e in entries] == [0, 0, 1, 0]  # the restore round is the third
    assert len(bills) == len(entries)
    prices = native_prices(model)
    for entry, bill in zip(entries, bills, strict=True):
        assert entry.billed == _bill(bill)
        assert entry.billed_usd == pytest.approx(bill.cost(prices), rel=1e-12, abs=0)
        assert entry.model == model and entry.arm == "treated" and entry.error is None
    total = sum((e.billed for e in entries), BilledUsage())
    assert total == sum((_bill(b) for b in bills), BilledUsage())
    assert entries[2].direct == BilledUsage() and entries[2].direct_usd == 0  # no direct twin
    assert all(e.direct.prompt_tokens > 0 for e in entries if not e.restore)
    assert len({e.session_id for e in entries}) == 1
    return entries


def _check_metrics(proxy: Any, entries_of: Callable[[], list[Bill]], model: str) -> None:
    text = httpx.get(f"{root(proxy)}/metrics", headers={"X-Contextfold-Token": TOKEN}).text
    bills = [_bill(b) for b in entries_of()]
    billed = sum(
        metric(text, "billed_usd_total", arm="treated", call=c) for c in ("client", "restore")
    )
    assert billed == pytest.approx(sum(b.cost(native_prices(model)) for b in bills), rel=1e-9)
    for ttl, part in (("5m", "cache_write_tokens"), ("1h", "cache_write_1h_tokens")):
        written = metric(text, "upstream_cache_write_tokens_total", ttl=ttl)
        assert written == sum(getattr(b, part) for b in bills)
    assert metric(text, "direct_estimate_usd_total", arm="treated") > 0


def test_anthropic_sdk_the_ledger_is_the_bill_with_its_1_hour_writes(tmp_path: Path) -> None:
    model, db = "claude-sonnet-4-5-20250929", tmp_path / "s.db"
    script: list[Any] = [ANSWERS[0], [tool_use("restore", RESTORE)], *ANSWERS[1:]]
    system = [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral", "ttl": "1h"}}]
    with ScriptedAnthropic(script) as up, proxy_for(up, "anthropic", db) as proxy:
        client, messages = anthropic_client(proxy), list[Any]()
        for i, question in enumerate(QUESTIONS):
            messages.append({"role": "user", "content": question})
            ask = {"model": model, "max_tokens": 64, "system": system, "messages": messages}
            if i == 1:
                with client.messages.stream(**ask) as stream:
                    reply = stream.get_final_message()
            else:
                reply = client.messages.create(**ask)
            messages.append({"role": "assistant", "content": reply.content[-1].text})
        _check_metrics(proxy, lambda: up.bills, model)
    entries = _check_ledger(db, up.bills, model)
    assert sum(e.billed.cache_write_1h_tokens for e in entries) > 0  # the client's 1-hour mark
    assert sum(e.billed.cache_read_tokens for e in entries) > 0


def _chat_reply(body: dict[str, Any]) -> dict[str, Any]:
    """The answer to the question asked, the restore called first for the second one."""
    last = body["messages"][-1]
    if last["role"] == "user" and last["content"] == QUESTIONS[1]:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [tool_call("r1", "restore", **RESTORE)],
        }
    asked = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    return {"role": "assistant", "content": ANSWERS[QUESTIONS.index(asked)]}


def test_openai_sdk_chat_completions_the_ledger_is_the_bill(tmp_path: Path) -> None:
    model, db = "gpt-4.1-mini", tmp_path / "s.db"
    with ScriptedServer(_chat_reply) as up, proxy_for(up, "chat", db) as proxy:
        client, messages = openai_client(proxy), [{"role": "system", "content": SYSTEM}]
        for i, question in enumerate(QUESTIONS):
            messages.append({"role": "user", "content": question})
            if i == 1:
                chunks = client.chat.completions.create(
                    model=model,
                    messages=messages,
                    stream=True,  # type: ignore[arg-type]
                )
                text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            else:
                reply = client.chat.completions.create(model=model, messages=messages)  # type: ignore[arg-type]
                text = reply.choices[0].message.content or ""
            messages.append({"role": "assistant", "content": text})
        _check_metrics(proxy, lambda: up.bills, model)
    _check_ledger(db, up.bills, model)


def test_openai_sdk_responses_the_ledger_is_the_bill(tmp_path: Path) -> None:
    model, db = "gpt-5-mini", tmp_path / "s.db"
    script: list[Any] = [ANSWERS[0], [responses_call("restore", RESTORE)], *ANSWERS[1:]]
    with ScriptedResponses(script) as up, proxy_for(up, "responses", db) as proxy:
        client, inputs = openai_client(proxy), list[Any]()
        for question in QUESTIONS:
            inputs.append({"role": "user", "content": question})
            reply = client.responses.create(
                model=model, instructions=SYSTEM, input=inputs, store=False
            )
            inputs.append({"role": "assistant", "content": reply.output_text})
        _check_metrics(proxy, lambda: up.bills, model)
    _check_ledger(db, up.bills, model)


def test_google_genai_sdk_the_ledger_is_the_bill(tmp_path: Path) -> None:
    model, db = "gemini-2.5-flash", tmp_path / "s.db"
    script: list[Any] = [ANSWERS[0], [gemini_call("restore", RESTORE)], *ANSWERS[1:]]
    with (
        ScriptedGemini(script, api_key=GEMINI_KEY, min_cache_tokens=1024) as up,
        proxy_for(up, "gemini", db) as proxy,
    ):
        options = types.HttpOptions(
            base_url=root(proxy),
            headers={"X-Contextfold-Token": TOKEN},
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        client = genai.Client(api_key=GEMINI_KEY, http_options=options)
        config = types.GenerateContentConfig(system_instruction=SYSTEM, max_output_tokens=64)
        contents: list[Any] = []
        for question in QUESTIONS:
            contents.append(types.Content(role="user", parts=[types.Part(text=question)]))
            reply = client.models.generate_content(model=model, contents=contents, config=config)
            contents.append(types.Content(role="model", parts=[types.Part(text=reply.text)]))
        _check_metrics(proxy, lambda: up.bills, model)
    _check_ledger(db, up.bills, model)


def test_served_full_the_direct_estimate_is_the_bill(tmp_path: Path) -> None:
    """Unfolded (``full``), a call sent is the call direct: the estimate, scaled by the bill,
    must land on the bill (the Chat upstream caches in 16-token blocks, the meter's rule)."""
    model, db = "gpt-4.1", tmp_path / "s.db"
    with ScriptedServer(_chat_reply) as up, proxy_for(up, "chat", db, strategy="full") as proxy:
        client, messages = openai_client(proxy), [{"role": "system", "content": SYSTEM}]
        for question in (QUESTIONS[0], QUESTIONS[2]):
            messages.append({"role": "user", "content": question})
            reply = client.chat.completions.create(model=model, messages=messages)  # type: ignore[arg-type]
            messages.append({"role": "assistant", "content": reply.choices[0].message.content})
    with open_store(db) as store:
        entries = store.load_ledger()
    billed = sum((e.billed for e in entries), BilledUsage())
    direct = sum((e.direct for e in entries), BilledUsage())
    assert direct.prompt_tokens == pytest.approx(billed.prompt_tokens, rel=0.02)
    assert sum(e.direct_usd for e in entries) == pytest.approx(
        sum(e.billed_usd for e in entries), rel=0.05
    )


def test_a_failed_call_is_entered_with_its_error_and_nothing_billed(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with ScriptedServer(_chat_reply) as up, proxy_for(up, "chat", db) as proxy:
        up.fail = (529, "overloaded")
        client = openai_client(proxy)
        for stream in (False, True):
            with pytest.raises(Exception, match="overloaded"):
                reply = client.chat.completions.create(
                    model="gpt-4.1",
                    messages=[{"role": "user", "content": QUESTIONS[0]}],
                    stream=stream,
                )
                if stream:
                    list(reply)  # type: ignore[arg-type]
    with open_store(db) as store:
        entries = store.load_ledger()
        assert store.list_sessions() == []  # the failed turns stored nothing else
    assert [e.error for e in entries] == ["server_error", "server_error"]
    assert all(e.billed == BilledUsage() and e.billed_usd == 0 for e in entries)
