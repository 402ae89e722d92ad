"""SessionStore on real temporary SQLite files."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from langchain_session_recall import (
    InvalidMessageError,
    LineageCycleError,
    NotASessionDatabaseError,
    ReadOnlyStoreError,
    SessionNotFoundError,
    SessionStore,
)
from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.backends.sqlite.schema import SCHEMA_VERSION
from langchain_session_recall.models import CachedSummary
from langchain_session_recall.search.query import parse_query


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


def test_add_and_read_back(store: SessionStore) -> None:
    store.add_session("s1", source="telegram", model="m", title="t", user_id="u", started_at=10.0)
    ids = store.add_messages(
        "s1",
        [
            HumanMessage(content="deploy the app"),
            AIMessage(content="", tool_calls=[{"name": "terminal", "args": {}, "id": "c"}]),
            ToolMessage(content="ok", tool_call_id="c", name="terminal"),
            {"role": "assistant", "content": "deployed", "timestamp": 4e9},
        ],
    )
    assert len(ids) == 4 and ids == sorted(ids)
    session = store.get_session("s1")
    assert session is not None
    assert (session.source, session.model, session.title, session.user_id) == (
        "telegram",
        "m",
        "t",
        "u",
    )
    assert session.message_count == 4
    messages = store.get_messages("s1")
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1].tool_call_names == ["terminal"]
    assert messages[2].tool_name == "terminal"
    assert store.get_session("nope") is None


def test_update_existing_session_keeps_other_fields(store: SessionStore) -> None:
    store.add_session("s", title="first", model="a")
    store.add_session("s", title="second")
    session = store.get_session("s")
    assert session is not None and (session.title, session.model) == ("second", "a")


def test_unknown_session_and_bad_role_write_nothing(store: SessionStore) -> None:
    with pytest.raises(SessionNotFoundError, match="add_session"):
        store.add_messages("ghost", [{"role": "user", "content": "x"}])
    store.add_session("s")
    with pytest.raises(InvalidMessageError, match="unknown message role"):
        store.add_messages(
            "s", [{"role": "user", "content": "kept?"}, {"role": "robot", "content": "x"}]
        )
    assert store.get_messages("s") == []
    assert store.get_session("s").message_count == 0  # type: ignore[union-attr]


def test_parent_must_exist_and_cycles_are_refused(store: SessionStore) -> None:
    with pytest.raises(SessionNotFoundError, match="parent session"):
        store.add_session("child", parent_session_id="missing")
    assert store.get_session("child") is None
    store.add_session("a")
    store.add_session("b", parent_session_id="a")
    store.add_session("c", parent_session_id="b")
    with pytest.raises(LineageCycleError):
        store.add_session("a", parent_session_id="c")
    with pytest.raises(LineageCycleError):
        store.add_session("a", parent_session_id="a")
    assert store.get_session("a").parent_session_id is None  # type: ignore[union-attr]


def test_lineage_helpers(store: SessionStore) -> None:
    store.add_session("root")
    store.add_session("kid", parent_session_id="root", source="subagent")
    store.add_session("grandkid", parent_session_id="kid")
    store.add_session("other")
    assert store.root_of("grandkid") == "root"
    assert store.lineage("grandkid") == ["grandkid", "kid", "root"]
    assert set(store.chain("root")) == {"root", "kid", "grandkid"}
    assert store.chain("root")[0] == "root"
    assert store.parents_of(["grandkid"]) == {"grandkid": "kid", "kid": "root", "root": None}


def test_recent_sessions_lists_roots_with_previews(store: SessionStore) -> None:
    store.add_session("old", started_at=1.0, title="Old")
    store.add_messages(
        "old",
        [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "first  question\nhere"},
        ],
    )
    store.add_session("new", started_at=2.0, title="New")
    store.add_session("kid", parent_session_id="new", started_at=3.0)
    store.add_session("hidden", source="tool", started_at=4.0)
    recent = store.recent_sessions(10)
    assert [r.id for r in recent] == ["new", "old"]
    assert recent[1].preview == "first question here"
    assert [r.id for r in store.recent_sessions(10, exclude_session_ids=["kid"])] == ["old"]
    assert next(r.id for r in store.recent_sessions(10, exclude_sources=())) == "hidden"


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


def test_stemming_matches_inflections(store: SessionStore) -> None:
    store.add_session("s")
    store.add_messages("s", [{"role": "user", "content": "I was painting the fence"}])
    assert store.match_messages(parse_query("painted"), "relaxed")


def test_chain_messages_clip_tool_output_in_sql(store: SessionStore) -> None:
    store.add_session("s")
    store.add_messages(
        "s", [{"role": "tool", "tool_name": "t", "content": "A" * 300 + "B" * 10_000 + "C" * 300}]
    )
    (msg,) = store.chain_messages("s")
    assert msg.content == "A" * 250 + "\n...[truncated]...\n" + "C" * 250


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
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
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
        own = store._conn().execute("SELECT 1 FROM sqlite_master WHERE name = 'messages_fts_ai'")
        assert own.fetchone() is None  # indexing is deferred inside the block...
        seen_by_other.append(_trigger_present(store.path))  # ...other connections never notice
    assert seen_by_other == [True]
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


def test_transaction_on_a_read_only_store_is_refused(store: SessionStore) -> None:
    store.add_session("s")
    reader = SessionStore(store.path, read_only=True)
    with pytest.raises(ReadOnlyStoreError, match="read-only"), reader.transaction():
        pass


def test_summary_cache_roundtrip(store: SessionStore) -> None:
    store.add_session("s")
    assert store.get_cached_summary("k") is None
    store.put_cached_summary("k", session_id="s", summary="recap", model="m")
    assert store.get_cached_summary("k") == CachedSummary("recap", "summarized", "m")
    store.put_cached_summary("k", session_id="s", summary="loop", model="m", status="rejected")
    assert store.get_cached_summary("k") == CachedSummary("loop", "rejected", "m")


def test_lookup_registry(store: SessionStore) -> None:
    assert SessionBackend.lookup(store.store_id) is store
    assert SessionStore.lookup(store.store_id) is store
    assert SessionBackend.lookup("nope") is None
    store.close()
    assert SessionBackend.lookup(store.store_id) is None
