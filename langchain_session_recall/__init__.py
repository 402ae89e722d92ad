"""Long-term recall of an agent's own past conversations, for LangChain.

Example:
    >>> from langchain_session_recall import SessionRecallRetriever, SessionStore
    >>> store = SessionStore(":memory:")
    >>> retriever = SessionRecallRetriever(store=store, k=3)
"""

from langchain_session_recall.backends import (
    PostgresSessionStore,
    SessionBackend,
    SessionStore,
    open_store,
)
from langchain_session_recall.backends.sqlite.fts import to_fts5
from langchain_session_recall.errors import (
    EmptyQueryError,
    InvalidMessageError,
    InvalidSessionError,
    LineageCycleError,
    NotASessionDatabaseError,
    ReadOnlyStoreError,
    SessionNotFoundError,
    SessionRecallError,
)
from langchain_session_recall.models import MessageHit, RecentSession, Session, StoredMessage
from langchain_session_recall.recorder import SessionRecorder
from langchain_session_recall.retriever import SessionRecallRetriever
from langchain_session_recall.search.query import ParsedQuery, parse_query
from langchain_session_recall.summarize.redaction import SecretPattern, redact_secrets
from langchain_session_recall.summarize.summarizer import (
    SessionSummarizer,
    create_session_recall_chain,
)
from langchain_session_recall.tool import SessionSearchTool, create_session_search_tool

__all__ = [
    "EmptyQueryError",
    "InvalidMessageError",
    "InvalidSessionError",
    "LineageCycleError",
    "MessageHit",
    "NotASessionDatabaseError",
    "ParsedQuery",
    "PostgresSessionStore",
    "ReadOnlyStoreError",
    "RecentSession",
    "SecretPattern",
    "Session",
    "SessionBackend",
    "SessionNotFoundError",
    "SessionRecallError",
    "SessionRecallRetriever",
    "SessionRecorder",
    "SessionSearchTool",
    "SessionStore",
    "SessionSummarizer",
    "StoredMessage",
    "create_session_recall_chain",
    "create_session_search_tool",
    "open_store",
    "parse_query",
    "redact_secrets",
    "to_fts5",
]
__version__ = "0.1.0"
