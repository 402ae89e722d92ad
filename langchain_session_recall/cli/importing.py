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

__all__ = ["import_", "sync"]


_IMPORT_EPILOG = """Examples:

\b
  session-recall import hermes ~/.hermes/state.db --db recall.db
  session-recall import claude-code --db recall.db --progress
  session-recall import jsonl chats/ --db recall.db --source support-bot
  session-recall import codex --db recall.db
  session-recall import langgraph checkpoints.sqlite --db recall.db --json
  session-recall import sqlite recall.db --db postgresql://app@db/agents
  session-recall import auto --dry-run
  session-recall import auto --db recall.db

Re-running an import adds only what is new (messages are tracked in the import ledger).
A session forgotten since (`session-recall forget`) stays out unless --reimport is given.

\b
Exit codes: 0 imported, 2 source unreadable, 3 --db is not a session database,
            4 imported but some input was skipped (see the summary line),
            75 the store stayed busy (run it again: it adds only what is missing)
"""


_SYNC_EPILOG = """Examples:

\b
  session-recall sync --db ~/recall.db
  */15 * * * * session-recall sync --db ~/recall.db   (crontab -e)

\b
Exit codes: 0 synced, 4 synced but some input was skipped or a source could not be
            read (see the summary), 75 the store stayed busy (run it again)
"""


@click.group(name="import", epilog=_IMPORT_EPILOG)
def import_() -> None:
    """Import sessions from coding agents (`import auto`: all found), JSONL, LangGraph or a store.

    The database (--db) is created when missing: a file, or a postgresql:// DSN.
    """


def import_options(func: F) -> F:
    """What every ``import KIND`` takes."""
    return _with_import_options(func, db_required=True)


def _with_import_options(func: F, *, db_required: bool, reimport: bool = True) -> F:
    options = [
        db_option(
            required=db_required,
            help="session database to import into (created when missing), or a DSN",
        ),
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
    ]
    if reimport:
        options.append(
            click.option(
                "--reimport",
                is_flag=True,
                help="also import again the sessions forgotten since an earlier import (left "
                "out by default)",
            )
        )
    for option in reversed(options):
        func = option(func)
    return func


follow_symlinks_option = click.option(
    "--follow-symlinks",
    is_flag=True,
    help="also read files that symlinks inside PATH lead to outside it (default: skipped and "
    "reported)",
)


resume_option = click.option(
    "--resume",
    is_flag=True,
    help="record where each file's read stopped, and read a file only appended to since "
    "from there (what `sync` does; a file rewritten since is read whole)",
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
@resume_option
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
@resume_option
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="processes to import with: 1 reads and writes in this one; N > 1: N - 1 worker "
    "processes read and parse the rollouts while this one writes (default: a worker when "
    "there is more than one core and 32 MB or more to read)",
)
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


home_option = click.option(
    "--home",
    metavar="DIR",
    type=click.Path(file_okay=False, exists=True),
    help="look for the agents' histories under DIR instead of your home directory",
)


def _auto_options(func: F) -> F:
    """``import KIND``'s options, ``--db`` optional (``--dry-run`` needs none)."""
    return _with_import_options(func, db_required=False)


@import_.command(name="auto")
@home_option
@click.option("--dry-run", is_flag=True, help="list what was found; import nothing")
@_auto_options
@pass_state
def import_auto(
    state: State, /, home: str | None, dry_run: bool, db: str | None, **options: Any
) -> int:
    """Every agent history found under your home directory (or --home DIR): Hermes, Claude
    Code, Codex, Gemini CLI, OpenCode, Cursor. Shows what was found (agent, path, sessions,
    size) and imports it with one progress bar.

    JSON Lines and LangGraph files have no place of their own: import them by path.
    """
    if dry_run:
        from langchain_session_recall.importers.discovery import discover_sources

        found = discover_sources(home)
        if options["as_json"]:
            state.json({"dry_run": True, "sources": [_source_dict(s) for s in found]})
        else:
            _print_found(state, [s.row() for s in found])
        return EXIT_OK
    if db is None:
        raise click.UsageError("Missing option '--db' (or give --dry-run to only list).")
    return _run_auto(state, db, home, incremental=False, **options)


def _sync_options(func: F) -> F:
    """``import KIND``'s options but ``--reimport`` (a sync never brings forgotten sessions
    back: ``import auto --reimport`` does)."""
    return _with_import_options(func, db_required=True, reimport=False)


@click.command(name="sync", epilog=_SYNC_EPILOG)
@home_option
@_sync_options
@pass_state
def sync(state: State, /, home: str | None, db: str, **options: Any) -> int:
    """Import what is new in every agent history under your home directory (or --home DIR).

    Run it from cron or an agent's session-end hook: unchanged files are not read, changed
    transcripts are read again and only their new messages written; sessions stay after the
    agent deletes its files. Warns once when an agent's setting will delete transcripts.
    """
    return _run_auto(state, db, home, incremental=True, **options)


def _run_auto(
    state: State,
    db: str,
    home: str | None,
    *,
    incremental: bool,
    as_json: bool,
    progress: bool,
    show_problems: int,
    reimport: bool = False,
) -> int:
    from langchain_session_recall.importers.auto import import_auto, sync
    from langchain_session_recall.importers.base import import_target

    show = True if progress else None
    with import_target(db) as store:
        if incremental:
            result = sync(store, home, show_progress=show)
        else:
            result = import_auto(store, home, show_progress=show, reimport=reimport)
    if as_json:
        state.json(result.to_dict())
    else:
        from langchain_session_recall.cli.output import print_import_report

        if not incremental:
            _print_found(state, [s.source.row() for s in result.sources])
        print_import_report(state.console(), result.summary(), result.problems, show_problems)
        for warning in result.warnings:
            state.console().print(f"warning: {warning}", style="yellow", markup=False)
    return EXIT_PARTIAL if result.partial else EXIT_OK


def _print_found(state: State, rows: list[tuple[str, str, int, int]]) -> None:
    from langchain_session_recall.cli.output import print_sources

    print_sources(state.console(), rows)


def _source_dict(source: Any) -> dict[str, Any]:
    agent, _, sessions, size = source.row()
    return {
        "kind": source.kind,
        "agent": agent,
        "paths": [str(p) for p in source.paths],
        "sessions": sessions,
        "bytes": size,
    }
