"""The session store contract, and everything both backends share.

:class:`SessionBackend` is what the retriever, summarizer, tool, recorder, importers and CLI
call; :class:`~langchain_session_recall.backends.sqlite.SessionStore` and
:class:`~langchain_session_recall.backends.postgres.PostgresSessionStore` are its two
implementations. Everything that is not dialect is written here once: the rules of the write
path (argument checks, parent and cycle checks, updates), the import ledger, the summary cache,
lineage, row decoding, recent sessions, statistics, transactions and closing. A backend
supplies its connections, its :class:`~langchain_session_recall.backends.sql.Dialect`, its bulk
message insert and its full-text search.

One async model for both backends: the store's I/O is synchronous, and the async paths of the
retriever, summarizer and tool run it in LangChain's executor (``run_in_executor``), each
thread with its own SQLite connection or pooled PostgreSQL connection.
"""

from __future__ import annotations

import json
import math
import time
import uuid
import weakref
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from langchain_session_recall.backends import sql
from langchain_session_recall.core.automation import collapse_repeated_runs
from langchain_session_recall.core.headers import session_header
from langchain_session_recall.core.lineage import (
    chain_order,
    cycle_of,
    lineage_path,
    oldest,
    resolve_root,
)
from langchain_session_recall.core.query import ParsedQuery
from langchain_session_recall.errors import (
    InvalidArgumentError,
    InvalidMessageError,
    InvalidSessionError,
    LineageCycleError,
    ReadOnlyStoreError,
    SessionNotFoundError,
    SessionRecallError,
)
from langchain_session_recall.messages import (
    MessageLike,
    MessageRow,
    decode_content,
    is_finite_number,
    storable_text,
    to_row,
)
from langchain_session_recall.models import (
    HIDDEN_SOURCES,
    CachedSummary,
    CacheStatus,
    MessageHit,
    RecentSession,
    SearchFilters,
    Session,
    SessionHit,
    StoredMessage,
    as_float,
)
from langchain_session_recall.transcript import preview
from langchain_session_recall.vectors.store import StoreVectors

__all__ = ["SessionBackend", "StoreCheck"]

_NO_FILTERS = SearchFilters()
_LEDGER_CHUNK = 500  # keys looked up per ledger query
DEFAULT_SOURCE = "cli"
"""The source of a session created without one."""


@dataclass(frozen=True, slots=True)
class StoreCheck:
    """What :meth:`SessionBackend.check` looked at, and what it found wrong."""

    ok: bool
    checked: tuple[str, ...]
    problems: tuple[str, ...] = field(default_factory=tuple)


def _count(value: Any) -> int:
    number = as_float(value)
    return int(number) if math.isfinite(number) else 0


def _session(row: Sequence[Any]) -> Session:
    """A ``sessions`` row (columns of :data:`sql.SESSION_FIELDS`); junk values never raise."""
    return Session(
        id=str(row[0]),
        source=str(row[1] or "unknown"),
        started_at=as_float(row[2]),
        user_id=row[3],
        model=row[4],
        title=row[5],
        parent_session_id=row[6],
        ended_at=None if row[7] is None else as_float(row[7]),
        end_reason=row[8],
        message_count=_count(row[9]),
    )


def _message(row: Sequence[Any]) -> StoredMessage:
    """A ``messages`` row; malformed tool-call JSON from another writer shows no calls."""
    calls: Any = None
    if row[6]:
        try:
            calls = json.loads(row[6])
        except (ValueError, TypeError, RecursionError):
            calls = None
    return StoredMessage(
        id=int(row[0]),
        session_id=str(row[1]),
        role=str(row[2] or "unknown").lower(),
        content=decode_content(row[3]),
        timestamp=as_float(row[4]),
        tool_call_id=row[5],
        tool_calls=calls if isinstance(calls, list) else None,
        tool_name=row[7],
    )


