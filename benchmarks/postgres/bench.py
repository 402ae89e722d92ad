"""SQLite vs PostgreSQL: load, query latency and 8 writers + 8 readers, in one run.

Usage:
    scripts/pg-test-server start /tmp/bench-pg          # or PG_TEST_DURABLE=1 ... (fsync on)
    PYTHONPATH=. python benchmarks/postgres/bench.py --dsn "$(cat /tmp/bench-pg/dsn)" \
        --messages 1000000 --out docs/benchmarks-postgres.md

Both stores are filled through their public write path (``add_session`` + ``add_messages``,
one session of 50 messages per call) with the same synthetic corpus: a Zipf-distributed
vocabulary plus topic words at known frequencies (rare, medium, common), phrases and CJK
messages. Query latency is the whole search pipeline (``search_sessions``: match, lineage,
ranking) for a fixed query mix, medians and p95 over repeats. The concurrency figure runs 8
writer processes (sessions of 10 messages, one transaction each) and 8 reader processes
(the same query mix) against each backend for a fixed time.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from langchain_session_recall.pg_store import PostgresSessionStore
from langchain_session_recall.search import search_sessions
from langchain_session_recall.store import SessionStore

SESSION_SIZE = 50
QUERIES = [
    ("natural", "how did we fix the nginx timeout?"),
    ("rare word", "flamingo"),
    ("medium word", "kubernetes"),
    ("common word", "terraform"),
    ("phrase", '"connection refused"'),
    ("prefix", "kube*"),
    ("OR", "flamingo OR nginx"),
    ("NOT", "kubernetes NOT terraform"),
    ("CJK 2 chars", "服务"),
    ("no match", "zzyzxquux"),
]
# (word, share of messages containing it)
TOPICS = [
    ("flamingo", 0.0005),
    ("nginx", 0.003),
    ("kubernetes", 0.02),
    ("terraform", 0.08),
    ("connection refused", 0.005),
    ("timeout", 0.01),
]
CJK_SHARE = 0.02
CJK_TEXT = ["修改服务端配置", "数据库连接超时", "部署到生产环境", "東京の天気"]


def _vocabulary(rng: random.Random, n: int = 20_000) -> list[str]:
    syllables = ["ka", "to", "ri", "mon", "sel", "va", "der", "pli", "gan", "us", "or", "te", "bi"]
    words: set[str] = set()
    while len(words) < n:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def corpus(
    n_messages: int, seed: int = 7
) -> Iterator[tuple[str, str | None, list[dict[str, Any]]]]:
    """``(session_id, parent_id, messages)`` for ``n_messages`` messages, deterministic."""
    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    cum = []
    total = 0.0
    for rank in range(1, len(vocab) + 1):
        total += 1.0 / rank
        cum.append(total)
    roles = ["user", "assistant", "assistant", "tool"]
    n_sessions = max(1, n_messages // SESSION_SIZE)
    ts = 1_700_000_000.0
    for s in range(n_sessions):
        sid = f"s{s:07d}"
        parent = f"s{s - 1:07d}" if s % 10 == 9 else None  # every tenth is a continuation
        messages = []
        for i in range(SESSION_SIZE):
            words = rng.choices(vocab, cum_weights=cum, k=rng.randint(15, 50))
            for topic, share in TOPICS:
                if rng.random() < share:
                    words.insert(rng.randrange(len(words) + 1), topic)
            if rng.random() < CJK_SHARE:
                words.append(rng.choice(CJK_TEXT))
            role = roles[i % 4]
            messages.append(
                {
                    "role": role,
                    "content": " ".join(words),
                    "timestamp": ts,
                    **({"tool_name": "bash"} if role == "tool" else {}),
                }
            )
            ts += 1.0
        yield sid, parent, messages


def load(store: Any, n_messages: int) -> float:
    t0 = time.perf_counter()
    for sid, parent, messages in corpus(n_messages):
        store.add_session(sid, parent_session_id=parent, started_at=messages[0]["timestamp"])
        store.add_messages(sid, messages)
    return time.perf_counter() - t0


def timed(fn: Callable[[], Any], repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


# ------------------------------------------------------------------ concurrency


def _open(kind: str, target: str) -> Any:
    if kind == "sqlite":
        return SessionStore(target, busy_timeout=30.0)
    return PostgresSessionStore(target, schema="bench", min_size=1, max_size=2)


def _writer(kind: str, target: str, wid: int, seconds: float, q: Any) -> None:
    store = _open(kind, target)
    done = errors = 0
    rng = random.Random(wid)
    deadline = time.monotonic() + seconds
    n = 0
    lat: list[float] = []
    while time.monotonic() < deadline:
        sid = f"w{wid}-{n}"
        n += 1
        t0 = time.perf_counter()
        try:
            store.add_session(sid, source="cli")
            store.add_messages(
                sid,
                [
                    {"role": "user", "content": f"writer {wid} note {rng.random()} kubernetes"}
                    for _ in range(10)
                ],
            )
            done += 10
            lat.append((time.perf_counter() - t0) * 1000)
        except Exception:  # a locked database: counted, not fatal
            errors += 1
    store.close()
    q.put(("w", done, errors, lat))


def _reader(kind: str, target: str, rid: int, seconds: float, q: Any) -> None:
    store = _open(kind, target)
    lat: list[float] = []
    errors = 0
    deadline = time.monotonic() + seconds
    i = rid
    while time.monotonic() < deadline:
        text = QUERIES[i % len(QUERIES)][1]
        i += 1
        t0 = time.perf_counter()
        try:
            search_sessions(store, text)
            lat.append((time.perf_counter() - t0) * 1000)
        except Exception:
            errors += 1
    store.close()
    q.put(("r", len(lat), errors, lat))


def concurrency(kind: str, target: str, seconds: float, n: int = 8) -> dict[str, float]:
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(kind, target, i, seconds, q)) for i in range(n)]
    procs += [ctx.Process(target=_reader, args=(kind, target, i, seconds, q)) for i in range(n)]
    for p in procs:
        p.start()
    results = [q.get(timeout=seconds + 120) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    written = sum(r[1] for r in results if r[0] == "w")
    w_err = sum(r[2] for r in results if r[0] == "w")
    reads = sum(r[1] for r in results if r[0] == "r")
    r_err = sum(r[2] for r in results if r[0] == "r")
    lat = [x for r in results if r[0] == "r" for x in r[3]]
    wlat = [x for r in results if r[0] == "w" for x in r[3]]
    return {
        "messages_per_s": written / seconds,
        "write_errors": w_err,
        "queries_per_s": reads / seconds,
        "read_errors": r_err,
        "read_p50": statistics.median(lat) if lat else float("nan"),
        "read_p95": p95(lat) if lat else float("nan"),
        "write_p50": statistics.median(wlat) if wlat else float("nan"),
        "write_p95": p95(wlat) if wlat else float("nan"),
    }


# ------------------------------------------------------------------ main


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--out", default="docs/benchmarks-postgres.md")
    ap.add_argument("--reuse", action="store_true", help="reuse the stores loaded in --workdir")
    args = ap.parse_args()

    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench-recall-"))
    sqlite_path = str(work / "bench.db")

    import psycopg

    reuse = Path(args.workdir or "", "load-times.json")
    load_s: dict[str, float] | None = None
    if args.reuse and Path(sqlite_path).is_file():  # the stores of an earlier run, same size
        load_s = json.loads(reuse.read_text()) if reuse.is_file() else None
        lite = SessionStore(sqlite_path)
        pg = PostgresSessionStore(args.dsn, schema="bench")
    else:
        if os.path.exists(sqlite_path):
            os.unlink(sqlite_path)
        with psycopg.connect(args.dsn, autocommit=True) as conn:
            conn.execute("DROP SCHEMA IF EXISTS bench CASCADE")
        lite = SessionStore(sqlite_path)
        pg = PostgresSessionStore(args.dsn, schema="bench")
        print(f"loading {args.messages:,} messages into each backend ...", file=sys.stderr)
        load_s = {"sqlite": load(lite, args.messages), "postgres": load(pg, args.messages)}
        lite.optimize()
        pg.optimize()
        if args.workdir:
            reuse.write_text(json.dumps(load_s))
    with psycopg.connect(args.dsn, autocommit=True) as conn:
        if load_s is not None or not args.reuse:
            conn.execute("VACUUM ANALYZE bench.messages")
        size_pg = conn.execute("SELECT pg_total_relation_size('bench.messages')").fetchone()[0]
    size_lite = os.path.getsize(sqlite_path)
    with psycopg.connect(args.dsn, autocommit=True) as conn:
        n_pg = conn.execute("SELECT count(*) FROM bench.messages").fetchone()[0]
    with sqlite3.connect(sqlite_path) as sconn:
        n_lite = sconn.execute("SELECT count(*) FROM messages").fetchone()[0]

    rows = []
    for label, text in QUERIES:
        for store in (lite, pg):  # warm both caches
            search_sessions(store, text)
        lt = timed(lambda t=text: search_sessions(lite, t), args.repeats)
        pt = timed(lambda t=text: search_sessions(pg, t), args.repeats)
        hits = (
            len(search_sessions(lite, text).sessions),
            len(search_sessions(pg, text).sessions),
        )
        rows.append((label, text, lt, pt, hits))
        print(
            f"{label:12} sqlite p50 {statistics.median(lt):8.1f} ms  pg p50 "
            f"{statistics.median(pt):8.1f} ms",
            file=sys.stderr,
        )
    lite.close()
    pg.close()

    print("concurrency ...", file=sys.stderr)
    conc = {
        "sqlite": concurrency("sqlite", sqlite_path, args.seconds),
        "postgres": concurrency("postgres", args.dsn, args.seconds),
    }

    if args.workdir:
        Path(args.workdir, "results.json").write_text(
            json.dumps({"rows": rows, "conc": conc, "load": load_s}, ensure_ascii=False)
        )
    out = []
    out.append("# Benchmark: SQLite FTS5 vs PostgreSQL full-text search\n")
    out.append(
        f"Generated by `benchmarks/postgres/bench.py` ({args.messages:,} messages, "
        f"{args.messages // SESSION_SIZE:,} sessions of {SESSION_SIZE}; every tenth session a "
        f"continuation of the previous one; stores holding {n_lite:,} (SQLite) and "
        f"{n_pg:,} (PostgreSQL) messages when queried). Both backends ran in the same run "
        f"on the same "
        f"2-core machine (shared with other work: compare ratios, not absolute numbers). "
        f"PostgreSQL 15 on 127.0.0.1, default settings except shared_buffers=256MB and "
        f"synchronous_commit=off; SQLite in WAL mode, synchronous=NORMAL.\n"
    )
    out.append("## Load (public write path, one transaction per 50-message session)\n")
    out.append("| backend | load time | messages/s | on-disk size |")
    out.append("| --- | ---: | ---: | ---: |")
    for kind, size in (("sqlite", size_lite), ("postgres", size_pg)):
        if load_s is None:
            out.append(f"| {kind} | not timed in this run | | {size / 2**20:,.0f} MiB |")
            continue
        s = load_s[kind]
        out.append(f"| {kind} | {s:,.0f} s | {args.messages / s:,.0f} | {size / 2**20:,.0f} MiB |")
    out.append("")
    out.append(
        f"## Query latency (whole search pipeline, ms, {args.repeats} repeats, warm cache)\n"
    )
    out.append(
        "| query | text | sqlite p50 | sqlite p95 | postgres p50 | postgres p95 | "
        "pg / sqlite (p50) | sessions found (sqlite / pg) |"
    )
    out.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, text, lt, pt, hits in rows:
        ratio = statistics.median(pt) / max(statistics.median(lt), 1e-6)
        out.append(
            f"| {label} | `{text}` | {statistics.median(lt):.1f} | {p95(lt):.1f} | "
            f"{statistics.median(pt):.1f} | {p95(pt):.1f} | {ratio:.2f}x | {hits[0]} / {hits[1]} |"
        )
    out.append("")
    out.append(f"## 8 writer + 8 reader processes for {args.seconds:.0f} s on the loaded store\n")
    out.append(
        "Writers: a new session + 10 messages per transaction. Readers: the query mix above. "
        "SQLite has one writer at a time (busy timeout 30 s); PostgreSQL writers commit "
        "concurrently.\n"
    )
    out.append(
        "| backend | messages written/s | write p50 ms | write p95 ms | write errors | "
        "queries/s | read p50 ms | read p95 ms | read errors |"
    )
    out.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for kind in ("sqlite", "postgres"):
        c = conc[kind]
        out.append(
            f"| {kind} | {c['messages_per_s']:,.0f} | {c['write_p50']:.1f} | "
            f"{c['write_p95']:.1f} | {c['write_errors']:.0f} | "
            f"{c['queries_per_s']:,.1f} | {c['read_p50']:.1f} | {c['read_p95']:.1f} | "
            f"{c['read_errors']:.0f} |"
        )
    out.append("")
    text = "\n".join(out)
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
