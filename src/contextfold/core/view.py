"""Views: what the model is shown at one call, with provenance and elisions.

A :class:`View` holds the chat messages to send, each message's token count, its provenance
(the steps it renders and whether verbatim), and an :class:`Elision` for everything left out.
:func:`check_view` enforces the invariants every view must keep;
:func:`~contextfold.core.pipeline.render_checked` runs a strategy and checks what it returns
(and, given a budget, that it fits), so no invalid view ever reaches a model.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from contextfold.core.errors import ViewError
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    common_prefix,
)
from contextfold.core.own_tools import own_tool_names

if TYPE_CHECKING:
    from contextfold.core.history import History, Step
    from contextfold.core.protocols import Strategy

__all__ = [
    "SYSTEM_PROVENANCE",
    "Elision",
    "Provenance",
    "RestorePath",
    "View",
    "ViewBuilder",
    "check_view",
    "render_and_check",
]

_Fail = Callable[[str], ViewError]


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where one view message comes from."""

    steps: tuple[int, ...]
    """The history steps it renders; empty for the system message and synthetic notes."""
    kind: Literal["verbatim", "transformed", "synthetic"] = "verbatim"


SYSTEM_PROVENANCE = Provenance((), "verbatim")


@dataclass(frozen=True, slots=True)
class RestorePath:
    """How the agent gets an elided part back: a call of one of the strategy's tools.

    ``str(path)`` is the call as the agent would write it, e.g. ``restore(step=12)``.
    """

    tool: str
    """The tool's name; the view check requires the strategy to offer it."""
    arguments: tuple[tuple[str, int | str], ...] = ()
    """The call's arguments as (name, value) pairs, in order."""

    @classmethod
    def step(cls, step: int, *, tool: str = "restore") -> RestorePath:
        """``restore(step=N)``: any step's original content, from the history."""
        return cls(tool, (("step", step),))

    def as_dict(self) -> dict[str, int | str]:
        return dict(self.arguments)

    def __str__(self) -> str:
        args = ", ".join(
            f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in self.arguments
        )
        return f"{self.tool}({args})"


@dataclass(frozen=True, slots=True)
class Elision:
    """Something the view leaves out: what, why, how many tokens, and how to get it back."""

    steps: tuple[int, ...]
    """The steps whose content is (partly) left out."""
    reason: str
    """Short machine-readable cause, e.g. ``"dedup"``, ``"stale"``, ``"window"``, ``"clip"``."""
    tokens: int
    """Tokens left out of this view (the original count minus what stands in for it)."""
    restore: RestorePath | None
    """How to get it back, e.g. ``restore(step=12)``; None means it cannot be restored."""

    @property
    def recoverable(self) -> bool:
        return self.restore is not None


@dataclass(frozen=True, slots=True)
class View:
    """The messages to send at one model call, plus provenance and elisions."""

    messages: tuple[Message, ...]
    tokens: tuple[int, ...]
    """Token count of each message (same counter and overhead as the history)."""
    provenance: tuple[Provenance, ...]
    elisions: tuple[Elision, ...] = ()
    strategy: str = field(default="", kw_only=True)
    settled: int | None = field(default=None, kw_only=True)
    """How many leading messages the strategy keeps as they are until it next rewrites its
    prefix (refold's boundary); None when it does not say. The proxy marks the end of this
    part as a cache breakpoint for APIs that take them (Anthropic), so it is read from the
    provider's cache at every call until the next rewrite."""

    @property
    def total_tokens(self) -> int:
        return sum(self.tokens)

    @property
    def removed_tokens(self) -> int:
        return sum(e.tokens for e in self.elisions)

    @property
    def unrecoverable_tokens(self) -> int:
        return sum(e.tokens for e in self.elisions if e.restore is None)


def render_and_check(strategy: Strategy, history: History, budget: int | None) -> View:
    """Render ``history`` with ``strategy`` and check the view, the budget not enforced;
    raises :class:`ViewError`.

    The check is incremental: the part of the view that repeats the strategy's previous checked
    view of the same history (compared in C, by identity first) is not walked again, so a
    strategy that only appends costs O(new messages) in Python per call.
    """
    view = strategy.render(history, budget)
    try:
        previous = _CHECKED.get(strategy)
    except TypeError:  # not weak-referenceable: check in full
        previous = None
    checked = _check(view, history, strategy.name, previous, own_tool_names(strategy))
    with contextlib.suppress(TypeError):
        _CHECKED[strategy] = checked
    return view


