"""The PostgreSQL backend: a schema of its own, ``tsvector`` columns with GIN indexes, a pool.

Needs the ``postgres`` extra (psycopg 3, psycopg-pool), imported when a store is opened. The
store module itself is imported on first use, so a SQLite-only process never loads it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_session_recall.backends.postgres.dsn import is_postgres_dsn, redact_dsn

if TYPE_CHECKING:
    from langchain_session_recall.backends.postgres.store import (
        DEFAULT_SCHEMA,
        PostgresSessionStore,
    )

__all__ = ["DEFAULT_SCHEMA", "PostgresSessionStore", "is_postgres_dsn", "redact_dsn"]


def __getattr__(name: str) -> Any:
    if name in ("DEFAULT_SCHEMA", "PostgresSessionStore"):
        from langchain_session_recall.backends.postgres import store

        return getattr(store, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
