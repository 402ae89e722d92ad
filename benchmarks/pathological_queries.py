"""Cost of pathological queries: 10,000-term queries (issue 18 §6) and huge ones (issue 21 §9).

Default mode: builds the embedded demo store (SQLite in memory, or PostgreSQL with ``--dsn``),
runs each 10,000-term query once through ``SessionRecallRetriever`` after one warm-up search,
and prints the wall time. To compare with older code, run it with ``PYTHONPATH`` pointing at
that checkout from another directory.

    python benchmarks/pathological_queries.py [--dsn postgresql://...] [--terms 10000]

``--huge``: megabyte queries, each in a child process of its own (its wall time and its peak
resident memory, ``VmHWM``), against the code of ``--code PATH`` (default: this checkout):

* the Python tool (``create_session_search_tool(...).invoke``) on a 10 MB query, on a 3 MB
  single word, and on ``nginx`` (the baseline child: the same process, an ordinary query);
* the MCP server over streamable HTTP (``session-recall mcp --http 127.0.0.1:PORT``, the
  demo database in a temporary file): client A sends a 3.6 MB query while client B searches
  ``nginx`` again and again; A's time, B's slowest reply during A (how long other clients
  stalled) and B's median reply alone; the server's peak memory;
* the summarizer (``timeout=5``) given a 60 MB answer by a local fake chat model
  (``GenericFakeChatModel``: no server, no recording): its wall time against the deadline and
  its peak memory (issue 21 §10).

    python benchmarks/pathological_queries.py --huge [--code PATH] [--scale 1.0]

``--scale`` shrinks every huge query (0.1: a tenth) for a quick look. Only loopback traffic.

``--shapes DB``: the costliest query shapes against a typical query (issue 32 §4) on the perf
corpus (``benchmarks/perf/corpus.py``, seed 1), built into ``DB`` once if it does not exist
(``--size``, default 200,000 messages; some minutes) and opened read-only after that. The
typical query is the median of the perf query mix (100 queries: rare and common words,
phrases, questions, CJK); each shape is sixteen terms (the old prefix cap), its CPU time the
median of ``--repeats`` runs through ``SessionRecallRetriever``:

    python benchmarks/pathological_queries.py --shapes /tmp/lsr-200k.db [--size 200000]

With ``--dsn``, ``--shapes NAME`` is a PostgreSQL schema (built the same way if empty).
The output states the prefix budget the shapes run under (``MAX_PREFIX_TERMS``...).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from langchain_session_recall import SessionRecallRetriever, SessionStore
from langchain_session_recall.demo import load_demo

_HEAD = "nginx 502 upstream timed out while reading the response header "


def _huge_query(size: int) -> str:
    """``size`` characters of a pasted log: one line the demo data matches, repeated."""
    return (_HEAD * (size // len(_HEAD) + 1))[:size]


def _single_word(size: int) -> str:
    return ("abcdefghij" * (size // 10 + 1))[:size]


# Runs in the measured child: one tool call on the demo store, then its peak memory.
_TOOL_CHILD = """
import json, sys, time
from langchain_session_recall import create_session_search_tool
from langchain_session_recall.demo import build_demo_store
sys.path.insert(0, sys.argv[2])
from pathological_queries import _huge_query, _single_word
kind, size = sys.argv[1].split(":")
query = {"text": _huge_query, "word": _single_word}.get(kind, lambda n: "nginx")(int(size))
tool = create_session_search_tool(build_demo_store())
tool.invoke({"query": "nginx"})  # warm-up
start = time.perf_counter()
out = tool.invoke({"query": query})
wall = time.perf_counter() - start
payload = json.loads(out)
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(json.dumps({"wall": wall, "peak_kb": int(hwm.split()[1]), "bytes_out": len(out),
                  "results": payload.get("count"), "notice": payload.get("notice"),
                  "error": (payload.get("error") or "")[:120]}))