def check_view(view: View, history: History, *, strategy: str, tools: Collection[str] = ()) -> None:
    """Raise :class:`ViewError` unless the view keeps every invariant.

    - message, token and provenance tuples have the same length;
    - the system message comes first (when the history has one; a strategy may append
      instructions to it) and nowhere else;
    - every tool call is answered by its result right after the calling assistant message, in
      one contiguous run, and no tool result is an orphan;
    - the latest user message of the history is present verbatim;
    - no empty system or user message (without text, or provider parts such as an image). An
      empty *tool result* is allowed: it
      is a real answer; so is an empty assistant message (neither text nor tool calls: a
      model may answer with nothing), which is sent as an empty string;
    - every elision's restore path names a tool in ``tools`` (the strategy's own tools): an
      elision counts as recoverable only if the agent is offered a tool that brings it back;
    - every step of the history is shown (a message's provenance names it) or covered by an
      elision, and provenance names only steps of the history: a strategy cannot leave a step
      out without saying so (and whether it can be restored).
    """
    _check(view, history, strategy, None, frozenset(tools))


@dataclass(frozen=True, slots=True)
class _Checked:
    """What a successful check leaves for the next one."""

    history: weakref.ref[History]
    messages: tuple[Message, ...]
    user: tuple[int, int] | None
    """(step index, view position) of the latest user message found."""
    shown: set[int] = field(default_factory=set)
    """The steps the view's messages render (their provenance)."""


_CHECKED: weakref.WeakKeyDictionary[object, _Checked] = weakref.WeakKeyDictionary()


def _check(
    view: View,
    history: History,
    strategy: str,
    previous: _Checked | None,
    tools: Collection[str],
) -> _Checked:
    step = len(history) - 1 if len(history) else None

    def fail(problem: str) -> ViewError:
        return ViewError(strategy, step, problem)

    msgs = view.messages
    if not (len(msgs) == len(view.tokens) == len(view.provenance)):
        raise fail("messages, tokens and provenance differ in length")
    if history.system is not None and not _system_first(msgs, history.system):
        raise fail("the system message is not first")
    start = _unchanged_prefix(msgs, history, previous)
    pending: dict[str, int] = {}
    for pos in range(start, len(msgs)):
        _check_message(msgs[pos], pos, pending, fail)
    if pending:
        raise fail(f"tool calls {sorted(pending)} are not answered")
    user = _check_latest_user(view, history, fail, previous if start else None, start)
    _check_restore_paths(view.elisions, tools, fail)
    shown = _check_coverage(view, len(history), previous if start else None, start, fail)
    return _Checked(weakref.ref(history), msgs, user, shown)


def _check_coverage(
    view: View, steps: int, prev: _Checked | None, start: int, fail: _Fail
) -> set[int]:
    """The steps the view shows; fails unless they and the elisions' steps cover every step
    of the history. When the view only appends to the previous checked view (its first
    ``start`` messages are that view's, already checked) and shows every step, only the new
    messages' provenance is walked, and the previous view's set grows in place (a check owns
    the set of the one before)."""
    provs = view.provenance
    if prev is not None and start == len(prev.messages):
        fresh = {s for prov in provs[start:] for s in prov.steps} - prev.shown
        if len(prev.shown) + len(fresh) == steps and all(0 <= s < steps for s in fresh):
            prev.shown.update(fresh)
            return prev.shown
    shown = {s for prov in provs for s in prov.steps}
    stray = sorted(s for s in shown if not 0 <= s < steps)
    if stray:
        raise fail(f"provenance names steps {stray[:5]}, which the history does not have")
    if len(shown) == steps:
        return shown
    elided = {s for e in view.elisions for s in e.steps}
    missing = [s for s in range(steps) if s not in shown and s not in elided]
    if missing:
        raise fail(
            f"steps {_ranges(missing)} are neither shown nor covered by an elision; a step "
            "left out of a view needs an Elision (restore=None if it cannot come back)"
        )
    return shown


