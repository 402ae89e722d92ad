"""``PostgresSessionStore``: the session store on PostgreSQL full-text search.

The twin of the SQLite ``SessionStore`` for deployments where many
users and agents on several machines write at once. Same public behaviour, same records, same
search pipeline (``search/pipeline.py``): only the I/O differs. psycopg 3 with
a connection pool; every statement is built by a module-level function or is a module constant,
identifiers come from a fixed list or :func:`_schema_name`, values are always bound parameters.

Requires the ``postgres`` extra: ``pip install "langchain-session-recall[postgres]"``.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
import time
import uuid
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from langchain_core.messages import BaseMessage

from langchain_session_recall.backends.postgres.schema import (
    PG_SCHEMA_VERSION,
    TS_CONFIG,
    ddl_statements,
    rank_weights,
)
from langchain_session_recall.backends.postgres.tsquery import to_tsquery_text
from langchain_session_recall.backends.rules import (
    check_ancestors,
    check_parent_exists,
    session_updates,
    validate_session_args,
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

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import AsyncConnectionPool, ConnectionPool

__all__ = [
    "DEFAULT_SCHEMA",
    "MigrationReport",
    "PostgresSessionStore",
    "is_postgres_dsn",
    "migrate_sqlite_to_postgres",
]

MessageLike = BaseMessage | Mapping[str, Any]
DEFAULT_SCHEMA = "session_recall"
_NO_FILTERS = SearchFilters()
_MAX_DEPTH = 256  # lineage walks stop here whatever the data says (cycles, runaway chains)
_SCHEMA_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def is_postgres_dsn(target: object) -> bool:
    """Whether ``target`` is a PostgreSQL connection URI rather than a file path.

    Example:
        >>> is_postgres_dsn("postgresql://app@db/recall"), is_postgres_dsn("state.db")
        (True, False)
    """
    return isinstance(target, str) and target.startswith(("postgresql://", "postgres://"))


def _schema_name(name: str) -> str:
    if not isinstance(name, str) or not _SCHEMA_NAME.match(name):
        raise ValueError(
            f"schema name {name!r} is not a plain identifier: use letters, digits and '_' "
            "(at most 63 characters, not starting with a digit)"
        )
    return name


def _text(value: str | None) -> str | None:
    # PostgreSQL text cannot hold NUL characters; SQLite can.
    return value.replace("\x00", "") if value else value


# --------------------------------------------------------------------------- SQL builders

_SESSION_COLUMNS = (
    "s.id, s.source, s.started_at, s.user_id, s.model, s.title, s.parent_session_id, "
    "s.ended_at, s.end_reason, s.message_count"
)
_SESSION_SELECT = f"SELECT {_SESSION_COLUMNS} FROM sessions s"
_MESSAGE_COLUMNS = "m.id, m.session_id, m.role, {content}, m.timestamp, m.tool_call_id, "
_MESSAGE_COLUMNS += "m.tool_calls, m.tool_name"
# Long tool output is clipped in SQL so a million-character log never leaves the server.
_CLIPPED_CONTENT = (
    "CASE WHEN m.role = 'tool' AND length(m.content) > %(limit)s "
    "THEN left(m.content, %(keep)s) || %(clip)s || right(m.content, %(keep)s) "
    "ELSE m.content END"
)
_GET_MESSAGES = (
    f"SELECT {_MESSAGE_COLUMNS.format(content='m.content')} FROM messages m "
    "WHERE m.session_id = %s ORDER BY m.timestamp, m.id"
)
_CHAIN_MESSAGES = (
    f"SELECT {_MESSAGE_COLUMNS.format(content=_CLIPPED_CONTENT)} FROM messages m "
    "WHERE m.session_id = ANY(%(ids)s) ORDER BY m.timestamp, m.id"
)
_SESSION_EXISTS = "SELECT 1 FROM sessions WHERE id = %s"
_LOCK_SESSION = "SELECT 1 FROM sessions WHERE id = %s FOR UPDATE"
# A concurrent creator of the same id makes this a no-op (no row returned): then we update.
_INSERT_SESSION = (
    "INSERT INTO sessions (id, source, user_id, model, title, parent_session_id, started_at, "
    "end_reason) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING RETURNING id"
)
# One statement for a whole batch: arrays in, ids out in input order.
_INSERT_MESSAGES = f"""
    WITH rows AS (
        SELECT * FROM unnest(
            %(role)s::text[], %(content)s::text[], %(tool_call_id)s::text[],
            %(tool_calls)s::text[], %(tool_name)s::text[], %(ts)s::float8[], %(cjk)s::text[]
        ) WITH ORDINALITY AS r(role, content, tool_call_id, tool_calls, tool_name, ts, cjk, n)
    )
    INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name,
                          timestamp, cjk_tsv)
    SELECT %(session_id)s, role, content, tool_call_id, tool_calls, tool_name, ts,
           CASE WHEN cjk IS NULL THEN NULL ELSE to_tsvector('{TS_CONFIG}', cjk) END
    FROM rows ORDER BY n
    RETURNING id
