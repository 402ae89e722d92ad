"""Opening SQLite files we did not write: the ``file:`` URI that names exactly the file given,
what a hot rollback journal means, and the time limit on reads of a file opened read-only.

A read-only open is how another program's file is read (a Hermes ``state.db``, a LangGraph
checkpointer), so what such a file holds decides how long a read runs: SQLite's progress
handler stops a read that runs past :data:`DEFAULT_READ_TIMEOUT` with :class:`ReadLimitError`
(a view that never ends, say), rather than letting a search hang.
"""

from __future__ import annotations

import os
import shlex
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from langchain_session_recall.errors import (
    InvalidArgumentError,
    NotASessionDatabaseError,
    ReadLimitError,
)

__all__ = [
    "DEFAULT_READ_TIMEOUT",
    "READ_TIMEOUT_ENV",
    "ReadDeadline",
    "default_read_timeout",
    "hot_journal_message",
    "is_hot_journal",
    "read_only_uri",
    "refuse_hot_journal",
]

DEFAULT_READ_TIMEOUT = 60.0
"""Seconds one read of a store opened read-only may run (a search, a listing, ``stats``):
far above what a search of a large store takes (well under a second at 200k messages, see
``docs/benchmarks-perf.md``), so only a file that makes SQLite work without end meets it."""
READ_TIMEOUT_ENV = "SESSION_RECALL_READ_TIMEOUT"
"""The environment variable that overrides :data:`DEFAULT_READ_TIMEOUT` (seconds; ``0``: no
limit), for the command line, the MCP server and imports alike."""
_STEPS = 10_000
"""SQLite virtual-machine steps between two looks at the clock (well under a millisecond)."""
_READONLY_ROLLBACK = 776  # SQLITE_READONLY_ROLLBACK: a hot journal a read-only open cannot undo


def read_only_uri(path: str | os.PathLike[str], *, immutable: bool = False) -> str:
    """A ``file:`` URI opening ``path`` read-only (``immutable``: without locks or files beside
    it), the whole path percent-quoted: ``%``, ``?``, ``#`` and spaces are part of its name,
    never URI syntax, so the URI names that file and no other.

    Example:
        >>> read_only_uri("/data/proj%41/a?b#c.db")
        'file:///data/proj%2541/a%3Fb%23c.db?mode=ro'
    """
    posix = Path(path).resolve().as_posix()
    quoted = quote(posix if posix.startswith("/") else "/" + posix, safe="/:")
    return f"file://{quoted}?mode=ro" + ("&immutable=1" if immutable else "")


def default_read_timeout() -> float | None:
    """The read limit a read-only store gets unless told: ``$SESSION_RECALL_READ_TIMEOUT``
    (``0``: none), else :data:`DEFAULT_READ_TIMEOUT`.

    Raises:
        InvalidArgumentError: the variable is not a number of seconds.
    """
    raw = os.environ.get(READ_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_READ_TIMEOUT
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0 or seconds == float("inf"):
        raise InvalidArgumentError(
            f"{READ_TIMEOUT_ENV}={raw!r} is not a number of seconds (e.g. 120; 0: no limit)"
        )
    return seconds or None


def is_hot_journal(path: str, exc: sqlite3.Error) -> bool:
    """Whether ``exc`` (raised reading ``path`` read-only) means a hot rollback journal: a
    writer crashed mid-write and left ``<path>-journal``, which only a writable open undoes."""
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    if code is not None and code != _READONLY_ROLLBACK:
        return False
    try:
        return os.path.getsize(path + "-journal") > 0
    except OSError:
        return False


def hot_journal_message(path: str) -> str:
    """What a hot rollback journal means and how to recover from it.

    Example:
        >>> print(hot_journal_message("state.db"))  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
        state.db cannot be read: a program writing to it crashed mid-write and left ...
        open it once writable with sqlite3: sqlite3 state.db 'PRAGMA quick_check;' rolls ...
    """
    return (
        f"{path} cannot be read: a program writing to it crashed mid-write and left "
        f"{path}-journal (a hot rollback journal), which holds the pages that write changed as "
        "they were before it. Rolling the write back rewrites the file, which this library "
        "never does to a file opened read-only or one that may be another program's. To "
        "recover, stop the program that writes the file, then open it once writable with "
        f"sqlite3: sqlite3 {shlex.quote(path)} 'PRAGMA quick_check;' rolls the unfinished write "
        "back (what was committed before it stays) and removes the journal. Do not delete the "
        "journal instead: the file would keep that write half-done, possibly corrupt"
    )


def refuse_hot_journal(path: str) -> None:
    """Raise :class:`NotASessionDatabaseError` (:func:`hot_journal_message`) when ``path`` has a
    hot rollback journal, before a writable connection would roll it back: that rewrites the
    file, and a file that turns out to be another program's must be left as it is. A journal
    of a writer still at work is not hot (it holds its lock) and passes."""
    try:
        if os.path.getsize(path + "-journal") == 0:
            return
    except OSError:
        return
    probe = sqlite3.connect(read_only_uri(path), uri=True, timeout=0)
    try:
        probe.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        if is_hot_journal(path, exc):
            raise NotASessionDatabaseError(hot_journal_message(path)) from exc
    finally:
        probe.close()


class ReadDeadline:
    """A time limit on the reads of one connection, checked by SQLite's progress handler.

    :meth:`limit` arms it around a read (the outermost block on the thread): a statement still
    running when the time is up is interrupted, and the block raises :class:`ReadLimitError`.
    """

    def __init__(self, seconds: float, name: str) -> None:
        self.seconds = seconds
        self.name = name
        self._until: float | None = None
        self._depth = 0
        self._fired = False

    def install(self, conn: sqlite3.Connection) -> None:
        """Let this deadline stop ``conn``'s statements."""
        conn.set_progress_handler(self._expired, _STEPS)

    def _expired(self) -> int:
        if self._until is not None and time.monotonic() > self._until:
            self._fired = True
            return 1  # SQLite stops the statement: "interrupted"
        return 0

    @contextmanager
    def limit(self) -> Iterator[None]:
        """Run the block under the deadline (nested blocks share the outermost one's)."""
        if self._depth == 0:
            self._until, self._fired = time.monotonic() + self.seconds, False
        self._depth += 1
        try:
            yield
        except Exception as exc:
            if self._fired:  # whatever the interrupted statement turned into on its way out
                raise self._error() from exc
            raise
        finally:
            self._depth -= 1
            if self._depth == 0:
                self._until = None
        if self._fired and self._depth == 0:  # an interrupted statement's error was swallowed
            raise self._error()

    def _error(self) -> ReadLimitError:
        return ReadLimitError(
            f"reading {self.name} took longer than {self.seconds:g} s, the limit for a file "
            "opened read-only, and was stopped: something in the file (a view that never ends, "
            "say) makes SQLite work without end. If the file is merely huge, raise the limit "
            f"(read_timeout= in Python, {READ_TIMEOUT_ENV}=SECONDS on the command line)"
        )
