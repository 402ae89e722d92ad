"""Codex import rate against the store's own bulk rate (issue 35: goal >= 0.8x).

Writes a Codex home of synthetic rollouts (``sessions/YYYY/MM/DD/rollout-*.jsonl``, turns of a
user message, a reply, a shell ``function_call`` and its output, plus the reasoning,
``turn_context`` and ``event_msg`` lines a real rollout carries), then, each in a fresh child
process and a fresh SQLite file:

* **bulk**: the same messages, already parsed, written the way the store is fastest fed:
  ``add_session`` + ``add_messages`` inside ``store.transaction()`` per 100 sessions (the
  "bulk ingest" of docs/benchmarks-perf.md);
* **ledger**: the same, with ``import_messages`` (each message and its import-ledger row, the
  store's own idempotent bulk path) in place of ``add_messages``;
* **codex**: ``import_codex(store, home)``: finding, reading and parsing the files, the import
  ledger (idempotence) and the same writes.

Rates are messages per wall-clock second; the best of ``--repeats`` runs of each. The child's
peak RSS is shown too.

    python benchmarks/codex_import.py [--messages 100000] [--per-session 60] [--repeats 2]
                                      [--out docs/benchmarks-codex-import.md]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

_VOCABULARY = (
    "upload timeout retry bucket multipart thumbnail cache redis lock worker queue migration "
    "schema index tls certificate nginx header cors token refresh session cookie pytest ci "
    "flaky docker compose volume region latency p99 trace span batch cron backup restore "
    "branch rebase commit diff patch lint mypy ruff format import module config env secret"
)
_WORDS = _VOCABULARY.split()


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n)) + f" #{rng.randrange(10**6)}"


_START = 1_795_000_000.0  # 2026-11-18


def _line(ts: str, kind: str, payload: dict[str, object]) -> str:
    return json.dumps({"timestamp": ts, "type": kind, "payload": payload})


def _stamp(n: int) -> str:
    """A distinct millisecond time per line, as a real rollout mostly has (no reuse to gain)."""
    moment = datetime.fromtimestamp(_START + n * 1.337, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _turn(rng: random.Random, call: str, n: int) -> list[str]:
    """One turn's seven lines (four of them messages), timed from line ``n`` on."""
    ask = _text(rng, 14)
    reply = _text(rng, 40)  # (drawn in the order of the lines: the same corpus for a seed)
    command = json.dumps({"command": ["bash", "-lc", _text(rng, 4)]})
    output = _text(rng, 60)
    items: list[tuple[str, dict[str, object]]] = [
        ("response_item", {"type": "message", "role": "user",
                           "content": [{"type": "input_text", "text": ask}]}),
        ("event_msg", {"type": "user_message", "message": ask}),
        ("response_item", {"type": "reasoning", "summary": [],
                           "encrypted_content": "gAAAA" + "x" * 200}),
        ("response_item", {"type": "message", "role": "assistant",
                           "content": [{"type": "output_text", "text": reply}]}),
        ("response_item", {"type": "function_call", "name": "shell", "arguments": command,
                           "call_id": call}),
        ("response_item", {"type": "function_call_output", "call_id": call,
                           "output": output}),
        ("event_msg", {"type": "token_count", "info": None}),
    ]  # fmt: skip
    return [_line(_stamp(n + i), kind, payload) for i, (kind, payload) in enumerate(items)]