def _validate_session_args(
    session_id: object, source: object, started_at: object = None, **ids: str | None
) -> None:
    if started_at is not None and not is_finite_number(started_at):
        # SQLite stores NaN as NULL (a NOT NULL error), PostgreSQL keeps it: refused on both.
        raise InvalidSessionError(f"started_at must be finite Unix seconds, got {started_at!r}")
    if not isinstance(session_id, str) or not session_id:
        raise InvalidSessionError("session_id must be a non-empty string")
    if not isinstance(source, str) or not source:
        raise InvalidSessionError("source must be a non-empty string")
    # An identifier with a NUL cannot be stored as given on PostgreSQL (its text has no NUL):
    # dropped, "alice\x00" would become another user's "alice". One with a lone surrogate
    # cannot be encoded (UTF-8) on either; replaced, it would be another id. Both refused.
    for name, value in {"session_id": session_id, "source": source, **ids}.items():
        if isinstance(value, str) and "\x00" in value:
            raise InvalidSessionError(f"{name} must not contain NUL characters")
        if isinstance(value, str) and storable_text(value) != value:
            raise InvalidSessionError(
                f"{name} is not valid Unicode text (it holds a lone surrogate)"
            )


def _ledger_key(key: object) -> str:
    """An import's external key as stored: text without NUL (PostgreSQL cannot hold it) or a
    lone surrogate (UTF-8 cannot encode it); changed, it would no longer find its row."""
    if not isinstance(key, str) or "\x00" in key or storable_text(key) != key:
        raise InvalidMessageError(
            f"import key {str(key)[:80]!r} must be text without NUL or lone surrogates"
        )
    return key


def _session_updates(**given: Any) -> dict[str, Any]:
    """The columns ``add_session`` changes on an existing session: those given (not ``None``)."""
    if given.get("started_at") is not None:
        given["started_at"] = float(given["started_at"])
    return {k: v for k, v in given.items() if v is not None}


