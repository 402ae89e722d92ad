"""Issue 31's figures for both backends, from ``run.py``'s results: tables and the plot (pure
but for the plot's file).

Every figure here is wall clock: PostgreSQL does its work in the server, outside the client's
CPU time, so wall clock is the one clock both backends share. Each ratio compares two things
measured in the same run (ours and the bare query interleaved per query in one process; ours
and plain SQL ingesting one after another).
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

NAMES = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}
BARE = {
    "sqlite": "`messages_fts MATCH q ORDER BY rank LIMIT 50`",
    "postgresql": "`tsv @@ q ORDER BY ts_rank(tsv, q) DESC LIMIT 50`",
}


def backend_of(result: dict[str, Any]) -> str:
    """A result's backend (results saved before PostgreSQL was measured are SQLite's)."""
    return str(result.get("backend", "sqlite"))


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def _row(*cells: object) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def latency_lines(results: list[dict[str, Any]]) -> list[str]:
    """Ours against the bare query, per backend and size."""
    lines = [
        "| backend | messages | ours p50 | ours p95 | bare p50 | bare p95 | ours / bare (p50) "
        "| ours / bare (p95) | load |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lat = r["summary"]["latency"]
        o, f = lat["ours"], lat["floor"]
        lines.append(
            _row(
                NAMES[backend_of(r)],
                r["label"],
                _ms(o["p50"]),
                _ms(o["p95"]),
                _ms(f["p50"]),
                _ms(f["p95"]),
                f"{o['p50'] / f['p50']:.2f}",
                f"{o['p95'] / f['p95']:.2f}",
                f"{r['search']['loadavg']:.1f}",
            )
        )
    return lines


def ingest_lines(results: list[dict[str, Any]], batch: int) -> list[str]:
    """Ours against plain SQL into the same schema, a commit per session and in bulk."""
    lines = [
        "| backend | messages | ours, a commit per call | plain SQL, a commit per session "
        "| ratio (goal >= 0.8) "
        f"| ours, `transaction()` per {batch} sessions | plain SQL, a commit per {batch} "
        "| ratio (goal >= 1.0) | runs | load |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        ing = r.get("ingest")
        if not ing:
            continue
        ours, plain = ing["ours"]["ingest_rate"], ing["plain"]["ingest_rate"]
        bulk, plain_bulk = ing["ours_bulk"]["ingest_rate"], ing["plain_bulk"]["ingest_rate"]
        lines.append(
            _row(
                NAMES[backend_of(r)],
                r["label"],
                f"{ours:,.0f}",
                f"{plain:,.0f}",
                f"{ours / plain:.2f}",
                f"{bulk:,.0f}",
                f"{plain_bulk:,.0f}",
                f"{bulk / plain_bulk:.2f}",
                ing["ours"]["runs"],
                f"{max(v['loadavg'] for v in ing.values()):.1f}",
            )
        )
    return lines


def sizes(result: dict[str, Any]) -> tuple[int, int, int]:
    """(database, full-text index, full-text + b-tree indexes) in bytes, either backend.

    SQLite: the file; the FTS5 tables; those and the b-tree indexes (``dbstat``). PostgreSQL:
    the schema's tables with their TOAST and indexes; the GIN indexes and the stored
    ``tsvector`` columns they index; every index and those columns.
    """
    st = result["stats"]
    if backend_of(result) == "sqlite":
        g = st["groups"]
        return st["file_bytes"], g["fts"], g["fts"] + g["btree_indexes"]
    return st["total_bytes"], st["fts_bytes"], st["index_bytes"] + st["tsv_bytes"]


def size_lines(results: list[dict[str, Any]]) -> list[str]:
    """Bytes per message on disk, and the peak RSS of a search process."""
    lines = [
        "| backend | messages | database B/msg | full-text index B/msg | FTS + b-tree indexes "
        "B/msg | peak RSS of a search process MB |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        total, fts, indexes = sizes(r)
        n = r["size"]
        lines.append(
            _row(
                NAMES[backend_of(r)],
                r["label"],
                f"{total / n:,.0f}",
                f"{fts / n:,.0f}",
                f"{indexes / n:,.0f}",
                f"{r['rss']['peak_rss'] / 2**20:.0f}",
            )
        )
    return lines


Goal = tuple[str, float, float, bool]  # what, measured ratio, bound, met (ratio <= bound)


def _search_goals(r: dict[str, Any]) -> list[Goal]:
    """SQLite's search goals of issue 31 (CPU time: ours and the bare query run in one
    process, so CPU time is their cost without the shared machine's waiting)."""
    cpu = r["summary"]["cpu"]
    ours, bare = cpu["ours"], cpu["floor"]
    label = f"SQLite {r['label']}"
    if r["size"] < 100_000:
        ratio = ours["p50"] / cpu["reference"]["p50"]
        return [(f"{label}: ours p50 <= 2x the seed algorithm (CPU)", ratio, 2.0, ratio <= 2.0)]
    p50, p95 = ours["p50"] / bare["p50"], ours["p95"] / bare["p95"]
    return [
        (f"{label}: ours p50 <= 0.5x the bare query's (CPU)", p50, 0.5, p50 <= 0.5),
        (f"{label}: ours p95 <= 1.0x the bare query's (CPU)", p95, 1.0, p95 <= 1.0),
    ]


