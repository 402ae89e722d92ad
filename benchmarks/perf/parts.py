"""What a search costs beside the bare query, per query: the bare query, ranking alone, the
retriever, and the seed's algorithm, timed in turn for each query of the mix.

Usage (from the repository root; ``DB`` is a perf corpus database that
``benchmarks/perf/run.py`` built into its cache directory; it is copied, never written)::

    python benchmarks/perf/parts.py /work/perfcache/corpus-seed1-200k.db [--repeats 3]

For each of the 100 queries of ``corpus.QUERIES`` the four are timed one after another, their
order rotated each pass (``timing.interleave``, as ``run.py`` times ours, the floor and the
reference), so load moves them together; CPU time of this process, the median of
``--repeats`` per query. Printed: p50 (the median) / p95 over the mix as ``run.py`` takes
them, their ratios to the bare query's and to the seed's, then the median per query kind. What it shows (issue 31): the bare query
(``messages_fts MATCH q ORDER BY rank LIMIT 50``) against ``search_sessions`` (ranking,
lineage, no text) and ``SessionRecallRetriever(k=3)`` (three redacted Documents); the
difference of the last two is what building the Documents costs.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1]), str(HERE)]

import corpus  # noqa: E402
from run import (  # noqa: E402
    FLOOR_SQL,
    HIT_LIMIT_FLOOR,
    corpus_copy,
    corpus_missing,
    percentile,
    reference_expression,
    reference_search,
)
from timing import interleave  # noqa: E402

from langchain_session_recall import SessionRecallRetriever, SessionStore  # noqa: E402
from langchain_session_recall.errors import EmptyQueryError  # noqa: E402
from langchain_session_recall.search.pipeline import search_sessions  # noqa: E402
from langchain_session_recall.search.request import SearchRequest  # noqa: E402


def timers(
    store: SessionStore, conn: sqlite3.Connection, queries: Sequence[str]
) -> dict[str, Callable[[int], object]]:
    """What is timed, by name, each a function of the query's index."""
    expressions = [reference_expression(q) for q in queries]
    retriever = SessionRecallRetriever(store=store, k=3)

    def ranking(i: int) -> object:
        try:
            return search_sessions(store, SearchRequest(queries[i], k=3))
        except EmptyQueryError:
            return None

    return {
        "bare query": lambda i: conn.execute(
            FLOOR_SQL, (expressions[i], HIT_LIMIT_FLOOR)
        ).fetchall(),
        "search_sessions": ranking,
        "retriever (3 Documents)": lambda i: retriever.invoke(queries[i]),
        "seed algorithm": lambda i: reference_search(conn, store, expressions[i]),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("db", type=Path, help="a perf corpus database (copied, never written)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    if corpus_missing(args.db):
        return 0
    kinds = [k for k, _ in corpus.QUERIES]
    queries = [q for _, q in corpus.QUERIES]
    with corpus_copy(args.db, "perf-parts-") as (store, conn):
        load = os.getloadavg()[0]
        timed = interleave(timers(store, conn, queries), len(queries), args.repeats)
    ms = {name: [t * 1000 for t in per] for name, per in timed["cpu_medians"].items()}
    p50 = {name: statistics.median(v) for name, v in ms.items()}
    p95 = {name: percentile(v, 0.95) for name, v in ms.items()}
    bare, seed = "bare query", "seed algorithm"
    print(f"{args.db.name}: CPU ms per query, load average {load:.2f} -> {os.getloadavg()[0]:.2f}")
    head = ("p50", "p95", "p50 / bare", "p95 / bare", "p50 / seed")
    print(f"{'':26s} {head[0]:>8s} {head[1]:>8s}" + "".join(f" {h:>11s}" for h in head[2:]))
    for name in ms:
        ratios = (p50[name] / p50[bare], p95[name] / p95[bare], p50[name] / p50[seed])
        print(
            f"{name:26s} {p50[name]:8.2f} {p95[name]:8.2f}"
            + "".join(f" {r:10.2f}x" for r in ratios)
        )
    print("median per query kind (" + " / ".join(ms) + "):")
    for kind in sorted(set(kinds)):
        index = [i for i, k in enumerate(kinds) if k == kind]
        cells = " / ".join(f"{statistics.median(ms[name][i] for i in index):.1f}" for name in ms)
        print(f"  {kind:10s} {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
