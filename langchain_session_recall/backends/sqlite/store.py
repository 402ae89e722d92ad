"""``SessionStore``: sessions and messages in one SQLite file with an FTS5 index.

All SQLite I/O of the package lives here. Each statement is built by a small function or is a
module constant; values are always bound parameters. Pure logic (query parsing, ranking,
lineage, formatting) lives in its own module.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import sqlite3
import threading
import time
import uuid
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, Literal

from langchain_core.messages import BaseMessage

from langchain_session_recall.backends.rules import (
    check_ancestors,
    check_parent_exists,
    session_updates,
    validate_session_args,
)
from langchain_session_recall.backends.sqlite.fts import to_fts5
from langchain_session_recall.backends.sqlite.schema import (
    FTS_INDEX_SINCE,
    FTS_INSERT_TRIGGER,
    FTS_INSERT_TRIGGER_NAME,
    SCHEMA_VERSION,
    Layout,
    create_or_migrate,
    detect_layout,
)
from langchain_session_recall.errors import (
    NotASessionDatabaseError,
    ReadOnlyStoreError,
    SessionNotFoundError,
    SessionRecallError,
)
from langchain_session_recall.messages import MessageRow, decode_content, to_row
from langchain_session_recall.models import (
    MessageHit,
    RecentSession,
    SearchFilters,
    Session,
    StoredMessage,
    as_float,
)
from langchain_session_recall.search.cjk import bigram_text, has_cjk
from langchain_session_recall.search.lineage import resolve_root
from langchain_session_recall.search.query import ParsedQuery
from langchain_session_recall.search.ranking import budget_automation
from langchain_session_recall.transcript import (
    TOOL_CLIP_MARKER,
    TOOL_OUTPUT_KEEP,
    TOOL_OUTPUT_LIMIT,
    preview,
)

__all__ = ["SessionStore"]

logger = logging.getLogger(__name__)

MessageLike = BaseMessage | Mapping[str, Any]
_NO_FILTERS = SearchFilters()
_MAX_DEPTH = 256  # lineage walks stop here whatever the data says (cycles, runaway chains)
_SQLITE_HEADER = b"SQLite format 3\x00"
_MAX_PROBED = 12  # terms probed one by one for selectivity (~1 ms each); longer queries skip it


def _count(value: Any) -> int:
    number = as_float(value)
    return int(number) if math.isfinite(number) else 0


# --------------------------------------------------------------------------- SQL builders


def _session_select(layout: Layout) -> str:
    cols = ["s.id", "s.source", "s.started_at"] + [
        layout.session_col(c)
        for c in (
            "user_id",
            "model",
            "title",
            "parent_session_id",
            "ended_at",
            "end_reason",
            "message_count",
        )
    ]
    return f"SELECT {', '.join(cols)} FROM sessions s"


def _message_select(layout: Layout, *, clip_tools: bool) -> str:
    content = "m.content"
    if clip_tools:
        # Long tool output is clipped in SQL so a million-character log never leaves SQLite.
        content = (
            f"CASE WHEN m.role = 'tool' AND length(m.content) > {TOOL_OUTPUT_LIMIT} "
            f"THEN substr(m.content, 1, {TOOL_OUTPUT_KEEP}) || :clip || "
            f"substr(m.content, -{TOOL_OUTPUT_KEEP}) ELSE m.content END"
        )
    return (
        f"SELECT m.id, m.session_id, m.role, {content}, m.timestamp, m.tool_call_id, "
        f"m.tool_calls, m.tool_name FROM messages m"
    )


def _in_clause(column: str, values: Sequence[Any], *, negate: bool = False) -> str:
    marks = ", ".join("?" for _ in values)
    return f"{column} {'NOT IN' if negate else 'IN'} ({marks})"


def _ancestors_query(n: int, user_scoped: bool) -> str:
    scope = " AND p.user_id = ?" if user_scoped else ""
    return f"""
        WITH RECURSIVE up(id, parent, depth) AS (
            SELECT id, parent_session_id, 0 FROM sessions WHERE {_in_clause("id", [0] * n)}
            UNION
            SELECT p.id, p.parent_session_id, up.depth + 1
            FROM up JOIN sessions p ON p.id = up.parent
            WHERE up.depth < {_MAX_DEPTH}{scope}
        )
        SELECT DISTINCT id, parent FROM up
    """


def _descendants_query(user_scoped: bool) -> str:
    scope = " AND c.user_id = ?" if user_scoped else ""
    return f"""
        WITH RECURSIVE down(id, depth) AS (
            SELECT id, 0 FROM sessions WHERE id = ?
            UNION
            SELECT c.id, down.depth + 1 FROM down JOIN sessions c ON c.parent_session_id = down.id
            WHERE down.depth < {_MAX_DEPTH}{scope}
        )
        SELECT DISTINCT id FROM down
    """


def _match_query(
    layout: Layout, fts_table: str, filters: SearchFilters, *, bounded: bool = False
) -> tuple[str, list[Any]]:
    """Message hits for one FTS table, best first, with every filter inside the query.

    Parameters: the MATCH expression, then (``bounded``) the rowid the matches must exceed,
    then ``params``, then the LIMIT.
    """
    # ``ORDER BY rank`` (not ``bm25(...)``) lets FTS5 sort its own matches before the joins, so
    # LIMIT stops the join early; ordering by a function call sorts every joined row first.
    rank = "rank"
    where = [f"{fts_table} MATCH ?", layout.visibility]
    if bounded:  # FTS5 applies a rowid range itself, before it ranks anything
        where.insert(1, f"{fts_table}.rowid > ?")
    params: list[Any] = []
    if filters.role_filter:
        where.append(_in_clause("m.role", filters.role_filter))
        params.extend(filters.role_filter)
    if filters.exclude_sources:
        where.append(_in_clause("s.source", filters.exclude_sources, negate=True))
        params.extend(filters.exclude_sources)
    if filters.exclude_session_ids:
        where.append(_in_clause("m.session_id", filters.exclude_session_ids, negate=True))
        params.extend(filters.exclude_session_ids)
    if filters.user_id is not None:
        where.append("s.user_id = ?")
        params.append(filters.user_id)
    if filters.after is not None:
        where.append("s.started_at >= ?")
        params.append(filters.after)
    if filters.before is not None:
        where.append("s.started_at < ?")
        params.append(filters.before)
    sql = (
        f"SELECT m.id, m.session_id, m.role, -{rank} AS relevance, s.source, m.timestamp "
        f"FROM {fts_table} JOIN messages m ON m.id = {fts_table}.rowid "
        f"JOIN sessions s ON s.id = m.session_id "
        f"WHERE {' AND '.join(where)} ORDER BY {rank} LIMIT ?"
    )
    return sql, params


def _window_probe_query(fts_table: str) -> str:
    """The rowid of the ``OFFSET``-th newest match: FTS5 walks its doclists in rowid order and
    stops there, without ranking (a few microseconds per row instead of a few per ranked row)."""
    return (
        f"SELECT rowid FROM {fts_table} WHERE {fts_table} MATCH ? "
        "ORDER BY rowid DESC LIMIT 1 OFFSET ?"
    )


_INSERT_MESSAGE = (
    "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, "
    "timestamp) VALUES "
)
_INSERT_CJK = "INSERT OR REPLACE INTO messages_cjk (message_id, text) VALUES "
# Rows per multi-row INSERT: 100 rows of up to 7 values stay under SQLite's oldest default
# limit of 999 bound parameters.
_ROWS_PER_INSERT = 100


@dataclass(slots=True)
class _Block:
    """State of a :meth:`SessionStore.transaction` block on one thread."""

    batches: int = 0
    indexed_through: int | None = None
    """Set once indexing is deferred: the block indexes messages above this id when it ends."""


def _insert_many(conn: sqlite3.Connection, insert: str, rows: Sequence[tuple[Any, ...]]) -> None:
    """Insert ``rows`` with multi-row ``INSERT ... VALUES (...), (...)`` statements.

    Not ``executemany``: each statement that fires an FTS trigger opens a statement journal,
    and FTS5 flushes its pending index data to a new segment at every such savepoint. One
    statement per row would write (and later merge) one segment per message; one statement per
    chunk cuts ingest time by a third or more.
    """
    width = len(rows[0])
    one = "(" + ", ".join("?" * width) + ")"
    for start in range(0, len(rows), _ROWS_PER_INSERT):
        chunk = rows[start : start + _ROWS_PER_INSERT]
        conn.execute(insert + ", ".join([one] * len(chunk)), [v for row in chunk for v in row])


_CREATE_VOCAB = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.session_recall_vocab "
    "USING fts5vocab(main, messages_fts, row)"
)
_VOCAB_QUERY = (
    "SELECT term, doc FROM temp.session_recall_vocab WHERE term >= ? AND term < ? LIMIT ?"
)


# --------------------------------------------------------------------------- the store


class SessionStore:
    """Sessions and messages in one SQLite file, searchable with FTS5.

    Opening a path creates the schema when the file is new (WAL journal, foreign keys on). Each
    thread gets its own connection, writes are serialized by a lock and a busy timeout, so
    several threads can read while one writes.

    Args:
        path: Database file, or ``":memory:"`` for a private in-memory store.
        read_only: Open someone else's database without ever writing to it: no schema
            creation, no migration, no checkpoint, no new files beside it.
        busy_timeout: Seconds to wait for another writer's lock.

    Example:
        >>> store = SessionStore(":memory:")
        >>> _ = store.add_session("s1", title="CORS fix")
        >>> _ = store.add_messages("s1", [{"role": "user", "content": "fix the CORS error"}])
        >>> store.get_session("s1").message_count
        1
    """

    rank_window: int = 5_000
    """Most rows one full-text query ranks (see :meth:`match_messages`); set it per instance to
    trade latency on very common words for exhaustiveness."""

    _registry: ClassVar[weakref.WeakValueDictionary[str, SessionStore]] = (
        weakref.WeakValueDictionary()
    )

    def __init__(
        self,
        path: str | os.PathLike[str] = ":memory:",
        *,
        read_only: bool = False,
        busy_timeout: float = 5.0,
    ) -> None:
        self.path = str(path)
        self.read_only = read_only
        self.busy_timeout = busy_timeout
        self.store_id = uuid.uuid4().hex
        self._memory = self.path == ":memory:"
        self._local = threading.local()
        self._write_lock = threading.RLock()
        self._all_conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()
        self._generation = 0
        self._immutable = False
        self._file_state: tuple[int, int, int] | None = None
        self._closed = False
        if self._memory and read_only:
            raise ValueError("an in-memory store cannot be read-only")
        if read_only:
            self._check_file()
        self._shared: sqlite3.Connection | None = None
        conn = self._conn()
        layout = self._detect(conn)
        if not read_only:
            if layout is None or layout.own:
                if layout is not None and (layout.version or 0) > SCHEMA_VERSION:
                    raise NotASessionDatabaseError(
                        f"{self.path} has schema version {layout.version}, newer than this "
                        f"library's {SCHEMA_VERSION}; upgrade langchain-session-recall"
                    )
                with self._write_lock:
                    if not self._memory:  # persistent; set only once the file is known ours
                        conn.execute("PRAGMA journal_mode = WAL")
                    create_or_migrate(conn)
                layout = self._detect(conn)
            else:
                raise NotASessionDatabaseError(
                    f"{self.path} is a session database of another program (e.g. a Hermes "
                    "state.db); open it with SessionStore(path, read_only=True) or "
                    "SessionStore.open_hermes(path), or import it into a store of your own"
                )
        if layout is None:
            raise NotASessionDatabaseError(
                f"{self.path} is not a session database: it has no 'sessions' and 'messages' tables"
            )
        if layout.fts_columns == 0:
            raise NotASessionDatabaseError(
                f"{self.path} has no 'messages_fts' full-text index; it cannot be searched"
            )
        self.layout: Layout = layout
        SessionStore._registry[self.store_id] = self

    # ------------------------------------------------------------------ opening

    @classmethod
    def open_hermes(cls, path: str | os.PathLike[str] | None = None) -> SessionStore:
        """Open a Hermes agent ``state.db`` read-only (default ``~/.hermes/state.db``).

        Example:
            >>> SessionStore.open_hermes("/nonexistent/state.db")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            langchain_session_recall.errors.NotASessionDatabaseError: no such file: ...
        """
        if path is None:
            path = Path.home() / ".hermes" / "state.db"
        return cls(path, read_only=True)

    @classmethod
    def lookup(cls, store_id: str | None) -> SessionStore | None:
        """The live store with this ``store_id`` (as found in Document metadata), if any."""
        return cls._registry.get(store_id) if store_id else None

    def _check_file(self) -> None:
        path = Path(self.path)
        if not path.is_file():
            raise NotASessionDatabaseError(f"no such file: {self.path}")
        with path.open("rb") as fh:
            header = fh.read(100)
        if not header.startswith(_SQLITE_HEADER):
            raise NotASessionDatabaseError(f"{self.path} is not an SQLite database")
        wal_mode = len(header) > 19 and header[18] == 2 and header[19] == 2
        # SQLite's read-only mode still creates -wal and -shm for a WAL-mode file that has none.
        # Such a file is fully checkpointed and has no writer, so it can be read as immutable;
        # _conn() switches to the ordinary read-only mode as soon as a writer appears.
        self._immutable = wal_mode and not Path(self.path + "-wal").exists()
        self._file_state = self._stat_file()

    def _stat_file(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def _uri(self) -> str:
        quoted = Path(self.path).resolve().as_posix().replace("?", "%3f").replace("#", "%23")
        if self._immutable:
            return f"file:{quoted}?mode=ro&immutable=1"
        return f"file:{quoted}?mode=ro"

    def _open_connection(self) -> sqlite3.Connection:
        try:
            if self._memory:
                conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            elif self.read_only:
                conn = sqlite3.connect(
                    self._uri(),
                    uri=True,
                    isolation_level=None,
                    timeout=self.busy_timeout,
                    check_same_thread=False,
                )
            else:
                conn = sqlite3.connect(
                    self.path,
                    isolation_level=None,
                    timeout=self.busy_timeout,
                    check_same_thread=False,
                )
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            if self.read_only:
                conn.execute("PRAGMA query_only = 1")
            else:
                conn.execute("PRAGMA foreign_keys = ON")
                conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.DatabaseError as exc:
            raise NotASessionDatabaseError(f"cannot open {self.path}: {exc}") from exc
        with self._conns_lock:
            self._all_conns.append(conn)
        return conn

    def _conn(self) -> sqlite3.Connection:
        if self._closed:
            raise SessionRecallError("this SessionStore is closed")
        if self._memory:
            if self._shared is None:
                self._shared = self._open_connection()
            return self._shared
        if self._immutable and (
            Path(self.path + "-wal").exists() or self._stat_file() != self._file_state
        ):
            with self._conns_lock:
                # A writer started, or came and went (its -wal already removed): an immutable
                # connection would serve stale or torn pages. Keep reading without files beside
                # the database when no writer is left, through SQLite's locks when one is.
                self._immutable = not Path(self.path + "-wal").exists()
                self._file_state = self._stat_file()
                self._generation += 1
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "generation", -1) != self._generation:
            if conn is not None:
                self._discard(conn)
            conn = self._open_connection()
            self._local.conn = conn
            self._local.generation = self._generation
        return conn

    def _discard(self, conn: sqlite3.Connection) -> None:
        with self._conns_lock:
            if conn in self._all_conns:
                self._all_conns.remove(conn)
        with contextlib.suppress(sqlite3.Error):
            conn.close()

    @staticmethod
    def _detect(conn: sqlite3.Connection) -> Layout | None:
        try:
            return detect_layout(conn)
        except sqlite3.DatabaseError as exc:
            raise NotASessionDatabaseError(f"not a readable SQLite database: {exc}") from exc

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        # In-memory stores share one connection, so reads take the lock too.
        if self._memory:
            with self._write_lock:
                yield self._conn()
        else:
            yield self._conn()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        if self.read_only:
            raise ReadOnlyStoreError(
                f"{self.path} was opened read-only; open a store of your own to write"
            )
        with self._write_lock:
            conn = self._conn()
            # Inside transaction() on this thread: a savepoint, so a failed write still leaves
            # nothing half-done while the outer block goes on.
            nested = conn.in_transaction
            conn.execute("SAVEPOINT session_recall" if nested else "BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:  # (SQLite may have rolled back already, e.g. disk full)
                    if nested:
                        conn.execute("ROLLBACK TO session_recall")
                        conn.execute("RELEASE session_recall")
                    else:
                        conn.execute("ROLLBACK")
                raise
            conn.execute("RELEASE session_recall" if nested else "COMMIT")

    @contextmanager
    def transaction(self) -> Iterator[SessionStore]:
        """Make every write inside the block one transaction: all of it lands, or none.

        Bulk loads go faster this way: one commit for many sessions, and from the second
        batch of messages on, the full-text index is built in one pass when the block ends
        instead of one small index segment per call (searches see the block's messages once
        it has ended; so do other connections, as with any transaction). Writes from other
        threads wait until the block ends; a write that fails inside it is rolled back on its
        own (a savepoint), so catching its error and going on is safe. Blocks nest.

        Raises:
            ReadOnlyStoreError: the store was opened read-only.

        Example:
            >>> from langchain_session_recall.search.query import parse_query
            >>> store = SessionStore(":memory:")
            >>> with store.transaction():
            ...     for n in range(3):
            ...         _ = store.add_session(f"s{n}")
            ...         _ = store.add_messages(f"s{n}", [{"role": "user", "content": "hi"}])
            >>> store.stats()["messages"], len(store.match_messages(parse_query("hi"), "relaxed"))
            (3, 3)
        """
        if getattr(self._local, "block", None) is not None:  # nested: a savepoint
            with self._transaction():
                yield self
            return
        with self._transaction() as conn:
            block = _Block()
            self._local.block = block
            try:
                yield self
            finally:
                self._local.block = None
            if block.indexed_through is not None:
                conn.execute(FTS_INDEX_SINCE, (block.indexed_through,))
                conn.execute(FTS_INSERT_TRIGGER)

    def _defer_indexing(self) -> None:
        """Inside :meth:`transaction`, from its second batch of messages on, leave indexing to
        the end of the block: the insert trigger is dropped for the block's duration (inside
        its transaction, so no other connection ever sees it missing, and a rollback restores
        it). Called before the batch's own savepoint opens, so undoing a failed batch keeps it
        dropped. A single batch keeps the trigger: the drop and re-create would cost more.
        """
        block: _Block | None = getattr(self._local, "block", None)
        if block is None or block.indexed_through is not None or not self.layout.own:
            return  # (only the thread holding a block, and so the write lock, gets past here)
        block.batches += 1
        if block.batches < 2:
            return
        conn = self._conn()
        if not conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = ?",
            (FTS_INSERT_TRIGGER_NAME,),
        ).fetchone():
            return  # someone removed it: index nothing behind their back
        (block.indexed_through,) = conn.execute(
            "SELECT coalesce(max(id), 0) FROM messages"
        ).fetchone()
        conn.execute(f"DROP TRIGGER {FTS_INSERT_TRIGGER_NAME}")

    def close(self) -> None:
        """Close every connection this store opened (idempotent)."""
        self._closed = True
        with self._conns_lock:
            for conn in self._all_conns:
                with contextlib.suppress(sqlite3.Error):  # closing is best effort
                    conn.close()
            self._all_conns.clear()
        SessionStore._registry.pop(self.store_id, None)

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = "read-only" if self.read_only else "read-write"
        return f"SessionStore({self.path!r}, {mode})"

    # ------------------------------------------------------------------ writing

    def add_session(
        self,
        session_id: str,
        *,
        source: str = "cli",
        parent_session_id: str | None = None,
        model: str | None = None,
        title: str | None = None,
        user_id: str | None = None,
        started_at: float | None = None,
        end_reason: str | None = None,
    ) -> Session:
        """Create a session, or update the given fields of an existing one.

        Raises:
            SessionNotFoundError: ``parent_session_id`` does not exist.
            LineageCycleError: the parent would make the session its own ancestor.
        """
        validate_session_args(session_id, source)
        with self._transaction() as conn:
            exists = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if parent_session_id is not None:
                self._check_parent(conn, session_id, parent_session_id)
            if exists:
                sets = session_updates(
                    source, parent_session_id, model, title, user_id, started_at, end_reason
                )
                if sets:
                    assignments = ", ".join(f"{k} = ?" for k in sets)
                    conn.execute(
                        f"UPDATE sessions SET {assignments} WHERE id = ?",
                        (*sets.values(), session_id),
                    )
            else:
                conn.execute(
                    "INSERT INTO sessions (id, source, user_id, model, title, parent_session_id, "
                    "started_at, end_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        session_id,
                        source,
                        user_id,
                        model,
                        title,
                        parent_session_id,
                        time.time() if started_at is None else float(started_at),
                        end_reason,
                    ),
                )
        session = self.get_session(session_id)
        assert session is not None
        return session

    def _check_parent(self, conn: sqlite3.Connection, session_id: str, parent: str) -> None:
        found = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (parent,)).fetchone()
        check_parent_exists(session_id, parent, found)
        rows = conn.execute(_ancestors_query(1, False), (parent,)).fetchall()
        check_ancestors(session_id, parent, (r[0] for r in rows))

    def add_messages(self, session_id: str, messages: Iterable[MessageLike]) -> list[int]:
        """Append messages to a session in one transaction; returns their ids.

        Every message is validated before anything is written: an invalid one raises
        :class:`InvalidMessageError` and nothing of the batch is stored.
        """
        now = time.time()
        rows: list[MessageRow] = [to_row(m, now=now) for m in messages]
        self._defer_indexing()
        with self._transaction() as conn:
            return self._insert_rows(conn, session_id, rows)

    def import_messages(
        self,
        session_id: str,
        messages: Sequence[tuple[str, MessageLike]],
        *,
        source_kind: str,
    ) -> list[int]:
        """Add ``(external_key, message)`` pairs not imported before, with their ledger rows.

        Messages and ledger rows go in one transaction, so an import killed half-way leaves a
        consistent database and re-running it adds exactly what is missing. Pairs whose key is
        already in the ledger for ``source_kind`` (in any session) are skipped. Returns the ids
        of the messages added.

        Example:
            >>> store = SessionStore(":memory:")
            >>> _ = store.add_session("s1")
            >>> pairs = [("line-1", {"role": "user", "content": "hi"})]
            >>> len(store.import_messages("s1", pairs, source_kind="jsonl"))
            1
            >>> store.import_messages("s1", pairs, source_kind="jsonl")
            []
        """
        now = time.time()
        converted = [(key, to_row(m, now=now)) for key, m in messages]
        self._defer_indexing()
        with self._transaction() as conn:
            seen: set[str] = set()
            keys = list(dict.fromkeys(key for key, _ in converted))
            for start in range(0, len(keys), 500):  # stay under SQLite's bound-variable limit
                chunk = keys[start : start + 500]
                seen.update(
                    r[0]
                    for r in conn.execute(
                        "SELECT external_key FROM import_ledger WHERE source_kind = ? AND "
                        + _in_clause("external_key", chunk),
                        (source_kind, *chunk),
                    )
                )
            fresh: dict[str, MessageRow] = {}
            for key, row in converted:
                if key not in seen and key not in fresh:
                    fresh[key] = row
            ids = self._insert_rows(conn, session_id, list(fresh.values()))
            conn.executemany(
                "INSERT OR IGNORE INTO import_ledger (source_kind, external_key, session_id, "
                "message_id, imported_at) VALUES (?, ?, ?, ?, ?)",
                [
                    (source_kind, key, session_id, mid, now)
                    for key, mid in zip(fresh, ids, strict=True)
                ],
            )
        return ids

    def imported_keys(self, source_kind: str, session_id: str) -> set[str]:
        """External keys already imported into ``session_id`` from ``source_kind``.

        Example:
            >>> store = SessionStore(":memory:")
            >>> _ = store.add_session("s1")
            >>> _ = store.import_messages("s1", [("a:1", {"role": "user", "content": "hi"})],
            ...                           source_kind="jsonl")
            >>> store.imported_keys("jsonl", "s1")
            {'a:1'}
        """
        with self._read() as conn:
            try:
                rows = conn.execute(
                    "SELECT external_key FROM import_ledger WHERE source_kind = ? "
                    "AND session_id = ?",
                    (source_kind, session_id),
                ).fetchall()
            except sqlite3.OperationalError:  # a foreign (Hermes) file has no ledger
                return set()
        return {r[0] for r in rows}

    def _insert_rows(
        self, conn: sqlite3.Connection, session_id: str, rows: Sequence[MessageRow]
    ) -> list[int]:
        if not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
            raise SessionNotFoundError(
                f"session {session_id!r} does not exist; call add_session() first"
            )
        if not rows:
            return []
        values = [
            (
                session_id,
                row.role,
                row.content,
                row.tool_call_id,
                row.tool_calls,
                row.tool_name,
                row.timestamp,
            )
            for row in rows
        ]
        # Inside our write transaction nothing else can insert, and AUTOINCREMENT never reuses
        # ids, so the batch's ids are the consecutive run ending at last_insert_rowid() (the FTS
        # trigger's own inserts do not change it: SQLite restores it when a trigger ends).
        _insert_many(conn, _INSERT_MESSAGE, values)
        last = int(conn.execute("SELECT last_insert_rowid()").fetchone()[0])
        ids = list(range(last - len(rows) + 1, last + 1))
        cjk = [
            (message_id, bigram_text(row.content))
            for message_id, row in zip(ids, rows, strict=True)
            # isascii() is a C-speed scan that settles most messages without the regex
            if row.content and not row.content.isascii() and has_cjk(row.content)
        ]
        if cjk:
            _insert_many(conn, _INSERT_CJK, cjk)
        conn.execute(
            "UPDATE sessions SET message_count = message_count + ? WHERE id = ?",
            (len(rows), session_id),
        )
        return ids

    def end_session(
        self, session_id: str, *, end_reason: str | None = None, ended_at: float | None = None
    ) -> None:
        """Mark a session ended (``ended_at`` defaults to now)."""
        with self._transaction() as conn:
            cur = conn.execute(
                "UPDATE sessions SET ended_at = ?, end_reason = coalesce(?, end_reason) "
                "WHERE id = ?",
                (time.time() if ended_at is None else ended_at, end_reason, session_id),
            )
            if cur.rowcount == 0:
                raise SessionNotFoundError(f"session {session_id!r} does not exist")

    def reindex_cjk(self) -> int:
        """Fill the CJK bigram index for messages written by other SQLite clients.

        Returns the number of messages indexed.
        """
        with self._transaction() as conn:
            rows = conn.execute(
                "SELECT m.id, m.content FROM messages m LEFT JOIN messages_cjk c "
                "ON c.message_id = m.id WHERE c.message_id IS NULL AND m.content IS NOT NULL"
            ).fetchall()
            texts = ((message_id, decode_content(content)) for message_id, content in rows)
            found = [(mid, bigram_text(text)) for mid, text in texts if has_cjk(text)]
            if found:
                _insert_many(conn, _INSERT_CJK, found)
        return len(found)

    def optimize(self) -> None:
        """Merge the full-text index segments and refresh planner statistics."""
        with self._transaction() as conn:
            conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('optimize')")
            if self.layout.has_cjk:
                conn.execute("INSERT INTO messages_cjk_fts(messages_cjk_fts) VALUES ('optimize')")
        with self._read() as conn:
            conn.execute("PRAGMA optimize")

    # ------------------------------------------------------------------ reading

    @staticmethod
    def _session(row: Sequence[Any]) -> Session:
        return Session(
            id=row[0],
            source=row[1] or "unknown",
            started_at=as_float(row[2]),
            user_id=row[3],
            model=row[4],
            title=row[5],
            parent_session_id=row[6],
            ended_at=row[7],
            end_reason=row[8],
            message_count=_count(row[9]),
        )

    @staticmethod
    def _message(row: Sequence[Any]) -> StoredMessage:
        calls: Any = None
        if row[6]:
            try:
                calls = json.loads(row[6])
            except (ValueError, TypeError, RecursionError):
                calls = None  # malformed JSON from another writer: show no calls, keep the row
        return StoredMessage(
            id=int(row[0]),
            session_id=row[1],
            role=str(row[2] or "unknown").lower(),
            content=decode_content(row[3]),
            timestamp=as_float(row[4]),
            tool_call_id=row[5],
            tool_calls=calls if isinstance(calls, list) else None,
            tool_name=row[7],
        )

    def get_session(self, session_id: str) -> Session | None:
        """The session with this id, or ``None``."""
        with self._read() as conn:
            row = conn.execute(
                _session_select(self.layout) + " WHERE s.id = ?", (session_id,)
            ).fetchone()
        return self._session(row) if row else None

    def get_sessions(self, session_ids: Iterable[str]) -> dict[str, Session]:
        """Sessions by id (one query); unknown ids are absent from the result."""
        ids = list(dict.fromkeys(session_ids))
        if not ids:
            return {}
        with self._read() as conn:
            rows = conn.execute(
                _session_select(self.layout) + f" WHERE {_in_clause('s.id', ids)}", ids
            ).fetchall()
        return {row[0]: self._session(row) for row in rows}

    def all_session_ids(self) -> list[str]:
        """Ids of every session, oldest first.

        Example:
            >>> store = SessionStore(":memory:")
            >>> _ = store.add_session("b", started_at=2.0)
            >>> _ = store.add_session("a", started_at=1.0)
            >>> store.all_session_ids()
            ['a', 'b']
        """
        with self._read() as conn:
            rows = conn.execute("SELECT id FROM sessions ORDER BY started_at, id").fetchall()
        return [r[0] for r in rows]

    def stats(self) -> dict[str, Any]:
        """Counts, sources, date range, file size and full-text index health.

        Example:
            >>> SessionStore(":memory:").stats()["sessions"]
            0
        """
        with self._read() as conn:
            sessions, first, last = conn.execute(
                "SELECT count(*), min(started_at), max(started_at) FROM sessions"
            ).fetchone()
            messages = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
            sources = dict(
                conn.execute(
                    "SELECT source, count(*) FROM sessions GROUP BY source ORDER BY 2 DESC"
                ).fetchall()
            )
            roots = conn.execute(
                "SELECT count(*) FROM sessions s LEFT JOIN sessions p "
                "ON p.id = s.parent_session_id WHERE s.parent_session_id IS NULL OR p.id IS NULL"
            ).fetchone()[0]
            index = "not checked (read-only)" if self.read_only else self._index_health(conn)
            page_size = conn.execute("PRAGMA page_size").fetchone()[0]
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
        return {
            "sessions": int(sessions),
            "root_sessions": int(roots),
            "messages": int(messages),
            "sources": {str(k): int(v) for k, v in sources.items()},
            "first_started_at": first,
            "last_started_at": last,
            "size_bytes": int(page_size) * int(pages),
            "index": index,
            "layout": "own" if self.layout.own else "foreign",
        }

    @staticmethod
    def _index_health(conn: sqlite3.Connection) -> str:
        try:
            # 'integrity-check' compares the index with its content (the messages view).
            conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")
        except sqlite3.DatabaseError as exc:
            return (
                f"damaged ({exc}); rebuild it with: "
                "INSERT INTO messages_fts(messages_fts) VALUES('rebuild')"
            )
        return "ok"

    def get_messages(self, session_id: str) -> list[StoredMessage]:
        """All visible messages of one session, oldest first."""
        sql = (
            _message_select(self.layout, clip_tools=False)
            + f" WHERE m.session_id = ? AND {self.layout.visibility} ORDER BY m.timestamp, m.id"
        )
        with self._read() as conn:
            rows = conn.execute(sql, (session_id,)).fetchall()
        return [self._message(r) for r in rows]

    def chain_messages(self, root_id: str, *, user_id: str | None = None) -> list[StoredMessage]:
        """Messages of a root session and all its descendants, in time order.

        Tool output is clipped to its first and last 250 characters in SQL. With ``user_id``,
        sessions of other users are left out even when they sit inside the chain.
        """
        ids = self.chain(root_id, user_id=user_id)
        if not ids:
            return []
        sql = (
            _message_select(self.layout, clip_tools=True)
            + f" WHERE {_in_clause('m.session_id', ids)} AND {self.layout.visibility}"
            " ORDER BY m.timestamp, m.id"
        )
        sql = sql.replace(":clip", "?", 1)
        with self._read() as conn:
            rows = conn.execute(sql, (TOOL_CLIP_MARKER, *ids)).fetchall()
        return [self._message(r) for r in rows]

    def recent_sessions(
        self,
        limit: int = 10,
        *,
        exclude_sources: Iterable[str] = ("tool",),
        exclude_session_ids: Iterable[str] = (),
        user_id: str | None = None,
        after: float | None = None,
        before: float | None = None,
    ) -> list[RecentSession]:
        """Most recent root sessions with a preview of their first user message.

        The chains of ``exclude_session_ids`` (e.g. the current conversation) are left out.
        """
        excluded_roots = {self.root_of(sid, user_id=user_id) for sid in exclude_session_ids}
        where = ["(s.parent_session_id IS NULL OR p.id IS NULL)"]
        params: list[Any] = []
        sources = list(exclude_sources)
        if sources:
            where.append(_in_clause("s.source", sources, negate=True))
            params.extend(sources)
        if excluded_roots:
            where.append(_in_clause("s.id", sorted(excluded_roots), negate=True))
            params.extend(sorted(excluded_roots))
        if user_id is not None:
            where.append("s.user_id = ?")
            params.append(user_id)
        if after is not None:
            where.append("s.started_at >= ?")
            params.append(after)
        if before is not None:
            where.append("s.started_at < ?")
            params.append(before)
        vis = self.layout.visibility
        sql = (
            _session_select(self.layout).replace(
                " FROM sessions s",
                ", (SELECT substr(m.content, 1, 600) FROM messages m WHERE m.session_id = s.id "
                f"AND m.role = 'user' AND {vis} ORDER BY m.timestamp, m.id LIMIT 1), "
                f"(SELECT max(m.timestamp) FROM messages m WHERE m.session_id = s.id) "
                "FROM sessions s LEFT JOIN sessions p ON p.id = s.parent_session_id",
            )
            + f" WHERE {' AND '.join(where)} ORDER BY s.started_at DESC, s.id LIMIT ?"
        )
        with self._read() as conn:
            rows = conn.execute(sql, (*params, max(0, int(limit)))).fetchall()
        out = []
        for row in rows:
            session = self._session(row)
            out.append(
                RecentSession(
                    id=session.id,
                    source=session.source,
                    started_at=session.started_at,
                    title=session.title,
                    model=session.model,
                    message_count=session.message_count,
                    preview=preview([decode_content(row[10])]),
                    user_id=session.user_id,
                    last_active=row[11],
                )
            )
        return out

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
        params: list[Any] = [*ids]
        if user_id is not None:
            params.append(user_id)
        with self._read() as conn:
            rows = conn.execute(_ancestors_query(len(ids), user_id is not None), params).fetchall()
        parents: dict[str, str | None] = {}
        for sid, parent in rows:
            parents[sid] = parent
        return parents

    def root_of(self, session_id: str, *, user_id: str | None = None) -> str:
        """Root of the session's chain (itself when it has no parent)."""
        return resolve_root(session_id, self.parents_of([session_id], user_id=user_id))

    def lineage(self, session_id: str) -> list[str]:
        """The session, its parent, ... up to the root (cycle-safe)."""
        parents = self.parents_of([session_id])
        out = [session_id]
        while (parent := parents.get(out[-1])) is not None and parent in parents:
            if parent in out:
                break
            out.append(parent)
        return out

    def chain(self, root_id: str, *, user_id: str | None = None) -> list[str]:
        """The root and all its descendants (cycle-safe), root first."""
        params: list[Any] = [root_id]
        if user_id is not None:
            params.append(user_id)
        with self._read() as conn:
            if user_id is not None:
                owner = conn.execute(
                    "SELECT user_id FROM sessions WHERE id = ?", (root_id,)
                ).fetchone()
                if owner is None or owner[0] != user_id:
                    return []
            rows = conn.execute(_descendants_query(user_id is not None), params).fetchall()
        return [r[0] for r in rows]

    # ------------------------------------------------------------------ search primitives

    def match_messages(
        self,
        query: ParsedQuery,
        reading: Literal["strict", "relaxed"],
        *,
        filters: SearchFilters = _NO_FILTERS,
        limit: int = 200,
        automation: Sequence[str] = (),
    ) -> list[MessageHit]:
        """Messages matching one reading of the query, best first, from every index.

        The main index and (when present) the CJK bigram index are both queried; a message
        found by both keeps its best relevance. Ranking is bounded to ``rank_window`` rows per
        index: see :meth:`_rank_plans` for what happens to queries of very common words.
        Messages of ``automation`` sources get a budget of their own
        (:func:`~langchain_session_recall.search.ranking.budget_automation`), taken from the same
        ranked pass.
        """
        best: dict[int, MessageHit] = {}
        targets = [("messages_fts", False)]
        if self.layout.has_cjk:
            targets.append(("messages_cjk_fts", True))
        with self._read() as conn:
            for table, cjk in targets:
                found: set[int] = set()
                for expression, bound in self._rank_plans(conn, table, query, reading, cjk=cjk):
                    if len(found) >= limit:
                        break
                    ranked = self._ranked(
                        conn, table, expression, bound, filters, limit, automation
                    )
                    for hit in ranked:
                        found.add(hit.message_id)
                        prev = best.get(hit.message_id)
                        if prev is None or hit.relevance > prev.relevance:
                            best[hit.message_id] = hit
        return sorted(best.values(), key=lambda h: (-h.relevance, h.message_id))

    def _ranked(
        self,
        conn: sqlite3.Connection,
        table: str,
        expression: str,
        bound: int | None,
        filters: SearchFilters,
        limit: int,
        automation: Sequence[str] = (),
    ) -> list[MessageHit]:
        sql, params = _match_query(self.layout, table, filters, bounded=bound is not None)
        # With an automation budget the ranked rows are read lazily (no LIMIT) until the
        # budget is settled: FTS5 has sorted its matches already, so reading on costs only the
        # joins of the rows read.
        args = (
            expression,
            *(() if bound is None else (bound,)),
            *params,
            -1 if automation else limit,
        )
        cursor = conn.cursor()
        try:
            hits = map(MessageHit.from_row, cursor.execute(sql, args))
            return budget_automation(hits, limit, set(automation)) if automation else list(hits)
        except sqlite3.OperationalError as exc:
            # Our renderer only emits quoted terms; reaching this is a bug, not bad input.
            raise SessionRecallError(
                f"full-text query {expression!r} was rejected by SQLite: {exc}"
            ) from exc
        finally:
            cursor.close()

    def _window_bound(self, conn: sqlite3.Connection, table: str, expression: str) -> int | None:
        """``None`` when ``expression`` matches at most ``rank_window`` rows, else the rowid
        above which the newest ``rank_window`` matches lie."""
        try:
            row = conn.execute(
                _window_probe_query(table), (expression, self.rank_window)
            ).fetchone()
        except sqlite3.OperationalError as exc:
            raise SessionRecallError(
                f"full-text query {expression!r} was rejected by SQLite: {exc}"
            ) from exc
        return None if row is None else int(row[0])

    def _rank_plans(
        self,
        conn: sqlite3.Connection,
        table: str,
        query: ParsedQuery,
        reading: Literal["strict", "relaxed"],
        *,
        cjk: bool,
    ) -> list[tuple[str, int | None]]:
        """What to rank, as ``(expression, rowid bound)`` steps run until ``limit`` hits.

        FTS5 computes bm25 for every matching row before ``ORDER BY rank LIMIT n`` returns, at
        a few microseconds per row: a word found in a third of a million messages costs about
        a second. Walking the matches without ranking costs a hundred times less, so a cheap
        probe decides:

        1. at most ``rank_window`` matches: rank them all (the usual case);
        2. a relaxed (OR) reading whose terms include some that match at most ``rank_window``
           rows: rank only those selective terms (words found everywhere carry almost no bm25
           weight: corpus-learned stop-wording);
        3. a relaxed reading made only of common words: rank the messages that contain all of
           them first (bm25 sums over the terms whatever the operator, so the scores compare),
           then top up with the newest ``rank_window`` matches of any of them;
        4. otherwise (a strict reading, one common word, more than 12 words) rank the newest
           ``rank_window`` matches only, a rowid range that FTS5 applies before ranking.
        """
        expression = to_fts5(query, reading, cjk=cjk)
        bound = self._window_bound(conn, table, expression)
        if bound is None or reading != "relaxed" or not 2 <= len(query.relaxed) <= _MAX_PROBED:
            return [(expression, bound)]
        singles = [to_fts5(replace(query, relaxed=(t,)), "relaxed", cjk=cjk) for t in query.relaxed]
        selective = tuple(
            term
            for term, single in zip(query.relaxed, singles, strict=True)
            if self._window_bound(conn, table, single) is None
        )
        if selective:
            narrowed = to_fts5(replace(query, relaxed=selective), "relaxed", cjk=cjk)
            return [(narrowed, self._window_bound(conn, table, narrowed))]
        every = " AND ".join(f"({single})" for single in singles)
        return [(every, self._window_bound(conn, table, every)), (expression, bound)]

    def vocabulary(self, prefix: str, *, limit: int = 100_000) -> list[tuple[str, int]]:
        """Words of the main full-text index starting with ``prefix``, with document counts.

        Index words are what the tokenizer stored (porter stems for our stores, plain words for
        Hermes files). Search uses them to correct misspelt query words. The ``fts5vocab`` view
        is a TEMP table of this connection, so read-only files stay untouched.

        Example:
            >>> store = SessionStore(":memory:")
            >>> _ = store.add_session("s1")
            >>> _ = store.add_messages("s1", [{"role": "user", "content": "kubernetes ingress"}])
            >>> store.vocabulary("ku")
            [('kubernet', 1)]
        """
        if not prefix:
            return []
        with self._read() as conn:
            # query_only forbids even TEMP tables; the file itself stays read-only (mode=ro).
            if self.read_only:
                conn.execute("PRAGMA query_only = 0")
            try:
                conn.execute(_CREATE_VOCAB)
            finally:
                if self.read_only:
                    conn.execute("PRAGMA query_only = 1")
            rows = conn.execute(_VOCAB_QUERY, (prefix, prefix + "\U0010ffff", limit)).fetchall()
        return [(str(r[0]), int(r[1])) for r in rows]

    def last_message_id(self, session_ids: Sequence[str]) -> int:
        """Largest message id among these sessions (0 when they have none)."""
        if not session_ids:
            return 0
        with self._read() as conn:
            row = conn.execute(
                f"SELECT max(id) FROM messages WHERE {_in_clause('session_id', session_ids)}",
                list(session_ids),
            ).fetchone()
        return int(row[0] or 0)

    # ------------------------------------------------------------------ summary cache

    def get_cached_summary(self, key: str) -> str | None:
        """A summary cached under ``key``, or ``None``."""
        if not self.layout.has_summary_cache:
            return None
        with self._read() as conn:
            row = conn.execute(
                "SELECT summary FROM summary_cache WHERE cache_key = ?", (key,)
            ).fetchone()
        return str(row[0]) if row else None

    def put_cached_summary(
        self, key: str, *, session_id: str, summary: str, model: str | None
    ) -> None:
        """Cache a summary. Raises :class:`ReadOnlyStoreError` on a read-only store."""
        with self._transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO summary_cache (cache_key, session_id, summary, model, "
                "created_at) VALUES (?, ?, ?, ?, ?)",
                (key, session_id, summary, model, time.time()),
            )
