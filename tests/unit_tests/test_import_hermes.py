"""Hermes state.db import: every FTS layout, lineage, visibility, incremental re-runs."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hermes_fixtures import EXTRA_SESSION_ID, MARKERS, build_hermes_db, default_sessions

from langchain_session_recall.backends.sqlite.store import SessionStore
from langchain_session_recall.importers import ImportSourceError, import_hermes
from langchain_session_recall.importers import base as importers_base
from langchain_session_recall.retriever import SessionRecallRetriever


def _visible_count(path: Path) -> int:
    with SessionStore(path, read_only=True) as source:
        return sum(len(source.get_messages(sid)) for sid in source.all_session_ids())


@pytest.mark.parametrize("layout", [1, 2, 3])
def test_import_copies_sessions_lineage_and_visible_messages(tmp_path: Path, layout: int) -> None:
    src = tmp_path / "state.db"
    build_hermes_db(src, layout)
    store = SessionStore(tmp_path / "ours.db")
    report = import_hermes(store, src)

    sessions = default_sessions()
    assert report.sessions == report.new_sessions == len(sessions)
    assert report.messages == _visible_count(src)
    assert report.skipped_total == 0 and report.orphans == []
    for s in sessions:
        got = store.get_session(s["id"])
        assert got is not None
        assert (got.source, got.parent_session_id, got.model, got.title) == (
            s["source"],
            s.get("parent_session_id"),
            s.get("model"),
            s.get("title"),
        )
        assert got.started_at == pytest.approx(s["started_at"])
        assert got.ended_at == s.get("ended_at")

    def found(word: str) -> bool:
        return bool(SessionRecallRetriever(store=store, exclude_sources=()).invoke(word))

    assert found(MARKERS["compacted"])  # compacted messages come along
    assert not found(MARKERS["rewound"])  # rewound ones stay out
    assert not found(MARKERS["hidden"])  # model-only scaffolding too
    assert found(MARKERS["json_parts"])  # \x00json: content is decoded
    # The whole tool output is copied, even past the 8,192 characters Hermes indexes.
    extra = store.get_messages(EXTRA_SESSION_ID)
    assert any(m.role == "tool" and MARKERS["beyond_8192"] in m.content for m in extra)


def test_reimport_is_a_no_op(tmp_path: Path) -> None:
    src = tmp_path / "state.db"
    build_hermes_db(src, 3)
    store = SessionStore(tmp_path / "ours.db")
    first = import_hermes(store, src)
    second = import_hermes(store, src)
    assert second.messages == 0 and second.new_sessions == 0
    assert second.already_imported == first.messages
    assert store.stats()["messages"] == first.messages


def test_reimport_adds_only_new_sessions_and_messages(tmp_path: Path) -> None:
    src = tmp_path / "state.db"
    build_hermes_db(src, 2)
    store = SessionStore(tmp_path / "ours.db")
    import_hermes(store, src)
    before = len(store.get_messages(EXTRA_SESSION_ID))

    conn = sqlite3.connect(src)
    with conn:
        conn.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
            (EXTRA_SESSION_ID, "user", "one more question about zookeeper", 1795545000.0),
        )
        conn.execute(
            "INSERT INTO sessions (id, source, started_at, parent_session_id, title) "
            "VALUES ('20261201_090000_ffffff', 'telegram', 1796115600.0, ?, 'follow-up')",
            (EXTRA_SESSION_ID,),
        )
        conn.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES "
            "('20261201_090000_ffffff', 'user', 'is the broker alarm gone?', 1796115601.0)"
        )
    conn.close()

    report = import_hermes(store, src)
    assert (report.new_sessions, report.messages) == (1, 2)
    assert len(store.get_messages(EXTRA_SESSION_ID)) == before + 1
    assert store.root_of("20261201_090000_ffffff") == EXTRA_SESSION_ID


def test_child_whose_parent_is_missing_is_imported_as_root(tmp_path: Path) -> None:
    src = tmp_path / "state.db"
    orphan = {
        "id": "20261101_000000_orphan",
        "source": "cli",
        "parent_session_id": "20261031_000000_gone",
        "started_at": 1793491200.0,
        "messages": [{"role": "user", "content": "lonely child", "timestamp": 1793491201.0}],
    }
    build_hermes_db(src, 1, sessions=[orphan], older=True)
    conn = sqlite3.connect(src)
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.close()
    store = SessionStore(":memory:")
    report = import_hermes(store, src)
    assert report.orphans == [orphan["id"]]
    assert store.get_session(orphan["id"]).parent_session_id is None  # type: ignore[union-attr]
    assert "parent missing" in report.summary()


def test_imported_store_answers_like_the_source(tmp_path: Path) -> None:
    src = tmp_path / "state.db"
    build_hermes_db(src, 3)
    store = SessionStore(tmp_path / "ours.db")
    import_hermes(store, src)
    with SessionStore(src, read_only=True) as hermes:
        for query in ("CORS error", "rename photos", "kubernetes deploy"):
            theirs = [
                d.metadata["session_id"] for d in SessionRecallRetriever(store=hermes).invoke(query)
            ]
            ours = [
                d.metadata["session_id"] for d in SessionRecallRetriever(store=store).invoke(query)
            ]
            assert set(theirs) & set(ours), query  # same roots found (stemming may add more)


def test_not_a_hermes_file_is_a_clear_error(tmp_path: Path) -> None:
    bogus = tmp_path / "notes.txt"
    bogus.write_text("hello")
    with pytest.raises(ImportSourceError, match="not a Hermes session database"):
        import_hermes(SessionStore(":memory:"), bogus)
    with pytest.raises(ImportSourceError, match="no such file"):
        import_hermes(SessionStore(":memory:"), tmp_path / "missing.db")


def test_killed_import_leaves_a_consistent_db_and_a_rerun_completes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "state.db"
    build_hermes_db(src, 3)
    clean = SessionStore(tmp_path / "clean.db")
    import_hermes(clean, src)

    target = tmp_path / "killed.db"
    store = SessionStore(target)
    real = SessionStore._insert_messages
    calls = 0

    def dies_before_commit(
        self: SessionStore, conn: sqlite3.Connection, sid: str, rows: Any, first: int
    ) -> Any:
        nonlocal calls
        calls += 1
        ids = real(self, conn, sid, rows, first)  # rows are written inside the open transaction...
        if calls == 5:
            raise KeyboardInterrupt  # ...and the process dies before COMMIT
        return ids

    monkeypatch.setattr(SessionStore, "_insert_messages", dies_before_commit)
    # Imports commit a group of sessions at a time: small groups, so some commit before the kill.
    monkeypatch.setattr(importers_base, "SESSIONS_PER_TRANSACTION", 2)
    with pytest.raises(KeyboardInterrupt):
        import_hermes(store, src)
    monkeypatch.undo()

    conn = sqlite3.connect(target)
    messages, ledger = conn.execute(
        "SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM import_ledger) "
        "+ (SELECT coalesce(sum(key_count), 0) FROM import_runs)"
    ).fetchone()
    conn.close()
    assert 0 < messages < clean.stats()["messages"]
    assert ledger == messages  # every stored message is in the ledger, and only those

    report = import_hermes(store, src)
    assert report.already_imported == messages
    for sid in clean.all_session_ids():
        assert [(m.role, m.content, m.timestamp) for m in store.get_messages(sid)] == [
            (m.role, m.content, m.timestamp) for m in clean.get_messages(sid)
        ]
        assert store.get_session(sid).message_count == clean.get_session(sid).message_count  # type: ignore[union-attr]
