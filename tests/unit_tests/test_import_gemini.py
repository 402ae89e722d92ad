"""Gemini CLI recordings: upserted messages, $set, $rewindTo, sub-agents, older .json files,
tool calls and results, re-runs; on both backends."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from pathlib import Path

import pytest
from store_targets import StoreFactory

from langchain_session_recall.cli import EXIT_OK, EXIT_PARTIAL, main
from langchain_session_recall.importers import IMPORTERS, import_gemini

DATA = Path(__file__).resolve().parents[1] / "data" / "gemini"
MAIN = "a1b2c3d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
SUB = "b7e8f9a0-1b2c-4d3e-8f4a-5b6c7d8e9f01"
EMPTY = "c9d0e1f2-3a4b-4c5d-9e6f-7a8b9c0d1e2f"
LEGACY = "d3e4f5a6-7b8c-4d9e-af01-23456789abcd"
MAIN_FILE = DATA / "tmp" / "shop-api" / "chats" / "session-2026-11-03T10-00-a1b2c3d4.jsonl"


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(root.rglob("*")):
        if f.is_file():
            h.update(str(f.relative_to(root)).encode() + f.read_bytes())
    return h.hexdigest()


def test_tree_imports_sessions_sub_agents_and_legacy_files(store_factory: StoreFactory) -> None:
    store = store_factory.open()
    before = _digest(DATA)
    report = import_gemini(store, DATA / "tmp")
    assert _digest(DATA) == before  # the source is only read
    assert (report.sessions, report.new_sessions, report.messages) == (3, 3, 14)
    assert report.skipped == {"not valid JSON": 1}  # the cut-off line
    assert report.problems == [f"{MAIN_FILE.name}:11: not valid JSON"]
    assert report.ignored["empty session"] == 1
    assert report.ignored["info message"] == 1
    assert store.get_session(EMPTY) is None  # metadata only: nothing to recall

    main = store.get_session(MAIN)
    assert main is not None
    assert (main.source, main.model) == ("gemini", "gemini-2.5-pro")
    assert main.title == "Fix flaky checkout test (cart lock TTL)"  # from the later $set
    sub = store.get_session(SUB)
    assert sub is not None
    assert (sub.parent_session_id, sub.model) == (MAIN, "gemini-2.5-flash")
    legacy = store.get_session(LEGACY)
    assert legacy is not None and legacy.title == "Nginx CORS header"
    assert [m.role for m in store.get_messages(LEGACY)] == ["user", "assistant", "tool"]


def test_rewind_drops_the_message_and_all_after_it(store_factory: StoreFactory) -> None:
    store = store_factory.open()
    import_gemini(store, MAIN_FILE)
    messages = store.get_messages(MAIN)
    assert [m.role for m in messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
    ]
    text = "\n".join(m.content for m in messages)
    assert "Rust" not in text  # m4 (the rewind target) and m5 after it are gone
    assert "Delegating" not in text  # an info note is not conversation
    # m2 was written three times (running, done, with tokens): one message, the last version.
    call = messages[1]
    assert call.tool_call_names == ["read_file"]
    assert (messages[2].tool_name, messages[2].tool_call_id) == (
        "read_file",
        "read_file-1762164012-1",
    )
    assert "LOCK_TTL_MS = 500" in messages[2].content
    assert messages[6].content == "50/50 passed, cart lock held at most 610 ms"


def test_reimport_adds_only_new_records(store_factory: StoreFactory, tmp_path: Path) -> None:
    store = store_factory.open()
    chats = tmp_path / "tmp" / "p" / "chats"
    chats.mkdir(parents=True)
    path = chats / MAIN_FILE.name
    shutil.copy(MAIN_FILE, path)
    first = import_gemini(store, tmp_path / "tmp")
    again = import_gemini(store, tmp_path / "tmp")
    assert (again.messages, again.already_imported) == (0, first.messages)
    added = {
        "id": "m10",
        "timestamp": "2026-11-03T10:05:00.000Z",
        "type": "user",
        "content": "Open a PR with the TTL change.",
    }
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(added) + "\n")
    assert import_gemini(store, tmp_path / "tmp").messages == 1
    assert store.get_messages(MAIN)[-1].content == "Open a PR with the TTL change."


def test_cli_imports_from_the_default_location(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    shutil.copytree(DATA / "tmp", home / ".gemini" / "tmp")
    monkeypatch.setenv("HOME", str(home))
    assert IMPORTERS["gemini"] is import_gemini
    out = io.StringIO()
    target = str(tmp_path / "r.db")
    assert main(["import", "gemini", "--db", target], out=out) == EXIT_PARTIAL
    assert out.getvalue().startswith("gemini: 3 sessions (3 new), 14 messages imported")
    assert (
        main(
            [
                "import",
                "gemini",
                str(
                    DATA
                    / "tmp"
                    / "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b"
                ),
                "--db",
                target,
            ],
            out=io.StringIO(),
        )
        == EXIT_OK
    )


def test_replay_rules_of_the_recording() -> None:
    from langchain_session_recall.importers.gemini import parse_gemini_records
    from langchain_session_recall.importers.report import ImportReport

    report = ImportReport("gemini")
    meta = {"sessionId": "s1", "projectHash": "p", "startTime": "2026-11-03T10:00:00Z"}
    records = [
        meta,
        {"id": "m1", "type": "user", "content": "first"},
        {"$rewindTo": "no-such-id"},  # gemini-cli drops every message then
        {"id": "m2", "type": "user", "content": "second"},
        {"$rewindTo": ["m2"]},  # not an id: skipped, nothing dropped
        {"$set": {"messages": [{"id": "x", "type": "user", "content": "compressed"}]}},
        {"id": "m3", "type": "gemini", "content": "third", "timestamp": "yesterday"},
    ]
    session = parse_gemini_records([(f"f:{n}", r) for n, r in enumerate(records, 1)], report=report)
    assert session is not None
    assert [m["content"] for _, m in session.messages] == ["second"]
    assert report.problems == ["f:5: $rewindTo is not a message id", "f:7: bad timestamp"]
    assert report.ignored["context snapshot"] == 1
