"""``contextfold run``: one task live, with its transcript, reward and a summary of the
meter; ``contextfold tasks``: the tau2 task ids it can score."""

from __future__ import annotations

from contextlib import ExitStack
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape as rich_escape
from rich.table import Table

from contextfold.commands.common import check_args, console, err_console, fail, save
from contextfold.commands.options import (
    DEFAULT_PRICES,
    BaseUrlOpt,
    BudgetOpt,
    FolderOpt,
    JsonOpt,
    PricesOpt,
    ProfileOpt,
    StrategyOpt,
    ThreadsOpt,
    TokenizerOpt,
    resolve_counter_for,
    resolve_prices,
    resolve_profile,
)
from contextfold.core.errors import ContextFoldError

if TYPE_CHECKING:
    from contextfold.core.history import Step
    from contextfold.core.protocols import Model, Store

__all__ = ["run", "summary_rows", "tasks"]

SESSIONS = "Sessions"
LIVE_FOLDER = "agent"
"""What ``--folder`` defaults to in a live run: the agent's own model."""


def run(
    env: Annotated[
        str,
        typer.Option(
            metavar="ENV",
            help="tau2:DOMAIN (airline, retail, telecom), tutorial:budget, tutorial:study-plan "
            "or workspace:NAME (sales-report, meeting-deck, reorder-code).",
        ),
    ],
    task: Annotated[
        str | None, typer.Option(metavar="ID", help="Task id (tau2) or prompt (tutorial).")
    ] = None,
    strategy: StrategyOpt = "refold",
    model: Annotated[
        str,
        typer.Option(
            metavar="MODEL",
            help="local, openai:NAME (with --base-url) or scripted (workspace tasks).",
        ),
    ] = "local",
    base_url: BaseUrlOpt = None,
    max_steps: Annotated[int, typer.Option(min=1, metavar="N", help="Agent steps at most.")] = 30,
    budget: BudgetOpt = None,
    threads: ThreadsOpt = 2,
    store: Annotated[
        str | None,
        typer.Option(
            metavar="STORE",
            help="SQLite file or postgresql:// URL keeping the session.",
            rich_help_panel=SESSIONS,
        ),
    ] = None,
    json_out: JsonOpt = None,
    folder: FolderOpt = None,
    profile: ProfileOpt = None,
    tokenizer: TokenizerOpt = None,
    prices: PricesOpt = DEFAULT_PRICES,
    session: Annotated[
        str | None,
        typer.Option(
            metavar="ID",
            help="Session id in the store (default: unique per run).",
            rich_help_panel=SESSIONS,
        ),
    ] = None,
    resume: Annotated[
        str | None,
        typer.Option(
            metavar="ID",
            help="Continue the stored session ID (after a crash); needs --store.",
            rich_help_panel=SESSIONS,
        ),
    ] = None,
) -> None:
    """Run one task live: transcript as it happens, then the reward and what it cost."""
    from contextfold.bench.live import make_model, run_live
    from contextfold.strategies.folding import FolderSource

    check_args([strategy], json_out)
    if resume is not None and (store is None or session not in (None, resume)):
        fail("--resume ID needs --store (the file that holds the session) and no other --session")
    with ExitStack() as opened:  # closes the store on every way out
        try:
            measured = resolve_profile(profile, model=model)
            counter = resolve_counter_for(tokenizer, measured)
            table = resolve_prices(prices)
            sessions, session = _open_session(opened, store, session, resume, env, task)

            def make() -> Model:
                return make_model(model, base_url=base_url, threads=threads, env_spec=env)

            folders = FolderSource(
                default=folder or LIVE_FOLDER,
                agent=make,
                agent_spec=model,
                base_url=base_url,
                threads=threads,
            )
            result = run_live(
                env,
                task,
                strategy,
                make,
                counter=counter,
                max_steps=max_steps,
                budget=budget,
                store=sessions,
                on_step=_print_step,
                folders=folders,
                session=session,
                resume=resume is not None,
                profile=measured,
                prices=table,
            )
        except ContextFoldError as exc:
            fail(str(exc))
    summary = result.summary()
    console.print(
        rich_escape(f"{result.env} task {result.task}, strategy {strategy}, model {model}"),
        style="bold",
    )
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    for label, text in summary_rows(summary, prices):
        grid.add_row(label, rich_escape(text))
    console.print(grid)
    if store is not None:
        from contextfold.core.store import display_store

        console.print(f"session {session} in {display_store(store)}", markup=False)
    save(json_out, summary)


