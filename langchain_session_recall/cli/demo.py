"""``demo``: build the embedded demo database and search it (no API key)."""

from __future__ import annotations

from pathlib import Path

import click

from langchain_session_recall.cli.options import (
    DEMO_PANEL_CHARS,
    chars_option,
    db_option,
    json_option,
    k_option,
)
from langchain_session_recall.cli.state import (
    EXIT_OK,
    State,
    json_results,
    pass_state,
    plural,
)
from langchain_session_recall.core.redaction import SecretRedactor
from langchain_session_recall.recall.build import recall
from langchain_session_recall.search.request import SearchRequest

__all__ = ["demo"]


@click.command(
    epilog="""Examples:

\b
  session-recall demo
  session-recall demo --query pgbouncer -k 1
  session-recall demo --json | jq '.searches[0].results[0].metadata.title'
"""
)
@db_option(
    required=False,
    help="where to build it (default: $SESSION_RECALL_DEMO_DB or session-recall-demo.db "
    "in the temporary directory)",
)
@click.option(
    "--fresh",
    is_flag=True,
    help="rebuild the demo database from scratch (only a demo database: any other file is "
    "refused, never deleted)",
)
@click.option("--query", metavar="Q", help="search this instead of the sample questions")
@k_option
@chars_option
@json_option
@pass_state
def demo(
    state: State,
    db: str | None,
    fresh: bool,
    query: str | None,
    k: int,
    chars: int | None,
    as_json: bool,
) -> int:
    """Build the embedded demo database (realistic sessions) and search it. No API key."""
    from langchain_session_recall.backends import is_postgres_dsn
    from langchain_session_recall.demo import DEMO_QUERIES, default_demo_path, open_demo_store

    if db and is_postgres_dsn(db):
        raise click.UsageError("the demo database is a SQLite file: give --db a file path")
    path = Path(db).expanduser() if db else default_demo_path()
    with open_demo_store(path, fresh=fresh) as store:
        sessions = len(store.recent_sessions(limit=10_000, exclude_sources=()))
        # one panel per question: shorter than search's, so the whole demo fits a few screens
        max_chars = chars or (DEMO_PANEL_CHARS if not as_json else None)
        queries = [query] if query else list(DEMO_QUERIES)
        searches = [
            (q, recall(store, SearchRequest(q, k=k, max_chars=max_chars), redact=SecretRedactor()))
            for q in queries
        ]
        latest = recall(store, SearchRequest(k=k), redact=SecretRedactor())
    if as_json:
        state.json(
            {
                "database": str(path),
                "root_sessions": sessions,
                "searches": [{"query": q, "results": json_results(r)} for q, r in searches],
                "recent": json_results(latest),
            }
        )
        return EXIT_OK
    from rich.text import Text

    from langchain_session_recall.cli.output import print_lines, print_recent, print_search

    console = state.console()
    print_lines(
        console,
        [
            f"Demo database: {path} ({plural(sessions, 'root session')})",
            f"Search it yourself:  session-recall search 'QUERY' --db {path}",
            "",
        ],
    )
    for q, results in searches:
        print_lines(console, [Text(f"━━ search: {q!r}", style="bold")])
        print_search(console, results, panels=1)  # the best hit in full, the rest in a line
        console.print()
    print_lines(console, [Text("━━ recent sessions (empty query, no LLM)", style="bold")])
    print_recent(console, latest)
    return EXIT_OK
