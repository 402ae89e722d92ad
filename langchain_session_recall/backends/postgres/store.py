"""``PostgresSessionStore``: the session store on PostgreSQL full-text search.

For deployments where many users and agents on several machines write at once. What only
PostgreSQL needs: a connection pool (psycopg 3), a schema of its own created and migrated under
an advisory lock, its bulk insert and its ``tsquery`` search. Everything else is the shared
:class:`~langchain_session_recall.backends.base.SessionBackend`, so behaviour matches the
SQLite store.

Requires the ``postgres`` extra: ``pip install "langchain-session-recall[postgres]"``.
"""

from __future__ import annotations

import contextlib
import functools
import re
import string
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal

from langchain_session_recall.backends.base import SessionBackend, StoreCheck
from langchain_session_recall.backends.common.rows import session_of
from langchain_session_recall.backends.hits import MATCH_LIMIT, best_hits, budget_automation, seats
from langchain_session_recall.backends.postgres import statements as st
from langchain_session_recall.backends.postgres.dsn import normalize_dsn, redact_dsn, scrub
from langchain_session_recall.backends.postgres.plans import ESTIMATE, estimates, prefer_bitmap
from langchain_session_recall.backends.postgres.schema import (
    PG_SCHEMA_VERSION,
    ddl_statements,
    rank_weights,
)
from langchain_session_recall.backends.postgres.tsquery import to_tsquery_text
from langchain_session_recall.backends.sql import WHERE_FIELDS
from langchain_session_recall.backends.vectors.windows import DEFAULT_OVERLAP, DEFAULT_SIZE
from langchain_session_recall.core.cjk import bigram_text, has_cjk
from langchain_session_recall.core.headers import session_header
from langchain_session_recall.core.query import ParsedQuery
from langchain_session_recall.errors import (
    InvalidArgumentError,
    MissingFeatureError,
    NotASessionDatabaseError,
    StoreUnavailableError,
)
from langchain_session_recall.messages import MessageRow
from langchain_session_recall.models import (
    MessageHit,
    SearchFilters,
    Session,
    SessionHit,
    as_float,
)

if TYPE_CHECKING:
    import psycopg
    from langchain_core.embeddings import Embeddings
    from psycopg_pool import ConnectionPool

    from langchain_session_recall.backends.vectors.windows import WindowSpec

__all__ = ["DEFAULT_SCHEMA", "PostgresSessionStore"]

DEFAULT_SCHEMA = "session_recall"
_NO_FILTERS = SearchFilters()
_SCHEMA_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_DIALECT = st.PostgresDialect()
_CREATE_SESSION = st.create_session(_DIALECT)  # (a writable store's dialect is this one)
_WHERE_SINCE = 4
"""The schema version that added the session columns of :data:`sql.WHERE_FIELDS`."""
_RUNS_SINCE = 5
"""The schema version that added ``import_runs`` (a read-only store of an older one reads
its ledger rows alone)."""


SEARCH_WORK_MEM_KB = 16 * 1024
"""``work_mem`` of the store's connections, in kB, when the server's is lower."""


def _schema_name(name: str) -> str:
    if not isinstance(name, str) or not _SCHEMA_NAME.match(name):
        raise InvalidArgumentError(
            f"schema name {name!r} is not a plain identifier: use letters, digits and '_' "
            "(at most 63 characters, not starting with a digit)"
        )
    return name


def _import_psycopg() -> Any:
    try:
        import psycopg
        import psycopg_pool
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingFeatureError(
            "the PostgreSQL backend needs psycopg 3 and psycopg-pool: "
            'pip install "langchain-session-recall[postgres]"'
        ) from exc
    return psycopg, psycopg_pool


def _plain(text: str) -> str:
    """Text for ``to_tsvector`` as the messages' columns see it: punctuation made spaces."""
    return (_DIALECT.text(text) or "").translate(_PUNCTUATION)


_PUNCTUATION = str.maketrans(string.punctuation, " " * len(string.punctuation))


