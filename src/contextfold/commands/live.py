"""``contextfold run``: one task live, with its transcript, reward and meter."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape as rich_escape
from rich.table import Table

from contextfold.commands.common import (
    BudgetOpt,
    FolderOpt,
    ThreadsOpt,
    check_args,
    console,
    err_console,
    fail,
    save,
)
from contextfold.core.errors import ContextFoldError

if TYPE_CHECKING:
    from contextfold.core.protocols import Model, Store

__all__ = ["run"]


def run(
    env: Annotated[
        str,
        typer.Option(
            help="tau2:airline|retail|telecom, tutorial:budget|study-plan or "
            "workspace:sales-report|meeting-deck|reorder-code"
        ),
    ],
    task: Annotated[str | None, typer.Option(help="Task id (tau2) or prompt (tutorial).")] = None,
    strategy: Annotated[str, typer.Option("--strategy", "-s", help="Strategy spec.")] = "refold",
    model: Annotated[
        str,
        typer.Option(help="local, openai:MODEL with --base-url, or scripted (workspace tasks)."),
    ] = "local",
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible server URL.")] = None,
    max_steps: Annotated[int, typer.Option(min=1, help="Agent steps at most.")] = 30,
    budget: BudgetOpt = None,
    threads: ThreadsOpt = 2,
    store: Annotated[
        str | None, typer.Option(help="SQLite file or postgresql:// URL keeping the session.")
    ] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write results here.")] = None,
    folder: FolderOpt = "agent",
    session: Annotated[
        str | None, typer.Option(help="Session id in the store (default: unique per run).")
    ] = None,
    resume: Annotated[
        str | None,
        typer.Option(help="Continue the stored session ID (after a crash); needs --store."),
    ] = None,
) -> None:
    """Run one task live: transcript as it happens, then the reward and the meter."""
    from contextfold.bench.live import make_model, run_live
    from contextfold.core.counters import resolve_counter
    from contextfold.strategies.folding import FolderSource

    check_args([strategy], json_out)
    with ExitStack() as opened:  # closes the store on every way out
        try:
            sessions, session = _open_session(opened, store, session, resume, env, task)
            counter = resolve_counter("smollm2" if model == "local" else "approx")

            def make() -> Model:
                return make_model(model, base_url=base_url, threads=threads, env_spec=env)

            folders = FolderSource(
                default=folder, agent=make, agent_spec=model, base_url=base_url, threads=threads
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
            )
        except ContextFoldError as exc:
            fail(str(exc))
    summary = result.summary()
    table = Table(title=f"{result.env} task {result.task}, strategy {strategy}, model {model}")
    table.add_column("measure", style="bold")
    table.add_column("value", justify="right")
    for key, value in summary.items():
        table.add_row(key, f"{value:,.4f}" if isinstance(value, float) else str(value))
    console.print(table)
    if store is not None:
        from contextfold.core.store import display_store

        console.print(f"session {session} in {display_store(store)}")
    save(json_out, summary)


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

    if resume is not None and (target is None or session not in (None, resume)):
        fail("--resume ID needs --store (the file that holds the session) and no other --session")
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
    err_console.print(f"{verb} session {chosen} in {path} (after a crash: --resume {chosen})")
    return store, chosen


def _print_step(step: Any) -> None:
    for message in step.messages:
        role = message.role
        text = (message.content or "").strip()
        calls = getattr(message, "tool_calls", ())
        style = {"user": "cyan", "assistant": "green", "tool": "dim"}.get(role, "")
        line = text if len(text) <= 300 else text[:300] + " …"
        console.print(f"[{style}][{step.index}] {role}:[/{style}] {rich_escape(line)}")
        for call in calls:
            console.print(
                f"[{style}]    -> {call.name}({rich_escape(call.arguments[:200])})[/{style}]"
            )
