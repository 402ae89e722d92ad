"""What the benchmark's workers share on both backends (``run.py``'s SQLite workers and
``pg.py``'s PostgreSQL ones): timing an ingest and interleaved searches, the plain-SQL
baseline's session row, the process's peak memory. Neither imports the other: both import
this."""

from __future__ import annotations

import contextlib
import itertools
import statistics
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["PLAIN_STARTED", "api_ingest", "interleave", "plain_session_row", "timed_ingest", "vm"]


def vm(field: str) -> int:
    """A /proc/self/status figure in bytes (VmHWM = peak RSS)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def timed_ingest(
    specs: Iterator[Any], batch: int, write: Callable[[list[Any]], None]
) -> dict[str, Any]:
    """Feed the corpus ``specs`` to ``write`` ``batch`` sessions at a time, timing only
    ``write`` (wall clock and this process's CPU); the ingest figures of a build."""
    import corpus

    api = cpu = 0.0
    raw = messages = sessions = 0
    while group := list(itertools.islice(specs, batch)):
        raw += sum(corpus.raw_bytes(m) for spec in group for m in spec.messages)
        t0, c0 = time.perf_counter(), time.process_time()
        write(group)
        api += time.perf_counter() - t0
        cpu += time.process_time() - c0
        messages += sum(len(spec.messages) for spec in group)
        sessions += len(group)
    return {
        "messages": messages,
        "sessions": sessions,
        "raw_bytes": raw,
        "ingest_seconds": api,
        "ingest_rate": messages / api,
        "ingest_cpu_rate": messages / cpu,
    }


def api_ingest(store: Any, seed: int, size: int, batch: int) -> dict[str, Any]:
    """The corpus through a store's public API (either backend), timed by
    :func:`timed_ingest`: ``batch`` > 1 groups that many sessions per ``store.transaction()``
    block (a bulk load); otherwise each ``add_session``/``add_messages`` call commits on its
    own (a live agent)."""
    import corpus

    def write(group: list[Any]) -> None:
        with store.transaction() if batch > 1 else contextlib.nullcontext():
            for spec in group:
                store.add_session(spec.session_id, **spec.kwargs)
                store.add_messages(spec.session_id, spec.messages)

    return timed_ingest(corpus.generate(seed, size), batch, write)


def interleave(algos: dict[str, Callable[[int], object]], n: int, repeats: int) -> dict[str, Any]:
    """Time each of ``algos`` on queries ``0..n-1``: a warm-up pass (page cache, statement
    caches), then ``repeats`` passes running the algorithms one after another per query, their
    order rotated each pass; per-query medians of wall clock and of this process's CPU."""
    for fn in algos.values():
        for i in range(n):
            fn(i)
    times: dict[str, list[list[float]]] = {a: [[] for _ in range(n)] for a in algos}
    cpu: dict[str, list[list[float]]] = {a: [[] for _ in range(n)] for a in algos}
    for r in range(repeats):
        for i in range(n):
            names = list(algos)
            names = names[r % len(names) :] + names[: r % len(names)]
            for name in names:
                t0, c0 = time.perf_counter(), time.process_time()
                algos[name](i)
                times[name][i].append(time.perf_counter() - t0)
                cpu[name][i].append(time.process_time() - c0)
    return {
        "medians": {a: [statistics.median(ts) for ts in times[a]] for a in algos},
        "cpu_medians": {a: [statistics.median(ts) for ts in cpu[a]] for a in algos},
    }


PLAIN_STARTED = 6  # where the start time stands in a plain_session_row


def plain_session_row(spec: Any) -> tuple[Any, ...]:
    """The ``sessions`` row of a corpus session as a plain-SQL writer inserts it (id, source,
    user, model, title, parent, start time, end reason): both backends' baselines."""
    kw = spec.kwargs
    return (
        spec.session_id,
        kw.get("source", "cli"),
        kw.get("user_id"),
        kw.get("model"),
        kw.get("title"),
        kw.get("parent_session_id"),
        kw.get("started_at", time.time()),
        kw.get("end_reason"),
    )
