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

The held-transaction scenario (``--only hold`` runs just it, on a small store of its own, and
rewrites only its section of ``--out``) models a gateway that records an agent turn inside a
transaction while it waits on something else (a model call, a parse): 8 writer processes each
own one session; every write transaction appends a batch of messages to it and then stays open
for a fixed hold time (``time.sleep`` inside the transaction) before it commits. 8 reader
processes run the query mix meanwhile. The transaction is the store's public
``transaction()`` block (SQLite: ``BEGIN IMMEDIATE`` .. ``COMMIT``; PostgreSQL: a pooled
connection's transaction) around ``add_messages``, the same code on both backends. Committed
messages are counted in the database afterwards, not only by the writers.

    PYTHONPATH=. python benchmarks/postgres/bench.py --dsn "$(cat /tmp/bench-pg/dsn)" \
        --only hold --out docs/benchmarks-postgres.md
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_session_recall.backends import PostgresSessionStore, SessionStore
from langchain_session_recall.search.pipeline import search_sessions

SESSION_SIZE = 50
ASYNC_CLIENTS = 16
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


# ------------------------------------------------------------------ async clients


def async_clients(store: Any, clients: int, seconds: float) -> dict[str, float]:
    """``clients`` asyncio tasks calling ``SessionRecallRetriever.ainvoke`` in a loop for
    ``seconds``: the one async model (the store's calls run in the event loop's executor)."""
    import asyncio

    from langchain_session_recall import SessionRecallRetriever

    retriever = SessionRecallRetriever(store=store, k=3)
    lat: list[float] = []
    errors = 0

    async def client(cid: int) -> None:
        nonlocal errors
        deadline = time.monotonic() + seconds
        i = cid
        while time.monotonic() < deadline:
            text = QUERIES[i % len(QUERIES)][1]
            i += 1
            t0 = time.perf_counter()
            try:
                await retriever.ainvoke(text)
                lat.append((time.perf_counter() - t0) * 1000)
            except Exception:
                errors += 1

    async def run() -> float:
        t0 = time.monotonic()
        await asyncio.gather(*(client(c) for c in range(clients)))
        return time.monotonic() - t0

    elapsed = asyncio.run(run())
    return {
        "queries_per_s": len(lat) / elapsed,
        "p50": statistics.median(lat) if lat else float("nan"),
        "p95": p95(lat) if lat else float("nan"),
        "errors": errors,
    }


# ------------------------------------------------------------------ held write transactions

HOLD_SCHEMA = "bench_hold"
HOLD_MARK_START = "<!-- held-transactions:start -->"
HOLD_MARK_END = "<!-- held-transactions:end -->"


def _hold_write(store: Any, sid: str, rows: list[Any], hold_s: float) -> None:
    """One write transaction: ``add_messages`` for ``rows``, then ``hold_s`` of waiting."""
    with store.transaction():
        store.add_messages(sid, rows)
        time.sleep(hold_s)


def _hold_writer(
    kind: str, target: str, sid: str, hold_s: float, batch: int, window: tuple[float, float], q: Any
) -> None:
    store = _open_hold(kind, target)
    store.add_session(sid, source="cli")
    start, end = window
    time.sleep(max(0.0, start - time.monotonic()))
    rng = random.Random(sid)
    committed = txs = errors = 0
    lat: list[float] = []
    while time.monotonic() < end:
        rows = [
            # no word of the query mix: readers do the same work whatever the writers add
            {"role": "assistant", "content": f"turn {txs} gateway note {rng.random()}"}
            for _ in range(batch)
        ]
        t0 = time.perf_counter()
        try:
            _hold_write(store, sid, rows, hold_s)
        except Exception:  # a locked database: counted, not fatal
            errors += 1
            continue
        if time.monotonic() <= end:  # count only what committed inside the window
            committed += batch
            txs += 1
            lat.append((time.perf_counter() - t0) * 1000)
    store.close()
    q.put(("w", committed, errors, lat, txs))


def _hold_reader(kind: str, target: str, rid: int, window: tuple[float, float], q: Any) -> None:
    store = _open_hold(kind, target)
    start, end = window
    time.sleep(max(0.0, start - time.monotonic()))
    lat: list[float] = []
    errors = 0
    i = rid
    while time.monotonic() < end:
        text = QUERIES[i % len(QUERIES)][1]
        i += 1
        t0 = time.perf_counter()
        try:
            search_sessions(store, text)
        except Exception:
            errors += 1
            continue
        if time.monotonic() <= end:
            lat.append((time.perf_counter() - t0) * 1000)
    store.close()
    q.put(("r", len(lat), errors, lat, 0))


def _open_hold(kind: str, target: str) -> Any:
    if kind == "sqlite":
        return SessionStore(target, busy_timeout=30.0)
    return PostgresSessionStore(target, schema=HOLD_SCHEMA, min_size=1, max_size=2)


def _count_messages(kind: str, target: str, prefix: str) -> int:
    like = prefix + "%"
    if kind == "sqlite":
        with sqlite3.connect(target) as conn:
            row = conn.execute("SELECT count(*) FROM messages WHERE session_id LIKE ?", (like,))
            return int(row.fetchone()[0])
    import psycopg

    with psycopg.connect(target, autocommit=True) as conn:
        got = conn.execute(
            f"SELECT count(*) FROM {HOLD_SCHEMA}.messages WHERE session_id LIKE %s", (like,)
        ).fetchone()
        return int(got[0]) if got else 0


def _drop_run(kind: str, target: str, prefix: str) -> None:
    """Delete one run's sessions and messages, so every run starts on the same store."""
    like = prefix + "%"
    if kind == "sqlite":
        with sqlite3.connect(target) as conn:
            conn.execute("DELETE FROM messages WHERE session_id LIKE ?", (like,))
            conn.execute("DELETE FROM sessions WHERE id LIKE ?", (like,))
        return
    import psycopg

    with psycopg.connect(target, autocommit=True) as conn:
        conn.execute(f"DELETE FROM {HOLD_SCHEMA}.messages WHERE session_id LIKE %s", (like,))
        conn.execute(f"DELETE FROM {HOLD_SCHEMA}.sessions WHERE id LIKE %s", (like,))
        conn.execute(f"VACUUM ANALYZE {HOLD_SCHEMA}.messages")


def held_transactions(
    kind: str,
    target: str,
    *,
    hold_s: float,
    seconds: float,
    tag: str,
    writers: int = 8,
    readers: int = 8,
    batch: int = 10,
) -> dict[str, float]:
    """One run of the held-transaction scenario on one backend; rates over ``seconds``."""
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    start = time.monotonic() + 2.0  # every process has opened its store by then
    window = (start, start + seconds)
    prefix = f"hold-{tag}-"
    procs = [
        ctx.Process(
            target=_hold_writer,
            args=(kind, target, f"{prefix}{i}", hold_s, batch, window, q),
        )
        for i in range(writers)
    ]
    procs += [
        ctx.Process(target=_hold_reader, args=(kind, target, i, window, q)) for i in range(readers)
    ]
    for p in procs:
        p.start()
    results = [q.get(timeout=seconds + 120) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    in_db = _count_messages(kind, target, prefix)
    _drop_run(kind, target, prefix)
    committed = sum(r[1] for r in results if r[0] == "w")
    wlat = [x for r in results if r[0] == "w" for x in r[3]]
    rlat = [x for r in results if r[0] == "r" for x in r[3]]
    return {
        "messages_per_s": committed / seconds,
        "tx_per_s": sum(r[4] for r in results if r[0] == "w") / seconds,
        "in_db": in_db,  # >= committed: a transaction may commit just after the window
        "committed": committed,
        "write_errors": sum(r[2] for r in results if r[0] == "w"),
        "write_p50": statistics.median(wlat) if wlat else float("nan"),
        "write_p95": p95(wlat) if wlat else float("nan"),
        "queries_per_s": sum(r[1] for r in results if r[0] == "r") / seconds,
        "read_errors": sum(r[2] for r in results if r[0] == "r"),
        "read_p95": p95(rlat) if rlat else float("nan"),
    }


def _median_run(runs: list[dict[str, float]]) -> dict[str, float]:
    """Field-wise medians over repeated runs."""
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]}


