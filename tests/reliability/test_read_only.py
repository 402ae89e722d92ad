"""Read-only guarantee: opening a database read-only never changes its bytes, its ``-wal``, or
creates files beside it. The one allowed change is SQLite's read marks inside an ``-shm`` that
already exists (a reader must register itself there to read a WAL file safely).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hermes_fixtures import build_hermes_db
from reliability.reliability_support import count

from langchain_session_recall import ReadOnlyStoreError, SessionRecallRetriever, SessionStore
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
    count("read_only.read_operations", 12 + 2 * len(docs))
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
        count("read_only.messages_written_by_other_process", 3000)
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
