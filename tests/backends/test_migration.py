"""A store made by version 0.1.0 (schema version 1) opens with this library and is migrated."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from pg_support import PG_DSN, SKIP_PG, old_postgres_schema

from langchain_session_recall import SessionStore
from langchain_session_recall.backends.sqlite.schema import SCHEMA_VERSION
from langchain_session_recall.models import CachedSummary

DATA = Path(__file__).resolve().parents[1] / "data"


def _v1_sqlite(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.executescript((DATA / "sqlite_schema_v1.sql").read_text())
        conn.execute("INSERT INTO sessions (id, source, started_at) VALUES ('old', 'cli', 1.0)")
        conn.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) "
            "VALUES ('old', 'user', 'the walrus deployment', 1.0)"
        )
        conn.execute("UPDATE sessions SET message_count = 1")
        conn.execute(
            "INSERT INTO summary_cache (cache_key, session_id, summary, model, created_at) "
            "VALUES ('k', 'old', 'an old recap', 'm', 1.0)"
        )


def test_a_version_1_sqlite_file_is_migrated_when_opened_writable(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    _v1_sqlite(path)
    with SessionStore(path, read_only=True) as reader:  # read-only: searched, never changed
        assert reader.layout.version == 1
        assert [h.session_id for h in reader.match_messages(_q("walrus"), "relaxed")] == ["old"]
        assert reader.get_cached_summary("k") is None
    with SessionStore(path) as store:
        assert store.layout.version == SCHEMA_VERSION
        assert store.get_cached_summary("k") == CachedSummary("an old recap", "summarized", "m")
        store.put_cached_summary("k2", session_id="old", summary="x", model=None, status="rejected")
        assert store.get_cached_summary("k2") == CachedSummary("x", "rejected", None)
        assert store.check().ok


def test_a_version_3_sqlite_file_gets_the_insert_trigger_that_bulk_loads_defer(
    tmp_path: Path,
) -> None:
    """Version 4: a bulk load defers indexing through a meta row the insert trigger checks
    (schema 3 dropped and re-created the trigger, a schema change that failed other
    connections' searches). A version-3 file gets the new trigger when opened writable."""
    path = tmp_path / "v3.db"
    SessionStore(path).close()
    with sqlite3.connect(path) as conn:  # the version-3 trigger: no WHEN clause
        (sql,) = conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'messages_fts_ai'"
        ).fetchone()
        head, body = sql.split(" BEGIN", 1)
        conn.execute("DROP TRIGGER messages_fts_ai")
        conn.execute(head.split("\nWHEN")[0] + " BEGIN" + body)
        (old,) = conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'messages_fts_ai'"
        ).fetchone()
        assert "session_recall_meta" not in old
        conn.execute("UPDATE session_recall_meta SET value = '3' WHERE key = 'schema_version'")
    with SessionStore(path) as store:
        assert store.layout.version == SCHEMA_VERSION
        (new,) = (
            store._conn()
            .execute("SELECT sql FROM sqlite_master WHERE name = 'messages_fts_ai'")
            .fetchone()
        )
        assert "session_recall_meta WHERE key = 'fts_deferred_after'" in new
        (version,) = store._conn().execute("PRAGMA schema_version").fetchone()
        with store.transaction():
            for n in range(3):
                store.add_session(f"s{n}")
                store.add_messages(f"s{n}", [{"role": "user", "content": "the walrus"}])
        assert store._conn().execute("PRAGMA schema_version").fetchone() == (version,)
        assert len(store.match_messages(_q("walrus"), "relaxed")) == 3
        assert store.check().ok


def _q(text: str):  # type: ignore[no-untyped-def]
    from langchain_session_recall.core.query import parse_query

    return parse_query(text)


@pytest.mark.skipif(not PG_DSN, reason=SKIP_PG)
@pytest.mark.enable_socket
def test_a_version_1_postgres_schema_is_migrated(pg_schema: str) -> None:

    from langchain_session_recall import PostgresSessionStore

    with old_postgres_schema("postgres_schema_v1.sql", pg_schema) as conn:
        conn.execute(
            "INSERT INTO summary_cache (cache_key, session_id, summary, model, created_at) "
            "VALUES ('k', 'old', 'an old recap', 'm', 1.0)"
        )
    with PostgresSessionStore(PG_DSN, schema=pg_schema, max_size=2) as store:
        assert store.get_cached_summary("k") == CachedSummary("an old recap", "summarized", "m")
        store.add_session("s1")
        pairs = [("line-1", {"role": "user", "content": "walrus"})]
        assert len(store.import_messages("s1", pairs, source_kind="jsonl")) == 1  # ledger exists
        assert store.import_messages("s1", pairs, source_kind="jsonl") == []