class SessionBackend(StoreVectors, ABC):
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

    _registry: ClassVar[weakref.WeakValueDictionary[str, SessionBackend]] = (
        weakref.WeakValueDictionary()
    )

    rank_window: int = 5_000
    """Most matches one full-text query ranks (see :meth:`match_messages`): a word found in
    more messages is ranked over its newest ones. Set it per instance to trade latency on very
    common words for exhaustiveness."""

    def __init__(self, *, read_only: bool) -> None:
        self.read_only = read_only
        self.store_id = uuid.uuid4().hex
        """Identifies this open store in Document metadata (see :meth:`lookup`)."""
        self._closed = False
        SessionBackend._registry[self.store_id] = self

    # ------------------------------------------------------------------ backend hooks

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
    def _insert_messages(
        self, conn: Any, session_id: str, rows: Sequence[MessageRow], first: int
    ) -> list[int]:
        """Insert a batch into ``messages`` (and the backend's CJK index), at positions
        ``first``, ``first + 1``, ... of the session; their ids, in order."""

    @abstractmethod
    def _put_header(self, conn: Any, session_id: str, header: str) -> None:
        """Index the session's header (title and date words, see ``core/headers.py``)."""

    def _before_batch(self) -> None:
        """Called before each batch of messages is written, outside its transaction."""

    def _before_delete(self) -> None:
        """Called before sessions are deleted, outside the deleting transaction."""

    @contextmanager
    def _deleting(self, conn: Any, session_ids: Sequence[str]) -> Iterator[None]:
        """Around the deletion of ``session_ids`` (their messages, then them): a backend
        deletes its own rows of them first (SQLite: the header index)."""
        yield

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
        limit: int | None = 200,
        automation: Sequence[str] = (),
        per_session: int | None = None,
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
        limit: int = 200,
    ) -> list[SessionHit]:
        """Sessions whose header (title, start date in words) matches one reading of the
        query, each once, best first (relevance descending, then session id), at most
        ``limit``, with the session-level filters applied (a role filter matches no header); a
        file without headers (e.g. a Hermes ``state.db``) has none."""

    def vocabulary(self, prefix: str, *, limit: int = 100_000) -> list[tuple[str, int]]:
        """Indexed words starting with ``prefix`` with their document counts, for typo
        correction; a backend that cannot list its vocabulary cheaply returns ``[]``."""
        return []

    # ------------------------------------------------------------------ opening and closing

    @classmethod
    def lookup(cls, store_id: str | None) -> SessionBackend | None:
        """The open store with this ``store_id`` (as found in Document metadata), if any.

        Example:
            >>> from langchain_session_recall.backends import open_store
            >>> store = open_store(":memory:")
            >>> SessionBackend.lookup(store.store_id) is store, SessionBackend.lookup("x")
            (True, None)
        """
        found = cls._registry.get(store_id) if store_id else None
        return found if isinstance(found, cls) else None

    def close(self) -> None:
        """Close every connection this store opened (idempotent)."""
        self._closed = True
        SessionBackend._registry.pop(self.store_id, None)
        self._close()

    def _check_open(self) -> None:
        if self._closed:
            raise SessionRecallError(f"{type(self).__name__} is closed")

    def __enter__(self) -> SessionBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = "read-only" if self.read_only else "read-write"
        return f"{type(self).__name__}({self.describe()}, {mode})"

    @contextmanager
    def _read(self) -> Iterator[Any]:
        self._check_open()
        with self._connection() as conn:
            yield conn

    @contextmanager
    def _write(self, *, bulk: bool = False) -> Iterator[Any]:
        self._check_open()
        if self.read_only:
            raise ReadOnlyStoreError(
                f"{self.describe()} was opened read-only; open it without read_only=True "
                "(or --read-only) to write"
            )
        with self._write_transaction(bulk=bulk) as conn:
            yield conn

    @contextmanager
    def transaction(self) -> Iterator[SessionBackend]:
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

    # ------------------------------------------------------------------ writing

    def add_session(
        self,
        session_id: str,
        *,
        source: str | None = None,
        parent_session_id: str | None = None,
        model: str | None = None,
        title: str | None = None,
        user_id: str | None = None,
        started_at: float | None = None,
        end_reason: str | None = None,
    ) -> Session:
        """Create a session, or update the given fields of an existing one.

        A new session without a ``source`` gets :data:`DEFAULT_SOURCE` (``"cli"``); on an
        existing session a field left ``None`` keeps its value, and any value given, ``"cli"``
        included, replaces it.

        Raises:
            ValueError: ``session_id`` or ``source`` is empty, or ``started_at`` is not a
                finite number (:class:`~langchain_session_recall.errors.InvalidSessionError`).
            SessionNotFoundError: ``parent_session_id`` does not exist.
            LineageCycleError: the parent would make the session its own ancestor.
        """
        _validate_session_args(
            session_id,
            DEFAULT_SOURCE if source is None else source,
            started_at,
            user_id=user_id,
            parent_session_id=parent_session_id,
        )
        d = self.dialect
        with self._write() as conn:
            exists = conn.execute(sql.session_exists(d), {"id": session_id}).fetchone()
            if parent_session_id is not None:
                self._check_parent(conn, session_id, parent_session_id)
            if not exists:
                inserted = conn.execute(
                    sql.insert_session(d),
                    {
                        "id": session_id,
                        "source": d.text(DEFAULT_SOURCE if source is None else source),
                        "user_id": d.text(user_id),
                        "model": d.text(model),
                        "title": d.text(title),
                        "parent_session_id": parent_session_id,
                        "started_at": time.time() if started_at is None else float(started_at),
                        "end_reason": d.text(end_reason),
                    },
                )
                exists = inserted.rowcount == 0  # created meanwhile by another writer
            if exists:
                updates = _session_updates(
                    source=d.text(source),
                    parent_session_id=parent_session_id,
                    model=d.text(model),
                    title=d.text(title),
                    user_id=d.text(user_id),
                    started_at=started_at,
                    end_reason=d.text(end_reason),
                )
                if updates:
                    conn.execute(
                        sql.update_session(d, list(updates)), {**updates, "id": session_id}
                    )
            session = _session(conn.execute(sql.session_by_id(d), {"id": session_id}).fetchone())
            self._put_header(conn, session_id, session_header(session.title, session.started_at))
        return session

    def _check_parent(self, conn: Any, session_id: str, parent: str) -> None:
        if parent == session_id:
            raise LineageCycleError(f"session {session_id!r} cannot be its own parent")
        d = self.dialect
        if not conn.execute(sql.session_exists(d), {"id": parent}).fetchone():
            raise SessionNotFoundError(
                f"parent session {parent!r} does not exist; add it before its children"
            )
        rows = conn.execute(
            sql.ancestors(d, user_scoped=False), {"ids": d.array([parent])}
        ).fetchall()
        if session_id in {r[0] for r in rows}:
            raise LineageCycleError(
                f"making {parent!r} the parent of {session_id!r} would create a cycle: "
                f"{session_id!r} is already an ancestor of {parent!r}"
            )

    def add_messages(self, session_id: str, messages: Iterable[MessageLike]) -> list[int]:
        """Append messages to a session in one transaction; returns their ids.

        Every message is validated before anything is written: an invalid one raises
        :class:`~langchain_session_recall.errors.InvalidMessageError` and nothing of the batch
        is stored.

        Raises:
            SessionNotFoundError: the session does not exist (call :meth:`add_session`).
        """
        now = time.time()
        rows = [to_row(m, now=now) for m in messages]
        self._before_batch()
        with self._write() as conn:
            ids = self._append(conn, session_id, rows)
        self._wrote([session_id], in_block=self._in_block())
        return ids

    def _append(self, conn: Any, session_id: str, rows: Sequence[MessageRow]) -> list[int]:
        d = self.dialect
        found = conn.execute(sql.session_exists(d), {"id": session_id}).fetchone()
        if not found:
            raise SessionNotFoundError(
                f"session {session_id!r} does not exist; call add_session() first"
            )
        if not rows:
            return []
        ids = self._insert_messages(conn, session_id, rows, _count(found[0]))
        conn.execute(sql.bump_message_count(d), {"n": len(rows), "id": session_id})
        return ids

    def import_messages(
        self,
        session_id: str,
        messages: Sequence[tuple[str, MessageLike]],
        *,
        source_kind: str,
    ) -> list[int]:
        """Add ``(external_key, message)`` pairs not imported before, with their ledger rows.

        Messages and ledger rows go in one transaction, so an import killed half-way leaves a
        consistent store and re-running it adds exactly what is missing. Pairs whose key the
        ledger already holds for ``source_kind`` (in any session) are skipped. Returns the ids
        of the messages added. A key must be text both backends can store as given (no NUL,
        no lone surrogate), else :class:`~langchain_session_recall.errors.InvalidMessageError`
        and nothing of the batch is stored.

        Example:
            >>> from langchain_session_recall.backends import open_store
            >>> store = open_store(":memory:")
            >>> _ = store.add_session("s1")
            >>> pairs = [("line-1", {"role": "user", "content": "hi"})]
            >>> len(store.import_messages("s1", pairs, source_kind="jsonl"))
            1
            >>> store.import_messages("s1", pairs, source_kind="jsonl")
            []
        """
        now = time.time()
        converted = [(_ledger_key(key), to_row(m, now=now)) for key, m in messages]
        d = self.dialect
        self._before_batch()
        with self._write() as conn:
            keys = list(dict.fromkeys(key for key, _ in converted))
            seen: set[str] = set()
            for start in range(0, len(keys), _LEDGER_CHUNK):
                chunk = keys[start : start + _LEDGER_CHUNK]
                params = {"kind": source_kind, "keys": d.array(chunk)}
                seen.update(r[0] for r in conn.execute(sql.ledger_keys(d), params))
            fresh: dict[str, MessageRow] = {}
            for key, row in converted:
                if key not in seen and key not in fresh:
                    fresh[key] = row
            ids = self._append(conn, session_id, list(fresh.values()))
            if ids:
                conn.cursor().executemany(
                    sql.insert_ledger(d),
                    [
                        {
                            "source_kind": source_kind,
                            "external_key": key,
                            "session_id": session_id,
                            "message_id": mid,
                            "imported_at": now,
                        }
                        for key, mid in zip(fresh, ids, strict=True)
                    ],
                )
        if ids:
            self._wrote([session_id], in_block=self._in_block())
        return ids

    def imported_keys(self, source_kind: str, session_id: str) -> set[str]:
        """External keys already imported into ``session_id`` from ``source_kind``."""
        with self._read() as conn:
            rows = conn.execute(
                sql.imported_keys(self.dialect), {"kind": source_kind, "sid": session_id}
            ).fetchall()
        return {str(r[0]) for r in rows}

    def end_session(
        self, session_id: str, *, end_reason: str | None = None, ended_at: float | None = None
    ) -> None:
        """Mark a session ended (``ended_at`` defaults to now).

        Raises:
            SessionNotFoundError: no such session.
        """
        with self._write() as conn:
            cur = conn.execute(
                sql.end_session(self.dialect),
                {
                    "ended_at": time.time() if ended_at is None else float(ended_at),
                    "end_reason": self.dialect.text(end_reason),
                    "id": session_id,
                },
            )
            if cur.rowcount == 0:
                raise SessionNotFoundError(f"session {session_id!r} does not exist")

    # ------------------------------------------------------------------ reading

    def get_session(self, session_id: str) -> Session | None:
        """The session with this id, or ``None``."""
        with self._read() as conn:
            row = conn.execute(sql.session_by_id(self.dialect), {"id": session_id}).fetchone()
        return _session(row) if row else None

    def get_sessions(self, session_ids: Iterable[str]) -> dict[str, Session]:
        """Sessions by id (one query); unknown ids are absent from the result."""
        ids = list(dict.fromkeys(session_ids))
        if not ids:
            return {}
        d = self.dialect
        with self._read() as conn:
            rows = conn.execute(sql.sessions_by_id(d), {"ids": d.array(ids)}).fetchall()
        return {str(row[0]): _session(row) for row in rows}

    def all_session_ids(self) -> list[str]:
        """Ids of every session, oldest first."""
        with self._read() as conn:
            rows = conn.execute(sql.all_session_ids(self.dialect)).fetchall()
        return [str(r[0]) for r in rows]

    def get_messages(self, session_id: str, *, last: int | None = None) -> list[StoredMessage]:
        """All visible messages of one session, oldest first; with ``last``, only the newest
        ``last`` of them (still oldest first), read without reading the rest."""
        if last is not None and last <= 0:
            return []
        statement = sql.session_messages(self.dialect, newest_first=last is not None)
        params: dict[str, Any] = {"sid": session_id}
        if last is not None:
            params["last"] = int(last)
        with self._read() as conn:
            rows = conn.execute(statement, params).fetchall()
        messages = [_message(r) for r in rows]
        return messages[::-1] if last is not None else messages

    def chain_messages(self, root_id: str, *, user_id: str | None = None) -> list[StoredMessage]:
        """Messages of a root session and all its descendants, in time order.

        Tool output is clipped to its first and last 250 characters in SQL. With ``user_id``,
        sessions of other users are left out even when they sit inside the chain.
        """
        ids = self.chain(root_id, user_id=user_id)
        if not ids:
            return []
        d = self.dialect
        statement, params = sql.chain_messages(d)
        with self._read() as conn:
            rows = conn.execute(statement, {**params, "ids": d.array(ids)}).fetchall()
        return [_message(r) for r in rows]

    def recent_sessions(
        self,
        limit: int = 10,
        *,
        exclude_sources: Iterable[str] = HIDDEN_SOURCES,
        exclude_session_ids: Iterable[str] = (),
        user_id: str | None = None,
        after: float | None = None,
        before: float | None = None,
        collapse_sources: Iterable[str] = (),
    ) -> list[RecentSession]:
        """Most recent root sessions with a preview of their first user message.

        The chains of ``exclude_session_ids`` (e.g. the current conversation) are left out.
        Sessions of ``collapse_sources`` (automation: ``("cron", "kanban")``) are listed once
        per job, as their newest run (:func:`~langchain_session_recall.core.automation.
        collapse_repeated_runs`); older runs are read past in pages, so a thousand newer cron
        runs never crowd out the conversations.
        """
        excluded = sorted({self.root_of(sid, user_id=user_id) for sid in exclude_session_ids})
        filters = SearchFilters(
            exclude_sources=tuple(exclude_sources), user_id=user_id, after=after, before=before
        )
        collapse = frozenset(collapse_sources) - set(filters.exclude_sources)
        limit = max(0, int(limit))
        page = limit if not collapse else max(2 * limit, 20)
        out: list[RecentSession] = []
        jobs: set[tuple[str, str, str]] = set()
        offset = 0
        while len(out) < limit:
            statement, params = sql.recent_sessions(
                self.dialect, filters, excluded, page, offset=offset
            )
            with self._read() as conn:
                rows = conn.execute(statement, params).fetchall()
            # A row with a parent is a cycle candidate (it started before its parent): kept
            # only if it is the root of a cycle, i.e. its first-started member.
            listed = [
                self._recent(row) for row in rows if row[12] is None or self._is_cycle_root(row[0])
            ]
            out += collapse_repeated_runs(listed, collapse, jobs) if collapse else listed
            if len(rows) < page:
                break
            offset += page
            page *= 2  # many automation runs in a row: read further faster
        return out[:limit]

    @staticmethod
    def _recent(row: Sequence[Any]) -> RecentSession:
        session = _session(row)
        return RecentSession(
            id=session.id,
            source=session.source,
            started_at=session.started_at,
            title=session.title,
            model=session.model,
            message_count=session.message_count,
            preview=preview([decode_content(row[10])]),
            user_id=session.user_id,
            last_active=None if row[11] is None else as_float(row[11]),
        )

    # ------------------------------------------------------------------ lineage

    def parents_of(
        self, session_ids: Iterable[str], *, user_id: str | None = None
    ) -> dict[str, str | None]:
        """``{session: parent}`` for the given sessions and all their ancestors (one query).

        With ``user_id``, the walk stops at a session of another user.
        """
        ids = list(dict.fromkeys(session_ids))
        if not ids:
            return {}
        d = self.dialect
        params: dict[str, Any] = {"ids": d.array(ids)}
        if user_id is not None:
            params["user_id"] = user_id
        with self._read() as conn:
            rows = conn.execute(sql.ancestors(d, user_scoped=user_id is not None), params)
            return {str(sid): parent for sid, parent in rows}

    def root_of(self, session_id: str, *, user_id: str | None = None) -> str:
        """Root of the session's chain (itself when it has no parent; a parent cycle written
        by another client: its :meth:`first_started` member)."""
        parents = self.parents_of([session_id], user_id=user_id)
        return resolve_root(session_id, parents, cycle_root=self.first_started)

    def first_started(self, session_ids: Sequence[str]) -> str:
        """The session of ``session_ids`` that started first (then the smallest id): the root
        of a parent cycle, in search and in recent mode alike."""
        sessions = self.get_sessions(session_ids)
        return oldest(session_ids, {sid: s.started_at for sid, s in sessions.items()})

    def _is_cycle_root(self, session_id: str) -> bool:
        """Whether the session is the root of a parent cycle (walks its ancestors)."""
        cycle = cycle_of(session_id, self.parents_of([session_id]))
        return bool(cycle) and self.first_started(cycle) == session_id

    def lineage(self, session_id: str) -> list[str]:
        """The session, its parent, ... up to the root (cycle-safe)."""
        return lineage_path(session_id, self.parents_of([session_id]))

    def chain(self, root_id: str, *, user_id: str | None = None) -> list[str]:
        """The root and all its descendants (cycle-safe), root first.

        With ``user_id``, empty unless the root belongs to that user, and sessions of other
        users (and what hangs below them) are left out.
        """
        d = self.dialect
        params: dict[str, Any] = {"root": root_id}
        with self._read() as conn:
            if user_id is not None:
                owner = conn.execute(sql.session_owner(d), {"id": root_id}).fetchone()
                if owner is None or owner[0] != user_id:
                    return []
                params["user_id"] = user_id
            rows = conn.execute(sql.descendants(d, user_scoped=user_id is not None), params)
            pairs = [(str(sid), parent) for sid, parent in rows]
        return chain_order(root_id, pairs) if pairs else []

    # ------------------------------------------------------------------ summary cache

    def get_cached_summary(self, key: str) -> CachedSummary | None:
        """The recap cached under ``key``, with its status, or ``None``."""
        with self._read() as conn:
            row = conn.execute(sql.get_summary(self.dialect), {"key": key}).fetchone()
        if row is None:
            return None
        status: CacheStatus = "rejected" if row[1] == "rejected" else "summarized"
        reasons = tuple(r for r in str(row[3] or "").split(",") if r)
        return CachedSummary(summary=str(row[0]), status=status, model=row[2], reasons=reasons)

    def put_cached_summary(
        self,
        key: str,
        *,
        session_id: str,
        summary: str,
        model: str | None,
        status: CacheStatus = "summarized",
        reasons: Sequence[str] = (),
    ) -> None:
        """Cache a recap under ``key``, with the quality gate's verdict (``status``, and the
        ``reasons`` of a rejection). Raises :class:`ReadOnlyStoreError` on a read-only store (the
        summarizer then caches in memory instead)."""
        with self._write() as conn:
            conn.execute(
                sql.put_summary(self.dialect),
                {
                    "cache_key": key,
                    "session_id": session_id,
                    "summary": self.dialect.text(summary),
                    "model": model,
                    "status": status,
                    "reasons": ",".join(reasons),
                    "created_at": time.time(),
                },
            )

    # ------------------------------------------------------------------ forgetting

    def sessions_to_forget(
        self,
        session_ids: Iterable[str] | None = None,
        *,
        before: float | None = None,
        user_id: str | None = None,
        sources: Iterable[str] = (),
    ) -> list[str]:
        """What :meth:`delete_sessions` would remove for a selection, oldest first: the
        sessions meeting every given condition (among ``session_ids`` when given; started
        before ``before``; of ``user_id``; from one of ``sources``), each with its whole chain
        below it, whoever owns its members. Deletes nothing.

        Raises:
            ValueError: neither sessions nor a condition given (that would be everything).

        Example:
            >>> from langchain_session_recall.backends import open_store
            >>> store = open_store(":memory:")
            >>> _ = store.add_session("a"), store.add_session("a/sub", parent_session_id="a")
            >>> store.sessions_to_forget(["a"])
            ['a', 'a/sub']
        """
        named = None if session_ids is None else list(dict.fromkeys(session_ids))
        wanted = tuple(dict.fromkeys(sources))
        if named is None and before is None and user_id is None and not wanted:
            raise InvalidArgumentError(
                "name sessions to forget, or give --before, --user or --source"
            )
        d = self.dialect
        selection, params = sql.matching_sessions(
            d, named=named is not None, before=before, user_id=user_id, sources=wanted
        )
        if named is not None:
            params["ids"] = d.array(named)
        with self._read() as conn:
            rows = conn.execute(sql.chains_below(d, selection), params).fetchall()
        return [str(r[0]) for r in rows]

    def delete_sessions(self, session_ids: Iterable[str]) -> int:
        """Forget sessions: each with its whole chain below it (sub-agents, continuations),
        in one transaction; returns how many sessions were removed (unknown ids count 0).

        Their messages leave the full-text indexes, their titles the header index; the recaps
        cached for them and for the chains above them (a recap covers its whole chain) are
        dropped; the import ledger keeps their keys with no message, so a re-import leaves
        them out unless asked (``reimport=True``, ``--reimport``). On SQLite the deleted rows'
        pages are zeroed; the words stay in the full-text index's segments until
        :meth:`optimize` merges them, which ``session-recall forget`` does.

        Raises:
            ReadOnlyStoreError: the store was opened read-only.

        Example:
            >>> from langchain_session_recall.backends import open_store
            >>> store = open_store(":memory:")
            >>> _ = store.add_session("a"), store.add_session("a/sub", parent_session_id="a")
            >>> store.delete_sessions(["a"]), store.get_session("a/sub")
            (2, None)
        """
        named = list(dict.fromkeys(session_ids))
        d = self.dialect
        self._before_delete()
        with self._write() as conn:
            if not named:
                return 0
            selection, params = sql.matching_sessions(
                d, named=True, before=None, user_id=None, sources=()
            )
            params["ids"] = d.array(named)
            doomed = [str(r[0]) for r in conn.execute(sql.chains_below(d, selection), params)]
            if not doomed:
                return 0
            ids = {"ids": d.array(doomed)}
            conn.execute(sql.lock_sessions(d), ids).fetchall()
            chains = conn.execute(sql.ancestors(d, user_scoped=False), ids).fetchall()
            above = {"ids": d.array([r[0] for r in chains])}
            conn.execute(sql.delete_of_sessions(d, "summary_cache"), above)
            conn.execute(sql.forget_ledger(d), ids)
            with self._deleting(conn, doomed):
                conn.execute(sql.delete_of_sessions(d, "messages"), ids)
                conn.execute(sql.delete_of_sessions(d, "sessions"), ids)
        return len(doomed)

    async def adelete_sessions(self, session_ids: Iterable[str]) -> int:
        """:meth:`delete_sessions`, run in LangChain's executor."""
        from langchain_core.runnables.config import run_in_executor

        return await run_in_executor(None, self.delete_sessions, list(session_ids))

    def release_forgotten(self, source_kind: str, session_id: str) -> int:
        """Let an import add a forgotten session's messages again: drop its ledger rows from
        ``source_kind`` that name no message (see :meth:`delete_sessions`); returns how many.
        Importers call it for ``reimport=True``.

        Raises:
            ReadOnlyStoreError: the store was opened read-only.
        """
        with self._write() as conn:
            cur = conn.execute(
                sql.release_forgotten(self.dialect), {"kind": source_kind, "sid": session_id}
            )
            return int(cur.rowcount)

    # ------------------------------------------------------------------ statistics

    def stats(self, *, user_id: str | None = None) -> dict[str, Any]:
        """Counts, sources, date range and size: cheap, whatever the store's size (no
        integrity check; see :meth:`check`). With ``user_id``, the counts and dates are of
        that user's sessions and their messages (``size_bytes`` stays the store's).

        Example:
            >>> from langchain_session_recall.backends import open_store
            >>> store = open_store(":memory:")
            >>> _ = store.add_session("a", user_id="ana"), store.add_session("b", user_id="bob")
            >>> store.stats()["sessions"], store.stats(user_id="ana")["sessions"]
            (2, 1)
        """
        queries = sql.stats_queries(self.dialect, scoped=user_id is not None)
        params = {"user_id": user_id}
        with self._read() as conn:
            sessions, first, last = conn.execute(queries.sessions, params).fetchone()
            messages = conn.execute(queries.messages, params).fetchone()[0]
            sources = conn.execute(queries.sources, params).fetchall()
            roots = conn.execute(queries.roots, params).fetchone()[0]
            size = self._size_bytes(conn)
        return {
            "store": self.describe(),
            "backend": self.dialect.name,
            "user_id": user_id,
            "sessions": _count(sessions),
            "root_sessions": _count(roots),
            "messages": _count(messages),
            "sources": {str(k): _count(v) for k, v in sources},
            "first_started_at": None if first is None else as_float(first),
            "last_started_at": None if last is None else as_float(last),
            "size_bytes": int(size),
            "layout": self._layout_name(),
        }

    def count_users(self, *, up_to: int = 2) -> int:
        """How many distinct users own sessions here, counted up to ``up_to`` (cheap: it
        stops at the ``up_to``-th; sessions without a ``user_id`` do not count). The tool
        uses it to warn when a store shared by several users is searched without a tenant.

        Example:
            >>> from langchain_session_recall.backends import open_store
            >>> store = open_store(":memory:")
            >>> _ = store.add_session("a", user_id="ana"), store.add_session("b", user_id="bob")
            >>> store.count_users(), store.count_users(up_to=1)
            (2, 1)
        """
        with self._read() as conn:
            row = conn.execute(sql.count_users(self.dialect), {"limit": max(0, int(up_to))})
            return _count(row.fetchone()[0])

    def _layout_name(self) -> str:
        return "own"

    def check(self) -> StoreCheck:
        """Check the store's integrity: its full-text index against the messages, the file
        (SQLite), and that each session's ``message_count`` matches its messages. Its cost
        grows with the store; :meth:`stats` is the cheap view.

        Example:
            >>> from langchain_session_recall.backends import open_store
            >>> open_store(":memory:").check().ok
            True
        """
        index = self._index_check()
        checked, problems = list(index.checked), list(index.problems)
        if self._layout_name() == "own":  # foreign files count messages their own way
            with self._read() as conn:
                wrong = [str(r[0]) for r in conn.execute(sql.WRONG_MESSAGE_COUNTS)]
                dangling = _count(conn.execute(sql.LEDGER_WITHOUT_MESSAGES).fetchone()[0])
            checked.append("session message counts")
            if wrong:
                problems.append(
                    "message_count disagrees with the stored messages for session(s) "
                    + ", ".join(wrong)
                )
            checked.append("import ledger")
            if dangling:
                problems.append(
                    f"{dangling} import ledger row(s) name a message the store lacks (deleted "
                    "by another client): a re-import will not add those messages again"
                )
        return StoreCheck(ok=not problems, checked=tuple(checked), problems=tuple(problems))
