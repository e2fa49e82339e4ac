"""``contextfold wrap``: an agent CLI (Claude Code, Codex CLI) run through ``contextfold
serve`` in one command: the proxy started on a free loopback port or one running used
(:mod:`~contextfold.wrap.proxy`), the CLI pointed at it by the variables or ``-c`` overrides
it reads (:data:`~contextfold.wrap.clis.CLIS`; its configuration never written), run on the
user's terminal with signals forwarded (:mod:`~contextfold.wrap.child`), the proxy stopped
when it ends, and a summary from the proxy's own counters (:func:`run_wrapped`)."""

from __future__ import annotations

from contextfold.wrap.clis import CLIS, AgentCli, Launch, Pointing
from contextfold.wrap.proxy import OwnProxy, RunningProxy, WrapError
from contextfold.wrap.run import run_wrapped

__all__ = [
    "CLIS",
    "AgentCli",
    "Launch",
    "OwnProxy",
    "Pointing",
    "RunningProxy",
    "WrapError",
    "run_wrapped",
]
