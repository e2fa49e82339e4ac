"""What refold renders a step from: each message with its token count and provenance.

Shared by every part of refold's rendering (the settled prefix, the tail, repeats, cuts); it
imports none of them, so they can all import it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from contextfold.core.messages import Message
from contextfold.core.view import Provenance

__all__ = ["Entries", "Entry"]

Entry = tuple[Message, int, Provenance]
"""One view message with its token count and provenance."""

Entries = Callable[[int], Sequence[Entry]]
"""The messages of one step as the renderer should see them (raw, or from an upstream view)."""
