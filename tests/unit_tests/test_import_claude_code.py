"""Claude Code transcript import: blocks, merged assistant lines, side chains, re-runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from langchain_session_recall.backends.sqlite.store import SessionStore
from langchain_session_recall.importers import import_claude_code
from langchain_session_recall.retriever import SessionRecallRetriever

DATA = Path(__file__).resolve().parents[1] / "data" / "claude_code"
SESSION = "7d3f9a2e-4b1c-4e8a-9f2d-1a6b5c8e0f31"
SAMPLE = DATA / "-home-dev-shop-api" / f"{SESSION}.jsonl"
CHILD = f"{SESSION}/agent-s0000001"


def test_main_session_and_side_chain_child() -> None:
    store = SessionStore(":memory:")
    report = import_claude_code(store, DATA)
    assert (report.sessions, report.messages) == (2, 10)
    assert report.skipped == {"not valid JSON": 1}  # the interrupted last line
    assert report.problems == [f"{SESSION}.jsonl:17: not valid JSON"]
    assert sum(report.ignored.values()) == 4  # meta, system, snapshot, thinking-only

    main = store.get_session(SESSION)
    assert main is not None
    assert main.title == "Fix flaky checkout test (Redis lock timeout)"
    assert main.model == "claude-sonnet-4-5-20250929"
    assert main.source == "claude-code"
    child = store.get_session(CHILD)
    assert child is not None
    assert child.parent_session_id == SESSION
    assert child.model == "claude-haiku-4-5-20251001"


def test_blocks_become_messages_with_tool_calls_and_named_results() -> None:
    store = SessionStore(":memory:")
    import_claude_code(store, SAMPLE)
    messages = store.get_messages(SESSION)
    assert [m.role for m in messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    first_reply = messages[1]
    # Three lines of one API response (thinking, text, tool_use) are one message.
    assert first_reply.content == "I'll look at the cart lock helper and the test first."
    assert first_reply.tool_call_names == ["Read"]
    assert (messages[2].tool_name, messages[2].tool_call_id) == ("Read", "toolu_01Read")
    assert "LOCK_TTL_MS = 500" in messages[2].content
    assert messages[4].tool_name == "Task"
    assert not any("Caveat" in m.content for m in messages)  # meta entries are not conversation
    side = store.get_messages(CHILD)
    assert [m.role for m in side] == ["user", "assistant", "tool", "assistant"]
    assert side[2].content.startswith("run 4812: cart lock held 430ms")


def test_search_folds_the_side_chain_into_the_root() -> None:
    store = SessionStore(":memory:")
    import_claude_code(store, DATA)
    docs = SessionRecallRetriever(store=store).invoke("run 4813 lock held")
    assert [d.metadata["session_id"] for d in docs] == [SESSION]
    assert CHILD in docs[0].metadata["matched_session_ids"]


def test_reimport_adds_only_new_entries(tmp_path: Path) -> None:
    path = tmp_path / SAMPLE.name
    shutil.copy(SAMPLE, path)
    store = SessionStore(tmp_path / "r.db")
    import_claude_code(store, path)
    assert import_claude_code(store, path).messages == 0
    entry = {
        "type": "user",
        "uuid": "u0000009-0000-4000-8000-000000000009",
        "parentUuid": "a0000010-0000-4000-8000-000000000010",
        "isSidechain": False,
        "sessionId": SESSION,
        "timestamp": "2026-11-18T09:20:00.000Z",
        "message": {"role": "user", "content": "Raised the TTL, CI is green now."},
    }
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")
    report = import_claude_code(store, path)
    assert report.messages == 1
    assert store.get_messages(SESSION)[-1].content == "Raised the TTL, CI is green now."


def test_sub_agent_file_with_agent_id_joins_its_session(tmp_path: Path) -> None:
    folder = tmp_path / "proj"
    folder.mkdir()
    shutil.copy(SAMPLE, folder / SAMPLE.name)
    agent_entry = {
        "type": "user",
        "uuid": "z1",
        "parentUuid": None,
        "isSidechain": True,
        "agentId": "a1b2c3",
        "sessionId": SESSION,
        "timestamp": "2026-11-18T09:16:00.000Z",
        "message": {"role": "user", "content": "Check the payment step for lock renewal."},
    }
    (folder / "agent-a1b2c3.jsonl").write_text(json.dumps(agent_entry) + "\n")
    store = SessionStore(":memory:")
    import_claude_code(store, folder)
    agent = store.get_session(f"{SESSION}/agent-a1b2c3")
    assert agent is not None and agent.parent_session_id == SESSION
    assert store.get_session(SESSION).title is not None  # type: ignore[union-attr]
