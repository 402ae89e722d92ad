"""OpenCode's opencode.db: sessions, sub-agent lineage, steps, tool parts, bad rows, read-only
access, re-runs; on both backends. The database is built here from SQL following OpenCode's
own table definitions (``packages/opencode/src/session/session.sql.ts``)."""

from __future__ import annotations

import hashlib
import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from store_targets import StoreFactory

from langchain_session_recall.cli import EXIT_PARTIAL, main
from langchain_session_recall.importers import IMPORTERS, import_opencode

SCHEMA = """
PRAGMA journal_mode = WAL;
CREATE TABLE `project` (`id` text PRIMARY KEY, `worktree` text NOT NULL, `vcs` text,
  `name` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL);
CREATE TABLE `session` (`id` text PRIMARY KEY, `project_id` text NOT NULL
  REFERENCES `project`(`id`) ON DELETE CASCADE, `workspace_id` text, `parent_id` text,
  `slug` text NOT NULL, `directory` text NOT NULL, `path` text, `title` text NOT NULL,
  `version` text NOT NULL, `share_url` text, `summary_additions` integer,
  `summary_deletions` integer, `summary_files` integer, `summary_diffs` text,
  `revert` text, `permission` text, `agent` text, `model` text,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL,
  `time_compacting` integer, `time_archived` integer);
CREATE TABLE `message` (`id` text PRIMARY KEY, `session_id` text NOT NULL
  REFERENCES `session`(`id`) ON DELETE CASCADE, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `data` text NOT NULL);
CREATE TABLE `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL
  REFERENCES `message`(`id`) ON DELETE CASCADE, `session_id` text NOT NULL,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL);
CREATE INDEX `session_parent_idx` ON `session` (`parent_id`);
CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);
CREATE INDEX `part_message_id_id_idx` ON `part` (`message_id`,`id`);
CREATE INDEX `part_session_idx` ON `part` (`session_id`);
"""
T0 = 1_762_164_000_000  # 2025-11-03T10:00:00Z in ms
PARENT, CHILD, EMPTY = (
    "ses_4f1a2b3c4d5eAbCdEfGh",
    "ses_4f1a2b9e8d7cHiJkLmNo",
    "ses_4f1b00000000PqRsTuVw",
)


def _user(sid: str, ms: int) -> dict[str, Any]:
    return {
        "role": "user",
        "time": {"created": ms},
        "agent": "build",
        "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"},
    }


def _assistant(sid: str, ms: int, parent: str, model: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "time": {"created": ms, "completed": ms + 9000},
        "parentID": parent,
        "modelID": model,
        "providerID": "anthropic",
        "mode": "build",
        "agent": "build",
        "path": {"cwd": "/home/dev/shop-api", "root": "/home/dev/shop-api"},
        "cost": 0.01,
        "tokens": {"input": 900, "output": 80, "reasoning": 0, "cache": {"read": 0, "write": 0}},
        "finish": "stop",
    }


def _tool(call: str, tool: str, args: dict[str, Any], ms: int, **state: Any) -> dict[str, Any]:
    done = {"status": "completed", "title": tool, "metadata": {}} if "output" in state else {}
    if "error" in state:
        done = {"status": "error"}
    return {
        "type": "tool",
        "callID": call,
        "tool": tool,
        "state": {"input": args, "time": {"start": ms, "end": ms + 500}, **done, **state},
    }


def _text(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "text", "text": text, **extra}


