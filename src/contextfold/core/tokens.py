"""Token counting: a small protocol, a documented approximation, and exact local tokenizers.

A message costs the tokens of its text plus :data:`MESSAGE_OVERHEAD` for the chat template's
role header and end marker; every counter reads local files only, nothing is downloaded.
Where no counter applies (an opaque blob, the scripted upstreams' usage, a folding strategy's
trigger), text is estimated at :data:`CHARS_PER_TOKEN` characters a token
(:func:`approx_tokens`), the approximation's own rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from contextfold.core.errors import TokenizerError
from contextfold.core.messages import Message, message_text

__all__ = [
    "CHARS_PER_TOKEN",
    "MESSAGE_OVERHEAD",
    "ApproxCounter",
    "HFTokenizerCounter",
    "TokenCounter",
    "approx_tokens",
    "count_message",
    "count_messages",
]

MESSAGE_OVERHEAD = 4
"""Tokens a chat template adds around each message (role header, separators, end marker)."""

CHARS_PER_TOKEN = 4
"""Characters of ASCII text a token stands for in the approximation (the usual average of
GPT-style BPE on English and code)."""


def approx_tokens(chars: int) -> int:
    """Tokens of ``chars`` characters of ASCII text in the approximation: rounded up, so any
    text is at least one token (:class:`ApproxCounter` counts text this way)."""
    return -(-chars // CHARS_PER_TOKEN)


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens of text. ``name`` identifies the tokenizer (stored with sessions).

    Implementations: :class:`ApproxCounter` (no tokenizer), :class:`HFTokenizerCounter` (exact,
    from a local ``tokenizer.json``), and
    :class:`~contextfold.core.gguf_tokenizer.GGUFTokenizerCounter` (exact, from the vocabulary
    inside a GGUF model file).
    """

    @property
    def name(self) -> str: ...

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """Token counts of many texts at once (exact counters batch in native code)."""
        ...


class ApproxCounter:
    """The documented approximation: ceil(ascii_chars / 4) + non-ASCII characters.

    About 4 characters per token for ASCII text (the usual average of GPT-style BPE on English and
    code) and one token per non-ASCII character (CJK and emoji split into one or more tokens each).
    Deterministic, allocation-free, fast.
    """

    name = "approx-4cpt"

    def count(self, text: str) -> int:
        if text.isascii():
            return approx_tokens(len(text))
        non_ascii = sum(1 for ch in text if ord(ch) > 127)
        return approx_tokens(len(text) - non_ascii) + non_ascii

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [self.count(t) for t in texts]


class HFTokenizerCounter:
    """Exact counts from a Hugging Face ``tokenizer.json`` on local disk."""

    def __init__(self, path: str | Path, *, tokenizer: Any = None) -> None:
        if tokenizer is None:
            from tokenizers import Tokenizer

            file = Path(path)
            if not file.is_file():
                raise TokenizerError(
                    f"tokenizer file {file} does not exist (give a tokenizer.json)"
                )
            try:
                tokenizer = Tokenizer.from_file(str(file))
            except Exception as exc:  # the Rust side raises plain Exception
                raise TokenizerError(f"cannot load tokenizer {file}: {exc}") from exc
        self._tok = tokenizer
        file = Path(path)
        self.name = f"hf:{file.parent.name}/{file.name}" if file.parent.name else f"hf:{file.name}"

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        encodings = self._tok.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encodings]


def count_messages(counter: TokenCounter, messages: Sequence[Message]) -> list[int]:
    """Token counts of messages, each with :data:`MESSAGE_OVERHEAD` added (and the tokens its
    provider parts add beyond their text: an image's estimate)."""
    counts = counter.count_batch([message_text(m) for m in messages])
    return [
        c + MESSAGE_OVERHEAD + (sum(p.tokens for p in m.parts) if m.parts else 0)
        for c, m in zip(counts, messages, strict=True)
    ]


def count_message(counter: TokenCounter, message: Message) -> int:
    return count_messages(counter, [message])[0]
