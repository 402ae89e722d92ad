"""Are a change's ``session_show`` payloads the same as before? Dump them, compare two dumps.

Like ``result_identity.py`` for search Documents: run ``dump`` once in each checkout (each
imports its own package: run it from that checkout's root), on the same stores, then
``compare`` the two files::

    python scripts/show_identity.py dump --out /tmp/before.pkl [--db DB ...] [--sessions 12]
    python scripts/show_identity.py dump --out /tmp/after.pkl [--db DB ...] [--sessions 12]
    python scripts/show_identity.py compare /tmp/before.pkl /tmp/after.pkl

Without ``--db`` the demo store is read (a fresh in-memory build); each ``--db`` (a perf
corpus, ``benchmarks/long_sessions.py --keep``'s ``long.db``) is opened read-only. For up to
``--sessions`` root sessions of each store, ``show_session`` is called around no message, the
first, the middle, the last, three at once, six (one past the limit), an unknown id with the
start, at contexts 0, 3 and 10 and ``max_chars`` 2,000 and 8,000, with and without redaction.
An error is kept as its type and message.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]


def _calls(ids: list[int]) -> list[tuple[str, dict[str, Any]]]:
    if not ids:
        return [("none", {})]
    mid = ids[len(ids) // 2]
    spread = [ids[len(ids) // 4], mid, ids[min(len(ids) - 1, len(ids) // 2 + 2)]]
    six = [ids[i * (len(ids) - 1) // 5] for i in range(6)]
    return [
        ("none", {}),
        ("first", {"message_ids": [ids[0]]}),
        ("middle", {"message_ids": [mid]}),
        ("last", {"message_ids": [ids[-1]]}),
        ("three", {"message_ids": spread}),
        ("six", {"message_ids": six}),
        ("start", {"message_ids": [mid, -7], "include_start": True}),
    ]


def dump(dbs: list[str], out: Path, sessions: int) -> None:
    from langchain_session_recall import SessionStore, redact_secrets
    from langchain_session_recall.demo import build_demo_store
    from langchain_session_recall.session_window import show_session

    stores = [("demo", build_demo_store())] if not dbs else []
    stores += [(db, SessionStore(db, read_only=True)) for db in dbs]
    rows: dict[str, Any] = {}
    for name, store in stores:
        roots = [r.id for r in store.recent_sessions(limit=sessions)]
        for root in roots:
            ids = [mid for mid, _ in store.chain_outline(root)]
            for label, call in _calls(ids):
                for context in (0, 3, 10):
                    for chars in (2_000, 8_000):
                        for redact in (None, redact_secrets):
                            key = f"{name} {root} {label} c={context} m={chars} r={bool(redact)}"
                            try:
                                rows[key] = show_session(
                                    store, root, context=context, max_chars=chars,
                                    redact=redact, **call,
                                )  # fmt: skip
                            except Exception as error:
                                rows[key] = f"{type(error).__name__}: {error}"
    out.write_bytes(pickle.dumps(rows))
    print(f"{len(rows)} session_show calls -> {out}")


def compare(before: Path, after: Path) -> int:
    a, b = pickle.loads(before.read_bytes()), pickle.loads(after.read_bytes())
    differ = [k for k in sorted(set(a) | set(b)) if a.get(k, "<absent>") != b.get(k, "<absent>")]
    for key in differ[:20]:
        print(f"{key}: {str(a.get(key))[:150]!r} != {str(b.get(key))[:150]!r}")
    print(f"{len(differ)} of {len(a)} payloads differ")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--db", action="append", default=[], help="a store (default: the demo)")
    d.add_argument("--out", type=Path, required=True)
    d.add_argument("--sessions", type=int, default=12, help="root sessions read per store")
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "dump":
        dump(args.db, args.out, args.sessions)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    raise SystemExit(main())