STEP, END = (
    {"type": "step-start"},
    {
        "type": "step-finish",
        "reason": "tool-calls",
        "cost": 0,
        "tokens": {"input": 1, "output": 1, "reasoning": 0, "cache": {"read": 0, "write": 0}},
    },
)
READ_OUT = "export const LOCK_TTL_MS = 500;\nexport async function acquireCartLock() {}"
MESSAGES: list[tuple[str, str, int, Any, list[Any]]] = [
    (
        "msg_a001",
        PARENT,
        T0 + 5000,
        _user(PARENT, T0 + 5000),
        [
            _text("The checkout test is flaky: the cart lock times out under load."),
            _text("Called the Read tool with the following input: ...", synthetic=True),
        ],
    ),
    (
        "msg_a002",
        PARENT,
        T0 + 6000,
        _assistant(PARENT, T0 + 6000, "msg_a001", "claude-sonnet-4-5"),
        [
            STEP,
            {"type": "reasoning", "text": "Look at the TTL first", "time": {"start": T0}},
            _text("I'll read the cart lock helper first."),
            _tool("toolu_read1", "read", {"filePath": "src/cart/lock.ts"}, T0, output=READ_OUT),
            END,
            STEP,
            _text("The lock TTL is 500 ms, shorter than the slowest checkout step."),
            _tool(
                "toolu_task1",
                "task",
                {"description": "run suite", "prompt": "run the checkout suite 50 times"},
                T0,
                output="50/50 passed, cart lock held at most 610 ms",
            ),
            _tool(
                "toolu_bash1",
                "bash",
                {"command": "redis-cli ping"},
                T0,
                error="redis-cli: not found",
            ),
            END,
        ],
    ),
    ("msg_a003", PARENT, T0 + 7000, "{not json", []),
    ("msg_a004", PARENT, T0 + 90_000, _user(PARENT, T0 + 90_000), [_text("Thanks, ship it.")]),
    (
        "msg_b001",
        CHILD,
        T0 + 6500,
        _user(CHILD, T0 + 6500),
        [_text("run the checkout suite 50 times")],
    ),
    (
        "msg_b002",
        CHILD,
        T0 + 6600,
        _assistant(CHILD, T0 + 6600, "msg_b001", "claude-haiku-4-5"),
        [
            STEP,
            _text("Running the suite."),
            _tool(
                "toolu_bash2",
                "bash",
                {"command": "npm test -- checkout --repeat 50"},
                T0,
                output="run 50: cart lock held 610ms, 50 passed",
            ),
            END,
            STEP,
            _text("50/50 passed, cart lock held at most 610 ms"),
            "[1, 2]",
        ],
    ),
]


def build_opencode_db(path: Path) -> Path:
    """An opencode.db with a session, its sub-agent, an empty session and two bad rows."""
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    conn.execute(
        "INSERT INTO project VALUES ('prj_1', '/home/dev/shop-api', 'git', NULL, ?, ?)", (T0, T0)
    )
    sessions = [
        (PARENT, None, "Fix flaky checkout test", T0),
        (CHILD, PARENT, "Run checkout suite (@general subagent)", T0 + 6400),
        (EMPTY, None, "New session - 2026-11-04T09:30:00.000Z", T0 + 86_400_000),
    ]
    for sid, parent, title, ms in sessions:
        conn.execute(
            "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version,"
            " time_created, time_updated) VALUES (?, 'prj_1', ?, 'slug', '/home/dev/shop-api',"
            " ?, '1.0.0', ?, ?)",
            (sid, parent, title, ms, ms),
        )
    for mid, sid, ms, data, parts in MESSAGES:
        raw = data if isinstance(data, str) else json.dumps(data)
        conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, ms, ms, raw))
        for n, part in enumerate(parts):
            text = part if isinstance(part, str) else json.dumps(part)
            conn.execute(
                "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                (f"prt_{mid[4:]}_{n:02d}", mid, sid, ms, ms, text),
            )
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    for leftover in (Path(f"{path}-wal"), Path(f"{path}-shm")):
        leftover.unlink(missing_ok=True)
    return path


@pytest.fixture
def opencode_db(tmp_path: Path) -> Path:
    folder = tmp_path / "share" / "opencode"
    folder.mkdir(parents=True)
    return build_opencode_db(folder / "opencode.db")


