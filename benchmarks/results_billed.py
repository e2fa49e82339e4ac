"""The ``billed`` page: replay's simulated full against what Claude Code's own logs say each
session was billed, and every model-free strategy on those sessions, as multiples of full.

The 60 swecontextbench sessions of ``claude-code-dev`` are split as sorted: the first 30 tune
(the calibration's thinking weight and refold's levers were chosen on them), the other 30 and
tokbench's session with its subagents check (:mod:`calibration`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import calibration
import replay_setup as setup
import results_md as md
from results_md import COMMAND

from contextfold.bench.billed import MEASURES

SET = "claude-code-dev"
LABELS = {"tune": "tuning", "check": "held out", "tokbench": "tokbench"}
SHOWN_STEPS = {"today": "plain", "+ billed output": "calibrated"}
STRATEGIES = ["refold", "clip", "mask", "window", "prune", "recall", "supersede"]
TABLES = ("default", "gpt-5", "anthropic-1h")


def billed_page(data: Path) -> md.Page:
    root = data / SET
    page = md.Page(
        "billed",
        "Claude Code sessions: simulated against billed",
        "Claude Code's logs record what each call was billed (prompt tokens read from the "
        "cache, written to it for five minutes or an hour, uncached, and output). `contextfold "
        "replay` reads them and sets full as billed beside its own simulated full; the "
        "calibration ([Formats](../measure/formats.md#billed-usage-and-the-unlogged-prefix)) "
        "makes the simulator agree, and every strategy of a session is measured by that "
        "session's one calibrated counter. The 60 swecontextbench sessions (Sonnet 4.5 on "
        "SWE-bench tasks) are split as sorted: the first 30 tuned the calibration and refold, "
        "the other 30 and tokbench's long session with its 18 subagents did not.",
        [root],
        f"{COMMAND} --only billed",
    )
    sets = calibration.sets(root)
    measured = {
        name: calibration.measure_set(list(calibration.sessions(paths)))
        for name, paths in sets.items()
    }
    page.text("## The meter against the bill")
    page.section("calibration", _calibration_table(measured))
    page.text(
        "Each measure's error, simulated full / billed - 1, over the set's sessions at each "
        "model's own prices: plain, the meter as it is for logs without a bill (its "
        "token counter, no unlogged prefix, vLLM's cache blocks); calibrated, with the session's "
        "unlogged prefix and scale, the provider's cache rule and thinking rule, and the billed "
        "output where the log holds the final count. The per-session spread of the calibrated "
        "prompt tokens and cost:"
    )
    page.section("spread", _spread_table(measured))
    page.text("## The strategies on these sessions")
    page.section("strategies", _strategies_table(sets))
    page.text(
        "tokens: prompt tokens as a multiple of full's (restore calls included); then the cost "
        "under each price table as a multiple of full's, and in brackets the sessions that "
        "cost more than full under it. hindsight: replay's bound, which knows which outputs no "
        "later call uses."
    )
    return page


def _calibration_table(measured: dict[str, dict[str, Any]]) -> str:
    heads = ["set", "meter", *(_short(name) for _, name in MEASURES)]
    rows = []
    for name, res in measured.items():
        for step, label in SHOWN_STEPS.items():
            errs = res["steps"][step]
            rows.append([LABELS[name], label, *(f"{errs[k]:+.1%}" for k, _ in MEASURES)])
    return md.table(heads, rows)


def _short(measure: str) -> str:
    short = {"prompt tokens": "prompt", "cache reads": "reads", "cache writes": "writes"}
    return short.get(measure, measure.replace("uncached input", "input").replace("cost $", "cost"))


def _spread_table(measured: dict[str, dict[str, Any]]) -> str:
    heads = ["set", "sessions", "calls", "prompt: median [range]", "cost: median [range]"]
    rows = [
        [
            LABELS[name],
            str(res["sessions"]),
            f"{res['calls']:,}",
            *(_range(res["spread"][k]) for k in ("prompt_tokens", "cost_usd")),
        ]
        for name, res in measured.items()
    ]
    return md.table(heads, rows)


def _range(spread: dict[str, float]) -> str:
    return f"{spread['median']:+.1%} [{spread['min']:+.1%}, {spread['max']:+.1%}]"


def _strategies_table(sets: dict[str, list[Path]]) -> str:
    heads = ["set", "strategy", "tokens", *TABLES]
    rows = []
    for name, paths in sets.items():
        runs = {
            t: setup.run(paths, ["full", *STRATEGIES], prices=t, profile="qwen3-8b", hindsight=True)
            for t in TABLES
        }
        for label in [*STRATEGIES, "hindsight"]:
            cells = [_cost(runs[t].result.strategies, label) for t in TABLES]
            tokens = _ratio(runs["default"].result.strategies, label, "prompt_tokens")
            rows.append([LABELS[name], label, tokens, *cells])
    return md.table(heads, rows)


def _ratio(results: dict[str, Any], label: str, key: str) -> str:
    return md.ratio(results[label].summary()[key], results["full"].summary()[key])


def _cost(results: dict[str, Any], label: str) -> str:
    full = {r["id"]: r["cost_usd"] for r in results["full"].rows}
    above = sum(r["cost_usd"] > full[r["id"]] for r in results[label].rows)
    return f"{_ratio(results, label, 'cost_usd')} ({above})"
