"""A replay's verdict in sentences a newcomer can read, one a line: which strategy sent the
fewest prompt tokens, which cost the least under each price table, what the winner lost, and
which strategies paid for their cuts (cheaper in tokens, dearer in cost) or lost tokens for good.

Its input is two replays of the same trajectories that differ only in the price table
(``summaries[table][label]`` is :meth:`StrategyResult.summary`), with ``full`` among the labels:
every figure is a ratio to it. Cost is ``total_cost_usd`` (a folder model's calls included).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contextfold.bench.report import short_count

__all__ = ["verdict"]

Summaries = Mapping[str, Mapping[str, Any]]
"""label -> summary, in the order the strategies were given."""

TABLE_NAMES = {"default": "the default prices", "openai": "OpenAI's"}


def verdict(summaries: Mapping[str, Summaries]) -> list[str]:
    """The verdict lines; ``summaries`` maps each price table's name to its replay's."""
    first = next(iter(summaries.values()))
    if "full" not in first:
        raise ValueError("the verdict compares with full, which did not run")
    if len(first) == 1:
        return ["Only full ran: there is nothing to compare it with."]
    best = min(first, key=lambda label: first[label]["prompt_tokens"])
    lines = [_fewest(first, best), _cheapest(summaries, best)]
    if best != "full":
        lines += _lost(first[best])
    lines += _paid_for_cuts(first, next(iter(summaries)))
    lines += _lossy(first, best)
    return lines


def _ratio(summaries: Summaries, label: str, key: str) -> float:
    base = summaries["full"][key]
    return float(summaries[label][key] / base) if base else 1.0


def _fewest(first: Summaries, best: str) -> str:
    if first[best]["prompt_tokens"] >= first["full"]["prompt_tokens"]:
        return "No strategy sent fewer prompt tokens than full."
    tokens = short_count(first[best]["prompt_tokens"])
    ratio = _ratio(first, best, "prompt_tokens")
    return f"{best} sent the fewest prompt tokens: {tokens}, {ratio:.2f}x of full."


def _cheapest(summaries: Mapping[str, Summaries], best: str) -> str:
    cheap = {
        table: min(s, key=lambda label: s[label]["total_cost_usd"])
        for table, s in summaries.items()
    }
    winners = set(cheap.values())
    if len(winners) > 1:
        parts = [f"{label} at {TABLE_NAMES.get(t, t)}" for t, label in cheap.items()]
        return f"The cheapest depends on the prices: {', '.join(parts)}."
    (winner,) = winners
    if winner == "full":
        return "full itself cost the least: every cut cost more than it saved."
    ratios = [
        f"{_ratio(summaries[t], winner, 'total_cost_usd'):.2f}x"
        + (" of full" if i == 0 else "")
        + f" at {TABLE_NAMES.get(t, t)}"
        for i, t in enumerate(summaries)
    ]
    who = "It also" if winner == best else winner
    return f"{who} cost the least: {', '.join(ratios)}."


def _lost(s: Mapping[str, Any]) -> list[str]:
    removed, lost = s["removed_tokens"], s["unrecoverable_tokens"]
    if not removed:
        lines = ["It left nothing out of its views."]
    elif lost:
        lines = [
            f"It lost {short_count(lost)} of the {short_count(removed)} tokens it left out "
            "for good: no restore path brings them back."
        ]
    else:
        lines = [
            f"It lost nothing for good: each of the {short_count(removed)} tokens it left out "
            "has a restore path."
        ]
    if s["args_restorable"]:
        lines.append(
            f"But {s['args_restorable']:.0%} of the values its later tool calls used were out of "
            "its view: the agent would have to restore them first."
        )
    if s["args_lost"]:
        lines.append(f"{s['args_lost']:.0%} of the values its later tool calls used were lost.")
    return lines


def _paid_for_cuts(first: Summaries, table: str) -> list[str]:
    """Strategies that sent fewer tokens than full yet cost more (under the first table)."""
    full = first["full"]
    paid = [
        label
        for label, s in first.items()
        if s["prompt_tokens"] < full["prompt_tokens"]
        and s["total_cost_usd"] > full["total_cost_usd"]
    ]
    if not paid:
        return []
    return [
        f"{_join(paid)} sent fewer tokens than full yet cost more at "
        f"{TABLE_NAMES.get(table, table)}: each cut into what the cache holds turns cheap "
        "cache reads into full-price input."
    ]


def _lossy(first: Summaries, best: str) -> list[str]:
    lossy = [label for label, s in first.items() if label != best and s["unrecoverable_tokens"] > 0]
    if not lossy:
        return []
    counts = _join([short_count(first[label]["unrecoverable_tokens"]) for label in lossy])
    does = "drops what it leaves" if len(lossy) == 1 else "drop what they leave"
    return [f"{_join(lossy)} {does} out for good: {counts} tokens."]


def _join(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"