"""


# Runs in the measured child: one session summarized, the model answering ``size`` characters.
_ANSWER_CHILD = """
import json, sys, time
from langchain_core.documents import Document
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_session_recall.summarize.summarizer import SessionSummarizer
size = int(sys.argv[1])
answer = ("The nginx 502 was fixed by raising proxy_read_timeout [#2]. " * (size // 60 + 1))[:size]
doc = Document(
    page_content="[USER #1]: nginx returns 502\\n\\n[ASSISTANT #2]: raised proxy_read_timeout",
    metadata={"session_id": "s1", "query": "nginx 502", "last_message_id": 2},
)
model = GenericFakeChatModel(messages=iter([AIMessage(answer)]))
start = time.perf_counter()
[out] = SessionSummarizer(llm=model, timeout=5, cache=False).invoke([doc])
wall = time.perf_counter() - start
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(json.dumps({"wall": wall, "peak_kb": int(hwm.split()[1]),
                  "status": out.metadata["summary_status"],
                  "why": out.metadata.get("summary_rejected_because")}))
"""


def _env(code: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if code:
        env["PYTHONPATH"] = code
    return env


def _tool_case(spec: str, code: str | None) -> dict[str, Any]:
    here = str(Path(__file__).resolve().parent)
    done = subprocess.run(
        [sys.executable, "-c", _TOOL_CHILD, spec, here],
        capture_output=True,
        text=True,
        env=_env(code),
        check=False,
    )
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1][:200]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _answer_case(size: int, code: str | None) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _ANSWER_CHILD, str(size)],
        capture_output=True,
        text=True,
        env=_env(code),
        check=False,
    )
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1][:200]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def _call(url: str, query: str) -> float:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        streamable_http_client(url) as (read, write, _),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        start = time.perf_counter()
        await client.call_tool("session_search", {"query": query})
        return time.perf_counter() - start


def _mcp_case(size: int, code: str | None) -> dict[str, Any]:
    import asyncio

    from langchain_session_recall.demo import build_demo_store

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "demo.db"
        build_demo_store(db).close()
        port = _free_port()
        command = [sys.executable, "-m", "langchain_session_recall", "mcp", "--db", str(db)]
        server = subprocess.Popen(
            [*command, "--read-only", "--http", f"127.0.0.1:{port}"],
            env=_env(code),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}/mcp"
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                    break
                except OSError:
                    time.sleep(0.1)
            alone = [asyncio.run(_call(url, "nginx")) for _ in range(5)]
            during: list[float] = []
            finished = threading.Event()

            def other_client() -> None:
                while not finished.is_set():
                    during.append(asyncio.run(_call(url, "nginx")))

            big = _huge_query(size)
            thread = threading.Thread(target=other_client)
            thread.start()
            time.sleep(0.5)  # B is running when A's call arrives
            start = time.perf_counter()
            asyncio.run(_call(url, big))
            wall = time.perf_counter() - start
            finished.set()
            thread.join()
            status = Path(f"/proc/{server.pid}/status").read_text()
            hwm = next(line for line in status.splitlines() if line.startswith("VmHWM"))
        finally:
            server.terminate()
            server.wait(timeout=30)
    return {
        "wall": wall,
        "other_worst": max(during, default=float("nan")),
        "other_calls": len(during),
        "other_alone_median": statistics.median(alone),
        "peak_kb": int(hwm.split()[1]),
    }


def _mb(n: int) -> str:
    return f"{n / 1e6:g} MB"


def huge(code: str | None, scale: float, only: str | None = None) -> None:
    print(f"code: {code or 'this checkout'}; scale {scale}")
    cases = [
        ("ordinary query `nginx` (baseline)", "nginx:5"),
        (f"{_mb(int(10_000_000 * scale))} query", f"text:{int(10_000_000 * scale)}"),
        (f"{_mb(int(3_000_000 * scale))} single word", f"word:{int(3_000_000 * scale)}"),
    ]
    if only == "answer":
        return _print_answer(code, scale)
    print("| Python tool | wall time | peak RSS | reply |")
    print("|---|---:|---:|---|")
    for name, spec in cases:
        r = _tool_case(spec, code)
        if "wall" not in r:
            print(f"| {name} | failed | | {r.get('error')} |")
            continue
        reply = f"{r['results']} results, {r['bytes_out']:,} chars"
        if r.get("error"):
            reply = f"error: {r['error']}"
        print(f"| {name} | {r['wall']:.2f} s | {r['peak_kb'] / 1024:.0f} MB | {reply} |")
    size = int(3_600_000 * scale)
    m = _mcp_case(size, code)
    print()
    print(
        "| MCP over HTTP | A's call | B's slowest reply during A | B alone (median) | server peak RSS |"
    )
    print("|---|---:|---:|---:|---:|")
    print(
        f"| {_mb(size)} query | {m['wall']:.2f} s | {m['other_worst']:.2f} s "
        f"({m['other_calls']} calls) | {m['other_alone_median']:.3f} s | "
        f"{m['peak_kb'] / 1024:.0f} MB |"
    )
    if only is None:
        _print_answer(code, scale)


def _print_answer(code: str | None, scale: float) -> None:
    size = int(60_000_000 * scale)
    a = _answer_case(size, code)
    print()
    print("| summarizer, timeout=5 s | wall time | peak RSS | outcome |")
    print("|---|---:|---:|---|")
    if "wall" not in a:
        print(f"| {_mb(size)} answer | failed | | {a.get('error')} |")
        return
    why = ", ".join(a.get("why") or ())
    print(
        f"| {_mb(size)} answer | {a['wall']:.2f} s | {a['peak_kb'] / 1024:.0f} MB | "
        f"{a['status']} ({why}) |"
    )


# Sixteen terms each (the prefix cap before issue 32 §4, now MAX_PREFIX_TERMS = 3: the
# rest are left out with a notice): the words are the perf corpus's most common ones.
_WORDS = "error deploy build test fix run config server data user file log cache port path index"
_LETTERS = "c t s r p o u r b s f e m h i q"
SHAPES = {
    "16 hyphenated prefixes (`error-c*`)": " ".join(
        f"{w}-{c}*" for w, c in zip(_WORDS.split(), _LETTERS.split(), strict=True)
    ),
    "2 hyphenated prefixes": "error-c* deploy-t*",
    "16 one-letter prefixes (`c*`)": " ".join(f"{c}*" for c in "cdbtfrspeulmhiqw"),
    "16 prefixes joined by OR": " OR ".join(f"{c}*" for c in "cdbtfrspeulmhiqw"),
    "a word and 8 NOT prefixes": "nginx " + " ".join(f"NOT {c}*" for c in "cdbtfrsp"),
    "16 common words": _WORDS,
    "16 hyphenated common words": " ".join(
        f"{a}-{b}" for a, b in zip(_WORDS.split(), [*_WORDS.split()[1:], "query"], strict=True)
    ),
}


def _cpu(run: Any, query: str, repeats: int, clock: Any = time.process_time) -> float:
    times = []
    for _ in range(repeats):
        start = clock()
        run(query)
        times.append(clock() - start)
    return statistics.median(times)


def _build_perf(db: Path | Any, size: int) -> None:
    import itertools

    sys.path.insert(0, str(Path(__file__).resolve().parent / "perf"))
    import corpus  # type: ignore[import-not-found]

    store = SessionStore(str(db)) if isinstance(db, Path) else db
    specs = corpus.generate(1, size)
    while group := list(itertools.islice(specs, 500)):
        with store.transaction():
            for spec in group:
                store.add_session(spec.session_id, **spec.kwargs)
                store.add_messages(spec.session_id, spec.messages)
    store.close()


def _budget() -> str:
    """The prefix budget of the code measured (older checkouts may lack some constants)."""
    from langchain_session_recall.core import query

    names = ("MAX_PREFIX_TERMS", "MAX_QUERY_COMPLETIONS", "MAX_PREFIX_COMPLETIONS")
    return ", ".join(f"{n} = {getattr(query, n, '-')}" for n in names)


def shapes(db: Path, size: int, repeats: int, dsn: str | None = None) -> None:
    """Print the CPU time of each query shape against the typical query's (see the module
    docstring). With ``dsn``, ``db`` names a PostgreSQL schema; the CPU time is this
    process's only (the server's is not counted), so wall time is printed too."""
    sys.path.insert(0, str(Path(__file__).resolve().parent / "perf"))
    import corpus

    store: Any
    if dsn:
        from langchain_session_recall.backends.postgres.store import PostgresSessionStore

        store = PostgresSessionStore(dsn, schema=str(db))
        if not store.stats()["messages"]:
            print(f"building {size:,} messages into schema {db} (once)", file=sys.stderr)
            _build_perf(store, size)
    else:
        if not db.exists():
            print(f"building {size:,} messages into {db} (once)", file=sys.stderr)
            _build_perf(db, size)
        store = SessionStore(str(db), read_only=True)
    clock = time.perf_counter if dsn else time.process_time
    retriever = SessionRecallRetriever(store=store)
    run = retriever.invoke
    mix = [q for _, q in corpus.QUERIES]
    for q in mix:
        run(q)  # warm-up: the pages every shape reads are in the cache
    typical = statistics.median(_cpu(run, q, 1, clock) for q in mix)
    count = store.stats()["messages"]
    kind = "wall" if dsn else "CPU"
    print(f"{count:,} messages; load average {os.getloadavg()[0]:.1f} at start")
    print(f"prefix budget of the code measured: {_budget()}")
    print("(since issue 32 §4 a query searches its first MAX_PREFIX_TERMS prefixes as at most")
    print(" MAX_QUERY_COMPLETIONS index words in all; later prefixes are left out with a notice)")
    print(
        f"typical query (median of the {len(mix)}-query perf mix): {typical * 1000:.0f} ms {kind}"
    )
    print()
    print(f"| query shape | {kind} (median) | x typical |")
    print("|---|---:|---:|")
    for name, query in SHAPES.items():
        cpu = _cpu(run, query, repeats, clock)
        print(f"| {name} | {cpu * 1000:,.0f} ms | {cpu / typical:.1f} |")
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", help="a PostgreSQL DSN (a throwaway schema is used)")
    parser.add_argument("--terms", type=int, default=10_000)
    parser.add_argument("--huge", action="store_true", help="megabyte queries (issue 21 §9)")
    parser.add_argument("--code", help="with --huge: run the children against this checkout")
    parser.add_argument("--scale", type=float, default=1.0, help="with --huge: query size factor")
    parser.add_argument(
        "--only", choices=["queries", "answer"], help="with --huge: one half of the cases"
    )
    parser.add_argument("--shapes", type=Path, help="query shapes vs a typical query on this DB")
    parser.add_argument("--size", type=int, default=200_000, help="with --shapes: messages")
    parser.add_argument("--repeats", type=int, default=3, help="with --shapes: runs per shape")
    args = parser.parse_args()
    if args.shapes:
        shapes(args.shapes, args.size, args.repeats, args.dsn)
        return
    if args.huge:
        huge(args.code, args.scale, args.only)
        return
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
