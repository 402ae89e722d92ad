"""Performance benchmark: search latency against the bare full-text query, ingest against
plain SQL, index size and memory, from 10k to 1M messages, on SQLite and PostgreSQL.

Usage (from the repository root)::

    python benchmarks/perf/run.py --cache-dir /work/perfcache --pg-server /work/perfcache/pg \
        --no-bm25                                 # docs/benchmarks-perf.md's figures
    python benchmarks/perf/run.py                 # SQLite only: 10k, 200k, 1M
    python benchmarks/perf/run.py --quick         # 10k only, under a minute (CI smoke test;
                                                  # writes its report beside the cache)
    python benchmarks/perf/run.py --sizes 10k,200k --repeats 5 --pg-dsn postgresql://...
    python benchmarks/perf/run.py --sizes 10k,100k --compare-with ../main   # search, before/after
    python benchmarks/perf/run.py --report-only   # re-render the last run's saved results

Rewrites the part of ``docs/benchmarks-perf.md`` between its ``perf-run`` markers (what is
written around them stays) and ``docs/perf-latency.png``. Corpora are generated once into
``--cache-dir`` (default ``/tmp/lsr-perf``; SQLite files keyed by seed and size, PostgreSQL
schemas of the ``--pg-dsn`` database, both rebuilt when the DDL changes) and reused. Every
measurement runs in a fresh subprocess so sizes do not contaminate each other's memory or
caches; latencies are medians over repeats, and every comparison is a ratio of things
measured in the same run (ours and the bare query interleaved per query in one process).
``--pg-server DIR`` starts ``scripts/pg-test-server`` in ``DIR`` (or reuses it while it runs).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CODE_ENV = "SESSION_RECALL_BENCH_CODE"  # the checkout whose package a worker imports
sys.path[:0] = [os.environ.get(CODE_ENV, str(ROOT)), str(HERE)]

import backends_report  # noqa: E402  (the tables and plot of both backends)
import pg  # noqa: E402  (the PostgreSQL workers)
from timing import (  # noqa: E402  (what both backends' workers share)
    PLAIN_STARTED,
    api_ingest,
    interleave,
    plain_session_row,
    timed_ingest,
    vm,
)

REFERENCE_LIMIT = 50
HIT_LIMIT_FLOOR = REFERENCE_LIMIT  # the floor: asking the index, nothing ranked (issue 31)
FLOOR_SQL = "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rank LIMIT ?"
"""The bare query (the floor): the index asked once, ``HIT_LIMIT_FLOOR`` row ids by rank."""


# ----------------------------------------------------------------------------- helpers


def _size_label(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}k"
    return str(n)


def _parse_size(text: str) -> int:
    text = text.strip().lower()
    mult = {"k": 1000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("km")) * mult)


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (the nearest rank; a p95 here, the median is
    ``statistics.median``)."""
    ordered = sorted(values)
    idx = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[idx]


def machine() -> dict[str, Any]:
    model = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "sqlite": sqlite3.sqlite_version,
        "python": platform.python_version(),
        "loadavg": os.getloadavg(),
        "mem_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "code": _library_commit(Path(os.environ.get(CODE_ENV, str(ROOT)))),
        "started": time.time(),
    }


