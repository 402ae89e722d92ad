"""Reading another program's SQLite file (OpenCode's ``opencode.db``, Cursor's ``state.vscdb``):
opened read-only, immutable while no writer is at work, every batch of rows under a time limit,
rows streamed a batch at a time (these files reach tens of GB)."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langchain_session_recall.backends.sqlite.files import (
    ReadDeadline,
    default_read_timeout,
    hot_journal_message,
    is_hot_journal,
    read_only_uri,
)
from langchain_session_recall.errors import ImportSourceError, ReadLimitError
from langchain_session_recall.importers.lines import BadEntry
from langchain_session_recall.importers.sources import check_regular_file

__all__ = ["SqliteSource", "json_column", "open_sqlite_source"]

ROWS_PER_FETCH = 256
"""Rows read at a time: memory holds one batch of rows, whatever the table's size."""


def json_column(raw: Any, what: str) -> Mapping[str, Any]:
    """A column holding a JSON object (as text or bytes), read.

    Raises:
        BadEntry: not valid JSON, or not an object (``what`` names it in the reason).

    Example:
        >>> json_column('{"a": 1}', "part")["a"]
        1
    """
    try:
        value = json.loads(raw) if isinstance(raw, str | bytes) else None
    except (ValueError, RecursionError):
        raise BadEntry(f"{what} is not valid JSON") from None
    if not isinstance(value, Mapping):
        raise BadEntry(f"{what} is not a JSON object")
    return value


def _writer_at_work(path: Path) -> bool:
    """A ``-wal`` or ``-journal`` beside the file: a program has it open for writing (or
    crashed doing so)."""
    return any(os.path.exists(f"{path}{x}") for x in ("-wal", "-journal"))


def _lenient_text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


class SqliteSource:
    """An open source file: :meth:`rows` streams a query's rows, each fetch under the read
    time limit (``$SESSION_RECALL_READ_TIMEOUT``, 60 s by default)."""

    def __init__(self, conn: sqlite3.Connection, path: Path, deadline: ReadDeadline | None):
        self.conn = conn
        self.path = path
        self._deadline = deadline

    def rows(self, sql: str, params: Sequence[Any] = ()) -> Iterator[tuple[Any, ...]]:
        """The rows of ``sql``, read :data:`ROWS_PER_FETCH` at a time (never all at once).

        Raises:
            ImportSourceError: the file cannot be read (not SQLite, a table missing, a hot
                journal), or one fetch ran past the time limit.
        """
        with self._guard():
            cursor = self.conn.execute(sql, params)
        while True:
            with self._guard():
                batch = cursor.fetchmany(ROWS_PER_FETCH)
            if not batch:
                return
            yield from batch

    def first(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        """The first row of ``sql`` (a look-up by key), or ``None``.

        Raises:
            ImportSourceError: as :meth:`rows`.
        """
        with self._guard():
            row: tuple[Any, ...] | None = self.conn.execute(sql, params).fetchone()
        return row

    @contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            if self._deadline is None:
                yield
            else:
                with self._deadline.limit():
                    yield
        except ReadLimitError as exc:
            raise ImportSourceError(str(exc)) from exc
        except sqlite3.DatabaseError as exc:
            if is_hot_journal(str(self.path), exc):
                raise ImportSourceError(hot_journal_message(str(self.path))) from exc
            raise ImportSourceError(f"{self.path} could not be read: {exc}") from exc

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()


@contextmanager
def open_sqlite_source(path: Path, *, probe: str, hint: str) -> Iterator[SqliteSource]:
    """Open ``path`` read-only and check it with ``probe`` (a query naming the tables the
    import reads); closed when the block ends.

    The file is opened immutable (no lock taken, no file created beside it) unless a writer
    is at work on it (a ``-wal`` or ``-journal`` beside it): then it is read through SQLite's
    locks, read-only, so what the writer committed is read whole and nothing is written.

    Raises:
        ImportSourceError: not a regular file, not SQLite, or ``probe`` fails (``hint`` says
            what the file should be).
    """
    check_regular_file(path, hint)
    uri = read_only_uri(path, immutable=not _writer_at_work(path))
    try:
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        conn.execute("PRAGMA query_only = 1")
    except sqlite3.DatabaseError as exc:
        raise ImportSourceError(f"cannot open {path}: {exc}") from exc
    conn.text_factory = _lenient_text  # another program's text may not be UTF-8
    seconds = default_read_timeout()
    deadline = ReadDeadline(seconds, str(path)) if seconds is not None else None
    if deadline is not None:
        deadline.install(conn)
    source = SqliteSource(conn, path, deadline)
    try:
        try:
            for _ in source.rows(probe):
                break
        except ImportSourceError as exc:
            raise ImportSourceError(f"{exc}{hint}") from exc
        yield source
    finally:
        source.close()
