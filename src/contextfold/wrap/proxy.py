"""The proxy a wrapped CLI talks to: one ``wrap`` starts (:class:`OwnProxy`, in this process on
a free loopback port, its warnings logged to a file so they never draw over the CLI's screen)
or one already running (:class:`RunningProxy`); both read the proxy's own counters
(``/metrics``) for the closing summary (:func:`summary`)."""

from __future__ import annotations

import logging
import secrets
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Self

from contextfold.core.errors import ContextFoldError

if TYPE_CHECKING:
    from contextfold.serve import Proxy, ServeConfig
    from contextfold.serve.runner import ServerThread

__all__ = ["Counts", "OwnProxy", "RunningProxy", "WrapError", "parse_metrics", "summary"]


STOP_WAIT = 3
"""Seconds a request still waiting on the upstream when the CLI has ended is given before the
proxy stops anyway (nobody waits for its answer; an unanswered turn is not recorded)."""


class WrapError(ContextFoldError):
    """The proxy could not be started or reached (one line for the user)."""


class OwnProxy:
    """``with OwnProxy(config, log=path) as p:`` serves ``config`` on ``p.root`` with a fresh
    token (``p.token``) until the block ends: the server stopped, the port closed and the
    store closed, however the block ends."""

    def __init__(self, config: ServeConfig, *, api: str, log: Path) -> None:
        from dataclasses import replace

        self.api = api
        self.token = secrets.token_urlsafe(24)
        self.config = replace(config, host="127.0.0.1", token=self.token, no_auth=False)
        self.log = _Log(log)
        self.root = ""
        self._proxy: Proxy | None = None
        self._server: ServerThread | None = None

    def __enter__(self) -> Self:
        self.log.attach()
        try:
            self._start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _start(self) -> None:
        from contextfold.serve import build_proxy, create_app
        from contextfold.serve.runner import ServerThread

        try:
            self._proxy = build_proxy(self.config)
            self._proxy.open()  # the store, checked and loaded before the server starts
        except (ContextFoldError, ValueError) as exc:
            raise WrapError(str(exc)) from exc
        self._check_api(self._proxy.upstream.wire.api)
        app = create_app(self._proxy)
        server = ServerThread(
            app,
            host="127.0.0.1",
            lifespan="on",
            log_config=None,
            timeout_graceful_shutdown=STOP_WAIT,
        )
        try:
            server.__enter__()
        except RuntimeError as exc:  # it never served: the proxy is closed by __exit__
            server.__exit__(None, None, None)
            raise WrapError(str(exc)) from exc
        self._server = server
        self.root = f"http://127.0.0.1:{self._server.port}"

    def _check_api(self, upstream: str) -> None:
        """Raise unless the upstream lets the proxy serve the CLI's API."""
        from contextfold.serve.apis import APIS, served_apis
        from contextfold.serve.config import redact_url

        served = served_apis(upstream)
        if self.api not in served:
            every = "".join(f"{a}:URL, " for a, spec in APIS.items() if spec.serves_all)
            raise WrapError(
                f"--upstream {redact_url(self.config.upstream)} serves "
                f"{' and '.join(APIS[a].title for a in served)}, not the CLI's "
                f"{APIS[self.api].title}: give {self.api}:URL, {every}a Chat Completions "
                "base URL or local"
            )

    @property
    def sessions(self) -> str:
        """Where the sessions are kept (the store, its password hidden)."""
        from contextfold.serve.config import redact_url

        return redact_url(str(self.config.store)) if self.config.store else "memory only"

    def metrics(self) -> str:
        assert self._proxy is not None
        return self._proxy.render_metrics()

    def describe(self) -> str:
        from contextfold.serve.config import redact_url

        upstream = redact_url(self.config.upstream)
        return f"{self.root} -> {upstream}, strategy {self.config.strategy}"

    def warnings_log(self) -> str | None:
        """The log file, when the proxy wrote warnings to it."""
        return str(self.log.path) if self.log.warnings else None

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if self._server is not None:
                self._server.__exit__(None, None, None)  # the lifespan closes the proxy
            elif self._proxy is not None:
                self._proxy.close()
        finally:
            self._server = self._proxy = None
            self.log.detach()


