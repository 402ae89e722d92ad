"""The PostgreSQL side of the performance benchmark: the workers ``run.py`` spawns for it.

Each corpus size lives in a schema of its own (``perf_seed1_1m``, ...) of the database that
``--pg-dsn`` names (``--pg-server DIR`` starts ``scripts/pg-test-server`` there first); a
size's ingest figures are kept beside it in ``public.perf_bench_cache``, keyed by the schema
and the DDL, so a later run reuses the corpus as it reuses the SQLite files. The bare query is
PostgreSQL's plain full-text query over messages, the twin of the SQLite floor:
``tsv @@ q ORDER BY ts_rank(tsv, q) DESC LIMIT 50``, with the tsquery our parser makes of the
question. PostgreSQL's work happens in the server, so its latencies are wall clock.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from typing import Any

BARE_LIMIT = 50
CACHE_TABLE = "public.perf_bench_cache"


def schema_for(seed: int, label: str) -> str:
    """The schema holding the corpus of ``seed`` at size ``label`` (``perf_seed1_200k``)."""
    return f"perf_seed{seed}_{label.lower()}"


def schema_key() -> str:
    """Cached PostgreSQL corpora are rebuilt when the DDL changes."""
    from langchain_session_recall.backends.postgres import schema

    return hashlib.sha256(repr(schema.ddl_statements()).encode()).hexdigest()[:16]


def _connect(dsn: str, search_path: str | None = None) -> Any:
    import psycopg
    from psycopg import sql

    conn = psycopg.connect(dsn, autocommit=True)
    if search_path:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(search_path)))
    return conn


def server_version(dsn: str) -> str:
    with _connect(dsn) as conn:
        return str(conn.execute("SHOW server_version").fetchone()[0])


def cached_builds(dsn: str, schema: str) -> list[dict[str, Any]]:
    """The ingest figures of the run that built ``schema``, or ``[]`` (absent, or built with
    another DDL)."""
    with _connect(dsn) as conn:
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {CACHE_TABLE} (name text PRIMARY KEY, value text)"
        )
        row = conn.execute(f"SELECT value FROM {CACHE_TABLE} WHERE name = %s", (schema,)).fetchone()
    if row is None:
        return []
    cached = json.loads(row[0])
    return cached["builds"] if cached.get("schema") == schema_key() else []  # type: ignore[no-any-return]


def save_builds(dsn: str, schema: str, builds: list[dict[str, Any]]) -> None:
    value = json.dumps({"schema": schema_key(), "builds": builds})
    with _connect(dsn) as conn:
        conn.execute(
            f"INSERT INTO {CACHE_TABLE} (name, value) VALUES (%s, %s) "
            "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            (schema, value),
        )


def drop_schema(dsn: str, schema: str) -> None:
    from psycopg import sql

    with _connect(dsn) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def _settle(dsn: str, schema: str) -> None:
    """``VACUUM ANALYZE`` after a load (what autovacuum would do soon): steady plans and GIN
    pending lists flushed before anything is measured."""
    with _connect(dsn, schema) as conn:
        for table in ("sessions", "messages"):
            conn.execute(f"VACUUM ANALYZE {table}")


def worker_build(dsn: str, schema: str, size: int, seed: int, batch: int) -> dict[str, Any]:
    """The corpus through ``PostgresSessionStore``'s public API into a fresh ``schema``; only
    the API calls are timed (``batch`` > 1: that many sessions per ``store.transaction()``)."""
    from timing import api_ingest

    from langchain_session_recall import PostgresSessionStore

    drop_schema(dsn, schema)
    store = PostgresSessionStore(dsn, schema=schema)
    out = api_ingest(store, seed, size, batch)
    store.close()
    _settle(dsn, schema)
    return out


_PLAIN_SESSION = (
    "INSERT INTO sessions (id, source, user_id, model, title, parent_session_id, started_at, "
    "end_reason) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
)
_PLAIN_HEADER = "UPDATE sessions SET header_tsv = to_tsvector('{cfg}', %s) WHERE id = %s"
_PLAIN_MESSAGE = (
    "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, "
    "timestamp, cjk_tsv, seq) VALUES (%s, %s, %s, %s, %s, %s, %s, to_tsvector('{cfg}', %s), %s)"
)
_PLAIN_COUNT = "UPDATE sessions SET message_count = %s WHERE id = %s"


def worker_build_plain(dsn: str, schema: str, size: int, seed: int, batch: int) -> dict[str, Any]:
    """The baseline of the ingest ratios on PostgreSQL: the same rows written with plain SQL
    (one ``INSERT`` per session, its header, ``executemany`` for the messages, the count) into
    the same schema (a store creates it, then closes), a commit per ``batch`` sessions. The
    rows are the library's own (``to_row``, ``bigram_text``, the header with its punctuation
    made spaces), computed here as the library computes them inside its calls."""
    import corpus
    from timing import PLAIN_STARTED, plain_session_row, timed_ingest

    from langchain_session_recall import PostgresSessionStore
    from langchain_session_recall.backends.postgres.schema import TS_CONFIG
    from langchain_session_recall.backends.postgres.store import _plain
    from langchain_session_recall.core.cjk import bigram_text, has_cjk
    from langchain_session_recall.core.headers import session_header
    from langchain_session_recall.messages import to_row

    drop_schema(dsn, schema)
    PostgresSessionStore(dsn, schema=schema).close()
    conn = _connect(dsn, schema)
    header_sql = _PLAIN_HEADER.format(cfg=TS_CONFIG)
    message_sql = _PLAIN_MESSAGE.format(cfg=TS_CONFIG)

    def write_one(cur: Any, spec: Any) -> None:
        row = plain_session_row(spec)
        cur.execute(_PLAIN_SESSION, row)
        header = session_header(spec.kwargs.get("title"), row[PLAIN_STARTED])
        cur.execute(header_sql, (_plain(header), spec.session_id))  # as the store indexes it
        rows = [to_row(m) for m in spec.messages]
        cur.executemany(
            message_sql,
            [
                (
                    spec.session_id,
                    r.role,
                    r.content or "",
                    r.tool_call_id,
                    r.tool_calls,
                    r.tool_name,
                    r.timestamp,
                    bigram_text(r.content) if r.content and has_cjk(r.content) else None,
                    n,
                )
                for n, r in enumerate(rows)
            ],
        )
        cur.execute(_PLAIN_COUNT, (len(rows), spec.session_id))

    def write(group: list[Any]) -> None:
        if batch == 1:
            for spec in group:
                with conn.transaction():
                    write_one(conn.cursor(), spec)
        else:
            with conn.transaction():
                cur = conn.cursor()
                for spec in group:
                    write_one(cur, spec)

    out = timed_ingest(corpus.generate(seed, size), batch, write)
    conn.close()
    return out


def worker_stats(dsn: str, schema: str) -> dict[str, Any]:
    """Sizes on disk: the whole schema, its full-text index (the GIN indexes and the stored
    ``tsvector`` columns they index), all its indexes."""
    with _connect(dsn, schema) as conn:
        (messages,) = conn.execute("SELECT count(*) FROM messages").fetchone()
        (total,) = conn.execute(
            "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s "
            "AND c.relkind = 'r'",
            (schema,),
        ).fetchone()
        (indexes,) = conn.execute(
            "SELECT sum(pg_relation_size(c.oid)) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s "
            "AND c.relkind = 'i'",
            (schema,),
        ).fetchone()
        (gin,) = conn.execute(
            "SELECT sum(pg_relation_size(c.oid)) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_am a ON a.oid = c.relam "
            "WHERE n.nspname = %s AND c.relkind = 'i' AND a.amname = 'gin'",
            (schema,),
        ).fetchone()
        (tsv,) = conn.execute(
            "SELECT coalesce(sum(pg_column_size(tsv)), 0) "
            "+ coalesce(sum(pg_column_size(cjk_tsv)), 0) FROM messages"
        ).fetchone()
    return {
        "messages": int(messages),
        "total_bytes": int(total or 0),
        "index_bytes": int(indexes or 0),
        "gin_bytes": int(gin or 0),
        "tsv_bytes": int(tsv or 0),
        "fts_bytes": int(gin or 0) + int(tsv or 0),
    }


def bare_expression(text: str) -> str:
    """The tsquery text of the bare query: the question read as ours reads it."""
    from langchain_session_recall.backends.postgres.tsquery import to_tsquery_text
    from langchain_session_recall.core.query import parse_query

    q = parse_query(text)
    return to_tsquery_text(q, "strict" if q.explicit else "relaxed")


def bare_sql() -> str:
    from langchain_session_recall.backends.postgres.schema import TS_CONFIG

    return (
        f"SELECT m.id FROM messages m, to_tsquery('{TS_CONFIG}', %s) q WHERE m.tsv @@ q "
        f"ORDER BY ts_rank(m.tsv, q) DESC LIMIT {BARE_LIMIT}"
    )


def worker_search(dsn: str, schema: str, repeats: int, only_ours: bool) -> dict[str, Any]:
    """Ours (the retriever, k=3, end to end) and the bare query, interleaved per query with
    the order rotated each repeat, after a warm-up pass; per-query medians of wall clock and of
    this process's CPU."""
    import corpus
    from timing import interleave, vm

    from langchain_session_recall import PostgresSessionStore, SessionRecallRetriever

    base_rss = vm("VmHWM")
    store = PostgresSessionStore(dsn, schema=schema, read_only=True)
    retriever = SessionRecallRetriever(store=store, k=3)
    queries = [q for _, q in corpus.QUERIES]
    exprs = [bare_expression(q) for q in queries]
    conn = _connect(dsn, schema)
    conn.execute("SET default_transaction_read_only = on")
    sql = bare_sql()

    def ours(i: int) -> int:
        return len(retriever.invoke(queries[i]))

    def bare(i: int) -> int:
        return len(conn.execute(sql, (exprs[i],)).fetchall())

    algos = {"ours": ours} if only_ours else {"ours": ours, "floor": bare}
    out = interleave(algos, len(queries), repeats)
    store.close()
    conn.close()
    return {
        **out,
        "kinds": [k for k, _ in corpus.QUERIES],
        "loadavg": os.getloadavg()[0],
        "peak_rss": vm("VmHWM"),
        "base_rss": base_rss,
    }


