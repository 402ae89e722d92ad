"""``session-recall sync`` with nothing new, for a home of 10,000 sessions (issue 35: goal
under 1 s).

Writes a home directory of synthetic transcripts where the agents keep them (Claude Code
``~/.claude/projects``, Codex ``~/.codex/sessions``, Gemini CLI ``~/.gemini/tmp``: a third of
the sessions each, a few messages and a tool call apiece), imports it once
(``import_auto``), then times, on the same store in the same run:

* **re-import**: ``import_auto`` again, the baseline: every file read and parsed, the import
  ledger keeping every message out (what a cron job re-running the importers would cost);
* **sync, nothing new**: ``sync``: each file's size and time compared with the ones recorded,
  nothing read;
* **sync, one session grew**: a line appended to one transcript, then ``sync``;
* **CLI sync**: ``session-recall sync --db ... --home ...`` in a child process, interpreter
  start included (what cron runs), and **CLI start-up** alone (``session-recall --version``)
  for what of it is the interpreter and the imports.

Times are wall-clock seconds, the best and the median of ``--repeats`` runs (the machine is
shared: the best is the least disturbed).

    python benchmarks/sync_noop.py [--sessions 10000] [--repeats 5] [--out docs/benchmarks-sync.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from langchain_session_recall import SessionStore
from langchain_session_recall.importers import import_auto, sync

_DAY = "2026-11-20T09:00:00"


def _claude(home: Path, n: int) -> Path:
    sid = str(uuid.UUID(int=n))
    lines = [
        {
            "type": "user",
            "uuid": f"{sid}-u",
            "sessionId": sid,
            "timestamp": f"{_DAY}Z",
            "message": {"role": "user", "content": f"why does upload {n} time out?"},
        },
        {
            "type": "assistant",
            "uuid": f"{sid}-a",
            "parentUuid": f"{sid}-u",
            "sessionId": sid,
            "timestamp": f"{_DAY}Z",
            "message": {
                "id": f"msg-{n}",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [
                    {"type": "text", "text": "Reading the upload handler."},
                    {"type": "tool_use", "id": f"t{n}", "name": "Read", "input": {"path": "up.py"}},
                ],
            },
        },
        {
            "type": "user",
            "uuid": f"{sid}-r",
            "parentUuid": f"{sid}-a",
            "sessionId": sid,
            "timestamp": f"{_DAY}Z",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"t{n}", "content": "ok"}],
            },
        },
    ]
    return _write(home / ".claude/projects/-home-dev-api" / f"{sid}.jsonl", lines)


def _codex(home: Path, n: int) -> Path:
    tid = f"019aa1c2-0000-7000-8000-{n:012d}"
    ask = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"t {n}"}]}
    call = {"type": "function_call", "name": "shell", "call_id": f"c{n}", "arguments": "{}"}
    lines = [
        {"timestamp": f"{_DAY}Z", "type": "session_meta", "payload": {"id": tid, "cwd": "/src"}},
        {"timestamp": f"{_DAY}Z", "type": "response_item", "payload": ask},
        {"timestamp": f"{_DAY}Z", "type": "response_item", "payload": call},
    ]
    name = f"rollout-{_DAY.replace(':', '-')}-{tid}.jsonl"
    return _write(home / ".codex/sessions/2026/11/20" / name, lines)


def _gemini(home: Path, n: int) -> Path:
    sid = str(uuid.UUID(int=((n + 1) << 96) | n))  # distinct first 8 digits: the file name
    lines = [
        {"sessionId": sid, "projectHash": "p", "startTime": f"{_DAY}.000Z", "kind": "main"},
        {"id": f"m{n}", "timestamp": f"{_DAY}.000Z", "type": "user", "content": [{"text": "hi"}]},
        {"id": f"g{n}", "timestamp": f"{_DAY}.000Z", "type": "gemini", "content": "hello"},
    ]
    name = f"session-2026-11-20T09-00-{sid[:8]}.jsonl"
    return _write(home / ".gemini/tmp/api/chats" / name, lines)


def _write(path: Path, lines: list[dict[str, object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def build_home(home: Path, sessions: int) -> list[Path]:
    """``sessions`` transcripts, a third per agent; returns their files."""
    writers = (_claude, _codex, _gemini)
    return [writers[n % 3](home, n) for n in range(sessions)]


def _times(run: Callable[[], object], repeats: int) -> tuple[float, float]:
    seen = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        seen.append(time.perf_counter() - start)
    return min(seen), statistics.median(seen)


def _cli(*argv: str) -> None:
    cli = [sys.executable, "-m", "langchain_session_recall"]
    subprocess.run([*cli, *argv], check=True, capture_output=True)


def measure(sessions: int, repeats: int) -> dict[str, object]:
    """Every figure of the table."""
    with tempfile.TemporaryDirectory() as tmp:
        home, db = Path(tmp) / "home", Path(tmp) / "recall.db"
        files = build_home(home, sessions)
        store = SessionStore(db)
        start = time.perf_counter()
        first = import_auto(store, home)
        first_s = time.perf_counter() - start
        imported = sum(s.report.sessions for s in first.sources if s.report)
        reimport = _times(lambda: import_auto(store, home), max(1, repeats // 2))
        noop = _times(lambda: sync(store, home), repeats)
        grown = files[0]

        def grow_and_sync() -> None:
            entry = json.loads(grown.read_text().splitlines()[0])
            entry["uuid"] = str(uuid.uuid4())
            with grown.open("a") as fh:
                fh.write(json.dumps(entry) + "\n")
            sync(store, home)

        one = _times(grow_and_sync, repeats)
        store.close()
        cli = _times(lambda: _cli("sync", "--db", str(db), "--home", str(home)), repeats)
        start_up = _times(lambda: _cli("--version"), repeats)
    return {
        "sessions": imported,
        "first": first_s,
        "reimport": reimport,
        "noop": noop,
        "one": one,
        "cli": cli,
        "start_up": start_up,
    }


def timing_table(
    figures: dict[str, object], rows: list[tuple[str, str]], base: float, digits: int = 3
) -> list[str]:
    """The lines of a table of timed runs: each row's best and median seconds, and its best
    against ``base`` (the baseline's best)."""
    lines = ["| run | best s | median s | best / baseline |", "|---|---|---|---|"]
    for label, key in rows:
        best, median = figures[key]  # type: ignore[misc]
        lines.append(f"| {label} | {best:.3f} | {median:.3f} | {best / base:.{digits}f}x |")
    return lines


def render(figures: dict[str, object], repeats: int) -> str:
    rows = [
        ("`import_auto` again (baseline: every file read, the ledger skips all)", "reimport"),
        ("`sync`, nothing new", "noop"),
        ("`sync`, one transcript grew by a line", "one"),
        ("`session-recall sync` (child process, start-up included)", "cli"),
        ("`session-recall --version` (start-up alone)", "start_up"),
    ]
    base = figures["reimport"][0]  # type: ignore[index]
    lines = [
        "# sync with nothing new",
        "",
        f"{figures['sessions']:,} sessions (Claude Code, Codex, Gemini CLI transcripts, a third "
        f"each) in one home directory, SQLite store; first `import_auto` "
        f"{figures['first']:.1f} s. Best and median of {repeats} runs; Python "
        f"{platform.python_version()}, {platform.machine()}, load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.",
        "",
        *timing_table(figures, rows, base),
    ]
    lines += [
        "",
        "`python benchmarks/sync_noop.py --sessions "
        f"{figures['sessions']} --repeats {repeats}` (goal: under 1 s for 10,000 sessions).",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    table = render(measure(args.sessions, args.repeats), args.repeats)
    print(table)
    if args.out is not None:  # (the sections after this one, e.g. sync_append's, are kept)
        old = args.out.read_text() if args.out.exists() else ""
        after = old.find("\n# ", 1)
        args.out.write_text(table + (old[after + 1 :] if after >= 0 else ""))


if __name__ == "__main__":
    main()
