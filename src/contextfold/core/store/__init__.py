"""Session stores: :class:`MemoryStore`, :class:`SQLiteStore` (one file) and :class:`PostgresStore`
(a database several processes share), behind the :class:`~contextfold.core.protocols.Store`
protocol.

A loaded step equals the one appended (messages as :func:`~contextfold.core.messages.to_openai`
writes them, token counts, hashes, index), and every model call is kept with the exact messages
it was sent, so a session can be reopened, resumed and inspected. :func:`open_store` opens one
from a ``postgresql://`` URL or a file path.
"""

from contextfold.core.store._sqlite_open import APPLICATION_ID, SCHEMA_VERSION, create_private
from contextfold.core.store.memory import MemoryStore
from contextfold.core.store.opening import display_store, is_postgres_url, open_store
from contextfold.core.store.postgres import PostgresStore
from contextfold.core.store.sqlite import SQLiteStore

__all__ = [
    "APPLICATION_ID",
    "SCHEMA_VERSION",
    "MemoryStore",
    "PostgresStore",
    "SQLiteStore",
    "create_private",
    "display_store",
    "is_postgres_url",
    "open_store",
]