class RunningProxy:
    """A ``contextfold serve`` already running at ``url`` (its root or its ``/v1``), asked with
    ``token`` (None: it runs with ``--no-auth``); checked on ``/health`` when entered."""

    def __init__(self, url: str, token: str | None) -> None:
        self.root = url.rstrip("/").removesuffix("/v1")
        self.token = token
        self.sessions = f"the store of the proxy at {self.root}"

    def __enter__(self) -> Self:
        import httpx

        try:
            answer = httpx.get(f"{self.root}/health", timeout=10)
            status = answer.json().get("status")
        except (httpx.HTTPError, ValueError, AttributeError) as exc:
            raise WrapError(f"no contextfold serve answers at {self.root}: {exc}") from exc
        if status != "ok":
            raise WrapError(f"{self.root}/health answered {answer.status_code}: not ready")
        return self

    def metrics(self) -> str:
        """``/metrics``; empty when the proxy refuses them (then the summary says so)."""
        import httpx

        auth = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        try:
            answer = httpx.get(f"{self.root}/metrics", headers=auth, timeout=10)
        except httpx.HTTPError:
            return ""
        return answer.text if answer.status_code == 200 else ""

    def describe(self) -> str:
        return f"{self.root} (running)"

    def warnings_log(self) -> str | None:
        return None  # the running proxy logs where it was started

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None


Counts = dict[str, float]
"""Each counter of ``/metrics`` summed over its labels, by name without ``contextfold_``
(counts of tokens and calls, and dollars)."""


def parse_metrics(text: str) -> Counts:
    """The counters of a Prometheus text page (:data:`Counts`)."""
    counts: Counts = {}
    for line in text.splitlines():
        if not line.startswith("contextfold_"):
            continue
        name, _, value = line.rpartition(" ")
        key = name.split("{", 1)[0].removeprefix("contextfold_")
        counts[key] = counts.get(key, 0.0) + float(value)
    return counts


def _dollars(got: Counts) -> str:
    """What the run was billed, beside the direct estimate (empty when nothing was billed)."""
    billed, direct = got.get("billed_usd_total", 0), got.get("direct_estimate_usd_total", 0)
    if not billed:
        return ""
    return f"; billed ${billed:,.2f}, about ${direct:,.2f} direct"


class _Log:
    """The proxy's log records appended to ``path`` while attached: contextfold's own from
    INFO up (what each request to the embedded model read and took), everyone's WARNING and
    up (Python warnings too); the warnings counted so the summary can point at them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records = 0
        """Records written (of the runs that ended)."""
        self.warnings = 0
        """Of them, warnings and errors."""
        self._handler: _CountingHandler | None = None
        self._level = logging.NOTSET

    def attach(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handler = _CountingHandler(self.path)
        self._handler.setLevel(logging.INFO)
        self._handler.addFilter(_ours_or_warning)
        self._handler.setFormatter(
            logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s")
        )
        logging.getLogger().addHandler(self._handler)
        ours = logging.getLogger("contextfold")
        self._level = ours.level
        ours.setLevel(logging.INFO)
        logging.captureWarnings(True)

    def detach(self) -> None:
        if self._handler is not None:
            logging.getLogger().removeHandler(self._handler)
            logging.getLogger("contextfold").setLevel(self._level)
            self._handler.close()
            self.records += self._handler.count
            self.warnings += self._handler.warnings
            self._handler = None
        logging.captureWarnings(False)


def _ours_or_warning(record: logging.LogRecord) -> bool:
    return record.levelno >= logging.WARNING or record.name.startswith("contextfold.")


class _CountingHandler(logging.FileHandler):
    def __init__(self, path: Path) -> None:
        super().__init__(path, delay=True)
        self.count = 0
        self.warnings = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
        self.warnings += record.levelno >= logging.WARNING
        super().emit(record)


def summary(before: Counts, after: Counts, *, sessions: str, log: str | None) -> str:
    """The closing line: where the sessions are and what the upstream was spared, from the
    proxy's counters before and after the run."""
    if not after:
        return f"contextfold wrap: sessions in {sessions}; tokens spared unknown (no /metrics)"
    got = {k: after[k] - before.get(k, 0.0) for k in after}
    requests, received = got.get("requests_total", 0), got.get("prompt_tokens_received_total", 0)
    spared = got.get("tokens_saved_total", 0)
    if requests == 0:
        told = "no request was answered"
    else:
        share = f" ({spared / received:.0%})" if received else ""
        told = (
            f"{requests:,.0f} request{'s' * (requests != 1)}: the upstream was spared "
            f"{spared:,.0f} of "
            f"{received:,.0f} prompt tokens{share}{_dollars(got)}"
        )
    logged = f"; the proxy logged warnings to {log}" if log else ""
    return f"contextfold wrap: sessions in {sessions}; {told}{logged}"
