"""Importers on both backends: what a re-run may change (issue 16 §3)."""

from __future__ import annotations

import json
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


# ------------------------------------------------------------------ one conversation per line


def _conversations(tmp_path: Path) -> Path:
    lines = [
        {
            "id": "conv-1",
            "title": "Refund",
            "metadata": {"user_id": "ana", "model": "gpt-4o"},
            "messages": [
                {"role": "system", "content": "You are a helpdesk agent."},
                {"role": "user", "content": "Refund for order 1182?"},
                {"role": "assistant", "content": "Refunded to your card."},
            ],
        },
        {
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Export invoices?"}]},
                {"role": "robot", "content": "beep"},
                {"role": "assistant", "content": "Billing > Invoices > Export CSV."},
            ]
        },
    ]
    f = tmp_path / "finetune.jsonl"
    f.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return f


def test_one_conversation_per_line_is_one_session(store: Any, tmp_path: Path) -> None:
    f = _conversations(tmp_path)
    report = import_jsonl(store, f)
    assert (report.sessions, report.new_sessions, report.messages) == (2, 2, 5)
    assert report.problems == ["finetune.jsonl:2: message 2: no known role"]
    conv = store.get_session("conv-1")
    assert (conv.title, conv.user_id, conv.model, conv.source) == (
        "Refund",
        "ana",
        "gpt-4o",
        "import",
    )
    assert [m.role for m in store.get_messages("conv-1")] == ["system", "user", "assistant"]
    assert [m.content for m in store.get_messages("finetune-2")] == [
        "Export invoices?",
        "Billing > Invoices > Export CSV.",
    ]
    again = import_jsonl(store, f)
    assert (again.messages, again.already_imported) == (0, 5)
