"""Read-only guarantee: opening a database read-only never changes its bytes, its ``-wal``, or
creates files beside it. The one allowed change is SQLite's read marks inside an ``-shm`` that
already exists (a reader must register itself there to read a WAL file safely).

The file-level properties (Hermes layouts, ``-wal`` bytes, sidecar files, writers that come and
go) are SQLite's. On both backends: a store opened ``read_only=True`` runs every read path
(store, retriever, tool with a model, CLI) and refuses every write with
:class:`ReadOnlyStoreError`, and not a row changes (on PostgreSQL compared with each row's
``xmin``). On PostgreSQL also: opening read-only never creates a schema, and a reader beside a
writer's open transaction sees only committed rows.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hermes_fixtures import build_hermes_db
from reliability.reliability_support import count
from store_targets import StoreFactory, pg_only

from langchain_session_recall import (
    NotASessionDatabaseError,
    ReadOnlyStoreError,
    SessionRecallRetriever,
    SessionStore,
)
from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.cli import main as cli_main
from langchain_session_recall.search.pipeline import search_sessions

Snapshot = dict[str, str]


def snapshot(directory: Path) -> Snapshot:
    """``{file name: sha256}`` of every file; an ``-shm`` is recorded as present, not hashed."""
    out: Snapshot = {}
    for path in sorted(directory.iterdir()):
        if path.name.endswith("-shm"):
            out[path.name] = "present"
        else:
            out[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _add(conn: sqlite3.Connection, session_id: str, text: str, n: int = 1) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO sessions (id, source, started_at) VALUES (?, 'cli', 1795000000.0)",
        (session_id,),
    )
    conn.executemany(
        "INSERT INTO messages (session_id, role, content, timestamp) "
        "VALUES (?, 'user', ?, 1795000001.0)",
        [(session_id, f"{text} {i} " + "padding " * 40) for i in range(n)],
    )


def exercise(store: SessionStore) -> dict[str, list[str]]:
    """Every read path of the store and the retriever; returns what each search found."""
    found = {}
    for word in ("nginx", "zeppelin", "uncommittedword", "jetstream"):
        found[word] = [r.root_id for r in search_sessions(store, word).sessions]
    retriever = SessionRecallRetriever(store=store, k=5)
    docs = retriever.invoke("nginx OR zeppelin")
    for doc in docs:
        store.chain_messages(doc.metadata["session_id"])
        store.get_messages(doc.metadata["session_id"])
    retriever.invoke("")
    store.recent_sessions(limit=50, exclude_sources=())
    store.get_cached_summary("k")
    count("read_only.read_operations", 12 + 2 * len(docs), backend="sqlite")
    return found


@pytest.fixture
def hermes_wal(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    path = tmp_path / "state.db"
    build_hermes_db(path, getattr(request, "param", 3), wal=True)
    return path


@pytest.fixture
def writer(hermes_wal: Path) -> Iterator[sqlite3.Connection]:
    """Hermes itself: a WAL writer with committed (uncheckpointed) and uncommitted rows."""
    conn = sqlite3.connect(hermes_wal, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("BEGIN")
    _add(conn, "w-committed", "zeppelin", 5)
    conn.execute("COMMIT")
    conn.execute("BEGIN IMMEDIATE")
    _add(conn, "w-pending", "uncommittedword", 5)
    yield conn
    conn.execute("ROLLBACK")
    conn.close()


@pytest.mark.parametrize("hermes_wal", [1, 2, 3], indirect=True)
def test_hermes_wal_file_with_an_active_writer_is_untouched(
    hermes_wal: Path, writer: sqlite3.Connection
) -> None:
    directory = hermes_wal.parent
    before = snapshot(directory)
    assert {"state.db", "state.db-wal", "state.db-shm"} <= set(before)
    with SessionStore(hermes_wal, read_only=True) as store:
        found = exercise(store)
        with pytest.raises(ReadOnlyStoreError):
            store.add_session("x")
        with pytest.raises(ReadOnlyStoreError):
            store.put_cached_summary("k", session_id="x", summary="s", model=None)
    assert snapshot(directory) == before
    assert found["zeppelin"] == ["w-committed"]  # committed in the WAL: visible
    assert found["uncommittedword"] == []  # not committed: invisible
    assert found["nginx"] and found["jetstream"]


@pytest.mark.parametrize("layout", [1, 2, 3])
@pytest.mark.parametrize("wal", [True, False])
def test_a_file_without_a_writer_gets_no_sidecar_files(
    tmp_path: Path, layout: int, wal: bool
) -> None:
    path = tmp_path / "state.db"
    build_hermes_db(path, layout, wal=wal)
    before = snapshot(tmp_path)
    assert set(before) == {"state.db"}
    with SessionStore(path, read_only=True) as store:
        assert exercise(store)["nginx"]
        retriever = SessionRecallRetriever(store=store)
        assert retriever.invoke("nginx")
    assert snapshot(tmp_path) == before


def test_a_writer_that_comes_and_goes_between_two_reads(hermes_wal: Path) -> None:
    """A reader opened while the agent was not running, then the agent runs a whole session
    (opens, writes past a checkpoint, closes and removes its -wal) between two searches."""
    directory = hermes_wal.parent
    with SessionStore(hermes_wal, read_only=True) as store:
        assert exercise(store)["zeppelin"] == []
        before = snapshot(directory)
        assert set(before) == {"state.db"}
        conn = sqlite3.connect(hermes_wal, isolation_level=None)
        conn.execute("BEGIN")
        _add(conn, "later", "zeppelin", 3000)  # several MB: rewrites pages the reader cached
        conn.execute("COMMIT")
        conn.close()
        count("read_only.messages_written_by_other_process", 3000, backend="sqlite")
        assert set(snapshot(directory)) == {"state.db"}
        found = exercise(store)
        assert found["zeppelin"] == ["later"]
        assert found["nginx"]
        after = snapshot(directory)
    assert snapshot(directory) == after
    assert set(after) == {"state.db"}


def test_a_writer_that_starts_while_the_reader_is_open(hermes_wal: Path) -> None:
    directory = hermes_wal.parent
    with SessionStore(hermes_wal, read_only=True) as store:
        exercise(store)
        conn = sqlite3.connect(hermes_wal, isolation_level=None)
        conn.execute("PRAGMA wal_autocheckpoint=0")
        conn.execute("BEGIN")
        _add(conn, "live", "zeppelin", 50)
        conn.execute("COMMIT")
        before = snapshot(directory)
        assert "state.db-wal" in before
        assert exercise(store)["zeppelin"] == ["live"]
        assert snapshot(directory) == before
        conn.close()


def test_our_own_file_opened_read_only_beside_a_live_writer(tmp_path: Path) -> None:
    path = tmp_path / "recall.db"
    with SessionStore(path) as own:
        own.add_session("a")
        own.add_messages("a", [{"role": "user", "content": "zeppelin over nginx"}])
        before = snapshot(tmp_path)
        with SessionStore(path, read_only=True) as reader:
            assert exercise(reader)["zeppelin"] == ["a"]
        assert snapshot(tmp_path) == before
        own.add_messages("a", [{"role": "user", "content": "still writable"}])
    closed = snapshot(tmp_path)
    with SessionStore(path, read_only=True) as reader:
        assert exercise(reader)["zeppelin"] == ["a"]
    assert snapshot(tmp_path) == closed


_CRASHING_WRITER = """
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA cache_size = 2")  # spill changed pages into the file before the commit
conn.execute("BEGIN IMMEDIATE")
conn.execute("UPDATE messages SET content = 'half-written ' || content")
os._exit(9)  # killed mid-write: the rollback journal stays, hot
"""


def test_a_hot_rollback_journal_is_named_with_the_way_to_recover(tmp_path: Path) -> None:
    # A writer that crashed in rollback-journal mode leaves <db>-journal; a read-only open
    # cannot roll it back, and said only "not a readable SQLite database: attempt to write a
    # readonly database". It says what happened and how to recover, and the advice works.
    path = tmp_path / "state.db"
    build_hermes_db(path, 3, wal=False)
    with SessionStore(path, read_only=True) as store:
        expected = {sid: len(store.get_messages(sid)) for sid in store.all_session_ids()}
    subprocess.run([sys.executable, "-c", _CRASHING_WRITER, str(path)], check=False)
    assert Path(f"{path}-journal").stat().st_size > 0
    before = snapshot(tmp_path)
    advice = rf"crashed mid-write.*sqlite3 {path} 'PRAGMA quick_check;'.*Do not delete the journal"
    for read_only in (True, False):  # a writable open would roll it back: the file changed
        with pytest.raises(NotASessionDatabaseError, match=advice):
            SessionStore(path, read_only=read_only)
    result = io.StringIO()
    with contextlib.redirect_stderr(result):
        code = cli_main(["search", "nginx", "--db", str(path), "--read-only"], out=io.StringIO())
    assert code == 3 and "hot rollback journal" in result.getvalue(), result.getvalue()
    assert snapshot(tmp_path) == before  # refused, not rolled back
    assert cli_main(["stats", "--db", str(path)], out=io.StringIO()) == 3  # without --read-only
    assert snapshot(tmp_path) == before

    recover = sqlite3.connect(path)  # what the message says to do
    assert recover.execute("PRAGMA quick_check").fetchall() == [("ok",)]
    recover.close()
    assert not Path(f"{path}-journal").exists()
    with SessionStore(path, read_only=True) as store:  # as it was before the crashed write
        assert {sid: len(store.get_messages(sid)) for sid in expected} == expected
        assert not any(
            "half-written" in m.content for m in store.get_messages(next(iter(expected)))
        )
    count("read_only.hot_journals_named", 1, backend="sqlite")


# --------------------------------------------------------------------------- both backends

SEED = [
    ("ro-root", None, "alice", "the nginx proxy drops the CORS header"),
    ("ro-child", "ro-root", "alice", "zeppelin notes from the sub-agent"),
    ("ro-other", None, "bob", "postgres vacuum and the nginx cache"),
]


def _recap(messages: Any, n: int) -> str:
    return "The user asked about nginx [USER #1]; the assistant answered."


def _seed(store: SessionBackend) -> None:
    for sid, parent, user, text in SEED:
        store.add_session(sid, parent_session_id=parent, user_id=user, title=sid)
        store.add_messages(sid, [{"role": "user", "content": text}])
    store.import_messages("ro-other", [("k1", {"role": "user", "content": "imported"})],
                          source_kind="jsonl")  # fmt: skip
    store.put_cached_summary("k", session_id="ro-root", summary="cached", model="m")
    store.end_session("ro-other", end_reason="done")


def every_read_path(store: SessionBackend, db: str) -> int:
    """Every read the library does, through the store, the retriever, the tool (with a model:
    summaries of a read-only store are cached in memory), the summarizer cache and the CLI
    with ``--read-only``; returns the number of operations."""
    from summarizer_support import ScriptedChatModel

    from langchain_session_recall import create_session_search_tool

    ops = 0
    for word in ("nginx", "zeppelin", "nothingmatches", "ngin*", "nginx OR postgres"):
        assert search_sessions(store, word).sessions or word == "nothingmatches"
        ops += 1
    assert search_sessions(store, "nginx", user_id="bob").sessions
    retriever = SessionRecallRetriever(store=store, k=5)
    assert retriever.invoke("nginx") and retriever.invoke("")
    assert SessionRecallRetriever(store=store, user_id="alice").invoke("zeppelin")
    llm = ScriptedChatModel(script=_recap)
    tool = create_session_search_tool(store, llm=llm, max_attempts=1)
    for _ in range(2):  # the second call is served by the in-memory cache
        payload = json.loads(tool.invoke({"query": "nginx", "limit": 3}))
        assert payload["success"] and payload["results"]
    assert len(llm.calls) == 2  # two sessions match, each summarized once
    assert json.loads(tool.invoke({"query": "", "limit": 3}))["success"]
    ops += 9
    for sid in store.all_session_ids():
        assert store.get_session(sid) is not None
        store.get_messages(sid)
        store.chain_messages(store.root_of(sid))
        store.lineage(sid)
        store.chain(sid)
        ops += 6
    store.get_sessions([s for s, *_ in SEED])
    store.parents_of(["ro-child"], user_id="alice")
    store.recent_sessions(limit=50, exclude_sources=(), exclude_session_ids=["ro-child"])
    assert store.imported_keys("jsonl", "ro-other") == {"k1"}
    cached = store.get_cached_summary("k")
    assert cached is not None and cached.summary == "cached"
    store.vocabulary("ngi")
    assert store.stats()["sessions"] == len(SEED)
    assert store.check().ok
    ops += 9
    for argv in (
        ["search", "nginx"],
        ["search", "nginx", "--json", "--user", "alice"],
        ["recent"],
        ["show", "ro-child"],
        ["stats"],
        ["check"],
    ):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err):
            assert cli_main([*argv, "--db", db, "--read-only"], out) == 0, err.getvalue()
        ops += 1
    return ops


def refuses_every_write(store: SessionBackend) -> None:
    writes = [
        lambda: store.add_session("new"),
        lambda: store.add_session("ro-root", title="renamed"),
        lambda: store.add_messages("ro-root", [{"role": "user", "content": "more"}]),
        lambda: store.import_messages(
            "ro-root", [("k2", {"role": "user", "content": "x"})], source_kind="jsonl"
        ),
        lambda: store.end_session("ro-root"),
        lambda: store.put_cached_summary("k2", session_id="ro-root", summary="s", model=None),
        store.optimize,
    ]
    for write in writes:
        with pytest.raises(ReadOnlyStoreError):
            write()
    with pytest.raises(ReadOnlyStoreError), store.transaction():
        pass


def test_a_read_only_store_of_either_backend_leaves_its_data_unchanged(
    store_factory: StoreFactory,
) -> None:
    """Every read path, then every write refused, on a store opened ``read_only=True``: not a
    row changes (PostgreSQL: not even a row's ``xmin``, nor a sequence), and on SQLite not a
    byte of the directory."""
    target = store_factory.target("ro")
    with target.open() as writer:
        _seed(writer)
    before = target.dump()
    files = snapshot(Path(target.db).parent) if target.backend == "sqlite" else {}
    with target.open(read_only=True) as store:
        ops = every_read_path(store, target.db)
        refuses_every_write(store)
        ops += 8
    assert target.dump() == before
    if target.backend == "sqlite":
        assert snapshot(Path(target.db).parent) == files
    count("read_only.read_operations", ops, backend=target.backend)


@pg_only
def test_opening_postgres_read_only_never_creates_a_schema(pg_store_factory: StoreFactory) -> None:
    """No schema, or an empty one: opening read-only (class, ``open_store``, CLI) refuses, and
    the database is as it was."""
    from langchain_session_recall.backends import open_store

    target = pg_store_factory.target("nothing")

    def catalog() -> list[tuple[Any, ...]]:
        with target.sql() as sql:
            return sql.execute(
                "SELECT n.nspname, c.relname FROM pg_namespace n "
                "LEFT JOIN pg_class c ON c.relnamespace = n.oid "
                "WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema' "
                "ORDER BY 1, 2"
            )

    for make_empty_schema in (False, True):
        if make_empty_schema:
            with target.sql() as sql:
                sql.execute("CREATE SCHEMA session_recall")
        before = catalog()
        with pytest.raises(NotASessionDatabaseError, match="no session store"):
            target.open(read_only=True)
        with pytest.raises(NotASessionDatabaseError, match="no session store"):
            open_store(target.db, read_only=True)
        for argv in (["search", "nginx"], ["recent"], ["stats"], ["check"]):
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                code = cli_main([*argv, "--db", target.db, "--read-only"], io.StringIO())
            assert code == 3, err.getvalue()
        assert catalog() == before
        assert target.has_schema() is make_empty_schema
        count("read_only.refused_opens", 6, backend="postgres")


@pg_only
def test_a_postgres_reader_beside_a_writer_with_an_open_transaction(
    pg_store_factory: StoreFactory,
) -> None:
    """The twin of the live Hermes writer: another client holds uncommitted rows and row locks;
    the read-only store sees the committed rows only, never waits, and changes nothing."""
    target = pg_store_factory.target("live")
    with target.open() as writer:
        _seed(writer)
    with target.sql() as other:
        other.execute("BEGIN")
        other.execute("UPDATE sessions SET title = 'locked' WHERE id = 'ro-root'")
        other.execute(
            "INSERT INTO sessions (id, source, started_at) VALUES ('w-pending', 'cli', 1)"
        )
        other.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) "
            "VALUES ('w-pending', 'user', 'uncommittedword', 2)"
        )
        before = target.dump()
        with target.open(read_only=True) as store:
            assert search_sessions(store, "uncommittedword").sessions == []
            ops = every_read_path(store, target.db)
            refuses_every_write(store)
            root = store.get_session("ro-root")
            assert root is not None and root.title == "ro-root"
        assert target.dump() == before
        other.execute("ROLLBACK")
    count("read_only.read_operations", ops + 8, backend="postgres")
