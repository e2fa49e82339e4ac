"""Building a :class:`~contextfold.serve.sessions.proxy.Proxy` from a :class:`ServeConfig`."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from pathlib import Path

from contextfold.core.counters import resolve_counter
from contextfold.core.errors import ConfigError, StoreError
from contextfold.core.experience import Experience
from contextfold.core.protocols import Learning, Marking, Store, Strategy
from contextfold.core.store import MemoryStore, PostgresStore, SQLiteStore, is_postgres_url
from contextfold.serve.apis import APIS
from contextfold.serve.config import ServeConfig, redact_url
from contextfold.serve.ledger.arms import CONTROL_STRATEGY, Arms
from contextfold.serve.sessions.learning import IdleEnds
from contextfold.serve.sessions.markers import Markers
from contextfold.serve.sessions.proxy import Proxy
from contextfold.serve.sessions.sessions import SessionManager
from contextfold.serve.upstream.pool import HttpUpstream, Upstream

__all__ = ["build_proxy", "make_strategy_factory", "open_private", "shared_experience"]

TEXT_REPEAT_PENALTY = 1.3
"""The embedded model's repeat penalty for plain replies behind ``--upstream local``: greedy,
a 135M model repeats one sentence until the cap (Gemini CLI then stops the reply as a loop)."""

_log = logging.getLogger(__name__)


def build_proxy(config: ServeConfig) -> Proxy:
    """The proxy for ``config`` (checked: strategy spec, token, store, upstream)."""
    config.check()
    experience = shared_experience(config)
    make_strategy = make_strategy_factory(config, experience)
    probe = make_strategy()  # a bad spec fails now, not at the first request
    arms = Arms(make_strategy, _control_factory(), config.control)
    markers = Markers(probe.split_markers if isinstance(probe, Marking) else None)
    on_end = _saver(config, experience)
    counter = resolve_counter(config.counter)
    if is_postgres_url(config.store):
        PostgresStore(str(config.store)).close()  # unreachable or foreign: fails now, clearly

    def open_sessions() -> SessionManager:
        store = _open_store(config)
        ends = IdleEnds(config.idle_end, on_end=on_end) if config.learn else None
        manager = SessionManager(
            store,
            make_strategy,
            counter,
            budget=config.budget,
            ends=ends,
            markers=markers,
            arms=arms,
        )
        try:
            manager.load()
            if manager.skipped and isinstance(store, SQLiteStore):
                store.verify()  # a damaged file, not a bad row or two: not served at all
        except BaseException:
            store.close()
            raise
        return manager

    return Proxy(config, make_upstream(config), open_sessions, markers)


def _control_factory() -> Callable[[], Strategy]:
    """How a control session's strategy is built (:data:`~.arms.CONTROL_STRATEGY`)."""
    from contextfold.strategies.registry import build_strategy

    return lambda: build_strategy(CONTROL_STRATEGY)


def _open_store(config: ServeConfig) -> Store:
    if config.store is None:
        return MemoryStore()
    if is_postgres_url(config.store):
        return PostgresStore(str(config.store))
    open_private(Path(config.store))
    return SQLiteStore(config.store, synchronous="FULL" if config.fsync else "NORMAL")


UPSTREAM_HELP = (
    "--upstream must be local, or an http(s) URL of a Chat Completions server such as "
    f"{APIS['chat'].example_url}, or "
    + ", or ".join(
        f"{api.name}:URL ({api.title}, e.g. {api.name}:{api.example_url})"
        for api in APIS.values()
        if api.name != "chat"
    )
)
"""What ``--upstream`` takes: ``local``, a bare URL (Chat Completions, the API every other
is translated to) or ``API:URL`` for each API in :data:`~contextfold.serve.apis.APIS`."""


def upstream_spec(spec: str) -> tuple[str, str]:
    """The API and base URL an ``--upstream`` names (``anthropic:URL``, ``responses:URL``,
    ``chat:URL`` or a bare URL: Chat Completions); a ValueError saying what is accepted.
    A URL that names no version (its last segment ``v1``, ``v1beta``) gets its API's
    :attr:`~contextfold.serve.apis.spec.ApiSpec.base_path` (Anthropic's ``/v1``, Gemini's
    ``/v1beta``: the SDKs' base URLs have none)."""
    api, _, rest = spec.partition(":")
    api, url = (api, rest) if api in APIS else ("chat", spec)
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"{UPSTREAM_HELP}; got {redact_url(spec)!r}")
    url, base = url.rstrip("/"), APIS[api].base_path
    versioned = re.fullmatch(r"v\d+[a-z0-9]*", url.rpartition("/")[2]) is not None
    return api, url if versioned or url.endswith(base) else url + base


