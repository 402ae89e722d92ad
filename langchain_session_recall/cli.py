"""``session-recall``: search, browse and import past agent sessions from the shell.

Commands: ``search``, ``recent``, ``show``, ``stats``, ``import``, ``demo``, ``mcp``.

Exit codes (stable, for scripts):

* 0: done (results shown, import complete, stats printed).
* 1: nothing found (no matching session, unknown session id).
* 2: bad usage or input (wrong option, bad date, unreadable import source, missing optional
  dependency such as the summarizer).
* 3: database missing or not a session database.
* 4: import finished but skipped some input (malformed lines, invalid messages; the summary
  line and ``--json`` say which).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import json
import os
import pydoc
import shutil
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from langchain_core.documents import Document
from pydantic import SecretStr

from langchain_session_recall.backends import SessionBackend, open_store
from langchain_session_recall.demo import DEMO_QUERIES, build_demo_store, default_demo_path
from langchain_session_recall.errors import NotASessionDatabaseError, SessionRecallError
from langchain_session_recall.importers import IMPORTERS, ImportSourceError
from langchain_session_recall.importers.base import import_target
from langchain_session_recall.retriever import SessionRecallRetriever
from langchain_session_recall.search.query import parse_query
from langchain_session_recall.transcript import format_transcript, format_when

__all__ = ["main"]

EXIT_OK, EXIT_EMPTY, EXIT_USAGE, EXIT_DB, EXIT_PARTIAL = 0, 1, 2, 3, 4

_EPILOG = """examples:
  session-recall demo
  session-recall import hermes ~/.hermes/state.db --db recall.db
  session-recall import claude-code ~/.claude/projects --db recall.db
  session-recall search "how did we fix the CORS error?" --db recall.db
  session-recall search "how did we fix the CORS error?" --db ~/.hermes/state.db --read-only
  session-recall search 'docker OR kubernetes' --db recall.db -k 5 --after 2026-11-01 --json
  session-recall search 'nginx' --db recall.db --source cli,telegram --role user
  session-recall search 'deploy' --db recall.db --summarize --model gpt-4.1-mini
  session-recall recent --db recall.db
  session-recall show 20261103_091500_a1b2c3 --db recall.db
  session-recall stats --db recall.db
  session-recall mcp --db recall.db --read-only

exit codes: 0 ok, 1 nothing found, 2 bad usage or input, 3 not a session database,
            4 import finished with skipped input
"""

_IMPORT_EPILOG = """examples:
  session-recall import hermes ~/.hermes/state.db --db recall.db
  session-recall import jsonl chats/ --db recall.db --source support-bot
  session-recall import jsonl export.jsonl --db recall.db --parent-field parent_id
  session-recall import claude-code ~/.claude/projects --db recall.db --progress
  session-recall import langgraph checkpoints.sqlite --db recall.db --json

Re-running an import adds only what is new (messages are tracked in the import_ledger table).
exit codes: 0 imported, 2 source unreadable, 3 --db is not a session database,
            4 imported but some input was skipped (see the summary line)