def _library_commit(checkout: Path) -> str:
    """The short hash of the last commit that changed the library in ``checkout``."""
    proc = subprocess.run(
        ["git", "-C", str(checkout), "log", "-1", "--format=%h", "--", "langchain_session_recall"],
        capture_output=True,
        text=True,
        check=False,
    )
    dirty = subprocess.run(
        ["git", "-C", str(checkout), "status", "--porcelain", "--", "langchain_session_recall"],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout.strip() + (" with uncommitted changes" if dirty.stdout.strip() else "")


# ----------------------------------------------------------------------------- workers


def worker_build(path: str, size: int, seed: int, fts: bool, batch: int = 1) -> dict[str, Any]:
    """Generate the corpus and ingest it through the public API; time only the API calls.

    ``batch`` > 1 groups that many sessions per ``store.transaction()`` block (a bulk load);
    otherwise each ``add_session``/``add_messages`` call commits on its own (a live agent).
    """
    from langchain_session_recall import SessionStore

    for suffix in ("", "-wal", "-shm"):
        Path(path + suffix).unlink(missing_ok=True)
    store = SessionStore(path)
    if not fts:  # what the FTS triggers cost: the same ingest with them removed
        conn = store._conn()
        conn.execute("DROP TRIGGER messages_fts_ai")
    out = api_ingest(store, seed, size, batch)
    store._conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return out


_PLAIN_INSERT_SESSION = (
    "INSERT INTO sessions (id, source, user_id, model, title, parent_session_id, started_at, "
    "end_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_PLAIN_INSERT_HEADER = "INSERT INTO session_headers (session_id, header) VALUES (?, ?)"
_PLAIN_INSERT_MESSAGE = (
    "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, "
    "timestamp, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_PLAIN_INSERT_CJK = "INSERT INTO messages_cjk (message_id, text) VALUES (?, ?)"
_PLAIN_COUNT = "UPDATE sessions SET message_count = ? WHERE id = ?"


class _PlainSessionWriter:
    """One session written with plain SQL, as a careful user writes it by hand: one ``INSERT``
    for the session and one for its header, ``executemany`` for the messages and their CJK
    copies, the session's message count. The rows are the library's own (``to_row``,
    ``bigram_text``, ``session_header``), computed here as the library computes them inside its
    calls."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        from langchain_session_recall.core.cjk import bigram_text, has_cjk
        from langchain_session_recall.core.headers import session_header
        from langchain_session_recall.messages import to_row

        self.conn = conn
        self.bigram_text, self.has_cjk = bigram_text, has_cjk
        self.session_header, self.to_row = session_header, to_row

    def write(self, spec: Any) -> None:
        conn = self.conn
        row = plain_session_row(spec)
        conn.execute(_PLAIN_INSERT_SESSION, row)
        header = self.session_header(spec.kwargs.get("title"), row[PLAIN_STARTED])
        conn.execute(_PLAIN_INSERT_HEADER, (spec.session_id, header))
        rows = [self.to_row(m) for m in spec.messages]
        conn.executemany(
            _PLAIN_INSERT_MESSAGE,
            [
                (
                    spec.session_id,
                    r.role,
                    r.content,
                    r.tool_call_id,
                    r.tool_calls,
                    r.tool_name,
                    r.timestamp,
                    n,
                )
                for n, r in enumerate(rows)
            ],
        )
        last = conn.execute("SELECT last_insert_rowid()").fetchone()[0]
        first = last - len(rows) + 1
        conn.executemany(
            _PLAIN_INSERT_CJK,
            [
                (first + n, self.bigram_text(r.content))
                for n, r in enumerate(rows)
                if r.content and not r.content.isascii() and self.has_cjk(r.content)
            ],
        )
        conn.execute(_PLAIN_COUNT, (len(rows), spec.session_id))


def worker_build_plain(path: str, size: int, seed: int, batch: int = 1) -> dict[str, Any]:
    """The baseline of the ingest ratios: the same rows written with plain SQL into the same
    schema with the same triggers (a store creates the file, then closes).

    Each session as :class:`_PlainSessionWriter` writes it, one commit per session (``batch``
    1) or per ``batch`` sessions.
    """
    import corpus

    from langchain_session_recall import SessionStore

    for suffix in ("", "-wal", "-shm"):
        Path(path + suffix).unlink(missing_ok=True)
    SessionStore(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = NORMAL")
    writer = _PlainSessionWriter(conn)

    def write(group: list[Any]) -> None:
        conn.execute("BEGIN IMMEDIATE")
        for spec in group:
            writer.write(spec)
            if batch == 1:
                conn.execute("COMMIT")
                conn.execute("BEGIN IMMEDIATE")
        conn.execute("COMMIT")

    out = timed_ingest(corpus.generate(seed, size), batch, write)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return out


def worker_stats(path: str) -> dict[str, Any]:
    """File size and bytes per object class (dbstat)."""
    conn = sqlite3.connect(path)
    groups = {"content": 0, "fts": 0, "btree_indexes": 0, "other": 0}
    by_name: dict[str, int] = {}
    for name, size in conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
        by_name[name] = size
        if name in ("messages", "sessions", "messages_cjk"):
            groups["content"] += size
        elif name.startswith(("messages_fts", "messages_cjk_fts")):
            groups["fts"] += size
        elif name.startswith(("idx_", "sqlite_autoindex")):
            groups["btree_indexes"] += size
        else:
            groups["other"] += size
    conn.close()
    return {"file_bytes": Path(path).stat().st_size, "groups": groups, "by_name": by_name}


def read_only_uri(path: str) -> str:
    """A read-only SQLite URI for ``path``, written here (not imported) so that a worker can
    run an older checkout of the package (``--compare-with``)."""
    from urllib.parse import quote

    return f"file:{quote(str(Path(path).resolve()))}?mode=ro"


def corpus_missing(db: Path) -> bool:
    """Whether ``db`` is no perf corpus file (saying how to build one): a script that reads a
    corpus then ends without measuring."""
    if db.is_file():
        return False
    print(f"no database at {db}: build one with python benchmarks/perf/run.py --quick")
    return True


@contextlib.contextmanager
def corpus_copy(db: Path, prefix: str) -> Iterator[tuple[Any, sqlite3.Connection]]:
    """The store on a temporary copy of the perf corpus ``db`` (a writable open may migrate an
    older file: the corpus itself is never written) and a read-only connection to the copy,
    both closed and the copy removed on the way out."""
    from langchain_session_recall import SessionStore  # (the package of the caller's checkout)

    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        copy = Path(tmp) / "corpus.db"
        shutil.copy(db, copy)
        store = SessionStore(copy)
        conn = sqlite3.connect(read_only_uri(str(copy)), uri=True)
        try:
            yield store, conn
        finally:
            conn.close()
            store.close()


def reference_expression(text: str) -> str:
    """The FTS5 expression the floor and the reference query (the query read as ours reads it)."""
    from langchain_session_recall.backends.sqlite.fts import to_fts5
    from langchain_session_recall.core.query import parse_query

    q = parse_query(text)
    return to_fts5(q, "strict" if q.explicit else "relaxed")


REFERENCE_SQL = (
    "SELECT m.id, m.session_id FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
    "JOIN sessions s ON s.id = m.session_id WHERE messages_fts MATCH ? "
    "AND s.source NOT IN ('tool') ORDER BY rank LIMIT ?"
)


def reference_search(conn: sqlite3.Connection, store: Any, expression: str) -> int:
    """The reference algorithm (Hermes-style): 50 FTS rows, one ``get_session`` per hop to find
    each hit's root, the first hit per root, then the whole root session loaded and cut around
    that hit. Returns how many roots it found."""
    from langchain_session_recall.recall.transcript import (
        EARLIER_MARKER,
        LATER_MARKER,
        format_transcript,
        window_bounds,
    )

    first: dict[str, int] = {}
    for mid, sid in conn.execute(REFERENCE_SQL, (expression, REFERENCE_LIMIT)).fetchall():
        root, hops = sid, 0
        while hops < 256:
            s = store.get_session(root)
            if s is None or s.parent_session_id is None:
                break
            root, hops = s.parent_session_id, hops + 1
        first.setdefault(root, mid)
    for root, mid in list(first.items())[:3]:
        t = format_transcript(store.get_messages(root))
        start, end = window_bounds(t.text, t.offsets.get(mid, 0), 100_000)
        _ = EARLIER_MARKER * (start > 0) + t.text[start:end] + LATER_MARKER * (end < len(t.text))
    return len(first)


def worker_search(path: str, repeats: int, only_ours: bool) -> dict[str, Any]:
    """Time ours end to end, the bare FTS5 floor and the reference algorithm, per query."""
    import corpus

    from langchain_session_recall import SessionRecallRetriever, SessionStore

    base_rss = vm("VmHWM")
    store = SessionStore(path)
    retriever = SessionRecallRetriever(store=store, k=3)
    queries = [q for _, q in corpus.QUERIES]
    exprs = [reference_expression(q) for q in queries]
    conn = sqlite3.connect(read_only_uri(path), uri=True)

    def ours(i: int) -> int:
        return len(retriever.invoke(queries[i]))

    def floor(i: int) -> int:
        return len(conn.execute(FLOOR_SQL, (exprs[i], HIT_LIMIT_FLOOR)).fetchall())

    def reference(i: int) -> int:
        return reference_search(conn, store, exprs[i])

    algos = {"ours": ours} if only_ours else {"ours": ours, "floor": floor, "reference": reference}
    timed = interleave(algos, len(queries), repeats)
    return {
        **timed,
        "kinds": [k for k, _ in corpus.QUERIES],
        "loadavg": os.getloadavg()[0],
        "peak_rss": vm("VmHWM"),
        "base_rss": base_rss,
        "package": str(Path(sys.modules["langchain_session_recall"].__file__ or "").parent),
    }


def worker_bm25(path: str, repeats: int) -> dict[str, Any]:
    """What a user would build instead: BM25Retriever over one Document per root session."""
    import warnings

    import corpus

    warnings.simplefilter("ignore")
    from langchain_community.retrievers import BM25Retriever
    from langchain_core.documents import Document

    from langchain_session_recall import SessionStore
    from langchain_session_recall.recall.transcript import format_transcript

    base_rss = vm("VmHWM")
    store = SessionStore(path)
    conn = sqlite3.connect(read_only_uri(path), uri=True)
    roots = [
        r[0]
        for r in conn.execute(
            "SELECT id FROM sessions WHERE parent_session_id IS NULL AND source <> 'tool'"
        )
    ]
    t0 = time.perf_counter()
    docs = [
        Document(
            page_content=format_transcript(store.chain_messages(root), root_id=root).text,
            metadata={"session_id": root},
        )
        for root in roots
    ]
    load = time.perf_counter() - t0
    t0 = time.perf_counter()
    retriever = BM25Retriever.from_documents(docs, k=3)
    build = time.perf_counter() - t0
    queries = [q for _, q in corpus.QUERIES]
    for q in queries:
        retriever.invoke(q)
    times: list[list[float]] = [[] for _ in queries]
    cpu: list[list[float]] = [[] for _ in queries]
    for _ in range(repeats):
        for i, q in enumerate(queries):
            t0, c0 = time.perf_counter(), time.process_time()
            retriever.invoke(q)
            times[i].append(time.perf_counter() - t0)
            cpu[i].append(time.process_time() - c0)
    return {
        "documents": len(docs),
        "load_seconds": load,
        "build_seconds": build,
        "medians": [statistics.median(t) for t in times],
        "cpu_medians": [statistics.median(t) for t in cpu],
        "peak_rss": vm("VmHWM"),
        "base_rss": base_rss,
    }


def worker_main(args: argparse.Namespace) -> None:
    if args.worker == "build":
        out = worker_build(args.db, args.size, args.seed, fts=not args.no_fts, batch=args.batch)
    elif args.worker == "plain":
        out = worker_build_plain(args.db, args.size, args.seed, batch=args.batch)
    elif args.worker == "stats":
        out = worker_stats(args.db)
    elif args.worker == "search":
        out = worker_search(args.db, args.repeats, only_ours=False)
    elif args.worker == "rss":
        out = worker_search(args.db, 1, only_ours=True)
    elif args.worker == "bm25":
        out = worker_bm25(args.db, args.repeats)
    elif args.worker.startswith("pg-"):
        out = pg.worker(args.worker, args.pg_dsn, args.pg_schema, args)
    else:
        raise SystemExit(f"unknown worker {args.worker}")
    print("RESULT " + json.dumps(out))


# ----------------------------------------------------------------------------- orchestration


def _spawn(*argv: str, code: Path = ROOT) -> dict[str, Any]:
    """Run a worker of this script in a fresh process; ``code``: the checkout whose package it
    imports (another one for a before/after comparison)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), *argv]
    env = {**os.environ, "PYTHONPATH": f"{code}:{HERE}", CODE_ENV: str(code)}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"worker {argv} failed:\n{proc.stderr[-4000:]}")
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT ") :])  # type: ignore[no-any-return]


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _build(db: Path, size: int, seed: int, *flags: str, batch: int = 1) -> dict[str, Any]:
    """Build ``db`` in a worker process (see :func:`worker_build`); its ingest figures."""
    argv = ["--db", str(db), "--size", str(size), "--seed", str(seed), "--batch", str(batch)]
    return _spawn("--worker", "build", *argv, *flags)


