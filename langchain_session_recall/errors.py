"""Exceptions raised by langchain-session-recall.

Every error the library raises on purpose derives from :class:`SessionRecallError`, so callers
can catch one type. Messages say what went wrong and what to do about it.
"""

from __future__ import annotations

__all__ = [
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
    "MissingFeatureError",
    "NoVectorsError",
    "NotASessionDatabaseError",
    "ReadLimitError",
    "ReadOnlyStoreError",
    "RefusedEncodingError",
    "SessionNotFoundError",
    "SessionOwnerError",
    "SessionRecallError",
    "StoreBusyError",
    "StoreUnavailableError",
]


class SessionRecallError(Exception):
    """Base class of every error raised by this package."""


class SessionNotFoundError(SessionRecallError, KeyError):
    """A session id that the store does not contain."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable.
        return str(self.args[0]) if self.args else "session not found"


class SessionOwnerError(SessionRecallError, PermissionError):
    """A session of another user, reached through an object opened for one user (a
    ``SessionChatMessageHistory`` with ``user_id``): it is neither read nor written."""


class InvalidSessionError(SessionRecallError, ValueError):
    """Session arguments the store cannot keep as given (an empty id, a NUL in an id)."""


class InvalidMessageError(SessionRecallError, ValueError):
    """A message that cannot be stored (unknown role, wrong type, missing content)."""


class LineageCycleError(SessionRecallError, ValueError):
    """A ``parent_session_id`` that would make a session its own ancestor."""


class ReadOnlyStoreError(SessionRecallError):
    """A write was attempted on a store opened with ``read_only=True``."""


class NotASessionDatabaseError(SessionRecallError):
    """The file is missing, not SQLite, lacks the ``sessions``/``messages`` tables, or holds
    another program's tables and none of ours (it is then left untouched), or cannot be read
    (a hot rollback journal a crashed writer left, a read past its time limit)."""


class ReadLimitError(NotASessionDatabaseError):
    """A read of a file opened read-only ran past its time limit (``read_timeout``, 60 s by
    default) and was stopped: the file makes SQLite work without end (a view that never
    ends, say), or is huge beyond what the limit allows (raise it then). Nothing was written;
    the command line exits 3."""


class StoreBusyError(SessionRecallError):
    """A write waited its whole time for the store and did not get it: on SQLite another
    process held the file's write lock for longer than ``busy_timeout`` (30 s by default).

    Nothing of the write was stored; trying it again later is safe. Importers and
    :class:`~langchain_session_recall.recorder.SessionRecorder` retry it themselves first
    (:class:`~langchain_session_recall.backends.retry.WriteRetry`).
    """


class EmptyQueryError(SessionRecallError, ValueError):
    """The query holds nothing searchable (only punctuation, operators or control characters).

    :func:`~langchain_session_recall.core.query.parse_query` and ``search_sessions`` raise it
    for such text; the retriever returns no Documents instead (a user's emoji must not crash a
    chain), the agent tool answers with an error message that asks for keywords, and the CLI
    exits 2. An empty or whitespace-only query is not an error: it lists recent sessions.
    """


class InvalidArgumentError(SessionRecallError, ValueError):
    """An argument the library cannot use as given (a bad date, a bad setting, a selection
    that would be everything); the message names the argument and a good value."""


class InvalidOptionError(SessionRecallError, TypeError):
    """An option the callee does not know, or an input of the wrong kind; the message lists
    what it takes."""


class StoreUnavailableError(SessionRecallError, ConnectionError):
    """The store's server could not be reached (PostgreSQL: wrong host, port, user or
    password, or the server is down). Nothing was read or written; the message names the
    server (never the password) and what to check."""


class ImportSourceError(SessionRecallError):
    """The import source cannot be read at all (missing file, wrong format)."""


class ImportWorkerError(SessionRecallError):
    """A process reading an import's source beside the importing one stopped (killed, out of
    memory). What the import wrote before stays; running it again adds the rest (``workers=1``
    reads in the importing process alone)."""


class RefusedEncodingError(SessionRecallError, ValueError):
    """A checkpoint stored in an encoding that can run code (``pickle``) or is unknown."""


class MissingFeatureError(SessionRecallError):
    """An optional part of the package is not installed (the CLI exits 2 with the install
    command)."""


class EmptySummaryError(SessionRecallError):
    """The model answered with no text. Retried: a second sample usually has content."""


class EmbeddingMismatchError(SessionRecallError):
    """The store's passage vectors were made by another embedding model (or another window
    layout) than the one given: their similarities would mean nothing.

    Pass the model the store names, or rebuild the vectors with the new one
    (``SessionStore(..., embeddings=new, reindex_embeddings=True)`` or ``session-recall embed
    --reindex``); see ``docs/hybrid.md``.
    """


class NoVectorsError(SessionRecallError):
    """A hybrid search on a store that holds no passage vectors (never embedded, or opened
    read-only). Build them once (``session-recall embed``, or open the store with
    ``embeddings=`` and call ``embed_missing()``), or search without embeddings."""
