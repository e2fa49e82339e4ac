"""contextfold: a context runtime for long-horizon LLM agents.

The history is append-only; before every model call a strategy renders a compact view of it,
with an elision for everything it leaves out. :class:`Session` is the front door: ``prepare``
the conversation before each call, send what it returns, and let ``call_tool`` answer the
strategy's own tools. The names here are what a user needs, each imported the first time it is
used (importing the package loads no model engine); the exception tree is drawn in
:mod:`contextfold.core.errors`.
"""

from __future__ import annotations

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

if _TYPE_CHECKING:
    from contextfold.core.errors import (
        ConfigError,
        ContextBudgetError,
        ContextFoldError,
        HistoryError,
        ImportFormatError,
        MessageFormatError,
        ModelError,
        StoreConflictError,
        StoreError,
        TokenizerError,
        ViewError,
    )
    from contextfold.core.experience import Experience
    from contextfold.core.history import History, Step
    from contextfold.core.messages import (
        AssistantMessage,
        Message,
        SystemMessage,
        ToolCall,
        ToolMessage,
        UserMessage,
        from_openai,
        to_openai,
    )
    from contextfold.core.pipeline import render_checked
    from contextfold.core.protocols import Store, Strategy
    from contextfold.core.store import MemoryStore, PostgresStore, SQLiteStore, open_store
    from contextfold.core.view import Elision, RestorePath, View
    from contextfold.session import Prepared, Session
    from contextfold.strategies.registry import STRATEGIES, build_strategy

__version__ = "0.1.0"

_HOME = {
    "contextfold.session": ("Prepared", "Session"),
    "contextfold.core.messages": (
        "AssistantMessage",
        "Message",
        "SystemMessage",
        "ToolCall",
        "ToolMessage",
        "UserMessage",
        "from_openai",
        "to_openai",
    ),
    "contextfold.core.history": ("History", "Step"),
    "contextfold.core.view": ("Elision", "RestorePath", "View"),
    "contextfold.core.pipeline": ("render_checked",),
    "contextfold.strategies.registry": ("STRATEGIES", "build_strategy"),
    "contextfold.core.protocols": ("Store", "Strategy"),
    "contextfold.core.store": ("MemoryStore", "PostgresStore", "SQLiteStore", "open_store"),
    "contextfold.core.experience": ("Experience",),
    "contextfold.core.errors": (
        "ConfigError",
        "ContextBudgetError",
        "ContextFoldError",
        "HistoryError",
        "ImportFormatError",
        "MessageFormatError",
        "ModelError",
        "StoreConflictError",
        "StoreError",
        "TokenizerError",
        "ViewError",
    ),
}
_MODULE_OF = {name: module for module, names in _HOME.items() for name in names}

__all__ = [
    "STRATEGIES",
    "AssistantMessage",
    "ConfigError",
    "ContextBudgetError",
    "ContextFoldError",
    "Elision",
    "Experience",
    "History",
    "HistoryError",
    "ImportFormatError",
    "MemoryStore",
    "Message",
    "MessageFormatError",
    "ModelError",
    "PostgresStore",
    "Prepared",
    "RestorePath",
    "SQLiteStore",
    "Session",
    "Step",
    "Store",
    "StoreConflictError",
    "StoreError",
    "Strategy",
    "SystemMessage",
    "TokenizerError",
    "ToolCall",
    "ToolMessage",
    "UserMessage",
    "View",
    "ViewError",
    "__version__",
    "build_strategy",
    "from_openai",
    "open_store",
    "render_checked",
    "to_openai",
]


def __getattr__(name: str) -> _Any:
    """Import a public name from its module the first time it is used."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(
            f"module 'contextfold' has no attribute {name!r}; beyond its __all__, the API is "
            "imported from its module (contextfold.agent, contextfold.models, contextfold.testing, "
            "contextfold.bench.replay, contextfold.core.meter, ...)"
        )
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
