"""Opening is not writing (issue 21, items 1 to 3).

* A SQLite file that holds another program's tables and none of ours (an application's
  database, a LangGraph checkpointer file) is refused by ``SessionStore``, ``open_store`` and
  every CLI command (exit 3, "not a session database") and keeps every byte; only a missing or
  empty file is initialised.
* Opening a store of the current schema writes nothing and takes no write lock. SQLite: the
  file's bytes and ``PRAGMA data_version`` stay as they were when reading commands run without
  ``--read-only``, and the store opens while another connection holds the write lock.
  PostgreSQL: an event trigger sees no DDL, and no row changes (each row's ``xmin``).
* Reads never wait for writers: while another client holds a write transaction open, the CLI's
  ``search``, ``recent`` and ``stats`` (without ``--read-only``) and a store opened in Python
  answer, on both backends.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from cli_support import run_cli
from hermes_fixtures import build_hermes_db
from langchain_core.messages import HumanMessage
from reliability.reliability_support import count
from store_targets import StoreFactory, Watcher, backend_of, pg_only

from langchain_session_recall import NotASessionDatabaseError, SessionStore
from langchain_session_recall.backends import SessionBackend, open_store
from langchain_session_recall.cli import EXIT_DB
from langchain_session_recall.importers import import_hermes, import_langgraph
from langchain_session_recall.search.pipeline import search_sessions

DATA = Path(__file__).resolve().parents[1] / "data"
READERS = [["search", "nginx"], ["recent"], ["show", "nginx-1"], ["stats"], ["check"]]


def _files(directory: Path) -> dict[str, str]:
    """``{name: sha256}`` of every file in ``directory``."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


