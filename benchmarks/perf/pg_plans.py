"""PostgreSQL's plan per term (``backends/postgres/plans.py``) against the planner's plan for
every term, and SQLite beside them: the three interleaved per query in one process.

Usage (from the repository root; a PostgreSQL corpus schema built by ``run.py --worker
pg-build`` and the SQLite corpus of the same seed and size, both read-only)::

    python benchmarks/perf/pg_plans.py --pg-dsn DSN --pg-schema perf_seed1_1m \\
        --db /work/perfcache/corpus-seed1-1M.db [--repeats 3]

``pg_before`` is the store with the plan choice switched off (no ``EXPLAIN``: the statements
as they were before it), ``pg_after`` the store as it is, ``sqlite`` the SQLite store; each a
``SessionRecallRetriever(k=3)`` over the 100-query mix of ``corpus.QUERIES``. Printed: p50 and
p95 of the per-query wall-clock medians (ms), the client's CPU p50, each against SQLite's, and
the p50 per query kind, with the load average at the start and the end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[2])]

import corpus  # noqa: E402
from timing import interleave  # noqa: E402

from langchain_session_recall import (  # noqa: E402
    PostgresSessionStore,
    SessionRecallRetriever,
    SessionStore,
)


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def _report(out: dict[str, Any]) -> None:
    wall = {k: [x * 1000 for x in v] for k, v in out["medians"].items()}
    cpu = {k: [x * 1000 for x in v] for k, v in out["cpu_medians"].items()}
    lite50, lite95 = statistics.median(wall["sqlite"]), _pct(wall["sqlite"], 95)
    print("load (1 / 5 / 15 min) start", out["load"][0], "end", out["load"][1])
    for arm, ms in wall.items():
        p50, p95 = statistics.median(ms), _pct(ms, 95)
        print(
            f"{arm:10} wall p50 {p50:7.1f} p95 {p95:7.1f}  client CPU p50 "
            f"{statistics.median(cpu[arm]):6.1f}  / SQLite p50 {p50 / lite50:.2f} "
            f"p95 {p95 / lite95:.2f}"
        )
    kinds = [kind for kind, _ in corpus.QUERIES]
    for kind in corpus.QUERY_KINDS:
        per = {
            arm: statistics.median([t for t, k in zip(ms, kinds, strict=True) if k == kind])
            for arm, ms in wall.items()
        }
        print(f"  {kind:9} p50 " + "  ".join(f"{a} {t:.0f}" for a, t in per.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pg-dsn", default=os.environ.get("SESSION_RECALL_PG_DSN"))
    parser.add_argument("--pg-schema", required=True)
    parser.add_argument("--db", required=True, help="the SQLite corpus of the same seed and size")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if not args.pg_dsn:
        sys.exit("pg_plans.py: no PostgreSQL server: pass --pg-dsn or set SESSION_RECALL_PG_DSN")
    if not Path(args.db).is_file():
        sys.exit(f"pg_plans.py: no SQLite corpus at {args.db} (build it with run.py)")
    planner_only = PostgresSessionStore(args.pg_dsn, schema=args.pg_schema, read_only=True)
    planner_only._bitmap_first = lambda conn, tsquery: False  # type: ignore[method-assign]
    retrievers = {
        "pg_before": SessionRecallRetriever(store=planner_only, k=3),
        "pg_after": SessionRecallRetriever(
            store=PostgresSessionStore(args.pg_dsn, schema=args.pg_schema, read_only=True), k=3
        ),
        "sqlite": SessionRecallRetriever(store=SessionStore(args.db, read_only=True), k=3),
    }
    queries = [q for _, q in corpus.QUERIES]
    start = [round(x, 1) for x in os.getloadavg()]
    out = interleave(
        {name: (lambda i, r=r: len(r.invoke(queries[i]))) for name, r in retrievers.items()},
        len(queries),
        args.repeats,
    )
    out["load"] = [start, [round(x, 1) for x in os.getloadavg()]]
    _report(out)


if __name__ == "__main__":
    main()
