"""What the retriever needs from a store, and opening a store from a path or a DSN.

:class:`SessionBackend` lists the reads the retriever and the search pipeline make.
:class:`~langchain_session_recall.backends.sqlite.store.SessionStore` (SQLite) and
:class:`PostgresSessionStore` (PostgreSQL) both satisfy it,
so the pipeline is written once.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from langchain_session_recall.models import RecentSession, Session
from langchain_session_recall.models import StoredMessage as StoredMessage
from langchain_session_recall.search.pipeline import SearchBackend

if TYPE_CHECKING:
    from langchain_session_recall.backends.postgres.store import PostgresSessionStore
    from langchain_session_recall.backends.sqlite.store import SessionStore

__all__ = ["SessionBackend", "open_store"]


@runtime_checkable
class SessionBackend(SearchBackend, Protocol):
    """A searchable session store: what :class:`SessionRecallRetriever` calls.

    The search pipeline's needs (``search.pipeline.SearchBackend``) plus
    the reads that build Documents and the CLI's ``stats``.

    Example:
        >>> from langchain_session_recall import SessionStore
        >>> isinstance(SessionStore(":memory:"), SessionBackend)
        True
    """

    store_id: str

    def get_sessions(self, session_ids: Iterable[str]) -> dict[str, Session]: ...

    def chain_messages(
        self, root_id: str, *, user_id: str | None = None
    ) -> list[StoredMessage]: ...

    def recent_sessions(
        self,
        limit: int = 10,
        *,
        exclude_sources: Iterable[str] = ...,
        exclude_session_ids: Iterable[str] = ...,
        user_id: str | None = None,
        after: float | None = None,
        before: float | None = None,
    ) -> list[RecentSession]: ...

    def stats(self) -> dict[str, Any]: ...


def open_store(
    target: str | os.PathLike[str], *, read_only: bool = False
) -> SessionStore | PostgresSessionStore:
    """A SQLite store for a file path, a PostgreSQL store for a ``postgresql://`` DSN.

    Example:
        >>> open_store(":memory:")  # doctest: +ELLIPSIS
        SessionStore(':memory:', read-write)
    """
    from langchain_session_recall.backends.postgres.store import (
        PostgresSessionStore,
        is_postgres_dsn,
    )
    from langchain_session_recall.backends.sqlite.store import SessionStore

    if is_postgres_dsn(target):
        return PostgresSessionStore(str(target), read_only=read_only)
    if str(target) == ":memory:":
        return SessionStore(":memory:", read_only=read_only)
    return SessionStore(Path(target).expanduser(), read_only=read_only)
