"""Are a change's results the same as before? Dump what every search returns, compare two dumps.

Run ``dump`` once in each checkout (each imports its own package: run it from that checkout's
root), on the same database, then ``compare`` the two files::

    python scripts/result_identity.py dump --out /tmp/before.pkl [--db DB]
    python scripts/result_identity.py dump --out /tmp/after.pkl [--db DB]
    python scripts/result_identity.py compare /tmp/before.pkl /tmp/after.pkl \
        [--ignore store_id --ignore recall.windows.lead]

Without ``--db`` the demo store is searched (a fresh in-memory build); with it (a perf corpus
from ``benchmarks/perf/run.py``, opened read-only) the 100 queries of the perf mix, or those
``--queries`` names: the ``QUERIES`` of a Python file (``benchmarks/long_sessions.py``, whose
``--keep`` writes a store of long sessions). Each query
is searched at ``k=5``, with and without message ids, at two window sizes. ``compare`` prints
every Document that differs (``page_content``, or a metadata key, ``--ignore`` leaving out
dotted keys that a change adds on purpose) and exits 1 when one does.
"""

from __future__ import annotations

import argparse
import pickle
import runpy
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks" / "perf")]


def _queries(db: str | None, queries: Path | None = None) -> tuple[Any, list[str]]:
    from langchain_session_recall import SessionStore
    from langchain_session_recall.demo import build_demo_store

    if db is None:
        store = build_demo_store()
        titles = [r.title for r in store.recent_sessions(limit=200) if r.title]
        extra = ["error", "deploy script", "docker", "test", "部署", "fix the bug", "rename photos"]
        return store, [" ".join(t.split()[:3]) for t in titles] + extra
    store = SessionStore(db, read_only=True)
    if queries is not None:
        return store, list(runpy.run_path(str(queries))["QUERIES"])
    import corpus

    return store, [q for _, q in corpus.QUERIES]


def dump(db: str | None, out: Path, queries: Path | None = None) -> None:
    from langchain_session_recall import SessionRecallRetriever

    store, searched = _queries(db, queries)
    rows: dict[str, Any] = {}
    for ids in (False, True):
        for chars in (1_200, 8_000):
            retriever = SessionRecallRetriever(
                store=store, k=5, show_message_ids=ids, max_chars=chars, now=1_767_225_600.0
            )
            for query in searched:
                key = f"ids={ids} chars={chars} q={query!r}"
                rows[key] = [(d.page_content, d.metadata) for d in retriever.invoke(query)]
    out.write_bytes(pickle.dumps(rows))
    print(f"{len(rows)} searches, {sum(len(v) for v in rows.values())} Documents -> {out}")


def _drop(value: Any, path: list[str]) -> Any:
    """``value`` without the key at ``path`` (through dicts and lists of dicts)."""
    if not path:
        return value
    if isinstance(value, dict):
        head, rest = path[0], path[1:]
        if not rest:
            return {k: v for k, v in value.items() if k != head}
        return {k: _drop(v, rest) if k == head else v for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_drop(v, path) for v in value)
    return value


def _differences(a: Any, b: Any, where: str) -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b), key=str):
            out += _differences(a.get(key, "<absent>"), b.get(key, "<absent>"), f"{where}.{key}")
        return out
    return [] if a == b else [f"{where}: {str(a)[:120]!r} != {str(b)[:120]!r}"]


def compare(before: Path, after: Path, ignore: list[str]) -> int:
    a, b = pickle.loads(before.read_bytes()), pickle.loads(after.read_bytes())
    differ = 0
    for key in sorted(set(a) | set(b)):
        left, right = a.get(key, []), b.get(key, [])
        if len(left) != len(right):
            print(f"{key}: {len(left)} Documents != {len(right)}")
            differ += 1
            continue
        for i, ((text_a, meta_a), (text_b, meta_b)) in enumerate(zip(left, right, strict=True)):
            for path in ignore:
                meta_a, meta_b = _drop(meta_a, path.split(".")), _drop(meta_b, path.split("."))
            found = ([] if text_a == text_b else ["page_content"]) + _differences(
                meta_a, meta_b, "metadata"
            )
            if found:
                differ += 1
                print(f"{key} #{i}: " + "; ".join(found[:3]))
    total = sum(len(v) for v in a.values())
    print(
        f"{differ} of {total} Documents differ"
        + (f" (ignoring {', '.join(ignore)})" if ignore else "")
    )
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--db", help="a perf corpus database (default: the demo store)")
    d.add_argument("--out", type=Path, required=True)
    d.add_argument("--queries", type=Path, help="a Python file whose QUERIES to search (--db)")
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    c.add_argument("--ignore", action="append", default=[], help="a dotted metadata key")
    args = parser.parse_args()
    if args.command == "dump":
        dump(args.db, args.out, args.queries)
        return 0
    return compare(args.before, args.after, args.ignore)


if __name__ == "__main__":
    raise SystemExit(main())
