"""PostgreSQL's dialect and the statements only PostgreSQL runs (tsquery search, bulk insert).

Lists are bound as PostgreSQL arrays (``= ANY(%(name)s)``), values always as parameters;
schema names are validated identifiers (see ``store.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_session_recall.backends.postgres.schema import TS_CONFIG
from langchain_session_recall.backends.sql import (
    SESSION_FIELDS,
    WHERE_FIELDS,
    Dialect,
    comparable,
    filter_clauses,
    session_filter_clauses,
)
from langchain_session_recall.core.cjk import CJK_CHARS
from langchain_session_recall.models import SearchFilters

__all__ = ["APPEND_MESSAGES", "PostgresDialect", "create_session", "match_query"]


class PostgresDialect(Dialect):
    """PostgreSQL's way of writing the shared statements.

    Example:
        >>> PostgresDialect().member("s.id", "ids"), PostgresDialect().tail("m.content", 250)
        ('s.id = ANY(%(ids)s)', 'right(m.content, 250)')
    """

    name = "postgresql"
    for_update = " FOR UPDATE"

    def __init__(self, missing: frozenset[str] = frozenset()) -> None:
        self.missing = missing
        """Session columns the schema lacks (an older one opened read-only): read as NULL."""

    def session_column(self, name: str) -> str:
        return "NULL" if name in self.missing else f"s.{name}"

    def param(self, name: str) -> str:
        return f"%({name})s"

    def member(self, column: str, name: str) -> str:
        return f"{column} = ANY(%({name})s)"

    def array(self, values: Sequence[Any]) -> Any:
        return comparable(values)

    def tail(self, expr: str, n: int) -> str:
        return f"right({expr}, {int(n)})"

    def text(self, value: str | None) -> str | None:
        # PostgreSQL text cannot hold NUL characters; SQLite can.
        text = super().text(value)
        return text.replace("\x00", "") if text else text


def _newest(d: PostgresDialect, column: str, where: list[str], *, bitmap: bool) -> str:
    """The newest ``window`` matches of ``column`` with the filters ``where`` (see
    :func:`match_query`'s ``bitmap``)."""
    match = f"{column} @@ q.q"
    source = "messages m"
    if bitmap:
        source = f"(SELECT * FROM messages m WHERE {match} OFFSET 0) m"
        match = "true"
    return (
        f"SELECT m.id, m.session_id, m.role, {column} AS v, s.source, m.timestamp, "
        f"{d.message_column('seq')} AS seq, s.started_at "
        f"FROM {source} JOIN sessions s ON s.id = m.session_id "
        f"WHERE {' AND '.join([match, *where])} "
        "ORDER BY m.id DESC LIMIT %(window)s"
    )


def match_query(
    d: PostgresDialect,
    filters: SearchFilters,
    *,
    cjk: bool,
    automation: bool = False,
    per_session: bool = False,
    seated: bool = False,
    bitmap: bool = False,
) -> tuple[str, dict[str, Any]]:
    """Message hits of one tsvector column, best first, every filter inside the query.

    Only the newest ``window`` matches are ranked: ``ts_rank_cd`` reads each ranked row's
    ``tsvector`` (a word found in 8% of a million messages cost 250 ms to rank whole, 35 ms
    this way), while finding the newest matches walks the primary key or the GIN index
    without it. Matches beyond the window are older ones of a word found in more than
    ``window`` messages (the store passes ``SessionBackend.rank_window``, as SQLite bounds its
    ranking).

    Bound: ``tsquery`` (text for ``to_tsquery``), ``weights``, ``window``, ``limit`` (``NULL``:
    no limit), the filters', and with ``automation`` the ``automation`` sources: then the best
    ``limit`` hits of those sources and the best ``limit`` of the others come back (one
    ranking pass), for :func:`~langchain_session_recall.backends.hits.budget_automation` to
    settle. With ``per_session`` (bound: ``per_session``) each session's best ``per_session``
    come back too (``limit`` 0: only those): a superset of what
    :func:`~langchain_session_recall.backends.hits.best_hits` keeps; with ``seated`` too
    (bound: ``seats``, ``auto_seats``), only those of the best ``seats`` sessions by their best
    match (sessions of ``automation`` sources: ``auto_seats`` of their own).

    ``bitmap``: the matches are read from the GIN index in a fenced subquery (``OFFSET 0``),
    so the newest ``window`` are sorted out of all of them instead of found by walking the
    primary key backwards (the choice of ``plans.prefer_bitmap``); the same rows either way.
    """
    column = "m.cjk_tsv" if cjk else "m.tsv"
    where, params = filter_clauses(d, filters)
    newest = _newest(d, column, where, bitmap=bitmap)
    ranked = (
        "SELECT w.id, w.session_id, w.role, "
        "ts_rank_cd(%(weights)s::float4[], w.v, q.q, 1) AS relevance, "
        "w.source, w.timestamp, w.seq, w.started_at "
        f"FROM (SELECT to_tsquery('{TS_CONFIG}', %(tsquery)s) AS q) q "
        f"CROSS JOIN LATERAL ({newest}) w"
    )
    # as a subquery, fenced (OFFSET 0): each row's relevance computed once and its tsvector
    # left behind, instead of ts_rank_cd in every sort key above and the tsvector carried
    # through each sort (the same rows, 7% less server time over the 100-query mix at 200k)
    fenced = f"{ranked} OFFSET 0"
    if per_session:
        flag = "PARTITION BY r.source = ANY(%(automation)s) " if automation else ""
        numbered = (
            "SELECT r.*, row_number() OVER "
            "(PARTITION BY r.session_id ORDER BY r.relevance DESC, r.id) AS nth, "
            f"row_number() OVER ({flag}ORDER BY r.relevance DESC, r.id) AS place, "
            "max(r.relevance) OVER (PARTITION BY r.session_id) AS best "
            f"FROM ({fenced}) r"
        )
        keep = "x.nth <= %(per_session)s"
        if seated:
            automated = "coalesce(n.source = ANY(%(automation)s), false)"
            numbered = (
                f"SELECT n.*, {automated} AS automated, dense_rank() OVER (PARTITION BY "
                f"{automated} ORDER BY n.best DESC, n.session_id) AS seat FROM ({numbered}) n"
            )
            keep += " AND x.seat <= CASE WHEN x.automated THEN %(auto_seats)s ELSE %(seats)s END"
        sql = (
            f"SELECT {_HIT_COLUMNS} FROM ({numbered}) x WHERE ({keep}) "
            "OR x.place <= %(limit)s ORDER BY x.relevance DESC, x.id"
        )
        return sql, params
    if not automation:
        return f"{ranked} ORDER BY relevance DESC, id LIMIT %(limit)s", params
    sql = (
        f"SELECT {_HIT_COLUMNS} FROM ("
        "SELECT r.*, row_number() OVER (PARTITION BY r.source = ANY(%(automation)s) "
        f"ORDER BY r.relevance DESC, r.id) AS n FROM ({fenced}) r"
        ") x WHERE x.n <= %(limit)s ORDER BY x.relevance DESC, x.id"
    )
    return sql, params


_HIT_COLUMNS = "x.id, x.session_id, x.role, x.relevance, x.source, x.timestamp, x.seq, x.started_at"


RAISE_WORK_MEM = (
    "SELECT set_config('work_mem', %(kb)s::text || 'kB', false) "
    "WHERE (SELECT setting::bigint FROM pg_settings WHERE name = 'work_mem') < %(kb)s"
)
"""Raise this connection's ``work_mem`` to ``kb`` kilobytes; a higher setting is kept."""

APPEND_MESSAGES = f"""
    WITH counted AS (
        UPDATE sessions SET message_count = message_count + %(count)s
        WHERE id = %(session_id)s
        RETURNING message_count - %(count)s AS first
    ), rows AS (
        SELECT * FROM unnest(
            %(role)b::text[], %(content)b::text[], %(tool_call_id)b::text[],
            %(tool_calls)b::text[], %(tool_name)b::text[], %(ts)b::float8[], %(cjk)b::text[]
        ) WITH ORDINALITY AS r(role, content, tool_call_id, tool_calls, tool_name, ts, cjk, n)
    )
    INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name,
                          timestamp, cjk_tsv, seq)
    SELECT %(session_id)s, role, content, tool_call_id, tool_calls, tool_name, ts,
           CASE WHEN cjk IS NULL THEN NULL ELSE to_tsvector('{TS_CONFIG}', cjk) END,
           counted.first + n - 1
    FROM rows CROSS JOIN counted ORDER BY n
    RETURNING id
"""
"""A batch appended to a session in one statement: its row updated (so locked) to count the
batch, which takes the positions after the session's messages; arrays in (bound: the columns
as arrays, ``session_id``, ``count``: the batch's length), ids out (sorted by the caller), none
when the session does not exist."""


def create_session(d: PostgresDialect) -> str:
    """A new session with its header indexed, returned as :func:`sql.session_select` reads it,
    in one statement; nothing when the session exists or its parent (bound: the columns of
    :func:`sql.insert_session`, ``header``: its text as the header index reads it) does not."""
    names = ("id", "source", "user_id", "model", "title", "parent_session_id", *WHERE_FIELDS)
    values = ", ".join([*(f"%({n})s::text" for n in names), "%(started_at)s::float8"])
    return (
        f"INSERT INTO sessions AS s ({', '.join(names)}, started_at, end_reason, header_tsv) "
        f"SELECT {values}, %(end_reason)s::text, to_tsvector('{TS_CONFIG}', %(header)s::text) "
        "WHERE %(parent_session_id)s::text IS NULL "
        "OR EXISTS (SELECT 1 FROM sessions p WHERE p.id = %(parent_session_id)s::text) "
        "ON CONFLICT (id) DO NOTHING "
        f"RETURNING {', '.join(d.session_column(c) for c in SESSION_FIELDS)}"
    )


PUT_HEADER = (
    f"UPDATE sessions SET header_tsv = to_tsvector('{TS_CONFIG}', %(header)s) WHERE id = %(id)s"
)
ALL_HEADERS = "SELECT id, title, started_at FROM sessions WHERE header_tsv IS NULL"


def header_match_query(d: PostgresDialect, filters: SearchFilters) -> tuple[str, dict[str, Any]]:
    """Sessions whose header matches ``tsquery``, best first (bound: ``tsquery``, ``limit``)."""
    where, params = session_filter_clauses(d, filters)
    sql = (
        "SELECT s.id, ts_rank_cd(s.header_tsv, q.q, 1) AS relevance, s.source, s.started_at "
        f"FROM (SELECT to_tsquery('{TS_CONFIG}', %(tsquery)s) AS q) q CROSS JOIN sessions s "
        f"WHERE {' AND '.join(['s.header_tsv @@ q.q', *where])} "
        "ORDER BY relevance DESC, s.id LIMIT %(limit)s"
    )
    return sql, params


OUR_TABLES = ("sessions", "messages", "session_recall_meta")
"""The tables whose presence makes a schema a session store."""
HAS_TABLES = (
    "SELECT count(*) FROM pg_tables WHERE schemaname = %s "
    f"AND tablename IN ({', '.join(repr(t) for t in OUR_TABLES)})"
)
GET_VERSION = "SELECT value FROM {}.session_recall_meta WHERE key = 'schema_version'"
PUT_META = (
    "INSERT INTO session_recall_meta (key, value) VALUES ('schema_version', %s) "
    "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
)
SCHEMA_LOCK = "SELECT pg_advisory_xact_lock(hashtext('langchain_session_recall:' || %s))"
SIZE = (
    "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
    "JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE n.nspname = current_schema() AND c.relkind = 'r'"
)
UNINDEXED = (
    "SELECT count(*) FROM messages WHERE tsv IS NULL OR "
    f"(cjk_tsv IS NULL AND content ~ '[{CJK_CHARS}]')"
)
"""Messages the full-text index misses (a search would never find them)."""
ANALYZE = ("ANALYZE sessions", "ANALYZE messages")
