"""The prefix caches of the scripted upstreams, each reporting as its provider does.

:class:`BreakpointCache` works like Anthropic's prompt caching, :class:`AutomaticCache` like
OpenAI's, so what the proxy's views cost under each provider's rules is measured, not guessed.
Both count 4 characters a token of the prompt as the model reads it
(:mod:`~contextfold.testing.upstreams._prompt`). Entries never expire (the providers keep them for
minutes).
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass

from contextfold.core.meter import PriceTable
from contextfold.testing.upstreams._http import CHARS_PER_TOKEN, tokens

__all__ = ["AutomaticCache", "Bill", "BreakpointCache", "CacheUsage"]

LOOKBACK_BLOCKS = 20
"""Anthropic checks for a hit at the breakpoint and up to about 20 blocks before it."""


@dataclass(frozen=True, slots=True)
class CacheUsage:
    """One call's input tokens: read from the cache, written to it, and neither."""

    read: int
    written: int
    uncached: int
    written_1h: int = 0
    """The part of ``written`` written for an hour (Anthropic's ``ttl: 1h`` breakpoints)."""

    @property
    def total(self) -> int:
        return self.read + self.written + self.uncached


@dataclass(frozen=True, slots=True)
class Bill:
    """What one answered call is billed for, in tokens."""

    cached: CacheUsage
    output: int

    def cost(self, prices: PriceTable) -> float:
        """In dollars under ``prices`` (per million tokens)."""
        c = self.cached
        spent = c.uncached * prices.input + c.read * prices.cache_read
        written = (
            c.written - c.written_1h
        ) * prices.cache_write + c.written_1h * prices.cache_write_1h
        return (spent + written + self.output * prices.output) / 1e6


class BreakpointCache:
    """Anthropic-style prompt caching: written and read only at ``cache_control`` breakpoints.

    The prompt is a list of blocks (tools, then system blocks, then each message's content
    blocks: :func:`~contextfold.testing.upstreams._prompt.anthropic_blocks`); a prefix is written
    to the cache only at a block carrying
    ``cache_control`` (a breakpoint), and read only through one: for each breakpoint the longest
    cached prefix ending at it or at one of the 20 blocks before it is read. Tokens up to the
    last breakpoint that were not read are written; tokens after it are plain input. A prefix
    shorter than ``min_tokens`` (1,024 for Sonnet and Opus) is never cached. Tokens written up
    to the last breakpoint whose lifetime is ``1h`` are 1-hour writes (Anthropic places the
    longer lifetimes first), the rest 5-minute writes.
    """

    def __init__(self, *, min_tokens: int = 1024) -> None:
        self.min_tokens = min_tokens
        self._entries: set[str] = set()
        self._lock = threading.Lock()

    def lookup(self, model: str, blocks: list[tuple[str, str | None]]) -> CacheUsage:
        """Reads the longest cached prefix a breakpoint reaches, then writes each breakpoint's."""
        digest = hashlib.blake2b(model.encode(), digest_size=16)
        keys, ends, total = [], [], 0
        for text, _ in blocks:
            digest.update(text.encode())
            keys.append(digest.hexdigest())
            total += tokens(text)
            ends.append(total)
        marks = [i for i, (_, mark) in enumerate(blocks) if mark]
        with self._lock:
            read = max((self._hit(keys, ends, b) for b in marks), default=0)
            for b in marks:
                if ends[b] >= self.min_tokens:
                    self._entries.add(keys[b])
        last = ends[marks[-1]] if marks else 0
        written = last - read if last >= self.min_tokens and last > read else 0
        hours = [ends[b] for b in marks if blocks[b][1] == "1h"]
        hour = min(max(max(hours, default=0) - read, 0), written)
        return CacheUsage(
            read=read, written=written, uncached=total - read - written, written_1h=hour
        )

    def _hit(self, keys: list[str], ends: list[int], mark: int) -> int:
        for j in range(mark, max(mark - LOOKBACK_BLOCKS, -1), -1):
            if keys[j] in self._entries:
                return ends[j]
        return 0


class AutomaticCache:
    """OpenAI-style automatic prefix caching over the prompt's text.

    No markers: a prompt of at least 1,024 tokens is cached in its first 1,024 tokens and then
    in steps of 128, and the longest exact prefix seen before is reported as ``cached_tokens``.
    """

    def __init__(self, *, min_tokens: int = 1024, step_tokens: int = 128) -> None:
        self.min_tokens = min_tokens
        self.step_tokens = step_tokens
        self._entries: set[str] = set()
        self._lock = threading.Lock()

    def lookup(self, text: str) -> CacheUsage:
        """Reads the longest cached prefix of ``text`` (whole steps), then caches its steps."""
        total = tokens(text)
        digest, cached, hit = hashlib.blake2b(digest_size=16), 0, True
        start, end = 0, self.min_tokens
        with self._lock:
            while end <= total:
                digest.update(text[start * CHARS_PER_TOKEN : end * CHARS_PER_TOKEN].encode())
                key = digest.hexdigest()
                hit = hit and key in self._entries
                cached = end if hit else cached
                self._entries.add(key)
                start, end = end, end + self.step_tokens
        return CacheUsage(read=cached, written=0, uncached=total - cached)
