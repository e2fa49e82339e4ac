"""What ``contextfold serve`` is configured with (:class:`ServeConfig`)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

__all__ = [
    "DEFAULT_IDLE_END",
    "DEFAULT_MAX_BODY",
    "DEFAULT_RESPONSES_MEMORY",
    "ServeConfig",
    "is_loopback",
    "redact_url",
]

DEFAULT_MAX_BODY = 32 * 1024 * 1024
"""Largest request body accepted, in bytes (larger ones get a 413)."""

DEFAULT_RESPONSES_MEMORY = 256 * 1024 * 1024
"""Bytes of Responses answers kept for ``previous_response_id``, at most (their JSON)."""

DEFAULT_IDLE_END = 300.0
"""Seconds without a request after which ``serve --learn`` counts a session as ended."""


@dataclass(frozen=True, slots=True)
class ServeConfig:
    """The proxy's settings. ``upstream`` is a Chat Completions base URL (``.../v1``),
    ``anthropic:URL`` (Anthropic Messages), ``responses:URL`` (OpenAI Responses),
    ``gemini:URL`` (Gemini) or ``local`` (the embedded model, served in-process)."""

    upstream: str
    strategy: str = "refold"
    store: Path | str | None = None
    """SQLite file keeping every session, or a ``postgresql://`` URL of a database that
    replicas share; None keeps them in memory only."""
    token: str | None = None
    """Bearer token clients must present; None only with ``no_auth`` on a loopback host."""
    no_auth: bool = False
    host: str = "127.0.0.1"
    budget: int | None = None
    """Context budget in tokens handed to the strategy."""
    counter: str = "approx"
    """Token counter of the stored history (``approx``, ``smollm2``, a tokenizer path)."""
    folder: str | None = None
    """Folder model of strategies that fold with one and name none."""
    max_body: int = DEFAULT_MAX_BODY
    responses_memory: int = DEFAULT_RESPONSES_MEMORY
    """Bytes of Responses answers kept for ``previous_response_id`` (the oldest evicted)."""
    max_rounds: int = 4
    """Upstream calls per request at most (strategy tools answered in between)."""
    upstream_key: str | None = None
    """Key sent upstream when the client sends none of its own (never stored or logged)."""
    timeout: float = 600.0
    """Seconds to wait for the upstream."""
    max_upstream_connections: int = 64
    """Connections to the upstream open at once, shared by every session."""
    pool_wait: float = 5.0
    """Seconds a call waits for a free upstream connection before its request gets a 503."""
    threads: int = 2
    """CPU threads of the embedded model (``--upstream local``)."""
    fsync: bool = False
    """SQLite ``synchronous=FULL`` (every commit fsynced: survives power loss) instead of
    ``NORMAL`` (survives a process kill; the latest commits may be lost on power loss)."""
    experience: Path | None = None
    """An experience file (``replay --learn --save-experience``): every session's strategy
    starts from the entry of its label, frozen unless ``learn``."""
    learn: bool = False
    """Learn across sessions: a session no request continued for ``idle_end`` seconds has
    ended and teaches the sessions after it (:mod:`contextfold.serve.sessions.learning`)."""
    idle_end: float = DEFAULT_IDLE_END
    save_experience: Path | None = None
    """With ``learn``: the experience file written whenever a session is recorded as ended
    (the strategy's label entry; other labels in the file are kept)."""
    control: float = 0.0
    """The share of sessions left unfolded as a control group (served as ``full``; chosen by
    a hash of the session: :mod:`~contextfold.serve.ledger.arms`)."""

    def check(self) -> None:
        """Raise ValueError when the settings are unsafe or inconsistent."""
        if self.no_auth and self.token is not None:
            raise ValueError("--no-auth and --token contradict each other; give one")
        if self.no_auth and not is_loopback(self.host):
            raise ValueError(
                f"--no-auth is allowed only on a loopback host (127.0.0.1, ::1, localhost), "
                f"not {self.host!r}: give --token TOKEN to listen on other addresses"
            )
        if not self.no_auth and not self.token:
            raise ValueError("a bearer token is required: give --token TOKEN (or --no-auth)")
        if self.save_experience is not None and not self.learn:
            raise ValueError("--save-experience needs --learn (without it nothing is learned)")
        if self.idle_end <= 0:
            raise ValueError(f"--idle-end must be a positive number of seconds: {self.idle_end}")
        if self.max_upstream_connections < 1:
            raise ValueError(
                f"--max-upstream-connections must be at least 1: {self.max_upstream_connections}"
            )
        if self.responses_memory < 1:
            raise ValueError(f"--responses-memory must be at least 1 byte: {self.responses_memory}")
        if not 0.0 <= self.control <= 1.0:
            raise ValueError(
                f"--control must be a share of sessions from 0 to 1 (0.1: a tenth), "
                f"got {self.control}"
            )
        if self.max_rounds < 1:
            raise ValueError(f"max_rounds must be at least 1, got {self.max_rounds}")


def is_loopback(host: str) -> bool:
    """Whether ``host`` names only the local machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def redact_url(url: str) -> str:
    """``url`` with the password of its user part shown as ``***`` (for every message, the
    start-up line and ``/health``): ``http://user:***@host/v1``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url.split("://", 1)[0] + "://..."
    if parts.password is None:
        return url
    user, _, host = parts.netloc.rpartition("@")
    name = user.split(":", 1)[0]
    return parts._replace(netloc=f"{name}:***@{host}").geturl()