def hold_scenario(
    dsn: str,
    work: Path,
    *,
    messages: int,
    holds_ms: list[float],
    seconds: float,
    runs: int,
    writers: int = 8,
    readers: int = 8,
    batch: int = 10,
) -> dict[str, Any]:
    """Load a small store into each backend, then run every hold time ``runs`` times."""
    import psycopg

    sqlite_path = str(work / "hold.db")
    if os.path.exists(sqlite_path):
        os.unlink(sqlite_path)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {HOLD_SCHEMA} CASCADE")
    lite = SessionStore(sqlite_path)
    pg = PostgresSessionStore(dsn, schema=HOLD_SCHEMA)
    print(f"hold: loading {messages:,} messages into each backend ...", file=sys.stderr)
    load(lite, messages)
    load(pg, messages)
    lite.optimize()
    pg.optimize()
    lite.close()
    pg.close()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"VACUUM ANALYZE {HOLD_SCHEMA}.messages")
    targets = {"sqlite": sqlite_path, "postgres": dsn}
    per_hold: dict[str, dict[str, Any]] = {}
    for hold in holds_ms:
        raw: dict[str, list[dict[str, float]]] = {"sqlite": [], "postgres": []}
        for run in range(runs):
            for kind in ("sqlite", "postgres"):  # interleaved: machine load hits both alike
                r = held_transactions(
                    kind,
                    targets[kind],
                    hold_s=hold / 1000,
                    seconds=seconds,
                    tag=f"{hold:g}-{run}",
                    writers=writers,
                    readers=readers,
                    batch=batch,
                )
                raw[kind].append(r)
                print(
                    f"hold {hold:g} ms run {run + 1} {kind:8} {r['tx_per_s']:7.1f} tx/s "
                    f"{r['messages_per_s']:8.1f} msg/s  write p95 {r['write_p95']:7.1f} ms  "
                    f"{r['queries_per_s']:6.1f} q/s  in db {r['in_db']:.0f} "
                    f"(counted {r['committed']:.0f})",
                    file=sys.stderr,
                )
        per_hold[f"{hold:g}"] = {
            "median": {kind: _median_run(raw[kind]) for kind in raw},
            "runs": raw,
        }
    return {
        "messages": messages,
        "seconds": seconds,
        "runs": runs,
        "writers": writers,
        "readers": readers,
        "batch": batch,
        "holds": per_hold,
    }