def _ingest_goals(r: dict[str, Any]) -> list[Goal]:
    ing = r.get("ingest")
    if not ing:
        return []
    label = f"{NAMES[backend_of(r)]} {r['label']}"
    call = ing["ours"]["ingest_rate"] / ing["plain"]["ingest_rate"]
    bulk = ing["ours_bulk"]["ingest_rate"] / ing["plain_bulk"]["ingest_rate"]
    return [
        (f"{label}: ingest, a commit per call >= 0.8x plain SQL (wall)", call, 0.8, call >= 0.8),
        (f"{label}: ingest in bulk >= 1.0x plain SQL (wall)", bulk, 1.0, bulk >= 1.0),
    ]


def _backend_goals(results: list[dict[str, Any]]) -> list[Goal]:
    """PostgreSQL's ours p50 against SQLite's at the same size (the goal is set at 1M), from
    the two interleaved per query in one process (``cross``) where the run measured it."""
    by = {(backend_of(r), r["size"]): r for r in results}
    goals: list[Goal] = []
    for (backend, size), r in by.items():
        lite = by.get(("sqlite", size))
        if backend != "postgresql" or (lite is None and "cross" not in r):
            continue
        if "cross" in r:
            medians = r["cross"]["medians"]
            ratio = statistics.median(medians["postgresql"]) / statistics.median(medians["sqlite"])
            what = f"PostgreSQL {r['label']}: ours p50 <= 2x SQLite's (wall, interleaved)"
        else:
            pg_p50 = r["summary"]["latency"]["ours"]["p50"]
            ratio = pg_p50 / lite["summary"]["latency"]["ours"]["p50"]  # type: ignore[index]
            what = f"PostgreSQL {r['label']}: ours p50 <= 2x SQLite's (wall, separate runs)"
        goals.append((what, ratio, 2.0, ratio <= 2.0))
    return goals


def goals_lines(results: list[dict[str, Any]]) -> list[str]:
    """Issue 31's goals, each a ratio of two things measured in this run."""
    goals = [g for r in results if backend_of(r) == "sqlite" for g in _search_goals(r)]
    goals += _backend_goals(results)
    goals += [g for r in results for g in _ingest_goals(r)]
    lines = ["## Goals of issue 31 (ratios from this run)", "", "| goal | measured | met |"]
    lines.append("|---|---:|---|")
    lines += [_row(what, f"{ratio:.2f}x", "yes" if met else "NO") for what, ratio, _, met in goals]
    return [*lines, ""]


def report_lines(results: list[dict[str, Any]], batch: int) -> list[str]:
    """The section of ``docs/benchmarks-perf.md`` with issue 31's figures on both backends."""
    backends = ", ".join(NAMES[b] for b in dict.fromkeys(backend_of(r) for r in results))
    out = [
        "",
        "## Both backends: ours against the bare query, ingest, size, memory",
        "",
        f"Backends measured: {backends}. Wall clock (PostgreSQL works in its server, so CPU "
        "time of the client says little); each ratio is of two things measured in the same "
        "run. The bare query is the index asked once: SQLite "
        f"{BARE['sqlite']}, PostgreSQL {BARE['postgresql']}, with the query our parser makes "
        "of the question. Latencies are per-query medians over the repeats, then p50/p95 over "
        "the 100-query mix; load is the 1-minute load average on the 2 shared cores at the "
        "end of the measurement (for ingest, the highest of its runs).",
        "",
        "Search latency (ms):",
        "",
        *latency_lines(results),
        "",
        "Ingest (messages/s, wall clock; each variant builds the whole corpus into a scratch "
        "store in this run, the variants one after another):",
        "",
        *ingest_lines(results, batch),
        "",
        "On disk and in memory (bytes per message; PostgreSQL's full-text index is its GIN "
        "indexes plus the stored `tsvector` columns they index; peak RSS is the search "
        "process's, the client's for PostgreSQL):",
        "",
        *size_lines(results),
    ]
    out += ["", "![latency vs size, per backend](perf-latency.png)", ""]
    return out


def plot(results: list[dict[str, Any]], path: Path) -> None:
    """Latency against size, log-log: a panel per backend, ours and bare, p50 and p95."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    backends = list(dict.fromkeys(backend_of(r) for r in results))
    fig, axes = plt.subplots(
        1, len(backends), figsize=(6 * len(backends), 4.8), sharey=True, squeeze=False
    )
    for ax, backend in zip(axes[0], backends, strict=True):
        rows = sorted((r for r in results if backend_of(r) == backend), key=lambda r: r["size"])
        xs = [r["size"] for r in rows]
        for key, name in (("ours", "ours (retriever, k=3)"), ("floor", "bare query")):
            p50 = [r["summary"]["latency"][key]["p50"] * 1000 for r in rows]
            p95 = [r["summary"]["latency"][key]["p95"] * 1000 for r in rows]
            line = ax.plot(xs, p50, marker="o", label=f"{name} p50")[0]
            ax.plot(
                xs, p95, marker="x", linestyle="--", color=line.get_color(), label=f"{name} p95"
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("messages in the store")
        ax.set_title(NAMES[backend], fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel("ms per query, wall clock (100-query mix)")
    fig.suptitle("Search latency vs store size: ours and the bare full-text query")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
