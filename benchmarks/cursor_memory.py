"""Peak memory of ``import_cursor`` on Cursor ``state.vscdb`` files of growing size (issue 35).

A generated ``state.vscdb`` (``cursorDiskKV``: ``composerData:<id>`` rows with their
``fullConversationHeadersOnly`` and one ``bubbleId:<id>:<bubble>`` row per message, ~2 KB of
text each, a tool call every fifth bubble) of each size is imported into a fresh SQLite store by
a child process; the parent reads the child's peak resident set size
(``resource.getrusage(RUSAGE_CHILDREN)``, one runner process per case as in
``import_memory.py``) and its wall time. A baseline child imports a database with no
conversation. Flat memory means the peak does not grow with the file.

    python -m benchmarks.cursor_memory [--sizes 25M,200M] [--out docs/benchmarks-cursor.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.import_memory import _bytes, measure_child

_CHILD = """
import json, sys
from langchain_session_recall import SessionStore
from langchain_session_recall.importers import import_cursor
with SessionStore(sys.argv[2]) as store:
    report = import_cursor(store, sys.argv[1])
print(json.dumps({"sessions": report.sessions, "messages": report.messages,
                  "skipped": report.skipped_total}))
"""
_WORDS = [
    "cart",
    "lock",
    "redis",
    "timeout",
    "checkout",
    "flaky",
    "retry",
    "nginx",
    "origin",
    "header",
    "deploy",
    "rollback",
    "migration",
    "index",
    "query",
    "latency",
    "cache",
    "worker",
    "queue",
    "postgres",
    "replica",
    "vacuum",
    "token",
]
_BUBBLES = 50


def _text(rng: random.Random, size: int) -> str:
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < size:
        words.append(rng.choice(_WORDS) + str(rng.randrange(1000)))
    return " ".join(words)


def build(path: Path, size: int) -> int:
    """A state.vscdb of about ``size`` bytes; returns the number of bubbles written."""
    rng = random.Random(35)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    written, n = 0, 0
    while written < size:
        cid = f"{n:08d}-0000-4000-8000-000000000000"
        headers = [
            {"bubbleId": f"b{i:03d}", "type": 1 if i % 2 == 0 else 2} for i in range(_BUBBLES)
        ]
        composer = {
            "composerId": cid,
            "name": f"conversation {n}",
            "createdAt": 1_793_700_000_000,
            "fullConversationHeadersOnly": headers,
        }
        rows = [(f"composerData:{cid}", json.dumps(composer).encode())]
        for i, h in enumerate(headers):
            bubble: dict[str, object] = {
                "type": h["type"],
                "text": _text(rng, 2000),
                "createdAt": 1_793_700_000_000 + n * 60_000 + i * 1000,
            }
            if i % 5 == 4:
                bubble["toolFormerData"] = {
                    "name": "run_terminal_command_v2",
                    "toolCallId": f"t{n}-{i}",
                    "params": {"command": "npm test"},
                    "result": json.dumps({"output": _text(rng, 500)}),
                }
            rows.append((f"bubbleId:{cid}:{h['bubbleId']}", json.dumps(bubble).encode()))
        conn.executemany("INSERT INTO cursorDiskKV VALUES (?, ?)", rows)
        written += sum(len(k) + len(v) for k, v in rows)
        n += 1
    conn.commit()
    conn.close()
    return n * _BUBBLES


def _measure(source: Path, db: Path) -> dict[str, object]:
    child = [sys.executable, "-c", _CHILD, str(source), str(db)]
    return measure_child(child, db, dict(os.environ))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="25M,200M")
    parser.add_argument("--out", help="also write the table to this file")
    args = parser.parse_args()
    rows: list[tuple[str, dict[str, object]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        empty = work / "empty.vscdb"
        build(empty, 0)
        rows.append(("baseline (no conversation)", _measure(empty, work / "r.db")))
        for size in filter(None, args.sizes.split(",")):
            source = work / "state.vscdb"
            bubbles = build(source, _bytes(size))
            mb = source.stat().st_size / (1 << 20)
            rows.append((f"{mb:,.0f} MB, {bubbles:,} bubbles", _measure(source, work / "r.db")))
            source.unlink()
    lines = [
        f"# import cursor (state.vscdb): peak RSS per child ({platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} cpus, {time.strftime('%Y-%m-%d')})",
        "",
        "| state.vscdb | peak RSS | wall | imported |",
        "|---|---:|---:|---|",
    ]
    for label, r in rows:
        peak, wall = float(str(r["peak_kb"])) / 1024, float(str(r["wall"]))
        outcome = str(r["out"]) if r["rc"] == 0 else f"exit {r['rc']}: {r['err']}"
        lines.append(f"| {label} | {peak:,.0f} MB | {wall:.1f} s | {outcome} |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