def hold_markdown(res: dict[str, Any], *, separate: bool = False) -> list[str]:
    """The held-transaction section, between markers so ``--only hold`` can replace it."""
    w, r, b = res["writers"], res["readers"], res["batch"]
    out = [HOLD_MARK_START]
    out.append(
        f"## {w} writers holding their write transaction open + {r} readers "
        f"({res['messages']:,}-message store, {res['seconds']:.0f} s per run, median of "
        f"{res['runs']} runs)\n"
    )
    if separate:
        out.append(
            "Measured on its own (`bench.py --only hold`, same server settings), in a later "
            "run than the sections above, which are kept from an earlier full run.\n"
        )
    out.append(
        f"Each writer process owns one session; each of its write transactions appends {b} "
        f"messages to it through the store's insert path, then stays open for the hold time "
        f"(`time.sleep` inside the transaction: waiting on a model call or a parse while a "
        f"turn is being recorded) and commits. {r} reader processes run the query mix above. "
        f"The store is small on purpose: this measures write locking, not index size. "
        f"Rates count transactions committed inside the window (the messages are also "
        f"counted in the database afterwards, then deleted, so every run starts on the same "
        f"store; the writers' words are not in the query mix); write latency is begin-to-commit, lock wait "
        f"included. SQLite: `BEGIN IMMEDIATE` takes the database's one write lock, so at "
        f"most one transaction is open at a time (busy timeout 30 s; a waiting writer polls "
        f"with growing sleeps, so the lock is not handed out in order: write p50 stays low "
        f"while p95 grows). PostgreSQL: each writer locks only its own session row. "
        f"Ratios below are of the per-backend medians.\n"
    )
    out.append(
        "| hold | backend | transactions/s | messages committed/s | write p50 ms | "
        "write p95 ms | write errors | reader queries/s | read p95 ms | "
        "ceiling: writers / hold (tx/s) |"
    )
    out.append("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    ratios = []
    for hold, entry in res["holds"].items():
        med = entry["median"]
        for kind in ("sqlite", "postgres"):
            c = med[kind]
            ceiling = (1 if kind == "sqlite" else w) * 1000 / float(hold)
            out.append(
                f"| {hold} ms | {kind} | {c['tx_per_s']:,.1f} | {c['messages_per_s']:,.0f} | "
                f"{c['write_p50']:.1f} | {c['write_p95']:.1f} | {c['write_errors']:.0f} | "
                f"{c['queries_per_s']:,.1f} | {c['read_p95']:.1f} | {ceiling:,.0f} |"
            )
        lite, pg = med["sqlite"], med["postgres"]
        ratios.append(
            f"| {hold} ms | {pg['messages_per_s'] / max(lite['messages_per_s'], 1e-9):.2f}x | "
            f"{pg['write_p95'] / max(lite['write_p95'], 1e-9):.2f}x | "
            f"{pg['queries_per_s'] / max(lite['queries_per_s'], 1e-9):.2f}x |"
        )
    out.append("")
    out.append(
        "The ceiling column is the most a backend could commit if the hold were the only "
        "cost: SQLite one transaction per hold time in total, PostgreSQL one per hold time "
        "per writer.\n"
    )
    out.append(
        "| hold | PostgreSQL / SQLite: messages committed/s | write p95 | reader queries/s |"
    )
    out.append("| ---: | ---: | ---: | ---: |")
    out.extend(ratios)
    out.append("")
    out.append("Every run (transactions/s, SQLite / PostgreSQL):\n")
    for hold, entry in res["holds"].items():
        per = ", ".join(
            f"{a['tx_per_s']:.1f} / {p['tx_per_s']:.1f}"
            for a, p in zip(entry["runs"]["sqlite"], entry["runs"]["postgres"], strict=True)
        )
        out.append(f"- {hold} ms: {per}")
    out.append("")
    out.append(HOLD_MARK_END)
    return out


def replace_hold_section(document: str, section: list[str]) -> str:
    """``document`` with its held-transaction section replaced (appended when absent)."""
    block = "\n".join(section)
    if HOLD_MARK_START in document and HOLD_MARK_END in document:
        head, rest = document.split(HOLD_MARK_START, 1)
        tail = rest.split(HOLD_MARK_END, 1)[1]
        return head + block + tail
    return document.rstrip("\n") + "\n\n" + block + "\n"


# ------------------------------------------------------------------ main


def _arguments() -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--out", default="docs/benchmarks-postgres.md")
    ap.add_argument("--reuse", action="store_true", help="reuse the stores loaded in --workdir")
    ap.add_argument(
        "--only",
        choices=["all", "hold"],
        default="all",
        help="hold: run only the held-transaction scenario and replace its section of --out",
    )
    ap.add_argument("--hold-messages", type=int, default=20_000, help="its store's size")
    ap.add_argument("--hold-ms", default="5,20", help="hold times in ms, comma-separated")
    ap.add_argument("--hold-seconds", type=float, default=10.0, help="length of one run")
    ap.add_argument("--hold-runs", type=int, default=3, help="runs per backend and hold time")
    return ap.parse_args()


def _run_hold(args: argparse.Namespace, work: Path) -> list[str]:
    res = hold_scenario(
        args.dsn,
        work,
        messages=args.hold_messages,
        holds_ms=[float(x) for x in args.hold_ms.split(",")],
        seconds=args.hold_seconds,
        runs=args.hold_runs,
    )
    Path(work, "hold-results.json").write_text(json.dumps(res))
    return hold_markdown(res, separate=args.only == "hold")


def _only_hold(args: argparse.Namespace, work: Path) -> int:
    t0 = time.monotonic()
    section = _run_hold(args, work)
    print(f"held-transaction scenario: {time.monotonic() - t0:.0f} s", file=sys.stderr)
    previous = Path(args.out).read_text(encoding="utf-8") if Path(args.out).is_file() else ""
    text = replace_hold_section(previous, section)
    print("\n".join(section))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text, encoding="utf-8")
    return 0


