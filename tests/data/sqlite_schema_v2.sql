-- The SQLite schema of langchain-session-recall schema version 2, as it created it.
CREATE TABLE session_recall_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    user_id TEXT,
    model TEXT,
    title TEXT,
    parent_session_id TEXT REFERENCES sessions(id),
    started_at REAL NOT NULL,
    ended_at REAL,
    end_reason TEXT,
    message_count INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX idx_sessions_started ON sessions(started_at DESC);
CREATE TABLE messages (
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
CREATE INDEX idx_messages_session ON messages(session_id, timestamp, id);
CREATE VIEW messages_fts_src(id, content, tool_name, tool_calls) AS
    SELECT messages.id, CASE WHEN messages.role = 'tool' THEN substr(messages.content, 1, 4096) ELSE messages.content END, messages.tool_name, substr(messages.tool_calls, 1, 1024) FROM messages;
CREATE VIRTUAL TABLE messages_fts USING fts5(
    content, tool_name, tool_calls,
    content='messages_fts_src', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content, tool_name, tool_calls)
    VALUES (new.id, CASE WHEN new.role = 'tool' THEN substr(new.content, 1, 4096) ELSE new.content END, new.tool_name, substr(new.tool_calls, 1, 1024));
END;
CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_calls)
    VALUES ('delete', old.id, CASE WHEN old.role = 'tool' THEN substr(old.content, 1, 4096) ELSE old.content END, old.tool_name, substr(old.tool_calls, 1, 1024));
    DELETE FROM messages_cjk WHERE message_id = old.id;
END;
CREATE TRIGGER messages_fts_au AFTER UPDATE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_calls)
    VALUES ('delete', old.id, CASE WHEN old.role = 'tool' THEN substr(old.content, 1, 4096) ELSE old.content END, old.tool_name, substr(old.tool_calls, 1, 1024));
    INSERT INTO messages_fts(rowid, content, tool_name, tool_calls)
    VALUES (new.id, CASE WHEN new.role = 'tool' THEN substr(new.content, 1, 4096) ELSE new.content END, new.tool_name, substr(new.tool_calls, 1, 1024));
    -- the bigram copy is stale now; reindex_cjk() rebuilds it
    DELETE FROM messages_cjk WHERE message_id = old.id;
END;
CREATE TABLE messages_cjk (
    message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
    text TEXT NOT NULL
);
CREATE VIRTUAL TABLE messages_cjk_fts USING fts5(
    text, content='messages_cjk', content_rowid='message_id', tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER messages_cjk_ai AFTER INSERT ON messages_cjk BEGIN
    INSERT INTO messages_cjk_fts(rowid, text) VALUES (new.message_id, new.text);
END;
CREATE TRIGGER messages_cjk_ad AFTER DELETE ON messages_cjk BEGIN
    INSERT INTO messages_cjk_fts(messages_cjk_fts, rowid, text)
    VALUES ('delete', old.message_id, old.text);
END;
CREATE TRIGGER messages_cjk_au AFTER UPDATE ON messages_cjk BEGIN
    INSERT INTO messages_cjk_fts(messages_cjk_fts, rowid, text)
    VALUES ('delete', old.message_id, old.text);
    INSERT INTO messages_cjk_fts(rowid, text) VALUES (new.message_id, new.text);
END;
CREATE TABLE session_headers (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL UNIQUE REFERENCES sessions(id),
    header TEXT NOT NULL
);
CREATE VIRTUAL TABLE session_headers_fts USING fts5(
    header, content='session_headers', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER session_headers_ai AFTER INSERT ON session_headers BEGIN
    INSERT INTO session_headers_fts(rowid, header) VALUES (new.id, new.header);
END;
CREATE TRIGGER session_headers_ad AFTER DELETE ON session_headers BEGIN
    INSERT INTO session_headers_fts(session_headers_fts, rowid, header)
    VALUES ('delete', old.id, old.header);
END;
CREATE TRIGGER session_headers_au AFTER UPDATE ON session_headers BEGIN
    INSERT INTO session_headers_fts(session_headers_fts, rowid, header)
    VALUES ('delete', old.id, old.header);
    INSERT INTO session_headers_fts(rowid, header) VALUES (new.id, new.header);
END;
CREATE TABLE import_ledger (
    source_kind TEXT NOT NULL,
    external_key TEXT NOT NULL,
    session_id TEXT NOT NULL,
    message_id INTEGER,
    imported_at REAL NOT NULL,
    PRIMARY KEY (source_kind, external_key)
);
CREATE INDEX idx_import_ledger_session ON import_ledger(source_kind, session_id);
CREATE TABLE summary_cache (
    cache_key TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    summary TEXT NOT NULL,
    model TEXT,
    created_at REAL NOT NULL,
    status TEXT NOT NULL DEFAULT 'summarized',
    reasons TEXT NOT NULL DEFAULT ''
);
INSERT INTO session_recall_meta (key, value) VALUES ('schema_version', '2');
INSERT INTO messages_fts(messages_fts, rank) VALUES ('rank', 'bm25(1.0, 1.5, 0.3)');
