"""Structure invariants of the embedded demo dataset (stdlib only, no package import)."""

import json
import re
from pathlib import Path

DEMO = (
    Path(__file__).resolve().parents[2] / "langchain_session_recall" / "data" / "demo_sessions.json"
)
ROLES = {"user", "assistant", "tool", "system"}
ID_RE = re.compile(r"^\d{8}_\d{6}_[0-9a-f]{6}$")


def _sessions() -> list[dict]:
    return json.loads(DEMO.read_text(encoding="utf-8"))["sessions"]


def test_ids_unique_and_hermes_shaped() -> None:
    ids = [s["id"] for s in _sessions()]
    assert len(ids) == len(set(ids))
    assert all(ID_RE.match(i) for i in ids)


def test_parents_listed_before_children() -> None:
    seen: set[str] = set()
    for s in _sessions():
        parent = s["parent_session_id"]
        assert parent is None or parent in seen, s["id"]
        seen.add(s["id"])


def test_session_fields() -> None:
    for s in _sessions():
        assert isinstance(s["source"], str) and s["source"]
        assert isinstance(s["started_at"], float)
        assert s["ended_at"] is None or s["ended_at"] >= s["started_at"]
        assert 3 <= len(s["messages"]) <= 20, s["id"]


def test_messages_well_formed() -> None:
    for s in _sessions():
        last = s["started_at"]
        call_ids: set[str] = set()
        for m in s["messages"]:
            assert m["role"] in ROLES
            assert isinstance(m["content"], str)
            assert m["timestamp"] > last, (s["id"], m)
            last = m["timestamp"]
            if "tool_calls" in m:
                assert m["role"] == "assistant"
                for call in m["tool_calls"]:
                    json.loads(call["function"]["arguments"])
                    call_ids.add(call["id"])
            if m["role"] == "tool":
                assert m["tool_name"]
                assert m["tool_call_id"] in call_ids
            else:
                assert "tool_call_id" not in m and "tool_name" not in m
        if s["ended_at"] is not None:
            assert s["ended_at"] >= last


def test_children_start_after_parent_started() -> None:
    by_id = {s["id"]: s for s in _sessions()}
    for s in by_id.values():
        if s["parent_session_id"]:
            assert s["started_at"] >= by_id[s["parent_session_id"]]["started_at"]


def test_covers_the_cases_tests_rely_on() -> None:
    sessions = _sessions()
    sources = {s["source"] for s in sessions}
    assert {"cli", "cron", "subagent", "tool"} <= sources
    assert any(s["end_reason"] == "compression" for s in sessions)
    assert any(s["user_id"] == "bob" for s in sessions)
    assert sum(s["source"] == "cron" for s in sessions) >= 3
    compacted_openers = [
        s["messages"][0]["content"]
        for s in sessions
        if s["parent_session_id"] and s["source"] != "subagent"
    ]
    assert any(c.startswith("[CONTEXT COMPACTION") for c in compacted_openers)
