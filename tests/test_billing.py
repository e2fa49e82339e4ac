"""A bill priced in its model's dollars: model families by name, tables by their multiples."""

from __future__ import annotations

import pytest

from contextfold.core.billing import BilledUsage, model_price, native_prices, prices_for
from contextfold.core.meter import COST_KEYS, PRICE_TABLES


@pytest.mark.parametrize(
    ("model", "prefix"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-sonnet-4-6", "claude-sonnet"),
        ("anthropic/claude-opus-4-1", "claude-opus-4"),
        ("claude-opus-4-8", "claude-opus-4-8"),
        ("claude-opus-4-5-20251101", "claude-opus-4-5"),
        ("claude-haiku-4-5", "claude-haiku-4"),
        ("gpt-5-mini-2025-08-07", "gpt-5-mini"),
        ("gpt-5.1-codex", "gpt-5"),
        ("GPT-4.1", "gpt-4.1"),
        ("models/gemini-2.5-flash-lite", "gemini-2.5-flash-lite"),
        ("gemini-2.5-flash", "gemini-2.5-flash"),
    ],
)
def test_a_model_name_finds_its_family_most_specific_first(model: str, prefix: str) -> None:
    found = model_price(model)
    assert found is not None and found.prefix == prefix


@pytest.mark.parametrize("model", [None, "", "smollm2-135m", "my-finetune"])
def test_an_unknown_model_keeps_the_tables_nominal_prices(model: str | None) -> None:
    assert model_price(model) is None
    assert prices_for(PRICE_TABLES["gpt-5"], model) == PRICE_TABLES["gpt-5"]


def test_a_table_keeps_its_multiples_at_the_models_prices() -> None:
    sonnet = prices_for(PRICE_TABLES["default"], "claude-sonnet-4-5-20250929")
    assert (sonnet.input, sonnet.output) == (3.0, 15.0)
    assert sonnet.cache_read == pytest.approx(0.30)
    assert sonnet.cache_write == pytest.approx(3.75)
    assert sonnet.cache_write_1h == pytest.approx(6.00)
    hour = prices_for(PRICE_TABLES["anthropic-1h"], "claude-sonnet-4-5")
    assert hour.cache_write == pytest.approx(6.00)


def test_native_prices_are_the_providers_own_table() -> None:
    assert native_prices("claude-sonnet-4-5").cache_write == pytest.approx(3.75)
    gpt41 = native_prices("gpt-4.1")
    assert (gpt41.cache_read, gpt41.cache_write) == (pytest.approx(0.5), pytest.approx(2.0))
    assert native_prices("gpt-5").cache_read == pytest.approx(0.125)
    assert native_prices(None) == PRICE_TABLES["default"]


def test_a_bill_is_priced_part_by_part() -> None:
    # A Claude Code call as its log records it: 10 uncached, 14,004 written for 5 minutes,
    # 12,861 read, 130 out; plus 1,000 written for an hour.
    usage = BilledUsage(
        input_tokens=10,
        cache_read_tokens=12_861,
        cache_write_tokens=14_004,
        cache_write_1h_tokens=1_000,
        output_tokens=130,
    )
    parts = usage.cost_parts(native_prices("claude-sonnet-4-5-20250929"))
    assert list(parts) == list(COST_KEYS)
    assert parts["cost_input_usd"] == pytest.approx(10 * 3.0 / 1e6)
    assert parts["cost_read_usd"] == pytest.approx(12_861 * 0.30 / 1e6)
    assert parts["cost_write_usd"] == pytest.approx((14_004 * 3.75 + 1_000 * 6.0) / 1e6)
    assert parts["cost_output_usd"] == pytest.approx(130 * 15.0 / 1e6)
    assert usage.cost(native_prices("claude-sonnet-4-5")) == pytest.approx(sum(parts.values()))
    assert usage.prompt_tokens == 10 + 12_861 + 14_004 + 1_000


def test_bills_add_up_field_by_field() -> None:
    one = BilledUsage(1, 2, 3, 4, 5)
    assert one + BilledUsage(10, 20, 30, 40, 50) == BilledUsage(11, 22, 33, 44, 55)
    assert sum((one, one), BilledUsage()) == BilledUsage(2, 4, 6, 8, 10)
