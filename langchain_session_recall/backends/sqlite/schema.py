"""Schema, migrations and layout detection for the SQLite store.

Our tables keep the Hermes agent's names and meanings (``sessions``, ``messages``,
``messages_fts``), so a Hermes ``state.db`` can be searched read-only with the same code. All
index maintenance is plain-SQL triggers: any SQLite client can keep writing the file. The one
exception is the CJK bigram index, which Python fills on insert; rows written by other clients
are picked up by :meth:`SessionStore.reindex_cjk`.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass

from langchain_session_recall.core.headers import session_header
from langchain_session_recall.errors import NotASessionDatabaseError

__all__ = [
    "FTS_DEFER",
    "FTS_INDEX_SINCE",
    "FTS_INSERT_TRIGGER_NAME",
    "FTS_RESUME",
    "SCHEMA_VERSION",
    "Layout",
    "create_or_migrate",
    "detect_layout",
    "foreign_file_message",
    "missing_tables_message",
    "schema_objects",
    "setup_needed",
]

SCHEMA_VERSION = 6

# What the main index sees of a message. Tool output is capped (the transcript shows 500
# characters of it anyway, and a 1 MB log would otherwise dominate the index). Of tool calls,
# the index holds the text a reader sees: each call's name and its arguments' string values
# (nested objects and lists flattened; JSON-encoded arguments decoded), each value capped at
# 4,096 characters; never the JSON's keys and escapes ("\nrsync" is the word "rsync"). A value
# that is not JSON (another writer's) is indexed as it is. The delete/update triggers must
# repeat exactly what was inserted, hence one definition used for the view and for every
# trigger. FTS5 cannot read a view that calls json_each (its 'rebuild' and 'integrity-check'
# fail), so the view reads that text from messages_tool_text, which triggers keep equal to it.
_FTS_CONTENT = "CASE WHEN {r}.role = 'tool' THEN substr({r}.content, 1, 4096) ELSE {r}.content END"
_CALLS = (
    "json_each(CASE WHEN json_valid({r}.tool_calls) AND json_type({r}.tool_calls) = 'array' "
    "THEN {r}.tool_calls ELSE '[]' END) AS c"
)
_ARGS = (
    "coalesce(json_extract(c.value, '$.function.arguments'), json_extract(c.value, '$.args'), "
    "json_extract(c.value, '$.arguments'))"
)
_FTS_TOOL_CALLS = (
    "CASE WHEN {r}.tool_calls IS NULL THEN NULL "
    "WHEN NOT json_valid({r}.tool_calls) THEN substr({r}.tool_calls, 1, 4096) ELSE "
    "coalesce((SELECT group_concat(coalesce(json_extract(c.value, '$.function.name'), "
    "json_extract(c.value, '$.name'), ''), ' ') FROM " + _CALLS + " WHERE c.type = 'object'), '')"
    " || ' ' || coalesce((SELECT group_concat(substr(a.value, 1, 4096), ' ') FROM " + _CALLS + ", "
    "json_tree(CASE WHEN c.type <> 'object' OR " + _ARGS + " IS NULL THEN 'null' "
    "WHEN json_valid(" + _ARGS + ") THEN " + _ARGS + " ELSE json_quote(" + _ARGS + ") END) AS a "
    "WHERE a.type = 'text'), '') END"
)


def _fts_values(row: str) -> str:
    return (
        f"{row}.id, {_FTS_CONTENT.format(r=row)}, {row}.tool_name, {_FTS_TOOL_CALLS.format(r=row)}"
    )


_TOOL_TEXT_FILL = (
    "INSERT OR REPLACE INTO messages_tool_text (message_id, text) "
    f"SELECT m.id, {_FTS_TOOL_CALLS.format(r='m')} FROM messages m WHERE m.tool_calls IS NOT NULL"
)


# Tokenizer: porter stemming over unicode61 with diacritics folded. Recall questions rarely use
# the exact inflection of the words in the transcript ("painted" vs "painting", "deploy" vs
# "deployment"); stemming lets those match at no query-time cost. CJK is handled by the
# separate bigram index below, because unicode61 keeps a CJK run as one token.
TOKENIZE = "porter unicode61 remove_diacritics 2"

# A bulk load (SessionStore.transaction) leaves indexing to its end: inside its own
# transaction it writes the meta row FTS_DEFERRED_KEY, which the insert trigger's WHEN clause
# sees (no other connection does: the row is uncommitted, and gone again at the end or on a
# rollback), then indexes its messages in one statement (FTS_INDEX_SINCE). A row, not a
# dropped and re-created trigger: any DDL changes the schema of the file, and every other
# connection then re-reads it; one that does so while it connects an FTS5 table fails with
# "vtable constructor failed" (SQLITE_SCHEMA), so a search or write would fail under a bulk load.
FTS_INSERT_TRIGGER_NAME = "messages_fts_ai"
_FTS_DEFERRED_KEY = "fts_deferred_after"
_FTS_INSERT_TRIGGER = (
    f"CREATE TRIGGER IF NOT EXISTS {FTS_INSERT_TRIGGER_NAME} AFTER INSERT ON messages\n"
    "WHEN NOT EXISTS (SELECT 1 FROM session_recall_meta "
    f"WHERE key = '{_FTS_DEFERRED_KEY}') BEGIN\n"
    "    INSERT INTO messages_fts(rowid, content, tool_name, tool_calls)\n"
    f"    VALUES ({_fts_values('new')});\n"
    "END"
)
FTS_DEFER = (
    f"INSERT OR REPLACE INTO session_recall_meta(key, value) VALUES ('{_FTS_DEFERRED_KEY}', ?)"
)
"""Stop indexing inserted messages (bound: the highest message id indexed so far)."""
FTS_RESUME = f"DELETE FROM session_recall_meta WHERE key = '{_FTS_DEFERRED_KEY}'"
"""Index inserted messages again (after :data:`FTS_INDEX_SINCE`)."""
FTS_INDEX_SINCE = (
    "INSERT INTO messages_fts(rowid, content, tool_name, tool_calls) "
    "SELECT id, content, tool_name, tool_calls FROM messages_fts_src WHERE id > ?"
)
"""What the insert trigger does, for every message above an id, in one statement."""

_DDL = f"""
CREATE TABLE IF NOT EXISTS session_recall_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    user_id TEXT,
    model TEXT,
    title TEXT,
    parent_session_id TEXT REFERENCES sessions(id),
    started_at REAL NOT NULL,
    ended_at REAL,
    end_reason TEXT,
    message_count INTEGER NOT NULL DEFAULT 0,
    cwd TEXT,
    git_branch TEXT,
    agent TEXT
);
CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX IF NOT EXISTS idx_sessions_started ON sessions(started_at DESC);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content TEXT,
    tool_call_id TEXT,
    tool_calls TEXT,
    tool_name TEXT,
    timestamp REAL NOT NULL,
    seq INTEGER
);
CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id, timestamp, id);