def write_home(home: Path, messages: int, per_session: int, seed: int = 7) -> int:
    """A Codex home of rollouts holding ``messages`` conversation messages; returns the
    number of rollout files."""
    rng = random.Random(seed)
    turns = max(1, per_session // 4)
    files = 0
    made = 0
    while made < messages:
        day = home / "sessions" / "2026" / "11" / f"{1 + files % 28:02d}"
        day.mkdir(parents=True, exist_ok=True)
        thread = f"019a{files:04x}-0000-7000-8000-{files:012x}"
        n = made * 2
        ts = _stamp(n)
        meta = {"id": thread, "timestamp": ts, "cwd": "/src/app", "originator": "codex_cli_rs",
                "cli_version": "0.63.0", "source": "cli", "git": {"branch": "main"}}  # fmt: skip
        lines = [
            _line(ts, "session_meta", meta),
            _line(ts, "turn_context", {"cwd": "/src/app", "model": "gpt-5-codex"}),
        ]
        for turn in range(turns):
            if made >= messages:
                break
            n += 7
            lines += _turn(rng, f"call_{files}_{turn}", n)
            made += 4
        (day / f"rollout-2026-11-01T10-00-00-{thread}.jsonl").write_text("\n".join(lines) + "\n")
        files += 1
    return files


def _child(mode: str, home: str, db: str) -> dict[str, float]:
    from langchain_session_recall import SessionStore
    from langchain_session_recall.importers.codex import (
        import_codex,
        parse_codex_lines,
        rollout_files,
    )
    from langchain_session_recall.importers.report import ImportReport

    store = SessionStore(db)
    if mode == "codex":
        start = time.perf_counter()
        report = import_codex(store, home)
        wall = time.perf_counter() - start
        count = report.messages
    else:
        report = ImportReport("codex")
        sessions = []
        for f in rollout_files(Path(home), report=report):
            with f.open() as fh:
                sessions.append(
                    parse_codex_lines(fh, name=f.name, default_session_id=f.stem, report=report)
                )
        start = time.perf_counter()
        for i in range(0, len(sessions), 100):
            with store.transaction():
                for s in sessions[i : i + 100]:
                    store.add_session(s.id, source=s.source, model=s.model, started_at=s.started_at)
                    if mode == "ledger":
                        store.import_messages(s.id, s.messages, source_kind="codex")
                    else:
                        store.add_messages(s.id, [m for _, m in s.messages])
        wall = time.perf_counter() - start
        count = sum(len(s.messages) for s in sessions)
    store.close()
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"messages": count, "wall": wall, "rate": count / wall, "peak_mb": peak_kb / 1024}


def _run(mode: str, home: Path, work: Path, n: int) -> dict[str, float]:
    db = work / f"{mode}-{n}.db"
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(home), str(db)],
        capture_output=True,
        text=True,
        check=True,
    )
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--per-session", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--child", nargs=3, metavar=("MODE", "HOME", "DB"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(*args.child)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        home = work / "codex"
        files = write_home(home, args.messages, args.per_session)
        size = sum(f.stat().st_size for f in home.rglob("*.jsonl"))
        best: dict[str, dict[str, float]] = {}
        for n in range(args.repeats):
            for mode in ("bulk", "ledger", "codex"):
                res = _run(mode, home, work, n)
                print(f"run {n + 1} {mode}: {res['rate']:,.0f} msg/s", file=sys.stderr)
                if mode not in best or res["rate"] > best[mode]["rate"]:
                    best[mode] = res
    ratio = best["codex"]["rate"] / best["bulk"]["rate"]
    ledger_ratio = best["codex"]["rate"] / best["ledger"]["rate"]
    table = "\n".join(
        [
            f"Codex import vs bulk ingest, SQLite, {best['codex']['messages']:,} messages in "
            f"{files:,} rollouts ({size / 2**20:.0f} MB of JSONL), best of {args.repeats}; "
            f"Python {platform.python_version()}, {platform.machine()}.",
            "",
            "| path | messages/s (wall) | seconds | peak RSS MB |",
            "|---|---|---|---|",
            *(
                f"| {label} | {best[m]['rate']:,.0f} | {best[m]['wall']:.2f} | "
                f"{best[m]['peak_mb']:.0f} |"
                for m, label in (
                    ("bulk", "bulk: `add_messages` in `store.transaction()` per 100 sessions"),
                    ("ledger", "bulk with the ledger: `import_messages`, same blocks"),
                    ("codex", "`import_codex` (find, read, parse, ledger, write)"),
                )
            ),
            "",
            f"Codex import / bulk: **{ratio:.2f}x** (goal >= 0.8x: "
            f"{'met' if ratio >= 0.8 else 'not met'}); / bulk with the ledger: "
            f"**{ledger_ratio:.2f}x**.",
        ]
    )
    print(table)
    if args.out:
        args.out.write_text(f"# Codex import rate\n\n{table}\n")


if __name__ == "__main__":
    main()
