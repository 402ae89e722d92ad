"""Schema of the PostgreSQL store (DDL only; run by ``store.py`` when a schema is created or
older than this library).

The tables mean what they mean in the SQLite store (``sessions``, ``messages``,
``summary_cache``, ``import_ledger``, ``session_recall_meta``) and live in one schema of their
own (default ``session_recall``), found through ``search_path``.

Full-text search is PostgreSQL's own: ``messages.tsv`` is a generated ``tsvector`` with a GIN
index. Its text is made to tokenize like SQLite's ``unicode61``: ASCII punctuation becomes
spaces before parsing (otherwise PostgreSQL's parser keeps ``/etc/nginx/nginx.conf`` or
``a@b.io`` as one token and ``nginx`` would not find it). Its configuration,
``recall_english``, is ``english`` with a snowball stemmer that keeps stop words, like FTS5's
porter tokenizer: a question made only of common words still finds something. The weights
mirror the SQLite ranking: content ``A``, tool name ``B``, tool calls ``D``; tool output is
capped as in SQLite. Of tool calls the index holds what SQLite's does: each call's name and its
arguments' string values, flattened, each capped at 4,096 characters (``tool_call_text()``, a
function of the schema; never the JSON's keys and escapes). Version 3 made that change: a
version-2 schema gets the new ``tsv`` column (and its index) when a writable store opens it.

CJK: ``messages.cjk_tsv`` holds the bigram text of :func:`~langchain_session_recall.core.cjk.
bigram_text`, filled by Python on insert (a generated column cannot call Python), with its
own GIN index; it is NULL for messages without CJK characters.
"""

from __future__ import annotations

import string

__all__ = ["PG_SCHEMA_VERSION", "TS_CONFIG", "ddl_statements", "rank_weights"]

PG_SCHEMA_VERSION = 5
TS_CONFIG = "recall_english"
INDEX_CHARS = 100_000
"""Characters of one message that are indexed (a ``tsvector`` is limited to 1 MB)."""

_PUNCT = string.punctuation  # !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~
_FROM = "'" + _PUNCT.replace("'", "''") + "'"
_TO = "'" + " " * len(_PUNCT) + "'"


def _vector(expr: str, weight: str) -> str:
    return (
        f"setweight(to_tsvector('{TS_CONFIG}'::regconfig, translate({expr}, {_FROM}, {_TO})), "
        f"'{weight}')"
    )


_TSV = " || ".join(
    [
        _vector(
            f"left(CASE WHEN role = 'tool' THEN left(coalesce(content, ''), 4096) "
            f"ELSE coalesce(content, '') END, {INDEX_CHARS})",
            "A",
        ),
        _vector("coalesce(tool_name, '')", "B"),
        _vector("tool_call_text(tool_calls)", "D"),
    ]
)


# Never raises: a value that is not JSON (another writer's) is indexed as it is, arguments
# that are not JSON as one value (a generated column's function must not fail an insert).
_TOOL_CALL_TEXT = """
CREATE OR REPLACE FUNCTION tool_call_text(calls text) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $fn$
DECLARE
    doc jsonb;
    call jsonb;
    raw jsonb;
    args jsonb;
    out text := '';
BEGIN
    IF calls IS NULL OR calls = '' THEN
        RETURN '';
    END IF;
    BEGIN
        doc := calls::jsonb;
    EXCEPTION WHEN others THEN
        RETURN left(calls, 4096);
    END;
    IF jsonb_typeof(doc) <> 'array' THEN
        RETURN '';
    END IF;
    FOR call IN SELECT value FROM jsonb_array_elements(doc) LOOP
        CONTINUE WHEN jsonb_typeof(call) <> 'object';
        out := out || ' ' || coalesce(call #>> '{function,name}', call ->> 'name', '');
        raw := coalesce(call #> '{function,arguments}', call -> 'args', call -> 'arguments');
        CONTINUE WHEN raw IS NULL;
        args := raw;
        IF jsonb_typeof(raw) = 'string' THEN
            BEGIN
                args := (raw #>> '{}')::jsonb;
            EXCEPTION WHEN others THEN
                args := raw;
            END;
        END IF;
        out := out || ' ' || coalesce((
            SELECT string_agg(left(v #>> '{}', 4096), ' ')
            FROM jsonb_path_query(args, 'strict $.**') AS v
            WHERE jsonb_typeof(v) = 'string'
        ), '');
    END LOOP;
    RETURN out;
END
$fn$
"""

# Version 3: a tsv of version 2 (tool calls as JSON text) is replaced by the current one.
_RETYPE_TSV = f"""
DO $$ BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = 'messages'
          AND column_name = 'tsv' AND generation_expression LIKE '%tool_call_text%'
    ) THEN
        ALTER TABLE messages DROP COLUMN IF EXISTS tsv;
        ALTER TABLE messages ADD COLUMN tsv tsvector GENERATED ALWAYS AS ({_TSV}) STORED;
    END IF;
END $$
"""


def rank_weights() -> list[float]:
    """``ts_rank_cd`` weights ``{D, C, B, A}``: bm25(1.0, 1.5, 0.3) of SQLite scaled to <= 1.

    Example:
        >>> rank_weights()
        [0.2, 0.1, 1.0, 0.667]
    """
    return [0.2, 0.1, 1.0, 0.667]


