"""JSON Lines import: sessions per file or per session_id, parents, malformed lines, re-runs."""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from langchain_session_recall.backends.sqlite.store import SessionStore
from langchain_session_recall.importers import ImportSourceError, import_jsonl
from langchain_session_recall.importers.base import ImportReport
from langchain_session_recall.importers.jsonl import parse_jsonl_lines

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "jsonl" / "support-chat.jsonl"


def test_sample_file_sessions_messages_and_problems() -> None:
    store = SessionStore(":memory:")
    report = import_jsonl(store, SAMPLE)
    assert (report.sessions, report.new_sessions, report.messages) == (3, 3, 7)
    assert report.skipped == {"not valid JSON": 1, "no known role": 1}
    assert report.problems == [
        "support-chat.jsonl:8: not valid JSON",
        "support-chat.jsonl:9: no known role",
    ]
    sup1 = store.get_session("sup-1")
    assert sup1 is not None
    assert (sup1.source, sup1.title, sup1.model) == (
        "support-bot",
        "Password reset loop",
        "gpt-4.1-mini",
    )
    assert sup1.started_at == datetime(2026, 11, 20, 10, tzinfo=timezone.utc).timestamp()
    messages = store.get_messages("sup-1")
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1].tool_call_names == ["lookup_account"]
    assert (messages[2].tool_name, messages[2].tool_call_id) == ("lookup_account", "call_1")
    assert store.get_session("sup-1-escalation").parent_session_id == "sup-1"  # type: ignore[union-attr]
    assert store.get_session("sup-2").source == "import"  # type: ignore[union-attr]


def test_reimport_is_idempotent_and_picks_up_appended_lines(tmp_path: Path) -> None:
    path = tmp_path / "support-chat.jsonl"
    shutil.copy(SAMPLE, path)
    store = SessionStore(tmp_path / "r.db")
    first = import_jsonl(store, path)
    again = import_jsonl(store, path)
    assert (again.messages, again.already_imported) == (0, first.messages)
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"session_id": "sup-2", "role": "user", "content": "thanks!"}\n')
    third = import_jsonl(store, path)
    assert third.messages == 1
    assert [m.content for m in store.get_messages("sup-2")][-1] == "thanks!"


def test_lines_without_session_id_form_one_session_named_after_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "chats"
    folder.mkdir()
    (folder / "monday.jsonl").write_text(
        '{"role": "human", "content": "hi"}\n{"role": "ai", "content": "hello"}\n'
    )
    (folder / "tuesday.jsonl").write_text(
        '{"role": "user", "content": "again", "parent_id": "monday"}\n'
    )
    store = SessionStore(":memory:")
    report = import_jsonl(store, folder, parent_field="parent_id", source="notes")
    assert report.new_sessions == 2
    assert [m.role for m in store.get_messages("monday")] == ["user", "assistant"]
    tuesday = store.get_session("tuesday")
    assert tuesday is not None
    assert (tuesday.parent_session_id, tuesday.source) == ("monday", "notes")


def test_parse_reports_bad_timestamps_and_non_objects() -> None:
    report = ImportReport("jsonl")
    lines = ['["a list"]', '{"role": "user", "content": "x", "timestamp": "last tuesday"}', ""]
    assert parse_jsonl_lines(lines, name="f", default_session_id="f", report=report) == []
    assert report.skipped == {"not a JSON object": 1, "bad timestamp": 1}


def test_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ImportSourceError, match="no such file"):
        import_jsonl(SessionStore(":memory:"), tmp_path / "nope.jsonl")


def test_reimport_never_moves_a_session_later(tmp_path: Path) -> None:
    import os

    path = tmp_path / "notes.jsonl"
    path.write_text('{"role": "user", "content": "first"}\n')
    os.utime(path, (1_700_000_000, 1_700_000_000))
    store = SessionStore(":memory:")
    import_jsonl(store, path)
    with path.open("a") as fh:
        fh.write('{"role": "user", "content": "second"}\n')
    os.utime(path, (1_800_000_000, 1_800_000_000))
    assert import_jsonl(store, path).messages == 1
    session = store.get_session("notes")
    assert session is not None and session.started_at == 1_700_000_000
    assert [m.content for m in store.get_messages("notes")] == ["first", "second"]
