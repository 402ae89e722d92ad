"""Issue 23 §2: an assistant's tool calls are content, indexed and shown, on both backends.

The arguments (the code a ``write_file`` wrote, the command a ``terminal`` ran) are found by
their words, shown in transcripts, windows, ``session_show`` and recaps, and redacted; an
existing store is re-indexed when it is opened writable, a read-only one is searched as it is.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from pg_support import PG_DSN, SKIP_PG, old_postgres_schema
from store_targets import StoreFactory

from langchain_session_recall import SessionStore
from langchain_session_recall.backends.sqlite.schema import SCHEMA_VERSION
from langchain_session_recall.core.query import parse_query
from langchain_session_recall.core.redaction import redact_secrets
from langchain_session_recall.recall.build import search_results
from langchain_session_recall.recall.show import show_session

DATA = Path(__file__).resolve().parents[1] / "data"

# The word "rsync" follows a line break inside the JSON text ("\nrsync"): indexed as written,
# the JSON's escape made it the token "nrsync". "vacuum_snapshots" lies past 1,024 characters.
SCRIPT = (
    "#!/usr/bin/env bash\nset -euo pipefail\n"
    + "# keep the last seven days\n" * 40
    + "rsync -a --link-dest=../latest ~/ /mnt/backup/new\nvacuum_snapshots 7\n"
)
CALLS = [
    {
        "id": "c1",
        "type": "function",
        "function": {
            "name": "write_file",
            "arguments": json.dumps({"path": "~/bin/backup.sh", "content": SCRIPT}),
        },
    }
]


def _fill(store) -> None:  # type: ignore[no-untyped-def]
    store.add_session("backup", title="Nightly job", started_at=1000.0)
    store.add_messages(
        "backup",
        [
            {"role": "user", "content": "make me a nightly job", "timestamp": 1000.0},
            {
                "role": "assistant",
                "content": "Here it is.",
                "tool_calls": CALLS,
                "timestamp": 1001.0,
            },
            {"role": "tool", "content": "ok", "tool_name": "write_file", "timestamp": 1002.0},
        ],
    )
    store.add_session("other", title="Something else", started_at=2000.0)
    store.add_messages(
        "other", [{"role": "user", "content": "the arguments for a function", "timestamp": 2000.0}]
    )


def _found(store, text: str) -> list[str]:  # type: ignore[no-untyped-def]
    return list(
        dict.fromkeys(h.session_id for h in store.match_messages(parse_query(text), "relaxed"))
    )


def test_tool_call_arguments_are_indexed_as_text(store_factory: StoreFactory) -> None:
    store = store_factory.open("calls")
    _fill(store)
    assert _found(store, "rsync") == ["backup"]  # after a line break in the JSON text
    assert _found(store, "vacuum") == ["backup"]  # past the first 1,024 characters
    assert _found(store, "write_file") == ["backup"]  # the tool's name
    # the JSON's own keys are not words of the conversation
    assert _found(store, "arguments") == ["other"]
    assert _found(store, "function") == ["other"]


def test_transcript_shows_the_call_and_its_code(store_factory: StoreFactory) -> None:
    store = store_factory.open("calls")
    _fill(store)
    [result] = search_results(store, "where is the rsync script?", k=1, show_message_ids=True)
    text = result.page_content
    assert '→ write_file(path="~/bin/backup.sh")]:\n```bash\n#!/usr/bin/env bash' in text
    assert "vacuum_snapshots 7\n```" in text
    assert "[Called:" not in text
    shown = show_session(store, "backup", message_ids=[result.metadata["matched_message_ids"][0]])
    assert '→ write_file(path="~/bin/backup.sh")]:' in shown["transcript"]
    assert "rsync -a --link-dest" in shown["transcript"]


def test_secrets_in_arguments_are_redacted(store_factory: StoreFactory) -> None:
    store = store_factory.open("calls")
    store.add_session("s")
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 3
    calls = [{"name": "terminal", "args": {"command": f"export OPENAI_API_KEY={key}\nrun"}}]
    store.add_messages("s", [{"role": "assistant", "content": "", "tool_calls": calls}])
    [result] = search_results(store, "OPENAI_API_KEY", k=1, redact=redact_secrets)
    assert key not in result.page_content and "REDACTED" in result.page_content
    shown = show_session(store, "s", redact=redact_secrets)["transcript"]
    assert key not in shown and "REDACTED" in shown


def _v2_sqlite(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.executescript((DATA / "sqlite_schema_v2.sql").read_text())
        conn.execute("INSERT INTO sessions (id, source, started_at) VALUES ('old', 'cli', 1.0)")
        conn.execute(
            "INSERT INTO messages (session_id, role, content, tool_calls, timestamp) "
            "VALUES ('old', 'assistant', '', ?, 1.0)",
            (json.dumps(CALLS),),
        )


def test_a_version_2_sqlite_file_is_reindexed_when_opened_writable(tmp_path: Path) -> None:
    path = tmp_path / "v2.db"
    _v2_sqlite(path)
    before = path.read_bytes()
    with SessionStore(path, read_only=True) as reader:  # searched as it is, never changed
        assert reader.layout.version == 2
        assert _found(reader, "write_file") == ["old"]
    assert path.read_bytes() == before
    with SessionStore(path) as store:
        assert store.layout.version == SCHEMA_VERSION
        assert _found(store, "rsync") == ["old"]
        assert _found(store, "arguments") == []
        store.delete_sessions(["old"])  # the index deletes exactly what it holds
        assert store.check().ok


@pytest.mark.skipif(not PG_DSN, reason=SKIP_PG)
@pytest.mark.enable_socket
def test_a_version_2_postgres_schema_is_reindexed(pg_schema: str) -> None:
    from langchain_session_recall import PostgresSessionStore

    with old_postgres_schema("postgres_schema_v2.sql", pg_schema) as conn:
        conn.execute("INSERT INTO sessions (id, source, started_at) VALUES ('old', 'cli', 1.0)")
        conn.execute(
            "INSERT INTO messages (session_id, role, content, tool_calls, timestamp) "
            "VALUES ('old', 'assistant', '', %s, 1.0)",
            (json.dumps(CALLS),),
        )
    with PostgresSessionStore(PG_DSN, schema=pg_schema, max_size=2, read_only=True) as reader:
        assert _found(reader, "rsync") == []  # read-only: searched as it is
    with PostgresSessionStore(PG_DSN, schema=pg_schema, max_size=2) as store:
        assert _found(store, "rsync") == ["old"]
        assert _found(store, "arguments") == []
