"""SessionStore on real temporary SQLite files."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from langchain_session_recall import (
    InvalidMessageError,
    NotASessionDatabaseError,
    SessionStore,
)
from langchain_session_recall.backends.sqlite.files import read_only_uri
from langchain_session_recall.backends.sqlite.schema import SCHEMA_VERSION
from langchain_session_recall.core.query import parse_query


def test_schema_wal_foreign_keys_and_version(store: SessionStore) -> None:
    conn = sqlite3.connect(store.path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert {"sessions", "messages", "messages_fts", "messages_cjk_fts", "summary_cache"} <= tables
    version = conn.execute(
        "SELECT value FROM session_recall_meta WHERE key='schema_version'"
    ).fetchone()
    assert int(version[0]) == SCHEMA_VERSION
    triggers = " ".join(
        r[0] for r in conn.execute("SELECT sql FROM sqlite_master WHERE type='trigger'")
    )
    assert "messages_fts" in triggers


def test_fts_index_follows_updates_and_deletes(store: SessionStore) -> None:
    store.add_session("s")
    (mid,) = store.add_messages("s", [{"role": "user", "content": "alpha 修改服务端"}])
    q = parse_query("alpha")
    assert [h.message_id for h in store.match_messages(q, "relaxed")] == [mid]
    raw = sqlite3.connect(store.path)
    raw.execute("UPDATE messages SET content = 'beta' WHERE id = ?", (mid,))
    raw.commit()
    assert store.match_messages(q, "relaxed") == []
    assert len(store.match_messages(parse_query("beta"), "relaxed")) == 1
    raw.execute("DELETE FROM messages WHERE id = ?", (mid,))
    raw.commit()
    assert store.match_messages(parse_query("beta"), "relaxed") == []
    assert store.match_messages(parse_query("服务"), "relaxed") == []
    raw.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")


def test_other_clients_can_write_the_file(store: SessionStore) -> None:
    """Triggers are plain SQL: a bare sqlite3 connection (no Python functions) can insert."""
    raw = sqlite3.connect(store.path)
    raw.execute("INSERT INTO sessions (id, source, started_at) VALUES ('x', 'cli', 1)")
    raw.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('x', 'user', '部署 gamma', 1)"
    )
    raw.commit()
    assert len(store.match_messages(parse_query("gamma"), "relaxed")) == 1
    assert store.reindex_cjk() == 1
    assert len(store.match_messages(parse_query("部署"), "relaxed")) == 1


def test_foreign_database_is_not_modified_when_opened_writable(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, started_at REAL)")
    conn.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, content TEXT)")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    # no full-text index: not a Hermes file either, so "open it read-only" would not help
    with pytest.raises(NotASessionDatabaseError, match="not a session database"):
        SessionStore(path)
    assert path.read_bytes() == before


def test_not_a_database(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_text("hello")
    with pytest.raises(NotASessionDatabaseError):
        SessionStore(junk, read_only=True)
    with pytest.raises(NotASessionDatabaseError, match="no such file"):
        SessionStore(tmp_path / "missing.db", read_only=True)
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(NotASessionDatabaseError, match="no 'sessions'"):
        SessionStore(empty, read_only=True)


def test_threads_read_while_one_writes(store: SessionStore) -> None:
    store.add_session("w")
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        try:
            while not stop.is_set():
                store.match_messages(parse_query("needle"), "relaxed")
                store.recent_sessions(3)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for i in range(50):
        store.add_messages("w", [{"role": "user", "content": f"needle {i}"}])
    stop.set()
    for t in threads:
        t.join()
    assert errors == []
    assert len(store.match_messages(parse_query("needle"), "relaxed", limit=100)) == 50


def test_transaction_is_invisible_to_other_threads_until_it_ends(store: SessionStore) -> None:
    store.add_session("s")
    seen_inside: list[int] = []
    other_wrote = threading.Event()

    def other() -> None:
        seen_inside.append(len(store.get_messages("s")))  # a reader does not wait
        store.add_messages("s", [{"role": "user", "content": "from the other thread"}])
        other_wrote.set()

    with store.transaction():
        store.add_messages("s", [{"role": "user", "content": "mine"}])
        thread = threading.Thread(target=other)
        thread.start()
        thread.join(timeout=0.5)
        assert seen_inside == [0]  # uncommitted writes are not visible elsewhere
        assert not other_wrote.is_set()  # and other writers wait for the block to end
    thread.join()
    assert [m.content for m in store.get_messages("s")] == ["mine", "from the other thread"]


def _trigger_present(path: str) -> bool:
    conn = sqlite3.connect(read_only_uri(path), uri=True)
    try:
        return bool(
            conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = 'messages_fts_ai'"
            ).fetchone()
        )
    finally:
        conn.close()


def _index_is_consistent(store: SessionStore) -> bool:
    conn = sqlite3.connect(store.path)
    try:  # rank 1: compare the index with what the content view says it should hold
        conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")
        conn.execute(
            "INSERT INTO messages_cjk_fts(messages_cjk_fts, rank) VALUES ('integrity-check', 1)"
        )
    finally:
        conn.close()
    return _trigger_present(store.path)


def _deferred(conn: sqlite3.Connection) -> bool:
    """Whether ``conn`` sees the row that defers indexing to the end of a bulk block."""
    query = "SELECT 1 FROM session_recall_meta WHERE key = 'fts_deferred_after'"
    return conn.execute(query).fetchone() is not None


def test_bulk_block_changes_no_schema(store: SessionStore) -> None:
    """Deferring indexing in a bulk block runs no DDL: a schema change makes every other
    connection re-read the schema, and one that connects an FTS5 table meanwhile fails with
    "vtable constructor failed" (SQLITE_SCHEMA). Schema 3 dropped and re-created the insert
    trigger in every block (the schema version went up by 2 per block)."""
    other = sqlite3.connect(store.path)
    before = other.execute("PRAGMA schema_version").fetchone()
    for block in range(3):
        with store.transaction():
            for n in range(3):  # three batches: indexing deferred from the second on
                store.add_session(f"s{block}-{n}")
                store.add_messages(f"s{block}-{n}", [{"role": "user", "content": "东京 nginx"}])
    assert other.execute("PRAGMA schema_version").fetchone() == before
    assert other.execute("SELECT count(*) FROM messages_fts('nginx')").fetchone() == (9,)
    other.close()
    assert _index_is_consistent(store)


def test_bulk_block_indexes_everything_when_it_ends(store: SessionStore) -> None:
    seen_by_other: list[bool] = []
    with store.transaction():
        for n in range(5):
            store.add_session(f"s{n}")
            store.add_messages(
                f"s{n}",
                [
                    {"role": "user", "content": f"rotate the certificate number {n}"},
                    {"role": "tool", "content": "证书已更新 " + "log line " * 1000},
                ],
            )
        with pytest.raises(InvalidMessageError):  # a failed batch after indexing was deferred
            store.add_messages("s0", [{"role": "user", "content": "x"}, {"role": "alien"}])
        assert _deferred(store._conn())  # indexing is deferred inside the block...
        seen_by_other.append(_deferred(sqlite3.connect(store.path)))  # ...others never notice
    assert seen_by_other == [False]
    assert not _deferred(store._conn())
    assert _index_is_consistent(store)
    assert len(store.match_messages(parse_query("certificate"), "relaxed")) == 5
    assert len(store.match_messages(parse_query("证书"), "relaxed")) == 5
    store.add_messages("s0", [{"role": "user", "content": "certificate renewed again"}])
    assert len(store.match_messages(parse_query("certificate"), "relaxed")) == 6
    assert _index_is_consistent(store)


def test_bulk_block_that_fails_leaves_index_and_trigger_as_they_were(store: SessionStore) -> None:
    store.add_session("before")
    store.add_messages("before", [{"role": "user", "content": "keep this certificate"}])
    with pytest.raises(KeyboardInterrupt), store.transaction():
        for n in range(3):
            store.add_session(f"s{n}")
            store.add_messages(f"s{n}", [{"role": "user", "content": "certificate lost"}])
        raise KeyboardInterrupt
    assert _index_is_consistent(store)
    assert [h.session_id for h in store.match_messages(parse_query("certificate"), "relaxed")] == [
        "before"
    ]
    store.add_session("after")
    store.add_messages("after", [{"role": "user", "content": "certificate again"}])
    assert len(store.match_messages(parse_query("certificate"), "relaxed")) == 2


def test_a_path_starting_with_a_tilde_is_the_home_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # as open_store and the importers do: docs/summarizer.md opens SessionStore("~/recall.db")
    monkeypatch.setenv("HOME", str(tmp_path))
    with SessionStore("~/x.db") as store:
        store.add_session("s1", title="home")
        assert store.path == str(tmp_path / "x.db")
    assert (tmp_path / "x.db").is_file()
    assert not Path("~").exists()  # no directory named "~" in the working directory
