"""Where a search's time goes: ours against the reference algorithm, one stage turned off at a time.

Usage (from the repository root; ``DB`` is a perf corpus database, e.g. one that
``benchmarks/perf/run.py`` built into its cache directory, opened read-only)::

    python benchmarks/perf/breakdown.py /tmp/lsr-perf/corpus-seed1-10k.db [--passes 3]

Each line is CPU milliseconds per query over the 100-query mix of ``corpus.QUERIES`` (the
best of ``--passes`` passes after a warm-up pass, all in one process on one database):

* ``reference``: the reference algorithm of ``run.py`` (one FTS5 query, roots, three sessions);
* ``retriever``: ``SessionRecallRetriever(k=3)``, what ``run.py`` times as ours;
* ``recall()``: the same work without LangChain's callback layer;
* ``recall(), no redaction``: ``redact=None`` (the retriever's ``redact=False``);
* ``recall(), no redaction, no per-session hits``: also ``hits_per_session=None`` (only the
  best ``hit_limit`` hits of each term compete, as before every matching session did);
* ``search_sessions()``: ranking only, no Documents (per-session hits on).

The differences are what each stage costs; they explain the ratios of ``run.py``.
"""

from __future__ import annotations

import argparse
import functools
import os
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1]), str(HERE)]

import corpus  # noqa: E402
from run import (  # noqa: E402
    corpus_copy,
    corpus_missing,
    reference_expression,
    reference_search,
)

from langchain_session_recall import SessionRecallRetriever, SessionStore  # noqa: E402
from langchain_session_recall.core.redaction import redact_secrets  # noqa: E402
from langchain_session_recall.errors import EmptyQueryError  # noqa: E402
from langchain_session_recall.recall.build import recall  # noqa: E402
from langchain_session_recall.search.pipeline import search_sessions  # noqa: E402
from langchain_session_recall.search.request import SearchRequest  # noqa: E402


def cpu_ms_per_query(run: Callable[[str], object], queries: Sequence[str], passes: int) -> float:
    """CPU ms per query: the best of ``passes`` passes over ``queries`` after a warm-up pass."""
    for q in queries:
        run(q)
    best = float("inf")
    for _ in range(passes):
        start = time.process_time()
        for q in queries:
            run(q)
        best = min(best, (time.process_time() - start) * 1000 / len(queries))
    return best


def stages(store: SessionStore, conn: sqlite3.Connection) -> dict[str, Callable[[str], object]]:
    """What to time, by name: the reference and ours with one stage after another turned off."""
    retriever = SessionRecallRetriever(store=store, k=3)
    expression = functools.cache(reference_expression)  # made in the warm-up pass, as run.py

    def ours(redact: bool, per_session: bool) -> Callable[[str], object]:
        changes = {} if per_session else {"hits_per_session": None}
        return lambda q: recall(
            store, SearchRequest(q, k=3, **changes), redact=redact_secrets if redact else None
        )

    def ranking(q: str) -> object:
        try:
            return search_sessions(store, SearchRequest(q, k=3))
        except EmptyQueryError:
            return None

    return {
        "reference": lambda q: reference_search(conn, store, expression(q)),
        "retriever": retriever.invoke,
        "recall()": ours(redact=True, per_session=True),
        "recall(), no redaction": ours(redact=False, per_session=True),
        "recall(), no redaction, no per-session hits": ours(redact=False, per_session=False),
        "search_sessions()": ranking,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("db", type=Path, help="a perf corpus database (copied, never written)")
    parser.add_argument("--passes", type=int, default=3)
    args = parser.parse_args(argv)
    if corpus_missing(args.db):
        return 0
    with corpus_copy(args.db, "perf-breakdown-") as (store, conn):
        queries = [q for _, q in corpus.QUERIES]
        print(f"{args.db.name}, load average {os.getloadavg()[0]:.2f}")
        reference = 0.0
        for name, run in stages(store, conn).items():
            ms = cpu_ms_per_query(run, queries, args.passes)
            reference = reference or ms
            print(f"{name:48s} {ms:7.2f} ms  {ms / reference:5.2f}x the reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
