"""The write mix of issue 21: importers, recorders and searchers, each a process, on one store.

Every process starts at once (a start barrier) and works until the same deadline:

* an **importer** writes a JSON Lines file of 50 to 250 sessions of 20 to 60 messages, imports
  it as the CLI does (``import_target`` + ``import_jsonl``: the store is opened anew for every
  file; each 100 sessions are one write transaction of up to 6,000 messages, written back to
  back), and starts over with a new file;
* a **recorder** is a LangChain agent run recorded by :class:`SessionRecorder`: a user message
  and a model's answer per turn, a new session every 10 turns, a pause of up to 0.1 s between
  turns; at the end it calls ``flush()``. A turn's time includes its two writes, so it shows
  how long an agent waits for the store;
* a **searcher** searches a word of the imported text every 0.1 s; half of them open the store
  for every search, as the CLI does (without ``--read-only``), half keep one store open.

Afterwards every message that an import reported and every message that a recorder accepted
is looked up in the store (each carries a unique token): **lost** counts those missing,
**duplicates** those stored twice. **Errors** count every exception a process saw (a failed
import, a failed search, a store that would not open) and every recorder message left unsaved
or logged as an ERROR. A read's latency is measured around the search (and the open, for the
searchers that open the store each time).

Run it from the repository root (figures as a Markdown table)::

    python tests/reliability/write_mix.py --seconds 60                   # SQLite
    python tests/reliability/write_mix.py --seconds 60 --dsn "$SESSION_RECALL_PG_DSN"

``test_write_mix.py`` runs it in the test suite for ``SESSION_RECALL_MIX_SECONDS`` (15 by
default) on each backend.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
WORDS = ("nginx", "deploy", "timeout", "postgres", "certificate", "rollback", "latency", "cache")
SEARCH_PAUSE = 0.1
TURN_PAUSE = 0.1
TURNS_PER_SESSION = 10
SESSIONS_PER_FILE = (50, 250)  # an import writes 100 sessions per transaction
MESSAGES_PER_SESSION = (20, 60)
PRELOAD = {
    "importer": ["langchain_session_recall.importers.jsonl"],
    "recorder": [
        "langchain_core.language_models.fake_chat_models",
        "langchain_session_recall.recorder",
    ],
    "searcher": ["langchain_session_recall.search.pipeline"],
}


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(REPO), str(TESTS), env.get("PYTHONPATH")])
    )
    return env


# --------------------------------------------------------------------------- child processes


def _wait_for_start(barrier: Path, role: str, expected: int) -> None:
    (barrier / f"{role}.ready").touch()
    while len(list(barrier.glob("*.ready"))) < expected:
        time.sleep(0.01)


def _importer(target: str, n: int, work: Path, deadline: float) -> dict[str, Any]:
    from langchain_session_recall.importers import import_jsonl
    from langchain_session_recall.importers.base import import_target

    rng = random.Random(n)
    reported, files, errors = 0, 0, []
    written: dict[str, int] = {}  # file -> lines written
    while time.time() < deadline:
        path = work / f"imp{n}-{files}.jsonl"
        lines = []
        for s in range(rng.randint(*SESSIONS_PER_FILE)):
            sid = f"imp{n}-{files}-{s}"
            for m in range(rng.randint(*MESSAGES_PER_SESSION)):
                word = rng.choice(WORDS)
                lines.append(
                    json.dumps(
                        {
                            "session_id": sid,
                            "role": "user" if m % 2 == 0 else "assistant",
                            "content": f"tok{sid}m{m}x the {word} question number {m} of {sid}",
                        }
                    )
                )
        path.write_text("\n".join(lines) + "\n")
        written[path.name] = len(lines)
        files += 1
        try:
            with import_target(target) as store:
                reported += import_jsonl(store, path).messages
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
    return {"files": files, "lines": sum(written.values()), "reported": reported, "errors": errors}


def _recorder(target: str, n: int, deadline: float) -> dict[str, Any]:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    from langchain_session_recall import SessionRecorder
    from langchain_session_recall.backends import open_store

    logged: list[str] = []

    class Counter(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            logged.append(record.getMessage())

    logging.getLogger("langchain_session_recall.recorder").addHandler(Counter(logging.ERROR))
    rng = random.Random(1000 + n)
    accepted, errors, turn = 0, [], 0
    turns: list[float] = []  # seconds each recorded turn took (its two writes included)
    try:
        store = open_store(target)
    except Exception as exc:
        return {"accepted": 0, "errors": [f"open_store: {type(exc).__name__}: {exc}"]}
    recorder = SessionRecorder(store, source="mix")
    while time.time() < deadline:
        sid = f"rec{n}-{turn // TURNS_PER_SESSION}"
        token = f"tokrec{n}t{turn}"
        model = GenericFakeChatModel(messages=iter([AIMessage(f"{token}a answer {turn}")]))
        started = time.perf_counter()
        try:
            model.invoke(
                f"{token}u question {turn}",
                config={"callbacks": [recorder], "metadata": {"thread_id": sid}},
            )
            accepted += 2
            turns.append(time.perf_counter() - started)
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
        turn += 1
        time.sleep(rng.uniform(0, TURN_PAUSE))
    unsaved = recorder.flush() if hasattr(recorder, "flush") else 0  # (older code: none)
    store.close()
    return {
        "accepted": accepted,
        "turns": turns,
        "unsaved": unsaved,
        "recorder_errors": recorder.errors,
        "errors": errors + logged,
    }


def _searcher(target: str, n: int, deadline: float) -> dict[str, Any]:
    from langchain_session_recall.backends import open_store
    from langchain_session_recall.search.pipeline import search_sessions

    rng = random.Random(2000 + n)
    reopen = n % 2 == 1
    kept = None if reopen else open_store(target)
    latencies: list[float] = []
    hits, errors = 0, []
    while time.time() < deadline:
        word = rng.choice(WORDS)
        started = time.perf_counter()
        try:
            store = open_store(target, create=False) if reopen else kept
            assert store is not None
            try:
                hits += bool(search_sessions(store, word).sessions)
            finally:
                if reopen:
                    store.close()
            latencies.append(time.perf_counter() - started)
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
        time.sleep(rng.uniform(0, SEARCH_PAUSE))
    if kept is not None:
        kept.close()
    return {"latencies": latencies, "hits": hits, "errors": errors}


def _child(argv: list[str]) -> None:
    role, target, n, barrier, expected, seconds = argv
    work = Path(barrier).parent
    # everything imported before the clock starts (LangChain takes seconds on a busy machine)
    for module in PRELOAD[role]:
        importlib.import_module(module)
    _wait_for_start(Path(barrier), f"{role}{n}", int(expected))
    deadline = time.time() + float(seconds)
    try:
        if role == "importer":
            result = _importer(target, int(n), work, deadline)
        elif role == "recorder":
            result = _recorder(target, int(n), deadline)
        else:
            result = _searcher(target, int(n), deadline)
    except Exception:
        result = {"errors": [traceback.format_exc()]}
    print(json.dumps({"role": role, "n": int(n), **result}))


# --------------------------------------------------------------------------- the parent


@dataclass
class MixResult:
    """What one run of the mix did and found."""

    backend: str
    seconds: float
    importers: list[dict[str, Any]] = field(default_factory=list)
    recorders: list[dict[str, Any]] = field(default_factory=list)
    searchers: list[dict[str, Any]] = field(default_factory=list)
    failed_processes: list[str] = field(default_factory=list)
    imported_stored: int = 0
    recorded_stored: int = 0
    recorded_distinct: int = 0

    @property
    def imported(self) -> int:
        return sum(r.get("reported", 0) for r in self.importers)

    @property
    def import_lines(self) -> int:
        return sum(r.get("lines", 0) for r in self.importers)

    @property
    def recorded(self) -> int:
        return sum(r.get("accepted", 0) for r in self.recorders)

    @property
    def lost(self) -> int:
        """Lines of every file the importers wrote, and messages the recorders accepted, that
        the store does not hold."""
        return (self.import_lines - self.imported_stored) + (self.recorded - self.recorded_distinct)

    @property
    def duplicates(self) -> int:
        return self.recorded_stored - self.recorded_distinct

    @property
    def errors(self) -> list[str]:
        found = [
            e
            for group in (self.importers, self.recorders, self.searchers)
            for r in group
            for e in r.get("errors", [])
        ]
        found += [
            f"recorder {r['n']}: {r['unsaved']} unsaved" for r in self.recorders if r.get("unsaved")
        ]
        return found + self.failed_processes

    @property
    def latencies(self) -> list[float]:
        return sorted(x for r in self.searchers for x in r.get("latencies", []))

    @property
    def turns(self) -> list[float]:
        return sorted(x for r in self.recorders for x in r.get("turns", []))

    def figures(self) -> dict[str, Any]:
        lat, turns = self.latencies, self.turns
        return {
            "backend": self.backend,
            "seconds": self.seconds,
            "files imported": sum(r.get("files", 0) for r in self.importers),
            "messages imported": self.imported,
            "messages recorded": self.recorded,
            "messages written": self.imported + self.recorded,
            "lost": self.lost,
            "duplicates": self.duplicates,
            "errors": len(self.errors),
            "reads served": len(lat),
            "read p50 ms": _ms(lat, 0.5),
            "read p95 ms": _ms(lat, 0.95),
            "read max ms": _ms(lat, 1.0),
            "read mean ms": round(statistics.fmean(lat) * 1000, 1) if lat else None,
            "recorded turns": len(turns),
            "turn p50 ms": _ms(turns, 0.5),
            "turn p95 ms": _ms(turns, 0.95),
            "turn max ms": _ms(turns, 1.0),
        }


def _ms(ordered: list[float], q: float) -> float | None:
    """The ``q`` quantile of sorted seconds, in milliseconds (nearest rank)."""
    if not ordered:
        return None
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 1)


def run_mix(
    target: Any,
    seconds: float,
    work: Path,
    *,
    importers: int = 4,
    recorders: int = 4,
    searchers: int = 8,
) -> MixResult:
    """Run the mix on ``target`` (a ``store_targets.StoreTarget`` whose store exists), with
    scratch files in ``work``; what happened, checked against the store."""
    barrier = work / "barrier"
    barrier.mkdir(parents=True)
    roles = (
        [("importer", i) for i in range(importers)]
        + [("recorder", i) for i in range(recorders)]
        + [("searcher", i) for i in range(searchers)]
    )
    procs = [
        (
            f"{role} {n}",
            subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    "child",
                    role,
                    target.db,
                    str(n),
                    str(barrier),
                    str(len(roles)),
                    str(seconds),
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=_env(),
            ),
        )
        for role, n in roles
    ]
    result = MixResult(backend=target.backend, seconds=seconds)
    for name, proc in procs:
        try:
            out, err = proc.communicate(timeout=seconds + 600)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        lines = out.strip().splitlines()
        if proc.returncode != 0 or not lines:
            result.failed_processes.append(f"{name} exited {proc.returncode}: {err[-2000:]}")
            continue
        report = json.loads(lines[-1])
        getattr(result, f"{report['role']}s").append(report)
    with target.sql() as sql:
        result.imported_stored = sql.execute(
            "SELECT count(*) FROM messages WHERE session_id LIKE ?", ["imp%"]
        )[0][0]
        result.recorded_stored, result.recorded_distinct = sql.execute(
            "SELECT count(*), count(DISTINCT content) FROM messages WHERE session_id LIKE ?",
            ["rec%"],
        )[0]
    return result


def _main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--dsn", help="a PostgreSQL server (a database is made and dropped)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if args.dsn:
        os.environ["SESSION_RECALL_PG_DSN"] = args.dsn  # read by store_targets on import
    sys.path[:0] = [str(REPO), str(TESTS)]
    from store_targets import StoreFactory

    with tempfile.TemporaryDirectory() as tmp:
        factory = StoreFactory("postgres" if args.dsn else "sqlite", Path(tmp))
        try:
            target = factory.target("mix")
            target.open().close()
            result = run_mix(target, args.seconds, Path(tmp) / "work")
            target.assert_intact()
        finally:
            factory.cleanup()
    figures = result.figures()
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print("| figure | value |\n|---|---:|")
        for key, value in figures.items():
            print(f"| {key} | {value:,} |" if isinstance(value, int) else f"| {key} | {value} |")
    for error in result.errors[:20]:
        print("error:", error, file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        _child(sys.argv[2:])
    else:
        _main()