"""


class _MissingFeature(SessionRecallError):
    """An optional part of the package is not installed."""


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


def _open(args: argparse.Namespace) -> SessionBackend:
    return open_store(args.db, read_only=args.read_only, create=False)


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def _excluded_sources(store: SessionBackend, args: argparse.Namespace) -> tuple[str, ...]:
    """``--source`` keeps only the named sources: every other source in the file is excluded."""
    excluded = set(_split(args.exclude_source))
    wanted = set(_split(args.source))
    if wanted:
        excluded |= set(store.stats()["sources"]) - wanted
        excluded -= wanted
    return tuple(sorted(excluded))


def _retriever(store: SessionBackend, args: argparse.Namespace) -> SessionRecallRetriever:
    return SessionRecallRetriever(
        store=store,
        k=args.k,
        role_filter=args.role,
        user_id=args.user,
        current_session_id=args.exclude_session,
        exclude_sources=_excluded_sources(store, args),
        show_message_ids=bool(getattr(args, "summarize", False)),
    )


def _summarize(docs: list[Document], args: argparse.Namespace) -> list[Document]:
    from langchain_openai import ChatOpenAI

    from langchain_session_recall.summarize.summarizer import SessionSummarizer

    if not args.model:
        raise ValueError("--summarize needs --model (e.g. --model gpt-4.1-mini)")
    api_key = os.environ.get("OPENAI_API_KEY") or ("not-needed" if args.base_url else None)
    if api_key is None:
        raise ValueError("--summarize needs OPENAI_API_KEY, or --base-url of a local server")
    llm = ChatOpenAI(
        model=args.model, base_url=args.base_url, api_key=SecretStr(api_key), max_retries=0
    )
    summarized: list[Document] = SessionSummarizer(llm=llm).invoke(docs)
    return summarized


def _cmd_search(args: argparse.Namespace, out: TextIO) -> int:
    if args.summarize and not args.model:
        raise ValueError("--summarize needs --model (e.g. --model gpt-4.1-mini)")
    if args.query.strip():
        parse_query(args.query)  # nothing searchable: EmptyQueryError, exit 2 (not "no match")
    with _open(args) as store:
        docs = _retriever(store, args).invoke(args.query, after=args.after, before=args.before)
        if args.summarize and docs:
            docs = _summarize(docs, args)
        return _print_docs(docs, args, out)


def _cmd_recent(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as store:
        docs = _retriever(store, args).invoke("", after=args.after, before=args.before)
        return _print_docs(docs, args, out)


def _cmd_show(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as store:
        session = store.get_session(args.session_id)
        if session is None:
            print(f"session-recall: no session {args.session_id!r} in {args.db}", file=sys.stderr)
            return EXIT_EMPTY
        ids = [session.id] if args.no_children else store.chain(session.id)
        messages = [m for sid in ids for m in store.get_messages(sid)]
        messages.sort(key=lambda m: (m.timestamp, m.id))
        if args.json:
            payload = {
                "session": _session_dict(session),
                "sessions": ids,
                "messages": [_message_dict(m) for m in messages],
            }
            json.dump(payload, out, ensure_ascii=False, indent=2)
            out.write("\n")
            return EXIT_OK
        head = [
            f"{session.title or '(untitled session)'}",
            f"session {session.id} · {format_when(session.started_at)} · source "
            f"{session.source}" + (f" · model {session.model}" if session.model else ""),
        ]
        if session.parent_session_id:
            head.append(f"parent {session.parent_session_id} (root {store.root_of(session.id)})")
        if len(ids) > 1:
            head.append(f"includes {len(ids) - 1} sub-session(s): {', '.join(ids[1:])}")
        text = "\n".join(head) + "\n\n"
        text += format_transcript(messages, show_ids=True, root_id=session.id).text + "\n"
        _page(text, out, enabled=not args.no_pager)
    return EXIT_OK


def _session_dict(session: Any) -> dict[str, Any]:
    return {k: getattr(session, k) for k in session.__slots__}


def _message_dict(message: Any) -> dict[str, Any]:
    return {k: getattr(message, k) for k in message.__slots__}


def _page(text: str, out: TextIO, *, enabled: bool) -> None:
    """Through ``$PAGER`` when writing to a terminal and the text is taller than it."""
    tall = text.count("\n") > shutil.get_terminal_size((100, 40)).lines
    if enabled and tall and out is sys.stdout and out.isatty():
        pydoc.pager(text)
    else:
        out.write(text)


def _when_date(timestamp: float | None) -> str:
    if timestamp is None:
        return "-"
    try:  # another writer may have stored NaN, an infinity or a year past 9999
        when = _dt.datetime.fromtimestamp(timestamp, tz=_dt.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return "unknown"
    return when.strftime("%Y-%m-%d")


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    size, unit = n / 1024, "KB"
    for bigger in ("MB", "GB"):
        if size < 1024:
            break
        size, unit = size / 1024, bigger
    return f"{size:.1f} {unit}"


def _cmd_stats(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as store:
        stats = store.stats()
    if args.json:
        json.dump(stats, out, ensure_ascii=False, indent=2)
        out.write("\n")
        return EXIT_OK
    sources = ", ".join(f"{k} {v}" for k, v in stats["sources"].items()) or "-"
    rows = [
        ("Store", f"{stats['store']} ({_size(stats['size_bytes'])}, {stats['layout']} schema)"),
        ("Sessions", f"{stats['sessions']} ({stats['root_sessions']} root)"),
        ("Messages", str(stats["messages"])),
        ("Sources", sources),
        (
            "Dates",
            f"{_when_date(stats['first_started_at'])} .. {_when_date(stats['last_started_at'])}",
        ),
    ]
    for label, value in rows:
        out.write(f"{label:<9} {value}\n")
    return EXIT_OK


def _cmd_check(args: argparse.Namespace, out: TextIO) -> int:
    with _open(args) as store:
        result = store.check()
        where = store.describe()
    if args.json:
        json.dump(dataclasses.asdict(result), out, ensure_ascii=False, indent=2)
        out.write("\n")
    else:
        out.write(f"{where}: {'ok' if result.ok else 'PROBLEMS FOUND'}\n")
        for item in result.checked:
            out.write(f"  checked {item}\n")
        for problem in result.problems:
            out.write(f"  problem: {problem}\n")
    return EXIT_OK if result.ok else EXIT_DB


_DEFAULT_IMPORT_PATHS = {"hermes": "~/.hermes/state.db", "claude-code": "~/.claude/projects"}


def _cmd_import(args: argparse.Namespace, out: TextIO) -> int:
    # A SQLite store of ours or Hermes': the Hermes importer reads both.
    importer = IMPORTERS["hermes" if args.kind == "sqlite" else args.kind]
    options: dict[str, Any] = {"show_progress": True if args.progress else None}
    if args.kind == "jsonl":
        options["parent_field"] = args.parent_field
        options["source"] = args.source or "import"
    elif args.source:
        raise ValueError("--source applies to jsonl imports only")
    path = args.path or _DEFAULT_IMPORT_PATHS.get(args.kind)
    if path is None:
        raise ValueError(f"import {args.kind} needs a PATH to import")
    with import_target(args.db) as store:  # a new file that receives nothing is removed
        report = importer(store, Path(path).expanduser(), **options)
    if args.json:
        json.dump(report.to_dict(), out, ensure_ascii=False, indent=2)
        out.write("\n")
    else:
        out.write(report.summary() + "\n")
        for problem in report.problems[: args.show_problems]:
            out.write(f"  skipped {problem}\n")
        hidden = len(report.problems) - args.show_problems
        if hidden > 0:
            out.write(f"  ... {hidden} more (use --json to see them all)\n")
    return EXIT_PARTIAL if report.skipped_total or report.orphans else EXIT_OK


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


def _cmd_mcp(args: argparse.Namespace, out: TextIO) -> int:
    """Serve the database to MCP clients; everything but the wiring is in ``mcp_server``."""
    try:
        from langchain_session_recall.mcp_server import serve
    except ImportError as exc:
        raise _MissingFeature(str(exc)) from exc
    serve(args.db, read_only=args.read_only, user_id=args.user_id, http=args.http, model=args.model)
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
        p.add_argument("--source", help="only sessions from these sources, e.g. cli,telegram")
        p.add_argument(
            "--exclude-source",
            default="tool",
            help="leave out these sources (default: tool; '' to keep all)",
        )
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
    p_search.add_argument(
        "--summarize", action="store_true", help="summarize each session with an LLM"
    )
    p_search.add_argument("--model", help="chat model for --summarize, e.g. gpt-4.1-mini")
    p_search.add_argument(
        "--base-url", help="OpenAI-compatible endpoint for --summarize (vLLM, llama.cpp, ...)"
    )
    p_search.set_defaults(func=_cmd_search)

    p_recent = sub.add_parser(
        "recent",
        help="list recent sessions (no search, no LLM)",
        epilog="examples:\n  session-recall recent --db recall.db -k 5 --source cli\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    common(p_recent)
    scoping(p_recent)
    p_recent.set_defaults(func=_cmd_recent)

    p_show = sub.add_parser(
        "show",
        help="print one session's transcript (with its sub-sessions)",
        epilog="examples:\n  session-recall show 20261103_091500_a1b2c3 --db recall.db\n"
        "  session-recall show t-42 --db recall.db --json | jq '.messages | length'\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p_show.add_argument("session_id", help="the session to show")
    p_show.add_argument("--db", required=True, help="session database file")
    p_show.add_argument("--read-only", action="store_true", help="never write to the database")
    p_show.add_argument("--json", action="store_true", help="print JSON for scripts")
    p_show.add_argument("--no-children", action="store_true", help="leave out sub-sessions")
    p_show.add_argument("--no-pager", action="store_true", help="never page the output")
    p_show.set_defaults(func=_cmd_show)

    p_stats = sub.add_parser(
        "stats",
        help="sessions, messages, sources, date range and size (cheap; see check)",
        epilog="examples:\n  session-recall stats --db recall.db\n"
        "  session-recall stats --db ~/.hermes/state.db --read-only --json\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p_stats.add_argument("--db", required=True, help="session database file")
    p_stats.add_argument("--read-only", action="store_true", help="never write to the database")
    p_stats.add_argument("--json", action="store_true", help="print JSON for scripts")
    p_stats.set_defaults(func=_cmd_stats)

    p_check = sub.add_parser(
        "check",
        help="check the store's integrity (full-text index, file, message counts)",
        epilog="examples:\n  session-recall check --db recall.db\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p_check.add_argument("--db", required=True, help="session database file or postgresql:// DSN")
    p_check.add_argument("--read-only", action="store_true", help="never write to the database")
    p_check.add_argument("--json", action="store_true", help="print JSON for scripts")
    p_check.set_defaults(func=_cmd_check)

    p_import = sub.add_parser(
        "import",
        help="import sessions from Hermes, JSONL, Claude Code or LangGraph",
        epilog=_IMPORT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p_import.add_argument(
        "kind",
        choices=sorted([*IMPORTERS, "sqlite"]),
        help="what PATH holds (sqlite: a session store of ours, copied into --db, e.g. a "
        "postgresql:// DSN)",
    )
    p_import.add_argument(
        "path",
        nargs="?",
        help="file or directory to import (hermes: default ~/.hermes/state.db; "
        "claude-code: default ~/.claude/projects)",
    )
    p_import.add_argument("--db", required=True, help="session database to import into")
    p_import.add_argument("--json", action="store_true", help="print the report as JSON")
    p_import.add_argument(
        "--progress", action="store_true", help="show progress even when not on a terminal"
    )
    p_import.add_argument("--source", help="jsonl: source of sessions without one")
    p_import.add_argument(
        "--parent-field",
        default="parent_session_id",
        help="jsonl: field naming the parent session (default parent_session_id)",
    )
    p_import.add_argument(
        "--show-problems", type=int, default=10, help="skipped items to list (default 10)"
    )
    p_import.set_defaults(func=_cmd_import)

    p_mcp = sub.add_parser(
        "mcp",
        help="serve session_search and session_show to MCP clients (Claude Code, Cursor)",
        epilog="examples:\n  session-recall mcp --db recall.db --read-only\n"
        "  session-recall mcp --db recall.db --http 127.0.0.1:8765\n"
        "  OPENAI_API_KEY=sk-... session-recall mcp --db recall.db --model gpt-4.1-mini\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p_mcp.add_argument("--db", required=True, help="session database file or postgresql:// DSN")
    p_mcp.add_argument("--read-only", action="store_true", help="never write to the database")
    p_mcp.add_argument("--user-id", help="only this user's sessions (tenant scope)")
    p_mcp.add_argument(
        "--http", metavar="HOST:PORT", help="serve streamable HTTP at /mcp instead of stdio"
    )
    p_mcp.add_argument(
        "--model",
        help="chat model for recaps (OPENAI_API_KEY / OPENAI_BASE_URL); default: extractive",
    )
    p_mcp.set_defaults(func=_cmd_mcp)

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
    except (ImportSourceError, _MissingFeature) as exc:
        print(f"session-recall: {exc}", file=sys.stderr)
        return EXIT_USAGE
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