-- The indexed text of each message's tool calls (see _FTS_TOOL_CALLS), for the view below.
CREATE TABLE IF NOT EXISTS messages_tool_text (
    message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
    text TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS messages_tool_text_ai AFTER INSERT ON messages
WHEN new.tool_calls IS NOT NULL BEGIN
    INSERT OR REPLACE INTO messages_tool_text (message_id, text)
    VALUES (new.id, {_FTS_TOOL_CALLS.format(r="new")});
END;
CREATE TRIGGER IF NOT EXISTS messages_tool_text_au AFTER UPDATE OF tool_calls ON messages BEGIN
    DELETE FROM messages_tool_text WHERE message_id = old.id;
    INSERT INTO messages_tool_text (message_id, text)
    SELECT new.id, {_FTS_TOOL_CALLS.format(r="new")} WHERE new.tool_calls IS NOT NULL;
END;
CREATE TRIGGER IF NOT EXISTS messages_tool_text_ad AFTER DELETE ON messages BEGIN
    DELETE FROM messages_tool_text WHERE message_id = old.id;
END;
CREATE VIEW IF NOT EXISTS messages_fts_src(id, content, tool_name, tool_calls) AS
    SELECT m.id, {_FTS_CONTENT.format(r="m")}, m.tool_name, t.text
    FROM messages m LEFT JOIN messages_tool_text t ON t.message_id = m.id;
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
    content, tool_name, tool_calls,
    content='messages_fts_src', content_rowid='id',
    tokenize='{TOKENIZE}'
);
{_FTS_INSERT_TRIGGER};
CREATE TRIGGER IF NOT EXISTS messages_fts_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_calls)
    VALUES ('delete', {_fts_values("old")});
    DELETE FROM messages_cjk WHERE message_id = old.id;
END;
CREATE TRIGGER IF NOT EXISTS messages_fts_au AFTER UPDATE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_calls)
    VALUES ('delete', {_fts_values("old")});
    INSERT INTO messages_fts(rowid, content, tool_name, tool_calls)
    VALUES ({_fts_values("new")});
    -- the bigram copy is stale now; reindex_cjk() rebuilds it
    DELETE FROM messages_cjk WHERE message_id = old.id;
END;

