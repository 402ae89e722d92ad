"""Session stores: one contract (:class:`SessionBackend`), two backends, one way to open them.

``base.py`` holds the contract and everything the backends share; ``sql.py`` the statements
both run, written for a :class:`~langchain_session_recall.backends.sql.Dialect`; ``sqlite/`` and
``postgres/`` hold each backend's schema, dialect, full-text search and connections.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_session_recall.backends.base import SessionBackend, StoreCheck
from langchain_session_recall.backends.postgres import is_postgres_dsn, redact_dsn
from langchain_session_recall.backends.sqlite import SessionStore, SqliteSessionStore
from langchain_session_recall.errors import NotASessionDatabaseError

if TYPE_CHECKING:  # imported on first use: a SQLite-only process never loads it
    from langchain_session_recall.backends.postgres import PostgresSessionStore

__all__ = [
    "PostgresSessionStore",
    "SessionBackend",
    "SessionStore",
    "SqliteSessionStore",
    "StoreCheck",
    "describe_target",
    "is_postgres_dsn",
    "open_store",
]


def __getattr__(name: str) -> Any:
    if name == "PostgresSessionStore":
        from langchain_session_recall.backends.postgres.store import PostgresSessionStore

        return PostgresSessionStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def describe_target(target: str | os.PathLike[str]) -> str:
    """``target`` as it may be shown: a DSN without its password, a path as given.

    Example:
        >>> describe_target("postgresql://app:pw@db/recall")
        'postgresql://app:***@db/recall'
    """
    return redact_dsn(str(target)) if is_postgres_dsn(target) else str(target)


def open_store(
    target: str | os.PathLike[str], *, read_only: bool = False, create: bool = True
) -> SessionBackend:
    """Open the store at a file path, ``":memory:"`` or a ``postgresql://`` DSN.

    Args:
        target: Where the store is.
        read_only: Never write to it (a SQLite file keeps every byte; PostgreSQL sessions run
            read-only transactions).
        create: Create a SQLite file that does not exist yet, or a schema in an empty one
            (``False``: it must exist and not be empty).

    Raises:
        NotASessionDatabaseError: the target does not exist (with ``create=False`` or
            ``read_only``), is empty (with ``create=False``), is not a regular file, or is not a
            session store.

    Example:
        >>> open_store(":memory:")
        SqliteSessionStore(':memory:', read-write)
        >>> open_store("/dev/null", read_only=True)
        Traceback (most recent call last):
        ...
        langchain_session_recall.errors.NotASessionDatabaseError: /dev/null is not a regular file
    """
    if is_postgres_dsn(target):
        from langchain_session_recall.backends.postgres.store import PostgresSessionStore

        return PostgresSessionStore(str(target), read_only=read_only)
    if str(target) == ":memory:":
        return SessionStore(":memory:", read_only=read_only)
    path = Path(target).expanduser()
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if read_only or not create:
            raise NotASessionDatabaseError(f"no such file: {path}") from None
        return SessionStore(path)
    except OSError as exc:
        raise NotASessionDatabaseError(f"cannot open {path}: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        raise NotASessionDatabaseError(f"{path} is not a regular file")
    if not create and path.stat().st_size == 0:  # reading commands never write a schema into it
        raise NotASessionDatabaseError(f"{path} is empty: not a session database")
    return SessionStore(path, read_only=read_only)
