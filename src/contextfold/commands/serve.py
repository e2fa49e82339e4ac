"""``contextfold serve``: the proxy speaking Chat Completions, Anthropic Messages, OpenAI
Responses and Gemini's API (see :mod:`contextfold.serve`)."""

from __future__ import annotations

import logging
import os
import secrets
from pathlib import Path
from typing import Annotated

import typer

from contextfold.commands.common import console, err_console, fail
from contextfold.commands.options import (
    LEARNING,
    BudgetOpt,
    FolderOpt,
    ThreadsOpt,
    TokenizerOpt,
    resolve_profile,
)
from contextfold.core.errors import ContextFoldError

__all__ = ["SERVE_EPILOG", "ControlOpt", "serve"]

LISTEN, UPSTREAM, SESSIONS = "Listening", "Upstream", "Sessions"
SERVE_EPILOG = (
    "Upstreams: a Chat Completions base URL (http://host:8000/v1), gemini:URL "
    "(gemini:https://generativelanguage.googleapis.com) and local serve all four APIs, "
    "translated; anthropic:URL (anthropic:https://api.anthropic.com) serves Anthropic Messages "
    "and Gemini; responses:URL (responses:https://api.openai.com/v1) serves OpenAI Responses "
    "and Gemini.\n\nMore: docs/serve/index.md; every option: docs/reference/cli.md."
)

INSTALL_HINT = "pip install 'contextfold[serve]'  (starlette, uvicorn, httpx, prometheus-client)"

ControlOpt = Annotated[
    float,
    typer.Option(
        min=0.0,
        max=1.0,
        metavar="SHARE",
        help="Share of sessions served unfolded as a control group (0.1: a tenth); "
        "savings --compare compares the arms.",
    ),
]


def serve(
    upstream: Annotated[
        str,
        typer.Option(
            metavar="UPSTREAM",
            help="Where views go: a Chat Completions base URL, anthropic:URL, responses:URL, "
            "gemini:URL or local (the embedded model); below, what each serves.",
        ),
    ],
    strategy: Annotated[
        str, typer.Option("--strategy", "-s", metavar="SPEC", help="Strategy spec.")
    ] = "refold",
    store: Annotated[
        str | None,
        typer.Option(
            metavar="STORE",
            help="SQLite file keeping every session (created 0600), or a postgresql:// URL "
            "that replicas share.",
            rich_help_panel=SESSIONS,
        ),
    ] = None,
    host: Annotated[
        str, typer.Option(metavar="HOST", help="Address to listen on.", rich_help_panel=LISTEN)
    ] = "127.0.0.1",
    port: Annotated[
        int,
        typer.Option(
            min=0, max=65535, metavar="PORT", help="Port to listen on.", rich_help_panel=LISTEN
        ),
    ] = 8900,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="CONTEXTFOLD_TOKEN",
            metavar="TOKEN",
            help="Bearer token clients must send (default: a new one, printed).",
            rich_help_panel=LISTEN,
        ),
    ] = None,
    no_auth: Annotated[
        bool,
        typer.Option(
            "--no-auth", help="No token (on a loopback host only).", rich_help_panel=LISTEN
        ),
    ] = False,
    budget: BudgetOpt = None,
    tokenizer: TokenizerOpt = None,
    folder: FolderOpt = None,
    upstream_key_env: Annotated[
        str | None,
        typer.Option(
            metavar="VAR",
            help="Variable holding the upstream's key, sent when a client sends none.",
            rich_help_panel=UPSTREAM,
        ),
    ] = None,
    max_body: Annotated[
        int,
        typer.Option(
            min=1024,
            metavar="BYTES",
            help="Largest request body (default: 32 MiB).",
            show_default=False,
            rich_help_panel=LISTEN,
        ),
    ] = (32 * 1024 * 1024),
    responses_memory: Annotated[
        int,
        typer.Option(
            min=1,
            metavar="BYTES",
            help="Responses API answers kept for previous_response_id (default: 256 MiB).",
            show_default=False,
            rich_help_panel=SESSIONS,
        ),
    ] = 256 * 1024 * 1024,
    max_upstream_connections: Annotated[
        int,
        typer.Option(
            min=1,
            metavar="N",
            help="Upstream connections open at once; a request waits 5 s, then gets a 503.",
            rich_help_panel=UPSTREAM,
        ),
    ] = 64,
    threads: ThreadsOpt = 2,
    fsync: Annotated[
        bool,
        typer.Option(
            "--fsync",
            help="Fsync every store commit (survives power loss).",
            rich_help_panel=SESSIONS,
        ),
    ] = False,
    experience: Annotated[
        Path | None,
        typer.Option(
            metavar="PATH",
            help="Start every session's strategy from this file (replay --save-experience).",
            rich_help_panel=LEARNING,
        ),
    ] = None,
    learn: Annotated[
        bool,
        typer.Option(
            "--learn",
            help="A session idle for --idle-end seconds teaches the sessions after it.",
            rich_help_panel=LEARNING,
        ),
    ] = False,
    idle_end: Annotated[
        float | None,
        typer.Option(
            metavar="SECONDS",
            help="With --learn: idle seconds that end a session (default: 300).",
            rich_help_panel=LEARNING,
        ),
    ] = None,
    save_experience: Annotated[
        Path | None,
        typer.Option(
            metavar="PATH",
            help="With --learn: write what the sessions taught here as each one ends.",
            rich_help_panel=LEARNING,
        ),
    ] = None,
    control: ControlOpt = 0.0,
) -> None:
    """Serve a proxy that folds any agent's context: Chat, Messages, Responses, Gemini.

    POST /v1/chat/completions, /v1/messages (and /count_tokens), /v1/responses and Gemini's
    /v1beta/models/MODEL:generateContent (:streamGenerateContent, :countTokens), as the
    upstream allows; GET /v1/models lists the APIs served, /health says the proxy is up
    (?upstream=1: and its upstream reachable), /metrics counts in Prometheus' text.
    """
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
    from contextfold.serve.runner import listening_socket

    try:
        proxy = build_proxy(config)
        proxy.open()  # the store, checked and loaded before the server starts
    except (ContextFoldError, ValueError) as exc:
        fail(str(exc))
    try:  # then the port: a busy one is the answer, before anything says "serving"
        sock = listening_socket(host, port)
    except OSError as exc:
        proxy.close()
        fail(f"cannot listen on {host}:{port}: {exc}; choose another --port")
    apis = ", ".join(APIS[a].title for a in served_apis(proxy.upstream.wire.api))
    console.print(
        f"contextfold serve: http://{host}:{port}/v1 -> {redact_url(upstream)}, "
        f"strategy {strategy}; serving {apis}",
        soft_wrap=True,
        markup=False,
    )
    if generated:
        err_console.print(f"bearer token (none given): {token}", soft_wrap=True, highlight=False)
    # what the proxy logs (an upstream's error answered, a 5xx), one dated line each on stderr
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    settings = uvicorn.Config(create_app(proxy), log_level="warning", access_log=False)
    uvicorn.Server(settings).run(sockets=[sock])