_DDL: tuple[str, ...] = (
    f"""
        DO $$ BEGIN
            IF NOT EXISTS (
                SELECT 1 FROM pg_ts_config c JOIN pg_namespace n ON n.oid = c.cfgnamespace
                WHERE c.cfgname = '{TS_CONFIG}' AND n.nspname = current_schema()
            ) THEN
                CREATE TEXT SEARCH DICTIONARY {TS_CONFIG}_stem
                    (TEMPLATE = snowball, LANGUAGE = english);
                CREATE TEXT SEARCH CONFIGURATION {TS_CONFIG} (COPY = pg_catalog.english);
                ALTER TEXT SEARCH CONFIGURATION {TS_CONFIG}
                    ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword,
                    hword_part WITH {TS_CONFIG}_stem;
            END IF;
        END $$
        """,
    _TOOL_CALL_TEXT,
    """
        CREATE TABLE IF NOT EXISTS session_recall_meta (
            key text PRIMARY KEY,
            value text NOT NULL
        )
        """,
    """
        CREATE TABLE IF NOT EXISTS sessions (
            id text PRIMARY KEY,
            source text NOT NULL,
            user_id text,
            model text,
            title text,
            parent_session_id text REFERENCES sessions(id),
            started_at double precision NOT NULL,
            ended_at double precision,
            end_reason text,
            message_count integer NOT NULL DEFAULT 0
        )
        """,
    "CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id)",
    "CREATE INDEX IF NOT EXISTS idx_sessions_started ON sessions(started_at DESC)",
    "CREATE INDEX IF NOT EXISTS idx_sessions_user ON sessions(user_id, started_at DESC)",
    f"""
        CREATE TABLE IF NOT EXISTS messages (
            id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            session_id text NOT NULL REFERENCES sessions(id),
            role text NOT NULL,
            content text,
            tool_call_id text,
            tool_calls text,
            tool_name text,
            timestamp double precision NOT NULL,
            tsv tsvector GENERATED ALWAYS AS ({_TSV}) STORED,
            cjk_tsv tsvector
        )
        """,
    _RETYPE_TSV,
    "CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id, timestamp, id)",
    # A small pending list: every search scans it linearly, so keep it short (512 kB).
    "CREATE INDEX IF NOT EXISTS idx_messages_tsv ON messages USING gin (tsv) "
    "WITH (gin_pending_list_limit = 512)",
    "CREATE INDEX IF NOT EXISTS idx_messages_cjk_tsv ON messages USING gin (cjk_tsv) "
    "WITH (gin_pending_list_limit = 512)",
    """
        CREATE TABLE IF NOT EXISTS summary_cache (
            cache_key text PRIMARY KEY,
            session_id text NOT NULL,
            summary text NOT NULL,
            model text,
            created_at double precision NOT NULL
        )
        """,
    # version 2: the quality gate's verdict on each cached recap, and the import ledger
    "ALTER TABLE summary_cache ADD COLUMN IF NOT EXISTS status text NOT NULL DEFAULT 'summarized'",
    "ALTER TABLE summary_cache ADD COLUMN IF NOT EXISTS reasons text NOT NULL DEFAULT ''",
    """
        CREATE TABLE IF NOT EXISTS import_ledger (
            source_kind text NOT NULL,
            external_key text NOT NULL,
            session_id text NOT NULL,
            message_id bigint,
            imported_at double precision NOT NULL,
            PRIMARY KEY (source_kind, external_key)
        )
        """,
    "CREATE INDEX IF NOT EXISTS idx_import_ledger_session "
    "ON import_ledger(source_kind, session_id)",
    # version 2: message positions in their session (rows of version 1 keep NULL), and
    # session headers (title and date in words, filled by the store, see headers.py)
    "ALTER TABLE messages ADD COLUMN IF NOT EXISTS seq integer",
    "ALTER TABLE sessions ADD COLUMN IF NOT EXISTS header_tsv tsvector",
    "CREATE INDEX IF NOT EXISTS idx_sessions_header ON sessions USING gin (header_tsv)",
    # version 4: where each session happened (project directory as ``cwd``, git branch,
    # the agent that wrote it); older sessions keep NULL
    "ALTER TABLE sessions ADD COLUMN IF NOT EXISTS cwd text",
    "ALTER TABLE sessions ADD COLUMN IF NOT EXISTS git_branch text",
    "ALTER TABLE sessions ADD COLUMN IF NOT EXISTS agent text",
    # version 5: runs of import keys (see backends/common/ledger_runs.py); the ledger rows of
    # older imports stay in import_ledger, where they are still read
    """
        CREATE TABLE IF NOT EXISTS import_runs (
            source_kind text NOT NULL,
            key_prefix text NOT NULL,
            first_number bigint NOT NULL,
            gaps text NOT NULL,
            key_count integer NOT NULL,
            session_id text NOT NULL,
            message_id bigint,
            imported_at double precision NOT NULL,
            PRIMARY KEY (source_kind, key_prefix, first_number)
        )
        """,
    "CREATE INDEX IF NOT EXISTS idx_import_runs_session ON import_runs(source_kind, session_id)",
)
"""The schema's objects in the order they are created (each version's additions after
the last), as ``ddl_statements`` gives them."""


def ddl_statements() -> list[str]:
    """Statements that create the schema's objects (idempotent; run in ``search_path``).

    Example:
        >>> any("USING gin (tsv)" in s for s in ddl_statements())
        True
    """
    return list(_DDL)
