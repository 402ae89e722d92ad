"""``SqliteSessionStore``: the session store in one SQLite file, searched with FTS5.

What only SQLite needs: connections (one per thread, WAL, a read-only mode that never writes a
byte), the schema and its migrations, files of other programs (a Hermes ``state.db``, searched
read-only as it is), the CJK bigram index filled on insert, bulk loads that index in one pass,
and the bounded FTS5 ranking of :meth:`SqliteSessionStore.match_messages`. Everything else is the
shared :class:`~langchain_session_recall.backends.base.SessionBackend`.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from langchain_session_recall.backends import sql
from langchain_session_recall.backends.base import SessionBackend, StoreCheck
from langchain_session_recall.backends.common.ledger import LedgerRow, RunRow
from langchain_session_recall.backends.common.rows import count_of
from langchain_session_recall.backends.hits import (
    MATCH_LIMIT,
    best_hits,
    budget_automation,
    read_seated,
    seats,
    sessions_in_hand,
)
from langchain_session_recall.backends.retry import (
    DEFAULT_BUSY_TIMEOUT,
    is_busy,
    schema_changed,
)
from langchain_session_recall.backends.sqlite import statements as st
from langchain_session_recall.backends.sqlite.files import (
    ReadDeadline,
    default_read_timeout,
    hot_journal_message,
    is_hot_journal,
    read_only_uri,
    refuse_hot_journal,
)
from langchain_session_recall.backends.sqlite.fts import stable_prefix, to_fts5
from langchain_session_recall.backends.sqlite.schema import (
    FTS_DEFER,
    FTS_INDEX_SINCE,
    FTS_INSERT_TRIGGER_NAME,
    FTS_RESUME,
    SCHEMA_VERSION,
    Layout,
    create_or_migrate,
    detect_layout,
    foreign_file_message,
    missing_tables_message,
    schema_objects,
    setup_needed,
)
from langchain_session_recall.backends.vectors.windows import DEFAULT_OVERLAP, DEFAULT_SIZE
from langchain_session_recall.core.cjk import bigram_text, has_cjk
from langchain_session_recall.core.query import ParsedQuery
from langchain_session_recall.errors import (
    InvalidArgumentError,
    NotASessionDatabaseError,
    SessionRecallError,
    StoreBusyError,
)
from langchain_session_recall.messages import MessageRow, decode_content
from langchain_session_recall.models import (
    CachedSummary,
    MessageHit,
    SearchFilters,
    SessionHit,
    as_float,
)

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from langchain_session_recall.backends.vectors.windows import WindowSpec

__all__ = ["SessionStore", "SqliteSessionStore"]

logger = logging.getLogger(__name__)
T = TypeVar("T")

_NO_FILTERS = SearchFilters()
_SQLITE_HEADER = b"SQLite format 3\x00"
_NOTHING = -1  # a probe's answer: no row matches


class _Counted:
    """Reads hits best first for the best-``limit`` query and says whether it read them all
    (then each session's best is among them already)."""

    def __init__(self) -> None:
        self.read: list[MessageHit] = []
        self.done = False

    @property
    def rows(self) -> int:
        return len(self.read)

    def _count(self, hits: Iterator[MessageHit]) -> Iterator[MessageHit]:
        for hit in hits:
            self.read.append(hit)
            yield hit
        self.done = True

    def taking(
        self, limit: int, automation: Sequence[str], budget: bool
    ) -> Callable[[Iterator[MessageHit]], list[MessageHit]]:
        """What to read: the automation budget's rows, else one row past ``limit`` (so that
        ``done`` tells whether there were more)."""

        def take(hits: Iterator[MessageHit]) -> list[MessageHit]:
            counted = self._count(hits)
            if budget:
                return budget_automation(counted, limit, set(automation))
            return list(itertools.islice(counted, limit + 1))

        return take


_MAX_PROBED = 12  # terms probed one by one for selectivity (~1 ms each); longer queries skip it
_MAX_HAND_OVER = 0.15  # seconds: longer than SQLite's longest sleep between two lock attempts
_BULK_TRIES = (0.15, 0.3)  # seconds between a bulk block's tries for the lock (_begin)
_SCHEMA_TRIES = 5  # runs of a full-text read that met other connections' schema changes


@dataclass(slots=True)
class _Block:
    """State of a :meth:`SqliteSessionStore.transaction` block on one thread."""

    batches: int = 0
    indexed_through: int | None = None
    """Set once indexing is deferred: the block indexes messages above this id when it ends."""


def _again_on_schema_change(read: Callable[[], T]) -> T:
    """``read()``, run again (up to :data:`_SCHEMA_TRIES` in all) when another connection's
    schema change interrupted it (a migration on open, say; an FTS5 table then reports
    "vtable constructor failed", see
    :func:`~langchain_session_recall.backends.retry.schema_changed`): it then prepares
    against the new schema. Reads outside a transaction meet this (SQLite itself prepares a
    statement again only once). A schema that keeps changing through every try is a busy
    store, not a bug: :class:`StoreBusyError` (safe to try again later)."""
    for _ in range(_SCHEMA_TRIES - 1):
        try:
            return read()
        except sqlite3.OperationalError as exc:
            if not schema_changed(exc):
                raise
    try:
        return read()
    except sqlite3.OperationalError as exc:
        if schema_changed(exc):
            raise StoreBusyError(
                f"another connection kept changing the store's schema ({exc}) through "
                f"{_SCHEMA_TRIES} tries; nothing is wrong with the query, try again"
            ) from exc
        raise


def _execute(
    conn: sqlite3.Connection | sqlite3.Cursor, statement: str, params: dict[str, Any]
) -> sqlite3.Cursor:
    """``conn.execute(statement, params)``, again after a schema change (see above)."""
    return _again_on_schema_change(lambda: conn.execute(statement, params))


def _insert_many(
    conn: sqlite3.Connection, insert: str, rows: Sequence[tuple[Any, ...]], tail: str = ""
) -> None:
    """Insert ``rows`` with multi-row ``INSERT ... VALUES (...), (...)`` statements (each
    ending with ``tail``, e.g. an ``ON CONFLICT`` clause).

    Not ``executemany``: each statement that fires an FTS trigger opens a statement journal,
    and FTS5 flushes its pending index data to a new segment at every such savepoint. One
    statement per row would write (and later merge) one segment per message; one statement per
    chunk cuts ingest time by a third or more.
    """
    one = "(" + ", ".join("?" * len(rows[0])) + ")"
    for start in range(0, len(rows), st.ROWS_PER_INSERT):
        chunk = rows[start : start + st.ROWS_PER_INSERT]
        values = ", ".join([one] * len(chunk))
        conn.execute(f"{insert}{values}{tail}", [v for row in chunk for v in row])


_lenient_text: Callable[[bytes], str] = functools.partial(
    bytes.decode, encoding="utf-8", errors="replace"
)
"""Text columns as ``str``, bytes that are not UTF-8 replaced (C all the way: SQLite calls it
for every text value read, a thousand or more a search)."""


def _cjk_rows(ids: Sequence[int], texts: Sequence[str | None]) -> list[tuple[int, str]]:
    # isascii() is a C-speed scan that settles most messages without the regex
    return [
        (mid, bigram_text(text))
        for mid, text in zip(ids, texts, strict=True)
        if text and not text.isascii() and has_cjk(text)
    ]


class SqliteSessionStore(SessionBackend):
    """Sessions and messages in one SQLite file, searchable with FTS5.

    Opening a path creates the schema when the file is missing or empty (WAL journal, foreign
    keys on) and migrates an older version of ours. Anything else is refused and left as it is
    (:class:`NotASessionDatabaseError`): a file holding another program's tables (an
    application's database, a LangGraph checkpointer file), or a Hermes ``state.db`` (open it
    ``read_only``). Opening a store of the current version writes nothing and takes no lock.

    Each thread gets its own connection. Reads never wait for writers (WAL: a read sees the
    last commit while a writer works). Writers take turns: one waits up to ``busy_timeout``
    seconds for another's write transaction, in this process or any other, then raises
    :class:`~langchain_session_recall.errors.StoreBusyError` having written nothing (see
    :mod:`~langchain_session_recall.backends.retry` for who retries it). A bulk block
    (:meth:`transaction`) lets single writes go first when both wait, and leaves the lock free
    for a moment after it held it long (see ``docs/reliability.md``, "Writers take turns").

    Args:
        path: Database file, or ``":memory:"`` for a private in-memory store.
        read_only: Open someone else's database without ever writing to it: no schema
            creation, no migration, no checkpoint, no new files beside it.
        busy_timeout: Seconds a write waits for another writer's lock (default 30 s).
        read_timeout: With ``read_only``, seconds one read may run before it is stopped with
            :class:`~langchain_session_recall.errors.ReadLimitError` (default:
            ``$SESSION_RECALL_READ_TIMEOUT``, else 60 s; ``0`` or ``None``: no limit), so a
            file that makes SQLite work without end cannot hang a search. Writable stores
            (ours) have no limit.
        embeddings: A LangChain ``Embeddings``: passage vectors are written beside the
            full-text index as messages are added, for hybrid search (``docs/hybrid.md``).
        embedding_window: Messages per window and shared by two neighbours (default 3/1);
            several layouts as a list (``[(3, 1), (6, 1)]``: each message embedded in both).
        reindex_embeddings: Drop vectors another model made and start over with this one
            (else such a store raises :class:`EmbeddingMismatchError`).

    Example:
        >>> store = SqliteSessionStore(":memory:")
        >>> _ = store.add_session("s1", title="CORS fix")
        >>> _ = store.add_messages("s1", [{"role": "user", "content": "fix the CORS error"}])
        >>> store.get_session("s1").message_count
        1
    """

    hand_over: float = 0.1
    """Share of the time a write transaction held the lock that this store leaves the lock
    free before its next one (at most 0.15 s), so writers of other processes get their turn
    between the transactions of a bulk load. It costs a bulk load up to that share of its
    time; set it to 0 on a store that no other process writes meanwhile."""

    def __init__(
        self,
        path: str | os.PathLike[str] = ":memory:",
        *,
        read_only: bool = False,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
        read_timeout: float | Literal["default"] | None = "default",
        embeddings: Embeddings | None = None,
        embedding_window: WindowSpec = (DEFAULT_SIZE, DEFAULT_OVERLAP),
        reindex_embeddings: bool = False,
    ) -> None:
        # "~/recall.db" is the home directory's file, as open_store and the CLI read it
        self.path = os.path.expanduser(os.fspath(path))
        self.busy_timeout = busy_timeout
        if read_timeout == "default":
            read_timeout = default_read_timeout() if read_only else None
        self.read_timeout = (read_timeout or None) if read_only else None
        self._memory = self.path == ":memory:"
        if self._memory and read_only:
            raise InvalidArgumentError("an in-memory store cannot be read-only")
        super().__init__(read_only=read_only)
        self._local = threading.local()
        self._write_lock = threading.RLock()
        self._all_conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()
        self._generation = 0
        self._immutable = False
        self._wal_path = self.path + "-wal"
        self._file_state: tuple[int, int, int] | None = None
        self._shared: sqlite3.Connection | None = None
        self._next_write = 0.0  # (time.monotonic) see _wait_for_hand_over
        try:
            self.layout: Layout = self._open(read_only)
        except BaseException:
            self.close()
            raise
        self._dialect = st.SqliteDialect(self.layout)
        self._open_vectors(embeddings, embedding_window, reindex_embeddings)

    def _open(self, read_only: bool) -> Layout:
        """Check (read-only) or create and migrate (writable) the file; its layout.

        A writable open of a current store only reads (the schema, the journal mode): no
        transaction, no lock, not a byte written.
        """
        if read_only:
            self._check_file()
        elif not self._memory:
            refuse_hot_journal(self.path)
        with self._connection() as conn:
            layout = self._detect(conn)
        if not read_only:
            self._refuse_unless_ours(conn, layout)
            with self._write_lock, self._busy_is_an_error():
                # persistent files only, and only once the file is known ours
                if not self._memory and self._journal_mode(conn) != "wal":
                    conn.execute("PRAGMA journal_mode = WAL")
                if setup_needed(conn):
                    create_or_migrate(conn, name=self.path)
                    layout = self._detect(conn)
        if layout is None:
            raise NotASessionDatabaseError(
                self._guarded(lambda c: missing_tables_message(c, self.path), conn)
            )
        if layout.fts_columns == 0:
            raise NotASessionDatabaseError(
                f"{self.path} has no 'messages_fts' full-text index; it cannot be searched"
            )
        return layout

    def _refuse_unless_ours(self, conn: sqlite3.Connection, layout: Layout | None) -> None:
        """Raise unless a writable open may go on: the file is empty, or a store of ours no
        newer than this library."""
        if layout is None:
            objects = self._guarded(schema_objects, conn)
            if objects and "session_recall_meta" not in objects:
                raise NotASessionDatabaseError(foreign_file_message(self.path, objects))
        elif not layout.own and layout.fts_columns == 0:  # 'sessions' and 'messages', no index
            raise NotASessionDatabaseError(
                foreign_file_message(self.path, self._guarded(schema_objects, conn))
            )
        elif not layout.own:
            raise NotASessionDatabaseError(
                f"{self.path} is a session database of another program (e.g. a Hermes "
                "state.db); open it read-only (SessionStore(path, read_only=True), "
                "SessionStore.open_hermes(path), or --read-only on the command line), "
                "or import it into a store of your own"
            )
        elif (layout.version or 0) > SCHEMA_VERSION:
            raise NotASessionDatabaseError(
                f"{self.path} has schema version {layout.version}, newer than this "
                f"library's {SCHEMA_VERSION}; upgrade langchain-session-recall"
            )

    @staticmethod
    def _journal_mode(conn: sqlite3.Connection) -> str:
        return str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()

    @contextmanager
    def _busy_is_an_error(self) -> Iterator[None]:
        """SQLite's ``database is locked`` (its busy timeout ran out) as :class:`StoreBusyError`."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
            raise StoreBusyError(
                f"{self.path} is busy: another connection kept its write lock for more than "
                f"{self.busy_timeout:g} s (busy_timeout), so nothing of this write was stored; "
                "try again once that writer is done, or open the store with a longer "
                "busy_timeout"
            ) from exc

    @classmethod
    def open_hermes(cls, path: str | os.PathLike[str] | None = None) -> SqliteSessionStore:
        """Open a Hermes agent ``state.db`` read-only (default ``~/.hermes/state.db``).

        Example:
            >>> SessionStore.open_hermes("/nonexistent/state.db")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            langchain_session_recall.errors.NotASessionDatabaseError: no such file: ...
        """
        return cls(Path.home() / ".hermes" / "state.db" if path is None else path, read_only=True)

    @property
    def dialect(self) -> st.SqliteDialect:
        return self._dialect

    def describe(self) -> str:
        return self.path

    def _database_key(self) -> str:
        return self.store_id if self._memory else os.path.realpath(self.path)

    def _layout_name(self) -> str:
        return "own" if self.layout.own else "foreign"

    # ------------------------------------------------------------------ connections

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
        self._immutable = wal_mode and not os.path.exists(self._wal_path)
        self._file_state = self._stat_file()

    def _stat_file(self) -> tuple[int, int, int] | None:
        try:
            stat = os.stat(self.path)
        except OSError:
            return None
        return (stat.st_ino, stat.st_size, stat.st_mtime_ns)

    def _open_connection(self) -> sqlite3.Connection:
        try:
            if self._memory:
                conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            elif self.read_only:
                conn = sqlite3.connect(
                    read_only_uri(self.path, immutable=self._immutable),
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
                # Another program's file may hold text that is not UTF-8: read it with
                # U+FFFD in place of the bad bytes rather than fail the whole query.
                conn.text_factory = _lenient_text
                if self.read_timeout is not None:
                    self._deadline().install(conn)
            else:
                conn.execute("PRAGMA foreign_keys = ON")
                conn.execute("PRAGMA synchronous = NORMAL")
                conn.execute(st.SECURE_DELETE_ON)
        except sqlite3.DatabaseError as exc:
            raise NotASessionDatabaseError(f"cannot open {self.path}: {exc}") from exc
        with self._conns_lock:
            self._all_conns.append(conn)
        return conn

    def _conn(self) -> sqlite3.Connection:
        self._check_open()
        if self._memory:
            if self._shared is None:
                self._shared = self._open_connection()
            return self._shared
        if self._immutable and (
            os.path.exists(self._wal_path) or self._stat_file() != self._file_state
        ):
            with self._conns_lock:
                # A writer started, or came and went (its -wal already removed): an immutable
                # connection would serve stale or torn pages. Keep reading without files beside
                # the database when no writer is left, through SQLite's locks when one is.
                self._immutable = not os.path.exists(self._wal_path)
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

    def _guarded(self, read: Callable[[sqlite3.Connection], T], conn: sqlite3.Connection) -> T:
        """``read(conn)``, a file that is not SQLite reported as not a session database (and
        a hot journal as what it is)."""
        try:
            return _again_on_schema_change(lambda: read(conn))
        except sqlite3.DatabaseError as exc:
            if self.read_only and is_hot_journal(self.path, exc):
                raise NotASessionDatabaseError(hot_journal_message(self.path)) from exc
            raise NotASessionDatabaseError(f"not a readable SQLite database: {exc}") from exc

    def _deadline(self) -> ReadDeadline:
        """This thread's :class:`ReadDeadline` (its connection's reads are under it)."""
        deadline: ReadDeadline | None = getattr(self._local, "deadline", None)
        if deadline is None:
            deadline = ReadDeadline(self.read_timeout or 0.0, self.path)
            self._local.deadline = deadline
        return deadline

    def _detect(self, conn: sqlite3.Connection) -> Layout | None:
        return self._guarded(detect_layout, conn)

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        # In-memory stores share one connection, so reads take the lock too.
        if self._memory:
            with self._write_lock:
                yield self._conn()
        elif self.read_timeout is not None:
            with self._deadline().limit():
                yield self._conn()
        else:
            yield self._conn()

    @contextmanager
    def _write_transaction(self, *, bulk: bool = False) -> Iterator[sqlite3.Connection]:
        with self._write_lock:
            conn = self._conn()
            # Inside transaction() on this thread: a savepoint, so a failed write still leaves
            # nothing half-done while the outer block goes on.
            nested = conn.in_transaction
            with self._busy_is_an_error():  # waits up to busy_timeout for the write lock
                if nested:
                    conn.execute("SAVEPOINT session_recall")
                else:
                    self._wait_for_hand_over()
                    self._begin(conn, politely=bulk and not self._memory)
            started = time.monotonic()
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
            finally:
                if not nested:
                    held = time.monotonic() - started
                    pause = min(_MAX_HAND_OVER, held * self.hand_over)
                    self._next_write = time.monotonic() + pause
            conn.execute("RELEASE session_recall" if nested else "COMMIT")

    def _begin(self, conn: sqlite3.Connection, *, politely: bool) -> None:
        """``BEGIN IMMEDIATE``, waiting up to ``busy_timeout`` for the write lock.

        A single write waits in SQLite's busy handler, which tries again every 100 ms at
        most. A bulk block (``politely``: an import's group, which holds the lock for long)
        tries every 0.15 to 0.3 s instead, so when both wait for the same writer, the single
        write (a recorder's message) nearly always goes first.
        """
        if not politely:
            conn.execute("BEGIN IMMEDIATE")
            return
        deadline = time.monotonic() + self.busy_timeout
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            while True:
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as exc:
                    left = deadline - time.monotonic()
                    if not is_busy(exc) or left <= 0:
                        raise
                time.sleep(min(left, random.uniform(*_BULK_TRIES)))
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")

    def _wait_for_hand_over(self) -> None:
        """Before a write transaction: when this store's last one held the lock for long, let
        :attr:`hand_over` of that time pass since it ended (at most 0.15 s). SQLite does not
        queue its writers: a waiting one tries again every 100 ms at most, and would nearly
        never find the lock free between the back-to-back transactions of an import; this gap
        lets it in.
        """
        if self._memory:
            return
        wait = self._next_write - time.monotonic()
        if wait > 0:
            time.sleep(wait)

    def _in_block(self) -> bool:
        return getattr(self._local, "block", None) is not None

    @contextmanager
    def _block(self, conn: sqlite3.Connection) -> Iterator[None]:
        block = _Block()
        self._local.block = block
        try:
            yield
        finally:
            self._local.block = None
        self._index_deferred(conn, block)

    @staticmethod
    def _index_deferred(conn: sqlite3.Connection, block: _Block) -> None:
        """Index the messages whose indexing ``block`` deferred, and index on insert again."""
        if block.indexed_through is not None:
            conn.execute(FTS_INDEX_SINCE, (block.indexed_through,))
            conn.execute(FTS_RESUME)
        block.indexed_through, block.batches = None, 0

    def _before_batch(self) -> None:
        """Inside :meth:`transaction`, from its second batch of messages on, leave indexing to
        the end of the block: a meta row that the insert trigger checks (see
        :data:`~langchain_session_recall.backends.sqlite.schema.FTS_DEFER`) is written in the
        block's transaction, so no other connection ever sees it, a rollback removes it, and
        the schema never changes (a schema change would make other connections' searches
        fail). Called before the batch's own savepoint opens, so undoing a failed batch keeps
        indexing deferred. A single batch indexes on insert: deferring would cost more.
        """
        block: _Block | None = getattr(self._local, "block", None)
        if block is None or block.indexed_through is not None or not self.layout.own:
            return  # (only the thread holding a block, and so the write lock, gets past here)
        block.batches += 1
        if block.batches < 2:
            return
        conn = self._conn()
        if not conn.execute(st.HAS_TRIGGER, {"name": FTS_INSERT_TRIGGER_NAME}).fetchone():
            return  # someone removed it: index nothing behind their back
        (block.indexed_through,) = conn.execute(st.MAX_MESSAGE_ID).fetchone()
        conn.execute(FTS_DEFER, (block.indexed_through,))

    def _before_delete(self) -> None:
        """Inside :meth:`transaction` with indexing left to the end of the block, index the
        block's messages now (and index on insert again): deleting a message the index does
        not hold yet would damage the index. Done in the block's own transaction, before the
        delete's savepoint, so a failed delete keeps it."""
        block: _Block | None = getattr(self._local, "block", None)
        if block is not None and block.indexed_through is not None:
            self._index_deferred(self._conn(), block)

    @contextmanager
    def _deleting(self, conn: sqlite3.Connection, session_ids: Sequence[str]) -> Iterator[None]:
        # The pages the deleted rows leave free are zeroed: every writable connection runs
        # with secure_delete on (see _open_connection).
        conn.execute(st.DELETE_HEADERS, {"ids": self.dialect.array(session_ids)})
        yield

    def _close(self) -> None:
        with self._conns_lock:
            for conn in self._all_conns:
                with contextlib.suppress(sqlite3.Error):  # closing is best effort
                    conn.close()
            self._all_conns.clear()

    def get_cached_summary(self, key: str) -> CachedSummary | None:
        # A foreign file has no cache; a version-1 file opened read-only has one without
        # verdicts (a writable open migrates it), and read-only stores cache in memory anyway.
        if not self.layout.has_summary_cache or (self.layout.version or 0) < 2:
            return None
        return super().get_cached_summary(key)

    def imported_keys(
        self, source_kind: str, session_id: str, among: Sequence[str] | None = None
    ) -> set[str]:
        if not self.layout.own:
            return set()
        return super().imported_keys(source_kind, session_id, among)

    # ------------------------------------------------------------------ writing

    def _append_rows(
        self, conn: sqlite3.Connection, session_id: str, rows: Sequence[MessageRow]
    ) -> list[int] | None:
        d = self.dialect
        found = conn.execute(sql.session_exists(d), {"id": session_id}).fetchone()
        if not found:
            return None
        ids = self._insert_messages(conn, session_id, rows, count_of(found[0]))
        conn.execute(sql.bump_message_count(d), {"n": len(rows), "id": session_id})
        return ids

    def _insert_messages(
        self, conn: sqlite3.Connection, session_id: str, rows: Sequence[MessageRow], first: int
    ) -> list[int]:
        values = [
            (
                session_id,
                r.role,
                r.content,
                r.tool_call_id,
                r.tool_calls,
                r.tool_name,
                r.timestamp,
                first + n,
            )
            for n, r in enumerate(rows)
        ]
        # Inside our write transaction nothing else can insert, and AUTOINCREMENT never reuses
        # ids, so the batch's ids are the consecutive run ending at last_insert_rowid() (the FTS
        # trigger's own inserts do not change it: SQLite restores it when a trigger ends).
        _insert_many(conn, st.INSERT_MESSAGES, values)
        last = int(conn.execute(st.LAST_ROWID).fetchone()[0])
        ids = list(range(last - len(rows) + 1, last + 1))
        cjk = _cjk_rows(ids, [r.content for r in rows])
        if cjk:
            _insert_many(conn, st.INSERT_CJK, cjk)
        return ids

    def _insert_ledger(self, conn: sqlite3.Connection, rows: Sequence[LedgerRow]) -> None:
        # A statement per hundred rows, not one per row: a quarter less of what the ledger
        # adds to a bulk write (43k -> 32k instructions a message, callgrind).
        _insert_many(conn, st.INSERT_LEDGER, rows, st.INSERT_LEDGER_TAIL)

    def _insert_runs(self, conn: sqlite3.Connection, rows: Sequence[RunRow]) -> None:
        _insert_many(conn, st.INSERT_RUNS, rows, st.INSERT_LEDGER_TAIL)

    def _has_import_runs(self) -> bool:
        return self.layout.has_import_runs

    def _put_header(self, conn: sqlite3.Connection, session_id: str, header: str) -> None:
        conn.execute(st.PUT_HEADER, {"id": session_id, "header": header})

    def reindex_cjk(self) -> int:
        """Fill the CJK bigram index for messages written by other SQLite clients.

        Returns the number of messages indexed.
        """
        with self._write() as conn:
            rows = conn.execute(st.UNINDEXED_CJK).fetchall()
            found = _cjk_rows([r[0] for r in rows], [decode_content(r[1]) for r in rows])
            if found:
                _insert_many(conn, st.INSERT_CJK, found)
        return len(found)

    def optimize(self) -> None:
        """Merge the full-text index segments and refresh planner statistics.

        Merging also drops the words of deleted messages from the index (FTS5 keeps them in
        older segments until then); the write-ahead log is then checkpointed and truncated,
        so that what :meth:`delete_sessions` removed is gone from the files too (unless
        another connection still reads an older snapshot: then the log is emptied later).
        """
        with self._write() as conn:
            for table in self._fts_tables():
                conn.execute(st.fts_command(table, "optimize"))
        with self._read() as conn:
            conn.execute("PRAGMA optimize")
            if not self._memory:
                conn.execute(st.CHECKPOINT_TRUNCATE).fetchall()

    def _fts_tables(self) -> list[str]:
        """The full-text tables of this file (main, CJK, headers)."""
        optional = [("messages_cjk_fts", self.layout.has_cjk)]
        optional.append(("session_headers_fts", self.layout.has_headers))
        return ["messages_fts", *(table for table, present in optional if present)]

    # ------------------------------------------------------------------ statistics

    def _size_bytes(self, conn: sqlite3.Connection) -> int:
        return int(conn.execute(st.SIZE).fetchone()[0])

    def _index_check(self) -> StoreCheck:
        checked, problems = ["file (PRAGMA quick_check)"], []
        with self._read() as conn:
            result = [str(r[0]) for r in conn.execute(st.QUICK_CHECK)]
            if result != ["ok"]:
                problems.append("file: " + "; ".join(result[:5]))
            if self.read_only:
                # FTS5's integrity-check is a write statement: a read-only store cannot run it.
                checked.append("full-text index: skipped (the store is open read-only)")
            else:
                for table in self._fts_tables():
                    checked.append(f"full-text index {table}")
                    try:
                        # compares the index with its content (the messages view); a write
                        # statement, so it waits its turn for the lock like any writer
                        with self._busy_is_an_error():
                            conn.execute(st.fts_command(table, "integrity-check"))
                    except sqlite3.DatabaseError as exc:
                        problems.append(
                            f"{table} is damaged ({exc}); rebuild it with: "
                            f"{st.fts_command(table, 'rebuild')}"
                        )
        return StoreCheck(ok=not problems, checked=tuple(checked), problems=tuple(problems))

    # ------------------------------------------------------------------ search

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
        """Messages matching one reading of the query, best first, from every index.

        The main index and (when present) the CJK bigram index are both queried; a message
        found by both comes back once, with its best relevance. Ranking is bounded to
        ``rank_window`` rows per index: see :meth:`_rank_plans` for what happens to queries of
        very common words. Messages of ``automation`` sources get a budget of their own
        (:func:`~langchain_session_recall.backends.hits.budget_automation`), taken from the
        same ranked pass.

        Example:
            >>> from langchain_session_recall.core.query import parse_query
            >>> store = SessionStore(":memory:")
            >>> _ = store.add_session("s1")
            >>> _ = store.add_messages("s1", [{"role": "user", "content": "hi"}])
            >>> [h.session_id for h in store.match_messages(parse_query("hi"), "relaxed")]
            ['s1']
        """
        hits: list[MessageHit] = []
        targets = [("messages_fts", False)]
        if self.layout.has_cjk:
            targets.append(("messages_cjk_fts", True))
        with self._read() as conn:
            for table, cjk in targets:
                found: set[int] = set()
                for expression, bound in self._rank_plans(conn, table, query, reading, cjk=cjk):
                    if per_session is None and limit is not None and len(found) >= limit:
                        break  # (with per_session every plan adds the sessions it finds)
                    ranked = self._ranked(
                        conn,
                        table,
                        expression,
                        bound,
                        filters,
                        limit,
                        automation,
                        per_session,
                        sessions,
                    )
                    found.update(hit.message_id for hit in ranked)
                    hits += ranked
        return best_hits(hits, limit, set(automation), per_session, sessions)

    def _ranked(
        self,
        conn: sqlite3.Connection,
        table: str,
        expression: str,
        bound: int | None,
        filters: SearchFilters,
        limit: int | None,
        automation: Sequence[str] = (),
        per_session: int | None = None,
        sessions: int | None = None,
    ) -> list[MessageHit]:
        budget = bool(automation) and limit is not None
        # The best rows are read lazily (no LIMIT) when a budget or the per-session hits need
        # to know how far to read: FTS5 has sorted its matches already, so reading on costs
        # only the joins of the rows read.
        lazy = budget or limit is None or per_session is not None
        params = {"expr": expression, "bound": bound, "limit": -1 if lazy else limit}
        statement, extra = st.match_query(self.dialect, table, filters, bounded=bound is not None)
        params.update(extra)
        in_hand: list[str] = []
        if per_session == 1 and sessions is not None and limit is not None:
            # the best sessions' best hits are the first hits of each session in rank order:
            # read on from the best ``limit`` until the seats are taken (no second ranking)
            reading = functools.partial(
                read_seated, limit=limit, sessions=sessions, automation=set(automation)
            )
            return self._hits(conn, statement, params, reading)
        if limit is None and per_session is not None:
            top: list[MessageHit] = []
        elif per_session is None or limit is None:
            return self._hits(conn, statement, params, self._taker(limit, automation, budget))
        else:
            read = _Counted()
            top = self._hits(conn, statement, params, read.taking(limit, automation, budget))
            if read.done and len(top) == read.rows:
                return top  # every match is in: nothing left for the per-session query
            top = top if budget else top[:limit]
            in_hand = sessions_in_hand(read.read, top, per_session)
        # each other session's best, in a query of its own (which ranks only their matches)
        statement, extra = st.session_best_query(
            self.dialect,
            table,
            filters,
            bounded=bound is not None,
            in_hand=in_hand,
            seated=sessions is not None,
        )
        params.update(extra, per_session=per_session)
        if sessions is not None:
            params.update(
                seats=sessions,
                auto_seats=seats(sessions),
                automation=self.dialect.array(list(automation)),
            )
        return top + self._hits(conn, statement, params, list)

    @staticmethod
    def _taker(
        limit: int | None, automation: Sequence[str], budget: bool
    ) -> Callable[[Iterator[MessageHit]], list[MessageHit]]:
        if budget and limit is not None:
            return functools.partial(budget_automation, limit=limit, automation=set(automation))
        return list

    def _hits(
        self,
        conn: sqlite3.Connection,
        statement: str,
        params: dict[str, Any],
        take: Callable[[Iterator[MessageHit]], list[MessageHit]],
    ) -> list[MessageHit]:
        """Run a full-text query; ``take`` reads what it needs of its hits (lazily)."""
        cursor = conn.cursor()
        try:
            return take(map(MessageHit.from_row, _execute(cursor, statement, params)))
        except sqlite3.OperationalError as exc:
            # Our renderer only emits quoted terms; reaching this is a bug, not bad input.
            raise SessionRecallError(
                f"full-text query {params['expr']!r} was rejected by SQLite: {exc}"
            ) from exc
        finally:
            cursor.close()

    def match_sessions(
        self,
        query: ParsedQuery,
        reading: Literal["strict", "relaxed"],
        *,
        filters: SearchFilters = _NO_FILTERS,
        limit: int = MATCH_LIMIT,
    ) -> list[SessionHit]:
        """Sessions whose header (title, start date in words) matches, best first.

        Example:
            >>> from langchain_session_recall.core.query import parse_query
            >>> store = SessionStore(":memory:")
            >>> _ = store.add_session("s1", title="Trip planning", started_at=1683554160.0)
            >>> [h.session_id for h in store.match_sessions(parse_query("May 2023"), "strict")]
            ['s1']
        """
        if not self.layout.has_headers:
            return []
        statement, params = st.header_match_query(self.dialect, filters)
        # headers hold words no message holds (titles, dates): a prefix is matched as written
        params.update(expr=to_fts5(query, reading, complete=False), limit=limit)
        with self._read() as conn:
            rows = _execute(conn, statement, params).fetchall()
        hits = [
            SessionHit(str(r[0]), as_float(r[1]), str(r[2] or "unknown"), as_float(r[3]))
            for r in rows
        ]
        # FTS5 orders by rank alone; equal ranks in session id order, as PostgreSQL sorts them
        return sorted(hits, key=lambda h: (-h.relevance, h.session_id))

    def _probe(self, conn: sqlite3.Connection, table: str, expression: str) -> int | None:
        """``-1`` when ``expression`` matches nothing, ``None`` when it matches at most
        ``rank_window`` rows, else the rowid above which the newest ``rank_window`` lie."""
        try:
            count, oldest = _execute(
                conn, st.window_probe_query(table), {"expr": expression, "n": self.rank_window + 1}
            ).fetchone()
        except sqlite3.OperationalError as exc:
            raise SessionRecallError(
                f"full-text query {expression!r} was rejected by SQLite: {exc}"
            ) from exc
        if not count:
            return _NOTHING
        return None if count <= self.rank_window else int(oldest)

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
        bound = self._probe(conn, table, expression)
        if bound == _NOTHING:
            return []  # no statement to rank: most words are absent from the CJK index
        if bound is None or reading != "relaxed" or not 2 <= len(query.relaxed) <= _MAX_PROBED:
            return [(expression, bound)]
        singles = [to_fts5(replace(query, relaxed=(t,)), "relaxed", cjk=cjk) for t in query.relaxed]
        selective = tuple(
            term
            for term, single in zip(query.relaxed, singles, strict=True)
            if self._probe(conn, table, single) in (None, _NOTHING)
        )
        if selective:
            narrowed = to_fts5(replace(query, relaxed=selective), "relaxed", cjk=cjk)
            return [(narrowed, self._probe(conn, table, narrowed))]
        every = " AND ".join(f"({single})" for single in singles)
        plans = [(every, self._probe(conn, table, every)), (expression, bound)]
        return [(e, b) for e, b in plans if b != _NOTHING]

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
        rows = self._vocabulary_rows(st.VOCAB, prefix, limit)
        return [(str(r[0]), int(r[1])) for r in rows]

    def prefix_completions(self, prefix: str, limit: int) -> tuple[list[str], int] | None:
        """The ``limit`` words of the main index that most messages hold among those the
        prefix query ``prefix*`` matches, and how many it matches (one read of that range of
        the ``fts5vocab`` view).

        Example:
            >>> store = SessionStore(":memory:")
            >>> _ = store.add_session("s1")
            >>> _ = store.add_messages("s1", [{"role": "user", "content": "deployed deployment"}])
            >>> _ = store.add_messages("s1", [{"role": "user", "content": "deployment depends"}])
            >>> store.prefix_completions("deploy", 1)
            (['deploy'], 2)
        """
        rows = self._vocabulary_rows(st.COMPLETIONS, stable_prefix(prefix), limit)
        return [str(r[0]) for r in rows], int(rows[0][1]) if rows else 0

    def _vocabulary_rows(self, statement: str, prefix: str, limit: int) -> list[Any]:
        """``statement`` over the words of the main index in ``[prefix, prefix + max)``."""
        if not prefix:
            return []
        with self._read() as conn:
            # query_only forbids even TEMP tables; the file itself stays read-only (mode=ro).
            if self.read_only:
                conn.execute("PRAGMA query_only = 0")
            try:
                conn.execute(st.CREATE_VOCAB)
            finally:
                if self.read_only:
                    conn.execute("PRAGMA query_only = 1")
            params = {"lo": prefix, "hi": prefix + "\U0010ffff", "n": limit}
            rows: list[Any] = conn.execute(statement, params).fetchall()
        return rows


SessionStore = SqliteSessionStore
"""The name :class:`SqliteSessionStore` had before the PostgreSQL backend came (kept)."""
