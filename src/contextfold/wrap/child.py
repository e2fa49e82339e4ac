"""Running the wrapped CLI as if the user had typed it: the terminal inherited (stdin, stdout,
stderr, the process group), its exit status passed on, and the signals that would have ended
``wrap`` sent to the CLI instead, so ``wrap`` is the last to stop and can stop the proxy.

A signal the terminal sends (Ctrl-C's SIGINT, Ctrl-\\'s SIGQUIT, a hang-up) reaches every
process of the foreground group, the CLI included, so it is not sent again when ``wrap`` is in
that group (Claude Code counts a second Ctrl-C as "exit"); sent by ``kill`` to ``wrap`` alone,
or with no terminal, it is forwarded. SIGTERM is always forwarded.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import FrameType

__all__ = ["Interrupted", "Signals", "exit_status", "forwarded_signals"]

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
FROM_TERMINAL = (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)


class Interrupted(Exception):
    """A signal ended ``wrap`` before the CLI started (the proxy is then stopped)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class Signals:
    """Where the signals ``wrap`` receives go: before the CLI starts they raise
    :class:`Interrupted`, while it runs they are forwarded (see the module), after it ended
    they are ignored until ``wrap`` has stopped what it started."""

    def __init__(self) -> None:
        self.child: subprocess.Popen[bytes] | None = None
        self.starting = False
        self.pending: list[int] = []
        self.ended = False

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if self.ended:
            return
        if self.child is None:
            if self.starting:  # forked or about to be: the CLI gets it once it is known
                self.pending.append(signum)
                return
            raise Interrupted(signum)
        if signum in FROM_TERMINAL and _in_foreground():
            return  # the terminal sent it to the CLI as well
        self.child.send_signal(signum)

    def run(self, argv: list[str], env: Mapping[str, str]) -> int:
        """Run ``argv`` to its end; its exit status (128 + N when signal N ended it)."""
        self.starting = True
        try:
            self.child = subprocess.Popen(argv, env=dict(env))  # OSError: it did not start
        finally:
            self.starting = False
        for signum in self.pending:
            self.child.send_signal(signum)
        try:
            return exit_status(self.child.wait())
        finally:
            self.ended = True


@contextmanager
def forwarded_signals() -> Iterator[Signals]:
    """``with forwarded_signals() as signals:`` routes the signals while the block runs,
    then restores the handlers there were."""
    signals = Signals()
    before = {s: signal.signal(s, signals.handle) for s in FORWARDED}
    try:
        yield signals
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def exit_status(returncode: int) -> int:
    """A shell's ``$?`` for a process: its exit code, or 128 + N when signal N ended it."""
    return 128 - returncode if returncode < 0 else returncode


def _in_foreground() -> bool:
    """Whether ``wrap`` belongs to its terminal's foreground process group."""
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        try:
            fd = stream.fileno()
            if os.isatty(fd):
                return os.tcgetpgrp(fd) == os.getpgrp()
        except (AttributeError, OSError, ValueError):
            continue
    return False
