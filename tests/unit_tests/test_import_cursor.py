"""Cursor: the agent's transcripts (tests/data/cursor) and the editor's state.vscdb (built here
from SQL: ``cursorDiskKV(key, value)`` with ``composerData:*`` and ``bubbleId:*`` rows, as the
editor writes them); sub-agents, tool calls, bad rows, a conversation held by both; on both
backends."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from store_targets import StoreFactory

from langchain_session_recall import SessionStore
from langchain_session_recall.cli import EXIT_PARTIAL, main
from langchain_session_recall.importers import IMPORTERS, import_cursor

DATA = Path(__file__).resolve().parents[1] / "data" / "cursor"
MAIN = "5e1c9a4b-7d2f-4c3a-9b8e-1f0a2b3c4d5e"
SUB = "8a7b6c5d-4e3f-4a2b-8c1d-0e9f8a7b6c5d"
TRANSCRIPTS = DATA / "projects"
IDE_SUB = (
    "0c1d2e3f-aaaa-4bbb-8ccc-000000000001"  # sorts before its parent: read after it all the same
)
OLD = "7b7b7b7b-1111-4222-8333-444444444444"
EMPTY = "e0e0e0e0-0000-4000-8000-000000000000"
T0 = 1_793_700_000_000  # 2026-11-03T10:00:00Z in ms

SCHEMA = """
CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
"""


def _composer(cid: str, name: str, bubbles: list[tuple[str, int]], **extra: Any) -> dict[str, Any]:
    return {
        "_v": 10,
        "composerId": cid,
        "name": name,
        "createdAt": T0,
        "lastUpdatedAt": T0 + 60_000,
        "unifiedMode": "agent",
        "modelConfig": {"modelName": "claude-4.5-sonnet", "maxMode": False},
        "fullConversationHeadersOnly": [{"bubbleId": b, "type": t} for b, t in bubbles],
        **extra,
    }


def _bubble(kind: int, text: str, ms: int, **extra: Any) -> dict[str, Any]:
    return {
        "_v": 3,
        "type": kind,
        "bubbleId": "",
        "text": text,
        "createdAt": f"2026-11-03T10:{(ms - T0) // 60_000:02d}:{(ms - T0) // 1000 % 60:02d}.000Z",
        **extra,
    }


def _terminal(call: str, command: str, output: str) -> dict[str, Any]:
    return {
        "tool": 15,
        "name": "run_terminal_command_v2",
        "toolCallId": call,
        "status": "completed",
        "rawArgs": json.dumps({"command": command}),
        "params": json.dumps({"command": command, "requireUserApproval": True}),
        "result": json.dumps({"output": output, "exitCodeV2": 0}),
    }


ROWS: list[tuple[str, Any]] = [
    (
        f"composerData:{MAIN}",
        _composer(
            MAIN,
            "Fix flaky checkout test",
            [("b1", 1), ("b2", 2), ("b3", 2), ("b4", 2), ("b5", 2), ("b6", 2), ("b7", 2)],
            subagentComposerIds=[IDE_SUB],
        ),
    ),
    (
        f"bubbleId:{MAIN}:b1",
        _bubble(1, "The checkout test is flaky: the cart lock times out.", T0 + 5000),
    ),
    (
        f"bubbleId:{MAIN}:b2",
        _bubble(2, "", T0 + 6000, thinking={"text": "check the TTL", "signature": "x"}),
    ),
    (
        f"bubbleId:{MAIN}:b3",
        _bubble(
            2,
            "",
            T0 + 7000,
            toolFormerData=_terminal(
                "toolu_t1", "grep -n TTL src/cart/lock.ts", "3:export const LOCK_TTL_MS = 500;"
            ),
        ),
    ),
    (
        f"bubbleId:{MAIN}:b4",
        _bubble(2, "The lock TTL is 500 ms, shorter than the slowest step.", T0 + 8000),
    ),
    (
        f"bubbleId:{MAIN}:b5",
        _bubble(
            2,
            "",
            T0 + 9000,
            toolFormerData={
                "name": "task_v2",
                "toolCallId": "toolu_task",
                "status": "completed",
                "params": {"description": "run suite", "prompt": "run the checkout suite 50 times"},
                "result": {"agentId": IDE_SUB, "output": "50/50 passed"},
            },
        ),
    ),
    (f"bubbleId:{MAIN}:b6", "{cut off"),  # b7 has a header and no row
    (f"composerData:{IDE_SUB}", _composer(IDE_SUB, "run suite", [("s1", 1), ("s2", 2)])),
    (f"bubbleId:{IDE_SUB}:s1", _bubble(1, "run the checkout suite 50 times", T0 + 9100)),
    (
        f"bubbleId:{IDE_SUB}:s2",
        _bubble(2, "50/50 passed, cart lock held at most 610 ms.", T0 + 9900),
    ),
    (
        f"composerData:{OLD}",
        {
            "composerId": OLD,
            "name": "Nginx CORS header",
            "createdAt": T0 - 86_400_000,
            "conversation": [
                {"type": 1, "bubbleId": "o1", "text": "Why does the browser block my API calls?"},
                {
                    "type": 2,
                    "bubbleId": "o2",
                    "text": "Add your origin to Access-Control-Allow-Origin.",
                },
            ],
        },
    ),
    (f"composerData:{EMPTY}", _composer(EMPTY, "", [])),
    ("composerData:ffffffff-bad", "not json"),
]


def build_state_vscdb(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    conn.execute("INSERT INTO ItemTable VALUES ('cursorAuth/cachedEmail', 'dev@example.com')")
    for key, value in ROWS:
        raw = value if isinstance(value, str) else json.dumps(value)
        conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (key, raw.encode()))
    conn.commit()
    conn.close()
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(TRANSCRIPTS, home / ".cursor" / "projects")
    storage = home / ".config" / "Cursor" / "User" / "globalStorage"
    storage.mkdir(parents=True)
    build_state_vscdb(storage / "state.vscdb")
    return home


def test_agent_transcripts_with_sub_agents(store_factory: StoreFactory) -> None:
    store = store_factory.open()
    report = import_cursor(store, TRANSCRIPTS)
    assert (report.sessions, report.messages) == (2, 9)
    assert report.skipped == {"not valid JSON": 1}
    assert report.problems == [f"{MAIN}.jsonl:5: not valid JSON"]
    assert report.ignored["empty session"] == 1
    assert report.undated["file"] == 9  # transcripts carry no times
    messages = store.get_messages(MAIN)
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant", "assistant"]
    assert messages[0].content == "The checkout test is flaky: the cart lock times out under load."
    assert (messages[2].tool_name, messages[2].content) == (
        "Read",
        "export const LOCK_TTL_MS = 500;",
    )
    sub = store.get_session(SUB)
    assert sub is not None and sub.parent_session_id == MAIN and sub.source == "cursor"
    assert [m.role for m in store.get_messages(SUB)] == ["user", "assistant", "tool", "assistant"]
    again = import_cursor(store, TRANSCRIPTS)
    assert (again.messages, again.already_imported) == (0, 9)


def test_editor_database(store_factory: StoreFactory, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    db = build_state_vscdb(tmp_path / "src" / "state.vscdb")
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    store = store_factory.open()
    report = import_cursor(store, db)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in db.parent.iterdir()) == ["state.vscdb"]  # nothing beside it
    assert (report.sessions, report.messages) == (3, 10)
    assert report.skipped == {"bubble is not valid JSON": 1, "composer data is not valid JSON": 1}
    assert report.ignored["bubble not in the database"] == 1
    assert report.ignored["empty conversation"] == 1
    assert report.ignored["thinking or empty bubble"] == 1
    assert not report.orphans

    main_session = store.get_session(MAIN)
    assert main_session is not None
    assert (main_session.title, main_session.model) == (
        "Fix flaky checkout test",
        "claude-4.5-sonnet",
    )
    messages = store.get_messages(MAIN)
    assert [m.role for m in messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "assistant",
        "tool",
    ]
    assert messages[1].tool_call_names == ["run_terminal_command_v2"]
    assert messages[1].tool_calls is not None
    assert messages[1].tool_calls[0]["function"]["arguments"].startswith('{"command": "grep')
    assert (messages[2].tool_call_id, messages[2].content) == (
        "toolu_t1",
        "3:export const LOCK_TTL_MS = 500;",
    )
    assert messages[5].content == "50/50 passed"
    assert messages[0].timestamp == T0 / 1000 + 5
    child = store.get_session(IDE_SUB)
    assert child is not None and child.parent_session_id == MAIN
    old = store.get_session(OLD)
    assert old is not None and [m.role for m in store.get_messages(OLD)] == ["user", "assistant"]
    again = import_cursor(store, db)
    assert (again.messages, again.already_imported) == (0, 10)


def test_default_locations_read_the_database_before_the_transcripts(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    assert IMPORTERS["cursor"] is import_cursor
    out = io.StringIO()
    target = tmp_path / "r.db"
    assert main(["import", "cursor", "--db", str(target)], out=out) == EXIT_PARTIAL
    # the editor's 3 conversations (10 messages) and the transcript sub-agent (4); the main
    # transcript is the database's conversation MAIN, read from there only
    assert out.getvalue().startswith("cursor: 4 sessions (4 new), 14 messages imported")
    with SessionStore(target) as store:
        assert [m.role for m in store.get_messages(MAIN)][:2] == ["user", "assistant"]
        assert len(store.get_messages(MAIN)) == 6
        assert store.get_session(SUB).parent_session_id == MAIN  # type: ignore[union-attr]


def test_a_vscdb_without_conversations_in_a_directory_is_reported(tmp_path: Path) -> None:
    folder = tmp_path / "workspaceStorage" / "abc123"
    folder.mkdir(parents=True)
    sqlite3.connect(folder / "state.vscdb").executescript(
        "CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);"
    ).connection.close()
    report = import_cursor(SessionStore(":memory:"), tmp_path)
    assert report.skipped == {"not a Cursor database": 1}


def test_a_home_given_is_searched_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # import auto --home DIR looks below DIR only: the user's own $XDG_CONFIG_HOME is not DIR's
    from langchain_session_recall.importers.cursor import default_cursor_paths

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "mine"))
    given = tmp_path / "other-home"
    assert all(p.is_relative_to(given) for p in default_cursor_paths(given))
    assert any(p.is_relative_to(tmp_path / "mine") for p in default_cursor_paths())
