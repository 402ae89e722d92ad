"""A search whose matches sit inside long sessions (issue 33, issue 31 item 2).

Claude Code sessions reach thousands of messages, and tool outputs of 100 KB; a search result
shows 8,000 characters of one. This script builds two stores in the same run:

* **long**: 200 short sessions and 3 long ones (``--messages`` each, 3,000 by default: user
  questions, a secret in some, assistant replies, ``write_file`` calls with 4 KB of
  arguments, tool outputs of 2 KB and, one in ten, of 100 KB; and a sub-agent of 400 messages
  in the middle), the query's rare word in the middle of each long one;
* **short** (the baseline): the same, each long session cut to the 40 messages around that
  word (its sub-agent to 40), so the three results show the same kind of window.

and times ``SessionRecallRetriever(store=..., k=3).invoke(query)`` on each (CPU seconds,
``time.process_time``, beside wall clock; the best and the median of ``--repeats``,
interleaved), the same for words found all over the long sessions (:data:`COMMON`), then
``session_show`` (the MCP tool's function) around the matched message of
each of the three results (``context=3``, secrets redacted). The ratio long / short is what
the length of the sessions costs: 1.0 when the work is proportional to what is shown.

    python benchmarks/long_sessions.py [--messages 3000] [--repeats 5] [--keep DIR]

``--keep DIR`` writes the stores there (``long.db``, ``short.db``) and leaves them, for
``scripts/result_identity.py dump --db DIR/long.db --queries benchmarks/long_sessions.py``.
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_session_recall import SessionRecallRetriever, SessionStore, redact_secrets
from langchain_session_recall.recall.show import show_session

COMMON = "deploy error nginx"
"""Words the long sessions hold from end to end: their matches spread over the whole chain."""
QUERIES = (
    "quokka zebrafish",
    "quokka",
    "zebrafish migration",
    COMMON,
    "write_file config",
    "timeout retry",
)
"""The queries timed (the first, and :data:`COMMON`) and those ``scripts/result_identity.py``
dumps."""

_WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "config",
    "server",
    "deploy",
    "error",
    "build",
    "cache",
    "index",
    "query",
    "table",
    "module",
    "import",
    "python",
    "rust",
    "docker",
    "nginx",
    "token",
    "retry",
    "timeout",
    "migration",
    "schema",
    "worker",
    "queue",
]
_SHORT = 200
_LONG = 3
_AROUND = 20  # messages kept on each side of the rare word in the baseline


def _text(rnd: random.Random, words: int) -> str:
    lines = []
    while words > 0:
        n = min(words, rnd.randint(6, 14))
        lines.append(" ".join(rnd.choice(_WORDS) for _ in range(n)))
        words -= n
    return "\n".join(lines)


def _long_messages(rnd: random.Random, n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(n):
        kind = i % 4
        if kind == 0:
            rare = " the quokka zebrafish case" if i == n // 2 else ""
            key = (
                f" export OPENAI_API_KEY=sk-{i:04d}abcdefghijklmnopqrstuvwx" if i % 52 == 0 else ""
            )
            out.append({"role": "user", "content": _text(rnd, 30) + rare + key})
        elif kind == 1:
            args = {"path": f"src/m{i}.py", "content": _text(rnd, 600)}
            call = {"id": f"c{i}", "name": "write_file", "args": args}
            out.append({"role": "assistant", "content": _text(rnd, 20), "tool_calls": [call]})
        elif kind == 2:
            size = 15_000 if i % 40 == 2 else 300  # words: ~100 KB, ~2 KB
            out.append(
                {
                    "role": "tool",
                    "tool_name": "write_file",
                    "tool_call_id": f"c{i - 1}",
                    "content": _text(rnd, size),
                }
            )
        else:
            out.append({"role": "assistant", "content": _text(rnd, 80)})
    for t, message in enumerate(out):
        message["timestamp"] = 1_700_000_000.0 + t
    return out


def build(path: Path, messages: int, *, cut: bool) -> SessionStore:
    """A store of short sessions and ``_LONG`` long ones (cut around the rare word: ``cut``)."""
    rnd = random.Random(1)
    store = SessionStore(path)
    with store.transaction():
        for s in range(_SHORT):
            store.add_session(f"short-{s}", title=f"short {s}", started_at=1_700_100_000.0 + s)
            rare = " zebrafish" if s % 20 == 0 else ""
            store.add_messages(
                f"short-{s}",
                [
                    {"role": "user", "content": _text(rnd, 30) + rare},
                    {"role": "assistant", "content": _text(rnd, 50)},
                ],
            )
        for s in range(_LONG):
            sid = f"long-{s}"
            store.add_session(sid, title=f"long {s}", started_at=1_700_000_000.0 + s)
            chain = _long_messages(rnd, messages)
            if cut:
                middle = messages // 2
                chain = chain[middle - _AROUND : middle + _AROUND]
            for i in range(0, len(chain), 500):
                store.add_messages(sid, chain[i : i + 500])
            # a sub-agent whose messages fall among its parent's (a "--- session" line each way)
            sub = _long_messages(rnd, 40 if cut else 400)
            for t, message in enumerate(sub):
                message["timestamp"] = 1_700_000_000.0 + messages // 2 + 3 + t * 0.001
            store.add_session(f"{sid}-sub", parent_session_id=sid, started_at=1_700_000_000.0)
            store.add_messages(f"{sid}-sub", sub)
    return store


def _timed(run: Callable[[], object]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    run()
    return time.process_time() - cpu, time.perf_counter() - wall


def _searched(retriever: SessionRecallRetriever, query: str) -> list[tuple[str, int]]:
    """The results' sessions and best matched messages (for the rare word: the long ones)."""
    docs = retriever.invoke(query)
    if query == QUERIES[0]:
        assert [d.metadata["session_id"].startswith("long-") for d in docs] == [True] * 3
    return [(d.metadata["session_id"], d.metadata["matched_message_ids"][0]) for d in docs]


