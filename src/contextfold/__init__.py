"""contextfold: a context runtime for long-horizon LLM agents.

The history is append-only; a :class:`Strategy` renders a :class:`View` of it before every model
call, recording an :class:`Elision` for everything it leaves out. Everything a user needs is
importable from here; the submodules are implementation detail.

Errors (see :mod:`contextfold.core.errors`)::

    ContextFoldError
    ├── MessageFormatError, HistoryError, StoreError, ViewError
    ├── ConfigError, TokenizerError, ImportFormatError
"""

from __future__ import annotations

from contextfold.agent import Agent, AgentResult
from contextfold.bench.replay import ReplayResult, StrategyResult, replay, replay_one
from contextfold.core.counters import resolve_counter
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
from contextfold.core.folds import FoldCall, FoldRecord
from contextfold.core.gguf_tokenizer import GGUFTokenizerCounter, smollm2_gguf_path
from contextfold.core.history import History, Step, content_hash, make_step
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
    from_openai,
    message_text,
    to_openai,
)
from contextfold.core.meter import (
    PRICE_TABLES,
    PROFILES,
    CallRecord,
    Meter,
    ModelProfile,
    PriceTable,
    get_profile,
)
from contextfold.core.protocols import (
    Compacting,
    Completion,
    Environment,
    Folding,
    Grounded,
    Learning,
    Model,
    SessionRecord,
    SharedStore,
    Store,
    Strategy,
    ToolProvider,
    Usage,
    UserSimulator,
)
from contextfold.core.store import MemoryStore, PostgresStore, SQLiteStore, open_store
from contextfold.core.tokens import (
    MESSAGE_OVERHEAD,
    ApproxCounter,
    HFTokenizerCounter,
    TokenCounter,
    count_messages,
)
from contextfold.core.view import (
    Elision,
    Provenance,
    RestorePath,
    View,
    ViewBuilder,
    check_view,
    render_checked,
)
from contextfold.envs import FilesEnv
from contextfold.importers import iter_trajectories, load_file
from contextfold.importers.base import Trajectory
from contextfold.models import LocalModel, OpenAIModel, ScriptedCall, ScriptedModel, tool_call
from contextfold.models.registry import build_model
from contextfold.strategies.base import StrategyConfig
from contextfold.strategies.folding import FoldCache, Folder, FolderSource
from contextfold.strategies.full import FullStrategy
from contextfold.strategies.refold import RefoldConfig, RefoldStrategy
from contextfold.strategies.registry import STRATEGIES, build_strategy

__version__ = "0.1.0"

__all__ = [
    "MESSAGE_OVERHEAD",
    "PRICE_TABLES",
    "PROFILES",
    "STRATEGIES",
    "Agent",
    "AgentResult",
    "ApproxCounter",
    "AssistantMessage",
    "CallRecord",
    "Compacting",
    "Completion",
    "ConfigError",
    "ContextBudgetError",
    "ContextFoldError",
    "Elision",
    "Environment",
    "Experience",
    "FilesEnv",
    "FoldCache",
    "FoldCall",
    "FoldRecord",
    "Folder",
    "FolderSource",
    "Folding",
    "FullStrategy",
    "GGUFTokenizerCounter",
    "Grounded",
    "HFTokenizerCounter",
    "History",
    "HistoryError",
    "ImportFormatError",
    "Learning",
    "LocalModel",
    "MemoryStore",
    "Message",
    "MessageFormatError",
    "Meter",
    "Model",
    "ModelError",
    "ModelProfile",
    "OpenAIModel",
    "PostgresStore",
    "PriceTable",
    "Provenance",
    "RefoldConfig",
    "RefoldStrategy",
    "ReplayResult",
    "RestorePath",
    "SQLiteStore",
    "ScriptedCall",
    "ScriptedModel",
    "SessionRecord",
    "SharedStore",
    "Step",
    "Store",
    "StoreConflictError",
    "StoreError",
    "Strategy",
    "StrategyConfig",
    "StrategyResult",
    "SystemMessage",
    "TokenCounter",
    "TokenizerError",
    "ToolCall",
    "ToolMessage",
    "ToolProvider",
    "Trajectory",
    "Usage",
    "UserMessage",
    "UserSimulator",
    "View",
    "ViewBuilder",
    "ViewError",
    "__version__",
    "build_model",
    "build_strategy",
    "check_view",
    "content_hash",
    "count_messages",
    "from_openai",
    "get_profile",
    "iter_trajectories",
    "load_file",
    "make_step",
    "message_text",
    "open_store",
    "render_checked",
    "replay",
    "replay_one",
    "resolve_counter",
    "smollm2_gguf_path",
    "to_openai",
    "tool_call",
]
