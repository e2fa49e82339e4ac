"""One wrapped run, start to end (:func:`run_wrapped`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from types import TracebackType
from typing import Protocol, Self

from contextfold.wrap.child import Interrupted, forwarded_signals
from contextfold.wrap.clis import AgentCli, Pointing
from contextfold.wrap.proxy import WrapError, parse_metrics, summary

__all__ = ["WrappedProxy", "run_wrapped"]


class WrappedProxy(Protocol):
    """A proxy a CLI is pointed at for the length of a ``with`` block."""

    @property
    def root(self) -> str:
        """Its address without ``/v1`` (``http://127.0.0.1:PORT``)."""

    @property
    def token(self) -> str | None:
        """The bearer token it wants (None: none)."""

    @property
    def sessions(self) -> str:
        """Where it keeps the sessions (for the summary)."""

    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...
    def metrics(self) -> str: ...
    def describe(self) -> str: ...
    def warnings_log(self) -> str | None: ...


def run_wrapped(
    agent: AgentCli, argv: list[str], proxy: WrappedProxy, *, say: Callable[[str], None]
) -> int:
    """Run ``argv`` (the CLI's executable and the user's arguments) pointed at ``proxy``,
    which is stopped (if it was started) before this returns, however the run ends; then
    ``say`` the summary. The CLI's exit status (128 + N when signal N ended it or ``wrap``
    before it started). Raises :class:`WrapError` when the proxy cannot serve it."""
    with forwarded_signals() as signals:
        try:
            with proxy:
                before = parse_metrics(proxy.metrics())
                launch = agent.point(Pointing(proxy.root, proxy.token), os.environ)
                say(f"contextfold wrap: {agent.title} through {proxy.describe()}")
                if launch.note is not None:
                    say(launch.note)
                try:
                    status = signals.run(
                        [argv[0], *launch.options, *argv[1:]], {**os.environ, **launch.env}
                    )
                except OSError as exc:
                    raise WrapError(f"cannot run {argv[0]}: {exc.strerror or exc}") from exc
                after = parse_metrics(proxy.metrics())
        except Interrupted as stop:
            return 128 + stop.signum
    say(summary(before, after, sessions=proxy.sessions, log=proxy.warnings_log()))
    return status
