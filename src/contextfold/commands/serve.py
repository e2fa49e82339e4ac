"""``contextfold serve``: the proxy speaking Chat Completions, Anthropic Messages, OpenAI
Responses and Gemini's API (see :mod:`contextfold.serve`)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Annotated

import typer

from contextfold.commands.common import console, err_console, fail
from contextfold.commands.options import (
    BudgetOpt,
    FolderOpt,
    ThreadsOpt,
    TokenizerOpt,
    resolve_profile,
)
from contextfold.core.errors import ContextFoldError

__all__ = ["ControlOpt", "serve"]

INSTALL_HINT = "pip install 'contextfold[serve]'  (starlette, uvicorn, httpx, prometheus-client)"

ControlOpt = Annotated[
    float,
    typer.Option(
        min=0.0,
        max=1.0,
        help="Share of sessions left unfolded as a control group (0.1: a tenth, chosen by a "
        "hash of each session and kept in the store); compare the arms with contextfold "
        "savings --compare.",
    ),
]


def serve(
    upstream: Annotated[
        str,
        typer.Option(
            help="Where views go: a Chat Completions base URL (http://host:8000/v1: serves "
            "Chat Completions, Anthropic Messages, OpenAI Responses and Gemini, translated), "
            "anthropic:URL (serves Messages, e.g. anthropic:https://api.anthropic.com), "
            "responses:URL (serves Responses, e.g. responses:https://api.openai.com/v1), "
            "gemini:URL (serves every API, e.g. "
            "gemini:https://generativelanguage.googleapis.com), or local (the embedded "
            "model; serves every API). Anthropic and Responses upstreams serve Gemini too."
        ),
    ],
    strategy: Annotated[str, typer.Option("--strategy", "-s", help="Strategy spec.")] = "refold",
    store: Annotated[
        str | None,
        typer.Option(
            help="SQLite file keeping every session (created 0600), or a postgresql:// URL "
            "of a database that replicas share."
        ),
    ] = None,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on.")] = 8900,
    token: Annotated[
        str | None,
        typer.Option(envvar="CONTEXTFOLD_TOKEN", help="Bearer token clients must send."),
    ] = None,
    no_auth: Annotated[
        bool, typer.Option("--no-auth", help="No token (allowed on a loopback host only).")
    ] = False,
    budget: BudgetOpt = None,
    tokenizer: TokenizerOpt = None,
    folder: FolderOpt = None,
    upstream_key_env: Annotated[
        str | None,
        typer.Option(
            help="Environment variable holding a key for the upstream, sent when the "
            "client sends none of its own (e.g. OPENAI_API_KEY)."
        ),
    ] = None,
    max_body: Annotated[int, typer.Option(min=1024, help="Largest request body, bytes.")] = (
        32 * 1024 * 1024
    ),
    responses_memory: Annotated[
        int,
        typer.Option(
            min=1,
            help="Bytes of Responses API answers kept for previous_response_id (as JSON; "
            "the oldest evicted first).",
        ),
    ] = 256 * 1024 * 1024,
    max_upstream_connections: Annotated[
        int,
        typer.Option(
            min=1,
            help="Connections to the upstream open at once, shared by every session; a "
            "request that finds them all busy for 5 s gets a 503 (see /metrics).",
        ),
    ] = 64,
    threads: ThreadsOpt = 2,
    fsync: Annotated[
        bool, typer.Option("--fsync", help="Fsync every store commit (survives power loss).")
    ] = False,
    experience: Annotated[
        Path | None,
        typer.Option(
            help="Experience file (replay --learn --save-experience on your recorded runs): "
            "every session's strategy starts from its label's entry, frozen unless --learn."
        ),
    ] = None,
    learn: Annotated[
        bool,
        typer.Option(
            "--learn",
            help="Learn across sessions: a session idle for --idle-end seconds has ended and "
            "teaches the sessions after it.",
        ),
    ] = False,
    idle_end: Annotated[
        float | None,
        typer.Option(help="With --learn: seconds without a request that end a session [300]."),
    ] = None,
    save_experience: Annotated[
        Path | None,
        typer.Option(
            help="With --learn: write what the sessions taught here (the strategy's entry) each "
            "time one ends; start a later proxy from it with --experience."
        ),
    ] = None,
    control: ControlOpt = 0.0,
) -> None:
    """Serve a proxy that gives any agent context folding: POST /v1/chat/completions,
    /v1/messages (and /count_tokens) and /v1/responses, as the upstream allows (see
    --upstream); GET /v1/models lists the APIs served."""
    try:
        import uvicorn

        from contextfold.serve import ServeConfig, build_proxy, create_app
        from contextfold.serve.apis import APIS, served_apis
        from contextfold.serve.config import DEFAULT_IDLE_END, redact_url
    except ImportError as exc:
        fail(f"contextfold serve needs {exc.name}: {INSTALL_HINT}")
    if idle_end is not None and not learn:
        fail("--idle-end needs --learn (without it no session is ever ended)")
    generated = token is None and not no_auth
    if generated:
        token = secrets.token_urlsafe(24)
    key = os.environ.get(upstream_key_env) if upstream_key_env else None
    if upstream_key_env and not key:
        fail(f"--upstream-key-env {upstream_key_env}: that environment variable is not set")
    config = ServeConfig(
        upstream=upstream,
        strategy=strategy,
        store=store,
        token=token,
        no_auth=no_auth,
        host=host,
        budget=budget,
        counter=tokenizer or resolve_profile(None).tokenizer,
        folder=folder,
        max_body=max_body,
        responses_memory=responses_memory,
        max_upstream_connections=max_upstream_connections,
        upstream_key=key,
        threads=threads,
        fsync=fsync,
        experience=experience,
        learn=learn,
        idle_end=DEFAULT_IDLE_END if idle_end is None else idle_end,
        save_experience=save_experience,
        control=control,
    )
    try:
        proxy = build_proxy(config)
        proxy.open()  # the store, checked and loaded before the server starts
    except (ContextFoldError, ValueError) as exc:
        fail(str(exc))
    apis = ", ".join(APIS[a].title for a in served_apis(proxy.upstream.wire.api))
    console.print(
        f"contextfold serve: http://{host}:{port}/v1 -> {redact_url(upstream)}, "
        f"strategy {strategy}; serving {apis}",
        soft_wrap=True,
    )
    if generated:
        err_console.print(f"bearer token (none given): {token}", soft_wrap=True, highlight=False)
    from contextfold.serve.runner import listening_socket

    try:
        sock = listening_socket(host, port)
    except OSError as exc:
        proxy.close()
        fail(f"cannot listen on {host}:{port}: {exc}")
    settings = uvicorn.Config(create_app(proxy), log_level="warning", access_log=False)
    uvicorn.Server(settings).run(sockets=[sock])
