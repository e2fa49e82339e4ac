"""The append-only history of one session: steps that never change, and the fold log.

Folding happens only in views, so everything an agent saw stays recoverable; with a store, each
step is written through before it becomes visible.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from contextfold.core.errors import HistoryError, MessageFormatError, StoreConflictError
from contextfold.core.folds import FoldRecord
from contextfold.core.grouping import as_message
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
    message_text,
)
from contextfold.core.tokens import ApproxCounter, TokenCounter, count_messages

if TYPE_CHECKING:
    from contextfold.core.protocols import SessionRecord, Store

__all__ = ["History", "Step", "check_step_shape", "content_hash", "make_step"]


def content_hash(text: str) -> str:
    """A short stable hash of a message's text (used for dedup)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


@dataclass(frozen=True, slots=True)
class Step:
    """One immutable unit of history. ``messages[0]`` is the user or assistant message; any
    further messages are the tool results answering the assistant's calls, in order.

    Each message's token count and content hash are computed once, when the step is made, and
    travel with it (strategies never recount).
    """

    index: int
    messages: tuple[Message, ...]
    tokens: tuple[int, ...]
    """Token count of each message (overhead included), computed once."""
    hashes: tuple[str, ...]
    """Content hash of each message's text."""

    @property
    def kind(self) -> Literal["user", "assistant"]:
        return "user" if isinstance(self.messages[0], UserMessage) else "assistant"

    @property
    def message(self) -> UserMessage | AssistantMessage:
        head = self.messages[0]
        assert isinstance(head, UserMessage | AssistantMessage)
        return head

    @property
    def results(self) -> tuple[ToolMessage, ...]:
        return self.messages[1:]  # type: ignore[return-value]  # checked by make_step

    @property
    def total_tokens(self) -> int:
        return sum(self.tokens)


def make_step(index: int, messages: Sequence[Message], counter: TokenCounter) -> Step:
    """Check a step's shape, count its tokens and hash its messages."""
    _check_shape(index, messages)
    texts = [message_text(m) for m in messages]
    return Step(
        index=index,
        messages=tuple(messages),
        tokens=tuple(count_messages(counter, messages)),
        hashes=tuple(content_hash(t) for t in texts),
    )


def check_step_shape(index: int, messages: Sequence[Message]) -> None:
    """Raise :class:`HistoryError` unless ``messages`` make one valid step (nothing counted)."""
    _check_shape(index, messages)


def _check_shape(index: int, messages: Sequence[Message]) -> None:
    if not messages:
        raise HistoryError(f"step {index} has no messages")
    head, rest = messages[0], messages[1:]
    if isinstance(head, UserMessage):
        if rest:
            raise HistoryError(f"step {index}: a user step holds exactly one message")
        return
    if not isinstance(head, AssistantMessage):
        raise HistoryError(
            f"step {index} starts with a {head.role} message; a step starts with a user or "
            "assistant message (the system message belongs to the History itself)"
        )
    calls = [c.id for c in head.tool_calls]
    if len(set(calls)) != len(calls):
        raise HistoryError(f"step {index}: the assistant repeats a tool call id")
    answered = []
    for m in rest:
        if not isinstance(m, ToolMessage):
            raise HistoryError(
                f"step {index}: after the assistant message only tool results may follow"
            )
        answered.append(m.tool_call_id)
    if sorted(answered) != sorted(calls):
        raise HistoryError(
            f"step {index}: tool results {answered} do not answer the calls {calls} one to one"
        )


def _system(system: SystemMessage | str | None) -> SystemMessage | None:
    if isinstance(system, str):
        return SystemMessage(system)
    if system is None or isinstance(system, SystemMessage):
        return system
    raise HistoryError(
        f"a History's system message is a str or a SystemMessage, got {type(system).__name__}"
    )


def _message(message: Message | Mapping[str, Any], position: int) -> Message:
    try:
        return as_message(message)
    except MessageFormatError as exc:
        raise exc.under(f"messages[{position}]") from None


