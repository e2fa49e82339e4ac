"""The tokens a strategy's own tool schemas add to every prompt (``--tool-schemas``).

A tool offered to the model is part of every prompt that offers it. ``replay`` and ``bench
sufficiency`` count only the messages unless ``--tool-schemas`` is given; then every strategy
that offers tools of its own (``restore``, ``recall``) pays their schemas at every call, read
from the cache after the first, and ``full`` (no tools) pays nothing. The agent's own tools are
left out either way: every strategy sends the same ones.
"""

from __future__ import annotations

import json

from contextfold.core.own_tools import own_tools
from contextfold.core.protocols import Strategy
from contextfold.core.tokens import TokenCounter

__all__ = ["schema_tokens"]


def schema_tokens(strategy: Strategy, counter: TokenCounter) -> int:
    """Tokens of the strategy's own tool schemas as JSON (``restore``: about 55)."""
    tools = own_tools(strategy)
    return counter.count_batch([json.dumps(tools)])[0] if tools else 0
