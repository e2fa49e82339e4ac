"""The responses the proxy keeps for ``previous_response_id`` are bounded in bytes: the oldest
go first once the budget is spent, one larger than the whole budget is not kept, and the
memory they hold (their JSON bytes, in ``/metrics``) never passes the budget."""

from __future__ import annotations

import json

import httpx
import pytest

from contextfold.serve.apis.responses._store import ResponseStore, Stored, stored_bytes
from contextfold.serve.errors import ApiError
from contextfold.testing.upstreams.responses import ScriptedResponses
from tests._protocols import CLIENT_KEY, TOKEN, proxy_for
from tests._serve import metric

HEADERS = {"authorization": f"Bearer {CLIENT_KEY}", "x-contextfold-token": TOKEN}


def _kept(response_id: str, size: int, previous: str | None = None) -> Stored:
    text = "x" * size
    item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    return Stored(previous, [item], {"id": response_id, "output": []})


def test_the_oldest_responses_go_first_once_the_byte_budget_is_spent() -> None:
    one = stored_bytes(_kept("r0", 1000))
    store = ResponseStore(budget=3 * one)
    for i in range(5):
        store.put(_kept(f"r{i}", 1000))
        assert store.bytes <= store.budget
    assert store.bytes == 3 * one
    for gone in ("r0", "r1"):
        with pytest.raises(ApiError, match="evicted"):
            store.get(gone)
    assert [store.get(f"r{i}").response["id"] for i in (2, 3, 4)] == ["r2", "r3", "r4"]
    store.delete("r3")
    assert store.bytes == 2 * one


def test_a_response_larger_than_the_whole_budget_is_not_kept_and_says_so() -> None:
    store = ResponseStore(budget=10_000)
    store.put(_kept("small", 100))
    store.put(_kept("huge", 20_000))
    assert store.get("small").response["id"] == "small"  # nothing evicted for it
    with pytest.raises(ApiError, match="larger than"):
        store.get("huge")
    assert store.bytes == stored_bytes(_kept("small", 100))


def _metric(proxy_url: str, name: str) -> int:
    return int(metric(httpx.get(f"{proxy_url}/metrics", headers=HEADERS).text, name))


def test_kept_responses_through_the_proxy_stay_within_the_budget() -> None:
    budget = 1_000_000
    instructions = "i" * 300_000  # each response echoes them: about 300 kB kept per response
    ids = []
    with ScriptedResponses() as up, proxy_for(up, "responses", responses_memory=budget) as proxy:
        base = proxy.url.removesuffix("/v1")
        for i in range(12):
            body = {"model": "m", "input": f"turn {i}", "instructions": instructions}
            answer = httpx.post(f"{proxy.url}/responses", json=body, headers=HEADERS, timeout=30)
            assert answer.status_code == 200, answer.text
            ids.append(answer.json()["id"])
            assert _metric(base, "responses_kept_bytes") <= budget
        assert _metric(base, "responses_kept") == 3
        latest = httpx.get(f"{proxy.url}/responses/{ids[-1]}", headers=HEADERS)
        assert latest.status_code == 200 and latest.json()["instructions"] == instructions
        oldest = httpx.get(f"{proxy.url}/responses/{ids[0]}", headers=HEADERS)
        assert oldest.status_code == 404
        assert oldest.json()["error"]["code"] == "previous_response_not_found"
        body = {"model": "m", "input": "more", "previous_response_id": ids[0]}
        refused = httpx.post(f"{proxy.url}/responses", json=body, headers=HEADERS, timeout=30)
        assert refused.status_code == 404 and "evicted" in refused.json()["error"]["message"]


def test_the_bytes_counted_are_the_json_bytes_of_what_is_kept() -> None:
    stored = _kept("r", 10)
    expected = len(json.dumps([stored.input, stored.response], separators=(",", ":")).encode())
    assert stored_bytes(stored) == expected
