"""The ``replay`` page of ``results.py``: every model-free strategy on the three recorded sets
(tau2-sierra, mini-swe-agent-dev, swe-agent-coder-dev), restores and re-runs priced, under
each price table; the README's table (its headline); the frontier of tokens against cost."""

from __future__ import annotations

from pathlib import Path

import prompt_shares
import results_md as md
from results_md import COMMAND, OUT, Summary, both_prices, ratio

from contextfold.core.meter import COST_KEYS, get_profile
from contextfold.strategies.registry import STRATEGIES, needs_folder

MODEL_FREE = [*(s for s in STRATEGIES if not needs_folder(s)), "ufold folder=none"]
"""Every strategy that runs without a model: the registry's, and ufold's model-free variant."""
SETS = ("tau2-sierra", "mini-swe-agent-dev", "swe-agent-coder-dev")
SHORT = {"tau2-sierra": "tau2", "mini-swe-agent-dev": "SWE", "swe-agent-coder-dev": "CodeR"}
TABLES = ("default", "anthropic-1h", "gpt-5", "openai")
"""The price tables the page prices under (:data:`~contextfold.core.meter.PRICE_TABLES`)."""
PLOTTED = ("default", "gpt-5", "openai")
HEADLINE = ["full", "clip", "mask", "refold", "ufold folder=none"]

Runs = dict[str, dict[str, dict[str, Summary]]]
"""Set name -> price table -> strategy label -> summary."""


def replay_page(data: Path) -> md.Page:
    page = md.Page(
        "replay",
        "Recorded runs",
        "Every strategy that needs no model, replayed over the recorded runs in "
        "`../shared/data` (280 tau2-bench sessions of gpt-4.1 and a fine-tuned gpt-4.1; 100 "
        "mini-swe-agent runs of gemini-3-pro on SWE-bench Verified; 87 CodeR runs of GPT-4 on "
        "SWE-bench Lite, 370 sessions, one per team member's conversation: [where they come "
        "from](index.md#the-recorded-runs)), under every price table, restores and re-runs "
        "priced ([the measures](../measure/measures.md#restores)) (`contextfold replay PATH "
        "-s full -s ... --prices TABLE --hindsight`). Ratios are to `full` in the same run.",
        [data / name for name in SETS],
        f"{COMMAND} --only replay",
    )
    runs = {
        name: both_prices(data / name, MODEL_FREE, tables=TABLES, hindsight=True) for name in SETS
    }
    headline(page, runs)
    where(page, data, runs)
    for name, tables in runs.items():
        page.text(f"## {name}")
        page.section(f"{name}-default", availability(tables["default"]))
        page.text(f"Cost under each price table, {name}:")
        page.section(f"{name}-costs", costs(tables))
    page.text(LEGEND)
    frontier(page, runs)
    return page


def headline(page: md.Page, runs: Runs) -> None:
    """The README's table: a few strategies on every set, tokens and cost (default table)."""
    rows = []
    for label in HEADLINE:
        row = [label]
        for tables in runs.values():
            d = tables["default"]
            row += [ratio(d[label]["prompt_tokens"], d["full"]["prompt_tokens"])]
            row += [ratio(d[label]["cost_usd"], d["full"]["cost_usd"])]
        rows.append(row)
    heads = ["strategy"]
    for name in runs:
        heads += [f"{SHORT[name]} tok", "cost"]
    page.text("## At a glance")
    page.section("headline", md.table(heads, rows))
    page.text(
        "tau2: the 280 tau2-sierra sessions; SWE: the 100 mini-swe-agent-dev runs; CodeR: the "
        "87 swe-agent-coder-dev runs; tok: prompt tokens, cost: under the default price table "
        "(Anthropic's 5-minute cache, OpenAI from GPT-5.6), each as a multiple of full's, "
        "restores and re-runs priced."
    )


