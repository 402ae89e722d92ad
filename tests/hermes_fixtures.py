"""Build realistic Hermes-format ``state.db`` files for tests (stdlib only).

``build_hermes_db(path, layout)`` writes the demo sessions (plus a few Hermes-only cases) into a
database shaped like the Hermes agent's ``~/.hermes/state.db``, following
``/work/shared/reference/hermes-state-db.md``:

* Tables ``sessions`` and ``messages`` with Hermes' column names. The newer columns are added with
  ``ALTER TABLE`` as Hermes' migrations do (sessions: ``last_activity_at``, ``archived``,
  ``hidden``; messages: ``reasoning``, ``active``, ``compacted``, ``display_kind``).
  ``older=True`` skips those migrations, giving a file a reader must detect with
  ``PRAGMA table_info`` (see ``NEWER_COLUMNS``).
* Message ``content`` is plain text, or ``"\\x00json:"`` followed by a JSON list of content parts.
* ``active``/``compacted``: ``1/0`` live; ``0/1`` archived by context compaction (searchable);
  ``0/0`` rewound (must stay hidden). ``display_kind='hidden'`` marks model-only scaffolding.
* Default ``unicode61`` tokenizer everywhere (no porter stemming), as Hermes uses.

The three FTS layouts (the FTS index covers every row, hidden ones included, so readers must filter
with ``active``/``compacted``/``display_kind`` themselves, as Hermes does):

1. Original: ``fts5(content, content=messages, content_rowid=id)`` kept in sync by
   insert/delete/update triggers.
2. Inline (Hermes schema v11-v22): ``fts5(content)`` whose single column is fed
   ``content || ' ' || tool_name || ' ' || tool_calls``; rowid = message id.
3. External content over a view (v23+): view ``messages_fts_src(id, content, tool_name,
   tool_calls)`` where tool rows' content is cut to 8,192 characters, and
   ``fts5(content, tool_name, tool_calls, content='messages_fts_src', content_rowid='id')``.
   Text past that cut in a tool result is not searchable.

``trigram=True`` adds the optional ``messages_fts_trigram`` table (``tokenize='trigram'``). The
``cjk_unicode61`` table is never created: it needs a C extension.

The ``schema_version`` values written (10, 22, 23) are representative of each layout's range, not
exact Hermes releases.

Example:
    >>> import tempfile, sqlite3, os
    >>> path = os.path.join(tempfile.mkdtemp(), "state.db")
    >>> build_hermes_db(path, 3)
    >>> conn = sqlite3.connect(path)
    >>> sql = "SELECT count(*) > 0 FROM messages_fts WHERE messages_fts MATCH 'nginx'"
    >>> conn.execute(sql).fetchone()
    (1,)
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

DEMO_JSON = (
    Path(__file__).resolve().parents[1] / "langchain_session_recall" / "data" / "demo_sessions.json"
)

TOOL_CONTENT_FTS_LIMIT = 8192
"""Layout 3 indexes only this many characters of a tool row's content."""

NEWER_COLUMNS: dict[str, tuple[str, ...]] = {
    "sessions": ("last_activity_at", "archived", "hidden"),
    "messages": ("reasoning", "active", "compacted", "display_kind"),
}
"""Columns added by later Hermes migrations; absent when ``older=True``."""

SCHEMA_VERSION = {1: 10, 2: 22, 3: 23}

MARKERS: dict[str, str] = {
    "rewound": "pulsar",
    "compacted": "jetstream",
    "hidden": "nudge",
    "json_parts": "quorum",
    "beyond_8192": "watermark",
}
"""One word per Hermes-only case, found in exactly one message of ``HERMES_EXTRA_SESSIONS``.

``rewound`` (active=0, compacted=0) must never be returned; ``compacted`` (active=0, compacted=1)
must be; ``hidden`` (display_kind='hidden') must not be; ``json_parts`` sits inside a
``"\\x00json:"`` content-parts message; ``beyond_8192`` is past the 8,192-character cut of a tool
result, so layout 3 cannot find it while layouts 1 and 2 can.
"""

EXTRA_SESSION_ID = "20261124_181502_e5c0a1"

_LONG_LOG = "".join(
    f"2026-11-24 18:{16 + i // 60:02d}:{i % 60:02d}.{i * 37 % 1000:03d} [info] <0.{700 + i}.0> "
    f"accepting AMQP connection <0.{900 + i}.0> (10.0.3.{i % 250}:5{i:04d} -> 10.0.3.7:5672)\n"
    for i in range(110)
)
assert len(_LONG_LOG) > TOOL_CONTENT_FTS_LIMIT