@dataclass
class _Measured:
    """What one full run measured, for the report."""

    sizes: dict[str, int]
    counts: dict[str, int]
    load_s: dict[str, float] | None
    rows: list[tuple[str, str, list[float], list[float], tuple[int, int]]]
    async_res: dict[str, dict[str, float]]
    conc: dict[str, dict[str, float]]


def _open_stores(
    args: argparse.Namespace, sqlite_path: str
) -> tuple[SessionStore, PostgresSessionStore, dict[str, float] | None]:
    """Both stores, loaded with ``--messages`` messages (or as an earlier run left them)."""
    import psycopg

    reuse = Path(args.workdir or "", "load-times.json")
    if args.reuse and Path(sqlite_path).is_file():  # the stores of an earlier run, same size
        load_s = json.loads(reuse.read_text()) if reuse.is_file() else None
        return SessionStore(sqlite_path), PostgresSessionStore(args.dsn, schema="bench"), load_s
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
    return lite, pg, load_s


def _sizes(
    args: argparse.Namespace, sqlite_path: str, analyze: bool
) -> tuple[dict[str, int], dict[str, int]]:
    """On-disk sizes and message counts of both stores."""
    import psycopg

    with psycopg.connect(args.dsn, autocommit=True) as conn:
        if analyze:
            conn.execute("VACUUM ANALYZE bench.messages")
        size_pg = conn.execute("SELECT pg_total_relation_size('bench.messages')").fetchone()[0]
        n_pg = conn.execute("SELECT count(*) FROM bench.messages").fetchone()[0]
    with sqlite3.connect(sqlite_path) as sconn:
        n_lite = sconn.execute("SELECT count(*) FROM messages").fetchone()[0]
    sizes = {"sqlite": os.path.getsize(sqlite_path), "postgres": size_pg}
    return sizes, {"sqlite": n_lite, "postgres": n_pg}


