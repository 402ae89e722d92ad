"""``sync`` after a few lines were appended to one large Codex rollout (issue 35: "appended
JSONL read from where it stopped"), against reading that rollout whole (what ``sync`` did
before resume points).

Writes a Codex home holding one large rollout (``--mb``, 50 MB by default: turns as
``benchmarks/codex_import.py`` writes them, a shell call, its output, the reasoning and the
``event_msg`` lines included) and ``--others`` small ones, imports it once (``import_auto``,
which records where each rollout's read stopped), then, interleaved, ``--repeats`` times each:

* **whole read**: one turn (11 lines, 4 messages) appended, then ``import_codex(store,
  rollout)``: the file read and parsed from its start, the import ledger keeping out every
  message it holds already (what ``sync`` did with a changed rollout before);
* **resumed read**: one turn appended, then ``import_codex(store, rollout, resume=True)``:
  the resume point checked (a hash of 8 KiB), the new lines read;
* **sync**: one turn appended, then ``sync(store, home)``: the whole command as cron runs it
  in process (the folders walked, each file's size and time compared, the grown one resumed);
* **the whole Codex home**, read whole (every rollout) and from the resume points (each
  rollout's size and time compared with its point's, the grown one read from it): what
  ``sync`` does when ``session_index.jsonl`` (thread names) changed.

Times are wall-clock seconds, best and median; the store is SQLite (``--db`` for a
``postgresql://`` DSN: an empty database of ours).

    python -m benchmarks.sync_append [--mb 50] [--others 200] [--repeats 5] [--db DSN]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.codex_import import _line, _stamp, _turn
from benchmarks.sync_noop import timing_table
from langchain_session_recall.backends import open_store
from langchain_session_recall.importers import import_auto, import_codex, sync

_THREAD = "019aa1c2-0000-7000-8000-000000000000"


def _rollout(path: Path, thread: str, size: int, rng: random.Random) -> int:
    """A rollout of at least ``size`` bytes; returns the number of its turns."""
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"id": thread, "timestamp": _stamp(0), "cwd": "/src/app", "source": "cli"}
    turns, written = 0, 0
    with path.open("w") as fh:
        written += fh.write(_line(_stamp(0), "session_meta", meta) + "\n")
        while written < size:
            lines = _turn(rng, f"call_{turns}", 1 + turns * 11)
            written += fh.write("\n".join(lines) + "\n")
            turns += 1
    return turns


class _Grower:
    """Appends one turn at a time to a rollout (new call ids, later times)."""

    def __init__(self, path: Path, turns: int) -> None:
        self.path, self.turns, self.rng = path, turns, random.Random(11)

    def __call__(self) -> None:
        lines = _turn(self.rng, f"call_{self.turns}", 1 + self.turns * 11)
        with self.path.open("a") as fh:
            fh.write("\n".join(lines) + "\n")
        self.turns += 1


def _timed(prepare: Callable[[], None], run: Callable[[], object]) -> float:
    prepare()
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def measure(mb: int, others: int, repeats: int, db: str | None) -> dict[str, object]:
    """Every figure of the table."""
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        day = home / ".codex/sessions/2026/11/20"
        big = day / f"rollout-2026-11-20T09-00-00-{_THREAD}.jsonl"
        turns = _rollout(big, _THREAD, mb << 20, rng)
        for n in range(others):
            thread = f"019aa1c2-0000-7000-8000-{n + 1:012d}"
            _rollout(day / f"rollout-2026-11-20T09-00-00-{thread}.jsonl", thread, 4096, rng)
        store = open_store(db or str(Path(tmp) / "recall.db"))
        start = time.perf_counter()
        import_auto(store, home)
        first = time.perf_counter() - start
        grow = _Grower(big, turns)
        codex = home / ".codex"
        runs: dict[str, list[float]] = {k: [] for k in ("whole", "resumed", "sync", "home", "at")}
        for _ in range(repeats):
            runs["whole"].append(_timed(grow, lambda: import_codex(store, big)))
            runs["resumed"].append(_timed(grow, lambda: import_codex(store, big, resume=True)))
            runs["sync"].append(_timed(grow, lambda: sync(store, home)))
            runs["home"].append(_timed(grow, lambda: import_codex(store, codex)))
            runs["at"].append(_timed(grow, lambda: import_codex(store, codex, resume=True)))
        messages = store.stats()["messages"]
        store.close()
    return {
        "bytes": big.stat().st_size if big.exists() else mb << 20,
        "messages": messages,
        "first": first,
        "others": others,
        **{k: (min(v), statistics.median(v)) for k, v in runs.items()},
    }


def render(figures: dict[str, object], repeats: int, mb: int, backend: str) -> str:
    rows = [
        ("whole read: `import_codex(store, rollout)` (baseline: what `sync` did before)", "whole"),
        ("resumed read: `import_codex(store, rollout, resume=True)`", "resumed"),
        ("`sync(store, home)` (every rollout's size and time compared, the grown one resumed)", "sync"),
        ("the whole Codex home read whole: `import_codex(store, codex_home)`", "home"),
        ("the whole Codex home from the points: `import_codex(store, codex_home, resume=True)` "
         "(what `sync` does when `session_index.jsonl` changed)", "at"),
    ]  # fmt: skip
    base = figures["whole"][0]  # type: ignore[index]
    lines = [
        f"One Codex rollout of {mb} MB ({figures['messages']:,} messages in the store, with "
        f"{figures['others']} small rollouts beside it), {backend} store; first `import_auto` "
        f"{figures['first']:.1f} s. Each run appends one turn (11 lines, 4 messages) first. "
        f"Best and median of {repeats} runs; Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.",
        "",
        *timing_table(figures, rows, base, digits=4),
    ]
    lines += ["", f"`python -m benchmarks.sync_append --mb {mb} --repeats {repeats}`", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--others", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--db", default=None, help="a postgresql:// DSN (default: SQLite)")
    args = parser.parse_args()
    figures = measure(args.mb, args.others, args.repeats, args.db)
    backend = "PostgreSQL" if args.db else "SQLite"
    print(render(figures, args.repeats, args.mb, backend))


if __name__ == "__main__":
    main()