def _app_db(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE orders (id INTEGER PRIMARY KEY, user_id INTEGER REFERENCES users(id));
        CREATE INDEX idx_orders_user ON orders(user_id);
        INSERT INTO users VALUES (1, 'ana'), (2, 'bob');
        INSERT INTO orders VALUES (10, 1);
        """
    )
    conn.commit()
    conn.close()


def _checkpointer_db(path: Path) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(path, check_same_thread=False)
    SqliteSaver(conn).setup()  # LangGraph's own tables: checkpoints, writes
    conn.close()


def _same_names_db(path: Path) -> None:
    """An application that happens to name its tables ``sessions`` and ``messages``."""
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, token TEXT);"
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, body TEXT);"
        "INSERT INTO sessions VALUES ('s1', 'cookie');"
    )
    conn.commit()
    conn.close()


@pytest.mark.parametrize("build", [_app_db, _checkpointer_db, _same_names_db])
def test_a_file_of_another_program_is_refused_and_left_as_it_is(build, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "app.db"
    build(path)
    before = _files(tmp_path)
    for read_only in (False, True):
        with pytest.raises(NotASessionDatabaseError, match=r"not a session database|no 'messag"):
            SessionStore(path, read_only=read_only)
        with pytest.raises(NotASessionDatabaseError):
            open_store(path, read_only=read_only)
    commands = [*READERS, ["import", "jsonl", str(DATA / "jsonl")]]
    for argv in commands:
        for flags in ([], ["--read-only"]) if argv[0] != "import" else ([],):
            result = run_cli(*argv, "--db", str(path), *flags)
            assert result.code == EXIT_DB, (argv, flags, result.err)
            assert "not a session database" in result.err or "no 'messages_fts'" in result.err
            assert "own schema" not in result.out and "ok" not in result.out
    assert _files(tmp_path) == before  # byte-identical, and nothing created beside it
    count("opening.foreign_files_refused", 1)
    count("opening.cli_runs_refused", 2 * len(READERS) + 1)


def test_only_a_missing_or_empty_file_is_initialised(tmp_path: Path) -> None:
    missing, empty, blank = tmp_path / "missing.db", tmp_path / "empty.db", tmp_path / "blank.db"
    empty.touch()
    conn = sqlite3.connect(blank)  # a valid SQLite file without a single table
    conn.execute("PRAGMA user_version = 7")
    conn.close()
    for path in (missing, empty, blank):
        with SessionStore(path) as store:
            store.add_session("s1")
            assert store.layout.own
    result = run_cli("import", "jsonl", str(DATA / "jsonl"), "--db", str(tmp_path / "new.db"))
    assert result.code in (0, 4), result.err  # 4: the sample has lines it skips on purpose
    assert SessionStore(tmp_path / "new.db", read_only=True).stats()["messages"] > 0


def _seed(store: SessionBackend) -> None:
    store.add_session("nginx-1", title="Proxy", started_at=1_790_000_000.0)
    store.add_messages(
        "nginx-1",
        [
            {"role": "user", "content": "nginx returns 502 behind the load balancer"},
            {"role": "assistant", "content": "raise proxy_read_timeout in nginx.conf"},
        ],
    )


def test_opening_a_current_sqlite_store_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "recall.db"
    with SessionStore(path) as store:
        _seed(store)
    before = _files(tmp_path)
    assert list(before) == ["recall.db"]  # closed cleanly: no -wal left
    watcher = Watcher(StoreFactory("sqlite", tmp_path).target("recall"))
    try:
        for _ in range(2):
            SessionStore(path).close()
            open_store(path).close()
        for argv in READERS:  # as people type them: without --read-only
            result = run_cli(*argv, "--db", str(path))
            assert result.code == 0, (argv, result.err)
        assert not watcher.changed()  # no commit by anyone
    finally:
        watcher.close()
    after = _files(tmp_path)
    assert after["recall.db"] == before["recall.db"]  # not a byte changed
    # The watcher's connection outlived the store's, so SQLite left the -wal (and -shm) for the
    # next connection to remove; the -wal holds no frame: nothing was written through it.
    assert set(after) <= {"recall.db", "recall.db-wal", "recall.db-shm"}
    wal = tmp_path / "recall.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0
    count("opening.writable_opens_checked", 4 + len(READERS), backend="sqlite")


def test_a_current_sqlite_store_opens_while_another_writer_holds_the_lock(
    tmp_path: Path,
) -> None:
    path = tmp_path / "recall.db"
    with SessionStore(path) as store:
        _seed(store)
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # the write lock, held until the end of the test
    writer.execute("UPDATE sessions SET title = 'renamed' WHERE id = 'nginx-1'")
    try:
        # a tiny busy timeout: had the open asked for the lock, it would fail at once
        with SessionStore(path, busy_timeout=0.05) as store:
            assert [r.root_id for r in search_sessions(store, "nginx").sessions] == ["nginx-1"]
            assert store.get_session("nginx-1").title == "Proxy"  # type: ignore[union-attr]
    finally:
        writer.execute("ROLLBACK")
        writer.close()


@pg_only
def test_opening_a_current_postgres_schema_runs_no_ddl_and_writes_nothing(
    pg_store_factory: StoreFactory,
) -> None:
    target = pg_store_factory.target("ddl")
    with target.open() as store:
        _seed(store)
    with target.sql() as sql:
        sql.execute("CREATE TABLE public.ddl_log (tag text)")
        sql.execute(
            "CREATE FUNCTION public.log_ddl() RETURNS event_trigger LANGUAGE plpgsql AS "
            "$$ BEGIN INSERT INTO public.ddl_log VALUES (tg_tag); END $$"
        )
        sql.execute(
            "CREATE EVENT TRIGGER log_ddl ON ddl_command_start EXECUTE FUNCTION public.log_ddl()"
        )
        sql.execute("CREATE TABLE public.probe (x int)")  # the trigger sees DDL...
        assert sql.execute("SELECT tag FROM public.ddl_log") == [("CREATE TABLE",)]
        sql.execute("DELETE FROM public.ddl_log")
    before = target.dump()
    target.open().close()
    open_store(target.db).close()
    for argv in READERS:
        result = run_cli(*argv, "--db", target.db)
        assert result.code == 0, (argv, result.err)
    with target.sql() as sql:
        assert sql.execute("SELECT tag FROM public.ddl_log") == []  # ...and saw none
        sql.execute("DROP EVENT TRIGGER log_ddl")
    assert target.dump() == before
    count("opening.writable_opens_checked", 2 + len(READERS), backend="postgres")


def test_reads_do_not_wait_for_a_writer(store_factory: StoreFactory) -> None:
    """The issue's case: a search while an import holds a write transaction failed after
    5.8 s with ``database is locked``. Here the writer holds its transaction until every read
    has answered: a read that waited for it would never succeed."""
    target = store_factory.target("lk")
    with target.open() as store:
        _seed(store)
    with target.sql() as writer, writer.transaction():
        writer.execute(
            "INSERT INTO sessions (id, source, started_at) VALUES ('importing', 'cli', 1.0)"
        )
        writer.execute("UPDATE sessions SET title = 'renamed' WHERE id = 'nginx-1'")  # row lock
        result = run_cli("search", "nginx", "--db", target.db, "--json")
        assert result.code == 0, result.err
        assert '"nginx-1"' in result.out
        for argv in (["recent"], ["stats"], ["show", "nginx-1"]):
            assert run_cli(*argv, "--db", target.db).code == 0, argv
        with open_store(target.db) as store:
            assert [r.root_id for r in search_sessions(store, "nginx").sessions] == ["nginx-1"]
            assert store.get_session("importing") is None  # not committed yet
    assert target.count("sessions") == 2  # the writer went on and committed
    count("opening.reads_beside_a_writer", 5, backend=store_factory.backend)


# --------------------------------------------------------------------------- paths are names


@pytest.mark.parametrize(
    ("name", "twin"), [("proj%41", "projA"), ("proj%3FA", "proj?A"), ("proj%20A", "proj A")]
)
def test_a_path_names_its_own_file_whatever_it_holds(
    name: str, twin: str, backend_store: SessionBackend, tmp_path: Path
) -> None:
    # 'proj%41/x.db' opened read-only read 'projA/x.db' (the path went into a file: URI
    # unquoted, and SQLite decoded %41), and import hermes imported that other file; the
    # LangGraph importer built its URI from the raw path too. Each directory here holds a
    # file of its own; opening one by name must never read its twin.
    mine, other = tmp_path / name, tmp_path / twin
    for folder in (mine, other):
        folder.mkdir()
    build_hermes_db(mine / "x.db", 3)
    with SessionStore(other / "x.db") as decoy:
        decoy.add_session("decoy", title="the twin's session")
        decoy.add_messages("decoy", [{"role": "user", "content": "nginx in the twin file"}])
    with SessionStore(mine / "x.db", read_only=True) as store:
        assert not store.layout.own  # the Hermes file, not the twin (a store of ours)
        hermes_ids = set(store.all_session_ids())
        assert "decoy" not in hermes_ids and hermes_ids
    result = run_cli("recent", "--db", str(mine / "x.db"), "--read-only", "--json")
    assert result.code == 0 and '"decoy"' not in result.out, result.err
    import_hermes(backend_store, mine / "x.db")
    assert set(backend_store.all_session_ids()) == hermes_ids

    _langgraph_thread(mine / "cp.db", "mine")
    _langgraph_thread(other / "cp.db", "twin")
    import_langgraph(backend_store, mine / "cp.db")
    assert "mine" in backend_store.all_session_ids()
    assert "twin" not in backend_store.all_session_ids()
    count("opening.quoted_paths", 3, backend=backend_of(backend_store))


def _langgraph_thread(path: Path, thread: str) -> None:
    """A LangGraph checkpointer file holding one thread."""
    from langgraph.checkpoint.base import empty_checkpoint
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(path, check_same_thread=False)
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"messages": [HumanMessage(f"hello from {thread}", id="m1")]}
    config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    SqliteSaver(conn).put(config, checkpoint, {"source": "input", "step": 0}, {})  # type: ignore[arg-type]
    conn.close()