def _latencies(
    lite: SessionStore, pg: PostgresSessionStore, repeats: int
) -> list[tuple[str, str, list[float], list[float], tuple[int, int]]]:
    rows = []
    for label, text in QUERIES:
        for store in (lite, pg):  # warm both caches
            search_sessions(store, text)
        lt = timed(lambda t=text: search_sessions(lite, t), repeats)
        pt = timed(lambda t=text: search_sessions(pg, t), repeats)
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
    return rows


def _measure(args: argparse.Namespace, work: Path) -> _Measured:
    sqlite_path = str(work / "bench.db")
    lite, pg, load_s = _open_stores(args, sqlite_path)
    sizes, counts = _sizes(args, sqlite_path, load_s is not None or not args.reuse)
    rows = _latencies(lite, pg, args.repeats)
    print(f"{ASYNC_CLIENTS} async clients ...", file=sys.stderr)
    async_res = {
        "sqlite": async_clients(lite, ASYNC_CLIENTS, args.seconds),
        "postgres": async_clients(pg, ASYNC_CLIENTS, args.seconds),
    }
    lite.close()
    pg.close()
    print("concurrency ...", file=sys.stderr)
    conc = {
        "sqlite": concurrency("sqlite", sqlite_path, args.seconds),
        "postgres": concurrency("postgres", args.dsn, args.seconds),
    }
    if args.workdir:
        Path(args.workdir, "results.json").write_text(
            json.dumps(
                {"rows": rows, "conc": conc, "load": load_s, "async": async_res},
                ensure_ascii=False,
            )
        )
    return _Measured(sizes, counts, load_s, rows, async_res, conc)