@functools.cache
def _text_dumper() -> type:
    """psycopg's dumper of ``str`` parameters, except that text holding NUL goes as ``NULL``.

    PostgreSQL text cannot hold NUL (the store drops it from what it writes; the server refuses
    it from anyone), so a looked-up value with a NUL, say a user id from the application or a
    role filter from the model, equals no stored value. Sent as ``NULL`` it equals none either,
    instead of failing the query with ``DataError`` (on SQLite the same lookups just match
    nothing). Lists leave such values out (:meth:`PostgresDialect.array`): in ``NOT x = ANY``
    a ``NULL`` item would exclude every row.
    """
    from psycopg.types.string import StrDumperUnknown

    class NulFreeText(StrDumperUnknown):
        def dump(self, obj: str) -> Any:
            return None if "\x00" in obj else super().dump(obj)

    return NulFreeText


def _batch(session_id: str, rows: Sequence[MessageRow]) -> dict[str, Any]:
    """The parameters of :data:`st.APPEND_MESSAGES`."""
    text = _DIALECT.text
    contents = [text(r.content) or "" for r in rows]
    return {
        "session_id": session_id,
        "count": len(rows),
        "role": [r.role for r in rows],
        "content": contents,
        "tool_call_id": [text(r.tool_call_id) for r in rows],
        "tool_calls": [text(r.tool_calls) for r in rows],
        "tool_name": [text(r.tool_name) for r in rows],
        "ts": [r.timestamp for r in rows],
        "cjk": [bigram_text(c) if c and has_cjk(c) else None for c in contents],
    }


_SAVEPOINT = "SAVEPOINT session_recall_write"
_RELEASE = "RELEASE SAVEPOINT session_recall_write"
_ROLLBACK = "ROLLBACK TO SAVEPOINT session_recall_write"


def _under_savepoint(
    conn: psycopg.Connection[Any], statement: str, params: dict[str, Any]
) -> list[tuple[Any, ...]]:
    """The rows of ``statement`` run in the open transaction of ``conn`` under a savepoint,
    rolled back to if it fails (as psycopg's nested ``transaction()`` does), with the
    savepoint and its release sent in one pipeline with the statement: one round trip."""
    import psycopg

    if not psycopg.Pipeline.is_supported():  # pragma: no cover - libpq older than 14
        with conn.transaction():
            return conn.execute(statement, params).fetchall()
    try:
        with conn.pipeline():
            conn.execute(_SAVEPOINT)
            cursor = conn.execute(statement, params)
            conn.execute(_RELEASE)
    except BaseException:
        if not conn.closed:  # the savepoint was sent, and the release failed or was skipped
            with contextlib.suppress(psycopg.Error):  # (the block fails anyway then)
                conn.execute(_ROLLBACK)
                conn.execute(_RELEASE)
        raise
    return cursor.fetchall()


