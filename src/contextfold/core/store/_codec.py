"""Decoding the rows a SQL store (SQLite, PostgreSQL) reads back, with clear errors for a corrupt
store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from contextfold.core.errors import MessageFormatError, StoreError
from contextfold.core.folds import FoldRecord
from contextfold.core.history import Step
from contextfold.core.messages import AssistantMessage, Message, SystemMessage, from_openai
from contextfold.core.protocols import SessionRecord
from contextfold.core.store._common import call_record


class Decoder:
    """Turns the JSON columns of one store back into values; names the store on errors."""

    def __init__(self, path: Path | str) -> None:
        self.path = path

    def corrupt(self, where: str, problem: str) -> StoreError:
        return StoreError(
            f"{self.path} is corrupt: {where}: {problem} "
            "(the store was changed outside contextfold; restore a copy)"
        )

    def decode_json(self, text: Any, where: str) -> Any:
        if not isinstance(text, str):
            raise self.corrupt(where, f"expected JSON text, found {type(text).__name__}")
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise self.corrupt(where, f"invalid JSON ({exc})") from exc

    def decode_object(self, text: Any, where: str) -> dict[str, Any]:
        value = self.decode_json(text, where)
        if not isinstance(value, dict):
            raise self.corrupt(where, "expected a JSON object")
        return value

    def decode_messages(self, text: Any, where: str) -> list[Message]:
        value = self.decode_json(text, where)
        if not isinstance(value, list):
            raise self.corrupt(where, "expected a JSON list of messages")
        try:
            return [from_openai(m) for m in value]
        except MessageFormatError as exc:
            raise self.corrupt(where, str(exc)) from exc

    def decode_session(
        self,
        session_id: str,
        head: tuple[Any, ...],
        rows: list[tuple[Any, ...]],
        folds: list[tuple[Any, ...]],
    ) -> SessionRecord:
        """A session from its head row (system, counter, meta), step rows and fold rows."""
        system_json, counter, meta_json = head
        where = f"session {session_id!r}"
        return SessionRecord(
            session_id=session_id,
            system=self.decode_system(system_json, where),
            counter=counter,
            steps=self.decode_steps(rows, session_id),
            meta=self.decode_object(meta_json, f"{where}: metadata"),
            folds=[self.decode_fold(row, session_id) for row in folds],
        )

    def decode_system(self, text: Any, where: str) -> SystemMessage | None:
        if text is None:
            return None
        value = self.decode_json(text, f"{where}: system message")
        try:
            message = from_openai(value)
        except MessageFormatError as exc:
            raise self.corrupt(f"{where}: system message", str(exc)) from exc
        if not isinstance(message, SystemMessage):
            raise self.corrupt(where, f"the system message has role {message.role!r}")
        return message

    def decode_steps(self, rows: list[tuple[Any, ...]], session_id: str) -> list[Step]:
        steps = [self.decode_step(row, session_id) for row in rows]
        for position, step in enumerate(steps):
            if step.index != position:
                where = f"session {session_id!r}"
                raise self.corrupt(where, f"step {position} is missing (next is {step.index})")
        return steps

    def decode_step(self, row: tuple[Any, ...], session_id: str) -> Step:
        idx, messages_json, tokens_json, hashes_json = row
        where = f"session {session_id!r}, step {idx}"
        messages = self.decode_messages(messages_json, where)
        tokens = self.decode_json(tokens_json, f"{where}: tokens")
        hashes = self.decode_json(hashes_json, f"{where}: hashes")
        self.check_columns(where, messages, tokens, hashes)
        return Step(index=idx, messages=tuple(messages), tokens=tuple(tokens), hashes=tuple(hashes))

    def check_columns(self, where: str, messages: list[Message], tokens: Any, hashes: Any) -> None:
        n = len(messages)
        if not (isinstance(tokens, list) and len(tokens) == n and _all_ints(tokens)):
            raise self.corrupt(where, f"expected {n} integer token counts")
        if not (isinstance(hashes, list) and len(hashes) == n and _all_strs(hashes)):
            raise self.corrupt(where, f"expected {n} string hashes")

    def decode_fold(self, row: tuple[Any, ...], session_id: str) -> FoldRecord:
        fold_idx, record_json = row
        where = f"session {session_id!r}, fold {fold_idx}"
        data = self.decode_object(record_json, where)
        try:
            return FoldRecord.from_json(data, where=where)
        except StoreError as exc:
            raise self.corrupt(where, str(exc)) from exc

    def decode_call(self, row: tuple[Any, ...], session_id: str) -> dict[str, Any]:
        call_idx, step_idx, messages_json, usage_json, created_at = row
        where = f"session {session_id!r}, call {call_idx}"
        messages = self.decode_messages(messages_json, where)
        usage = self.decode_object(usage_json, f"{where}: usage")
        return call_record(call_idx, step_idx, messages, usage, created_at)

    def decode_reply(self, text: Any, where: str) -> AssistantMessage:
        messages = self.decode_messages(text, where)
        if len(messages) != 1 or not isinstance(messages[0], AssistantMessage):
            raise self.corrupt(where, "expected one assistant message")
        return messages[0]


def _all_ints(values: list[Any]) -> bool:
    return all(isinstance(v, int) and not isinstance(v, bool) for v in values)


def _all_strs(values: list[Any]) -> bool:
    return all(isinstance(v, str) for v in values)