def _report_head(args: argparse.Namespace, m: _Measured) -> list[str]:
    out = []
    out.append("# Benchmark: SQLite FTS5 vs PostgreSQL full-text search\n")
    out.append(
        f"Generated by `benchmarks/postgres/bench.py` ({args.messages:,} messages, "
        f"{args.messages // SESSION_SIZE:,} sessions of {SESSION_SIZE}; every tenth session a "
        f"continuation of the previous one; stores holding {m.counts['sqlite']:,} (SQLite) and "
        f"{m.counts['postgres']:,} (PostgreSQL) messages when queried). Both backends ran in the same run "
        f"on the same "
        f"2-core machine (shared with other work: compare ratios, not absolute numbers). "
        f"PostgreSQL 15 on 127.0.0.1, default settings except shared_buffers=256MB and "
        f"synchronous_commit=off; SQLite in WAL mode, synchronous=NORMAL.\n"
    )
    out.append("## Load (public write path, one transaction per 50-message session)\n")
    out.append("| backend | load time | messages/s | on-disk size |")
    out.append("| --- | ---: | ---: | ---: |")
    for kind, size in m.sizes.items():
        if m.load_s is None:
            out.append(f"| {kind} | not timed in this run | | {size / 2**20:,.0f} MiB |")
            continue
        s = m.load_s[kind]
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
    for label, text, lt, pt, hits in m.rows:
        ratio = statistics.median(pt) / max(statistics.median(lt), 1e-6)
        out.append(
            f"| {label} | `{text}` | {statistics.median(lt):.1f} | {p95(lt):.1f} | "
            f"{statistics.median(pt):.1f} | {p95(pt):.1f} | {ratio:.2f}x | {hits[0]} / {hits[1]} |"
        )
    ratios = [
        statistics.median(pt) / max(statistics.median(lt), 1e-6) for _, _, lt, pt, _ in m.rows
    ]
    out.append("")
    out.append(
        f"PostgreSQL / SQLite p50 over the {len(m.rows)} queries: median {statistics.median(ratios):.2f}x, "
        f"worst {max(ratios):.2f}x; goal: within 2x at 1M messages.\n"
    )
    return out


def _report_load(args: argparse.Namespace, m: _Measured) -> list[str]:
    out: list[str] = []
    out.append(f"## {ASYNC_CLIENTS} concurrent async clients ({args.seconds:.0f} s, one process)\n")
    out.append(
        "asyncio tasks calling `SessionRecallRetriever.ainvoke` in a loop over the query mix: "
        "the store's synchronous calls run in the event loop's executor (one async model for "
        "both backends; PostgreSQL connections from the store's pool).\n"
    )
    out.append("| backend | queries/s | p50 ms | p95 ms | errors |")
    out.append("| --- | ---: | ---: | ---: | ---: |")
    for kind in ("sqlite", "postgres"):
        a = m.async_res[kind]
        out.append(
            f"| {kind} | {a['queries_per_s']:,.1f} | {a['p50']:.1f} | {a['p95']:.1f} | "
            f"{a['errors']:.0f} |"
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
        c = m.conc[kind]
        out.append(
            f"| {kind} | {c['messages_per_s']:,.0f} | {c['write_p50']:.1f} | "
            f"{c['write_p95']:.1f} | {c['write_errors']:.0f} | "
            f"{c['queries_per_s']:,.1f} | {c['read_p50']:.1f} | {c['read_p95']:.1f} | "
            f"{c['read_errors']:.0f} |"
        )
    out.append("")
    return out


def main() -> int:
    args = _arguments()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench-recall-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.only == "hold":
        return _only_hold(args, work)
    measured = _measure(args, work)
    out = [*_report_head(args, measured), *_report_load(args, measured)]
    out.extend(_run_hold(args, work))
    out.append("")
    text = "\n".join(out)
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