class PostgresSessionStore(SessionBackend):
    """Sessions and messages in PostgreSQL, searchable with its full-text search.

    The schema (``schema``, created when absent, migrated when older) holds the same tables as
    the SQLite store; connections come from a pool (``min_size`` to ``max_size``), so many
    threads read and write at once. Async callers (the retriever's ``ainvoke``, the tool's
    ``ainvoke``) run these calls in LangChain's executor, as they do for SQLite.

    Args:
        dsn: ``postgresql://user:password@host:port/dbname`` (any libpq connection string). It
            is kept private: ``repr``, messages and logs show it with the password as ``***``.
        schema: Schema holding the tables; several stores can share a database.
        read_only: Never write: no schema creation, read-only transactions.
        min_size: Connections kept open. max_size: Most connections opened.
        connect_timeout: Seconds to wait for the server.
        embeddings, embedding_window, reindex_embeddings: Passage vectors for hybrid search,
            as for :class:`~langchain_session_recall.SessionStore` (``docs/hybrid.md``).

    Example:
        >>> store = PostgresSessionStore("postgresql://app@127.0.0.1/recall")  # doctest: +SKIP
        >>> _ = store.add_session("s1", title="CORS fix")  # doctest: +SKIP
        >>> msg = {"role": "user", "content": "CORS error"}
        >>> _ = store.add_messages("s1", [msg])  # doctest: +SKIP
        >>> store.get_session("s1").message_count  # doctest: +SKIP
        1
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = DEFAULT_SCHEMA,
        read_only: bool = False,
        min_size: int = 1,
        max_size: int = 10,
        connect_timeout: float = 10.0,
        embeddings: Embeddings | None = None,
        embedding_window: WindowSpec = (DEFAULT_SIZE, DEFAULT_OVERLAP),
        reindex_embeddings: bool = False,
    ) -> None:
        psycopg, psycopg_pool = _import_psycopg()
        self.schema = _schema_name(schema)
        self._dsn = dsn = normalize_dsn(dsn)
        super().__init__(read_only=read_only)
        self._local = threading.local()
        self._pool: ConnectionPool | None = None
        self._dialect = _DIALECT
        self._import_runs = True  # (set by _prepare for a read-only store of an older version)
        try:
            conn = psycopg.connect(
                dsn, autocommit=True, connect_timeout=max(1, int(connect_timeout))
            )
        except psycopg.Error as exc:
            self.close()
            raise StoreUnavailableError(
                f"cannot connect to PostgreSQL at {redact_dsn(dsn)} ({scrub(str(exc), dsn)}); "
                "check the DSN, that the server runs and that it accepts this user"
            ) from None  # the driver's own error may quote the DSN, password included
        with conn:
            try:
                self._prepare(conn)
            except BaseException:
                self.close()
                raise
        self._pool = psycopg_pool.ConnectionPool(
            dsn,
            min_size=min_size,
            max_size=max_size,
            kwargs={"autocommit": True},
            configure=self._configure,
            timeout=connect_timeout * 3,
            open=True,
            name=f"session-recall-{self.store_id[:8]}",
        )
        self._open_vectors(embeddings, embedding_window, reindex_embeddings)

    @property
    def dialect(self) -> st.PostgresDialect:
        return self._dialect

    @property
    def dsn(self) -> str:
        """The connection string with its password shown as ``***``."""
        return redact_dsn(self._dsn)

    def describe(self) -> str:
        return f"schema {self.schema!r} at {self.dsn}"

    # ------------------------------------------------------------------ connections

    def _search_path(self) -> Any:
        from psycopg import sql

        return sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema))

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        conn.adapters.register_dumper(str, _text_dumper())
        conn.execute(self._search_path())
        # A search sorts its newest matches with their tsvectors (st.match_query): give the
        # sort room in memory (PostgreSQL's default 4 MB spills it to disk); never lowered.
        conn.execute(st.RAISE_WORK_MEM, {"kb": SEARCH_WORK_MEM_KB})
        if self.read_only:
            conn.execute("SET default_transaction_read_only = on")

    def _prepare(self, conn: psycopg.Connection[Any]) -> None:
        """Create or migrate the schema (one transaction, serialized across processes)."""
        from psycopg import sql

        if self.read_only:
            (count,) = conn.execute(st.HAS_TABLES, (self.schema,)).fetchone() or (0,)
            if count < len(st.OUR_TABLES):
                raise NotASessionDatabaseError(
                    f"schema {self.schema!r} holds no session store; open it once without "
                    "read_only=True to create it, or pass the right schema="
                )
            found = self._schema_version(conn) or 0
            if found < _WHERE_SINCE:  # read as they are: no DDL
                self._dialect = st.PostgresDialect(missing=frozenset(WHERE_FIELDS))
            self._import_runs = found >= _RUNS_SINCE
            return
        if self._schema_version(conn) == PG_SCHEMA_VERSION:
            return  # the usual case: no DDL, so no lock that could meet running writers
        with conn.transaction():
            conn.execute(st.SCHEMA_LOCK, (self.schema,))
            version = self._schema_version(conn)
            if version == PG_SCHEMA_VERSION:
                return  # another process created it while we waited
            if version is not None and version > PG_SCHEMA_VERSION:
                raise NotASessionDatabaseError(
                    f"schema {self.schema!r} has version {version}, newer than this library's "
                    f"{PG_SCHEMA_VERSION}; upgrade langchain-session-recall"
                )
            conn.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.schema))
            )
            conn.execute(sql.SQL("SET LOCAL search_path TO {}").format(sql.Identifier(self.schema)))
            for statement in ddl_statements():  # idempotent: creates, or brings v1 up to date
                conn.execute(statement)
            for sid, title, started in conn.execute(st.ALL_HEADERS).fetchall():
                header = _plain(session_header(title, started))
                conn.execute(st.PUT_HEADER, {"id": sid, "header": header})
            conn.execute(st.PUT_META, (str(PG_SCHEMA_VERSION),))

    def _schema_version(self, conn: psycopg.Connection[Any]) -> int | None:
        (count,) = conn.execute(st.HAS_TABLES, (self.schema,)).fetchone() or (0,)
        if count < len(st.OUR_TABLES):
            return None
        from psycopg import sql

        row = conn.execute(sql.SQL(st.GET_VERSION).format(sql.Identifier(self.schema))).fetchone()
        return int(row[0]) if row else None

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        held: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        if held is not None:  # inside transaction() on this thread: see its own writes
            yield held
            return
        assert self._pool is not None
        with self._pool.connection() as conn:
            yield conn

    @contextmanager
    def _write_transaction(self, *, bulk: bool = False) -> Iterator[psycopg.Connection[Any]]:
        # Inside transaction() psycopg makes this a savepoint: a failed write is undone alone.
        with self._connection() as conn, conn.transaction():
            yield conn

    def _in_block(self) -> bool:
        return getattr(self._local, "conn", None) is not None

    @contextmanager
    def _block(self, conn: psycopg.Connection[Any]) -> Iterator[None]:
        self._local.conn = conn
        try:
            yield
        finally:
            self._local.conn = None

    def _close(self) -> None:
        if self._pool is not None:
            self._pool.close()

    # ------------------------------------------------------------------ writing

    def _append_rows(
        self, conn: psycopg.Connection[Any], session_id: str, rows: Sequence[MessageRow]
    ) -> list[int] | None:
        found = conn.execute(st.APPEND_MESSAGES, _batch(session_id, rows)).fetchall()
        return sorted(int(r[0]) for r in found) or None

    def _append_alone(self, session_id: str, rows: Sequence[MessageRow]) -> list[int] | None:
        if any(r.parts for r in rows):  # a second statement follows (the parts' table)
            return None
        found = self._write_one(st.APPEND_MESSAGES, _batch(session_id, rows))
        return sorted(int(r[0]) for r in found) or None

    def _create_session(self, fields: dict[str, Any], header: str) -> Session | None:
        found = self._write_one(_CREATE_SESSION, {**fields, "header": _plain(header)})
        return session_of(found[0]) if found else None

    def _write_one(self, statement: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        """The rows of one writing statement, which commits on its own: outside
        :meth:`transaction` without a transaction around it (one round trip to the server,
        not three), inside it under a savepoint sent in the same round trip, so that if it
        fails it is undone alone, as every write in a block is."""
        self._check_writable()
        with self._connection() as conn:
            if not self._in_block():
                return conn.execute(statement, params).fetchall()
            return _under_savepoint(conn, statement, params)

    def _has_import_runs(self) -> bool:
        return self._import_runs

    def _put_header(self, conn: psycopg.Connection[Any], session_id: str, header: str) -> None:
        conn.execute(st.PUT_HEADER, {"id": session_id, "header": _plain(header)})

    def optimize(self) -> None:
        """Refresh planner statistics (``ANALYZE``) of the store's tables.

        Raises:
            ReadOnlyStoreError: the store was opened read-only (``ANALYZE`` writes statistics,
                and PostgreSQL allows it even in a read-only transaction).
        """
        with self._write() as conn:
            for statement in st.ANALYZE:
                conn.execute(statement)

    # ------------------------------------------------------------------ statistics

    def _size_bytes(self, conn: psycopg.Connection[Any]) -> int:
        row = conn.execute(st.SIZE).fetchone()
        return int(row[0]) if row else 0

    def _index_check(self) -> StoreCheck:
        with self._read() as conn:
            row = conn.execute(st.UNINDEXED).fetchone()
        missing = int(row[0]) if row else 0
        problems = (
            (f"{missing} message(s) have no full-text vector: searches cannot find them",)
            if missing
            else ()
        )
        return StoreCheck(
            ok=not problems, checked=("full-text vectors of every message",), problems=problems
        )

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
        """Messages matching one reading of the query, best first, from both tsvector columns.

        The main column and the CJK bigram column are both queried; a message found by both
        comes back once, with its best relevance. Each ranks only its newest ``rank_window``
        matches (a word found in more messages is ranked over its newest ones), found in the
        main column by the plan :mod:`~langchain_session_recall.backends.postgres.plans`
        chooses for the term (from an ``EXPLAIN`` of its estimate). Messages of
        ``automation`` sources get a budget of their own
        (:func:`~langchain_session_recall.backends.hits.budget_automation`).
        """
        hits: list[MessageHit] = []
        budget = bool(automation) and limit is not None
        with self._read() as conn:
            for cjk in (False, True):
                tsquery = to_tsquery_text(query, reading, cjk=cjk)
                statement, params = st.match_query(
                    self.dialect,
                    filters,
                    cjk=cjk,
                    automation=budget,
                    per_session=per_session is not None,
                    seated=sessions is not None,
                    bitmap=not cjk and self._bitmap_first(conn, tsquery),
                )
                params.update(
                    tsquery=tsquery,
                    weights=rank_weights(),
                    window=self.rank_window,
                    limit=limit if per_session is None else limit or 0,
                    automation=list(automation),
                    per_session=per_session,
                    seats=sessions,
                    auto_seats=seats(sessions) if sessions is not None else None,
                )
                # Never a prepared (generic) plan: without the tsquery value the planner may
                # pick a sequential scan over every message.
                rows = conn.execute(statement, params, prepare=False).fetchall()
                found = [MessageHit.from_row(r) for r in rows]
                if budget and limit is not None and per_session is None:
                    found = budget_automation(found, limit, set(automation))
                hits += found
        return best_hits(hits, limit, set(automation), per_session, sessions)

    def _bitmap_first(self, conn: psycopg.Connection[Any], tsquery: str) -> bool:
        """Whether the newest matches of ``tsquery`` in the main column are found faster from
        the GIN index than by walking the newest messages (:mod:`.plans`), from the planner's
        own estimate of its matches (one ``EXPLAIN``, nothing run)."""
        row = conn.execute(ESTIMATE, {"tsquery": tsquery}, prepare=False).fetchone()
        found = estimates(row[0]) if row else None
        return found is not None and prefer_bitmap(*found, self.rank_window)

    def match_sessions(
        self,
        query: ParsedQuery,
        reading: Literal["strict", "relaxed"],
        *,
        filters: SearchFilters = _NO_FILTERS,
        limit: int = MATCH_LIMIT,
    ) -> list[SessionHit]:
        """Sessions whose header (title, start date in words) matches, best first."""
        statement, params = st.header_match_query(self.dialect, filters)
        params.update(tsquery=to_tsquery_text(query, reading), limit=limit)
        with self._read() as conn:
            rows = conn.execute(statement, params, prepare=False).fetchall()
        return [
            SessionHit(str(r[0]), as_float(r[1]), str(r[2] or "unknown"), as_float(r[3]))
            for r in rows
        ]