"""
_BUMP_COUNT = "UPDATE sessions SET message_count = message_count + %s WHERE id = %s"
_END_SESSION = (
    "UPDATE sessions SET ended_at = %s, end_reason = coalesce(%s, end_reason) WHERE id = %s"
)
_SESSION_OWNER = "SELECT user_id FROM sessions WHERE id = %s"
_LAST_MESSAGE_ID = "SELECT max(id) FROM messages WHERE session_id = ANY(%s)"
_GET_SUMMARY = "SELECT summary FROM summary_cache WHERE cache_key = %s"
_PUT_SUMMARY = (
    "INSERT INTO summary_cache (cache_key, session_id, summary, model, created_at) "
    "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (cache_key) DO UPDATE SET "
    "session_id = EXCLUDED.session_id, summary = EXCLUDED.summary, model = EXCLUDED.model, "
    "created_at = EXCLUDED.created_at"
)
_GET_META = "SELECT value FROM session_recall_meta WHERE key = 'schema_version'"
_PUT_META = (
    "INSERT INTO session_recall_meta (key, value) VALUES ('schema_version', %s) "
    "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
)
_GET_VERSION = "SELECT value FROM {}.session_recall_meta WHERE key = 'schema_version'"
_HAS_TABLES = (
    "SELECT count(*) FROM pg_tables WHERE schemaname = %s "
    "AND tablename IN ('sessions', 'messages', 'session_recall_meta')"
)
_SCHEMA_LOCK = "SELECT pg_advisory_xact_lock(hashtext('langchain_session_recall:' || %s))"
# Fields add_session may update on an existing session (fixed list: never user input).
_UPDATABLE = (
    "source",
    "parent_session_id",
    "model",
    "title",
    "user_id",
    "started_at",
    "end_reason",
)


def _update_session_query(columns: Sequence[str]) -> str:
    unknown = set(columns) - set(_UPDATABLE)
    if unknown:
        raise ValueError(f"not updatable: {sorted(unknown)}")
    assignments = ", ".join(f"{c} = %s" for c in columns)
    return f"UPDATE sessions SET {assignments} WHERE id = %s"


def _ancestors_query(user_scoped: bool) -> str:
    scope = " AND p.user_id = %(user_id)s" if user_scoped else ""
    return f"""
        WITH RECURSIVE up(id, parent, depth) AS (
            SELECT id, parent_session_id, 0 FROM sessions WHERE id = ANY(%(ids)s)
            UNION
            SELECT p.id, p.parent_session_id, up.depth + 1
            FROM up JOIN sessions p ON p.id = up.parent
            WHERE up.depth < {_MAX_DEPTH}{scope}
        )
        SELECT DISTINCT id, parent FROM up
    """


def _descendants_query(user_scoped: bool) -> str:
    scope = " AND c.user_id = %(user_id)s" if user_scoped else ""
    return f"""
        WITH RECURSIVE down(id, depth, path) AS (
            SELECT id, 0, ARRAY[id] FROM sessions WHERE id = %(root)s
            UNION ALL
            SELECT c.id, down.depth + 1, down.path || c.id
            FROM down JOIN sessions c ON c.parent_session_id = down.id
            WHERE down.depth < {_MAX_DEPTH} AND NOT c.id = ANY(down.path){scope}
        )
        SELECT id FROM down GROUP BY id ORDER BY min(depth), id
    """


def _filter_clauses(filters: SearchFilters) -> tuple[list[str], dict[str, Any]]:
    where: list[str] = []
    params: dict[str, Any] = {}
    if filters.role_filter:
        where.append("m.role = ANY(%(roles)s)")
        params["roles"] = list(filters.role_filter)
    if filters.exclude_sources:
        where.append("NOT s.source = ANY(%(sources)s)")
        params["sources"] = list(filters.exclude_sources)
    if filters.exclude_session_ids:
        where.append("NOT m.session_id = ANY(%(excluded)s)")
        params["excluded"] = list(filters.exclude_session_ids)
    if filters.user_id is not None:
        where.append("s.user_id = %(user_id)s")
        params["user_id"] = filters.user_id
    if filters.after is not None:
        where.append("s.started_at >= %(after)s")
        params["after"] = filters.after
    if filters.before is not None:
        where.append("s.started_at < %(before)s")
        params["before"] = filters.before
    return where, params


def _match_query(
    filters: SearchFilters, *, cjk: bool, automation: Sequence[str] = ()
) -> tuple[str, dict[str, Any]]:
    """Message hits for one tsvector column, best first, with every filter inside the query.

    Bound parameters: ``tsquery`` (text for ``to_tsquery``), ``weights``, ``limit`` and the
    filters'. With ``automation``, the best ``limit`` of those sources and the best ``limit``
    of the others (one ranking pass), for :func:`budget_automation` to settle.
    """
    column = "m.cjk_tsv" if cjk else "m.tsv"
    where, params = _filter_clauses(filters)
    where.insert(0, f"{column} @@ q.q")
    ranked = (
        f"SELECT m.id, m.session_id, m.role, "
        f"ts_rank_cd(%(weights)s::float4[], {column}, q.q, 1) AS relevance, "
        f"s.source, m.timestamp "
        f"FROM (SELECT to_tsquery('{TS_CONFIG}', %(tsquery)s) AS q) q "
        f"CROSS JOIN messages m JOIN sessions s ON s.id = m.session_id "
        f"WHERE {' AND '.join(where)}"
    )
    if not automation:
        return f"{ranked} ORDER BY relevance DESC, m.id LIMIT %(limit)s", params
    params["automation"] = list(automation)
    sql = (
        "SELECT x.id, x.session_id, x.role, x.relevance, x.source, x.timestamp FROM ("
        "SELECT r.*, row_number() OVER (PARTITION BY r.source = ANY(%(automation)s) "
        f"ORDER BY r.relevance DESC, r.id) AS n FROM ({ranked}) r"
        ") x WHERE x.n <= %(limit)s ORDER BY x.relevance DESC, x.id"
    )
    return sql, params


def _recent_query(
    filters: SearchFilters, excluded_roots: Sequence[str]
) -> tuple[str, dict[str, Any]]:
    where = ["(s.parent_session_id IS NULL OR p.id IS NULL)"]
    params: dict[str, Any] = {}
    if filters.exclude_sources:
        where.append("NOT s.source = ANY(%(sources)s)")
        params["sources"] = list(filters.exclude_sources)
    if excluded_roots:
        where.append("NOT s.id = ANY(%(excluded)s)")
        params["excluded"] = list(excluded_roots)
    if filters.user_id is not None:
        where.append("s.user_id = %(user_id)s")
        params["user_id"] = filters.user_id
    if filters.after is not None:
        where.append("s.started_at >= %(after)s")
        params["after"] = filters.after
    if filters.before is not None:
        where.append("s.started_at < %(before)s")
        params["before"] = filters.before
    sql = (
        f"SELECT {_SESSION_COLUMNS}, "
        "(SELECT left(m.content, 600) FROM messages m WHERE m.session_id = s.id "
        "AND m.role = 'user' ORDER BY m.timestamp, m.id LIMIT 1), "
        "(SELECT max(m.timestamp) FROM messages m WHERE m.session_id = s.id) "
        "FROM sessions s LEFT JOIN sessions p ON p.id = s.parent_session_id "
        f"WHERE {' AND '.join(where)} ORDER BY s.started_at DESC, s.id LIMIT %(limit)s"
    )
    return sql, params


def _message_batch(session_id: str, rows: Sequence[MessageRow]) -> dict[str, Any]:
    contents = [_text(r.content) or "" for r in rows]
    return {
        "session_id": session_id,
        "role": [r.role for r in rows],
        "content": contents,
        "tool_call_id": [_text(r.tool_call_id) for r in rows],
        "tool_calls": [_text(r.tool_calls) for r in rows],
        "tool_name": [_text(r.tool_name) for r in rows],
        "ts": [r.timestamp for r in rows],
        "cjk": [bigram_text(c) if c and has_cjk(c) else None for c in contents],
    }


# --------------------------------------------------------------------------- row decoding


def _session(row: Sequence[Any]) -> Session:
    return Session(
        id=row[0],
        source=row[1] or "unknown",
        started_at=float(row[2] or 0.0),
        user_id=row[3],
        model=row[4],
        title=row[5],
        parent_session_id=row[6],
        ended_at=row[7],
        end_reason=row[8],
        message_count=int(row[9] or 0),
    )


def _message(row: Sequence[Any]) -> StoredMessage:
    calls: Any = None
    if row[6]:
        try:
            calls = json.loads(row[6])
        except (ValueError, TypeError):
            calls = None
    return StoredMessage(
        id=int(row[0]),
        session_id=row[1],
        role=str(row[2] or "unknown").lower(),
        content=decode_content(row[3]),
        timestamp=float(row[4] or 0.0),
        tool_call_id=row[5],
        tool_calls=calls if isinstance(calls, list) else None,
        tool_name=row[7],
    )


def _import_psycopg() -> Any:
    try:
        import psycopg
        import psycopg_pool
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise SessionRecallError(
            "the PostgreSQL backend needs psycopg 3 and psycopg-pool: "
            'pip install "langchain-session-recall[postgres]"'
        ) from exc
    return psycopg, psycopg_pool


# --------------------------------------------------------------------------- the store


class PostgresSessionStore:
    """Sessions and messages in PostgreSQL, searchable with its full-text search.

    The schema (``schema``, created when absent) holds the same tables as the SQLite store;
    connections come from a pool (``min_size`` to ``max_size``), so many threads read and
    write at once. Async twins of the write path and of the reads (``aadd_session``,
    ``aadd_messages``, ``aend_session``, ``aget_session``, ``aget_messages``) use an async
    pool opened on first use.

    Args:
        dsn: ``postgresql://user@host:port/dbname`` (any libpq connection string).
        schema: Schema holding the tables; several stores can share a database.
        read_only: Never write: no schema creation, read-only transactions.
        min_size: Connections kept open. max_size: Most connections opened.
        connect_timeout: Seconds to wait for the server.

    Example:
        >>> store = PostgresSessionStore("postgresql://app@127.0.0.1/recall")  # doctest: +SKIP
        >>> _ = store.add_session("s1", title="CORS fix")  # doctest: +SKIP
        >>> msg = {"role": "user", "content": "CORS error"}
        >>> _ = store.add_messages("s1", [msg])  # doctest: +SKIP
        >>> store.get_session("s1").message_count  # doctest: +SKIP
        1
    """

    _registry: ClassVar[weakref.WeakValueDictionary[str, PostgresSessionStore]] = (
        weakref.WeakValueDictionary()
    )

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = DEFAULT_SCHEMA,
        read_only: bool = False,
        min_size: int = 1,
        max_size: int = 10,
        connect_timeout: float = 10.0,
    ) -> None:
        psycopg, psycopg_pool = _import_psycopg()
        self.dsn = dsn
        self.schema = _schema_name(schema)
        self.read_only = read_only
        self.store_id = uuid.uuid4().hex
        self._timeout = connect_timeout
        self._max_size = max_size
        self._apool: AsyncConnectionPool | None = None
        self._closed = False
        self._local = threading.local()
        try:
            conn = psycopg.connect(
                dsn, autocommit=True, connect_timeout=max(1, int(connect_timeout))
            )
        except psycopg.OperationalError as exc:
            raise NotASessionDatabaseError(
                f"cannot connect to PostgreSQL ({exc}); check the DSN, that the server runs "
                "and that it accepts this user"
            ) from exc
        with conn:
            self._prepare(conn)
        self._pool: ConnectionPool = psycopg_pool.ConnectionPool(
            dsn,
            min_size=min_size,
            max_size=max_size,
            kwargs={"autocommit": True},
            configure=self._configure,
            timeout=connect_timeout * 3,
            open=True,
            name=f"session-recall-{self.store_id[:8]}",
        )
        PostgresSessionStore._registry[self.store_id] = self

    # ------------------------------------------------------------------ opening

    @classmethod
    def lookup(cls, store_id: str | None) -> PostgresSessionStore | None:
        """The live store with this ``store_id`` (as found in Document metadata), if any."""
        return cls._registry.get(store_id) if store_id else None

    def _search_path(self) -> Any:
        from psycopg import sql

        return sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema))

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        conn.execute(self._search_path())
        if self.read_only:
            conn.execute("SET default_transaction_read_only = on")

    def _prepare(self, conn: psycopg.Connection[Any]) -> None:
        """Create or check the schema (one transaction, serialized across processes)."""
        from psycopg import sql

        if self.read_only:
            (count,) = conn.execute(_HAS_TABLES, (self.schema,)).fetchone() or (0,)
            if count < 3:
                raise NotASessionDatabaseError(
                    f"schema {self.schema!r} holds no session store; open it once without "
                    "read_only=True to create it, or pass the right schema="
                )
            return
        if self._schema_version(conn) == PG_SCHEMA_VERSION:
            return  # the usual case: no DDL, so no lock that could meet running writers
        with conn.transaction():
            conn.execute(_SCHEMA_LOCK, (self.schema,))
            if self._schema_version(conn) == PG_SCHEMA_VERSION:
                return  # another process created it while we waited
            conn.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.schema))
            )
            conn.execute(sql.SQL("SET LOCAL search_path TO {}").format(sql.Identifier(self.schema)))
            for statement in ddl_statements():
                conn.execute(statement)
            row = conn.execute(_GET_META).fetchone()
            version = int(row[0]) if row else PG_SCHEMA_VERSION
            if version > PG_SCHEMA_VERSION:
                raise NotASessionDatabaseError(
                    f"schema {self.schema!r} has version {version}, newer than this library's "
                    f"{PG_SCHEMA_VERSION}; upgrade langchain-session-recall"
                )
            conn.execute(_PUT_META, (str(PG_SCHEMA_VERSION),))

    def _schema_version(self, conn: psycopg.Connection[Any]) -> int | None:
        (count,) = conn.execute(_HAS_TABLES, (self.schema,)).fetchone() or (0,)
        if count < 3:
            return None
        from psycopg import sql

        row = conn.execute(sql.SQL(_GET_VERSION).format(sql.Identifier(self.schema))).fetchone()
        return int(row[0]) if row else None

    @contextmanager
    def _read(self) -> Iterator[psycopg.Connection[Any]]:
        if self._closed:
            raise SessionRecallError("this PostgresSessionStore is closed")
        held: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        if held is not None:  # inside transaction() on this thread: see its own writes
            yield held
            return
        with self._pool.connection() as conn:
            yield conn

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Connection[Any]]:
        if self.read_only:
            raise ReadOnlyStoreError(
                f"the store in schema {self.schema!r} was opened read-only; open it without "
                "read_only=True to write"
            )
        # Inside transaction() psycopg makes this a savepoint: a failed write is undone alone.
        with self._read() as conn, conn.transaction():
            yield conn

    @contextmanager
    def transaction(self) -> Iterator[PostgresSessionStore]:
        """Make every write inside the block one transaction: all of it lands, or none.

        The block holds one pooled connection; reads inside it on the same thread see its
        writes. A write that fails inside it is rolled back on its own (a savepoint), so
        catching its error and going on is safe. Blocks nest. Async writes
        (:meth:`aadd_messages`, ...) do not join it.

        Raises:
            ReadOnlyStoreError: the store was opened read-only.
        """
        if getattr(self._local, "conn", None) is not None:
            with self._transaction():
                yield self
            return
        with self._transaction() as conn:
            self._local.conn = conn
            try:
                yield self
            finally:
                self._local.conn = None

    def close(self) -> None:
        """Close the connection pools (idempotent). Async pools: use :meth:`aclose`."""
        self._closed = True
        self._pool.close()
        PostgresSessionStore._registry.pop(self.store_id, None)

    async def aclose(self) -> None:
        """Close both the sync and the async pool."""
        if self._apool is not None:
            await self._apool.close()
            self._apool = None
        self.close()

    def __enter__(self) -> PostgresSessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = "read-only" if self.read_only else "read-write"
        return f"PostgresSessionStore(schema={self.schema!r}, {mode})"

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
            exists = conn.execute(_LOCK_SESSION, (session_id,)).fetchone()
            if parent_session_id is not None:
                self._check_parent(conn, session_id, parent_session_id)
            if not exists:
                exists = not conn.execute(
                    _INSERT_SESSION,
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
                ).fetchone()
            if exists:
                sets = session_updates(
                    source, parent_session_id, model, title, user_id, started_at, end_reason
                )
                if sets:
                    conn.execute(_update_session_query(list(sets)), (*sets.values(), session_id))
        session = self.get_session(session_id)
        assert session is not None
        return session

    def _check_parent(self, conn: psycopg.Connection[Any], session_id: str, parent: str) -> None:
        check_parent_exists(session_id, parent, conn.execute(_SESSION_EXISTS, (parent,)).fetchone())
        rows = conn.execute(_ancestors_query(False), {"ids": [parent]}).fetchall()
        check_ancestors(session_id, parent, (r[0] for r in rows))

    def add_messages(self, session_id: str, messages: Iterable[MessageLike]) -> list[int]:
        """Append messages to a session in one transaction; returns their ids.

        Every message is validated before anything is written: an invalid one raises
        :class:`InvalidMessageError` and nothing of the batch is stored.
        """
        now = time.time()
        rows = [to_row(m, now=now) for m in messages]
        with self._transaction() as conn:
            if not conn.execute(_LOCK_SESSION, (session_id,)).fetchone():
                raise SessionNotFoundError(
                    f"session {session_id!r} does not exist; call add_session() first"
                )
            if not rows:
                return []
            ids = [
                int(r[0])
                for r in conn.execute(_INSERT_MESSAGES, _message_batch(session_id, rows)).fetchall()
            ]
            conn.execute(_BUMP_COUNT, (len(rows), session_id))
        return sorted(ids)

    def end_session(
        self, session_id: str, *, end_reason: str | None = None, ended_at: float | None = None
    ) -> None:
        """Mark a session ended (``ended_at`` defaults to now)."""
        with self._transaction() as conn:
            cur = conn.execute(
                _END_SESSION,
                (time.time() if ended_at is None else ended_at, end_reason, session_id),
            )
            if cur.rowcount == 0:
                raise SessionNotFoundError(f"session {session_id!r} does not exist")

    def optimize(self) -> None:
        """Refresh planner statistics (``ANALYZE``) of the store's tables."""
        with self._read() as conn:
            conn.execute("ANALYZE sessions")
            conn.execute("ANALYZE messages")

    # ------------------------------------------------------------------ reading

    def get_session(self, session_id: str) -> Session | None:
        """The session with this id, or ``None``."""
        with self._read() as conn:
            row = conn.execute(_SESSION_SELECT + " WHERE s.id = %s", (session_id,)).fetchone()
        return _session(row) if row else None

    def get_sessions(self, session_ids: Iterable[str]) -> dict[str, Session]:
        """Sessions by id (one query); unknown ids are absent from the result."""
        ids = list(dict.fromkeys(session_ids))
        if not ids:
            return {}
        with self._read() as conn:
            rows = conn.execute(_SESSION_SELECT + " WHERE s.id = ANY(%s)", (ids,)).fetchall()
        return {row[0]: _session(row) for row in rows}

    def stats(self) -> dict[str, Any]:
        """Counts, sources, date range and on-disk size, as :meth:`SessionStore.stats` gives."""

        def one(conn: psycopg.Connection[Any], sql: str) -> Any:
            row = conn.execute(sql).fetchone()
            assert row is not None  # aggregate queries always return a row
            return row

        with self._read() as conn:
            sessions, first, last = one(
                conn, "SELECT count(*), min(started_at), max(started_at) FROM sessions"
            )
            messages = one(conn, "SELECT count(*) FROM messages")[0]
            sources = conn.execute(
                "SELECT source, count(*) FROM sessions GROUP BY source ORDER BY 2 DESC"
            ).fetchall()
            roots = one(
                conn,
                "SELECT count(*) FROM sessions s LEFT JOIN sessions p "
                "ON p.id = s.parent_session_id WHERE s.parent_session_id IS NULL OR p.id IS NULL",
            )[0]
            size = one(
                conn,
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = current_schema() AND c.relkind = 'r'",
            )[0]
        return {
            "sessions": int(sessions),
            "root_sessions": int(roots),
            "messages": int(messages),
            "sources": {str(k): int(v) for k, v in sources},
            "first_started_at": first,
            "last_started_at": last,
            "size_bytes": int(size),
            "index": "ok (GIN, maintained by PostgreSQL)",
            "layout": "own",
        }

    def get_messages(self, session_id: str) -> list[StoredMessage]:
        """All messages of one session, oldest first."""
        with self._read() as conn:
            rows = conn.execute(_GET_MESSAGES, (session_id,)).fetchall()
        return [_message(r) for r in rows]

    def chain_messages(self, root_id: str, *, user_id: str | None = None) -> list[StoredMessage]:
        """Messages of a root session and all its descendants, in time order.

        Tool output is clipped to its first and last 250 characters in SQL. With ``user_id``,
        sessions of other users are left out even when they sit inside the chain.
        """
        ids = self.chain(root_id, user_id=user_id)
        if not ids:
            return []
        params = {
            "ids": ids,
            "limit": TOOL_OUTPUT_LIMIT,
            "keep": TOOL_OUTPUT_KEEP,
            "clip": TOOL_CLIP_MARKER,
        }
        with self._read() as conn:
            rows = conn.execute(_CHAIN_MESSAGES, params).fetchall()
        return [_message(r) for r in rows]

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
        excluded = sorted({self.root_of(sid, user_id=user_id) for sid in exclude_session_ids})
        filters = SearchFilters(
            exclude_sources=tuple(exclude_sources), user_id=user_id, after=after, before=before
        )
        sql, params = _recent_query(filters, excluded)
        params["limit"] = max(0, int(limit))
        with self._read() as conn:
            rows = conn.execute(sql, params).fetchall()
        out = []
        for row in rows:
            session = _session(row)
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
        params: dict[str, Any] = {"ids": ids, "user_id": user_id}
        with self._read() as conn:
            rows = conn.execute(_ancestors_query(user_id is not None), params).fetchall()
        return {sid: parent for sid, parent in rows}

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
        with self._read() as conn:
            if user_id is not None:
                owner = conn.execute(_SESSION_OWNER, (root_id,)).fetchone()
                if owner is None or owner[0] != user_id:
                    return []
            rows = conn.execute(
                _descendants_query(user_id is not None), {"root": root_id, "user_id": user_id}
            ).fetchall()
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
        """Messages matching one reading of the query, best first, from both tsvector columns.

        The main column and the CJK bigram column are both queried; a message found by both
        keeps its best relevance (in ranking). Messages of ``automation`` sources get a budget
        of their own (:func:`~langchain_session_recall.search.ranking.budget_automation`).
        """
        hits: list[MessageHit] = []
        with self._read() as conn:
            for cjk in (False, True):
                sql, params = _match_query(filters, cjk=cjk, automation=automation)
                params.update(
                    tsquery=to_tsquery_text(query, reading, cjk=cjk),
                    weights=rank_weights(),
                    limit=limit,
                )
                # Never a prepared (generic) plan: without the tsquery value the planner may
                # pick a sequential scan over every message.
                rows = conn.execute(sql, params, prepare=False).fetchall()
                found = [MessageHit.from_row(r) for r in rows]
                hits += budget_automation(found, limit, set(automation)) if automation else found
        return hits

    def last_message_id(self, session_ids: Sequence[str]) -> int:
        """Largest message id among these sessions (0 when they have none)."""
        if not session_ids:
            return 0
        with self._read() as conn:
            row = conn.execute(_LAST_MESSAGE_ID, (list(session_ids),)).fetchone()
        return int(row[0] or 0) if row else 0

    # ------------------------------------------------------------------ summary cache

    def get_cached_summary(self, key: str) -> str | None:
        """A summary cached under ``key``, or ``None``."""
        with self._read() as conn:
            row = conn.execute(_GET_SUMMARY, (key,)).fetchone()
        return str(row[0]) if row else None

    def put_cached_summary(
        self, key: str, *, session_id: str, summary: str, model: str | None
    ) -> None:
        """Cache a summary. Raises :class:`ReadOnlyStoreError` on a read-only store."""
        with self._transaction() as conn:
            conn.execute(_PUT_SUMMARY, (key, session_id, _text(summary), model, time.time()))

    # ------------------------------------------------------------------ async twins

    async def _async_pool(self) -> AsyncConnectionPool:
        if self._closed:
            raise SessionRecallError("this PostgresSessionStore is closed")
        if self._apool is None:
            _, psycopg_pool = _import_psycopg()
            pool = psycopg_pool.AsyncConnectionPool(
                self.dsn,
                min_size=1,
                max_size=self._max_size,
                kwargs={"autocommit": True},
                configure=self._aconfigure,
                timeout=self._timeout * 3,
                open=False,
            )
            await pool.open(wait=True, timeout=self._timeout * 3)
            self._apool = pool
        return self._apool

    async def _aconfigure(self, conn: psycopg.AsyncConnection[Any]) -> None:
        await conn.execute(self._search_path())
        if self.read_only:
            await conn.execute("SET default_transaction_read_only = on")

    def _check_writable(self) -> None:
        if self.read_only:
            raise ReadOnlyStoreError(
                f"the store in schema {self.schema!r} was opened read-only; open it without "
                "read_only=True to write"
            )

    async def aadd_session(
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
        """Async :meth:`add_session`."""
        validate_session_args(session_id, source)
        self._check_writable()
        pool = await self._async_pool()
        async with pool.connection() as conn, conn.transaction():
            exists: object = await (await conn.execute(_LOCK_SESSION, (session_id,))).fetchone()
            if parent_session_id is not None:
                parent = parent_session_id
                found = await (await conn.execute(_SESSION_EXISTS, (parent,))).fetchone()
                check_parent_exists(session_id, parent, found)
                cur = await conn.execute(_ancestors_query(False), {"ids": [parent]})
                check_ancestors(session_id, parent, (r[0] for r in await cur.fetchall()))
            if not exists:
                cur = await conn.execute(
                    _INSERT_SESSION,
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
                exists = not await cur.fetchone()
            if exists:
                sets = session_updates(
                    source, parent_session_id, model, title, user_id, started_at, end_reason
                )
                if sets:
                    await conn.execute(
                        _update_session_query(list(sets)), (*sets.values(), session_id)
                    )
        session = await self.aget_session(session_id)
        assert session is not None
        return session

    async def aadd_messages(self, session_id: str, messages: Iterable[MessageLike]) -> list[int]:
        """Async :meth:`add_messages`."""
        now = time.time()
        rows = [to_row(m, now=now) for m in messages]
        self._check_writable()
        pool = await self._async_pool()
        async with pool.connection() as conn, conn.transaction():
            if not await (await conn.execute(_LOCK_SESSION, (session_id,))).fetchone():
                raise SessionNotFoundError(
                    f"session {session_id!r} does not exist; call add_session() first"
                )
            if not rows:
                return []
            cur = await conn.execute(_INSERT_MESSAGES, _message_batch(session_id, rows))
            ids = [int(r[0]) for r in await cur.fetchall()]
            await conn.execute(_BUMP_COUNT, (len(rows), session_id))
        return sorted(ids)

    async def aend_session(
        self, session_id: str, *, end_reason: str | None = None, ended_at: float | None = None
    ) -> None:
        """Async :meth:`end_session`."""
        self._check_writable()
        pool = await self._async_pool()
        async with pool.connection() as conn, conn.transaction():
            cur = await conn.execute(
                _END_SESSION,
                (time.time() if ended_at is None else ended_at, end_reason, session_id),
            )
            if cur.rowcount == 0:
                raise SessionNotFoundError(f"session {session_id!r} does not exist")

    async def aget_session(self, session_id: str) -> Session | None:
        """Async :meth:`get_session`."""
        pool = await self._async_pool()
        async with pool.connection() as conn:
            cur = await conn.execute(_SESSION_SELECT + " WHERE s.id = %s", (session_id,))
            row = await cur.fetchone()
        return _session(row) if row else None

    async def aget_messages(self, session_id: str) -> list[StoredMessage]:
        """Async :meth:`get_messages`."""
        pool = await self._async_pool()
        async with pool.connection() as conn:
            cur = await conn.execute(_GET_MESSAGES, (session_id,))
            rows = await cur.fetchall()
        return [_message(r) for r in rows]


# --------------------------------------------------------------------------- migration

_INSERT_SESSION_IF_NEW = (
    "INSERT INTO sessions (id, source, user_id, model, title, parent_session_id, started_at, "
    "ended_at, end_reason) VALUES (%s, %s, %s, %s, %s, NULL, %s, %s, %s) "
    "ON CONFLICT (id) DO NOTHING RETURNING id"
)
# Parents are linked after every session exists; a parent missing from the source stays NULL.
_LINK_PARENTS = (
    "UPDATE sessions s SET parent_session_id = v.parent "
    "FROM unnest(%s::text[], %s::text[]) AS v(id, parent) "
    "WHERE s.id = v.id AND EXISTS (SELECT 1 FROM sessions p WHERE p.id = v.parent)"
)


@dataclass(frozen=True, slots=True)
class MigrationReport:
    """What :func:`migrate_sqlite_to_postgres` copied and skipped."""

    sessions: int
    messages: int
    skipped_sessions: int
    skipped_messages: int


def _stored_as_dict(message: StoredMessage) -> dict[str, Any]:
    return {
        "role": message.role,
        "content": message.content,
        "timestamp": message.timestamp,
        "tool_calls": message.tool_calls,
        "tool_call_id": message.tool_call_id,
        "tool_name": message.tool_name,
    }


def migrate_sqlite_to_postgres(
    src_path: str | os.PathLike[str],
    dsn: str,
    *,
    schema: str = DEFAULT_SCHEMA,
    batch: int = 500,
) -> MigrationReport:
    """Copy every session and message of a SQLite store (ours or a Hermes ``state.db``).

    The source is opened read-only. Sessions already in the destination are skipped, so an
    interrupted migration can be run again. Messages get new ids in PostgreSQL (in the same
    order); the summary cache is not copied, since its keys include message ids. Messages the
    store would not accept (an unknown role) are skipped and counted.

    Example:
        >>> migrate_sqlite_to_postgres("state.db", "postgresql://app@db/recall")  # doctest: +SKIP
        MigrationReport(sessions=812, messages=40193, skipped_sessions=0, skipped_messages=0)
    """
    from langchain_session_recall.backends.sqlite.store import SessionStore

    src = SessionStore(src_path, read_only=True)
    dst = PostgresSessionStore(dsn, schema=schema)
    copied = messages = skipped = skipped_messages = 0
    try:
        ids = _sqlite_session_ids(src_path)
        links: list[tuple[str, str]] = []
        for start in range(0, len(ids), batch):
            chunk = ids[start : start + batch]
            sessions = src.get_sessions(chunk)
            with dst._transaction() as conn:
                for sid in chunk:
                    s = sessions[sid]
                    row = conn.execute(
                        _INSERT_SESSION_IF_NEW,
                        (
                            _text(s.id),
                            _text(s.source),
                            _text(s.user_id),
                            _text(s.model),
                            _text(s.title),
                            s.started_at,
                            s.ended_at,
                            _text(s.end_reason),
                        ),
                    ).fetchone()
                    if row is None:
                        skipped += 1
                        continue
                    copied += 1
                    if s.parent_session_id:
                        links.append((s.id, s.parent_session_id))
                    rows: list[MessageRow] = []
                    for message in src.get_messages(sid):
                        try:
                            rows.append(to_row(_stored_as_dict(message)))
                        except SessionRecallError:
                            skipped_messages += 1
                    if rows:
                        conn.execute(_INSERT_MESSAGES, _message_batch(sid, rows))
                        conn.execute(_BUMP_COUNT, (len(rows), sid))
                        messages += len(rows)
        with dst._transaction() as conn:
            for start in range(0, len(links), batch):
                part = links[start : start + batch]
                conn.execute(_LINK_PARENTS, ([c for c, _ in part], [p for _, p in part]))
        dst.optimize()
    finally:
        src.close()
        dst.close()
    return MigrationReport(copied, messages, skipped, skipped_messages)


def _sqlite_session_ids(path: str | os.PathLike[str]) -> list[str]:
    """Every session id of a SQLite file, oldest first (read-only)."""
    uri = Path(path).resolve().as_posix().replace("?", "%3f").replace("#", "%23")
    conn = sqlite3.connect(f"file:{uri}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT id FROM sessions ORDER BY started_at, id").fetchall()
    finally:
        conn.close()
    return [str(r[0]) for r in rows]
