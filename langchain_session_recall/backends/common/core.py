"""The contract's hooks, opening and closing, reads and writes in transactions."""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from typing_extensions import Self

from langchain_session_recall.backends import sql
from langchain_session_recall.backends.hits import MATCH_LIMIT
from langchain_session_recall.core.query import ParsedQuery
from langchain_session_recall.errors import (
    ReadOnlyStoreError,
    SessionRecallError,
)
from langchain_session_recall.messages import (
    MessageRow,
)
from langchain_session_recall.models import (
    MessageHit,
    SearchFilters,
    Session,
    SessionHit,
)

_NO_FILTERS = SearchFilters()


@dataclass(frozen=True, slots=True)
class StoreCheck:
    """What :meth:`SessionBackend.check` looked at, and what it found wrong."""

    ok: bool
    checked: tuple[str, ...]
    problems: tuple[str, ...] = field(default_factory=tuple)


class StoreCore(ABC):
    """The contract's hooks (what a backend supplies), opening and closing, and transactions."""

    rank_window: int = 5_000
    """Most matches one full-text query ranks (see :meth:`match_messages`): a word found in
    more messages is ranked over its newest ones. Set it per instance to trade latency on very
    common words for exhaustiveness."""

    def __init__(self, *, read_only: bool) -> None:
        self.read_only = read_only
        self.store_id = uuid.uuid4().hex
        """Identifies this open store (Document metadata, log lines); never reused."""
        self._closed = False

    @property
    @abstractmethod
    def dialect(self) -> sql.Dialect:
        """How this backend writes the shared statements."""

    @abstractmethod
    def _connection(self) -> Any:
        """A context manager giving a connection for reads (inside :meth:`transaction` on
        this thread, the block's own connection, so reads see its writes)."""

    @abstractmethod
    def _write_transaction(self, *, bulk: bool = False) -> Any:
        """A context manager giving a connection inside one transaction, or a savepoint when
        this thread is inside :meth:`transaction` already. ``bulk``: the outermost
        :meth:`transaction` block, which may yield the lock to single writes."""

    @abstractmethod
    def _block(self, conn: Any) -> Any:
        """A context manager around the body of an outermost :meth:`transaction` block."""

    @abstractmethod
    def _in_block(self) -> bool:
        """Whether this thread is inside :meth:`transaction`."""

    @abstractmethod
    def _append_rows(
        self, conn: Any, session_id: str, rows: Sequence[MessageRow]
    ) -> list[int] | None:
        """Insert a batch (not empty) into ``messages`` (and the backend's CJK index) after
        the session's last message, and add it to the session's ``message_count``, the
        session's row locked meanwhile; the batch's ids, in order, or ``None`` (nothing
        written) when the session does not exist."""

    def _create_session(self, fields: dict[str, Any], header: str) -> Session | None:
        """Create the session of ``fields`` (the columns :func:`sql.insert_session` binds)
        with its ``header`` indexed, in one statement that commits on its own (a savepoint
        inside :meth:`transaction`), where the backend can; the new session, or ``None``
        (nothing written) when the session exists, its parent does not, or the backend has
        no such statement: then the general path of ``add_session`` runs."""
        return None

    def _append_alone(self, session_id: str, rows: Sequence[MessageRow]) -> list[int] | None:
        """:meth:`_append_rows` in one statement that commits on its own (a savepoint inside
        :meth:`transaction`), where the backend can; ``None`` (nothing written) otherwise, or
        when the session does not exist: then the general path of ``add_messages`` runs."""
        return None

    @abstractmethod
    def _put_header(self, conn: Any, session_id: str, header: str) -> None:
        """Index the session's header (title and date words, see ``core/headers.py``)."""

    def _has_import_runs(self) -> bool:
        """Whether the store has the ``import_runs`` table (a file of an older version opened
        read-only has not: its ledger is its rows alone)."""
        return True

    def _before_batch(self) -> None:  # noqa: B027 - an optional hook
        """Called before each batch of messages is written, outside its transaction."""

    def _before_delete(self) -> None:  # noqa: B027 - an optional hook
        """Called before sessions are deleted, outside the deleting transaction."""

    def _wrote(self, session_ids: Iterable[str], *, in_block: bool) -> None:  # noqa: B027
        """Called after a write of messages to ``session_ids`` committed (``in_block``: inside
        :meth:`transaction`, which commits later); passage vectors hook in here
        (:class:`~langchain_session_recall.backends.vectors.store.StoreVectors`)."""

    def _flush_vectors(self) -> None:  # noqa: B027 - an optional hook
        """Called when a :meth:`transaction` block has committed."""

    @contextmanager
    def _deleting(self, conn: Any, session_ids: Sequence[str]) -> Iterator[None]:
        """Around the deletion of ``session_ids`` (their messages, then them): a backend
        deletes its own rows of them first (SQLite: the header index)."""
        yield

    def _clearing_messages(self, conn: Any, session_id: str) -> None:  # noqa: B027
        """Before the messages of ``session_id`` are deleted and others take their place
        (:meth:`replace_messages`): passage vectors drop the session's windows here."""

    @abstractmethod
    def _size_bytes(self, conn: Any) -> int:
        """Space the store takes on disk."""

    @abstractmethod
    def _index_check(self) -> StoreCheck:
        """The backend's own integrity checks (full-text index, file)."""

    @abstractmethod
    def _close(self) -> None:
        """Release every connection."""

    @abstractmethod
    def describe(self) -> str:
        """Where the store lives, for messages and ``repr``; never shows a password."""

    @abstractmethod
    def match_messages(
        self,
        query: ParsedQuery,
        reading: Literal["strict", "relaxed"],
        *,
        filters: SearchFilters = _NO_FILTERS,
        limit: int | None = MATCH_LIMIT,
        automation: Sequence[str] = (),
        per_session: int | None = None,
        sessions: int | None = None,
    ) -> list[MessageHit]:
        """Messages matching one reading of the query, best first, with every filter applied
        inside the full-text query.

        The contract every backend honours (``langchain_session_recall.testing`` checks it):
        each message at most once, however many indexes found it (with its best relevance);
        best first, i.e. relevance descending (positive, higher is better; comparable only
        within one call), equal relevance in ascending message id; at most ``limit`` hits
        (``None``: no cap). Messages of ``automation`` sources get a budget of their own
        (:func:`~langchain_session_recall.backends.hits.budget_automation`): at most ``limit``
        hits of other sources plus at most ``max(1, limit // 4)`` of automation sources.

        ``per_session`` makes the hits complete at session level: besides the best ``limit``
        (with their budget), every other session with a ranked match comes back with its best
        ``per_session`` matches, however many matches other sessions have; so a long session
        of short lines cannot crowd out another, and each session costs a bounded number of
        hits. With ``limit=None`` only each session's best ``per_session`` come back.
        ``sessions`` bounds that: only the best ``sessions`` sessions (ordered by their best
        match, then session id) bring their best ``per_session``, and sessions of
        ``automation`` sources have :func:`~langchain_session_recall.backends.hits.seats` of
        their own; a session still competes however many matches the others have, and what
        comes back no longer grows with the number of sessions a word occurs in.
        A word matched by more than :attr:`rank_window` messages is ranked over its newest
        ``rank_window`` matches only. :func:`~langchain_session_recall.backends.hits.best_hits`
        merges what several indexes found into this shape."""

    @abstractmethod
    def optimize(self) -> None:
        """Maintenance: merge index segments, refresh planner statistics."""

    @abstractmethod
    def match_sessions(
        self,
        query: ParsedQuery,
        reading: Literal["strict", "relaxed"],
        *,
        filters: SearchFilters = _NO_FILTERS,
        limit: int = MATCH_LIMIT,
    ) -> list[SessionHit]:
        """Sessions whose header (title, start date in words) matches one reading of the
        query, each once, best first (relevance descending, then session id), at most
        ``limit``, with the session-level filters applied (a role filter matches no header); a
        file without headers (e.g. a Hermes ``state.db``) has none."""

    def vocabulary(self, prefix: str, *, limit: int = 100_000) -> list[tuple[str, int]]:
        """Indexed words starting with ``prefix`` with their document counts, for typo
        correction; a backend that cannot list its vocabulary cheaply returns ``[]``."""
        return []

    def prefix_completions(self, prefix: str, limit: int) -> tuple[list[str], int] | None:
        """The ``limit`` indexed words that most messages hold among those a prefix query for
        ``prefix`` matches (as the index stores them), and how many such words there are; a
        search matches a prefix as these words
        (:func:`~langchain_session_recall.core.query.complete_prefixes`). ``None`` when the
        backend cannot list its vocabulary cheaply: the prefix is matched as written."""
        return None

    def close(self) -> None:
        """Close every connection this store opened (idempotent)."""
        self._closed = True
        self._close()

    def _check_open(self) -> None:
        if self._closed:
            raise SessionRecallError(f"{type(self).__name__} is closed")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = "read-only" if self.read_only else "read-write"
        return f"{type(self).__name__}({self.describe()!r}, {mode})"

    @contextmanager
    def _read(self) -> Iterator[Any]:
        self._check_open()
        with self._connection() as conn:
            yield conn

    def _check_writable(self) -> None:
        self._check_open()
        if self.read_only:
            raise ReadOnlyStoreError(
                f"{self.describe()} was opened read-only; open it without read_only=True "
                "(or --read-only) to write"
            )

    @contextmanager
    def _write(self, *, bulk: bool = False) -> Iterator[Any]:
        self._check_writable()
        with self._write_transaction(bulk=bulk) as conn:
            yield conn

    @contextmanager
    def transaction(self) -> Iterator[Self]:
        """Make every write inside the block one transaction: all of it lands, or none.

        A write that fails inside the block is rolled back on its own (a savepoint), so
        catching its error and going on is safe; an exception that leaves the block undoes it
        all. Reads inside the block on the same thread see its writes; other connections see
        them when it ends. Blocks nest. Bulk loads go faster this way (one commit for many
        sessions; SQLite also indexes the block's messages in one pass when it ends).

        Raises:
            ReadOnlyStoreError: the store was opened read-only.

        Example:
            >>> from langchain_session_recall.backends import open_store
            >>> store = open_store(":memory:")
            >>> with store.transaction():
            ...     for n in range(3):
            ...         _ = store.add_session(f"s{n}")
            ...         _ = store.add_messages(f"s{n}", [{"role": "user", "content": "hi"}])
            >>> store.stats()["messages"]
            3
        """
        if self._in_block():
            with self._write():
                yield self
            return
        with self._write(bulk=True) as conn, self._block(conn):
            yield self
        self._flush_vectors()  # the block's sessions, now committed
