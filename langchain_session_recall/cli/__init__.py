"""``session-recall``: search, browse and import past agent sessions from the shell.

Commands: ``search``, ``recent``, ``show``, ``stats``, ``check``, ``import``, ``demo``, ``mcp``
(:mod:`~langchain_session_recall.cli.commands`, on click; people get rich output from
:mod:`~langchain_session_recall.cli.output`, scripts one JSON document with ``--json``).

Exit codes are stable, for scripts: :data:`~langchain_session_recall.cli.state.EXIT_CODES` is
the table (``docs/cli.md``, "Exit codes", gives each in detail); :func:`main` turns each kind
of error into its code.
"""

from __future__ import annotations

import contextlib
import io
import os
import sqlite3
import sys
from collections.abc import Sequence
from typing import TextIO

import click

from langchain_session_recall.backends import describe_target
from langchain_session_recall.cli.commands import app
from langchain_session_recall.cli.state import (
    EXIT_BUSY,
    EXIT_CODES,
    EXIT_DB,
    EXIT_EMPTY,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PARTIAL,
    EXIT_USAGE,
    State,
)
from langchain_session_recall.core.text import safe_for_terminal
from langchain_session_recall.errors import (
    NotASessionDatabaseError,
    SessionRecallError,
    StoreBusyError,
    StoreUnavailableError,
)

__all__ = [
    "EXIT_BUSY",
    "EXIT_CODES",
    "EXIT_DB",
    "EXIT_EMPTY",
    "EXIT_INTERNAL",
    "EXIT_OK",
    "EXIT_PARTIAL",
    "EXIT_USAGE",
    "app",
    "main",
    "run",
]


def _say(message: str) -> None:
    # A message may quote the file (another program's table names, a path): nothing in it
    # reaches the terminal as an escape sequence.
    print(f"session-recall: {safe_for_terminal(message)}", file=sys.stderr)


def _show(exc: click.ClickException) -> None:
    """Click's own message for ``exc`` (usage, hint, error) on stderr, made safe: it quotes
    the values given."""
    shown = io.StringIO()
    exc.show(file=shown)
    sys.stderr.write(safe_for_terminal(shown.getvalue()))


def _db_of(argv: Sequence[str]) -> str | None:
    """The ``--db`` value of a command line (to name it in a database error)."""
    for i, arg in enumerate(argv):
        if arg == "--db" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--db="):
            return arg[len("--db=") :]
    return None


def _is_driver_error(exc: BaseException) -> bool:
    """A database driver's own error: SQLite's, or psycopg's when it is loaded."""
    if isinstance(exc, sqlite3.Error):
        return True
    psycopg = sys.modules.get("psycopg")
    return psycopg is not None and isinstance(exc, psycopg.Error)


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run ``session-recall`` with ``argv`` (default: the process's); returns the exit code.

    Everything a command prints goes to ``out`` (default stdout), messages to stderr.
    """
    out = out or sys.stdout
    args = list(sys.argv[1:] if argv is None else argv)
    redirect = (
        contextlib.redirect_stdout(out) if out is not sys.stdout else contextlib.nullcontext()
    )
    try:
        with redirect:  # click writes --help to stdout
            code = app.main(
                args=args, prog_name="session-recall", standalone_mode=False, obj=State(out=out)
            )
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc), err=True)
        return EXIT_USAGE
    except click.ClickException as exc:  # a UsageError among them
        _show(exc)
        return EXIT_USAGE
    except (click.Abort, KeyboardInterrupt):
        _say("interrupted")
        return EXIT_INTERRUPTED
    except (NotASessionDatabaseError, StoreUnavailableError) as exc:
        _say(str(exc))
        return EXIT_DB
    except StoreBusyError as exc:
        _say(str(exc))
        return EXIT_BUSY
    except SessionRecallError as exc:  # bad input: an empty query, an unreadable source, ...
        _say(str(exc))
        return EXIT_USAGE
    except Exception as exc:
        if os.environ.get("SESSION_RECALL_DEBUG"):
            raise
        if _is_driver_error(exc):  # e.g. "disk I/O error" on a damaged or vanished file
            db = _db_of(args)
            _say(f"{describe_target(db)}: {exc}" if db else str(exc))
            return EXIT_DB
        _say(
            f"internal error: {type(exc).__name__}: {exc} "
            "(please report it; SESSION_RECALL_DEBUG=1 shows the traceback)"
        )
        return EXIT_INTERNAL
    return code if isinstance(code, int) else EXIT_OK


def run() -> None:  # pragma: no cover - console script entry point
    """Console-script entry point."""
    try:
        code = main()
    except BrokenPipeError:  # output piped into `head` and closed early: not an error
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - flushed at exit, never read
        finally:
            code = EXIT_OK
    sys.exit(code)
