"""Peak memory of a line-based import, by input size (issue 18 §1).

Each case runs in a child process of its own: a sparse file of N bytes of NULs without a
newline (``truncate -s N``: one line of N bytes, the worst case for a line reader), or a file
of many ordinary message lines. The child imports it with ``import_jsonl`` (or
``import_claude_code``) into a fresh SQLite file and exits; the parent reads the child's peak
resident set size with ``resource.getrusage(RUSAGE_CHILDREN)`` (one runner process per case,
so each figure is that child's own peak) and its wall time. A baseline child imports the
library and an empty file, so the table also shows what the import itself added.

    python benchmarks/import_memory.py [--sizes 1M,16M,64M,256M,1G] [--lines 10000,100000]
                                       [--importer jsonl|claude-code] [--code PATH]

``--code`` runs the children against another checkout of the package (e.g. the code before
the fix) to compare. Files are written to a temporary directory and removed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}

# Runs inside the measured child: import the file, print the report as JSON.
_CHILD = """
import json, sys
from langchain_session_recall import SessionStore
from langchain_session_recall.importers import import_claude_code, import_jsonl
importer = import_jsonl if sys.argv[1] == "jsonl" else import_claude_code
with SessionStore(sys.argv[3]) as store:
    report = importer(store, sys.argv[2])
print(json.dumps({"messages": report.messages, "skipped": dict(report.skipped)}))
"""

# Runs as the one child of a fresh runner process, so RUSAGE_CHILDREN is that child's peak.
_RUNNER = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
wall = time.perf_counter() - start
peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"rc": done.returncode, "out": done.stdout.strip(), "err": done.stderr[-500:],
                  "wall": wall, "peak_kb": peak_kb}))
"""


def _bytes(text: str) -> int:
    text = text.strip().upper()
    return int(float(text[:-1]) * _UNITS[text[-1]]) if text[-1] in _UNITS else int(text)


def _line(n: int, importer: str) -> str:
    if importer == "jsonl":
        return json.dumps(
            {"session_id": f"s{n // 50}", "role": "user", "content": f"nginx reload {n} " * 4}
        )
    return json.dumps(
        {
            "type": "user",
            "uuid": f"u{n}",
            "sessionId": f"s{n // 50}",
            "timestamp": "2026-11-03T10:00:00Z",
            "message": {"role": "user", "content": f"nginx reload {n} " * 4},
        }
    )


def measure_child(child: list[str], db: Path, env: dict[str, str]) -> dict[str, object]:
    """Run ``child`` (an import writing ``db``) under a fresh runner process: its report, wall
    time and peak RSS (see ``_RUNNER``); ``db`` and its side files are deleted afterwards."""
    done = subprocess.run(  # cwd: not the checkout, so PYTHONPATH decides which package runs
        [sys.executable, "-c", _RUNNER, *child],
        capture_output=True,
        text=True,
        env=env,
        cwd=db.parent,
    )
    result: dict[str, object] = json.loads(done.stdout)
    for leftover in db.parent.glob(db.name + "*"):
        leftover.unlink()
    return result


def _measure(path: Path, db: Path, importer: str, code: str | None) -> dict[str, object]:
    env = dict(os.environ)
    if code:
        env["PYTHONPATH"] = code
    return measure_child([sys.executable, "-c", _CHILD, importer, str(path), str(db)], db, env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1M,16M,64M,256M,1G")
    parser.add_argument("--lines", default="10000,100000")
    parser.add_argument("--importer", choices=("jsonl", "claude-code"), default="jsonl")
    parser.add_argument("--code", help="run against this checkout (PYTHONPATH)")
    args = parser.parse_args()

    rows: list[tuple[str, dict[str, object]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        db = work / "r.db"
        empty = work / "empty.jsonl"
        empty.touch()
        rows.append(("baseline (empty file)", _measure(empty, db, args.importer, args.code)))
        for size in filter(None, args.sizes.split(",")):
            sparse = work / "sparse.jsonl"
            with sparse.open("wb") as fh:
                fh.truncate(_bytes(size))  # a hole: no disk used, reads as NULs
            rows.append(
                (f"one {size}B line (sparse)", _measure(sparse, db, args.importer, args.code))
            )
            sparse.unlink()
        for count in filter(None, args.lines.split(",")):
            many = work / "many.jsonl"
            with many.open("w", encoding="utf-8") as fh:
                for n in range(int(count)):
                    fh.write(_line(n, args.importer) + "\n")
            size_mb = many.stat().st_size / (1 << 20)
            label = f"{int(count):,} lines ({size_mb:.1f} MB)"
            rows.append((label, _measure(many, db, args.importer, args.code)))
            many.unlink()

    print(
        f"# import {args.importer}: peak RSS per child ({platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} cpus, {time.strftime('%Y-%m-%d')})"
    )
    print("| input | peak RSS | wall | result |\n|---|---:|---:|---|")
    for label, r in rows:
        if r["rc"] != 0:
            outcome = f"exit {r['rc']}: {str(r['err']).strip().splitlines()[-1:]}"
        else:
            outcome = str(r["out"])
        peak, wall = float(str(r["peak_kb"])) / 1024, float(str(r["wall"]))
        print(f"| {label} | {peak:,.0f} MB | {wall:.2f} s | {outcome} |")


if __name__ == "__main__":
    main()
