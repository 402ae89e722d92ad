"""Stores of both backends for the test suites: where one lives, how to open it again (from this
process, a child process or the CLI), and how another client reads or writes it with plain SQL.

A :class:`StoreTarget` is one string that :func:`~langchain_session_recall.backends.open_store`,
the CLI's ``--db`` and a child process all accept: a file path for SQLite, a DSN for PostgreSQL.
On PostgreSQL each target is a **database of its own**, holding the store in the default schema:
that is how the CLI and ``open_store(dsn)`` reach it without a schema option. Creating a
database costs about a quarter of a second, so a test's databases are emptied when it ends
(every connection to them ended, as a killed child's would be, and every schema dropped) and
handed to the next test as new; one that cannot be emptied that way is dropped.

PostgreSQL needs a server: ``scripts/pg-test-server start`` prints a DSN; export it as
``SESSION_RECALL_PG_DSN``. Without it the PostgreSQL cases are skipped with that reason.
"""

from __future__ import annotations

import atexit
import hashlib
import sqlite3
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import urlencode, urlsplit, urlunsplit

import pytest
from pg_support import PG_DSN, SKIP_PG

from langchain_session_recall.backends import SessionBackend, SessionStore
from langchain_session_recall.backends.sqlite.files import read_only_uri

Backend = Literal["sqlite", "postgres"]

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param(
        "postgres",
        id="postgres",
        marks=[pytest.mark.skipif(not PG_DSN, reason=SKIP_PG), pytest.mark.enable_socket],
    ),
]
"""Parameters of a fixture that runs its tests once per backend."""

_PG_MARKS = (pytest.mark.skipif(not PG_DSN, reason=SKIP_PG), pytest.mark.enable_socket)

F = TypeVar("F", bound=Callable[..., Any])


def pg_only(test: F) -> F:
    """Mark a test of a PostgreSQL-only property: skipped without a server, sockets on."""
    for mark in _PG_MARKS:
        test = mark(test)
    return test


TABLES = (
    "session_recall_meta",
    "sessions",
    "messages",
    "summary_cache",
    "import_ledger",
    "import_runs",
)
"""The store's own tables (both backends)."""


def backend_of(store: SessionBackend) -> Backend:
    """``"sqlite"`` or ``"postgres"``: which backend ``store`` is."""
    return "postgres" if store.dialect.name == "postgresql" else "sqlite"


def database_dsn(dsn: str, dbname: str) -> str:
    """``dsn`` pointing at the database ``dbname`` (a ``postgresql://`` URI either way)."""
    if dsn.startswith(("postgresql://", "postgres://")):
        parts = urlsplit(dsn)
        return urlunsplit(parts._replace(path="/" + dbname))
    from psycopg.conninfo import conninfo_to_dict

    params = {k: str(v) for k, v in conninfo_to_dict(dsn).items()}
    params["dbname"] = dbname
    return "postgresql:///?" + urlencode(params)


class Sql:
    """Another client's plain connection (``sqlite3`` or ``psycopg``), autocommit.

    Statements are written with ``?`` placeholders; on PostgreSQL they become ``%s``. Use
    :meth:`transaction` to group writes.
    """

    def __init__(self, backend: Backend, conn: Any) -> None:
        self.backend = backend
        self.conn = conn

    def execute(self, statement: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement; its rows (``[]`` for a statement without a result)."""
        if self.backend == "postgres":
            cursor = self.conn.execute(statement.replace("?", "%s"), tuple(params))
            return list(cursor.fetchall()) if cursor.description else []
        cursor = self.conn.execute(statement, tuple(params))
        return list(cursor.fetchall()) if cursor.description else []

    def executemany(self, statement: str, rows: Sequence[Sequence[Any]]) -> None:
        if self.backend == "postgres":
            self.conn.cursor().executemany(statement.replace("?", "%s"), rows)
        else:
            self.conn.executemany(statement, rows)

    @contextmanager
    def transaction(self) -> Iterator[Sql]:
        if self.backend == "postgres":
            with self.conn.transaction():
                yield self
            return
        self.conn.execute("BEGIN")
        try:
            yield self
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def tables(self) -> list[str]:
        """Tables of the store's schema (PostgreSQL) or file (SQLite), sorted."""
        if self.backend == "postgres":
            rows = self.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            )
        else:
            rows = self.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return sorted(str(r[0]) for r in rows)


