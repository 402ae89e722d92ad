"""SQLite's dialect and the statements only SQLite runs (FTS5 search, bulk inserts).

Lists are bound as one JSON array and read with ``json_each``: one statement shape whatever the
list's length, and no limit on bound variables.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from langchain_session_recall.backends.sql import (
    RUN_COLUMNS,
    Dialect,
    comparable,
    filter_clauses,
    hit_columns,
    session_filter_clauses,
)
from langchain_session_recall.backends.sqlite.schema import Layout
from langchain_session_recall.errors import InvalidArgumentError
from langchain_session_recall.models import SearchFilters

__all__ = ["SqliteDialect", "match_query", "session_best_query", "window_probe_query"]


class SqliteDialect(Dialect):
    """SQLite's way of writing the shared statements, for a file of a given :class:`Layout`
    (a Hermes ``state.db`` lacks some session columns and hides rewound messages).

    Example:
        >>> SqliteDialect().tail("m.content", 250)
        'substr(m.content, -250)'
    """

    name = "sqlite"

    def __init__(self, layout: Layout | None = None) -> None:
        self.layout = layout

    def param(self, name: str) -> str:
        return f":{name}"

    def member(self, column: str, name: str) -> str:
        return f"{column} IN (SELECT value FROM json_each(:{name}))"

    def array(self, values: Sequence[Any]) -> Any:
        return json.dumps(comparable(values), ensure_ascii=False)

    def tail(self, expr: str, n: int) -> str:
        return f"substr({expr}, -{int(n)})"

    def session_column(self, name: str) -> str:
        if self.layout is None or name in self.layout.session_columns:
            return f"s.{name}"
        if name == "agent" and not self.layout.own:  # a file of another program: Hermes's
            return "'hermes'"
        return "NULL"

    def message_column(self, name: str) -> str:
        if self.layout is None or name in self.layout.message_columns:
            return f"m.{name}"
        return "NULL"

    @property
    def visibility(self) -> str:
        return "1 = 1" if self.layout is None else self.layout.visibility


def match_query(
    d: SqliteDialect, fts_table: str, filters: SearchFilters, *, bounded: bool = False
) -> tuple[str, dict[str, Any]]:
    """Message hits of one FTS5 table, best first, every filter inside the query.

    Bound: ``expr`` (the MATCH expression), ``bound`` (with ``bounded``: the rowid the matches
    must exceed, a range FTS5 applies before it ranks), ``limit`` (-1: read lazily), and the
    filters'. ``ORDER BY rank`` lets FTS5 sort its own matches before the joins, so ``LIMIT``
    stops the join early; ordering by a function call would sort every joined row first.
    """
    where, params = filter_clauses(d, filters)
    head = [f"{fts_table} MATCH :expr"]
    if bounded:
        head.append(f"{fts_table}.rowid > :bound")
    sql = (
        f"SELECT {hit_columns(d, '-rank')} "
        f"FROM {fts_table} JOIN messages m ON m.id = {fts_table}.rowid "
        "JOIN sessions s ON s.id = m.session_id "
        f"WHERE {' AND '.join([*head, d.visibility, *where])} ORDER BY rank LIMIT :limit"
    )
    return sql, params


def session_best_query(
    d: SqliteDialect,
    fts_table: str,
    filters: SearchFilters,
    *,
    bounded: bool = False,
    in_hand: Sequence[str] = (),
    seated: bool = False,
) -> tuple[str, dict[str, Any]]:
    """The best ``per_session`` hits of every session with a match in one FTS5 table, every
    filter applied (bound: ``expr``, ``bound`` as in :func:`match_query`, ``per_session``),
    except the sessions ``in_hand`` (whose best hits the caller holds already: see
    :func:`~langchain_session_recall.backends.hits.sessions_in_hand`). With ``seated``, of the
    best ``seats`` sessions only, by their best match (bound: ``seats``, ``auto_seats`` and
    ``automation``: sessions of those sources are ranked for ``auto_seats`` seats of their
    own), so what comes back is bounded whatever the number of sessions with a match.

    The matches are numbered per session (a window function over the ranked matches joined to
    their message only, at most ``rank_window`` rows); the session and its filters are joined
    to the few rows kept: a session-level filter holds for all of a session's messages or for
    none, so it may come after the choice. The sessions in hand are left out before ranking:
    FTS5 computes bm25 only for the matches the query keeps.
    """
    message_level = SearchFilters(
        role_filter=filters.role_filter,
        exclude_session_ids=(*filters.exclude_session_ids, *in_hand),
    )
    session_level = replace(filters, role_filter=(), exclude_session_ids=())
    inner_where, params = filter_clauses(d, message_level)
    outer_where, outer_params = filter_clauses(d, session_level)
    params.update(outer_params)
    head = [f"{fts_table} MATCH :expr"]
    if bounded:
        head.append(f"{fts_table}.rowid > :bound")
    chosen = (
        "SELECT m.id AS id, -rank AS relevance, "
        "row_number() OVER (PARTITION BY m.session_id ORDER BY rank, m.id) AS nth "
        f"FROM {fts_table} JOIN messages m ON m.id = {fts_table}.rowid "
        f"WHERE {' AND '.join([*head, d.visibility, *inner_where])}"
    )
    sql = (
        f"SELECT {hit_columns(d, 'x.relevance')} FROM ({chosen}) x "
        "JOIN messages m ON m.id = x.id JOIN sessions s ON s.id = m.session_id "
        f"WHERE {' AND '.join(['x.nth <= :per_session', *outer_where])}"
    )
    if not seated:
        return sql, params

    def automated(alias: str) -> str:
        return f"({d.member(f'{alias}.source', 'automation')})"

    best = f"SELECT k.*, max(k.relevance) OVER (PARTITION BY k.session_id) AS best FROM ({sql}) k"
    seat = (
        f"SELECT b.*, dense_rank() OVER (PARTITION BY {automated('b')} "
        f"ORDER BY b.best DESC, b.session_id) AS seat FROM ({best}) b"
    )
    columns = "id, session_id, role, relevance, source, timestamp, seq, started_at"
    limit = f"CASE WHEN {automated('r')} THEN :auto_seats ELSE :seats END"
    return f"SELECT {columns} FROM ({seat}) r WHERE r.seat <= {limit}", params


def window_probe_query(fts_table: str) -> str:
    """How many rows match ``expr``, counted up to ``n``, and the oldest rowid among the ``n``
    newest: FTS5 walks its doclists in rowid order and stops there, without ranking (some tens
    of nanoseconds per row)."""
    return (
        f"SELECT count(*), min(rowid) FROM (SELECT rowid FROM {fts_table} "
        f"WHERE {fts_table} MATCH :expr ORDER BY rowid DESC LIMIT :n)"
    )


def header_match_query(d: SqliteDialect, filters: SearchFilters) -> tuple[str, dict[str, Any]]:
    """Sessions whose header matches ``expr``, best first (bound: ``expr``, ``limit``)."""
    where, params = session_filter_clauses(d, filters)
    sql = (
        "SELECT s.id, -rank AS relevance, s.source, s.started_at FROM session_headers_fts "
        "JOIN session_headers h ON h.id = session_headers_fts.rowid "
        "JOIN sessions s ON s.id = h.session_id "
        f"WHERE {' AND '.join(['session_headers_fts MATCH :expr', *where])} "
        "ORDER BY rank LIMIT :limit"
    )
    return sql, params


PUT_HEADER = (
    "INSERT INTO session_headers (session_id, header) VALUES (:id, :header) "
    "ON CONFLICT (session_id) DO UPDATE SET header = excluded.header "
    "WHERE header <> excluded.header"
)
INSERT_MESSAGES = (
    "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, "
    "timestamp, seq) VALUES "
)
INSERT_CJK = "INSERT OR REPLACE INTO messages_cjk (message_id, text) VALUES "
INSERT_LEDGER = (
    "INSERT INTO import_ledger (source_kind, external_key, session_id, message_id, "
    "imported_at) VALUES "
)
INSERT_LEDGER_TAIL = " ON CONFLICT DO NOTHING"
INSERT_RUNS = f"INSERT INTO import_runs ({', '.join(RUN_COLUMNS)}) VALUES "

ROWS_PER_INSERT = 100
"""Rows per multi-row ``INSERT``: 100 rows of up to 8 values stay under SQLite's oldest
default limit of 999 bound variables."""

LAST_ROWID = "SELECT last_insert_rowid()"
MAX_MESSAGE_ID = "SELECT coalesce(max(id), 0) FROM messages"
HAS_TRIGGER = "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = :name"
UNINDEXED_CJK = (
    "SELECT m.id, m.content FROM messages m LEFT JOIN messages_cjk c "
    "ON c.message_id = m.id WHERE c.message_id IS NULL AND m.content IS NOT NULL"
)
CREATE_VOCAB = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.session_recall_vocab "
    "USING fts5vocab(main, messages_fts, row)"
)
VOCAB = "SELECT term, doc FROM temp.session_recall_vocab WHERE term >= :lo AND term < :hi LIMIT :n"
COMPLETIONS = (  # the most frequent words of a range, and how many words it holds
    "SELECT term, count(*) OVER () FROM temp.session_recall_vocab "
    "WHERE term >= :lo AND term < :hi ORDER BY doc DESC, term LIMIT :n"
)
SIZE = "SELECT page_size * page_count FROM pragma_page_size(), pragma_page_count()"
DELETE_HEADERS = (
    "DELETE FROM session_headers WHERE session_id IN (SELECT value FROM json_each(:ids))"
)
SECURE_DELETE_ON = "PRAGMA secure_delete = ON"
"""Zero what deleted or rewritten rows leave free (SQLite's own default is off; Debian's build
turns it on): every writable connection, so no delete, replacement or index merge leaves text
in the file's free space."""
CHECKPOINT_TRUNCATE = "PRAGMA wal_checkpoint(TRUNCATE)"


QUICK_CHECK = "PRAGMA quick_check"


def fts_command(fts_table: str, command: str) -> str:
    """An FTS5 special command (``optimize``, ``integrity-check``, ``rebuild``).

    ``integrity-check`` is given ``rank = 1``: FTS5 then also compares the index with its
    external content (the messages), so a message another client wrote behind the index's back
    is found.
    """
    if command not in {"optimize", "integrity-check", "rebuild"}:
        raise InvalidArgumentError(f"not an FTS5 command: {command!r}")
    if command == "integrity-check":
        return f"INSERT INTO {fts_table}({fts_table}, rank) VALUES ('integrity-check', 1)"
    return f"INSERT INTO {fts_table}({fts_table}) VALUES ('{command}')"
