"""The session store contract, and everything both backends share.

:class:`SessionBackend` is what the retriever, summarizer, tool, recorder, importers and CLI
call; :class:`~langchain_session_recall.backends.sqlite.SqliteSessionStore` and
:class:`~langchain_session_recall.backends.postgres.PostgresSessionStore` are its two
implementations. Everything that is not dialect is written once in ``backends/common/``, one
job a module, and joined here: the hooks, opening, closing and transactions (``core``), reads
(``reads``), lineage (``lineage``), recent sessions (``recent``), the write path and its rules
(``writes``, ``validation``), the import ledger (``ledger``), the summary cache
(``summary_cache``), forgetting (``forgetting``), statistics and the integrity check
(``stats``), row decoding (``rows``); passage vectors come with
:class:`~langchain_session_recall.backends.vectors.store.StoreVectors`. A backend supplies its
connections, its :class:`~langchain_session_recall.backends.sql.Dialect`, its bulk message
insert and its full-text search.

One async model for both backends: the store's I/O is synchronous, and the async paths of the
retriever, summarizer and tool run it in LangChain's executor (``run_in_executor``), each
thread with its own SQLite connection or pooled PostgreSQL connection.
"""

from __future__ import annotations

from langchain_session_recall.backends.common.core import StoreCheck
from langchain_session_recall.backends.common.forgetting import Forgetting
from langchain_session_recall.backends.common.ledger import ImportLedger
from langchain_session_recall.backends.common.recent import RecentListing
from langchain_session_recall.backends.common.stats import Statistics
from langchain_session_recall.backends.common.summary_cache import SummaryCacheRows
from langchain_session_recall.backends.vectors.store import StoreVectors

__all__ = ["SessionBackend", "StoreCheck"]


class SessionBackend(
    StoreVectors, RecentListing, ImportLedger, SummaryCacheRows, Forgetting, Statistics
):
    """A session store: sessions and messages with a full-text index, and their chains.

    The complete contract the rest of the library uses, typed, with everything that does not
    depend on the SQL dialect implemented here. Subclasses implement the hooks marked abstract.

    Writes validate their input before they touch the store and run in one transaction each;
    :meth:`transaction` groups several. A store opened ``read_only`` refuses every write with
    :class:`ReadOnlyStoreError` and never changes the database.

    Example:
        >>> from langchain_session_recall.backends import open_store
        >>> store = open_store(":memory:")
        >>> isinstance(store, SessionBackend), store.add_session("s1").id
        (True, 's1')
    """