HERMES_EXTRA_SESSIONS: list[dict[str, Any]] = [
    {
        "id": EXTRA_SESSION_ID,
        "source": "cli",
        "model": "anthropic/claude-sonnet-4.5",
        "title": "Message broker for order events",
        "user_id": "alice",
        "parent_session_id": None,
        "started_at": 1795544102.0,
        "ended_at": 1795545101.0,
        "end_reason": "idle",
        "messages": [
            {
                "role": "user",
                "content": "We need a broker for order events, about 200 events/s. Is NATS "
                "JetStream a good fit?",
                "timestamp": 1795544110.0,
                "active": 0,
                "compacted": 1,
            },
            {
                "role": "assistant",
                "content": "JetStream gives persistent streams with at-least-once delivery and is "
                "a single Go binary; consumer acks and replay by sequence are built in.",
                "timestamp": 1795544125.0,
                "active": 0,
                "compacted": 1,
            },
            {
                "role": "user",
                "content": "[CONTEXT COMPACTION] Earlier turns were compacted. Summary: comparing "
                "message brokers for order events (~200 events/s, 3 nodes). Open question: "
                "RabbitMQ or Kafka.",
                "timestamp": 1795544400.0,
            },
            {
                "role": "user",
                "content": "[memory nudge] Consider saving the user's preferred broker to memory.",
                "timestamp": 1795544401.0,
                "display_kind": "hidden",
            },
            {
                "role": "user",
                "content": "\x00json:"
                + json.dumps(
                    [
                        {"type": "text", "text": "RabbitMQ or Kafka for this load?"},
                        {
                            "type": "text",
                            "text": "We want quorum queues replicated across our 3 nodes.",
                        },
                    ]
                ),
                "timestamp": 1795544430.0,
            },
            {
                "role": "assistant",
                "content": "Go with Apache Pulsar and tiered storage to S3.",
                "timestamp": 1795544441.0,
                "active": 0,
                "compacted": 0,
            },
            {
                "role": "assistant",
                "content": "At 200 events/s RabbitMQ is the simpler choice: replicated queues on "
                "3 nodes, per-message acks, and you already run it. Kafka pays off for replay "
                "and high fan-out, which you don't need. Let me check the current broker log.",
                "reasoning": "Load is small; operational familiarity matters more than "
                "throughput. Check the broker is healthy before recommending it.",
                "tool_calls": [
                    {
                        "id": "call_e5c0a1_1",
                        "type": "function",
                        "function": {
                            "name": "terminal",
                            "arguments": json.dumps(
                                {"command": "journalctl -u rabbitmq-server --since today"}
                            ),
                        },
                    }
                ],
                "timestamp": 1795544470.0,
            },
            {
                "role": "tool",
                "content": _LONG_LOG
                + "2026-11-24 18:18:02.114 [warning] <0.512.0> memory resource limit alarm set on "
                "node rabbit@mq-1: vm_memory_high_watermark 0.4 reached, publishers blocked\n",
                "tool_call_id": "call_e5c0a1_1",
                "tool_name": "terminal",
                "timestamp": 1795544473.0,
            },
            {
                "role": "assistant",
                "content": "The broker hit its memory alarm at the end of that log, so publishers "
                "were blocked. Raise the limit to 0.6 in rabbitmq.conf before adding order "
                "events.",
                "timestamp": 1795544490.0,
            },
        ],
    }
]


def load_demo_sessions() -> list[dict[str, Any]]:
    """Return the sessions of the packaged demo dataset (parents listed first)."""
    data = json.loads(DEMO_JSON.read_text(encoding="utf-8"))
    return list(data["sessions"])


def default_sessions() -> list[dict[str, Any]]:
    """Demo sessions plus ``HERMES_EXTRA_SESSIONS`` (rewound/compacted/hidden/json rows)."""
    return load_demo_sessions() + HERMES_EXTRA_SESSIONS


def _base_ddl() -> list[str]:
    return [
        "CREATE TABLE schema_version (version INTEGER NOT NULL)",
        """CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            source TEXT NOT NULL,
            user_id TEXT,
            model TEXT,
            model_config TEXT,
            system_prompt TEXT,
            parent_session_id TEXT,
            started_at REAL NOT NULL,
            ended_at REAL,
            end_reason TEXT,
            message_count INTEGER DEFAULT 0,
            tool_call_count INTEGER DEFAULT 0,
            input_tokens INTEGER DEFAULT 0,
            output_tokens INTEGER DEFAULT 0,
            title TEXT,
            FOREIGN KEY (parent_session_id) REFERENCES sessions(id)
        )""",
        """CREATE TABLE messages (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            role TEXT NOT NULL,
            content TEXT,
            tool_call_id TEXT,
            tool_calls TEXT,
            tool_name TEXT,
            timestamp REAL NOT NULL,
            token_count INTEGER,
            finish_reason TEXT
        )""",
        "CREATE INDEX idx_sessions_source ON sessions(source)",
        "CREATE INDEX idx_sessions_parent ON sessions(parent_session_id)",
        "CREATE INDEX idx_sessions_started ON sessions(started_at DESC)",
        "CREATE INDEX idx_messages_session ON messages(session_id, timestamp)",
    ]


