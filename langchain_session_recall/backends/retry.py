"""How writers wait for a busy store, and retry a write that found it busy.

Two layers, both bounded:

1. **Waiting for the lock** (the store). A SQLite writer waits up to ``busy_timeout`` seconds
   (:data:`DEFAULT_BUSY_TIMEOUT`, 30 s) for another connection's write transaction to end;
   SQLite polls meanwhile, sleeping 1 ms at first and growing to 100 ms between tries. A write
   still without the lock then raises :class:`~langchain_session_recall.errors.StoreBusyError`,
   having stored nothing. Readers never wait: the file is in WAL mode, where a read sees the
   last commit while a writer works. On PostgreSQL writers lock only the rows they change.
2. **Retrying the write** (its caller). A write that failed for a reason that can heal by
   itself (:func:`is_transient`) is tried again by the importers (a group of sessions: the
   import ledger makes a repeated group add nothing twice) and by
   :class:`~langchain_session_recall.recorder.SessionRecorder` (a batch of messages), as
   :class:`WriteRetry` says: 3 attempts by default, the second 0.5 s after the first, then
   doubling (at most 8 s), each wait plus up to 0.5 s of random jitter.

So an importer gives up on a SQLite file only after another writer kept it for three lock
waits in a row (over 90 s with the defaults); the recorder then keeps the messages for its next
write (see its docs) and logs an ERROR.
"""

from __future__ import annotations

import logging
import sqlite3
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from langchain_session_recall.errors import InvalidArgumentError, StoreBusyError

if TYPE_CHECKING:
    from tenacity import RetryCallState

__all__ = ["DEFAULT_BUSY_TIMEOUT", "WriteRetry", "is_busy", "is_transient", "schema_changed"]

logger = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_BUSY_TIMEOUT = 30.0
"""Seconds a SQLite writer waits for another writer's lock before giving up. An import holds
the lock for up to a few seconds per group of sessions, so this leaves room for several."""

_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_SCHEMA = 5, 6, 17


def is_busy(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite's ``database is locked`` / ``busy`` (its lock wait ran out).

    Example:
        >>> import sqlite3
        >>> is_busy(sqlite3.OperationalError("database is locked"))
        True
        >>> is_busy(sqlite3.OperationalError("no such table: x"))
        False
    """
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    if isinstance(code, int):
        return code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED)
    text = str(exc)
    return "database is locked" in text or "database table is locked" in text


def schema_changed(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite's ``SQLITE_SCHEMA``: another connection changed the file's
    schema (e.g. migrated it on a writable open) while this statement was being prepared; an
    FTS5 table then reports ``vtable constructor failed``. Running it again reads the new schema.

    Example:
        >>> import sqlite3
        >>> exc = sqlite3.OperationalError("vtable constructor failed: messages_fts")
        >>> exc.sqlite_errorcode = 17  # as SQLite reports it (SQLITE_SCHEMA)
        >>> schema_changed(exc), is_busy(exc)
        (True, False)
    """
    return (
        isinstance(exc, sqlite3.OperationalError)
        and getattr(exc, "sqlite_errorcode", None) == _SQLITE_SCHEMA
    )


def is_transient(exc: BaseException) -> bool:
    """Whether a failed write may succeed if tried again: the store was busy
    (:class:`StoreBusyError`, SQLite's lock wait), its schema changed meanwhile
    (:func:`schema_changed`), or PostgreSQL reported an operational
    failure (a deadlock or serialization failure, a lock or statement timeout, a lost
    connection, an exhausted pool). Invalid input, a read-only store, a missing session are not.

    Example:
        >>> from langchain_session_recall.errors import InvalidMessageError
        >>> is_transient(StoreBusyError("busy")), is_transient(InvalidMessageError("bad"))
        (True, False)
    """
    if isinstance(exc, StoreBusyError) or is_busy(exc) or schema_changed(exc):
        return True
    psycopg = sys.modules.get("psycopg")  # loaded by a PostgreSQL store; never imported here
    return psycopg is not None and isinstance(exc, psycopg.OperationalError)


@dataclass(frozen=True, slots=True)
class WriteRetry:
    """How often, and how far apart, a write is tried when the store is busy.

    Args:
        attempts: Tries in all (1: no retry).
        first_wait: Seconds before the second try; each later wait doubles, plus up to
            ``first_wait`` of random jitter (so writers that failed together spread out).
        max_wait: Longest wait between two tries (before the jitter).

    Only :func:`is_transient` failures are retried; any other error, or the last attempt's,
    is raised as it is.

    Example:
        >>> calls = []
        >>> def write():
        ...     calls.append(1)
        ...     if len(calls) < 3:
        ...         raise StoreBusyError("locked")
        ...     return "written"
        >>> WriteRetry(attempts=3, first_wait=0).call(write), len(calls)
        ('written', 3)
    """

    attempts: int = 3
    first_wait: float = 0.5
    max_wait: float = 8.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise InvalidArgumentError(f"attempts must be at least 1, got {self.attempts}")
        if self.first_wait < 0 or self.max_wait < 0:
            raise InvalidArgumentError("waits must not be negative")

    def call(self, write: Callable[[], T], *, what: str = "write") -> T:
        """Run ``write``, again after a wait while it fails with a transient error."""
        try:
            return write()
        except Exception as exc:
            if self.attempts < 2 or not is_transient(exc):
                raise
            failed = exc
        return self._again(write, failed, what)

    def _again(self, write: Callable[[], T], failed: BaseException, what: str) -> T:
        """The attempts after a first one that ``failed`` (transient): the wait before the
        second, then tenacity's for the rest, with the same waits and log lines as if it had
        made the first attempt too."""
        # tenacity (a langchain-core dependency) is imported here, not at start-up or for a
        # write that succeeds at once: the store's module, the CLI's reading commands and a
        # write that met no busy store never need it (importing it costs ~50 ms)
        import random
        import time

        from tenacity import (
            Retrying,
            retry_if_exception,
            stop_after_attempt,
            wait_exponential,
            wait_random,
        )

        def log(attempt: int, error: BaseException | None, wait: float) -> None:
            logger.info(
                "%s failed (%s); attempt %d of %d in %.1f s",
                what,
                error,
                attempt,
                self.attempts,
                wait,
            )

        def before_sleep(state: RetryCallState) -> None:
            error = state.outcome.exception() if state.outcome else None
            wait = state.next_action.sleep if state.next_action else 0.0
            log(state.attempt_number + 2, error, wait)  # (its first attempt is the second)

        first_wait = min(self.max_wait, self.first_wait) + random.uniform(0, self.first_wait)
        log(2, failed, first_wait)
        time.sleep(first_wait)
        retrying = Retrying(
            stop=stop_after_attempt(self.attempts - 1),
            # after the n-th attempt failed: first_wait * 2**(n-1) (at most max_wait)
            wait=wait_exponential(multiplier=self.first_wait * 2, max=self.max_wait)
            + wait_random(0, self.first_wait),
            retry=retry_if_exception(is_transient),
            before_sleep=before_sleep,
            reraise=True,
        )
        return retrying(write)
