"""``clip``: cap every tool output (ReFold's B.1 baseline, 1,000 characters by default).

A tool result longer than ``max_chars`` keeps its head (``head_share`` of the cap, 2/3 by
default) and its tail (the rest), joined by a marker line ``[... N characters clipped ...]``.
Errors and final lines of a command's output tend to sit at the end, definitions and headers at
the start, so both ends stay. Every output is clipped the same way at every render, so the
prompt only grows at its end (the prefix cache keeps hitting); the clipped middle cannot be
restored from the view (``restore`` is None).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from contextfold.core.history import History
from contextfold.core.messages import ToolMessage
from contextfold.core.view import View
from contextfold.strategies.base import StrategyConfig
from contextfold.strategies.transform import Edit, TransformStrategy, rewrite, tool_stub

__all__ = ["ClipConfig", "ClipStrategy", "clip_text"]


class ClipConfig(StrategyConfig):
    type: Literal["clip"] = "clip"
    max_chars: int = Field(1000, ge=1, description="Characters of each tool output kept.")
    head_share: float = Field(2 / 3, ge=0.0, le=1.0, description="Share of the cap at the head.")


def clip_text(text: str, max_chars: int, head_share: float = 2 / 3) -> str | None:
    """``text`` cut to its head and tail around a marker line; None when it fits already (or
    when the marker would make it no shorter)."""
    if len(text) <= max_chars:
        return None
    head = round(max_chars * head_share)
    tail = max_chars - head
    clipped = len(text) - head - tail
    end = text[len(text) - tail :] if tail else ""
    out = f"{text[:head]}\n[... {clipped} characters clipped ...]\n{end}"
    return out if len(out) < len(text) else None


class ClipStrategy(TransformStrategy):
    """Cuts each tool output longer than ``max_chars`` to its head and tail."""

    Config = ClipConfig

    def __init__(self, config: ClipConfig | None = None) -> None:
        super().__init__()
        self.config = config or ClipConfig()
        self.name = "clip"
        self._edits: dict[ToolMessage, Edit | None] = {}
        self._history: History | None = None

    def apply(self, view: View, history: History, budget: int | None) -> View:
        if history is not self._history:  # the cache holds one session's outputs
            self._history, self._edits = history, {}
        edits = {}
        for pos, msg in enumerate(view.messages):
            if isinstance(msg, ToolMessage):
                edit = self._edit(msg)
                if edit is not None:
                    edits[pos] = edit
        return rewrite(view, edits, history, strategy=self.name)

    def _edit(self, msg: ToolMessage) -> Edit | None:
        """The clip of one output, made once per distinct message (renders repeat them)."""
        if msg not in self._edits:
            text = clip_text(msg.content, self.config.max_chars, self.config.head_share)
            self._edits[msg] = None if text is None else Edit(tool_stub(msg, text), "clip", None)
        return self._edits[msg]