def _newer_columns_ddl() -> list[str]:
    return [
        "ALTER TABLE sessions ADD COLUMN last_activity_at REAL",
        "ALTER TABLE sessions ADD COLUMN archived INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE sessions ADD COLUMN hidden INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE messages ADD COLUMN reasoning TEXT",
        "ALTER TABLE messages ADD COLUMN active INTEGER NOT NULL DEFAULT 1",
        "ALTER TABLE messages ADD COLUMN compacted INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE messages ADD COLUMN display_kind TEXT",
    ]


_TOOL_CUT = "CASE WHEN {p}role = 'tool' THEN substr({p}content, 1, 8192) ELSE {p}content END"


def _fts_ddl(layout: int) -> list[str]:
    if layout == 1:
        return [
            "CREATE VIRTUAL TABLE messages_fts USING fts5(content, content=messages, "
            "content_rowid=id)",
            """CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
                INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
            END""",
            """CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
                INSERT INTO messages_fts(messages_fts, rowid, content)
                VALUES ('delete', old.id, old.content);
            END""",
            """CREATE TRIGGER messages_fts_update AFTER UPDATE ON messages BEGIN
                INSERT INTO messages_fts(messages_fts, rowid, content)
                VALUES ('delete', old.id, old.content);
                INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
            END""",
        ]
    if layout == 2:
        fed = (
            "coalesce({p}content, '') || ' ' || coalesce({p}tool_name, '') || ' ' || "
            "coalesce({p}tool_calls, '')"
        )
        return [
            "CREATE VIRTUAL TABLE messages_fts USING fts5(content)",
            f"""CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
                INSERT INTO messages_fts(rowid, content) VALUES (new.id, {fed.format(p="new.")});
            END""",
            """CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
                DELETE FROM messages_fts WHERE rowid = old.id;
            END""",
            f"""CREATE TRIGGER messages_fts_update AFTER UPDATE ON messages BEGIN
                DELETE FROM messages_fts WHERE rowid = old.id;
                INSERT INTO messages_fts(rowid, content) VALUES (new.id, {fed.format(p="new.")});
            END""",
        ]
    if layout == 3:
        return [
            f"""CREATE VIEW messages_fts_src AS
                SELECT id, {_TOOL_CUT.format(p="")} AS content, tool_name, tool_calls
                FROM messages""",
            "CREATE VIRTUAL TABLE messages_fts USING fts5(content, tool_name, tool_calls, "
            "content='messages_fts_src', content_rowid='id')",
            f"""CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
                INSERT INTO messages_fts(rowid, content, tool_name, tool_calls)
                VALUES (new.id, {_TOOL_CUT.format(p="new.")}, new.tool_name, new.tool_calls);
            END""",
            f"""CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
                INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_calls)
                VALUES ('delete', old.id, {_TOOL_CUT.format(p="old.")}, old.tool_name,
                        old.tool_calls);
            END""",
            f"""CREATE TRIGGER messages_fts_update AFTER UPDATE ON messages BEGIN
                INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_calls)
                VALUES ('delete', old.id, {_TOOL_CUT.format(p="old.")}, old.tool_name,
                        old.tool_calls);
                INSERT INTO messages_fts(rowid, content, tool_name, tool_calls)
                VALUES (new.id, {_TOOL_CUT.format(p="new.")}, new.tool_name, new.tool_calls);
            END""",
        ]
    raise ValueError(f"layout must be 1, 2 or 3, got {layout!r}")


def _trigram_ddl() -> list[str]:
    return [
        "CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(content, content=messages, "
        "content_rowid=id, tokenize='trigram')",
        """CREATE TRIGGER messages_fts_trigram_insert AFTER INSERT ON messages BEGIN
            INSERT INTO messages_fts_trigram(rowid, content) VALUES (new.id, new.content);
        END""",
        """CREATE TRIGGER messages_fts_trigram_delete AFTER DELETE ON messages BEGIN
            INSERT INTO messages_fts_trigram(messages_fts_trigram, rowid, content)
            VALUES ('delete', old.id, old.content);
        END""",
    ]


def _model_config(session: Mapping[str, Any]) -> str | None:
    if "model_config" in session:
        value = session["model_config"]
        return value if value is None or isinstance(value, str) else json.dumps(value)
    config: dict[str, Any] = {"max_tokens": 8192}
    if session.get("source") == "subagent" and session.get("parent_session_id"):
        config["_delegate_from"] = session["parent_session_id"]
    return json.dumps(config)


