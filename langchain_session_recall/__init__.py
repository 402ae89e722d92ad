"""Long-term recall of an agent's own past conversations, for LangChain.

Example:
    >>> from langchain_session_recall import SessionRecallRetriever, SessionStore
    >>> store = SessionStore(":memory:")
    >>> retriever = SessionRecallRetriever(store=store, k=3)
"""

from langchain_session_recall.errors import (
    EmptyQueryError,
    InvalidMessageError,
    LineageCycleError,
    NotASessionDatabaseError,
    ReadOnlyStoreError,
    SessionNotFoundError,
    SessionRecallError,
)
from langchain_session_recall.models import MessageHit, RecentSession, Session, StoredMessage
from langchain_session_recall.query import ParsedQuery, parse_query, to_fts5
from langchain_session_recall.retriever import SessionRecallRetriever
from langchain_session_recall.store import SessionStore

__all__ = [
    "EmptyQueryError",
    "InvalidMessageError",
    "LineageCycleError",
    "MessageHit",
    "NotASessionDatabaseError",
    "ParsedQuery",
    "ReadOnlyStoreError",
    "RecentSession",
    "Session",
    "SessionNotFoundError",
    "SessionRecallError",
    "SessionRecallRetriever",
    "SessionStore",
    "StoredMessage",
    "parse_query",
    "to_fts5",
]
__version__ = "0.1.0"
