"""The write path's argument rules, checked before anything touches the store."""

from __future__ import annotations

from typing import Any

from langchain_session_recall.errors import (
    InvalidMessageError,
    InvalidSessionError,
)
from langchain_session_recall.messages import (
    is_finite_number,
    storable_text,
)

DEFAULT_SOURCE = "cli"
"""The source of a session created without one."""


def validate_session_args(
    session_id: object, source: object, started_at: object = None, **ids: str | None
) -> None:
    if started_at is not None and not is_finite_number(started_at):
        # SQLite stores NaN as NULL (a NOT NULL error), PostgreSQL keeps it: refused on both.
        raise InvalidSessionError(f"started_at must be finite Unix seconds, got {started_at!r}")
    if not isinstance(session_id, str) or not session_id:
        raise InvalidSessionError("session_id must be a non-empty string")
    if not isinstance(source, str) or not source:
        raise InvalidSessionError("source must be a non-empty string")
    # An identifier with a NUL cannot be stored as given on PostgreSQL (its text has no NUL):
    # dropped, "alice\x00" would become another user's "alice". One with a lone surrogate
    # cannot be encoded (UTF-8) on either; replaced, it would be another id. Both refused.
    for name, value in {"session_id": session_id, "source": source, **ids}.items():
        if isinstance(value, str) and "\x00" in value:
            raise InvalidSessionError(f"{name} must not contain NUL characters")
        if isinstance(value, str) and storable_text(value) != value:
            raise InvalidSessionError(
                f"{name} is not valid Unicode text (it holds a lone surrogate)"
            )


def ledger_key(key: object) -> str:
    """An import's external key as stored: text without NUL (PostgreSQL cannot hold it) or a
    lone surrogate (UTF-8 cannot encode it); changed, it would no longer find its row."""
    if not isinstance(key, str) or "\x00" in key or storable_text(key) != key:
        raise InvalidMessageError(
            f"import key {str(key)[:80]!r} must be text without NUL or lone surrogates"
        )
    return key


def session_updates(**given: Any) -> dict[str, Any]:
    """The columns ``add_session`` changes on an existing session: those given (not ``None``)."""
    if given.get("started_at") is not None:
        given["started_at"] = float(given["started_at"])
    return {k: v for k, v in given.items() if v is not None}