def worker_cross(dsn: str, schema: str, sqlite_path: str, repeats: int) -> dict[str, Any]:
    """Ours on PostgreSQL and ours on SQLite (the same corpus), interleaved per query in one
    process: the backends' ratio under the same load, which separate runs minutes apart do
    not share on a busy machine. Wall clock (PostgreSQL's work is in its server)."""
    import corpus
    from timing import interleave

    from langchain_session_recall import (
        PostgresSessionStore,
        SessionRecallRetriever,
        SessionStore,
    )

    queries = [q for _, q in corpus.QUERIES]
    on_pg = SessionRecallRetriever(
        store=PostgresSessionStore(dsn, schema=schema, read_only=True), k=3
    )
    on_sqlite = SessionRecallRetriever(store=SessionStore(sqlite_path, read_only=True), k=3)
    algos = {
        "postgresql": lambda i: len(on_pg.invoke(queries[i])),
        "sqlite": lambda i: len(on_sqlite.invoke(queries[i])),
    }
    return {**interleave(algos, len(queries), repeats), "loadavg": os.getloadavg()[0]}


def worker(name: str, dsn: str, schema: str, args: argparse.Namespace) -> dict[str, Any]:
    """Run the PostgreSQL worker ``name`` (``pg-build``, ``pg-plain``, ...) of ``run.py``."""
    if name == "pg-build":
        return worker_build(dsn, schema, args.size, args.seed, args.batch)
    if name == "pg-plain":
        return worker_build_plain(dsn, schema, args.size, args.seed, args.batch)
    if name == "pg-stats":
        return worker_stats(dsn, schema)
    if name == "pg-search":
        return worker_search(dsn, schema, args.repeats, only_ours=False)
    if name == "pg-cross":
        return worker_cross(dsn, schema, args.db, args.repeats)
    if name == "pg-rss":
        return worker_search(dsn, schema, 1, only_ours=True)
    raise SystemExit(f"unknown worker {name}")