-- CJK bigram copy of messages that contain CJK text (filled by Python; see cjk.py).
CREATE TABLE IF NOT EXISTS messages_cjk (
    message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
    text TEXT NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS messages_cjk_fts USING fts5(
    text, content='messages_cjk', content_rowid='message_id', tokenize='{TOKENIZE}'
);
CREATE TRIGGER IF NOT EXISTS messages_cjk_ai AFTER INSERT ON messages_cjk BEGIN
    INSERT INTO messages_cjk_fts(rowid, text) VALUES (new.message_id, new.text);
END;
CREATE TRIGGER IF NOT EXISTS messages_cjk_ad AFTER DELETE ON messages_cjk BEGIN
    INSERT INTO messages_cjk_fts(messages_cjk_fts, rowid, text)
    VALUES ('delete', old.message_id, old.text);
END;
CREATE TRIGGER IF NOT EXISTS messages_cjk_au AFTER UPDATE ON messages_cjk BEGIN
    INSERT INTO messages_cjk_fts(messages_cjk_fts, rowid, text)
    VALUES ('delete', old.message_id, old.text);
    INSERT INTO messages_cjk_fts(rowid, text) VALUES (new.message_id, new.text);
END;

-- Each session's header (its title and start date in words: "Monday 8 May 2023"), written by
-- the library when a session is added or changed, so a question that names a date or a title
-- reaches it (ranking counts a header match in every passage window of the session).
CREATE TABLE IF NOT EXISTS session_headers (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL UNIQUE REFERENCES sessions(id),
    header TEXT NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS session_headers_fts USING fts5(
    header, content='session_headers', content_rowid='id', tokenize='{TOKENIZE}'
);
CREATE TRIGGER IF NOT EXISTS session_headers_ai AFTER INSERT ON session_headers BEGIN
    INSERT INTO session_headers_fts(rowid, header) VALUES (new.id, new.header);
END;
CREATE TRIGGER IF NOT EXISTS session_headers_ad AFTER DELETE ON session_headers BEGIN
    INSERT INTO session_headers_fts(session_headers_fts, rowid, header)
    VALUES ('delete', old.id, old.header);
END;
CREATE TRIGGER IF NOT EXISTS session_headers_au AFTER UPDATE ON session_headers BEGIN
    INSERT INTO session_headers_fts(session_headers_fts, rowid, header)
    VALUES ('delete', old.id, old.header);
    INSERT INTO session_headers_fts(rowid, header) VALUES (new.id, new.header);
END;

-- What importers have copied in: one row per imported message, keyed by where it came from,
-- so re-running an import adds only what is new (see langchain_session_recall/importers).
CREATE TABLE IF NOT EXISTS import_ledger (
    source_kind TEXT NOT NULL,
    external_key TEXT NOT NULL,
    session_id TEXT NOT NULL,
    message_id INTEGER,
    imported_at REAL NOT NULL,
    PRIMARY KEY (source_kind, external_key)
);
CREATE INDEX IF NOT EXISTS idx_import_ledger_session ON import_ledger(source_kind, session_id);

-- The same for a batch of keys <prefix>:<number> with consecutive message ids, in one row: the
-- first key's number, the gaps to the next ones, the first key's message (the n-th key's is
-- message_id + n; NULL once forgotten). See backends/common/ledger_runs.py.
CREATE TABLE IF NOT EXISTS import_runs (
    source_kind TEXT NOT NULL,
    key_prefix TEXT NOT NULL,
    first_number INTEGER NOT NULL,
    gaps TEXT NOT NULL,
    key_count INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    message_id INTEGER,
    imported_at REAL NOT NULL,
    PRIMARY KEY (source_kind, key_prefix, first_number)
);
CREATE INDEX IF NOT EXISTS idx_import_runs_session ON import_runs(source_kind, session_id);

-- Recaps cached by the summarizer, keyed by (root, last message id, query, model, prompt),
-- with the quality gate's verdict ('summarized' or 'rejected').
CREATE TABLE IF NOT EXISTS summary_cache (
    cache_key TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    summary TEXT NOT NULL,
    model TEXT,
    created_at REAL NOT NULL,
    status TEXT NOT NULL DEFAULT 'summarized',
    reasons TEXT NOT NULL DEFAULT ''
);
"""

SCHEMA_OBJECTS = frozenset(
    re.findall(r"CREATE (?:VIRTUAL )?(?:TABLE|INDEX|VIEW|TRIGGER) IF NOT EXISTS (\w+)", _DDL)
)
"""Names of the tables, indexes, views and triggers our schema creates."""
_META = "session_recall_meta"

# Migrations from version N to N+1, applied in order inside the opening transaction (after the
# CREATE ... IF NOT EXISTS script, which adds the tables a version introduced, and before it
# runs again, which makes anew the views and triggers a migration dropped).
_MIGRATIONS: dict[int, str] = {
    # version 2: the cache's verdicts, message positions (rows of version 1 keep NULL: ranking
    # then orders them by id), session headers (filled by the store after migrating)
    1: "ALTER TABLE summary_cache ADD COLUMN status TEXT NOT NULL DEFAULT 'summarized';\n"
    "ALTER TABLE summary_cache ADD COLUMN reasons TEXT NOT NULL DEFAULT '';\n"
    "ALTER TABLE messages ADD COLUMN seq INTEGER;",
    # version 3: tool calls indexed as their names and argument values, not their JSON text:
    # the view and triggers are made anew and the index rebuilt from the messages
    2: "DROP TRIGGER IF EXISTS messages_fts_ai;\n"
    "DROP TRIGGER IF EXISTS messages_fts_ad;\n"
    "DROP TRIGGER IF EXISTS messages_fts_au;\n"
    "DROP VIEW IF EXISTS messages_fts_src;",
    # version 4: the insert trigger skips messages while a bulk load defers their indexing
    # (see _FTS_INSERT_TRIGGER), so bulk loads no longer drop and re-create it
    3: f"DROP TRIGGER IF EXISTS {FTS_INSERT_TRIGGER_NAME};",
    # version 5: where each session happened (its project directory, under Hermes's column
    # name, its git branch and the agent that wrote it); older sessions keep NULL
    4: "ALTER TABLE sessions ADD COLUMN cwd TEXT;\n"
    "ALTER TABLE sessions ADD COLUMN git_branch TEXT;\n"
    "ALTER TABLE sessions ADD COLUMN agent TEXT;",
    # version 6: runs of import keys (import_runs, made by the script above); the ledger rows
    # of older imports stay in import_ledger, where they are still read
    5: "",
}
_REINDEXED_IN = 3
"""The version whose migration rebuilds the message index (its view and triggers changed)."""


@dataclass(frozen=True, slots=True)
class Layout:
    """What a database offers, detected from its schema (never assumed).

    ``fts_columns`` is the number of columns of ``messages_fts`` (1 for Hermes' older layouts,
    3 for ours and Hermes v23+); ``visibility`` is the SQL condition (on alias ``m``) that hides
    rewound and model-only messages in Hermes files; ``own`` says the file carries our schema
    version.
    """

    own: bool
    version: int | None
    fts_columns: int
    has_cjk: bool
    has_summary_cache: bool
    has_headers: bool
    has_import_runs: bool
    session_columns: frozenset[str]
    message_columns: frozenset[str]
    visibility: str


def _columns(conn: sqlite3.Connection, table: str) -> frozenset[str]:
    return frozenset(row[1] for row in conn.execute(f"PRAGMA table_info({table})"))


def _tables(conn: sqlite3.Connection) -> frozenset[str]:
    """The file's tables (virtual ones included). Never its views: where the layout expects a
    table, a view would run whatever query another program put in it (one that never ends,
    say) on every read."""
    return frozenset(
        row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    )


def missing_tables_message(conn: sqlite3.Connection, name: str) -> str:
    """Why a file without ``sessions``/``messages`` tables is refused (naming any of the two
    that is there as a view)."""
    views = [
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'view' "
            "AND name IN ('sessions', 'messages') ORDER BY name"
        )
    ]
    if views:
        listed = ", ".join(f"'{v}' is a view, not a table" for v in views)
        return (
            f"{name} is not a session database: {listed} (a view runs whatever query it "
            "holds on every read, so only tables are read)"
        )
    return f"{name} is not a session database: it has no 'sessions' and 'messages' tables"


def schema_objects(conn: sqlite3.Connection) -> frozenset[str]:
    """Names of every table, index, view and trigger in the file (SQLite's own left out)."""
    return frozenset(
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
        )
    )


def foreign_file_message(name: str, objects: frozenset[str]) -> str:
    """Why a file holding another program's tables is refused (and left as it was).

    Example:
        >>> foreign_file_message("app.db", frozenset({"users", "orders"}))  # doctest: +ELLIPSIS
        "app.db is not a session database: it holds another program's tables (orders, users)..."
    """
    shown = sorted(objects)[:5]
    listing = ", ".join(shown) + (", ..." if len(objects) > len(shown) else "")
    return (
        f"{name} is not a session database: it holds another program's tables ({listing}) "
        "and none of ours, so it was left as it is; give a new file (or an existing session "
        "store) instead"
    )


def _schema_version(conn: sqlite3.Connection) -> int | None:
    row = conn.execute(f"SELECT value FROM {_META} WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else None


def setup_needed(conn: sqlite3.Connection) -> bool:
    """Whether :func:`create_or_migrate` has anything to do: the file is empty, of an older
    version, or lacks one of our objects. A current file is opened without writing a byte.
    """
    objects = schema_objects(conn)
    if _META not in objects or not SCHEMA_OBJECTS.issubset(objects):
        return True
    return _schema_version(conn) != SCHEMA_VERSION


def detect_layout(conn: sqlite3.Connection) -> Layout | None:
    """The database's layout, or ``None`` when it lacks ``sessions``/``messages``."""
    tables = _tables(conn)
    if not {"sessions", "messages"} <= tables:
        return None
    version = _schema_version(conn) if _META in tables else None
    message_columns = _columns(conn, "messages")
    conditions = []
    if {"active", "compacted"} <= message_columns:
        conditions.append("(m.active = 1 OR m.compacted = 1)")
    elif "active" in message_columns:
        conditions.append("m.active = 1")
    if "display_kind" in message_columns:
        conditions.append("coalesce(m.display_kind, '') <> 'hidden'")
    fts_columns = len(_columns(conn, "messages_fts")) if "messages_fts" in tables else 0
    return Layout(
        own=version is not None,
        version=version,
        fts_columns=fts_columns,
        has_cjk="messages_cjk_fts" in tables,
        has_summary_cache="summary_cache" in tables,
        has_headers="session_headers_fts" in tables,
        has_import_runs="import_runs" in tables,
        session_columns=_columns(conn, "sessions"),
        message_columns=message_columns,
        visibility=" AND ".join(conditions) or "1",
    )


def create_or_migrate(conn: sqlite3.Connection, *, name: str = "the file") -> None:
    """Create our schema in an empty file, or bring an older version of it up to date.

    ``conn`` must be in autocommit mode (``isolation_level=None``); the work runs in one
    ``BEGIN IMMEDIATE`` transaction, so concurrent openers serialize and nothing is half-made.
    What it finds is checked again inside that transaction: a file that another program filled
    meanwhile is refused (:class:`NotASessionDatabaseError`), one that another opener brought
    up to date is left alone.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        objects = schema_objects(conn)
        if objects and _META not in objects:
            raise NotASessionDatabaseError(foreign_file_message(name, objects))
        if not setup_needed(conn):
            conn.execute("ROLLBACK")
            return
        fresh = _META not in objects
        version = SCHEMA_VERSION if fresh else (_schema_version(conn) or SCHEMA_VERSION)
        for statement in _statements(_DDL):
            conn.execute(statement)
        migrated_from = version
        while version < SCHEMA_VERSION:
            for statement in _statements(_MIGRATIONS[version]):
                if not _column_there(conn, statement):
                    conn.execute(statement)
            version += 1
        if migrated_from < SCHEMA_VERSION:  # what the migrations dropped, made anew
            for statement in _statements(_DDL):
                conn.execute(statement)
        if migrated_from < _REINDEXED_IN:  # the index anew
            conn.execute(_TOOL_TEXT_FILL)
            conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")
        if migrated_from < 2:  # version 2 indexes session headers: add those of older sessions
            conn.executemany(
                "INSERT OR IGNORE INTO session_headers (session_id, header) VALUES (?, ?)",
                (
                    (sid, session_header(title, started))
                    for sid, title, started in conn.execute(
                        "SELECT id, title, started_at FROM sessions"
                    ).fetchall()
                ),
            )
        conn.execute(
            "INSERT OR REPLACE INTO session_recall_meta(key, value) VALUES ('schema_version', ?)",
            (str(version),),
        )
        if fresh:  # bm25 weights for ORDER BY rank: content, tool name, tool-call JSON
            conn.execute(
                "INSERT INTO messages_fts(messages_fts, rank) "
                "VALUES ('rank', 'bm25(1.0, 1.5, 0.3)')"
            )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


_ADD_COLUMN = re.compile(r"ALTER TABLE (\w+) ADD COLUMN (\w+)")


def _column_there(conn: sqlite3.Connection, statement: str) -> bool:
    """Whether ``statement`` adds a column the table has already (SQLite has no ``ADD COLUMN
    IF NOT EXISTS``): a file whose version number was set back keeps its columns."""
    added = _ADD_COLUMN.match(statement)
    return added is not None and added.group(2) in _columns(conn, added.group(1))


def _statements(script: str) -> list[str]:
    """Split a DDL script into statements (``sqlite3.complete_statement`` handles triggers)."""
    out: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        if line.lstrip().startswith("--") and not buf:
            continue
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out
