from __future__ import annotations

import pytest

from contextfold.core.errors import ConfigError
from contextfold.core.messages import SystemMessage, UserMessage
from contextfold.core.meter import COST_KEYS, PRICE_TABLES, PROFILES, Meter, get_profile
from contextfold.core.view import Provenance, RestorePath, View


def _view(*sizes: int, first: str = "a") -> View:
    msgs = [SystemMessage(first)] + [UserMessage(f"m{i}") for i in range(1, len(sizes))]
    return View(tuple(msgs), sizes, tuple(Provenance(()) for _ in sizes))


def test_prefix_reuse_counts_whole_blocks_of_the_shared_prefix() -> None:
    meter = Meter()
    first = meter.record_call(_view(40, 10), completion_tokens=5)
    assert first.reused_tokens == 0
    second = meter.record_call(_view(40, 10, 30), completion_tokens=5)
    assert second.reused_tokens == 48  # 50 shared -> 3 blocks of 16
    changed = meter.record_call(_view(40, 10, 30, first="b"), completion_tokens=5)
    assert changed.reused_tokens == 0  # the first message differs: nothing shared
    assert meter.prefix_cache_reuse == pytest.approx(48 / (50 + 80 + 80))


def test_cost_prices_reads_writes_input_and_output() -> None:
    meter = Meter(prices=PRICE_TABLES["default"])
    meter.record_call(_view(40, 10), completion_tokens=5)
    second = meter.record_call(_view(40, 10, 30), completion_tokens=7)
    # 80 prompt tokens: 48 read from cache, 32 written (80 // 16 * 16 - 48), 0 uncached
    expected = (48 * 0.5 + 32 * 6.25 + 0 * 5.0 + 7 * 25.0) / 1e6
    assert second.cost_usd == pytest.approx(expected)
    # the first call: 48 written, 2 uncached, 5 output
    assert meter.calls[0].cost_usd == pytest.approx((48 * 6.25 + 2 * 5.0 + 5 * 25.0) / 1e6)


def test_engine_reported_cache_overrides_the_estimate() -> None:
    meter = Meter(prices=PRICE_TABLES["openai"])
    call = meter.record_call(_view(40, 10), completion_tokens=0, cached_tokens=33)
    assert call.reused_tokens == 33
    assert call.cost_usd == pytest.approx((33 * 1.25 + 17 * 5.0) / 1e6)


def test_kv_bytes_follow_the_profile() -> None:
    qwen = get_profile("Qwen3-8B")
    assert qwen.kv_bytes_per_token == 2 * 36 * 8 * 128 * 2
    meter = Meter(profile=qwen)
    meter.record_call(_view(100, 20), completion_tokens=1)
    meter.record_call(_view(30), completion_tokens=1)
    assert meter.peak_context_tokens == 120
    assert meter.kv_bytes_peak == 120 * qwen.kv_bytes_per_token
    assert PROFILES["smollm2-135m"].kv_bytes_per_token == 2 * 30 * 3 * 64 * 2


def test_unknown_profile_lists_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown model profile .gpt-9..*qwen3-8b"):
        get_profile("gpt-9")


def test_summary_removed_and_unrecoverable() -> None:
    from contextfold.core.view import Elision

    view = View(
        (SystemMessage("s"),),
        (10,),
        (Provenance(()),),
        (Elision((1,), "dedup", 30, RestorePath.step(1)), Elision((2,), "window", 12, None)),
    )
    meter = Meter()
    meter.record_call(view, completion_tokens=0)
    summary = meter.summary()
    assert (summary["removed_tokens"], summary["unrecoverable_tokens"]) == (42, 12)


def test_tool_schemas_lead_every_prompt_and_are_read_from_the_cache_after_the_first() -> None:
    meter = Meter(tool_tokens=90)
    first = meter.record_call(_view(40, 10), completion_tokens=5)
    assert (first.prompt_tokens, first.reused_tokens) == (140, 0)
    second = meter.record_call(_view(40, 10, 30), completion_tokens=5)
    assert (second.prompt_tokens, second.reused_tokens) == (170, 128)  # 140 shared: 8 blocks
    engine = meter.record_call(_view(40), completion_tokens=0, prompt_tokens=500)
    assert engine.prompt_tokens == 500  # an engine's own count has the tools already


@pytest.mark.parametrize(
    ("name", "read", "write"),
    [
        ("default", 0.1, 1.25),
        ("anthropic-1h", 0.1, 2.0),
        ("gpt-5", 0.1, 1.0),
        ("openai", 0.25, 1.0),
    ],
)
def test_each_price_table_has_the_multiples_it_is_named_for(
    name: str, read: float, write: float
) -> None:
    table = PRICE_TABLES[name]
    assert table.name == name
    assert (table.input, table.output) == (5.0, 25.0)
    assert table.cache_read == pytest.approx(read * table.input)
    assert table.cache_write == pytest.approx(write * table.input)


@pytest.mark.parametrize("name", list(PRICE_TABLES))
def test_the_cost_split_adds_up_to_the_cost_and_prices_each_part(name: str) -> None:
    meter = Meter(prices=PRICE_TABLES[name])
    meter.record_call(_view(40, 10), completion_tokens=5)
    meter.record_call(_view(40, 10, 30), completion_tokens=7)
    split = meter.summary()
    assert sum(split[k] for k in COST_KEYS) == pytest.approx(split["cost_usd"])
    p = PRICE_TABLES[name]
    # 12 completion tokens; 48 read; 48 + 32 written; 2 uncached (the first call's tail)
    assert split["cost_output_usd"] == pytest.approx(12 * p.output / 1e6)
    assert split["cost_read_usd"] == pytest.approx(48 * p.cache_read / 1e6)
    assert split["cost_write_usd"] == pytest.approx(80 * p.cache_write / 1e6)
    assert split["cost_input_usd"] == pytest.approx(2 * p.input / 1e6)
