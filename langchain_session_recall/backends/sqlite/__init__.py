"""The SQLite backend: one file, FTS5, WAL; Hermes ``state.db`` files searched read-only."""

from langchain_session_recall.backends.sqlite.store import SessionStore, SqliteSessionStore

__all__ = ["SessionStore", "SqliteSessionStore"]