def _scratch_build(db: Path, size: int, seed: int, *flags: str, batch: int = 1) -> dict[str, Any]:
    """An ingest variant measured on a throwaway database, deleted afterwards."""
    try:
        return _build(db, size, seed, *flags, batch=batch)
    finally:
        for suffix in ("", "-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)


def _ingest_runs(size: int, args: argparse.Namespace) -> int:
    """Repeats of each ingest variant: ``--ingest-repeats`` below 100k messages, one above."""
    return args.ingest_repeats if size < 100_000 else 1


def compare_ingest(
    label: str, runs: int, variants: dict[str, Callable[[], dict[str, Any]]]
) -> dict[str, Any]:
    """Run every ingest variant (ours and plain SQL, a commit per session and in bulk) one
    after another, ``runs`` times, in this run; per variant the median rates, the figures of
    its last run and the load average when it ended."""
    found: dict[str, list[dict[str, Any]]] = {name: [] for name in variants}
    for n in range(runs):
        for name, build in variants.items():
            _log(f"{label}: ingest {name} ({n + 1}/{runs})")
            found[name].append({**build(), "loadavg": os.getloadavg()[0]})
    return {
        name: {
            **figures[-1],
            "ingest_rate": statistics.median(f["ingest_rate"] for f in figures),
            "ingest_cpu_rate": statistics.median(f["ingest_cpu_rate"] for f in figures),
            "runs": len(figures),
            "loadavg": max(f["loadavg"] for f in figures),
        }
        for name, figures in found.items()
    }


def _sqlite_corpus(db: Path, size: int, args: argparse.Namespace) -> dict[str, Any]:
    """The cached corpus database the searches read, built once per seed, size and DDL; the
    figures of the build that made it."""
    meta = db.with_suffix(".json")
    fresh = db.exists() and meta.exists() and not args.rebuild
    if fresh and (cached := json.loads(meta.read_text())).get("schema") == _schema_key():
        return cached["builds"][-1]  # type: ignore[no-any-return]
    _log(f"{db.name}: building the corpus")
    build = _build(db, size, args.seed, batch=args.batch)
    meta.write_text(json.dumps({"schema": _schema_key(), "builds": [build]}))
    return build


def _plain_scratch(db: Path, size: int, seed: int, batch: int) -> dict[str, Any]:
    argv = ["--db", str(db), "--size", str(size), "--seed", str(seed), "--batch", str(batch)]
    try:
        return _spawn("--worker", "plain", *argv)
    finally:
        for suffix in ("", "-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)


def _sqlite_ingest(label: str, size: int, args: argparse.Namespace) -> dict[str, Any]:
    """Ours and plain SQL, a commit per session and in bulk, on scratch databases; the
    figures under the keys the SQLite report reads."""
    cache, seed, batch = Path(args.cache_dir), args.seed, args.batch
    scratch = cache / f"scratch-{label}.db"
    ingest = compare_ingest(
        label,
        _ingest_runs(size, args),
        {
            "ours": lambda: _scratch_build(scratch, size, seed),
            "plain": lambda: _plain_scratch(scratch, size, seed, 1),
            "ours_bulk": lambda: _scratch_build(scratch, size, seed, batch=batch),
            "plain_bulk": lambda: _plain_scratch(scratch, size, seed, batch),
        },
    )
    return {
        "ingest": ingest,
        "build": ingest["ours"],
        "ingest_rate": ingest["ours"]["ingest_rate"],
        "ingest_cpu_rate": ingest["ours"]["ingest_cpu_rate"],
        "ingest_runs": ingest["ours"]["runs"],
        "plain_1": ingest["plain"],
        f"plain_{batch}": ingest["plain_bulk"],
        "ingest_batch": batch,
        "ingest_rate_batch": ingest["ours_bulk"]["ingest_rate"],
        "ingest_cpu_rate_batch": ingest["ours_bulk"]["ingest_cpu_rate"],
    }


def measure_size(size: int, args: argparse.Namespace) -> dict[str, Any]:
    cache = Path(args.cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    label = _size_label(size)
    db = cache / f"corpus-seed{args.seed}-{label}.db"
    res: dict[str, Any] = {"size": size, "label": label, "backend": "sqlite"}
    res["build"] = _sqlite_corpus(db, size, args)
    if size <= args.ingest_max:
        res.update(_sqlite_ingest(label, size, args))
    else:
        _log(f"{label}: ingest not compared (--ingest-max)")
        res["ingest"] = {}
    if size <= args.no_fts_max:
        _log(f"{label}: ingest without FTS triggers")
        nofts = _scratch_build(cache / f"scratch-nofts-{label}.db", size, args.seed, "--no-fts")
        res["ingest_rate_no_fts"] = nofts["ingest_rate"]
        res["ingest_cpu_rate_no_fts"] = nofts["ingest_cpu_rate"]
    _log(f"{label}: database size")
    res["stats"] = _spawn("--worker", "stats", "--db", str(db))
    repeats = args.repeats if size < 1_000_000 else max(3, args.repeats // 2 + 1)
    _log(f"{label}: search latency ({repeats} repeats)")
    res["search"] = _spawn("--worker", "search", "--db", str(db), "--repeats", str(repeats))
    _log(f"{label}: peak RSS of a search process")
    res["rss"] = _spawn("--worker", "rss", "--db", str(db))
    if not args.no_bm25:
        _log(f"{label}: BM25Retriever")
        res["bm25"] = _spawn("--worker", "bm25", "--db", str(db), "--repeats", "3")
    return res


def measure_size_pg(size: int, args: argparse.Namespace) -> dict[str, Any]:
    """The PostgreSQL figures of one size: ingest against plain SQL (scratch schemas), sizes,
    ours against the bare tsvector query, peak RSS of the search process (the client's: the
    server's memory is PostgreSQL's own configuration)."""
    label = _size_label(size)
    dsn = args.pg_dsn
    schema = pg.schema_for(args.seed, label)
    res: dict[str, Any] = {"size": size, "label": label, "backend": "postgresql"}
    common = ["--pg-dsn", dsn, "--size", str(size), "--seed", str(args.seed)]
    if args.rebuild or not pg.cached_builds(dsn, schema):
        _log(f"{label}: building the PostgreSQL corpus ({schema})")
        build = _spawn("--worker", "pg-build", *common, "--pg-schema", schema,
                       "--batch", str(args.batch))  # fmt: skip
        pg.save_builds(dsn, schema, [build])
    scratch = pg.schema_for(args.seed, f"scratch_{label}")

    def variant(worker: str, batch: int) -> Callable[[], dict[str, Any]]:
        def run() -> dict[str, Any]:
            try:
                return _spawn("--worker", worker, *common, "--pg-schema", scratch,
                              "--batch", str(batch))  # fmt: skip
            finally:
                pg.drop_schema(dsn, scratch)

        return run

    if size > args.pg_ingest_max:
        _log(f"{label} postgresql: ingest not compared (--pg-ingest-max)")
        res["ingest"] = {}
    else:
        res["ingest"] = _pg_ingest(label, size, args, variant)
    _log(f"{label} postgresql: sizes")
    res["stats"] = _spawn("--worker", "pg-stats", *common, "--pg-schema", schema)
    repeats = args.repeats if size < 1_000_000 else max(3, args.repeats // 2 + 1)
    _log(f"{label} postgresql: search latency ({repeats} repeats)")
    res["search"] = _spawn("--worker", "pg-search", *common, "--pg-schema", schema,
                           "--repeats", str(repeats))  # fmt: skip
    _log(f"{label} postgresql: peak RSS of a search process")
    res["rss"] = _spawn("--worker", "pg-rss", *common, "--pg-schema", schema)
    lite = Path(args.cache_dir) / f"corpus-seed{args.seed}-{label}.db"
    _log(f"{label}: ours on PostgreSQL and on SQLite, interleaved ({repeats} repeats)")
    res["cross"] = _spawn("--worker", "pg-cross", *common, "--pg-schema", schema,
                          "--db", str(lite), "--repeats", str(repeats))  # fmt: skip
    return res


def _pg_ingest(
    label: str,
    size: int,
    args: argparse.Namespace,
    variant: Callable[[str, int], Callable[[], dict[str, Any]]],
) -> dict[str, Any]:
    return compare_ingest(
        f"{label} postgresql",
        _ingest_runs(size, args),
        {
            "ours": variant("pg-build", 1),
            "plain": variant("pg-plain", 1),
            "ours_bulk": variant("pg-build", args.batch),
            "plain_bulk": variant("pg-plain", args.batch),
        },
    )


def _pg_dsn(args: argparse.Namespace) -> str | None:
    """The DSN of ``--pg-dsn``, or of the test server ``--pg-server DIR`` (started when it is
    not running; a restart wipes DIR, and the corpora are built again)."""
    if args.pg_server:
        script = ROOT / "scripts" / "pg-test-server"
        proc = subprocess.run([str(script), "start", args.pg_server], capture_output=True,
                              text=True, check=True)  # fmt: skip
        return proc.stdout.strip().splitlines()[-1]
    return args.pg_dsn  # type: ignore[no-any-return]


def compare(sizes: list[int], before: Path, args: argparse.Namespace) -> str:
    """Search latency of this checkout and of ``before`` (another checkout of the package), on
    the same cached databases, in one run: per size, the search worker of each, alternating
    ``rounds`` times; CPU p50/p95 of ours and the reference, medians over the rounds."""
    rows = [
        "| messages | code | ours p50 | ours p95 | reference p50 | ours / reference (p50) "
        "| floor p50 | floor p95 | ours / floor (p50) | ours / floor (p95) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for size in sizes:
        label = _size_label(size)
        dbs = _compared_databases(Path(args.cache_dir), label, size, args.seed, before)
        repeats = args.repeats if size < 1_000_000 else max(3, args.repeats // 2 + 1)
        runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
        for n in range(args.rounds):
            order = [("after", ROOT), ("before", before)]
            for name, code in order if n % 2 == 0 else order[::-1]:
                _log(f"{label}: search latency, {name} (round {n + 1}/{args.rounds})")
                found = _spawn("--worker", "search", "--db", str(dbs[name]), "--repeats",
                               str(repeats), code=code)  # fmt: skip
                _log(f"{label}: {name} searched with {found['package']}")
                runs[name].append(summarize({"search": found})["cpu"])
        for name in ("before", "after"):
            cpu = {
                algo: {q: statistics.median(r[algo][q] for r in runs[name]) for q in ("p50", "p95")}
                for algo in ("ours", "reference", "floor")
            }
            ours, ref, floor = (cpu[a]["p50"] for a in ("ours", "reference", "floor"))
            rows.append(
                f"| {label} | {name} | {_ms(ours)} | {_ms(cpu['ours']['p95'])} | {_ms(ref)} "
                f"| {ours / ref:.2f} | {_ms(floor)} | {_ms(cpu['floor']['p95'])} "
                f"| {ours / floor:.2f} | {cpu['ours']['p95'] / cpu['floor']['p95']:.2f} |"
            )
    return "\n".join(rows)


def _compared_databases(
    cache: Path, label: str, size: int, seed: int, before: Path
) -> dict[str, Path]:
    """The corpus of one size for each side of a comparison: built by the ``before`` code (the
    reference: an older schema than ours, which would refuse a file ours made), and a copy of
    it for this checkout, which brings it up to its own schema in place when it opens it."""
    import shutil

    dbs = {name: cache / f"corpus-seed{seed}-{label}-{name}.db" for name in ("before", "after")}
    if not dbs["before"].exists():
        _log(f"{label}: building the database with the reference code")
        cache.mkdir(parents=True, exist_ok=True)
        _spawn("--worker", "build", "--db", str(dbs["before"]), "--size", str(size),
               "--seed", str(seed), "--batch", "100", code=before)  # fmt: skip
        dbs["after"].unlink(missing_ok=True)
    if not dbs["after"].exists():
        shutil.copyfile(dbs["before"], dbs["after"])
    return dbs


def _schema_key() -> str:
    """Cached databases are rebuilt when the DDL changes."""
    import hashlib

    from langchain_session_recall.backends.sqlite import schema

    return hashlib.sha256(schema._DDL.encode()).hexdigest()[:16]


# ----------------------------------------------------------------------------- report


def _ms(x: float) -> str:
    return f"{x * 1000:.1f}"


def _mb(x: float) -> str:
    return f"{x / 2**20:.0f}"


def summarize(res: dict[str, Any]) -> dict[str, Any]:
    s = res["search"]["medians"]
    out = {}
    cpu_out = {}
    for algo, vals in s.items():
        out[algo] = {"p50": statistics.median(vals), "p95": percentile(vals, 0.95)}
        cvals = res["search"]["cpu_medians"][algo]
        cpu_out[algo] = {"p50": statistics.median(cvals), "p95": percentile(cvals, 0.95)}
    if "bm25" in res:
        vals = res["bm25"]["medians"]
        out["bm25"] = {"p50": statistics.median(vals), "p95": percentile(vals, 0.95)}
        cvals = res["bm25"]["cpu_medians"]
        cpu_out["bm25"] = {"p50": statistics.median(cvals), "p95": percentile(cvals, 0.95)}
    kinds = res["search"]["kinds"]
    per_kind = {}
    for kind in dict.fromkeys(kinds):
        idx = [i for i, k in enumerate(kinds) if k == kind]
        cpu_med = res["search"]["cpu_medians"]
        per_kind[kind] = {a: statistics.median(cpu_med[a][i] for i in idx) for a in s}
    ratios = [o / f for o, f in zip(s["ours"], s["floor"], strict=True) if f > 0]
    return {
        "latency": out,
        "cpu": cpu_out,
        "per_kind": per_kind,
        "ratio_floor_median": statistics.median(ratios),
    }


def report(results: list[dict[str, Any]], mach: dict[str, Any], args: argparse.Namespace) -> str:
    """The markdown of the run: both backends' figures, then SQLite's in detail."""
    both = results
    results = [r for r in both if backends_report.backend_of(r) == "sqlite"]
    lines = [
        *_header_lines(mach, args),
        *backends_report.report_lines(both, args.batch),
        *backends_report.goals_lines(both),
        "The sections below are SQLite's alone: CPU time beside wall clock, the seed's "
        "algorithm (`reference`), per query kind, BM25.",
        *_ingest_lines(results, args),
        *_latency_lines(results),
        *_cpu_lines(results),
        *_per_kind_lines(results),
        *_bm25_lines(results),
        *_rss_lines(results),
    ]
    return "\n".join(lines)


def _header_lines(mach: dict[str, Any], args: argparse.Namespace) -> list[str]:
    """The run: the code measured, the machine, its load, the command and how long it took."""
    pg_server = f", PostgreSQL {mach['postgres']}" if mach.get("postgres") else ""
    minutes = (mach.get("finished", 0) - mach.get("started", 0)) / 60
    load_end = mach.get("loadavg_end", mach["loadavg"])
    return [
        "## The last run",
        "",
        f"Measured on the library code of `{mach.get('code', '?')}` (the last commit that "
        f"changed `langchain_session_recall/`). Machine: {mach['cpus']} cores "
        f"({mach['cpu_model']}), {mach['mem_gib']} GiB, SQLite {mach['sqlite']}{pg_server}, "
        f"Python {mach['python']}; load average (1 / 5 / 15 min) "
        f"{' / '.join(f'{x:.1f}' for x in mach['loadavg'])} at the start and "
        f"{' / '.join(f'{x:.1f}' for x in load_end)} at the end (the machine is shared, so "
        "absolute times are noisy; the ratios are of things measured in the same run). "
        f"Corpus seed {args.seed}; latencies are per-query medians over {args.repeats} "
        "repeats (fewer at 1M), then p50/p95 over the fixed 100-query mix. "
        f"Command: `python benchmarks/perf/run.py {mach.get('argv', '')}` "
        f"({minutes:.0f} minutes).",
    ]


def _ingest_lines(results: list[dict[str, Any]], args: argparse.Namespace) -> list[str]:
    """Ingest rates and sizes, a row per corpus size."""
    lines: list[str] = []
    add = lines.append
    add("")
    add("## Ingest and size")
    add("")
    add(
        "Ingest is measured in this run: every variant builds the whole corpus into a scratch "
        "database, one after another (the searches read a corpus built once and cached in "
        "`--cache-dir`)."
    )
    add("")
    add(
        "| messages | sessions | ingest msg/s (wall) | msg/s (CPU) | bulk load in "
        "`store.transaction()` (wall / CPU) | plain SQL, commit per session / per batch (CPU) "
        "| without FTS triggers "
        "(wall / CPU) | raw text MB | database MB | db / raw | FTS index / raw | "
        "FTS + b-tree indexes / raw |"
    )
    add("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        b, st = r["build"], r["stats"]
        raw = b["raw_bytes"]
        g = st["groups"]
        nofts = (
            f"{r['ingest_rate_no_fts']:,.0f} / {r['ingest_cpu_rate_no_fts']:,.0f}"
            if "ingest_rate_no_fts" in r
            else "-"
        )
        rates = (  # "-": this size's ingest was not compared (--ingest-max)
            f"{r['ingest_rate']:,.0f} | {r['ingest_cpu_rate']:,.0f}"
            if "ingest_rate" in r
            else "- | -"
        )
        bulk = (
            f"{r['ingest_rate_batch']:,.0f} / {r['ingest_cpu_rate_batch']:,.0f}"
            if "ingest_rate_batch" in r
            else "-"
        )
        plain = (
            " / ".join(
                f"{r[k]['ingest_cpu_rate']:,.0f}"
                for k in (f"plain_{x}" for x in (1, args.batch))
                if k in r
            )
            or "-"
        )
        add(
            f"| {r['label']} | {b['sessions']:,} | {rates} | {bulk} | {plain} | {nofts} | "
            f"{_mb(raw)} | {_mb(st['file_bytes'])} | {st['file_bytes'] / raw:.2f} | "
            f"{g['fts'] / raw:.2f} | {(g['fts'] + g['btree_indexes']) / raw:.2f} |"
        )
    return lines


def _latency_lines(results: list[dict[str, Any]]) -> list[str]:
    """Search latency (wall clock): ours against the FTS5 floor and the reference."""
    lines: list[str] = []
    add = lines.append
    add("")
    add("## Search latency (ms), end to end and against the alternatives")
    add("")
    add(
        "| messages | ours p50 | ours p95 | FTS5 floor p50 | floor p95 | ours / floor (p50) "
        "| per-query median ratio | reference p50 | reference p95 | ours / reference (p50) |"
    )
    add("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        sm = r["summary"]
        lat = sm["latency"]
        o, f, ref = lat["ours"], lat["floor"], lat["reference"]
        add(
            f"| {r['label']} | {_ms(o['p50'])} | {_ms(o['p95'])} | {_ms(f['p50'])} | "
            f"{_ms(f['p95'])} | {o['p50'] / f['p50']:.2f} | {sm['ratio_floor_median']:.2f} | "
            f"{_ms(ref['p50'])} | {_ms(ref['p95'])} | {o['p50'] / ref['p50']:.2f} |"
        )
    loads = [
        f"{r['label']}: {r['search']['loadavg']:.1f}" for r in results if "loadavg" in r["search"]
    ]
    if loads:
        add("")
        add(f"1-minute load average on the 2 cores during the search runs: {', '.join(loads)}.")
    return lines


def _cpu_lines(results: list[dict[str, Any]]) -> list[str]:
    """The same runs in CPU time of the search process."""
    lines: list[str] = []
    add = lines.append
    add("")
    add(
        "The same runs in CPU time of the search process (what the query costs, without the "
        "waiting that other processes on the shared machine add to wall-clock time):"
    )
    add("")
    add(
        "| messages | ours p50 | ours p95 | floor p50 | floor p95 | ours / floor (p50) | "
        "reference p50 | reference p95 | ours / reference (p50) |"
    )
    add("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        c = r["summary"]["cpu"]
        o, f, ref = c["ours"], c["floor"], c["reference"]
        add(
            f"| {r['label']} | {_ms(o['p50'])} | {_ms(o['p95'])} | {_ms(f['p50'])} | "
            f"{_ms(f['p95'])} | {o['p50'] / f['p50']:.2f} | {_ms(ref['p50'])} | "
            f"{_ms(ref['p95'])} | {o['p50'] / ref['p50']:.2f} |"
        )
    return lines


def _per_kind_lines(results: list[dict[str, Any]]) -> list[str]:
    """CPU p50 per query kind."""
    lines: list[str] = []
    add = lines.append
    add("")
    add(
        "Per query kind (CPU p50 ms, ours / floor / reference; the floor and the reference "
        "query only the main index, where a CJK word glued into a run matches nothing, so "
        "their CJK figures are the cost of finding nothing):"
    )
    add("")
    kinds = list(results[0]["summary"]["per_kind"])
    add("| messages | " + " | ".join(kinds) + " |")
    add("|---:|" + "---:|" * len(kinds))
    for r in results:
        pk = r["summary"]["per_kind"]
        cells = [
            f"{_ms(pk[k]['ours'])} / {_ms(pk[k]['floor'])} / {_ms(pk[k]['reference'])}"
            for k in kinds
        ]
        add(f"| {r['label']} | " + " | ".join(cells) + " |")
    return lines


def _bm25_lines(results: list[dict[str, Any]]) -> list[str]:
    """BM25Retriever beside ours, when the run measured it."""
    lines: list[str] = []
    add = lines.append
    if all("bm25" in r for r in results):
        add("")
        add("## What a user would pick instead: `BM25Retriever`, one Document per root session")
        add("")
        add(
            "| messages | documents | BM25 build s | our ingest s | build ratio | BM25 p50 ms | "
            "BM25 p95 ms | BM25 / ours (p50) | BM25 / ours (CPU p50) | BM25 peak RSS MB | "
            "our peak RSS MB | memory ratio |"
        )
        add("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in results:
            bm = r["bm25"]
            lat = r["summary"]["latency"]
            cpu = r["summary"]["cpu"]
            ours_rss = r["rss"]["peak_rss"]
            add(
                f"| {r['label']} | {bm['documents']:,} | {bm['build_seconds']:.2f} | "
                f"{r['build']['ingest_seconds']:.2f} | "
                f"{bm['build_seconds'] / r['build']['ingest_seconds']:.2f} | "
                f"{_ms(lat['bm25']['p50'])} | {_ms(lat['bm25']['p95'])} | "
                f"{lat['bm25']['p50'] / lat['ours']['p50']:.2f} | "
                f"{cpu['bm25']['p50'] / cpu['ours']['p50']:.2f} | {_mb(bm['peak_rss'])} | "
                f"{_mb(ours_rss)} | {bm['peak_rss'] / ours_rss:.1f} |"
            )
        add("")
        add(
            "BM25 build time excludes loading the transcripts from SQLite "
            "("
            + ", ".join(f"{r['label']}: {r['bm25']['load_seconds']:.1f} s" for r in results)
            + "); the BM25 index must be rebuilt from scratch for every new message, ours is "
            "updated incrementally on insert."
        )
    return lines


def _rss_lines(results: list[dict[str, Any]]) -> list[str]:
    """Peak RSS of a search process, and the latency plot."""
    lines: list[str] = []
    add = lines.append
    add("")
    add("## Peak RSS of a search process")
    add("")
    add("| messages | after imports MB | peak after 100 queries MB |")
    add("|---:|---:|---:|")
    for r in results:
        add(f"| {r['label']} | {_mb(r['rss']['base_rss'])} | {_mb(r['rss']['peak_rss'])} |")
    return lines


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="10k,200k,1M")
    p.add_argument("--quick", action="store_true", help="10k only, few repeats")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--ingest-repeats", type=int, default=3)
    p.add_argument(
        "--no-fts-max",
        type=int,
        default=100_000,
        help="measure ingest without FTS triggers up to this size",
    )
    p.add_argument("--cache-dir", default="/tmp/lsr-perf")
    p.add_argument("--rebuild", action="store_true")
    p.add_argument("--no-bm25", action="store_true")
    p.add_argument("--out", help="markdown report (default docs/benchmarks-perf.md)")
    p.add_argument("--plot", help="latency plot (default docs/perf-latency.png)")
    p.add_argument(
        "--report-only", action="store_true", help="re-render the last run's saved results"
    )
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--db", help=argparse.SUPPRESS)
    p.add_argument("--size", type=int, help=argparse.SUPPRESS)
    p.add_argument("--no-fts", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--pg-schema", help=argparse.SUPPRESS)
    p.add_argument(
        "--pg-dsn",
        default=os.environ.get("SESSION_RECALL_PG_DSN"),
        help="also measure PostgreSQL on this server (default: $SESSION_RECALL_PG_DSN); each "
        "size's corpus is kept in a schema of its own and reused",
    )
    p.add_argument(
        "--ingest-max",
        type=_parse_size,
        default=200_000,
        help="compare SQLite ingest up to this size (default 200k: at 1M its four builds "
        "take 10-25 minutes on 2 shared cores)",
    )
    p.add_argument(
        "--pg-ingest-max",
        type=_parse_size,
        default=10_000,
        help="compare PostgreSQL ingest up to this size (default 10k: at 200k its four "
        "builds take about 20 minutes on 2 shared cores, at 1M over an hour)",
    )
    p.add_argument(
        "--pg-server",
        metavar="DIR",
        help="start (or reuse) scripts/pg-test-server in DIR and measure PostgreSQL on it",
    )
    p.add_argument(
        "--batch",
        type=int,
        default=100,
        help="sessions per store.transaction() in the bulk-load figure (as the importers write)",
    )
    p.add_argument(
        "--compare-with",
        metavar="CHECKOUT",
        help="search latency only: this checkout against another one (e.g. a git worktree of "
        "main) on the same databases, in one run; prints a table (and writes it to --out)",
    )
    p.add_argument("--rounds", type=int, default=2, help="alternations of --compare-with")
    return p


def main() -> None:
    args = _parser().parse_args()
    if args.compare_with:
        table = compare(
            [_parse_size(x) for x in args.sizes.split(",")], Path(args.compare_with), args
        )
        print(table)
        if args.out:
            Path(args.out).write_text(table + "\n")
        return
    if args.worker:
        worker_main(args)
        return
    if args.quick:  # a smoke test: its figures go beside the cache, not over the published ones
        args.sizes, args.repeats = "10k", 3
        args.out = args.out or str(Path(args.cache_dir) / "benchmarks-perf-quick.md")
        args.plot = args.plot or str(Path(args.cache_dir) / "perf-latency-quick.png")
    args.out = args.out or str(ROOT / "docs" / "benchmarks-perf.md")
    args.plot = args.plot or str(ROOT / "docs" / "perf-latency.png")
    sizes = [_parse_size(s) for s in args.sizes.split(",")]
    tag = "-quick" if args.quick else ""
    saved = Path(args.cache_dir) / f"last-results{tag}.json"
    saved_machine = Path(args.cache_dir) / f"last-machine{tag}.json"
    if args.report_only:
        results = json.loads(saved.read_text())
        for res in results:
            res["summary"] = summarize(res)
        mach = json.loads(saved_machine.read_text())
        _write(results, mach, args)
        return
    mach = {**machine(), "argv": " ".join(sys.argv[1:])}
    (Path(args.cache_dir)).mkdir(parents=True, exist_ok=True)
    saved_machine.write_text(json.dumps(mach))
    results = measure_all(sizes, args, saved)
    mach["loadavg_end"] = os.getloadavg()
    mach["finished"] = time.time()
    if args.pg_dsn:
        mach["postgres"] = pg.server_version(args.pg_dsn)
    saved_machine.write_text(json.dumps(mach))
    _write(results, mach, args)


def measure_all(sizes: list[int], args: argparse.Namespace, saved: Path) -> list[dict[str, Any]]:
    """Every size on SQLite, then on PostgreSQL when there is a server, size after size;
    the results so far saved after each (``--report-only`` renders a run cut short)."""
    args.pg_dsn = _pg_dsn(args)
    measures = [measure_size, measure_size_pg] if args.pg_dsn else [measure_size]
    results = []
    for size in sizes:
        for measure in measures:
            res = measure(size, args)
            res["summary"] = summarize(res)
            results.append(res)
            saved.write_text(json.dumps(results))
    return results


BEGIN, END = "<!-- perf-run:begin -->", "<!-- perf-run:end -->"


def splice(document: str, text: str) -> str:
    """``document`` with the part between the run's markers replaced by ``text``; the whole of
    ``text`` between markers when ``document`` has none (a new file). What is written around
    the markers by hand stays."""
    block = f"{BEGIN}\n{text}\n{END}"
    if BEGIN in document and END in document:
        head, rest = document.split(BEGIN, 1)
        return head + block + rest.split(END, 1)[1]
    return block + "\n"


def _write(results: list[dict[str, Any]], mach: dict[str, Any], args: argparse.Namespace) -> None:
    text = report(results, mach, args)
    print(text)
    out = Path(args.out)
    out.write_text(splice(out.read_text() if out.exists() else "", text))
    backends_report.plot(results, Path(args.plot))
    _log(f"wrote {args.out} and {args.plot}")


if __name__ == "__main__":
    main()
