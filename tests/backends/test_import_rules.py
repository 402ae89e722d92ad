"""Importers on both backends: what a re-run may change (issue 16 §3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_session_recall.importers import import_jsonl
from langchain_session_recall.importers.base import ImportReport, ImportSession, write_sessions


def _chat(tmp_path: Path) -> Path:
    f = tmp_path / "one.jsonl"
    f.write_text('{"role": "user", "content": "refund for order 1182?"}\n', encoding="utf-8")
    return f


def test_a_rerun_without_source_keeps_the_source_it_did_not_import(
    store: Any, tmp_path: Path
) -> None:
    f = _chat(tmp_path)
    assert import_jsonl(store, f, source="helpdesk").messages == 1
    again = import_jsonl(store, f)
    assert (again.messages, again.already_imported) == (0, 1)
    assert store.get_session("one").source == "helpdesk"
    assert store.stats()["sources"] == {"helpdesk": 1}


def test_a_rerun_fills_empty_fields_and_never_overwrites_set_ones(store: Any) -> None:
    store.add_session("s1", source="webapp", title="Mine", started_at=100.0)
    store.end_session("s1", ended_at=200.0, end_reason="user_exit")
    msg = ("k1", {"role": "user", "content": "hi", "timestamp": 50.0})
    report = write_sessions(
        store,
        [
            ImportSession(
                "s1",
                "import",
                [msg],
                model="gpt-x",
                title="Theirs",
                user_id="ana",
                started_at=50.0,
                ended_at=300.0,
                end_reason="timeout",
            )
        ],
        ImportReport("custom"),
    )
    assert report.messages == 1
    s = store.get_session("s1")
    # Set fields stay as they were; empty ones are filled; the start only moves earlier.
    assert (s.source, s.title, s.ended_at, s.end_reason) == ("webapp", "Mine", 200.0, "user_exit")
    assert (s.model, s.user_id, s.started_at) == ("gpt-x", "ana", 50.0)
