"""What ufold's folder answers (one JSON object each), and what its fold records hold."""

from __future__ import annotations

from pydantic import BaseModel, Field

__all__ = ["BlockAnswer", "ExtractAnswer", "IntentAnswer", "SummaryAnswer", "TodoItem"]


class TodoItem(BaseModel):
    """One step not done yet, with the facts it needs (copied from the conversation)."""

    task: str = Field(min_length=1, max_length=600)
    facts: list[str] = Field(default_factory=list, max_length=12)


class SummaryAnswer(BaseModel):
    """Conversation summarization: a chronological narrative and the to-do list."""

    summary: str = Field(min_length=1, max_length=8000)
    todo: list[TodoItem] = Field(default_factory=list, max_length=16)


class BlockAnswer(BaseModel):
    """One selected range of observation lines (by number, never copied) and what it offers."""

    summary: str = Field("", max_length=600)
    start_line: int
    end_line: int
    facts: list[str] = Field(default_factory=list, max_length=16)
    """Each a verbatim copy of text in the selected lines (checked by the runtime)."""
    constraints: list[str] = Field(default_factory=list, max_length=8)
    hint: str = Field("", max_length=600)


class ExtractAnswer(BaseModel):
    """Dynamic data extraction: the selected blocks."""

    blocks: list[BlockAnswer] = Field(default_factory=list, max_length=32)


class IntentAnswer(BaseModel):
    """``trigger=change``: did the user's newest messages change what they want?"""

    changed: bool
    reason: str = Field("", max_length=400)