@dataclass(frozen=True)
class StoreTarget:
    """Where one test store lives: ``db`` is what ``open_store``, ``--db`` and children take."""

    backend: Backend
    db: str

    def open(self, *, read_only: bool = False) -> SessionBackend:
        """Open the store (created if absent, unless ``read_only``)."""
        if self.backend == "postgres":
            from langchain_session_recall.backends.postgres.store import PostgresSessionStore

            return PostgresSessionStore(self.db, read_only=read_only, min_size=1, max_size=8)
        return SessionStore(self.db, read_only=read_only, busy_timeout=30.0)

    def argv(self) -> str:
        """This target as one command-line argument (see :meth:`parse`)."""
        return f"{self.backend}:{self.db}"

    @classmethod
    def parse(cls, arg: str) -> StoreTarget:
        """The target given by :meth:`argv` (in a child process)."""
        backend, db = arg.split(":", 1)
        assert backend in ("sqlite", "postgres"), arg
        return cls(backend, db)  # type: ignore[arg-type]

    @contextmanager
    def sql(self) -> Iterator[Sql]:
        """A plain connection of another client; on PostgreSQL in the store's schema."""
        if self.backend == "postgres":
            import psycopg

            with psycopg.connect(self.db, autocommit=True) as conn:
                conn.execute("SET search_path TO session_recall")
                yield Sql("postgres", conn)
            return
        conn = sqlite3.connect(self.db, isolation_level=None, timeout=30)
        try:
            yield Sql("sqlite", conn)
        finally:
            conn.close()

    def has_schema(self) -> bool:
        """Whether the store's tables exist (PostgreSQL: its schema; SQLite: its file)."""
        if self.backend == "sqlite":
            return Path(self.db).exists()
        with self.sql() as sql:
            rows = sql.execute("SELECT count(*) FROM pg_namespace WHERE nspname = 'session_recall'")
        return bool(rows[0][0])

    def count(self, table: str = "messages") -> int:
        """Rows of ``table`` as another client sees them (0 while the schema does not exist)."""
        if not self.has_schema():
            return 0
        with self.sql() as sql:
            if table not in sql.tables():
                return 0
            return int(sql.execute(f"SELECT count(*) FROM {table}")[0][0])

    def assert_intact(self) -> None:
        """The store passes its integrity checks: SQLite's ``integrity_check`` and FTS5's
        ``integrity-check``; on PostgreSQL ``check()`` (every message has its full-text vectors,
        every ``message_count`` matches its messages)."""
        if self.backend == "sqlite":
            with self.sql() as sql:
                assert sql.execute("PRAGMA integrity_check") == [("ok",)]
                sql.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")
        with self.open() as store:
            report = store.check()
        assert report.ok, report.problems

    def dump(self, sql: Sql | None = None) -> str:
        """A digest of every row of every table of the store, and of its sequences (read
        through ``sql`` when given, else a connection of its own).

        On PostgreSQL each row carries its ``xmin`` (the transaction that last wrote it), so
        an UPDATE that writes the same values back changes the digest too.
        """
        if sql is None:
            with self.sql() as own:
                return self.dump(own)
        digest = hashlib.sha256()
        for table in sql.tables():
            if self.backend == "postgres":
                rows = sql.execute(f"SELECT xmin::text, row_to_json(t)::text FROM {table} t")
                digest.update(f"{table}:{sorted(rows)!r}".encode())
            elif table.startswith("sqlite_") or "_fts" in table:
                continue  # FTS5 shadow tables follow their content; sqlite_stat1 is PRAGMAs
            else:
                rows = sql.execute(f"SELECT * FROM {table}")
                digest.update(f"{table}:{sorted(map(repr, rows))!r}".encode())
        if self.backend == "postgres":
            rows = sql.execute(
                "SELECT sequencename, last_value FROM pg_sequences "
                "WHERE schemaname = current_schema()"
            )
            digest.update(f"sequences:{sorted(rows)!r}".encode())
        return digest.hexdigest()


