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
GEMINI_AUTH = (
    "contextfold wrap: Gemini CLI has no auth method chosen, and run headless with a base URL "
    "it stops at 'Invalid auth method selected.'; choose the API key in "
    '{path}: {{"security": {{"auth": {{"selectedType": "gemini-api-key"}}}}}}'
)
"""Said before Gemini CLI runs when its settings choose no auth method (wrap writes none)."""


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
    note: str | None = None
    """A line to say before the CLI runs (what it needs that wrap does not set)."""


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
    are kept. Headless, it runs only in a folder it trusts (``GEMINI_CLI_TRUST_WORKSPACE``: the
    folder wrap was started in, unless the user set it) and with an auth method chosen in its
    settings, which wrap does not write: it says so when none is chosen."""
    pointed = _by_variables(to, env, "GOOGLE_GEMINI_BASE_URL", "GEMINI_CLI_CUSTOM_HEADERS", ", ")
    trust = {} if "GEMINI_CLI_TRUST_WORKSPACE" in env else {"GEMINI_CLI_TRUST_WORKSPACE": "true"}
    settings = _gemini_settings(env)
    note = None if _auth_chosen(settings) else GEMINI_AUTH.format(path=settings)
    return Launch(env=pointed.env | trust, note=note)


def _gemini_settings(env: Mapping[str, str]) -> Path:
    """Gemini CLI's user settings file (under ``GEMINI_CLI_HOME`` or the home folder)."""
    home = env.get("GEMINI_CLI_HOME") or env.get("HOME") or str(Path.home())
    return Path(home) / ".gemini" / "settings.json"


def _auth_chosen(settings: Path) -> bool:
    """Whether ``settings`` chooses an auth method (an unreadable file is taken to: the CLI
    says what it cannot read)."""
    try:
        data = json.loads(settings.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        return True
    security = data.get("security") if isinstance(data, dict) else None
    auth = security.get("auth") if isinstance(security, dict) else None
    return isinstance(auth, dict) and bool(auth.get("selectedType") or auth.get("useExternal"))


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
