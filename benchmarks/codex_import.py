"""Codex import rate and memory against the store's own bulk rate (issue 35).

The goals: an import rate >= 0.8x the store's bulk rate; 1M messages imported with flat memory.

For each size (messages), writes a Codex home of synthetic rollouts as Codex writes them
(``sessions/YYYY/MM/DD/rollout-*.jsonl``, compact JSON lines; per turn a ``turn_context``, a
user message, an encrypted reasoning item, a shell ``function_call`` and its output, a reply,
and the ``event_msg`` lines that repeat them for the UI; every 10th thread a sub-agent of the
one before, every 25th a fork that starts with a copy of its parent's first turn, every 50th
archived, so the sub-agent after it is read before its parent), then, each in a fresh child
process and a fresh SQLite file:

* **bulk**: the same messages, parsed outside the clock, written the way the store is fastest
  fed: ``add_session`` + ``add_messages`` inside ``store.transaction()`` per 100 sessions (the
  "bulk ingest" of docs/benchmarks-perf.md);
* **ledger**: the same, with ``import_messages`` (each message and its import-ledger row, the
  store's own idempotent bulk path) in place of ``add_messages``;
* **codex**: ``import_codex(store, home, workers=1)``: finding, reading and parsing the
  files, lineage, the import ledger (idempotence) and the same writes, in one process;
* **codex-workers**: ``import_codex(store, home, workers=2)``: the same, a worker process
  reading and parsing the rollouts while the importing process writes (its CPU time counted
  with the importing process's: ``RUSAGE_CHILDREN``; its peak RSS shown after ``+``).

Rates are messages per wall-clock second and per CPU second of the timed part (the CPU rate
moves less with the machine's load); the best of ``--repeats`` runs of each, the three paths
interleaved. Peak RSS is the child's (``ru_maxrss``), the highest of its runs; flat memory
means it does not grow with the size beyond what the bulk paths grow by (the store's side).

    python benchmarks/codex_import.py [--sizes 100000,300000,1000000] [--per-session 60]
                                      [--repeats 2] [--out docs/benchmarks-codex-import.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

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
    # Compact, keys in this order: as Codex (serde_json) writes its rollout lines.
    return json.dumps({"timestamp": ts, "type": kind, "payload": payload}, separators=(",", ":"))


def _stamp(n: int) -> str:
    """A distinct millisecond time per line, as a real rollout mostly has (no reuse to gain)."""
    moment = datetime.fromtimestamp(_START + n * 1.337, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


_CONTEXT = {"cwd": "/src/app", "approval_policy": "on-request", "model": "gpt-5-codex",
            "sandbox_policy": {"type": "workspace-write", "writable_roots": [],
                               "network_access": False},
            "effort": "medium", "summary": "auto"}  # fmt: skip
_USAGE = {"input_tokens": 18422, "cached_input_tokens": 15232, "output_tokens": 913,
          "reasoning_output_tokens": 640, "total_tokens": 19335}  # fmt: skip


def _turn(rng: random.Random, call: str, n: int) -> list[str]:
    """One turn's eleven lines (four of them messages), timed from line ``n`` on: what Codex
    writes for a turn with one shell call, the ``turn_context``, the reasoning (encrypted)
    and the ``event_msg`` lines that repeat the messages for the UI included."""
    ask = _text(rng, 14)
    reply = _text(rng, 40)  # (drawn in the order of the lines: the same corpus for a seed)
    command = json.dumps({"command": ["bash", "-lc", _text(rng, 4)], "timeout_ms": 120000})
    output = json.dumps(
        {"output": _text(rng, 60), "metadata": {"exit_code": 0, "duration_seconds": 0.8}}
    )
    thought = _text(rng, 20)
    secret = "gAAAAB" + "".join(rng.choices("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123456789", k=1500))
    usage = {
        "total_token_usage": _USAGE,
        "last_token_usage": _USAGE,
        "model_context_window": 272000,
    }
    items: list[tuple[str, dict[str, object]]] = [
        ("turn_context", _CONTEXT),
        ("response_item", {"type": "message", "role": "user",
                           "content": [{"type": "input_text", "text": ask}]}),
        ("event_msg", {"type": "user_message", "message": ask, "images": []}),
        ("response_item", {"type": "reasoning", "summary": [
            {"type": "summary_text", "text": thought}], "content": None,
            "encrypted_content": secret}),
        ("event_msg", {"type": "agent_reasoning", "text": thought}),
        ("response_item", {"type": "function_call", "name": "shell", "arguments": command,
                           "call_id": call}),
        ("response_item", {"type": "function_call_output", "call_id": call,
                           "output": output}),
        ("response_item", {"type": "message", "role": "assistant",
                           "content": [{"type": "output_text", "text": reply}]}),
        ("event_msg", {"type": "agent_message", "message": reply}),
        ("event_msg", {"type": "token_count", "info": usage,
                       "rate_limits": {"primary": {"used_percent": 12.0,
                                                   "window_minutes": 300}}}),
        ("event_msg", {"type": "task_complete", "last_agent_message": reply}),
    ]  # fmt: skip
    return [_line(_stamp(n + i), kind, payload) for i, (kind, payload) in enumerate(items)]


def _meta(thread: str, ts: str, files: int, parent: str | None) -> dict[str, object]:
    """A thread's ``session_meta``: every 10th thread a sub-agent of the one before, every
    25th a fork of it (the rest started from the command line)."""
    meta: dict[str, object] = {
        "id": thread, "timestamp": ts, "cwd": "/src/app", "originator": "codex_cli_rs",
        "cli_version": "0.63.0", "source": "cli", "model_provider": "openai",
        "git": {"commit_hash": f"{files:040x}", "branch": "main",
                "repository_url": "git@example.com:dev/app.git"},
    }  # fmt: skip
    if parent is not None and files % 10 == 0:
        meta["source"] = {"subagent": {"thread_spawn": {"parent_thread_id": parent, "depth": 1}}}
    elif parent is not None and files % 25 == 0:
        meta["forked_from_id"] = parent
    return meta


def write_home(home: Path, messages: int, per_session: int, seed: int = 7) -> int:
    """A Codex home of rollouts holding ``messages`` conversation messages of their own (a
    fork's file also repeats its parent's first turn, as Codex copies it); returns the number
    of rollout files. Every 50th thread is in ``archived_sessions/``, so the sub-agents of the
    thread after it are read before their parent."""
    rng = random.Random(seed)
    turns = max(1, per_session // 4)
    files = 0
    made = 0
    parent: tuple[str, list[str]] | None = None  # the thread before: its id, its first turn
    while made < messages:
        archived = files % 50 == 49
        day = home / ("archived_sessions" if archived else f"sessions/2026/11/{1 + files % 28:02d}")
        day.mkdir(parents=True, exist_ok=True)
        thread = f"019a{files:04x}-0000-7000-8000-{files:012x}"
        n = made * 3
        ts = _stamp(n)
        meta = _meta(thread, ts, files, parent[0] if parent else None)
        lines = [_line(ts, "session_meta", meta)]
        if "forked_from_id" in meta and parent is not None:
            lines += parent[1]
        first: list[str] = []
        for turn in range(turns):
            if made >= messages:
                break
            n += 11
            said = _turn(rng, f"call_{files}_{turn}", n)
            first = first or said
            lines += said
            made += 4
        (day / f"rollout-2026-11-01T10-00-00-{thread}.jsonl").write_text("\n".join(lines) + "\n")
        parent = (thread, first)
        files += 1
    return files


def _parsed(home: str) -> Iterator[list[Any]]:
    """The home's threads, parsed (untimed), 100 at a time: what the bulk paths write."""
    from langchain_session_recall.importers.codex import parse_codex_lines, rollout_files
    from langchain_session_recall.importers.report import ImportReport

    report = ImportReport("codex")
    files = rollout_files(Path(home), report=report)
    for i in range(0, len(files), 100):
        block = []
        for f in files[i : i + 100]:
            with f.open() as fh:
                block.append(
                    parse_codex_lines(fh, name=f.name, default_session_id=f.stem, report=report)
                )
        yield block