def where(page: md.Page, data: Path, runs: Runs) -> None:
    """Where full's prompt tokens are, and what its cost pays for: what no strategy moves."""
    tokenizer = get_profile("qwen3-8b").tokenizer  # as every replay here
    rows = []
    for name, tables in runs.items():
        found = prompt_shares.shares(data / name, tokenizer)
        full = tables["default"]["full"]
        split = [f"{full[k] / full['cost_usd']:.1%}" for k in COST_KEYS]
        rows.append([SHORT[name], *(f"{found[p]:.1%}" for p in prompt_shares.PARTS), *split])
    heads = ["set", "system", "user", "agent", "tool", "output", "reads", "writes", "input"]
    page.text(
        "## Where full's tokens and cost are\n\nfull's prompt tokens by what each message is "
        "(`benchmarks/prompt_shares.py`: the system prompt, user messages with demonstrations, "
        "the agent's own messages, tool outputs), and its cost under the default table by "
        "what it pays for (completions, cache reads, cache writes, uncached input). No context "
        "strategy moves the output share."
    )
    page.section("where", md.table(heads, rows))


def availability(rows: dict[str, Summary]) -> str:
    base, bound = rows["full"], rows["hindsight"]
    heads = ["strategy", "tokens", "cost", "rest.", "rerun", "back", "lost", "bound"]
    return md.table(
        heads,
        [
            [
                label,
                ratio(s["prompt_tokens"], base["prompt_tokens"]),
                ratio(s["cost_usd"], base["cost_usd"]),
                str(s["restores"]),
                str(s["reruns"]),
                f"{s['args_restorable']:.3f}",
                f"{s['args_lost']:.3f}",
                ratio(s["prompt_tokens"], bound["prompt_tokens"], 2),
            ]
            for label, s in rows.items()
        ],
    )


def costs(tables: dict[str, dict[str, Summary]]) -> str:
    """Each strategy's cost as a multiple of full's under each table."""
    labels = [label for label in tables["default"] if label != "hindsight"]
    rows = [
        [label, *(ratio(t[label]["cost_usd"], t["full"]["cost_usd"]) for t in tables.values())]
        for label in labels
    ]
    return md.table(["strategy", *tables], rows)


LEGEND = (
    "tokens, cost: prompt tokens and cost (default table) as multiples of full's; rest.: "
    "restore calls a live agent would make; rerun: re-run calls, each getting back values the "
    "view lost; back, lost: the shares of the values the recorded calls need that the view "
    "left out but can give back with a restore, or lost (the rest it shows: [argument "
    "availability](../measure/measures.md#argument-availability)); bound: prompt tokens as a "
    "multiple of the hindsight bound's. Cost tables: `default` (cache reads 0.1x input, writes "
    "1.25x), `anthropic-1h` (0.1x, 2x), `gpt-5` (0.1x, no write premium), `openai` (GPT-4.1: "
    "0.25x, no write premium)."
)


def frontier(page: md.Page, runs: Runs) -> None:
    plot = OUT / "replay-tokens-cost.png"
    panels = [
        (f"{name}, {prices}", points(tables[prices]))
        for prices in PLOTTED
        for name, tables in runs.items()
    ]
    md.scatter(plot, panels, columns=len(runs))
    page.text(
        "## Tokens against cost\n\nEvery strategy's prompt tokens against its cost, both as "
        "multiples of full's, per set (columns) and price table (rows); the line joins the "
        "strategies no other beats on both (the frontier a user picks from: fewer tokens for "
        "a window or for context rot, or the least cost).\n\n"
        "![tokens against cost, per set and price table](replay-tokens-cost.png)"
    )


def points(rows: dict[str, Summary]) -> dict[str, tuple[float, float]]:
    base = rows["full"]
    return {
        label: (s["prompt_tokens"] / base["prompt_tokens"], s["cost_usd"] / base["cost_usd"])
        for label, s in rows.items()
        if label != "hindsight"
    }