class Watcher:
    """Notices any write to a store by anyone: SQLite's ``PRAGMA data_version`` read from a
    connection of its own, PostgreSQL's :meth:`StoreTarget.dump` (rows with their ``xmin``)
    through a connection of its own."""

    def __init__(self, target: StoreTarget) -> None:
        self.target = target
        self._conn: sqlite3.Connection | None = None
        self._sql: Sql | None = None
        self._open = ExitStack()
        if target.backend == "sqlite":
            self._conn = sqlite3.connect(read_only_uri(target.db), uri=True)
            self._open.callback(self._conn.close)
        else:
            self._sql = self._open.enter_context(target.sql())
        self._mark = self._state()

    def _state(self) -> str:
        if self._conn is not None:
            return str(self._conn.execute("PRAGMA data_version").fetchone()[0])
        return self.target.dump(self._sql)

    def changed(self) -> bool:
        """Whether anything was written since the watcher started (or last :meth:`reset`)."""
        return self._state() != self._mark

    def reset(self) -> None:
        self._mark = self._state()

    def close(self) -> None:
        self._open.close()


_FREE_DATABASES: list[str] = []
"""Emptied test databases, handed out again before a new one is created."""

_USER_OBJECTS = (
    "SELECT (SELECT count(*) FROM pg_namespace WHERE nspname NOT IN ('public', "
    "'information_schema') AND nspname NOT LIKE 'pg\\_%'), "
    "(SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE n.nspname = 'public') + (SELECT count(*) FROM pg_proc p JOIN pg_namespace n "
    "ON n.oid = p.pronamespace WHERE n.nspname = 'public')"
)


def _admin() -> Any:
    import psycopg

    return psycopg.connect(PG_DSN, autocommit=True)


def _take_database() -> str:
    """A test database holding nothing: an emptied one, else a new one."""
    if _FREE_DATABASES:
        return _FREE_DATABASES.pop()
    from psycopg import sql

    dbname = f"sr_test_{uuid.uuid4().hex[:12]}"
    with _admin() as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
    return dbname


def _give_back(dbname: str) -> None:
    """End every connection to ``dbname`` and empty it for the next test: each schema but
    ``public`` dropped. A database whose ``public`` schema holds anything is dropped instead."""
    import psycopg
    from psycopg import sql

    with _admin() as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            (dbname,),
        )
        with psycopg.connect(database_dsn(PG_DSN, dbname), autocommit=True) as conn:
            schemas = conn.execute(
                "SELECT nspname FROM pg_namespace WHERE nspname NOT IN ('public', "
                "'information_schema') AND nspname NOT LIKE 'pg\\_%'"
            ).fetchall()
            for (schema,) in schemas:
                conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
            if conn.execute(_USER_OBJECTS).fetchone() == (0, 0):
                _FREE_DATABASES.append(dbname)
                return
        admin.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(dbname))
        )


@atexit.register
def _drop_free_databases() -> None:
    if not _FREE_DATABASES:
        return
    from psycopg import sql

    with _admin() as conn:
        while _FREE_DATABASES:
            dbname = _FREE_DATABASES.pop()
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(dbname))
            )


@dataclass
class StoreFactory:
    """Fresh stores of one backend for one test (or one module): ``target(name)`` is where the
    store ``name`` lives, ``open(name)`` opens it (again); :meth:`cleanup` closes every store
    opened here and empties the PostgreSQL databases for the next test."""

    backend: Backend
    directory: Path
    _targets: dict[str, StoreTarget] = field(default_factory=dict)
    _open: list[SessionBackend] = field(default_factory=list)

    def target(self, name: str = "store") -> StoreTarget:
        if name not in self._targets:
            if self.backend == "sqlite":
                db = str(self.directory / f"{name}.db")
            else:
                db = database_dsn(PG_DSN, _take_database())
            self._targets[name] = StoreTarget(self.backend, db)
        return self._targets[name]

    def open(self, name: str = "store", *, read_only: bool = False) -> SessionBackend:
        store = self.target(name).open(read_only=read_only)
        self._open.append(store)
        return store

    def cleanup(self) -> None:
        for store in self._open:
            store.close()
        self._open.clear()
        if self.backend == "postgres":
            for target in self._targets.values():
                _give_back(urlsplit(target.db).path.lstrip("/") or _query_dbname(target.db))
        self._targets.clear()


def _query_dbname(dsn: str) -> str:
    from urllib.parse import parse_qs

    return parse_qs(urlsplit(dsn).query)["dbname"][0]