def _child(mode: str, home: str, db: str) -> dict[str, float]:
    from langchain_session_recall import SessionStore
    from langchain_session_recall.importers.codex import import_codex

    store = SessionStore(db)
    own_cpu = None
    if mode in ("codex", "codex-workers"):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start, cpu_start = time.perf_counter(), time.process_time()
        report = import_codex(store, home, workers=1 if mode == "codex" else 2)
        wall, own_cpu = time.perf_counter() - start, time.process_time() - cpu_start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)  # (the worker, ended by now)
        worker = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        cpu = own_cpu + worker
        count = report.messages
    else:
        wall, cpu, count = 0.0, 0.0, 0
        for sessions in _parsed(home):  # parsed outside the clock, written inside it
            start, cpu_start = time.perf_counter(), time.process_time()
            with store.transaction():
                for s in sessions:
                    store.add_session(s.id, source=s.source, model=s.model, started_at=s.started_at)
                    if mode == "ledger":
                        store.import_messages(s.id, s.messages, source_kind="codex")
                    else:
                        store.add_messages(s.id, [m for _, m in s.messages])
            wall += time.perf_counter() - start
            cpu += time.process_time() - cpu_start
            count += sum(len(s.messages) for s in sessions)
    store.close()
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "messages": count,
        "wall": wall,
        "rate": count / wall,
        "cpu_rate": count / cpu,
        "own_cpu_rate": count / (cpu if own_cpu is None else own_cpu),
        "peak_mb": peak_kb / 1024,
        "worker_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }


def _run(mode: str, home: Path, work: Path, n: int) -> dict[str, float]:
    db = work / f"{mode}-{n}.db"
    load = os.getloadavg()[0]
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(home), str(db)],
        capture_output=True,
        text=True,
        check=True,
    )
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    result: dict[str, float] = json.loads(done.stdout)
    result["load"] = (load + os.getloadavg()[0]) / 2
    return result


_MODES = (
    ("bulk", "bulk: `add_messages` in `store.transaction()` per 100 sessions"),
    ("ledger", "bulk with the ledger: `import_messages`, same blocks"),
    ("codex", "`import_codex(workers=1)` (find, read, parse, ledger, write)"),
    ("codex-workers", "`import_codex(workers=2)`: a worker reads and parses"),
)


def _measure(
    messages: int, per_session: int, repeats: int, work: Path
) -> tuple[dict[str, dict[str, float]], int, float]:
    """The best run of each mode (by rate, with the highest peak RSS of its runs), the number
    of rollouts and their size, for one size."""
    home = work / f"codex-{messages}"
    files = write_home(home, messages, per_session)
    size = sum(f.stat().st_size for f in home.rglob("*.jsonl"))
    best: dict[str, dict[str, float]] = {}
    for n in range(repeats):
        for mode, _ in _MODES:  # interleaved: each repeat sees the same load for all three
            res = _run(mode, home, work, n)
            print(
                f"{messages:,} run {n + 1} {mode}: {res['rate']:,.0f} msg/s, "
                f"{res['peak_mb']:.0f} MB, load {res['load']:.1f}",
                file=sys.stderr,
            )
            peak = max(res["peak_mb"], best[mode]["peak_mb"]) if mode in best else res["peak_mb"]
            if mode not in best or res["rate"] > best[mode]["rate"]:
                best[mode] = res
            best[mode]["peak_mb"] = peak  # the highest of the runs: memory is not "best of"
    shutil.rmtree(home)
    return best, files, size


def _peak(mode: str, res: dict[str, float]) -> str:
    """Peak RSS in MB: the importing process's, and its worker's after ``+``."""
    worker = f" + {res['worker_mb']:.0f}" if mode == "codex-workers" else ""
    return f"{res['peak_mb']:.0f}{worker}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,300000,1000000", help="messages, per run")
    parser.add_argument("--per-session", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--child", nargs=3, metavar=("MODE", "HOME", "DB"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(*args.child)))
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for messages in (int(n) for n in args.sizes.split(",")):
            best, files, size = _measure(messages, args.per_session, args.repeats, Path(tmp))
            rows += [
                f"| {best['codex']['messages']:,} ({files:,} rollouts, {size / 2**20:,.0f} MB) "
                f"| {label} | {best[m]['rate']:,.0f} | {best[m]['cpu_rate']:,.0f} | "
                f"{best[m]['own_cpu_rate']:,.0f} | "
                f"{best[m]['wall']:.1f} | {_peak(m, best[m])} | {best[m]['load']:.1f} |"
                for m, label in _MODES
            ]
            for mode in ("codex", "codex-workers"):
                ratio = best[mode]["rate"] / best["bulk"]["rate"]
                ledger_ratio = best[mode]["rate"] / best["ledger"]["rate"]
                cpu_ratio = best[mode]["cpu_rate"] / best["bulk"]["cpu_rate"]
                own_ratio = best[mode]["own_cpu_rate"] / best["bulk"]["cpu_rate"]
                rows.append(
                    f"| | **{mode} / bulk: {ratio:.2f}x** (CPU time, all processes: "
                    f"{cpu_ratio:.2f}x; the importing process's: {own_ratio:.2f}x); {mode} / "
                    f"bulk with the ledger: {ledger_ratio:.2f}x | | | | | | |"
                )
    table = "\n".join(
        [
            f"Codex import vs bulk ingest, SQLite, best of {args.repeats} per size, each run a "
            f"fresh process and a fresh database; Python {platform.python_version()}, "
            f"{platform.machine()}, {os.cpu_count()} cpus, {time.strftime('%Y-%m-%d')}.",
            "",
            "| messages | path | messages/s (wall) | messages/s (CPU, all processes) "
            "| messages/s (CPU, importing process) | seconds (wall) | peak RSS MB "
            "| load (1 min) |",
            "|---|---|---|---|---|---|---|---|",
            *rows,
        ]
    )
    print(table)
    if args.out:
        args.out.write_text(f"# Codex import rate and memory\n\n{table}\n")


if __name__ == "__main__":
    main()
