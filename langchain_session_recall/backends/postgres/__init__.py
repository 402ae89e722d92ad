"""The PostgreSQL backend: a schema of its own, ``tsvector`` columns with GIN indexes, a pool.

Needs the ``postgres`` extra (psycopg 3, psycopg-pool), imported when a store is opened.
"""

from langchain_session_recall.backends.postgres.dsn import is_postgres_dsn, redact_dsn
from langchain_session_recall.backends.postgres.store import DEFAULT_SCHEMA, PostgresSessionStore

__all__ = ["DEFAULT_SCHEMA", "PostgresSessionStore", "is_postgres_dsn", "redact_dsn"]
