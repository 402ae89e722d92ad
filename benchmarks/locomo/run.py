"""LoCoMo session-recall benchmark (issue 14's protocol).

Run from the repository root::

    python -m benchmarks.locomo --data /path/to/locomo10.json --split dev [--json out.json]

Without ``--data`` or ``LOCOMO_DATA`` it says where to get the file and exits 0 (a skip).
Splits: ``dev`` (conv-26, -30, -41, -42, -43: tune on these only), ``test`` (the other five:
run once, at the end), ``both`` (dev and test side by side), ``all`` (the ten together).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.locomo.data import CATEGORY_NAMES, HOW_TO_GET, Conversation, load, locate, split
from benchmarks.locomo.metrics import Result
from benchmarks.locomo.systems import BASELINES, Built, System, library

LIBRARY = "this library (SessionRecallRetriever, k=5)"
LIBRARY_PG = "this library on PostgreSQL (SessionRecallRetriever, k=5)"


@dataclass
class Measured:
    """One system on one split: recall, and what building its indexes cost."""

    result: Result = field(default_factory=Result)
    index_bytes: int = 0
    raw_bytes: int = 0
    ingest_seconds: float = 0.0
    query_seconds: float = 0.0

    def to_json(self) -> dict[str, object]:
        return {
            **self.result.to_json(),
            "index_bytes": self.index_bytes,
            "raw_text_bytes": self.raw_bytes,
            "ingest_seconds": round(self.ingest_seconds, 3),
            "query_ms": round(1000 * self.query_seconds / max(1, self.result.overall.n), 2),
        }


def measure(system: System, conversations: Sequence[Conversation]) -> Measured:
    out = Measured()
    for conv in conversations:
        built = system(conv)
        out.index_bytes += built.index_bytes
        out.raw_bytes += conv.raw_text_bytes
        out.ingest_seconds += built.ingest_seconds
        t0 = time.perf_counter()
        for q in conv.questions:
            out.result.add(q.category, built.rank(q.text), q.evidence)
        out.query_seconds += time.perf_counter() - t0
        if built.close is not None:
            built.close()
    return out


def _cell(m: Measured, key: str) -> str:
    return f"{m.result.overall.figures()[key]:.1f}"


def table(results: Mapping[str, Mapping[str, Measured]]) -> str:
    """Markdown: one row per system, the splits side by side, then R@5 per category."""
    splits = list(next(iter(results.values())))
    keys = ("R@1", "R@3", "R@5", "any@5")
    head = ["system"] + [f"{k} {s}" if len(splits) > 1 else k for s in splits for k in keys]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for name, by_split in results.items():
        cells = [_cell(by_split[s], k) for s in splits for k in keys]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    cats = sorted({c for r in results.values() for m in r.values() for c in m.result.by_category})
    lines += ["", "R@5 per category (questions):", ""]
    head = ["system"] + [
        f"{c} {CATEGORY_NAMES.get(c, '')} {s}"
        if len(splits) > 1
        else f"{c} {CATEGORY_NAMES.get(c, '')}"
        for s in splits
        for c in cats
    ]
    lines += ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for name, by_split in results.items():
        cells = []
        for s in splits:
            for c in cats:
                sc = by_split[s].result.by_category.get(c)
                cells.append(f"{sc.figures()['R@5']:.1f} ({sc.n})" if sc else "-")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "Cost (all conversations of the split, built in memory):", ""]
    lines += [
        "| system | split | index bytes | x raw text | ingest s | query ms |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for name, by_split in results.items():
        for s, m in by_split.items():
            ratio = f"{m.index_bytes / m.raw_bytes:.1f}" if m.index_bytes else "-"
            per_q = 1000 * m.query_seconds / max(1, m.result.overall.n)
            lines.append(
                f"| {name} | {s} | {m.index_bytes:,} | {ratio} | {m.ingest_seconds:.2f} | {per_q:.1f} |"
            )
    return "\n".join(lines)


def postgres_library(dsn: str) -> System:
    """The library on PostgreSQL: one fresh schema per conversation, dropped afterwards."""
    import uuid

    import psycopg
    from psycopg import sql

    from langchain_session_recall import PostgresSessionStore

    def system(conv: Conversation) -> Built:
        schema = f"locomo_{uuid.uuid4().hex[:10]}"
        store = PostgresSessionStore(dsn, schema=schema, max_size=2)
        built = library(conv, store)
        size = int(store.stats()["size_bytes"])

        def rank(question: str) -> list[str]:
            return built.rank(question)

        def close() -> None:
            store.close()
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))

        return Built(rank, size, built.ingest_seconds, close)

    return system


def systems(dsn: str | None = None) -> dict[str, System]:
    out: dict[str, System] = {**BASELINES, LIBRARY: library}
    if dsn:
        out[LIBRARY_PG] = postgres_library(dsn)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--data", help="path to locomo10.json (else $LOCOMO_DATA)")
    parser.add_argument("--split", choices=("dev", "test", "both", "all"), default="dev")
    parser.add_argument("--json", type=Path, help="save the figures here")
    parser.add_argument("--only", action="append", help="systems whose name contains this")
    parser.add_argument(
        "--dsn", help="also measure the library on PostgreSQL (a postgresql:// DSN; a schema each)"
    )
    args = parser.parse_args(argv)
    path = locate(args.data)
    if path is None:
        print(HOW_TO_GET)
        return 0
    conversations = load(path)
    names = ("dev", "test") if args.split == "both" else (args.split,)
    chosen = {
        n: s
        for n, s in systems(args.dsn).items()
        if not args.only or any(o in n for o in args.only)
    }
    results: dict[str, dict[str, Measured]] = {}
    for name, system in chosen.items():
        try:
            for split_name in names:
                results.setdefault(name, {})[split_name] = measure(
                    system, split(conversations, split_name)
                )
        except ImportError as exc:  # rank_bm25 / langchain-community: the `bench` extra
            results.pop(name, None)
            print(f"skipped {name}: {exc} (pip install -e '.[bench]')", file=sys.stderr)
            continue
        print(f"measured: {name}", file=sys.stderr)
    if not results:
        print("no system selected", file=sys.stderr)
        return 2
    print(table(results))
    if args.json:
        payload = {n: {s: m.to_json() for s, m in r.items()} for n, r in results.items()}
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