class History:
    """Append-only steps of one session, optionally written through to a store.

    It only grows. With a :class:`~contextfold.core.protocols.Store` it writes each step through
    (one transaction per append) before the step becomes visible, so a crash never leaves a step in
    memory that is not on disk; :meth:`open` restores a session exactly. Beside the steps it keeps
    the session's fold log, the :class:`~contextfold.core.folds.FoldRecord` s that model-driven
    strategies append (accepted or rejected), also written through. Folding never edits a step.
    """

    def __init__(
        self,
        system: SystemMessage | str | None = None,
        *,
        counter: TokenCounter | None = None,
        store: Store | None = None,
        session_id: str | None = None,
        meta: Mapping[str, Any] | None = None,
        unseen_tokens: int = 0,
    ) -> None:
        self.counter: TokenCounter = counter or ApproxCounter()
        self.system = system = _system(system)
        self.system_tokens = count_messages(self.counter, [system])[0] if system else 0
        self.unseen_tokens = unseen_tokens
        """Tokens (of ``counter``) every call sends before the history that no strategy shows
        or folds: an agent CLI's system prompt and tool schemas its log leaves out. A strategy
        that weighs the prompt it sends counts them."""
        self.meta: dict[str, Any] = dict(meta or {})
        self.session_id = session_id
        self._store = store
        self._steps: list[Step] = []
        self._folds: list[FoldRecord] = []
        self._latest_user: int | None = None
        self._counted: dict[Message, int] = {}
        self._has_parts = False
        if store is not None:
            if session_id is None:
                raise HistoryError("a History with a store needs a session_id")
            try:
                store.create_session(
                    session_id, system=system, counter=self.counter.name, meta=self.meta
                )
            except StoreConflictError as exc:
                raise StoreConflictError(
                    f"{exc}; History.open(store, {session_id!r}) resumes it, or pick another "
                    "session_id for a new session"
                ) from exc

    @classmethod
    def open(cls, store: Store, session_id: str, *, counter: TokenCounter | None = None) -> History:
        """Reopen a stored session exactly as it was (steps, counts, hashes, metadata)."""
        return cls.from_record(store, store.load_session(session_id), counter=counter)

    @classmethod
    def from_record(
        cls, store: Store, record: SessionRecord, *, counter: TokenCounter | None = None
    ) -> History:
        """The session ``record`` (as ``store`` loaded it) reopened, writing through to it."""
        history = cls(record.system, counter=counter, meta=record.meta)  # no store: nothing new
        history.session_id, history._store = record.session_id, store  # written on reopening
        same_counter = record.counter == history.counter.name
        for step in record.steps:
            if not same_counter:  # counts were made by another tokenizer: recount in memory
                step = make_step(step.index, step.messages, history.counter)
            history._add(step)
        history._folds.extend(record.folds)
        return history

    def append(self, *messages: Message | Mapping[str, Any]) -> Step:
        """Append one step made of ``messages`` (:class:`~contextfold.core.messages.Message` s
        or OpenAI chat dicts); returns it. Nothing is written if invalid."""
        parsed = [_message(m, i) for i, m in enumerate(messages)]
        return self.append_step(make_step(len(self._steps), parsed, self.counter))

    def append_step(self, step: Step) -> Step:
        """Append a step built with :func:`make_step` (for example, counted once and shared)."""
        if step.index != len(self._steps):
            raise HistoryError(f"step index {step.index} appended at position {len(self._steps)}")
        if self._store is not None:
            assert self.session_id is not None
            self._store.append_step(self.session_id, step)
        self._add(step)
        return step

    def record_fold(self, record: FoldRecord) -> None:
        """Append a fold record to the session's fold log (written through to the store)."""
        if not 0 <= record.start <= record.end <= len(self._steps):
            raise HistoryError(
                f"fold record covers steps {record.start} to {record.end}, outside the "
                f"history's {len(self._steps)} steps"
            )
        if self._store is not None:
            assert self.session_id is not None
            self._store.append_fold(self.session_id, record)
        self._folds.append(record)

    @property
    def folds(self) -> Sequence[FoldRecord]:
        """The fold log, in order (read-only)."""
        return self._folds

    def _add(self, step: Step) -> None:
        self._steps.append(step)
        if step.kind == "user":
            self._latest_user = step.index
        if not self._has_parts:
            self._has_parts = any(m.parts for m in step.messages)

    @property
    def has_parts(self) -> bool:
        """Whether any step holds a message with provider parts (:mod:`contextfold.core.parts`)."""
        return self._has_parts

    @property
    def store(self) -> Store | None:
        """The store this history writes through to, if any."""
        return self._store

    def count(self, message: Message) -> int:
        """Tokens of a message a strategy made (a stub, a note), counted once per distinct
        message with this history's counter; overhead included, as for steps."""
        tokens = self._counted.get(message)
        if tokens is None:
            tokens = self._counted[message] = count_messages(self.counter, [message])[0]
        return tokens

    @property
    def steps(self) -> Sequence[Step]:
        """The steps, in order (read-only: never mutate the returned sequence)."""
        return self._steps

    @property
    def latest_user_index(self) -> int | None:
        """Index of the latest user step, or None before the first one."""
        return self._latest_user

    def messages(self) -> list[Message]:
        """The whole history as chat messages (system first)."""
        out: list[Message] = [self.system] if self.system else []
        for step in self._steps:
            out.extend(step.messages)
        return out

    def __len__(self) -> int:
        return len(self._steps)

    def __getitem__(self, index: int) -> Step:
        return self._steps[index]

    def __iter__(self) -> Iterator[Step]:
        return iter(self._steps)