def _ranges(steps: Sequence[int]) -> str:
    """Sorted step indices as ``3, 5-9`` (at most five runs, then ``...``)."""
    runs: list[list[int]] = []
    for s in steps:
        if runs and s == runs[-1][1] + 1:
            runs[-1][1] = s
        else:
            runs.append([s, s])
    text = [f"{a}" if a == b else f"{a}-{b}" for a, b in runs[:5]]
    return ", ".join(text) + (", ..." if len(runs) > 5 else "")


def _check_restore_paths(elisions: Sequence[Elision], tools: Collection[str], fail: _Fail) -> None:
    named = {e.restore.tool for e in elisions if e.restore is not None}
    missing = named.difference(tools)
    if missing:
        offered = ", ".join(sorted(tools)) or "none"
        raise fail(
            f"elisions name the restore tool(s) {sorted(missing)}, which the strategy does not "
            f"offer (it offers: {offered}); offer the tool or record the elision as "
            "unrecoverable (restore=None)"
        )


def _unchanged_prefix(msgs: tuple[Message, ...], history: History, prev: _Checked | None) -> int:
    """How many leading messages need no new check: the longest prefix shared with the
    previous checked view (found by bisection over C-level tuple comparisons), cut back to a
    position where that valid view had no tool call pending."""
    if prev is None or prev.history() is not history:
        return 0
    old = prev.messages
    common = common_prefix(msgs, old)
    while common < len(old) and common > 0 and isinstance(old[common], ToolMessage):
        common -= 1
    return common


def _system_first(msgs: Sequence[Message], system: SystemMessage) -> bool:
    """The view opens with the history's system message (a strategy may append to it)."""
    return (
        bool(msgs)
        and isinstance(msgs[0], SystemMessage)
        and (msgs[0] is system or msgs[0].content.startswith(system.content))
    )


def _check_message(msg: Message, pos: int, pending: dict[str, int], fail: _Fail) -> None:
    if isinstance(msg, ToolMessage):
        if pending.pop(msg.tool_call_id, None) is None:
            raise fail(
                f"message {pos} is a tool result for {msg.tool_call_id!r}, which no "
                "immediately preceding assistant message called"
            )
        return
    if pending:
        raise fail(f"tool calls {sorted(pending)} are not answered before message {pos}")
    if isinstance(msg, SystemMessage):
        if pos != 0:
            raise fail(f"message {pos} is a system message; only the first may be")
        if not msg.content.strip():
            raise fail("the system message is empty")
    elif isinstance(msg, AssistantMessage):
        for call in msg.tool_calls:
            pending[call.id] = pos
    elif not msg.content.strip() and not msg.parts:
        raise fail(f"message {pos} is an empty user message")


def _check_latest_user(
    view: View, history: History, fail: _Fail, prev: _Checked | None, start: int
) -> tuple[int, int] | None:
    index = history.latest_user_index
    if index is None:
        return None
    known = prev.user if prev is not None else None
    if known is not None and known[0] == index and known[1] < start:
        return known  # its position lies in the unchanged, already checked prefix
    wanted = history[index].message
    for pos in range(len(view.messages) - 1, -1, -1):
        if index in view.provenance[pos].steps and view.messages[pos] == wanted:
            return index, pos
    raise fail(f"the latest user message (step {index}) is missing")


class ViewBuilder:
    """Accumulates a view's parallel tuples; strategies use it instead of juggling lists."""

    __slots__ = ("elisions", "messages", "provenance", "tokens")

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.tokens: list[int] = []
        self.provenance: list[Provenance] = []
        self.elisions: list[Elision] = []

    def add(self, message: Message, tokens: int, provenance: Provenance) -> None:
        self.messages.append(message)
        self.tokens.append(tokens)
        self.provenance.append(provenance)

    def add_system(self, history: History) -> None:
        if history.system is not None:
            self.add(history.system, history.system_tokens, SYSTEM_PROVENANCE)

    def add_step(self, step: Step) -> None:
        """All of a step's messages, verbatim."""
        prov = Provenance((step.index,))
        for message, tokens in zip(step.messages, step.tokens, strict=True):
            self.add(message, tokens, prov)

    def elide(self, elision: Elision) -> None:
        self.elisions.append(elision)

    def build(self, strategy: str, *, settled: int | None = None) -> View:
        return View(
            tuple(self.messages),
            tuple(self.tokens),
            tuple(self.provenance),
            tuple(self.elisions),
            strategy=strategy,
            settled=settled,
        )