def _is_rewound(message: Mapping[str, Any]) -> bool:
    return message.get("active", 1) == 0 and message.get("compacted", 0) == 0


def _insert_session(conn: sqlite3.Connection, s: Mapping[str, Any], *, older: bool) -> None:
    messages = list(s["messages"])
    row: dict[str, Any] = {
        "id": s["id"],
        "source": s["source"],
        "user_id": s.get("user_id"),
        "model": s.get("model"),
        "model_config": _model_config(s),
        "system_prompt": s.get("system_prompt"),
        "parent_session_id": s.get("parent_session_id"),
        "started_at": s["started_at"],
        "ended_at": s.get("ended_at"),
        "end_reason": s.get("end_reason"),
        "message_count": sum(not _is_rewound(m) for m in messages),
        "tool_call_count": sum(len(m.get("tool_calls") or ()) for m in messages),
        "title": s.get("title"),
    }
    if not older:
        row["last_activity_at"] = max((m["timestamp"] for m in messages), default=None)
        row["archived"] = int(s.get("archived", 0))
        row["hidden"] = int(s.get("hidden", 0))
    cols = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    conn.execute(f"INSERT INTO sessions ({cols}) VALUES ({marks})", tuple(row.values()))


def _insert_messages(conn: sqlite3.Connection, s: Mapping[str, Any], *, older: bool) -> None:
    for m in s["messages"]:
        if older and (_is_rewound(m) or m.get("display_kind")):
            # Before these columns existed, rewinds deleted rows and scaffolding was not stored.
            continue
        tool_calls = m.get("tool_calls")
        row: dict[str, Any] = {
            "session_id": s["id"],
            "role": m["role"],
            "content": m.get("content"),
            "tool_call_id": m.get("tool_call_id"),
            "tool_calls": json.dumps(tool_calls) if tool_calls else None,
            "tool_name": m.get("tool_name"),
            "timestamp": m["timestamp"],
            "token_count": max(1, len(m.get("content") or "") // 4),
            "finish_reason": "tool_calls"
            if tool_calls
            else ("stop" if m["role"] == "assistant" else None),
        }
        if not older:
            row["reasoning"] = m.get("reasoning")
            row["active"] = int(m.get("active", 1))
            row["compacted"] = int(m.get("compacted", 0))
            row["display_kind"] = m.get("display_kind")
        cols = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        conn.execute(f"INSERT INTO messages ({cols}) VALUES ({marks})", tuple(row.values()))


def build_hermes_db(
    path: str | os.PathLike[str],
    layout: int,
    *,
    sessions: Iterable[Mapping[str, Any]] | None = None,
    wal: bool = True,
    older: bool = False,
    trigram: bool = False,
) -> None:
    """Write a Hermes-format ``state.db`` at ``path`` (replacing any existing file).

    Args:
        path: Target file.
        layout: FTS layout 1, 2 or 3 (see the module docstring).
        sessions: Session dicts in the demo-JSON format, parents first. Messages may carry the
            Hermes-only keys ``active``, ``compacted``, ``display_kind`` and ``reasoning``;
            sessions may carry ``model_config``, ``archived``, ``hidden``, ``system_prompt``.
            Defaults to ``default_sessions()``.
        wal: Leave the file in WAL journal mode (checkpointed, so no ``-wal`` file remains).
            ``False`` leaves it in DELETE mode.
        older: Omit the columns in ``NEWER_COLUMNS``. Rewound and ``display_kind`` rows are
            dropped, since such files could not record them.
        trigram: Also create the optional ``messages_fts_trigram`` table.

    Example:
        >>> import tempfile, os
        >>> build_hermes_db(os.path.join(tempfile.mkdtemp(), "s.db"), 1, older=True)
    """
    if layout not in SCHEMA_VERSION:
        raise ValueError(f"layout must be 1, 2 or 3, got {layout!r}")
    path = Path(path)
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    chosen: Sequence[Mapping[str, Any]] = default_sessions() if sessions is None else list(sessions)

    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute(f"PRAGMA journal_mode={'WAL' if wal else 'DELETE'}")
        conn.execute("BEGIN")
        for stmt in _base_ddl():
            conn.execute(stmt)
        if not older:
            for stmt in _newer_columns_ddl():
                conn.execute(stmt)
        for stmt in _fts_ddl(layout):
            conn.execute(stmt)
        if trigram:
            for stmt in _trigram_ddl():
                conn.execute(stmt)
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION[layout],))
        for s in chosen:
            _insert_session(conn, s, older=older)
        for s in chosen:
            _insert_messages(conn, s, older=older)
        conn.execute("COMMIT")
        conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('optimize')")
        if wal:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