def test_sessions_sub_agents_steps_and_tool_parts(
    store_factory: StoreFactory, opencode_db: Path
) -> None:
    store = store_factory.open()
    before = hashlib.sha256(opencode_db.read_bytes()).hexdigest()
    report = import_opencode(store, opencode_db)
    assert hashlib.sha256(opencode_db.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in opencode_db.parent.iterdir()) == [
        "opencode.db"
    ]  # nothing beside it
    assert (report.sessions, report.new_sessions, report.messages) == (2, 2, 11)
    assert report.skipped == {
        "message data is not valid JSON": 1,
        "part data is not a JSON object": 1,
    }
    assert report.ignored["empty session"] == 1
    assert report.ignored["synthetic text part"] == 1
    assert store.get_session(EMPTY) is None

    parent = store.get_session(PARENT)
    assert parent is not None
    assert (parent.source, parent.title, parent.model) == (
        "opencode",
        "Fix flaky checkout test",
        "claude-sonnet-4-5",
    )
    assert parent.started_at == T0 / 1000
    messages = store.get_messages(PARENT)
    assert [m.role for m in messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "tool",
        "user",
    ]
    assert "Called the Read tool" not in messages[0].content
    assert messages[1].tool_call_names == ["read"]
    assert (messages[2].tool_name, messages[2].tool_call_id, messages[2].content) == (
        "read",
        "toolu_read1",
        READ_OUT,
    )
    assert messages[3].tool_call_names == ["task", "bash"]
    assert messages[5].content == "redis-cli: not found"  # an error is the call's outcome

    child = store.get_session(CHILD)
    assert child is not None
    assert (child.parent_session_id, child.model) == (PARENT, "claude-haiku-4-5")
    assert [m.role for m in store.get_messages(CHILD)] == ["user", "assistant", "tool", "assistant"]


def test_reimport_adds_only_new_rows(store_factory: StoreFactory, opencode_db: Path) -> None:
    store = store_factory.open()
    first = import_opencode(store, opencode_db)
    again = import_opencode(store, opencode_db)
    assert (again.messages, again.already_imported, again.new_sessions) == (0, first.messages, 0)
    conn = sqlite3.connect(opencode_db)
    ms = T0 + 120_000
    conn.execute(
        "INSERT INTO message VALUES ('msg_a005', ?, ?, ?, ?)",
        (PARENT, ms, ms, json.dumps(_user(PARENT, ms))),
    )
    conn.execute(
        "INSERT INTO part VALUES ('prt_a005_00', 'msg_a005', ?, ?, ?, ?)",
        (PARENT, ms, ms, json.dumps(_text("Open the PR."))),
    )
    conn.commit()
    conn.close()  # the -wal is gone again: the file is complete
    assert import_opencode(store, opencode_db).messages == 1
    assert store.get_messages(PARENT)[-1].content == "Open the PR."


def test_a_file_being_written_is_read_through_its_wal(tmp_path: Path) -> None:
    from langchain_session_recall import SessionStore

    db = build_opencode_db(tmp_path / "opencode.db")
    writer = sqlite3.connect(db)  # an OpenCode still running: its last turn only in the -wal
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    ms = T0 + 120_000
    writer.execute(
        "INSERT INTO message VALUES ('msg_a005', ?, ?, ?, ?)",
        (PARENT, ms, ms, json.dumps(_user(PARENT, ms))),
    )
    writer.execute(
        "INSERT INTO part VALUES ('prt_a005_00', 'msg_a005', ?, ?, ?, ?)",
        (PARENT, ms, ms, json.dumps(_text("Open the PR."))),
    )
    writer.commit()
    try:
        assert Path(f"{db}-wal").exists()
        store = SessionStore(":memory:")
        import_opencode(store, db)
        assert store.get_messages(PARENT)[-1].content == "Open the PR."
    finally:
        writer.close()


def test_cli_reads_opencode_db_from_the_environment(
    tmp_path: Path, opencode_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert IMPORTERS["opencode"] is import_opencode
    monkeypatch.delenv("OPENCODE_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(opencode_db.parent.parent))
    out = io.StringIO()
    assert main(["import", "opencode", "--db", str(tmp_path / "r.db")], out=out) == EXIT_PARTIAL
    assert out.getvalue().startswith("opencode: 2 sessions (2 new), 11 messages imported")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "nowhere"))
    monkeypatch.setenv("OPENCODE_DB", str(opencode_db))
    out = io.StringIO()
    assert main(["import", "opencode", "--db", str(tmp_path / "r.db")], out=out) == EXIT_PARTIAL
    assert "11 already present" in out.getvalue()


def test_not_an_opencode_database(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    out = io.StringIO()
    assert main(["import", "opencode", str(other), "--db", str(tmp_path / "r.db")], out=out) == 2
    assert not (tmp_path / "r.db").exists()


def test_sessions_keep_their_directory(store_factory: StoreFactory, opencode_db: Path) -> None:
    store = store_factory.open()
    import_opencode(store, opencode_db)
    for sid in (PARENT, CHILD):
        session = store.get_session(sid)
        assert session is not None
        assert (session.project, session.agent) == ("/home/dev/shop-api", "opencode")