def tasks(
    domain: Annotated[str, typer.Argument(metavar="DOMAIN", help="airline, retail or telecom.")],
    all_splits: Annotated[bool, typer.Option("--all", help="Every split, not only base.")] = False,
) -> None:
    """List the tau2 task ids of a domain that the evaluator scores without a model."""
    from contextfold.envs.tau2 import list_tasks

    try:
        ids = list_tasks(domain, split=None if all_splits else "base", model_free=True)
    except ContextFoldError as exc:
        fail(str(exc))
    console.print(" ".join(ids), soft_wrap=True)


_SHOWN = {
    "env", "task", "strategy", "reward", "stop", "steps", "prompt_tokens", "completion_tokens",
    "cost_usd", "prefix_cache_reuse", "peak_context_tokens", "tool_calls", "tool_errors",
    "forced_compactions", "total_cost_usd",
}  # fmt: skip


def summary_rows(s: dict[str, Any], prices: str) -> list[tuple[str, str]]:
    """The run's summary as a few labelled lines: what every run has, then only the figures
    that are not zero or empty (the folder's, carryon's carriers, the environment's)."""
    reward = "none (no evaluator)" if s["reward"] is None else f"{s['reward']:g}"
    rows = [
        ("outcome", f"reward {reward}; stopped ({s['stop']}) after {s['steps']} steps"),
        ("tools", f"{s['tool_calls']} calls, {s['tool_errors']} errors"),
        (
            "tokens",
            f"{s['prompt_tokens']:,} prompt tokens sent ({s['prefix_cache_reuse']:.0%} reused "
            f"from the previous prompt), peak context {s['peak_context_tokens']:,}; "
            f"{s['completion_tokens']:,} completion",
        ),
        ("cost", f"${s['cost_usd']:.4f} at {prices} prices"),
    ]
    if s["forced_compactions"]:
        rows.append(("compactions", f"{s['forced_compactions']} forced by the budget"))
    if s.get("fold_calls"):
        rows.append(("folder", _folder_line(s)))
    carriers = [f"{k} {s[f'carriers_{k}']}" for k in ("retained", "updated", "added")]
    if any(s.get(f"carriers_{k}") for k in ("retained", "updated", "added")):
        rows.append(("carriers", ", ".join(carriers)))
    for key, value in s.items():
        if key not in _SHOWN and not key.startswith(("fold_", "carriers_")) and value:
            rows.append((key.replace("_", " "), _plain(value)))
    return rows


def _folder_line(s: dict[str, Any]) -> str:
    return (
        f"{s['fold_calls']} calls ({s['fold_cache_hits']} from the fold cache), "
        f"{s['fold_prompt_tokens']:,} prompt and {s['fold_completion_tokens']:,} completion "
        f"tokens, ${s['fold_cost_usd']:.4f}, {s['fold_rejected']} folds rejected; "
        f"${s['total_cost_usd']:.4f} with the agent's"
    )


def _plain(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}: {v}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return f"{value:,.4g}" if isinstance(value, float) else str(value)


def _open_session(
    opened: ExitStack,
    target: str | None,
    session: str | None,
    resume: str | None,
    env: str,
    task: str | None,
) -> tuple[Store | None, str]:
    """The store (or None; ``opened`` closes it) and the session id to write: given, resumed
    or new."""
    from contextfold.bench.live import new_session_id
    from contextfold.core.store import display_store, open_store

    if target is None:
        return None, session or new_session_id(env, task)
    store: Store = open_store(target)
    opened.callback(store.close)
    path = display_store(target)
    chosen = resume or session or new_session_id(env, task)
    known = store.list_sessions()
    if resume is not None and resume not in known:
        fail(f"no session {resume!r} in {path}; its sessions: {', '.join(known) or 'none'}")
    if resume is None and chosen in known:
        fail(f"session {chosen!r} already exists in {path}; continue it with --resume {chosen}")
    verb = "continuing" if resume else "recording"
    err_console.print(
        f"{verb} session {chosen} in {path} (after a crash: --resume {chosen})", markup=False
    )
    return store, chosen


def _print_step(step: Step) -> None:
    """A step as it happens: each message on a line (cut at 300 characters), each tool call
    below its assistant message; an assistant message with calls and no text shows only them."""
    from contextfold.core.messages import AssistantMessage

    for message in step.messages:
        role, text = message.role, (message.content or "").strip()
        calls = message.tool_calls if isinstance(message, AssistantMessage) else ()
        style = {"user": "cyan", "assistant": "green", "tool": "dim"}.get(role, "")
        line = text if len(text) <= 300 else text[:300] + " …"
        if line or not calls:
            console.print(f"[{style}][{step.index}] {role}:[/{style}] {rich_escape(line)}")
        for call in calls:
            shown = rich_escape(f"[{step.index}] -> {call.name}({call.arguments[:200]})")
            console.print(f"[{style}]{shown}[/{style}]")
