"""Read-only opening of Hermes state.db files: searchable, and never written to."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from hermes_fixtures import MARKERS, build_hermes_db

from langchain_session_recall import ReadOnlyStoreError, SessionRecallRetriever, SessionStore


def _snapshot(directory: Path) -> dict[str, str]:
    """Name -> sha256 of every file in the directory, except SQLite's shared-memory index."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.iterdir())
        if not p.name.endswith("-shm")
    }


@pytest.mark.parametrize("layout", [1, 2, 3])
def test_search_every_hermes_layout(tmp_path: Path, layout: int) -> None:
    path = tmp_path / "state.db"
    build_hermes_db(path, layout)
    before = _snapshot(tmp_path)
    with SessionStore.open_hermes(path) as store:
        assert store.read_only and not store.layout.own
        retriever = SessionRecallRetriever(store=store)
        docs = retriever.invoke("how did we fix the CORS error?")
        assert docs and docs[0].metadata["session_id"] == "20261103_091512_a1b2c3"
        assert retriever.invoke("hyperfine")[0].metadata["session_id"] == "20261110_134002_5ea7c1"
        assert retriever.invoke("")  # recent mode works read-only
        # Hermes visibility: rewound and model-only messages stay hidden, compacted ones count.
        assert retriever.invoke(MARKERS["rewound"]) == []
        assert retriever.invoke(MARKERS["hidden"]) == []
        assert retriever.invoke(MARKERS["compacted"])
        # "\x00json:" structured content is decoded in transcripts.
        doc = retriever.invoke(MARKERS["json_parts"])[0]
        assert "\x00json:" not in doc.page_content and MARKERS["json_parts"] in doc.page_content
        with pytest.raises(ReadOnlyStoreError):
            store.add_session("x")
    assert _snapshot(tmp_path) == before
    assert not (tmp_path / "state.db-wal").exists()


def test_older_file_without_visibility_columns(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    build_hermes_db(path, 1, older=True)
    with SessionStore(path, read_only=True) as store:
        assert store.layout.visibility == "1"
        assert SessionRecallRetriever(store=store).invoke("pgbouncer")


def test_wal_file_with_active_writer_keeps_its_bytes(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    build_hermes_db(path, 3, wal=True)
    writer = sqlite3.connect(path)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute(
        "INSERT INTO sessions (id, source, started_at) VALUES ('live', 'cli', 1800000000)"
    )
    writer.execute(
        "INSERT INTO messages (session_id, role, content, timestamp, active, compacted) "
        "VALUES ('live', 'user', 'zeppelin committed by the writer', 1800000000, 1, 0)"
    )
    writer.commit()
    assert (tmp_path / "state.db-wal").exists()
    before = _snapshot(tmp_path)
    with SessionStore(path, read_only=True) as store:
        docs = SessionRecallRetriever(store=store).invoke("zeppelin")
        assert [d.metadata["session_id"] for d in docs] == ["live"]
    assert _snapshot(tmp_path) == before
    writer.close()


def test_checkpointed_wal_file_gets_no_wal_or_shm(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    build_hermes_db(path, 3, wal=True)
    assert not (tmp_path / "state.db-wal").exists()
    before = sorted(p.name for p in tmp_path.iterdir())
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    with SessionStore.open_hermes(path) as store:
        assert SessionRecallRetriever(store=store).invoke("nginx")
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest


def test_read_only_own_store_keeps_bytes(tmp_path: Path) -> None:
    path = tmp_path / "mine.db"
    with SessionStore(path) as store:
        store.add_session("s")
        store.add_messages("s", [{"role": "user", "content": "tangerine"}])
    before = _snapshot(tmp_path)
    with SessionStore(path, read_only=True) as ro:
        assert SessionRecallRetriever(store=ro).invoke("tangerine")
        with pytest.raises(ReadOnlyStoreError):
            ro.put_cached_summary("k", session_id="s", summary="x", model=None)
    assert _snapshot(tmp_path) == before
