"""``session-recall``: search and browse past agent sessions from the shell.

Exit codes: 0 results shown, 1 nothing found, 2 bad usage or input, 3 database missing or not
a session database.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from langchain_core.documents import Document

from langchain_session_recall.backend import SessionBackend
from langchain_session_recall.demo import DEMO_QUERIES, build_demo_store, default_demo_path
from langchain_session_recall.errors import NotASessionDatabaseError, SessionRecallError
from langchain_session_recall.pg_store import PostgresSessionStore, is_postgres_dsn
from langchain_session_recall.retriever import SessionRecallRetriever
from langchain_session_recall.store import SessionStore

__all__ = ["main"]

EXIT_OK, EXIT_EMPTY, EXIT_USAGE, EXIT_DB = 0, 1, 2, 3

_EPILOG = """examples:
  session-recall demo
  session-recall search "how did we fix the CORS error?" --db ~/.hermes/state.db --read-only
  session-recall search 'docker OR kubernetes' --db recall.db -k 5 --json
  session-recall recent --db recall.db
"""


def _width() -> int:
    return max(60, min(shutil.get_terminal_size((100, 20)).columns, 120))


def _panel(doc: Document, index: int, out: TextIO, *, body_chars: int) -> None:
    meta = doc.metadata
    width = _width()
    title = meta.get("title") or "(untitled session)"
    head = f" {index}. {title} "
    out.write("┌" + head[: width - 2].ljust(width - 2, "─") + "┐\n")
    facts = [f"session {meta['session_id']}", meta.get("when", ""), f"source {meta.get('source')}"]
    if meta.get("mode") == "search":
        facts.append(f"score {meta.get('score', 0):.2f}")
        facts.append(f"{meta.get('match_count', 0)} matching message(s)")
    else:
        facts.append(f"{meta.get('message_count', 0)} message(s)")
    out.write("│ " + " · ".join(str(f) for f in facts if f) + "\n")
    body = doc.page_content
    if len(body) > body_chars:
        body = body[:body_chars].rstrip() + " …"
    for line in body.splitlines():
        for wrapped in textwrap.wrap(line, width - 4) or [""]:
            out.write("│ " + wrapped + "\n")
    out.write("└" + "─" * (width - 2) + "┘\n")


def _print_docs(docs: Sequence[Document], args: argparse.Namespace, out: TextIO) -> int:
    if args.json:
        payload = [{"content": d.page_content, "metadata": d.metadata} for d in docs]
        json.dump(payload, out, ensure_ascii=False, indent=2, default=str)
        out.write("\n")
    elif not docs:
        out.write("No matching sessions.\n")
    for i, doc in enumerate(docs if not args.json else (), 1):
        _panel(doc, i, out, body_chars=args.chars)
    return EXIT_OK if docs else EXIT_EMPTY


def _open(args: argparse.Namespace) -> SessionStore | PostgresSessionStore:
    if is_postgres_dsn(args.db):
        return PostgresSessionStore(args.db, read_only=args.read_only)
    path = Path(args.db).expanduser()
    if not path.exists():
        raise NotASessionDatabaseError(f"no such file: {path}")
    return SessionStore(path, read_only=args.read_only)


def _retriever(store: SessionBackend, args: argparse.Namespace) -> SessionRecallRetriever:
    return SessionRecallRetriever(
        store=store,
        k=args.k,
        role_filter=args.role,
        user_id=args.user,
        current_session_id=args.exclude_session,
    )


def _cmd_search(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as store:
        docs = _retriever(store, args).invoke(args.query, after=args.after, before=args.before)
        return _print_docs(docs, args, out)


def _cmd_recent(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as store:
        docs = _retriever(store, args).invoke("", after=args.after, before=args.before)
        return _print_docs(docs, args, out)


def _cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    path = Path(args.db).expanduser() if args.db else default_demo_path()
    if args.fresh and path.exists():
        path.unlink()
    with build_demo_store(path) as store:
        sessions = len(store.recent_sessions(limit=10_000, exclude_sources=()))
        out.write(f"Demo database: {path} ({sessions} root sessions)\n")
        out.write("Search it yourself:  session-recall search 'QUERY' --db " + str(path) + "\n\n")
        retriever = SessionRecallRetriever(store=store, k=args.k)
        queries = [args.query] if args.query else list(DEMO_QUERIES)
        for query in queries:
            out.write(f"━━ search: {query!r}\n")
            _print_docs(retriever.invoke(query), args, out)
            out.write("\n")
        out.write("━━ recent sessions (empty query, no LLM)\n")
        _print_docs(retriever.invoke(""), args, out)
    return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="session-recall",
        description="Search an agent's past sessions (SQLite FTS5, Hermes state.db compatible).",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser, *, db_required: bool = True) -> None:
        p.add_argument(
            "--db", required=db_required, help="session database file or postgresql:// DSN"
        )
        p.add_argument("-k", type=int, default=3, help="sessions to show (max 5; default 3)")
        p.add_argument("--json", action="store_true", help="print JSON for scripts")
        p.add_argument("--chars", type=int, default=1200, help="characters of each transcript")

    def scoping(p: argparse.ArgumentParser) -> None:
        p.add_argument("--read-only", action="store_true", help="never write to the database")
        p.add_argument("--role", help="only match these roles, e.g. user,assistant")
        p.add_argument("--user", help="only this user's sessions")
        p.add_argument("--after", help="sessions started on/after this ISO date")
        p.add_argument("--before", help="sessions started before this ISO date")
        p.add_argument("--exclude-session", help="leave out this session's chain")

    p_search = sub.add_parser(
        "search",
        help="search past sessions",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p_search.add_argument("query", help='keywords, a question, "a phrase", a OR b, a NOT b, pre*')
    common(p_search)
    scoping(p_search)
    p_search.set_defaults(func=_cmd_search)

    p_recent = sub.add_parser("recent", help="list recent sessions (no search, no LLM)")
    common(p_recent)
    scoping(p_recent)
    p_recent.set_defaults(func=_cmd_recent)

    p_demo = sub.add_parser("demo", help="build the embedded demo database and search it")
    common(p_demo, db_required=False)
    p_demo.add_argument("--query", help="search this instead of the sample questions")
    p_demo.add_argument("--fresh", action="store_true", help="rebuild the demo database")
    p_demo.set_defaults(func=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the CLI; returns the exit code (see the module docstring)."""
    out = out or sys.stdout
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    try:
        code: int = args.func(args, out)
        return code
    except NotASessionDatabaseError as exc:
        print(f"session-recall: {exc}", file=sys.stderr)
        return EXIT_DB
    except (SessionRecallError, ValueError) as exc:
        print(f"session-recall: {exc}", file=sys.stderr)
        return EXIT_USAGE


def run() -> None:  # pragma: no cover - console script entry point
    """Console-script entry point."""
    try:
        code = main()
    except BrokenPipeError:  # output piped into `head` and closed early: not an error
        sys.stderr.close()
        code = EXIT_OK
    sys.exit(code)
