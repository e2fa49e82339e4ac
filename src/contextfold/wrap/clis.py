"""The agent CLIs ``contextfold wrap`` runs, one :class:`AgentCli` each in :data:`CLIS`: what
it is called, how to install it, which API it speaks, where its calls go by default, and how it
is pointed at a proxy (options put before the user's arguments, variables added to its
environment). A CLI is one more entry once ``serve`` speaks its API."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CLIS", "AgentCli", "Launch", "Pointing"]

TOKEN_HEADER = "X-Contextfold-Token"
GEMINI_DEFAULTS = Path(__file__).with_name("gemini_defaults.json")
"""Gemini CLI's system defaults under wrap: API-key auth (the one a base URL works with)."""


@dataclass(frozen=True, slots=True)
class Pointing:
    """Where a CLI's calls go: the proxy's root URL (``http://127.0.0.1:PORT``, no ``/v1``)
    and the bearer token it wants (None: it wants none)."""

    root: str
    token: str | None


@dataclass(frozen=True, slots=True)
class Launch:
    """What pointing a CLI takes: options before the user's arguments, and variables added to
    (or replacing) the user's environment. Nothing is written to the user's configuration."""

    options: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)


Pointer = Callable[[Pointing, Mapping[str, str]], Launch]
"""Pointing and the user's environment to a :class:`Launch`."""


@dataclass(frozen=True, slots=True)
class AgentCli:
    """One CLI ``wrap`` knows."""

    name: str
    """What the user types after ``wrap`` (also the executable looked up on PATH)."""
    title: str
    install: str
    """The one command that installs it (said when it is not on PATH)."""
    api: str
    """The API of ``serve`` it speaks (``anthropic``, ``responses``)."""
    default_upstream: str
    """``--upstream`` when none is given: the provider the CLI calls by itself."""
    point: Pointer


def _claude(to: Pointing, env: Mapping[str, str]) -> Launch:
    """Claude Code reads its base URL and extra headers from the environment; the headers
    the user already sends (``ANTHROPIC_CUSTOM_HEADERS``, one per line) are kept."""
    return _by_variables(to, env, "ANTHROPIC_BASE_URL", "ANTHROPIC_CUSTOM_HEADERS", "\n")


def _by_variables(
    to: Pointing, env: Mapping[str, str], base_url: str, headers: str, sep: str
) -> Launch:
    """A CLI that reads its base URL from ``base_url`` and extra headers from ``headers``
    (entries joined by ``sep``): the proxy token is added to the headers the user sends."""
    added = {base_url: to.root}
    if to.token is not None:
        mine = env.get(headers, "").strip().rstrip(sep.strip() or "\n")
        added[headers] = sep.join(h for h in (mine, f"{TOKEN_HEADER}: {to.token}") if h)
    return Launch(env=added)


def _codex(to: Pointing, env: Mapping[str, str]) -> Launch:
    """Codex gets a model provider through ``-c`` overrides (its config file is untouched):
    Responses over HTTP at the proxy, the key from ``OPENAI_API_KEY`` when it is set or else
    the one Codex is logged in with, and the proxy token read from the environment (so it is
    not on the command line)."""
    provider = {
        "name": "contextfold",
        "base_url": f"{to.root}/v1",
        "wire_api": "responses",
        "supports_websockets": False,  # the proxy speaks HTTP, not Responses' WebSocket
    }
    if env.get("OPENAI_API_KEY"):
        provider["env_key"] = "OPENAI_API_KEY"
    else:
        provider["requires_openai_auth"] = True
    added: dict[str, str] = {}
    if to.token is not None:
        provider["env_http_headers"] = {TOKEN_HEADER: "CONTEXTFOLD_TOKEN"}
        added["CONTEXTFOLD_TOKEN"] = to.token
    table = f"model_providers.contextfold={_toml(provider)}"
    return Launch(options=["-c", 'model_provider="contextfold"', "-c", table], env=added)


def _gemini(to: Pointing, env: Mapping[str, str]) -> Launch:
    """Gemini CLI reads its base URL and extra headers from the environment; the headers the
    user already sends (``GEMINI_CLI_CUSTOM_HEADERS``, ``Name: value`` pairs split by commas)
    are kept. Headless, it runs only with an auth method chosen in its settings and in a
    folder it trusts: unless the user set them, its system defaults (the lowest settings,
    which the user's own override) choose the API key (``GEMINI_API_KEY``, sent to the base
    URL), and ``GEMINI_CLI_TRUST_WORKSPACE`` trusts the folder wrap was started in."""
    pointed = _by_variables(to, env, "GOOGLE_GEMINI_BASE_URL", "GEMINI_CLI_CUSTOM_HEADERS", ", ")
    needs = {
        "GEMINI_CLI_SYSTEM_DEFAULTS_PATH": str(GEMINI_DEFAULTS),
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }
    return Launch(env=pointed.env | {k: v for k, v in needs.items() if k not in env})


def _toml(value: object) -> str:
    """An inline TOML value (strings, booleans and tables of them)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a TOML basic string
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no TOML for {type(value).__name__}")


CLIS: dict[str, AgentCli] = {
    cli.name: cli
    for cli in (
        AgentCli(
            name="claude",
            title="Claude Code",
            install="npm install -g @anthropic-ai/claude-code",
            api="anthropic",
            default_upstream="anthropic:https://api.anthropic.com",
            point=_claude,
        ),
        AgentCli(
            name="codex",
            title="Codex CLI",
            install="npm install -g @openai/codex",
            api="responses",
            default_upstream="responses:https://api.openai.com/v1",
            point=_codex,
        ),
        AgentCli(
            name="gemini",
            title="Gemini CLI",
            install="npm install -g @google/gemini-cli",
            api="gemini",
            default_upstream="gemini:https://generativelanguage.googleapis.com",
            point=_gemini,
        ),
    )
}
"""Every CLI ``wrap`` runs, by the name typed after it."""