def _shown(store: SessionStore, found: list[tuple[str, int]]) -> None:
    for session_id, message_id in found:
        show_session(store, session_id, message_ids=[message_id], context=3, redact=redact_secrets)


def _table(title: str, times: dict[str, list[tuple[float, float]]]) -> None:
    print(f"\n{title}")
    print("| store | CPU best | CPU median | wall best | wall median |")
    print("|---|---:|---:|---:|---:|")
    for name, rows in times.items():
        cpu, wall = [r[0] for r in rows], [r[1] for r in rows]
        print(
            f"| {name} | {min(cpu) * 1000:,.1f} ms | {statistics.median(cpu) * 1000:,.1f} ms "
            f"| {min(wall) * 1000:,.1f} ms | {statistics.median(wall) * 1000:,.1f} ms |"
        )
    long_cpu = statistics.median(r[0] for r in times["long"])
    short_cpu = statistics.median(r[0] for r in times["short"])
    print(f"\nlong / short (CPU, median): {long_cpu / short_cpu:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=3_000, help="messages per long session")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="write the stores to this directory")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="long-sessions-"))
    folder.mkdir(parents=True, exist_ok=True)
    stores = {}
    for name, cut in (("long", False), ("short", True)):
        (folder / f"{name}.db").unlink(missing_ok=True)
        started = time.perf_counter()
        stores[name] = build(folder / f"{name}.db", args.messages, cut=cut)
        print(f"{name}: built in {time.perf_counter() - started:.1f} s")
    query = QUERIES[0]
    retrievers = {n: SessionRecallRetriever(store=s, k=3) for n, s in stores.items()}
    found = {n: _searched(r, query) for n, r in retrievers.items()}  # warm: caches, patterns
    runs: dict[str, dict[str, Callable[[], object]]] = {
        f"search {query!r}, k=3": {
            n: functools.partial(_searched, r, query) for n, r in retrievers.items()
        },
        f"search {COMMON!r} (words found all over the long sessions), k=3": {
            n: functools.partial(_searched, r, COMMON) for n, r in retrievers.items()
        },
        "session_show around each result's best match, context 3": {
            n: functools.partial(_shown, stores[n], found[n]) for n in stores
        },
    }
    for work in runs.values():
        for run in work.values():
            run()
    times = {title: {n: [] for n in stores} for title in runs}
    for _ in range(args.repeats):
        for title, work in runs.items():
            for name, run in work.items():
                times[title][name].append(_timed(run))
    print(f"\n{args.messages} messages a long session; load average {os.getloadavg()[0]:.1f}")
    for title, table in times.items():
        _table(title, table)
    for store in stores.values():
        store.close()
    if args.keep is None:
        for name in stores:
            (folder / f"{name}.db").unlink(missing_ok=True)
        folder.rmdir()


if __name__ == "__main__":
    main()
