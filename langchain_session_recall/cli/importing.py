"""``import KIND``: other agents' histories into a store, one subcommand per importer
(:mod:`langchain_session_recall.importers`), with a summary line or a JSON report."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from langchain_session_recall.cli.options import (
    db_option,
    json_option,
    progress_option,
)
from langchain_session_recall.cli.state import (
    EXIT_OK,
    EXIT_PARTIAL,
    State,
    pass_state,
)

if TYPE_CHECKING:
    from langchain_session_recall.importers import ImportReport

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["import_"]


_IMPORT_EPILOG = """Examples:

\b
  session-recall import hermes ~/.hermes/state.db --db recall.db
  session-recall import claude-code --db recall.db --progress
  session-recall import jsonl chats/ --db recall.db --source support-bot
  session-recall import codex --db recall.db
  session-recall import langgraph checkpoints.sqlite --db recall.db --json
  session-recall import sqlite recall.db --db postgresql://app@db/agents

Re-running an import adds only what is new (messages are tracked in the import ledger).
A session forgotten since (`session-recall forget`) stays out unless --reimport is given.

\b
Exit codes: 0 imported, 2 source unreadable, 3 --db is not a session database,
            4 imported but some input was skipped (see the summary line),
            75 the store stayed busy (run it again: it adds only what is missing)
"""


@click.group(name="import", epilog=_IMPORT_EPILOG)
def import_() -> None:
    """Import sessions from Hermes, JSONL files, Claude Code, LangGraph or another store.

    The database (--db) is created when missing: a file, or a postgresql:// DSN.
    """


def import_options(func: F) -> F:
    """What every ``import KIND`` takes."""
    for option in reversed(
        [
            db_option(help="session database to import into (created when missing), or a DSN"),
            json_option,
            progress_option,
            click.option(
                "--show-problems",
                type=click.IntRange(min=0),
                default=10,
                show_default=True,
                metavar="N",
                help="skipped items to list",
            ),
            click.option(
                "--reimport",
                is_flag=True,
                help="also import again the sessions forgotten since an earlier import (left "
                "out by default)",
            ),
        ]
    ):
        func = option(func)
    return func


follow_symlinks_option = click.option(
    "--follow-symlinks",
    is_flag=True,
    help="also read files that symlinks inside PATH lead to outside it (default: skipped and "
    "reported)",
)


def _run_import(
    state: State,
    kind: str,
    path: str | None,
    db: str,
    as_json: bool,
    progress: bool,
    show_problems: int,
    **options: Any,
) -> int:
    from langchain_session_recall.importers import IMPORTERS
    from langchain_session_recall.importers.base import import_target

    importer = IMPORTERS[kind]
    with import_target(db) as store:  # a new file that receives no session is removed again
        report: ImportReport = importer(
            store,
            None if path is None else Path(path).expanduser(),
            show_progress=True if progress else None,
            **options,
        )
    if as_json:
        state.json(report.to_dict())
    else:
        from langchain_session_recall.cli.output import print_import_report

        print_import_report(state.console(), report.summary(), report.problems, show_problems)
    return EXIT_PARTIAL if report.skipped_total or report.orphans else EXIT_OK


@import_.command(name="hermes")
@click.argument("path", default="~/.hermes/state.db", metavar="[PATH]")
@import_options
@pass_state
def import_hermes(state: State, /, path: str, **options: Any) -> int:
    """A Hermes state.db (default ~/.hermes/state.db), or a session store of ours.

    The source is opened read-only and never changed.
    """
    return _run_import(state, "hermes", path, **options)


@import_.command(name="sqlite")
@click.argument("path")
@import_options
@pass_state
def import_sqlite(state: State, /, path: str, **options: Any) -> int:
    """A SQLite session store (ours or Hermes'), e.g. to copy it into a postgresql:// DSN.

    Another name for `import hermes`.
    """
    return _run_import(state, "hermes", path, **options)


@import_.command(name="jsonl")
@click.argument("path")
@import_options
@follow_symlinks_option
@click.option(
    "--source",
    metavar="NAME",
    default="import",
    show_default=True,
    help="source of sessions whose lines name none",
)
@click.option(
    "--parent-field",
    metavar="FIELD",
    default="parent_session_id",
    show_default=True,
    help="the field naming a session's parent",
)
@pass_state
def import_jsonl(state: State, /, path: str, source: str, parent_field: str, **options: Any) -> int:
    """JSON Lines: a file, or a directory of *.jsonl files.

    One message per line, or one conversation per line ({"messages": [...]}, the OpenAI chat
    format). In a directory only regular files inside it are read.
    """
    return _run_import(
        state, "jsonl", path, source=source or "import", parent_field=parent_field, **options
    )


@import_.command(name="claude-code")
@click.argument("path", default="~/.claude/projects", metavar="[PATH]")
@import_options
@follow_symlinks_option
@pass_state
def import_claude_code(state: State, /, path: str, **options: Any) -> int:
    """Claude Code transcripts (default ~/.claude/projects), sub-agents as child sessions."""
    return _run_import(state, "claude-code", path, **options)


@import_.command(name="codex")
@click.argument("path", default="$CODEX_HOME or ~/.codex", metavar="[PATH]")
@import_options
@follow_symlinks_option
@pass_state
def import_codex(state: State, /, path: str, **options: Any) -> int:
    """Codex CLI rollouts (default $CODEX_HOME or ~/.codex), forks and sub-agents as children.

    Reads sessions/ and archived_sessions/, .jsonl and .jsonl.zst (the codex extra).
    """
    from langchain_session_recall.importers.codex import default_codex_home

    if path == "$CODEX_HOME or ~/.codex":
        path = str(default_codex_home())
    return _run_import(state, "codex", path, **options)


@import_.command(name="langgraph")
@click.argument("path")
@import_options
@pass_state
def import_langgraph(state: State, /, path: str, **options: Any) -> int:
    """A LangGraph SQLite checkpointer file: one session per thread."""
    return _run_import(state, "langgraph", path, **options)


@import_.command(name="gemini")
@click.argument("path", default="~/.gemini/tmp", metavar="[PATH]")
@import_options
@follow_symlinks_option
@pass_state
def import_gemini(state: State, /, path: str, **options: Any) -> int:
    """Gemini CLI recordings (default ~/.gemini/tmp), sub-agents as child sessions."""
    return _run_import(state, "gemini", path, **options)


@import_.command(name="opencode")
@click.argument("path", required=False, metavar="[PATH]")
@import_options
@pass_state
def import_opencode(state: State, /, path: str | None, **options: Any) -> int:
    """OpenCode's opencode.db (default $OPENCODE_DB, else
    ${XDG_DATA_HOME:-~/.local/share}/opencode/opencode.db), read-only; sub-agents as children.
    """
    return _run_import(state, "opencode", path, **options)


@import_.command(name="cursor")
@click.argument("path", required=False, metavar="[PATH]")
@import_options
@follow_symlinks_option
@pass_state
def import_cursor(state: State, /, path: str | None, **options: Any) -> int:
    """Cursor: the agent's transcripts (default ~/.cursor/projects) and the editor's
    state.vscdb (read-only, streamed), or the one PATH names; sub-agents as children."""
    return _run_import(state, "cursor", path, **options)
