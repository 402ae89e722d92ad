"""What every ``session-recall`` command shares: the exit codes (:data:`EXIT_CODES`, the one
table), the :class:`State` handed to each command (where output goes, strict JSON), opening the
store, the JSON form of results."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

import click

from langchain_session_recall.backends import SessionBackend, open_store
from langchain_session_recall.core.text import escape_for_terminal
from langchain_session_recall.core.text import plural as core_plural
from langchain_session_recall.recall.build import Result

if TYPE_CHECKING:
    from rich.console import Console


__all__ = [
    "DEMO_SHOW_ID",
    "EXIT_BUSY",
    "EXIT_CODES",
    "EXIT_DB",
    "EXIT_EMPTY",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_PARTIAL",
    "EXIT_USAGE",
    "State",
    "exit_codes_help",
    "json_results",
    "open_db",
    "pass_state",
    "plural",
]

EXIT_OK, EXIT_EMPTY, EXIT_USAGE, EXIT_DB, EXIT_PARTIAL = 0, 1, 2, 3, 4
EXIT_INTERNAL = 70  # EX_SOFTWARE
EXIT_BUSY = 75  # EX_TEMPFAIL
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports Ctrl-C

EXIT_CODES: dict[int, str] = {
    EXIT_OK: "done",
    EXIT_EMPTY: "nothing found",
    EXIT_USAGE: "bad usage or input",
    EXIT_DB: "the database cannot be used (missing, not a session database, not ours to write)",
    EXIT_PARTIAL: "import finished but skipped some input",
    EXIT_INTERNAL: "an internal error (a bug)",
    EXIT_BUSY: "the store stayed busy (running the command again is safe)",
    EXIT_INTERRUPTED: "interrupted",
}
"""Every exit code of ``session-recall`` and what it means, stable for scripts: the one table.
``session-recall --help`` lists it; the table of ``docs/cli.md`` ("Exit codes") gives each row
in detail, and a test holds the two equal."""


def exit_codes_help() -> str:
    """:data:`EXIT_CODES` as ``session-recall --help`` lists them.

    Example:
        >>> exit_codes_help().splitlines()[1:3]
        ['Exit codes (docs/cli.md has each in detail):', '  0    done']
    """
    rows = "\n".join(f"  {code:<5}{meaning}" for code, meaning in EXIT_CODES.items())
    return f"\b\nExit codes (docs/cli.md has each in detail):\n{rows}\n"


DEMO_SHOW_ID = "20261105_112048_f00d42"
"""A session of the demo database, for the examples of ``--help``."""


@dataclass
class State:
    """What every command gets from :func:`~langchain_session_recall.cli.main`."""

    out: TextIO

    def console(self) -> Console:
        from langchain_session_recall.cli.output import make_console

        return make_console(self.out)

    def json(self, payload: Any) -> None:
        """Write ``payload`` as strict JSON: a non-finite number (a NaN or infinite timestamp
        another program stored) becomes ``null``, never ``NaN``/``Infinity``; the characters a
        terminal would act on (controls, bidirectional overrides) are ``\\uXXXX`` escapes,
        so the JSON can be printed on a terminal and still holds every character."""
        text = json.dumps(_finite(payload), ensure_ascii=False, indent=2, default=str)
        self.out.write(escape_for_terminal(text) + "\n")


def _finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float inside it replaced by ``None``.

    Example:
        >>> _finite({"started_at": float("nan"), "scores": [1.5, float("inf")]})
        {'started_at': None, 'scores': [1.5, None]}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


pass_state = click.make_pass_decorator(State)


def open_db(db: str, read_only: bool) -> SessionBackend:
    """The store ``--db`` names, as every command but ``import`` opens it (never created)."""
    return open_store(db, read_only=read_only, create=False)


def json_results(results: Sequence[Result]) -> list[dict[str, Any]]:
    """Results as ``--json`` prints them: each one's session id (what ``show`` takes, a
    ``Document``'s ``id``), text and metadata."""
    return [
        {"id": r.metadata.get("session_id"), "content": r.page_content, "metadata": r.metadata}
        for r in results
    ]


def plural(n: int, noun: str) -> str:
    """``"1 session"``, ``"2 sessions"`` (:func:`~langchain_session_recall.core.text.plural`).

    Example:
        >>> plural(1, "session"), plural(2, "message")
        ('1 session', '2 messages')
    """
    return core_plural(n, noun)
