"""Time of a search for a few pathological 10,000-term queries (issue 18 §6).

Builds the embedded demo store (SQLite in memory, or PostgreSQL with ``--dsn``), runs each
query once through ``SessionRecallRetriever`` after one warm-up search, and prints the wall
time. To compare with older code, run it with ``PYTHONPATH`` pointing at that checkout from
another directory.

    python benchmarks/pathological_queries.py [--dsn postgresql://...] [--terms 10000]
"""

from __future__ import annotations

import argparse
import time

from langchain_session_recall import SessionRecallRetriever, SessionStore
from langchain_session_recall.demo import load_demo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", help="a PostgreSQL DSN (a throwaway schema is used)")
    parser.add_argument("--terms", type=int, default=10_000)
    args = parser.parse_args()
    if args.dsn:
        from langchain_session_recall.backends.postgres.store import PostgresSessionStore

        schema = f"bench_pq_{int(time.time())}"
        store: object = PostgresSessionStore(args.dsn, schema=schema)
    else:
        store = SessionStore(":memory:")
    load_demo(store)  # type: ignore[arg-type]
    retriever = SessionRecallRetriever(store=store)  # type: ignore[arg-type]
    retriever.invoke("nginx")  # warm-up
    n = args.terms
    queries = {
        f"{n:,} prefix terms": " ".join(f"pre{i}*" for i in range(n)),
        f"{n:,} words": " ".join(f"word{i}" for i in range(n)),
        f"{n:,} prefixes joined by OR": " OR ".join(f"pre{i}*" for i in range(n)),
    }
    try:
        for name, query in queries.items():
            start = time.perf_counter()
            retriever.invoke(query)
            print(f"{name}: {time.perf_counter() - start:.2f} s")
    finally:
        store.close()  # type: ignore[attr-defined]
        if args.dsn:
            import psycopg
            from psycopg import sql

            with psycopg.connect(args.dsn, autocommit=True) as conn:
                conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


if __name__ == "__main__":
    main()