def make_upstream(config: ServeConfig) -> Upstream:
    if config.upstream != "local":
        api, url = upstream_spec(config.upstream)
        return HttpUpstream(
            url,
            wire=APIS[api].wire(),
            timeout=config.timeout,
            key=config.upstream_key,
            max_connections=config.max_upstream_connections,
            pool_wait=config.pool_wait,
        )
    from contextfold.models.local import LocalModel
    from contextfold.serve.upstream.local import LocalUpstream

    return LocalUpstream(
        lambda: LocalModel(n_threads=config.threads, text_repeat_penalty=TEXT_REPEAT_PENALTY),
        wire=APIS["chat"].wire(),
    )


def make_strategy_factory(
    config: ServeConfig, experience: Experience | None = None
) -> Callable[[], Strategy]:
    """Builds one strategy per session, folder models built once and shared, every one sharing
    ``experience`` (by default :func:`shared_experience`'s)."""
    from contextfold.strategies.folding import FolderSource
    from contextfold.strategies.registry import build_strategy

    folders = FolderSource(default=config.folder, threads=config.threads)
    if experience is None:
        experience = shared_experience(config)
    if experience is None:
        return lambda: build_strategy(config.strategy, folders=folders)

    def make() -> Strategy:
        strategy = build_strategy(config.strategy, folders=folders)
        if isinstance(strategy, Learning):
            strategy.share(experience)
        return strategy

    return make


def shared_experience(config: ServeConfig) -> Experience | None:
    """What every session's strategy learns from: with an ``experience`` file, the frozen
    entry of the strategy's label (a file without one is an error: the label would silently
    learn nothing); with ``learn``, one experience that the sessions recorded as ended add to
    (from the file's entry, thawed, when there is one); None without either."""
    from contextfold.core.experience_file import load_experiences
    from contextfold.strategies.registry import spec_label

    if config.experience is None:
        return Experience() if config.learn else None
    label = spec_label(config.strategy)
    known = load_experiences(config.experience, frozen=not config.learn)
    if label not in known:
        raise ConfigError(
            f"experience file {config.experience} has no entry for strategy {label!r} "
            f"(it has: {', '.join(known) or 'none'})"
        )
    return known[label]


def _saver(config: ServeConfig, experience: Experience | None) -> Callable[[], None] | None:
    """Writes ``experience`` to ``save_experience`` under the strategy's label (checked now:
    a file there must be an experience file, its directory must exist). A write that fails
    later is logged and tried again at the next ended session: the request that swept goes on,
    and the experience in memory keeps everything."""
    from contextfold.core.experience_file import load_experiences, save_entry
    from contextfold.strategies.registry import spec_label

    path = config.save_experience
    if path is None or experience is None:
        return None
    if not path.parent.is_dir():
        raise ConfigError(f"--save-experience {path}: directory {path.parent} does not exist")
    if path.exists():
        load_experiences(path)  # not an experience file: refuse now rather than overwrite it
    label = spec_label(config.strategy)

    def save() -> None:
        try:
            save_entry(path, label, experience)
        except (OSError, ConfigError) as exc:
            _log.warning("cannot write the experience file %s: %s", path, exc)

    return save


def open_private(path: Path) -> None:
    """Create the store file readable and writable by its owner only (0600), or tighten an
    existing one and the -wal and -shm files beside it (SQLite gives the ones it creates the
    store's mode); a StoreError naming the path when that cannot be done."""
    if path.is_dir():
        raise StoreError(f"cannot open store {path}: it is a directory; give a file path")
    if not path.parent.is_dir():
        raise StoreError(f"cannot create store {path}: directory {path.parent} does not exist")
    try:
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
        for file in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            if file.exists():
                os.chmod(file, 0o600)
    except OSError as exc:
        raise StoreError(f"cannot open store {path}: {exc.strerror}") from exc
